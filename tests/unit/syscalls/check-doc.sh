#!/bin/sh
# check-doc.sh SBXTRACE DOC: DOC (docs/syscalls.md) is what `sbxtrace check --syscalls` prints
# from the syscall table, so the page cannot go stale (syscalls/doc.c writes it).
set -eu
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$1" check --syscalls >"$out"
if ! cmp -s "$out" "$2"; then
	diff -u "$2" "$out" | head -60
	echo "$2 is stale: regenerate it with 'build/cli/sbxtrace check --syscalls > docs/syscalls.md'"
	exit 1
fi
echo "$2: up to date"
