/* SPDX-License-Identifier: MIT */
/* Exit codes, signals, exec failures, stdin/stdout passthrough and the --json result. */
#include <jansson.h>

#include "tests/helpers/sbx-test.h"
#include "tests/unit/tap.h"

TEST(exit_code_passes_through)
{
	const char *cmd[] = {sbx_probe(), "exit", "3", NULL};

	EXPECT_EQ(sbx_run(NULL, cmd, NULL, NULL, 0), 3);
}

TEST(sigkill_is_137)
{
	const char *cmd[] = {sbx_probe(), "signal", "9", NULL};

	EXPECT_EQ(sbx_run(NULL, cmd, NULL, NULL, 0), 137);
}

TEST(sigsegv_is_139)
{
	const char *cmd[] = {sbx_probe(), "signal", "11", NULL};

	EXPECT_EQ(sbx_run(NULL, cmd, NULL, NULL, 0), 139);
}

TEST(not_found_is_127)
{
	const char *cmd[] = {"sbxtrace-no-such-command-anywhere", NULL};

	/* execvp reports EACCES if any PATH entry is unreadable to us: use readable ones */
	setenv("PATH", "/usr/local/bin:/usr/bin:/bin", 1);
	EXPECT_EQ(sbx_run(NULL, cmd, NULL, NULL, 0), 127);
}

TEST(not_executable_is_126)
{
	char *dir = sbx_tmpdir(), path[600];
	const char *cmd[] = {path, NULL};
	int fd;

	ASSERT_TRUE(dir != NULL);
	snprintf(path, sizeof(path), "%s/plain", dir);
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	ASSERT_GE(fd, 0);
	close(fd);
	EXPECT_EQ(sbx_run(NULL, cmd, NULL, NULL, 0), 126);
	unlink(path);
	rmdir(dir);
}

TEST(stdin_and_stdout_stream_through)
{
	const char *cmd[] = {"cat", NULL};
	char out[256];

	EXPECT_EQ(sbx_run(NULL, cmd, "line one\nline two\n", out, sizeof(out)), 0);
	EXPECT_EQ(strcmp(out, "line one\nline two\n"), 0);
}

TEST(json_result)
{
	const char *opts[] = {"--json", NULL};
	const char *cmd[] = {"sh", "-c", "echo out; echo err >&2; exit 2", NULL};
	char out[4096];
	json_error_t e;
	json_t *j;

	EXPECT_EQ(sbx_run(opts, cmd, NULL, out, sizeof(out)), 2);
	j = json_loads(out, 0, &e);
	ASSERT_TRUE(j != NULL);
	EXPECT_EQ(strcmp(json_string_value(json_object_get(j, "stdout")), "out\n"), 0);
	EXPECT_EQ(strcmp(json_string_value(json_object_get(j, "stderr")), "err\n"), 0);
	EXPECT_EQ(json_integer_value(json_object_get(j, "exit_code")), 2);
	EXPECT_TRUE(json_is_null(json_object_get(j, "signal")));
	EXPECT_TRUE(json_is_false(json_object_get(j, "timed_out")));
	EXPECT_TRUE(json_is_false(json_object_get(j, "truncated")));
	EXPECT_TRUE(json_is_integer(json_object_get(j, "duration_ms")));
	EXPECT_TRUE(json_is_object(json_object_get(j, "limits")));
	json_decref(j);
}

/* Issue 21: the result names the view and the layers in effect. */
TEST(json_names_the_view_and_the_layers)
{
	const char *opts[] = {"--json", NULL};
	const char *cmd[] = {"true", NULL};
	json_t *j, *layers, *abi;
	const char *view;
	char out[4096];
	json_error_t e;

	EXPECT_EQ(sbx_run(opts, cmd, NULL, out, sizeof(out)), 0);
	j = json_loads(out, 0, &e);
	ASSERT_TRUE(j != NULL);
	view = json_string_value(json_object_get(j, "view"));
	ASSERT_TRUE(view != NULL);
	layers = json_object_get(j, "layers");
	ASSERT_TRUE(json_is_object(layers));
	abi = json_object_get(layers, "landlock_abi");
	EXPECT_TRUE(json_is_null(abi) || json_integer_value(abi) >= 1);
	EXPECT_TRUE(json_is_boolean(json_object_get(layers, "user_namespace")));
	EXPECT_TRUE(json_is_boolean(json_object_get(layers, "ptrace")));
	if (strcmp(view, "kernel") == 0) {
		/* the kernel view is a mount namespace in a user namespace, on Landlock */
		EXPECT_TRUE(json_is_null(json_object_get(j, "view_reason")));
		EXPECT_TRUE(json_is_true(json_object_get(layers, "user_namespace")));
		EXPECT_TRUE(json_integer_value(abi) >= 1);
	} else {
		EXPECT_STREQ(view, "emulated");
		EXPECT_TRUE(json_string_value(json_object_get(j, "view_reason")) != NULL);
	}
	json_decref(j);
}

TEST(json_not_found_in_path_is_no_denial)
{
	/* the shell's PATH search meets ENOENT in every directory: the host saying "no such
	 * file" is not the policy refusing, and must not count as a denial */
	const char *opts[] = {"--json", NULL};
	const char *cmd[] = {"sh", "-c", "sbx-no-such-command-here 2>/dev/null; exit 3", NULL};
	char out[4096];
	json_error_t e;
	json_t *j;

	EXPECT_EQ(sbx_run(opts, cmd, NULL, out, sizeof(out)), 3);
	j = json_loads(out, 0, &e);
	ASSERT_TRUE(j != NULL);
	EXPECT_EQ(json_integer_value(json_object_get(j, "denied")), 0);
	json_decref(j);
}

TEST(json_output_is_cut_at_the_limit)
{
	const char *opts[] = {"--json", "--output", "10", NULL};
	const char *cmd[] = {"sh", "-c", "echo 0123456789abcdef; kill -USR1 $$", NULL};
	char out[4096];
	json_error_t e;
	json_t *j;

	EXPECT_EQ(sbx_run(opts, cmd, NULL, out, sizeof(out)), 128 + SIGUSR1);
	j = json_loads(out, 0, &e);
	ASSERT_TRUE(j != NULL);
	/* the first 10 bytes, then the marker of docs/budgets.md */
	EXPECT_EQ(strcmp(json_string_value(json_object_get(j, "stdout")),
			 "0123456789[sbxtrace: output truncated at 10 bytes]\n"),
		  0);
	EXPECT_TRUE(json_is_true(json_object_get(j, "truncated")));
	EXPECT_EQ(strcmp(json_string_value(json_object_get(j, "signal")), "SIGUSR1"), 0);
	json_decref(j);
}

int main(void)
{
	return tap_run();
}
