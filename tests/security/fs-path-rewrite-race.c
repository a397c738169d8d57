/* SPDX-License-Identifier: MIT */
/* A thread rewrites the path buffer between a visible file and a forbidden target while the
 * main thread opens it, thousands of times; an open must return the visible file or an
 * error, never the target. The buffer sits just before an unmapped page (an over-long read by
 * the supervisor would fail loudly). Four races:
 *   - read, an absolute path through a translated mount (/workspace/ok.txt) against the
 *     secret's host path: the supervisor opens its own copy and injects the fd;
 *   - read, a relative path (ok.txt, from the cwd /workspace) against the secret: where the
 *     kernel makes the opens the supervisor checked (--kernel-open: "Opens the kernel makes"
 *     in emulation/fs-open.c) this one is continued, and only Landlock stands between a
 *     rewritten string and the secret;
 *   - read-write, ok.txt against the read-only mount's file by its host path (Landlock grants
 *     it read only): the harness checks that the file is unchanged;
 *   - create, new.txt against a name in the secret's directory and in the read-only mount's
 *     (neither granted): the harness checks that neither gained an entry. */
#include "tests/security/fs-escape.h"

#include <sys/mman.h>

static volatile int stop;
static char *buf;
static char good[PATH_MAX], bad[PATH_MAX];

static void *rewriter(void *arg)
{
	(void) arg;
	while (!stop) {
		memcpy(buf, bad, strlen(bad) + 1);
		memcpy(buf, good, strlen(good) + 1);
		/* let each state last a while, so both are seen */
		for (volatile int k = 0; k < 300; k++)
			;
	}
	return NULL;
}

/* Whether fd is the read-only mount's file (its content). */
static bool fd_is_ro_file(int fd)
{
	char b[64] = "";
	ssize_t n = pread(fd, b, sizeof(b) - 1, 0);

	return n > 0 && strcmp(b, RO_TEXT) == 0;
}

/* One race: opens with flags while the rewriter flips between g and b. 0, or 1 when the
 * visible file was never opened (the race was not exercised). */
static int race(const char *g, const char *b, int flags, const char *what)
{
	int n = fs_long ? 200000 : 5000, seen_good = 0;
	pthread_t th;

	if (fs_failures)
		return 0; /* an earlier race escaped: that is the result */
	snprintf(good, sizeof(good), "%s", g);
	snprintf(bad, sizeof(bad), "%s", b);
	memcpy(buf, good, strlen(good) + 1);
	stop = 0;
	if (pthread_create(&th, NULL, rewriter, NULL) != 0)
		return 1;
	/* until the visible file has been opened too (bounded): where the kernel opens it the
	 * loop can be over before the other thread has got going */
	for (int i = 0; (i < n || (!seen_good && i < 100 * n)) && !fs_failures; i++) {
		int fd = open(buf, flags | O_CLOEXEC, 0644);

		if (fd < 0)
			continue;
		if (fs_fd_is_secret(fd))
			fs_bad("a rewritten path buffer opened the secret");
		else if ((flags & O_ACCMODE) != O_RDONLY && fd_is_ro_file(fd))
			fs_bad("a rewritten path buffer opened the read-only file for writing");
		else
			seen_good++;
		close(fd);
	}
	stop = 1;
	pthread_join(th, NULL);
	if (!seen_good) {
		fprintf(stderr,
			"%s: the visible file was never opened: the race was not exercised\n",
			what);
		return 1;
	}
	return 0;
}

static int attack(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char ro_file[PATH_MAX], secret_new[PATH_MAX], ro_new[PATH_MAX];
	char *map;

	if (fs_write_file("/workspace/ok.txt", "fine\n") < 0 || chdir("/workspace") < 0)
		return 1;
	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED || munmap(map + page, page) < 0)
		return 1;
	buf = map + page - PATH_MAX;
	snprintf(ro_file, sizeof(ro_file), "%s/ro/file", fs_base);
	snprintf(secret_new, sizeof(secret_new), "%s/secret/planted", fs_base);
	snprintf(ro_new, sizeof(ro_new), "%s/ro/planted", fs_base);
	/* the same length as the good path is not needed: the NUL moves with the copy */
	if (race("/workspace/ok.txt", fs_secret, O_RDONLY, "absolute read") ||
	    race("ok.txt", fs_secret, O_RDONLY, "relative read") ||
	    race("ok.txt", ro_file, O_RDWR, "read-write") ||
	    race("new.txt", secret_new, O_WRONLY | O_CREAT, "create (secret)") ||
	    race("new.txt", ro_new, O_WRONLY | O_CREAT, "create (read-only)"))
		return 1;
	return 0;
}
