/* SPDX-License-Identifier: MIT */
/*
 * The process tree without cgroups: the keeper is a child subreaper (PR_SET_CHILD_SUBREAPER),
 * so every process the command starts, including daemons that setsid() and double-fork,
 * stays a descendant of the keeper until it is reaped. The tree is found by walking
 * /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN) down from the keeper.
 */
#include "tracer/internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"

#define TREE_MAX_DEPTH 4096

typedef struct PidVec {
	pid_t *v;
	size_t n, cap;
} PidVec;

static int push(PidVec *pv, pid_t pid)
{
	if (pv->n == pv->cap) {
		size_t cap = pv->cap ? pv->cap * 2 : 64;
		pid_t *n = realloc(pv->v, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		pv->v = n;
		pv->cap = cap;
	}
	pv->v[pv->n++] = pid;
	return 0;
}

/* Appends the children of every thread of pid. */
static int children_of(pid_t pid, PidVec *out)
{
	char path[320], buf[4096];
	struct dirent *de;
	DIR *d;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		_cleanup_close_ int fd = -1;
		ssize_t n;
		char *p, *end;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/children", (int) pid, de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* one read is not enough for a huge list: keep reading */
		for (;;) {
			n = read(fd, buf, sizeof(buf) - 1);
			if (n <= 0)
				break;
			buf[n] = 0;
			for (p = buf;; p = end) {
				long v = strtol(p, &end, 10);

				if (end == p)
					break;
				if (v > 0 && push(out, (pid_t) v) < 0) {
					r = -ENOMEM;
					goto out;
				}
			}
			/* a pid cut at the buffer end: the read continues after it only if the
			 * kernel's seq_file splits on entries, which it does */
		}
	}
out:
	closedir(d);
	return r;
}

int tree_walk(pid_t root, TreeVisit visit, void *userdata)
{
	PidVec stack = {};
	int r;

	r = children_of(root, &stack);
	while (r >= 0 && stack.n > 0) {
		pid_t pid = stack.v[--stack.n];

		r = visit(pid, userdata);
		if (r < 0)
			break;
		r = children_of(pid, &stack);
	}
	free(stack.v);
	return r < 0 ? r : 0;
}

/* Parent and state from /proc/PID/stat; the comm field may contain anything, so parse
 * after the last ')'. */
/* after the name: state ppid pgrp session tty_nr tpgid flags */
static int read_stat_flags(pid_t pid, pid_t *ret_ppid, pid_t *ret_pgrp, char *ret_state,
			   unsigned long *ret_flags)
{
	char buf[1024], *p;
	int ppid, pgrp, r;
	unsigned long flags;
	char state;

	r = proc_read(pid, "stat", buf, sizeof(buf));
	if (r < 0)
		return r;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %d %d %*d %*d %*d %lu", &state, &ppid, &pgrp, &flags) != 4)
		return -EIO;
	if (ret_ppid)
		*ret_ppid = ppid;
	if (ret_pgrp)
		*ret_pgrp = pgrp;
	if (ret_state)
		*ret_state = state;
	if (ret_flags)
		*ret_flags = flags;
	return 0;
}

static int read_stat(pid_t pid, pid_t *ret_ppid, pid_t *ret_pgrp, char *ret_state)
{
	return read_stat_flags(pid, ret_ppid, ret_pgrp, ret_state, NULL);
}

int tree_read_stat(pid_t pid, pid_t *ret_ppid, pid_t *ret_pgrp, char *ret_state)
{
	return read_stat(pid, ret_ppid, ret_pgrp, ret_state);
}

int tree_exiting(pid_t pid)
{
	unsigned long flags;
	int r = read_stat_flags(pid, NULL, NULL, NULL, &flags);

	/* gone, or PF_EXITING */
	if (r == -ENOENT || r == -ESRCH)
		return 1;
	return r < 0 ? r : (flags & 0x00000004) != 0;
}

int tree_contains(pid_t root, pid_t tid, pid_t *ret_tgid)
{
	pid_t pid, ppid;
	int r;

	if (tid <= 0)
		return 0;
	r = proc_read_tgid(tid, &pid);
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	if (ret_tgid)
		*ret_tgid = pid;
	/* Walk up: a process of the tree has the keeper as an ancestor. The keeper is a
	 * subreaper, so a descendant never leaves the tree while alive, and an outside process
	 * cannot move in. */
	for (int depth = 0; depth < TREE_MAX_DEPTH; depth++) {
		if (pid == root)
			return depth > 0;
		if (pid <= 1)
			return 0;
		r = read_stat(pid, &ppid, NULL, NULL);
		if (r < 0)
			return r == -ENOENT ? -ESRCH : r;
		pid = ppid;
	}
	return 0;
}

typedef struct SignalCtx {
	int sig;
	int count;
} SignalCtx;

static int signal_one(pid_t pid, void *userdata)
{
	SignalCtx *c = userdata;
	char state = 0;

	if (read_stat(pid, NULL, NULL, &state) < 0 || state == 'Z' || state == 'X')
		return 0;
	/* The pid comes from its parent's children list a moment ago; it is freed only once
	 * reaped, by a process of the tree or by the keeper, both of which we are killing. */
	if (kill(pid, c->sig) == 0)
		c->count++;
	return 0;
}

int tree_signal_all(pid_t root, int sig)
{
	SignalCtx c = {.sig = sig};
	int r;

	r = tree_walk(root, signal_one, &c);
	if (r < 0)
		return r;
	return c.count;
}

/* Whether the caller has no child at all, alive or a zombie. */
static bool no_children(void)
{
	siginfo_t si;

	return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) < 0 && errno == ECHILD;
}

void tree_kill_all(pid_t root, bool reap)
{
	struct timespec ts = {0, 1000 * 1000};

	/* The caller is the root and a subreaper that reaps (the keeper at the command's end,
	 * S after the keeper's death): with no child of its own the tree is empty, since a
	 * descendant that outlives its parent is reparented to the root before that parent
	 * can be reaped. The walk of /proc (an opendir and a read of each task's children
	 * file) is then not needed: the common end of a run, on its path to the caller. */
	if (reap && root == getpid() && no_children())
		return;

	for (unsigned i = 0;; i++) {
		int n = tree_signal_all(root, SIGKILL);

		if (reap)
			while (waitpid(-1, NULL, WNOHANG | __WALL) > 0)
				;
		if (n == 0) {
			if (!reap)
				return;
			/* zombies not yet reaped? */
			if (waitpid(-1, NULL, WNOHANG | __WALL) < 0 && errno == ECHILD)
				return;
		}
		if (i > 100)
			ts.tv_nsec = 10 * 1000 * 1000;
		(void) nanosleep(&ts, NULL);
	}
}
