/* SPDX-License-Identifier: MIT */
/* Hard links cannot bring a file from outside (or from a read-only mount) into the
 * workspace: the source must be visible and writable in the view, in the same mount. */
#include "tests/security/fs-escape.h"

static int attack(void)
{
	if (link(fs_secret, "/workspace/h1") == 0)
		fs_try_open("/workspace/h1");
	if (linkat(AT_FDCWD, fs_secret, AT_FDCWD, "/workspace/h2", AT_SYMLINK_FOLLOW) == 0)
		fs_try_open("/workspace/h2");
	if (link("/ro/file", "/workspace/h3") == 0)
		fs_bad("hard link of a read-only file into the workspace");
	if (symlink(fs_secret, "/workspace/s") == 0 &&
	    linkat(AT_FDCWD, "/workspace/s", AT_FDCWD, "/workspace/h4", AT_SYMLINK_FOLLOW) == 0)
		fs_try_open("/workspace/h4");
	if (link("/workspace/prog", "/ro/h5") == 0)
		fs_bad("hard link into the read-only mount");
	/* sanity: a link inside the workspace works */
	if (link("/workspace/prog", "/workspace/prog2") != 0) {
		perror("link inside the workspace");
		return 1;
	}
	return 0;
}
