#!/bin/sh
# SPDX-License-Identifier: MIT
# Every ```toml example in docs/policy.md passes `sbxtrace check` (on top of the standard
# preset unless the example has its own extends), so the reference cannot drift from the code.
# usage: docs-examples.sh SBXTRACE DOCS/policy.md
set -u
sbx=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") doc=$2
scratch=$(mktemp -d "${TMPDIR:-/tmp}/policy-docs.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/ws"

awk -v dir="$scratch" '
	/^```toml$/ { n++; f = sprintf("%s/example-%02d.toml", dir, n); inside = 1; next }
	/^```$/ { inside = 0; next }
	inside { print > f }
' "$doc"

count=0 fail=0
for f in "$scratch"/example-*.toml; do
	[ -e "$f" ] || break
	count=$((count + 1))
	if ! grep -q '^extends' "$f"; then
		{ echo 'extends = "standard"'; cat "$f"; } >"$f.tmp" && mv "$f.tmp" "$f"
	fi
	if ! (cd "$scratch" && "$sbx" check -q -w "$scratch/ws" "$f") 2>"$scratch/err"; then
		echo "example $count of $doc does not pass check:"
		cat "$f"
		cat "$scratch/err"
		fail=1
	fi
done
echo "$count examples checked"
[ $count -ge 10 ] || { echo "too few examples found"; exit 1; }
exit $fail
