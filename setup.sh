#!/usr/bin/env bash
# One command for a fresh Debian 12 machine: installs what is missing (with sudo when not
# root), builds sbxtrace into ./build, and runs a real command inside the `standard` preset.
#   ./setup.sh            install + build + demo
#   SBX_NO_INSTALL=1 ./setup.sh   skip the package step
set -euo pipefail
cd "$(dirname "$0")"

PKGS=(meson ninja-build pkg-config gcc libc6-dev libseccomp-dev libunwind-dev libcapstone-dev
      libjansson-dev libmicrohttpd-dev nettle-dev scdoc python3 git clang libclang-rt-14-dev)

if [ -z "${SBX_NO_INSTALL:-}" ]; then
	missing=()
	for p in "${PKGS[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		SUDO=
		[ "$(id -u)" -eq 0 ] || SUDO=sudo
		echo "setup: installing ${missing[*]}"
		$SUDO apt-get update -qq
		DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
	fi
fi

werror=false
[ -n "${CI:-}" ] && werror=true
if [ ! -f build/build.ninja ]; then
	meson setup build -Dwerror=$werror
fi
ninja -C build -j"$(nproc)"

demo_ws=$(mktemp -d)
trap 'rm -rf "$demo_ws"' EXIT
echo 'print("hello from", __import__("os").getcwd())' > "$demo_ws/hello.py"
echo "setup: running a command in the sandbox (preset 'standard', workspace $demo_ws):"
./build/cli/sbxtrace run -w "$demo_ws" standard -- /bin/sh -c 'echo "inside the sandbox: $(ls / | tr "\n" " ")"; python3 /workspace/hello.py'
