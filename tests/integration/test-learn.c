/* SPDX-License-Identifier: MIT */
/*
 * sbxtrace learn (docs/learn.md), as root and as a plain user: learn a policy from a shell
 * command that reads a file in the workspace, writes another and runs /bin/true, from the
 * standard preset; then the same command under the learned policy does the same, the learned
 * policy passes `check`, and what the run never did is refused: a program it did not run
 * (id), a file of a mount it never used (/etc/ssl, shown by standard), a write to a scratch
 * mount it never used (/tmp). An unwritable -o fails before the command runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/tap.h"

static char ws[4096], learned[4096 + 32], marker[4096 + 32];
static const char *sbxtrace;

#define SCRIPT "cat /workspace/input.txt > /workspace/out.txt && /bin/true"

static int run(const char *const *argv)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, STDOUT_FILENO);
		execv(argv[0], (char *const *) argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static bool read_text(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, size - 1, f);
	buf[n] = 0;
	fclose(f);
	return true;
}

static int under(const char *policy, const char *script)
{
	const char *argv[] = {sbxtrace, "run", "-q", "-w", ws, policy, "--", "sh", "-c", script, NULL};

	return run(argv);
}

TEST(learn_writes_a_policy_that_check_accepts)
{
	const char *argv[] = {sbxtrace, "learn", "-q", "-o", learned, "--from", "standard", "-w", ws,
			      "--", "sh", "-c", SCRIPT, NULL};
	const char *check[] = {sbxtrace, "check", "-q", "-w", ws, learned, NULL};
	char text[8192];

	ASSERT_EQ(run(argv), 0);
	ASSERT_TRUE(read_text(learned, text, sizeof(text)));
	EXPECT_TRUE(strstr(text, "path = \"/workspace\"") != NULL);
	EXPECT_TRUE(strstr(text, "source = \"${WORKSPACE}\"") != NULL);
	EXPECT_TRUE(strstr(text, "\"/usr/bin/cat\"") != NULL);
	EXPECT_TRUE(strstr(text, "mode = \"none\"") != NULL);
	/* standard shows /etc/ssl and a tmp /tmp; the run used neither */
	EXPECT_TRUE(strstr(text, "/etc/ssl") == NULL);
	EXPECT_TRUE(strstr(text, "path = \"/tmp\"") == NULL);
	EXPECT_EQ(run(check), 0);
}

TEST(the_same_command_succeeds_under_the_learned_policy)
{
	char out[64] = "";

	(void) unlink(marker);
	EXPECT_EQ(under(learned, SCRIPT), 0);
	EXPECT_TRUE(read_text(marker, out, sizeof(out)));
	EXPECT_STREQ(out, "learned input\n");
}

TEST(what_it_never_did_is_refused)
{
	struct stat st;

	/* a program it did not run */
	EXPECT_NE(under(learned, "id"), 0);
	EXPECT_EQ(under("standard", "id"), 0);
	/* a mount it never used (standard shows /etc/ssl) */
	if (stat("/etc/ssl/openssl.cnf", &st) == 0) {
		EXPECT_NE(under(learned, "cat /etc/ssl/openssl.cnf"), 0);
		EXPECT_EQ(under("standard", "cat /etc/ssl/openssl.cnf"), 0);
	}
	/* a scratch mount it never used (standard's tmp /tmp) */
	EXPECT_NE(under(learned, "cat /workspace/input.txt > /tmp/x"), 0);
	EXPECT_EQ(under("standard", "cat /workspace/input.txt > /tmp/x"), 0);
}

TEST(an_unwritable_output_fails_before_the_command_runs)
{
	char flag[4096 + 32];
	char script[8192];
	const char *argv[] = {sbxtrace, "learn", "-q", "-o", "/nonexistent-dir/p.toml", "--from",
			      "standard", "-w", ws, "--", "sh", "-c", script, NULL};
	struct stat st;

	snprintf(flag, sizeof(flag), "%s/ran", ws);
	snprintf(script, sizeof(script), "echo > /workspace/ran");
	(void) unlink(flag);
	EXPECT_EQ(run(argv), 125);
	EXPECT_TRUE(stat(flag, &st) < 0 && errno == ENOENT);
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	char input[4096 + 32];
	FILE *f;

	sbxtrace = getenv("SBXTRACE");
	if (!sbxtrace || !*sbxtrace) {
		printf("1..0 # SKIP SBXTRACE not set (run through meson)\n");
		return 0;
	}
	snprintf(ws, sizeof(ws), "%s/sbxlearn-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(ws))
		return 1;
	(void) chmod(ws, 0755);
	snprintf(learned, sizeof(learned), "%s.toml", ws);
	snprintf(marker, sizeof(marker), "%s/out.txt", ws);
	snprintf(input, sizeof(input), "%s/input.txt", ws);
	f = fopen(input, "w");
	if (!f)
		return 1;
	fputs("learned input\n", f);
	fclose(f);
	{
		int r = tap_run();
		char cmd[8300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", ws, learned);
		(void) !system(cmd);
		return r;
	}
}
