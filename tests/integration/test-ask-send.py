#!/usr/bin/env python3
# Held sends (network.unlisted = "ask" for sendto/sendmsg/sendmmsg with an address; issue 17,
# docs/network.md "Held connects and sends"), TAP, in the emulated view and in the kernel view.
# usage: test-ask-send.py SBXTRACE
# A loopback UDP socket of the test is the "unlisted" destination of an allowlist policy; the
# decision comes from the test through --approval-fd or `sbxtrace approve --socket`, or from
# nobody (the timeout, or no channel at all).
import json
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ask_common import cleanup, fresh, approvals, results, run, skip, tap  # noqa: E402

SBX = os.path.abspath(sys.argv[1])

# argv: port, then the calls to make in order (sendto, sendmsg, sendmmsg, or connect: a UDP
# connect there and a send()); prints one line each
SEND = r'''
import ctypes, socket, struct, sys
port = int(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
class msghdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32),
                ("iov", ctypes.POINTER(iovec)), ("iovlen", ctypes.c_size_t),
                ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int)]
class mmsghdr(ctypes.Structure):
    _fields_ = [("hdr", msghdr), ("len", ctypes.c_uint)]
for kind in sys.argv[2:]:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        if kind == "sendto":
            s.sendto(kind.encode(), ("127.0.0.1", port))
        elif kind == "connect":
            s.connect(("127.0.0.1", port))
            s.send(kind.encode())
        elif kind == "sendmsg":
            s.sendmsg([kind.encode()], [], 0, ("127.0.0.1", port))
        else:
            sa = ctypes.create_string_buffer(struct.pack("=H", socket.AF_INET) + struct.pack("!H", port) + socket.inet_aton("127.0.0.1") + bytes(8), 16)
            data = ctypes.create_string_buffer(kind.encode(), len(kind))
            iov = iovec(ctypes.cast(data, ctypes.c_void_p), len(kind))
            m = mmsghdr(msghdr(ctypes.cast(sa, ctypes.c_void_p), 16, ctypes.pointer(iov), 1, None, 0, 0), 0)
            n = libc.sendmmsg(s.fileno(), ctypes.byref(m), 1, 0)
            if n < 0:
                raise OSError(ctypes.get_errno(), "sendmmsg")
        print("sent", kind, flush=True)
    except OSError as e:
        print("refused", kind, e.errno, flush=True)
    s.close()
'''


class Receiver:
    def __init__(self):
        self.s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.s.bind(('127.0.0.1', 0))
        self.port = self.s.getsockname()[1]

    def got(self):
        out = []
        self.s.settimeout(0.3)
        try:
            while True:
                out.append(self.s.recv(100).decode())
        except OSError:
            pass
        self.s.close()
        return out


def policy(view, timeout='20s'):
    return ['-s', 'network.mode=allowlist', '-s', 'network.allow=["192.0.2.1:80"]',
            '-s', 'network.unlisted=ask', '-s', f'network.ask_timeout={timeout}',
            '-s', f'tracer.kernel_view={"true" if view == "kernel" else "false"}', 'standard']


def case(view, calls, *, channel, decisions=(), timeout='20s'):
    """Runs SEND with calls; returns (result JSON, stdout lines, datagrams, approver, audit)."""
    root, rcv = fresh(), Receiver()
    try:
        r, ap = run(SBX, root, policy(view, timeout), ['python3', '-c', SEND, str(rcv.port)] + calls,
                    channel=channel, decisions=decisions, audit=view == 'emulated',
                    extra=['--json'])
        got = rcv.got()
        try:
            res = json.loads(r.stdout)
        except ValueError:
            res = {'exit_code': r.returncode, 'stdout': '', 'stderr': r.stderr, 'view': None}
        return res, res.get('stdout', '').split('\n')[:-1], got, ap, approvals(root)
    finally:
        cleanup(root)


def main():
    print('1..13')
    for view in ('emulated', 'kernel'):
        res, out, got, ap, recs = case(view, ['sendto'], channel='fd', decisions=['allow_once'])
        if view == 'kernel' and res.get('view') != 'kernel':
            for _ in range(6):
                skip(f'{view} view', f'no kernel view here: {res.get("stderr", "")[:200]!r}')
            continue
        ok = (res.get('view') == view and out == ['sent sendto'] and got == ['sendto']
              and len(ap.requests) == 1 and ap.requests[0]['kind'] == 'sendto'
              and '127.0.0.1' in ap.requests[0]['destination'])
        if view == 'emulated':
            ok = ok and [x['event'] for x in recs] == ['request', 'decision'] \
                and recs[1]['decision'] == 'allow_once' and recs[1]['op'] == 'sendto'
        tap(ok, f'{view}: held sendto allowed once over --approval-fd', f'{res}\n{ap.requests}\n{recs}')

        # denied through the socket (`sbxtrace approve --deny`): ECONNREFUSED, nothing arrives
        res, out, got, ap, recs = case(view, ['sendto'], channel='socket', decisions=['deny'])
        ok = out == ['refused sendto 111'] and got == [] and len(ap.pending) == 1 \
            and ap.pending[0]['tool'] == 'sendto'
        if view == 'emulated':
            ok = ok and recs and recs[-1]['decision'] == 'deny' and recs[-1]['channel'] == 'socket'
        tap(ok, f'{view}: held sendto denied by sbxtrace approve --deny', f'{res}\n{ap.pending}\n{recs}')

        # nobody answers: the timeout denies (and the run cancels the request on the fd)
        res, out, got, ap, recs = case(view, ['sendto'], channel='fd', decisions=[None], timeout='1s')
        ok = out == ['refused sendto 111'] and got == [] and len(ap.requests) == 1 \
            and ap.cancels == [ap.requests[0]['id']]
        if view == 'emulated':
            ok = ok and recs and recs[-1]['timed_out'] is True and recs[-1]['decision'] == 'deny'
        tap(ok, f'{view}: no decision within ask_timeout denies the send', f'{res}\n{ap.requests}\n{recs}')

        # allow_session remembers the destination: later sends (any of the three calls) and
        # a connect of a UDP socket there are not asked
        calls = ['sendto', 'sendto', 'sendmsg', 'sendmmsg', 'connect']
        res, out, got, ap, recs = case(view, calls, channel='fd', decisions=['allow_session'])
        ok = out == ['sent ' + c for c in calls] and sorted(got) == sorted(calls) and len(ap.requests) == 1
        if view == 'emulated':
            ok = ok and [x['event'] for x in recs] == ['request', 'decision'] \
                and recs[1]['decision'] == 'allow_session'
        tap(ok, f'{view}: allow_session: later sends to the destination go through unasked',
            f'{res}\n{ap.requests}\n{recs}')

        # sendmsg and sendmmsg are held one by one, each with its own question
        res, out, got, ap, recs = case(view, ['sendmsg', 'sendmmsg'], channel='fd',
                                       decisions=['allow_once', 'deny'])
        ok = out == ['sent sendmsg', 'refused sendmmsg 111'] and got == ['sendmsg'] \
            and [x['kind'] for x in ap.requests] == ['sendmsg', 'sendmmsg']
        tap(ok, f'{view}: sendmsg allowed once, sendmmsg denied, each asked', f'{res}\n{ap.requests}\n{recs}')

        # no channel (no fd, no socket, stdin not a terminal): denied at once
        res, out, got, ap, recs = case(view, ['sendto'], channel=None)
        ok = out == ['refused sendto 111'] and got == [] and res.get('denied', 0) >= 1
        if view == 'emulated':
            ok = ok and recs and recs[-1]['channel'] == 'none' \
                and 'approval_required' in recs[-1].get('reason', '')
        tap(ok, f'{view}: without a channel the held send is denied (approval_required)', f'{res}\n{recs}')
    # never after a ratchet drop: once a confidential file is read (the mode drops from
    # allowlist to loopback), a send outside is denied without a question (emulated view only:
    # a level is a rule, which the kernel view does not have)
    root = fresh()
    try:
        with open(os.path.join(root, 'ws', 'secret.txt'), 'w') as f:
            f.write('s\n')
        pol = os.path.join(root, 'p.toml')
        with open(pol, 'w') as f:
            f.write('extends = "standard"\n[network]\nmode = "allowlist"\nallow = ["192.0.2.1:80"]\n'
                    'unlisted = "ask"\nratchet = { confidential = "loopback" }\n'
                    '[[rule]]\npath = "/workspace/secret.txt"\nlevel = "confidential"\n')
        code = ('import socket\n'
                'def send():\n'
                '    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n'
                '    try: s.sendto(b"x", ("192.0.2.55", 9)); print("sent", flush=True)\n'
                '    except OSError as e: print("refused", e.errno, flush=True)\n'
                'send()\nopen("/workspace/secret.txt").read()\nsend()\n')
        r, ap = run(SBX, root, [pol], ['python3', '-c', code], channel='fd',
                    decisions=['allow_once', 'allow_once'])
        recs = approvals(root)
        out = r.stdout.split('\n')[:2]
        # the first send is asked and allowed (a host without a route says ENETUNREACH)
        ok = out[0] in ('sent', 'refused 101') and out[1:] == ['refused 111'] and len(ap.requests) == 1 \
            and len(recs) == 2
        tap(ok, 'emulated: after a ratchet drop a send outside is denied without asking',
            f'{r.stdout}\n{r.stderr}\n{ap.requests}\n{recs}')
    finally:
        cleanup(root)
    return 0 if all(results) else 1


sys.exit(main())
