#!/bin/bash
# SPDX-License-Identifier: MIT
# Issue 21, item 4: the Debian package. Builds it from a copy of the source tree with
# `dpkg-buildpackage -us -uc -b` (DEB_BUILD_OPTIONS=nocheck: the tests are not built), unpacks
# it into a scratch root with `dpkg -x`, and checks that
#   - every file FILES in sbxtrace(1) names is there (_DATADIR_ = /usr/share; an entry that
#     says where "the Debian package" puts it is looked for there), with the man pages;
#   - the binary runs, loads each preset from the package, and does not look for presets in
#     the directory it was built in (-Dsource_presets=false);
#   - the runtime dependencies are declared (libc, libjansson from ${shlibs:Depends}), and
#     libseccomp is not one: the binary takes syscall names from tables made at build time;
#   - lintian, when installed, reports no error (its warnings are printed).
# Skips (77) without dpkg-buildpackage, debhelper or the build dependencies.
# usage: deb.sh SOURCE_ROOT
set -u
src=$1
skip() {
	echo "SKIP: $*"
	exit 77
}
fail() {
	echo "not ok: $*"
	failed=1
}
failed=0

command -v dpkg-buildpackage >/dev/null 2>&1 || skip "dpkg-buildpackage is not installed (dpkg-dev)"
command -v dh >/dev/null 2>&1 || skip "debhelper is not installed (apt-get install debhelper)"
(cd "$src" && dpkg-checkbuilddeps) >/dev/null 2>"${TMPDIR:-/tmp}/deb-checkbuilddeps.$$" || {
	why=$(cat "${TMPDIR:-/tmp}/deb-checkbuilddeps.$$")
	rm -f "${TMPDIR:-/tmp}/deb-checkbuilddeps.$$"
	skip "build dependencies missing: $why"
}
rm -f "${TMPDIR:-/tmp}/deb-checkbuilddeps.$$"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/sbxtrace-deb.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/src" "$scratch/root"

# the tracked and new files, without build directories
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$src" && git ls-files -z --cached --others --exclude-standard | xargs -0 tar cf - ) |
		tar xf - -C "$scratch/src" || exit 1
else
	tar cf - -C "$src" --exclude='./build*' --exclude='./obj-*' --exclude=node_modules . |
		tar xf - -C "$scratch/src" || exit 1
fi
rm -rf "$scratch/src/build" "$scratch/src/debian/sbxtrace" "$scratch/src/obj-"*

echo "# dpkg-buildpackage -us -uc -b in $scratch/src"
start=$(date +%s)
(cd "$scratch/src" && DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc -b) \
	>"$scratch/build.log" 2>&1 || {
	tail -40 "$scratch/build.log"
	echo "not ok: dpkg-buildpackage failed"
	exit 1
}
echo "# built in $(($(date +%s) - start)) s"
deb=$(ls "$scratch"/sbxtrace_*_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || { echo "not ok: no .deb"; ls "$scratch"; exit 1; }
dpkg -x "$deb" "$scratch/root" || { echo "not ok: dpkg -x"; exit 1; }
root=$scratch/root

# FILES of sbxtrace(1): '_DATADIR_*/path*' entries, each replaced by the Debian package's
# place when its text names one
files=$(awk '
/^# FILES/ { on = 1; next }
/^# / { on = 0 }
on && /^_DATADIR_\*/ { if (path != "") print path; path = $1 }
on && /in the Debian package: _DATADIR_\*/ {
	sub(/.*in the Debian package: /, ""); sub(/[).].*/, ""); path = $0
}
END { if (path != "") print path }
' "$src/man/sbxtrace.1.scd" | sed -e 's|^_DATADIR_\*|/usr/share|' -e 's|[*\\]||g' -e 's|\.toml$|/*.toml|' -e 's|//|/|g')
[ "$(echo "$files" | wc -l)" -ge 3 ] || fail "FILES of sbxtrace(1) names fewer than 3 files: $files"
while read -r f; do
	# policies/*.toml: the presets, one file per preset of the source tree
	case $f in
	*/\*.toml)
		for p in "$src"/policies/*.toml; do
			[ -f "$root${f%/\*.toml}/$(basename "$p")" ] || fail "preset $(basename "$p") not at ${f%/\*.toml}"
		done
		;;
	*) [ -f "$root$f" ] || fail "$f (FILES in sbxtrace(1)) is not in the package" ;;
	esac
	echo "# FILES: $f"
done <<<"$files"
for f in /usr/bin/sbxtrace /usr/share/man/man1/sbxtrace.1.gz \
	/usr/share/man/man5/sbxtrace-policy.5.gz /usr/share/doc/sbxtrace/copyright; do
	[ -f "$root$f" ] || fail "$f is not in the package"
done

# the binary from the package, with the package's presets
bin=$root/usr/bin/sbxtrace
"$bin" --version >"$scratch/out" 2>&1 || fail "sbxtrace --version: $(cat "$scratch/out")"
for p in "$root"/usr/share/sbxtrace/policies/*.toml; do
	SBXTRACE_PRESET_DIR=$root/usr/share/sbxtrace/policies \
		"$bin" check -q -w "$scratch" "$(basename "$p" .toml)" >"$scratch/out" 2>&1 ||
		fail "the packaged binary cannot load $(basename "$p"): $(cat "$scratch/out")"
done
grep -qaF "$scratch/src" "$bin" && fail "the binary names its build directory (source presets?)"

# runtime dependencies
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libc6 libjansson4; do
	grep -q "$lib" <<<"$depends" || fail "Depends lacks $lib: $depends"
done
readelf -d "$bin" | grep -q 'NEEDED.*libseccomp' && fail "the packaged binary links libseccomp"
grep -q libseccomp <<<"$depends" && fail "Depends names libseccomp: $depends"
echo "# Depends: $depends"
echo "# Recommends: $(dpkg-deb -f "$deb" Recommends)"

if command -v lintian >/dev/null 2>&1; then
	lintian "$scratch"/sbxtrace_*.changes >"$scratch/lintian" 2>&1
	grep -v '^running with root' "$scratch/lintian" | sed 's/^/# lintian: /'
	grep -q '^E: ' "$scratch/lintian" && fail "lintian reports errors"
else
	echo "# lintian not installed: not run"
fi

[ $failed -eq 0 ] && echo "ok: package"
exit $failed
