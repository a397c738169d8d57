#!/bin/sh
# Reports the temporary directories a test run left behind.
#   tests/tmp-leaks.sh meson test -C build --num-processes 2 --suite integration
#   tests/tmp-leaks.sh --snapshot FILE     (before a run: what is there now)
#   tests/tmp-leaks.sh --compare FILE      (after it: what is new since FILE)
# Lists the entries of /tmp (and of $TMPDIR when it is another directory) whose names start
# with a prefix our tests use (the list below) before and after the run, and prints the new
# ones with what they hold. Exit: 1 when something was left, else 0 (the command's exit code
# in the first form). TMP_LEAKS_IGNORE, an extended regex: names not to report (the caller's
# own temp directory, still there when it compares).
#
# Why around a run and not a meson test: meson runs tests in parallel, so a test cannot tell
# the entries of tests still running from leaked ones; around a whole run it can. Other
# processes that run our tests at the same time (a second build tree, another checkout) make
# entries too: run it on a quiet machine, or confirm an entry by running that one test alone.
# tests/run-all.sh runs it around its whole run and counts a leak as a failure.
#
# Keep the prefixes in step with the tests: every mkdtemp/mktemp/tempfile/mkdtempSync template
# under tests/ (grep -rn 'XXXXXX\|mkdtemp\|prefix=' tests) should match one.
set -u

prefixes='^(sbx|audit-sink-|budget-unit-|filter-golden-|test-(policy|approval|unwind)|'
prefixes="${prefixes}mcp-conf|mcp\\.|cli-usability\\.|completion\\.|policy-(bad|cli|docs)\\.|"
prefixes="${prefixes}scratch-sweep\\.|seize-refused\\.|test-batch\\.|test-oov\\.|wall-clock-load\\.|"
prefixes="${prefixes}kview-verdict\\.|net-calls-verdict\\.)"
# The product's own scratch (a run's tmp mounts, kept ones, a skeleton's run directory) is
# not the tests': a keeper removes it just after its run's supervisor exits, so the last
# runs' may still be there, and what a run killed with its keeper leaves is swept by a later
# run (emulation/path/scratch.c, tested by tests/integration/scratch-sweep.sh).
product='^sbxtrace-(tmp|keep)-[A-Za-z0-9]{6}$|^sbxtrace-[A-Za-z0-9]{6}$'
ignore=${TMP_LEAKS_IGNORE:+$TMP_LEAKS_IGNORE|}$product

dirs=/tmp
t=${TMPDIR:-}
if [ -n "$t" ] && [ -d "$t" ] && [ "$(cd "$t" && pwd -P)" != /tmp ]; then
	dirs="$dirs $t"
fi

snapshot() {
	for d in $dirs; do
		find "$d" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | grep -E "$prefixes" |
			grep -vE "$ignore" | sed "s|^|$d/|"
	done | sort
}

# what is listed now and not in $1; 1 when there is something
compare() {
	new=$(snapshot | comm -13 "$1" -)
	if [ -z "$new" ]; then
		echo "tmp-leaks: no test left a temporary directory in $dirs" >&2
		return 0
	fi
	echo "tmp-leaks: $(printf '%s\n' "$new" | wc -l) new entries in $dirs:" >&2
	printf '%s\n' "$new" | while read -r e; do
		echo "  $e: $(find "$e" -mindepth 1 -maxdepth 1 -printf '%f ' 2>/dev/null | head -c 200)" >&2
	done
	return 1
}

case ${1:-} in
"")
	sed -n '2,10p' "$0" >&2
	exit 2
	;;
--snapshot)
	snapshot >"$2"
	exit
	;;
--compare)
	compare "$2"
	exit
	;;
esac

before=$(mktemp "${TMPDIR:-/tmp}/tmp-leaks-before.XXXXXX") || exit 2
trap 'rm -f "$before"' EXIT
snapshot >"$before"
"$@"
rc=$?
compare "$before" || exit 1
exit "$rc"
