/* SPDX-License-Identifier: MIT */
/*
 * Issue 21, item 1: ${WORKSPACE} is the current directory unless -w says otherwise, for run,
 * check and learn; the implied workspace is said once on stderr (not with -q, not under
 * --json); /, the home directory ($HOME and the passwd entry's) and the system directories
 * are refused as a workspace, given with -w or implied, also through a symlink, with exit
 * status 125 (check: 1) and a message naming the directory, -w DIR and
 * --workspace-anywhere; --workspace-anywhere lifts the refusal; a policy that does not use
 * ${WORKSPACE} runs from anywhere. As root and as a plain user.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/tap.h"

static const char *sbxtrace, *minimal;
static char scratch[512], ws[600], home[600], outf[600], errf[600];
static char out[65536], err[65536];

static void slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	buf[n > 0 ? n : 0] = 0;
	if (fd >= 0)
		close(fd);
}

/* Runs sbxtrace with args in directory cwd, $HOME set to home_env (NULL: the test's own),
 * stdin from /dev/null; stdout and stderr land in out and err. Returns the exit status. */
static int cli(const char *cwd, const char *home_env, const char *const *args)
{
	const char *argv[32];
	size_t n = 0;
	int status;
	pid_t pid;

	argv[n++] = sbxtrace;
	for (; *args && n < 31; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
		int o = open(outf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int e = open(errf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (in < 0 || o < 0 || e < 0 || chdir(cwd) < 0)
			_exit(98);
		if (home_env)
			setenv("HOME", home_env, 1);
		dup2(in, 0);
		dup2(o, 1);
		dup2(e, 2);
		execv(argv[0], (char *const *) argv);
		_exit(99);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	slurp(outf, out, sizeof(out));
	slurp(errf, err, sizeof(err));
	if (!WIFEXITED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static unsigned count(const char *hay, const char *needle)
{
	unsigned n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The refusal names the directory and both ways out. */
static bool refusal_says(const char *dir)
{
	char quoted[700];

	snprintf(quoted, sizeof(quoted), "'%s'", dir);
	return strstr(err, "refusing") && strstr(err, quoted) && strstr(err, "-w DIR") &&
	       strstr(err, "--workspace-anywhere");
}

TEST(run_uses_the_current_directory)
{
	const char *args[] = {"run", "standard", "--", "sh", "-c", "cat /workspace/marker", NULL};
	char note[700];

	EXPECT_EQ(cli(ws, NULL, args), 0);
	EXPECT_STREQ(out, "in the workspace\n");
	snprintf(note, sizeof(note), "workspace: %s (the current directory", ws);
	EXPECT_EQ(count(err, note), 1);
}

TEST(the_note_is_not_given_under_json_or_quiet)
{
	const char *json[] = {"run", "--json", "standard", "--", "true", NULL};
	const char *quiet[] = {"run", "-q", "standard", "--", "true", NULL};
	const char *check_q[] = {"check", "-q", "standard", NULL};

	EXPECT_EQ(cli(ws, NULL, json), 0);
	EXPECT_TRUE(strstr(out, "\"exit_code\":0") != NULL);
	EXPECT_TRUE(strstr(err, "workspace:") == NULL);
	EXPECT_EQ(cli(ws, NULL, quiet), 0);
	EXPECT_TRUE(strstr(err, "workspace:") == NULL);
	EXPECT_EQ(cli(ws, NULL, check_q), 0);
	EXPECT_STREQ(err, "");
}

TEST(an_explicit_workspace_is_not_announced)
{
	const char *args[] = {"run", "-w", ws, "standard", "--", "true", NULL};

	EXPECT_EQ(cli(scratch, NULL, args), 0);
	EXPECT_TRUE(strstr(err, "workspace:") == NULL);
}

TEST(check_uses_the_current_directory)
{
	const char *args[] = {"check", "standard", NULL};
	char source[700];

	EXPECT_EQ(cli(ws, NULL, args), 0);
	snprintf(source, sizeof(source), "source = \"%s\"", ws);
	EXPECT_TRUE(strstr(out, source) != NULL);
	EXPECT_EQ(count(err, "(the current directory"), 1);
}

TEST(learn_uses_the_current_directory)
{
	const char *args[] = {
		"learn", "--from", "standard", "--", "sh", "-c", "cat /workspace/marker", NULL};

	EXPECT_EQ(cli(ws, NULL, args), 0);
	EXPECT_TRUE(strstr(out, "source = \"${WORKSPACE}\"") != NULL);
	EXPECT_EQ(count(err, "(the current directory"), 1);
}

TEST(root_is_refused)
{
	const char *run[] = {"run", "standard", "--", "true", NULL};
	const char *run_w[] = {"run", "-w", "/", "standard", "--", "true", NULL};
	const char *check[] = {"check", "standard", NULL};
	const char *learn[] = {"learn", "--from", "standard", "--", "true", NULL};

	EXPECT_EQ(cli("/", NULL, run), 125);
	EXPECT_TRUE(refusal_says("/"));
	EXPECT_EQ(cli(scratch, NULL, run_w), 125);
	EXPECT_TRUE(refusal_says("/"));
	/* check keeps its 0/1 contract */
	EXPECT_EQ(cli("/", NULL, check), 1);
	EXPECT_TRUE(refusal_says("/"));
	EXPECT_EQ(cli("/", NULL, learn), 125);
	EXPECT_TRUE(refusal_says("/"));
}

TEST(the_home_directory_is_refused)
{
	const char *run[] = {"run", "standard", "--", "true", NULL};
	const char *run_w[] = {"run", "-w", home, "standard", "--", "true", NULL};
	const struct passwd *pw = getpwuid(getuid());
	char real[4096];
	struct stat st;

	EXPECT_EQ(cli(home, home, run), 125);
	EXPECT_TRUE(refusal_says(home));
	EXPECT_TRUE(strstr(err, "home directory") != NULL);
	EXPECT_EQ(cli(scratch, home, run_w), 125);
	EXPECT_TRUE(refusal_says(home));
	/* a directory below it is a fine workspace */
	snprintf(real, sizeof(real), "%s/project", home);
	ASSERT_TRUE(mkdir(real, 0755) == 0 || errno == EEXIST);
	EXPECT_EQ(cli(real, home, run), 0);

	/* the passwd entry's home counts even when $HOME says otherwise */
	if (pw && pw->pw_dir && stat(pw->pw_dir, &st) == 0 && S_ISDIR(st.st_mode) &&
	    realpath(pw->pw_dir, real) && strcmp(real, "/") != 0) {
		EXPECT_EQ(cli(pw->pw_dir, home, run), 125);
		EXPECT_TRUE(refusal_says(real));
	} else {
		printf("# no passwd home directory to try\n");
	}
}

TEST(system_directories_are_refused_also_through_symlinks)
{
	static const char *const dirs[] = {"/etc", "/usr",  "/bin", "/sbin", "/boot",
					   "/dev", "/proc", "/sys", "/root", "/var"};
	char link[700];
	struct stat st;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		const char *args[] = {"check", "-q", "-w", dirs[i], "standard", NULL};

		if (stat(dirs[i], &st) < 0)
			continue;
		EXPECT_EQ(cli(scratch, NULL, args), 1);
		EXPECT_TRUE(refusal_says(dirs[i]));
	}
	snprintf(link, sizeof(link), "%s/etc-link", scratch);
	ASSERT_EQ(symlink("/etc", link), 0);
	{
		const char *run[] = {"run", "-w", link, "standard", "--", "true", NULL};
		const char *implied[] = {"run", "standard", "--", "true", NULL};

		EXPECT_EQ(cli(scratch, NULL, run), 125);
		EXPECT_TRUE(refusal_says(link));
		EXPECT_TRUE(strstr(err, "(/etc)") != NULL);
		/* the current directory entered through the link resolves to /etc too */
		EXPECT_EQ(cli(link, NULL, implied), 125);
		EXPECT_TRUE(refusal_says("/etc"));
	}
	unlink(link);
}

TEST(workspace_anywhere_lifts_the_refusal)
{
	const char *check[] = {"check",	   "-q", "--workspace-anywhere", "-w", "/etc",
			       "standard", NULL};
	const char *run[] = {"run", "--workspace-anywhere",  "standard", "--", "sh",
			     "-c",  "test -d /workspace/ws", NULL};

	EXPECT_EQ(cli(scratch, NULL, check), 0);
	/* scratch is $HOME for this run: refused without the option, used with it */
	EXPECT_EQ(cli(scratch, scratch, run), 0);
	{
		const char *plain[] = {"run", "standard", "--", "true", NULL};

		EXPECT_EQ(cli(scratch, scratch, plain), 125);
	}
}

TEST(a_policy_without_workspace_runs_anywhere)
{
	const char *run[] = {"run", minimal, "--", "true", NULL};
	const char *check[] = {"check", minimal, NULL};

	EXPECT_EQ(cli("/", NULL, run), 0);
	EXPECT_TRUE(strstr(err, "workspace") == NULL);
	EXPECT_EQ(cli("/", NULL, check), 0);
	EXPECT_TRUE(strstr(err, "workspace") == NULL);
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	char *real;
	FILE *f;
	int r;

	sbxtrace = getenv("SBXTRACE");
	minimal = getenv("SBX_POLICY");
	if (!sbxtrace || !*sbxtrace || !minimal || !*minimal) {
		fprintf(stderr, "skip: SBXTRACE/SBX_POLICY not set (run through meson test)\n");
		return 77;
	}
	snprintf(scratch, sizeof(scratch), "%s/sbx-ws-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(scratch))
		return 99;
	/* paths as the supervisor sees them (TMPDIR may be a symlink) */
	real = realpath(scratch, NULL);
	if (!real)
		return 99;
	snprintf(scratch, sizeof(scratch), "%s", real);
	free(real);
	snprintf(ws, sizeof(ws), "%s/ws", scratch);
	snprintf(home, sizeof(home), "%s/home", scratch);
	snprintf(outf, sizeof(outf), "%s/out", scratch);
	snprintf(errf, sizeof(errf), "%s/err", scratch);
	if (mkdir(ws, 0755) < 0 || mkdir(home, 0755) < 0)
		return 99;
	{
		char marker[700];

		snprintf(marker, sizeof(marker), "%s/marker", ws);
		f = fopen(marker, "we");
		if (!f)
			return 99;
		fputs("in the workspace\n", f);
		fclose(f);
	}
	r = tap_run();
	{
		char cmd[1200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
		(void) !system(cmd);
	}
	return r;
}
