/* SPDX-License-Identifier: MIT */
/*
 * The file-system handlers fetch a descriptor of the caller (fstat through
 * newfstatat(fd, "", AT_EMPTY_PATH), *at() relative to a directory fd, ...) with
 * pidfd_getfd(). Opening and closing a pidfd for each of those cost two of the 7-11
 * syscalls of such a notification; on a VM where syscall entry dominates the notification
 * path (docs/performance.md) that is a fifth of its cost. Each handler thread therefore keeps
 * the pidfds of its recent callers.
 *
 * Sound because a pidfd names one process for good, never a later one with the same number:
 * the caller (tid) is blocked in its call, so it is alive; a cached pidfd for that number
 * either names it, or names an earlier process that has died, and then pidfd_getfd() fails
 * with ESRCH and the entry is replaced. Thread-local: no lock, and no entry is closed while
 * another thread uses it.
 */
#include "tracer/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "emulation/path/view.h"

#define PIDFD_CACHE_SIZE 16

typedef struct PidfdSlot {
	pid_t pid; /* 0: free */
	int fd;
} PidfdSlot;

static _Thread_local PidfdSlot cache[PIDFD_CACHE_SIZE];
static _Thread_local unsigned next_victim;

static void drop(PidfdSlot *s)
{
	if (s->pid > 0)
		(void) close(s->fd);
	s->pid = 0;
	s->fd = -1;
}

static PidfdSlot *lookup(pid_t pid, bool *ret_cached, int *ret_error)
{
	PidfdSlot *s;
	bool group;
	int fd;

	for (size_t i = 0; i < PIDFD_CACHE_SIZE; i++)
		if (cache[i].pid == pid) {
			*ret_cached = true;
			return &cache[i];
		}
	*ret_cached = false;
	fd = pidfd_open_task(pid, &group);
	if (fd < 0) {
		*ret_error = fd;
		return NULL;
	}
	if (group) {
		/* COMPAT (before 6.9): it names the thread group, not pid: not kept, since a later
		 * task with this number could be of another process (tracer_get_fd() falls back) */
		(void) close(fd);
		*ret_error = -EOPNOTSUPP;
		return NULL;
	}
	s = &cache[next_victim];
	next_victim = (next_victim + 1) % PIDFD_CACHE_SIZE;
	drop(s);
	s->pid = pid;
	s->fd = fd;
	return s;
}

int tracer_get_fd(void *ctx, pid_t pid, int fd)
{
	if (fd == AT_FDCWD || fd < 0 || pid <= 0)
		return sbx_default_get_fd(ctx, pid, fd);
	for (int attempt = 0; attempt < 2; attempt++) {
		bool cached;
		int error = 0;
		PidfdSlot *s = lookup(pid, &cached, &error);
		long r;

		if (!s)
			return error == -EOPNOTSUPP ? sbx_default_get_fd(ctx, pid, fd) : error;
		r = syscall(SYS_pidfd_getfd, s->fd, fd, 0);
		if (r >= 0)
			return (int) r; /* pidfd_getfd sets O_CLOEXEC on the new fd */
		if (errno == ESRCH && cached) {
			/* an earlier process with this number: forget it, open the caller's */
			drop(s);
			continue;
		}
		return -errno;
	}
	return -ESRCH;
}

void tracer_pidfd_cache_flush(void)
{
	for (size_t i = 0; i < PIDFD_CACHE_SIZE; i++)
		drop(&cache[i]);
}
