/* SPDX-License-Identifier: MIT */
/*
 * A private network namespace for the command (network.unshare; docs/network.md "Network
 * namespace"). In mode "none", a second layer under the supervisor's socket checks: even a
 * socket call that reached the kernel unchecked (a bug) finds only a loopback interface that
 * is down, and abstract unix sockets of the host are out of reach. In mode "loopback" (only
 * with unshare = true: the tree then cannot reach the host's loopback services) C brings
 * `lo` up while it still holds CAP_NET_ADMIN over the namespace (tracer_netns_lo_up()), so
 * the tree's own listeners work, and nothing else is reachable: with the view in the kernel
 * that lets the address calls run in the kernel unnotified (tracer/filter.c,
 * net_runs_in_kernel(); docs/network.md "Loopback in a namespace of its own").
 *
 * Root makes the namespace directly (CAP_SYS_ADMIN). A plain user needs a user namespace
 * for it: the command's uid and gid are mapped to themselves, so getuid() and the owners of
 * the files it creates are unchanged. Inside that user namespace the command holds every
 * capability until C drops them all right after (drop_capabilities(), then no_new_privs,
 * then the filter, which denies unshare, setns, mount and clone's namespace flags), and
 * capabilities there never reach objects of the host's namespaces (the mount namespace is
 * the host's, owned by the initial user namespace). The supervisor, in the parent user
 * namespace with the same effective uid, owns the new one: ptrace, process_vm_readv and
 * pidfd_getfd of the command keep working.
 */
#include "tracer/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* Async-signal-safe enough for a vfork child: open, write, close, no allocation. */
static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	if (n < 0) {
		n = -errno;
		(void) close(fd);
		return (int) n;
	}
	(void) close(fd);
	return (size_t) n == strlen(text) ? 0 : -EIO;
}

int tracer_userns_enter(int also, bool *ret_entered)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	char map[64];
	int r;

	if (unshare(CLONE_NEWUSER | also) < 0)
		return -errno;
	if (ret_entered)
		*ret_entered = true;
	/* /proc/self/{uid,gid}_map of a non-dumpable process (C inherits S's setting) belong to
	 * root: open(O_WRONLY) would fail with EACCES. C makes itself dumpable before its
	 * filter anyway (tracer/launch.c); this only does it a few calls earlier. */
	if (prctl(PR_SET_DUMPABLE, 1) < 0)
		return -errno;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned) uid, (unsigned) uid);
	r = write_file("/proc/self/uid_map", map);
	if (r < 0)
		return r;
	/* gid_map of an unprivileged writer needs setgroups denied first */
	r = write_file("/proc/self/setgroups", "deny\n");
	if (r < 0 && r != -ENOENT)
		return r;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned) gid, (unsigned) gid);
	return write_file("/proc/self/gid_map", map);
}

int tracer_netns_enter(bool *ret_userns)
{
	if (unshare(CLONE_NEWNET) == 0)
		return 0; /* root, or already in a user namespace of ours (tracer/kview.c) */
	if (errno != EPERM)
		return -errno;
	return tracer_userns_enter(CLONE_NEWNET, ret_userns);
}

int tracer_netns_lo_up(void)
{
	struct ifreq ifr = {};
	int fd, r = 0;

	/* SIOCSIFFLAGS on any socket of the namespace (dev_ifsioc(), CAP_NET_ADMIN over the
	 * namespace's user namespace: root's, or the one C made and still holds every
	 * capability in). A new namespace's lo has 127.0.0.1/8 and ::1 already, routes come
	 * with IFF_UP. No netlink: one ioctl, async-signal-safe, in the vfork child. */
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		r = -errno;
	else if (!(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
			r = -errno;
	}
	(void) close(fd);
	return r;
}

bool tracer_netns_possible(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return false;
	if (pid == 0)
		_exit(tracer_netns_enter(NULL) == 0 ? 0 : 1);
	if (waitpid(pid, &status, 0) < 0)
		return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
