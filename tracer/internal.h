/* SPDX-License-Identifier: MIT */
#pragma once

/* Private to tracer/: the pieces of the supervisor and the state they share. */

#include <assert.h>
#include <limits.h>
#include <linux/filter.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "audit/audit.h"
#include "emulation/process.h"
#include "net/handlers.h"
#include "common/macros.h"
#include "syscalls/syscalls.h"
#include "tracer/tracer.h"

/* x86_64 syscall numbers are below this; anything above is ENOSYS in the filter. */
#define TRACER_NR_MAX 1024
/*
 * Dispatch threads beyond the first (tracer/dispatch.c). Each call that may block and does
 * (a connect to a full backlog, an accept where the supervisor holds the tree's sockets, a
 * held call) keeps one until it returns; when all are taken, such calls wait in a queue, and
 * if what they wait for is itself such a call behind them (a waiting connect and the accept
 * that would take it), the tree waits until its wall-time limit. So the pool is larger than
 * the threads a tree under the presets' tasks budgets (at most 256) can have blocked at once;
 * idle, a thread costs its stack's touched pages.
 */
#define TRACER_MAX_WORKERS 512

/* The argument checks of the program: a row's check (SyscallCheck, syscalls/syscalls.h),
 * and those the run's state adds. */
typedef enum SlotSpecial {
	SLOT_PLAIN = SYSCALL_CHECK_NONE,
	SLOT_CLONE = SYSCALL_CHECK_CLONE,
	SLOT_IOCTL = SYSCALL_CHECK_IOCTL,
	SLOT_FCNTL = SYSCALL_CHECK_FCNTL,
	SLOT_PID_ARG0 = SYSCALL_CHECK_PID_ARG0,
	SLOT_PID_ARG1 = SYSCALL_CHECK_PID_ARG1,
	SLOT_SECCOMP = SYSCALL_CHECK_SECCOMP,
	SLOT_PERSONALITY = SYSCALL_CHECK_PERSONALITY,
	SLOT_ADDR_ARG4 = SYSCALL_CHECK_ADDR_ARG4,
	SLOT_SETSOCKOPT = SYSCALL_CHECK_SETSOCKOPT,
	SLOT_FALLOCATE = _SYSCALL_CHECK_MAX, /* disk budget: only the modes that free blocks
					      * (budget_filter_apply) */
	SLOT_IDS,	  /* in a user namespace's program: EPERM for an id the map lacks */
	SLOT_SOCKET_INET, /* socket(2) where the network mode cannot change during the run and
			   * is not none (tracer_filter_socket_why()), or in a network namespace
			   * of the tree's own: the handler's allowed set in the kernel */
	SLOT_SOCKET_UNIX, /* the same in mode none: AF_UNIX in the kernel */
	_SLOT_SPECIAL_MAX,
	_SLOT_SPECIAL_INVALID = -EINVAL,
} SlotSpecial;

typedef struct TracerSlot {
	const SyscallRow *entry; /* NULL: not in the table (syscalls/table.c) */
	EmuHandler handler;	 /* called for notifications of this number */
	uint32_t action;	 /* SECCOMP_RET_* (with data) for the plain case */
	SlotSpecial special;
	int deny_error;	      /* > 0: notified only to be denied with this errno (and counted) */
	bool log;	      /* policy action "log" */
	bool kill;	      /* policy action "kill": the whole tree dies */
	bool host_ipc;	      /* SysV IPC, mq_open, mq_unlink: allowed in a private IPC namespace,
			       * notified and denied (ENOSYS) without one */
	bool untraced_denied; /* SLOT_CLONE: CLONE_UNTRACED denied too (budget_filter_apply) */
	bool owner_in_kernel; /* SLOT_IOCTL in a pid namespace's program: FIOSETOWN and
			       * SIOCSPGRP run in the kernel */
	uint8_t uid_args;     /* set*uid, chown family: bit i set when args[i] is a uid */
	uint8_t gid_args;     /* ... a gid */
} TracerSlot;

typedef struct TracerFilter {
	TracerSlot slots[TRACER_NR_MAX];
	struct sock_filter *prog;
	size_t len;
	/* the same with the view in the kernel (tracer/kview.c); NULL when kernel_view is off */
	struct sock_filter *kview_prog;
	size_t kview_len;
	/* both again for a command without a private IPC namespace: host_ipc slots notified */
	struct sock_filter *noipc_prog, *kview_noipc_prog;
	size_t noipc_len, kview_noipc_len;
	/* the emulated view's for a command in a user namespace of ours (a plain user's private
	 * network namespace, tracer/netns.c); NULL when the policy makes none */
	struct sock_filter *userns_prog;
	size_t userns_len;
	int deny_errno;
	uid_t uid;   /* the ids the command runs with, the only ones a user namespace of ours */
	gid_t gid;   /* maps (tracer_userns_enter()) */
	bool ptrace; /* chdir, exec, clone under a tasks budget go through SECCOMP_RET_TRACE */
	bool pidns;  /* the kernel view's programs are for a tree in a pid namespace of its own:
		      * the calls that name a process run in the kernel (tracer_filter_set_pidns) */
	bool net_in_kernel;	 /* the kernel view's programs let the address calls run in the
				  * kernel (tracer_filter_net_why(): loopback in a namespace) */
	bool net_full_in_kernel; /* ... connect and the sends, mode full without a namespace
				  * (tracer_filter_net_full_why()) */
	bool socket_in_filter;	 /* every program decides socket(2) itself where the handler
				  * would allow it (tracer_filter_socket_why()) */
} TracerFilter;

/** The dispatch slots from the table and the policy, for a command that runs with
 * (effective) uid and gid, and no program yet (tracer_filter_programs()). 0 or -ENOMEM. */
int tracer_filter_prepare(const Policy *p, uid_t uid, gid_t gid, TracerFilter **ret_filter);
/* Which programs tracer_filter_programs() builds. */
enum {
	TRACER_PROGS_EMULATED = 1 << 0, /* prog, noipc_prog, and userns_prog if the policy
					 * makes a network namespace */
	TRACER_PROGS_KVIEW = 1 << 1,	/* kview_prog and kview_noipc_prog */
	TRACER_PROGS_PIDNS = 1 << 2,	/* with KVIEW: those for a pid namespace of the tree's
					 * own (tracer_filter_set_pidns()) */
};
/** Builds the programs in which (TRACER_PROGS_*): a run builds those C may install once the
 * view is planned, each costs its build on the start's path (docs/performance.md). 0,
 * -ENOMEM or -E2BIG; on failure f keeps what it had and is freed by its owner. */
int tracer_filter_programs(TracerFilter *f, const Policy *p, unsigned which);
/** tracer_filter_prepare() and every program a policy may use (the emulated view's, and
 * the kernel view's unless it is off): for tests and tools that read them all. */
int tracer_filter_build(const Policy *p, uid_t uid, gid_t gid, TracerFilter **ret_filter);
TracerFilter *tracer_filter_free(TracerFilter *f);
/** Installs the filter (its kernel-view program when kernel_view; the one that denies host
 * IPC unless ipc_private; the one for a user namespace's ids when userns) in the calling
 * process, returns the listener fd. *wait_killable: asks for WAIT_KILLABLE_RECV; false on
 * return if the kernel lacks it. Async-signal-safe. */
int tracer_filter_install(const TracerFilter *f, bool kernel_view, bool ipc_private, bool userns,
			  bool *wait_killable);
/** Rebuilds the kernel view's programs for a tree in a pid namespace of its own (proc
 * mounts, tracer/kview.c): there the calls that name a process by pid (signals, prlimit64,
 * setpgid, sched_set*, setpriority, ioprio_set, migrate_pages, move_pages, F_SETOWN and
 * its ioctls) can name only the tree, and run in the kernel unless the policy denies, kills
 * or logs them. 0 or -ENOMEM. */
int tracer_filter_set_pidns(TracerFilter *f);
/** Whether slot s names a process by pid and runs in the kernel in a pid namespace's
 * program (a logged one is notified, and answered with CONTINUE: run_handler()). */
bool tracer_filter_pid_in_kernel(const TracerSlot *s);
/** Puts the calling process in a private IPC namespace when it may (root, or in a user
 * namespace of ours): 0, or -errno (EPERM: a plain user outside a user namespace). */
int tracer_ipcns_enter(void);
/** Whether the program installed (kernel_view: the kernel view's) notifies every call of nr
 * and the supervisor either answers it itself or lets the kernel run a call that cannot
 * return ERESTARTSYS (EMU_KERNEL_INTR marks the others), so that an ERESTARTSYS of such a
 * call can only come from a wait that a signal ended before the call was received
 * (tracer/ptrace.c). */
bool tracer_filter_restartable(const TracerFilter *f, long nr, bool kernel_view);

/* Process tree (tracer/tree.c): the tree is every descendant of root (the keeper). */
typedef int (*TreeVisit)(pid_t pid, void *userdata);
/** Calls visit for each descendant process (not thread) of root, depth first. */
int tree_walk(pid_t root, TreeVisit visit, void *userdata);
/** Whether tid (a thread or process id) belongs to a descendant of root: 1, 0, or -errno. */
int tree_contains(pid_t root, pid_t tid, pid_t *ret_tgid);
/** Sends sig to every descendant of root once; returns how many were signalled. */
int tree_signal_all(pid_t root, int sig);
/** Parent, process group and state letter of pid from /proc/PID/stat. */
int tree_read_stat(pid_t pid, pid_t *ret_ppid, pid_t *ret_pgrp, char *ret_state);
/** Whether process pid is exiting (PF_EXITING in /proc/PID/stat's flags, set on every
 * thread before any of them closes its descriptors) or gone: 1, 0, or -errno. */
int tree_exiting(pid_t pid);
/** SIGKILLs every descendant until none is left (root must reap them). */
void tree_kill_all(pid_t root, bool reap);

/* Child memory (tracer/child-mem.c). */
#define CHILD_MEM_CACHED_STRINGS 2
typedef struct ChildMemCtx {
	ChildMem mem;
	pid_t pid;
	int notify_fd;
	uint64_t id;
	/* The first strings read through mem.read_string (the path a handler acted on), kept
	 * so that the audit record shows that copy instead of reading the child again. */
	unsigned n_strings;
	struct {
		uint64_t addr;
		size_t size; /* the read's buffer size */
		int result;  /* 0, or -ENAMETOOLONG: copy holds size - 1 bytes */
		char copy[PATH_MAX];
	} strings[CHILD_MEM_CACHED_STRINGS];
} ChildMemCtx;
void child_mem_init(ChildMemCtx *ctx, pid_t pid, int notify_fd, uint64_t id);

/* A private network namespace for the command (tracer/netns.c): in C before its
 * capabilities are dropped; 0 or -errno. *ret_userns (if not NULL) is set when a user
 * namespace was made for it (a plain user). The probe tries it in a child. */
int tracer_netns_enter(bool *ret_userns);
/* Brings the namespace's lo up (mode loopback), before C drops its capabilities; 0 or -errno.
 * Async-signal-safe. */
int tracer_netns_lo_up(void);
bool tracer_netns_possible(void);
/* A user namespace (plus the namespaces in also) in which the caller's effective uid and gid
 * map to themselves; in C, async-signal-safe. 0 or -errno; *ret_entered (if not NULL) is set
 * once the namespaces exist, even if mapping the ids then failed. */
int tracer_userns_enter(int also, bool *ret_entered);

/* The view in the kernel (tracer/kview.c, docs/filesystem.md "The view in the kernel"): a
 * plan made by S, carried out by C in a user+mount namespace before its filter. */
typedef struct KViewBind {
	char *source;  /* host path to bind; NULL: the target itself (self) */
	char *vpath;   /* where the program sees it (below the skeleton root) */
	uint64_t attr; /* MOUNT_ATTR_* set on it (recursively for directories) */
	bool device;   /* a node of the /dev allowlist: target is a placeholder file */
	bool self;     /* bound onto itself in the namespace: an ancestor of a mount point
			* made in a tmp mount, or the path of an ro rule */
	bool file;     /* a regular file (an ro rule's), not a directory */
	dev_t dev;     /* what the target must be once bound: st_dev/st_ino of a directory, */
	ino_t ino;     /* st_rdev of a device (self: what S saw, 0: unknown, made by C) */
	/* mount points to make below this tmp mount once it is bound: relative paths, each
	 * NUL-terminated, an empty one last; NULL: none */
	char *mkdirs;
	size_t mkdirs_len;
} KViewBind;

typedef struct KView {
	char *root;	/* the skeleton root (host path), the program's "/" */
	dev_t root_dev; /* and what it must be */
	ino_t root_ino;
	char *cwd; /* virtual working directory */
	KViewBind *binds;
	size_t n_binds;
	bool pts; /* process.pty: a private devpts at /dev/pts, its ptmx at /dev/ptmx */
	/* proc mounts: a pid namespace for the tree, and a procfs of it at each of these
	 * (virtual paths, on the skeleton) mounted by its init; none: no pid namespace */
	char **procs;
	size_t n_procs;
	bool netns; /* hide rules on the procfs's network tables: a private network namespace
		     * is required, made before the init (its /proc/1/net) */
} KView;

/**
 * The one decision whether a run of p, with view v, gets its view in the kernel: `run` asks
 * it, and `sbxtrace check` through tracer_kview_verdict(), so the two cannot disagree.
 * audited: the run writes an audit log or --trace lines. Returns 1 and, when ret_plan is not
 * NULL, the plan for C (the caller frees it); 0 when the kernel cannot reproduce this view
 * exactly, with the reason in why (the policy, the view as opened, or the host: a rule, a
 * mount point missing in its parent's source, no Landlock…); -errno when S itself failed
 * (why says so). Not decided here: whether this host lets the user make a user namespace,
 * which C finds out when it tries ("auto" then emulates, and the run says why).
 */
int tracer_kview_qualify(const Policy *p, const SbxView *v, bool audited, KView **ret_plan,
			 char *why, size_t size);
KView *tracer_kview_free(KView *k);
DEFINE_FREEP(KView, tracer_kview_free)
/** In S, after the fork: the mount points C needs below tmp mounts, made in the tmp
 * directories while C makes its namespaces (C checks them without following a symlink, and
 * makes what is missing itself). Failures are left to C. */
void tracer_kview_make_points(const KView *k);
/** In S, when C could not enter the planned kernel view ("auto"), before "go": the points
 * tracer_kview_make_points() made, removed (empty directories only, never following a
 * symlink), so that the emulated view shows their place as it would have. */
void tracer_kview_unmake_points(const KView *k);
/** In C: enters the namespaces, builds the view, pivots into it and changes to its working
 * directory. 0, or -errno with *what set; *entered tells whether the user namespace was
 * made (after that, falling back to the emulated view is no longer possible). With proc
 * mounts (k->n_procs) also a pid namespace, whose init (a child of C's parent, the keeper,
 * pid 1 there) mounts them and then only reaps orphans until the keeper is gone; C itself
 * stays outside and must start the command with tracer_kview_spawn(). netns: make a
 * private network namespace in the same step (*ret_netns tells whether it was made). */
int tracer_kview_enter(const KView *k, bool netns, const char **what, bool *entered,
		       bool *ret_netns);
/** In C, after tracer_kview_enter() with proc mounts: clone(CLONE_PARENT) the process that
 * becomes the command, pid 2 of the namespace and the keeper's child as C is. Returns its
 * pid (as C and S see it) in C, 0 in the new process, -errno. */
pid_t tracer_kview_spawn(void);

/* The notification the calling thread's handler answers (set by run_handler), for the ID_VALID
 * check that follows an open of the caller's /proc/PID/fd/N (tracer_get_fd). */
extern _Thread_local int tracer_current_notify_fd;
extern _Thread_local uint64_t tracer_current_id;

/* The host's get_fd (EmuHost, common/handler.h) with a per-thread cache of callers' pidfds
 * (tracer/pidfd-cache.c), userdata the Tracer (its network state holds the sockets the
 * supervisor made for the tree); a thread that used it calls the flush before it ends. */
int tracer_get_fd(void *userdata, pid_t pid, int fd);
void tracer_pidfd_cache_flush(void);
/** What read_string would give for (addr, size) from a string already read through ctx:
 * 0 or -ENAMETOOLONG with buf filled, or -ENOENT when it was not read (or was read with a
 * smaller buffer than a complete answer needs). */
int child_mem_cached_string(const ChildMemCtx *ctx, uint64_t addr, char *buf, size_t size);
int child_mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len);

/* Landlock (tracer/landlock.c). */
typedef struct SbxView SbxView;
int tracer_landlock_abi(void);
/** Restricts the calling process per the policy and the view's mounts (NULL: no file-system
 * rules; kview: the view is in the kernel, tracer/kview.c); 0, or -errno. Call after
 * NO_NEW_PRIVS (and after pivot_root). */
int tracer_landlock_apply(const Policy *p, const SbxView *view, const KView *kview, int abi);
/* NULL when Landlock in an emulated view's run allows exactly what the view shows (the
 * kernel may then make the opens the view checked: EmuHost.landlock_exact); else why not. */
const char *tracer_landlock_exact_why(const Policy *p, const SbxView *view, int abi);

typedef struct Budget Budget; /* tracer/budget.h */

/* A backtrace asked of the tracer thread by a receiver (tracer/backtrace.c); lives on the
 * receiver's stack from tracer_bt_begin() to tracer_bt_finish(). */
typedef struct TracerBtReq {
	pid_t tid;
	int state;	   /* BT_* of tracer/backtrace.c, under the lock */
	bool kill_after;   /* the call kills the sandbox: the tracer thread kills the thread */
	bool killed;	   /* ... and did */
	const char *error; /* why there are no frames */
	AuditFrame *frames;
	size_t max, n;
	struct TracerBtReq *next;
} TracerBtReq;

typedef struct Tracer {
	EmuHost host;	 /* req->host of every request: tracer_host_init() */
	NetRuntime *net; /* the run's network state (net_runtime_start()), lent to the socket
			  * handlers by EmuHost.net_runtime; NULL before the start phase */
	const Policy *policy;
	const TracerOptions *opts;
	TracerFilter *filter;
	Audit *audit;	  /* opts->audit, or own_audit; NULL: nothing recorded (tracer/audit.c) */
	Audit *own_audit; /* trace-only sink when the caller gave none */
	SbxView *view;	  /* the file-system view (tracer/fs.c); req->view of every request */
	struct TracerPtys *ptys; /* tracer/fs.c: numbers of the ptys the tree created */
	int notify_fd;
	pid_t keeper; /* W: the subreaper whose descendants are the tree */
	pid_t child;  /* C: the command */
	size_t notif_size, resp_size;
	bool sync_wakeup;
	bool kview;		   /* C built the view in the kernel (tracer/kview.c) */
	bool pidns;		   /* ... with a pid namespace (proc mounts): pids in arguments
				    * are its own */
	atomic_bool wait_killable; /* C's filter has SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV */
	atomic_uint_fast64_t denied;
	atomic_bool stopping;
	atomic_bool kill_requested;
	int kill_eventfd; /* a handler asked to kill the tree: wakes the main loop */
	Budget *budget;	  /* tracer/budget.c */

	pthread_t receiver; /* the first of the threads that take turns receiving (one at a
			     * time: docs/supervisor.md, "Notifications") */
	bool has_receiver;

	/* worker pool for EMU_MAY_BLOCK handlers */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct WorkItem *queue_head, *queue_tail;
	size_t queue_len;
	size_t idle_workers; /* in serve()'s wait, or made and not yet there */
	bool leading;	     /* a thread receives (dispatch.c, "Leader and followers") */
	uint64_t lead_epoch; /* counts the times a thread took the lead */
	bool lead_busy;	     /* the leader runs a handler that may block, its timer armed */
	pthread_t watchdog;  /* hands the lead on when that handler outlasts its grace */
	int lead_timer;	     /* the watchdog's timerfd; valid while has_watchdog */
	bool has_watchdog, watchdog_failed;
	bool lead_timer_armed;	  /* its expiry not yet read by the watchdog */
	uint64_t lead_busy_since; /* CLOCK_MONOTONIC ns: when that handler began */
	pthread_t workers[TRACER_MAX_WORKERS];

	struct TracerBt *bt;	 /* tracer/backtrace.c; NULL: no backtraces asked for */
	pthread_t ptrace_thread; /* tracer/ptrace.c */
	struct PtraceStart *ptrace_start;
	bool ptrace_started;
	size_t n_workers;
	struct TracerAsk *ask; /* tracer/ask.c: held calls; NULL unless an unlisted = "ask" */
} Tracer;

typedef struct TracerAsk TracerAsk;
/* tracer/ask.c: held calls (network.unlisted = "ask", exec.unlisted = "ask"). */
int tracer_ask_start(Tracer *t);
/** Asks for a decision on a held call (blocks up to rq->timeout_ms, on a thread of its own,
 * never the tracer or a receiver thread); NET_ASK_DENY when asking was not started. */
NetAskAnswer tracer_ask(Tracer *t, const NetAskRequest *rq);
/** The run is ending: pending asks deny now (before the workers are stopped). */
void tracer_ask_cancel(Tracer *t);
/** After the workers: frees it all. */
void tracer_ask_stop(Tracer *t);
/** The command stopped: true when a terminal prompt holds the terminal (the stop is ours:
 * the command is continued after the prompt, not treated as a Ctrl-Z). */
bool tracer_ask_job_stopped(Tracer *t);

/** Fills t->host, the handlers' one door to the supervisor (common/handler.h, EmuHost), with
 * the tracer's operations and t itself as their userdata. t must not move afterwards. */
void tracer_host_init(Tracer *t);
/** The host's file-system operations (get_fd, in_tree, the ptys, ask_open: tracer/fs.c), for
 * tracer_host_init(); the Tracer is their userdata. */
void tracer_fs_host_init(EmuHost *h);

/* The Tracer behind a request tracer/ built, for tracer/'s own handlers (the tasks budget's
 * budget_handle_clone()): the userdata tracer_host_init() put in its host. Handlers below
 * tracer/ never see a Tracer; they call the host's operations. */
static inline Tracer *tracer_of_request(const EmuRequest *req)
{
	assert(req->host && req->host->userdata);
	return req->host->userdata;
}

struct seccomp_notif;

/* The audit record of one notification (tracer/audit.c): what is read from the child before
 * the reply, to be written after it. Lives on the dispatching thread's stack. */
typedef struct TracerAuditCtx {
	bool active;
	uint64_t t0;
	pid_t tgid;
	AuditRecord rec;
	char str[3][AUDIT_STRING_MAX];
	char addr_text[512];
	char addr_ip[64];
	char *argv[AUDIT_ARGV_MAX + 1];
	char argv_buf[8192];
	uint8_t code[AUDIT_CODE_BEFORE + 2 + AUDIT_CODE_AFTER];
	AuditFrame *frames; /* malloc'd when a backtrace is due, freed by tracer_audit_emit() */
	bool bt_pending;    /* the caller stops after the reply: tracer_audit_emit() waits */
	TracerBtReq bt;
	/* an ENOENT for a path: its canonical virtual path, looked up on the host after the
	 * reply (out_of_view); "" when none */
	char oov_vpath[PATH_MAX];
	char oov_host[PATH_MAX];
} TracerAuditCtx;

/** Picks the run's sink: opts->audit, else a trace-only one for --trace and "log" syscalls. */
int tracer_audit_setup(Tracer *t);
void tracer_audit_done(Tracer *t);
/** Before the reply: decides whether a record is due and reads what it shows from the child. */
void tracer_audit_capture(Tracer *t, const struct seccomp_notif *n, const TracerSlot *s,
			  const EmuDecision *d, uint64_t t0, TracerAuditCtx *c);
/* The same, taking strings the handler already read through mem (may be NULL) from there. */
void tracer_audit_capture_mem(Tracer *t, const struct seccomp_notif *n, const TracerSlot *s,
			      const EmuDecision *d, uint64_t t0, TracerAuditCtx *c,
			      const ChildMemCtx *mem);
/** A call routed through a ptrace stop, decided: the backtrace "denied" asks for, if due. */
void tracer_audit_backtrace_late(Tracer *t, const struct seccomp_notif *n, const EmuDecision *d,
				 TracerAuditCtx *c);
/** The disk budget is used up (creation denied from now on): its budget record. */
void tracer_audit_budget_full(Tracer *t, const Budget *b);
/** A sampled budget (tracer/budget.c) was exceeded: its budget record. */
void tracer_audit_budget(Tracer *t, const Budget *b, const char *which);
/** After the reply: the outcome (and the fd ADDFD installed), then the record. With a
 * backtrace pending, waits for it first; returns whether the tracer thread killed the caller
 * (a backtrace of a call that kills the sandbox, tracer/backtrace.c). */
bool tracer_audit_emit(Tracer *t, const struct seccomp_notif *n, const EmuDecision *d,
		       TracerAuditCtx *c);

/* The file-system view in the supervisor (tracer/fs.c). */
/** Builds t->view from the policy (tmp mounts, skeleton root); logs why on failure. The
 * skeleton's files are left to tracer_fs_write_files(). */
int tracer_fs_setup(Tracer *t, const Policy *p);
/** The skeleton's files (sbx_view_write_files()), after the fork: before S's "go". */
int tracer_fs_write_files(Tracer *t);
/** Frees the view: removes the run directory and tmp mounts (unless kept). */
void tracer_fs_done(Tracer *t);
/** Whether getdents64 must go through the supervisor: hide rules, or a procfs mount. */
bool tracer_fs_filters_listings(const Policy *p);
/** ptrace (tracer/ptrace.c): a thread of S seizes the command and traces the whole tree.
 * Returns once the thread is made; tracer_ptrace_seized() waits for the seize: 0, or why it
 * failed (the thread has then ended). */
int tracer_ptrace_start(Tracer *t, pid_t child);
int tracer_ptrace_seized(Tracer *t);
/** Waits for the tracer thread, which ends when no tracee is left. */
void tracer_ptrace_stop(Tracer *t);

/* Backtraces (tracer/backtrace.c). */
/** With [audit] backtrace and a sink: t->bt, the signal that wakes the tracer thread. */
int tracer_bt_setup(Tracer *t);
void tracer_bt_done(Tracer *t);
unsigned tracer_bt_depth(const Tracer *t);
/** Tracer thread: it runs (true; unblocks the wake-up signal) or ends (false). */
void tracer_bt_thread_ready(Tracer *t, bool running);
/** Tracer thread, after every wake-up: PTRACE_INTERRUPTs the callers queued. */
void tracer_bt_service(Tracer *t);
/** Tracer thread, at a PTRACE_EVENT_STOP of pid: 0 if no backtrace was due, 1 if taken,
 * 2 if taken and the thread then killed (do not resume it). */
int tracer_bt_on_stop(Tracer *t, pid_t pid);
/** Tracer thread: pid ended; a request for it fails at once. */
void tracer_bt_on_exit(Tracer *t, pid_t pid);
/** Tracer thread: unwinds the stopped tracee pid into frames; the count, or 0 and *err. */
size_t tracer_bt_unwind(Tracer *t, pid_t pid, AuditFrame *frames, size_t max, const char **err);
/** Receiver, before the reply: true when the caller will stop after it (req->frames and
 * req->max set by the caller); then tracer_bt_finish() after the reply. False: req->error. */
bool tracer_bt_begin(Tracer *t, pid_t tid, bool kill_after, TracerBtReq *req);
/** Receiver, after the reply: waits (bounded) for the frames. Returns whether the caller
 * was killed, with the tree, for a kill_after request (else the receiver must kill). */
bool tracer_bt_finish(Tracer *t, TracerBtReq *req);

/** An fd to inject instead of the O_PATH fd (which SECCOMP_IOCTL_NOTIF_ADDFD refuses): the
 * same object reopened read-only; -EBADF if fd is not O_PATH, else the reopen's -errno. */
int tracer_fs_opath_fallback(int fd);
/** The policy's virtual working directory: process.cwd, else the first rw mount, else "/". */
const char *tracer_fs_virtual_cwd(const Policy *p);
/** Host directory of the policy's virtual working directory (malloc'd), NULL on OOM. */
char *tracer_fs_host_cwd(const Tracer *t, const Policy *p);

/** The receiver and worker threads (tracer/dispatch.c). The receiver may start before the
 * listener exists; tracer_dispatch_set_fd() hands it over. */
int tracer_dispatch_start(Tracer *t);
void tracer_dispatch_set_fd(Tracer *t, int notify_fd);
void tracer_dispatch_stop(Tracer *t);
