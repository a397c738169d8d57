#!/bin/bash
# SPDX-License-Identifier: MIT
# Issue 25, item 5: the research tools at scale (docs/research.md, "Figures").
#
#   bench-research.sh batch SBXTRACE [N] [SECONDS] [JOBS] [cpu|sleep]
#       N Python tasks (default 200) of SECONDS each (default 1): "cpu" spins on the CPU for
#       that much CPU time, "sleep" sleeps. Prints the batch's wall time against the tasks'
#       own: the sum of their durations divided by JOBS (for "cpu", by the CPUs the batch
#       can use, if fewer) is what a batch with no overhead and no serialization would take.
#   bench-research.sh corpus SBXTRACE [N]
#       a corpus of N logs (default 1000): a batch of 50 varied real tasks, copied until
#       there are N task directories; times report --corpus as text and as HTML (best of 3).
#
# Timing belongs here, not in tests. Run on a quiet machine to quote figures; uptime is
# printed with them.
set -u
mode=${1:?usage: bench-research.sh batch|corpus SBXTRACE …}
sbx=$(realpath "${2:?the sbxtrace binary}")
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-research.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
now() { date +%s.%N; }

case $mode in
batch)
	n=${3:-200} secs=${4:-1} jobs=${5:-$(nproc)} kind=${6:-cpu}
	for i in $(seq "$n"); do
		if [ "$kind" = cpu ]; then
			code="import time\nt = time.process_time()\nwhile time.process_time() - t < $secs:\n    pass\n"
		else
			code="import time\ntime.sleep($secs)\n"
		fi
		printf '{"id": "t%d", "language": "python", "code": "%s", "kind": "%s"}\n' \
			"$i" "$code" "$kind"
	done >tasks.jsonl
	echo "# $(uptime)"
	echo "# $n $kind tasks of $secs s, -j $jobs, $(nproc) CPUs"
	t0=$(now)
	"$sbx" batch -q tasks.jsonl -o out python -j "$jobs" || echo "# batch exit $?"
	t1=$(now)
	python3 - "$t0" "$t1" "$jobs" "$kind" out/results.jsonl <<'EOF'
import json, os, sys
t0, t1, jobs, kind, path = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
rows = [json.loads(l) for l in open(path)]
wall = t1 - t0
dur = sum(r["duration_ms"] or 0 for r in rows) / 1000
tw = sum(r["wall_ms"] or 0 for r in rows) / 1000
cpu = sum(r["rusage_cpu_ms"] or 0 for r in rows) / 1000
tcpu = sum(r["cpu_ms"] or 0 for r in rows if r.get("usage_source") == "budgets") / 1000
lanes = min(jobs, os.cpu_count()) if kind == "cpu" else jobs
ok = sum(r["status"] == "ok" for r in rows)
print(f"tasks ok:                   {ok} of {len(rows)}")
print(f"batch wall time:            {wall:8.1f} s")
print(f"tasks' own (sum/{lanes}):         {dur / lanes:8.1f} s   (sum of duration_ms {dur:.1f} s)")
print(f"runs incl. setup (sum/{lanes}):   {tw / lanes:8.1f} s   (fork to row.json, per task)")
print(f"ratio wall / tasks' own:    {wall / (dur / lanes):8.3f}")
print(f"CPU of the tasks (budgets): {tcpu:8.1f} s   (the trees' own, as the cpu_time budget samples it)")
print(f"CPU of sbxtrace (rusage):   {cpu:8.1f} s   ({cpu / len(rows) * 1000:.0f} ms per task: the supervisor itself)")
print(f"mean task duration:         {dur / len(rows) * 1000:8.0f} ms")
EOF
	;;
corpus)
	n=${3:-1000}
	{
		for i in $(seq 50); do
			case $((i % 5)) in
			0) c='import json\nprint(json.dumps({\"a\": 1}))\n' ;;
			1) c='import os\ntry:\n    open(os.path.expanduser(\"~/.ssh/id_rsa\"))\nexcept OSError:\n    pass\nopen(\"/workspace/out.txt\", \"w\").write(\"x\")\n' ;;
			2) c='import socket\ntry:\n    socket.create_connection((\"1.2.3.4\", 443), timeout=1)\nexcept OSError:\n    pass\n' ;;
			3) c='import subprocess\nsubprocess.run([\"ls\", \"/etc\"], capture_output=True)\n' ;;
			4) c='import glob\nprint(len(glob.glob(\"/usr/lib/python3*/*.py\")))\n' ;;
			esac
			printf '{"id": "s%d", "language": "python", "code": "%s", "model": "m%d"}\n' \
				"$i" "$c" $((i % 3))
		done
	} >tasks.jsonl
	"$sbx" batch -q tasks.jsonl -o out python -s network.mode=allowlist \
		-s 'network.allow=["1.2.3.4:80"]' || echo "# batch exit $?"
	# copies with their own ids (task.json's id names the run)
	i=0
	while [ "$(ls out/tasks | wc -l)" -lt "$n" ]; do
		i=$((i + 1))
		for s in out/tasks/s*; do
			[ "$(ls out/tasks | wc -l)" -ge "$n" ] && break
			id="c$i-$(basename "$s")"
			cp -r "$s" "out/tasks/$id"
			sed -i "s/\"id\":\"[^\"]*\"/\"id\":\"$id\"/" "out/tasks/$id/task.json"
		done
	done
	logs=$(find out -name audit.jsonl | wc -l)
	bytes=$(du -sb --apparent-size out/tasks | cut -f1)
	records=$(cat out/tasks/*/audit.jsonl | wc -l)
	echo "# $(uptime)"
	echo "# $logs logs, $records records, $((bytes / 1048576)) MiB under out/tasks"
	for what in text html; do
		best=
		for _ in 1 2 3; do
			t0=$(now)
			if [ $what = text ]; then
				"$sbx" report --corpus out --group-by model >/dev/null
			else
				"$sbx" report -q --corpus out --group-by model --html corpus.html
			fi
			t1=$(now)
			t=$(echo "$t1 - $t0" | bc)
			if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
		done
		printf 'report --corpus (%s): %6.2f s (best of 3)\n' $what "$best"
	done
	echo "# page: $(du -h corpus.html | cut -f1)"
	;;
*)
	echo "usage: bench-research.sh batch|corpus SBXTRACE …" >&2
	exit 2
	;;
esac
