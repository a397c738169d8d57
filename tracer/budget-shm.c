/* SPDX-License-Identifier: MIT */
/*
 * The memory budget's count of SysV shared memory (docs/budgets.md, "What the tree holds
 * through its fds"): the helper process that joins the tree's private IPC namespace and
 * answers, at each sample, how many pages its segments hold. The rest of the memory budget
 * (resident pages, memfds) is read by the sample's walk of the tree (budget.c).
 *
 * Its own file because it is the one part of the budgets with a process of its own: made
 * from S at the start (budget_shm_start), asked over a socket by budget_shm_sample() and
 * stopped by budget_shm_done().
 */
#include "tracer/budget.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "common/macros.h"
#include "common/util.h"
#include "policy/policy.h"
#include "tracer/budget-internal.h"
#include "tracer/internal.h"

/* ---- SysV shared memory of the private IPC namespace (issue 24, item 7) ----
 *
 * A segment detached without IPC_RMID keeps its pages in the namespace, in no process's RSS
 * and behind no fd. shmctl(SHM_INFO) tells the resident and swapped pages of every segment
 * of a namespace, but only to a process in it, and the only processes in the tree's are the
 * tree's. So a helper forked from S joins it: setns into C's user namespace (its owner, our
 * user, holds CAP_SYS_ADMIN there; EINVAL when it is ours, in root runs), then into its IPC
 * namespace (ipcns_install asks CAP_SYS_ADMIN over the namespace and in the caller's user
 * namespace: both hold now). It is made as soon as S has C's listener: C is dumpable then
 * (for /proc/C/ns/) and has not exec'd, so nothing of the program has run. It answers one
 * count per sample over a socket, and exits at EOF or with S (PDEATHSIG). Segments also
 * attached are in their processes' RSS too: counted twice (errs high, as a mapped memfd). */
static int shm_helper_start(Budget *b, pid_t pid)
{
	_cleanup_close_ int userfd = -1, ipcfd = -1;
	char path[64];
	pid_t parent = getpid(), h;
	int sv[2];

	snprintf(path, sizeof(path), "/proc/%d/ns/ipc", (int) pid);
	ipcfd = open(path, O_RDONLY | O_CLOEXEC);
	if (ipcfd < 0)
		return -errno;
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int) pid);
	userfd = open(path, O_RDONLY | O_CLOEXEC);
	if (userfd < 0)
		return -errno;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	h = fork();
	if (h < 0) {
		(void) close(sv[0]);
		(void) close(sv[1]);
		return -errno;
	}
	if (h == 0) {
		struct shm_info info;
		uint64_t pages = 0;
		char c;

		/* system calls only from here: S has other threads */
		(void) prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		if (setns(userfd, CLONE_NEWUSER) < 0 && errno != EINVAL)
			_exit(1);
		if (setns(ipcfd, CLONE_NEWIPC) < 0)
			_exit(1);
		/* nothing of S's: no listener, no end of the caller's pipes */
		close_all_but(sv[1], -1);
		/* ready */
		if (send(sv[1], &pages, sizeof(pages), MSG_NOSIGNAL) != (ssize_t) sizeof(pages))
			_exit(1);
		while (read(sv[1], &c, 1) == 1) {
			memset(&info, 0, sizeof(info));
			if (shmctl(0, SHM_INFO, (struct shmid_ds *) (void *) &info) < 0)
				_exit(1);
			pages = (uint64_t) info.shm_rss + (uint64_t) info.shm_swp;
			if (send(sv[1], &pages, sizeof(pages), MSG_NOSIGNAL) !=
			    (ssize_t) sizeof(pages))
				_exit(1);
		}
		_exit(0);
	}
	(void) close(sv[1]);
	b->shm_fd = sv[0];
	b->shm_pid = h;
	return 0;
}

/* One answer of the helper (pages), or -errno; it answers in microseconds, a second without
 * an answer is a failure. */
static int shm_answer(int fd, uint64_t *ret_pages)
{
	struct pollfd pf = {.fd = fd, .events = POLLIN};

	if (poll(&pf, 1, 1000) != 1)
		return -ETIMEDOUT;
	if (recv(fd, ret_pages, sizeof(*ret_pages), 0) != (ssize_t) sizeof(*ret_pages))
		return -EIO; /* it exited: it could not join the namespace */
	return 0;
}

static void shm_fail(Budget *b, int r)
{
	log_warn("the memory budget does not count the run's SysV shared memory: %s", strerror(-r));
	if (b->shm_fd >= 0)
		(void) close(b->shm_fd);
	b->shm_fd = -1;
	b->shm_failed = true;
}

void budget_shm_start(Budget *b, pid_t child)
{
	uint64_t ready;
	int r;

	if (!b->ipc_private || !is_set(b->policy->limits.memory) || b->shm_fd >= 0)
		return;
	r = shm_helper_start(b, child);
	if (r >= 0)
		r = shm_answer(b->shm_fd, &ready);
	if (r < 0)
		shm_fail(b, r);
}

void budget_shm_sample(Budget *b)
{
	uint64_t pages;
	char c = 1;
	int r = 0;

	if (b->shm_fd < 0)
		return;
	if (send(b->shm_fd, &c, 1, MSG_NOSIGNAL) != 1)
		r = -errno;
	if (r >= 0)
		r = shm_answer(b->shm_fd, &pages);
	if (r < 0) {
		shm_fail(b, r);
		return;
	}
	b->shm_bytes = pages * (uint64_t) b->page_size;
}

void budget_shm_done(Budget *b)
{
	if (b->shm_fd >= 0)
		(void) close(b->shm_fd); /* the helper sees EOF and exits at once */
	b->shm_fd = -1;
	/* reaped here, for a caller that runs on (the agent): the main loop's SIGCHLD may
	 * have taken it already (ECHILD) */
	if (b->shm_pid > 0)
		while (waitpid(b->shm_pid, NULL, __WALL) < 0 && errno == EINTR)
			;
	b->shm_pid = 0;
}
