/* SPDX-License-Identifier: MIT */
/* chdir and fchdir games: a thread flips the chdir argument between /workspace and the
 * secret's host directory; whatever cwd the kernel ends up with, nothing relative reaches
 * the secret and getcwd never shows a host path. Also fchdir to directory fds and chdir
 * through symlinks and "..". */
#include "tests/security/fs-escape.h"

static volatile int stop;
static char *flip;
static char secret_dir[PATH_MAX];

static void *flipper(void *arg)
{
	size_t ls = strlen(secret_dir) + 1;

	(void) arg;
	while (!stop) {
		memcpy(flip, secret_dir, ls);
		memcpy(flip, "/workspace", sizeof("/workspace"));
		/* let each state last a while, so both are seen */
		for (volatile int k = 0; k < 300; k++)
			;
	}
	return NULL;
}

static void probe_cwd(void)
{
	char buf[PATH_MAX];

	fs_try_open("secret.txt");
	fs_try_open("../secret/secret.txt");
	if (getcwd(buf, sizeof(buf)) && strncmp(buf, fs_base, strlen(fs_base)) == 0)
		fs_bad("getcwd shows a host path");
}

static int attack(void)
{
	int n = fs_long ? 20000 : 1000, changed = 0, dfd;
	pthread_t th;

	snprintf(secret_dir, sizeof(secret_dir), "%s/secret", fs_base);
	if (chdir(secret_dir) == 0) {
		fs_bad("chdir to the secret's host directory succeeded");
		probe_cwd();
	}
	if (symlink(secret_dir, "/workspace/sd") == 0 && chdir("/workspace/sd") == 0)
		probe_cwd();
	if (chdir("/workspace") < 0) {
		perror("chdir /workspace");
		return 1;
	}
	dfd = open("/workspace", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || chdir("/") < 0 || fchdir(dfd) < 0) {
		perror("fchdir");
		return 1;
	}
	probe_cwd();
	close(dfd);
	for (int i = 0; i < 8; i++)
		(void) !chdir("..");
	probe_cwd();

	flip = malloc(PATH_MAX);
	memcpy(flip, "/workspace", sizeof("/workspace"));
	if (pthread_create(&th, NULL, flipper, NULL) != 0)
		return 1;
	/* n rounds, and more until one chdir went (at most 50 n): in the view in the kernel a
	 * chdir takes a microsecond, and a flipper preempted between its two copies leaves the
	 * secret's path in place for all of them (failed once under load) */
	for (int i = 0; (i < n || (!changed && i < 50 * n)) && !fs_failures; i++) {
		if (chdir(flip) == 0)
			changed++;
		probe_cwd();
	}
	stop = 1;
	pthread_join(th, NULL);
	if (!changed) {
		fprintf(stderr, "no chdir succeeded: the race was not exercised\n");
		return 1;
	}
	return 0;
}
