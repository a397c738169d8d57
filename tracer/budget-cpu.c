/* SPDX-License-Identifier: MIT */
/*
 * The cpu_time budget (docs/budgets.md, "cpu_time, exited processes"): the time the sample
 * read from the live tree made into the tree's total, and, with the tracer thread, the time
 * of every thread group that ended, added by that thread at the end (budget_task_ended).
 * With tracer.ptrace = "never" the total is the live tree's with its cutime, plus the
 * keeper's, with what was lost to processes reaped without a waiting parent added back.
 *
 * Its own file because it is the one budget fed from two threads: the sampler in the main
 * loop and the tracer thread at each end (cpu_ended_us, atomic); the filter's refusal of
 * CLONE_UNTRACED that it needs is in budget_filter_apply() (budget.c).
 */
#include "tracer/budget.h"

#include <sys/resource.h>

#include "common/macros.h"
#include "policy/policy.h"
#include "tracer/budget-internal.h"
#include "tracer/internal.h"

uint64_t budget_cpu_sample(Budget *b, pid_t keeper, uint64_t ticks, uint64_t ended_us)
{
	uint64_t cpu_ms;
	ProcStat ks;

	if (!b->cpu_by_ends && budget_read_proc_stat(keeper, &ks) == 0)
		ticks += ks.cutime + ks.cstime;

	if (b->cpu_by_ends) {
		cpu_ms = (ticks * 1000000 / (uint64_t) b->clk_tck + ended_us) / 1000;
		/* between its end and its tally a group counts nowhere: a sample then is low
		 * for a moment, and the total stays where it was */
		cpu_ms = MAX(cpu_ms, b->cpu_last_ms);
	} else {
		cpu_ms = ticks * 1000 / (uint64_t) b->clk_tck + b->cpu_offset_ms;
		if (cpu_ms < b->cpu_last_ms) {
			/* a process reaped without a waiting parent took its time along */
			b->cpu_offset_ms += b->cpu_last_ms - cpu_ms;
			cpu_ms = b->cpu_last_ms;
		}
	}
	b->cpu_last_ms = b->cpu_ms = cpu_ms;
	return cpu_ms;
}

bool budget_count_ends(Budget *b)
{
	b->cpu_by_ends = is_set(b->policy->limits.cpu_time_ms);
	return b->cpu_by_ends;
}

/*
 * The end of a thread group, from the rusage of a wait with WNOWAIT (the kernel's
 * getrusage(RUSAGE_BOTH): the group's own time plus its cutime, in microseconds) and its
 * /proc/PID/stat (the same in clock ticks, each value rounded down). We want the own time
 * alone, precisely: a child that lives 8 ms reads 0 ticks, so the ticks alone would let a
 * tree of short children escape again. Both of these are upper bounds of the own time:
 *   BOTH - cutime_ticks (cutime >= its ticks), and (utime_ticks + stime_ticks + 2) ticks;
 * the smaller is taken. For a process that waited for no child (cutime 0) it is exact;
 * otherwise it errs high by less than the cutime's rounding (< 2 ticks per process).
 */
void budget_task_ended(Budget *b, pid_t pid, const struct rusage *ru)
{
	uint64_t tick_us = 1000000 / (uint64_t) b->clk_tck, both_us, own_us, c_us;
	pid_t tgid;
	ProcStat ps;

	if (!b->cpu_by_ends)
		return;
	/* a thread other than the leader: its time moved into its group's, which its leader
	 * reports once the whole group is over (a leader is reported only then) */
	if (proc_read_tgid(pid, &tgid) == 0 && tgid != pid)
		return;
	both_us = (uint64_t) ru->ru_utime.tv_sec * 1000000 + (uint64_t) ru->ru_utime.tv_usec +
		  (uint64_t) ru->ru_stime.tv_sec * 1000000 + (uint64_t) ru->ru_stime.tv_usec;
	own_us = both_us;
	if (budget_read_proc_stat(pid, &ps) == 0) {
		c_us = (ps.cutime + ps.cstime) * tick_us;
		own_us = both_us > c_us ? both_us - c_us : 0;
		own_us = MIN(own_us, (ps.utime + ps.stime + 2) * tick_us);
	} /* else: errs high, by its cutime */
	atomic_fetch_add(&b->cpu_ended_us, own_us);
}
