/* SPDX-License-Identifier: MIT */
/*
 * Changing or reading attributes by path: chmod(2), fchmodat(2), fchmodat2 (6.6), chown(2),
 * lchown(2), fchownat(2), truncate(2), utime(2), utimes(2), futimesat(2), utimensat(2),
 * setxattr(2) and friends, inotify_add_watch(2); and through an fd: fchmod(2), fchown(2),
 * fsetxattr(2), fremovexattr(2), futimens (utimensat with a NULL path), and the ioctl(2)s
 * that change an inode (FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR, FS_IOC_SETVERSION), all in the
 * view's mode of the file behind the fd (fd_check_change()).
 *
 * The supervisor acts on the object the walk reached, never on a path again:
 *  - chmod, truncate and the xattr calls go through /proc/self/fd/N of the O_PATH fd (the
 *    kernel follows that magic link to the inode itself); the l* xattr calls on a symlink use
 *    /proc/self/fd/<parent>/<name> without following the last component;
 *  - fchownat and utimensat on (parent, name, AT_SYMLINK_NOFOLLOW): the name was resolved
 *    already, so not following it again is exactly right (a swap makes the call act on
 *    the new symlink itself, inside the view).
 *
 * Deviations from Linux:
 *  - Changes in a ro part of the view: EROFS; hidden: ENOENT; denied: EACCES.
 *  - getxattr/listxattr values are limited to 4096 bytes (E2BIG beyond: the scratch space of
 *    a decision); larger values need a larger scratch in common/handler.h.
 *  - inotify_add_watch needs the child's inotify fd (pidfd_getfd through the host's get_fd).
 *  - Changes through an fd of a file outside the view (inherited from outside): EPERM; of an
 *    unlinked file, a pipe or a socket: allowed. FS_IOC_ENABLE_VERITY and
 *    FS_IOC_SET_ENCRYPTION_POLICY: EOPNOTSUPP. fsetxattr values up to 4096 bytes.
 */
#include "emulation/fs-internal.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <linux/fsverity.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include "common/macros.h"
#include "common/util.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

static int deny(EmuDecision *d, int r, const char *why)
{
	d->denied = true;
	return fs_fail(d, r, why);
}

static int fd_check_change(const EmuRequest *req, int cfd, EmuDecision *d);

/* Existing object that the call changes: 0, or the decision is made (1). */
static int check_change(EmuDecision *d, const SbxResolved *res)
{
	int r = fs_check_read(res);

	if (r == 0 && res->mount && res->mount->kind == SBX_MOUNT_DEV) {
		/* the host's device nodes: usable, never changed (even by a root supervisor) */
		deny(d, -EPERM, "device nodes of the view cannot be changed");
		return 1;
	}
	if (r == 0)
		r = fs_check_write(res, false);
	if (r < 0) {
		if (res->access == SBX_ACCESS_RW && r == -ENOENT)
			fs_fail(d, r, NULL);
		else
			deny(d, r, "the policy allows no change here");
		return 1;
	}
	return 0;
}

int emu_handle_chmod(const EmuRequest *req, EmuDecision *d)
{
	_cleanup_(sbx_resolved_done) SbxResolved res = {.fd = -1, .parent_fd = -1};
	int dirfd = AT_FDCWD, flags = 0, r;
	uint64_t path;
	mode_t mode;
	char p[64];

	switch (req->nr) {
	case SYS_chmod:
		path = req->args[0], mode = (mode_t) req->args[1];
		break;
	case SYS_fchmodat:
		dirfd = fs_arg_fd(req->args[0]), path = req->args[1], mode = (mode_t) req->args[2];
		break;
	case SYS_fchmodat2:
		dirfd = fs_arg_fd(req->args[0]), path = req->args[1], mode = (mode_t) req->args[2];
		flags = (int) req->args[3];
		if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
			return fs_fail(d, -EINVAL, NULL);
		break;
	default:
		return fs_fail(d, -ENOSYS, NULL);
	}
	r = fs_resolve_arg(req, dirfd, path,
			   ((flags & AT_SYMLINK_NOFOLLOW) ? 0 : SBX_RESOLVE_FOLLOW) |
				   ((flags & AT_EMPTY_PATH) ? SBX_RESOLVE_EMPTY_PATH : 0),
			   &res);
	if (r < 0)
		return fs_fail(d, r, NULL);
	fs_note(d, &res);
	if (check_change(d, &res))
		return 0;
	if (res.type == S_IFLNK)
		return fs_fail(d, -EOPNOTSUPP, NULL);
	fs_fd_path(res.fd, p);
	if (chmod(p, mode & 07777) < 0)
		return fs_fail(d, -errno, NULL);
	return fs_ok(d, 0);
}

int emu_handle_chown(const EmuRequest *req, EmuDecision *d)
{
	_cleanup_(sbx_resolved_done) SbxResolved res = {.fd = -1, .parent_fd = -1};
	int dirfd = AT_FDCWD, flags = 0, r;
	uint64_t path;
	uid_t uid;
	gid_t gid;
	unsigned rflags = SBX_RESOLVE_FOLLOW | SBX_RESOLVE_NO_FD;

	switch (req->nr) {
	case SYS_chown:
		path = req->args[0], uid = (uid_t) req->args[1], gid = (gid_t) req->args[2];
		break;
	case SYS_lchown:
		path = req->args[0], uid = (uid_t) req->args[1], gid = (gid_t) req->args[2];
		rflags = SBX_RESOLVE_NO_FD;
		break;
	case SYS_fchownat:
		dirfd = fs_arg_fd(req->args[0]), path = req->args[1];
		uid = (uid_t) req->args[2], gid = (gid_t) req->args[3], flags = (int) req->args[4];
		if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
			return fs_fail(d, -EINVAL, NULL);
		if (flags & AT_SYMLINK_NOFOLLOW)
			rflags &= ~(unsigned) SBX_RESOLVE_FOLLOW;
		if (flags & AT_EMPTY_PATH)
			rflags |= SBX_RESOLVE_EMPTY_PATH;
		break;
	default:
		return fs_fail(d, -ENOSYS, NULL);
	}
	r = fs_resolve_arg(req, dirfd, path, rflags, &res);
	if (r < 0)
		return fs_fail(d, r, NULL);
	fs_note(d, &res);
	if (check_change(d, &res))
		return 0;
	if (fchownat(res.parent_fd, res.name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
		return fs_fail(d, -errno, NULL);
	return fs_ok(d, 0);
}

/*
 * The kernel checks the caller's RLIMIT_FSIZE when truncate grows a file (inode_newsize_ok):
 * the file_size and disk budgets are that rlimit (docs/budgets.md). This truncate runs in
 * the supervisor, whose limit is not the caller's, so the check is made here against the
 * caller's limit: EFBIG, or EDQUOT when the limit is the disk budget's. (The kernel would
 * also send SIGXFSZ, which the command ignores unless it restored the default.)
 */
static int fsize_check(const EmuRequest *req, int fd, int64_t length)
{
	struct rlimit rl;
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (length <= st.st_size)
		return 0;
	if (prlimit(req->pid, RLIMIT_FSIZE, NULL, &rl) < 0)
		return -errno; /* fail closed: the caller is gone, or not ours to read */
	if (rl.rlim_cur == RLIM_INFINITY || (uint64_t) length <= rl.rlim_cur)
		return 0;
	if (emu_host_efbig_is_disk(req))
		return -EDQUOT;
	return -EFBIG;
}

int emu_handle_truncate(const EmuRequest *req, EmuDecision *d)
{
	_cleanup_(sbx_resolved_done) SbxResolved res = {.fd = -1, .parent_fd = -1};
	_cleanup_close_ int fd = -1;
	int64_t length = (int64_t) req->args[1];
	char p[64];
	int r;

	if (req->nr != SYS_truncate)
		return fs_fail(d, -ENOSYS, NULL);
	if (length < 0)
		return fs_fail(d, -EINVAL, NULL);
	r = fs_resolve_arg(req, AT_FDCWD, req->args[0], SBX_RESOLVE_FOLLOW, &res);
	if (r < 0)
		return fs_fail(d, r, NULL);
	fs_note(d, &res);
	if (res.exists && res.type == S_IFDIR && res.access >= SBX_ACCESS_RO)
		return fs_fail(d, -EISDIR, NULL);
	if (check_change(d, &res))
		return 0;
	if (res.type != S_IFREG)
		return fs_fail(d, -EINVAL, NULL);
	fs_fd_path(res.fd, p);
	/* O_NONBLOCK: the object was regular a moment ago; if swapped for a FIFO, no wait */
	fd = open(p, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return fs_fail(d, -errno, NULL);
	r = fsize_check(req, fd, length);
	if (r < 0)
		return fs_fail(d, r, NULL);
	if (ftruncate(fd, length) < 0)
		return fs_fail(d, -errno, NULL);
	return fs_ok(d, 0);
}

int emu_handle_utimes(const EmuRequest *req, EmuDecision *d)
{
	_cleanup_(sbx_resolved_done) SbxResolved res = {.fd = -1, .parent_fd = -1};
	struct timespec ts[2];
	bool have_times = false;
	int dirfd = AT_FDCWD, flags = 0, r;
	uint64_t path, times;
	unsigned rflags = SBX_RESOLVE_FOLLOW | SBX_RESOLVE_NO_FD;

	switch (req->nr) {
	case SYS_utime:
		path = req->args[0], times = req->args[1];
		if (times) {
			struct utimbuf ub;

			/* TOCTOU: copied once; the copy is what is applied */
			if (req->mem->read(req->mem, times, &ub, sizeof(ub)) < 0)
				return fs_fail(d, -EFAULT, NULL);
			ts[0] = (struct timespec){ub.actime, 0};
			ts[1] = (struct timespec){ub.modtime, 0};
			have_times = true;
		}
		break;
	case SYS_utimes:
	case SYS_futimesat:
		if (req->nr == SYS_utimes)
			path = req->args[0], times = req->args[1];
		else
			dirfd = fs_arg_fd(req->args[0]), path = req->args[1], times = req->args[2];
		if (times) {
			struct timeval tv[2];

			if (req->mem->read(req->mem, times, tv, sizeof(tv)) < 0)
				return fs_fail(d, -EFAULT, NULL);
			for (int i = 0; i < 2; i++) {
				if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
					return fs_fail(d, -EINVAL, NULL);
				ts[i] = (struct timespec){tv[i].tv_sec, tv[i].tv_usec * 1000};
			}
			have_times = true;
		}
		break;
	case SYS_utimensat:
		dirfd = fs_arg_fd(req->args[0]), path = req->args[1], times = req->args[2];
		flags = (int) req->args[3];
		if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
			return fs_fail(d, -EINVAL, NULL);
		if (flags & AT_SYMLINK_NOFOLLOW)
			rflags &= ~(unsigned) SBX_RESOLVE_FOLLOW;
		if (times) {
			if (req->mem->read(req->mem, times, ts, sizeof(ts)) < 0)
				return fs_fail(d, -EFAULT, NULL);
			have_times = true;
		}
		if (!path) {
			/* futimens(fd): the child's own fd, nothing to resolve */
			_cleanup_close_ int cfd = fs_child_fd(req, dirfd);

			if (cfd < 0)
				return fs_fail(d, cfd == -ENOENT ? -EBADF : cfd, NULL);
			if (fd_check_change(req, cfd, d))
				return 0;
			if (!pidfd_getfd_usable()) {
				/* COMPAT: cfd is an O_PATH reopen (no pidfd_getfd): through its
				 * link, which the kernel checks as it checks the fd (owner, or
				 * write access for the current time); the child's own O_PATH fd
				 * is EBADF, as Linux answers */
				int fl = 0;
				char p[64];

				r = child_fd_info(req->pid, dirfd, NULL, &fl, NULL);
				if (r < 0)
					return fs_fail(d, r, NULL);
				if (fl & O_PATH)
					return fs_fail(d, -EBADF, NULL);
				fs_fd_path(cfd, p);
				if (utimensat(AT_FDCWD, p, have_times ? ts : NULL, 0) < 0)
					return fs_fail(d, -errno, NULL);
				return fs_ok(d, 0);
			}
			if (futimens(cfd, have_times ? ts : NULL) < 0)
				return fs_fail(d, -errno, NULL);
			return fs_ok(d, 0);
		}
		if (flags & AT_EMPTY_PATH)
			rflags |= SBX_RESOLVE_EMPTY_PATH;
		break;
	default:
		return fs_fail(d, -ENOSYS, NULL);
	}
	r = fs_resolve_arg(req, dirfd, path, rflags, &res);
	if (r < 0)
		return fs_fail(d, r, NULL);
	fs_note(d, &res);
	if (check_change(d, &res))
		return 0;
	if (utimensat(res.parent_fd, res.name, have_times ? ts : NULL, AT_SYMLINK_NOFOLLOW) < 0)
		return fs_fail(d, -errno, NULL);
	return fs_ok(d, 0);
}

typedef enum XattrOp { XA_SET, XA_GET, XA_LIST, XA_REMOVE } XattrOp;

int emu_handle_xattr(const EmuRequest *req, EmuDecision *d)
{
	_cleanup_(sbx_resolved_done) SbxResolved res = {.fd = -1, .parent_fd = -1};
	char name[XATTR_NAME_MAX + 1], p[PATH_MAX];
	unsigned char value[EMU_SCRATCH_SIZE];
	bool lvariant = false;
	XattrOp op;
	ssize_t n;
	size_t size;
	int r;

	switch (req->nr) {
	case SYS_lsetxattr:
		lvariant = true;
		/* fall through */
	case SYS_setxattr:
		op = XA_SET;
		break;
	case SYS_lgetxattr:
		lvariant = true;
		/* fall through */
	case SYS_getxattr:
		op = XA_GET;
		break;
	case SYS_llistxattr:
		lvariant = true;
		/* fall through */
	case SYS_listxattr:
		op = XA_LIST;
		break;
	case SYS_lremovexattr:
		lvariant = true;
		/* fall through */
	case SYS_removexattr:
		op = XA_REMOVE;
		break;
	default:
		return fs_fail(d, -ENOSYS, NULL);
	}
	if (op != XA_LIST) {
		r = req->mem->read_string(req->mem, req->args[1], name, sizeof(name));
		if (r < 0)
			return fs_fail(d, r == -ENAMETOOLONG ? -ERANGE : -EFAULT, NULL);
		if (!name[0])
			return fs_fail(d, -ERANGE, NULL);
	}
	size = op == XA_SET || op == XA_GET ? (size_t) req->args[3] : (size_t) req->args[2];
	if (op == XA_SET && size > sizeof(value))
		return fs_fail(d, -E2BIG, "xattr values above 4096 bytes are not emulated");

	r = fs_resolve_arg(req, AT_FDCWD, req->args[0], lvariant ? 0 : SBX_RESOLVE_FOLLOW, &res);
	if (r < 0)
		return fs_fail(d, r, NULL);
	fs_note(d, &res);
	if (op == XA_SET || op == XA_REMOVE) {
		if (check_change(d, &res))
			return 0;
	} else {
		r = fs_check_read(&res);
		if (r < 0) {
			d->denied = res.access != SBX_ACCESS_RW && res.access != SBX_ACCESS_RO;
			return fs_fail(d, r, NULL);
		}
	}
	if (res.type == S_IFLNK)
		(void) snprintf(p, sizeof(p), "/proc/self/fd/%d/%s", res.parent_fd, res.name);
	else
		fs_fd_path(res.fd, p);

	switch (op) {
	case XA_SET:
		/* TOCTOU: the value is copied once and that copy is stored */
		if (size && req->mem->read(req->mem, req->args[2], value, size) < 0)
			return fs_fail(d, -EFAULT, NULL);
		r = res.type == S_IFLNK ? lsetxattr(p, name, value, size, (int) req->args[4])
					: setxattr(p, name, value, size, (int) req->args[4]);
		return r < 0 ? fs_fail(d, -errno, NULL) : fs_ok(d, 0);
	case XA_REMOVE:
		r = res.type == S_IFLNK ? lremovexattr(p, name) : removexattr(p, name);
		return r < 0 ? fs_fail(d, -errno, NULL) : fs_ok(d, 0);
	case XA_GET:
		n = res.type == S_IFLNK ? lgetxattr(p, name, value, MIN(size, sizeof(value)))
					: getxattr(p, name, value, MIN(size, sizeof(value)));
		break;
	case XA_LIST:
		n = res.type == S_IFLNK ? llistxattr(p, (char *) value, MIN(size, sizeof(value)))
					: listxattr(p, (char *) value, MIN(size, sizeof(value)));
		break;
	default:
		return -EINVAL;
	}
	if (n < 0) {
		if (errno == ERANGE && size > sizeof(value))
			return fs_fail(d, -E2BIG, "xattr values above 4096 bytes are not emulated");
		return fs_fail(d, -errno, NULL);
	}
	if (size && n > 0) {
		r = fs_writeback(d, op == XA_GET ? req->args[2] : req->args[1], value, (size_t) n);
		if (r < 0)
			return r;
	}
	return fs_ok(d, n);
}

int emu_handle_inotify_add_watch(const EmuRequest *req, EmuDecision *d)
{
	_cleanup_(sbx_resolved_done) SbxResolved res = {.fd = -1, .parent_fd = -1};
	_cleanup_close_ int ifd = -1;
	uint32_t mask = (uint32_t) req->args[2];
	unsigned rflags = SBX_RESOLVE_FOLLOW;
	char p[PATH_MAX];
	int r, wd;

	if (req->nr != SYS_inotify_add_watch)
		return fs_fail(d, -ENOSYS, NULL);
	ifd = fs_child_fd(req, fs_arg_fd(req->args[0]));
	if (ifd < 0)
		return fs_fail(d, ifd == -ENOENT ? -EBADF : ifd, NULL);
	if (mask & IN_DONT_FOLLOW)
		rflags = 0;
	if (mask & IN_ONLYDIR)
		rflags |= SBX_RESOLVE_DIRECTORY;
	r = fs_resolve_arg(req, AT_FDCWD, req->args[1], rflags, &res);
	if (r < 0)
		return fs_fail(d, r, NULL);
	fs_note(d, &res);
	r = fs_check_read(&res);
	if (r < 0)
		return fs_fail(d, r, NULL);
	if (res.type == S_IFLNK)
		(void) snprintf(p, sizeof(p), "/proc/self/fd/%d/%s", res.parent_fd, res.name);
	else {
		fs_fd_path(res.fd, p);
		mask &= ~(uint32_t) IN_DONT_FOLLOW; /* follow the magic link to the object */
	}
	/* The watch is added to the child's inotify instance (the dup shares it); events name
	 * entries relative to the watched directory, so no host path reaches the child. */
	wd = inotify_add_watch(ifd, p, mask);
	if (wd < 0)
		return fs_fail(d, -errno, NULL);
	return fs_ok(d, wd);
}

/*
 * Changes through a file descriptor (fchmod, fchown, fsetxattr, fremovexattr, futimens, the
 * inode-changing ioctls): the child holds the fd, so there is no path to resolve, but the
 * file behind it still lies in some part of the view, and a read-only fd of a file in a ro
 * mount must not change it (issue 24, item 5: the supervisor opened that file from the host,
 * where nothing is read-only). cfd is the supervisor's duplicate of the child's fd; the call
 * is then made on cfd, the same open file description, so another thread cannot swap the
 * fd between the check and the call. Returns 0 to go on, 1 when d holds the refusal.
 */
static int fd_check_change(const EmuRequest *req, int cfd, EmuDecision *d)
{
	const SbxMount *m = NULL;
	char vp[PATH_MAX];
	struct stat st;
	int r;

	/* The view in the kernel: the fd's file is on the namespace's own mount, read-only
	 * where the view is, and the call on the duplicate meets that mount's flags. */
	if (sbx_view_kernel_paths(req->view))
		return 0;
	if (fstat(cfd, &st) < 0)
		return fs_fail(d, -errno, NULL) + 1;
	/* pipes, sockets, anonymous inodes: outside every mount, nothing of the host's */
	if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || (st.st_mode & S_IFMT) == 0)
		return 0;
	r = sbx_view_vpath_of_fd(req->view, cfd, vp, sizeof(vp), &m);
	if (r == -ENOENT && st.st_nlink == 0)
		return 0; /* unlinked (O_TMPFILE, deleted): no name anyone else reaches it by */
	if (r < 0)
		return deny(d, -EPERM, "the file behind the fd is outside the view") + 1;
	if (m && m->kind == SBX_MOUNT_DEV)
		return deny(d, -EPERM, "device nodes of the view cannot be changed") + 1;
	switch (sbx_view_access(req->view, vp, NULL)) {
	case SBX_ACCESS_RW:
		return 0;
	case SBX_ACCESS_RO:
		return deny(d, -EROFS, "read-only part of the view") + 1;
	default:
		return deny(d, -EACCES, "the policy allows no change here") + 1;
	}
}

int emu_handle_fd_attr(const EmuRequest *req, EmuDecision *d)
{
	_cleanup_close_ int cfd = -1;
	char name[XATTR_NAME_MAX + 1];
	unsigned char value[EMU_SCRATCH_SIZE];
	size_t size = 0;
	int r;

	if (req->nr == SYS_fsetxattr || req->nr == SYS_fremovexattr) {
		/* TOCTOU: name and value are copied once and the copies applied */
		r = req->mem->read_string(req->mem, req->args[1], name, sizeof(name));
		if (r < 0)
			return fs_fail(d, r == -ENAMETOOLONG ? -ERANGE : -EFAULT, NULL);
		if (!name[0])
			return fs_fail(d, -ERANGE, NULL);
	}
	if (req->nr == SYS_fsetxattr) {
		size = (size_t) req->args[3];
		if (size > sizeof(value))
			return fs_fail(d, size > XATTR_SIZE_MAX ? -E2BIG : -ENOSPC,
				       "xattr value over the supervisor's copy limit");
		if (size > 0 && req->mem->read(req->mem, req->args[2], value, size) < 0)
			return fs_fail(d, -EFAULT, NULL);
	}
	cfd = fs_child_fd(req, (int) req->args[0]);
	if (cfd < 0)
		return fs_fail(d, cfd == -ENOENT ? -EBADF : cfd, NULL);
	if (fd_check_change(req, cfd, d))
		return 0;
	if (!pidfd_getfd_usable()) {
		/* COMPAT: cfd is an O_PATH reopen (no pidfd_getfd in a container's profile):
		 * the same calls through its /proc/self/fd link; the child's own O_PATH fd is
		 * EBADF, as Linux answers */
		int fl = 0;
		char p[64];

		r = child_fd_info(req->pid, (int) req->args[0], NULL, &fl, NULL);
		if (r < 0)
			return fs_fail(d, r, NULL);
		if (fl & O_PATH)
			return fs_fail(d, -EBADF, NULL);
		fs_fd_path(cfd, p);
		switch (req->nr) {
		case SYS_fchmod:
			r = chmod(p, (mode_t) req->args[1] & 07777);
			break;
		case SYS_fchown:
			r = fchownat(cfd, "", (uid_t) req->args[1], (gid_t) req->args[2],
				     AT_EMPTY_PATH);
			break;
		case SYS_fsetxattr:
			r = setxattr(p, name, value, size, (int) req->args[4]);
			break;
		case SYS_fremovexattr:
			r = removexattr(p, name);
			break;
		default:
			return fs_fail(d, -ENOSYS, NULL);
		}
		return r < 0 ? fs_fail(d, -errno, NULL) : fs_ok(d, 0);
	}
	switch (req->nr) {
	case SYS_fchmod:
		r = fchmod(cfd, (mode_t) req->args[1] & 07777);
		break;
	case SYS_fchown:
		r = fchown(cfd, (uid_t) req->args[1], (gid_t) req->args[2]);
		break;
	case SYS_fsetxattr:
		r = fsetxattr(cfd, name, value, size, (int) req->args[4]);
		break;
	case SYS_fremovexattr:
		r = fremovexattr(cfd, name);
		break;
	default:
		return fs_fail(d, -ENOSYS, NULL);
	}
	if (r < 0)
		return fs_fail(d, -errno, NULL);
	return fs_ok(d, 0);
}

bool emu_fs_ioctl_changes(unsigned cmd)
{
	switch (cmd) {
	case FS_IOC_SETFLAGS:
	case FS_IOC32_SETFLAGS:
	case FS_IOC_FSSETXATTR:
	case FS_IOC_SETVERSION:
	case FS_IOC32_SETVERSION:
	case FS_IOC_ENABLE_VERITY:
	case FS_IOC_SET_ENCRYPTION_POLICY:
		return true;
	default:
		return false;
	}
}

int emu_handle_fs_ioctl(const EmuRequest *req, EmuDecision *d)
{
	_cleanup_close_ int cfd = -1;
	unsigned cmd = (unsigned) req->args[1];
	union {
		int i;
		struct fsxattr fsx;
	} arg = {};
	size_t len;

	switch (cmd) {
	case FS_IOC_SETFLAGS: /* the kernel reads an int, whatever the name says */
	case FS_IOC32_SETFLAGS:
	case FS_IOC_SETVERSION:
	case FS_IOC32_SETVERSION:
		len = sizeof(arg.i);
		break;
	case FS_IOC_FSSETXATTR:
		len = sizeof(arg.fsx);
		break;
	default:
		/* fs-verity and encryption policies take structures that point further into
		 * child memory, and make a file permanently different: not in the sandbox
		 * (what a file system without the feature answers) */
		return deny(d, -EOPNOTSUPP, "fs-verity and encryption ioctls are not supported");
	}
	/* TOCTOU: the argument is copied once and the call made with the copy */
	if (req->mem->read(req->mem, req->args[2], &arg, len) < 0)
		return fs_fail(d, -EFAULT, NULL);
	cfd = fs_child_fd(req, (int) req->args[0]);
	if (cfd < 0)
		return fs_fail(d, cfd == -ENOENT ? -EBADF : cfd, NULL);
	if (fd_check_change(req, cfd, d))
		return 0;
	if (!pidfd_getfd_usable()) {
		/* COMPAT: cfd is an O_PATH reopen (no pidfd_getfd), on which an ioctl is EBADF:
		 * a reopen with the child's access mode, of a regular file or a directory only
		 * (fd_check_change() refused device nodes; the flags ioctls are ENOTTY on pipes
		 * and sockets anyway). These ioctls act on the inode, which the reopen shares. */
		struct stat st;
		char p[64];
		int fl = 0, r2 = child_fd_info(req->pid, (int) req->args[0], NULL, &fl, NULL);

		if (r2 < 0)
			return fs_fail(d, r2, NULL);
		if (fl & O_PATH)
			return fs_fail(d, -EBADF, NULL);
		if (fstat(cfd, &st) < 0)
			return fs_fail(d, -errno, NULL);
		if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
			return fs_fail(d, -ENOTTY, NULL);
		/* TOCTOU: reopened from cfd, the object checked, not from the child's fd number,
		 * which another thread may have swapped meanwhile */
		fs_fd_path(cfd, p);
		r2 = open(p, (fl & O_ACCMODE) | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
				     (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0));
		if (r2 < 0)
			return fs_fail(d, -errno, NULL);
		(void) close(cfd);
		cfd = r2;
	}
	if (ioctl(cfd, cmd, &arg) < 0)
		return fs_fail(d, -errno, NULL);
	return fs_ok(d, 0);
}
