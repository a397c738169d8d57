#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Interleaved timing of two or more commands (not a test; docs/performance.md).

    bench/ab.py N :: CMD_A ARGS... :: CMD_B ARGS... [:: CMD_C ARGS...]...

Runs the commands one after the other, N rounds (output discarded; the order rotates from
round to round), and prints the median,
the first quartile and the minimum wall time of each, and each one's median difference to
the first command's time in the same round (with /bin/true first: the time each adds to a
start). Alternating cancels most of a noisy machine's drift, which on the 2-core VM exceeds
the effect of most single changes to startup. The load average is printed before and after.
"""
import os
import statistics
import subprocess
import sys
import time


def main(argv):
    if len(argv) < 5 or argv[2] != '::' or '::' not in argv[3:]:
        sys.exit(__doc__)
    n = int(argv[1])
    cmds, cur = [], []
    for a in argv[3:] + ['::']:
        if a == '::':
            if not cur:
                sys.exit(__doc__)
            cmds.append(cur)
            cur = []
        else:
            cur.append(a)
    times = [[] for _ in cmds]
    la = os.getloadavg()
    print(f'load average before {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}')
    for i in range(n):
        # the order rotates from round to round: a run can leave work behind (a namespace's
        # teardown, a directory's removal) that slows whichever command comes next
        for j in [(i + k) % len(cmds) for k in range(len(cmds))]:
            cmd = cmds[j]
            t = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[j].append((time.perf_counter() - t) * 1e3)
    for j, cmd in enumerate(cmds):
        r = sorted(times[j])
        d = statistics.median(t - t0 for t, t0 in zip(times[j], times[0]))
        print(f"{chr(ord('A') + j)}: median {statistics.median(r):.2f} ms  p25 {r[len(r) // 4]:.2f}"
              f"  min {r[0]:.2f}  vs A {d:+.2f}  ({' '.join(cmd)[:70]})")
    la = os.getloadavg()
    print(f'load average after {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}')


if __name__ == '__main__':
    main(sys.argv)
