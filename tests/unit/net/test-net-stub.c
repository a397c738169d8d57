/* SPDX-License-Identifier: MIT */
/*
 * The DNS stub end to end (net/stub.c) against a fake upstream on 127.0.0.1: allowed names are
 * forwarded and their addresses become connectable, others get NXDOMAIN without any upstream
 * traffic and their addresses stay unreachable even when hard-coded.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/stub.h"
#include "tests/unit/net/net-test-util.h"
#include "tests/unit/tap.h"

typedef struct Upstream {
	int fd;
	struct sockaddr_storage addr;
	socklen_t addr_len;
	int queries;
	int stop;
	pthread_t thread;
} Upstream;

static size_t put_name(uint8_t *p, const char *name)
{
	size_t o = 0;

	while (*name) {
		size_t l = strcspn(name, ".");

		p[o++] = (uint8_t) l;
		memcpy(p + o, name, l);
		o += l;
		name += l;
		if (*name == '.')
			name++;
	}
	p[o++] = 0;
	return o;
}

static size_t put_rr(uint8_t *p, uint16_t type, uint32_t ttl, const void *rdata, uint16_t rdlen)
{
	/* owner: pointer to the question name at 12 */
	const uint8_t head[] = {0xc0,
				12,
				(uint8_t) (type >> 8),
				(uint8_t) type,
				0,
				1,
				(uint8_t) (ttl >> 24),
				(uint8_t) (ttl >> 16),
				(uint8_t) (ttl >> 8),
				(uint8_t) ttl,
				(uint8_t) (rdlen >> 8),
				(uint8_t) rdlen};

	memcpy(p, head, sizeof(head));
	memcpy(p + sizeof(head), rdata, rdlen);
	return sizeof(head) + rdlen;
}

/* The upstream's zone: api.example.com A 192.0.2.10; rebind.example.com A 127.0.0.1 and
 * 192.0.2.12; big.example.org 40 × A 192.0.2.x (over 512 bytes). */
static size_t answer(const uint8_t *qmsg, size_t qlen, uint8_t *out)
{
	NetDnsQuery q;
	size_t o;
	unsigned an = 0;

	if (net_dns_parse_query(qmsg, qlen, &q) < 0)
		return 0;
	memset(out, 0, 12);
	out[0] = (uint8_t) (q.id >> 8), out[1] = (uint8_t) q.id;
	out[2] = 0x81, out[3] = 0x80;
	out[5] = 1;
	o = 12;
	memcpy(out + o, q.wire, q.wire_len);
	o += q.wire_len;
	out[o++] = 0, out[o++] = (uint8_t) q.qtype, out[o++] = 0, out[o++] = 1;
	if (q.qtype == NET_DNS_TYPE_A && streq(q.name, "api.example.com")) {
		const uint8_t a[4] = {192, 0, 2, 10};

		o += put_rr(out + o, NET_DNS_TYPE_A, 300, a, 4), an++;
	} else if (q.qtype == NET_DNS_TYPE_A && streq(q.name, "rebind.example.com")) {
		const uint8_t lo[4] = {127, 0, 0, 1}, a[4] = {192, 0, 2, 12};

		o += put_rr(out + o, NET_DNS_TYPE_A, 300, lo, 4), an++;
		o += put_rr(out + o, NET_DNS_TYPE_A, 300, a, 4), an++;
	} else if (q.qtype == NET_DNS_TYPE_A && streq(q.name, "big.example.org")) {
		for (uint8_t i = 1; i <= 40; i++) {
			const uint8_t a[4] = {192, 0, 2, i};

			o += put_rr(out + o, NET_DNS_TYPE_A, 60, a, 4), an++;
		}
	} else
		out[3] = 0x83; /* NXDOMAIN */
	out[7] = (uint8_t) an;
	return o;
}

static void *upstream_main(void *p)
{
	Upstream *u = p;
	uint8_t buf[1024], out[2048];

	while (!__atomic_load_n(&u->stop, __ATOMIC_ACQUIRE)) {
		struct pollfd pfd = {.fd = u->fd, .events = POLLIN};
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n;
		size_t m;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		n = recvfrom(u->fd, buf, sizeof(buf), 0, (struct sockaddr *) &from, &fl);
		if (n <= 0)
			continue;
		__atomic_add_fetch(&u->queries, 1, __ATOMIC_RELEASE);
		m = answer(buf, (size_t) n, out);
		if (m > 0)
			(void) sendto(u->fd, out, m, 0, (struct sockaddr *) &from, fl);
	}
	return NULL;
}

static int upstream_start(Upstream *u)
{
	struct sockaddr_in *in = (struct sockaddr_in *) &u->addr;

	memset(u, 0, sizeof(*u));
	in->sin_family = AF_INET;
	in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	u->addr_len = sizeof(*in);
	u->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (u->fd < 0)
		return -errno;
	if (bind(u->fd, (struct sockaddr *) in, sizeof(*in)) < 0 ||
	    getsockname(u->fd, (struct sockaddr *) in, &u->addr_len) < 0)
		return -errno;
	return -pthread_create(&u->thread, NULL, upstream_main, u);
}

static void upstream_stop(Upstream *u)
{
	__atomic_store_n(&u->stop, 1, __ATOMIC_RELEASE);
	(void) pthread_join(u->thread, NULL);
	close(u->fd);
}

static size_t make_query(uint8_t *p, uint16_t id, const char *name, uint16_t qtype)
{
	size_t o = 12;

	memset(p, 0, 12);
	p[0] = (uint8_t) (id >> 8), p[1] = (uint8_t) id;
	p[2] = 0x01; /* RD */
	p[5] = 1;
	o += put_name(p + o, name);
	p[o++] = (uint8_t) (qtype >> 8), p[o++] = (uint8_t) qtype, p[o++] = 0, p[o++] = 1;
	return o;
}

typedef struct Env {
	Upstream up;
	PolicyNetwork pn;
	NetLearned *learned;
	NetDnsStubConfig cfg;
	NetContext ctx;
} Env;

static int env_init(Env *e, NetMode mode)
{
	static const char *const entries[] = {"api.example.com:443", "*.example.org",
					      "rebind.example.com", NULL};
	int k = upstream_start(&e->up);

	if (k < 0)
		return k;
	test_network(&e->pn, mode, entries);
	e->learned = net_learned_new(0, NULL, NULL);
	e->cfg = (NetDnsStubConfig){.policy = &e->pn,
				    .mode = mode,
				    .learned = e->learned,
				    .upstreams = &e->up.addr,
				    .upstream_lens = &e->up.addr_len,
				    .n_upstreams = 1,
				    .timeout_ms = 5000};
	e->ctx = (NetContext){.policy = &e->pn, .mode = mode, .learned = e->learned};
	return e->learned ? 0 : -ENOMEM;
}

static void env_done(Env *e)
{
	upstream_stop(&e->up);
	test_network_done(&e->pn);
	e->learned = net_learned_free(e->learned);
}

static NetDnsOutcome ask(Env *e, const char *name, uint16_t qtype, bool tcp, uint8_t *reply,
			 size_t *reply_len)
{
	uint8_t q[300];
	size_t qlen = make_query(q, 0x7777, name, qtype);
	NetDnsOutcome o = {.rcode = -2};

	if (net_dns_stub_answer(&e->cfg, q, qlen, tcp, reply, NET_DNS_MAX_MESSAGE, reply_len, &o) <
	    0)
		o.rcode = -3;
	return o;
}

static NetVerdict connect_verdict(Env *e, const char *dest)
{
	NetAddr a = test_ip(dest);
	NetDecision d;

	if (net_decide_address(&e->ctx, NET_OP_CONNECT, AF_INET, SOCK_STREAM, &a, &d) < 0)
		return _NET_VERDICT_INVALID;
	return d.verdict;
}

#define ENV_OR_SKIP(e, mode)                                                                       \
	do {                                                                                       \
		int _k = env_init((e), (mode));                                                    \
		if (_k < 0)                                                                        \
			SKIP("cannot run a fake upstream on 127.0.0.1: %s", strerror(-_k));        \
	} while (0)

static uint8_t reply[NET_DNS_MAX_MESSAGE];

TEST(allowed_name_resolves_and_unlocks_its_address)
{
	Env e;
	size_t n = 0;
	NetDnsOutcome o;

	ENV_OR_SKIP(&e, NET_MODE_ALLOWLIST);
	EXPECT_EQ(connect_verdict(&e, "192.0.2.10:443"), NET_VERDICT_DENY);
	o = ask(&e, "API.example.com", NET_DNS_TYPE_A, false, reply, &n);
	EXPECT_EQ(o.rcode, NET_DNS_RCODE_NOERROR);
	EXPECT_TRUE(o.forwarded);
	EXPECT_EQ(o.n_learned, 1);
	EXPECT_STREQ(o.name, "api.example.com");
	ASSERT_TRUE(n > 12);
	EXPECT_EQ(reply[0], 0x77); /* the client's ID */
	EXPECT_EQ(reply[7], 1);	   /* one answer relayed */
	EXPECT_EQ(connect_verdict(&e, "192.0.2.10:443"), NET_VERDICT_ALLOW);
	EXPECT_EQ(connect_verdict(&e, "192.0.2.10:80"), NET_VERDICT_DENY);
	EXPECT_EQ(e.up.queries, 1);
	env_done(&e);
}

TEST(other_names_nxdomain_without_upstream_traffic)
{
	static const char *const names[] = {"secret-data.evil.net", "example.org",
					    "x.api.example.com", "4.3.2.1.in-addr.arpa"};
	Env e;
	size_t n = 0;

	ENV_OR_SKIP(&e, NET_MODE_ALLOWLIST);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		NetDnsOutcome o = ask(&e, names[i], NET_DNS_TYPE_A, false, reply, &n);

		EXPECT_EQ(o.rcode, NET_DNS_RCODE_NXDOMAIN);
		EXPECT_FALSE(o.forwarded);
		EXPECT_EQ(reply[3] & 0xf, NET_DNS_RCODE_NXDOMAIN);
	}
	EXPECT_EQ(e.up.queries, 0);
	/* and a hard-coded address of such a host stays unreachable */
	EXPECT_EQ(connect_verdict(&e, "192.0.2.66:443"), NET_VERDICT_DENY);
	EXPECT_EQ(net_learned_count(e.learned), 0);
	env_done(&e);
}

TEST(loopback_and_none_modes_answer_locally)
{
	Env e;
	size_t n = 0;
	NetDnsOutcome o;

	ENV_OR_SKIP(&e, NET_MODE_LOOPBACK);
	o = ask(&e, "api.example.com", NET_DNS_TYPE_A, false, reply, &n);
	EXPECT_EQ(o.rcode, NET_DNS_RCODE_NXDOMAIN);
	e.cfg.mode = NET_MODE_NONE;
	o = ask(&e, "api.example.com", NET_DNS_TYPE_A, false, reply, &n);
	EXPECT_EQ(o.rcode, NET_DNS_RCODE_REFUSED);
	EXPECT_EQ(e.up.queries, 0);
	env_done(&e);
}

TEST(rebinding_to_loopback_is_not_learned)
{
	Env e;
	size_t n = 0;
	NetDnsOutcome o;

	ENV_OR_SKIP(&e, NET_MODE_ALLOWLIST);
	o = ask(&e, "rebind.example.com", NET_DNS_TYPE_A, false, reply, &n);
	EXPECT_EQ(o.rcode, NET_DNS_RCODE_NOERROR);
	EXPECT_EQ(o.n_learned, 1);
	EXPECT_EQ(o.n_refused, 1);
	EXPECT_EQ(connect_verdict(&e, "127.0.0.1:443"), NET_VERDICT_DENY);
	EXPECT_EQ(connect_verdict(&e, "192.0.2.12:443"), NET_VERDICT_ALLOW);
	env_done(&e);
}

TEST(long_answer_truncated_over_udp_whole_over_tcp)
{
	Env e;
	size_t n = 0;
	NetDnsOutcome o;

	ENV_OR_SKIP(&e, NET_MODE_ALLOWLIST);
	o = ask(&e, "big.example.org", NET_DNS_TYPE_A, false, reply, &n);
	EXPECT_EQ(o.rcode, NET_DNS_RCODE_NOERROR);
	EXPECT_TRUE(n <= 512);
	EXPECT_TRUE(net_dns_truncated(reply, n));
	EXPECT_EQ(o.n_learned, 40); /* learned anyway: the TCP retry will want them */
	o = ask(&e, "big.example.org", NET_DNS_TYPE_A, true, reply, &n);
	EXPECT_TRUE(n > 512);
	EXPECT_FALSE(net_dns_truncated(reply, n));
	EXPECT_EQ(reply[7], 40);
	env_done(&e);
}

TEST(upstream_down_is_servfail)
{
	Env e;
	size_t n = 0;
	NetDnsOutcome o;
	struct sockaddr_storage dead;
	socklen_t dead_len;
	int fd;

	ENV_OR_SKIP(&e, NET_MODE_ALLOWLIST);
	/* a port nobody listens on: bind one, note it, close it */
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT_TRUE(fd >= 0);
	dead = e.up.addr;
	((struct sockaddr_in *) &dead)->sin_port = 0;
	dead_len = sizeof(struct sockaddr_in);
	ASSERT_EQ(bind(fd, (struct sockaddr *) &dead, dead_len), 0);
	ASSERT_EQ(getsockname(fd, (struct sockaddr *) &dead, &dead_len), 0);
	close(fd);
	e.cfg.upstreams = &dead;
	e.cfg.upstream_lens = &dead_len;
	o = ask(&e, "api.example.com", NET_DNS_TYPE_A, false, reply, &n);
	EXPECT_EQ(o.rcode, NET_DNS_RCODE_SERVFAIL);
	EXPECT_TRUE(o.upstream_error < 0);
	EXPECT_EQ(reply[3] & 0xf, NET_DNS_RCODE_SERVFAIL);
	env_done(&e);
}

TEST(garbage_gets_formerr_or_nothing)
{
	Env e;
	size_t n = 99;
	NetDnsOutcome o;
	uint8_t junk[20] = {0x12, 0x34, 0x01, 0x00, 0x00, 0x05};

	ENV_OR_SKIP(&e, NET_MODE_ALLOWLIST);
	ASSERT_EQ(net_dns_stub_answer(&e.cfg, junk, sizeof(junk), false, reply, sizeof(reply), &n,
				      &o),
		  0);
	EXPECT_EQ(n, 12);
	EXPECT_EQ(o.rcode, NET_DNS_RCODE_FORMERR);
	EXPECT_EQ(reply[0], 0x12);
	ASSERT_EQ(net_dns_stub_answer(&e.cfg, junk, 5, false, reply, sizeof(reply), &n, &o), 0);
	EXPECT_EQ(n, 0);
	junk[2] = 0x81; /* a reply: never answered */
	ASSERT_EQ(net_dns_stub_answer(&e.cfg, junk, sizeof(junk), false, reply, sizeof(reply), &n,
				      &o),
		  0);
	EXPECT_EQ(n, 0);
	EXPECT_EQ(o.rcode, -1);
	env_done(&e);
}

int main(void)
{
	return tap_run();
}
