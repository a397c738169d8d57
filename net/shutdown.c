/* SPDX-License-Identifier: MIT */
#include "net/shutdown.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/missing-seccomp.h"

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

/* The socket inodes shut in one process, so that a table shared by its threads counts once. */
typedef struct Seen {
	unsigned long *inos;
	size_t n, cap;
} Seen;

static bool seen_add(Seen *s, unsigned long ino)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->inos[i] == ino)
			return false;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		unsigned long *n = realloc(s->inos, cap * sizeof(*n));

		if (!n)
			return true; /* shut it again rather than skip it */
		s->inos = n;
		s->cap = cap;
	}
	s->inos[s->n++] = ino;
	return true;
}

/* Shuts the inet sockets of one fd table: dir is /proc/PID/task/TID/fd, pidfd refers to that
 * thread. -errno when a socket is out of reach (EACCES, EPERM). */
static int shut_table(int pidfd, DIR *d, Seen *seen, unsigned *count)
{
	struct dirent *de;

	while ((errno = 0, de = readdir(d))) {
		_cleanup_close_ int fd = -1;
		char link[64];
		ssize_t n;
		int domain = 0, target;
		socklen_t sl = sizeof(domain);
		unsigned long ino = 0;
		char *end;
		long v;

		v = strtol(de->d_name, &end, 10);
		if (*end != '\0' || end == de->d_name || v < 0 || v > INT32_MAX)
			continue;
		target = (int) v;
		/* Cheap filter first: only "socket:[ino]" links are worth a pidfd_getfd(). */
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n < 0) {
			if (errno == ENOENT)
				continue; /* closed since readdir() */
			return -errno;
		}
		link[n] = 0;
		if (sscanf(link, "socket:[%lu]", &ino) != 1)
			continue;
		if (!seen_add(seen, ino))
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
		(*count)++;
	}
	return errno != 0 ? -errno : 0;
}

int net_shutdown_inet_sockets(int pidfd, pid_t pid, unsigned *ret_count)
{
	_cleanup_(closedirp) DIR *tasks = NULL;
	Seen seen = {};
	char path[96];
	unsigned count = 0;
	struct dirent *de;
	int r = 0;

	if (pidfd < 0 || pid <= 0)
		return -EINVAL;
	/* Every thread's table: a thread that called unshare(CLONE_FILES), or was cloned
	 * without CLONE_FILES, has one of its own, which /proc/PID/fd does not show. */
	snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
	tasks = opendir(path);
	if (!tasks)
		return errno == ENOENT ? -ESRCH : -errno;
	while (r == 0 && (errno = 0, de = readdir(tasks))) {
		_cleanup_(closedirp) DIR *d = NULL;
		_cleanup_close_ int tfd = -1;
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end != '\0' || end == de->d_name || tid <= 0 || tid > INT32_MAX)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/fd", (int) pid, tid);
		d = opendir(path);
		if (!d) {
			if (errno == ENOENT)
				continue; /* the thread is gone */
			/* EACCES: a non-dumpable process; its sockets are out of reach */
			r = -errno;
			break;
		}
		if (tid != pid) {
			/* COMPAT: a pidfd of a thread needs PIDFD_THREAD (6.9) */
			tfd = (int) syscall(SYS_pidfd_open, (pid_t) tid, PIDFD_THREAD);
			if (tfd < 0) {
				if (errno == ESRCH)
					continue;
				r = -errno;
				break;
			}
		}
		r = shut_table(tid == pid ? pidfd : tfd, d, &seen, &count);
		if (r == -ESRCH || r == -ENOENT)
			r = 0; /* the thread exited meanwhile */
	}
	if (r == 0 && errno != 0 && !de)
		r = -errno;
	free(seen.inos);
	if (r < 0)
		return r;
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
