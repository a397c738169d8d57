#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Interleaved A/B timing of two commands (not a test; docs/performance.md).

    bench/ab.py N :: CMD_A ARGS... :: CMD_B ARGS...

Runs A and B alternately N times each (output discarded) and prints the median, the first
quartile and the minimum wall time of each. Alternating cancels most of a noisy machine's
drift, which on the 2-core VM exceeds the effect of most single changes to startup.
"""
import statistics
import subprocess
import sys
import time


def main(argv):
    if len(argv) < 5 or argv[2] != '::' or '::' not in argv[3:]:
        sys.exit(__doc__)
    n = int(argv[1])
    rest = argv[3:]
    i = rest.index('::')
    cmds = [rest[:i], rest[i + 1:]]
    times = [[], []]
    for _ in range(n):
        for j in (0, 1):
            t = time.perf_counter()
            subprocess.run(cmds[j], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[j].append((time.perf_counter() - t) * 1e3)
    for j in (0, 1):
        r = sorted(times[j])
        print(f"{'AB'[j]}: median {statistics.median(r):.2f} ms  p25 {r[len(r) // 4]:.2f}"
              f"  min {r[0]:.2f}  ({' '.join(cmds[j])[:60]})")


if __name__ == '__main__':
    main(sys.argv)
