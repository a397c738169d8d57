/* SPDX-License-Identifier: MIT */
/* Glob matching over virtual paths and glob validation. */
#include "policy/internal.h"
#include "policy/policy.h"
#include "tests/unit/tap.h"

static const struct {
	const char *glob, *path;
	bool match;
} cases[] = {
	{"/workspace", "/workspace", true},
	{"/workspace", "/workspace/a", false},
	{"/workspace/*", "/workspace/a", true},
	{"/workspace/*", "/workspace/a/b", false},
	{"/workspace/*", "/workspace", false},
	{"/workspace/*.key", "/workspace/id.key", true},
	{"/workspace/*.key", "/workspace/.key", true},
	{"/workspace/*.key", "/workspace/id.keys", false},
	{"/workspace/**/*.key", "/workspace/id.key", true},
	{"/workspace/**/*.key", "/workspace/a/b/c/id.key", true},
	{"/workspace/**/*.key", "/other/a/id.key", false},
	{"/workspace/**", "/workspace/a", true},
	{"/workspace/**", "/workspace/a/b/c", true},
	{"/workspace/**", "/workspace", true},
	{"/**", "/etc/passwd", true},
	{"/**", "/", true},
	{"/workspace/**", "/workspaces", false},
	{"/a/**/**", "/a", true},
	{"/a/?.[ch]", "/a/x.h", true},
	{"/a/?.[!ch]", "/a/x.h", false},
	{"/a", "/ab", false},
	{"/a/**/c.txt", "/a/xc.txt", false},
	{"/**/.git/**", "/workspace/repo/.git/config", true},
	{"/**/.git/**", "/workspace/repo/.github/x", false},
	{"/a/**/b/**/c", "/a/b/c", true},
	{"/a/**/b/**/c", "/a/x/b/y/z/c", true},
	{"/a/**/b/**/c", "/a/x/y/z/c", false},
	{"/home/?ser", "/home/user", true},
	{"/home/?ser", "/home/ser", false},
	{"/dev/tty[0-9]", "/dev/tty3", true},
	{"/dev/tty[0-9]", "/dev/ttyS", false},
	{"/dev/tty[!0-9]", "/dev/ttyS", true},
	{"/dev/tty[^0-9]", "/dev/tty1", false},
	{"/x/[]a]", "/x/]", true},
	{"/x/\\*", "/x/*", true},
	{"/x/\\*", "/x/y", false},
	{"/usr/bin/*", "/usr/bin/python3", true},
	{"/usr/bin/*", "/usr/bin/", false},
	{"/", "/", true},
	{"/a//b", "/a/b", true},
	{"/a/*b*c*", "/a/xxbyyczz", true},
	{"/a/*b*c*", "/a/xxcyybzz", false},
	{"relative/*", "/relative/x", false},
};

TEST(match_table)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool m = policy_glob_match(cases[i].glob, cases[i].path);
		if (m != cases[i].match)
			TAP_FAIL_(0, "glob '%s' path '%s': got %d", cases[i].glob, cases[i].path,
				  m);
	}
}

TEST(pathological_is_fast)
{
	/* 40 "**" components against a deep non-matching path: the greedy matcher answers
	 * without exponential back-tracking (a hang here is the failure) */
	char glob[512] = "", path[4096] = "";

	for (int i = 0; i < 40; i++)
		strcat(glob, "/**/a");
	strcat(glob, "/zzz");
	for (int i = 0; i < 400; i++)
		strcat(path, "/a");
	EXPECT_FALSE(policy_glob_match(glob, path));
}

TEST(check)
{
	EXPECT_TRUE(policy_glob_check("/workspace/**/*.key") == NULL);
	EXPECT_TRUE(policy_glob_check("/dev/tty[0-9]") == NULL);
	EXPECT_TRUE(policy_glob_check("/x/[]]") == NULL);
	EXPECT_TRUE(policy_glob_check("workspace/*") != NULL);
	EXPECT_TRUE(policy_glob_check("/dev/tty[0-9") != NULL);
	EXPECT_TRUE(policy_glob_check("/a/b**") != NULL);
	EXPECT_TRUE(policy_glob_check("/a/**b/c") != NULL);
	EXPECT_TRUE(policy_glob_check("/a/b\\") != NULL);
	EXPECT_TRUE(policy_glob_check("/a/[x/y]") != NULL);
}

int main(void)
{
	return tap_run();
}
