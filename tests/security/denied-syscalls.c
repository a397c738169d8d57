/* SPDX-License-Identifier: MIT */
/* The denied set answers with the deny errno, a policy [syscalls] deny with its own errno,
 * clone3 with ENOSYS (so libc falls back to clone, whose flags the filter can see). */
#include "tests/helpers/sbx-test.h"
#include "tests/unit/tap.h"

static int probe_errno(const char *const *opts, const char *name, int want)
{
	char w[16];
	const char *cmd[] = {sbx_probe(), "errno", name, w, NULL};

	snprintf(w, sizeof(w), "%d", want);
	return sbx_run(opts, cmd, NULL, NULL, 0);
}

TEST(policy_deny_uses_its_errno)
{
	const char *opts[] = {"--deny", "getppid=EACCES", NULL};

	EXPECT_EQ(probe_errno(opts, "getppid", EACCES), 0);
}

TEST(policy_deny_of_uname_with_number)
{
	const char *opts[] = {"--deny", "uname=ENOTSUP", NULL};

	EXPECT_EQ(probe_errno(opts, "uname", ENOTSUP), 0);
}

TEST(ptrace_is_denied)
{
	EXPECT_EQ(probe_errno(NULL, "ptrace", EPERM), 0);
}

TEST(unshare_is_denied)
{
	EXPECT_EQ(probe_errno(NULL, "unshare", EPERM), 0);
}

TEST(clone3_is_enosys)
{
	EXPECT_EQ(probe_errno(NULL, "clone3", ENOSYS), 0);
}

TEST(policy_kill_kills_the_tree)
{
	const char *opts[] = {"--kill", "getppid", NULL};
	const char *cmd[] = {"sh", "-c", "sleep 30 & exec \"$0\" errno getppid 0", sbx_probe(),
			     NULL};

	EXPECT_EQ(probe_errno(opts, "getppid", 0), 128 + SIGKILL);
	/* the background sleep dies with it: the run ends at once, not after 30 s */
	EXPECT_EQ(sbx_run(opts, cmd, NULL, NULL, 0), 128 + SIGKILL);
}

int main(void)
{
	return tap_run();
}
