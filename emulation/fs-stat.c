/* SPDX-License-Identifier: MIT */
/*
 * Looking at objects without opening them: stat(2), lstat(2), newfstatat(2), statx(2),
 * statfs(2), access(2), faccessat(2), faccessat2(2), readlink(2), readlinkat(2).
 *
 * The supervisor resolves the path, performs the call on the O_PATH fd of the object
 * (fstatat/statx on the pinned parent and name without following; fstatfs on an O_PATH fd,
 * 3.12) and writes the result into the
 * child with process_vm_writev (EmuWriteBack).
 *
 * Deviations from Linux:
 *  - Hidden objects are ENOENT, denied ones EACCES (also for stat: no metadata leaks).
 *  - access(W_OK) in a ro part of the view: EROFS (as on a read-only mount).
 *  - readlink of /proc/PID/{exe,cwd,root,fd/N} answers the virtual path of the target, or
 *    "(unreachable)" (as Linux does outside a chroot) when it is outside the view.
 */
#include "emulation/fs-internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/macros.h"

static int stat_fd_of_child(const EmuRequest *req, int dirfd, int *ret_fd)
{
	int fd = fs_child_fd(req, dirfd);

	if (fd < 0)
		return fd == -ENOENT ? -EBADF : fd;
	*ret_fd = fd;
	return 0;
}

int emu_handle_stat(const EmuRequest *req, EmuDecision *d)
{
	_cleanup_(sbx_resolved_done) SbxResolved res = {.fd = -1, .parent_fd = -1};
	_cleanup_close_ int cfd = -1;
	int dirfd = AT_FDCWD, flags = 0, r, objfd;
	const char *objname = "";
	int objflags = AT_EMPTY_PATH;
	uint64_t path, buf;
	unsigned mask = 0, rflags = SBX_RESOLVE_NO_FD;
	char p[PATH_MAX];
	bool is_statx = false, resolved_stat = false;

	switch (req->nr) {
	case SYS_stat:
		path = req->args[0], buf = req->args[1];
		rflags |= SBX_RESOLVE_FOLLOW;
		break;
	case SYS_lstat:
		path = req->args[0], buf = req->args[1];
		break;
	case SYS_newfstatat:
		dirfd = fs_arg_fd(req->args[0]), path = req->args[1], buf = req->args[2];
		flags = (int) req->args[3];
		break;
	case SYS_statx:
		dirfd = fs_arg_fd(req->args[0]), path = req->args[1], flags = (int) req->args[2];
		mask = (unsigned) req->args[3], buf = req->args[4];
		is_statx = true;
		break;
	default:
		return fs_fail(d, -ENOSYS, NULL);
	}
	if (req->nr == SYS_newfstatat || req->nr == SYS_statx) {
		if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT |
			      (is_statx ? AT_STATX_SYNC_TYPE : 0)))
			return fs_fail(d, -EINVAL, NULL);
		if (!(flags & AT_SYMLINK_NOFOLLOW))
			rflags |= SBX_RESOLVE_FOLLOW;
		if (flags & AT_EMPTY_PATH)
			rflags |= SBX_RESOLVE_EMPTY_PATH;
	}

	/* statx(…, NULL path, AT_EMPTY_PATH) is fstat of the fd (6.11) */
	if (is_statx && !path && (flags & AT_EMPTY_PATH))
		p[0] = 0;
	else {
		r = fs_read_path(req, path, p, sizeof(p));
		if (r < 0)
			return fs_fail(d, r, NULL);
	}

	if (!p[0] && (flags & AT_EMPTY_PATH)) {
		/* fstat of one of the child's own fds (any kind: pipe, socket…): nothing to
		 * resolve, and the fd grants the child nothing new. */
		r = stat_fd_of_child(req, dirfd, &cfd);
		if (r < 0)
			return fs_fail(d, r, NULL);
		objfd = cfd;
	} else {
		bool magic = rflags & SBX_RESOLVE_FOLLOW;

		r = fs_resolve_at(req, dirfd, p, rflags | (magic ? SBX_RESOLVE_KEEP_MAGIC : 0u),
				  &res);
		if (r < 0)
			return fs_fail(d, r, NULL);
		if (magic && res.exists && res.type == S_IFLNK && res.mount &&
		    res.mount->kind == SBX_MOUNT_PROC && res.access != SBX_ACCESS_HIDDEN &&
		    res.access != SBX_ACCESS_DENIED) {
			pid_t pid;
			int n;

			if (sbx_proc_fd_path(res.mount, res.vpath, &pid, &n)) {
				/* /dev/fd/N, /proc/PID/fd/N: the fd's own object, which may
				 * have no path (a pipe of `diff <(…) <(…)`, a socket) */
				cfd = sbx_host_get_fd(fs_host(req), pid, n);
				if (cfd < 0)
					return fs_fail(
						d, cfd == -EBADF || cfd == -ESRCH ? -ENOENT : cfd,
						NULL);
				fs_note(d, &res);
				objfd = cfd;
				goto have_obj;
			}
			/* exe, cwd, root…: the virtual path they map to */
			sbx_resolved_done(&res);
			res = (SbxResolved){.fd = -1, .parent_fd = -1};
			r = fs_resolve_at(req, dirfd, p, rflags, &res);
			if (r < 0)
				return fs_fail(d, r, NULL);
		}
		fs_note(d, &res);
		r = fs_check_read(&res);
		if (r < 0) {
			d->denied =
				res.access == SBX_ACCESS_HIDDEN || res.access == SBX_ACCESS_DENIED;
			return fs_fail(d, r, d->denied ? "hidden or denied by the policy" : NULL);
		}
		/* the resolved name, without following anything again */
		objfd = res.parent_fd;
		objname = res.name;
		objflags = AT_SYMLINK_NOFOLLOW;
		/* the fast path stat'ed that same parent and name (AT_SYMLINK_NOFOLLOW): its
		 * answer is this call's, a system call less. TOCTOU: the object may change
		 * after either stat; a stat is a snapshot, and the pair it names is the one
		 * the view checked either way */
		resolved_stat = res.st_valid;
	}

have_obj:
	if (is_statx) {
		struct statx stx;

		if (syscall(SYS_statx, objfd, objname, objflags | (flags & AT_STATX_SYNC_TYPE),
			    mask, &stx) < 0)
			return fs_fail(d, -errno, NULL);
		r = fs_writeback(d, buf, &stx, sizeof(stx));
	} else {
		struct stat st;

		if (resolved_stat)
			st = res.st;
		else if (fstatat(objfd, objname, &st, objflags) < 0)
			return fs_fail(d, -errno, NULL);
		r = fs_writeback(d, buf, &st, sizeof(st));
	}
	if (r < 0)
		return r;
	return fs_ok(d, 0);
}

int emu_handle_statfs(const EmuRequest *req, EmuDecision *d)
{
	_cleanup_(sbx_resolved_done) SbxResolved res = {.fd = -1, .parent_fd = -1};
	struct statfs sfs;
	int r;

	if (req->nr != SYS_statfs)
		return fs_fail(d, -ENOSYS, NULL);
	r = fs_resolve_arg(req, AT_FDCWD, req->args[0], SBX_RESOLVE_FOLLOW, &res);
	if (r < 0)
		return fs_fail(d, r, NULL);
	fs_note(d, &res);
	r = fs_check_read(&res);
	if (r < 0)
		return fs_fail(d, r, NULL);
	if (fstatfs(res.fd, &sfs) < 0)
		return fs_fail(d, -errno, NULL);
	if (res.access == SBX_ACCESS_RO)
		sfs.f_flags |= ST_RDONLY;
	r = fs_writeback(d, req->args[1], &sfs, sizeof(sfs));
	if (r < 0)
		return r;
	return fs_ok(d, 0);
}

int emu_handle_access(const EmuRequest *req, EmuDecision *d)
{
	_cleanup_(sbx_resolved_done) SbxResolved res = {.fd = -1, .parent_fd = -1};
	int dirfd = AT_FDCWD, mode, flags = 0, r;
	uint64_t path;
	unsigned rflags = SBX_RESOLVE_FOLLOW | SBX_RESOLVE_NO_FD;

	switch (req->nr) {
	case SYS_access:
		path = req->args[0], mode = (int) req->args[1];
		break;
	case SYS_faccessat:
		dirfd = fs_arg_fd(req->args[0]), path = req->args[1], mode = (int) req->args[2];
		break;
	case SYS_faccessat2:
		dirfd = fs_arg_fd(req->args[0]), path = req->args[1], mode = (int) req->args[2];
		flags = (int) req->args[3];
		break;
	default:
		return fs_fail(d, -ENOSYS, NULL);
	}
	if (mode & ~(R_OK | W_OK | X_OK))
		return fs_fail(d, -EINVAL, NULL);
	if (flags & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return fs_fail(d, -EINVAL, NULL);
	if (flags & AT_SYMLINK_NOFOLLOW)
		rflags &= ~(unsigned) SBX_RESOLVE_FOLLOW;
	if (flags & AT_EMPTY_PATH)
		rflags |= SBX_RESOLVE_EMPTY_PATH;
	r = fs_resolve_arg(req, dirfd, path, rflags, &res);
	if (r < 0)
		return fs_fail(d, r, NULL);
	fs_note(d, &res);
	r = fs_check_read(&res);
	if (r < 0) {
		d->denied = res.access != SBX_ACCESS_RW && res.access != SBX_ACCESS_RO;
		return fs_fail(d, r, NULL);
	}
	if ((mode & W_OK) && res.access != SBX_ACCESS_RW &&
	    (res.type == S_IFREG || res.type == S_IFDIR || res.type == S_IFLNK)) {
		d->denied = true;
		return fs_fail(d, -EROFS, "read-only part of the view");
	}
	/* the permission bits themselves: the kernel on the object we resolved, without
	 * following anything again */
	if (syscall(SYS_faccessat2, res.parent_fd, res.name, mode,
		    AT_SYMLINK_NOFOLLOW | (flags & AT_EACCESS)) < 0)
		return fs_fail(d, -errno, NULL);
	return fs_ok(d, 0);
}

int emu_handle_readlink(const EmuRequest *req, EmuDecision *d)
{
	_cleanup_(sbx_resolved_done) SbxResolved res = {.fd = -1, .parent_fd = -1};
	int dirfd = AT_FDCWD, r;
	uint64_t path, buf;
	int64_t size;
	char target[PATH_MAX];
	ssize_t n;

	switch (req->nr) {
	case SYS_readlink:
		path = req->args[0], buf = req->args[1], size = (int) req->args[2];
		break;
	case SYS_readlinkat:
		dirfd = fs_arg_fd(req->args[0]), path = req->args[1], buf = req->args[2];
		size = (int) req->args[3];
		break;
	default:
		return fs_fail(d, -ENOSYS, NULL);
	}
	if (size <= 0)
		return fs_fail(d, -EINVAL, NULL);
	r = fs_resolve_arg(req, dirfd, path, SBX_RESOLVE_EMPTY_PATH | SBX_RESOLVE_NO_FD, &res);
	if (r < 0)
		return fs_fail(d, r, NULL);
	fs_note(d, &res);
	r = fs_check_read(&res);
	if (r < 0)
		return fs_fail(d, r, NULL);
	if (res.type != S_IFLNK)
		return fs_fail(d, -EINVAL, NULL);
	if (res.synthetic_link[0]) {
		n = (ssize_t) strlen(res.synthetic_link);
		memcpy(target, res.synthetic_link, (size_t) n + 1);
	} else {
		n = readlinkat(res.parent_fd, res.name, target, sizeof(target) - 1);
		if (n < 0)
			return fs_fail(d, -errno, NULL);
		target[n] = 0;
	}
	if (res.mount && res.mount->kind == SBX_MOUNT_PROC && target[0] == '/') {
		/* a magic link: its text is a host path; show the virtual one */
		char vp[PATH_MAX];

		if (streq(res.name, "root"))
			snprintf(vp, sizeof(vp), "/");
		else if (sbx_view_vpath_of_host(req->view, target, vp, sizeof(vp), NULL) < 0)
			snprintf(vp, sizeof(vp), "(unreachable)");
		n = (ssize_t) strlen(vp);
		memcpy(target, vp, (size_t) n + 1);
	}
	n = MIN(n, (ssize_t) size);
	n = MIN(n, (ssize_t) EMU_SCRATCH_SIZE);
	r = fs_writeback(d, buf, target, (size_t) n);
	if (r < 0)
		return r;
	return fs_ok(d, n);
}
