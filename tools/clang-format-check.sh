#!/bin/sh
# Lists files whose formatting differs from .clang-format (exit 1 if any).
cf="$1"
cd "${MESON_SOURCE_ROOT:-.}" || exit 2
bad=0
for f in $(git ls-files '*.c' '*.h'); do
	if ! "$cf" --dry-run --Werror "$f" >/dev/null 2>&1; then
		echo "needs clang-format: $f"
		bad=1
	fi
done
exit $bad
