/* SPDX-License-Identifier: MIT */
/* Symlinks made inside the workspace that point out of it resolve in the view: absolute
 * targets restart at the virtual root, relative ".." stops at it. */
#include "tests/security/fs-escape.h"

static int attack(void)
{
	char dir[PATH_MAX];
	int fd;

	snprintf(dir, sizeof(dir), "%s/secret", fs_base);
	if (symlink(fs_secret, "/workspace/abs") < 0 ||
	    symlink("../secret/secret.txt", "/workspace/rel") < 0 ||
	    symlink(dir, "/workspace/dir") < 0 || symlink("../secret", "/workspace/reldir") < 0 ||
	    symlink("/etc/shadow", "/workspace/shadow") < 0) {
		perror("symlink");
		return 1;
	}
	fs_try_open("/workspace/abs");
	fs_try_open("/workspace/rel");
	fs_try_open("/workspace/dir/secret.txt");
	fs_try_open("/workspace/reldir/secret.txt");
	fs_try_open("/workspace/shadow");
	fs_try_open("abs");
	fs_try_open("reldir/secret.txt");
	if (chdir("/workspace/dir") == 0)
		fs_try_open("secret.txt");
	if (chdir("/workspace/reldir") == 0)
		fs_try_open("secret.txt");
	/* creating through the symlink must not create next to the secret */
	fd = open("/workspace/dir/new", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		fs_bad("created a file through a symlink to a host directory");
		close(fd);
	}
	/* a symlink chain */
	if (symlink("/workspace/rel", "/workspace/chain") == 0)
		fs_try_open("/workspace/chain");
	return 0;
}
