#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# fold-testlog.py TESTLOG.json EXPECTED-LIST: the results of `meson test` run inside the
# container (tests/container/docker.sh suites), as unnumbered TAP-like lines for docker.sh to
# number: "ok - …", "ok - … # SKIP reason", "not ok - …", details as "#   …", then one
# "# SUITE: P passed, F failed, S skipped" line per suite. Not ok: a failure or timeout, a
# test of the list that has no result, and a skip that does not say why (exit 77 with no
# output, or a TAP plan of 0 with no reason). Skipped TAP subtests of a passing test are
# listed with their reasons too, so that nothing is skipped unseen.
import json
import re
import sys


def short(name):
    # "sbxtrace:integration / test-run-basics" -> ("integration", "test-run-basics")
    proj_suite, _, test = name.partition(" / ")
    return proj_suite.split(":", 1)[-1], test


def skip_reason(out):
    lines = [l.strip() for l in out.splitlines() if l.strip()]
    for l in reversed(lines):
        m = re.search(r"#\s*SKIP\S*\s*(.*)", l, re.I)
        if m and m.group(1).strip():
            return m.group(1).strip()
    for l in reversed(lines):
        if re.match(r"(skip|SKIP)\b", l) or "skip:" in l.lower():
            return l
    return None


def main():
    log, listing = sys.argv[1], sys.argv[2]
    expected = [l.strip() for l in open(listing) if " / " in l]
    results = {}
    try:
        for line in open(log):
            d = json.loads(line)
            results[d["name"]] = d
    except OSError as e:
        print(f"not ok - the test log of the run inside the container: {e}")
    counts = {}
    bad = 0
    missing = []
    for name in expected + [n for n in results if n not in expected]:
        suite, test = short(name)
        c = counts.setdefault(suite, [0, 0, 0])
        d = results.get(name)
        if d is None:
            missing.append(f"{suite}/{test}")
            c[1] += 1
            bad += 1
            continue
        res = d["result"]
        out = (d.get("stdout") or "") + "\n" + (d.get("stderr") or "")
        dur = d.get("duration", 0)
        if res in ("OK", "EXPECTEDFAIL"):
            c[0] += 1
            print(f"ok - {suite}/{test} ({dur:.1f} s)")
            for l in out.splitlines():
                # a part of a subtest left out, said in a TAP comment ("# skip …")
                if re.match(r"#\s*skip\b", l, re.I):
                    print(f"#   {test}: {l.lstrip('# ').strip()}")
                # a unittest case skipped (python-client)
                m = re.match(r"(\S+) \(.*\) \.\.\. skipped '(.*)'$", l)
                if m:
                    print(f"#   {test}: {m.group(1)} skipped: {m.group(2)}")
                m = re.match(r"ok\s+\d+\s*-?\s*(.*?)\s*#\s*SKIP\S*\s*(.*)", l, re.I)
                if m:
                    print(f"#   {test}: subtest {m.group(1)} skipped: {m.group(2) or 'NO REASON'}")
                    if not m.group(2).strip():
                        print(f"not ok - {suite}/{test}: subtest {m.group(1)} skipped without a reason")
                        bad += 1
        elif res == "SKIP":
            c[2] += 1
            why = skip_reason(out)
            if why:
                print(f"ok - {suite}/{test} # SKIP {why}")
            else:
                print(f"not ok - {suite}/{test}: skipped without saying why")
                bad += 1
        else:
            c[1] += 1
            bad += 1
            print(f"not ok - {suite}/{test}: {res} (exit {d.get('returncode')}, {dur:.1f} s)")
            for l in out.strip().splitlines()[-25:]:
                print(f"#   {l}")
    if missing:
        print(f"not ok - {len(missing)} of {len(expected)} tests have no result (meson test "
              f"stopped early?): {' '.join(missing[:8])}{' …' if len(missing) > 8 else ''}")
    for suite, (p, f, s) in sorted(counts.items()):
        print(f"# {suite}: {p} passed, {f} failed, {s} skipped")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
