/* SPDX-License-Identifier: MIT */
/* The wall-clock limit ends the whole tree, a setsid()+double-forked daemon included. */
#include "tests/helpers/sbx-test.h"
#include "tests/unit/tap.h"

TEST(timeout_kills_double_forked_daemon)
{
	char *dir = sbx_tmpdir(), file[600];
	const char *opts[] = {"--wall", "700", "--grace", "200", NULL};
	const char *cmd[] = {sbx_probe(), "daemon", file, NULL};

	ASSERT_TRUE(dir != NULL);
	snprintf(file, sizeof(file), "%s/pids", dir);
	EXPECT_EQ(sbx_run(opts, cmd, NULL, NULL, 0), 124);
	/* the supervisor returns only after the tree is gone: no waiting needed */
	EXPECT_EQ(sbx_daemon_pids_alive(file), 0);
	rmdir(dir);
}

TEST(timeout_with_term_handler_still_ends)
{
	const char *opts[] = {"--wall", "300", "--grace", "200", NULL};
	const char *cmd[] = {"sh", "-c", "trap '' TERM; while :; do :; done", NULL};

	EXPECT_EQ(sbx_run(opts, cmd, NULL, NULL, 0), 124);
}

int main(void)
{
	return tap_run();
}
