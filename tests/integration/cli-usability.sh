#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 21, item 5, from the command line; one case per invocation (meson registers each).
#   report-html  `report --html FILE LOG` says where the page went and prints no text summary
#   report-diff  `report --diff A B` lists what one run did that the other did not (issue 25)
#   help-examples  every subcommand's --help gives two or three examples
# usage: cli-usability.sh SBXTRACE SAMPLE_LOG CASE
set -u
sbx=$1 log=$2 case=$3
scratch=$(mktemp -d "${TMPDIR:-/tmp}/cli-usability.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
fail() {
	echo "$*"
	echo "--- stdout:"
	cat "$scratch/out" 2>/dev/null
	echo "--- stderr:"
	cat "$scratch/err" 2>/dev/null
	exit 1
}

case $case in
report-html)
	"$sbx" report --html "$scratch/r.html" "$log" >"$scratch/out" 2>"$scratch/err"
	# 1: the sample has two bad lines, skipped
	[ $? -eq 1 ] || fail "exit status is not 1"
	[ -s "$scratch/r.html" ] || fail "no page"
	[ "$(wc -l <"$scratch/out")" -eq 1 ] || fail "more than one line on stdout"
	grep -qxF "HTML report written to $scratch/r.html" "$scratch/out" ||
		fail "stdout does not say where the page went"
	# without --html the summary is there, and -q silences the line
	"$sbx" report "$log" >"$scratch/out" 2>"$scratch/err"
	[ "$(wc -l <"$scratch/out")" -gt 5 ] || fail "no text summary without --html"
	"$sbx" report -q --html "$scratch/r.html" "$log" >"$scratch/out" 2>"$scratch/err"
	[ ! -s "$scratch/out" ] || fail "-q printed something"
	;;
report-diff)
	# issue 25: report --diff A B, with task directories or logs; exit 1 when they differ
	corpus=$(dirname "$log")/corpus
	"$sbx" report --diff "$corpus/t1" "$corpus/t2/audit.jsonl" >"$scratch/out" 2>"$scratch/err"
	[ $? -eq 1 ] || fail "different runs: exit status is not 1"
	grep -qx "  + 1.2.3.4:443  (2×)  \[denied\]" "$scratch/out" || fail "no destination in the diff"
	grep -qx "  - /root/.ssh/id_rsa (outside)" "$scratch/out" || fail "no out-of-view line"
	"$sbx" report --diff "$corpus/t1" "$corpus/t1" >"$scratch/out" 2>"$scratch/err" ||
		fail "the same run: exit status is not 0"
	"$sbx" report -q --diff "$corpus/t3" "$corpus/t4" >"$scratch/out" 2>"$scratch/err"
	[ $? -eq 1 ] && [ ! -s "$scratch/out" ] || fail "-q: output, or not exit 1"
	"$sbx" report --diff "$corpus/t1" "$corpus/nope" >"$scratch/out" 2>"$scratch/err"
	[ $? -eq 125 ] || fail "a missing run is not exit 125"
	"$sbx" report --diff "$corpus/t1" >"$scratch/out" 2>"$scratch/err"
	[ $? -eq 125 ] || fail "one run is not exit 125"
	;;
help-examples)
	for c in run check learn report doctor batch; do
		"$sbx" $c --help >"$scratch/out" 2>"$scratch/err" || fail "$c --help failed"
		n=$(sed -n '/^Examples:$/,/^$/p' "$scratch/out" | grep -c "^  sbxtrace ")
		[ "$n" -ge 2 ] && [ "$n" -le 3 ] || fail "$c --help has $n examples"
	done
	;;
*)
	fail "unknown case $case"
	;;
esac
exit 0
