/* SPDX-License-Identifier: MIT */
/* Device nodes cannot be made (a block device of the host disk would read everything);
 * FIFOs and sockets can, in writable parts of the view only. */
#include "tests/security/fs-escape.h"

#include <sys/sysmacros.h>

static int attack(void)
{
	if (mknod("/workspace/null", S_IFCHR | 0666, makedev(1, 3)) == 0)
		fs_bad("made a character device");
	if (mknod("/workspace/disk", S_IFBLK | 0666, makedev(8, 0)) == 0)
		fs_bad("made a block device");
	if (mknodat(AT_FDCWD, "/workspace/mem", S_IFCHR | 0666, makedev(1, 1)) == 0)
		fs_bad("made /dev/mem's device");
	if (mknod("/ro/fifo", S_IFIFO | 0644, 0) == 0)
		fs_bad("made a FIFO in the read-only mount");
	if (mkfifo(fs_secret, 0644) == 0)
		fs_bad("made a FIFO at the secret's host path");
	/* sanity: a FIFO in the workspace is fine */
	if (mknod("/workspace/fifo", S_IFIFO | 0644, 0) != 0) {
		perror("mknod fifo in the workspace");
		return 1;
	}
	return 0;
}
