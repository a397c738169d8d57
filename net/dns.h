/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The pure parts of the supervisor's DNS stub (RFC 1035, RFC 6891 for EDNS0, RFC 7766 for TCP):
 * parse a query, decide it by the allowlist, build NXDOMAIN/REFUSED replies, check an upstream
 * reply and pull A/AAAA addresses out of it (following CNAME chains) for the learned set, TCP
 * framing, and a small blocking exchange with an upstream server. Everything is bounded by the
 * message length; malformed input is -EBADMSG, never a crash.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "policy/policy.h"

#define NET_DNS_HEADER_SIZE   12
#define NET_DNS_MAX_MESSAGE   65535
#define NET_DNS_UDP_MAX	      4096 /* largest UDP reply the stub relays (EDNS0 buffer size) */
#define NET_DNS_WIRE_NAME_MAX 255
#define NET_DNS_NAME_MAX      254 /* presentation form, NUL included */
#define NET_DNS_CNAME_HOPS    16

enum {
	NET_DNS_TYPE_A = 1,
	NET_DNS_TYPE_CNAME = 5,
	NET_DNS_TYPE_AAAA = 28,
	NET_DNS_TYPE_OPT = 41,
	NET_DNS_CLASS_IN = 1,
};

enum {
	NET_DNS_RCODE_NOERROR = 0,
	NET_DNS_RCODE_FORMERR = 1,
	NET_DNS_RCODE_SERVFAIL = 2,
	NET_DNS_RCODE_NXDOMAIN = 3,
	NET_DNS_RCODE_NOTIMP = 4,
	NET_DNS_RCODE_REFUSED = 5,
};

typedef struct NetDnsQuery {
	uint16_t id;
	uint16_t flags;	 /* header flags as received */
	unsigned opcode; /* 0 = QUERY */
	uint16_t qtype, qclass;
	uint8_t wire[NET_DNS_WIRE_NAME_MAX]; /* QNAME uncompressed, as received (case kept) */
	size_t wire_len;
	bool name_valid;	     /* every label is [A-Za-z0-9_-] and the name is not the root */
	char name[NET_DNS_NAME_MAX]; /* lower-case, no trailing dot; "" unless name_valid */
	bool edns;		     /* an OPT record was in the additional section */
	uint16_t edns_udp_size;
} NetDnsQuery;

/**
 * Parses a query message: header (QR clear, QDCOUNT 1, no answer or authority records), one
 * question (compression pointers allowed, only backwards, bounded), additional records skipped
 * except OPT, which is noted. Returns 0 or -EBADMSG.
 */
int net_dns_parse_query(const uint8_t *msg, size_t len, NetDnsQuery *ret);

/**
 * What the stub does with a parsed query in mode: returns 1 when it should be forwarded
 * upstream, 0 when it answers at once with *ret_rcode: NOTIMP for an opcode other than QUERY,
 * REFUSED for a class other than IN or in mode none, NXDOMAIN for a name no HOST/DOMAIN entry
 * allows (loopback mode allows none), NOERROR (no data) in allowlist mode for a query type
 * outside the usual ones (A, AAAA, CNAME, NS, SOA, PTR, MX, TXT, SRV, SVCB, HTTPS, CAA).
 */
int net_dns_decide(const PolicyNetwork *pn, NetMode mode, const NetDnsQuery *q, int *ret_rcode);

/**
 * Builds a reply with rcode and no records that echoes the query's ID, opcode, RD bit and
 * question. Returns 0, -ENOBUFS when size is too small.
 */
int net_dns_build_reply(const NetDnsQuery *q, int rcode, uint8_t *buf, size_t size,
			size_t *ret_len);

/**
 * For a message net_dns_parse_query() refused: a FORMERR reply with no question that echoes
 * the ID, when there is a header to echo. Returns 0, -EBADMSG (shorter than a header, or not a
 * query: drop it), -ENOBUFS.
 */
int net_dns_build_formerr(const uint8_t *msg, size_t len, uint8_t *buf, size_t size,
			  size_t *ret_len);

/**
 * The largest UDP reply the client accepts: 512 without EDNS0, else its advertised size
 * (at least 512, at most NET_DNS_UDP_MAX). A longer upstream reply is replaced by
 * net_dns_build_truncated() so the client retries over TCP.
 */
size_t net_dns_udp_limit(const NetDnsQuery *q);

/** An empty NOERROR reply with TC set that echoes q (RFC 1035 4.2.1, RFC 7766 5). */
int net_dns_build_truncated(const NetDnsQuery *q, uint8_t *buf, size_t size, size_t *ret_len);

typedef struct NetDnsAddr {
	int family; /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint32_t ttl; /* the least TTL along the CNAME chain that led to it */
} NetDnsAddr;

/**
 * Checks that msg is the reply to q (QR set, same ID and question) and collects the A and AAAA
 * records of QNAME, following CNAMEs inside the answer section up to NET_DNS_CNAME_HOPS;
 * records of other owners are ignored (nothing outside the chain gets learned). At most max
 * addresses are stored, the count in *ret_n, the reply's RCODE in *ret_rcode. Returns 0 or
 * -EBADMSG.
 */
int net_dns_parse_reply(const uint8_t *msg, size_t len, const NetDnsQuery *q, NetDnsAddr *addrs,
			size_t max, size_t *ret_n, int *ret_rcode);

/** Whether the reply's TC bit is set (the caller retries over TCP). */
bool net_dns_truncated(const uint8_t *msg, size_t len);

/**
 * TCP framing: writes the 2-byte big-endian length and msg into out. Returns 0, -EMSGSIZE for
 * a message over NET_DNS_MAX_MESSAGE, -ENOBUFS.
 */
int net_dns_tcp_frame(const uint8_t *msg, size_t len, uint8_t *out, size_t size, size_t *ret_len);

/**
 * Looks for one whole framed message at the start of buf: returns 1 with *ret_msg_len (the
 * message starts at buf + 2, and 2 + *ret_msg_len bytes are consumed), 0 when more bytes are
 * needed, -EBADMSG for a length shorter than a DNS header.
 */
int net_dns_tcp_next(const uint8_t *buf, size_t len, size_t *ret_msg_len);

/**
 * Parses an upstream server as written in the policy: "1.1.1.1", "1.1.1.1:5353", "::1",
 * "[::1]:5353". Port 53 by default. Returns 0 or -EINVAL.
 */
int net_dns_parse_server(const char *s, struct sockaddr_storage *ret, socklen_t *ret_len);

/**
 * Collects the "nameserver" lines of a resolv.conf text (up to max). Returns 0 (possibly with
 * *ret_n == 0) or -EINVAL for bad arguments; unparsable lines are skipped as glibc does.
 */
int net_dns_parse_resolv_conf(const char *text, struct sockaddr_storage *ret, socklen_t *ret_lens,
			      size_t max, size_t *ret_n);

/**
 * The query the stub sends upstream for q, built from the parsed question alone: ID id, flags
 * RD only, QDCOUNT 1, the name lower-cased, q's type and class, no other section and nothing
 * after it. Returns 0, -EINVAL, -ENOBUFS.
 */
int net_dns_build_query(const NetDnsQuery *q, uint16_t id, uint8_t *buf, size_t size,
			size_t *ret_len);

/**
 * Parses query and sends upstream only the query net_dns_build_query() makes of its question,
 * with a fresh random ID (none of the client's bytes are forwarded: not its ID, flags, name
 * case, additional records, EDNS0 options or trailing bytes); waits up to timeout_ms for the
 * matching reply (same ID and question; others are dropped), over UDP; if the reply is
 * truncated, asks again over TCP. The reply goes to buf mapped back to the client's query:
 * its ID, RD bit and question name restored. Blocks: call it from a worker thread. Returns 0,
 * -ETIMEDOUT, -EBADMSG for a query that does not parse, -ENOBUFS, or -errno from the sockets.
 */
int net_dns_exchange(const struct sockaddr *upstream, socklen_t upstream_len, const uint8_t *query,
		     size_t query_len, int timeout_ms, uint8_t *buf, size_t size, size_t *ret_len);
