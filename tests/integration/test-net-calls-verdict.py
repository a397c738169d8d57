#!/usr/bin/env python3
# Loopback in a network namespace of the tree's own (issue 20, docs/network.md "Loopback in a
# namespace of its own"), TAP. usage: test-net-calls-verdict.py SBXTRACE
# For each policy, where `check` says the network calls are decided ("run in the kernel" or
# "decided by the supervisor (REASON)") must be what `run --json` reports (`network_calls`,
# `network_calls_reason`): both ask tracer_filter_net_why(), and the view's verdict. Where
# the namespace is made, a python3 program inside reaches its own listener and not the
# test's listener on the host's 127.0.0.1. Runs as root and as a plain user; where the host
# refuses this user a network namespace the namespace cases are TAP skips with the reason.
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap_common import check, results, run_json, skip, tap  # noqa: E402

SBX = os.path.abspath(sys.argv[1])

PROG = r'''
import socket, sys
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()
c = socket.socket(); c.connect(s.getsockname()); print('own=ok')
try:
    h = socket.socket(); h.settimeout(5); h.connect(('127.0.0.1', int(sys.argv[1])))
    print('host=reached')
except OSError as e:
    print(f'host=refused {e.errno}')
'''


def check_calls(ws, sets, preset):
    """('kernel' | 'supervisor', reason) as `check` prints them, or (None, error)."""
    p = check(SBX, ws, sets, preset)
    if p.returncode != 0:
        return None, f'check exited {p.returncode}: {p.stderr}'
    if re.search(r'network calls: connect, bind, listen and the sends run in the kernel',
                 p.stderr):
        return 'kernel', None
    m = re.search(r'network calls: decided by the supervisor \((.*)\)$', p.stderr, re.M)
    if m:
        return 'supervisor', m.group(1)
    return 'none', p.stderr


def run(ws, sets, port, preset):
    return run_json(SBX, ws, sets, preset, ['python3', 'prog.py', str(port)])


def netns_refused(ws):
    """Why `run` cannot make the namespace here, or None."""
    p = subprocess.run([SBX, 'run', '-w', ws, '-s', 'network.mode="none"', '-s',
                        'network.unshare=true', 'standard', '--', '/bin/true'],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    return None if p.returncode == 0 else (p.stderr.strip().splitlines() or ['?'])[-1]


def main():
    tmp = tempfile.mkdtemp(prefix='net-calls-verdict.')
    ws = os.path.join(tmp, 'ws')
    os.makedirs(ws)
    with open(os.path.join(ws, 'prog.py'), 'w') as f:
        f.write(PROG)
    os.chmod(tmp, 0o755)
    host = socket.socket()
    host.bind(('127.0.0.1', 0))
    host.listen(16)
    host.setblocking(False)
    port = host.getsockname()[1]

    lo = ['network.mode="loopback"']
    # (name, sets, in the namespace, the calls in the kernel where namespaces are allowed,
    # preset)
    cases = [
        ('loopback, unshare, kernel view', lo + ['network.unshare=true'], True, True,
         'standard'),
        ('loopback without unshare', lo, False, False, 'standard'),
        ('loopback, unshare, a sensitivity level',
         lo + ['network.unshare=true',
               'rule=[{path = "/workspace/x.key", level = "secret"}]'], True, False,
         'standard'),
        ('loopback, unshare, kernel_view = false',
         lo + ['network.unshare=true', 'tracer.kernel_view=false'], True, False,
         'standard'),
        ('loopback, unshare = "auto" (no effect)', lo + ['network.unshare="auto"'], False,
         False, 'standard'),
        # a /proc mount and hide rules on its network tables: a pid namespace too
        ('the python preset in loopback with unshare', lo + ['network.unshare=true'], True,
         True, 'python'),
    ]
    refused = netns_refused(ws)
    print(f'1..{3 * len(cases) + 1}')
    for name, sets, netns, in_kernel, preset in cases:
        cwhere, creason = check_calls(ws, sets, preset)
        res, err = run(ws, sets, port, preset)
        if res is None:
            tap(False, f'{name}: run --json', err)
            tap(False, f'{name}: where the calls are decided')
            tap(False, f'{name}: reach')
            continue
        rwhere, rreason = res.get('network_calls'), res.get('network_calls_reason')
        # check speaks only when the policy has unshare = true with loopback
        want_check = (rwhere, rreason) if any('unshare=true' in s for s in sets) else (
            'none', None)
        ok = (cwhere, creason if cwhere != 'none' else None) == want_check or (
            refused and cwhere == 'supervisor' and 'user namespaces' in (creason or ''))
        tap(ok, f'{name}: check and run --json agree ({rwhere})',
            f'check: {cwhere} ({creason})\nrun:   {rwhere} ({rreason})')
        if netns and refused:
            skip(f'{name}: the calls in the kernel', f'no network namespace here: {refused}')
            skip(f'{name}: the host unreachable', f'no network namespace here: {refused}')
            continue
        tap(rwhere == ('kernel' if in_kernel else 'supervisor'),
            f'{name}: network calls {"in the kernel" if in_kernel else "notified"}',
            str(res))
        out = res.get('stdout') or ''
        want = 'host=refused' if netns else 'host=reached'
        tap('own=ok' in out and want in out, f'{name}: own listener reached, {want}',
            f'{out}\n{res.get("stderr")}')
        try:
            while True:
                host.accept()[0].close()
        except BlockingIOError:
            pass
    # unshare = true with ask is a policy error, for check and run alike
    p = subprocess.run([SBX, 'check', '-s', 'network.mode="loopback"', '-s',
                        'network.unshare=true', '-s', 'network.unlisted="ask"', 'standard'],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    tap(p.returncode != 0 and 'cannot go with unlisted' in p.stderr,
        'unshare = true with unlisted = "ask" is refused', p.stderr)
    host.close()
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if all(results) else 1


sys.exit(main())
