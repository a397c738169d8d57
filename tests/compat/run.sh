#!/bin/sh
# The compatibility suite of issue 23: CPython's regression tests for the OS-facing modules
# and everyday scenarios (bash, git, make -j2 with gcc, sqlite3 WAL with two writers, venv +
# pip of a local wheel, node), each natively and inside sbxtrace in each view, with a
# pass/fail/skip line per module (docs/compatibility.md records the results).
#
# Usage: tests/compat/run.sh [-b BUILDDIR] [-t SECONDS] [-V emulated,kernel] [-u USER] [-q] [-C]
#                            [MODULE|scenario:NAME…]
#   -q          the quick subset (CI: meson test --suite slow runs it in both views)
#   -C          remove the results directory when nothing fails only inside (the meson test
#               does: a test leaves no temporary directory, tests/tmp-leaks.sh)
#   -u USER     run everything as USER (from root: through runuser), the plain-user case
#   -V VIEWS    comma-separated, default both; a view this host cannot make is reported
# Results (JUnit XML, logs, summary.txt) in $OUT (default: a new temporary directory).
# Exit: 0 when nothing fails only inside, 1 otherwise, 77 when Python's tests are missing.
set -u

build=build
tmo=900
views=emulated,kernel
user=
quick=0
clean=0
while getopts b:t:V:u:qC opt; do
	case $opt in
	b) build=$OPTARG ;;
	t) tmo=$OPTARG ;;
	V) views=$OPTARG ;;
	u) user=$OPTARG ;;
	q) quick=1 ;;
	C) clean=1 ;;
	*) sed -n '7,14p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

build=$(cd "$build" 2>/dev/null && pwd) || { echo "skip: no build directory" >&2; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "$user" ] && [ "$(id -u)" = 0 ] && [ "$(id -un)" != "$user" ]; then
	OUT=${OUT:-$(mktemp -d /tmp/sbx-compat.XXXXXX)}
	mkdir -p "$OUT" && chown "$user" "$OUT"
	q=; [ $quick = 1 ] && q=-q
	c=; [ $clean = 1 ] && c=-C
	exec runuser -u "$user" -- env OUT="$OUT" PATH=/usr/local/bin:/usr/bin:/bin \
		sh "$here/run.sh" -b "$build" -t "$tmo" -V "$views" $q $c "$@"
fi

py=/usr/bin/python3
sbx=$build/cli/sbxtrace
if ! [ -x "$sbx" ]; then
	echo "skip: $sbx is missing (build first)" >&2
	exit 77
fi
have_tests=1
if ! $py -c 'import test.libregrtest' 2>/dev/null || ! [ -e /usr/lib/python3.11/test/test_os.py ]; then
	have_tests=0
fi

all_modules="test_os test_posix test_shutil test_pathlib test_tempfile test_glob test_stat
test_fileio test_io test_subprocess test_signal test_select test_selectors test_socket
test_socketserver test_fcntl test_zipfile test_tarfile test_mmap test_threading test_sqlite3
test_pty test_resource test_multiprocessing_fork test_multiprocessing_spawn
test_multiprocessing_forkserver test_asyncio.test_subprocess test_asyncio.test_unix_events
test_logging test_compileall test_venv"
all_scenarios="scenario:bash scenario:git scenario:make scenario:sqlite-wal scenario:venv-pip
scenario:node"
quick_set="test_glob test_stat test_fcntl test_socketserver test_select scenario:bash
scenario:git scenario:make scenario:sqlite-wal"
if [ $# -eq 0 ]; then
	if [ $quick = 1 ]; then set -- $quick_set; else set -- $all_modules $all_scenarios; fi
fi
if [ $have_tests = 0 ]; then
	echo "note: Python's test suite is missing (apt-get install -y libpython3.11-testsuite):" \
		"its modules are skipped" >&2
fi

OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/sbx-compat.XXXXXX")}
mkdir -p "$OUT"
: >"$OUT/inside-only.txt"
echo "results in $OUT (running as $(id -un))" >&2
# Resources: the network ones are loopback only inside (network.mode = loopback); internet
# fetches and hours-long ones are off on both sides.
res=all,-largefile,-cpu,-urlfetch,-gui,-audio,-decimal,-tzdata,-extralargefile

# One policy per view: the python preset (its own /proc) for the emulated view; for the
# kernel view standard with the python preset's settings but no /proc mount: the python
# preset hides /proc/net, which the kernel view can do only with a network namespace of the
# tree's own, and the suite needs the host's loopback (docs/filesystem.md, "What stays
# emulated, and why"). Loopback network, limits raised to the timeout.
common="[network]
mode = \"loopback\"
[limits]
wall_time = \"${tmo}s\"
cpu_time = \"$((tmo * 2))s\"
memory = \"8GiB\"
tasks = 512
cpus = 2
file_size = \"16GiB\"
disk = \"16GiB\"
open_files = 1024
[process]
pty = true
env = { set = { PYTHONDONTWRITEBYTECODE = \"1\", PYTHONUNBUFFERED = \"1\" } }"
printf 'extends = "python"\n[sandbox]\nname = "compat-emulated"\n%s\n' "$common" \
	>"$OUT/policy-emulated.toml"
printf 'extends = "standard"\n[sandbox]\nname = "compat-kernel"\n%s\n' "$common" \
	>"$OUT/policy-kernel.toml"

# Counts of a JUnit XML file: "pass fail skip" (fail includes errors), "- - -" without one;
# with a second argument, a log of `-m test -v` without --junit-xml to count instead (below).
count() {
	$py - "$@" <<'PYEOF'
import re, sys, xml.etree.ElementTree as ET
if len(sys.argv) > 2:
    st = {}  # test id -> "p", "f" or "s"; a failure wins (threaded tests report twice)
    for l in open(sys.argv[2], errors="replace"):
        m = re.match(r"(\w+) \(([\w.]+)\).* \.\.\. .*?(ok|FAIL|ERROR|skipped|expected failure|unexpected success)", l) \
            or re.match(r"(?:FAIL|ERROR): (\w+) \(([\w.]+)\)()", l)
        if m:
            k = {"ok": "p", "expected failure": "p", "skipped": "s"}.get(m.group(3), "f")
            if st.get(m.group(2)) != "f":
                st[m.group(2)] = k
    c = [list(st.values()).count(k) for k in "pfs"]
    print(*c) if st else print("- - -"); sys.exit()
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    print("- - -"); sys.exit()
p = f = s = 0
for tc in root.iter("testcase"):
    kinds = {c.tag for c in tc}
    if kinds & {"failure", "error"}: f += 1
    elif "skipped" in kinds: s += 1
    else: p += 1
print(p, f, s)
PYEOF
}

failed() {
	$py - "$@" <<'PYEOF'
import re, sys, xml.etree.ElementTree as ET
if len(sys.argv) > 2:
    for l in open(sys.argv[2], errors="replace"):
        m = re.match(r"(?:FAIL|ERROR): (\w+) \(([\w.]+)\.\w+\)", l)
        if m:
            print("." + m.group(2) + "." + m.group(1))
    sys.exit()
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    sys.exit()
for tc in root.iter("testcase"):
    if any(c.tag in ("failure", "error") for c in tc):
        print(tc.get("classname", "") + "." + tc.get("name", ""))
PYEOF
}

# A scenario: a shell script that prints "ok" as its last line when it worked. $1 = name.
scenario_script() {
	case $1 in
	bash) cat <<'EOF'
set -e
[ "$(cat <(echo hi))" = hi ]
[ "$(echo in | cat /dev/stdin)" = in ]
echo out > /dev/stdout >/dev/null
exec 3>fd3.txt; echo three >/dev/fd/3; exec 3>&-; [ "$(cat fd3.txt)" = three ]
bash -c 'set -m; sleep 30 & p=$!; kill -STOP $p; kill -CONT $p; kill %1; wait %1 || [ $? -ge 128 ]'
diff <(printf 'a\nb\n') <(printf 'a\nb\n')
echo ok
EOF
	;;
	git) cat <<'EOF'
set -e
export HOME=$PWD GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
git init -q -b main repo && cd repo
for i in 1 2 3 4 5; do seq 1 2000 | sed "s/^/$i /" > f$i.txt; git add f$i.txt; git commit -qm "c$i"; done
git branch b && git checkout -q b && echo x >> f1.txt && git commit -qam x && git checkout -q main
git merge -q --no-edit b && git gc -q && git fsck --no-progress >/dev/null
git bundle create ../r.bundle --all 2>/dev/null && cd .. && git clone -q r.bundle c1
git clone -q --no-local repo c2 && cd c2 && echo y > y && git add y && git commit -qm y && git push -q origin HEAD:pushed
[ "$(git -C ../repo log --oneline pushed | wc -l)" = 7 ]
echo ok
EOF
	;;
	make) cat <<'EOF'
set -e
for i in 1 2 3 4 5 6; do printf '#include <stdio.h>\nint f%d(void){return %d;}\n' $i $i > f$i.c; done
printf 'int f1(void),f2(void),f3(void),f4(void),f5(void),f6(void);\n#include <stdio.h>\nint main(void){printf("%%d\\n",f1()+f2()+f3()+f4()+f5()+f6());return 0;}\n' > main.c
printf 'OBJ=main.o f1.o f2.o f3.o f4.o f5.o f6.o\nprog: $(OBJ)\n\t$(CC) -o $@ $(OBJ)\n%%.o: %%.c\n\t$(CC) -O2 -c -o $@ $<\n' > Makefile
make -s -j2 CC=gcc && [ "$(./prog)" = 21 ]
echo ok
EOF
	;;
	sqlite-wal) cat <<'EOF'
set -e
/usr/bin/python3 - <<'PY'
import sqlite3, multiprocessing as mp
def writer(k):
    c = sqlite3.connect('db.sqlite', timeout=30)
    for i in range(200):
        with c: c.execute('insert into t values (?, ?)', (k, i))
    c.close()
if __name__ == '__main__':
    c = sqlite3.connect('db.sqlite'); c.execute('pragma journal_mode=wal'); c.execute('create table t(k, i)'); c.commit()
    ps = [mp.Process(target=writer, args=(k,)) for k in (1, 2)]
    [p.start() for p in ps]; [p.join() for p in ps]
    assert c.execute('select count(*) from t').fetchone()[0] == 400
PY
[ "$(sqlite3 db.sqlite 'select count(*) from t')" = 400 ]
echo ok
EOF
	;;
	venv-pip) cat <<'EOF'
set -e
/usr/bin/python3 - <<'PY'
import zipfile, hashlib, base64
files = {'hello_sbx/__init__.py': b'def hi():\n    return "hi"\n',
         'hello_sbx-1.0.dist-info/METADATA': b'Metadata-Version: 2.1\nName: hello-sbx\nVersion: 1.0\n',
         'hello_sbx-1.0.dist-info/WHEEL': b'Wheel-Version: 1.0\nGenerator: sbx\nRoot-Is-Purelib: true\nTag: py3-none-any\n'}
rec = ''.join('%s,sha256=%s,%d\n' % (n, base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode(), len(d)) for n, d in files.items())
rec += 'hello_sbx-1.0.dist-info/RECORD,,\n'
with zipfile.ZipFile('hello_sbx-1.0-py3-none-any.whl', 'w') as z:
    for n, d in files.items(): z.writestr(n, d)
    z.writestr('hello_sbx-1.0.dist-info/RECORD', rec)
PY
/usr/bin/python3 -m venv v
v/bin/python -m pip install -q --no-index --disable-pip-version-check hello_sbx-1.0-py3-none-any.whl
[ "$(v/bin/python -c 'import hello_sbx; print(hello_sbx.hi())')" = hi ]
echo ok
EOF
	;;
	node) cat <<'EOF'
set -e
node -e '
const fs = require("fs"), cp = require("child_process"), os = require("os");
const { Worker } = require("worker_threads");
fs.writeFileSync("n.txt", "x"); if (fs.readFileSync("n.txt", "utf8") !== "x") process.exit(1);
if (cp.spawnSync("sh", ["-c", "echo sub"]).stdout.toString() !== "sub\n") process.exit(2);
fs.mkdtempSync(os.tmpdir() + "/n-");
new Worker("require(\"worker_threads\").parentPort.postMessage(42)", { eval: true })
  .on("message", m => { if (m !== 42) process.exit(3); console.log("ok"); });'
EOF
	;;
	*) echo "echo unknown scenario; exit 2" ;;
	esac
}

printf '%-34s %-9s %20s   %20s\n' module view "native pass/fail/skip" "inside pass/fail/skip" \
	| tee "$OUT/summary.txt"
status=0
for item in "$@"; do
	name=$(echo "$item" | tr / _)
	case $item in
	scenario:*) kind=scenario ;;
	*) kind=python ;;
	esac
	if [ $kind = python ] && [ $have_tests = 0 ]; then
		printf '%-34s %-9s %s\n' "$item" - "skip: libpython3.11-testsuite missing" \
			| tee -a "$OUT/summary.txt"
		continue
	fi
	top=/usr/lib/python3.11/test/${item%%.*}
	if [ $kind = python ] && ! [ -e "$top.py" ] && ! [ -d "$top" ]; then
		# Debian ships test_sqlite3 in no package (the sqlite scenario stands in)
		printf '%-34s %-9s %s\n' "$item" - "skip: not in Debian's libpython3.11-testsuite" \
			| tee -a "$OUT/summary.txt"
		continue
	fi
	# native, once for both views
	ws=$(mktemp -d "${TMPDIR:-/tmp}/sbx-compat-ws.XXXXXX")
	if [ $kind = python ]; then
		(cd "$ws" && TMPDIR=$ws timeout "$tmo" $py -m test -u "$res" -v \
			--junit-xml "$OUT/$name.native.xml" "$item") >"$OUT/$name.native.log" 2>&1
		n=$(count "$OUT/$name.native.xml")
	else
		scenario_script "${item#scenario:}" >"$ws/scenario.sh"
		(cd "$ws" && TMPDIR=$ws PATH=/usr/local/bin:/usr/bin:/bin timeout "$tmo" \
			/bin/bash scenario.sh) >"$OUT/$name.native.log" 2>&1 </dev/null
		if [ "$(tail -n 1 "$OUT/$name.native.log")" = ok ]; then n="1 0 0"; else n="0 1 0"; fi
	fi
	rm -rf "$ws"
	failed "$OUT/$name.native.xml" 2>/dev/null | sort >"$OUT/$name.native.fail"
	for view in $(echo "$views" | tr , ' '); do
		kv=false; [ "$view" = kernel ] && kv=true
		ws=$(mktemp -d "${TMPDIR:-/tmp}/sbx-compat-ws.XXXXXX")
		if [ $kind = python ]; then
			timeout $((tmo + 30)) "$sbx" run -q -w "$ws" -s tracer.kernel_view=$kv \
				"$OUT/policy-$view.toml" -- $py -m test -u "$res" -v \
				--junit-xml "/workspace/$name.xml" "$item" \
				>"$OUT/$name.$view.log" 2>&1 </dev/null
			echo "inside exit $?" >>"$OUT/$name.$view.log"
			cp "$ws/$name.xml" "$OUT/$name.$view.xml" 2>/dev/null
			i=$(count "$OUT/$name.$view.xml")
			if { [ "$i" = "- - -" ] || [ "$i" = "0 0 0" ]; } &&
				grep -q "uncaught exception" "$OUT/$name.$view.log"; then
				# regrtest's JUnit writer dies on some errors of threaded set-ups
				# (test_socket's UDPLITE clients): counted from -v lines instead
				timeout $((tmo + 30)) "$sbx" run -q -w "$ws" -s tracer.kernel_view=$kv \
					"$OUT/policy-$view.toml" -- $py -m test -u "$res" -v "$item" \
					>"$OUT/$name.$view.v.log" 2>&1 </dev/null
				i=$(count - "$OUT/$name.$view.v.log")
				vlog=$OUT/$name.$view.v.log
			fi
		else
			scenario_script "${item#scenario:}" >"$ws/scenario.sh"
			timeout $((tmo + 30)) "$sbx" run -q -w "$ws" -s tracer.kernel_view=$kv \
				"$OUT/policy-$view.toml" -- /bin/bash scenario.sh \
				>"$OUT/$name.$view.log" 2>&1 </dev/null
			if [ "$(tail -n 1 "$OUT/$name.$view.log")" = ok ]; then i="1 0 0"; else i="0 1 0"; fi
		fi
		rm -rf "$ws"
		if [ $kv = true ] && grep -q "user namespace" "$OUT/$name.$view.log" &&
		    [ "$i" = "- - -" -o "$i" = "0 1 0" ]; then
			i="skip: no kernel view here"
		fi
		printf '%-34s %-9s %20s   %20s\n' "$item" "$view" "$(echo "$n" | tr ' ' /)" \
			"$(echo "$i" | tr ' ' /)" | tee -a "$OUT/summary.txt"
		if [ $kind = python ]; then
			if [ -n "${vlog:-}" ]; then
				failed - "$vlog" | sort -u >"$OUT/$name.$view.fail"
				vlog=
			else
				failed "$OUT/$name.$view.xml" | sort >"$OUT/$name.$view.fail"
			fi
			comm -13 "$OUT/$name.native.fail" "$OUT/$name.$view.fail" |
				sed "s/^/  $view only: $item: /" >>"$OUT/inside-only.txt"
			[ "$i" = "- - -" ] && [ "$n" != "- - -" ] &&
				echo "  $view only: $item: no result (timeout or crash)" >>"$OUT/inside-only.txt"
		elif [ "$i" = "0 1 0" ] && [ "$n" = "1 0 0" ]; then
			echo "  $view only: $item failed (log: $OUT/$name.$view.log)" >>"$OUT/inside-only.txt"
		fi
	done
done
# Split what fails only inside into the known differences (known.txt) and the rest.
$py - "$OUT/inside-only.txt" "$here/known.txt" "$OUT" <<'PYEOF'
import fnmatch, re, sys
lines = [l.rstrip("\n") for l in open(sys.argv[1]) if l.strip()]
known = []
for l in open(sys.argv[2]):
    l = l.split("#", 1)
    if l[0].strip():
        v, item, pat = l[0].split(None, 2)
        known.append((v, item, pat.strip(), l[1].strip() if len(l) > 1 else ""))
new, seen = [], []
for l in lines:
    m = re.match(r"\s*(\S+) only: (\S+) failed \(log", l) or \
        re.match(r"\s*(\S+) only: (\S+?): (.*)", l)
    if not m:
        new.append(l); continue
    v, item, test = (m.groups() + ("",))[:3]
    hit = [k for k in known if k[0] in (v, "*") and fnmatch.fnmatch(item, k[1])
           and fnmatch.fnmatch(test or "*", k[2])]
    (seen if hit else new).append(l + (f"  [known: {hit[0][3]}]" if hit else ""))
open(sys.argv[3] + "/known-differences-all.txt", "w").write("".join(x + "\n" for x in seen))
# one line per view, module and reason, with the number of tests
groups = {}
for l in seen:
    m = re.match(r"\s*(\S+) only: (\S+?)(?:: | failed).*\[known: (.*)\]$", l)
    if m:
        groups[m.groups()] = groups.get(m.groups(), 0) + 1
open(sys.argv[3] + "/known-differences.txt", "w").write("".join(
    f"  {v} only: {item}: {n} test{'s' if n > 1 else ''}: {why}\n"
    for (v, item, why), n in groups.items()))
open(sys.argv[3] + "/new-differences.txt", "w").write("".join(x + "\n" for x in new))
PYEOF
echo
if [ -s "$OUT/known-differences.txt" ]; then
	echo "known differences (tests/compat/known.txt):"
	cat "$OUT/known-differences.txt"
fi
if [ -s "$OUT/new-differences.txt" ]; then
	echo "fail only inside:"
	cat "$OUT/new-differences.txt"
	status=1
else
	echo "nothing else fails only inside"
fi
if [ $clean = 1 ] && [ "$status" = 0 ]; then
	rm -rf "$OUT"
elif [ $clean = 1 ]; then
	echo "results (kept): $OUT"
fi
exit $status
