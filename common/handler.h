/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The handler interface: what passes between the supervisor (tracer/) and the syscall
 * handlers (emulation/, net/), and the one door a handler has to the supervisor (EmuHost).
 * Handlers are pure-ish: input is the request, output is the decision. They read child
 * memory only through req->mem and reach the supervisor only through req->host; side effects
 * (ADDFD, process_vm_writev of results, ID validity checks, audit) happen in
 * tracer/dispatch.c after the handler returns. See STYLE.md "The syscall handler table" and
 * docs/architecture.md, "The host interface".
 *
 * Here in common/ because both emulation/ and net/ implement handlers and neither may include
 * the other (docs/architecture.md, "Layers"); emulation/emu.h includes it and adds what only
 * the syscall table's rows need. common/ includes nothing above it, so the types of higher
 * layers a request carries (the policy, the view, the network state) are opaque pointers
 * here. The one value type the host's operations take from policy/, a file's Sensitivity,
 * moved to common/sensitivity.h rather than becoming an int at this edge: it keeps its
 * enum type, so a handler passing something else is a compiler warning, not a silent
 * ratchet to the wrong level. The names keep their Emu prefix: every handler spells them.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/types.h>

#include "common/sensitivity.h" /* for the ratchet hook */
#include "common/util.h"	/* tid_tgid(), for emu_req_tgid() */

/* Opaque here: named by pointer only, never included (common/ includes nothing above it) */
typedef struct Policy Policy;	      /* the run's policy (policy/policy.h) */
typedef struct SbxView SbxView;	      /* the file-system view (emulation/path/view.h) */
typedef struct EmuSignal EmuSignal;   /* a signal to send (emulation/process.h) */
typedef struct NetRuntime NetRuntime; /* the run's network state (net/) */
typedef struct PolicyRule PolicyRule; /* a [[rule]] of the policy (policy/policy.h) */
typedef struct EmuRequest EmuRequest;

typedef enum EmuVerdict {
	EMU_CONTINUE, /* kernel runs the call; only for register-only decisions */
	EMU_RETURN,   /* emulated: the child sees .val */
	EMU_FAIL,     /* the child sees -1 with errno = .error */
	EMU_KILL,     /* kill the child's process tree */
	_EMU_VERDICT_MAX,
	_EMU_VERDICT_INVALID = -EINVAL,
} EmuVerdict;

/*
 * Data the handler wants written back into the child before the reply (stat buffers, the
 * name getsockname() answers, a datagram recvfrom() received…). A handler never writes child
 * memory itself: tracer/dispatch.c is the only writer (respond()), after the handler returned
 * and before the reply, entry by entry in the order they were added, and only for a decision
 * that returns (EMU_RETURN, EMU_CONTINUE). The first write that fails turns the decision into
 * EMU_FAIL with EFAULT (ESRCH: the thread is gone) and the later entries are not written: the
 * kernel's answer to a copy_to_user() that faults at the end of a call, whatever the call did
 * (an accepted connection or a received datagram is then lost, as in the kernel).
 *
 * TOCTOU: the data is the supervisor's copy, made while the handler ran; the child's threads
 * may change or unmap the destination meanwhile, which only makes the write fail (EFAULT) or
 * land where the child now has its buffer, as a kernel write at the end of the call would.
 * Nothing the supervisor decides reads the destination back.
 */
typedef struct EmuWriteBack {
	uint64_t addr;
	const void *data; /* points into the decision's scratch or into its heap buffer */
	size_t len;
} EmuWriteBack;

#define EMU_SCRATCH_SIZE 4096
/* sendmmsg writes one msg_len per message it sent (NET_MMSG_MAX, net/handlers.c) */
#define EMU_MAX_WRITEBACK 8

typedef struct EmuDecision {
	EmuVerdict verdict;
	int64_t val;
	int error;	       /* positive errno, EMU_FAIL only */
	int inject_fd;	       /* >= 0: tracer installs it with NOTIF_ADDFD (+SEND); owned here */
	unsigned inject_flags; /* O_CLOEXEC for newfd_flags */
	int inject_setfd;      /* >= 0: install inject_fd at this number, replacing the child's
				* fd (ADDFD_FLAG_SETFD, no SEND), then answer .val */
	bool denied;	       /* the policy refused (counted as a denial, audited as such) */
	const char *why;       /* static string, copied into the audit record */
	EmuWriteBack writeback[EMU_MAX_WRITEBACK];
	size_t n_writeback;
	/* owned: one buffer too large for the scratch (recvfrom's datagram, up to its length)
	 * that a write-back points into; freed by emu_decision_release() */
	void *heap;
	char path[4096]; /* virtual path the call was about, for audit ("" if none) */
	char host_path[4096];
	unsigned char scratch[EMU_SCRATCH_SIZE] __attribute__((aligned(16)));
} EmuDecision;

/*
 * AF_UNIX path names (bind, connect, sendto of a "/path" address) resolve in the file-system
 * view, which is emulation/'s, while the socket handlers are net/'s: the view offers what
 * those handlers need as this table (sbx_view_unix_names, emulation/path/unix.c), the host
 * hands it on (EmuHost.unix_names), and net/ never includes the view. Each operation takes
 * the request and works in its view (req->view, not NULL when they are called).
 */
struct sockaddr_un;

/* A name resolved for a bind or connect, pinned until done(): the object checked is the one
 * the address names, whatever the tree does with the path meanwhile. */
typedef struct EmuUnixName {
	int parent_fd;		 /* the pinned directory the name is (to be) in; the pin's */
	char name[NAME_MAX + 1]; /* the last component */
	bool exists;
	/* bind: the child's path is relative and names `name` in the directory it starts from
	 * ("name", "./name"), so the socket may be bound under the child's own bytes from
	 * there (the view's sbx_view_unix_name_in_parent()) */
	bool name_in_parent;
	void *pin; /* the view's resolution; NULL when not resolved */
} EmuUnixName;

typedef struct EmuUnixNames {
	/*
	 * Resolves path as the caller of req sees it (relative: from its cwd) for a bind
	 * (creates, never follows the last component) or a connect (follows), checks it
	 * against the policy and writes the address the supervisor uses instead, which names
	 * exactly the pinned object (a /proc/self/fd/N address). Returns 0 (then done() once the
	 * socket call is over) or a negative errno for the child: -ENOENT, -EACCES, -EROFS,
	 * -EADDRINUSE, -ECONNREFUSED, -ENAMETOOLONG, -ENOMEM.
	 */
	int (*resolve)(const EmuRequest *req, const char *path, bool bind, EmuUnixName *ret,
		       struct sockaddr_un *ret_addr, unsigned *ret_len);
	void (*done)(EmuUnixName *n);
	/* After a bind the supervisor made (umask 0): the socket file gets 0777 & ~umask. */
	int (*bound)(const EmuUnixName *n, mode_t umask);
	/* COMPAT (no user namespace, as in a default container): an address of the run's
	 * private directory for the bind of the absolute name `path` (resolved into n), which
	 * unalias() turns back into path; seq unique among the binds in progress. 0 or -errno;
	 * alias_done() after the bind either way. */
	int (*alias)(const EmuRequest *req, const char *path, const EmuUnixName *n, unsigned seq,
		     struct sockaddr_un *ret_addr, unsigned *ret_len);
	void (*alias_done)(const EmuRequest *req, const char *path, unsigned seq);
	/* Whether addr (of length *len) is an alias: then rewrites it to the name the program
	 * bound (getsockname(), getpeername(), accept(), recvfrom()). */
	bool (*unalias)(const EmuRequest *req, struct sockaddr_un *addr, unsigned *len);
} EmuUnixNames;

/* Bounded access to the memory of the process that made the call. */
typedef struct ChildMem {
	/* Copies len bytes at addr; returns 0 or -EFAULT (never crashes the supervisor). */
	int (*read)(const struct ChildMem *m, uint64_t addr, void *buf, size_t len);
	/* Copies a NUL-terminated string of at most size-1 bytes; -EFAULT, -ENAMETOOLONG. */
	int (*read_string)(const struct ChildMem *m, uint64_t addr, char *buf, size_t size);
	void *userdata;
} ChildMem;

/*
 * What a handler may ask of the supervisor that runs it: one explicit door instead of
 * several hidden ones. emulation/ and net/ sit below tracer/ (docs/architecture.md, "Layers"),
 * so whatever needs the tracer's per-run state (its process table and pidfds, its budgets,
 * the network ratchet, which lives in net/ but is the run's) is a function pointer here, set
 * by tracer/ when the run starts, and `userdata` is handed back to each, opaque to the
 * handler. A NULL pointer is an operation the host does not offer; each helper below says
 * what a handler then does. Unit tests fill one with fakes (tests/unit/path/test-emu-host.c).
 *
 * The file-system view reaches the caller's fds, cwd and umask through the same struct
 * (get_fd and the rest, last), not a table of its own: one door, so a fake host answers
 * everything a handler may ask, and tracer/ fills one struct per run. The view keeps a
 * pointer to the host it was made with, for the two operations its walk calls (in_tree,
 * open_pts); tracer/ gives it the run's, the very one every request points to. What a
 * missing file-system operation means is the view's to say (its defaults act on a process
 * through /proc and pidfds, which common/ does not do): emulation/path/view.h has their
 * helpers, sbx_host_get_fd() and sbx_host_get_umask(), and the default host of a view made
 * outside a run, sbx_view_default_host().
 */
typedef struct EmuHost {
	/*
	 * An open is about to hand the child a file the policy marks with a sensitivity level
	 * (network.ratchet, docs/network.md): the run's network mode may drop, and the tree's
	 * inet sockets be shut, before the child gets the fd. Returns 1 when the mode dropped,
	 * 0 when not, or a negative errno when not every socket could be reached: the handler
	 * then kills the tree (fail closed). NULL: no ratchet.
	 */
	int (*sensitive_open)(void *userdata, const EmuRequest *req, Sensitivity level,
			      const char *vpath);

	/*
	 * The process and signal family (emulation/signal.c, emulation/process.h): tree
	 * membership and signal delivery need the tracer's process table and pidfds. A host
	 * without the first three offers no process family: those handlers fail (-EINVAL).
	 *
	 * send_signal sends s on behalf of the caller, only to processes of the sandboxed
	 * tree. Returns 0 when delivered, a positive errno for the child (EPERM outside the
	 * tree, ESRCH gone), or a negative errno when the supervisor itself failed.
	 */
	int (*send_signal)(void *userdata, const EmuRequest *req, const EmuSignal *s);
	/* 0 if pid (a tid, tgid, or with is_pgid a process group) is in the tree, else a
	 * positive errno (EPERM, ESRCH); negative on supervisor failure. */
	int (*check_target)(void *userdata, const EmuRequest *req, pid_t pid, bool is_pgid);
	/* Runs fcntl(fd, cmd, arg) on a duplicate of the caller's fd (pidfd_getfd). Returns the
	 * result (>= 0), a positive errno for the child, or a negative supervisor failure. */
	int (*fcntl_dup)(void *userdata, const EmuRequest *req, int fd, int cmd, void *arg);
	/* Runs ioctl(fd, cmd, arg) on a duplicate of the caller's fd, arg pointing into the
	 * supervisor's memory. Returns 0, a positive errno for the child, or a negative
	 * supervisor failure (only for commands whose result is 0). NULL: ioctl fails. */
	int (*ioctl_dup)(void *userdata, const EmuRequest *req, int fd, unsigned long cmd,
			 void *arg);

	/* Budgets (docs/budgets.md), the tracer's. Whether the disk budget is used up:
	 * creating files, directories, nodes and symlinks then fails with EDQUOT. NULL: never. */
	bool (*disk_full)(void *userdata);
	/* Whether the caller's RLIMIT_FSIZE is the disk budget's, so that growth past it fails
	 * with EDQUOT rather than EFBIG. NULL: never. */
	bool (*efbig_is_disk)(void *userdata);

	/* The run's network state (net/runtime.c: the ratchet and its lock, the learned
	 * addresses, the DNS stub, the sockets the supervisor holds), for the socket handlers
	 * of net/: the run owns it, the handlers borrow it for one call. NULL (or an operation
	 * answering NULL): no network supervision, as in unit tests. */
	NetRuntime *(*net_runtime)(void *userdata);

	/*
	 * Landlock holds every process of the tree to exactly what the view shows: read beneath
	 * each ro mount's source, everything beneath each rw and tmp one, nothing else, and the
	 * view narrows none of it (no rule outside the procfs mounts, no mount beneath another
	 * but a tmp one, no source under /dev; tracer_landlock_exact_why(), tracer/landlock.c).
	 * An open the view resolved where the kernel's own walk of the caller's string ends
	 * too (SbxResolved.kernel_same) may then be made by the kernel after the checks
	 * (emulation/fs-open.c). false: never.
	 */
	bool landlock_exact;

	/* AF_UNIX path names in the request's view (above): tracer/ gives the view's table. A
	 * handler with a view but no table refuses path names (EACCES): never around the view. */
	const EmuUnixNames *unix_names;

	/*
	 * The caller's files as the file-system view needs them (emulation/path/view.h): its
	 * fds and cwd, umask and their paths, which /proc/PID entries it may see, pseudo-
	 * terminals, and the opens an ask rule holds. Unlike the operations above these take a
	 * pid, not the request: the path walk calls in_tree and open_pts with no request in
	 * reach (an SbxLookup), the view holds this same host for that (sbx_view_new()), and
	 * tracer/'s audit reads a path of a notification it only has the pid of. Handlers call
	 * them through req->host only; a view made outside a run (the agent's file tools, the
	 * probe of `check`, unit tests) gets the view's default host,
	 * sbx_view_default_host(), which acts on the calling process itself.
	 *
	 * get_fd: a new fd (O_CLOEXEC, caller closes) for the child's fd, or its cwd when fd is
	 * AT_FDCWD; -errno (-EBADF when the child has no such fd). NULL: the view's default
	 * (pidfd_getfd, or an open of /proc/PID/cwd).
	 */
	int (*get_fd)(void *userdata, pid_t pid, int fd);
	/* The umask of the child (>= 0) or -errno. NULL: the view's default (/proc/PID/status). */
	int (*get_umask)(void *userdata, pid_t pid);
	/* Whether pid belongs to the sandboxed tree (its /proc entries are visible). NULL: all
	 * pids are hidden except the caller's own process. */
	bool (*in_tree)(void *userdata, pid_t pid);
	/* The host path of the child's fd, or of its cwd for AT_FDCWD, into buf: 0 or -errno
	 * (-EBADF: no such fd). Cheaper than get_fd for relative lookups (one readlink). NULL:
	 * relative lookups use get_fd. */
	int (*get_path)(void *userdata, pid_t pid, int fd, char *buf, size_t size);
	/* Pseudo-terminals (policy process.pty): the open handler calls pty_created with the
	 * supervisor's fd of a master it opened for pid (/dev/ptmx), before the child gets it.
	 * open_pts answers /dev/pts/N: a new fd of that pts (flags: O_ACCMODE, O_NONBLOCK), or
	 * with flags < 0 only 0 when it may be opened; -ENOENT unless the tree created pty N and
	 * still holds its master. NULL: no /dev/pts/N at all (ptmx opens still work). */
	void (*pty_created)(void *userdata, pid_t pid, int master_fd);
	int (*open_pts)(void *userdata, pid_t pid, unsigned n, int flags);
	/* An open a [[rule]] access = "ask"/"ask-write" holds (docs/policy.md "[[rule]]"):
	 * blocks up to the rule's ask_timeout for a human's decision, on a worker. Returns 0
	 * (denied), 1 (allowed once) or 2 (allowed; the path is remembered for the run and not
	 * asked about again). NULL: denied. */
	int (*ask_open)(void *userdata, pid_t pid, pid_t tgid, const char *vpath, bool write,
			const PolicyRule *rule);

	void *userdata; /* the supervisor's; tracer/: its Tracer */
} EmuHost;

struct EmuRequest {
	const Policy *policy;
	const SbxView *view; /* NULL until the filesystem view exists */
	const ChildMem *mem;
	pid_t pid; /* thread id that made the call */
	/* Its thread group when whoever made the request knows it, else 0: emu_req_tgid().
	 * The receiver leaves it 0: only signals, sockets and walks through /proc or
	 * /dev/pts need it, and asking the kernel is a system call (issue 20). */
	pid_t known_tgid;
	uint32_t arch; /* AUDIT_ARCH_* */
	int nr;
	uint64_t args[6];
	uint64_t id;	     /* notification id */
	int listener;	     /* > 0: the seccomp listener, for handlers that install several fds
			      * themselves (SECCOMP_IOCTL_NOTIF_ADDFD without SEND); 0: none (tests) */
	const EmuHost *host; /* NULL: none (unit tests): every helper below then does nothing */
};

/* The caller's thread group (common/util.h, tid_tgid()); each call asks again, so a handler
 * that needs it more than once keeps it. */
static inline pid_t emu_req_tgid(const EmuRequest *req)
{
	return req->known_tgid > 0 ? req->known_tgid : tid_tgid(req->pid);
}

/* Returns < 0 only when the supervisor itself failed; the tracer then fails the call closed. */
typedef int (*EmuHandler)(const EmuRequest *req, EmuDecision *ret_decision);

static inline void emu_decision_init(EmuDecision *d)
{
	d->verdict = EMU_CONTINUE;
	d->val = 0;
	d->error = 0;
	d->inject_fd = -1;
	d->inject_flags = 0;
	d->inject_setfd = -1;
	d->denied = false;
	d->why = NULL;
	d->n_writeback = 0;
	d->heap = NULL;
	d->path[0] = 0;
	d->host_path[0] = 0;
}

/*
 * Frees what a decision owns past its reply (the heap buffer of its write-backs) and forgets
 * the write-backs. tracer/dispatch.c calls it once a decision was answered and audited, and
 * before it initialises a decision again: emu_decision_init() on a decision that still owns a
 * buffer would leak it. Idempotent.
 */
static inline void emu_decision_release(EmuDecision *d)
{
	free(d->heap);
	d->heap = NULL;
	d->n_writeback = 0;
}

/*
 * Adds a write-back of len bytes of data (copied into the decision's scratch, 16-byte
 * aligned) to addr in the child. 0, or -E2BIG when the entries or the scratch are full: a
 * handler bug (the sizes are bounded by each call), which fails the call closed.
 */
static inline int emu_writeback(EmuDecision *d, uint64_t addr, const void *data, size_t len)
{
	size_t used = 0;

	for (size_t i = 0; i < d->n_writeback; i++)
		if (d->writeback[i].data != d->heap)
			used += (d->writeback[i].len + 15) & ~(size_t) 15;
	if (d->n_writeback >= EMU_MAX_WRITEBACK || len > EMU_SCRATCH_SIZE - used)
		return -E2BIG;
	if (len > 0)
		memcpy(d->scratch + used, data, len);
	d->writeback[d->n_writeback++] = (EmuWriteBack){
		.addr = addr,
		.data = d->scratch + used,
		.len = len,
	};
	return 0;
}

/*
 * Adds a write-back of the first len bytes of buf, a malloc()ed buffer the decision takes
 * over (its heap; one per decision): for data larger than the scratch, received straight
 * into buf without another copy. buf is freed with the decision in every case, also when this
 * fails (-E2BIG: the entries are full, or the decision owns a buffer already).
 */
static inline int emu_writeback_own(EmuDecision *d, uint64_t addr, void *buf, size_t len)
{
	if (d->heap || d->n_writeback >= EMU_MAX_WRITEBACK) {
		free(buf);
		return -E2BIG;
	}
	d->heap = buf;
	d->writeback[d->n_writeback++] = (EmuWriteBack){
		.addr = addr,
		.data = buf,
		.len = len,
	};
	return 0;
}

/* The ratchet hook of EmuHost: 0 when there is no host or no ratchet. */
static inline int emu_host_sensitive_open(const EmuRequest *req, Sensitivity level,
					  const char *vpath)
{
	if (!req->host || !req->host->sensitive_open)
		return 0;
	return req->host->sensitive_open(req->host->userdata, req, level, vpath);
}

/* EmuHost.disk_full: false when there is no host or no disk budget. */
static inline bool emu_host_disk_full(const EmuRequest *req)
{
	return req->host && req->host->disk_full && req->host->disk_full(req->host->userdata);
}

/* EmuHost.efbig_is_disk: false when there is no host or no disk budget. */
static inline bool emu_host_efbig_is_disk(const EmuRequest *req)
{
	return req->host && req->host->efbig_is_disk &&
	       req->host->efbig_is_disk(req->host->userdata);
}

/* EmuHost.unix_names when the request has a view to resolve in: NULL when there is none,
 * or no host, or the host offers no table. */
static inline const EmuUnixNames *emu_host_unix_names(const EmuRequest *req)
{
	return req->view && req->host ? req->host->unix_names : NULL;
}
