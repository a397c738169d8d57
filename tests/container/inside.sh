#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs inside the container that tests/container/docker.sh starts (`docker run --network
# none --cap-drop ALL --security-opt no-new-privileges`, Docker's default seccomp profile),
# as whichever user it was given. TAP-like: "ok N - …" / "not ok N - …", details as "# ".
# Exit 0 when every check passed. /t is this directory, read-only.
set -u
PATH=/usr/local/bin:/usr/bin:/bin
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); echo "not ok $n - $*"; failed=1; }
note() { sed 's/^/#   /' <<<"$1"; }
# check DESC COND-STATUS OUTPUT: the output as comments when it failed
check() {
	if [ "$2" = 0 ]; then ok "$1"; else nok "$1"; note "$3"; fi
}
for c in grep sed timeout mktemp python3 sbxtrace; do
	command -v $c >/dev/null || { nok "$c is in the image"; echo "1..$n"; exit 1; }
done
me=$(id -u)
secret_marker=SBX-SECRET-DO-NOT-READ
run() { # run POLICY-ARGS… -- CMD: sbxtrace run with a time limit of its own
	timeout 60 sbxtrace run "$@" 2>&1
}

# --- the container is what it claims: a seccomp filter, no capabilities, no_new_privs
st=$(cat /proc/self/status)
cond=1
grep -q '^Seccomp:[[:space:]]*2' <<<"$st" && grep -q '^CapEff:[[:space:]]*0000000000000000' <<<"$st" &&
	grep -q '^NoNewPrivs:[[:space:]]*1' <<<"$st" && cond=0
check "container: seccomp filter on, no effective capability, no_new_privs (uid $me)" $cond \
	"$(grep -E '^(Seccomp|CapEff|NoNewPrivs)' <<<"$st")"

# --- doctor: exit 0, and it sees the profile refuse pidfd_getfd (so the run below takes the
# container path, not the host's)
out=$(timeout 30 sbxtrace doctor 2>&1)
rc=$?
check "sbxtrace doctor exits 0 (got $rc)" $rc "$out"
cond=1
grep -Eq '^ *pidfd_getfd +no ' <<<"$out" && cond=0
check "doctor: pidfd_getfd refused by the container's profile" $cond "$out"
cond=1
grep -q 'All essential features are present' <<<"$out" && cond=0
check "doctor: all essential features are present" $cond "$out"

# --- a workspace: written inside, seen outside
ws=$(mktemp -d /tmp/ws.XXXXXX)
out=$(run -w "$ws" standard -- sh -c 'echo hello > out.txt && cat out.txt && pwd && id -u')
rc=$?
cond=1
[ $rc = 0 ] && [ "$(head -2 <<<"$out")" = $'hello\n/workspace' ] &&
	[ "$(cat "$ws/out.txt" 2>/dev/null)" = hello ] && cond=0
check "run standard -- sh -c: writes /workspace, the file is in the workspace (exit $rc)" $cond "$out"

# --- a python3 program
cat >"$ws/prog.py" <<'EOF'
import hashlib, json, os, subprocess
data = {"sum": sum(range(100)), "sha": hashlib.sha256(b"sbx").hexdigest()[:12],
        "cwd": os.getcwd(), "child": subprocess.run(["echo", "child"], capture_output=True,
                                                    text=True).stdout.strip()}
with open("result.json", "w") as f:
    json.dump(data, f)
print(json.dumps(data))
EOF
out=$(run -w "$ws" standard -- sh -c 'python3 prog.py && ls')
rc=$?
want=$(python3 -c 'import hashlib, json; print(json.dumps({"sum": 4950, "sha": hashlib.sha256(b"sbx").hexdigest()[:12], "cwd": "/workspace", "child": "child"}))')
cond=1
[ $rc = 0 ] && [ "$(head -1 <<<"$out")" = "$want" ] && grep -qx result.json <<<"$out" &&
	[ "$(cat "$ws/result.json" 2>/dev/null)" = "$want" ] && cond=0
check "run standard: a python3 program (hashlib, json, a subprocess) writes its result (exit $rc)" $cond "$out"

# --- the file system outside the workspace stays out of reach
# controls: what the sandbox must not do, this user can do outside it
secret=$HOME/secret
cond=1
grep -q "$secret_marker" "$secret" 2>/dev/null && cond=0
check "control: $secret is readable outside the sandbox" $cond "$(ls -l "$secret" 2>&1)"
if [ "$me" = 0 ]; then
	cond=1
	grep -q "$secret_marker" /etc/shadow 2>/dev/null && cond=0
	check "control: root reads /etc/shadow outside the sandbox" $cond "$(ls -l /etc/shadow 2>&1)"
fi
ln -s "$secret" "$ws/link-out"
attempts=(
	"cat /etc/shadow"
	"cat ../../../../etc/shadow"
	"cat /workspace/../etc/shadow"
	"cat ../../..$secret"
	"cat /workspace/../..$secret"
	"cat $secret"
	"cat link-out"
	"ln -s ../../../../../..$secret l && cat l"
	"cd / && cd .. && cd .. && cat .$secret"
	"python3 -c 'import os; os.chdir(\"..\"); os.chdir(\"..\"); print(open(\"..$secret\").read())'"
)
for a in "${attempts[@]}"; do
	out=$(run -w "$ws" standard -- sh -c "$a")
	rc=$?
	cond=1
	[ $rc != 0 ] && ! grep -q "$secret_marker" <<<"$out" && cond=0
	check "escape refused: $a (exit $rc: $(tail -1 <<<"$out" | cut -c1-90))" $cond "$out"
done
# the python preset shows /proc: its links to other processes' roots and cwds (this script is
# pid 1 of the container, same uid, so the kernel alone would let them through)
cond=1
grep -q "$secret_marker" "/proc/1/root$secret" 2>/dev/null && cond=0
check "control: /proc/1/root$secret is readable outside the sandbox" $cond "$(ls -l "/proc/1/root$secret" 2>&1)"
attempts=(
	"cat /proc/1/root$secret"
	"cat /proc/1/root/etc/shadow"
	"cat /proc/1/cwd/../..$secret"
	"cat /proc/self/root$secret"
	"cat /proc/self/cwd/../..$secret"
)
for a in "${attempts[@]}"; do
	out=$(run -w "$ws" python -- sh -c "$a")
	rc=$?
	cond=1
	[ $rc != 0 ] && ! grep -q "$secret_marker" <<<"$out" && cond=0
	check "escape refused (python preset, /proc): $a (exit $rc: $(tail -1 <<<"$out" | tr -d '\r' | cut -c1-80))" $cond "$out"
done
out=$(run -w "$ws" standard -- sh -c 'echo x > /usr/local/bin/pwned; echo x > /workspace/../pwned; ls -a /')
rc=$?
cond=1
[ ! -e /usr/local/bin/pwned ] && [ ! -e "$(dirname "$ws")/pwned" ] && [ ! -e /pwned ] &&
	! grep -qx -e home -e root -e etc/shadow <<<"$out" && cond=0
check "no write outside the workspace, no /home or /root in the view (exit $rc)" $cond "$out"

# --- network none: a listener on the container's loopback, reachable outside the sandbox,
# refused inside
portfile=$(mktemp /tmp/port.XXXXXX)
python3 - "$portfile" <<'EOF' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
s.settimeout(60)
end = time.time() + 60
while time.time() < end:
    try:
        c, _ = s.accept()
        c.sendall(b"listener says hi\n")
        c.close()
    except OSError:
        break
EOF
lpid=$!
for _ in $(seq 50); do [ -s "$portfile" ] && break; sleep 0.1; done
port=$(cat "$portfile")
connect="import socket; s = socket.create_connection(('127.0.0.1', $port), timeout=5); print(s.recv(100).decode().strip())"
out=$(python3 -c "$connect" 2>&1)
rc=$?
cond=1
[ $rc = 0 ] && [ "$out" = "listener says hi" ] && cond=0
check "control: 127.0.0.1:$port answers outside the sandbox" $cond "$out"
out=$(run -w "$ws" standard -- python3 -c "$connect")
rc=$?
cond=1
[ $rc != 0 ] && ! grep -q 'listener says hi' <<<"$out" && cond=0
check "network none: connect to 127.0.0.1:$port refused (exit $rc: $(tail -1 <<<"$out" | cut -c1-80))" $cond "$out"
kill "$lpid" 2>/dev/null
wait "$lpid" 2>/dev/null
# network loopback: a server and a client inside one sandbox (the sockets the supervisor
# creates and keeps where pidfd_getfd is refused: docs/network.md, "In a container")
cat >"$ws/loop.py" <<'EOF'
import socket, threading
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
def serve():
    c, _ = s.accept()
    c.sendall(c.recv(100).upper())
    c.close()
t = threading.Thread(target=serve)
t.start()
c = socket.create_connection(s.getsockname(), timeout=10)
c.sendall(b"ping over loopback")
print(c.recv(100).decode())
t.join()
EOF
out=$(run -w "$ws" -s network.mode=loopback standard -- python3 loop.py)
rc=$?
cond=1
[ $rc = 0 ] && [ "$out" = "PING OVER LOOPBACK" ] && cond=0
check "network loopback: bind, listen, accept, connect inside the sandbox (exit $rc)" $cond "$out"

# --- sbxtrace mcp over stdio: code_create_sandbox, code_execute (python)
out=$(timeout 90 python3 /t/mcp-stdio.py "$(mktemp -d /tmp/mcp.XXXXXX)/sessions" 2>&1)
rc=$?
check "sbxtrace mcp (stdio): code_create_sandbox + code_execute python -> 42 (exit $rc)" $rc "$out"
[ $rc = 0 ] && note "$out"

echo "1..$n"
exit $failed
