/* SPDX-License-Identifier: MIT */
/* AF_UNIX path addresses in the view (see view.h). */
#include "emulation/path/view.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/macros.h"

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
