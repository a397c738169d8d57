/* SPDX-License-Identifier: MIT */
/* Every write-capable syscall on the read-only mount fails (the harness then checks from
 * outside that the file's content, mode, owner, times and the directory are unchanged). */
#include "tests/security/fs-escape.h"

#include <linux/openat2.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <utime.h>

#define EXPECT_FAIL(call, what)                                                                    \
	do {                                                                                       \
		if ((call) >= 0)                                                                   \
			fs_bad(what);                                                              \
	} while (0)

static int attack(void)
{
	struct open_how how = {.flags = O_RDWR};
	struct timespec ts[2] = {{0, 0}, {0, 0}};
	struct utimbuf ub = {0, 0};
	struct timeval tv[2] = {{0, 0}, {0, 0}};
	int fd, dfd;

	fd = open("/ro/file", O_WRONLY | O_CLOEXEC);
	EXPECT_FAIL(fd, "open O_WRONLY");
	fd = open("/ro/file", O_RDWR | O_CLOEXEC);
	EXPECT_FAIL(fd, "open O_RDWR");
	fd = open("/ro/file", O_RDONLY | O_TRUNC | O_CLOEXEC);
	EXPECT_FAIL(fd, "open O_TRUNC");
	fd = open("/ro/file", O_WRONLY | O_APPEND | O_CLOEXEC);
	EXPECT_FAIL(fd, "open O_APPEND");
	fd = open("/ro/new", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	EXPECT_FAIL(fd, "open O_CREAT");
	fd = open("/ro", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	EXPECT_FAIL(fd, "open O_TMPFILE");
	fd = (int) syscall(SYS_creat, "/ro/file", 0644);
	EXPECT_FAIL(fd, "creat");
	fd = (int) syscall(SYS_openat2, AT_FDCWD, "/ro/file", &how, sizeof(how));
	EXPECT_FAIL(fd, "openat2 O_RDWR");
	EXPECT_FAIL(truncate("/ro/file", 0), "truncate");
	EXPECT_FAIL(unlink("/ro/file"), "unlink");
	EXPECT_FAIL(rename("/ro/file", "/ro/moved"), "rename");
	EXPECT_FAIL(rename("/ro/file", "/workspace/moved"), "rename out");
	EXPECT_FAIL(rename("/workspace/prog", "/ro/in"), "rename in");
	EXPECT_FAIL(link("/ro/file", "/ro/link"), "link");
	EXPECT_FAIL(symlink("file", "/ro/sym"), "symlink");
	EXPECT_FAIL(mkdir("/ro/dir", 0755), "mkdir");
	EXPECT_FAIL(rmdir("/ro"), "rmdir");
	EXPECT_FAIL(mknod("/ro/fifo", S_IFIFO | 0644, 0), "mknod");
	EXPECT_FAIL(chmod("/ro/file", 0777), "chmod");
	EXPECT_FAIL(fchmodat(AT_FDCWD, "/ro/file", 0777, 0), "fchmodat");
	EXPECT_FAIL(chown("/ro/file", 12345, 12345), "chown");
	EXPECT_FAIL(lchown("/ro/file", 12345, 12345), "lchown");
	EXPECT_FAIL(utimensat(AT_FDCWD, "/ro/file", ts, 0), "utimensat");
	EXPECT_FAIL(utime("/ro/file", &ub), "utime");
	EXPECT_FAIL(utimes("/ro/file", tv), "utimes");
	EXPECT_FAIL(setxattr("/ro/file", "user.x", "1", 1, 0), "setxattr");
	EXPECT_FAIL(lsetxattr("/ro/file", "user.x", "1", 1, 0), "lsetxattr");
	EXPECT_FAIL(removexattr("/ro/file", "user.x"), "removexattr");
	if (access("/ro/file", W_OK) == 0)
		fs_bad("access W_OK says writable");
	/* through an fd of the read-only file: the fd itself is read-only */
	fd = open("/ro/file", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror("open /ro/file read-only");
		return 1;
	}
	EXPECT_FAIL(write(fd, "x", 1), "write on a read-only fd");
	EXPECT_FAIL(ftruncate(fd, 0), "ftruncate");
	close(fd);
	dfd = open("/ro", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		EXPECT_FAIL(openat(dfd, "file", O_WRONLY | O_CLOEXEC), "openat(dirfd) O_WRONLY");
		EXPECT_FAIL(unlinkat(dfd, "file", 0), "unlinkat(dirfd)");
		EXPECT_FAIL(mkdirat(dfd, "d", 0755), "mkdirat(dirfd)");
		EXPECT_FAIL(symlinkat("x", dfd, "s"), "symlinkat(dirfd)");
		close(dfd);
	}
	/* sanity: the workspace is writable */
	if (fs_write_file("/workspace/w", "w\n") < 0) {
		perror("write in the workspace");
		return 1;
	}
	return 0;
}
