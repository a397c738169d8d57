/* SPDX-License-Identifier: MIT */
/*
 * What one sample reads of the tree (docs/budgets.md): a walk of the children files from
 * the keeper down, with each process's /proc/PID/stat (times for cpu_time, resident pages
 * for memory, threads) and, when memory or disk is set, its fds (memfds, and unlinked
 * files still open in the rw mounts). budget_sample() (budget.c) makes one walk per sample
 * and gives each budget its part of the result.
 *
 * Its own file because the walk is shared by three budgets and knows none of their limits;
 * the tasks budget has its own exact count (budget-tasks.c), which reuses only
 * budget_read_proc_stat().
 */
#include "tracer/budget.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/util.h"
#include "policy/policy.h"
#include "tracer/budget-internal.h"
#include "tracer/internal.h"

/* ---- reading /proc ---- */

int budget_read_proc_stat(pid_t pid, ProcStat *ret)
{
	char buf[1024], *p, *save = NULL, *tok;
	ProcStat s = {};
	int field = 3, r;

	r = proc_read(pid, "stat", buf, sizeof(buf));
	if (r < 0)
		return r;
	/* the comm field may hold anything: fields start after the last ')' */
	p = strrchr(buf, ')');
	if (!p)
		return -EIO;
	for (tok = strtok_r(p + 1, " ", &save); tok && field <= 24;
	     tok = strtok_r(NULL, " ", &save), field++) {
		uint64_t v = strtoull(tok, NULL, 10);

		switch (field) {
		case 3:
			s.state = tok[0];
			break;
		case 4:
			s.ppid = (pid_t) v;
			break;
		case 14:
			s.utime = v;
			break;
		case 15:
			s.stime = v;
			break;
		case 16:
			s.cutime = v;
			break;
		case 17:
			s.cstime = v;
			break;
		case 20:
			s.threads = v;
			break;
		case 24:
			s.rss = v;
			break;
		default:
			break;
		}
	}
	if (field <= 24)
		return -EIO;
	*ret = s;
	return 0;
}

/* ---- what the tree holds through its fds (issue 24, item 7) ----
 *
 * A memfd's pages belong to no process until mapped, so no RSS shows them; a file unlinked
 * while open (or made with O_TMPFILE) takes disk space that no walk of the rw mounts finds.
 * Both are held through fds: every sample lists each process's fds, and counts each such
 * file once (by device and inode) at its allocated size. */
#define FD_SCAN_MAX_FILES 4096

typedef struct FdScan {
	bool memory, disk;
	dev_t *root_devs; /* devices of the rw mounts */
	size_t n_root_devs;
	struct {
		dev_t dev;
		ino_t ino;
	} seen[FD_SCAN_MAX_FILES];
	size_t n_seen;
} FdScan;

static bool fd_scan_new(FdScan *f, const struct stat *st)
{
	for (size_t i = 0; i < f->n_seen; i++)
		if (f->seen[i].dev == st->st_dev && f->seen[i].ino == st->st_ino)
			return false;
	if (f->n_seen < FD_SCAN_MAX_FILES) {
		f->seen[f->n_seen].dev = st->st_dev;
		f->seen[f->n_seen].ino = st->st_ino;
		f->n_seen++;
	}
	return true; /* beyond the cap: counted again rather than missed (errs high) */
}

static void fd_scan_process(FdScan *f, pid_t pid, Sample *s)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int) pid);
	d = opendir(path);
	if (!d)
		return; /* gone, or not dumpable: its RSS still counts */
	while ((de = readdir(d))) {
		char link[PATH_MAX];
		struct stat st;
		bool memfd, deleted;
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		memfd = f->memory && strncmp(link, "/memfd:", 7) == 0;
		deleted = f->disk && !memfd && n > 10 && streq(link + n - 10, " (deleted)");
		if (!memfd && !deleted)
			continue;
		/* follows the magic link to the open file itself */
		if (fstatat(dirfd(d), de->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (memfd) {
			if (fd_scan_new(f, &st))
				s->memfd_bytes += (uint64_t) st.st_blocks * 512;
			continue;
		}
		if (st.st_nlink != 0)
			continue;
		for (size_t i = 0; i < f->n_root_devs; i++)
			if (f->root_devs[i] == st.st_dev) {
				if (fd_scan_new(f, &st))
					s->deleted_bytes += (uint64_t) st.st_blocks * 512;
				break;
			}
	}
	closedir(d);
}

FdScan *budget_fd_scan_new(const Budget *b)
{
	const PolicyLimits *l = &b->policy->limits;
	FdScan *fds = NULL;

	if (is_set(l->memory) || (is_set(l->disk) && b->disk_roots))
		fds = calloc(1, sizeof(*fds));
	if (fds) {
		size_t n_roots = 0;

		fds->memory = is_set(l->memory);
		fds->disk = is_set(l->disk) && b->disk_roots;
		for (char **r = b->disk_roots; r && *r; r++)
			n_roots++;
		fds->root_devs = n_roots ? calloc(n_roots, sizeof(dev_t)) : NULL;
		for (char **r = b->disk_roots; fds->root_devs && r && *r; r++) {
			struct stat st;

			if (stat(*r, &st) == 0)
				fds->root_devs[fds->n_root_devs++] = st.st_dev;
		}
	}
	return fds;
}

void budget_fd_scan_free(FdScan *fds)
{
	if (fds)
		free(fds->root_devs);
	free(fds);
}

/* ---- walking the tree ---- */

typedef struct PidSet {
	pid_t *v;
	size_t n, cap; /* cap is a power of two; 0 = empty slot */
} PidSet;

/* Adds pid; 1 if it was new, 0 if known, -ENOMEM. */
static int pidset_add(PidSet *s, pid_t pid)
{
	size_t i;

	if ((s->n + 1) * 2 > s->cap) {
		PidSet bigger = {.cap = s->cap ? s->cap * 2 : 256};

		bigger.v = calloc(bigger.cap, sizeof(pid_t));
		if (!bigger.v)
			return -ENOMEM;
		for (size_t j = 0; j < s->cap; j++)
			if (s->v[j])
				(void) pidset_add(&bigger, s->v[j]);
		free(s->v);
		*s = bigger;
	}
	for (i = (size_t) pid * 2654435761u & (s->cap - 1); s->v[i]; i = (i + 1) & (s->cap - 1))
		if (s->v[i] == pid)
			return 0;
	s->v[i] = pid;
	s->n++;
	return 1;
}

/* Pushes the pids listed in one /proc/PID/task/TID/children file. */
static int push_children_file(const char *path, pid_t **stack, size_t *n, size_t *cap)
{
	_cleanup_close_ int fd = -1;
	char buf[4096];
	ssize_t k;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* gone */
	/* the kernel's seq_file never splits an entry across reads */
	while ((k = read(fd, buf, sizeof(buf) - 1)) > 0) {
		char *p = buf, *end;

		buf[k] = 0;
		for (;; p = end) {
			long v = strtol(p, &end, 10);

			if (end == p)
				break;
			if (*n == *cap) {
				size_t c = *cap ? *cap * 2 : 256;
				pid_t *nv = realloc(*stack, c * sizeof(pid_t));

				if (!nv)
					return -ENOMEM;
				*stack = nv;
				*cap = c;
			}
			(*stack)[(*n)++] = (pid_t) v;
		}
	}
	return 0;
}

/* Children of every thread of pid, pushed on *stack. A single-threaded process (most of a
 * tree) has one children file: no directory listing. A thread started after its stat was
 * read has no child yet that the tasks budget did not see: creating one needs a clone
 * decision, and those wait for the count (the lock); for the sampled budgets, a child
 * missed is counted at the next sample. */
static int push_children(pid_t pid, uint64_t threads, pid_t **stack, size_t *n, size_t *cap)
{
	char path[96];
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (threads <= 1) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int) pid, (int) pid);
		return push_children_file(path, stack, n, cap);
	}
	snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (r >= 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/children", (int) pid, de->d_name);
		r = push_children_file(path, stack, n, cap);
	}
	closedir(d);
	return r;
}

/*
 * Tasks alive below the keeper. A plain walk can miss a process whose parent exits while
 * the walk is under way: it moves to the keeper (the subreaper) after the keeper's list was
 * read and before its old parent's. Every such move ends in the keeper's list (or, in a pid
 * namespace of the tree's, in its init's, a child of the keeper), so after the walk those
 * lists are read again and any process not seen yet is walked too, until a pass finds
 * nothing new. (A program that makes itself a subreaper can still take
 * orphans out of sight of one count: docs/budgets.md.)
 */
int budget_scan_tree(pid_t keeper, FdScan *fds, bool own_time, Sample *ret)
{
	PidSet seen = {};
	pid_t *stack = NULL;
	size_t n = 0, cap = 0;
	Sample s = {};
	int r = 0;

	for (unsigned pass = 0; pass < 64; pass++) {
		uint64_t before = s.processes;

		r = push_children(keeper, 1, &stack, &n, &cap);
		/* in a pid namespace of the tree's own (tracer/kview.c) orphans go to its init,
		 * a child of the keeper, not to the keeper: the children of the keeper's
		 * children are read again too (known ones are skipped below) */
		for (size_t i = 0, m = n; pass > 0 && r >= 0 && i < m; i++)
			r = push_children(stack[i], 1, &stack, &n, &cap);
		while (r >= 0 && n > 0) {
			pid_t pid = stack[--n];
			ProcStat ps;

			r = pidset_add(&seen, pid);
			if (r <= 0)
				continue; /* known, or out of memory */
			if (budget_read_proc_stat(pid, &ps) < 0)
				continue;
			s.processes++;
			s.tasks += MAX(ps.threads, (uint64_t) 1);
			if (!own_time)
				s.ticks += ps.utime + ps.stime + ps.cutime + ps.cstime;
			else if (!((ps.state == 'Z' || ps.state == 'X') && ps.threads <= 1))
				/* a thread group that ended is the tracer's to count (the leader
				 * stays a zombie after it for a parent that waits); a zombie
				 * leader with threads left is a live group */
				s.ticks += ps.utime + ps.stime;
			s.rss_pages += ps.rss;
			if (fds)
				fd_scan_process(fds, pid, &s);
			r = push_children(pid, ps.threads, &stack, &n, &cap);
		}
		if (r < 0 || s.processes == before)
			break;
	}
	free(stack);
	free(seen.v);
	*ret = s;
	return r < 0 ? r : 0;
}
