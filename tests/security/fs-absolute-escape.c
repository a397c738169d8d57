/* SPDX-License-Identifier: MIT */
/* Absolute paths to the secret: its host path, the workspace's host path plus "..", and
 * system secrets, through every open variant and stat. */
#include "tests/security/fs-escape.h"

#include <linux/openat2.h>

static int attack(void)
{
	char p[PATH_MAX + 64];
	struct open_how how = {.flags = O_RDONLY};
	struct stat st;
	int fd;

	fs_try_open(fs_secret);
	snprintf(p, sizeof(p), "%s/ws/../secret/secret.txt", fs_base);
	fs_try_open(p);
	fs_try_open("/etc/shadow");
	fs_try_open("/etc/passwd");
	if (stat(fs_secret, &st) == 0)
		fs_bad("stat of the secret's host path succeeded");
	if (access(fs_secret, F_OK) == 0)
		fs_bad("access of the secret's host path succeeded");
	fd = (int) syscall(SYS_openat2, AT_FDCWD, fs_secret, &how, sizeof(how));
	if (fd >= 0) {
		if (fs_fd_is_secret(fd))
			fs_bad("openat2 read the secret");
		close(fd);
	}
	fd = (int) syscall(SYS_creat, fs_secret, 0644);
	if (fd >= 0)
		fs_bad("creat on the secret's host path succeeded");
	/* the workspace's host path is not a path inside */
	snprintf(p, sizeof(p), "%s/ws/prog", fs_base);
	if (access(p, F_OK) == 0)
		fs_bad("the workspace is visible under its host path");
	/* sanity: the sandbox works at all (a test that cannot fail is no test) */
	if (access("/workspace/prog", X_OK) != 0) {
		fprintf(stderr, "/workspace/prog is not visible inside\n");
		return 1;
	}
	return 0;
}
