/* SPDX-License-Identifier: MIT */
/*
 * The heavy budget cases (suite slow): a memory hog allocating 1 GiB in 100 MiB steps under
 * 256 MiB, 8 children of 64 MiB each under 256 MiB, and a recursive fork bomb under a tasks
 * budget, whose tree the test counts from outside while it runs.
 */
#include <stdbool.h>

#include "tests/integration/budget-run.h"
#include "tests/unit/tap.h"

static const char *hog(void)
{
	return sbx_env("SBX_HOG");
}

TEST(memory_hog_1gib_in_100mib_steps_is_stopped_under_256mib)
{
	const char *sets[] = {"limits.memory=256MiB", "limits.kill_grace=500ms",
			      "limits.wall_time=120s", NULL};
	const char *cmd[] = {hog(), "memhog", "100", "1024", NULL};
	BudgetRun r;

	ASSERT_TRUE(budget_setup() != NULL);
	budget_run(&r, sets, true, cmd);
	EXPECT_EQ(r.code, 137);
	EXPECT_TRUE(strstr(r.err, "memory limit of 256MiB reached") != NULL);
	/* it never got to the end: RLIMIT_DATA (512 MiB) stops one process even if the
	 * sampler were late, and the hog then waits to be killed */
	EXPECT_LT(last_value(&r, "allocated"), 1024);
	budget_cleanup();
}

TEST(eight_children_of_64mib_are_stopped_under_256mib)
{
	const char *sets[] = {"limits.memory=256MiB", "limits.kill_grace=500ms",
			      "limits.wall_time=120s", NULL};
	const char *cmd[] = {hog(), "multihog", "8", "64", NULL};
	BudgetRun r;

	ASSERT_TRUE(budget_setup() != NULL);
	budget_run(&r, sets, true, cmd);
	EXPECT_EQ(r.code, 137);
	EXPECT_TRUE(strstr(r.err, "memory limit of 256MiB reached") != NULL);
	budget_cleanup();
}

/* The bomb spends a bounded amount of work (fuel), so the run ends by itself; the test
 * counts the tree from outside while it runs (budget-run.h). */
static void run_bomb(BudgetRun *r, unsigned tasks, unsigned fuel)
{
	char lim[64], f[32];
	const char *sets[] = {lim, "limits.wall_time=240s", NULL};
	const char *cmd[] = {hog(), "forkbomb", f, NULL};

	snprintf(lim, sizeof(lim), "limits.tasks=%u", tasks);
	snprintf(f, sizeof(f), "%u", fuel);
	budget_run(r, sets, false, cmd);
	fprintf(stderr, "# fork bomb (fuel %u): exit %d, most tasks seen at once: %ld (limit %u)\n",
		fuel, r->code, r->max_tasks, tasks);
}

TEST(fork_bomb_is_contained_and_ends)
{
	BudgetRun r;

	ASSERT_TRUE(budget_setup() != NULL);
	run_bomb(&r, 24, 800);
	budget_cleanup();
	EXPECT_EQ(r.code, 0);
	EXPECT_TRUE(r.max_tasks > 0 && r.max_tasks <= 24);
}

/* Many exits while others fork: the case where counting through the children files lost
 * processes (docs/budgets.md, "tasks is exact"). */
TEST(fork_bomb_never_has_more_than_tasks_alive)
{
	static const unsigned limits[] = {12, 16, 24, 32};

	ASSERT_TRUE(budget_setup() != NULL);
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		BudgetRun r;

		run_bomb(&r, limits[i], 3000);
		EXPECT_EQ(r.code, 0);
		EXPECT_TRUE(r.max_tasks > 0);
		EXPECT_TRUE(r.max_tasks <= (long) limits[i]);
	}
	budget_cleanup();
}

int main(void)
{
	return tap_run();
}
