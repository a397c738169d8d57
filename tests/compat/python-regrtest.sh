#!/bin/sh
# Run CPython's own regression tests for the OS interface natively and inside the `python`
# preset, and print per test module the pass/fail/skip counts of both runs, then the tests
# that fail only inside. Slow (minutes): not a meson test. See docs/compatibility.md.
#
# Usage: tests/compat/python-regrtest.sh [-b BUILDDIR] [-t SECONDS] [MODULE…]
# Needs Debian's test suite of Python: apt-get install -y libpython3.11-testsuite
# Results (JUnit XML and logs) are kept in $OUT (default: a new temporary directory).
set -u

build=build
tmo=900
while getopts b:t: opt; do
	case $opt in
	b) build=$OPTARG ;;
	t) tmo=$OPTARG ;;
	*) echo "usage: $0 [-b BUILDDIR] [-t SECONDS] [MODULE…]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- test_os test_shutil test_pathlib test_tempfile test_glob test_stat test_fileio

py=/usr/bin/python3
sbx=$build/cli/sbxtrace
if ! [ -x "$py" ]; then
	echo "skip: $py is missing" >&2
	exit 77
fi
if ! $py -c 'import test.libregrtest' 2>/dev/null || ! [ -e /usr/lib/python3.11/test/test_os.py ]; then
	echo "skip: the test suite of Python is missing; install it with:" >&2
	echo "  apt-get install -y libpython3.11-testsuite" >&2
	exit 77
fi
if ! [ -x "$sbx" ]; then
	echo "skip: $sbx is missing (build first: meson setup $build && ninja -C $build)" >&2
	exit 77
fi

OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/pyregr.XXXXXX")}
mkdir -p "$OUT"
rm -f "$OUT/inside-only.txt"
echo "results in $OUT" >&2

# Count testcases of a JUnit XML file: "pass fail skip" (fail includes errors).
count() {
	$py - "$1" <<'PYEOF'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    print("- - -"); sys.exit()
p = f = s = 0
for tc in root.iter("testcase"):
    kinds = {c.tag for c in tc}
    if kinds & {"failure", "error"}: f += 1
    elif "skipped" in kinds: s += 1
    else: p += 1
print(p, f, s)
PYEOF
}

# Names of the failed (or errored) testcases of a JUnit XML file, one a line.
failed() {
	$py - "$1" <<'PYEOF'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    sys.exit()
for tc in root.iter("testcase"):
    if any(c.tag in ("failure", "error") for c in tc):
        print(tc.get("name"))
PYEOF
}

printf '%-14s %22s   %22s\n' module "native pass/fail/skip" "inside pass/fail/skip"
for m in "$@"; do
	ws=$(mktemp -d "${TMPDIR:-/tmp}/pyregr-ws.XXXXXX")
	# Native: run in its own scratch directory like the sandboxed run.
	(cd "$ws" && TMPDIR=$ws timeout "$tmo" $py -m test -v --junit-xml "$OUT/$m.native.xml" "$m") \
		>"$OUT/$m.native.log" 2>&1
	echo "native exit $?" >>"$OUT/$m.native.log"
	rm -rf "$ws"

	ws=$(mktemp -d "${TMPDIR:-/tmp}/pyregr-ws.XXXXXX")
	timeout "$tmo" "$sbx" run -w "$ws" -s limits.wall_time="${tmo}s" -s limits.cpu_time="${tmo}s" \
		python -- $py -m test -v --junit-xml "/workspace/$m.xml" "$m" \
		>"$OUT/$m.inside.log" 2>&1
	echo "inside exit $?" >>"$OUT/$m.inside.log"
	cp "$ws/$m.xml" "$OUT/$m.inside.xml" 2>/dev/null
	rm -rf "$ws"

	n=$(count "$OUT/$m.native.xml")
	i=$(count "$OUT/$m.inside.xml")
	printf '%-14s %22s   %22s\n' "$m" "$(echo "$n" | tr ' ' /)" "$(echo "$i" | tr ' ' /)"
	failed "$OUT/$m.native.xml" | sort >"$OUT/$m.native.fail"
	failed "$OUT/$m.inside.xml" | sort >"$OUT/$m.inside.fail"
	comm -13 "$OUT/$m.native.fail" "$OUT/$m.inside.fail" | sed "s/^/  inside only: $m: /" \
		>>"$OUT/inside-only.txt"
done
echo
if [ -s "$OUT/inside-only.txt" ]; then
	echo "tests that fail only inside:"
	cat "$OUT/inside-only.txt"
else
	echo "no test fails only inside"
fi
