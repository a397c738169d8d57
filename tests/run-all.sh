#!/usr/bin/env bash
# The whole test suite: every meson suite as the current user and, when run as root, the
# integration and security suites again as an unprivileged user (created if needed), since
# rootless use is the point of the project. Needs ./setup.sh (or an equivalent build) first.
#   ./tests/run-all.sh            everything
#   ./tests/run-all.sh --quick    without the slow suite
set -uo pipefail
cd "$(dirname "$0")/.."
top=$PWD
quick=
[ "${1:-}" = "--quick" ] && quick=1

[ -f build/build.ninja ] || { echo "run-all: no build/ here; run ./setup.sh first" >&2; exit 2; }
ninja -C build -j"$(nproc)" || exit 1

# The MCP suite's real clients (the official SDK, the conformance suite, a pinned Node 22)
# come from npm; without npm or its registry the suite skips with the reason.
tests/mcp/install.sh

# What the tests leave in /tmp and $TMPDIR (tests/tmp-leaks.sh): listed now, compared after the
# last step; a temporary directory left behind counts as a failure.
leaks_before=$(mktemp "${TMPDIR:-/tmp}/run-all-leaks.XXXXXX") || exit 1
trap 'rm -f "$leaks_before"' EXIT
tests/tmp-leaks.sh --snapshot "$leaks_before"

results=()
run_suites() { # label, builddir, then meson test args
	local label=$1 dir=$2
	shift 2
	echo "=== $label: meson test $*"
	meson test -C "$dir" --print-errorlogs --num-processes 2 "$@"
	results+=("$label:$dir/meson-logs/testlog.json")
}

if [ -n "$quick" ]; then
	run_suites "as $(id -un)" build --no-suite slow
else
	run_suites "as $(id -un)" build
fi

# The unit and fuzz suites again in a build with AddressSanitizer and UBSan (build-asan, kept
# between runs so that ninja only rebuilds what changed; about a minute from scratch on two
# cores). Any sanitizer report fails the test that made it. Skipped, saying so, only where
# the compiler cannot link a sanitized program (no libasan/libubsan).
run_sanitized() {
	local cc=${CC:-cc} probe log
	probe=$(mktemp -d /tmp/sbxtrace-sanprobe.XXXXXX)
	printf 'int main(void) { return 0; }\n' >"$probe/p.c"
	if ! "$cc" -fsanitize=address,undefined -o "$probe/p" "$probe/p.c" >"$probe/log" 2>&1; then
		echo "=== sanitized (build-asan): SKIPPED: $cc cannot link -fsanitize=address,undefined" \
			"(the ASan and UBSan runtimes, libasan and libubsan, are missing): $(head -c 300 "$probe/log")"
		rm -rf "$probe"
		results+=("sanitized: skipped, no ASan/UBSan runtime for $cc:-")
		return
	fi
	rm -rf "$probe"
	# a stale log of an earlier run must not count as this run's
	rm -f build-asan/meson-logs/testlog.json
	# b_lundef=false: with clang a shared library's sanitizer symbols come from the runtime
	# linked into the executable, so --no-undefined fails; harmless with gcc
	log=$(mktemp /tmp/sbxtrace-asan-build.XXXXXX)
	echo "=== sanitized: building build-asan (-Db_sanitize=address,undefined)"
	if [ -f build-asan/build.ninja ]; then
		meson configure build-asan -Db_sanitize=address,undefined -Db_lundef=false
	else
		meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false
	fi >"$log" 2>&1 && ninja -C build-asan -j"$(nproc)" >>"$log" 2>&1 || {
		tail -n 40 "$log"
		echo "run-all: the sanitized build (build-asan) failed"
		rm -f "$log"
		results+=("sanitized:build-asan/meson-logs/testlog.json")
		return
	}
	rm -f "$log"
	# detect_leaks: LeakSanitizer at exit (tests/lsan.supp: known leaks, each explained);
	# halt_on_error: a UBSan report is a failure, not a line in the log
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	LSAN_OPTIONS=suppressions=$top/tests/lsan.supp:print_suppressions=0 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		run_suites "sanitized" build-asan --suite unit --suite fuzz
}
run_sanitized

SUDO_USER_RUN=
if [ "$(id -u)" -eq 0 ]; then
	user=${SBX_TEST_USER:-sbxtest}
	id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
	SUDO_USER_RUN="runuser -u $user --"
	udir=$(mktemp -d /tmp/sbxtrace-usertest.XXXXXX)
	trap 'rm -rf "$udir" "$leaks_before"' EXIT
	chmod 755 "$udir"
	# A copy owned by the user, with shared/ beside it as in the repository layout.
	git ls-files -z --cached --others --exclude-standard | (cd "$top" && xargs -0 tar cf - ) | (mkdir -p "$udir/main" && cd "$udir/main" && tar xf -)
	[ -d "$top/../shared" ] && cp -r "$top/../shared" "$udir/shared"
	[ -d "$top/tests/mcp/node_modules" ] && cp -a "$top/tests/mcp/node_modules" "$udir/main/tests/mcp/"
	chown -R "$user:" "$udir"
	echo "=== building a copy as $user in $udir"
	$SUDO_USER_RUN env HOME="/home/$user" bash -c "cd '$udir/main' && meson setup build >/dev/null && ninja -C build -j$(nproc) >/dev/null" || { echo "run-all: build as $user failed"; exit 1; }
	echo "=== as $user: meson test --suite integration --suite security --suite mcp"
	$SUDO_USER_RUN env HOME="/home/$user" TMPDIR=/tmp meson test -C "$udir/main/build" \
		--print-errorlogs --num-processes 2 --suite integration --suite security --suite mcp
	results+=("as $user:$udir/main/build/meson-logs/testlog.json")
fi

# the user's copy is still there (its test logs are read below); it goes at exit
if TMP_LEAKS_IGNORE='^sbxtrace-usertest\.' tests/tmp-leaks.sh --compare "$leaks_before"; then
	results+=("tmp-leaks: no test left a temporary directory:-")
else
	results+=("tmp-leaks: FAILED, tests left the temporary directories listed above:!")
fi

python3 - "${results[@]}" <<'PY'
import json, sys
tp = tf = ts = 0
for arg in sys.argv[1:]:
    label, path = arg.rsplit(":", 1)
    if path == "-":  # a step that did not run, and its reason
        print(label)
        continue
    if path == "!":  # a check of the run as a whole that failed, and what it found
        print(label)
        tf += 1
        continue
    p = f = s = 0
    failed = []
    try:
        for line in open(path):
            t = json.loads(line)
            r = t.get("result")
            if r in ("OK", "EXPECTEDFAIL"): p += 1
            elif r == "SKIP": s += 1
            else:
                f += 1
                failed.append(t)
    except OSError:
        f += 1
        print(f"{label}: no test log at {path}")
    # A CI log is often read from its end only: each failure is named here, with the end
    # of what it printed, so the reason is never only in the middle of the log.
    for t in failed:
        print(f"--- {label}: FAILED {t.get('name')} ({t.get('result')}, "
              f"{t.get('duration', 0):.1f} s, exit {t.get('returncode')})")
        out = (t.get("stdout") or "") + (t.get("stderr") or "")
        for l in out.splitlines()[-25:]:
            print(f"    {l}")
    print(f"{label}: {p} passed, {f} failed, {s} skipped")
    tp += p; tf += f; ts += s
print(f"{tp} passed, {tf} failed, {ts} skipped")
sys.exit(1 if tf else 0)
PY
