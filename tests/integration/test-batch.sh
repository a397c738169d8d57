#!/bin/bash
# SPDX-License-Identifier: MIT
# Issue 25, item 1: sbxtrace batch. One case per invocation (meson registers each):
#   results      tasks of every kind run, each in a fresh workspace with its own log; bad
#                lines are reported with their line number and skipped (exit 1); the rows
#                (CSV and JSONL) say what each task did; task fields become columns; the
#                OUTDIR is a corpus for report --corpus
#   resume       a second batch skips the finished tasks and rebuilds the same table
#   interrupt    SIGINT stops the batch (130) and the runs; the tasks it stopped have no
#                row and run on the next batch, the finished ones do not run again
#   progress     a progress line on standard error when it is a terminal, none otherwise
#   crash        a run whose sbxtrace is killed is a "crashed" row; the others are whole
# usage: test-batch.sh SBXTRACE CASE
set -u
sbx=$(realpath "$1") case=$2
scratch=$(mktemp -d "${TMPDIR:-/tmp}/test-batch.XXXXXX") || exit 1
trap 'chmod -R u+rwX "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT
cd "$scratch" || exit 1
fail() {
	echo "not ok: $*"
	echo "--- stderr:"
	cat "$scratch/err" 2>/dev/null
	[ -f out/results.csv ] && { echo "--- results.csv:"; cat out/results.csv; }
	exit 1
}
# the value of column $2 in the row of task $1 of out/results.csv (no quoted commas)
col() {
	awk -F, -v id="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) n[$i] = i; next }
		$1 == id { print $n[c] }' out/results.csv
}
field() { # task, key: the row's JSON value, compact
	python3 -c 'import json,sys
for l in open("out/results.jsonl"):
    r = json.loads(l)
    if r["id"] == sys.argv[1]: print(json.dumps(r.get(sys.argv[2]), sort_keys=True))' "$1" "$2"
}

mkdir -p proj && echo "from the workspace" >proj/input.txt

case $case in
results)
	cat >tasks.jsonl <<'EOF'
{"id": "argv", "command": ["sh", "-c", "cat input.txt; echo x > made.txt"], "workspace": "proj", "model": "m1"}
{"id": "py", "code": "open('/workspace/p.txt', 'w').write('p')\nprint(len(open('/workspace/p.txt').read()))\n", "language": "python", "model": "m2"}
this is not JSON
{"id": "no command"}
{"id": "nocmd"}
{"id": "shell", "command": "ls /workspace > ls.txt; sysinfo 2>/dev/null; exit 3", "model": "m1", "set": {"limits.wall_time": "20s"}}
{"id": "argv", "command": "true"}
{"id": "typo", "command": "true", "set": {"limits.wal_time": "1s"}}
{"id": "js", "code": "1", "language": "cobol"}
{"id": "ws", "command": "true", "workspace": "does-not-exist"}
EOF
	"$sbx" batch -q tasks.jsonl -o out standard -j 2 2>err
	rc=$?
	[ $rc -eq 1 ] || fail "exit status $rc, not 1 (bad lines)"
	for l in 3 4 5 7 8 9 10; do
		grep -q "tasks.jsonl:$l: " err || fail "line $l is not reported"
	done
	grep -q "tasks.jsonl:7: id 'argv' again (first on line 1)" err || fail "duplicate id"
	[ "$(wc -l <out/results.jsonl)" -eq 3 ] || fail "not 3 rows in results.jsonl"
	[ "$(wc -l <out/results.csv)" -eq 4 ] || fail "not a header and 3 rows in results.csv"
	head -1 out/results.csv | grep -q '^id,status,exit_code,' || fail "CSV header"
	head -1 out/results.csv | grep -q ',task.model' || fail "no task.model column"
	[ "$(col argv status)" = ok ] || fail "argv: status"
	[ "$(col argv task.model)" = m1 ] || fail "argv: task.model"
	[ "$(col shell exit_code)" = 3 ] && [ "$(col shell status)" = failed ] ||
		fail "shell: exit 3 is not 'failed'"
	[ "$(col py status)" = ok ] || fail "py: status"
	grep -q '"stdout":"from the workspace\\n"' out/tasks/argv/result.json ||
		fail "argv: the workspace was not copied in"
	[ "$(field argv files_written)" = '["/workspace/made.txt"]' ] || fail "argv: files_written"
	[ "$(field py files_written)" = '["/workspace/p.txt"]' ] || fail "py: files_written"
	[ "$(field py task)" = '{"language": "python", "model": "m2"}' ] || fail "py: task fields"
	# each task had a fresh workspace: the shell task sees neither made.txt nor p.txt
	grep -qx 'ls.txt' out/tasks/shell/workspace/ls.txt && ! grep -q 'made\|p.txt' \
		out/tasks/shell/workspace/ls.txt || fail "shell: the workspace was not fresh"
	for t in argv py shell; do
		for f in audit.jsonl result.json row.json report.html task.json; do
			[ -s "out/tasks/$t/$f" ] || fail "$t: no $f"
		done
		grep -q '"type":"run".*"event":"end"' "out/tasks/$t/audit.jsonl" ||
			fail "$t: the audit log has no end"
	done
	[ "$(field py execs)" != '[]' ] || fail "py: no exec"
	# the batch's OUTDIR is a corpus (item 3): the rows' fields group it, the page links
	# to each task's own report
	"$sbx" report --corpus out --group-by model >corpus.txt 2>err || fail "report --corpus"
	grep -q "^by model (2 groups):" corpus.txt || fail "corpus: not two groups"
	grep -q " — 3 runs, " corpus.txt || fail "corpus: not three runs"
	"$sbx" report -q --corpus out --html out/corpus.html 2>err || fail "report --corpus --html"
	grep -q "<a href='tasks/argv/report.html'>report</a>" out/corpus.html ||
		fail "corpus page: no link to a task's report"
	;;
resume)
	printf '{"id": "t%d", "command": "echo %d > n.txt"}\n' 1 1 2 2 3 3 >tasks.jsonl
	"$sbx" batch -q tasks.jsonl -o out -j 2 2>err || fail "first batch"
	cp out/results.csv first.csv
	ls -i out/tasks/t1/row.json >inode1
	"$sbx" batch tasks.jsonl -o out -j 2 2>err || fail "second batch"
	grep -q "0 ran (0 not ok), 3 finished before" err || fail "the finished tasks ran again"
	ls -i out/tasks/t1/row.json | cmp -s - inode1 || fail "t1's row was written again"
	cmp -s first.csv out/results.csv || fail "the table changed"
	# a new task in the file: only it runs
	echo '{"id": "t4", "command": "true"}' >>tasks.jsonl
	"$sbx" batch tasks.jsonl -o out -j 2 2>err || fail "third batch"
	grep -q "1 ran (0 not ok), 3 finished before" err || fail "not only the new task ran"
	[ "$(wc -l <out/results.jsonl)" -eq 4 ] || fail "not 4 rows"
	;;
interrupt)
	{
		echo '{"id": "quick", "command": "true"}'
		echo '{"id": "long1", "command": "sleep 30"}'
		echo '{"id": "long2", "command": "sleep 30"}'
	} >tasks.jsonl
	"$sbx" batch -q tasks.jsonl -o out -j 3 2>err &
	pid=$!
	for _ in $(seq 100); do
		[ -f out/tasks/quick/row.json ] && [ -s out/tasks/long2/audit.jsonl ] && break
		sleep 0.1
	done
	sleep 0.5
	kill -INT $pid
	wait $pid
	rc=$?
	[ $rc -eq 130 ] || fail "interrupted batch: exit $rc, not 130"
	[ -f out/tasks/quick/row.json ] || fail "quick has no row"
	[ ! -f out/tasks/long1/row.json ] && [ ! -f out/tasks/long2/row.json ] ||
		fail "a stopped task has a row"
	[ "$(wc -l <out/results.jsonl)" -eq 1 ] || fail "the table is not the finished task"
	# the runs are gone with the batch (their supervisors were killed: keepers kill trees)
	for _ in $(seq 50); do
		pgrep -u "$(id -u)" -f "sbxtrace run --json -q --audit $scratch" >/dev/null || break
		sleep 0.1
	done
	pgrep -u "$(id -u)" -f "sbxtrace run --json -q --audit $scratch" >/dev/null &&
		fail "runs outlived the batch"
	sed -i 's/sleep 30/echo again/' tasks.jsonl
	"$sbx" batch tasks.jsonl -o out -j 3 2>err || fail "the second batch"
	grep -q "2 ran (0 not ok), 1 finished before" err || fail "not the two stopped tasks ran"
	grep -q '"stdout":"again\\n"' out/tasks/long1/result.json || fail "long1 did not run again"
	;;
progress)
	# a progress line on a terminal only (script(1) gives the batch one)
	printf '{"id": "p%d", "command": "true"}\n' 1 2 3 >tasks.jsonl
	"$sbx" batch tasks.jsonl -o out -j 2 2>err || fail "batch without a terminal"
	grep -q $'\033\\[K' err && fail "a progress line without a terminal"
	command -v script >/dev/null || { echo "skip: no script(1) for a terminal"; exit 77; }
	rm -rf out
	script -qec "'$sbx' batch tasks.jsonl -o out -j 2" /dev/null >err 2>&1 ||
		fail "batch on a terminal"
	grep -q $'\r\033\\[K\\[3/3\\] 0 running, 3 done, 0 failed, 0 skipped, ' err ||
		fail "no final progress line"
	;;
crash)
	{
		echo '{"id": "victim", "command": "sleep 30"}'
		echo '{"id": "bystander", "command": "sleep 1; echo fine"}'
	} >tasks.jsonl
	"$sbx" batch -q tasks.jsonl -o out -j 2 2>err &
	pid=$!
	for _ in $(seq 100); do
		[ -s out/tasks/victim/audit.jsonl ] && break
		sleep 0.1
	done
	# the batch's child that runs the victim: its own sbxtrace run (the supervisor)
	victim=""
	for c in $(cat /proc/$pid/task/*/children); do
		grep -q "tasks/victim/audit.jsonl" /proc/$c/cmdline 2>/dev/null && victim=$c
	done
	[ -n "$victim" ] || fail "the victim's run was not found"
	kill -KILL "$victim"
	wait $pid
	rc=$?
	[ $rc -eq 0 ] || fail "batch exit $rc, not 0"
	[ "$(col victim status)" = crashed ] || fail "victim: not crashed"
	[ "$(field victim sandbox_signal)" = 9 ] || fail "victim: sandbox_signal"
	[ "$(col bystander status)" = ok ] || fail "bystander: not ok"
	grep -q '"stdout":"fine\\n"' out/tasks/bystander/result.json || fail "bystander's output"
	;;
*)
	fail "unknown case $case"
	;;
esac
echo "ok: $case"
exit 0
