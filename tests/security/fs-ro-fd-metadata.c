/* SPDX-License-Identifier: MIT */
/*
 * Issue 24, item 5: a file of a read-only mount, opened O_RDONLY (which the view allows), must
 * not change through that fd: fchmod (04755 would make a host binary setuid in a root-run
 * sandbox), fchown, fsetxattr, fremovexattr, futimens and utimensat(fd, NULL), and the
 * inode-flag ioctls FS_IOC_SETFLAGS and FS_IOC_FSSETXATTR. Each must fail with EROFS, in the
 * emulated view (the supervisor opened the file from the host, where nothing is read-only)
 * and in the kernel view (a read-only bind mount). The same calls on a workspace file work
 * (the positive control). Outside, besides the harness's checks of content, mode, owner and
 * mtime, the file's ctime (any metadata change sets it), its xattrs and its flags must be
 * unchanged.
 */
#define FS_HAVE_PREPARE
#define FS_HAVE_CHECK
#include "tests/security/fs-escape.h"

#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/xattr.h>

static void expect_erofs(int r, const char *what)
{
	char m[128];

	if (r == 0 || errno != EROFS) {
		snprintf(m, sizeof(m), "%s on a read-only fd of /ro/file: %s (want EROFS)", what,
			 r == 0 ? "changed it" : strerror(errno));
		fs_bad(m);
	}
}

static int attack(void)
{
	struct timespec ts[2] = {{1, 0}, {1, 0}};
	struct fsxattr fsx = {};
	int fd, ws, flags = 0;

	/* positive control: the same calls through a workspace file's fd work */
	ws = open("/workspace/prog", O_RDONLY | O_CLOEXEC);
	if (ws < 0 || fchmod(ws, 0700) < 0 || futimens(ws, NULL) < 0 ||
	    syscall(SYS_utimensat, ws, NULL, ts, 0) < 0 || fchown(ws, (uid_t) -1, getgid()) < 0) {
		perror("control: changes through a workspace fd");
		return 1;
	}
	close(ws);

	fd = open("/ro/file", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror("control: open /ro/file O_RDONLY");
		return 1;
	}
	expect_erofs(fchmod(fd, 04755), "fchmod 04755");
	expect_erofs(fchown(fd, (uid_t) -1, getgid()), "fchown");
	expect_erofs(fsetxattr(fd, "user.sbx", "x", 1, 0), "fsetxattr");
	expect_erofs(fremovexattr(fd, "user.pre"), "fremovexattr");
	expect_erofs(futimens(fd, NULL), "futimens");
	expect_erofs((int) syscall(SYS_utimensat, fd, NULL, ts, 0), "utimensat(fd, NULL)");
	(void) ioctl(fd, FS_IOC_GETFLAGS, &flags);
	flags |= FS_NODUMP_FL;
	expect_erofs(ioctl(fd, FS_IOC_SETFLAGS, &flags), "FS_IOC_SETFLAGS");
	(void) ioctl(fd, FS_IOC_FSGETXATTR, &fsx);
	fsx.fsx_xflags |= FS_XFLAG_NODUMP;
	expect_erofs(ioctl(fd, FS_IOC_FSSETXATTR, &fsx), "FS_IOC_FSSETXATTR");
	close(fd);
	return 0;
}

static char ro_file[PATH_MAX];
static struct stat ro_before;
static int ro_flags_before = -1;
static bool ro_has_xattr;

static int read_flags(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), flags = -1;

	if (fd >= 0 && ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0)
		flags = -1;
	if (fd >= 0)
		close(fd);
	return flags;
}

static void fs_prepare(const char *ws)
{
	snprintf(ro_file, sizeof(ro_file), "%.*s/ro/file", (int) (strlen(ws) - 3), ws);
	/* an xattr to remove, where the file system has user xattrs */
	ro_has_xattr = setxattr(ro_file, "user.pre", "1", 1, 0) == 0;
	ro_flags_before = read_flags(ro_file);
	if (stat(ro_file, &ro_before) < 0) {
		perror(ro_file);
		exit(1);
	}
}

static int fs_check(void)
{
	struct stat st;
	char v[8];
	int bad = 0;

	if (stat(ro_file, &st) < 0 || st.st_ctim.tv_sec != ro_before.st_ctim.tv_sec ||
	    st.st_ctim.tv_nsec != ro_before.st_ctim.tv_nsec) {
		fprintf(stderr, "ESCAPE: the read-only file's metadata changed (ctime)\n");
		bad = 1;
	}
	if (ro_has_xattr && getxattr(ro_file, "user.pre", v, sizeof(v)) != 1) {
		fprintf(stderr, "ESCAPE: the read-only file lost its xattr\n");
		bad = 1;
	}
	if (getxattr(ro_file, "user.sbx", v, sizeof(v)) >= 0) {
		fprintf(stderr, "ESCAPE: the read-only file gained an xattr\n");
		bad = 1;
	}
	if (read_flags(ro_file) != ro_flags_before) {
		fprintf(stderr, "ESCAPE: the read-only file's flags changed\n");
		bad = 1;
	}
	return bad;
}
