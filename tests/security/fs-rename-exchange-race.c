/* SPDX-License-Identifier: MIT */
/* A thread exchanges (RENAME_EXCHANGE) a real directory with a symlink to the secret's host
 * directory, and renames it back and forth, while the main thread opens a file below it:
 * the open finds the decoy or nothing, never the secret. */
#include "tests/security/fs-escape.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static volatile int stop;

static void *exchanger(void *arg)
{
	(void) arg;
	while (!stop) {
		(void) syscall(SYS_renameat2, AT_FDCWD, "/workspace/d", AT_FDCWD, "/workspace/l",
			       RENAME_EXCHANGE);
		(void) syscall(SYS_renameat2, AT_FDCWD, "/workspace/d", AT_FDCWD, "/workspace/l",
			       RENAME_EXCHANGE);
		(void) rename("/workspace/d", "/workspace/d2");
		(void) rename("/workspace/d2", "/workspace/d");
	}
	return NULL;
}

static int attack(void)
{
	int n = fs_long ? 100000 : 3000, opened = 0;
	char dir[PATH_MAX];
	pthread_t th;

	snprintf(dir, sizeof(dir), "%s/secret", fs_base);
	if (mkdir("/workspace/d", 0755) < 0 ||
	    fs_write_file("/workspace/d/secret.txt", "decoy\n") < 0 ||
	    symlink(dir, "/workspace/l") < 0) {
		perror("setup");
		return 1;
	}
	if (pthread_create(&th, NULL, exchanger, NULL) != 0)
		return 1;
	/* until an open has succeeded too (bounded): with the view in the kernel the loop can be
	 * over before the other thread has got going */
	for (int i = 0; (i < n || (!opened && i < 100 * n)) && !fs_failures; i++) {
		int fd = open("/workspace/d/secret.txt", O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			continue;
		opened++;
		if (fs_fd_is_secret(fd))
			fs_bad("an exchanged directory led to the secret");
		close(fd);
	}
	stop = 1;
	pthread_join(th, NULL);
	if (!opened) {
		fprintf(stderr, "no open succeeded: the race was not exercised\n");
		return 1;
	}
	return 0;
}
