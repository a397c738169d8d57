#!/bin/sh
# Lists files whose formatting differs from .clang-format (exit 1 if any).
#   clang-format-check.sh CLANG_FORMAT
#       every tracked .c and .h file (ninja -C build clang-format-check)
#   clang-format-check.sh CLANG_FORMAT --except LIST
#       the same, but for the files LIST names, which did not pass when the check became a
#       test (the lint suite); one of them that passes now fails too, so that the list only
#       shrinks. Exit 77 (skip) without clang-format 14, the version .clang-format is
#       written for and the list was made with (another version formats a little
#       differently), or outside a git checkout.
cf="$1"
except=""
[ "$2" = "--except" ] && except="$3"
cd "${MESON_SOURCE_ROOT:-.}" || exit 2

if [ -n "$except" ]; then
	if ! command -v "$cf" >/dev/null 2>&1; then
		echo "skip: clang-format is not installed (Debian: apt-get install clang-format)"
		exit 77
	fi
	version=$("$cf" --version 2>/dev/null | sed -n 's/.*clang-format version \([0-9]*\).*/\1/p')
	if [ "$version" != 14 ]; then
		echo "skip: $cf is version ${version:-unknown}; the check is made with clang-format 14"
		exit 77
	fi
	if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		echo "skip: not a git checkout (the files to check are the tracked ones)"
		exit 77
	fi
fi

listed() {
	[ -n "$except" ] && grep -qxF "$1" "$except"
}

bad=0
for f in $(git ls-files '*.c' '*.h'); do
	if "$cf" --dry-run --Werror "$f" >/dev/null 2>&1; then
		if listed "$f"; then
			echo "formatted now: $f: remove it from $except"
			bad=1
		fi
	elif ! listed "$f"; then
		echo "needs clang-format: $f"
		bad=1
	fi
done
if [ -n "$except" ]; then
	grep -v '^#' "$except" | grep -v '^$' | while read -r f; do
		[ -e "$f" ] || echo "gone: $f is listed in $except but does not exist (ignored)"
	done
fi
exit $bad
