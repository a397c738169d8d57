/* SPDX-License-Identifier: MIT */
/* /proc/self/root, /proc/<parent>/root, /proc/<pid>/cwd and /proc/1/root lead back into the
 * view, never to the host's root. */
#include "tests/security/fs-escape.h"

static void try_via(pid_t pid, const char *link)
{
	char p[PATH_MAX + 128];

	snprintf(p, sizeof(p), "/proc/%d/%s%s", (int) pid, link, fs_secret);
	fs_try_open(p);
	snprintf(p, sizeof(p), "/proc/%d/%s/../secret/secret.txt", (int) pid, link);
	fs_try_open(p);
}

static int attack(void)
{
	char p[PATH_MAX + 64], buf[PATH_MAX];
	pid_t child;
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/self/root%s", fs_secret);
	fs_try_open(p);
	fs_try_open("/proc/self/root/etc/shadow");
	try_via(getpid(), "root");
	try_via(getpid(), "cwd");
	try_via(getppid(), "root");
	try_via(getppid(), "cwd");
	try_via(1, "root");
	try_via(1, "cwd");
	n = readlink("/proc/self/root", buf, sizeof(buf) - 1);
	if (n >= 0) {
		buf[n] = 0;
		if (strcmp(buf, "/") != 0)
			fs_bad("readlink(/proc/self/root) is not /");
	}
	n = readlink("/proc/self/cwd", buf, sizeof(buf) - 1);
	if (n >= 0) {
		buf[n] = 0;
		if (strncmp(buf, fs_base, strlen(fs_base)) == 0)
			fs_bad("readlink(/proc/self/cwd) shows the host path");
	}
	/* a child looks at its parent (us) */
	child = fork();
	if (child == 0) {
		try_via(getppid(), "root");
		try_via(getppid(), "cwd");
		_exit(fs_failures ? 1 : 0);
	}
	if (child > 0) {
		int st;

		if (waitpid(child, &st, 0) == child && (!WIFEXITED(st) || WEXITSTATUS(st)))
			fs_bad("the child reached the secret through its parent's /proc");
	}
	/* sanity: /proc/self works */
	if (access("/proc/self/root/workspace/prog", F_OK) != 0) {
		fprintf(stderr, "/proc/self/root/workspace/prog is not visible\n");
		return 1;
	}
	return 0;
}
