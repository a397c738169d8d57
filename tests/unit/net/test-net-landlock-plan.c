/* SPDX-License-Identifier: MIT */
/* The Landlock plan of each network mode (net/landlock-plan.c). */
#include <errno.h>

#include "net/landlock-plan.h"
#include "tests/unit/net/net-test-util.h"
#include "tests/unit/tap.h"

static NetLandlockPlan plan(NetMode mode, const char *const *entries, char **unix_sockets)
{
	PolicyNetwork pn;
	NetLandlockPlan p = {};

	test_network(&pn, mode, entries);
	pn.unix_sockets = unix_sockets;
	if (net_landlock_plan(&pn, mode, &p) < 0)
		abort();
	test_network_done(&pn);
	return p;
}

TEST(modes)
{
	static const char *const narrow[] = {"10.0.0.0/8:443", "api.example.com:443",
					     "*.example.org:8000-8002", NULL};
	static const char *const wide[] = {"10.0.0.0/8:443", "192.0.2.0/24", NULL};
	NetLandlockPlan p;

	p = plan(NET_MODE_NONE, NULL, NULL);
	EXPECT_TRUE(p.restrict_connect);
	EXPECT_TRUE(p.restrict_bind);
	EXPECT_EQ(p.n_connect_ports, 0);
	EXPECT_TRUE(p.scope_abstract_unix);

	p = plan(NET_MODE_LOOPBACK, NULL, NULL);
	EXPECT_FALSE(p.restrict_connect);
	EXPECT_FALSE(p.restrict_bind);

	p = plan(NET_MODE_ALLOWLIST, narrow, NULL);
	EXPECT_TRUE(p.restrict_connect);
	EXPECT_FALSE(p.restrict_bind);
	ASSERT_EQ(p.n_connect_ports, 4); /* 443 once, 8000, 8001, 8002 */
	EXPECT_EQ(p.connect_ports[0], 443);
	EXPECT_EQ(p.connect_ports[3], 8002);

	/* an entry without ports allows every port: nothing to restrict */
	p = plan(NET_MODE_ALLOWLIST, wide, NULL);
	EXPECT_FALSE(p.restrict_connect);
	EXPECT_EQ(p.n_connect_ports, 0);

	p = plan(NET_MODE_FULL, narrow, NULL);
	EXPECT_FALSE(p.restrict_connect);
	EXPECT_FALSE(p.restrict_bind);
}

TEST(port_budget)
{
	static const char *const at_limit[] = {"10.0.0.1/32:1000-1063", NULL};
	static const char *const over[] = {"10.0.0.1/32:1000-1063", "10.0.0.2/32:2000", NULL};
	NetLandlockPlan p;

	p = plan(NET_MODE_ALLOWLIST, at_limit, NULL);
	EXPECT_TRUE(p.restrict_connect);
	EXPECT_EQ(p.n_connect_ports, NET_LANDLOCK_MAX_PORTS);
	p = plan(NET_MODE_ALLOWLIST, over, NULL);
	EXPECT_FALSE(p.restrict_connect);
	EXPECT_EQ(p.n_connect_ports, 0);
}

TEST(abstract_scope)
{
	char *none_listed[] = {"/run/x.sock", NULL};
	char *listed[] = {"/run/x.sock", "@dbus", NULL};

	EXPECT_TRUE(plan(NET_MODE_FULL, NULL, none_listed).scope_abstract_unix);
	EXPECT_FALSE(plan(NET_MODE_NONE, NULL, listed).scope_abstract_unix);
	{
		PolicyNetwork pn = {};
		NetLandlockPlan p;

		EXPECT_EQ(net_landlock_plan(&pn, (NetMode) 7, &p), -EINVAL);
	}
}

int main(void)
{
	return tap_run();
}
