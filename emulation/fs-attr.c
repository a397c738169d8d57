/* SPDX-License-Identifier: MIT */
/*
 * Changing or reading attributes by path: chmod(2), fchmodat(2), fchmodat2 (6.6), chown(2),
 * lchown(2), fchownat(2), truncate(2), utime(2), utimes(2), futimesat(2), utimensat(2),
 * setxattr(2) and friends, inotify_add_watch(2).
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
 *    a decision); larger values need a larger scratch in emu.h.
 *  - inotify_add_watch needs the child's inotify fd (pidfd_getfd through the view's hooks).
 */
#include "emulation/fs-internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include "common/macros.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

static int deny(EmuDecision *d, int r, const char *why)
{
	d->denied = true;
	return fs_fail(d, r, why);
}

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
	const EmuProcessOps *ops = emu_process_ops(req);
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
	if (ops && ops->efbig_is_disk && ops->efbig_is_disk(req->tracer))
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
