#!/bin/sh
# SPDX-License-Identifier: MIT
# One bad-policy case: `sbxtrace check` (or `run`, with "run" as the first argument) on
# FILE must fail with the status the contract names (check 1, run 125) and print
# "FILE:LINE:COLUMN: …" and the expected text. FILE's own header says what to expect:
#   # expect: TEXT      a substring of the error message
#   # at: LINE:COLUMN   where the error is (optional)
#   # args: none        run without -w (default: -w with a scratch workspace)
# usage: check-bad.sh [run] SBXTRACE FILE
set -u
mode=check
if [ "$1" = run ]; then
	mode=run
	shift
fi
sbx=$1 file=$2

expect=$(sed -n 's/^# expect: \{0,1\}//p' "$file" | head -n 1)
at=$(sed -n 's/^# at: //p' "$file" | head -n 1)
args=$(sed -n 's/^# args: //p' "$file" | head -n 1)

scratch=$(mktemp -d "${TMPDIR:-/tmp}/policy-bad.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/ws"
set -- -w "$scratch/ws"
[ "$args" = none ] && set --

if [ $mode = run ]; then
	"$sbx" run "$@" "$file" -- true >"$scratch/out" 2>"$scratch/err"
	status=$?
	want=125
	if grep -q "not built yet" "$scratch/err"; then
		echo "sbxtrace run is not built yet" >&2
		exit 77
	fi
else
	"$sbx" check "$@" "$file" >"$scratch/out" 2>"$scratch/err"
	status=$?
	want=1
fi

fail=0
if [ $status -ne $want ]; then
	echo "exit status $status, expected $want"
	fail=1
fi
if [ -n "$at" ] && ! grep -qF "$file:$at: " "$scratch/err"; then
	echo "no '$file:$at: ' in the error"
	fail=1
fi
if ! grep -qF -- "$expect" "$scratch/err"; then
	echo "no '$expect' in the error"
	fail=1
fi
if [ "$(wc -l <"$scratch/err")" -ne 1 ] && [ $mode = check ]; then
	echo "the error is not one line"
	fail=1
fi
if [ -s "$scratch/out" ]; then
	echo "something was printed on stdout"
	fail=1
fi
echo "--- stderr:"
cat "$scratch/err"
exit $fail
