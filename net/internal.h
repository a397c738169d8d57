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

#define NET_MAX_RESOLVERS 8
#define NET_MAX_REDIRECTS 256
#define NET_MAX_ASK_ALLOWED 256

/* A socket of the child that was redirected to the stub, and where the child meant to go. */
typedef struct NetRedirect {
	dev_t dev;
	ino_t ino;
	uint8_t orig[NET_SOCKADDR_MAX];
	socklen_t orig_len;
} NetRedirect;

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

	/* the stub */
	bool stub_running;
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

	pthread_mutex_t redirect_lock;
	NetRedirect *redirects; /* NET_MAX_REDIRECTS, allocated on the first redirect */
	size_t n_redirects, next_redirect;
	atomic_bool any_redirect;
} NetRuntime;

/* NULL when no run is started. */
NetRuntime *net_runtime_get(void);

/* Records that the socket (dev, ino) was redirected; orig is what the child addressed. */
void net_redirect_add(NetRuntime *rt, dev_t dev, ino_t ino, const void *orig, socklen_t len);
/* Copies the original address of a redirected socket; false when it was not redirected. */
bool net_redirect_find(NetRuntime *rt, dev_t dev, ino_t ino, uint8_t *ret_orig, socklen_t *ret_len);
/* Whether sa is one of the stub's own addresses (in either family form). */
bool net_is_stub_addr(NetRuntime *rt, const struct sockaddr *sa, socklen_t len);
