/* SPDX-License-Identifier: MIT */
/* DNS stub, pure parts (net/dns.c), and the exchange with a fake upstream on 127.0.0.1. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/allow.h"
#include "net/dns.h"
#include "tests/unit/net/net-test-util.h"
#include "tests/unit/tap.h"

typedef struct Pkt {
	uint8_t b[2048];
	size_t n;
} Pkt;

static void p8(Pkt *p, unsigned v)
{
	p->b[p->n++] = (uint8_t) v;
}

static void p16(Pkt *p, unsigned v)
{
	p8(p, v >> 8);
	p8(p, v & 0xff);
}

static void p32(Pkt *p, uint32_t v)
{
	p16(p, v >> 16);
	p16(p, v & 0xffff);
}

/* "a.example.com" as labels and the root; returns the offset it starts at. */
static size_t pname(Pkt *p, const char *name)
{
	size_t start = p->n;

	while (*name) {
		size_t l = strcspn(name, ".");

		p8(p, (unsigned) l);
		memcpy(p->b + p->n, name, l);
		p->n += l;
		name += l;
		if (*name == '.')
			name++;
	}
	p8(p, 0);
	return start;
}

static void pheader(Pkt *p, unsigned id, unsigned flags, unsigned qd, unsigned an, unsigned ns,
		    unsigned ar)
{
	p->n = 0;
	p16(p, id);
	p16(p, flags);
	p16(p, qd);
	p16(p, an);
	p16(p, ns);
	p16(p, ar);
}

static void query(Pkt *p, unsigned id, const char *name, unsigned qtype)
{
	pheader(p, id, 0x0100 /* RD */, 1, 0, 0, 0);
	pname(p, name);
	p16(p, qtype);
	p16(p, NET_DNS_CLASS_IN);
}

static void opt(Pkt *p, unsigned udp_size)
{
	p8(p, 0); /* root */
	p16(p, NET_DNS_TYPE_OPT);
	p16(p, udp_size);
	p32(p, 0);
	p16(p, 0);
}

TEST(parse_simple_query)
{
	NetDnsQuery q;
	Pkt p;

	query(&p, 0x1234, "API.Example.com", NET_DNS_TYPE_AAAA);
	ASSERT_EQ(net_dns_parse_query(p.b, p.n, &q), 0);
	EXPECT_EQ(q.id, 0x1234);
	EXPECT_EQ(q.opcode, 0);
	EXPECT_EQ(q.qtype, NET_DNS_TYPE_AAAA);
	EXPECT_EQ(q.qclass, NET_DNS_CLASS_IN);
	EXPECT_TRUE(q.name_valid);
	EXPECT_STREQ(q.name, "api.example.com");
	EXPECT_EQ(q.wire_len, 17);
	EXPECT_FALSE(q.edns);
}

TEST(parse_rejects_bad_headers)
{
	NetDnsQuery q;
	Pkt p;

	query(&p, 1, "a.b", NET_DNS_TYPE_A);
	p.b[2] |= 0x80; /* QR: a reply */
	EXPECT_EQ(net_dns_parse_query(p.b, p.n, &q), -EBADMSG);
	query(&p, 1, "a.b", NET_DNS_TYPE_A);
	p.b[5] = 2; /* QDCOUNT 2 */
	EXPECT_EQ(net_dns_parse_query(p.b, p.n, &q), -EBADMSG);
	p.b[5] = 0;
	EXPECT_EQ(net_dns_parse_query(p.b, p.n, &q), -EBADMSG);
	query(&p, 1, "a.b", NET_DNS_TYPE_A);
	p.b[7] = 1; /* ANCOUNT in a query */
	EXPECT_EQ(net_dns_parse_query(p.b, p.n, &q), -EBADMSG);
	query(&p, 1, "a.b", NET_DNS_TYPE_A);
	p.b[11] = 1; /* ARCOUNT 1, no record there */
	EXPECT_EQ(net_dns_parse_query(p.b, p.n, &q), -EBADMSG);
}

TEST(parse_truncated_every_length)
{
	NetDnsQuery q;
	Pkt p;

	query(&p, 7, "www.example.com", NET_DNS_TYPE_A);
	opt(&p, 1232);
	p.b[11] = 1;
	ASSERT_EQ(net_dns_parse_query(p.b, p.n, &q), 0);
	for (size_t l = 0; l < p.n; l++) {
		uint8_t *copy = malloc(l ? l : 1); /* exact size: ASan sees any over-read */

		memcpy(copy, p.b, l);
		EXPECT_EQ(net_dns_parse_query(copy, l, &q), -EBADMSG);
		free(copy);
	}
}

TEST(parse_edns0)
{
	NetDnsQuery q;
	Pkt p;

	query(&p, 7, "example.com", NET_DNS_TYPE_A);
	opt(&p, 1232);
	p.b[11] = 1;
	ASSERT_EQ(net_dns_parse_query(p.b, p.n, &q), 0);
	EXPECT_TRUE(q.edns);
	EXPECT_EQ(q.edns_udp_size, 1232);

	/* two OPT records: FORMERR territory */
	opt(&p, 512);
	p.b[11] = 2;
	EXPECT_EQ(net_dns_parse_query(p.b, p.n, &q), -EBADMSG);

	/* OPT owned by a non-root name */
	query(&p, 7, "example.com", NET_DNS_TYPE_A);
	pname(&p, "x");
	p16(&p, NET_DNS_TYPE_OPT);
	p16(&p, 512);
	p32(&p, 0);
	p16(&p, 0);
	p.b[11] = 1;
	EXPECT_EQ(net_dns_parse_query(p.b, p.n, &q), -EBADMSG);

	/* another additional record (a TSIG-like blob) is skipped */
	query(&p, 7, "example.com", NET_DNS_TYPE_A);
	p8(&p, 0);
	p16(&p, 250);
	p16(&p, 255);
	p32(&p, 0);
	p16(&p, 3);
	p8(&p, 1), p8(&p, 2), p8(&p, 3);
	opt(&p, 4096);
	p.b[11] = 2;
	ASSERT_EQ(net_dns_parse_query(p.b, p.n, &q), 0);
	EXPECT_EQ(q.edns_udp_size, 4096);
}

TEST(compression_loops_terminate)
{
	NetDnsQuery q;
	Pkt p;

	/* pointer to itself */
	pheader(&p, 1, 0, 1, 0, 0, 0);
	p16(&p, 0xc000 | 12);
	p16(&p, 1), p16(&p, 1);
	EXPECT_EQ(net_dns_parse_query(p.b, p.n, &q), -EBADMSG);

	/* forward pointer */
	pheader(&p, 1, 0, 1, 0, 0, 0);
	p16(&p, 0xc000 | 20);
	p16(&p, 1), p16(&p, 1);
	p8(&p, 1), p8(&p, 'a'), p8(&p, 0);
	EXPECT_EQ(net_dns_parse_query(p.b, p.n, &q), -EBADMSG);

	/* label then a pointer back into the same run: 12: "\1a" 14: ptr→12 */
	pheader(&p, 1, 0, 1, 0, 0, 0);
	p8(&p, 1), p8(&p, 'a');
	p16(&p, 0xc000 | 12);
	p16(&p, 1), p16(&p, 1);
	EXPECT_EQ(net_dns_parse_query(p.b, p.n, &q), -EBADMSG);

	/* pointer into the header (backwards, but lands on zeroes and garbage) */
	pheader(&p, 0, 0, 1, 0, 0, 0);
	p16(&p, 0xc000 | 6); /* at 6: ANCOUNT=0 → a zero byte = root label */
	p16(&p, 1), p16(&p, 1);
	ASSERT_EQ(net_dns_parse_query(p.b, p.n, &q), 0);
	EXPECT_FALSE(q.name_valid); /* the root is no host name */

	/* extended label type 0x40 */
	pheader(&p, 1, 0, 1, 0, 0, 0);
	p8(&p, 0x41), p8(&p, 'a'), p8(&p, 0);
	p16(&p, 1), p16(&p, 1);
	EXPECT_EQ(net_dns_parse_query(p.b, p.n, &q), -EBADMSG);
}

TEST(name_length_limits)
{
	NetDnsQuery q;
	Pkt p;
	char name[300];

	/* 4 labels of 63 = 4*64 + 1 = 257 wire bytes: too long */
	memset(name, 'a', sizeof(name));
	name[63] = name[127] = name[191] = '.';
	name[255] = '\0';
	query(&p, 1, name, NET_DNS_TYPE_A);
	EXPECT_EQ(net_dns_parse_query(p.b, p.n, &q), -EBADMSG);
	/* 3*64 + 62 + 1 = 255: the longest */
	name[253] = '\0';
	query(&p, 1, name, NET_DNS_TYPE_A);
	ASSERT_EQ(net_dns_parse_query(p.b, p.n, &q), 0);
	EXPECT_EQ(q.wire_len, 255);
	EXPECT_TRUE(q.name_valid);
	EXPECT_EQ(strlen(q.name), 253);
}

TEST(odd_bytes_make_name_invalid)
{
	NetDnsQuery q;
	Pkt p;

	/* "a.example" as ONE label, with a dot inside: must not pass for a.example */
	pheader(&p, 1, 0, 1, 0, 0, 0);
	p8(&p, 9);
	memcpy(p.b + p.n, "a.example", 9);
	p.n += 9;
	p8(&p, 0);
	p16(&p, 1), p16(&p, 1);
	ASSERT_EQ(net_dns_parse_query(p.b, p.n, &q), 0);
	EXPECT_FALSE(q.name_valid);
	EXPECT_STREQ(q.name, "");
}

TEST(decide)
{
	static const char *const entries[] = {"api.example.com:443", "*.cdn.net", "10.0.0.0/8",
					      NULL};
	PolicyNetwork pn;
	NetDnsQuery q;
	int rcode = -1;
	Pkt p;

	test_network(&pn, NET_MODE_ALLOWLIST, entries);
	query(&p, 1, "API.example.com.", NET_DNS_TYPE_A);
	ASSERT_EQ(net_dns_parse_query(p.b, p.n, &q), 0);
	EXPECT_EQ(net_dns_decide(&pn, NET_MODE_ALLOWLIST, &q, &rcode), 1);
	EXPECT_EQ(net_dns_decide(&pn, NET_MODE_LOOPBACK, &q, &rcode), 0);
	EXPECT_EQ(rcode, NET_DNS_RCODE_NXDOMAIN);
	EXPECT_EQ(net_dns_decide(&pn, NET_MODE_NONE, &q, &rcode), 0);
	EXPECT_EQ(rcode, NET_DNS_RCODE_REFUSED);
	EXPECT_EQ(net_dns_decide(&pn, NET_MODE_FULL, &q, &rcode), 1);

	query(&p, 1, "img.cdn.net", 65);
	ASSERT_EQ(net_dns_parse_query(p.b, p.n, &q), 0);
	EXPECT_EQ(net_dns_decide(&pn, NET_MODE_ALLOWLIST, &q, &rcode), 1);

	static const char *const denied[] = {"cdn.net", "example.com", "x.api.example.com",
					     "secret-data.evil.net", "10.0.0.1"};
	for (size_t i = 0; i < ARRAY_SIZE(denied); i++) {
		query(&p, 1, denied[i], NET_DNS_TYPE_A);
		ASSERT_EQ(net_dns_parse_query(p.b, p.n, &q), 0);
		rcode = -1;
		EXPECT_EQ(net_dns_decide(&pn, NET_MODE_ALLOWLIST, &q, &rcode), 0);
		EXPECT_EQ(rcode, NET_DNS_RCODE_NXDOMAIN);
	}

	query(&p, 1, "api.example.com", NET_DNS_TYPE_A);
	p.b[2] |= 2 << 3; /* opcode STATUS */
	ASSERT_EQ(net_dns_parse_query(p.b, p.n, &q), 0);
	EXPECT_EQ(net_dns_decide(&pn, NET_MODE_ALLOWLIST, &q, &rcode), 0);
	EXPECT_EQ(rcode, NET_DNS_RCODE_NOTIMP);
	query(&p, 1, "api.example.com", NET_DNS_TYPE_A);
	p.b[p.n - 1] = 3; /* class CH */
	ASSERT_EQ(net_dns_parse_query(p.b, p.n, &q), 0);
	EXPECT_EQ(net_dns_decide(&pn, NET_MODE_ALLOWLIST, &q, &rcode), 0);
	EXPECT_EQ(rcode, NET_DNS_RCODE_REFUSED);

	/* a type outside the usual ones is no data, not forwarded: its 16 bits are a channel */
	query(&p, 1, "api.example.com", 0xbeef);
	ASSERT_EQ(net_dns_parse_query(p.b, p.n, &q), 0);
	rcode = -1;
	EXPECT_EQ(net_dns_decide(&pn, NET_MODE_ALLOWLIST, &q, &rcode), 0);
	EXPECT_EQ(rcode, NET_DNS_RCODE_NOERROR);
	EXPECT_EQ(net_dns_decide(&pn, NET_MODE_FULL, &q, &rcode), 1);
	test_network_done(&pn);
}

/* A query carrying data in every field a client controls besides the question. */
static void smuggling_query(Pkt *p, unsigned id)
{
	static const uint8_t extra[] = {'S', 'E', 'C', 'R', 'E', 'T'};

	pheader(p, id, 0x0100 | 0x0030 /* RD, AD, CD */ | 0x0400 /* AA */, 1, 0, 0, 2);
	pname(p, "ApI.eXaMpLe.CoM");
	p16(p, NET_DNS_TYPE_A);
	p16(p, NET_DNS_CLASS_IN);
	/* an additional TXT record holding data */
	pname(p, "x");
	p16(p, 16);
	p16(p, NET_DNS_CLASS_IN);
	p32(p, 0);
	p16(p, sizeof(extra) + 1);
	p8(p, sizeof(extra));
	memcpy(p->b + p->n, extra, sizeof(extra));
	p->n += sizeof(extra);
	/* EDNS0 with an option (code 65001, local use) holding data */
	p8(p, 0);
	p16(p, NET_DNS_TYPE_OPT);
	p16(p, 1232);
	p32(p, 0xdead0000);
	p16(p, 4 + sizeof(extra));
	p16(p, 65001);
	p16(p, sizeof(extra));
	memcpy(p->b + p->n, extra, sizeof(extra));
	p->n += sizeof(extra);
	/* and trailing bytes */
	memcpy(p->b + p->n, "TRAILING", 8);
	p->n += 8;
}

TEST(build_query_from_the_question_only)
{
	uint8_t out[512];
	size_t n = 0;
	NetDnsQuery q;
	Pkt p, want;

	smuggling_query(&p, 0xabcd);
	ASSERT_EQ(net_dns_parse_query(p.b, p.n, &q), 0);
	EXPECT_TRUE(q.edns);
	ASSERT_EQ(net_dns_build_query(&q, 0x1111, out, sizeof(out), &n), 0);
	/* exactly: ID, RD, QDCOUNT 1, the lower-case name, type, class */
	pheader(&want, 0x1111, 0x0100, 1, 0, 0, 0);
	pname(&want, "api.example.com");
	p16(&want, NET_DNS_TYPE_A);
	p16(&want, NET_DNS_CLASS_IN);
	ASSERT_EQ(n, want.n);
	EXPECT_TRUE(memcmp(out, want.b, n) == 0);
	EXPECT_EQ(net_dns_build_query(&q, 1, out, n - 1, &n), -ENOBUFS);
}

TEST(build_replies)
{
	uint8_t out[512];
	size_t n = 0, naddr = 9;
	NetDnsQuery q;
	NetDnsAddr addrs[4];
	int rcode = -1;
	Pkt p;

	query(&p, 0xbeef, "Nope.Example", NET_DNS_TYPE_AAAA);
	opt(&p, 1232);
	p.b[11] = 1;
	ASSERT_EQ(net_dns_parse_query(p.b, p.n, &q), 0);
	ASSERT_EQ(net_dns_build_reply(&q, NET_DNS_RCODE_NXDOMAIN, out, sizeof(out), &n), 0);
	EXPECT_EQ(n, 12 + q.wire_len + 4);
	EXPECT_EQ(out[0], 0xbe);
	EXPECT_EQ(out[1], 0xef);
	EXPECT_EQ(out[2], 0x81); /* QR, RD echoed */
	EXPECT_EQ(out[3], 0x83); /* RA, NXDOMAIN */
	EXPECT_EQ(out[5], 1);
	EXPECT_EQ(memcmp(out + 12, p.b + 12, q.wire_len + 4), 0); /* question echoed, case kept */
	/* it is a valid reply to the query */
	ASSERT_EQ(net_dns_parse_reply(out, n, &q, addrs, 4, &naddr, &rcode), 0);
	EXPECT_EQ(rcode, NET_DNS_RCODE_NXDOMAIN);
	EXPECT_EQ(naddr, 0);

	EXPECT_EQ(net_dns_build_reply(&q, NET_DNS_RCODE_REFUSED, out, 20, &n), -ENOBUFS);

	ASSERT_EQ(net_dns_build_formerr(p.b, p.n, out, sizeof(out), &n), 0);
	EXPECT_EQ(n, 12);
	EXPECT_EQ(out[3] & 0xf, NET_DNS_RCODE_FORMERR);
	EXPECT_EQ(out[5], 0);
	EXPECT_EQ(net_dns_build_formerr(p.b, 11, out, sizeof(out), &n), -EBADMSG);
	out[2] = 0x80;
	EXPECT_EQ(net_dns_build_formerr(out, 12, out, sizeof(out), &n), -EBADMSG);
}

TEST(udp_limit_and_truncated)
{
	uint8_t out[512];
	size_t n = 0, naddr = 9;
	NetDnsAddr addrs[1];
	NetDnsQuery q;
	int rcode = -1;
	Pkt p;

	query(&p, 5, "big.example.org", 16);
	ASSERT_EQ(net_dns_parse_query(p.b, p.n, &q), 0);
	EXPECT_EQ(net_dns_udp_limit(&q), 512);
	opt(&p, 1232);
	p.b[11] = 1;
	ASSERT_EQ(net_dns_parse_query(p.b, p.n, &q), 0);
	EXPECT_EQ(net_dns_udp_limit(&q), 1232);
	q.edns_udp_size = 65000;
	EXPECT_EQ(net_dns_udp_limit(&q), NET_DNS_UDP_MAX);
	q.edns_udp_size = 100;
	EXPECT_EQ(net_dns_udp_limit(&q), 512);

	ASSERT_EQ(net_dns_build_truncated(&q, out, sizeof(out), &n), 0);
	EXPECT_TRUE(net_dns_truncated(out, n));
	ASSERT_EQ(net_dns_parse_reply(out, n, &q, addrs, 1, &naddr, &rcode), 0);
	EXPECT_EQ(rcode, NET_DNS_RCODE_NOERROR);
	EXPECT_EQ(naddr, 0);
}

/* A reply to q: answers appended by the caller after this header + question. */
static size_t reply_header(Pkt *p, const NetDnsQuery *q, unsigned ancount, unsigned rcode)
{
	pheader(p, q->id, 0x8180 | rcode, 1, ancount, 0, 0);
	memcpy(p->b + p->n, q->wire, q->wire_len);
	p->n += q->wire_len;
	p16(p, q->qtype);
	p16(p, q->qclass);
	return 12; /* where the question name starts */
}

static void rr(Pkt *p, unsigned owner_ptr, const char *owner, unsigned type, uint32_t ttl,
	       const void *rdata, unsigned rdlen)
{
	if (owner)
		pname(p, owner);
	else
		p16(p, 0xc000 | owner_ptr);
	p16(p, type);
	p16(p, NET_DNS_CLASS_IN);
	p32(p, ttl);
	p16(p, rdlen);
	memcpy(p->b + p->n, rdata, rdlen);
	p->n += rdlen;
}

TEST(reply_cname_chain)
{
	NetDnsAddr addrs[8];
	size_t n = 0;
	int rcode = -1;
	NetDnsQuery q;
	Pkt p, r;
	const uint8_t a1[4] = {203, 0, 113, 1}, a2[4] = {203, 0, 113, 2},
		      evil[4] = {198, 51, 100, 66};
	uint8_t a6[16];

	inet_pton(AF_INET6, "2001:db8::5", a6);
	query(&p, 42, "www.example.com", NET_DNS_TYPE_A);
	ASSERT_EQ(net_dns_parse_query(p.b, p.n, &q), 0);

	reply_header(&r, &q, 5, 0);
	/* www.example.com CNAME edge.cdn.net (target written out), TTL 100 */
	{
		Pkt t = {.n = 0};
		size_t target_off;

		pname(&t, "edge.cdn.net");
		rr(&r, 12, NULL, NET_DNS_TYPE_CNAME, 100, t.b, (unsigned) t.n);
		target_off = r.n - t.n;
		/* an unrelated A record: must not be collected */
		rr(&r, 0, "evil.example", NET_DNS_TYPE_A, 9999, evil, 4);
		/* edge.cdn.net A ×2 (owner by pointer to the CNAME target), AAAA */
		rr(&r, (unsigned) target_off, NULL, NET_DNS_TYPE_A, 300, a1, 4);
		rr(&r, (unsigned) target_off, NULL, NET_DNS_TYPE_A, 50, a2, 4);
		rr(&r, (unsigned) target_off, NULL, NET_DNS_TYPE_AAAA, 300, a6, 16);
	}
	ASSERT_EQ(net_dns_parse_reply(r.b, r.n, &q, addrs, 8, &n, &rcode), 0);
	EXPECT_EQ(rcode, 0);
	ASSERT_EQ(n, 3);
	EXPECT_EQ(addrs[0].family, AF_INET);
	EXPECT_EQ(memcmp(addrs[0].addr, a1, 4), 0);
	EXPECT_EQ(addrs[0].ttl, 100); /* capped by the CNAME's TTL */
	EXPECT_EQ(addrs[1].ttl, 50);
	EXPECT_EQ(addrs[2].family, AF_INET6);
	EXPECT_EQ(memcmp(addrs[2].addr, a6, 16), 0);

	/* max caps what is stored */
	ASSERT_EQ(net_dns_parse_reply(r.b, r.n, &q, addrs, 1, &n, &rcode), 0);
	EXPECT_EQ(n, 1);

	/* every truncation is refused, never read past */
	for (size_t l = 0; l < r.n; l++) {
		uint8_t *copy = malloc(l ? l : 1);

		memcpy(copy, r.b, l);
		EXPECT_EQ(net_dns_parse_reply(copy, l, &q, addrs, 8, &n, &rcode), -EBADMSG);
		free(copy);
	}

	/* wrong ID, not a reply, other question */
	r.b[0] ^= 1;
	EXPECT_EQ(net_dns_parse_reply(r.b, r.n, &q, addrs, 8, &n, &rcode), -EBADMSG);
	r.b[0] ^= 1;
	r.b[2] &= 0x7f;
	EXPECT_EQ(net_dns_parse_reply(r.b, r.n, &q, addrs, 8, &n, &rcode), -EBADMSG);
	r.b[2] |= 0x80;
	r.b[13] = 'W'; /* same name, other case: still ours */
	EXPECT_EQ(net_dns_parse_reply(r.b, r.n, &q, addrs, 8, &n, &rcode), 0);
	r.b[13] = 'x';
	EXPECT_EQ(net_dns_parse_reply(r.b, r.n, &q, addrs, 8, &n, &rcode), -EBADMSG);
}

TEST(reply_cname_loop_terminates)
{
	NetDnsAddr addrs[4];
	size_t n = 9;
	int rcode;
	NetDnsQuery q;
	Pkt p, r, t;
	const uint8_t a1[4] = {203, 0, 113, 1};

	query(&p, 42, "a.example", NET_DNS_TYPE_A);
	ASSERT_EQ(net_dns_parse_query(p.b, p.n, &q), 0);
	reply_header(&r, &q, 3, 0);
	t.n = 0;
	pname(&t, "b.example");
	rr(&r, 12, NULL, NET_DNS_TYPE_CNAME, 60, t.b, (unsigned) t.n);
	rr(&r, 0, "b.example", NET_DNS_TYPE_CNAME, 60, p.b + 12, (unsigned) q.wire_len);
	rr(&r, 0, "c.example", NET_DNS_TYPE_A, 60, a1, 4);
	ASSERT_EQ(net_dns_parse_reply(r.b, r.n, &q, addrs, 4, &n, &rcode), 0);
	EXPECT_EQ(n, 0);

	/* a CNAME whose target runs past its rdata */
	reply_header(&r, &q, 1, 0);
	rr(&r, 12, NULL, NET_DNS_TYPE_CNAME, 60, t.b, (unsigned) t.n - 1);
	p8(&r, 0);
	EXPECT_EQ(net_dns_parse_reply(r.b, r.n, &q, addrs, 4, &n, &rcode), -EBADMSG);

	/* an A record with a wrong rdlength is skipped, not read as an address */
	reply_header(&r, &q, 1, 0);
	rr(&r, 12, NULL, NET_DNS_TYPE_A, 60, a1, 3);
	ASSERT_EQ(net_dns_parse_reply(r.b, r.n, &q, addrs, 4, &n, &rcode), 0);
	EXPECT_EQ(n, 0);
}

TEST(tcp_framing)
{
	uint8_t msg[20] = {1, 2, 3}, out[64];
	size_t n = 0, mlen = 0;

	ASSERT_EQ(net_dns_tcp_frame(msg, sizeof(msg), out, sizeof(out), &n), 0);
	EXPECT_EQ(n, 22);
	EXPECT_EQ(out[0], 0);
	EXPECT_EQ(out[1], 20);
	EXPECT_EQ(out[2], 1);
	EXPECT_EQ(net_dns_tcp_frame(msg, sizeof(msg), out, 21, &n), -ENOBUFS);
	EXPECT_EQ(net_dns_tcp_frame(msg, 70000, out, sizeof(out), &n), -EMSGSIZE);

	for (size_t l = 0; l < 22; l++)
		EXPECT_EQ(net_dns_tcp_next(out, l, &mlen), 0);
	EXPECT_EQ(net_dns_tcp_next(out, 22, &mlen), 1);
	EXPECT_EQ(mlen, 20);
	EXPECT_EQ(net_dns_tcp_next(out, 40, &mlen), 1);
	out[1] = 11;
	EXPECT_EQ(net_dns_tcp_next(out, 40, &mlen), -EBADMSG);
}

TEST(parse_server_and_resolv_conf)
{
	struct sockaddr_storage ss[4];
	socklen_t lens[4];
	size_t n = 0;
	struct sockaddr_in *in = (struct sockaddr_in *) &ss[0];
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) &ss[0];

	ASSERT_EQ(net_dns_parse_server("1.1.1.1", &ss[0], &lens[0]), 0);
	EXPECT_EQ(in->sin_family, AF_INET);
	EXPECT_EQ(ntohs(in->sin_port), 53);
	ASSERT_EQ(net_dns_parse_server("127.0.0.1:5353", &ss[0], &lens[0]), 0);
	EXPECT_EQ(ntohs(in->sin_port), 5353);
	ASSERT_EQ(net_dns_parse_server("[::1]:5353", &ss[0], &lens[0]), 0);
	EXPECT_EQ(in6->sin6_family, AF_INET6);
	EXPECT_EQ(ntohs(in6->sin6_port), 5353);
	ASSERT_EQ(net_dns_parse_server("2001:db8::1", &ss[0], &lens[0]), 0);
	EXPECT_EQ(ntohs(in6->sin6_port), 53);
	EXPECT_EQ(lens[0], sizeof(struct sockaddr_in6));
	static const char *const bad[] = {
		"",	"1.1.1",  "1.1.1.1:",	  "1.1.1.1:0", "1.1.1.1:65536", "[1.1.1.1]:53",
		"[::1", "[::1]x", "host.example", "1.1.1.1:5x"};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (net_dns_parse_server(bad[i], &ss[0], &lens[0]) != -EINVAL)
			TAP_FAIL_(0, "'%s' accepted", bad[i]);

	ASSERT_EQ(net_dns_parse_resolv_conf("# comment\nsearch example.com\n"
					    "nameserver 10.255.255.53\n"
					    "nameserver\tfe80::1%eth0 # scoped\n"
					    "nameserver bogus\n"
					    "options ndots:2\n"
					    "nameserver 9.9.9.9",
					    ss, lens, 4, &n),
		  0);
	ASSERT_EQ(n, 3);
	EXPECT_EQ(((struct sockaddr_in *) &ss[0])->sin_addr.s_addr, inet_addr("10.255.255.53"));
	EXPECT_EQ(ss[1].ss_family, AF_INET6);
	EXPECT_EQ(ntohs(((struct sockaddr_in *) &ss[2])->sin_port), 53);
	ASSERT_EQ(net_dns_parse_resolv_conf("nameserver 1.1.1.1\nnameserver 1.0.0.1\n", ss, lens, 1,
					    &n),
		  0);
	EXPECT_EQ(n, 1);
}

/* ---- exchange with a fake upstream ---- */

typedef struct Upstream {
	int udp, tcp;
	struct sockaddr_in addr;
	bool truncate_udp; /* answer UDP with TC set and no records; TCP answers fully */
	bool silent;	   /* never answer */
	int queries;
	uint8_t seen[4][1024]; /* what each query was, byte for byte */
	size_t seen_len[4];
} Upstream;

static void record(Upstream *u, const uint8_t *msg, size_t len)
{
	if (u->queries < 4) {
		memcpy(u->seen[u->queries], msg, MIN(len, sizeof(u->seen[0])));
		u->seen_len[u->queries] = len;
	}
	u->queries++;
}

static size_t answer(const uint8_t *qmsg, size_t qlen, bool tc, uint8_t *out)
{
	NetDnsQuery q;
	Pkt r;
	const uint8_t a[4] = {192, 0, 2, 33};

	if (net_dns_parse_query(qmsg, qlen, &q) < 0)
		return 0;
	reply_header(&r, &q, tc ? 0 : 1, 0);
	if (tc)
		r.b[2] |= 0x02;
	else
		rr(&r, 12, NULL, NET_DNS_TYPE_A, 77, a, 4);
	memcpy(out, r.b, r.n);
	return r.n;
}

static void *upstream_main(void *p)
{
	Upstream *u = p;
	uint8_t buf[1024], out[1024];

	for (int round = 0; round < 4; round++) {
		struct pollfd pfd[2] = {{.fd = u->udp, .events = POLLIN},
					{.fd = u->tcp, .events = POLLIN}};

		if (poll(pfd, 2, 5000) <= 0)
			break;
		if (pfd[0].revents & POLLIN) {
			struct sockaddr_storage from;
			socklen_t fl = sizeof(from);
			ssize_t n = recvfrom(u->udp, buf, sizeof(buf), 0, (struct sockaddr *) &from,
					     &fl);
			size_t m;

			if (n <= 0)
				continue;
			record(u, buf, (size_t) n);
			if (u->silent)
				break;
			m = answer(buf, (size_t) n, u->truncate_udp, out);
			/* a stray reply with another ID first: the client must skip it */
			out[0] ^= 0x55;
			(void) sendto(u->udp, out, m, 0, (struct sockaddr *) &from, fl);
			out[0] ^= 0x55;
			(void) sendto(u->udp, out, m, 0, (struct sockaddr *) &from, fl);
			if (!u->truncate_udp)
				break;
		}
		if (pfd[1].revents & POLLIN) {
			int c = accept4(u->tcp, NULL, NULL, SOCK_CLOEXEC);
			size_t got = 0, mlen = 0, m, fl;
			uint8_t framed[1100];

			if (c < 0)
				continue;
			while (net_dns_tcp_next(buf, got, &mlen) == 0) {
				ssize_t n = read(c, buf + got, sizeof(buf) - got);

				if (n <= 0)
					break;
				got += (size_t) n;
			}
			record(u, buf + 2, mlen);
			m = answer(buf + 2, mlen, false, out);
			if (net_dns_tcp_frame(out, m, framed, sizeof(framed), &fl) == 0)
				if (write(c, framed, fl) < 0)
					perror("write");
			close(c);
			break;
		}
	}
	return NULL;
}

static int upstream_start(Upstream *u)
{
	socklen_t l = sizeof(u->addr);
	int one = 1;

	u->addr = (struct sockaddr_in){.sin_family = AF_INET,
				       .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	u->udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	u->tcp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (u->udp < 0 || u->tcp < 0)
		return -errno;
	(void) setsockopt(u->tcp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(u->udp, (struct sockaddr *) &u->addr, sizeof(u->addr)) < 0 ||
	    getsockname(u->udp, (struct sockaddr *) &u->addr, &l) < 0)
		return -errno;
	/* the same port over TCP, as a real server has it */
	if (bind(u->tcp, (struct sockaddr *) &u->addr, sizeof(u->addr)) < 0 ||
	    listen(u->tcp, 4) < 0)
		return -errno;
	return 0;
}

static void upstream_stop(Upstream *u)
{
	close(u->udp);
	close(u->tcp);
}

static int run_exchange(Upstream *u, int timeout_ms, NetDnsAddr *ret_addr, size_t *ret_naddr)
{
	pthread_t th;
	uint8_t out[NET_DNS_UDP_MAX];
	size_t n = 0;
	NetDnsQuery q;
	int rcode, k;
	Pkt p;

	query(&p, 0x4242, "api.example.com", NET_DNS_TYPE_A);
	if (net_dns_parse_query(p.b, p.n, &q) < 0 || pthread_create(&th, NULL, upstream_main, u))
		return -EIO;
	k = net_dns_exchange((struct sockaddr *) &u->addr, sizeof(u->addr), p.b, p.n, timeout_ms,
			     out, sizeof(out), &n);
	(void) pthread_join(th, NULL);
	if (k < 0)
		return k;
	/* the caller's ID is back, and the reply is one to its query */
	return net_dns_parse_reply(out, n, &q, ret_addr, 1, ret_naddr, &rcode);
}

TEST(exchange_udp)
{
	Upstream u = {};
	NetDnsAddr a;
	size_t n = 0;
	int k = upstream_start(&u);

	if (k < 0)
		SKIP("cannot listen on 127.0.0.1: %s", strerror(-k));
	ASSERT_EQ(run_exchange(&u, 5000, &a, &n), 0);
	ASSERT_EQ(n, 1);
	EXPECT_EQ(a.addr[3], 33);
	EXPECT_EQ(a.ttl, 77);
	EXPECT_EQ(u.queries, 1);
	upstream_stop(&u);
}

TEST(exchange_tcp_fallback)
{
	Upstream u = {.truncate_udp = true};
	NetDnsAddr a;
	size_t n = 0;
	int k = upstream_start(&u);

	if (k < 0)
		SKIP("cannot listen on 127.0.0.1: %s", strerror(-k));
	ASSERT_EQ(run_exchange(&u, 5000, &a, &n), 0);
	ASSERT_EQ(n, 1);
	EXPECT_EQ(a.addr[3], 33);
	EXPECT_EQ(u.queries, 2); /* once over UDP, once over TCP */
	upstream_stop(&u);
}

/* The upstream sees only the query built from the question, over UDP and over TCP, and the
 * client gets the reply to its own query (its ID, its name as written). */
TEST(exchange_forwards_only_the_rebuilt_query)
{
	for (int tcp = 0; tcp <= 1; tcp++) {
		Upstream u = {.truncate_udp = tcp};
		uint8_t out[NET_DNS_UDP_MAX], built[512];
		size_t n = 0, bn = 0, naddr = 0;
		NetDnsAddr a;
		NetDnsQuery q, seen;
		pthread_t th;
		int rcode = -1, k = upstream_start(&u);
		Pkt p;

		if (k < 0)
			SKIP("cannot listen on 127.0.0.1: %s", strerror(-k));
		smuggling_query(&p, 0xabcd);
		ASSERT_EQ(net_dns_parse_query(p.b, p.n, &q), 0);
		ASSERT_EQ(pthread_create(&th, NULL, upstream_main, &u), 0);
		k = net_dns_exchange((struct sockaddr *) &u.addr, sizeof(u.addr), p.b, p.n, 5000,
				     out, sizeof(out), &n);
		(void) pthread_join(th, NULL);
		ASSERT_EQ(k, 0);
		ASSERT_EQ(u.queries, tcp ? 2 : 1);
		for (int i = 0; i < u.queries; i++) {
			ASSERT_EQ(net_dns_parse_query(u.seen[i], u.seen_len[i], &seen), 0);
			EXPECT_NE(seen.id, 0xabcd);
			ASSERT_EQ(net_dns_build_query(&q, seen.id, built, sizeof(built), &bn), 0);
			EXPECT_EQ(u.seen_len[i], bn);
			EXPECT_TRUE(u.seen_len[i] == bn && memcmp(u.seen[i], built, bn) == 0);
			EXPECT_FALSE(memmem(u.seen[i], u.seen_len[i], "SECRET", 6) != NULL);
			EXPECT_FALSE(memmem(u.seen[i], u.seen_len[i], "ApI", 3) != NULL);
		}
		/* mapped back: the client's ID and name, and the answer's address */
		EXPECT_EQ(out[0], 0xab);
		EXPECT_EQ(out[1], 0xcd);
		EXPECT_TRUE(memcmp(out + 12, q.wire, q.wire_len) == 0);
		ASSERT_EQ(net_dns_parse_reply(out, n, &q, &a, 1, &naddr, &rcode), 0);
		EXPECT_EQ(naddr, 1);
		EXPECT_EQ(rcode, NET_DNS_RCODE_NOERROR);
		upstream_stop(&u);
	}
}

TEST(exchange_timeout)
{
	Upstream u = {.silent = true};
	NetDnsAddr a;
	size_t n = 0;
	int k = upstream_start(&u);

	if (k < 0)
		SKIP("cannot listen on 127.0.0.1: %s", strerror(-k));
	EXPECT_EQ(run_exchange(&u, 100, &a, &n), -ETIMEDOUT);
	upstream_stop(&u);
}

int main(void)
{
	return tap_run();
}
