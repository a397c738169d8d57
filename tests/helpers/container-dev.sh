#!/bin/sh
# SPDX-License-Identifier: MIT
# container-dev.sh CMD ARGS... : runs CMD with /dev laid out as Docker and containerd lay it
# out (issue 19): a tmpfs with the usual nodes bound from the host, a devpts instance of its
# own at /dev/pts, and /dev/ptmx a symlink to pts/ptmx. Needs root and a mount namespace
# (unshare -m); skips (77) otherwise. CMD is typically tests/helpers/deny-syscalls docker -- T.
set -u
if [ "$(id -u)" != 0 ]; then
	echo "skip: a mount namespace for the container's /dev needs root" >&2
	exit 77
fi
if ! unshare -m true 2>/dev/null; then
	echo "skip: cannot make a mount namespace here" >&2
	exit 77
fi
exec unshare -m --propagation private sh -c '
	set -e
	d=$(mktemp -d /tmp/sbx-ctr-dev.XXXXXX)
	mount -t tmpfs -o mode=755 tmpfs "$d"
	for n in null zero full random urandom tty; do
		touch "$d/$n"
		mount --bind "/dev/$n" "$d/$n"
	done
	mkdir "$d/pts" "$d/shm"
	mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$d/pts"
	ln -s pts/ptmx "$d/ptmx"
	ln -s /proc/self/fd "$d/fd"
	ln -s /proc/self/fd/0 "$d/stdin"
	ln -s /proc/self/fd/1 "$d/stdout"
	ln -s /proc/self/fd/2 "$d/stderr"
	mount --rbind "$d" /dev
	umount -l "$d" 2>/dev/null || true
	rmdir "$d" 2>/dev/null || true
	[ -L /dev/ptmx ] || { echo "container-dev: /dev/ptmx is not a symlink" >&2; exit 125; }
	exec "$@"
' container-dev "$@"
