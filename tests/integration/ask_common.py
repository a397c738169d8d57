# Helpers of the held-call tests (issue 17: test-ask-send.py, test-ask-exec.py,
# test-ask-open.py): a run of sbxtrace with a decision driven by the test itself, through
# --approval-fd (the test holds the other end of a socketpair) or --approval-socket
# (`sbxtrace approve`, another process), or with no channel at all.
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time

from tap_common import results, skip, tap  # noqa: F401 (the ask tests import them from here)


def fresh():
    root = tempfile.mkdtemp(prefix='sbxtrace-ask-')
    os.chmod(root, 0o700)
    os.mkdir(os.path.join(root, 'ws'))
    return root


def approvals(root):
    path = os.path.join(root, 'audit.jsonl')
    if not os.path.exists(path):
        return []
    return [r for r in (json.loads(line) for line in open(path)) if r.get('type') == 'approval']


def kernel_view_possible(sbx, policy_args):
    """Whether `run` can build the kernel view for this policy here (check says so)."""
    r = subprocess.run([sbx, 'check'] + policy_args, capture_output=True, text=True)
    return 'in the kernel (a user and mount namespace)' in r.stdout + r.stderr


class FdApprover:
    """The other end of --approval-fd: answers each request with the next decision of the list
    (None: no answer, the run's timeout decides; (decision, seconds): answer after a delay; a
    function of the request: what it returns, after doing what it does), and keeps the
    requests."""

    def __init__(self, decisions):
        self.ours, self.theirs = socket.socketpair()
        self.decisions = list(decisions)
        self.requests = []
        self.cancels = []
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        f = self.ours.makefile('rwb', buffering=0)
        for line in f:
            try:
                m = json.loads(line)
            except ValueError:
                continue
            if m.get('op') == 'cancel':
                self.cancels.append(m.get('id'))
                continue
            if m.get('op') != 'ask':
                continue
            self.requests.append(m)
            d = self.decisions.pop(0) if self.decisions else 'deny'
            if d is None:
                continue
            if isinstance(d, tuple):
                time.sleep(d[1])
                d = d[0]
            if callable(d):
                d = d(m)
            f.write((json.dumps({'id': m['id'], 'decision': d, 'decider': 'test'}) + '\n').encode())

    def close(self):
        self.theirs.close()
        self.t.join(timeout=5)
        self.ours.close()


class SocketApprover:
    """`sbxtrace approve --socket`: decides each pending request with the next decision."""

    def __init__(self, sbx, path, decisions):
        self.sbx, self.path = sbx, path
        self.decisions = list(decisions)
        self.pending = []
        self.stop = False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        seen = set()
        while not self.stop:
            r = subprocess.run([self.sbx, 'approvals', '--socket', self.path, '--json'],
                               capture_output=True, text=True)
            if r.returncode == 0 and r.stdout.strip() not in ('', '[]'):
                for x in json.loads(r.stdout):
                    if x['id'] in seen:
                        continue
                    seen.add(x['id'])
                    self.pending.append(x)
                    d = self.decisions.pop(0) if self.decisions else None
                    flag = {'allow_once': '--allow', 'allow_session': '--allow-session',
                            'deny': '--deny'}.get(d)
                    if flag:
                        subprocess.run([self.sbx, 'approve', '--socket', self.path, x['id'], flag],
                                       capture_output=True)
            time.sleep(0.1)

    def close(self):
        self.stop = True
        self.t.join(timeout=10)


def run(sbx, root, policy_args, cmd, *, channel=None, decisions=(), audit=True, timeout='20s',
        extra=()):
    """Runs cmd under sbxtrace; channel: 'fd', 'socket' or None. Returns (CompletedProcess,
    approver or None)."""
    args = [sbx, 'run', '-q', '-w', os.path.join(root, 'ws')]
    if audit:
        args += ['--audit', os.path.join(root, 'audit.jsonl')]
    args += list(extra)
    approver = None
    pass_fds = ()
    if channel == 'fd':
        approver = FdApprover(decisions)
        fd = approver.theirs.fileno()
        args += ['--approval-fd', str(fd)]
        pass_fds = (fd,)
    elif channel == 'socket':
        sock = os.path.join(root, 'a.sock')
        args += ['--approval-socket', sock]
        approver = SocketApprover(sbx, sock, decisions)
    args += policy_args + ['--'] + cmd
    try:
        r = subprocess.run(args, capture_output=True, text=True, timeout=120, pass_fds=pass_fds,
                           stdin=subprocess.DEVNULL)
    finally:
        if approver:
            approver.close()
    return r, approver


def cleanup(root):
    shutil.rmtree(root, ignore_errors=True)
