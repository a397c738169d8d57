#!/usr/bin/env python3
# Held opens ([[rule]] access = "ask" / "ask-write"; issue 17, docs/policy.md "[[rule]]"), TAP.
# usage: test-ask-open.py SBXTRACE
# Files of the workspace under an ask rule; the decision comes from the test over
# --approval-fd or through `sbxtrace approve --socket`, or from nobody. The emulated view
# only: an ask rule keeps a policy out of the kernel view (checked last, with `check` and
# `run` with tracer.kernel_view = true).
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ask_common import approvals, cleanup, fresh, results, run, tap  # noqa: E402

SBX = os.path.abspath(sys.argv[1])

# argv: OP:PATH ... with OP r (read), a (append), c (create new), s (stat); one line each
OPEN = r'''
import os, sys
for arg in sys.argv[1:]:
    op, path = arg.split(":", 1)
    try:
        if op == "r":
            print("read", open(path).read().strip(), flush=True)
        elif op == "a":
            with open(path, "a") as f:
                f.write("x\n")
            print("wrote", flush=True)
        elif op == "c":
            with open(path, "x") as f:
                f.write("new\n")
            print("created", flush=True)
        else:
            os.stat(path)
            print("stat", flush=True)
    except OSError as e:
        print("refused", e.errno, flush=True)
'''


def setup(root, access='ask-write', timeout='20s', extra=''):
    ws = os.path.join(root, 'ws')
    os.makedirs(os.path.join(ws, 'reports'))
    os.makedirs(os.path.join(root, 'data'))
    for p in ('reports/a.txt', 'other.txt', 'out.txt'):
        with open(os.path.join(ws, p), 'w') as f:
            f.write(p + '\n')
    with open(os.path.join(root, 'data', 'd.txt'), 'w') as f:
        f.write('d\n')
    pol = os.path.join(root, 'p.toml')
    with open(pol, 'w') as f:
        f.write(f'''extends = "standard"
[[mount]]
path = "/data"
source = "{root}/data"
mode = "ro"
[[rule]]
path = "/workspace/reports"
access = "{access}"
ask_timeout = "{timeout}"
[[rule]]
path = "/workspace/out.txt"
access = "{access}"
[[rule]]
path = "/data"
access = "{access}"
{extra}''')
    return pol


def content(root, p):
    try:
        with open(os.path.join(root, 'ws', p)) as f:
            return f.read()
    except OSError:
        return None


def case(ops, *, channel, decisions=(), access='ask-write', timeout='20s', extra=''):
    root = fresh()
    try:
        pol = setup(root, access, timeout, extra)
        r, ap = run(SBX, root, ['-s', 'tracer.kernel_view=false', pol], ['python3', '-c', OPEN] + ops,
                    channel=channel, decisions=decisions)
        files = {p: content(root, p) for p in ('reports/a.txt', 'reports/new.txt', 'out.txt')}
        return r, r.stdout.split('\n')[:-1], ap, approvals(root), files
    finally:
        cleanup(root)


def main():
    print('1..11')
    A = '/workspace/reports/a.txt'
    r, out, ap, recs, files = case([f'r:{A}', f's:{A}', f'a:{A}', f'a:{A}'], channel='fd',
                                   decisions=['allow_once', 'deny'])
    ok = out == ['read reports/a.txt', 'stat', 'wrote', 'refused 13'] \
        and [x['kind'] for x in ap.requests] == ['write', 'write'] and ap.requests[0]['destination'] == A \
        and 'ask-write' in ap.requests[0]['rule'] and files['reports/a.txt'] == 'reports/a.txt\nx\n' \
        and [x['decision'] for x in recs if x['event'] == 'decision'] == ['allow_once', 'deny']
    tap(ok, 'ask-write: reads and stat unasked; a write allowed once, the next asked again and denied',
        f'{r}\n{ap.requests}\n{recs}\n{files}')

    r, out, ap, recs, files = case(['c:/workspace/reports/new.txt'], channel='socket', decisions=['allow_once'])
    ok = out == ['created'] and len(ap.pending) == 1 and ap.pending[0]['tool'] == 'write' \
        and files['reports/new.txt'] == 'new\n' and recs[-1]['channel'] == 'socket'
    tap(ok, 'a create under the rule allowed through sbxtrace approve --allow', f'{r}\n{ap.pending}\n{recs}\n{files}')

    r, out, ap, recs, files = case([f'a:{A}', 'c:/workspace/reports/new.txt'], channel='socket',
                                   decisions=['deny', 'deny'])
    ok = out == ['refused 13', 'refused 13'] and len(ap.pending) == 2 and files['reports/a.txt'] == 'reports/a.txt\n' \
        and files['reports/new.txt'] is None and recs[-1]['decision'] == 'deny'
    tap(ok, 'denied through sbxtrace approve --deny: EACCES, nothing written or created',
        f'{r}\n{ap.pending}\n{recs}\n{files}')

    r, out, ap, recs, files = case([f'a:{A}'], channel='fd', decisions=[None], timeout='1s')
    ok = out == ['refused 13'] and len(ap.requests) == 1 and ap.cancels == [ap.requests[0]['id']] \
        and recs[-1]['timed_out'] is True and files['reports/a.txt'] == 'reports/a.txt\n'
    tap(ok, 'no decision within the rule\'s ask_timeout denies the open', f'{r}\n{ap.requests}\n{recs}')

    r, out, ap, recs, files = case([f'a:{A}', f'a:{A}', f'r:{A}'], channel='fd', decisions=['allow_session'])
    ok = out == ['wrote', 'wrote', 'read reports/a.txt', 'x', 'x'] and len(ap.requests) == 1 \
        and files['reports/a.txt'] == 'reports/a.txt\nx\nx\n' and recs[1]['decision'] == 'allow_session'
    tap(ok, 'allow_session: later opens of the path go through unasked', f'{r}\n{ap.requests}\n{recs}')

    r, out, ap, recs, files = case([f'a:{A}'], channel=None)
    ok = out == ['refused 13'] and recs and recs[-1]['channel'] == 'none' \
        and 'approval_required' in recs[-1].get('reason', '') and files['reports/a.txt'] == 'reports/a.txt\n'
    tap(ok, 'without a channel the held open is denied at once (approval_required)', f'{r}\n{recs}')

    # access = "ask": every open is held, reads too; stat is not an open
    r, out, ap, recs, files = case([f's:{A}', f'r:{A}', f'r:{A}'], channel='fd', access='ask',
                                   decisions=['allow_once', 'deny'])
    ok = out == ['stat', 'read reports/a.txt', 'refused 13'] and [x['kind'] for x in ap.requests] == ['open', 'open']
    tap(ok, 'ask: a read is held too (allowed once, then denied); stat is not', f'{r}\n{ap.requests}\n{recs}')

    # a read-only mount: an allowed write could not write, so nothing is asked (EROFS)
    r, out, ap, recs, files = case(['a:/data/d.txt', 'r:/data/d.txt'], channel='fd', decisions=['allow_once'])
    ok = out == ['refused 30', 'read d'] and ap.requests == []
    tap(ok, 'ask-write on a read-only mount: EROFS, not asked (ask never lifts ro)', f'{r}\n{ap.requests}')

    # TOCTOU: while the human decides, the file at the path is replaced (here from outside,
    # by the test); allowed, the open walks again, finds another file: EACCES, untouched
    def swap(req):
        os.rename(os.path.join(swap.root, 'ws', 'other.txt'), os.path.join(swap.root, 'ws', 'out.txt'))
        return 'allow_once'
    root = fresh()
    try:
        pol = setup(root)
        swap.root = root
        r, ap = run(SBX, root, ['-s', 'tracer.kernel_view=false', pol], ['python3', '-c', OPEN, 'a:/workspace/out.txt'],
                    channel='fd', decisions=[swap])
        recs = approvals(root)
        ok = r.stdout.split('\n')[:-1] == ['refused 13'] and len(ap.requests) == 1 \
            and content(root, 'out.txt') == 'other.txt\n' and recs[-1]['decision'] == 'allow_once'
        tap(ok, 'a file replaced at the path while the open is held: EACCES, neither file written',
            f'{r}\n{ap.requests}\n{recs}')
    finally:
        cleanup(root)

    # never after a ratchet drop
    root = fresh()
    try:
        pol = setup(root, extra='[[rule]]\npath = "/workspace/secret.txt"\nlevel = "confidential"\n'
                                '[network]\nmode = "loopback"\n[network.ratchet]\nconfidential = "none"\n')
        with open(os.path.join(root, 'ws', 'secret.txt'), 'w') as f:
            f.write('s\n')
        r, ap = run(SBX, root, [pol], ['python3', '-c', OPEN, f'a:{A}', 'r:/workspace/secret.txt', f'a:{A}'],
                    channel='fd', decisions=['allow_once', 'allow_once'])
        recs = approvals(root)
        ok = r.stdout.split('\n')[:-1] == ['wrote', 'read s', 'refused 13'] and len(ap.requests) == 1
        tap(ok, 'after a ratchet drop an open under an ask rule is denied without asking',
            f'{r}\n{ap.requests}\n{recs}')
    finally:
        cleanup(root)

    # the kernel view: not for this policy, and check says why
    root = fresh()
    try:
        pol = setup(root)
        c = subprocess.run([SBX, 'check', '-w', os.path.join(root, 'ws'), pol], capture_output=True, text=True)
        r = subprocess.run([SBX, 'run', '-q', '-w', os.path.join(root, 'ws'), '-s', 'tracer.kernel_view=true', pol,
                            '--', 'true'], capture_output=True, text=True, stdin=subprocess.DEVNULL)
        ok = c.returncode == 0 and 'holds opens for a decision' in c.stdout + c.stderr and r.returncode == 125
        tap(ok, 'the kernel view: check says an ask rule keeps the policy emulated; kernel_view = true refuses',
            f'{c.stdout}\n{c.stderr}\n{r}')
    finally:
        cleanup(root)
    return 0 if all(results) else 1


sys.exit(main())
