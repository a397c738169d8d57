#!/usr/bin/env python3
# The tracer's exec event only where it is read (issue 20, processes), TAP.
# usage: test-exec-events.py SBXTRACE
# PTRACE_EVENT_EXEC costs every exec of the tree a stop of the tracer thread. It is read only
# to check, after an exec that the supervisor checked, that the file that ran is the one
# checked (tracer/ptrace.c, on_exec_event). In the kernel view exec runs in the kernel and
# nothing is checked, so the tracer does not ask for it (tracer_ptrace_exec_why). This test
# holds the line both ways: `run --json` says where it was asked for ("layers",
# "exec_events"), an [exec] list still gets it and still holds, and an exec without the
# event (a thread that is not the leader execs, its tid becomes the leader's unreported)
# runs as it does natively.
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap_common import check, results, run_json, skip, tap  # noqa: E402

SBX = os.path.abspath(sys.argv[1])


def run(ws, sets, argv):
    return run_json(SBX, ws, sets, 'standard', argv)


def check_says(ws, sets):
    """True/False: `check` says execs stop the tracer or not; None: it says neither."""
    p = check(SBX, ws, sets, 'standard')
    if 'each exec stops the tracer' in p.stderr:
        return True
    if 'execs do not stop the tracer' in p.stderr:
        return False
    return None


def layers(res):
    lay = (res or {}).get('layers') or {}
    return res and res.get('view'), lay.get('ptrace'), lay.get('exec_events')


def main():
    tmp = tempfile.mkdtemp(prefix='sbx-exec-events-')
    ws = os.path.join(tmp, 'ws')
    os.mkdir(ws)
    shutil.copy('/bin/true', os.path.join(ws, 'mytrue'))
    print('1..12')

    # the standard preset: a disk, tasks and cpu_time budget, so ptrace is on ("auto")
    res, err = run(ws, [], ['/bin/true'])
    got = layers(res)
    if got[0] == 'kernel':
        tap(got == ('kernel', True, False) and res.get('exit_code') == 0,
            'kernel view: traced, no exec event', f'{got}\n{err}')
    else:
        # a host that refuses a user namespace: the run emulates, and the event is back
        tap(got == ('emulated', True, True), 'emulated here (no user namespace): exec event',
            f'{got}\n{err}')
    kernel_here = got[0] == 'kernel'
    tap(check_says(ws, []) == got[2], 'check says what run --json says (kernel view)',
        f'check: {check_says(ws, [])}, run: {got[2]}')

    res, err = run(ws, ['tracer.kernel_view=false'], ['/bin/true'])
    tap(layers(res) == ('emulated', True, True), 'emulated view: the exec event is asked for',
        f'{layers(res)}\n{err}')
    tap(check_says(ws, ['tracer.kernel_view=false']) is True,
        'check says what run --json says (emulated view)')

    # the emulated view, exec by exec (tracer/ptrace.c, exec_event_needed): where Landlock
    # holds exactly the view ("file_opens": "checked"), an exec of a path the kernel reads as
    # the child wrote it goes without the event, one the tracer rewrote keeps it. The tracer
    # logs each wait status to SBX_WALL_TRACE; the event's is 0x4057f. sh, /usr/bin/true
    # and /workspace/mytrue (the workspace is mounted at another path: rewritten) are three
    # execs.
    for sets, want, what in ((['tracer.kernel_view=false'], 1,
                              'Landlock exact: only the rewritten exec stops after it ran'),
                             (['tracer.kernel_view=false', 'tracer.landlock=false'], 3,
                              'without Landlock: every exec stops after it ran')):
        trace = os.path.join(tmp, 'wall-trace')
        if os.path.exists(trace):
            os.unlink(trace)
        os.environ['SBX_WALL_TRACE'] = trace
        try:
            res, err = run(ws, sets, ['/bin/sh', '-c', '/usr/bin/true && /workspace/mytrue && echo ok'])
        finally:
            del os.environ['SBX_WALL_TRACE']
        try:
            with open(trace) as f:
                events = sum(1 for line in f if line.rstrip().endswith('status 0x4057f'))
        except OSError as e:
            events = f'no trace: {e}'
        opens = res and res.get('file_opens')
        if want == 1 and opens != 'checked':
            skip(what, f'the kernel makes no checked opens here: {res and res.get("file_opens_reason")}')
            continue
        tap(res is not None and 'ok' in res.get('stdout', '') and events == want, what,
            f'exec events {events}, want {want}; {res and res.get("stdout")}\n{err}')

    # an exec without the event holds no expectation (the tracer keeps MAX_EXPECT of them,
    # freed at the event): 300 processes alive after their exec, and execs still work
    many = ('i=0; while [ $i -lt 300 ]; do sleep 30 & i=$((i+1)); done; '
            '/usr/bin/true && echo ok; kill $(jobs -p) 2>/dev/null')
    res, err = run(ws, ['tracer.kernel_view=false', 'limits.tasks=400', 'limits.memory=4GiB'],
                   ['/bin/sh', '-c', many])
    tap(res is not None and res.get('stdout', '').strip() == 'ok' and
        'unavailable' not in res.get('stderr', ''),
        'emulated view: 300 live processes after exec, and a 301st exec runs',
        f'{res and (res.get("stdout"), res.get("stderr", "")[:300])}\n{err}')

    res, err = run(ws, ['tracer.ptrace=never'], ['/bin/true'])
    tap(layers(res)[1:] == (False, False), 'ptrace = never: neither', f'{layers(res)}\n{err}')

    # an [exec] list: emulated (the kernel view does not take it), the event asked for, and
    # the list holds: a copy of true in the workspace is refused, /usr/bin/true runs
    ex = ['exec.allow=["/usr/bin/*", "/bin/*"]']
    res, err = run(ws, ex, ['/bin/sh', '-c', '/usr/bin/true && ./mytrue; echo rc=$?'])
    tap(layers(res) == ('emulated', True, True), '[exec] list: emulated, exec event',
        f'{layers(res)}\n{err}')
    tap(res is not None and 'rc=126' in res.get('stdout', ''),
        '[exec] list: a program outside it is refused', f'{res and res.get("stdout")}\n{err}')

    # the kernel view without the event: plain and threaded execs run as natively
    prog = ('import os, threading\n'
            't = threading.Thread(target=lambda: os.execv("/bin/sh", '
            '["sh", "-c", "./mytrue && echo exec-from-thread"]))\n'
            't.start(); t.join()\n')
    if not shutil.which('python3'):
        skip('an exec from a thread that is not the leader', 'no python3')
        skip('fork+exec loop', 'no python3')
    elif not kernel_here:
        skip('an exec from a thread that is not the leader', 'no kernel view here')
        skip('fork+exec loop', 'no kernel view here')
    else:
        res, err = run(ws, [], ['/usr/bin/python3', '-c', prog])
        tap(res is not None and res.get('exit_code') == 0 and
            'exec-from-thread' in res.get('stdout', ''),
            'kernel view: an exec from a thread that is not the leader',
            f'{res and (res.get("exit_code"), res.get("stdout"))}\n{err}')
        res, err = run(ws, [], ['/bin/sh', '-c',
                                'n=0; while [ $n -lt 50 ]; do ./mytrue || exit 9; '
                                'n=$((n+1)); done; echo n=$n'])
        tap(res is not None and res.get('exit_code') == 0 and 'n=50' in res.get('stdout', ''),
            'kernel view: 50 fork+exec+wait', f'{res and (res.get("exit_code"), res.get("stdout"))}\n{err}')
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if all(results) else 1


sys.exit(main())
