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
pids=()
cleanup() {
	# each run's process group (supervisor, keeper) and its sandboxed sleep, by recorded pid
	for p in "${pids[@]}"; do kill -9 -- "-$p" 2>/dev/null; done
	for p in $(cat "$T"/ws/sleep.* 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

# the run directories (sbxtrace-XXXXXX holding the list) that are there now, one per line
runs() { for d in "$XDG_RUNTIME_DIR"/sbxtrace-??????; do [ -f "$d/scratch" ] && echo "$d"; done; }
# waits (bounded, 20 s) until the command succeeds
wait_for() { for _ in $(seq 200); do eval "$1" && return 0; sleep 0.1; done; return 1; }

echo "1..14"
# run A, to be killed with its keeper; run B, alive throughout. Each is a session leader
# (setsid), so its pid is its process group's; the sandboxed shell writes its own pid into
# the workspace (the same path inside: -w makes it /workspace) and becomes the sleep.
setsid "$sbx" run -q -w "$T/ws" standard -- sh -c 'echo $$ > /workspace/sleep.a; exec sleep 3141' \
	>/dev/null 2>&1 &
pids+=($!)
a_pid=$!
wait_for '[ "$(runs | wc -l)" -ge 1 ]' || { nok "run A made its scratch"; exit 1; }
a_run=$(runs)
a_tmps=$(cat "$a_run/scratch")
setsid "$sbx" run -q -w "$T/ws" standard -- sh -c 'echo $$ > /workspace/sleep.b; exec sleep 2718' \
	>/dev/null 2>&1 &
pids+=($!)
wait_for '[ "$(runs | wc -l)" -ge 2 ]' || { nok "run B made its scratch"; exit 1; }
b_run=$(runs | grep -vx "$a_run")
b_tmps=$(cat "$b_run/scratch")
check '[ -n "$a_tmps" ] && [ -n "$b_tmps" ]' "each run lists its tmp directories (standard has two tmp mounts)"

# decoys: no list; a kept-looking tmp directory nobody lists; a forged list naming a path
# outside the pattern, a symlink, and real sbxtrace-tmp-* directories outside the bases,
# reached through a symlinked parent and through ".."; a run directory whose list is a FIFO
mkdir -m 700 "$XDG_RUNTIME_DIR/sbxtrace-nolist" "$XDG_RUNTIME_DIR/sbxtrace-tmp-kept01"
echo data >"$XDG_RUNTIME_DIR/sbxtrace-tmp-kept01/f"
mkdir -m 700 "$T/precious" "$XDG_RUNTIME_DIR/sbxtrace-forged" "$T/elsewhere"
mkdir -m 700 "$T/elsewhere/sbxtrace-tmp-viasym" "$T/elsewhere/sbxtrace-tmp-viadot"
echo data >"$T/precious/f"
echo data >"$T/elsewhere/sbxtrace-tmp-viasym/f"
echo data >"$T/elsewhere/sbxtrace-tmp-viadot/f"
ln -s "$T/precious" "$XDG_RUNTIME_DIR/sbxtrace-tmp-link01"
ln -s "$T/elsewhere" "$XDG_RUNTIME_DIR/lnk"
printf '%s\n' "$T/precious" "$XDG_RUNTIME_DIR/sbxtrace-tmp-link01" "/" "../../etc" \
	"$XDG_RUNTIME_DIR/lnk/sbxtrace-tmp-viasym" "$XDG_RUNTIME_DIR/../elsewhere/sbxtrace-tmp-viadot" \
	"$T/elsewhere/sbxtrace-tmp-viadot" \
	>"$XDG_RUNTIME_DIR/sbxtrace-forged/scratch"
mkdir -m 700 "$XDG_RUNTIME_DIR/sbxtrace-fifo01"
mkfifo "$XDG_RUNTIME_DIR/sbxtrace-fifo01/scratch"

# A's supervisor and keeper killed together: nothing removes its scratch
wait_for '[ -s "$T/ws/sleep.a" ]' || nok "run A's command started"
kill -9 -- "-$a_pid" 2>/dev/null
kill -9 "$(cat "$T/ws/sleep.a")" 2>/dev/null
wait "$a_pid" 2>/dev/null
check '[ -d "$a_run" ]' "a run killed with its keeper leaves its run directory"
# `wait` saw the supervisor die, not the keeper: a SIGKILLed process holds its descriptors
# until it has run its exit, which on a loaded machine came after run C's sweep (a CI run as
# sbxtest: A's directory was still locked then, and the sweep rightly skipped it). The
# sweep is for runs that are gone; so run C starts once nothing holds A's lock (flock(1) of
# the directory, released again at once), as it would be for a run that died long ago.
if command -v flock >/dev/null 2>&1; then
	wait_for 'flock -n -x "$a_run" true' || nok "run A's processes ended"
fi

# a run that ends sweeps (its keeper, after its own scratch); bounded: a FIFO as a list
# must not hang the sweep (the keeper would outlive the run)
timeout 60 "$sbx" run -q -w "$T/ws" standard -- true || nok "run C"
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
check '[ -f "$T/elsewhere/sbxtrace-tmp-viasym/f" ]' \
	"a listed directory reached through a symlinked parent is not removed"
check '[ -f "$T/elsewhere/sbxtrace-tmp-viadot/f" ]' \
	"a listed directory outside the bases (by '..' or directly) is not removed"
# the keeper of run C is done once the FIFO directory is gone or it has exited; either way
# it must not be blocked on the FIFO
if wait_for '! pgrep -f "run -q -w $T/ws standard -- true" >/dev/null'; then
	ok "the sweep does not hang on a FIFO as the list"
else
	nok "the sweep does not hang on a FIFO as the list (a keeper of run C is still there)"
fi
exit $failed
