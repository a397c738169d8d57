#!/bin/bash
# SPDX-License-Identifier: MIT
# The scratch of a run that died with its keeper is swept, and nothing else is
# (emulation/path/scratch.c). A run whose supervisor and keeper are both killed (SIGKILL to
# their process group) leaves its skeleton and tmp directories; the next run that ends
# removes them, while a live run's, a kept tmp directory, a directory without the run's list
# and whatever a forged list names outside the naming pattern (or through a symlink) stay.
# Everything happens in a private $XDG_RUNTIME_DIR, the first place scratch goes.
# usage: scratch-sweep.sh SBXTRACE
set -u
sbx=$1
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); failed=1; echo "not ok $n - $*"; }
check() { if eval "$1"; then ok "$2"; else nok "$2"; fi; }

command -v setsid >/dev/null 2>&1 || { echo "1..0 # SKIP setsid (util-linux) is not installed"; exit 0; }
T=$(mktemp -d "${TMPDIR:-/tmp}/scratch-sweep.XXXXXX") || exit 1
chmod 700 "$T"
mkdir -m 700 "$T/xdg" "$T/ws"
export XDG_RUNTIME_DIR=$T/xdg
cleanup() {
	pkill -9 -f "sleep 3141" 2>/dev/null
	pkill -9 -f "sleep 2718" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

# the run directories (sbxtrace-XXXXXX holding the list) that are there now, one per line
runs() { for d in "$XDG_RUNTIME_DIR"/sbxtrace-??????; do [ -f "$d/scratch" ] && echo "$d"; done; }
# waits (bounded, 20 s) until the command succeeds
wait_for() { for _ in $(seq 200); do eval "$1" && return 0; sleep 0.1; done; return 1; }

echo "1..11"
# run A, to be killed with its keeper; run B, alive throughout
setsid "$sbx" run -q -w "$T/ws" standard -- sleep 3141 >/dev/null 2>&1 &
wait_for '[ "$(runs | wc -l)" -ge 1 ]' || { nok "run A made its scratch"; exit 1; }
a_run=$(runs)
a_tmps=$(cat "$a_run/scratch")
setsid "$sbx" run -q -w "$T/ws" standard -- sleep 2718 >/dev/null 2>&1 &
wait_for '[ "$(runs | wc -l)" -ge 2 ]' || { nok "run B made its scratch"; exit 1; }
b_run=$(runs | grep -vx "$a_run")
b_tmps=$(cat "$b_run/scratch")
check '[ -n "$a_tmps" ] && [ -n "$b_tmps" ]' "each run lists its tmp directories (standard has two tmp mounts)"

# decoys: no list; a kept-looking tmp directory nobody lists; a forged list
mkdir -m 700 "$XDG_RUNTIME_DIR/sbxtrace-nolist" "$XDG_RUNTIME_DIR/sbxtrace-tmp-kept01"
echo data >"$XDG_RUNTIME_DIR/sbxtrace-tmp-kept01/f"
mkdir -m 700 "$T/precious" "$XDG_RUNTIME_DIR/sbxtrace-forged"
echo data >"$T/precious/f"
ln -s "$T/precious" "$XDG_RUNTIME_DIR/sbxtrace-tmp-link01"
printf '%s\n' "$T/precious" "$XDG_RUNTIME_DIR/sbxtrace-tmp-link01" "/" "../../etc" \
	>"$XDG_RUNTIME_DIR/sbxtrace-forged/scratch"

# A's supervisor and keeper killed together: nothing removes its scratch
a_pid=$(pgrep -f "run -q -w $T/ws standard -- sleep 3141" | head -1)
kill -9 -- "-$(ps -o pgid= -p "$a_pid" | tr -d ' ')" 2>/dev/null
pkill -9 -f "sleep 3141"
sleep 0.5
check '[ -d "$a_run" ]' "a run killed with its keeper leaves its run directory"

# a run that ends sweeps (its keeper, after its own scratch)
"$sbx" run -q -w "$T/ws" standard -- true || nok "run C"
if wait_for '[ ! -e "$a_run" ]'; then ok "the dead run's directory is swept"; else nok "the dead run's directory is swept: $(ls -a "$XDG_RUNTIME_DIR")"; fi
gone=1
for t in $a_tmps; do [ -e "$t" ] && gone=0; done
check '[ $gone = 1 ]' "the dead run's tmp directories are swept"
check '[ -f "$b_run/scratch" ]' "a live run's directory stays"
live=1
for t in $b_tmps; do [ -d "$t" ] || live=0; done
check '[ $live = 1 ]' "a live run's tmp directories stay"
check '[ -d "$XDG_RUNTIME_DIR/sbxtrace-nolist" ]' "a directory without the list stays"
check '[ -f "$XDG_RUNTIME_DIR/sbxtrace-tmp-kept01/f" ]' "a tmp directory no list names stays (keep = true)"
check '[ ! -e "$XDG_RUNTIME_DIR/sbxtrace-forged" ]' "an unheld directory with a list is swept"
check '[ -f "$T/precious/f" ]' "a forged list's path outside the naming pattern is not removed"
check '[ -L "$XDG_RUNTIME_DIR/sbxtrace-tmp-link01" ] && [ -f "$T/precious/f" ]' \
	"a listed symlink is neither followed nor removed"

pkill -9 -f "sleep 2718"
exit $failed
