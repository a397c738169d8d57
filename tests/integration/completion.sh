#!/bin/bash
# SPDX-License-Identifier: MIT
# Issue 21, item 4: the shell completions (shell-completion/) agree with the program.
#   - every policy key they offer after -s (generated from docs/policy.md) is one that
#     `sbxtrace check -s` knows, and every preset name loads;
#   - every option each subcommand's --help lists is offered for that subcommand, in bash
#     and in zsh;
#   - the bash function completes subcommands, options, presets and keys (run in a plain
#     bash, without the bash-completion package); the zsh file parses (when zsh is there).
# usage: completion.sh SBXTRACE BASH_COMPLETION ZSH_COMPLETION
set -u
sbx=$1 bashc=$2 zshc=$3
scratch=$(mktemp -d "${TMPDIR:-/tmp}/completion.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
failed=0
fail() {
	echo "not ok: $*"
	failed=1
}

# shellcheck source=/dev/null
source "$bashc" || { echo "cannot source $bashc"; exit 1; }
complete_line() { # words…: prints the bash completions, one per line
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_sbxtrace
	printf '%s\n' "${COMPREPLY[@]}"
}

# the keys and presets
[ "$(echo "$_sbxtrace_keys" | wc -w)" -ge 30 ] || fail "fewer than 30 policy keys: '$_sbxtrace_keys'"
for k in $_sbxtrace_keys; do
	"$sbx" check -w "$scratch" -q -s "$k=1" standard >/dev/null 2>"$scratch/err"
	grep -q "unknown key" "$scratch/err" && fail "key $k: $(cat "$scratch/err")"
	grep -qF "$k" "$zshc" || fail "key $k is not in the zsh completion"
done
for p in $_sbxtrace_presets; do
	"$sbx" check -w "$scratch" -q "$p" >/dev/null 2>&1 || fail "preset $p does not load"
	grep -qw "$p" "$zshc" || fail "preset $p is not in the zsh completion"
done
[ "$(echo "$_sbxtrace_presets" | wc -w)" -ge 6 ] || fail "fewer than 6 presets: '$_sbxtrace_presets'"

# the options, as --help lists them
for cmd in run check doctor report learn mcp batch; do
	opts=$("$sbx" "$cmd" --help | grep -oE '^ +(-[a-zA-Z], )?--[a-z-]+' | tr ',' ' ')
	[ -n "$opts" ] || [ "$cmd" = doctor ] || fail "$cmd --help lists no options"
	offered=$(complete_line sbxtrace "$cmd" -)
	for o in $opts; do
		grep -qxF -- "$o" <<<"$offered" || fail "bash: $cmd: $o is not offered"
		grep -qF -- "$o" "$zshc" || fail "zsh: $cmd: $o is not in the file"
	done
done

# a few completions as a user sees them
expect() { # expected-line, words…
	local want=$1
	shift
	complete_line "$@" | grep -qxF -- "$want" || fail "bash: '$*' does not offer '$want'"
}
expect run sbxtrace ""
expect report sbxtrace re
expect standard sbxtrace run st
expect strict sbxtrace check -w . st
expect limits.wall_time= sbxtrace run -s lim
expect tracer.kernel_view= sbxtrace run -w . --set tracer.k
expect network.ratchet.secret= sbxtrace check -s network.ratchet.s
expect standard sbxtrace run -s limits.wall_time = 5s st
expect python sbxtrace learn --from py
expect --data-dir sbxtrace mcp --d
expect batch sbxtrace ba
expect --jobs sbxtrace batch --j
expect --corpus sbxtrace report --co
expect python sbxtrace batch tasks.jsonl -o out py
[ -z "$(complete_line sbxtrace run standard st)" ] || fail "bash: a second policy offered"

if command -v zsh >/dev/null 2>&1; then
	zsh -n "$zshc" || fail "zsh: the completion does not parse"
else
	echo "# zsh not installed: its file is only checked by grep"
fi

[ $failed -eq 0 ] && echo "ok: completions"
exit $failed
