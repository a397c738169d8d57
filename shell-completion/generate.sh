#!/bin/sh
# generate.sh TEMPLATE POLICY_MD PRESET.toml... : prints TEMPLATE with @POLICY_KEYS@ replaced by
# the dotted keys `-s KEY=VALUE` takes, read from the reference (docs/policy.md: the "| key |"
# table of each "## [section]", and the ratchet's levels, the "| level |" table under
# [network]), and @PRESETS@ by the names of the preset files. So the completions cannot drift
# from the documentation: a key documented there is completed, and tests/integration/
# completion.sh checks that `sbxtrace check` knows each one.
set -eu
template=$1
policy_md=$2
shift 2

keys=$(awk '
/^## \[[a-z_]+\]$/ { sec = substr($0, 5, length($0) - 5); tbl = ""; next }
/^## / { sec = ""; tbl = ""; next }
sec != "" && /^\| key \|/ { tbl = "key"; next }
sec == "network" && /^\| level \|/ { tbl = "level"; next }
tbl != "" && /^\| `[a-z_.]+` \|/ {
	split($0, cell, "`")
	printf "%s%s.%s%s", sep, sec, (tbl == "level" ? "ratchet." : ""), cell[2]
	sep = " "
	next
}
!/^\|/ { tbl = "" }
' "$policy_md")
[ -n "$keys" ] || { echo "generate.sh: no policy keys found in $policy_md" >&2; exit 1; }

presets=
for f in "$@"; do
	name=$(basename "$f" .toml)
	presets=${presets:+$presets }$name
done

sed -e "s|@POLICY_KEYS@|$keys|" -e "s|@PRESETS@|$presets|" "$template"
