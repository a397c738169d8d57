/* SPDX-License-Identifier: MIT */
/*
 * The file tools (code_write_file, code_read_file, code_list_files) act from the server,
 * outside the sandbox, on paths given as the sandbox sees them. The code in the session can
 * plant anything in its workspace — symlinks to /etc/passwd or to ../../other-session, hard
 * links, FIFOs — and swap them while we look, so a path is never joined to a host path and
 * opened. Instead it is resolved with the view's own resolver (emulation/path/view.h), built
 * from the session's policy: component by component from pinned O_PATH directory fds,
 * symlinks spliced into the *virtual* path, ".." popped on the virtual path. What it can
 * reach is exactly what the sandbox could reach, and the policy's access (hidden, denied,
 * read-only) applies as it does inside.
 *
 * On top of the view:
 *  - only files of directory mounts: not /proc, not /dev (a proc mount would show the
 *    *server's* /proc/self), not the private /tmp of each run (it does not persist);
 *  - writes only where the view says rw, into a mount that persists (not tmp);
 *  - a write replaces the name: a new file beside it, then renameat() over it, so a hard
 *    link the code made to some other file is never written through; append opens with
 *    O_NOFOLLOW and refuses a file with more than one link;
 *  - reads open the resolved name with O_NOFOLLOW|O_NONBLOCK and check that it is the very
 *    inode the walk found (TOCTOU: a swap between the walk and the open is detected, not
 *    followed) and a regular file (a FIFO cannot block us);
 *  - listings never follow a symlink, skip what the policy hides, and descend only by
 *    resolving each directory again in the view;
 *  - nothing is asked about: under a [[rule]] access = "ask-write" a path is read-only (as
 *    the view says), under "ask" it is refused outright, since inside every open of it
 *    waits for a human's decision.
 */
#include "agent/internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/util.h"
#include "emulation/path/view.h"

static void viewp(SbxView **v)
{
	if (*v)
		(void) sbx_view_free(*v);
}

static int open_view(Session *s, SbxView **ret, char *err, size_t errsize)
{
	const Policy *p = session_policy(s, err, errsize);
	char why[256] = "";
	int r;

	if (!p)
		return -EINVAL;
	r = sbx_view_new(p, NULL, 0, ret, why, sizeof(why));
	if (r < 0)
		snprintf(err, errsize, "cannot build the session's view: %s", why);
	return r;
}

static int resolve(const SbxView *v, const char *path, unsigned flags, SbxResolved *res,
		   char *err, size_t errsize)
{
	SbxLookup l = {.path = path,
		       .dirfd = -1,
		       .dir_vpath = "/workspace",
		       .tid = getpid(),
		       .tgid = getpid(),
		       .flags = flags | SBX_RESOLVE_NO_FAST};
	int r;

	*res = (SbxResolved){.fd = -1, .parent_fd = -1};
	r = sbx_view_resolve(v, &l, res);
	if (r < 0) {
		snprintf(err, errsize, "%.512s: %s", path,
			 r == -ENOENT ? "no such file or directory in the sandbox" : strerror(-r));
		return r;
	}
	if (res->exists && (res->access == SBX_ACCESS_HIDDEN)) {
		snprintf(err, errsize, "%.512s: no such file or directory in the sandbox", path);
		return -ENOENT;
	}
	if (res->access == SBX_ACCESS_DENIED) {
		snprintf(err, errsize, "%.512s: permission denied by the session's policy", path);
		return -EACCES;
	}
	/* the sandbox holds every open of it for a human's decision; nobody is asked here, so
	 * the file tools do not open it at all (a path under "ask-write" is read-only to them) */
	if (res->ask == SBX_ASK_OPEN) {
		snprintf(err, errsize,
			 "%.512s: every open of it is held for a decision ([[rule]] access = "
			 "\"ask\"); the file tools do not ask: open it from code_execute",
			 path);
		return -EACCES;
	}
	if (res->mount && res->mount->kind != SBX_MOUNT_DIR) {
		snprintf(err, errsize, "%.512s: %s is not a file system the file tools reach", path,
			 res->mount->vpath);
		return -EACCES;
	}
	return 0;
}

static bool same_inode(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* The parent directories of a path to write, made as the code would make them (mkdir in the
 * view, one component at a time, each checked rw). */
static int make_parents(const SbxView *v, const char *path, char *err, size_t errsize)
{
	char norm[PATH_MAX], buf[PATH_MAX];
	int r;

	if (path[0] != '/') {
		if (snprintf(buf, sizeof(buf), "/workspace/%s", path) >= (int) sizeof(buf))
			return -ENAMETOOLONG;
		path = buf;
	}
	r = sbx_path_normalize(path, norm, sizeof(norm));
	if (r < 0)
		return r;
	for (char *p = norm + 1; *p; p++) {
		_cleanup_(sbx_resolved_done) SbxResolved res = {.fd = -1, .parent_fd = -1};

		if (*p != '/')
			continue;
		*p = 0;
		r = resolve(v, norm, SBX_RESOLVE_FOLLOW | SBX_RESOLVE_CREATE, &res, err, errsize);
		if (r < 0)
			return r;
		if (!res.exists) {
			if (res.access != SBX_ACCESS_RW || !res.mount ||
			    res.mount->mode != MOUNT_RW) {
				snprintf(err, errsize, "%.512s: read-only in the sandbox", norm);
				return -EROFS;
			}
			if (mkdirat(res.parent_fd, res.name, 0755) < 0 && errno != EEXIST) {
				snprintf(err, errsize, "%.512s: %s", norm, strerror(errno));
				return -errno;
			}
		} else if (res.type != S_IFDIR) {
			snprintf(err, errsize, "%.512s: not a directory", norm);
			return -ENOTDIR;
		}
		*p = '/';
	}
	return 0;
}

static bool writable(const SbxResolved *res)
{
	return res->access == SBX_ACCESS_RW && res->mount && res->mount->mode == MOUNT_RW &&
	       !res->fixed;
}

int files_write(Session *s, const char *path, const void *data, size_t len, bool append,
		json_t **ret, char *err, size_t errsize)
{
	_cleanup_(viewp) SbxView *v = NULL;
	_cleanup_(sbx_resolved_done) SbxResolved res = {.fd = -1, .parent_fd = -1};
	_cleanup_close_ int fd = -1;
	char tmp[64], sha[65];
	uint8_t rnd[8];
	int r;

	r = open_view(s, &v, err, errsize);
	if (r < 0)
		return r;
	r = resolve(v, path, SBX_RESOLVE_FOLLOW | SBX_RESOLVE_CREATE, &res, err, errsize);
	if (r == -ENOENT) {
		r = make_parents(v, path, err, errsize);
		if (r < 0)
			return r;
		sbx_resolved_done(&res);
		r = resolve(v, path, SBX_RESOLVE_FOLLOW | SBX_RESOLVE_CREATE, &res, err, errsize);
	}
	if (r < 0)
		return r;
	if (res.mount && res.mount->mode == MOUNT_TMP) {
		snprintf(err, errsize,
			 "%.512s: %s is private to each execution and does not persist; write under "
			 "/workspace",
			 path, res.mount->vpath);
		return -EROFS;
	}
	if (!writable(&res)) {
		snprintf(err, errsize, "%.512s: read-only in the sandbox", path);
		return -EROFS;
	}
	if (res.exists && res.type == S_IFDIR) {
		snprintf(err, errsize, "%.512s: is a directory", path);
		return -EISDIR;
	}
	if (res.exists && res.type != S_IFREG) {
		snprintf(err, errsize, "%.512s: not a regular file", path);
		return -EINVAL;
	}

	if (append && res.exists) {
		struct stat st;

		fd = openat(res.parent_fd, res.name, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC |
							     O_NONBLOCK | O_NOCTTY);
		if (fd < 0 || fstat(fd, &st) < 0) {
			snprintf(err, errsize, "%.512s: %s", path, strerror(errno));
			return -errno;
		}
		/* TOCTOU: the name may have been swapped since the walk: append only to the
		 * inode the walk checked, and never through a hard link into somewhere else */
		if (!S_ISREG(st.st_mode) || st.st_nlink != 1 || res.fd < 0 || !same_inode(fd, res.fd)) {
			snprintf(err, errsize,
				 "%.512s: changed while we looked, or has other hard links; not "
				 "appended",
				 path);
			return -EBUSY;
		}
		r = write_all(fd, data, len);
		if (r < 0) {
			snprintf(err, errsize, "%.512s: %s", path, strerror(-r));
			return r;
		}
	} else {
		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
			return -EIO;
		snprintf(tmp, sizeof(tmp), ".sbxtrace-write-%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0],
			 rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
		fd = openat(res.parent_fd, tmp,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
		if (fd < 0) {
			snprintf(err, errsize, "%.512s: %s", path, strerror(errno));
			return -errno;
		}
		r = write_all(fd, data, len);
		if (r >= 0 && renameat(res.parent_fd, tmp, res.parent_fd, res.name) < 0)
			r = -errno;
		if (r < 0) {
			(void) unlinkat(res.parent_fd, tmp, 0);
			snprintf(err, errsize, "%.512s: %s", path, strerror(-r));
			return r;
		}
	}
	record_sha256(data, len, sha);
	*ret = json_pack("{s:s, s:I, s:s}", "path", res.vpath, "bytes", (json_int_t) len, "sha256",
			 sha);
	return *ret ? 0 : -ENOMEM;
}

int files_read(Session *s, const char *path, size_t max_bytes, void **ret_data, size_t *ret_len,
	       uint64_t *ret_size, char *err, size_t errsize)
{
	_cleanup_(viewp) SbxView *v = NULL;
	_cleanup_(sbx_resolved_done) SbxResolved res = {.fd = -1, .parent_fd = -1};
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t len = 0;
	int r;

	r = open_view(s, &v, err, errsize);
	if (r < 0)
		return r;
	r = resolve(v, path, SBX_RESOLVE_FOLLOW, &res, err, errsize);
	if (r < 0)
		return r;
	if (res.type == S_IFDIR) {
		snprintf(err, errsize, "%.512s: is a directory (use code_list_files)", path);
		return -EISDIR;
	}
	if (res.type != S_IFREG || res.fd < 0) {
		snprintf(err, errsize, "%.512s: not a regular file", path);
		return -EINVAL;
	}
	fd = openat(res.parent_fd, res.name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	/* TOCTOU: read only the inode the walk found; a swapped name is refused */
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !same_inode(fd, res.fd)) {
		snprintf(err, errsize, "%.512s: changed while we looked; try again", path);
		return -EBUSY;
	}
	buf = malloc(max_bytes + 1);
	if (!buf)
		return -ENOMEM;
	while (len < max_bytes) {
		ssize_t n = read(fd, buf + len, max_bytes - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errsize, "%.512s: %s", path, strerror(errno));
			return -errno;
		}
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = 0;
	*ret_size = (uint64_t) st.st_size;
	*ret_len = len;
	*ret_data = TAKE_PTR(buf);
	return 0;
}

static const char *type_name(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG:
		return "file";
	case S_IFDIR:
		return "directory";
	case S_IFLNK:
		return "symlink";
	case S_IFIFO:
		return "fifo";
	case S_IFSOCK:
		return "socket";
	default:
		return "other";
	}
}

typedef struct Lister {
	const SbxView *v;
	json_t *entries;
	size_t max;
	bool truncated;
	char *err;
	size_t errsize;
} Lister;

static int list_dir(Lister *L, const char *vdir, bool recursive, unsigned depth)
{
	_cleanup_(sbx_resolved_done) SbxResolved res = {.fd = -1, .parent_fd = -1};
	char **subdirs = NULL;
	DIR *d;
	struct dirent *de;
	int fd, r;

	r = resolve(L->v, vdir, SBX_RESOLVE_FOLLOW | SBX_RESOLVE_DIRECTORY, &res, L->err,
		    L->errsize);
	if (r < 0)
		return r;
	if (res.fd < 0)
		return -ENOENT;
	fd = openat(res.parent_fd, res.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && res.parent_fd == res.fd) /* a mount root: name "." of itself */
		fd = openat(res.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !same_inode(fd, res.fd)) {
		if (fd >= 0)
			close(fd);
		snprintf(L->err, L->errsize, "%.512s: changed while we looked; try again", vdir);
		return -EBUSY;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		char vpath[PATH_MAX];
		Sensitivity lvl;
		struct stat st;
		json_t *e;

		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		if (snprintf(vpath, sizeof(vpath), "%s%s%s", res.vpath,
			     streq(res.vpath, "/") ? "" : "/", de->d_name) >= (int) sizeof(vpath))
			continue;
		if (sbx_view_access(L->v, vpath, &lvl) == SBX_ACCESS_HIDDEN)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (json_array_size(L->entries) >= L->max) {
			L->truncated = true;
			break;
		}
		e = json_pack("{s:s, s:s, s:I, s:I, s:s}", "path", vpath, "type",
			      type_name(st.st_mode), "size", (json_int_t) st.st_size, "mtime",
			      (json_int_t) st.st_mtime, "mode", "");
		if (e) {
			char mode[8];

			snprintf(mode, sizeof(mode), "%04o", st.st_mode & 07777);
			json_object_set_new(e, "mode", json_string(mode));
			json_array_append_new(L->entries, e);
		}
		if (recursive && S_ISDIR(st.st_mode) && depth < 32)
			(void) strv_push(&subdirs, vpath);
	}
	closedir(d);
	for (size_t i = 0; subdirs && subdirs[i] && !L->truncated; i++)
		(void) list_dir(L, subdirs[i], true, depth + 1); /* each resolved again */
	strv_free(subdirs);
	return 0;
}

int files_list(Session *s, const char *path, bool recursive, size_t max_entries, json_t **ret,
	       char *err, size_t errsize)
{
	_cleanup_(viewp) SbxView *v = NULL;
	Lister L = {.max = max_entries, .err = err, .errsize = errsize};
	int r;

	r = open_view(s, &v, err, errsize);
	if (r < 0)
		return r;
	L.v = v;
	L.entries = json_array();
	if (!L.entries)
		return -ENOMEM;
	r = list_dir(&L, path, recursive, 0);
	if (r < 0) {
		json_decref(L.entries);
		if (r == -ENOTDIR)
			snprintf(err, errsize, "%.512s: not a directory", path);
		return r;
	}
	*ret = json_pack("{s:s, s:o, s:b}", "path", path, "entries", L.entries, "truncated",
			 L.truncated);
	return *ret ? 0 : -ENOMEM;
}

/* How deep the removal descends before it moves a subtree up (below). */
#define REMOVE_DEPTH_MAX 16

/*
 * Empties the directory dfd, never following a symlink (fstatat and openat with NOFOLLOW,
 * everything relative to pinned fds). The code in the session may have made a tree of any
 * depth (a few renames of deep chains make it as deep as it likes): rather than hold an fd
 * and a stack frame per level — which runs the server out of fds for every tenant, or out of
 * stack — a directory REMOVE_DEPTH_MAX levels down is renamed up into top, under a fresh
 * name, and *moved tells the caller to go over top again.
 * TOCTOU: the tree is the code's; a name swapped between the fstatat and the open is at worst
 * a failed open or a directory removed later, never a host object outside the tree.
 */
static int remove_contents(int dfd, int top, unsigned depth, bool *moved)
{
	static unsigned long counter;
	struct dirent *de;
	DIR *d;
	int fd, r = 0;

	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		struct stat st;
		int child;

		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (!S_ISDIR(st.st_mode)) {
			if (unlinkat(dirfd(d), de->d_name, 0) < 0 && errno != ENOENT)
				r = -errno;
			continue;
		}
		/* a directory the code made unreadable or unwritable (0000) is ours to open up
		 * again — before the open, which fails on it unless we are root — and a directory
		 * moved to another parent must be writable itself. NOFOLLOW: a name swapped for a
		 * symlink meanwhile is not followed (EOPNOTSUPP, ignored). */
		if (fchmodat(dirfd(d), de->d_name, 0700, AT_SYMLINK_NOFOLLOW) < 0) {
			/* ENOENT, EOPNOTSUPP (a symlink now): the open below decides */
		}
		child = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (child < 0) {
			if (errno != ENOENT)
				r = -errno;
			continue;
		}
		if (depth + 1 >= REMOVE_DEPTH_MAX) {
			close(child);
			for (;;) {
				char up[64];

				snprintf(up, sizeof(up), ".sbxtrace-remove-%lu",
					 __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
				if (renameat2(dirfd(d), de->d_name, top, up, RENAME_NOREPLACE) == 0) {
					*moved = true;
					break;
				}
				if (errno != EEXIST) {
					r = -errno;
					break;
				}
			}
			continue;
		}
		{
			int e = remove_contents(child, top, depth + 1, moved);

			if (e < 0)
				r = e;
		}
		close(child);
		if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) < 0 && errno != ENOENT)
			r = -errno;
	}
	closedir(d);
	return r;
}

int files_remove_tree(int parent, const char *name)
{
	struct stat st;
	bool moved;
	int fd, r;

	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(parent, name, 0) < 0 ? -errno : 0;
	if (fchmodat(parent, name, 0700, AT_SYMLINK_NOFOLLOW) < 0) {
		/* the open below decides */
	}
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* each pass removes what lies within REMOVE_DEPTH_MAX levels and moves the rest up;
	 * the tree is finite, so passes end (bounded anyway) */
	for (unsigned pass = 0; pass < 1000000; pass++) {
		moved = false;
		r = remove_contents(fd, fd, 0, &moved);
		if (!moved)
			break;
	}
	close(fd);
	if (unlinkat(parent, name, AT_REMOVEDIR) < 0)
		r = -errno;
	return r;
}
