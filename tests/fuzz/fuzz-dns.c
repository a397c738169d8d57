/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes the DNS stub's parsers: the input is read as a query (parse, decide, build replies,
 * which must parse back as replies to it), as an upstream reply (to the question it carries),
 * as a TCP stream, and as a host name.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/allow.h"
#include "net/dns.h"
#include "net/stub.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	PolicyNetAllow allow[2] = {
		{.kind = NET_ALLOW_HOST, .name = (char *) "api.example.com", .port_hi = 65535},
		{.kind = NET_ALLOW_DOMAIN, .name = (char *) "example.org", .port_hi = 65535},
	};
	PolicyNetwork pn = {.allow = allow, .n_allow = 2};
	uint8_t out[NET_DNS_UDP_MAX];
	NetDnsAddr addrs[8];
	NetDnsQuery q;
	size_t n, naddr, mlen;
	int rcode, k;

	if (size > FUZZ_MAX_INPUT)
		return 0;

	/* as a query */
	if (net_dns_parse_query(data, size, &q) == 0) {
		for (NetMode m = 0; m < _NET_MODE_MAX; m++) {
			k = net_dns_decide(&pn, m, &q, &rcode);
			if (k < 0 || k > 1)
				abort();
			if (k == 1 && m == NET_MODE_ALLOWLIST && !net_name_allowed(&pn, q.name))
				abort();
		}
		if (q.name_valid != (q.name[0] != '\0'))
			abort();
		if (net_dns_build_reply(&q, NET_DNS_RCODE_NXDOMAIN, out, sizeof(out), &n) != 0)
			abort();
		if (net_dns_parse_reply(out, n, &q, addrs, 8, &naddr, &rcode) != 0 ||
		    rcode != NET_DNS_RCODE_NXDOMAIN || naddr != 0)
			abort();
	}
	(void) net_dns_build_formerr(data, size, out, sizeof(out), &n);

	/* through the whole stub, with no upstream (allowed names become SERVFAIL) */
	{
		static uint8_t reply[NET_DNS_MAX_MESSAGE];
		NetDnsStubConfig cfg = {.policy = &pn, .mode = NET_MODE_ALLOWLIST};
		NetDnsOutcome o;

		if (net_dns_stub_answer(&cfg, data, size, size & 1, reply, sizeof(reply), &n, &o) <
		    0)
			abort();
		if (o.forwarded && o.rcode != NET_DNS_RCODE_SERVFAIL)
			abort();
		if ((n == 0) != (o.rcode == -1))
			abort();
	}

	/* as a reply, to the question it carries */
	if (size >= NET_DNS_HEADER_SIZE) {
		uint8_t *copy = malloc(size);

		if (!copy)
			return 0;
		memcpy(copy, data, size);
		copy[2] &= 0x7f;	/* a query */
		memset(copy + 6, 0, 6); /* no records */
		if (net_dns_parse_query(copy, size, &q) == 0)
			(void) net_dns_parse_reply(data, size, &q, addrs, 8, &naddr, &rcode);
		free(copy);
	}

	/* as a TCP stream of framed messages */
	for (size_t off = 0; off < size;) {
		k = net_dns_tcp_next(data + off, size - off, &mlen);
		if (k <= 0)
			break;
		if (2 + mlen > size - off)
			abort();
		(void) net_dns_parse_query(data + off + 2, mlen, &q);
		off += 2 + mlen;
	}

	/* as a host name */
	{
		char name[300], norm[256];
		size_t l = size < sizeof(name) - 1 ? size : sizeof(name) - 1;

		memcpy(name, data, l);
		name[l] = '\0';
		if (net_name_normalize(name, norm, sizeof(norm)) == 0 && strlen(norm) > 253)
			abort();
	}
	return 0;
}
