/* SPDX-License-Identifier: MIT */
/* The wall-clock limit ends the whole tree, a setsid()+double-forked daemon included. */
#include "tests/helpers/sbx-test.h"
#include "tests/unit/tap.h"

TEST(timeout_kills_double_forked_daemon)
{
	char *dir = sbx_tmpdir(), file[600];
	const char *opts[] = {"--wall", "700", "--grace", "200", NULL};
	const char *cmd[] = {sbx_probe(), "daemon", file, NULL};
	int daemon_pid = 0, busy_pid = 0;
	FILE *f;

	ASSERT_TRUE(dir != NULL);
	snprintf(file, sizeof(file), "%s/pids", dir);
	EXPECT_EQ(sbx_run(opts, cmd, NULL, NULL, 0), 124);
	f = fopen(file, "re");
	ASSERT_TRUE(f != NULL);
	ASSERT_EQ(fscanf(f, "%d %d", &daemon_pid, &busy_pid), 2);
	fclose(f);
	/* the supervisor returns only after the tree is gone: no waiting needed */
	EXPECT_FALSE(sbx_alive(daemon_pid));
	EXPECT_FALSE(sbx_alive(busy_pid));
	unlink(file);
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
