#!/usr/bin/env python3
# Held connects (network.unlisted = "ask"; docs/network.md, "Held connects"), TAP.
# usage: test-ask.py SBXTRACE
# A loopback listener of the test is the "unlisted" destination of an allowlist policy; the
# decision comes through `sbxtrace approve --socket` (another process), a terminal prompt
# (a pseudo-terminal of the test), or nobody (the timeout). The sandboxed program tries to
# answer for itself: through the socket (a policy that mounts its directory) and through the
# terminal (TIOCSTI, writes to it).
import json
import os
import pty
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap_common import results, tap  # noqa: E402

SBX = os.path.abspath(sys.argv[1])


class Listener:
    """A loopback TCP listener counting the connections it accepts."""

    def __init__(self):
        self.s = socket.socket()
        self.s.bind(('127.0.0.1', 0))
        self.s.listen(16)
        self.port = self.s.getsockname()[1]
        self.accepted = 0
        self.s.settimeout(0.2)
        self.stop = False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop:
            try:
                c, _ = self.s.accept()
                self.accepted += 1
                c.close()
            except OSError:
                pass

    def count(self):
        """The connections made so far, after the run: those the thread has not accepted yet
        are complete in the backlog (a connect returns once they are), so drain them."""
        if not self.stop:
            self.stop = True
            self.t.join()
        self.s.setblocking(False)
        while True:
            try:
                c, _ = self.s.accept()
            except OSError:
                break
            self.accepted += 1
            c.close()
        return self.accepted

    def close(self):
        if not self.stop:
            self.stop = True
            self.t.join()
        self.s.close()


CONNECT = r'''
import socket, sys
for i in range(int(sys.argv[2])):
    s = socket.socket()
    try:
        s.connect(("127.0.0.1", int(sys.argv[1])))
        print("connected", flush=True)
    except OSError as e:
        print("refused", e.errno, flush=True)
    s.close()
'''


def run_args(root, *, socket_path=None, timeout='20s', extra=()):
    args = [SBX, 'run', '-q', '-w', os.path.join(root, 'ws'), '--audit', os.path.join(root, 'audit.jsonl'),
            '-s', 'network.mode=allowlist', '-s', 'network.allow=["192.0.2.1:80"]',
            '-s', 'network.unlisted=ask', '-s', f'network.ask_timeout={timeout}']
    if socket_path:
        args += ['--approval-socket', socket_path]
    return args + list(extra)


def approvals(root):
    path = os.path.join(root, 'audit.jsonl')
    if not os.path.exists(path):
        return []
    return [r for r in (json.loads(line) for line in open(path)) if r.get('type') == 'approval']


def pending(sock, secs=15):
    until = time.time() + secs
    while time.time() < until:
        r = subprocess.run([SBX, 'approvals', '--socket', sock, '--json'], capture_output=True, text=True)
        if r.returncode == 0 and r.stdout.strip() not in ('', '[]'):
            return json.loads(r.stdout)
        time.sleep(0.1)
    return []


def fresh():
    root = tempfile.mkdtemp(prefix='sbxtrace-ask-')
    os.chmod(root, 0o700)
    os.mkdir(os.path.join(root, 'ws'))
    return root


def decided_through_socket(flag, count=1):
    root, lst = fresh(), Listener()
    sock = os.path.join(root, 'a.sock')
    try:
        p = subprocess.Popen(run_args(root, socket_path=sock) + ['standard', '--', 'python3', '-c', CONNECT, str(lst.port), str(count)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        pend = pending(sock)
        ids = [x['id'] for x in pend]
        if ids:
            subprocess.run([SBX, 'approve', '--socket', sock, ids[0], flag], capture_output=True, check=True)
        out, err = p.communicate(timeout=60)
        return out, err, pend, approvals(root), lst.count()
    finally:
        lst.close()
        shutil.rmtree(root, ignore_errors=True)


def main():
    print('1..9')
    # 1. allowed through the socket by `sbxtrace approve --allow`
    out, err, pend, recs, acc = decided_through_socket('--allow')
    ok = (out.strip() == 'connected' and acc == 1 and len(pend) == 1 and pend[0]['tool'] == 'connect'
          and f'127.0.0.1' in pend[0]['arguments']
          and [r['event'] for r in recs] == ['request', 'decision'] and recs[1]['decision'] == 'allow_once'
          and recs[1]['channel'] == 'socket' and 'approval socket' in recs[1]['decider'])
    tap(ok, 'held connect allowed by sbxtrace approve --allow through the socket', f'{out}\n{err}\n{pend}\n{recs}')

    # 2. denied: the listener never sees the connection
    out, err, pend, recs, acc = decided_through_socket('--deny')
    ok = out.strip() == 'refused 111' and acc == 0 and recs and recs[-1]['decision'] == 'deny'
    tap(ok, 'held connect denied by sbxtrace approve --deny: ECONNREFUSED, nothing reaches the listener', f'{out}\n{err}\n{recs}')

    # 3. allow_session: the second connect to the same destination is not asked
    out, err, pend, recs, acc = decided_through_socket('--allow-session', count=2)
    ok = out.split() == ['connected', 'connected'] and acc == 2 and [r['event'] for r in recs] == ['request', 'decision'] \
        and recs[1]['decision'] == 'allow_session'
    tap(ok, 'allow_session: a later connect to the destination goes through unasked', f'{out}\n{err}\n{recs}')

    # 4. nobody answers: the timeout denies
    root, lst = fresh(), Listener()
    try:
        t0 = time.time()
        r = subprocess.run(run_args(root, socket_path=os.path.join(root, 'a.sock'), timeout='1s') +
                           ['standard', '--', 'python3', '-c', CONNECT, str(lst.port), '1'], capture_output=True, text=True, timeout=60)
        took = time.time() - t0
        recs = approvals(root)
        ok = r.stdout.strip() == 'refused 111' and lst.count() == 0 and took < 15 and recs[-1]['timed_out'] is True \
            and recs[-1]['decision'] == 'deny' and recs[-1]['decider'] == 'timeout'
        tap(ok, 'no decision within ask_timeout denies', f'{r.stdout}\n{r.stderr}\n{recs}\n{took}')
    finally:
        lst.close()
        shutil.rmtree(root, ignore_errors=True)

    # 5. no channel at all (no socket, no fd, stdin not a terminal): denied at once
    root, lst = fresh(), Listener()
    try:
        r = subprocess.run(run_args(root) + ['standard', '--', 'python3', '-c', CONNECT, str(lst.port), '1'],
                           capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        recs = approvals(root)
        ok = r.stdout.strip() == 'refused 111' and lst.count() == 0 and recs and recs[-1]['channel'] == 'none' \
            and 'approval_required' in recs[-1].get('reason', '')
        tap(ok, 'without a channel the held connect is denied (approval_required)', f'{r.stdout}\n{r.stderr}\n{recs}')
    finally:
        lst.close()
        shutil.rmtree(root, ignore_errors=True)

    # 6. the sandbox reaches the socket (a policy mounts its directory) and tries to approve itself
    root, lst = fresh(), Listener()
    sockdir = os.path.join(root, 'sock')
    os.mkdir(sockdir, 0o700)
    sock = os.path.join(sockdir, 'a.sock')
    pol = os.path.join(root, 'p.toml')
    with open(pol, 'w') as f:
        f.write(f'''extends = "standard"
[[mount]]
path = "/approval"
source = "{sockdir}"
mode = "rw"
''')
    selfapprove = CONNECT.replace('for i in range', 'def attempt():\n    import json, time\n    out = []\n    for _ in range(40):\n        try:\n            u = socket.socket(socket.AF_UNIX)\n            u.connect("/approval/a.sock")\n            u.sendall(b\'{"op":"list"}\\n\')\n            rep = json.loads(u.makefile().readline())\n            out.append(rep)\n            for x in rep.get("pending", []):\n                v = socket.socket(socket.AF_UNIX); v.connect("/approval/a.sock")\n                v.sendall((json.dumps({"op": "decide", "id": x["id"], "decision": "allow_once"}) + "\\n").encode())\n                out.append(json.loads(v.makefile().readline()))\n        except OSError as e:\n            out.append(str(e))\n        time.sleep(0.1)\n    print("self:", json.dumps(out), flush=True)\nimport threading\nthreading.Thread(target=attempt, daemon=True).start()\nimport time; time.sleep(0.5)\nfor i in range')
    selfapprove += 'time.sleep(4.5)\n'
    try:
        r = subprocess.run(run_args(root, socket_path=sock, timeout='3s', extra=()) + [pol, '--', 'python3', '-c', selfapprove, str(lst.port), '1'],
                           capture_output=True, text=True, timeout=60)
        recs = approvals(root)
        ok = 'refused 111' in r.stdout and lst.count() == 0 and '"ok": true' not in r.stdout \
            and ('cannot decide its approvals' in r.stdout or 'Broken pipe' in r.stdout) \
            and recs[-1]['decider'] == 'timeout'
        tap(ok, 'the sandbox cannot approve its own connect through the socket (refused by ancestry)', f'{r.stdout}\n{r.stderr}\n{recs}')
    finally:
        lst.close()
        shutil.rmtree(root, ignore_errors=True)

    # 7./8. the terminal prompt, in a pseudo-terminal: answered by the human (the test), and
    # not answerable by the program (TIOCSTI, writes to the terminal)
    for case in ('human', 'program'):
        root, lst = fresh(), Listener()
        if case == 'human':
            code = CONNECT
        else:
            code = ('import fcntl, termios, os, threading\n'
                    'def forge():\n'
                    '    for _ in range(30):\n'
                    '        for ch in b"o\\n":\n'
                    '            try: fcntl.ioctl(0, termios.TIOCSTI, bytes([ch]))\n'
                    '            except OSError as e: pass\n'
                    '        try: os.write(1, b"o\\n")\n'
                    '        except OSError: pass\n'
                    '        import time; time.sleep(0.1)\n'
                    'threading.Thread(target=forge, daemon=True).start()\n') + CONNECT
        args = run_args(root, timeout='3s' if case == 'program' else '20s') + ['standard', '--', 'python3', '-c', code, str(lst.port), '1']
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(SBX, args)
        buf = b''
        answered = False
        deadline = time.time() + 60
        while time.time() < deadline:
            rl, _, _ = select.select([fd], [], [], 0.2)
            if rl:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                buf += chunk
            if case == 'human' and not answered and b'Allow it?' in buf:
                os.write(fd, b'o\n')
                answered = True
        # the run ends with the program (its audit log is complete then)
        for _ in range(100):
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                break
            time.sleep(0.1)
        else:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        os.close(fd)
        recs = approvals(root)
        text = buf.decode(errors='replace')
        if case == 'human':
            ok = b'Allow it?' in buf and 'connected' in text.split('Allow it?')[-1] and lst.count() == 1 \
                and recs and recs[-1]['channel'] == 'tty' and recs[-1]['decision'] == 'allow_once'
            tap(ok, 'the terminal prompt (a pty): the human answers "o", the connect goes through', f'{text}\n{recs}')
        else:
            ok = b'Allow it?' in buf and lst.count() == 0 and recs and recs[-1]['decision'] == 'deny' \
                and recs[-1]['timed_out'] is True
            tap(ok, 'the program cannot answer the terminal prompt (TIOCSTI, writes): it times out, denied', f'{text}\n{recs}')
        lst.close()
        shutil.rmtree(root, ignore_errors=True)

    # 9. an approval socket the run may not serve (its directory writable by others): exit
    # 125 with the reason, every time, and no hang — S waited for the keeper, the keeper's
    # vfork for C and C for S when the refusal came before the keeper had made C (about 1
    # run in 40); 20 runs, each given 30 s
    root = fresh()
    bad = os.path.join(root, 'open-dir')
    os.mkdir(bad)
    os.chmod(bad, 0o777)
    codes, hung, errs = [], 0, ''
    try:
        for _ in range(20):
            try:
                r = subprocess.run(run_args(root, socket_path=os.path.join(bad, 'a.sock')) +
                                   ['standard', '--', '/bin/true'], capture_output=True, text=True,
                                   timeout=30, stdin=subprocess.DEVNULL)
                codes.append(r.returncode)
                errs = r.stderr
            except subprocess.TimeoutExpired:
                hung += 1
        ok = hung == 0 and codes == [125] * 20 and 'writable by others' in errs
        tap(ok, 'an approval socket that cannot be served: exit 125 with the reason, never a hang',
            f'hung {hung}, codes {codes}\n{errs}')
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if all(results) else 1


sys.exit(main())
