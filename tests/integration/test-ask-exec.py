#!/usr/bin/env python3
# Held execs (exec.unlisted = "ask"; issue 17, docs/policy.md "[exec]"), TAP.
# usage: test-ask-exec.py SBXTRACE
# A copy of true(1) in the workspace is the program exec.allow does not list; the decision
# comes from the test over --approval-fd or through `sbxtrace approve --socket`, or from
# nobody. The emulated view only: [exec] globs keep a policy out of the kernel view (checked
# last, with `check` and `run` with tracer.kernel_view = true).
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ask_common import approvals, cleanup, fresh, results, run, tap  # noqa: E402

SBX = os.path.abspath(sys.argv[1])

# argv: programs to run in order; prints the exit status or "refused ERRNO" for each
EXEC = r'''
import os, subprocess, sys
for prog in sys.argv[1:]:
    try:
        print(subprocess.run([prog]).returncode, flush=True)
    except OSError as e:
        print("refused", e.errno, flush=True)
'''

# another process of the sandbox renames another program over /workspace/prog while the
# exec is held, then the exec is allowed: the file asked about is not the one that would run
# (another process, not a thread: python's vfork keeps the GIL while the exec is held)
SWAP = r'''
import subprocess, sys
subprocess.Popen([sys.executable, "-c", "import os, time; time.sleep(1); os.rename('/workspace/other', '/workspace/prog')"])
try:
    print(subprocess.run(["/workspace/prog"]).returncode, flush=True)
except OSError as e:
    print("refused", e.errno, flush=True)
'''


def policy_file(root, timeout='20s', extra=''):
    pol = os.path.join(root, 'p.toml')
    with open(pol, 'w') as f:
        f.write(f'''extends = "standard"
[exec]
allow = ["/usr/bin/python3*", "/usr/bin/env", "/bin/sh", "/usr/bin/dash"]
deny = ["/workspace/never"]
unlisted = "ask"
ask_timeout = "{timeout}"
{extra}''')
    return pol


def setup(root):
    for name, src in (('prog', '/usr/bin/true'), ('never', '/usr/bin/true'), ('other', '/usr/bin/false')):
        shutil.copy(src, os.path.join(root, 'ws', name))
        os.chmod(os.path.join(root, 'ws', name), 0o755)


def case(progs, *, channel, decisions=(), timeout='20s', code=EXEC, extra=''):
    root = fresh()
    try:
        setup(root)
        r, ap = run(SBX, root, ['-s', 'tracer.kernel_view=false', policy_file(root, timeout, extra)],
                    ['python3', '-c', code] + progs, channel=channel, decisions=decisions)
        return r, r.stdout.split('\n')[:-1], ap, approvals(root)
    finally:
        cleanup(root)


def main():
    print('1..10')
    r, out, ap, recs = case(['/workspace/prog', '/workspace/prog'], channel='fd',
                            decisions=['allow_once', 'deny'])
    ok = out == ['0', 'refused 13'] and [x['kind'] for x in ap.requests] == ['exec', 'exec'] \
        and ap.requests[0]['destination'] == '/workspace/prog' and 'exec.allow' in ap.requests[0]['rule'] \
        and [x['decision'] for x in recs if x['event'] == 'decision'] == ['allow_once', 'deny']
    tap(ok, 'held exec allowed once over --approval-fd; the next one is asked again and denied',
        f'{r}\n{ap.requests}\n{recs}')

    r, out, ap, recs = case(['/workspace/prog'], channel='socket', decisions=['deny'])
    ok = out == ['refused 13'] and len(ap.pending) == 1 and ap.pending[0]['tool'] == 'exec' \
        and recs and recs[-1]['decision'] == 'deny' and recs[-1]['channel'] == 'socket'
    tap(ok, 'held exec denied by sbxtrace approve --deny: EACCES', f'{r}\n{ap.pending}\n{recs}')

    r, out, ap, recs = case(['/workspace/prog'], channel='fd', decisions=[None], timeout='1s')
    ok = out == ['refused 13'] and len(ap.requests) == 1 and ap.cancels == [ap.requests[0]['id']] \
        and recs and recs[-1]['timed_out'] is True and recs[-1]['decision'] == 'deny'
    tap(ok, 'no decision within exec.ask_timeout denies the exec', f'{r}\n{ap.requests}\n{recs}')

    r, out, ap, recs = case(['/workspace/prog', '/workspace/prog', '/workspace/prog'], channel='fd',
                            decisions=['allow_session'])
    ok = out == ['0', '0', '0'] and len(ap.requests) == 1 \
        and [x['event'] for x in recs] == ['request', 'decision'] and recs[1]['decision'] == 'allow_session'
    tap(ok, 'allow_session: later execs of the same file go through unasked', f'{r}\n{ap.requests}\n{recs}')

    r, out, ap, recs = case(['/workspace/prog'], channel=None)
    ok = out == ['refused 13'] and recs and recs[-1]['channel'] == 'none' \
        and 'approval_required' in recs[-1].get('reason', '')
    tap(ok, 'without a channel the held exec is denied at once (approval_required)', f'{r}\n{recs}')

    r, out, ap, recs = case(['/workspace/never', '/usr/bin/python3'], channel='fd', decisions=['allow_once'])
    ok = out[:1] == ['refused 13'] and len(out) == 2 and ap.requests == [] and recs == []
    tap(ok, 'exec.deny and exec.allow are never asked about', f'{r}\n{ap.requests}\n{recs}')

    # TOCTOU: the program swaps the file while the human decides; allowed, the exec finds the
    # other file, and the post-exec check kills it before it runs (SIGKILL: -9)
    r, out, ap, recs = case([], channel='fd', decisions=[('allow_once', 2)], code=SWAP)
    ok = out == ['-9'] and len(ap.requests) == 1 and 'other than the one checked' in r.stderr
    tap(ok, 'a file swapped in while the exec is held is killed at the post-exec check',
        f'{r}\n{ap.requests}\n{recs}')

    # never after a ratchet drop: once a confidential file was read, denied without a question
    code = ('import subprocess\n'
            'def run():\n'
            '    try: print(subprocess.run(["/workspace/prog"]).returncode, flush=True)\n'
            '    except OSError as e: print("refused", e.errno, flush=True)\n'
            'run()\nopen("/workspace/secret.txt").read()\nrun()\n')
    root = fresh()
    try:
        setup(root)
        with open(os.path.join(root, 'ws', 'secret.txt'), 'w') as f:
            f.write('s\n')
        pol = policy_file(root, extra='[network]\nmode = "loopback"\n[[rule]]\npath = "/workspace/secret.txt"\n'
                          'level = "confidential"\n[network.ratchet]\nconfidential = "none"\n')
        r, ap = run(SBX, root, [pol], ['python3', '-c', code], channel='fd', decisions=['allow_once', 'allow_once'])
        recs = approvals(root)
        ok = r.stdout.split('\n')[:2] == ['0', 'refused 13'] and len(ap.requests) == 1 and len(recs) == 2
        tap(ok, 'after a ratchet drop an exec outside exec.allow is denied without asking',
            f'{r}\n{ap.requests}\n{recs}')
    finally:
        cleanup(root)

    # the kernel view: not for this policy, and check says why
    root = fresh()
    try:
        pol = policy_file(root)
        c = subprocess.run([SBX, 'check', '-w', os.path.join(root, 'ws'), pol], capture_output=True, text=True)
        r = subprocess.run([SBX, 'run', '-q', '-w', os.path.join(root, 'ws'), '-s', 'tracer.kernel_view=true', pol,
                            '--', 'true'], capture_output=True, text=True, stdin=subprocess.DEVNULL)
        ok = c.returncode == 0 and '[exec] globs are checked by the supervisor' in c.stdout + c.stderr \
            and r.returncode == 125
        tap(ok, 'the kernel view: check says an [exec] policy is emulated; run with kernel_view = true refuses',
            f'{c.stdout}\n{c.stderr}\n{r}')
        # with tracer.ptrace = "never" the policy does not load (the file could not be pinned)
        c = subprocess.run([SBX, 'check', '-s', 'tracer.ptrace=never', '-w', os.path.join(root, 'ws'), pol],
                           capture_output=True, text=True)
        ok = c.returncode != 0 and 'needs ptrace' in c.stderr and 'p.toml:5' in c.stderr
        tap(ok, 'exec.unlisted = "ask" with tracer.ptrace = "never" is refused, naming file and line',
            f'{c.stdout}\n{c.stderr}')
    finally:
        cleanup(root)
    return 0 if all(results) else 1


sys.exit(main())
