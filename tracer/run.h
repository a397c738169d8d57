/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Private to the three files of a run: tracer/launch.c (the command C and the keeper W),
 * tracer/run.c (tracer_run() and its phases in S) and tracer/loop.c (S's event loop). What
 * they share: the messages C and W send S, the plan C follows (Launch), and the run state
 * (Run) that S's phases hand on, one to the next, and that run_done() undoes whatever phase
 * the run stopped at.
 */

#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/macros.h"
#include "tracer/budget.h"
#include "tracer/internal.h"

#define EXIT_SANDBOX_ERROR_CODE 125

enum {
	MSG_EXEC_FAILED = 1,
	MSG_SETUP_FAILED = 2,
	MSG_STATUS = 3,
	MSG_CHILD_PID = 4,
	MSG_STOPPED = 5,
	MSG_PREPARED = 6, /* C's pid and whether the view is in the kernel: S may seize it */
};

typedef struct Msg {
	int32_t kind;
	int32_t value; /* errno, wait status, pid */
	char what[48];
} Msg;

/* What C needs to set itself up and exec: made by S before the fork, read by W and C. */
typedef struct Launch {
	const Policy *policy;
	const TracerOptions *opts;
	const TracerFilter *filter;
	const SbxView *view;
	char **envp;
	const char *cwd;
	const char *exec_path; /* argv[0] found on PATH in the view by S, or NULL: execvp */
	const KView *kview;    /* the view to build in the kernel (tracer/kview.c), or NULL */
	int netns;	       /* a private network namespace: 1 required, -1 if possible, 0 no */
	bool netns_lo;	       /* ... with lo up (mode loopback) */
	bool tty;
	bool wait_killable;
	bool courier; /* pidfd_getfd refused: the listener goes with SCM_RIGHTS */
	int landlock_abi;
	int sched_policy; /* the caller's, which the keeper changes and C restores */
	struct sched_param sched_param;
	int sock_c;	  /* C's end of the socket to S */
	int out_w, err_w; /* capture pipes, -1 */
	pid_t keeper;
	const Budget *budget;
	bool keeper_moved;     /* S moved W off its CPU: W and C restore caller_cpus */
	cpu_set_t caller_cpus; /* the CPUs S (and the caller) may run on */
} Launch;

/* One captured stream of the command (stdout or stderr), read by the event loop. */
typedef struct Capture {
	int fd;
	char *buf;
	size_t len, cap;
	bool truncated;
	int relay_fd; /* >= 0: copy to this fd (an output limit without --json) */
} Capture;

/* The run state: what tracer_run() kept in its locals, now handed from phase to phase. */
typedef struct Run {
	const Policy *p;
	const TracerOptions *opts;
	Tracer t;
	Budget budget;
	Launch l;
	TracerResult res;
	uint64_t start; /* for res.duration_ms */

	/* made for the launch, freed by run_done() */
	char **envp;
	char *cwd, *exec_path;
	KView *kview;
	const char *opens_why; /* static: why the kernel makes no checked opens, or NULL */
	bool relay_output;     /* an output limit without --json: the output passes through us */
	/* both ends, until the keeper is forked; then S's ends move to sock_* and out/err */
	int sp_c[2], sp_w[2], po[2], pe[2];
	sigset_t ss, old_mask; /* the signals the loop reads (blocked), and the caller's mask */
	mode_t old_umask;      /* (mode_t) -1: not changed */

	/* after the fork */
	int sock_c, sock_w; /* S's ends of the sockets to C and to W */
	int notify_fd;
	bool started_dispatch, tty_taken, start_recorded;

	/* the event loop (tracer/loop.c) */
	int epfd, sfd, wall_tfd, grace_tfd, budget_tfd, disk_quiet_tfd;
	Capture out, err;
	uint64_t out_budget, out_limit, wall_armed;
	bool output_marked;

	/* what the run learned, for its end */
	bool child_done, exec_known, keeper_gone, tree_killed, keeper_cleans;
	int status, exec_errno, setup_errno;
	char setup_what[48];
} Run;

/* tracer/launch.c */
/** W: forks C, reaps the tree and reports to S over sock_w; never returns. */
_noreturn_ void tracer_keeper_main(Launch *l, int sock_w, pid_t supervisor);
/** One message of the kind expected from C; anything else (C's MSG_SETUP_FAILED, say) is
 * returned in *ret_msg with -EBADMSG; -EPIPE at EOF. */
int tracer_recv_msg(int sock, int kind, Msg *ret_msg);
/** C's listener: taken with pidfd_getfd() by the number C sends, or attached by the
 * courier. 0 or -errno; *ret_msg is C's message either way. */
int tracer_recv_fd(int sock, int *ret_fd, Msg *ret_msg);

/* tracer/loop.c */
/** The signalfd, the timers and the epoll set, and the timers armed. 0 or -errno (logged). */
int run_loop_setup(Run *run);
/** Until the command has ended and its captured output is drained (or the keeper is gone). */
void run_loop(Run *run);
/** The disk budget was used up since the last call: its warning and audit record, once. */
void run_report_disk_full(Tracer *t, Budget *b, const Policy *p);
