#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A start split in two (not a test; docs/performance.md, "A new VM").

    bench/start-phases.py [--rounds N] [--build DIR] [--no-bwrap]

The launch: from the spawn of the command line to the first instruction of the command's
main (`micro stamp FILE` writes the clock there). The end: from there to the return of the
caller's waitpid. Native, bwrap (when on PATH) and sbxtrace's two views, as bench-table.py
runs them (the same prefixes, bench/table.toml); N rounds (default 100) of one start each,
in an order that rotates from round to round. Prints the medians in µs and each one's
median difference to native in the same round.
"""
import argparse
import importlib.util
import os
import shutil
import statistics
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def table_module():
    """bench-table.py's helpers (its name has a dash: loaded from its path)."""
    spec = importlib.util.spec_from_file_location(
        'bench_table', os.path.join(SRC, 'bench', 'bench-table.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def one_start(cmd, ws, stamp_file):
    """(launch µs, end µs) of one run of cmd, which ends with `micro stamp stamp_file`."""
    env = {'PATH': '/usr/local/bin:/usr/bin:/bin', 'HOME': ws, 'TMPDIR': ws, 'LC_ALL': 'C'}
    try:
        os.unlink(stamp_file)
    except FileNotFoundError:
        pass
    # the lookup before the clock: bench-table names bwrap without its directory
    exe = shutil.which(cmd[0]) or cmd[0]
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        t0 = time.monotonic_ns()
        pid = os.posix_spawn(exe, cmd, env, file_actions=[
            (os.POSIX_SPAWN_DUP2, devnull, 0), (os.POSIX_SPAWN_DUP2, devnull, 1)])
        _, status = os.waitpid(pid, 0)
        t1 = time.monotonic_ns()
    finally:
        os.close(devnull)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f'{" ".join(cmd[:3])}…: exit status {status:#x}')
    with open(stamp_file) as f:
        ts = float(f.read())
    return (ts - t0) / 1e3, (t1 - ts) / 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--rounds', type=int, default=100)
    ap.add_argument('--build', default=os.path.join(SRC, 'build'))
    ap.add_argument('--no-bwrap', action='store_true')
    opt = ap.parse_args()
    tbl = table_module()
    build = os.path.abspath(opt.build)
    sbxtrace = os.path.join(build, 'cli', 'sbxtrace')
    micro = os.path.join(build, 'bench', 'micro')
    policy = os.path.join(SRC, 'bench', 'table.toml')
    for f in (sbxtrace, micro):
        if not os.access(f, os.X_OK):
            sys.exit(f'{f} is missing: ninja -C {build}')
    micro_dir = os.path.dirname(micro)
    bwrap = None if opt.no_bwrap else shutil.which('bwrap')
    variants = ['native'] + (['bwrap'] if bwrap else []) + ['kernel', 'emulated']

    base = tempfile.mkdtemp(prefix='start-phases-')
    try:
        ws = {v: os.path.join(base, v) for v in variants}
        for d in ws.values():
            os.mkdir(d)

        def command(v):
            if v == 'native':
                pre = []
            elif v == 'bwrap':
                pre = tbl.bwrap_prefix(ws[v], micro_dir)
            else:
                pre = tbl.sbx_prefix(sbxtrace, policy, ws[v], micro_dir, v == 'kernel')
            return pre + [micro, 'stamp', os.path.join(ws[v], 'stamp')]

        la = os.getloadavg()
        print(f'start-phases: {opt.rounds} rounds, load average {la[0]:.2f}', flush=True)
        got = {v: [] for v in variants}
        for v in variants:  # warm-up, untimed
            one_start(command(v), ws[v], os.path.join(ws[v], 'stamp'))
        for rnd in range(opt.rounds):
            k = rnd % len(variants)
            for v in variants[k:] + variants[:k]:
                got[v].append(one_start(command(v), ws[v], os.path.join(ws[v], 'stamp')))
        la = os.getloadavg()
        print(f'load average at the end {la[0]:.2f}')
        print('| variant | launch µs | end µs | total µs | launch − native | end − native |')
        print('| --- | ---: | ---: | ---: | ---: | ---: |')
        for v in variants:
            launch = [x[0] for x in got[v]]
            end = [x[1] for x in got[v]]
            dl = [x[0] - n[0] for x, n in zip(got[v], got['native'])]
            de = [x[1] - n[1] for x, n in zip(got[v], got['native'])]
            print(f'| {v} | {statistics.median(launch):.0f} | {statistics.median(end):.0f} | '
                  f'{statistics.median([a + b for a, b in got[v]]):.0f} | '
                  f'{statistics.median(dl):+.0f} | {statistics.median(de):+.0f} |')
    except RuntimeError as e:
        sys.exit(f'start-phases: {e}')
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == '__main__':
    main()
