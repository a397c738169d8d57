/* SPDX-License-Identifier: MIT */
#include "net/stub.h"

#include <errno.h>
#include <string.h>

#define STUB_MAX_LEARN 64

int net_dns_stub_answer(const NetDnsStubConfig *cfg, const uint8_t *query, size_t len, bool tcp,
			uint8_t *buf, size_t size, size_t *ret_len, NetDnsOutcome *ret_outcome)
{
	NetDnsOutcome o = {.rcode = -1};
	NetDnsAddr addrs[STUB_MAX_LEARN];
	size_t n = 0, naddr = 0;
	NetDnsQuery q;
	int k, rcode;

	if (!cfg || !cfg->policy || !query || !buf || !ret_len)
		return -EINVAL;

	k = net_dns_parse_query(query, len, &q);
	if (k < 0) {
		/* FORMERR when there is a header to echo; nothing for a stray reply or noise */
		k = net_dns_build_formerr(query, len, buf, size, &n);
		if (k == -ENOBUFS)
			return k;
		if (k == 0)
			o.rcode = NET_DNS_RCODE_FORMERR;
		else
			n = 0;
		goto done;
	}
	memcpy(o.name, q.name, sizeof(o.name));
	o.qtype = q.qtype;

	k = net_dns_decide(cfg->policy, cfg->mode, &q, &rcode);
	if (k < 0)
		return k;
	if (k == 0) {
		k = net_dns_build_reply(&q, rcode, buf, size, &n);
		if (k < 0)
			return k;
		o.rcode = rcode;
		goto done;
	}

	o.forwarded = true;
	k = -ENOENT;
	for (size_t i = 0; i < cfg->n_upstreams; i++) {
		k = net_dns_exchange((const struct sockaddr *) &cfg->upstreams[i],
				     cfg->upstream_lens[i], query, len, cfg->timeout_ms, buf, size,
				     &n);
		if (k >= 0)
			break;
		if (k == -ENOMEM)
			return k;
		o.upstream_error = k;
	}
	if (k >= 0)
		k = net_dns_parse_reply(buf, n, &q, addrs, STUB_MAX_LEARN, &naddr, &rcode);
	if (k < 0) {
		if (o.upstream_error == 0)
			o.upstream_error = k;
		k = net_dns_build_reply(&q, NET_DNS_RCODE_SERVFAIL, buf, size, &n);
		if (k < 0)
			return k;
		o.rcode = NET_DNS_RCODE_SERVFAIL;
		goto done;
	}
	o.rcode = rcode;

	/* Learn under the name asked, which is the name the allowlist matched. */
	for (size_t i = 0; i < naddr && cfg->learned; i++) {
		k = net_learned_add(cfg->learned, q.name, addrs[i].family, addrs[i].addr,
				    addrs[i].ttl);
		if (k == -EADDRNOTAVAIL)
			o.n_refused++;
		else if (k >= 0)
			o.n_learned++;
	}

	if (!tcp && n > net_dns_udp_limit(&q)) {
		k = net_dns_build_truncated(&q, buf, size, &n);
		if (k < 0)
			return k;
	}

done:
	*ret_len = n;
	if (ret_outcome)
		*ret_outcome = o;
	return 0;
}
