/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The network as the supervisor enforces it (docs/network.md): the socket handlers of the
 * syscall table, the per-run network state they share (the ratcheted mode, the learned set,
 * the DNS stub and its sockets, the sockets redirected to it), and the ratchet hook the
 * file-system handlers call when a path with a sensitivity level is opened.
 *
 * The state is the run's, started by the tracer once it knows the tree's root, lent to the
 * handlers through their request's host (EmuHost.net_runtime) and stopped at the end of the
 * run; no process-global keeps it. Handlers called without one (unit tests of other
 * families) decide by the request's policy alone.
 */

#include <stdbool.h>
#include <sys/types.h>

#include "common/handler.h"
#include "policy/policy.h"

/* Visits each process of the tree (tracer/tree.c's tree_walk has this shape). */
typedef int (*NetTreeVisit)(pid_t pid, void *userdata);
typedef int (*NetTreeWalk)(pid_t root, NetTreeVisit visit, void *userdata);

/**
 * Starts the run's network state for policy p (borrowed until net_runtime_stop()): the
 * ratchet at the policy's mode, the learned set, and — in modes that can resolve names — the
 * DNS stub (a thread with a UDP socket and a TCP listener on 127.0.0.1). root and walk name
 * the tree for the ratchet's socket shutdown. On success *ret_rt is the state, for the
 * supervisor to hand to the socket handlers through EmuHost.net_runtime (common/handler.h),
 * valid until net_runtime_stop(). Returns 0 or -errno.
 */
int net_runtime_start(const Policy *p, pid_t root, NetTreeWalk walk, NetRuntime **ret_rt);
/* Called once per ratchet drop, after the sockets were shut down (for the audit record). */
typedef void (*NetRatchetEvent)(void *userdata, pid_t pid, const char *path, Sensitivity level,
				NetMode from, NetMode to, unsigned sockets_shut);
/** Sets the ratchet event callback of the run's state rt (NULL: none; rt NULL: nothing). */
void net_runtime_set_event(NetRuntime *rt, NetRatchetEvent fn, void *userdata);

/** Whether the command may run in a network namespace of its own (network.unshare): the
 * supervisor then checks before it creates the tree's sockets (net/socktab.c). */
void net_runtime_set_netns_private(NetRuntime *rt, bool maybe);

/* Held connects and sends (network.unlisted = "ask", docs/network.md "Held connects and
 * sends"). */
typedef enum NetAskAnswer {
	NET_ASK_DENY,
	NET_ASK_ALLOW_ONCE,
	NET_ASK_ALLOW_SESSION, /* this destination (address and port) for the rest of the run */
} NetAskAnswer;

/* The asker is the run's for every held call (tracer/ask.c), not only the network's: an
 * exec outside exec.allow (tracer/ptrace.c) is asked with the same request, its op "exec"
 * and its destination the program's virtual path. */
typedef struct NetAskRequest {
	pid_t pid, tgid;
	const char *op;		 /* "connect", "sendto", "sendmsg", "sendmmsg", "exec" */
	const char *destination; /* net_addr_format(): "AF_INET, 1.2.3.4:443"; a virtual path */
	const char *name;	 /* the name the address was looked up as, NULL if none */
	const char *why;	 /* "not in allowlist" */
	const char *rule;	 /* the policy key and what it holds, NULL: network.unlisted */
	const char *outside;	 /* "which is not in the allowlist" (NULL: that) */
	uint64_t timeout_ms;	 /* the policy's ask_timeout: no decision by then denies */
} NetAskRequest;

/* Asks for a decision, blocking up to rq->timeout_ms; called on a worker thread, without
 * the network mode lock, while the child waits in its syscall. */
typedef NetAskAnswer (*NetAskFn)(void *userdata, const NetAskRequest *rq);
/** Sets the asker of the run's state rt (NULL: a held connect is denied at once; rt NULL:
 * nothing). */
void net_runtime_set_asker(NetRuntime *rt, NetAskFn fn, void *userdata);

/** Stops the stub thread of rt and frees it; NULL is fine (not started). */
void net_runtime_stop(NetRuntime *rt);

/**
 * The ratchet of the run's state rt: the supervisor calls it (as EmuHost.sensitive_open,
 * common/handler.h) when the caller of req opened a path of sensitivity level
 * (SENSITIVITY_NONE, or rt NULL: nothing happens). When the mode drops: every inet socket of
 * the tree is shut down, and one line on the caller's stderr says why. Returns 1 when the
 * mode dropped, 0 when not, or -errno when the sockets could not be reached (pidfd_getfd
 * refused): the caller must then fail closed (EMU_KILL).
 */
int net_on_sensitive_open(NetRuntime *rt, const EmuRequest *req, Sensitivity level,
			  const char *path);

/** The current (ratcheted) mode of the run's state rt; NET_MODE_NONE if rt is NULL (not
 * started). */
NetMode net_runtime_mode(NetRuntime *rt);

/** The highest sensitivity level the tree opened so far (SENSITIVITY_NONE if none, or rt
 * NULL). */
Sensitivity net_runtime_level(NetRuntime *rt);

/* Handlers (net/handlers.c), named by the rows of syscalls/table.c. */
int net_handle_socket(const EmuRequest *req, EmuDecision *ret_decision);
int net_handle_socketpair(const EmuRequest *req, EmuDecision *ret_decision);
int net_handle_connect(const EmuRequest *req, EmuDecision *ret_decision);
int net_handle_bind(const EmuRequest *req, EmuDecision *ret_decision);
int net_handle_listen(const EmuRequest *req, EmuDecision *ret_decision);
int net_handle_sendto(const EmuRequest *req, EmuDecision *ret_decision);
int net_handle_sendmsg(const EmuRequest *req, EmuDecision *ret_decision);
int net_handle_sendmmsg(const EmuRequest *req, EmuDecision *ret_decision);
int net_handle_recvfrom(const EmuRequest *req, EmuDecision *ret_decision);
int net_handle_setsockopt(const EmuRequest *req, EmuDecision *ret_decision);
int net_handle_accept(const EmuRequest *req, EmuDecision *ret_decision);
int net_handle_sockname(const EmuRequest *req, EmuDecision *ret_decision);

/*
 * Where pidfd_getfd is refused (a container's default seccomp profile, issue 19) the
 * supervisor creates the tree's sockets and keeps a reference (net/socktab.c): accept and
 * accept4 are emulated, close, close_range, dup2 and dup3 notified to sweep the references,
 * inotify_init(1) made by the supervisor. The syscall table's rows name these handlers
 * (nogetfd_handler, syscalls/table.c), which replace the kernel's ALLOW in the filter.
 */
int net_handle_close(const EmuRequest *req, EmuDecision *ret_decision);
int net_handle_inotify_init(const EmuRequest *req, EmuDecision *ret_decision);
/**
 * There: a duplicate of the socket or inotify instance behind fd of thread tid, which the
 * supervisor made for the tree of the run's state rt (its file-system handlers' way to such
 * an fd), or -errno (-ENOENT: none of those, or rt NULL).
 */
int net_child_object_dup(NetRuntime *rt, pid_t tid, int fd);

/* Landlock network rules (net/landlock-apply.c), called by the launcher in the child before
 * exec, so async-signal-safe: no allocation. Fills the handled network access rights and the
 * scope bits for the policy's starting mode and adds the port rules to ruleset_fd (when
 * ruleset_fd >= 0). abi is the kernel's Landlock ABI. */
void net_landlock_access(const Policy *p, int abi, unsigned long long *ret_handled_net,
			 unsigned long long *ret_scoped);
int net_landlock_add_rules(const Policy *p, int abi, int ruleset_fd);
