/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Resource budgets for the whole process tree, without cgroups or root (docs/budgets.md):
 * cpu_time, memory and disk are sampled from /proc and the rw mount sources on a timer in the
 * supervisor's main loop; tasks are counted at every clone/fork/vfork (a register-only
 * decision: CONTINUE under the budget, EAGAIN over it); file_size, open_files and backstops
 * for cpu_time and memory are per-process rlimits set in the command before it execs;
 * output is cut by the main loop with a marker. Private to tracer/.
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "emulation/emu.h"

typedef struct Policy Policy;
typedef struct TracerFilter TracerFilter;
typedef struct SbxView SbxView;
typedef struct DiskIndex DiskIndex;
struct rusage;

#define BUDGET_MAX_RESERVATIONS 256

typedef struct BudgetReservation {
	pid_t tid;	  /* the thread whose clone was let through */
	int nr;		  /* clone, fork or vfork */
	uint64_t when_ns; /* CLOCK_MONOTONIC of the decision */
} BudgetReservation;

typedef struct Budget {
	const Policy *policy;
	long clk_tck, page_size, ncpus; /* ncpus: online, or the cpus limit if lower */
	uint64_t cpus;			/* 0: leave the affinity alone */

	/* per-process rlimits set in the command (RLIM_INFINITY: leave alone) */
	uint64_t rl_fsize, rl_nofile, rl_cpu_s, rl_data;
	uint64_t nofile_native; /* S's soft RLIMIT_NOFILE before it raised its own: the tree's */
	bool ignore_sigxfsz;

	/* sampling */
	uint64_t tick_ms;	/* first sample after this; 0: nothing to sample */
	uint64_t next_ms;	/* the next one after this (adaptive) */
	uint64_t memory_hard;	/* during the grace period: SIGKILL at once above this */
	char **disk_roots;	/* host directories of rw mounts */
	uint64_t disk_baseline; /* their allocated bytes at the start */
	uint64_t disk_next_ns;	/* when to walk them again */
	uint64_t disk_interval_ns;
	uint64_t disk_walk_cost_ns, disk_walk_end_ns;
	/* between walks (budget_disk_changes): inotify on the walked directories. disk_lock
	 * guards the walk and the estimate (the main loop and creating handlers use them) */
	pthread_mutex_t disk_lock;
	bool disk_walk_asked; /* a handler found a walk due sooner */
	int disk_ifd;		    /* -1: none, walks only */
	char **disk_wd_path;	    /* host path of each watched directory, by watch descriptor */
	size_t disk_wd_cap, disk_watches;
	struct DiskIndex *disk_index; /* allocated bytes per inode: the last walk + changes */
	uint64_t disk_est;	    /* the last walk's bytes + the changes seen since */
	bool disk_est_high;	    /* a removal or move since the walk: disk_est may be high */
	uint64_t disk_walks, disk_events;
	/* the quiet time (budget_disk_quiet_start): directories written into since the last
	 * one (watch descriptors), then those watched without IN_MODIFY, by an open fd */
	int disk_hot[16];
	size_t n_disk_hot;
	struct {
		int wd, fd;
	} disk_quiet[16];
	size_t n_disk_quiet;
	uint8_t *disk_wd_big; /* by watch descriptor: too many entries to count again */
	/* the last walk found the disk budget used up: creation fails with EDQUOT (handlers
	 * read it through EmuHost.disk_full), every process's RLIMIT_FSIZE is 0 */
	atomic_bool disk_full;
	bool disk_full_new;	/* set by the sample that found it, for the caller to report */
	uint64_t cpu_offset_ms; /* time of processes reaped without a waiting parent */
	uint64_t cpu_last_ms;
	/* memory: SysV shared memory of the tree's private IPC namespace, asked of a helper
	 * process in that namespace (budget-shm.c) */
	bool ipc_private; /* set by the caller once C has its own IPC namespace */
	int shm_fd;	  /* -1: no helper (yet) */
	pid_t shm_pid;
	bool shm_failed;    /* the helper could not be made or stopped answering */
	uint64_t shm_bytes; /* its last answer */
	/* cpu_time with the tracer thread (budget_count_ends): the time of the thread groups
	 * that ended, in microseconds, added by that thread, read by the sampler */
	bool cpu_by_ends;
	_Atomic uint64_t cpu_ended_us;

	/* what was seen (the --json result, the breach message) */
	uint64_t cpu_ms, memory, memory_peak, disk_used, disk_peak;
	uint64_t disk_walk_used; /* what the last walk found (disk_used adds unlinked files) */
	uint64_t tasks_peak, processes, clones_denied;
	uint64_t sample_ns_total; /* the supervisor's own time spent sampling */
	uint64_t samples;

	/* the tasks budget: clones let through but maybe not yet visible in /proc */
	pthread_mutex_t lock;
	BudgetReservation res[BUDGET_MAX_RESERVATIONS];
	size_t n_res;
	uint64_t bound; /* upper bound of tasks alive + in flight, while bound_valid */
	bool bound_valid;
	uint64_t scans; /* exact counts made */
} Budget;

/** Derives the rlimits and sampling plan from p, measures the disk baseline of the rw and
 * tmp mounts of view (NULL: the policy's rw sources). Keeps a pointer to p. Returns 0 or
 * -errno (-ENOMEM). With disk_walk_later the disk budget's inotify instance is made but its
 * baseline walk is left to budget_disk_baseline(). */
int budget_init(Budget *b, const Policy *p, const SbxView *view, bool disk_walk_later);
/** The disk budget's baseline walk (and its watches), when budget_init() left it for later:
 * the supervisor walks after its fork, while the command sets itself up, on the inotify
 * instance the keeper shares (tracer/run.c). Nothing of the tree can write before S's "go",
 * so the baseline is the same as before the fork. Does nothing without a disk budget or when
 * done already. */
void budget_disk_baseline(Budget *b);
void budget_done(Budget *b);

/** The inotify fd that reports changes in the rw mounts between disk walks, or -1. */
int budget_disk_fd(const Budget *b);
/* Drops our reference to the inotify instance of the disk budget with a plain close: for when
 * another process (the keeper) holds one and closes it after us, so that the slow release of
 * the last reference is its (budget_done otherwise hands it to a detached child). */
void budget_disk_hand_over(Budget *b);
/** Reads the changes and updates the estimate; when it shows the disk budget used up and
 * nothing was removed since the last walk, the disk is full from now on (disk_full_new set,
 * RLIMIT_FSIZE 0 in the tree). Returns true when a walk should come sooner than planned:
 * budget_disk_walk_due_ms() says when; the caller's next budget_sample() makes it. */
bool budget_disk_changes(Budget *b, pid_t keeper);
uint64_t budget_disk_walk_due_ms(const Budget *b);
/** After budget_disk_changes(): how long the main loop may leave the changes unread (what is
 * left of the disk budget at the fastest rate the tree can write, at most 50 ms; 0 near the
 * limit or when the disk is full). For that time the directories where files were just
 * written are watched without IN_MODIFY; budget_disk_quiet_end() watches them fully again
 * and counts what changed in them meanwhile. */
uint64_t budget_disk_quiet_start(Budget *b);
void budget_disk_quiet_end(Budget *b);
/** For a handler about to create something: the changes so far read (unless a walk is under
 * way), then whether the disk is full. A creation after a burst of writes is refused even if
 * the main loop has not run since. Any thread. */
bool budget_disk_full_now(Budget *b, pid_t keeper);
/** Whether a call that RLIMIT_FSIZE refused (EFBIG) was refused for the disk budget: the
 * rlimit is the disk budget's (disk <= file_size, or no file_size) or the disk is used up.
 * Such a call fails with EDQUOT instead (tracer/ptrace.c, docs/budgets.md). Any thread. */
bool budget_efbig_is_disk(const Budget *b);
/** In the command before exec (after vfork): rlimits and SIGXFSZ. Async-signal-safe. */
void budget_child_setup(const Budget *b);
/** With a cpus limit, confines the calling thread to the CPUs the command gets (the first
 * `cpus` of the caller's affinity, as budget_child_setup() picks them); false otherwise. */
bool budget_pin_cpus(const Budget *b);

/** Called by the filter builder before it generates the program: routes clone, fork and
 * vfork to budget_handle_clone when the policy sets a tasks budget, through a seccomp stop
 * of the tracer thread when there is one (tracer/ptrace.c says why), else notified. */
void budget_filter_apply(TracerFilter *f, const Policy *p);

/** With a memory budget and a private IPC namespace (ipc_private set): forks the helper that
 * counts the SysV shared memory of that namespace, joining it through child's /proc/PID/ns/
 * (child must be dumpable). On failure the budget goes on without it, saying so on stderr. */
void budget_shm_start(Budget *b, pid_t child);
/** With a cpu_time budget and the tracer thread tracing every process of the tree: count
 * the ends of processes as budget_task_ended() reports them, and only the own time of live
 * processes (no cutime). Call before the tracer thread starts. Returns whether it is on. */
bool budget_count_ends(Budget *b);
/** The tracer thread, at the end of a tracee it has not reaped yet (waitid WNOWAIT): pid is
 * the thread that ended and ru its rusage (RUSAGE_BOTH, the kernel's answer to a wait).
 * Adds the own CPU time of the thread group when pid is its leader (the group is over);
 * a non-leader thread's time stays in its group's. Needs /proc/PID, i.e. before the reap. */
void budget_task_ended(Budget *b, pid_t pid, const struct rusage *ru);

/** The tasks budget at a clone/fork/vfork (req->host is the Tracer's); any thread. */
int budget_handle_clone(const EmuRequest *req, EmuDecision *ret_decision);
/** tid's clone has made its child (the tracer's fork/clone event): its reservation goes. */
void budget_clone_done(Budget *b, pid_t tid);

/** The exact count the tasks budget uses: processes + threads alive (zombies included)
 * below keeper, found by a numeric scan of /proc (docs/budgets.md). Exact only while no
 * process of the tree can clone (the supervisor holds the budget's lock); otherwise an
 * upper bound of what was alive during the scan. Returns 0 or -errno. */
int budget_count_tasks(pid_t keeper, uint64_t *ret_tasks);

/** Samples the tree below keeper. Returns the name of a breached budget ("cpu_time",
 * "memory", "disk") and writes the stderr message into msg, or NULL. */
const char *budget_sample(Budget *b, pid_t keeper, char *msg, size_t size);

/** Milliseconds until the next sample is due (after budget_sample()). */
uint64_t budget_next_ms(const Budget *b);

/** How far past the disk budget the rw mounts may grow before the run is stopped: what was
 * written between the walk that found the budget used and the limits taking effect. */
uint64_t budget_disk_slack(uint64_t disk);

/** During the grace period after a breach: whether memory ran past the hard threshold so
 * the tree must be SIGKILLed now. Uses the last sample. */
bool budget_hard_exceeded(const Budget *b);

/** Formats a size as "256MiB", "1.5GiB", "512B" for messages. */
void budget_format_size(uint64_t bytes, char *buf, size_t size);
