/* SPDX-License-Identifier: MIT */
/* Network decisions and the DNS-learned set (net/allow.c). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "net/allow.h"
#include "tests/unit/net/net-test-util.h"
#include "tests/unit/tap.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

static NetDecision sock(NetMode mode, int family, int type, int proto)
{
	PolicyNetwork pn = {.mode = mode};
	NetContext ctx = {.policy = &pn, .mode = mode};
	NetDecision d = {.verdict = _NET_VERDICT_INVALID};

	if (net_decide_socket(&ctx, family, type, proto, &d) < 0)
		abort();
	return d;
}

TEST(socket_by_mode)
{
	NetDecision d;

	/* none: no inet, netlink or packet; unix allowed */
	d = sock(NET_MODE_NONE, AF_INET, SOCK_STREAM, 0);
	EXPECT_EQ(d.verdict, NET_VERDICT_DENY);
	EXPECT_EQ(d.error, EACCES);
	EXPECT_STREQ(d.why, "network none");
	EXPECT_EQ(sock(NET_MODE_NONE, AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0).verdict,
		  NET_VERDICT_DENY);
	EXPECT_EQ(sock(NET_MODE_NONE, AF_NETLINK, SOCK_RAW, 0).verdict, NET_VERDICT_DENY);
	EXPECT_EQ(sock(NET_MODE_NONE, AF_PACKET, SOCK_RAW, 0).verdict, NET_VERDICT_DENY);
	EXPECT_EQ(sock(NET_MODE_NONE, AF_UNIX, SOCK_STREAM, 0).verdict, NET_VERDICT_ALLOW);
	d = sock(NET_MODE_NONE, AF_VSOCK, SOCK_STREAM, 0);
	EXPECT_EQ(d.verdict, NET_VERDICT_DENY);
	EXPECT_EQ(d.error, EAFNOSUPPORT);

	/* loopback and allowlist: TCP, UDP and ping sockets; not raw, SCTP, MPTCP, netlink */
	for (NetMode m = NET_MODE_LOOPBACK; m <= NET_MODE_ALLOWLIST; m++) {
		EXPECT_EQ(sock(m, AF_INET, SOCK_STREAM | SOCK_NONBLOCK, IPPROTO_TCP).verdict,
			  NET_VERDICT_ALLOW);
		EXPECT_EQ(sock(m, AF_INET6, SOCK_DGRAM, 0).verdict, NET_VERDICT_ALLOW);
		EXPECT_EQ(sock(m, AF_INET, SOCK_DGRAM, IPPROTO_ICMP).verdict, NET_VERDICT_ALLOW);
		EXPECT_EQ(sock(m, AF_INET6, SOCK_DGRAM, IPPROTO_ICMP).verdict, NET_VERDICT_DENY);
		EXPECT_EQ(sock(m, AF_INET, SOCK_RAW, IPPROTO_RAW).error, EACCES);
		EXPECT_EQ(sock(m, AF_INET, SOCK_STREAM, IPPROTO_MPTCP).error, EPROTONOSUPPORT);
		EXPECT_EQ(sock(m, AF_INET, SOCK_SEQPACKET, IPPROTO_SCTP).error, EPROTONOSUPPORT);
		EXPECT_EQ(sock(m, AF_NETLINK, SOCK_RAW, 0).verdict, NET_VERDICT_DENY);
		EXPECT_EQ(sock(m, AF_PACKET, SOCK_DGRAM, 0).verdict, NET_VERDICT_DENY);
	}

	/* full: everything */
	EXPECT_EQ(sock(NET_MODE_FULL, AF_PACKET, SOCK_RAW, 0).verdict, NET_VERDICT_ALLOW);
	EXPECT_EQ(sock(NET_MODE_FULL, AF_NETLINK, SOCK_RAW, 0).verdict, NET_VERDICT_ALLOW);
	EXPECT_EQ(sock(NET_MODE_FULL, AF_INET, SOCK_RAW, 1).verdict, NET_VERDICT_ALLOW);
}

TEST(socket_errno_from_policy)
{
	PolicyNetwork pn = {.mode = NET_MODE_NONE, .socket_errno = EPERM};
	NetContext ctx = {.policy = &pn, .mode = NET_MODE_NONE};
	NetDecision d;

	ASSERT_EQ(net_decide_socket(&ctx, AF_INET, SOCK_STREAM, 0, &d), 0);
	EXPECT_EQ(d.error, EPERM);
	ctx.mode = (NetMode) 17;
	EXPECT_EQ(net_decide_socket(&ctx, AF_INET, SOCK_STREAM, 0, &d), -EINVAL);
}

/* One decision for an IP destination string under a policy. */
typedef struct Fixture {
	PolicyNetwork pn;
	NetContext ctx;
	NetLearned *learned;
	NetAddr resolvers[2];
} Fixture;

static void fixture_init(Fixture *f, NetMode mode, const char *const *entries)
{
	memset(f, 0, sizeof(*f));
	test_network(&f->pn, mode, entries);
	f->learned = net_learned_new(0, NULL, NULL);
	if (!f->learned)
		abort();
	f->resolvers[0] = test_ip("10.255.255.53:53");
	f->resolvers[1] = test_ip("[2001:db8::53]:53");
	f->ctx = (NetContext){.policy = &f->pn,
			      .mode = mode,
			      .learned = f->learned,
			      .resolvers = f->resolvers,
			      .n_resolvers = 2};
}

static void fixture_done(Fixture *f)
{
	test_network_done(&f->pn);
	f->learned = net_learned_free(f->learned);
}

static NetDecision ip(Fixture *f, NetOp op, int type, const char *dest)
{
	NetAddr a = test_ip(dest);
	NetDecision d = {.verdict = _NET_VERDICT_INVALID};

	if (net_decide_address(&f->ctx, op, a.family, type, &a, &d) < 0)
		abort();
	return d;
}

#define EXPECT_VERDICT(f, op, type, dest, v)                                                       \
	do {                                                                                       \
		NetDecision _d = ip((f), (op), (type), (dest));                                    \
		if (_d.verdict != (v))                                                             \
			TAP_FAIL_(0, "%s %s: got %s (%s), want %s", net_op_to_string(op), (dest),  \
				  net_verdict_to_string(_d.verdict), _d.why,                       \
				  net_verdict_to_string(v));                                       \
	} while (0)

static const char *const kinds[] = {
	"127.0.0.1:80",
	"127.0.0.2:8080",
	"[::1]:80",
	"[::ffff:127.0.0.3]:80", /* 0-3 loopback */
	"0.0.0.0:80",
	"[::]:80", /* 4-5 local */
	"10.1.2.3:443",
	"[::ffff:10.1.2.3]:443", /* 6-7 allowlisted */
	"93.184.216.34:443",
	"[2001:db8:1::1]:443",
	"[::ffff:8.8.8.8]:443", /* 8-10 */
	"[::127.0.0.1]:80",	/* 11 v4compat */
};

TEST(mode_by_address_kind)
{
	static const char *const entries[] = {"10.0.0.0/8:443", NULL};
	/* want[mode][kind]: 1 allow, 0 deny */
	static const int want[_NET_MODE_MAX][ARRAY_SIZE(kinds)] = {
		[NET_MODE_NONE] = {0},
		[NET_MODE_LOOPBACK] = {1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0},
		[NET_MODE_ALLOWLIST] = {0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0},
		[NET_MODE_FULL] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
	};

	for (NetMode m = 0; m < _NET_MODE_MAX; m++) {
		Fixture f;

		fixture_init(&f, m, entries);
		for (size_t k = 0; k < ARRAY_SIZE(kinds); k++)
			for (int type = SOCK_STREAM; type <= SOCK_DGRAM; type++)
				for (NetOp op = NET_OP_CONNECT; op <= NET_OP_SENDTO; op++) {
					NetDecision d = ip(&f, op, type, kinds[k]);
					int allowed = d.verdict == NET_VERDICT_ALLOW;

					if (allowed != want[m][k])
						TAP_FAIL_(0, "mode %d %s %s: %s (%s)", m,
							  net_op_to_string(op), kinds[k],
							  net_verdict_to_string(d.verdict), d.why);
					if (!allowed && d.verdict == NET_VERDICT_DENY)
						EXPECT_EQ(d.error, ECONNREFUSED);
				}
		fixture_done(&f);
	}
}

TEST(connect_errno_and_reasons)
{
	static const char *const entries[] = {"10.0.0.0/8", NULL};
	Fixture f;
	NetDecision d;

	fixture_init(&f, NET_MODE_ALLOWLIST, entries);
	f.pn.connect_errno = ENETUNREACH;
	d = ip(&f, NET_OP_CONNECT, SOCK_STREAM, "11.0.0.1:80");
	EXPECT_EQ(d.verdict, NET_VERDICT_DENY);
	EXPECT_EQ(d.error, ENETUNREACH);
	EXPECT_STREQ(d.why, "not in allowlist");
	d = ip(&f, NET_OP_CONNECT, SOCK_STREAM, "[::127.0.0.1]:80");
	EXPECT_STREQ(d.why, "IPv4-compatible IPv6 address");
	f.ctx.mode = NET_MODE_NONE;
	d = ip(&f, NET_OP_CONNECT, SOCK_STREAM, "10.0.0.1:80");
	EXPECT_STREQ(d.why, "network none");
	EXPECT_EQ(d.error, ENETUNREACH);
	fixture_done(&f);
}

TEST(cidr_edges)
{
	static const struct {
		const char *entry, *dest;
		int match;
	} cases[] = {
		{"0.0.0.0/0", "1.2.3.4:1", 1},
		{"0.0.0.0/0", "255.255.255.255:1", 1},
		{"0.0.0.0/0", "[2001:db8::1]:1", 0},	/* v4 rule, v6 address */
		{"0.0.0.0/0", "[::ffff:1.2.3.4]:1", 1}, /* v4-mapped counts as v4 */
		{"::/0", "[2001:db8::1]:1", 1},
		{"::/0", "1.2.3.4:1", 0},
		{"::/0", "[::ffff:1.2.3.4]:1", 0},
		{"192.0.2.7/32", "192.0.2.7:1", 1},
		{"192.0.2.7/32", "192.0.2.6:1", 0},
		{"192.0.2.7/32", "192.0.2.8:1", 0},
		{"192.0.2.6/31", "192.0.2.7:1", 1},
		{"192.0.2.6/31", "192.0.2.8:1", 0},
		{"192.0.2.128/25", "192.0.2.128:1", 1},
		{"192.0.2.128/25", "192.0.2.255:1", 1},
		{"192.0.2.128/25", "192.0.2.127:1", 0},
		{"128.0.0.0/1", "127.255.255.255:1", 0},
		{"128.0.0.0/1", "128.0.0.0:1", 1},
		{"2001:db8::1/128", "[2001:db8::1]:1", 1},
		{"2001:db8::1/128", "[2001:db8::2]:1", 0},
		{"2001:db8::/127", "[2001:db8::1]:1", 1},
		{"2001:db8::/127", "[2001:db8::2]:1", 0},
		{"2001:db8::/32", "[2001:db9::]:1", 0},
		{"2001:db8::/33", "[2001:db8:7fff::1]:1", 1},
		{"2001:db8::/33", "[2001:db8:8000::1]:1", 0},
		/* ports */
		/* (a policy cannot list port 0: "1-65535" at most, or no ports for all of them) */
		{"192.0.2.1/32:1", "192.0.2.1:1", 1},
		{"192.0.2.1/32:1", "192.0.2.1:0", 0},
		{"192.0.2.1/32:1", "192.0.2.1:2", 0},
		{"192.0.2.1/32:65535", "192.0.2.1:65535", 1},
		{"192.0.2.1/32:65535", "192.0.2.1:65534", 0},
		{"192.0.2.1/32:8000-8010", "192.0.2.1:7999", 0},
		{"192.0.2.1/32:8000-8010", "192.0.2.1:8000", 1},
		{"192.0.2.1/32:8000-8010", "192.0.2.1:8010", 1},
		{"192.0.2.1/32:8000-8010", "192.0.2.1:8011", 0},
		{"192.0.2.1/32:1-65535", "192.0.2.1:65535", 1},
		{"192.0.2.1/32:1-65535", "192.0.2.1:0", 0},
		{"192.0.2.1/32", "192.0.2.1:65535", 1},
		{"192.0.2.1/32", "192.0.2.1:0", 1},
		{"[2001:db8::/32]:443", "[2001:db8::5]:443", 1},
		{"[2001:db8::/32]:443", "[2001:db8::5]:444", 0},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *entries[] = {cases[i].entry, NULL};
		Fixture f;
		NetDecision d;

		fixture_init(&f, NET_MODE_ALLOWLIST, entries);
		d = ip(&f, NET_OP_CONNECT, SOCK_STREAM, cases[i].dest);
		if ((d.verdict == NET_VERDICT_ALLOW) != cases[i].match)
			TAP_FAIL_(0, "%s vs %s: %s", cases[i].entry, cases[i].dest, d.why);
		fixture_done(&f);
	}
}

TEST(cidr_bad_prefix_never_matches)
{
	PolicyNetAllow e = test_allow("10.0.0.0/8");
	NetAddr a = test_ip("10.0.0.1:1");

	e.prefix = 33;
	EXPECT_FALSE(net_cidr_match(&e, &a));
	e.prefix = 8;
	EXPECT_TRUE(net_cidr_match(&e, &a));
	free(e.text);
}

TEST(dns_redirect)
{
	static const char *const entries[] = {"0.0.0.0/0", NULL};
	Fixture f;

	fixture_init(&f, NET_MODE_ALLOWLIST, entries);
	/* the configured resolvers, port 53, UDP and TCP */
	EXPECT_VERDICT(&f, NET_OP_SENDTO, SOCK_DGRAM, "10.255.255.53:53", NET_VERDICT_DNS);
	EXPECT_VERDICT(&f, NET_OP_CONNECT, SOCK_STREAM, "10.255.255.53:53", NET_VERDICT_DNS);
	EXPECT_VERDICT(&f, NET_OP_CONNECT, SOCK_DGRAM, "[2001:db8::53]:53", NET_VERDICT_DNS);
	EXPECT_VERDICT(&f, NET_OP_CONNECT, SOCK_DGRAM, "[::ffff:10.255.255.53]:53",
		       NET_VERDICT_DNS);
	/* any local resolver: systemd-resolved, dnsmasq, and 0.0.0.0 (= local host) */
	EXPECT_VERDICT(&f, NET_OP_SENDTO, SOCK_DGRAM, "127.0.0.53:53", NET_VERDICT_DNS);
	EXPECT_VERDICT(&f, NET_OP_SENDTO, SOCK_DGRAM, "0.0.0.0:53", NET_VERDICT_DNS);
	/* another port of the resolver, or another server: ordinary rules (allowed here) */
	EXPECT_VERDICT(&f, NET_OP_SENDTO, SOCK_DGRAM, "10.255.255.53:5353", NET_VERDICT_ALLOW);
	EXPECT_VERDICT(&f, NET_OP_SENDTO, SOCK_DGRAM, "8.8.8.8:53", NET_VERDICT_ALLOW);
	fixture_done(&f);

	/* loopback mode: the local resolver is redirected too (the stub answers NXDOMAIN) */
	fixture_init(&f, NET_MODE_LOOPBACK, NULL);
	EXPECT_VERDICT(&f, NET_OP_SENDTO, SOCK_DGRAM, "127.0.0.53:53", NET_VERDICT_DNS);
	EXPECT_VERDICT(&f, NET_OP_SENDTO, SOCK_DGRAM, "10.255.255.53:53", NET_VERDICT_DNS);
	EXPECT_VERDICT(&f, NET_OP_SENDTO, SOCK_DGRAM, "127.0.0.53:5353", NET_VERDICT_ALLOW);
	EXPECT_VERDICT(&f, NET_OP_SENDTO, SOCK_DGRAM, "8.8.8.8:53", NET_VERDICT_DENY);
	fixture_done(&f);

	/* full: nothing redirected */
	fixture_init(&f, NET_MODE_FULL, NULL);
	EXPECT_VERDICT(&f, NET_OP_SENDTO, SOCK_DGRAM, "10.255.255.53:53", NET_VERDICT_ALLOW);
	fixture_done(&f);
}

/* unlisted = "ask" (issue 17): connects and sends outside the list are held, not denied; what
 * the list allows, the resolvers and binds are unchanged */
TEST(ask_unlisted)
{
	static const char *const entries[] = {"10.0.0.0/8:443", NULL};
	Fixture f;

	fixture_init(&f, NET_MODE_ALLOWLIST, entries);
	f.ctx.ask_unlisted = true;
	EXPECT_VERDICT(&f, NET_OP_CONNECT, SOCK_STREAM, "93.184.216.34:443", NET_VERDICT_ASK);
	EXPECT_VERDICT(&f, NET_OP_SENDTO, SOCK_DGRAM, "93.184.216.34:443", NET_VERDICT_ASK);
	EXPECT_VERDICT(&f, NET_OP_SENDTO, SOCK_DGRAM, "[2001:db8:1::1]:443", NET_VERDICT_ASK);
	EXPECT_VERDICT(&f, NET_OP_SENDTO, SOCK_DGRAM, "10.1.2.3:443", NET_VERDICT_ALLOW);
	EXPECT_VERDICT(&f, NET_OP_SENDTO, SOCK_DGRAM, "10.255.255.53:53", NET_VERDICT_DNS);
	EXPECT_VERDICT(&f, NET_OP_BIND, SOCK_DGRAM, "93.184.216.34:443", NET_VERDICT_DENY);
	/* without ask: denied as before */
	f.ctx.ask_unlisted = false;
	EXPECT_VERDICT(&f, NET_OP_SENDTO, SOCK_DGRAM, "93.184.216.34:443", NET_VERDICT_DENY);
	fixture_done(&f);

	fixture_init(&f, NET_MODE_LOOPBACK, NULL);
	f.ctx.ask_unlisted = true;
	EXPECT_VERDICT(&f, NET_OP_SENDTO, SOCK_DGRAM, "8.8.8.8:443", NET_VERDICT_ASK);
	EXPECT_VERDICT(&f, NET_OP_SENDTO, SOCK_DGRAM, "127.0.0.1:9", NET_VERDICT_ALLOW);
	fixture_done(&f);
}

TEST(bind_and_listen)
{
	static const char *const entries[] = {"0.0.0.0/0", "::/0", NULL};

	for (NetMode m = NET_MODE_LOOPBACK; m <= NET_MODE_ALLOWLIST; m++) {
		Fixture f;
		NetDecision d;

		fixture_init(&f, m, entries);
		EXPECT_VERDICT(&f, NET_OP_BIND, SOCK_STREAM, "127.0.0.1:8080", NET_VERDICT_ALLOW);
		EXPECT_VERDICT(&f, NET_OP_BIND, SOCK_STREAM, "[::1]:0", NET_VERDICT_ALLOW);
		EXPECT_VERDICT(&f, NET_OP_BIND, SOCK_DGRAM, "0.0.0.0:0", NET_VERDICT_ALLOW);
		EXPECT_VERDICT(&f, NET_OP_BIND, SOCK_DGRAM, "[::]:0", NET_VERDICT_ALLOW);
		/* a TCP client's chosen source port; listen() on it is refused below */
		EXPECT_VERDICT(&f, NET_OP_BIND, SOCK_STREAM, "0.0.0.0:8080", NET_VERDICT_ALLOW);
		EXPECT_VERDICT(&f, NET_OP_BIND, SOCK_STREAM, "[::]:8080", NET_VERDICT_ALLOW);
		/* a datagram socket receives from every interface once bound */
		d = ip(&f, NET_OP_BIND, SOCK_DGRAM, "0.0.0.0:8080");
		EXPECT_EQ(d.verdict, NET_VERDICT_DENY);
		EXPECT_EQ(d.error, EACCES);
		EXPECT_VERDICT(&f, NET_OP_BIND, SOCK_STREAM, "192.0.2.1:0", NET_VERDICT_DENY);
		EXPECT_VERDICT(&f, NET_OP_LISTEN, SOCK_STREAM, "127.0.0.1:8080", NET_VERDICT_ALLOW);
		/* listen() after an ephemeral wildcard bind would serve every interface */
		EXPECT_VERDICT(&f, NET_OP_LISTEN, SOCK_STREAM, "0.0.0.0:41000", NET_VERDICT_DENY);
		EXPECT_VERDICT(&f, NET_OP_LISTEN, SOCK_STREAM, "[::]:41000", NET_VERDICT_DENY);
		fixture_done(&f);
	}
}

static NetDecision unix_addr(Fixture *f, NetOp op, const void *sa, size_t len)
{
	NetAddr a;
	NetDecision d = {.verdict = _NET_VERDICT_INVALID};

	if (net_sockaddr_decode(sa, len, &a) < 0 ||
	    net_decide_address(&f->ctx, op, AF_UNIX, SOCK_STREAM, &a, &d) < 0)
		abort();
	return d;
}

TEST(unix_sockets)
{
	char *list[] = {"@allowed", "/run/listed.sock", NULL};
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	size_t off = offsetof(struct sockaddr_un, sun_path);

	for (NetMode m = 0; m < _NET_MODE_MAX; m++) {
		Fixture f;
		NetDecision d;

		fixture_init(&f, m, NULL);
		f.pn.unix_sockets = list;

		memcpy(un.sun_path, "\0allowed", 8);
		EXPECT_EQ(unix_addr(&f, NET_OP_CONNECT, &un, off + 8).verdict, NET_VERDICT_ALLOW);
		/* same prefix, different length: not the listed name */
		EXPECT_EQ(unix_addr(&f, NET_OP_CONNECT, &un, off + 9).verdict, NET_VERDICT_DENY);
		memcpy(un.sun_path, "\0other", 6);
		d = unix_addr(&f, NET_OP_CONNECT, &un, off + 6);
		EXPECT_EQ(d.verdict, NET_VERDICT_DENY);
		EXPECT_EQ(d.error, ECONNREFUSED);
		EXPECT_STREQ(d.why, "abstract unix socket not listed");
		EXPECT_EQ(unix_addr(&f, NET_OP_BIND, &un, off + 6).error, EACCES);

		strcpy(un.sun_path, "/tmp/s");
		EXPECT_EQ(unix_addr(&f, NET_OP_CONNECT, &un, sizeof(un)).verdict,
			  NET_VERDICT_UNIX_PATH);
		EXPECT_EQ(unix_addr(&f, NET_OP_BIND, &un, sizeof(un)).verdict,
			  NET_VERDICT_UNIX_PATH);

		EXPECT_EQ(unix_addr(&f, NET_OP_BIND, &un, off).verdict, NET_VERDICT_ALLOW);
		d = unix_addr(&f, NET_OP_CONNECT, &un, off);
		EXPECT_EQ(d.verdict, NET_VERDICT_DENY);
		EXPECT_EQ(d.error, EINVAL);
		fixture_done(&f);
	}
	{
		PolicyNetwork pn = {.unix_sockets = list};

		EXPECT_TRUE(net_unix_path_listed(&pn, "/run/listed.sock"));
		EXPECT_FALSE(net_unix_path_listed(&pn, "/run/listed"));
		EXPECT_FALSE(net_unix_path_listed(&pn, "@allowed"));
	}
}

TEST(family_mismatch_and_unspec)
{
	Fixture f;
	NetAddr a = test_ip("[::1]:80"), unspec = {.family = AF_UNSPEC},
		un = {.family = AF_UNIX,
		      .unix_kind = NET_UNIX_PATH,
		      .unix_len = 1,
		      .unix_name = "/"};
	NetDecision d;

	fixture_init(&f, NET_MODE_LOOPBACK, NULL);
	/* IPv6 address on an IPv4 socket: the kernel refuses; so do we */
	ASSERT_EQ(net_decide_address(&f.ctx, NET_OP_CONNECT, AF_INET, SOCK_STREAM, &a, &d), 0);
	EXPECT_EQ(d.verdict, NET_VERDICT_DENY);
	/* IPv4 address on an IPv6 socket: used as IPv4, judged as IPv4 */
	a = test_ip("127.0.0.1:80");
	ASSERT_EQ(net_decide_address(&f.ctx, NET_OP_SENDTO, AF_INET6, SOCK_DGRAM, &a, &d), 0);
	EXPECT_EQ(d.verdict, NET_VERDICT_ALLOW);
	a = test_ip("8.8.8.8:80");
	ASSERT_EQ(net_decide_address(&f.ctx, NET_OP_SENDTO, AF_INET6, SOCK_DGRAM, &a, &d), 0);
	EXPECT_EQ(d.verdict, NET_VERDICT_DENY);
	/* a unix address on an inet socket */
	ASSERT_EQ(net_decide_address(&f.ctx, NET_OP_CONNECT, AF_INET, SOCK_STREAM, &un, &d), 0);
	EXPECT_EQ(d.verdict, NET_VERDICT_DENY);
	/* AF_UNSPEC: connect disconnects (fine), sendto would be read as AF_INET (refused) */
	ASSERT_EQ(net_decide_address(&f.ctx, NET_OP_CONNECT, AF_INET, SOCK_DGRAM, &unspec, &d), 0);
	EXPECT_EQ(d.verdict, NET_VERDICT_ALLOW);
	ASSERT_EQ(net_decide_address(&f.ctx, NET_OP_SENDTO, AF_INET, SOCK_DGRAM, &unspec, &d), 0);
	EXPECT_EQ(d.verdict, NET_VERDICT_DENY);
	EXPECT_EQ(d.error, EAFNOSUPPORT);
	ASSERT_EQ(net_decide_address(&f.ctx, NET_OP_BIND, AF_INET, SOCK_DGRAM, &unspec, &d), 0);
	EXPECT_EQ(d.verdict, NET_VERDICT_DENY);
	/* bad arguments are the caller's bug */
	EXPECT_EQ(net_decide_address(&f.ctx, (NetOp) 9, AF_INET, SOCK_DGRAM, &a, &d), -EINVAL);
	EXPECT_EQ(net_decide_address(&f.ctx, NET_OP_BIND, AF_INET, SOCK_DGRAM, NULL, &d), -EINVAL);
	fixture_done(&f);
}

TEST(decide_sockaddr_bytes)
{
	struct sockaddr_in in = {.sin_family = AF_INET,
				 .sin_port = htons(80),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	Fixture f;
	NetDecision d;
	NetAddr a;

	fixture_init(&f, NET_MODE_LOOPBACK, NULL);
	ASSERT_EQ(net_decide_sockaddr(&f.ctx, NET_OP_CONNECT, AF_INET, SOCK_STREAM, &in, sizeof(in),
				      &a, &d),
		  0);
	EXPECT_EQ(d.verdict, NET_VERDICT_ALLOW);
	EXPECT_EQ(a.port, 80);
	ASSERT_EQ(net_decide_sockaddr(&f.ctx, NET_OP_CONNECT, AF_INET, SOCK_STREAM, &in,
				      sizeof(in) - 1, NULL, &d),
		  0);
	EXPECT_EQ(d.verdict, NET_VERDICT_DENY);
	EXPECT_EQ(d.error, EINVAL);
	EXPECT_STREQ(d.why, "malformed address");
	fixture_done(&f);
}

/* ---- names ---- */

TEST(name_normalize)
{
	char buf[256];

	ASSERT_EQ(net_name_normalize("API.Example.COM.", buf, sizeof(buf)), 0);
	EXPECT_STREQ(buf, "api.example.com");
	EXPECT_EQ(net_name_normalize("", buf, sizeof(buf)), -EINVAL);
	EXPECT_EQ(net_name_normalize(".", buf, sizeof(buf)), -EINVAL);
	EXPECT_EQ(net_name_normalize("a..b", buf, sizeof(buf)), -EINVAL);
	EXPECT_EQ(net_name_normalize(".a", buf, sizeof(buf)), -EINVAL);
	EXPECT_EQ(net_name_normalize("a.b..", buf, sizeof(buf)), -EINVAL);
	EXPECT_EQ(net_name_normalize("a b", buf, sizeof(buf)), -EINVAL);
	EXPECT_EQ(net_name_normalize("a\\.b", buf, sizeof(buf)), -EINVAL);
	EXPECT_EQ(net_name_normalize("example.com", buf, 5), -ENOBUFS);
	{
		char label[70], name[300];

		memset(label, 'a', 63);
		label[63] = '\0';
		snprintf(name, sizeof(name), "%s.com", label);
		EXPECT_EQ(net_name_normalize(name, buf, sizeof(buf)), 0);
		memset(label, 'a', 64);
		label[64] = '\0';
		snprintf(name, sizeof(name), "%s.com", label);
		EXPECT_EQ(net_name_normalize(name, buf, sizeof(buf)), -EINVAL);
		/* 253 characters is the longest name */
		memset(name, 'a', 253);
		for (int i = 50; i < 253; i += 50)
			name[i] = '.';
		name[253] = '\0';
		EXPECT_EQ(net_name_normalize(name, buf, sizeof(buf)), 0);
		name[253] = 'a';
		name[254] = '\0';
		EXPECT_EQ(net_name_normalize(name, buf, sizeof(buf)), -EINVAL);
	}
}

TEST(name_match)
{
	PolicyNetAllow host = test_allow("api.example.com:443"), dom = test_allow("*.example.com");
	PolicyNetAllow dotted = test_allow("*.Example.org.");

	EXPECT_TRUE(net_name_match(&host, "api.example.com"));
	EXPECT_TRUE(net_name_match(&host, "API.example.com"));
	EXPECT_FALSE(net_name_match(&host, "x.api.example.com"));
	EXPECT_FALSE(net_name_match(&host, "example.com"));
	EXPECT_TRUE(net_name_match(&dom, "a.example.com"));
	EXPECT_TRUE(net_name_match(&dom, "a.b.example.com"));
	EXPECT_FALSE(net_name_match(&dom, "example.com"));
	EXPECT_FALSE(net_name_match(&dom, "badexample.com"));
	EXPECT_FALSE(net_name_match(&dom, ".example.com"));
	EXPECT_FALSE(net_name_match(&dom, "example.com.evil.net"));
	EXPECT_TRUE(net_name_match(&dotted, "www.example.org"));
	EXPECT_EQ(host.port_lo, 443);
	free(host.text), free(host.name), free(dom.text), free(dom.name);
	free(dotted.text), free(dotted.name);
}

/* ---- learned set ---- */

static uint64_t fake_now;
static uint64_t fake_clock(void *userdata)
{
	(void) userdata;
	return __atomic_load_n(&fake_now, __ATOMIC_RELAXED);
}

static bool learned_allows(Fixture *f, const char *dest)
{
	return ip(f, NET_OP_CONNECT, SOCK_STREAM, dest).verdict == NET_VERDICT_ALLOW;
}

TEST(learned_host_and_domain_ttl)
{
	static const char *const entries[] = {"api.example.com:443", "*.cdn.net", NULL};
	const uint8_t a1[4] = {203, 0, 113, 5}, a2[4] = {203, 0, 113, 6};
	uint8_t a6[16];
	Fixture f;

	fixture_init(&f, NET_MODE_ALLOWLIST, entries);
	f.learned = net_learned_free(f.learned);
	f.ctx.learned = f.learned = net_learned_new(16, fake_clock, NULL);
	ASSERT_TRUE(f.learned);
	fake_now = 1000ULL * 1000000000ULL;

	EXPECT_FALSE(learned_allows(&f, "203.0.113.5:443"));
	ASSERT_EQ(net_learned_add(f.learned, "api.example.com", AF_INET, a1, 300), 0);
	EXPECT_TRUE(learned_allows(&f, "203.0.113.5:443"));
	EXPECT_TRUE(learned_allows(&f, "[::ffff:203.0.113.5]:443"));
	EXPECT_FALSE(learned_allows(&f, "203.0.113.5:80")); /* port of the entry */
	EXPECT_FALSE(learned_allows(&f, "203.0.113.6:443"));

	/* a name under the wildcard, any port */
	ASSERT_EQ(net_learned_add(f.learned, "img.cdn.net", AF_INET, a2, 60), 0);
	EXPECT_TRUE(learned_allows(&f, "203.0.113.6:80"));
	/* learned for a name no entry covers: no */
	inet_pton(AF_INET6, "2001:db8::77", a6);
	ASSERT_EQ(net_learned_add(f.learned, "other.org", AF_INET6, a6, 600), 0);
	EXPECT_FALSE(learned_allows(&f, "[2001:db8::77]:443"));
	EXPECT_EQ(net_learned_count(f.learned), 3);

	/* expiry: 60 s for a2, 300 s for a1 */
	fake_now += 60ULL * 1000000000ULL;
	EXPECT_FALSE(learned_allows(&f, "203.0.113.6:80"));
	EXPECT_TRUE(learned_allows(&f, "203.0.113.5:443"));
	/* a new answer extends it */
	ASSERT_EQ(net_learned_add(f.learned, "api.example.com", AF_INET, a1, 1000), 0);
	fake_now += 900ULL * 1000000000ULL;
	EXPECT_TRUE(learned_allows(&f, "203.0.113.5:443"));
	fake_now += 100ULL * 1000000000ULL;
	EXPECT_FALSE(learned_allows(&f, "203.0.113.5:443"));
	EXPECT_EQ(net_learned_count(f.learned), 0);

	/* TTL 0 still lasts NET_LEARNED_TTL_MIN */
	ASSERT_EQ(net_learned_add(f.learned, "api.example.com", AF_INET, a1, 0), 0);
	fake_now += (NET_LEARNED_TTL_MIN - 1) * 1000000000ULL;
	EXPECT_TRUE(learned_allows(&f, "203.0.113.5:443"));
	fake_now += 1000000000ULL;
	EXPECT_FALSE(learned_allows(&f, "203.0.113.5:443"));
	fixture_done(&f);
}

TEST(learned_refuses_local_addresses)
{
	_cleanup_(net_learned_freep) NetLearned *l = net_learned_new(4, NULL, NULL);
	static const char *const v4[] = {"127.0.0.1", "0.0.0.0", "169.254.169.254", "224.0.0.1",
					 "255.255.255.255"};
	static const char *const v6[] = {"::1",	     "::", "fe80::1", "ff02::1", "::ffff:1.2.3.4",
					 "::1.2.3.4"};
	uint8_t b[16];

	ASSERT_TRUE(l);
	for (size_t i = 0; i < ARRAY_SIZE(v4); i++) {
		inet_pton(AF_INET, v4[i], b);
		EXPECT_EQ(net_learned_add(l, "a.example", AF_INET, b, 60), -EADDRNOTAVAIL);
	}
	for (size_t i = 0; i < ARRAY_SIZE(v6); i++) {
		inet_pton(AF_INET6, v6[i], b);
		EXPECT_EQ(net_learned_add(l, "a.example", AF_INET6, b, 60), -EADDRNOTAVAIL);
	}
	inet_pton(AF_INET, "10.0.0.1", b);
	EXPECT_EQ(net_learned_add(l, "a.example", AF_INET, b, 60), 0);
	EXPECT_EQ(net_learned_add(l, "", AF_INET, b, 60), -EINVAL);
	EXPECT_EQ(net_learned_add(l, "a.example", AF_UNIX, b, 60), -EINVAL);
	EXPECT_EQ(net_learned_count(l), 1);
}

TEST(learned_bounded_eviction)
{
	PolicyNetAllow e = test_allow("*.example");
	_cleanup_(net_learned_freep) NetLearned *l = NULL;
	uint8_t b[4] = {10, 0, 0, 0};

	fake_now = 0;
	l = net_learned_new(8, fake_clock, NULL);
	ASSERT_TRUE(l);
	/* 100 distinct addresses with growing TTLs: only 8 stay, the longest-lived */
	for (int i = 0; i < 100; i++) {
		b[3] = (uint8_t) i;
		ASSERT_EQ(net_learned_add(l, "h.example", AF_INET, b, 100 + (uint32_t) i), 0);
		EXPECT_TRUE(net_learned_count(l) <= 8);
	}
	EXPECT_EQ(net_learned_count(l), 8);
	b[3] = 99;
	EXPECT_TRUE(net_learned_match(l, &e, AF_INET, b));
	b[3] = 92;
	EXPECT_TRUE(net_learned_match(l, &e, AF_INET, b));
	b[3] = 91;
	EXPECT_FALSE(net_learned_match(l, &e, AF_INET, b));
	/* expired entries are evicted before live ones */
	fake_now = 250ULL * 1000000000ULL; /* 92..99 expire at 192..199 s: all gone */
	b[3] = 200;
	ASSERT_EQ(net_learned_add(l, "h.example", AF_INET, b, 60), 0);
	EXPECT_EQ(net_learned_count(l), 1);
	free(e.text), free(e.name);
}

typedef struct ThreadArg {
	NetLearned *l;
	int id;
} ThreadArg;

static void *hammer(void *p)
{
	ThreadArg *t = p;
	PolicyNetAllow e = {.kind = NET_ALLOW_DOMAIN, .name = (char *) "example"};
	uint8_t b[4] = {10, (uint8_t) t->id, 0, 0};
	long hits = 0;

	for (int i = 0; i < 2000; i++) {
		b[2] = (uint8_t) (i >> 8);
		b[3] = (uint8_t) i;
		if (net_learned_add(t->l, "x.example", AF_INET, b, 600) < 0)
			return (void *) -1L;
		hits += net_learned_match(t->l, &e, AF_INET, b);
	}
	return (void *) hits;
}

TEST(learned_threads)
{
	_cleanup_(net_learned_freep) NetLearned *l = net_learned_new(256, NULL, NULL);
	pthread_t th[4];
	ThreadArg args[4];

	ASSERT_TRUE(l);
	for (int i = 0; i < 4; i++) {
		args[i] = (ThreadArg){l, i + 1};
		ASSERT_EQ(pthread_create(&th[i], NULL, hammer, &args[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		void *res;

		ASSERT_EQ(pthread_join(th[i], &res), 0);
		/* A thread's own address can be evicted by the others before it looks: most
		 * lookups still hit, none errs. */
		EXPECT_TRUE((long) res > 0);
	}
	EXPECT_EQ(net_learned_count(l), 256);
}

int main(void)
{
	return tap_run();
}
