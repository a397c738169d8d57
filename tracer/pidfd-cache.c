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
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "emulation/path/view.h"
#include "net/handlers.h"

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

/*
 * COMPAT (pidfd_getfd refused, a container's default seccomp profile; issue 19): an O_PATH
 * reopen of /proc/PID/fd/N. Enough for what the file-system handlers do with it (a directory to
 * resolve from, fstat, the *at calls with AT_EMPTY_PATH, a /proc/self/fd/N reopen checked
 * against the child's fdinfo flags); not for what needs the open file description itself
 * (an inotify instance, a socket: those fail closed).
 * TOCTOU: pid is the caller, blocked in its call, so the number cannot name another task
 * unless the caller was killed meanwhile (SIGKILL is the only way out of a notified call with
 * WAIT_KILLABLE_RECV) and the number reused: ID_VALID after the open rules that out. The fd
 * number may be closed or replaced by another thread of the caller's process between its
 * call and our open: we then act on what the fd names at the time of the open, as the kernel
 * would have if that thread had been a little quicker; the view's checks apply to it all the
 * same (a reopen grants no more than the fd's own access mode, read after the open).
 */
static int get_fd_proc(Tracer *t, pid_t pid, int fd)
{
	int r = child_fd_open(pid, fd, O_PATH);
	struct stat st;

	/* a socket or an inotify instance (an anonymous inode) the supervisor made and keeps:
	 * its own reference, the same open file description (net/socktab.c) */
	if (r >= 0 && fstat(r, &st) == 0 && (S_ISSOCK(st.st_mode) || (st.st_mode & S_IFMT) == 0)) {
		int o = net_child_object_dup(t->net, pid, fd);

		if (o >= 0) {
			(void) close(r);
			r = o;
		}
	}

	if (r >= 0 && tracer_current_notify_fd >= 0) {
		uint64_t id = tracer_current_id;

		if (ioctl(tracer_current_notify_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0) {
			(void) close(r);
			return -ESRCH;
		}
	}
	return r;
}

int tracer_get_fd(void *userdata, pid_t pid, int fd)
{
	if (fd == AT_FDCWD || fd < 0 || pid <= 0)
		return sbx_default_get_fd(userdata, pid, fd);
	if (!pidfd_getfd_usable())
		return get_fd_proc(userdata, pid, fd);
	for (int attempt = 0; attempt < 2; attempt++) {
		bool cached;
		int error = 0;
		PidfdSlot *s = lookup(pid, &cached, &error);
		long r;

		if (!s)
			return error == -EOPNOTSUPP ? sbx_default_get_fd(userdata, pid, fd) : error;
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
