/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The supervisor: runs a command under the seccomp filter built from the syscall table and
 * the policy, answers its notifications, keeps its process tree contained, and reports how
 * it ended. docs/supervisor.md describes the architecture.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct Audit Audit;
typedef struct Policy Policy;

typedef struct TracerOptions {
	char *const *argv; /* the command; argv[0] is searched in PATH */
	bool capture;	   /* --json: stdout/stderr through pipes into the result */
	bool trace;	   /* a line per notified syscall on stderr */
	bool quiet;	   /* no messages of our own but errors */
	Audit *audit;	   /* the audit log and trace (audit/audit.h), borrowed; NULL: none */
	/* held connects (network.unlisted = "ask"; tracer/ask.c): where decisions come from */
	int approval_fd;	     /* > 2: ask over this descriptor (JSON lines); else none */
	const char *approval_socket; /* serve the approval protocol on this path; NULL: none */
} TracerOptions;

typedef struct TracerResult {
	int exit_code; /* DESIGN.md: own code, 128+N, 124, 125, 126, 127 */
	int signal;    /* the signal that ended the command, 0 if it exited */
	bool timed_out;
	const char *killed_by; /* static: "wall_time", or NULL */
	uint64_t denied;       /* denials seen by the filter's notified part and handlers */
	uint64_t duration_ms;
	char *out, *err; /* captured output (capture only), NUL-terminated */
	size_t out_len, err_len;
	bool out_truncated, err_truncated;
	/* budgets (tracer/budget.c): what the last sample saw; usage_known is false when no
	 * budget needed sampling */
	bool usage_known;
	uint64_t cpu_time_ms, memory_peak, tasks_peak, disk_written, clones_denied;
	/* the network at the end of the run: the mode after any ratchet drop and the highest
	 * sensitivity level the tree opened (0: none) */
	int net_mode_end;  /* NetMode */
	int net_level_max; /* Sensitivity */
	/* what held the command (docs/json-result.md "view", "layers") */
	bool kernel_view;      /* the file-system view was built in the kernel */
	char view_reason[256]; /* why it was not, "" when it was */
	int landlock_abi;      /* the ABI of the Landlock layer in effect, 0: none */
	bool userns;	       /* the command ran in a user namespace of ours */
	bool ipcns;	       /* in a private IPC namespace (else host IPC calls were denied) */
	bool pidns;	       /* in a pid namespace of its own (a /proc mount, kernel view) */
	bool ptrace;	       /* the supervisor traced the tree with ptrace */
	bool exec_events;      /* ... and stopped each exec after it ran (PTRACE_EVENT_EXEC) */
	/* connect, bind, listen, sendto, sendmsg and most socket calls ran in the kernel
	 * (loopback in a network namespace of its own, the kernel view; docs/network.md) */
	bool net_in_kernel;
	char net_reason[256]; /* why not, "" when they did */
	/* who opened files: "kernel" (the view in the kernel), "checked" (the emulated view
	 * checks each open and the kernel makes those it resolved in place: Landlock holds
	 * exactly the view, emulation/fs-open.c), "supervisor" (it opens and injects each) */
	const char *file_opens;
	char file_opens_reason[160]; /* why not "checked" in the emulated view, else "" */
} TracerResult;

void tracer_result_done(TracerResult *r);

/**
 * Runs opts->argv under policy p and waits for the end of the whole tree. Fills *ret_result
 * (also on sandbox errors, with exit_code 125/126/127) and returns 0; returns a negative errno
 * only when nothing could be started, after logging why. Must be called from a
 * single-threaded process: it forks before starting its threads.
 */
int tracer_run(const Policy *p, const TracerOptions *opts, TracerResult *ret_result);

/** Writes the --json result object and a newline to f (docs/json-result.md). 0 or -errno. */
int tracer_result_write_json(const Policy *p, const TracerResult *r, FILE *f);

/* Kernel features (tracer/probe.c), probed once. */
/**
 * What `run` decides about policy p's view (tracer.kernel_view; for `sbxtrace check`): builds
 * the view as `run` does (its scratch directories are removed again) and asks the function
 * `run` asks. 1: in the kernel, when the host lets this user make a user namespace
 * (TracerFeatures.userns; `run` falls back to the emulated view otherwise and says so); 2:
 * the same, with a pid namespace for the policy's proc mounts;
 * 0: emulated, why not in why; -errno: the view cannot be built (why says why; `run` fails).
 */
int tracer_kview_verdict(const Policy *p, char *why, size_t size);
/** Where the view is emulated: NULL when the kernel makes the opens the supervisor checked
 * (Landlock of this ABI holds exactly the view of policy p: EmuHost.landlock_exact), else why
 * not, a static string. `run` decides by the same function (`--json` "file_opens"). */
const char *tracer_opens_verdict(const Policy *p, int landlock_abi);
/** NULL when policy p lets the network's address calls (socket, connect, bind, listen,
 * sendto, sendmsg, sendmmsg) run in the kernel once the view is in the kernel: mode
 * "loopback", network.unshare = true, no ratchet, no asking, no audit (docs/network.md,
 * "Loopback in a namespace of its own"); else why not, a static string. `run` builds its
 * filter by it (tracer/filter.c) and `check` prints it. */
const char *tracer_filter_net_why(const Policy *p);
/** NULL when policy p in mode "full" lets connect and the sends run in the kernel once the
 * view is in the kernel, without a network namespace: no ratchet, no asking, no audit, no
 * abstract name in network.unix, Landlock of ABI 6 or later (landlock_abi: the host's) to
 * scope the host's abstract unix sockets; bind and listen stay notified (docs/network.md,
 * "Mode full in the kernel"); else why not, a static string. */
const char *tracer_filter_net_full_why(const Policy *p, int landlock_abi);
/** Where the network calls of a run of p are decided, as `run --json` "network_calls"
 * reports it: tracer_filter_net_full_why() in mode "full", else tracer_filter_net_why(). */
const char *tracer_filter_net_calls_why(const Policy *p, int landlock_abi);
/** NULL when every program of a run of policy p decides socket(2) in the filter where the
 * handler would allow it (the network mode cannot change during the run, no audit log or
 * --trace, and getfd: pidfd_getfd is usable, so the tree makes its own sockets); else why
 * not, a static string (tracer/filter.c). */
const char *tracer_filter_socket_why(const Policy *p, bool getfd);
/** Whether the policy needs the tracer thread (ptrace = "auto": a translated mount, backtraces,
 * a cpu_time, disk or tasks budget, held execs): chdir and exec then go through
 * SECCOMP_RET_TRACE in the emulated view (tracer/fs.c). */
bool tracer_fs_needs_ptrace(const Policy *p);
/** Why the tracer thread asks for PTRACE_EVENT_EXEC in a traced run of policy p in this view
 * (a static string), NULL when nothing reads it: the kernel view, where exec runs in the
 * kernel (tracer/ptrace.c). `run --json` reports it ("layers", "exec_events"), `check`
 * prints it. */
const char *tracer_ptrace_exec_why(const Policy *p, bool kview);

typedef struct TracerFeatures {
	bool listener;	    /* SECCOMP_FILTER_FLAG_NEW_LISTENER (5.0) */
	bool addfd_send;    /* SECCOMP_ADDFD_FLAG_SEND (5.14) */
	bool wait_killable; /* SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (5.19) */
	bool sync_wakeup;   /* SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (6.6) */
	bool pidfd_open;    /* 5.3 */
	bool pidfd_getfd;   /* 5.6 */
	bool pidfd_thread;  /* PIDFD_THREAD (6.9) */
	bool openat2;	    /* 5.6 */
	bool process_vm_readv;
	bool ptrace;	  /* PTRACE_SEIZE of a child */
	bool userns;	  /* a user+mount namespace with our ids mapped, in a child */
	bool netns;	  /* a private network namespace (root, or through a user namespace) */
	int landlock_abi; /* 0: none */
} TracerFeatures;

/** Probes the running kernel (forks small children). Safe to call more than once. */
void tracer_probe_features(TracerFeatures *ret);

/** Whether this process's cgroup v2 directory is writable (a delegated subtree); its path
 * in ret_path. Reported by doctor; budgets do not use cgroups (docs/budgets.md). */
bool tracer_cgroup_delegated(char *ret_path, size_t size);

/** Whether libunwind-ptrace can be loaded for [audit] backtrace (dlopen, once). */
bool tracer_backtraces_loadable(void);

/** NULL if the kernel has what `run` needs, else a static message saying what is missing. */
const char *tracer_features_missing(const TracerFeatures *f);
