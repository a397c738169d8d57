/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What the files of the budgets share, private to them (tracer/budget*.c): budget.c holds
 * the Budget object, its start and end, the sample the main loop calls and its timer, and
 * calls each budget's part from there; the parts of one kind of budget live in a file of
 * their own (budget-disk.c, …). Nothing here is for the rest of tracer/, which uses
 * tracer/budget.h.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/policy.h"
#include "tracer/budget.h"

/* 0 never passes validation; a Policy built by hand (unit tests) leaves limits at 0 */
static inline bool is_set(uint64_t v)
{
	return v != LIMIT_UNSET && v != 0;
}

/* ---- one sample's walk of the tree (budget-sample.c) ---- */

typedef struct ProcStat {
	char state;
	pid_t ppid;
	uint64_t utime, stime, cutime, cstime; /* clock ticks */
	uint64_t threads;
	uint64_t rss; /* pages */
} ProcStat;

/** Reads /proc/PID/stat into ret (state, parent, times, threads, rss). Returns 0, or -errno
 * when the file cannot be read (the process is gone) or -EIO when it cannot be parsed. */
int budget_read_proc_stat(pid_t pid, ProcStat *ret);

typedef struct Sample {
	uint64_t ticks, rss_pages, tasks, processes;
	uint64_t memfd_bytes;	/* pages of memfds the tree holds open (once each) */
	uint64_t deleted_bytes; /* unlinked-but-open files (and O_TMPFILEs) in the rw mounts */
} Sample;

/* the fds of the tree, for memory (memfds) and disk (unlinked files): budget-sample.c */
typedef struct FdScan FdScan;

/** For budget_sample(): what to look for in the tree's fds, NULL when neither memory nor
 * disk is set (or out of memory: the sample then goes without). Free with
 * budget_fd_scan_free(), which accepts NULL. */
FdScan *budget_fd_scan_new(const Budget *b);
void budget_fd_scan_free(FdScan *fds);
/** Walks the tree below keeper into ret (with fds: their memfds and unlinked files too).
 * own_time: each process's own utime+stime only, none of an ended group's (cpu_time counted
 * by ends); else utime+stime+cutime+cstime. Returns 0 or -ENOMEM (ret holds what was seen). */
int budget_scan_tree(pid_t keeper, FdScan *fds, bool own_time, Sample *ret);

/* ---- cpu_time (budget-cpu.c) ---- */

/** From budget_sample(), after the tree's scan: the tree's CPU time in ms from the ticks
 * the scan summed and ended_us (the ended groups' time, read before the scan), never less
 * than the last sample's; kept in cpu_ms and cpu_last_ms. */
uint64_t budget_cpu_sample(Budget *b, pid_t keeper, uint64_t ticks, uint64_t ended_us);

/* ---- disk (budget-disk.c) ---- */

/** From budget_init() with a disk budget: the roots to walk (the rw and tmp mounts of view,
 * or the policy's rw sources without one) and the inotify instance; their baseline is
 * budget_disk_baseline()'s. Returns 0 or -ENOMEM. */
int budget_disk_init(Budget *b, const Policy *p, const SbxView *view);
/** From budget_done(): the roots, the inotify instance, the watches and the index. */
void budget_disk_done(Budget *b);
/** From budget_sample(), after the tree's scan: a walk when one is due, then the disk used
 * (the walk plus deleted_bytes, the unlinked files the tree holds open), and the disk full
 * from now on when that reaches the budget. Takes disk_lock. */
void budget_disk_sample(Budget *b, pid_t keeper, uint64_t deleted_bytes);

/* ---- SysV shared memory, for the memory budget (budget-shm.c) ---- */

/** From budget_sample(): the helper's answer into shm_bytes; when it fails to answer, the
 * budget goes on without it (saying so on stderr). */
void budget_shm_sample(Budget *b);
/** From budget_done(): closes the helper's socket (it exits at EOF) and reaps it. */
void budget_shm_done(Budget *b);
