/* SPDX-License-Identifier: MIT */
#include "common/approval-wire.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/util.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5; not in Debian 12's headers */
#endif

static const char *const names[_APPROVAL_MAX] = {"allow_once", "allow_session", "deny"};

const char *approval_decision_to_string(ApprovalDecision d)
{
	return d >= 0 && d < _APPROVAL_MAX ? names[d] : NULL;
}

ApprovalDecision approval_decision_from_string(const char *s)
{
	for (int i = 0; s && i < _APPROVAL_MAX; i++)
		if (streq(s, names[i]))
			return (ApprovalDecision) i;
	return APPROVAL_NONE;
}

/* The parent of pid as /proc/PID/stat says (the fields after the last ')': the name may hold
 * anything); -1 when it cannot be read. */
static pid_t parent_of(pid_t pid)
{
	char buf[512], *p;
	long ppid;

	if (proc_read((int) pid, "stat", buf, sizeof(buf)) < 0)
		return -1;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %ld", &ppid) != 1)
		return -1;
	return (pid_t) ppid;
}

/* Whether the process behind pidfd has not been reaped: while it has not, its pid is not
 * handed to anyone else. A zombie still counts (kill(2) of a zombie succeeds); EPERM means
 * alive but not ours to signal. */
static bool alive(int pidfd)
{
	return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0 || errno == EPERM;
}

bool approval_pid_descends_from(pid_t pid, pid_t ancestor)
{
	for (int depth = 0; depth < 256; depth++) {
		pid_t ppid;

		if (pid == ancestor)
			return true;
		if (pid <= 1)
			return false;
		ppid = parent_of(pid);
		if (ppid < 0)
			return true;
		pid = ppid;
	}
	return true;
}

/*
 * The walk above, anchored at each step to a pidfd, so that no pid in the chain can be a
 * number the kernel has handed to someone else meanwhile. TOCTOU, step by step:
 *  - start: the pidfd names the process that connected (SO_PEERPIDFD: the kernel's record
 *    at connect(2)), not whoever holds its pid number now;
 *  - for the process P behind fd: read P's parent number Q from /proc, then check that P is
 *    still alive — so P's pid was P's during the read, and Q was P's parent then;
 *  - open a pidfd for Q, then read P's parent again and check P alive again. If it is still
 *    Q, the pidfd names P's real parent: had the parent died in between, the kernel would
 *    have moved P to a reaper (its parent number changes) before Q could be reaped and its
 *    number reused.
 * Anything unreadable or dead counts as a descendant (refused), as in the plain walk.
 */
static bool pidfd_descends_from(int start_fd, pid_t pid, pid_t ancestor)
{
	_cleanup_close_ int owned = -1;
	int fd = start_fd;

	for (int depth = 0; depth < 256; depth++) {
		_cleanup_close_ int pfd = -1;
		pid_t ppid;

		if (pid == ancestor)
			return true;
		if (!alive(fd))
			return true;
		if (pid <= 1)
			return false;
		ppid = parent_of(pid);
		if (ppid < 0 || !alive(fd))
			return true;
		if (ppid == ancestor)
			return true;
		if (ppid <= 1)
			return false;
		pfd = (int) syscall(SYS_pidfd_open, ppid, 0);
		if (pfd < 0 || parent_of(pid) != ppid || !alive(fd))
			return true;
		if (owned >= 0)
			close(owned);
		owned = TAKE_FD(pfd);
		fd = owned;
		pid = ppid;
	}
	return true;
}

bool approval_peer_descends_from(int sock, pid_t pid, pid_t ancestor)
{
	int pidfd = -1;
	socklen_t len = sizeof(pidfd);
	bool r;

	if (getsockopt(sock, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) < 0) {
		/* before Linux 6.5 there is no pidfd of the peer: the plain walk, with the window
		 * the header describes */
		if (errno == ENOPROTOOPT)
			return approval_pid_descends_from(pid, ancestor);
		return true; /* ESRCH and the like: the peer is gone, refuse */
	}
	r = pidfd_descends_from(pidfd, pid, ancestor);
	close(pidfd);
	return r;
}

void approval_new_id(const char *prefix, char out[32])
{
	static const char b62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	uint8_t b[24];
	size_t n = 0, pl = strlen(prefix) < 12 ? strlen(prefix) : 12;

	if (getrandom(b, sizeof(b), 0) != sizeof(b))
		for (size_t i = 0; i < sizeof(b); i++)
			b[i] = (uint8_t) (now_monotonic_ns() >> (i % 8));
	memcpy(out, prefix, pl);
	for (size_t i = 0; i < sizeof(b) && n < 16; i++)
		if (b[i] < 248) /* 248 = 4 * 62: no bias */
			out[pl + n++] = b62[b[i] % 62];
	while (n < 16)
		out[pl + n++] = '0';
	out[pl + n] = 0;
}

json_t *approval_read_json(int fd, size_t max, int timeout_ms)
{
	uint64_t deadline =
		timeout_ms < 0 ? UINT64_MAX : now_monotonic_ns() / 1000000 + (uint64_t) timeout_ms;
	char *buf = malloc(max + 1);
	size_t n = 0;
	json_t *j = NULL;

	if (!buf)
		return NULL;
	/* byte by byte up to the newline: what follows belongs to the next message */
	while (n < max) {
		uint64_t now = now_monotonic_ns() / 1000000;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t k;
		int r;

		if (now >= deadline)
			goto out;
		r = poll(&p, 1, deadline == UINT64_MAX ? -1 : (int) MIN(deadline - now, 60000u));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto out;
		if (r == 0)
			continue;
		k = read(fd, buf + n, 1);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			goto out;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = 0;
	j = json_loadb(buf, n, 0, NULL);
	if (!json_is_object(j)) {
		json_decref(j);
		j = NULL;
	}
out:
	free(buf);
	return j;
}

int approval_write_json(int fd, const json_t *j)
{
	char *text = json_dumps(j, JSON_COMPACT);
	int r;

	if (!text)
		return -ENOMEM;
	r = write_all(fd, text, strlen(text));
	if (r >= 0)
		r = write_all(fd, "\n", 1);
	free(text);
	return r < 0 ? r : 0;
}
