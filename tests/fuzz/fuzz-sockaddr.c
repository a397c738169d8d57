/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes sockaddr decoding, formatting and the address decisions of every mode and operation.
 * Input: the sockaddr bytes as a child would pass them (addrlen = input size).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "net/allow.h"
#include "net/sockaddr.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *unix_list[] = {"@allowed", "/run/x.sock", NULL};
	PolicyNetAllow allow[2] = {
		{.kind = NET_ALLOW_CIDR,
		 .family = AF_INET,
		 .addr = {10},
		 .prefix = 8,
		 .port_lo = 0,
		 .port_hi = 65535},
		{.kind = NET_ALLOW_CIDR,
		 .family = AF_INET6,
		 .addr = {0x20, 0x01, 0x0d, 0xb8},
		 .prefix = 32,
		 .port_lo = 443,
		 .port_hi = 443},
	};
	PolicyNetwork pn = {.allow = allow, .n_allow = 2, .unix_sockets = unix_list};
	char buf[NET_ADDR_FORMAT_MAX];
	NetAddr a, resolver;
	int k;

	if (size > 4 * NET_SOCKADDR_MAX)
		return 0;
	k = net_sockaddr_decode(data, size, &a);
	if (k < 0) {
		if (k != -EINVAL)
			abort();
		return 0;
	}
	net_addr_format(&a, buf, sizeof(buf));
	if (strlen(buf) >= sizeof(buf))
		abort();
	/* a truncated format stays NUL-terminated */
	net_addr_format(&a, buf, 7);
	if (strlen(buf) > 6)
		abort();

	{
		const uint8_t ip[4] = {127, 0, 0, 53};

		net_addr_from_ip(AF_INET, ip, 53, &resolver);
	}
	for (NetMode m = 0; m < _NET_MODE_MAX; m++) {
		NetContext ctx = {
			.policy = &pn, .mode = m, .resolvers = &resolver, .n_resolvers = 1};
		static const int fams[] = {AF_INET, AF_INET6, AF_UNIX, AF_NETLINK};
		static const int types[] = {SOCK_STREAM, SOCK_DGRAM, SOCK_RAW};

		for (NetOp op = 0; op < _NET_OP_MAX; op++)
			for (size_t f = 0; f < sizeof(fams) / sizeof(fams[0]); f++)
				for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
					NetDecision d;

					if (net_decide_address(&ctx, op, fams[f], types[t], &a,
							       &d) < 0)
						abort();
					if (d.verdict < 0 || d.verdict >= _NET_VERDICT_MAX ||
					    !d.why)
						abort();
					if ((d.verdict == NET_VERDICT_DENY) != (d.error > 0))
						abort();
					/* full mode and unix paths aside, nothing but loopback
					 * passes in loopback mode */
					if (m == NET_MODE_LOOPBACK &&
					    d.verdict == NET_VERDICT_ALLOW &&
					    (a.family == AF_INET || a.family == AF_INET6) &&
					    (op == NET_OP_CONNECT || op == NET_OP_SENDTO) &&
					    !net_addr_is_loopback(&a) &&
					    !net_addr_is_unspecified(&a))
						abort();
				}
	}
	return 0;
}
