#!/bin/bash
# SPDX-License-Identifier: MIT
# Issue 25, item 2: out-of-view attempts in the audit log. The program looks for names that
# exist on the host but not in its view (hidden by a rule, outside every mount, under a mount
# of another directory) and for names that exist nowhere: it sees the same ENOENT for all of
# them (no oracle), and the log tells them apart (out_of_view, path, host_path); report
# shows them.
# usage: test-audit-oov.sh SBXTRACE
set -u
sbx=$(realpath "$1")
scratch=$(mktemp -d "${TMPDIR:-/tmp}/test-oov.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
fail() {
	echo "not ok: $*"
	echo "--- program output:"
	cat "$scratch/out" 2>/dev/null
	echo "--- stderr:"
	cat "$scratch/err" 2>/dev/null
	exit 1
}
mkdir -p "$scratch/ws" "$scratch/host"
echo secret >"$scratch/ws/.secret"
echo host >"$scratch/host/file"
cat >"$scratch/policy.toml" <<'EOF'
extends = "standard"

[[rule]]
path = "/workspace/.secret"
access = "hide"
EOF
hostfile="$scratch/host/file"
case $hostfile in
/tmp/*) hostkind=shadowed ;; # the view's /tmp is a private one
*) hostkind=outside ;;
esac

# each name: what the program saw (errno name), one line each
"$sbx" run -q --audit "$scratch/log.jsonl" -w "$scratch/ws" "$scratch/policy.toml" -- \
	python3 -c '
import os, sys
for p in sys.argv[1:]:
    try:
        os.stat(p)
        print(p, "exists")
    except OSError as e:
        print(p, os.strerror(e.errno))
os.chdir("/workspace")
try:
    open(".secret")
except OSError as e:
    print(".secret", os.strerror(e.errno))
' /workspace/.secret /workspace/absent "$hostfile" "$scratch/host/absent" >"$scratch/out" 2>"$scratch/err" ||
	fail "the run failed"
[ "$(grep -c ' No such file or directory$' "$scratch/out")" -eq 5 ] ||
	fail "the program did not see ENOENT for every name"

python3 - "$scratch/log.jsonl" "$scratch/ws" "$hostfile" "$hostkind" "$scratch/host/absent" <<'EOF' || fail "the records"
import json, sys
log, ws, hostfile, hostkind, hostabsent = sys.argv[1:]
recs = [json.loads(l) for l in open(log)]
def rec(path):
    r = [x for x in recs if x["type"] == "syscall" and x.get("args", {}).get("path") == path]
    assert r, "no record for " + path
    return r[-1]
bad = []
def check(path, kind, host=None, vpath=None):
    r = rec(path)
    if r.get("errno") != "ENOENT" or r["decision"] != ("denied" if kind == "hidden" else "emulated"):
        bad.append((path, "not the ENOENT expected", r))
    if r.get("out_of_view") != kind:
        bad.append((path, "out_of_view %r, not %r" % (r.get("out_of_view"), kind), r))
    if host is not None and r.get("host_path") != host:
        bad.append((path, "host_path", r))
    if vpath is not None and r.get("path") != vpath:
        bad.append((path, "path", r))
check("/workspace/.secret", "hidden", ws + "/.secret", "/workspace/.secret")
check(".secret", "hidden", ws + "/.secret", "/workspace/.secret")
check(hostfile, hostkind, hostfile, hostfile)
check("/workspace/absent", None)
check(hostabsent, None)
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF

"$sbx" report "$scratch/log.jsonl" >"$scratch/report" 2>"$scratch/err" || fail "report"
grep -q "out of view: [1-9]" "$scratch/report" || fail "report: no count"
grep -q "^    /workspace/.secret (hidden)  (2×)" "$scratch/report" || fail "report: .secret"
grep -qF "$hostfile ($hostkind)" "$scratch/report" || fail "report: the host file"
grep -qE "absent \((hidden|outside|shadowed)\)" "$scratch/report" && fail "report: an absent name is listed"
"$sbx" report -q --html "$scratch/r.html" "$scratch/log.jsonl" || fail "report --html"
grep -q "<h2>Out of view</h2>" "$scratch/r.html" && grep -q "<tr class=oo>" "$scratch/r.html" ||
	fail "the page has no out-of-view rows"
echo "ok: out of view"
exit 0
