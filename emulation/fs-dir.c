/* SPDX-License-Identifier: MIT */
/*
 * The working directory and listings: chdir(2), getcwd(2), getdents64(2).
 *
 *  - chdir is checked (ENOENT, ENOTDIR, EACCES, hidden, denied). An identity-mapped
 *    directory is then continued in the kernel; see the TOCTOU note below for why that is
 *    safe. A translated one needs the ptrace rewrite (DESIGN "Where ptrace is needed"): the
 *    handler fills decision.host_path and fails with EACCES unless the tracer rewrites.
 *  - getcwd answers the virtual path of the cwd (ENOENT when it is outside the view, as
 *    Linux does for an unlinked cwd).
 *  - getdents64 reads the child's directory through a dup of its fd (same open file
 *    description, so the offset moves for the child too) and removes hidden entries.
 *    COMPAT: where pidfd_getfd is refused (a container's profile, issue 19) there is no such
 *    dup: the directory is reopened through /proc/PID/fd/N at the child's offset (fdinfo
 *    "pos:"), read there, and the reopened description replaces the child's fd N
 *    (ADDFD_FLAG_SETFD) so that the child goes on from the new offset. Deviation: a dup of
 *    that fd the child made earlier no longer shares its offset.
 */
#include "emulation/fs-internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/util.h"

int emu_fs_cwd_vpath(const EmuRequest *req, char *ret, size_t size)
{
	_cleanup_close_ int fd = fs_child_fd(req, AT_FDCWD);

	if (fd < 0)
		return fd;
	return sbx_view_vpath_of_fd(req->view, fd, ret, size, NULL);
}

int emu_fs_chdir_check(const EmuRequest *req, const char *path, char *ret_host, size_t size,
		       EmuDecision *d)
{
	_cleanup_(sbx_resolved_done) SbxResolved res = {.fd = -1, .parent_fd = -1};
	int r;

	r = fs_resolve_at(req, AT_FDCWD, path,
			  SBX_RESOLVE_FOLLOW | SBX_RESOLVE_DIRECTORY | SBX_RESOLVE_NO_FD, &res);
	if (r < 0)
		return r;
	fs_note(d, &res);
	r = fs_check_read(&res);
	if (r < 0) {
		d->denied = res.access == SBX_ACCESS_HIDDEN || res.access == SBX_ACCESS_DENIED;
		return r;
	}
	if (syscall(SYS_faccessat2, res.parent_fd, res.name, X_OK, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (fs_kernel_same(req, AT_FDCWD, path, res.vpath, res.host_path)) {
		ret_host[0] = 0;
		return 0;
	}
	if (snprintf(ret_host, size, "%s", res.host_path) >= (int) size)
		return -ENAMETOOLONG;
	return 0;
}

int emu_handle_chdir(const EmuRequest *req, EmuDecision *d)
{
	char path[PATH_MAX], host[PATH_MAX];
	int r;

	if (req->nr != SYS_chdir)
		return fs_fail(d, -ENOSYS, NULL);
	r = fs_read_path(req, req->args[0], path, sizeof(path));
	if (r < 0)
		return fs_fail(d, r, NULL);
	r = emu_fs_chdir_check(req, path, host, sizeof(host), d);
	if (r < 0)
		return fs_fail(d, r, NULL);
	if (!host[0]) {
		/* TOCTOU: continuing lets the kernel re-read the path, which the child may have
		 * rewritten. That is safe here: the cwd grants nothing by itself, since every
		 * relative path is resolved by mapping the cwd back into the view (a cwd outside
		 * it resolves nothing, EACCES) and hidden ancestors still hide. */
		d->verdict = EMU_CONTINUE;
		return 0;
	}
	d->denied = true;
	return fs_fail(d, -EACCES, "chdir to a translated directory needs ptrace");
}

int emu_handle_getcwd(const EmuRequest *req, EmuDecision *d)
{
	char vp[PATH_MAX];
	size_t len, size = (size_t) req->args[1];
	int r;

	if (req->nr != SYS_getcwd)
		return fs_fail(d, -ENOSYS, NULL);
	r = emu_fs_cwd_vpath(req, vp, sizeof(vp));
	if (r < 0)
		return fs_fail(d, r == -EXDEV ? -ENOENT : r, NULL);
	len = strlen(vp) + 1;
	if (size < len)
		return fs_fail(d, -ERANGE, NULL);
	r = fs_writeback(d, req->args[0], vp, len);
	if (r < 0)
		return r;
	(void) snprintf(d->path, sizeof(d->path), "%s", vp);
	return fs_ok(d, (int64_t) len);
}

/* *fd: an O_PATH reopen of the child's directory fd; replaced by a readable one at the
 * child's offset, which d will install in place of the child's fd. */
static int reopen_at_offset(const EmuRequest *req, int *fd, EmuDecision *d)
{
	int cfd = fs_arg_fd(req->args[0]), flags, nfd;
	struct stat st;
	uint64_t ino;
	int64_t pos;
	char p[64];
	int r;

	/* TOCTOU: fdinfo is read after the reopen; the same inode proves that both name the
	 * same directory (the child may have swapped fd N in between: then it is EBADF, as if
	 * that close had come first). The listing is filtered on our description. */
	r = child_fd_info(req->pid, cfd, &pos, &flags, &ino);
	if (r < 0)
		return r;
	if (fstat(*fd, &st) < 0)
		return -errno;
	if (st.st_ino != ino)
		return -EBADF;
	if ((flags & O_PATH) || (flags & O_ACCMODE) == O_WRONLY)
		return -EBADF;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	fs_fd_path(*fd, p);
	nfd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (flags & O_NONBLOCK));
	if (nfd < 0)
		return -errno;
	if (pos != 0 && lseek(nfd, pos, SEEK_SET) < 0) {
		r = -errno;
		(void) close(nfd);
		return r;
	}
	(void) close(*fd);
	*fd = nfd;
	d->inject_setfd = cfd;
	d->inject_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
	return 0;
}

int emu_handle_getdents(const EmuRequest *req, EmuDecision *d)
{
	_cleanup_close_ int fd = -1;
	unsigned char buf[EMU_SCRATCH_SIZE];
	size_t count = (size_t) (unsigned) req->args[2];
	char vp[PATH_MAX];
	bool mapped;
	long n;
	int r;

	if (req->nr != SYS_getdents64)
		return fs_fail(d, -ENOSYS, NULL);
	fd = fs_child_fd(req, fs_arg_fd(req->args[0]));
	if (fd < 0)
		return fs_fail(d, fd == -ENOENT ? -EBADF : fd, NULL);
	if (!pidfd_getfd_usable()) {
		r = reopen_at_offset(req, &fd, d);
		if (r != 0)
			return r < 0 ? fs_fail(d, r, NULL) : 0;
	}
	mapped = sbx_view_vpath_of_fd(req->view, fd, vp, sizeof(vp), NULL) >= 0;
	count = MIN(count, sizeof(buf));
	for (;;) {
		n = syscall(SYS_getdents64, fd, buf, count);
		if (n < 0)
			return fs_fail(d, -errno, NULL);
		if (n == 0 || !mapped)
			break;
		n = (long) sbx_view_filter_dirents(req->view, vp, req->pid, req->known_tgid, buf,
						   (size_t) n);
		if (n > 0)
			break;
		/* everything in this batch was hidden: an empty answer would mean the end */
	}
	if (mapped)
		(void) snprintf(d->path, sizeof(d->path), "%s", vp);
	if (d->inject_setfd >= 0)
		d->inject_fd = TAKE_FD(fd);
	if (n > 0) {
		r = fs_writeback(d, req->args[1], buf, (size_t) n);
		if (r < 0)
			return r;
	}
	return fs_ok(d, n);
}
