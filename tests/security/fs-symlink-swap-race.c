/* SPDX-License-Identifier: MIT */
/* Another thread swaps /workspace/x between a regular file and a symlink to the secret (its
 * host path, and a relative ../secret) while the main thread opens it: the open never reads
 * the secret. Slow suite: --long, many more iterations. */
#include "tests/security/fs-escape.h"

static volatile int stop;

static void *swapper(void *arg)
{
	(void) arg;
	while (!stop) {
		(void) rename("/workspace/link-abs", "/workspace/x");
		(void) !symlink(fs_secret, "/workspace/link-abs");
		(void) rename("/workspace/plain", "/workspace/x");
		(void) fs_write_file("/workspace/plain", "plain\n");
		(void) rename("/workspace/link-rel", "/workspace/x");
		(void) !symlink("../secret/secret.txt", "/workspace/link-rel");
		(void) rename("/workspace/plain", "/workspace/x");
		(void) fs_write_file("/workspace/plain", "plain\n");
	}
	return NULL;
}

static int attack(void)
{
	int n = fs_long ? 100000 : 3000, opened = 0;
	pthread_t th;

	if (fs_write_file("/workspace/x", "plain\n") < 0 ||
	    fs_write_file("/workspace/plain", "plain\n") < 0 ||
	    symlink(fs_secret, "/workspace/link-abs") < 0 ||
	    symlink("../secret/secret.txt", "/workspace/link-rel") < 0) {
		perror("setup");
		return 1;
	}
	if (pthread_create(&th, NULL, swapper, NULL) != 0)
		return 1;
	/* until an open has succeeded too (bounded): with the view in the kernel the loop can be
	 * over before the other thread has got going */
	for (int i = 0; (i < n || (!opened && i < 100 * n)) && !fs_failures; i++) {
		int fd = open("/workspace/x", O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			continue;
		opened++;
		if (fs_fd_is_secret(fd))
			fs_bad("open of a swapped symlink read the secret");
		close(fd);
	}
	stop = 1;
	pthread_join(th, NULL);
	if (opened == 0) {
		fprintf(stderr, "no open succeeded: the race was not exercised\n");
		return 1;
	}
	return 0;
}
