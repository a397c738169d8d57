/* SPDX-License-Identifier: MIT */
/*
 * Decisions on a [network] section as the real policy loader parses it (policy/net.c), so the
 * matcher and the parser agree on names, ports, IPv6 brackets and the ratchet table.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/allow.h"
#include "net/dns.h"
#include "net/ratchet.h"
#include "policy/policy.h"
#include "tests/unit/net/net-test-util.h"
#include "tests/unit/tap.h"

static const char policy_text[] =
	"[network]\n"
	"mode = \"allowlist\"\n"
	"allow = [\"127.0.0.2:8000-8010\", \"[::1]/128:443\", \"API.Example.com:443\",\n"
	"         \"*.example.org\", \"10.0.0.0/8\", \"[2001:db8::]/32:53\"]\n"
	"unix = [\"@dbus-test\", \"/run/app.sock\"]\n"
	"ratchet = { confidential = \"loopback\", secret = \"none\" }\n"
	"connect_errno = \"ENETUNREACH\"\n";

static Policy *load(void)
{
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX], path[PATH_MAX + 32];
	PolicyVars vars = {};
	PolicyError err;
	Policy *p = NULL;
	FILE *f;
	int k;

	snprintf(dir, sizeof(dir), "%s/sbx-net-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return NULL;
	snprintf(path, sizeof(path), "%s/net.toml", dir);
	f = fopen(path, "we");
	if (!f)
		return NULL;
	fputs(policy_text, f);
	fclose(f);
	k = policy_load(path, &vars, NULL, &p, &err);
	if (k < 0) {
		char buf[1024];

		printf("# %s\n", policy_error_format(&err, buf, sizeof(buf)));
	}
	(void) unlink(path);
	(void) rmdir(dir);
	return k < 0 ? NULL : p;
}

static NetVerdict verdict(const NetContext *ctx, NetOp op, int type, const char *dest, int *error)
{
	NetAddr a = test_ip(dest);
	NetDecision d;

	if (net_decide_address(ctx, op, a.family, type, &a, &d) < 0)
		return _NET_VERDICT_INVALID;
	if (error)
		*error = d.error;
	return d.verdict;
}

TEST(loaded_policy_decisions)
{
	_cleanup_(policy_freep) Policy *p = load();
	_cleanup_(net_learned_freep) NetLearned *l = net_learned_new(0, NULL, NULL);
	const uint8_t api[4] = {192, 0, 2, 10}, cdn[4] = {192, 0, 2, 20};
	int error = 0;

	ASSERT_TRUE(p);
	ASSERT_TRUE(l);
	const PolicyNetwork *pn = &p->network;
	NetContext ctx = {.policy = pn, .mode = pn->mode, .learned = l};

	ASSERT_EQ(pn->mode, NET_MODE_ALLOWLIST);
	ASSERT_EQ(pn->n_allow, 6);

	EXPECT_EQ(verdict(&ctx, NET_OP_CONNECT, SOCK_STREAM, "127.0.0.2:8000", NULL),
		  NET_VERDICT_ALLOW);
	EXPECT_EQ(verdict(&ctx, NET_OP_CONNECT, SOCK_STREAM, "[::ffff:127.0.0.2]:8010", NULL),
		  NET_VERDICT_ALLOW);
	EXPECT_EQ(verdict(&ctx, NET_OP_CONNECT, SOCK_STREAM, "127.0.0.2:8011", &error),
		  NET_VERDICT_DENY);
	EXPECT_EQ(error, ENETUNREACH);
	EXPECT_EQ(verdict(&ctx, NET_OP_CONNECT, SOCK_STREAM, "127.0.0.3:8000", NULL),
		  NET_VERDICT_DENY);
	EXPECT_EQ(verdict(&ctx, NET_OP_CONNECT, SOCK_STREAM, "[::1]:443", NULL), NET_VERDICT_ALLOW);
	EXPECT_EQ(verdict(&ctx, NET_OP_CONNECT, SOCK_STREAM, "[::1]:444", NULL), NET_VERDICT_DENY);
	EXPECT_EQ(verdict(&ctx, NET_OP_SENDTO, SOCK_DGRAM, "10.200.0.1:9", NULL),
		  NET_VERDICT_ALLOW);
	EXPECT_EQ(verdict(&ctx, NET_OP_SENDTO, SOCK_DGRAM, "[2001:db8:5::1]:53", NULL),
		  NET_VERDICT_ALLOW);
	EXPECT_EQ(verdict(&ctx, NET_OP_SENDTO, SOCK_DGRAM, "[2001:db9::1]:53", NULL),
		  NET_VERDICT_DENY);

	/* names: the parser lower-cased "API.Example.com" and dropped the "*." */
	EXPECT_TRUE(net_name_allowed(pn, "api.example.com"));
	EXPECT_TRUE(net_name_allowed(pn, "files.example.org"));
	EXPECT_FALSE(net_name_allowed(pn, "example.org"));
	EXPECT_EQ(verdict(&ctx, NET_OP_CONNECT, SOCK_STREAM, "192.0.2.10:443", NULL),
		  NET_VERDICT_DENY);
	ASSERT_EQ(net_learned_add(l, "api.example.com", AF_INET, api, 60), 0);
	ASSERT_EQ(net_learned_add(l, "files.example.org", AF_INET, cdn, 60), 0);
	EXPECT_EQ(verdict(&ctx, NET_OP_CONNECT, SOCK_STREAM, "192.0.2.10:443", NULL),
		  NET_VERDICT_ALLOW);
	EXPECT_EQ(verdict(&ctx, NET_OP_CONNECT, SOCK_STREAM, "192.0.2.10:80", NULL),
		  NET_VERDICT_DENY);
	EXPECT_EQ(verdict(&ctx, NET_OP_CONNECT, SOCK_STREAM, "192.0.2.20:1234", NULL),
		  NET_VERDICT_ALLOW);

	/* unix: the listed abstract name only */
	EXPECT_TRUE(net_unix_abstract_listed(pn, "dbus-test", 9));
	EXPECT_FALSE(net_unix_abstract_listed(pn, "dbus", 4));
	EXPECT_TRUE(net_unix_path_listed(pn, "/run/app.sock"));
}

TEST(loaded_policy_ratchet)
{
	_cleanup_(policy_freep) Policy *p = load();
	NetRatchet r;
	NetMode old, new;

	ASSERT_TRUE(p);
	ASSERT_EQ(net_ratchet_init(&r, p->network.mode), 0);
	EXPECT_EQ(net_ratchet_open(&r, &p->network, SENSITIVITY_INTERNAL, &old, &new), 0);
	EXPECT_EQ(net_ratchet_open(&r, &p->network, SENSITIVITY_CONFIDENTIAL, &old, &new), 1);
	EXPECT_EQ(old, NET_MODE_ALLOWLIST);
	EXPECT_EQ(new, NET_MODE_LOOPBACK);
	EXPECT_EQ(net_ratchet_open(&r, &p->network, SENSITIVITY_SECRET, &old, &new), 1);
	EXPECT_EQ(new, NET_MODE_NONE);
	net_ratchet_done(&r);
}

int main(void)
{
	return tap_run();
}
