# sbxtrace's shell context driver (docs/agents.md, "Stateful contexts"): one bash (or sh)
# whose cwd, variables and functions persist between calls, inside the session's sandbox.
# Requests "<id> <base64>\n" on stdin (kept on fd 3; the code's stdin is /dev/null); replies
# "\x1eSBX" + JSON + "\x1f" on stdout. An interrupt (the server's timeout) ends the running
# command, not the shell. `exit` in the code ends the context; the next call makes a new one.
exec 3<&0 0</dev/null
trap ':' INT
printf '\036SBX{"t":"ready","pid":%d}\037' "$$"
while IFS=' ' read -r __sbx_id __sbx_b64 <&3; do
	__sbx_code=$(printf '%s' "$__sbx_b64" | base64 -d)
	eval "$__sbx_code"
	__sbx_rc=$?
	printf '\036SBX{"t":"err-done","id":%s}\037' "$__sbx_id" >&2
	printf '\036SBX{"t":"done","id":%s,"exit_code":%d,"results":[]}\037' "$__sbx_id" "$__sbx_rc"
done
