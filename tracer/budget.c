/* SPDX-License-Identifier: MIT */
/*
 * Budgets for the whole tree without cgroups (docs/budgets.md says what each guarantees).
 *
 *   cpu_time   with the tracer thread (tracer.ptrace on; "auto" turns it on for cpu_time):
 *              the own utime+stime of every live process of the tree, sampled, plus the
 *              time of every thread group that ended, added when it ended. Every process
 *              is traced, so its end is reported to the tracer thread before anyone can
 *              reap it, also when its parent ignores SIGCHLD or set SA_NOCLDWAIT (the
 *              kernel then reaps it right after the tracer: kernel/exit.c, wait_task_zombie
 *              with ptrace_reparented, EXIT_TRACE, then do_notify_parent). There the tracer
 *              reads it with WNOWAIT (budget_task_ended). No cutime anywhere, so a child
 *              waited for is counted once. CLONE_UNTRACED is refused (budget_filter_apply).
 *              Without the tracer (tracer.ptrace = "never"): sum of utime+stime+cutime+
 *              cstime of every live process plus the keeper's cutime+cstime; a child's time
 *              reaches its parent's cutime only when the parent waits for it, so a child
 *              the kernel reaps (SIGCHLD ignored, SA_NOCLDWAIT) that lives less than a
 *              sample interval is not counted. That cannot be refused soundly (the
 *              sigaction struct is in the caller's memory, rt_sigaction cannot be emulated,
 *              and SA_NOCLDWAIT is not in /proc): `check` and the run say so instead.
 *              Backstop: RLIMIT_CPU per process.
 *   memory     sampled: sum of resident pages (/proc/PID/stat rss) of the tree, plus the
 *              memfds it holds open and the SysV shared memory of its private IPC namespace
 *              (a helper in that namespace asks SHM_INFO). Shared pages count once per
 *              process (over-count, never under-count). Backstop:
 *              RLIMIT_DATA per process (not RLIMIT_AS: Go, Node and the JVM reserve far
 *              more address space than they use).
 *   tasks      exact at creation: clone/fork/vfork stop for the tracer thread (notified
 *              when ptrace is off); the decision depends on registers only (go on or
 *              EAGAIN), counted against the live tasks plus the clones already let through
 *              and not yet visible.
 *   disk       sampled: allocated bytes under the rw mount sources minus their usage at the
 *              start; RLIMIT_FSIZE = min(file_size, disk) stops a single file at once. *
 * This file is what the budgets share: the Budget object, its start and end, the rlimits set
 * in the command, the sample the main loop calls (its order, its timer, the breach
 * messages) and the filter's routing. Each kind has a file of its own (issue #22, item 3):
 * budget-sample.c (one sample's walk of the tree, for cpu_time, memory and disk),
 * budget-cpu.c, budget-shm.c (memory: the SysV shared memory helper), budget-disk.c and
 * budget-tasks.c; budget-internal.h is what they share.
 */
#include "tracer/budget.h"

#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/util.h"
#include "policy/policy.h"
#include "tracer/budget-internal.h"
#include "tracer/internal.h"

/* Sampling is adaptive: the next sample comes when the budget could be used up at the
 * fastest rate the tree can consume it, between TICK_MIN_MS and TICK_MAX_MS, and never
 * sooner than SAMPLE_COST_FACTOR times what the last sample cost (docs/budgets.md). */
#define TICK_MIN_MS	   10
#define TICK_MAX_MS	   250
#define SAMPLE_COST_FACTOR 10
/* Resident memory grows at most this fast per CPU (first touch of anonymous pages, 4 KiB
 * faults; measured ~3 GiB/s here, with room for faster machines) */
#define FAULT_BYTES_PER_S_PER_CPU (UINT64_C(8) << 30)

void budget_format_size(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double) bytes;
	size_t u = 0;

	while (v >= 1024.0 && u + 1 < ARRAY_SIZE(units)) {
		v /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%lluB", (unsigned long long) bytes);
	else if (v == (double) (uint64_t) v)
		snprintf(buf, size, "%llu%s", (unsigned long long) v, units[u]);
	else
		snprintf(buf, size, "%.1f%s", v, units[u]);
}

static void format_ms(uint64_t ms, char *buf, size_t size)
{
	if (ms % 1000 == 0)
		snprintf(buf, size, "%llus", (unsigned long long) (ms / 1000));
	else
		snprintf(buf, size, "%.2fs", (double) ms / 1000.0);
}

/* ---- setup ---- */

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * S holds descriptors for the tree's calls that wait: per connect, a duplicate of the socket
 * and the checked name's parent (a unix path); where pidfd_getfd is refused, the tree's own
 * sockets. Up to TRACER_MAX_WORKERS calls can wait at once, which passes 1024, the usual soft
 * RLIMIT_NOFILE (it exists for select(), which nothing here uses): 186 of 520 waiting connects
 * failed for a plain user before this. So S's soft limit goes up to its hard one, once per
 * process, and C gives the tree the soft limit S had (budget_child_setup()), so that the
 * tree sees what it would natively. Returns that limit.
 */
static rlim_t nofile_native = RLIM_INFINITY;

static void raise_nofile_once(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	nofile_native = rl.rlim_cur;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void) setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static uint64_t raise_own_nofile(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	(void) pthread_once(&once, raise_nofile_once);
	return nofile_native;
}

int budget_init(Budget *b, const Policy *p, const SbxView *view, bool disk_walk_later)
{
	const PolicyLimits *l = &p->limits;

	*b = (Budget){
		.policy = p,
		.rl_fsize = RLIM_INFINITY,
		.rl_nofile = RLIM_INFINITY,
		.rl_cpu_s = RLIM_INFINITY,
		.rl_data = RLIM_INFINITY,
		.memory_hard = UINT64_MAX,
		.disk_ifd = -1,
		.shm_fd = -1,
	};
	pthread_mutex_init(&b->lock, NULL);
	pthread_mutex_init(&b->disk_lock, NULL);
	b->nofile_native = raise_own_nofile();
	b->clk_tck = sysconf(_SC_CLK_TCK);
	if (b->clk_tck <= 0)
		b->clk_tck = 100;
	b->ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (is_set(l->cpus)) {
		b->cpus = l->cpus;
		if (b->ncpus > 0 && (uint64_t) b->ncpus > l->cpus)
			b->ncpus = (long) l->cpus;
	}
	b->page_size = sysconf(_SC_PAGESIZE);
	if (b->page_size <= 0)
		b->page_size = 4096;

	if (is_set(l->file_size))
		b->rl_fsize = l->file_size;
	if (is_set(l->disk))
		b->rl_fsize = min_u64(b->rl_fsize, l->disk);
	/* The kernel's answer to a write past RLIMIT_FSIZE is SIGXFSZ, whose default action
	 * kills: ignored, the write fails with EFBIG, which a program can handle. */
	b->ignore_sigxfsz = b->rl_fsize != RLIM_INFINITY;
	if (is_set(l->open_files))
		b->rl_nofile = l->open_files;
	if (is_set(l->cpu_time_ms)) {
		/* a backstop for one process; the tree-wide sum is sampled. One second more
		 * than the budget, so the sampler, not SIGXCPU, normally ends the run. */
		b->rl_cpu_s = (l->cpu_time_ms + 999) / 1000 + 1;
		b->tick_ms = TICK_MIN_MS;
	}
	if (is_set(l->memory)) {
		/* RLIMIT_DATA counts writable private mappings (brk, anonymous mmap, thread
		 * stacks) by address space, not residency: twice the budget (at least 256 MiB
		 * more) leaves room for reserved-but-untouched stacks and arenas while still
		 * stopping one process that runs away during the grace period. */
		b->rl_data = l->memory + MAX(l->memory, (uint64_t) 256 << 20);
		b->memory_hard = l->memory + MAX(l->memory / 4, (uint64_t) 32 << 20);
		b->tick_ms = TICK_MIN_MS;
	}
	if (is_set(l->disk)) {
		int r = budget_disk_init(b, p, view);

		if (r < 0)
			return r;
		if (!disk_walk_later)
			budget_disk_baseline(b);
	}
	return 0;
}

void budget_done(Budget *b)
{
	budget_shm_done(b);
	budget_disk_done(b);
	pthread_mutex_destroy(&b->disk_lock);
	pthread_mutex_destroy(&b->lock);
}

static void child_limit(int res, uint64_t cur, uint64_t max)
{
	struct rlimit rl;

	if (cur == RLIM_INFINITY || getrlimit(res, &rl) < 0)
		return;
	/* never raise: only lower */
	if (rl.rlim_max == RLIM_INFINITY || max < rl.rlim_max)
		rl.rlim_max = max;
	rl.rlim_cur = MIN(rl.rlim_max, (rlim_t) cur);
	(void) setrlimit(res, &rl);
}

bool budget_pin_cpus(const Budget *b)
{
	/* the first `cpus` CPUs we may run on; advisory: the program may widen it again with
	 * sched_setaffinity(0, …) (docs/budgets.md) */
	cpu_set_t set, keep;
	uint64_t n = 0;

	if (!b || b->cpus == 0 || sched_getaffinity(0, sizeof(set), &set) < 0)
		return false;
	CPU_ZERO(&keep);
	for (int c = 0; c < CPU_SETSIZE && n < b->cpus; c++)
		if (CPU_ISSET(c, &set)) {
			CPU_SET(c, &keep);
			n++;
		}
	return n > 0 && sched_setaffinity(0, sizeof(keep), &keep) == 0;
}

void budget_child_setup(const Budget *b)
{
	(void) budget_pin_cpus(b);
	child_limit(RLIMIT_FSIZE, b->rl_fsize, b->rl_fsize);
	if (b->rl_nofile != RLIM_INFINITY) {
		child_limit(RLIMIT_NOFILE, b->rl_nofile, b->rl_nofile);
	} else if (b->nofile_native != RLIM_INFINITY) {
		/* the soft limit S had before raising its own (raise_own_nofile()) */
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > b->nofile_native) {
			rl.rlim_cur = (rlim_t) b->nofile_native;
			(void) setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	/* SIGXCPU at the soft limit, SIGKILL at the hard one */
	child_limit(RLIMIT_CPU, b->rl_cpu_s,
		    b->rl_cpu_s == RLIM_INFINITY ? RLIM_INFINITY : b->rl_cpu_s + 1);
	child_limit(RLIMIT_DATA, b->rl_data, b->rl_data);
	if (b->ignore_sigxfsz)
		(void) signal(SIGXFSZ, SIG_IGN);
}

static uint64_t clamp_tick(uint64_t ms)
{
	return MIN(MAX(ms, (uint64_t) TICK_MIN_MS), (uint64_t) TICK_MAX_MS);
}

/* When the next sample is due: the soonest any budget could run out at full speed. */
static uint64_t next_tick(const Budget *b, uint64_t cost_ns)
{
	const PolicyLimits *l = &b->policy->limits;
	uint64_t next = TICK_MAX_MS, cpus = (uint64_t) MAX(b->ncpus, 1L);

	if (is_set(l->memory)) {
		uint64_t room = l->memory > b->memory ? l->memory - b->memory : 0;

		next = MIN(next, clamp_tick(room * 1000 / (FAULT_BYTES_PER_S_PER_CPU * cpus)));
	}
	if (is_set(l->cpu_time_ms)) {
		uint64_t room = l->cpu_time_ms > b->cpu_ms ? l->cpu_time_ms - b->cpu_ms : 0;

		next = MIN(next, clamp_tick(room / cpus));
	}
	if (b->disk_roots) {
		uint64_t now = now_monotonic_ns();
		uint64_t due = b->disk_next_ns > now ? (b->disk_next_ns - now) / 1000000 : 0;

		next = MIN(next, clamp_tick(due));
	}
	return MAX(next, cost_ns * SAMPLE_COST_FACTOR / 1000000);
}

uint64_t budget_next_ms(const Budget *b)
{
	return b->next_ms ? b->next_ms : b->tick_ms;
}

const char *budget_sample(Budget *b, pid_t keeper, char *msg, size_t size)
{
	const PolicyLimits *l = &b->policy->limits;
	uint64_t t0 = now_monotonic_ns(), cpu_ms, ended_us;
	Sample s = {};
	const char *breach = NULL;
	char lim[32], got[32];
	FdScan *fds = budget_fd_scan_new(b);
	/* the ended groups first: a group that ends during the scan is then missed by both
	 * (the total errs low until the next sample), never counted twice */
	ended_us = b->cpu_by_ends ? atomic_load(&b->cpu_ended_us) : 0;
	(void) budget_scan_tree(keeper, fds, b->cpu_by_ends, &s);
	budget_fd_scan_free(fds);
	cpu_ms = budget_cpu_sample(b, keeper, s.ticks, ended_us);
	budget_shm_sample(b);
	b->memory = s.rss_pages * (uint64_t) b->page_size + s.memfd_bytes + b->shm_bytes;
	b->memory_peak = MAX(b->memory_peak, b->memory);
	pthread_mutex_lock(&b->lock);
	b->tasks_peak = MAX(b->tasks_peak, s.tasks);
	pthread_mutex_unlock(&b->lock);
	b->processes = s.processes;

	budget_disk_sample(b, keeper, s.deleted_bytes);

	if (is_set(l->memory) && b->memory > l->memory) {
		budget_format_size(l->memory, lim, sizeof(lim));
		budget_format_size(b->memory, got, sizeof(got));
		snprintf(msg, size, "memory limit of %s reached: %s resident in %llu processes",
			 lim, got, (unsigned long long) s.processes);
		breach = "memory";
	} else if (is_set(l->cpu_time_ms) && cpu_ms > l->cpu_time_ms) {
		format_ms(l->cpu_time_ms, lim, sizeof(lim));
		format_ms(cpu_ms, got, sizeof(got));
		snprintf(msg, size, "cpu_time limit of %s reached: the tree used %s of CPU", lim,
			 got);
		breach = "cpu_time";
	} else if (is_set(l->disk) && b->disk_used > l->disk + budget_disk_slack(l->disk)) {
		budget_format_size(l->disk, lim, sizeof(lim));
		budget_format_size(b->disk_used, got, sizeof(got));
		snprintf(msg, size, "disk limit of %s reached: %s written into the rw mounts", lim,
			 got);
		breach = "disk";
	}
	b->samples++;
	b->sample_ns_total += now_monotonic_ns() - t0;
	b->next_ms = next_tick(b, now_monotonic_ns() - t0);
	return breach;
}

bool budget_hard_exceeded(const Budget *b)
{
	return b->memory > b->memory_hard;
}

/* ---- routing in the filter (cpu_time, disk, tasks) ---- */

void budget_filter_apply(TracerFilter *f, const Policy *p)
{
	for (int nr = 0; nr < TRACER_NR_MAX; nr++) {
		TracerSlot *s = &f->slots[nr];
		unsigned flags = s->entry ? s->entry->flags : 0;

		/* cpu_time counts the ends the tracer thread sees (budget_task_ended): a process
		 * made with CLONE_UNTRACED would not be traced, and its time lost if the kernel
		 * reaps it (the rows flagged SYSCALL_UNTRACED: clone) */
		if ((flags & SYSCALL_UNTRACED) && f->ptrace && is_set(p->limits.cpu_time_ms))
			s->untraced_denied = true;
		/* The kernel checks RLIMIT_FSIZE (min(file_size, disk), 0 once the budget is used
		 * up) against a file's new size only: fallocate() with KEEP_SIZE, or within a
		 * sparse file's size, allocates any amount past it in one call, long before a
		 * walk sees it (tests/security/disk-fallocate-budget.c). Register-only: the modes
		 * that may allocate fail with EOPNOTSUPP, the kernel's answer where a file system
		 * has no fallocate (the rows flagged SYSCALL_DISK). */
		if ((flags & SYSCALL_DISK) && is_set(p->limits.disk) && s->special == SLOT_PLAIN &&
		    !s->kill && s->deny_error <= 0)
			s->special = SLOT_FALLOCATE;
		/* the calls that create a task (SYSCALL_TASKS: clone, fork, vfork). A policy that
		 * denies or kills one keeps that; one that logs it gets it logged at the budget's
		 * decision (s->log stays) */
		if (!(flags & SYSCALL_TASKS) || !is_set(p->limits.tasks))
			continue;
		if (s->kill || s->deny_error > 0 ||
		    ((s->action & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ALLOW &&
		     s->handler != emu_handle_log))
			continue;
		/* with the tracer, a seccomp stop: a notification's wait can end in EINTR
		 * (tracer/ptrace.c, on_clone_stop) */
		s->action = f->ptrace ? SECCOMP_RET_TRACE : SECCOMP_RET_USER_NOTIF;
		s->handler = budget_handle_clone;
	}
}

/* ---- cgroup v2 (doctor) ---- */

bool tracer_cgroup_delegated(char *ret_path, size_t size)
{
	char line[512], path[600];
	bool ok = false;
	FILE *f = fopen("/proc/self/cgroup", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = 0;
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s", line + 3);
			/* delegated: we may create a child group and write its limits */
			ok = access(path, W_OK) == 0;
			snprintf(ret_path, size, "%s", path);
			break;
		}
	fclose(f);
	return ok;
}
