/* SPDX-License-Identifier: MIT */
/* The sensitivity ratchet (net/ratchet.c): the mode only goes down. */
#include <errno.h>
#include <pthread.h>

#include "net/ratchet.h"
#include "tests/unit/tap.h"

/* One allow entry: the allowlist these tests drop to is not empty. */
static PolicyNetAllow one_entry = {.text = (char *) "10.0.0.0/8", .kind = NET_ALLOW_CIDR};

static PolicyNetwork mapped(int internal, int confidential, int secret)
{
	PolicyNetwork pn = {.mode = NET_MODE_FULL, .allow = &one_entry, .n_allow = 1};
	int v[_SENSITIVITY_MAX] = {-1, internal, confidential, secret};

	for (Sensitivity s = SENSITIVITY_INTERNAL; s < _SENSITIVITY_MAX; s++)
		if (v[s] >= 0) {
			pn.ratchet[s] = (NetMode) v[s];
			pn.has_ratchet[s] = true;
		}
	return pn;
}

TEST(drops_and_never_rises)
{
	PolicyNetwork pn = mapped(-1, NET_MODE_ALLOWLIST, NET_MODE_NONE);
	NetRatchet r;
	NetMode old = _NET_MODE_INVALID, new = _NET_MODE_INVALID;

	ASSERT_EQ(net_ratchet_init(&r, NET_MODE_FULL), 0);
	/* unmapped levels change nothing */
	EXPECT_EQ(net_ratchet_open(&r, &pn, SENSITIVITY_NONE, &old, &new), 0);
	EXPECT_EQ(net_ratchet_open(&r, &pn, SENSITIVITY_INTERNAL, &old, &new), 0);
	EXPECT_EQ(net_ratchet_mode(&r), NET_MODE_FULL);
	EXPECT_EQ(net_ratchet_max(&r), SENSITIVITY_INTERNAL);

	EXPECT_EQ(net_ratchet_open(&r, &pn, SENSITIVITY_CONFIDENTIAL, &old, &new), 1);
	EXPECT_EQ(old, NET_MODE_FULL);
	EXPECT_EQ(new, NET_MODE_ALLOWLIST);
	/* again: no second drop */
	EXPECT_EQ(net_ratchet_open(&r, &pn, SENSITIVITY_CONFIDENTIAL, NULL, NULL), 0);
	EXPECT_EQ(net_ratchet_open(&r, &pn, SENSITIVITY_SECRET, &old, &new), 1);
	EXPECT_EQ(old, NET_MODE_ALLOWLIST);
	EXPECT_EQ(new, NET_MODE_NONE);
	/* lower levels afterwards do not raise it */
	for (Sensitivity s = SENSITIVITY_NONE; s < _SENSITIVITY_MAX; s++) {
		EXPECT_EQ(net_ratchet_open(&r, &pn, s, NULL, NULL), 0);
		EXPECT_EQ(net_ratchet_mode(&r), NET_MODE_NONE);
	}
	EXPECT_EQ(net_ratchet_max(&r), SENSITIVITY_SECRET);
	EXPECT_EQ(net_ratchet_open(&r, &pn, (Sensitivity) 9, NULL, NULL), -EINVAL);
	net_ratchet_done(&r);
}

TEST(mapping_above_current_mode_is_ignored)
{
	/* the policy starts in loopback; confidential maps to allowlist, which is higher */
	PolicyNetwork pn = mapped(-1, NET_MODE_ALLOWLIST, -1);
	NetRatchet r;

	ASSERT_EQ(net_ratchet_init(&r, NET_MODE_LOOPBACK), 0);
	EXPECT_EQ(net_ratchet_open(&r, &pn, SENSITIVITY_CONFIDENTIAL, NULL, NULL), 0);
	EXPECT_EQ(net_ratchet_mode(&r), NET_MODE_LOOPBACK);
	net_ratchet_done(&r);
}

TEST(allowlist_without_entries_is_none)
{
	/* issue 21: confidential = "allowlist" where the policy allows nothing reaches nothing */
	PolicyNetwork pn = mapped(-1, NET_MODE_ALLOWLIST, -1);
	NetRatchet r;
	NetMode new;

	pn.allow = NULL;
	pn.n_allow = 0;
	EXPECT_EQ(net_ratchet_target(&pn, SENSITIVITY_CONFIDENTIAL), NET_MODE_NONE);
	EXPECT_EQ(net_ratchet_target(&pn, SENSITIVITY_SECRET), NET_MODE_NONE);
	/* so a loopback run drops to none */
	ASSERT_EQ(net_ratchet_init(&r, NET_MODE_LOOPBACK), 0);
	EXPECT_EQ(net_ratchet_open(&r, &pn, SENSITIVITY_CONFIDENTIAL, NULL, &new), 1);
	EXPECT_EQ(new, NET_MODE_NONE);
	net_ratchet_done(&r);
}

TEST(higher_level_inherits_stricter_mapping)
{
	PolicyNetwork pn = mapped(NET_MODE_LOOPBACK, NET_MODE_ALLOWLIST, -1);
	NetRatchet r;
	NetMode new;

	/* secret is unmapped: it drops at least as far as internal (the strictest below) */
	EXPECT_EQ(net_ratchet_target(&pn, SENSITIVITY_SECRET), NET_MODE_LOOPBACK);
	EXPECT_EQ(net_ratchet_target(&pn, SENSITIVITY_CONFIDENTIAL), NET_MODE_LOOPBACK);
	EXPECT_EQ(net_ratchet_target(&pn, SENSITIVITY_NONE), -ENOENT);
	ASSERT_EQ(net_ratchet_init(&r, NET_MODE_FULL), 0);
	EXPECT_EQ(net_ratchet_open(&r, &pn, SENSITIVITY_SECRET, NULL, &new), 1);
	EXPECT_EQ(new, NET_MODE_LOOPBACK);
	net_ratchet_done(&r);
}

typedef struct Race {
	NetRatchet *r;
	const PolicyNetwork *pn;
	int drops;
} Race;

static void *opener(void *p)
{
	Race *race = p;

	for (int i = 0; i < 1000; i++) {
		Sensitivity s = (Sensitivity) (i % _SENSITIVITY_MAX);
		int k = net_ratchet_open(race->r, race->pn, s, NULL, NULL);

		if (k < 0)
			return (void *) 1;
		race->drops += k;
	}
	return NULL;
}

TEST(racing_openers_see_each_drop_once)
{
	PolicyNetwork pn = mapped(NET_MODE_ALLOWLIST, NET_MODE_LOOPBACK, NET_MODE_NONE);
	NetRatchet r;
	Race races[4];
	pthread_t th[4];
	int drops = 0;

	ASSERT_EQ(net_ratchet_init(&r, NET_MODE_FULL), 0);
	for (int i = 0; i < 4; i++) {
		races[i] = (Race){&r, &pn, 0};
		ASSERT_EQ(pthread_create(&th[i], NULL, opener, &races[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		void *res;

		ASSERT_EQ(pthread_join(th[i], &res), 0);
		EXPECT_TRUE(res == NULL);
		drops += races[i].drops;
	}
	/* At most one drop per step down (full→allowlist→loopback→none), and the end is none. */
	EXPECT_TRUE(drops >= 1 && drops <= 3);
	EXPECT_EQ(net_ratchet_mode(&r), NET_MODE_NONE);
	net_ratchet_done(&r);
}

int main(void)
{
	return tap_run();
}
