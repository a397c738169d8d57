/* SPDX-License-Identifier: MIT */
/*
 * A policy that mounts the host's "/" read-only also shows the host's /proc below it. Walked
 * as a plain directory, /proc/self would be the supervisor (its fds, its memory) and every
 * host process would be listed. The view must make that /proc a proc mount of the sandbox:
 * self is the caller, processes outside the tree are absent, /proc/self/fd/N is the
 * caller's fd (chmod through it changes that object and nothing else). The program runs
 * itself inside `sbxtrace run` with such a policy (written to a scratch directory).
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "tests/helpers/sbx-test.h"

static int probe(const char *dir, const char *outer)
{
	char path[4096], link[4096], want[4096];
	struct stat st, dst;
	ssize_t n;
	int fd, bad = 0;

	n = readlink("/proc/self", link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	if (n <= 0 || atoi(link) != getpid()) {
		printf("FAIL: /proc/self reads '%s', not our pid %d\n", link, (int) getpid());
		bad = 1;
	}
	snprintf(path, sizeof(path), "/proc/%s", outer);
	if (access(path, F_OK) == 0 || errno != ENOENT) {
		printf("FAIL: %s (outside the tree) is visible\n", path);
		bad = 1;
	}
	snprintf(path, sizeof(path), "/proc/%s/mem", outer);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		printf("FAIL: opened %s\n", path);
		bad = 1;
		close(fd);
	}
	if (access("/proc/1", F_OK) == 0 && getpid() != 1) {
		printf("FAIL: /proc/1 is visible\n");
		bad = 1;
	}
	snprintf(path, sizeof(path), "%s/d", dir);
	if (mkdir(path, 0700) < 0 || stat(dir, &dst) < 0)
		return 20;
	fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 21;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, want, sizeof(want) - 1);
	want[n > 0 ? n : 0] = 0;
	if (strcmp(want, path) != 0) {
		printf("FAIL: %s reads '%s', not '%s'\n", link, want, path);
		bad = 1;
	}
	if (chmod(link, 0751) < 0) {
		printf("FAIL: chmod %s: %s\n", link, strerror(errno));
		bad = 1;
	}
	if (stat(path, &st) < 0 || (st.st_mode & 07777) != 0751) {
		printf("FAIL: chmod through %s did not reach %s\n", link, path);
		bad = 1;
	}
	if (stat(dir, &st) < 0 || st.st_mode != dst.st_mode) {
		printf("FAIL: chmod through %s changed %s\n", link, dir);
		bad = 1;
	}
	return bad;
}

int main(int argc, char *argv[])
{
	const char *sbxtrace = sbx_env("SBXTRACE");
	char self[4096], policy[4200], pid[32], rm[4300];
	char *dir;
	FILE *f;
	int code;

	if (argc == 4 && strcmp(argv[1], "probe") == 0)
		return probe(argv[2], argv[3]);
	if (!sbx_self_exe(self, sizeof(self)))
		return 1;
	dir = sbx_tmpdir();
	if (!dir)
		return 1;
	snprintf(policy, sizeof(policy), "%s.toml", dir);
	f = fopen(policy, "we");
	if (!f)
		return 1;
	fprintf(f,
		"[process]\nenv = { keep = [\"*\"] }\ncwd = \"%s\"\n\n"
		"[[mount]]\npath = \"/\"\nmode = \"ro\"\n\n"
		"[[mount]]\npath = \"%s\"\nmode = \"rw\"\n",
		dir, dir);
	fclose(f);
	snprintf(pid, sizeof(pid), "%d", (int) getpid());
	{
		const char *args[] = {sbxtrace, "run", policy, "--", self, "probe", dir, pid, NULL};

		code = sbx_run_argv(args, NULL);
	}
	snprintf(rm, sizeof(rm), "rm -rf '%s' '%s'", dir, policy);
	(void) !system(rm);
	printf("sbxtrace exited %d (want 0)\n", code);
	return code == 0 ? 0 : 1;
}
