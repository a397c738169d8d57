/* SPDX-License-Identifier: MIT */
/* Threads making notified syscalls at once, fork/exec chains, many short-lived processes. */
#include "tests/helpers/sbx-test.h"
#include "tests/unit/tap.h"

TEST(sixteen_threads_get_correct_results)
{
	const char *cmd[] = {sbx_probe(), "threads", NULL};
	char pid[32];

	/* our own pid: outside the tree, so kill() of it must fail with EPERM */
	snprintf(pid, sizeof(pid), "%d", (int) getpid());
	setenv("SBX_OUTSIDE_PID", pid, 1);
	EXPECT_EQ(sbx_run(NULL, cmd, NULL, NULL, 0), 0);
}

TEST(fork_exec_chain_five_deep)
{
	const char *cmd[] = {sbx_probe(), "chain", "5", NULL};

	EXPECT_EQ(sbx_run(NULL, cmd, NULL, NULL, 0), 42);
}

TEST(thousand_short_lived_processes)
{
	const char *cmd[] = {sbx_probe(), "many", "1000", NULL};

	EXPECT_EQ(sbx_run(NULL, cmd, NULL, NULL, 0), 0);
}

TEST(shell_pipeline_and_background_job)
{
	const char *cmd[] = {"sh", "-c", "sleep 0.1 & printf 'a\\nb\\n' | wc -l; wait", NULL};
	char out[64];

	EXPECT_EQ(sbx_run(NULL, cmd, NULL, out, sizeof(out)), 0);
	EXPECT_EQ(atoi(out), 2);
}

int main(void)
{
	return tap_run();
}
