/* SPDX-License-Identifier: MIT */
/* Shared prologue of the path handlers: copy the path, find the start directory, resolve. */
#include "emulation/fs-internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/macros.h"

int fs_read_path(const EmuRequest *req, uint64_t addr, char *buf, size_t size)
{
	int r;

	if (!addr)
		return -EFAULT;
	/* TOCTOU: the string is copied once; everything after works on this copy, and the
	 * operation itself is done by the supervisor, so a later rewrite changes nothing. */
	r = req->mem->read_string(req->mem, addr, buf, size);
	if (r < 0)
		return r == -ENAMETOOLONG ? -ENAMETOOLONG : -EFAULT;
	return 0;
}

int fs_child_fd(const EmuRequest *req, int fd)
{
	return sbx_host_get_fd(fs_host(req), req->pid, fd);
}

int fs_child_umask(const EmuRequest *req)
{
	return sbx_host_get_umask(fs_host(req), req->pid);
}

int fs_resolve_at(const EmuRequest *req, int dirfd, const char *path, unsigned flags,
		  SbxResolved *ret)
{
	_cleanup_close_ int fd = -1;
	char vp[PATH_MAX];
	SbxLookup l = {
		.path = path,
		.dirfd = -1,
		.tid = req->pid,
		.tgid = req->known_tgid, /* 0: the walk asks when it needs it */
		.flags = flags,
	};
	const EmuHost *h = fs_host(req);
	int r;

	if (path[0] != '/' && path[0] && h->get_path) {
		char host[PATH_MAX];

		/* One readlink of /proc/PID/{cwd,fd/N}: the walk needs no fd of the start, it
		 * walks to its canonical virtual path (or the fast path goes straight there). */
		r = h->get_path(h->userdata, req->pid, dirfd, host, sizeof(host));
		if (r < 0)
			return r == -ENOENT && dirfd != AT_FDCWD ? -EBADF : r;
		if (host[0] != '/')
			return -ENOTDIR; /* "pipe:[…]", "socket:[…]" */
		if (strlen(host) > 10 && streq(host + strlen(host) - 10, " (deleted)"))
			return -ENOENT;
		r = sbx_view_vpath_of_child(req->view, host, vp, sizeof(vp));
		if (r < 0)
			return -EACCES;
		l.dir_vpath = vp;
	} else if (path[0] != '/') {
		fd = fs_child_fd(req, dirfd);
		if (fd < 0)
			return fd == -EBADF || fd == -ENOENT ? -EBADF : fd;
		/* no fstat for S_ISDIR: a non-directory start fails every lookup with ENOTDIR */
		r = sbx_view_vpath_of_fd(req->view, fd, vp, sizeof(vp), NULL);
		if (r < 0)
			/* a start directory outside the view (or deleted): nothing relative to it
			 * is visible */
			return r == -ENOENT ? -ENOENT : -EACCES;
		l.dirfd = fd;
		l.dir_vpath = vp;
	}
	return sbx_view_resolve(req->view, &l, ret);
}

int fs_resolve_arg(const EmuRequest *req, int dirfd, uint64_t addr, unsigned flags,
		   SbxResolved *ret)
{
	char path[PATH_MAX];
	int r;

	r = fs_read_path(req, addr, path, sizeof(path));
	if (r < 0)
		return r;
	return fs_resolve_at(req, dirfd, path, flags, ret);
}

/* Whether two host paths name the same object (following symlinks, as exec and chdir do). */
static bool same_object(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

bool fs_kernel_same(const EmuRequest *req, int dirfd, const char *path, const char *vpath,
		    const char *host_path)
{
	const EmuHost *h = fs_host(req);
	char start[PATH_MAX], joined[PATH_MAX];
	int n;

	(void) vpath;
	if (path[0] == '/')
		/* the host resolves the child's string to the same object: identity-mapped
		 * paths, /bin/sh when /bin is a mount of /usr/bin; not a path through a
		 * translated directory (/workspace/venv/bin/python -> /usr/bin/python3), even
		 * when the object it ends at is identity-mapped */
		return same_object(path, host_path);
	/* The kernel resolves a relative path from the child's real cwd (or dirfd), which is
	 * a host directory: join without normalizing, ".." is the kernel's to resolve. */
	if (!h->get_path || h->get_path(h->userdata, req->pid, dirfd, start, sizeof(start)) < 0 ||
	    start[0] != '/')
		return false;
	n = snprintf(joined, sizeof(joined), "%s/%s", start, path);
	if (n < 0 || (size_t) n >= sizeof(joined))
		return false;
	return same_object(joined, host_path);
}

int fs_check_read(const SbxResolved *r)
{
	switch (r->access) {
	case SBX_ACCESS_HIDDEN:
		return -ENOENT;
	case SBX_ACCESS_DENIED:
		return -EACCES;
	default:
		return r->exists ? 0 : -ENOENT;
	}
}

int fs_check_write(const SbxResolved *r, bool creating)
{
	switch (r->access) {
	case SBX_ACCESS_HIDDEN:
		return creating ? -EACCES : -ENOENT;
	case SBX_ACCESS_DENIED:
		return -EACCES;
	case SBX_ACCESS_RO:
		return -EROFS;
	default:
		return 0;
	}
}

int fs_fix_mode(const EmuRequest *req, int fd, int dirfd, const char *name, mode_t want)
{
	_cleanup_close_ int own = -1;
	char p[64];

	if (!(want & sbx_view_supervisor_umask(req->view)))
		return 0; /* nothing was taken off */
	if (fd < 0) {
		own = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (own < 0)
			return -errno;
		fd = own;
	}
	fs_fd_path(fd, p);
	return chmod(p, want & 07777) < 0 ? -errno : 0;
}

void fs_fd_path(int fd, char buf[64])
{
	(void) snprintf(buf, 64, "/proc/self/fd/%d", fd);
}

int fs_fail(EmuDecision *d, int negative_errno, const char *why)
{
	d->verdict = EMU_FAIL;
	d->error = negative_errno < 0 ? -negative_errno : EIO;
	d->why = why;
	return 0;
}

int fs_ok(EmuDecision *d, int64_t val)
{
	d->verdict = EMU_RETURN;
	d->val = val;
	return 0;
}

int fs_continue(EmuDecision *d)
{
	d->verdict = EMU_CONTINUE;
	d->val = 0;
	return 0;
}

void fs_note(EmuDecision *d, const SbxResolved *r)
{
	(void) str_copy(d->path, sizeof(d->path), r->vpath);
	(void) str_copy(d->host_path, sizeof(d->host_path), r->host_path);
}

int fs_writeback(EmuDecision *d, uint64_t addr, const void *data, size_t len)
{
	return emu_writeback(d, addr, data, len);
}
