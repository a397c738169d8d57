/* SPDX-License-Identifier: MIT */
/* A thread rewrites the path buffer between a visible file and the secret's host path while
 * the main thread opens it, thousands of times: the supervisor acts on its own copy, so an
 * open returns either the visible file or an error, never the secret. The buffer sits just
 * before an unmapped page (an over-long read by the supervisor would fail loudly). */
#include "tests/security/fs-escape.h"

#include <sys/mman.h>

static volatile int stop;
static char *buf;
static char good[PATH_MAX], bad[PATH_MAX];

static void *rewriter(void *arg)
{
	size_t len = strlen(bad) + 1;

	(void) arg;
	while (!stop) {
		memcpy(buf, bad, len);
		memcpy(buf, good, strlen(good) + 1);
		/* let each state last a while, so both are seen */
		for (volatile int k = 0; k < 300; k++)
			;
	}
	return NULL;
}

static int attack(void)
{
	int n = fs_long ? 200000 : 5000, seen_good = 0;
	long page = sysconf(_SC_PAGESIZE);
	char *map;
	pthread_t th;

	snprintf(good, sizeof(good), "/workspace/ok.txt");
	/* same length as the good path is not needed: the NUL moves with the copy */
	snprintf(bad, sizeof(bad), "%s", fs_secret);
	if (fs_write_file(good, "fine\n") < 0)
		return 1;
	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED || munmap(map + page, page) < 0)
		return 1;
	buf = map + page - PATH_MAX;
	memcpy(buf, good, strlen(good) + 1);
	if (pthread_create(&th, NULL, rewriter, NULL) != 0)
		return 1;
	/* until the visible file has been opened too (bounded): with the view in the kernel the
	 * loop can be over before the other thread has got going */
	for (int i = 0; (i < n || (!seen_good && i < 100 * n)) && !fs_failures; i++) {
		int fd = open(buf, O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			continue;
		if (fs_fd_is_secret(fd))
			fs_bad("a rewritten path buffer opened the secret");
		else
			seen_good++;
		close(fd);
	}
	stop = 1;
	pthread_join(th, NULL);
	if (!seen_good) {
		fprintf(stderr, "the visible file was never opened: the race was not exercised\n");
		return 1;
	}
	return 0;
}
