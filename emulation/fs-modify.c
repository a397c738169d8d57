/* SPDX-License-Identifier: MIT */
/*
 * Changing directory entries: mkdir(2), mkdirat(2), mknod(2), mknodat(2), rmdir(2),
 * unlink(2), unlinkat(2), rename(2), renameat(2), renameat2(2), link(2), linkat(2),
 * symlink(2), symlinkat(2).
 *
 * Every call is made by the supervisor on (pinned parent fd, single name), so it acts in the
 * directory the walk reached, never on a path the child can still change.
 *
 * Deviations from Linux:
 *  - mknod: regular files, FIFOs and sockets only; device nodes EPERM (as for an
 *    unprivileged user), whatever the supervisor's privileges.
 *  - Mount points, skeleton directories and /dev nodes cannot be removed or renamed: EBUSY,
 *    as for mount points on Linux.
 *  - rename/link across two mounts of the view: EXDEV, even when the host sources share a
 *    filesystem. Both names must be writable in the view; a hard link needs write access to
 *    its source too (else a ro rule could be bypassed through the new name: EPERM).
 *  - linkat(AT_EMPTY_PATH): ENOENT (what Linux answers without CAP_DAC_READ_SEARCH).
 *  - Rules bind names, not inodes: renaming a directory moves what is below it out of the
 *    reach of rules written for the old names (docs/filesystem.md).
 */
#include "emulation/fs-internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/macros.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
#ifndef RENAME_WHITEOUT
#define RENAME_WHITEOUT (1 << 2)
#endif

static int deny(EmuDecision *d, int r, const char *why)
{
	d->denied = true;
	return fs_fail(d, r, why);
}

/* The checks of a name about to be created: 0 or a decision was made (returns 1). A new
 * inode (allocates: not a hard link) fails with EDQUOT once the disk budget is used up. */
static int check_create(const EmuRequest *req, EmuDecision *d, const SbxResolved *res,
			bool allocates)
{
	int r;

	if (res->access == SBX_ACCESS_HIDDEN) {
		deny(d, -EACCES, "hidden by the policy");
		return 1;
	}
	if (res->exists || res->dot || res->fixed) {
		fs_fail(d, -EEXIST, NULL);
		return 1;
	}
	r = fs_check_write(res, true);
	if (r < 0) {
		deny(d, r, "the policy allows no writes here");
		return 1;
	}
	if (allocates && emu_host_disk_full(req)) {
		deny(d, -EDQUOT, "the disk budget is used up");
		return 1;
	}
	return 0;
}

/* The checks of an existing name about to be removed or renamed. */
static int check_remove(EmuDecision *d, const SbxResolved *res)
{
	int r = fs_check_read(res);

	if (r < 0) {
		if (res->access == SBX_ACCESS_HIDDEN || res->access == SBX_ACCESS_DENIED)
			deny(d, r, "hidden or denied by the policy");
		else
			fs_fail(d, r, NULL);
		return 1;
	}
	if (res->fixed) {
		deny(d, -EBUSY, "a mount point, skeleton directory or device of the view");
		return 1;
	}
	r = fs_check_write(res, false);
	if (r < 0) {
		deny(d, r, "the policy allows no writes here");
		return 1;
	}
	return 0;
}

int emu_handle_mkdir(const EmuRequest *req, EmuDecision *d)
{
	_cleanup_(sbx_resolved_done) SbxResolved res = {.fd = -1, .parent_fd = -1};
	int dirfd = AT_FDCWD, r, um;
	uint64_t path;
	mode_t mode;
	dev_t dev = 0;
	bool is_mknod = false;

	switch (req->nr) {
	case SYS_mkdir:
		path = req->args[0], mode = (mode_t) req->args[1];
		break;
	case SYS_mkdirat:
		dirfd = fs_arg_fd(req->args[0]), path = req->args[1], mode = (mode_t) req->args[2];
		break;
	case SYS_mknod:
		path = req->args[0], mode = (mode_t) req->args[1], dev = (dev_t) req->args[2];
		is_mknod = true;
		break;
	case SYS_mknodat:
		dirfd = fs_arg_fd(req->args[0]), path = req->args[1], mode = (mode_t) req->args[2];
		dev = (dev_t) req->args[3];
		is_mknod = true;
		break;
	default:
		return fs_fail(d, -ENOSYS, NULL);
	}
	if (is_mknod) {
		switch (mode & S_IFMT) {
		case 0:
			mode |= S_IFREG;
			break;
		case S_IFREG:
		case S_IFIFO:
		case S_IFSOCK:
			break;
		case S_IFCHR:
		case S_IFBLK:
			return deny(d, -EPERM, "device nodes cannot be created in the sandbox");
		default:
			return fs_fail(d, -EINVAL, NULL);
		}
	}
	r = fs_resolve_arg(req, dirfd, path, SBX_RESOLVE_CREATE | SBX_RESOLVE_NO_FD, &res);
	if (r < 0)
		return fs_fail(d, r, NULL);
	fs_note(d, &res);
	if (check_create(req, d, &res, true))
		return 0;
	if (is_mknod && res.trailing_slash)
		return fs_fail(d, -ENOENT, NULL);
	um = fs_child_umask(req);
	if (um < 0)
		return um;
	if (is_mknod)
		r = mknodat(res.parent_fd, res.name,
			    (mode & S_IFMT) | (mode & 07777 & ~(mode_t) um), 0);
	else
		r = mkdirat(res.parent_fd, res.name, mode & 07777 & ~(mode_t) um);
	(void) dev;
	if (r < 0)
		return fs_fail(d, -errno, NULL);
	(void) fs_fix_mode(req, -1, res.parent_fd, res.name, mode & 07777 & ~(mode_t) um);
	return fs_ok(d, 0);
}

int emu_handle_unlink(const EmuRequest *req, EmuDecision *d)
{
	_cleanup_(sbx_resolved_done) SbxResolved res = {.fd = -1, .parent_fd = -1};
	int dirfd = AT_FDCWD, flags = 0, r;
	uint64_t path;

	switch (req->nr) {
	case SYS_unlink:
		path = req->args[0];
		break;
	case SYS_rmdir:
		path = req->args[0], flags = AT_REMOVEDIR;
		break;
	case SYS_unlinkat:
		dirfd = fs_arg_fd(req->args[0]), path = req->args[1], flags = (int) req->args[2];
		if (flags & ~AT_REMOVEDIR)
			return fs_fail(d, -EINVAL, NULL);
		break;
	default:
		return fs_fail(d, -ENOSYS, NULL);
	}
	r = fs_resolve_arg(req, dirfd, path, SBX_RESOLVE_NO_FD, &res);
	if (r < 0)
		return fs_fail(d, r, NULL);
	fs_note(d, &res);
	if (res.dot && res.exists && (flags & AT_REMOVEDIR))
		return fs_fail(d, streq(res.vpath, "/") ? -EBUSY : -EINVAL, NULL);
	if (res.dot && res.exists)
		return fs_fail(d, -EISDIR, NULL);
	if (check_remove(d, &res))
		return 0;
	if (!(flags & AT_REMOVEDIR) && res.type == S_IFDIR)
		return fs_fail(d, -EISDIR, NULL);
	if ((flags & AT_REMOVEDIR) && res.type != S_IFDIR)
		return fs_fail(d, -ENOTDIR, NULL);
	if (unlinkat(res.parent_fd, res.name, flags) < 0)
		return fs_fail(d, -errno, NULL);
	return fs_ok(d, 0);
}

int emu_handle_rename(const EmuRequest *req, EmuDecision *d)
{
	_cleanup_(sbx_resolved_done) SbxResolved a = {.fd = -1, .parent_fd = -1};
	_cleanup_(sbx_resolved_done) SbxResolved b = {.fd = -1, .parent_fd = -1};
	int olddir = AT_FDCWD, newdir = AT_FDCWD, r;
	uint64_t oldp, newp;
	unsigned flags = 0;

	switch (req->nr) {
	case SYS_rename:
		oldp = req->args[0], newp = req->args[1];
		break;
	case SYS_renameat:
		olddir = fs_arg_fd(req->args[0]), oldp = req->args[1];
		newdir = fs_arg_fd(req->args[2]), newp = req->args[3];
		break;
	case SYS_renameat2:
		olddir = fs_arg_fd(req->args[0]), oldp = req->args[1];
		newdir = fs_arg_fd(req->args[2]), newp = req->args[3];
		flags = (unsigned) req->args[4];
		break;
	default:
		return fs_fail(d, -ENOSYS, NULL);
	}
	if (flags & ~(unsigned) (RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT))
		return fs_fail(d, -EINVAL, NULL);
	if ((flags & RENAME_EXCHANGE) && (flags & (RENAME_NOREPLACE | RENAME_WHITEOUT)))
		return fs_fail(d, -EINVAL, NULL);

	r = fs_resolve_arg(req, olddir, oldp, SBX_RESOLVE_NO_FD, &a);
	if (r < 0)
		return fs_fail(d, r, NULL);
	fs_note(d, &a);
	r = fs_resolve_arg(req, newdir, newp,
			   SBX_RESOLVE_NO_FD | ((flags & RENAME_EXCHANGE) ? 0 : SBX_RESOLVE_CREATE),
			   &b);
	if (r < 0)
		return fs_fail(d, r, NULL);
	if (a.dot || b.dot)
		return fs_fail(d, -EBUSY, NULL);
	if (check_remove(d, &a))
		return 0;
	if (b.access == SBX_ACCESS_HIDDEN)
		return deny(d, -EACCES, "hidden by the policy");
	if (b.exists || (flags & RENAME_EXCHANGE)) {
		if (check_remove(d, &b))
			return 0;
	} else if (check_create(req, d, &b, false))
		return 0;
	if (a.mount != b.mount)
		return fs_fail(d, -EXDEV, "rename across mounts of the view");
	if (syscall(SYS_renameat2, a.parent_fd, a.name, b.parent_fd, b.name, flags) < 0)
		return fs_fail(d, -errno, NULL);
	return fs_ok(d, 0);
}

int emu_handle_link(const EmuRequest *req, EmuDecision *d)
{
	_cleanup_(sbx_resolved_done) SbxResolved a = {.fd = -1, .parent_fd = -1};
	_cleanup_(sbx_resolved_done) SbxResolved b = {.fd = -1, .parent_fd = -1};
	int olddir = AT_FDCWD, newdir = AT_FDCWD, flags = 0, r;
	uint64_t oldp, newp;

	switch (req->nr) {
	case SYS_link:
		oldp = req->args[0], newp = req->args[1];
		break;
	case SYS_linkat:
		olddir = fs_arg_fd(req->args[0]), oldp = req->args[1];
		newdir = fs_arg_fd(req->args[2]), newp = req->args[3];
		flags = (int) req->args[4];
		break;
	default:
		return fs_fail(d, -ENOSYS, NULL);
	}
	if (flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH))
		return fs_fail(d, -EINVAL, NULL);
	if (flags & AT_EMPTY_PATH)
		return deny(d, -ENOENT, "linkat(AT_EMPTY_PATH) is not allowed in the sandbox");

	r = fs_resolve_arg(
		req, olddir, oldp,
		SBX_RESOLVE_NO_FD | ((flags & AT_SYMLINK_FOLLOW) ? SBX_RESOLVE_FOLLOW : 0), &a);
	if (r < 0)
		return fs_fail(d, r, NULL);
	fs_note(d, &a);
	r = fs_resolve_arg(req, newdir, newp, SBX_RESOLVE_CREATE | SBX_RESOLVE_NO_FD, &b);
	if (r < 0)
		return fs_fail(d, r, NULL);
	r = fs_check_read(&a);
	if (r < 0)
		return fs_fail(d, r, NULL);
	if (a.type == S_IFDIR)
		return fs_fail(d, -EPERM, NULL);
	if (a.mount != b.mount || a.fixed)
		return fs_fail(d, -EXDEV, "hard link across mounts of the view");
	if (a.access != SBX_ACCESS_RW)
		return deny(d, a.mount && a.mount->mode == MOUNT_RO ? -EROFS : -EPERM,
			    "hard link to a file the policy makes read-only");
	if (check_create(req, d, &b, false))
		return 0;
	if (linkat(a.parent_fd, a.name, b.parent_fd, b.name, 0) < 0)
		return fs_fail(d, -errno, NULL);
	return fs_ok(d, 0);
}

int emu_handle_symlink(const EmuRequest *req, EmuDecision *d)
{
	_cleanup_(sbx_resolved_done) SbxResolved b = {.fd = -1, .parent_fd = -1};
	int newdir = AT_FDCWD, r;
	uint64_t targetp, newp;
	char target[PATH_MAX];

	switch (req->nr) {
	case SYS_symlink:
		targetp = req->args[0], newp = req->args[1];
		break;
	case SYS_symlinkat:
		targetp = req->args[0], newdir = fs_arg_fd(req->args[1]), newp = req->args[2];
		break;
	default:
		return fs_fail(d, -ENOSYS, NULL);
	}
	/* TOCTOU: the target text is copied once and stored as is; it is a virtual path that
	 * every later lookup resolves inside the view. */
	r = fs_read_path(req, targetp, target, sizeof(target));
	if (r < 0)
		return fs_fail(d, r, NULL);
	if (!target[0])
		return fs_fail(d, -ENOENT, NULL);
	r = fs_resolve_arg(req, newdir, newp, SBX_RESOLVE_CREATE | SBX_RESOLVE_NO_FD, &b);
	if (r < 0)
		return fs_fail(d, r, NULL);
	fs_note(d, &b);
	if (check_create(req, d, &b, true))
		return 0;
	if (symlinkat(target, b.parent_fd, b.name) < 0)
		return fs_fail(d, -errno, NULL);
	return fs_ok(d, 0);
}
