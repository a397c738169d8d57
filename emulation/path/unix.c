/* SPDX-License-Identifier: MIT */
/* AF_UNIX path addresses in the view (see view.h). */
#include "emulation/path/view.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/macros.h"
#include "emulation/path/internal.h"

/* "/proc/self/fd/<fd>" or "/proc/self/fd/<fd>/<name>" */
static int set_addr(struct sockaddr_un *a, unsigned *len, int fd, const char *name)
{
	int n;

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	n = snprintf(a->sun_path, sizeof(a->sun_path), "/proc/self/fd/%d%s%s", fd, name ? "/" : "",
		     name ? name : "");
	if (n < 0 || (size_t) n >= sizeof(a->sun_path))
		return -ENAMETOOLONG;
	*len = (unsigned) (offsetof(struct sockaddr_un, sun_path) + (size_t) n + 1);
	return 0;
}

int sbx_view_unix_address(const SbxView *v, const SbxLookup *l, bool bind, SbxResolved *ret,
			  struct sockaddr_un *ret_addr, unsigned *ret_len)
{
	SbxLookup l2 = *l;
	int r;

	/* bind creates and never follows; connect follows like open() */
	l2.flags = (l->flags &
		    ~(unsigned) (SBX_RESOLVE_FOLLOW | SBX_RESOLVE_CREATE | SBX_RESOLVE_NO_FD)) |
		   (bind ? SBX_RESOLVE_CREATE : SBX_RESOLVE_FOLLOW);
	r = sbx_view_resolve(v, &l2, ret);
	if (r < 0)
		return r;
	switch (ret->access) {
	case SBX_ACCESS_HIDDEN:
		r = bind ? -EACCES : -ENOENT;
		goto fail;
	case SBX_ACCESS_DENIED:
		r = -EACCES;
		goto fail;
	default:
		break;
	}
	if (bind) {
		if (ret->exists || ret->fixed || ret->dot) {
			r = -EADDRINUSE;
			goto fail;
		}
		if (ret->access != SBX_ACCESS_RW) {
			r = -EROFS;
			goto fail;
		}
		r = set_addr(ret_addr, ret_len, ret->parent_fd, ret->name);
	} else {
		if (!ret->exists) {
			r = -ENOENT;
			goto fail;
		}
		if (ret->type != S_IFSOCK || ret->fd < 0) {
			r = -ECONNREFUSED;
			goto fail;
		}
		r = set_addr(ret_addr, ret_len, ret->fd, NULL);
	}
	if (r < 0)
		goto fail;
	return 0;
fail:
	sbx_resolved_done(ret);
	return r;
}

bool sbx_view_unix_name_in_parent(const char *path, const SbxResolved *r)
{
	const char *p = path;

	if (!path || path[0] == '/' || r->parent_fd < 0 || r->exists)
		return false;
	while (p[0] == '.' && p[1] == '/') {
		p++;
		while (*p == '/')
			p++;
	}
	if (!*p || strchr(p, '/') || strcmp(p, ".") == 0 || strcmp(p, "..") == 0)
		return false;
	return strcmp(p, r->name) == 0;
}

int sbx_view_unix_bound(const SbxResolved *r, mode_t umask)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	char p[64];

	fd = openat(r->parent_fd, r->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISSOCK(st.st_mode))
		return -ESTALE; /* replaced since the bind: leave it alone */
	(void) snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	if (chmod(p, 0777 & ~umask) < 0)
		return -errno;
	return 0;
}

/* "<n>" + the directory part of the absolute name ("/a/b/s" → "7/a/b", "/s" → "7") into sub,
 * the last component into *ret_base. -ENAMETOOLONG. */
static int alias_sub(const char *name, unsigned n, char *sub, size_t size, const char **ret_base)
{
	const char *base = strrchr(name, '/');
	int k;

	if (name[0] != '/' || !base || !base[1])
		return -EINVAL;
	k = snprintf(sub, size, "%u%.*s", n, (int) (base - name), name);
	if (k < 0 || (size_t) k >= size)
		return -ENAMETOOLONG;
	*ret_base = base + 1;
	return 0;
}

int sbx_view_unix_alias(const SbxView *v, const char *name, const SbxResolved *r, unsigned n,
			struct sockaddr_un *ret_addr, unsigned *ret_len)
{
	char sub[sizeof(ret_addr->sun_path)], target[64];
	_cleanup_close_ int ufd = -1;
	const char *base;
	int k;

	if (!v->run_path || v->run_fd < 0 || r->parent_fd < 0)
		return -ENOENT;
	/* where the program could reach the run directory (every candidate for it is shown in
	 * the view), it could swap the link before the bind follows it */
	if (!v->run_hidden)
		return -EPERM;
	k = alias_sub(name, n, sub, sizeof(sub), &base);
	if (k < 0)
		return k;
	memset(ret_addr, 0, sizeof(*ret_addr));
	ret_addr->sun_family = AF_UNIX;
	k = snprintf(ret_addr->sun_path, sizeof(ret_addr->sun_path), "%s/u/%s/%s", v->run_path, sub,
		     base);
	if (k < 0 || (size_t) k >= sizeof(ret_addr->sun_path))
		return -ENAMETOOLONG;
	*ret_len = (unsigned) (offsetof(struct sockaddr_un, sun_path) + (size_t) k + 1);
	if (mkdirat(v->run_fd, "u", 0700) < 0 && errno != EEXIST)
		return -errno;
	ufd = openat(v->run_fd, "u", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ufd < 0)
		return -errno;
	/* the directories of sub but its last component, then that one as the link; all of it
	 * in a directory of ours that the program cannot reach, under a number no other bind
	 * uses at the same time */
	for (char *p = sub; (p = strchr(p, '/')); p++) {
		*p = 0;
		k = mkdirat(ufd, sub, 0700);
		*p = '/';
		if (k < 0 && errno != EEXIST)
			return -errno;
	}
	(void) snprintf(target, sizeof(target), "/proc/self/fd/%d", r->parent_fd);
	if (symlinkat(target, ufd, sub) < 0)
		return -errno;
	return 0;
}

void sbx_view_unix_alias_done(const SbxView *v, const char *name, unsigned n)
{
	char sub[sizeof(((struct sockaddr_un *) NULL)->sun_path)];
	_cleanup_close_ int ufd = -1;
	const char *base;
	char *p;

	if (v->run_fd < 0 || alias_sub(name, n, sub, sizeof(sub), &base) < 0)
		return;
	ufd = openat(v->run_fd, "u", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ufd < 0)
		return;
	(void) unlinkat(ufd, sub, 0);
	while ((p = strrchr(sub, '/'))) {
		*p = 0;
		(void) unlinkat(ufd, sub, AT_REMOVEDIR);
	}
}

bool sbx_view_unix_unalias(const SbxView *v, struct sockaddr_un *addr, unsigned *len)
{
	char vpath[sizeof(addr->sun_path)];
	size_t plen, have;
	const char *p;

	if (!v || !v->run_path || addr->sun_family != AF_UNIX ||
	    *len <= offsetof(struct sockaddr_un, sun_path))
		return false;
	have = strnlen(addr->sun_path, MIN((size_t) *len - offsetof(struct sockaddr_un, sun_path),
					   sizeof(addr->sun_path)));
	plen = strlen(v->run_path);
	if (have <= plen + 3 || strncmp(addr->sun_path, v->run_path, plen) != 0 ||
	    strncmp(addr->sun_path + plen, "/u/", 3) != 0)
		return false;
	p = addr->sun_path + plen + 3;
	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p != '/')
		return false;
	have -= (size_t) (p - addr->sun_path);
	memcpy(vpath, p, have);
	memset(addr->sun_path, 0, sizeof(addr->sun_path));
	memcpy(addr->sun_path, vpath, have);
	*len = (unsigned) (offsetof(struct sockaddr_un, sun_path) + have + 1);
	return true;
}

/* ---- the table the socket handlers reach through their host (common/handler.h) ---- */

/*
 * The resolution pinned behind an EmuUnixName is an SbxResolved, a type net/ cannot see, so
 * it is allocated here (two PATH_MAX buffers: one malloc per AF_UNIX bind or connect with a
 * path, beside the walk of the path itself).
 */
static int names_resolve(const EmuRequest *req, const char *path, bool bind, EmuUnixName *ret,
			 struct sockaddr_un *ret_addr, unsigned *ret_len)
{
	char host[PATH_MAX], vp[PATH_MAX], link[64];
	SbxLookup l = {.path = path, .dirfd = -1, .tid = req->pid, .tgid = req->known_tgid};
	_cleanup_free_ SbxResolved *res = NULL;
	ssize_t n;
	int r;

	*ret = (EmuUnixName){.parent_fd = -1};
	/* a relative name starts at the caller's cwd, reached through /proc/PID/cwd (a path the
	 * supervisor reads, never the child's bytes) and mapped back into the view */
	if (path[0] != '/') {
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int) emu_req_tgid(req));
		n = readlink(link, host, sizeof(host) - 1);
		if (n <= 0)
			return -ENOENT;
		host[n] = 0;
		if (sbx_view_vpath_of_child(req->view, host, vp, sizeof(vp)) < 0)
			return -EACCES;
		l.dir_vpath = vp;
	}
	res = malloc(sizeof(*res));
	if (!res)
		return -ENOMEM;
	*res = (SbxResolved){.fd = -1, .parent_fd = -1};
	r = sbx_view_unix_address(req->view, &l, bind, res, ret_addr, ret_len);
	if (r < 0)
		return r;
	ret->parent_fd = res->parent_fd;
	memcpy(ret->name, res->name, sizeof(ret->name));
	ret->exists = res->exists;
	ret->name_in_parent = bind && sbx_view_unix_name_in_parent(path, res);
	ret->pin = TAKE_PTR(res);
	return 0;
}

static void names_done(EmuUnixName *n)
{
	SbxResolved *res = n->pin;

	if (!res)
		return;
	sbx_resolved_done(res);
	free(res);
	n->pin = NULL;
	n->parent_fd = -1;
}

static int names_bound(const EmuUnixName *n, mode_t umask)
{
	return n->pin ? sbx_view_unix_bound(n->pin, umask) : -EBADF;
}

static int names_alias(const EmuRequest *req, const char *path, const EmuUnixName *n, unsigned seq,
		       struct sockaddr_un *ret_addr, unsigned *ret_len)
{
	if (!n->pin)
		return -EBADF;
	return sbx_view_unix_alias(req->view, path, n->pin, seq, ret_addr, ret_len);
}

static void names_alias_done(const EmuRequest *req, const char *path, unsigned seq)
{
	sbx_view_unix_alias_done(req->view, path, seq);
}

static bool names_unalias(const EmuRequest *req, struct sockaddr_un *addr, unsigned *len)
{
	return sbx_view_unix_unalias(req->view, addr, len);
}

const EmuUnixNames sbx_view_unix_names = {
	.resolve = names_resolve,
	.done = names_done,
	.bound = names_bound,
	.alias = names_alias,
	.alias_done = names_alias_done,
	.unalias = names_unalias,
};
