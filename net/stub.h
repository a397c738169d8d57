/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The DNS stub's answer to one query, without the sockets towards the child: parse, decide by
 * the allowlist, forward allowed names upstream, learn the answer's addresses, and hand back
 * the reply bytes. The supervisor's stub worker only receives queries and sends these replies.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "net/allow.h"
#include "net/dns.h"

typedef struct NetDnsStubConfig {
	const PolicyNetwork *policy;
	NetMode mode;				  /* current (ratcheted) mode */
	NetLearned *learned;			  /* where answers go; NULL: nothing is learned */
	const struct sockaddr_storage *upstreams; /* tried in order */
	const socklen_t *upstream_lens;
	size_t n_upstreams;
	int timeout_ms; /* per upstream */
} NetDnsStubConfig;

/* What happened, for the audit record and --trace. */
typedef struct NetDnsOutcome {
	char name[NET_DNS_NAME_MAX]; /* "" when the query did not parse or the name is invalid */
	uint16_t qtype;
	int rcode;	    /* of the reply sent, -1 when none is sent */
	bool forwarded;	    /* asked upstream */
	size_t n_learned;   /* addresses added to the learned set */
	size_t n_refused;   /* addresses an answer may not unlock (loopback, link-local…) */
	int upstream_error; /* last upstream failure (-ETIMEDOUT…), 0 if none */
} NetDnsOutcome;

/**
 * Answers one query message that arrived over UDP (tcp false: the reply is cut to what the
 * client accepts, and a longer one becomes an empty TC reply so it retries over TCP) or TCP.
 * The reply goes to buf (NET_DNS_MAX_MESSAGE bytes is always enough); *ret_len = 0 means send
 * nothing (the message was not a query at all). An upstream failure is a SERVFAIL reply.
 * Blocks for up to n_upstreams × timeout_ms: call it from a worker. Returns 0, or -ENOMEM,
 * -EINVAL for bad arguments.
 */
int net_dns_stub_answer(const NetDnsStubConfig *cfg, const uint8_t *query, size_t len, bool tcp,
			uint8_t *buf, size_t size, size_t *ret_len, NetDnsOutcome *ret_outcome);
