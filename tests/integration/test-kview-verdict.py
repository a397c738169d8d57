#!/usr/bin/env python3
# `sbxtrace check` and `sbxtrace run` agree on the file-system view (issue 20, item 1), TAP.
# usage: test-kview-verdict.py SBXTRACE
# For each policy, what `check` says ("file-system view: in the kernel" or "emulated", and
# the reason) must be what `run --json` reports (`view`, `view_reason`), and what the audit
# log's start record says. Both ask tracer_kview_qualify() (tracer/kview.c); before that,
# `check` asked the policy alone and `run` the view too, so a workspace mounted below a tmp
# mount was "in the kernel" for `check` and emulated by `run`.
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap_common import check, results, run_json, skip, tap  # noqa: E402

SBX = os.path.abspath(sys.argv[1])
PRESETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'policies')


def check_view(ws, sets, policy):
    """(view, reason) as `check` prints them; reason None when it gives none."""
    p = check(SBX, ws, sets, policy)
    if p.returncode != 0:
        return None, f'check exited {p.returncode}: {p.stderr}'
    m = re.search(r'file-system view: (in the kernel|emulated)', p.stderr)
    if not m:
        return None, f'no verdict in: {p.stderr}'
    view = 'kernel' if m.group(1) == 'in the kernel' else 'emulated'
    r = re.search(r'\(not in the kernel: (.*)\)$', p.stderr, re.M)
    if r:
        return view, r.group(1)
    if 'does not let this user make user namespaces' in p.stderr:
        return view, 'host'
    return view, None


def run(ws, sets, policy, audit=None):
    return run_json(SBX, ws, sets, policy, ['/bin/true'], ['--audit', audit] if audit else [])


def start_record(audit):
    with open(audit) as f:
        for line in f:
            rec = json.loads(line)
            if rec.get('type') == 'run' and rec.get('event') == 'start':
                return rec
    return None


def main():
    tmp = tempfile.mkdtemp(prefix='kview-verdict.')
    ws = os.path.join(tmp, 'ws')
    os.makedirs(os.path.join(ws, 'prot', 'deep'))
    audit = os.path.join(tmp, 'audit.jsonl')
    # `run --audit` always emulates (the audit log sees file calls only there): the start
    # record is compared with the JSON result of that same run
    cases = [(f'preset {n[:-5]}', [], n[:-5]) for n in sorted(os.listdir(PRESETS))
             if n.endswith('.toml')]
    cases += [
        ('workspace below a tmp mount', [
            'mount=[{path = "/tmp/work", source = "${WORKSPACE}", mode = "rw"}]'],
         'standard'),
        ('workspace deep below a tmp mount', [
            'mount=[{path = "/tmp/a/b/work", source = "${WORKSPACE}", mode = "rw"}]'],
         'standard'),
        ('mount point missing in a host source', [
            'mount=[{path = "/workspace/no/such", source = "/usr/share", mode = "ro"}]'],
         'standard'),
        ('a rule with a glob', [
            'rule=[{path = "/workspace/**/*.key", access = "hide"}]'], 'standard'),
        ('an ro rule on a fixed path', [
            'rule=[{path = "/workspace/prot", access = "ro"}]'], 'standard'),
        ('an ro rule below a directory a rename could move', [
            'rule=[{path = "/workspace/prot/deep", access = "ro"}]'], 'standard'),
        ('an ro rule with a glob', [
            'rule=[{path = "/workspace/*/deep", access = "ro"}]'], 'standard'),
        ('an ask-write rule (issue 17)', [
            'rule=[{path = "/workspace/prot", access = "ask-write"}]'], 'standard'),
        ('a /proc mount', ['mount=[{path = "/proc", mode = "ro"}]'], 'standard'),
        ('the python preset with the host network namespace', ['network.unshare=false'],
         'python'),
        ('an [exec] glob', ['exec.allow=["/usr/bin/*", "/bin/*"]'], 'standard'),
        ('kernel_view = false', ['tracer.kernel_view=false'], 'standard'),
    ]
    # Where this host lets the user make a user namespace: which view each case gets
    # (issue 23: a /proc mount gets a pid namespace, and with it the kernel view), and
    # whether the run had a pid namespace
    expect = {
        'preset node': ('kernel', True), 'preset python': ('kernel', True),
        'preset shell': ('kernel', True), 'preset standard': ('kernel', False),
        'preset strict': ('emulated', False), 'preset permissive': ('emulated', False),
        'a /proc mount': ('kernel', True),
        'the python preset with the host network namespace': ('emulated', False),
        'a rule with a glob': ('emulated', False),
        'kernel_view = false': ('emulated', False),
    }
    print(f'1..{2 * len(cases) + 1 + len([c for c in cases if c[0] in expect])}')
    for name, sets, policy in cases:
        cview, creason = check_view(ws, sets, policy)
        res, err = run(ws, sets, policy)
        if cview is None or res is None:
            tap(False, f'{name}: check and run report a view', creason if cview is None
                else err)
            tap(False, f'{name}: the audit start record')
            continue
        rview, rreason = res.get('view'), res.get('view_reason')
        if creason == 'host':
            # the host refuses this user a user namespace: `run` found out when it tried
            ok = rview == 'emulated' and cview == 'emulated' and 'could not be made' in (
                rreason or '')
        else:
            ok = (cview, creason) == (rview, rreason)
        tap(ok, f'{name}: check says {cview}, run --json {rview}',
            f'check: {cview} ({creason})\nrun:   {rview} ({rreason})')
        if name in expect:
            want, pidns = expect[name]
            got = (rview, (res.get('layers') or {}).get('pid_namespace'))
            if creason == 'host':
                skip(f'{name}:', 'no user namespace here')
            else:
                tap(got == (want, pidns), f'{name}: {want} view, pid namespace {pidns}',
                    f'run: {got}, {rreason}')
        # the audit log's start record says what the JSON result of the same run says
        res, err = run(ws, sets, policy, audit)
        rec = start_record(audit) if res else None
        ok = rec is not None and res is not None and (rec.get('view'), rec.get(
            'view_reason')) == (res.get('view'), res.get('view_reason'))
        tap(ok, f'{name}: the audit start record says the view of the run',
            f'start record: {rec}\nresult: {res and (res.get("view"), res.get("view_reason"))}'
            f'\n{err}')
    # a run with an audit log is emulated, and says why, though check says "kernel"
    res, err = run(ws, [], 'standard', audit)
    tap(res is not None and res.get('view') == 'emulated' and
        'audit log' in (res.get('view_reason') or ''), 'run --audit: emulated, and why',
        str(res))
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if all(results) else 1


sys.exit(main())
