/* SPDX-License-Identifier: MIT */
/*
 * The disk budget against fallocate(2) (docs/budgets.md, "disk"): the budget caps each file
 * with RLIMIT_FSIZE and, once used up, drops it to 0 for the whole tree. The kernel checks
 * that limit only against the new size of a file, so fallocate() allocates past it where the
 * size does not grow: with FALLOC_FL_KEEP_SIZE (ext4, xfs: blocks beyond the end of the
 * file), and with mode 0 inside a sparse file (tmpfs too). One call allocates gigabytes in
 * milliseconds, long before the next walk. Under an 8 MiB budget (slack 2 MiB) the attack
 * allocates 64 MiB both ways; every allocation past the budget must be refused.
 */
#define FS_HAVE_PREPARE
#include "tests/security/fs-escape.h"

#define MIB	    (1024 * 1024)
#define BUDGET_MIB  8
#define ALLOWED_MIB (BUDGET_MIB + 2) /* the budget and its slack */

/* Whether the workspace's file system allocates with fallocate() at all, found outside (where
 * nothing refuses it): the marker file "falloc-ok" in the workspace. */
static void fs_prepare(const char *ws)
{
	char p[PATH_MAX + 32];
	int fd;

	snprintf(p, sizeof(p), "%s/probe", ws);
	fd = open(p, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0 && fallocate(fd, 0, 0, 4096) == 0) {
		snprintf(p, sizeof(p), "%s/falloc-ok", ws);
		(void) fs_write_file(p, "1\n");
	}
	if (fd >= 0)
		close(fd);
	snprintf(p, sizeof(p), "%s/probe", ws);
	(void) unlink(p);
	fs_extra_sets[0] = "limits.disk=8MiB";
	fs_extra_sets[1] = "limits.kill_grace=200ms";
}

static off_t allocated(int fd)
{
	struct stat st;

	return fstat(fd, &st) < 0 ? 0 : (off_t) st.st_blocks * 512;
}

static int attack(void)
{
	int fds[17], n = 0;
	off_t total = 0;
	char m[256];

	if (access("/workspace/falloc-ok", F_OK) < 0) {
		fprintf(stderr, "skip: fallocate() is not supported on this file system\n");
		return 77;
	}

	/* every file made first, sparse, while the budget is empty (creation is refused once
	 * it is used up; allocation must be too) */
	for (int i = 0; i < 17; i++) {
		char p[64];

		snprintf(p, sizeof(p), "/workspace/f-%d", i);
		fds[i] = open(p, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fds[i] < 0) {
			perror("open");
			return 1;
		}
		n++;
		if (i > 0 && ftruncate(fds[i], (off_t) 4 * MIB) < 0) {
			perror("ftruncate");
			return 1;
		}
	}

	/* 1: blocks beyond the end of an empty file, its size staying 0 */
	(void) fallocate(fds[0], FALLOC_FL_KEEP_SIZE, 0, (off_t) 64 * MIB);
	if (allocated(fds[0]) > (off_t) ALLOWED_MIB * MIB) {
		snprintf(m, sizeof(m),
			 "fallocate(KEEP_SIZE) allocated %lld MiB under a %d MiB budget",
			 (long long) (allocated(fds[0]) / MIB), BUDGET_MIB);
		fs_bad(m);
	}
	if (ftruncate(fds[0], 0) < 0) /* frees the blocks again */
		perror("ftruncate");

	/* 2: the sparse files allocated within their size, 4 MiB each */
	for (int i = 1; i < n; i++) {
		(void) fallocate(fds[i], 0, 0, (off_t) 4 * MIB);
		total += allocated(fds[i]);
	}
	if (total > (off_t) ALLOWED_MIB * MIB) {
		snprintf(m, sizeof(m),
			 "fallocate() in sparse files allocated %lld MiB under a %d MiB budget",
			 (long long) (total / MIB), BUDGET_MIB);
		fs_bad(m);
	}
	for (int i = 0; i < n; i++)
		close(fds[i]);
	return 0;
}
