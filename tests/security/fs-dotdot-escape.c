/* SPDX-License-Identifier: MIT */
/* ".." never leaves the virtual root: relative climbs from the workspace (the cwd), from a
 * directory fd, and absolute paths with ".." all stay inside the view. */
#include "tests/security/fs-escape.h"

static int attack(void)
{
	char p[PATH_MAX + 256];
	int dfd, fd;

	fs_try_open("../secret/secret.txt");
	fs_try_open("/workspace/../secret/secret.txt");
	fs_try_open("/workspace/../../../../../../secret/secret.txt");
	snprintf(p, sizeof(p), "../../../../../../../../..%s", fs_secret);
	fs_try_open(p);
	snprintf(p, sizeof(p), "/workspace/../../../../../..%s", fs_secret);
	fs_try_open(p);
	if (chdir("/workspace") < 0) {
		perror("chdir /workspace");
		return 1;
	}
	for (int i = 0; i < 12; i++)
		if (chdir("..") < 0)
			break;
	snprintf(p, sizeof(p), ".%s", fs_secret);
	fs_try_open(p);
	fs_try_open("secret/secret.txt");
	dfd = open("/workspace", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		perror("open /workspace");
		return 1;
	}
	fd = openat(dfd, "../secret/secret.txt", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (fs_fd_is_secret(fd))
			fs_bad("openat(workspace fd, ../secret) read the secret");
		close(fd);
	}
	if (fchdir(dfd) == 0) {
		fs_try_open("../secret/secret.txt");
		fs_try_open("./../secret/secret.txt");
	}
	close(dfd);
	/* sanity: ".." inside the view works */
	if (access("/workspace/../workspace/prog", F_OK) != 0) {
		fprintf(stderr, "'..' inside the view does not work\n");
		return 1;
	}
	return 0;
}
