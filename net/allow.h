/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Network decisions: which sockets may be created and which addresses may be connected to, sent
 * to or bound, for the policy's [network] and the current (ratcheted) mode. Pure code plus one
 * shared object, the set of addresses learned from DNS answers. docs/network.md explains the
 * rules and why each is so.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/macros.h"
#include "net/sockaddr.h"
#include "policy/policy.h"

typedef enum NetOp {
	NET_OP_CONNECT,
	NET_OP_SENDTO, /* sendto, sendmsg, sendmmsg: one decision per address */
	NET_OP_BIND,
	NET_OP_LISTEN, /* addr is the socket's bound local address (getsockname) */
	_NET_OP_MAX,
	_NET_OP_INVALID = -EINVAL,
} NetOp;

typedef enum NetVerdict {
	NET_VERDICT_ALLOW,
	NET_VERDICT_DENY,      /* fail with .error */
	NET_VERDICT_DNS,       /* a query to a resolver: redirect it to the supervisor's DNS stub */
	NET_VERDICT_UNIX_PATH, /* AF_UNIX path: decide through the filesystem view */
	NET_VERDICT_ASK,       /* unlisted = "ask": hold the call for a decision (.error if none) */
	_NET_VERDICT_MAX,
	_NET_VERDICT_INVALID = -EINVAL,
} NetVerdict;

typedef struct NetDecision {
	NetVerdict verdict;
	int error;	 /* NET_VERDICT_DENY: positive errno the child sees */
	const char *why; /* static string for the audit record ("not in allowlist", …) */
} NetDecision;

/* ---- The learned set: name → addresses from DNS answers, each with an expiry ---- */

typedef struct NetLearned NetLearned;

/* Monotonic clock in nanoseconds; injectable for tests. */
typedef uint64_t (*NetClockFn)(void *userdata);

#define NET_LEARNED_DEFAULT_MAX 4096
#define NET_LEARNED_TTL_MIN	30    /* seconds: a TTL of 0 must still let the program connect */
#define NET_LEARNED_TTL_MAX	86400 /* seconds */

/**
 * Creates an empty set holding at most max entries (0: NET_LEARNED_DEFAULT_MAX). clock NULL
 * means now_monotonic_ns(). Returns NULL on OOM. Thread-safe: any thread may add and look up.
 */
NetLearned *net_learned_new(size_t max, NetClockFn clock, void *userdata);
NetLearned *net_learned_free(NetLearned *l);
DEFINE_FREEP(NetLearned, net_learned_free)

/**
 * Records that name (a normalized host name, see net_name_normalize()) resolved to ip (4 or 16
 * bytes by family) with ttl seconds, clamped to [NET_LEARNED_TTL_MIN, NET_LEARNED_TTL_MAX].
 * A known (name, address) pair has its expiry extended. When full, expired entries go first,
 * then the one closest to expiry. Returns 0; -EADDRNOTAVAIL for an address that a DNS answer
 * must never unlock (loopback, unspecified, link-local, multicast, broadcast, v4-mapped:
 * DNS rebinding towards the host or a cloud metadata service); -EINVAL for a bad name or family.
 */
int net_learned_add(NetLearned *l, const char *name, int family, const void *ip, uint32_t ttl);

/**
 * True when the address ip (family AF_INET or AF_INET6) was learned, not expired, for a name
 * that the allow entry matches (a NET_ALLOW_HOST or NET_ALLOW_DOMAIN entry).
 */
bool net_learned_match(NetLearned *l, const PolicyNetAllow *entry, int family, const void *ip);

/** A name the address was learned for (unexpired), into buf; false when none. For the
 * prompt of a held connect: the name the program looked up. */
bool net_learned_name_of(NetLearned *l, int family, const void *ip, char *buf, size_t size);

/** Number of live (unexpired) entries. */
size_t net_learned_count(NetLearned *l);

/* ---- Names ---- */

/**
 * Lower-cases name and drops one trailing dot into buf (size ≥ 254 is enough for any valid
 * name). Returns -EINVAL for an empty name, an empty label, a label over 63 bytes, a name over
 * 253 bytes, or bytes outside [A-Za-z0-9-_]; -ENOBUFS when buf is too small.
 */
int net_name_normalize(const char *name, char *buf, size_t size);

/** Whether a normalized name is matched by a HOST (equal) or DOMAIN (strictly below) entry. */
bool net_name_match(const PolicyNetAllow *entry, const char *name);

/** Whether any HOST/DOMAIN entry of the policy matches the normalized name. */
bool net_name_allowed(const PolicyNetwork *pn, const char *name);

/* ---- Decisions ---- */

typedef struct NetContext {
	const PolicyNetwork *policy;
	NetMode mode;		  /* current mode: the policy's, or lower after the ratchet */
	NetLearned *learned;	  /* may be NULL: HOST/DOMAIN entries then match nothing */
	const NetAddr *resolvers; /* addresses (with port) the child believes are its resolvers */
	size_t n_resolvers;
	bool ask_unlisted; /* connects and sends outside the list are NET_VERDICT_ASK: the policy's
			    * unlisted = "ask", in its own mode (never after a ratchet drop) */
} NetContext;

/** True when CIDR entry (family, addr, prefix) contains the IP of a. */
bool net_cidr_match(const PolicyNetAllow *entry, const NetAddr *a);

/**
 * Decides socket(family, type, protocol); type may carry SOCK_NONBLOCK|SOCK_CLOEXEC. Denials
 * use policy->socket_errno (EACCES if 0). Returns 0 (the decision is in *ret), -EINVAL for a
 * NULL context.
 */
int net_decide_socket(const NetContext *ctx, int family, int type, int protocol, NetDecision *ret);

/**
 * Decides op on a socket of (sock_family, sock_type) towards or at addr. Denials of connect
 * and send use policy->connect_errno (ECONNREFUSED if 0), bind and listen EACCES, and address
 * forms the kernel would refuse get the kernel's errno. Returns 0 (decision in *ret) or
 * -EINVAL for bad arguments.
 */
int net_decide_address(const NetContext *ctx, NetOp op, int sock_family, int sock_type,
		       const NetAddr *addr, NetDecision *ret);

/**
 * Decodes len bytes (the supervisor's own copy of the child's sockaddr: the decision and the
 * call made later must both use this copy) and decides as net_decide_address(). A malformed
 * address is a denial with EINVAL ("malformed address"), what the kernel would answer.
 * *ret_addr (optional) receives the decoded address when it decodes. Returns 0 or -EINVAL for
 * bad arguments.
 */
int net_decide_sockaddr(const NetContext *ctx, NetOp op, int sock_family, int sock_type,
			const void *buf, size_t len, NetAddr *ret_addr, NetDecision *ret);

/** Whether an abstract name (bytes, may contain NULs) is listed as "@name" in unix_sockets. */
bool net_unix_abstract_listed(const PolicyNetwork *pn, const char *name, size_t len);

/** Whether a virtual path is listed in unix_sockets. */
bool net_unix_path_listed(const PolicyNetwork *pn, const char *path);

const char *net_op_to_string(NetOp op);
const char *net_verdict_to_string(NetVerdict v);
