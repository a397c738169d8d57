/* SPDX-License-Identifier: MIT */
/* Reopening /proc/self/fd/N never grants more than the fd had: an O_PATH or read-only fd of a
 * file in the read-only mount cannot be reopened for writing (root on the host could). */
#include "tests/security/fs-escape.h"

static void try_reopen(int fd, int flags, const char *what)
{
	char p[64];
	int w;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	w = open(p, flags | O_CLOEXEC);
	if (w >= 0) {
		fs_bad(what);
		close(w);
	}
	snprintf(p, sizeof(p), "/dev/fd/%d", fd);
	w = open(p, flags | O_CLOEXEC);
	if (w >= 0) {
		fs_bad(what);
		close(w);
	}
}

static int attack(void)
{
	int fd_path = open("/ro/file", O_PATH | O_CLOEXEC);
	int fd_ro = open("/ro/file", O_RDONLY | O_CLOEXEC);
	char p[64];
	int r;

	if (fd_path < 0 || fd_ro < 0) {
		perror("open /ro/file");
		return 1;
	}
	try_reopen(fd_path, O_WRONLY, "O_PATH fd reopened for writing");
	try_reopen(fd_path, O_RDWR, "O_PATH fd reopened read-write");
	try_reopen(fd_ro, O_WRONLY, "read-only fd reopened for writing");
	try_reopen(fd_ro, O_RDWR | O_TRUNC, "read-only fd reopened read-write");
	/* sanity: a read-only reopen of the read-only fd works */
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd_ro);
	r = open(p, O_RDONLY | O_CLOEXEC);
	if (r < 0) {
		perror("reopen read-only");
		return 1;
	}
	close(r);
	return 0;
}
