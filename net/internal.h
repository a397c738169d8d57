/* SPDX-License-Identifier: MIT */
#pragma once

/* Private to net/: the run's network state shared by net/runtime.c and net/handlers.c. */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "net/allow.h"
#include "net/handlers.h"
#include "net/ratchet.h"
#include "net/sockaddr.h"

#define NET_MAX_RESOLVERS   8
#define NET_MAX_REDIRECTS   256
#define NET_MAX_ASK_ALLOWED 256

/* A socket of the child that was redirected to the stub, and where the child meant to go. */
typedef struct NetRedirect {
	dev_t dev;
	ino_t ino;
	uint8_t orig[NET_SOCKADDR_MAX];
	socklen_t orig_len;
} NetRedirect;

/* Table keys of inotify instances: their marker's inode with this bit */
#define NET_KEY_INOTIFY	 (1ULL << 63)
#define NET_KIND_INOTIFY (-1)

/* A socket the supervisor created for the tree and keeps (net/socktab.c). */
typedef struct NetSock {
	uint64_t ino;	     /* what /proc/PID/fd/N reads as: "socket:[INO]" */
	int fd;		     /* the supervisor's reference */
	int fd2;	     /* an inotify instance's marker (net/socktab.c), else -1 */
	int domain, type;    /* domain NET_KIND_INOTIFY: an inotify instance */
	uint64_t installed;  /* the sweep epoch when ADDFD installed it; 0: not yet */
	uint64_t keep_until; /* monotonic ns: passed in SCM_RIGHTS, kept at least until then */
	bool dropping;	     /* net_socks_sweep(): disarmed, to be closed */
} NetSock;

typedef struct NetRuntime {
	const Policy *policy;
	pid_t root;
	NetTreeWalk walk;

	NetRatchet ratchet;
	NetRatchetEvent event;
	void *event_userdata;
	/* Readers: every emulated connect/send decides and performs under it; writer: the
	 * ratchet's drop and socket shutdown. gen counts drops, so a blocking connect can tell
	 * that the mode changed while it waited. */
	pthread_rwlock_t mode_lock;
	atomic_uint gen;
	bool may_drop_below_full; /* a ratchet mapping exists below the starting mode */
	NetMode lowest;		  /* the lowest mode a ratchet drop can reach (the start if none) */

	NetLearned *learned;
	NetAddr resolvers[NET_MAX_RESOLVERS];
	size_t n_resolvers;

	/* the stub: it serves the run unless it starts in none (stub_running); its sockets and
	 * thread are made by the first query redirected to it (net_stub_wake(), under
	 * stub_lock); stub_ready says the addresses below are set */
	bool stub_running;
	pthread_mutex_t stub_lock;
	atomic_bool stub_ready;
	bool stub_thread_started;
	pthread_t stub_thread;
	int stub_udp, stub_tcp, stub_stop; /* stub_stop: eventfd */
	struct sockaddr_in stub_udp_addr, stub_tcp_addr;
	struct sockaddr_storage upstreams[NET_MAX_RESOLVERS];
	socklen_t upstream_lens[NET_MAX_RESOLVERS];
	size_t n_upstreams;
	atomic_uint stub_tcp_clients;

	/* held connects: the asker, and destinations allowed for the session */
	NetAskFn ask;
	void *ask_userdata;
	pthread_mutex_t ask_lock;
	NetAddr *ask_allowed; /* NET_MAX_ASK_ALLOWED, allocated on the first allow_session */
	size_t n_ask_allowed;

	/* AF_UNIX names bound under an alias (bind_alias() in net/handlers.c, the COMPAT of
	 * EmuUnixNames.alias): set once one was, from then on getsockname(), getpeername(),
	 * accept() and recvfrom() of AF_UNIX sockets translate aliases back; the sequence
	 * numbers the binds in progress in the run's private directory. The run's, not the
	 * process's: another run (the MCP server runs many) has a directory of its own, and its
	 * calls need not pay for our aliases. */
	atomic_bool any_unix_alias;
	atomic_uint unix_alias_seq;

	pthread_mutex_t redirect_lock;
	NetRedirect *redirects; /* NET_MAX_REDIRECTS, allocated on the first redirect */
	size_t n_redirects, next_redirect;
	atomic_bool any_redirect;

	/* pidfd_getfd refused (issue 19): the supervisor creates the tree's sockets and keeps
	 * them here (net/socktab.c) */
	bool own_sockets;
	atomic_int netns_differs; /* 0: not known yet, 1: same as ours, 2: the child's differs */
	pthread_mutex_t sock_lock;
	pthread_cond_t sock_cond;
	NetSock *socks;
	size_t n_socks, cap_socks, sweep_at;
	_Atomic uint64_t sock_epoch; /* incremented as each sweep starts */
	uint64_t sweep_due;	     /* monotonic ns, 0: none requested */
	bool sweep_again, sweeper_running, sweeper_stop;
	pthread_t sweeper_thread;
} NetRuntime;

/* The run's network state as a handler gets it: from the host of its request (EmuHost,
 * common/handler.h), NULL when there is none. */
static inline NetRuntime *net_runtime_of(const EmuRequest *req)
{
	const EmuHost *h = req->host;

	return h && h->net_runtime ? h->net_runtime(h->userdata) : NULL;
}

/* Records that the socket (dev, ino) was redirected; orig is what the child addressed. */
void net_redirect_add(NetRuntime *rt, dev_t dev, ino_t ino, const void *orig, socklen_t len);
/* Copies the original address of a redirected socket; false when it was not redirected. */
bool net_redirect_find(NetRuntime *rt, dev_t dev, ino_t ino, uint8_t *ret_orig, socklen_t *ret_len);
/* Starts the stub's thread if it is not running yet; < 0 if it cannot be. Called before a
 * socket is redirected to the stub. */
int net_stub_wake(NetRuntime *rt);

/* Whether sa is one of the stub's own addresses (in either family form). */
bool net_is_stub_addr(NetRuntime *rt, const struct sockaddr *sa, socklen_t len);

/* The tree's sockets where pidfd_getfd is refused (net/socktab.c has the rules). */
void net_socks_init(NetRuntime *rt, bool own);
void net_socks_done(NetRuntime *rt);
/* Records (a duplicate of) fd, a socket the supervisor created for the tree; the entry is
 * not judged by sweeps until net_socks_installed(ok). 0 or -errno. */
int net_socks_add(NetRuntime *rt, int fd, int domain, int type, uint64_t *ret_ino);
void net_socks_installed(NetRuntime *rt, uint64_t ino, bool ok);
/* Installs fd in the caller with SECCOMP_IOCTL_NOTIF_ADDFD (no SEND): its number or -errno. */
int net_socks_install(const EmuRequest *req, int fd, bool cloexec);
/* The socket inode behind fd childfd of thread tid, 0 with *ret_error (EBADF, ENOTSOCK…). */
uint64_t net_socks_child_ino(pid_t tid, int childfd, int *ret_error);
/* A duplicate of the table's reference to the caller's socket childfd, with its family and
 * type; passed: it is being sent in SCM_RIGHTS. 0, a positive errno for the child (EBADF,
 * ENOTSOCK, EPERM: not in the table), or -errno. */
int net_socks_get(NetRuntime *rt, const EmuRequest *req, int childfd, bool passed, int *ret_fd,
		  int *ret_domain, int *ret_type);
bool net_socks_any(NetRuntime *rt);
bool net_socks_has(NetRuntime *rt, uint64_t ino);
/* A sweep soon (2 ms; again: once more 20 ms later). */
void net_socks_request_sweep(NetRuntime *rt, bool again);
/* Drops the references no fd table of the tree holds; how many. */
int net_socks_sweep(NetRuntime *rt);
/* The ratchet: shuts every inet socket of the table down; -EPERM when a table of the tree
 * holds a socket outside the table that may be an inet one, -errno when a table cannot be
 * read. */
int net_socks_shutdown_inet(NetRuntime *rt, unsigned *ret_count);
/* A new inotify instance (inotify_init1 flags) recorded in the table with its marker; the
 * caller installs *ret_fd and calls net_socks_installed(*ret_key). 0 or -errno. */
int net_inotify_new(NetRuntime *rt, int flags, int *ret_fd, uint64_t *ret_key);
