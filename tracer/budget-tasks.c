/* SPDX-License-Identifier: MIT */
/*
 * The tasks budget (docs/budgets.md, "tasks is exact"): every clone, fork and vfork of the
 * tree is decided here, on registers only (go on, or EAGAIN as RLIMIT_NPROC answers), at a
 * seccomp stop of the tracer thread or a notification (budget_filter_apply() in budget.c
 * routes them). The decision holds an upper bound of the tasks alive plus the clones let
 * through, and counts the tree again, exactly, only when that bound does not fit.
 *
 * Its own file because, unlike the sampled budgets, it is decided at each call, from any
 * thread, under the budget's lock, and needs its own count of the tree (a numeric scan of
 * /proc) rather than the sample's walk of the children files.
 */
#include "tracer/budget.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macros.h"
#include "common/util.h"
#include "policy/policy.h"
#include "tracer/budget-internal.h"
#include "tracer/internal.h"

/*
 * The exact count for the tasks budget. The children files cannot give it: the kernel
 * documents /proc/PID/task/TID/children as exact only when the parent and its children
 * are stopped; between two entries of one read it resumes after the last pid printed, and
 * when that child has exited (or moved to a reaper) it resumes by position, skipping as
 * many siblings as left the list before it (fs/proc/array.c): under a fork bomb a live
 * process can be missed, and a subreaper in the tree can take orphans out of sight.
 *
 * Instead: every process of the host, by a readdir of /proc (positioned by pid number, so
 * exits do not shift it), with its parent and thread count from /proc/PID/stat, and the
 * tree is the set whose ancestry reaches the keeper. No process of the tree can be created
 * while this runs (every clone waits for the lock we hold; those already let through are
 * the reservations, counted apart). A process whose parent is not in the map had its
 * parent exit during the scan: it has been reparented by the time the parent is gone from
 * /proc, so it is read again until its parent is known. Orphans go to the nearest
 * subreaper above them, the keeper or one inside the tree, so a subreaper in the tree is
 * covered. The cost is one stat read per process of the host, paid only when the cheap
 * bound does not fit (docs/budgets.md).
 */
typedef struct ProcNode {
	pid_t pid, ppid;
	uint64_t threads;
	int state; /* 0 unknown, 1 in the tree, 2 not, 3 being resolved, 4 parent unknown */
} ProcNode;

static int node_cmp(const void *a, const void *b)
{
	pid_t x = ((const ProcNode *) a)->pid, y = ((const ProcNode *) b)->pid;

	return (x > y) - (x < y);
}

static ProcNode *node_find(ProcNode *v, size_t n, pid_t pid)
{
	ProcNode key = {.pid = pid};

	return bsearch(&key, v, n, sizeof(*v), node_cmp);
}

/* Whether v[i] descends from keeper; 4 when an ancestor's parent is not in the map. */
static int node_resolve(ProcNode *v, size_t n, size_t i, pid_t keeper)
{
	ProcNode *chain[64];
	size_t depth = 0;
	int st;

	for (ProcNode *x = &v[i];;) {
		ProcNode *parent;

		if (x->state != 0 && x->state != 3) {
			st = x->state;
			break;
		}
		if (x->state == 3 || depth == ARRAY_SIZE(chain)) {
			/* a loop (pid reuse mid-scan) or a very deep tree: resolve the rest
			 * from the bottom on the next call, counting this one in */
			st = x->state == 3 ? 4 : 0;
			if (st == 0) {
				/* deep: resolve the top part first, then come back */
				st = node_resolve(v, n, (size_t) (x - v), keeper);
			}
			break;
		}
		x->state = 3;
		chain[depth++] = x;
		if (x->ppid == keeper) {
			st = 1;
			break;
		}
		if (x->ppid <= 1) {
			st = 2;
			break;
		}
		parent = node_find(v, n, x->ppid);
		if (!parent) {
			st = 4;
			break;
		}
		x = parent;
	}
	while (depth > 0)
		chain[--depth]->state = st;
	return st;
}

static int node_push(ProcNode **v, size_t *n, size_t *cap, pid_t pid, const ProcStat *ps)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 512;
		ProcNode *nv = realloc(*v, c * sizeof(ProcNode));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = (ProcNode){.pid = pid, .ppid = ps->ppid, .threads = ps->threads};
	return 0;
}

static int count_tree_exact(pid_t keeper, uint64_t *ret_tasks)
{
	_cleanup_free_ ProcNode *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	uint64_t tasks = 0;
	DIR *d;
	int r = 0;

	d = opendir("/proc");
	if (!d)
		return -errno;
	while (r >= 0 && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		ProcStat ps;

		if (end == de->d_name || *end || pid <= 1 || pid == keeper)
			continue;
		if (budget_read_proc_stat((pid_t) pid, &ps) < 0)
			continue; /* gone */
		r = node_push(&v, &n, &cap, (pid_t) pid, &ps);
	}
	closedir(d);
	if (r < 0)
		return r;

	for (unsigned round = 0;; round++) {
		bool again = false;

		qsort(v, n, sizeof(*v), node_cmp);
		for (size_t i = 0; i < n; i++)
			v[i].state = v[i].state == 1 || v[i].state == 2 ? v[i].state : 0;
		for (size_t i = 0; i < n; i++)
			(void) node_resolve(v, n, i, keeper);
		for (size_t i = 0, m = n; i < m; i++) {
			ProcStat ps;

			if (v[i].state != 4 || round >= 16)
				continue;
			/* its parent (or an ancestor's) left during the scan: read the one whose
			 * parent is missing again */
			if (budget_read_proc_stat(v[i].pid, &ps) < 0) {
				v[i].state = 2; /* gone since */
				continue;
			}
			if (ps.ppid != v[i].ppid) {
				v[i].ppid = ps.ppid;
				v[i].threads = ps.threads;
				again = true;
			} else if (!node_find(v, m, ps.ppid) && ps.ppid > 1 && ps.ppid != keeper &&
				   budget_read_proc_stat(ps.ppid, &ps) == 0) {
				/* the parent appeared after its number was passed */
				r = node_push(&v, &n, &cap, v[i].ppid, &ps);
				if (r < 0)
					return r;
				again = true;
			}
		}
		if (!again)
			break;
		/* a node whose ancestry changed is resolved again; the rest keep their state */
		for (size_t i = 0; i < n; i++)
			if (v[i].state == 4)
				v[i].state = 0;
	}
	/* in the tree, or still unresolved after every retry: counted (never under-count) */
	for (size_t i = 0; i < n; i++)
		if (v[i].state == 1 || v[i].state == 4)
			tasks += MAX(v[i].threads, (uint64_t) 1);
	*ret_tasks = tasks;
	return 0;
}

int budget_count_tasks(pid_t keeper, uint64_t *ret_tasks)
{
	return count_tree_exact(keeper, ret_tasks);
}

/* Whether tid's clone that we let through may still be under way: it is while the thread
 * is still in that syscall (/proc/TID/syscall names it) or running (then unknown). There is
 * no age limit: a thread can sit in clone (preempted, or restarted by a signal and queued
 * for a new decision) for longer than any fixed delay on a loaded machine, and releasing
 * it then let a fork bomb reach tasks + 1. A reservation held too long only makes the
 * count err high; it goes when the thread makes another call, blocks, or exits. */
static bool reservation_pending(const BudgetReservation *r)
{
	char buf[128];
	int n;

	n = proc_read(r->tid, "syscall", buf, sizeof(buf));
	if (n < 0) /* gone: released; unreadable: keep */
		return n != -ENOENT && n != -ESRCH;
	if (strncmp(buf, "running", 7) == 0)
		return true;
	return strtol(buf, NULL, 10) == r->nr;
}

/*
 * The decision is exact where it matters and cheap elsewhere: `bound` is an upper bound of
 * the tasks alive plus the clones in flight (a count of the tree plus every clone allowed
 * since; exits only lower the truth). While bound + 1 fits, a clone is allowed without
 * looking at /proc. Otherwise the tree is counted again, exactly: the tasks seen plus the
 * clones let through whose thread may still be in that call (a child is not visible until
 * its parent's clone has linked it).
 */
int budget_handle_clone(const EmuRequest *req, EmuDecision *d)
{
	Tracer *t = tracer_of_request(req);
	Budget *b = t->budget;
	uint64_t now = now_monotonic_ns(), limit = req->policy->limits.tasks, tasks = 0;
	size_t kept = 0;

	/* Register-only decision: the flags (namespace flags are denied in the filter) and
	 * the caller's identity; nothing read from its memory, so CONTINUE is safe. */
	pthread_mutex_lock(&b->lock);
	if (b->bound_valid && b->bound + 1 <= limit && b->n_res < BUDGET_MAX_RESERVATIONS)
		goto allow;

	for (size_t i = 0; i < b->n_res; i++) {
		/* a thread making a new call has returned from its earlier clone */
		if (b->res[i].tid == req->pid || !reservation_pending(&b->res[i]))
			continue;
		b->res[kept++] = b->res[i];
	}
	b->n_res = kept;
	if (count_tree_exact(t->keeper, &tasks) < 0) {
		b->bound_valid = false;
		pthread_mutex_unlock(&b->lock);
		return -ENOMEM; /* fails the call closed */
	}
	b->bound = tasks + b->n_res;
	b->bound_valid = true;
	b->tasks_peak = MAX(b->tasks_peak, tasks);
	b->scans++;
	if (b->bound + 1 > limit || b->n_res >= BUDGET_MAX_RESERVATIONS) {
		b->clones_denied++;
		pthread_mutex_unlock(&b->lock);
		d->verdict = EMU_FAIL;
		d->error = EAGAIN;
		d->why = "tasks budget";
		return 0;
	}
allow:
	b->res[b->n_res++] = (BudgetReservation){.tid = req->pid, .nr = req->nr, .when_ns = now};
	b->bound++;
	pthread_mutex_unlock(&b->lock);
	d->verdict = EMU_CONTINUE;
	return 0;
}

void budget_clone_done(Budget *b, pid_t tid)
{
	size_t kept = 0;

	pthread_mutex_lock(&b->lock);
	for (size_t i = 0; i < b->n_res; i++)
		if (b->res[i].tid != tid)
			b->res[kept++] = b->res[i];
	b->n_res = kept;
	pthread_mutex_unlock(&b->lock);
}
