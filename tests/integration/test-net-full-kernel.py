#!/usr/bin/env python3
# Mode "full" in the view in the kernel: connect and the sends run in the kernel, without a
# network namespace (issue 20, connect; tracer/filter.c, net_full_runs_in_kernel), TAP.
# usage: test-net-full-kernel.py SBXTRACE
# `check` and `run --json` ("network_calls") say where the calls are decided; inet
# destinations of the host are reached as in full mode before; the host's abstract unix
# sockets stay out of reach (Landlock's scope, in the kernel, where the supervisor refused
# them before), by connect and by a datagram send; binding an abstract name the policy does
# not list still fails (bind stays notified: a tree must not take a name a host service
# would bind); a unix socket path in the workspace is reached through the view.
import os
import socket
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap_common import check, results, run_json, skip, tap  # noqa: E402

SBX = os.path.abspath(sys.argv[1])
SETS = ['network.mode=full']

INSIDE = r'''
import errno, socket, sys
tcp_port, udp_port, tag = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def attempt(name, f):
    try:
        f()
        print(name, 'ok')
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
def tcp():
    s = socket.create_connection(('127.0.0.1', tcp_port), timeout=5)
    s.sendall(b'tcp-' + tag.encode())
    s.close()
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b'udp-' + tag.encode(), ('127.0.0.1', udp_port))
def abstract_connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect('\0sbx-full-stream-' + tag)
    s.sendall(b'abstract-stream')
def abstract_send():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.sendto(b'abstract-dgram', '\0sbx-full-dgram-' + tag)
def abstract_bind():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind('\0sbx-full-squat-' + tag)
    s.listen(1)
    import time; time.sleep(1)
def unix_path():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect('/workspace/path.sock')
    s.sendall(b'unix-path')
attempt('tcp', tcp)
attempt('udp', udp)
attempt('abstract-connect', abstract_connect)
attempt('abstract-send', abstract_send)
attempt('abstract-bind', abstract_bind)
attempt('unix-path', unix_path)
'''


def main():
    tmp = tempfile.mkdtemp(prefix='sbx-net-full-')
    ws = os.path.join(tmp, 'ws')
    os.mkdir(ws)
    with open(os.path.join(ws, 'inside.py'), 'w') as f:
        f.write(INSIDE)
    print('1..8')
    tag = str(os.getpid())
    got = {}

    def serve(sock, key):
        sock.settimeout(20)
        try:
            if sock.type == socket.SOCK_STREAM:
                c, _ = sock.accept()
                c.settimeout(5)
                got[key] = c.recv(100)
                c.close()
            else:
                got[key] = sock.recv(100)
        except OSError:
            pass

    listeners = []

    def listen(family, type_, addr, key):
        s = socket.socket(family, type_)
        s.bind(addr)
        if type_ == socket.SOCK_STREAM:
            s.listen(4)
        threading.Thread(target=serve, args=(s, key), daemon=True).start()
        listeners.append(s)
        return s

    tcp = listen(socket.AF_INET, socket.SOCK_STREAM, ('127.0.0.1', 0), 'tcp')
    udp = listen(socket.AF_INET, socket.SOCK_DGRAM, ('127.0.0.1', 0), 'udp')
    listen(socket.AF_UNIX, socket.SOCK_STREAM, '\0sbx-full-stream-' + tag, 'abstract-stream')
    listen(socket.AF_UNIX, socket.SOCK_DGRAM, '\0sbx-full-dgram-' + tag, 'abstract-dgram')
    listen(socket.AF_UNIX, socket.SOCK_STREAM, os.path.join(ws, 'path.sock'), 'unix-path')

    p = check(SBX, ws, SETS, 'standard')
    said_kernel = 'connect and the sends run in the kernel' in p.stderr
    res, err = run_json(SBX, ws, SETS, 'standard',
                        ['/usr/bin/python3', '/workspace/inside.py',
                         str(tcp.getsockname()[1]), str(udp.getsockname()[1]), tag])
    calls = res and res.get('network_calls')
    out = dict(line.split(' ', 1) for line in (res or {}).get('stdout', '').splitlines()
               if ' ' in line)
    if res and res.get('view') == 'kernel':
        tap(calls == 'kernel' and said_kernel,
            'kernel view, mode full: run --json and check say connect and the sends run in the kernel',
            f'network_calls {calls} ({res.get("network_calls_reason")}); check: {p.stderr}')
    else:
        skip('kernel view, mode full: the calls in the kernel',
             f'the view is emulated here: {res and res.get("view_reason")} {err}')
    tap(out.get('tcp') == 'ok' and got.get('tcp') == b'tcp-' + tag.encode(),
        'a TCP connect to a host listener on 127.0.0.1 arrives', f'{out}\n{err}')
    tap(out.get('udp') == 'ok', 'a UDP send to the host goes out', f'{out}\n{err}')
    tap(out.get('abstract-connect') not in (None, 'ok') and 'abstract-stream' not in got,
        "the host's abstract stream socket is refused", f'{out} {got}\n{err}')
    tap(out.get('abstract-send') not in (None, 'ok') and 'abstract-dgram' not in got,
        "a datagram to the host's abstract socket is refused", f'{out} {got}\n{err}')
    tap(out.get('abstract-bind') == 'EACCES', 'binding an abstract name the policy does not list fails',
        f'{out}\n{err}')
    # the name is still free on the host
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind('\0sbx-full-squat-' + tag)
        s.close()
        free = True
    except OSError:
        free = False
    tap(free, 'the abstract name is free on the host afterwards')
    tap(out.get('unix-path') == 'ok' and got.get('unix-path') == b'unix-path',
        'a unix socket path in the workspace is reached through the view', f'{out} {got}\n{err}')
    for s in listeners:
        s.close()
    for name in os.listdir(ws):
        os.unlink(os.path.join(ws, name))
    os.rmdir(ws)
    os.rmdir(tmp)
    return 0 if all(results) else 1


sys.exit(main())
