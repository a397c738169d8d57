#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The comparison table of issue 20: native, bwrap, sbxtrace's kernel view and its emulated
view, one command (not a test; docs/performance.md, "The comparison table (issue 20)").

    bench/bench-table.py [--quick] [--rounds N] [--build DIR] [--no-bwrap] [ROW...]

Rows: the start of /bin/true (milliseconds added to the native start), bench-fs's workloads
(python, gcc, tar, git, spawn: `bench-fs --prepare` makes their directories and gives their
scripts) and bench/micro's loops (getpid, openat, stat, forkexec, write, connect: ns per
operation, timed inside the sandbox so its start is not counted). Each round runs every row
under every variant, the variants one after the other in an order that rotates from round to
round, so a drift of the machine's load hits all of them; each round's figure is the ratio
to that round's native run (for the start: the difference). The table gives the median over
the rounds and the min-max range. Native figures are absolute (s, ns/op, ms).

Variants:
  native    the command as is
  bwrap     bwrap --unshare-user --unshare-pid --unshare-net, the runtime read-only, a tmpfs
            /tmp, the workspace bound read-write at its own path (only if bwrap is on PATH)
  kernel    sbxtrace run with bench/table.toml, -s tracer.kernel_view=true
  emulated  the same with -s tracer.kernel_view=false
  netns     (--netns) kernel with -s network.unshare=true: loopback in a network namespace
            of its own, connect and the sends in the kernel (docs/network.md, "Loopback in
            a namespace of its own")
Every variant gets the same environment (HOME and TMPDIR are the workspace) and working
directory (the workspace); bench/micro's directory is visible read-only in all of them.

--rounds N (default 5; --quick: 3), --build DIR (default: build/ next to bench/),
--no-bwrap leaves the bwrap column out even when bwrap is installed; --netns adds the netns
column; ROW... runs only those rows (names as in ROWS below).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (name, label, kind, argument): kind "start", "fs" (a bench-fs workload) or "micro"
# (bench/micro's op and count; "FILE" stands for a small file in the workspace, "WFILE" for
# the file the write loop writes there)
ROWS = [
    ('start', 'start of /bin/true (added ms)', 'start', None),
    ('python', 'python imports (10 starts, 30 modules)', 'fs', 'python'),
    ('gcc', 'gcc build of 32 files -j2 (31 compiles + link)', 'fs', 'gcc'),
    ('tar', 'tar x+c of 3000 files', 'fs', 'tar'),
    ('git', 'git init/add/commit/status/log (300 files)', 'fs', 'git'),
    ('spawn', 'spawn 300 processes (sh loop of /bin/true)', 'fs', 'spawn'),
    ('getpid', 'getpid', 'micro', ['getpid', '1000000']),
    ('openat', 'openat+close', 'micro', ['openat', '20000', 'FILE']),
    ('stat', 'stat', 'micro', ['stat', '20000', 'FILE']),
    ('forkexec', 'fork+exec+wait', 'micro', ['forkexec', '200']),
    ('write', '4 KiB write', 'micro', ['write', '50000', 'WFILE']),
    ('connect', 'loopback connect (+close)', 'micro', ['connect', '2000']),
]

STARTS_PER_ROUND = 10
ENV_PATH = '/usr/local/bin:/usr/bin:/bin'


class Failure(Exception):
    pass


def bwrap_prefix(ws, micro_dir):
    """bwrap 0.8's usual shape: the runtime read-only (merged-/usr symlinks kept as
    symlinks), /dev, a tmpfs /tmp, the workspace read-write at its own path."""
    a = ['bwrap', '--unshare-user', '--unshare-pid', '--unshare-net',
         '--ro-bind', '/usr', '/usr']
    for d in ('/bin', '/lib', '/lib64'):
        if os.path.islink(d):
            a += ['--symlink', os.readlink(d), d]
        elif os.path.isdir(d):
            a += ['--ro-bind', d, d]
    for d in ('/etc/ssl', '/etc/alternatives'):
        if os.path.isdir(d):
            a += ['--ro-bind', d, d]
    a += ['--dev', '/dev', '--tmpfs', '/tmp', '--bind', ws, ws,
          '--ro-bind', micro_dir, micro_dir, '--chdir', ws, '--']
    return a


def sbx_prefix(sbxtrace, policy, ws, micro_dir, kernel_view, netns=False):
    return [sbxtrace, 'run', '-q', '--workspace-anywhere', '-w', ws,
            '-s', f'mount=[{{path = "{micro_dir}", mode = "ro"}}]',
            '-s', f'tracer.kernel_view={"true" if kernel_view else "false"}'] + \
        (['-s', 'network.unshare=true'] if netns else []) + [policy, '--']


def run(cmd, ws, capture=False):
    """Runs cmd in ws; seconds (and stdout). Raises Failure with stderr's tail."""
    env = {'PATH': ENV_PATH, 'HOME': ws, 'TMPDIR': ws, 'LC_ALL': 'C',
           'PYTHONDONTWRITEBYTECODE': '1'}
    t = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=ws, env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
    except OSError as e:
        raise Failure(str(e))
    t = time.perf_counter() - t
    if p.returncode != 0:
        tail = p.stderr.decode(errors='replace').strip().splitlines()[-3:]
        raise Failure(f'exit status {p.returncode}: ' + ' / '.join(tail))
    return t, (p.stdout.decode() if capture else None)


def measure(row, prefix, ws, micro, script):
    """One figure of one row under one variant: seconds (fs), ns/op (micro)."""
    name, _, kind, arg = row
    if kind == 'fs':
        return run(prefix + ['/bin/sh', '-c', script], ws)[0]
    files = {'FILE': os.path.join(ws, 'FILE'), 'WFILE': os.path.join(ws, 'w.out')}
    args = [files.get(a, a) for a in arg]
    out = run(prefix + [micro] + args, ws, capture=True)[1]
    try:
        return float(out.strip())
    except ValueError:
        raise Failure(f'micro printed {out.strip()[:60]!r}')


def fmt_range(vals, fmt):
    return f'{fmt(statistics.median(vals))} ({fmt(min(vals))}–{fmt(max(vals))})'


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--quick', action='store_true', help='3 rounds instead of 5')
    ap.add_argument('--rounds', type=int)
    ap.add_argument('--build', default=os.path.join(SRC, 'build'))
    ap.add_argument('--no-bwrap', action='store_true')
    ap.add_argument('--netns', action='store_true',
                    help='also the kernel view with network.unshare = true')
    ap.add_argument('rows', nargs='*', metavar='ROW')
    opt = ap.parse_args()
    rounds = opt.rounds or (3 if opt.quick else 5)
    rows = [r for r in ROWS if not opt.rows or r[0] in opt.rows]
    if not rows:
        ap.error('no such row; rows: ' + ' '.join(r[0] for r in ROWS))

    opt.build = os.path.abspath(opt.build)  # the commands run in the workspaces
    sbxtrace = os.path.join(opt.build, 'cli', 'sbxtrace')
    bench_fs = os.path.join(opt.build, 'bench', 'bench-fs')
    micro = os.path.join(opt.build, 'bench', 'micro')
    policy = os.path.join(SRC, 'bench', 'table.toml')
    for f in (sbxtrace, bench_fs, micro):
        if not os.access(f, os.X_OK):
            sys.exit(f'{f} is missing: ninja -C {opt.build}')
    micro_dir = os.path.dirname(micro)

    variants = ['native']
    bwrap = None if opt.no_bwrap else shutil.which('bwrap')
    if bwrap:
        variants.append('bwrap')
    variants += ['kernel', 'emulated']
    if opt.netns:
        variants.append('netns')

    base = tempfile.mkdtemp(prefix='bench-table-')
    try:
        # one workspace per row: bench-fs's workloads in their prepared directories, the
        # micro rows and the start in a directory with one small file
        ws, script, skipped = {}, {}, {}
        for row in rows:
            name, _, kind, arg = row
            d = os.path.join(base, name)
            os.mkdir(d)
            ws[name] = d
            if kind == 'fs':
                p = subprocess.run([bench_fs, '--prepare', arg, d], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
                if p.returncode != 0:
                    skipped[name] = p.stderr.decode(errors='replace').strip()
                    continue
                script[name] = p.stdout.decode().strip()
            elif kind == 'micro':
                with open(os.path.join(d, 'FILE'), 'w') as f:
                    f.write('bench-table\n')

        def prefix(v, name):
            if v == 'native':
                return []
            if v == 'bwrap':
                return bwrap_prefix(ws[name], micro_dir)
            return sbx_prefix(sbxtrace, policy, ws[name], micro_dir, v in ('kernel', 'netns'),
                              v == 'netns')

        load0 = os.getloadavg()
        print(f'bench-table: {time.strftime("%Y-%m-%d %H:%M %Z")}, {os.uname().sysname} '
              f'{os.uname().release}, {os.cpu_count()} CPUs, load average '
              f'{load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}; {rounds} rounds; variants: '
              f'{", ".join(variants)}', flush=True)
        if not bwrap:
            print('bwrap: not on PATH (or --no-bwrap), column left out', flush=True)

        failed = {}  # (row, variant) -> message

        # warm-up: the page cache and the first start of each tool, untimed
        for row in rows:
            name, _, kind, _ = row
            if name in skipped or kind != 'fs':
                continue
            for v in variants:
                try:
                    measure(row, prefix(v, name), ws[name], micro, script.get(name))
                except Failure as e:
                    failed[(name, v)] = str(e)

        # figures[row][variant] = per-round ratio (or added ms); native[row] = absolute
        figures = {r[0]: {v: [] for v in variants[1:]} for r in rows}
        native = {r[0]: [] for r in rows}
        for rnd in range(rounds):
            k = rnd % len(variants)
            order = variants[k:] + variants[:k]
            for row in rows:
                name, _, kind, _ = row
                if name in skipped:
                    continue
                got = {}
                if kind == 'start':
                    times = {v: [] for v in order}
                    for _ in range(STARTS_PER_ROUND):
                        for v in order:
                            if (name, v) in failed:
                                continue
                            try:
                                times[v].append(run(prefix(v, name) + ['/bin/true'],
                                                    ws[name])[0] * 1e3)
                            except Failure as e:
                                failed[(name, v)] = str(e)
                    got = {v: statistics.median(t) for v, t in times.items() if t}
                else:
                    for v in order:
                        if (name, v) in failed:
                            continue
                        try:
                            got[v] = measure(row, prefix(v, name), ws[name], micro,
                                             script.get(name))
                        except Failure as e:
                            failed[(name, v)] = str(e)
                if 'native' not in got:
                    continue
                native[name].append(got['native'])
                for v in variants[1:]:
                    if v in got:
                        figures[name][v].append(got[v] - got['native'] if kind == 'start'
                                                else got[v] / got['native'])
            la = os.getloadavg()
            print(f'  round {rnd + 1}/{rounds} done, load average {la[0]:.2f}', file=sys.stderr,
                  flush=True)

        load1 = os.getloadavg()
        cols = {'bwrap': 'bwrap', 'kernel': 'sbxtrace kernel view',
                'emulated': 'sbxtrace emulated view',
                'netns': 'sbxtrace kernel view, network.unshare'}
        print(f'load average at the end {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}')
        print('median ratio to native over the rounds (min–max); start: ms added to the native '
              'start; native: median absolute figure')
        print()
        print('| row | native | ' + ' | '.join(cols[v] for v in variants[1:]) + ' |')
        print('| --- | ---: | ' + ' | '.join('---:' for _ in variants[1:]) + ' |')
        for row in rows:
            name, label, kind, _ = row
            if name in skipped:
                print(f'| {label} | skipped: {skipped[name]} |' + ' |' * (len(variants) - 1))
                continue
            if not native[name]:
                print(f'| {label} | failed |' + ' |' * (len(variants) - 1))
                continue
            n = statistics.median(native[name])
            if kind == 'start':
                cells = [f'{n:.2f} ms']
                fmt = lambda x: f'{x:.1f}'
            elif kind == 'fs':
                cells = [f'{n:.3f} s']
                fmt = lambda x: f'{x:.2f}'
            else:
                cells = [f'{n:.0f} ns' if n < 1e4 else f'{n / 1e3:.1f} µs']
                fmt = lambda x: f'{x:.2f}'
            for v in variants[1:]:
                vals = figures[name][v]
                cells.append(fmt_range(vals, fmt) if vals else 'failed')
            print(f'| {label} | ' + ' | '.join(cells) + ' |')
        for (name, v), msg in sorted(failed.items()):
            print(f'failed: {name} under {v}: {msg}')
        return 1 if failed else 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
