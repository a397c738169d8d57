/* SPDX-License-Identifier: MIT */
#include "net/shutdown.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/macros.h"

static int getfd(int pidfd, int targetfd)
{
	/* COMPAT: glibc 2.36 has pidfd_getfd(), older ones do not: use the syscall. */
	return (int) syscall(SYS_pidfd_getfd, pidfd, targetfd, 0);
}

static void closedirp(DIR **d)
{
	if (*d)
		(void) closedir(*d);
}

int net_shutdown_inet_sockets(int pidfd, pid_t pid, unsigned *ret_count)
{
	_cleanup_(closedirp) DIR *d = NULL;
	char path[64];
	unsigned count = 0;
	struct dirent *de;

	if (pidfd < 0 || pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/fd", (int) pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;

	while ((errno = 0, de = readdir(d))) {
		_cleanup_close_ int fd = -1;
		char link[64];
		ssize_t n;
		int domain = 0, target;
		socklen_t sl = sizeof(domain);
		char *end;
		long v;

		v = strtol(de->d_name, &end, 10);
		if (*end != '\0' || end == de->d_name || v < 0 || v > INT32_MAX)
			continue;
		target = (int) v;
		/* Cheap filter first: only "socket:[ino]" links are worth a pidfd_getfd(). */
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n < 0 || (size_t) n < strlen("socket:") || strncmp(link, "socket:", 7) != 0)
			continue;
		fd = getfd(pidfd, target);
		if (fd < 0) {
			if (errno == EBADF)
				continue; /* closed since readdir() */
			return -errno;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &sl) < 0)
			continue;
		if (domain != AF_INET && domain != AF_INET6)
			continue;
		/* Unconnected and listening sockets get it too: inet_shutdown() marks them, so a
		 * later send fails with EPIPE and a listener stops listening. */
		if (shutdown(fd, SHUT_RDWR) < 0 && errno != ENOTCONN)
			continue;
		count++;
	}
	if (errno != 0)
		return -errno;
	if (ret_count)
		*ret_count = count;
	return 0;
}

const char *net_mode_name(NetMode m)
{
	static const char *const names[_NET_MODE_MAX] = {
		[NET_MODE_NONE] = "none",
		[NET_MODE_LOOPBACK] = "loopback",
		[NET_MODE_ALLOWLIST] = "allowlist",
		[NET_MODE_FULL] = "full",
	};

	return m >= 0 && m < _NET_MODE_MAX ? names[m] : NULL;
}

const char *net_ratchet_notice(NetMode new_mode, Sensitivity level, char *buf, size_t size)
{
	static const char *const levels[_SENSITIVITY_MAX] = {
		[SENSITIVITY_NONE] = "an unlabelled",
		[SENSITIVITY_INTERNAL] = "an internal",
		[SENSITIVITY_CONFIDENTIAL] = "a confidential",
		[SENSITIVITY_SECRET] = "a secret",
	};
	const char *mode = net_mode_name(new_mode);
	const char *what = level >= 0 && level < _SENSITIVITY_MAX ? levels[level] : "a sensitive";

	snprintf(buf, size, "sbxtrace: network restricted to %s: %s file was opened\n", mode ?: "?",
		 what);
	return buf;
}
