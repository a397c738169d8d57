/* SPDX-License-Identifier: MIT */
/*
 * Network decisions and the DNS-learned address set. docs/network.md gives the rules; the
 * comments here say why the less obvious ones are so.
 */
#include "net/allow.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "common/util.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

/* ---- Names ---- */

int net_name_normalize(const char *name, char *buf, size_t size)
{
	size_t n = strlen(name), label = 0;

	if (n > 0 && name[n - 1] == '.')
		n--;
	if (n == 0 || n > 253)
		return -EINVAL;
	if (size < n + 1)
		return -ENOBUFS;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (c == '.') {
			if (label == 0)
				return -EINVAL;
			label = 0;
		} else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
			   c == '_') {
			label++;
		} else if (c >= 'A' && c <= 'Z') {
			c = (char) (c - 'A' + 'a');
			label++;
		} else
			return -EINVAL;
		if (label > 63)
			return -EINVAL;
		buf[i] = c;
	}
	if (label == 0)
		return -EINVAL;
	buf[n] = '\0';
	return 0;
}

/* Length of an entry's name without one trailing dot, so "example.com." works as written. */
static size_t entry_name_len(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && s[n - 1] == '.' ? n - 1 : n;
}

bool net_name_match(const PolicyNetAllow *entry, const char *name)
{
	size_t en, nn;

	if (!entry->name || !name)
		return false;
	en = entry_name_len(entry->name);
	nn = strlen(name);
	if (en == 0)
		return false;

	switch (entry->kind) {
	case NET_ALLOW_HOST:
		return nn == en && strncasecmp(name, entry->name, en) == 0;
	case NET_ALLOW_DOMAIN:
		/* Strictly below: "a.example.com" for "*.example.com", not "example.com" nor
		 * "badexample.com". */
		return nn > en + 1 && name[nn - en - 1] == '.' &&
		       strncasecmp(name + nn - en, entry->name, en) == 0;
	default:
		return false;
	}
}

bool net_name_allowed(const PolicyNetwork *pn, const char *name)
{
	for (size_t i = 0; i < pn->n_allow; i++)
		if (net_name_match(&pn->allow[i], name))
			return true;
	return false;
}

/* ---- The learned set ---- */

typedef struct LearnedEntry {
	char name[254];
	int family;
	uint8_t ip[16];
	uint64_t expiry_ns;
	int32_t next; /* next in the bucket chain, or in the free list; -1 ends */
	bool used;
} LearnedEntry;

struct NetLearned {
	pthread_rwlock_t lock;
	NetClockFn clock;
	void *userdata;
	size_t max, n_used;
	LearnedEntry *entries;
	int32_t *buckets;
	size_t n_buckets;  /* power of two */
	int32_t free_head; /* entries freed by entry_remove() */
	size_t n_fresh;	   /* entries[n_fresh..max) were never used: linked lazily, so that a
			    * run that learns nothing does not touch the whole array (1.2 MB) */
};

/* entries and buckets are made by the first add (storage_make()): most runs learn nothing,
 * and every start set the buckets' 16 KiB to -1, in S after the fork of the keeper, on the
 * start's path (docs/performance.md, "Less work after the fork"). Until then every
 * chain is empty. */
static int32_t chain_of(const NetLearned *l, size_t b)
{
	return l->buckets ? l->buckets[b] : -1;
}

static int storage_make(NetLearned *l)
{
	l->entries = calloc(l->max, sizeof(LearnedEntry));
	l->buckets = malloc(l->n_buckets * sizeof(int32_t));
	if (!l->entries || !l->buckets) {
		free(l->entries);
		free(l->buckets);
		l->entries = NULL;
		l->buckets = NULL;
		return -ENOMEM;
	}
	for (size_t i = 0; i < l->n_buckets; i++)
		l->buckets[i] = -1;
	return 0;
}

static uint64_t default_clock(void *userdata)
{
	(void) userdata;
	return now_monotonic_ns();
}

NetLearned *net_learned_new(size_t max, NetClockFn clock, void *userdata)
{
	_cleanup_free_ NetLearned *l = NULL;

	if (max == 0)
		max = NET_LEARNED_DEFAULT_MAX;
	if (max > INT32_MAX / 2)
		return NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->max = max;
	l->clock = clock ?: default_clock;
	l->userdata = userdata;
	l->n_buckets = 16;
	while (l->n_buckets < max)
		l->n_buckets <<= 1;
	l->free_head = -1;
	if (pthread_rwlock_init(&l->lock, NULL) != 0)
		return NULL;
	return TAKE_PTR(l);
}

NetLearned *net_learned_free(NetLearned *l)
{
	if (!l)
		return NULL;
	(void) pthread_rwlock_destroy(&l->lock);
	free(l->entries);
	free(l->buckets);
	free(l);
	return NULL;
}

static size_t ip_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

static size_t bucket_of(const NetLearned *l, int family, const uint8_t *ip)
{
	uint32_t h = 2166136261u ^ (uint32_t) family;

	for (size_t i = 0; i < ip_len(family); i++) {
		h ^= ip[i];
		h *= 16777619u;
	}
	return h & (l->n_buckets - 1);
}

static void entry_remove(NetLearned *l, int32_t idx)
{
	LearnedEntry *e = &l->entries[idx];
	int32_t *link = &l->buckets[bucket_of(l, e->family, e->ip)];

	while (*link != idx) {
		assert(*link >= 0);
		link = &l->entries[*link].next;
	}
	*link = e->next;
	e->used = false;
	e->next = l->free_head;
	l->free_head = idx;
	l->n_used--;
}

/* Makes room for one entry: expired ones first, then the one that expires soonest. */
static bool has_free(const NetLearned *l)
{
	return l->free_head >= 0 || l->n_fresh < l->max;
}

static void make_room(NetLearned *l, uint64_t now)
{
	int32_t oldest = -1;

	for (size_t i = 0; i < l->max; i++) {
		LearnedEntry *e = &l->entries[i];

		if (!e->used)
			continue;
		if (e->expiry_ns <= now)
			entry_remove(l, (int32_t) i);
		else if (oldest < 0 || e->expiry_ns < l->entries[oldest].expiry_ns)
			oldest = (int32_t) i;
	}
	if (!has_free(l) && oldest >= 0)
		entry_remove(l, oldest);
}

/* Addresses a DNS answer must never unlock: the host itself, link-local (cloud metadata at
 * 169.254.169.254), multicast and broadcast, and v4-mapped/compatible forms of anything. */
static bool learnable(int family, const uint8_t *ip)
{
	if (family == AF_INET)
		return !(ip[0] == 0 || ip[0] == 127 || (ip[0] == 169 && ip[1] == 254) ||
			 ip[0] >= 224);
	if (ip[0] == 0xff || (ip[0] == 0xfe && (ip[1] & 0xc0) == 0x80))
		return false;
	/* ::/96 (::, ::1, v4-compatible) and ::ffff:0:0/96 (v4-mapped) */
	for (int i = 0; i < 10; i++)
		if (ip[i] != 0)
			return true;
	return false;
}

int net_learned_add(NetLearned *l, const char *name, int family, const void *ip, uint32_t ttl)
{
	uint64_t now, expiry;
	size_t b, nlen;
	int32_t idx;

	if (!l || !name || !ip || (family != AF_INET && family != AF_INET6))
		return -EINVAL;
	nlen = strlen(name);
	if (nlen == 0 || nlen >= sizeof(((LearnedEntry *) NULL)->name))
		return -EINVAL;
	if (!learnable(family, ip))
		return -EADDRNOTAVAIL;
	ttl = MAX(ttl, (uint32_t) NET_LEARNED_TTL_MIN);
	ttl = MIN(ttl, (uint32_t) NET_LEARNED_TTL_MAX);

	if (pthread_rwlock_wrlock(&l->lock) != 0)
		return -EDEADLK;
	if (!l->buckets && storage_make(l) < 0) {
		(void) pthread_rwlock_unlock(&l->lock);
		return -ENOMEM;
	}
	now = l->clock(l->userdata);
	expiry = now + (uint64_t) ttl * 1000000000ULL;
	b = bucket_of(l, family, ip);
	for (idx = l->buckets[b]; idx >= 0; idx = l->entries[idx].next) {
		LearnedEntry *e = &l->entries[idx];

		if (e->family == family && memcmp(e->ip, ip, ip_len(family)) == 0 &&
		    streq(e->name, name)) {
			e->expiry_ns = MAX(e->expiry_ns, expiry);
			goto done;
		}
	}
	if (!has_free(l))
		make_room(l, now);
	assert(has_free(l));
	if (l->free_head >= 0) {
		idx = l->free_head;
		l->free_head = l->entries[idx].next;
	} else
		idx = (int32_t) l->n_fresh++;
	{
		LearnedEntry *e = &l->entries[idx];

		memset(e, 0, sizeof(*e));
		memcpy(e->name, name, nlen + 1);
		e->family = family;
		memcpy(e->ip, ip, ip_len(family));
		e->expiry_ns = expiry;
		e->used = true;
		b = bucket_of(l, family, ip); /* make_room() does not change it, but be plain */
		e->next = l->buckets[b];
		l->buckets[b] = idx;
		l->n_used++;
	}
done:
	(void) pthread_rwlock_unlock(&l->lock);
	return 0;
}

bool net_learned_match(NetLearned *l, const PolicyNetAllow *entry, int family, const void *ip)
{
	bool found = false;
	uint64_t now;

	if (!l || (family != AF_INET && family != AF_INET6))
		return false;
	if (entry->kind != NET_ALLOW_HOST && entry->kind != NET_ALLOW_DOMAIN)
		return false;
	if (pthread_rwlock_rdlock(&l->lock) != 0)
		return false;
	now = l->clock(l->userdata);
	for (int32_t idx = chain_of(l, bucket_of(l, family, ip)); idx >= 0;
	     idx = l->entries[idx].next) {
		const LearnedEntry *e = &l->entries[idx];

		if (e->family == family && memcmp(e->ip, ip, ip_len(family)) == 0 &&
		    e->expiry_ns > now && net_name_match(entry, e->name)) {
			found = true;
			break;
		}
	}
	(void) pthread_rwlock_unlock(&l->lock);
	return found;
}

bool net_learned_name_of(NetLearned *l, int family, const void *ip, char *buf, size_t size)
{
	bool found = false;
	uint64_t now;

	if (!l || (family != AF_INET && family != AF_INET6) || size == 0)
		return false;
	if (pthread_rwlock_rdlock(&l->lock) != 0)
		return false;
	now = l->clock(l->userdata);
	for (int32_t idx = chain_of(l, bucket_of(l, family, ip)); idx >= 0;
	     idx = l->entries[idx].next) {
		const LearnedEntry *e = &l->entries[idx];

		if (e->family == family && memcmp(e->ip, ip, ip_len(family)) == 0 &&
		    e->expiry_ns > now) {
			snprintf(buf, size, "%s", e->name);
			found = true;
			break;
		}
	}
	(void) pthread_rwlock_unlock(&l->lock);
	return found;
}

size_t net_learned_count(NetLearned *l)
{
	size_t n = 0;
	uint64_t now;

	if (!l || pthread_rwlock_rdlock(&l->lock) != 0)
		return 0;
	now = l->clock(l->userdata);
	for (size_t i = 0; l->entries && i < l->max; i++)
		if (l->entries[i].used && l->entries[i].expiry_ns > now)
			n++;
	(void) pthread_rwlock_unlock(&l->lock);
	return n;
}

/* ---- Matching ---- */

bool net_cidr_match(const PolicyNetAllow *entry, const NetAddr *a)
{
	size_t full, bits;

	if (entry->kind != NET_ALLOW_CIDR || entry->family != a->ip_family)
		return false;
	if (entry->prefix > (a->ip_family == AF_INET ? 32u : 128u))
		return false;
	full = entry->prefix / 8;
	bits = entry->prefix % 8;
	if (memcmp(entry->addr, a->addr, full) != 0)
		return false;
	if (bits) {
		uint8_t mask = (uint8_t) (0xff << (8 - bits));

		if ((entry->addr[full] & mask) != (a->addr[full] & mask))
			return false;
	}
	return true;
}

static bool port_in(const PolicyNetAllow *e, uint16_t port)
{
	return port >= e->port_lo && port <= e->port_hi;
}

/* Whether a HOST/DOMAIN entry with the port in range matches a name the address was learned
 * for: one lock and one chain walk for all entries. */
static bool learned_allows(const NetContext *ctx, const NetAddr *a)
{
	const PolicyNetwork *pn = ctx->policy;
	NetLearned *l = ctx->learned;
	bool any = false, found = false;
	uint64_t now;

	for (size_t i = 0; i < pn->n_allow && !any; i++)
		any = pn->allow[i].kind != NET_ALLOW_CIDR && port_in(&pn->allow[i], a->port);
	if (!any || !l || (a->ip_family != AF_INET && a->ip_family != AF_INET6))
		return false;

	if (pthread_rwlock_rdlock(&l->lock) != 0)
		return false;
	now = l->clock(l->userdata);
	for (int32_t idx = chain_of(l, bucket_of(l, a->ip_family, a->addr)); idx >= 0 && !found;
	     idx = l->entries[idx].next) {
		const LearnedEntry *e = &l->entries[idx];

		if (e->family != a->ip_family || memcmp(e->ip, a->addr, ip_len(e->family)) != 0 ||
		    e->expiry_ns <= now)
			continue;
		for (size_t i = 0; i < pn->n_allow && !found; i++)
			found = pn->allow[i].kind != NET_ALLOW_CIDR &&
				port_in(&pn->allow[i], a->port) &&
				net_name_match(&pn->allow[i], e->name);
	}
	(void) pthread_rwlock_unlock(&l->lock);
	return found;
}

bool net_unix_abstract_listed(const PolicyNetwork *pn, const char *name, size_t len)
{
	for (char **s = pn->unix_sockets; s && *s; s++)
		if ((*s)[0] == '@' && strlen(*s + 1) == len && memcmp(*s + 1, name, len) == 0)
			return true;
	return false;
}

bool net_unix_path_listed(const PolicyNetwork *pn, const char *path)
{
	for (char **s = pn->unix_sockets; s && *s; s++)
		if ((*s)[0] != '@' && streq(*s, path))
			return true;
	return false;
}

/* ---- Decisions ---- */

static int decide(NetDecision *ret, NetVerdict v, int error, const char *why)
{
	*ret = (NetDecision){.verdict = v, .error = v == NET_VERDICT_DENY ? error : 0, .why = why};
	return 0;
}

static int socket_errno(const NetContext *ctx)
{
	return ctx->policy->socket_errno > 0 ? ctx->policy->socket_errno : EACCES;
}

static int connect_errno(const NetContext *ctx)
{
	return ctx->policy->connect_errno > 0 ? ctx->policy->connect_errno : ECONNREFUSED;
}

static bool mode_valid(NetMode m)
{
	return m >= 0 && m < _NET_MODE_MAX;
}

int net_decide_socket(const NetContext *ctx, int family, int type, int protocol, NetDecision *ret)
{
	int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (!ctx || !ctx->policy || !ret || !mode_valid(ctx->mode))
		return -EINVAL;

	if (ctx->mode == NET_MODE_FULL)
		return decide(ret, NET_VERDICT_ALLOW, 0, "network full");

	switch (family) {
	case AF_UNIX:
		/* Addresses are checked at bind/connect/sendto; socketpair() needs no check. */
		return decide(ret, NET_VERDICT_ALLOW, 0, "unix socket");

	case AF_INET:
	case AF_INET6:
		if (ctx->mode == NET_MODE_NONE)
			return decide(ret, NET_VERDICT_DENY, socket_errno(ctx), "network none");
		switch (base) {
		case SOCK_STREAM:
			if (protocol == 0 || protocol == IPPROTO_TCP)
				return decide(ret, NET_VERDICT_ALLOW, 0, "tcp socket");
			/* MPTCP and SCTP can reach addresses that never pass through connect()
			 * (ADD_ADDR subflows, sctp_connectx). EPROTONOSUPPORT is what a kernel
			 * without them says, and programs fall back to TCP on it. */
			return decide(ret, NET_VERDICT_DENY, EPROTONOSUPPORT,
				      "protocol not supported in this mode");
		case SOCK_DGRAM:
			if (protocol == 0 || protocol == IPPROTO_UDP ||
			    (family == AF_INET && protocol == IPPROTO_ICMP) ||
			    (family == AF_INET6 && protocol == IPPROTO_ICMPV6))
				return decide(ret, NET_VERDICT_ALLOW, 0, "datagram socket");
			return decide(ret, NET_VERDICT_DENY, EPROTONOSUPPORT,
				      "protocol not supported in this mode");
		case SOCK_SEQPACKET:
			return decide(ret, NET_VERDICT_DENY, EPROTONOSUPPORT,
				      "protocol not supported in this mode");
		case SOCK_RAW:
			return decide(ret, NET_VERDICT_DENY, socket_errno(ctx), "raw socket");
		default:
			return decide(ret, NET_VERDICT_DENY, socket_errno(ctx),
				      "socket type denied");
		}

	case AF_NETLINK:
		/* glibc copes: __check_pf() assumes both IPv4 and IPv6 when its NETLINK_ROUTE
		 * socket fails, getifaddrs()/if_nameindex() return an error. */
		return decide(ret, NET_VERDICT_DENY, socket_errno(ctx), "netlink socket");

	case AF_PACKET:
		return decide(ret, NET_VERDICT_DENY, socket_errno(ctx), "packet socket");

	default:
		/* What a kernel without the family answers: programs probing for vsock,
		 * bluetooth, AF_ALG and the like take it as "not here". */
		return decide(ret, NET_VERDICT_DENY, EAFNOSUPPORT, "address family denied");
	}
}

static bool is_resolver(const NetContext *ctx, const NetAddr *a)
{
	if (a->port != 53)
		return false;
	/* Any loopback port 53 is a local resolver (systemd-resolved 127.0.0.53, dnsmasq),
	 * and a query through it is a query to the world. */
	if (net_addr_is_loopback(a))
		return true;
	for (size_t i = 0; i < ctx->n_resolvers; i++)
		if (ctx->resolvers[i].port == a->port && net_addr_ip_equal(&ctx->resolvers[i], a))
			return true;
	return false;
}

static int decide_unix(const NetContext *ctx, NetOp op, int sock_family, const NetAddr *a,
		       NetDecision *ret)
{
	if (sock_family != AF_UNIX)
		return decide(ret, NET_VERDICT_DENY, EINVAL,
			      "address family does not match socket");

	switch (a->unix_kind) {
	case NET_UNIX_UNNAMED:
		/* bind() with only the family autobinds to a kernel-chosen abstract name. */
		if (op == NET_OP_BIND || op == NET_OP_LISTEN)
			return decide(ret, NET_VERDICT_ALLOW, 0, "unix autobind");
		return decide(ret, NET_VERDICT_DENY, EINVAL, "unnamed unix address");
	case NET_UNIX_ABSTRACT:
		if (net_unix_abstract_listed(ctx->policy, a->unix_name, a->unix_len))
			return decide(ret, NET_VERDICT_ALLOW, 0, "abstract unix socket listed");
		if (op == NET_OP_LISTEN)
			/* An autobound name ("\0" + 5 hex digits) or one bind() allowed. */
			return decide(ret, NET_VERDICT_ALLOW, 0, "unix listen");
		return decide(ret, NET_VERDICT_DENY,
			      op == NET_OP_BIND ? EACCES : connect_errno(ctx),
			      "abstract unix socket not listed");
	case NET_UNIX_PATH:
		if (op == NET_OP_LISTEN)
			return decide(ret, NET_VERDICT_ALLOW, 0, "unix listen");
		return decide(ret, NET_VERDICT_UNIX_PATH, 0, "unix path");
	default:
		return -EINVAL;
	}
}

int net_decide_address(const NetContext *ctx, NetOp op, int sock_family, int sock_type,
		       const NetAddr *addr, NetDecision *ret)
{
	int base = sock_type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	NetAddr dest;

	if (!ctx || !ctx->policy || !addr || !ret || !mode_valid(ctx->mode) || op < 0 ||
	    op >= _NET_OP_MAX)
		return -EINVAL;

	if (addr->family == AF_UNIX)
		return decide_unix(ctx, op, sock_family, addr, ret);

	if (ctx->mode == NET_MODE_FULL)
		return decide(ret, NET_VERDICT_ALLOW, 0, "network full");

	if (addr->family == AF_UNSPEC) {
		/* connect(AF_UNSPEC) dissolves the association: always harmless. But
		 * udp_sendmsg() and raw_sendmsg() read an AF_UNSPEC destination as AF_INET, and
		 * inet_bind() accepts it too: refuse those rather than decode them twice. */
		if (op == NET_OP_CONNECT)
			return decide(ret, NET_VERDICT_ALLOW, 0, "disconnect");
		return decide(ret, NET_VERDICT_DENY, EAFNOSUPPORT, "AF_UNSPEC address");
	}

	if (addr->family != AF_INET && addr->family != AF_INET6) {
		/* Netlink, packet and other sockets exist only in full mode, or from before the
		 * ratchet dropped it. */
		return decide(ret, NET_VERDICT_DENY,
			      op == NET_OP_BIND || op == NET_OP_LISTEN ? EACCES
								       : connect_errno(ctx),
			      "address family denied");
	}

	if (sock_family != AF_INET && sock_family != AF_INET6)
		return decide(ret, NET_VERDICT_DENY, EINVAL,
			      "address family does not match socket");
	/* An AF_INET address on an AF_INET6 socket is used as IPv4 by the kernel (UDP), and
	 * that is how it is decoded; the reverse is refused by the kernel. */
	if (addr->family == AF_INET6 && sock_family == AF_INET)
		return decide(ret, NET_VERDICT_DENY, EAFNOSUPPORT,
			      "address family does not match socket");

	if (ctx->mode == NET_MODE_NONE)
		return decide(ret, NET_VERDICT_DENY,
			      op == NET_OP_BIND || op == NET_OP_LISTEN ? EACCES
								       : connect_errno(ctx),
			      "network none");

	/* ::a.b.c.d may be routed to a.b.c.d through a sit tunnel: neither an IPv6 nor an IPv4
	 * rule can vouch for it. Nothing legitimate uses these addresses any more. */
	if (addr->v4compat)
		return decide(ret, NET_VERDICT_DENY,
			      op == NET_OP_BIND || op == NET_OP_LISTEN ? EACCES
								       : connect_errno(ctx),
			      "IPv4-compatible IPv6 address");

	if (op == NET_OP_BIND || op == NET_OP_LISTEN) {
		if (net_addr_is_loopback(addr))
			return decide(ret, NET_VERDICT_ALLOW, 0, "loopback");
		/* Clients bind the wildcard with port 0 before connecting or sending; that only
		 * picks a source port. Listening on it would serve every interface. */
		if (op == NET_OP_BIND && net_addr_is_unspecified(addr) && addr->port == 0)
			return decide(ret, NET_VERDICT_ALLOW, 0, "ephemeral bind");
		/* A TCP client may choose its source port too (create_connection(source_address=
		 * ('', port)), test_socket's testSourceAddress): a stream socket receives nothing
		 * before listen(), which is checked on the bound address, so the wildcard only
		 * serves if it listens. A datagram socket receives as soon as it is bound. */
		if (op == NET_OP_BIND && net_addr_is_unspecified(addr) && base == SOCK_STREAM)
			return decide(ret, NET_VERDICT_ALLOW, 0, "source port of a stream socket");
		return decide(ret, NET_VERDICT_DENY, EACCES,
			      op == NET_OP_BIND ? "bind outside loopback"
						: "listen outside loopback");
	}

	/* connect() and sendto() to 0.0.0.0 or :: reach the local host (the kernel substitutes
	 * the loopback address): judge them as that. */
	dest = *addr;
	if (net_addr_is_unspecified(&dest)) {
		if (dest.ip_family == AF_INET) {
			static const uint8_t lo4[4] = {127, 0, 0, 1};

			memcpy(dest.addr, lo4, 4);
		} else {
			static const uint8_t lo6[16] = {[15] = 1};

			memcpy(dest.addr, lo6, 16);
		}
	}

	if ((base == SOCK_DGRAM || base == SOCK_STREAM) && is_resolver(ctx, &dest))
		return decide(ret, NET_VERDICT_DNS, 0, "resolver");

	if (ctx->mode == NET_MODE_LOOPBACK) {
		if (net_addr_is_loopback(&dest))
			return decide(ret, NET_VERDICT_ALLOW, 0, "loopback");
		if (ctx->ask_unlisted && (op == NET_OP_CONNECT || op == NET_OP_SENDTO))
			return decide(ret, NET_VERDICT_ASK, connect_errno(ctx),
				      "not loopback: ask");
		return decide(ret, NET_VERDICT_DENY, connect_errno(ctx), "not loopback");
	}

	for (size_t i = 0; i < ctx->policy->n_allow; i++) {
		const PolicyNetAllow *e = &ctx->policy->allow[i];

		if (e->kind == NET_ALLOW_CIDR && port_in(e, dest.port) && net_cidr_match(e, &dest))
			return decide(ret, NET_VERDICT_ALLOW, 0, "in allowlist");
	}
	if (learned_allows(ctx, &dest))
		return decide(ret, NET_VERDICT_ALLOW, 0, "in allowlist (resolved name)");
	/* unlisted = "ask": the supervisor holds the connect or send for a human's decision; a
	 * denial (connect_errno) when nobody can be asked */
	if (ctx->ask_unlisted && (op == NET_OP_CONNECT || op == NET_OP_SENDTO))
		return decide(ret, NET_VERDICT_ASK, connect_errno(ctx), "not in allowlist: ask");
	return decide(ret, NET_VERDICT_DENY, connect_errno(ctx), "not in allowlist");
}

int net_decide_sockaddr(const NetContext *ctx, NetOp op, int sock_family, int sock_type,
			const void *buf, size_t len, NetAddr *ret_addr, NetDecision *ret)
{
	NetAddr a;
	int k;

	if (!ret || (!buf && len > 0))
		return -EINVAL;
	k = net_sockaddr_decode(buf, len, &a);
	if (k < 0)
		return decide(ret, NET_VERDICT_DENY, EINVAL, "malformed address");
	k = net_decide_address(ctx, op, sock_family, sock_type, &a, ret);
	if (k < 0)
		return k;
	if (ret_addr)
		*ret_addr = a;
	return 0;
}

const char *net_op_to_string(NetOp op)
{
	static const char *const table[_NET_OP_MAX] = {
		[NET_OP_CONNECT] = "connect",
		[NET_OP_SENDTO] = "sendto",
		[NET_OP_BIND] = "bind",
		[NET_OP_LISTEN] = "listen",
	};

	return op >= 0 && op < _NET_OP_MAX ? table[op] : NULL;
}

const char *net_verdict_to_string(NetVerdict v)
{
	static const char *const table[_NET_VERDICT_MAX] = {
		[NET_VERDICT_ALLOW] = "allow", [NET_VERDICT_DENY] = "deny",
		[NET_VERDICT_DNS] = "dns",     [NET_VERDICT_UNIX_PATH] = "unix-path",
		[NET_VERDICT_ASK] = "ask",
	};

	return v >= 0 && v < _NET_VERDICT_MAX ? table[v] : NULL;
}
