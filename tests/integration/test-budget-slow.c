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

static BudgetRun bomb;
static bool bomb_ran;

/* The bomb spends a bounded amount of work, so the run ends by itself. */
static void run_bomb(void)
{
	const char *sets[] = {"limits.tasks=24", "limits.wall_time=240s", NULL};
	const char *cmd[] = {hog(), "forkbomb", "800", NULL};

	if (bomb_ran)
		return;
	bomb_ran = true;
	if (!budget_setup())
		return;
	budget_run(&bomb, sets, false, cmd);
	fprintf(stderr, "# fork bomb: exit %d, most tasks seen at once: %ld (limit 24)\n",
		bomb.code, bomb.max_tasks);
	budget_cleanup();
}

TEST(fork_bomb_is_contained_and_ends)
{
	run_bomb();
	ASSERT_TRUE(bomb_ran);
	EXPECT_EQ(bomb.code, 0);
	/* contained: far below what an unbounded bomb reaches, and a margin of 2 at most */
	EXPECT_TRUE(bomb.max_tasks > 0 && bomb.max_tasks <= 24 + 2);
}

TEST(fork_bomb_never_has_more_than_tasks_alive)
{
	/* Known defect (docs/budgets.md "Known defect"): under a fork bomb with exits the tree
	 * reaches tasks+1, sometimes +2; the cause is not found yet. */
	TAP_TODO("tasks budget overshoot by 1-2 under a fork bomb, docs/budgets.md");
	run_bomb();
	ASSERT_TRUE(bomb_ran);
	EXPECT_TRUE(bomb.max_tasks <= 24);
}

int main(void)
{
	return tap_run();
}
