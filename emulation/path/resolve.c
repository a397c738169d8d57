/* SPDX-License-Identifier: MIT */
/*
 * Path resolution in the view (DESIGN.md "The virtual filesystem view").
 *
 * The walk keeps the canonical virtual path of where it is and an O_PATH fd of the host
 * directory backing it. Each component is opened with openat(cur, name, O_PATH|O_NOFOLLOW),
 * so the kernel never follows a symlink or ".." for us: symlinks are read from the fd that
 * was opened (readlinkat(fd, "")) and spliced into the remaining virtual path, ".." pops the
 * virtual path and reopens the parent by walking the canonical path again from the root.
 * Every fd the walk holds was reached from a mount's source fd through names that are not
 * symlinks, so it is inside the view whatever the child (or anyone) renames meanwhile.
 *
 * Fast path (openat2(2), Linux 5.6): a path without ".." inside one plain mount is opened
 * with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS from the mount's fd; any
 * symlink, escape or surprise falls back to the walk. RESOLVE_NO_SYMLINKS makes it sound under
 * mounts with nested mounts too (DESIGN's caveat): with no symlink and no "..", the kernel can
 * only follow the names we would follow, and the deepest mount containing the path is the one
 * whose fd it starts from; a missing name that is an ancestor of a nested mount point falls
 * back to the walk, which knows the skeleton.
 */
#include "emulation/path/view.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/macros.h"
#include "emulation/path/internal.h"

#define MAX_SYMLINKS 40
#define MAX_RETRIES  16
#define WALK_STACK   32

typedef struct Walk {
	const SbxView *v;
	const SbxLookup *l;
	char vp[PATH_MAX];
	size_t vlen;
	int cur;
	bool cur_owned;
	const SbxMount *m; /* mount whose tree cur belongs to; NULL: skeleton only */
	bool skel;	   /* cur is a skeleton directory */
	int depth;	   /* components below the start (BENEATH) */
	/* The directories the walk came down through, for ".." without walking again from
	 * the root: each entry is the state before descending. */
	struct {
		int fd;
		bool owned;
		const SbxMount *m;
		bool skel;
		size_t vlen;
	} stack[WALK_STACK];
	unsigned sp;
} Walk;

typedef struct Child {
	int fd;
	bool owned;
	mode_t type;
	const SbxMount *m;
	bool skel;
	bool fixed;
	bool dev;	     /* a /dev allowlist node: parent is the host /dev */
	bool pts;	     /* and under /dev/pts: parent is the host /dev/pts */
	bool synthetic_link; /* /proc/self: link text in link[] */
	char link[64];
} Child;

/* c takes fd (owned): an object of type in the walk's current mount. */
static int child_take(Child *c, const Walk *w, int fd, mode_t type, bool fixed)
{
	c->fd = fd;
	c->owned = true;
	c->type = type;
	c->m = w->m;
	c->fixed = fixed;
	return 0;
}

static void walk_set(Walk *w, int fd, bool owned)
{
	if (w->cur_owned && w->cur >= 0 && w->cur != fd)
		(void) close(w->cur);
	w->cur = fd;
	w->cur_owned = owned;
}

static void walk_drop_stack(Walk *w)
{
	while (w->sp > 0) {
		w->sp--;
		if (w->stack[w->sp].owned)
			(void) close(w->stack[w->sp].fd);
	}
}

static void walk_done(Walk *w)
{
	walk_drop_stack(w);
	walk_set(w, -1, false);
}

/* Descends into a directory, keeping the current one for a later "..". */
static void walk_push(Walk *w, int fd, bool owned)
{
	if (w->sp == WALK_STACK)
		walk_drop_stack(w); /* deep: ".." above here walks again from the root */
	w->stack[w->sp].fd = w->cur;
	w->stack[w->sp].owned = w->cur_owned;
	w->stack[w->sp].m = w->m;
	w->stack[w->sp].skel = w->skel;
	w->stack[w->sp].vlen = w->vlen;
	w->sp++;
	w->cur = fd;
	w->cur_owned = owned;
}

/* ".." to a directory still on the stack: true if done. */
static bool walk_pop(Walk *w)
{
	if (w->sp == 0)
		return false;
	w->sp--;
	walk_set(w, w->stack[w->sp].fd, w->stack[w->sp].owned);
	w->m = w->stack[w->sp].m;
	w->skel = w->stack[w->sp].skel;
	w->vlen = w->stack[w->sp].vlen;
	w->vp[w->vlen] = 0;
	return true;
}

static void walk_root(Walk *w)
{
	const SbxView *v = w->v;

	walk_drop_stack(w);
	w->vp[0] = '/';
	w->vp[1] = 0;
	w->vlen = 1;
	if (v->root_mount) {
		walk_set(w, v->root_mount->fd, false);
		w->m = v->root_mount;
		w->skel = false;
	} else {
		walk_set(w, v->root_fd, false);
		w->m = NULL;
		w->skel = true;
	}
}

static void child_done(Child *c)
{
	if (c->owned && c->fd >= 0)
		(void) close(c->fd);
	c->fd = -1;
}

static int join(const char *dir, size_t dlen, const char *name, size_t nlen, char *out)
{
	size_t n = dlen;

	if (dlen + 1 + nlen + 1 > PATH_MAX)
		return -ENAMETOOLONG;
	memcpy(out, dir, dlen);
	if (dlen > 1)
		out[n++] = '/';
	memcpy(out + n, name, nlen);
	n += nlen;
	out[n] = 0;
	return (int) n;
}

static bool is_pid_name(const char *s, size_t n, pid_t *ret)
{
	long long x = 0;

	if (n == 0 || n > 10)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		x = x * 10 + (s[i] - '0');
	}
	*ret = (pid_t) x;
	return x > 0;
}

/*
 * Looks up one name (not "." or "..") in the current directory. 0: found (*c filled),
 * -ENOENT: absent (or hidden when hide_ok is false), other -errno.
 */

/*
 * /dev/pts/N (process.pty): only a pty the tree created and whose master it still holds
 * (EmuHost.open_pts of the view's host decides, with the master's own TIOCGPTN); anything else is
 * absent, so no other session's terminal is reachable by name. The O_PATH fd serves stat and the
 * like; opens go through open_pts, which opens the peer of the master (fs-open.c).
 */
static int lookup_pts(const SbxView *v, const Walk *w, const char *nm, Child *c)
{
	unsigned long n;
	struct stat st;
	char *end;
	int fd, r;

	if (nm[0] < '0' || nm[0] > '9' || (nm[0] == '0' && nm[1]) || !v->host->open_pts)
		return -ENOENT;
	errno = 0;
	n = strtoul(nm, &end, 10);
	if (*end || errno || n > UINT_MAX)
		return -ENOENT;
	r = v->host->open_pts(v->host->userdata, view_caller_tgid(w->l->tid, w->l->tgid),
			      (unsigned) n, -1);
	if (r < 0)
		return -ENOENT;
	fd = openat(v->pts_fd, nm, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode)) {
		(void) close(fd);
		return -ENOENT;
	}
	c->dev = true;
	c->pts = true;
	return child_take(c, w, fd, S_IFCHR, true);
}

static int lookup_child(Walk *w, const char *name, size_t nlen, bool want_dir, Child *c,
			char *newvp, size_t *ret_newlen)
{
	const SbxView *v = w->v;
	const SbxMount *mp;
	struct stat st;
	char nm[NAME_MAX + 1];
	int n, fd;

	*c = (Child){.fd = -1};
	if (nlen > NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(nm, name, nlen);
	nm[nlen] = 0;
	n = join(w->vp, w->vlen, name, nlen, newvp);
	if (n < 0)
		return n;
	*ret_newlen = (size_t) n;

	mp = view_mount_exact(v, newvp, (size_t) n);
	if (mp) {
		c->fd = mp->fd;
		c->type = S_IFDIR;
		c->m = mp;
		c->fixed = true;
		return 0;
	}

	if (w->m && w->m->kind == SBX_MOUNT_DEV && !w->skel) {
		if (v->pts_fd >= 0 && w->vlen == w->m->vlen && streq(nm, "pts")) {
			/* the skeleton's empty /dev/pts: its entries are looked up below */
			fd = openat(w->cur, nm, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				return -errno;
			return child_take(c, w, fd, S_IFDIR, true);
		}
		if (v->pts_fd >= 0 && w->vlen == w->m->vlen + 4 &&
		    memcmp(w->vp + w->m->vlen, "/pts", 4) == 0)
			return lookup_pts(v, w, nm, c);
		if (w->vlen == w->m->vlen && view_dev_link(v, nm)) {
			/* a symlink of ours in the skeleton /dev: the walk follows its text */
			fd = openat(w->cur, nm, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				return -errno;
			return child_take(c, w, fd, S_IFLNK, true);
		}
		if (w->vlen != w->m->vlen || !view_dev_allowed(v, nm))
			return -ENOENT;
		fd = openat(v->dev_fd, nm, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		c->fd = fd;
		c->owned = true;
		c->m = w->m;
		c->fixed = true;
		c->dev = true;
		if (fstat(fd, &st) < 0) {
			child_done(c);
			return -errno;
		}
		c->type = st.st_mode & S_IFMT;
		if (c->type == S_IFLNK && v->pts_fd >= 0 && streq(nm, "ptmx")) {
			/* in a container /dev/ptmx is a symlink to pts/ptmx (issue 19): the
			 * devpts instance's own node, opened from /dev/pts like a pts */
			(void) close(c->fd);
			c->fd = openat(v->pts_fd, "ptmx", O_PATH | O_NOFOLLOW | O_CLOEXEC);
			if (c->fd < 0 || fstat(c->fd, &st) < 0 || !S_ISCHR(st.st_mode)) {
				int e = c->fd < 0 ? -errno : -ENOENT;

				child_done(c);
				return e;
			}
			c->type = S_IFCHR;
			c->pts = true;
		}
		return 0;
	}

	if (w->m && w->m->kind == SBX_MOUNT_PROC && !w->skel && w->vlen == w->m->vlen) {
		pid_t pid, tgid = view_caller_tgid(w->l->tid, w->l->tgid);

		if (tgid > 0 && streq(nm, "self")) {
			(void) snprintf(c->link, sizeof(c->link), "%d", (int) tgid);
			c->synthetic_link = true;
			c->type = S_IFLNK;
			c->m = w->m;
			return 0;
		}
		if (tgid > 0 && streq(nm, "thread-self")) {
			(void) snprintf(c->link, sizeof(c->link), "%d/task/%d", (int) tgid,
					(int) w->l->tid);
			c->synthetic_link = true;
			c->type = S_IFLNK;
			c->m = w->m;
			return 0;
		}
		if (is_pid_name(nm, nlen, &pid) && pid != tgid &&
		    !(v->host->in_tree && v->host->in_tree(v->host->userdata, pid)))
			return -ENOENT;
	}

	fd = -1;
	st.st_mode = 0;
	if (want_dir) {
		/* the common case costs one syscall: no fstat when O_DIRECTORY succeeds */
		fd = openat(w->cur, nm, O_PATH | O_NOFOLLOW | O_CLOEXEC | O_DIRECTORY);
		if (fd >= 0)
			st.st_mode = S_IFDIR;
		else if (errno != ENOTDIR && errno != ENOENT)
			return -errno;
	}
	if (fd < 0 && (!want_dir || errno == ENOTDIR)) {
		fd = openat(w->cur, nm, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno != ENOENT)
			return -errno;
		if (fd >= 0 && fstat(fd, &st) < 0) {
			int r = -errno;
			(void) close(fd);
			return r;
		}
	}

	if (!w->skel && (fd < 0 || !S_ISDIR(st.st_mode)) &&
	    view_is_mount_ancestor(v, newvp, (size_t) n)) {
		/* The way to a nested mount point, missing (or not a directory) on the host:
		 * the skeleton provides it. */
		if (fd >= 0)
			(void) close(fd);
		fd = openat(v->root_fd, newvp + 1, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		c->skel = true;
		return child_take(c, w, fd, S_IFDIR, true);
	}
	if (fd < 0)
		return -ENOENT;
	c->skel = w->skel;
	return child_take(c, w, fd, st.st_mode & S_IFMT, w->skel);
}

/* Re-derives cur for the canonical path in w->vp (after ".."), from the root. */
static int walk_reopen(Walk *w)
{
	char target[PATH_MAX];
	const char *p;

	memcpy(target, w->vp, w->vlen + 1);
	walk_root(w);
	p = target;
	while (*p) {
		char newvp[PATH_MAX];
		size_t newlen;
		const char *c;
		Child ch;
		int r;

		while (*p == '/')
			p++;
		c = p;
		while (*p && *p != '/')
			p++;
		if (p == c)
			break;
		r = lookup_child(w, c, (size_t) (p - c), true, &ch, newvp, &newlen);
		if (r < 0)
			return r;
		if (ch.type != S_IFDIR) {
			/* swapped for a symlink or a file since we walked it: start again */
			child_done(&ch);
			return -EAGAIN;
		}
		walk_push(w, ch.fd, ch.owned);
		w->m = ch.m;
		w->skel = ch.skel;
		memcpy(w->vp, newvp, newlen + 1);
		w->vlen = newlen;
	}
	return 0;
}

/* a followed by b in dst, or "" when the two do not fit: a cut host path names another file */
static void join_or_empty(char *dst, size_t size, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la + lb >= size) {
		dst[0] = 0;
		return;
	}
	memcpy(dst, a, la);
	memcpy(dst + la, b, lb + 1);
}

/* SbxResolved.host_path, by concatenation (snprintf's "%s%s" was a visible part of every
 * notified path call's own time, issue 20) */
static void fill_paths(const SbxView *v, SbxResolved *r, bool skel, bool dev)
{
	const SbxMount *m = r->mount;
	char *h = r->host_path;

	if (dev) /* the built-in /dev is at /dev: host and virtual paths are the same */
		join_or_empty(h, sizeof(r->host_path), "", r->vpath);
	else if (skel || !m)
		join_or_empty(h, sizeof(r->host_path), v->root_path,
			      streq(r->vpath, "/") ? "" : r->vpath);
	else if (m->vlen == 1)
		join_or_empty(h, sizeof(r->host_path), m->slen == 1 ? "" : m->source, r->vpath);
	else
		join_or_empty(h, sizeof(r->host_path), m->source, r->vpath + m->vlen);
}

static void finish(const SbxView *v, SbxResolved *r, bool skel, bool dev)
{
	const PolicyRule *ask = NULL;
	SbxAccess a = view_access_rule(v, r->vpath, &r->level, &ask);

	r->ask = SBX_ASK_NONE;
	r->ask_rule = NULL;
	r->ask_writable = false;
	if ((skel || (r->mount && r->mount->kind == SBX_MOUNT_DEV)) && a > SBX_ACCESS_RO)
		a = SBX_ACCESS_RO;
	if (dev && a == SBX_ACCESS_RO)
		a = SBX_ACCESS_RW; /* the devices themselves are writable (/dev/null) */
	else if (ask && !skel && r->mount && r->mount->kind == SBX_MOUNT_DIR) {
		/* an ask rule: read-only (a), but the opens it names are held for a decision;
		 * an allowed write may write only where the mount is rw (never lifts ro) */
		r->ask = ask->access == RULE_ACCESS_ASK ? SBX_ASK_OPEN : SBX_ASK_WRITE;
		r->ask_rule = ask;
		r->ask_writable = r->mount->mode != MOUNT_RO;
	}
	r->access = a;
	fill_paths(v, r, skel, dev);
}

static int dup_fd(int fd)
{
	int r = fcntl(fd, F_DUPFD_CLOEXEC, 3);

	return r < 0 ? -errno : r;
}

/* The object is the directory the walk stands in ("/", a mount root, "x/.", ""). */
static int result_cur(Walk *w, SbxResolved *ret, bool dot)
{
	int fd, pfd;

	fd = dup_fd(w->cur);
	if (fd < 0)
		return fd;
	pfd = dup_fd(w->cur);
	if (pfd < 0) {
		(void) close(fd);
		return pfd;
	}
	ret->fd = fd;
	ret->parent_fd = pfd;
	strcpy(ret->name, ".");
	ret->exists = true;
	ret->type = S_IFDIR;
	ret->fixed = w->skel || (w->m && w->vlen == w->m->vlen) || w->vlen == 1;
	ret->dot = dot;
	ret->mount = w->m;
	memcpy(ret->vpath, w->vp, w->vlen + 1);
	finish(w->v, ret, w->skel, false);
	return 0;
}

static int resolve_walk(const SbxView *v, const SbxLookup *l, unsigned nlinks, SbxResolved *ret)
{
	_cleanup_(walk_done) Walk w = {.v = v, .l = l, .cur = -1};
	char rest[2 * PATH_MAX];
	unsigned flags = l->flags;
	size_t pos = 0;
	int r;

	if (strlen(l->path) >= PATH_MAX)
		return -ENAMETOOLONG;
	strcpy(rest, l->path);

	if (rest[0] == '/') {
		if (flags & SBX_RESOLVE_BENEATH)
			return -EXDEV;
		walk_root(&w);
	} else {
		size_t dl;

		if (!l->dir_vpath)
			return -EBADF;
		dl = strlen(l->dir_vpath);
		if (dl >= PATH_MAX || l->dir_vpath[0] != '/')
			return -EINVAL;
		memcpy(w.vp, l->dir_vpath, dl + 1);
		w.vlen = dl;
		if (l->dirfd >= 0) {
			walk_set(&w, l->dirfd, false);
			w.m = view_mount_of(v, w.vp);
			/* sbx_view_vpath_of_fd() maps skeleton directories only outside mounts */
			w.skel = !w.m;
		} else {
			/* only the (canonical) virtual path of the start: walk to it */
			r = walk_reopen(&w);
			if (r < 0)
				return r == -ELOOP ? -ENOTDIR : r;
		}
		if (!rest[0]) {
			struct stat st;

			if (!(flags & SBX_RESOLVE_EMPTY_PATH))
				return -ENOENT;
			r = result_cur(&w, ret, false);
			if (r < 0 || l->dirfd < 0)
				return r;
			/* the start fd itself, of any type: execveat(fd, "", AT_EMPTY_PATH) of a
			 * file (fexecve) is not a directory; parent_fd and "." then name it
			 * only for calls made on the fd itself */
			if (fstat(ret->fd, &st) < 0)
				return -errno;
			ret->type = st.st_mode & S_IFMT;
			return 0;
		}
	}

	for (;;) {
		char newvp[PATH_MAX];
		size_t newlen, clen;
		const char *comp;
		bool last, trailing;
		Child ch;

		while (rest[pos] == '/')
			pos++;
		if (!rest[pos]) {
			/* "/" or a path made of slashes, or one ending in a symlink to "/" */
			return result_cur(&w, ret, false);
		}
		comp = rest + pos;
		clen = strcspn(comp, "/");
		pos += clen;
		trailing = rest[pos] == '/';
		{
			size_t q = pos;
			while (rest[q] == '/')
				q++;
			last = !rest[q];
		}

		if (clen == 1 && comp[0] == '.') {
			if (last)
				return result_cur(&w, ret, true);
			continue;
		}
		if (clen == 2 && comp[0] == '.' && comp[1] == '.') {
			if ((flags & SBX_RESOLVE_BENEATH) && w.depth == 0)
				return -EXDEV;
			if (w.depth > 0)
				w.depth--;
			if (w.vlen > 1 && !walk_pop(&w)) {
				while (w.vlen > 1 && w.vp[w.vlen - 1] != '/')
					w.vlen--;
				if (w.vlen > 1)
					w.vlen--;
				w.vp[w.vlen] = 0;
				r = walk_reopen(&w);
				if (r < 0)
					return r;
			}
			if (last)
				return result_cur(&w, ret, true);
			continue;
		}

		r = lookup_child(&w, comp, clen, !last || trailing, &ch, newvp, &newlen);
		if (r == 0 && v->has_rules && view_rule_restriction(v, newvp) != SBX_ACCESS_RW) {
			SbxAccess a = view_rule_restriction(v, newvp);

			if (!last || a == SBX_ACCESS_HIDDEN) {
				child_done(&ch);
				if (!last)
					return a == SBX_ACCESS_HIDDEN ? -ENOENT : -EACCES;
				/* a hidden object: report it without a handle, as if absent */
				ret->fd = -1;
				ret->parent_fd = dup_fd(w.cur);
				if (ret->parent_fd < 0)
					return ret->parent_fd;
				memcpy(ret->name, comp, clen);
				ret->name[clen] = 0;
				ret->exists = false;
				ret->mount = w.m;
				memcpy(ret->vpath, newvp, newlen + 1);
				finish(v, ret, w.skel, false);
				ret->access = SBX_ACCESS_HIDDEN;
				return 0;
			}
		}
		if (r == -ENOENT && last) {
			if (view_rule_restriction(v, newvp) == SBX_ACCESS_HIDDEN ||
			    (flags & SBX_RESOLVE_CREATE)) {
				ret->fd = -1;
				ret->parent_fd = dup_fd(w.cur);
				if (ret->parent_fd < 0)
					return ret->parent_fd;
				memcpy(ret->name, comp, clen);
				ret->name[clen] = 0;
				ret->exists = false;
				ret->trailing_slash = trailing;
				ret->mount = w.m;
				memcpy(ret->vpath, newvp, newlen + 1);
				finish(v, ret, w.skel || (w.m && w.m->kind == SBX_MOUNT_DEV),
				       false);
				return 0;
			}
			return -ENOENT;
		}
		if (r < 0)
			return r;

		if (ch.type == S_IFLNK && (!last || trailing || (flags & SBX_RESOLVE_FOLLOW)) &&
		    !(last && (flags & SBX_RESOLVE_KEEP_MAGIC) && !ch.synthetic_link && w.m &&
		      w.m->kind == SBX_MOUNT_PROC)) {
			char target[PATH_MAX];
			size_t tlen, rlen;
			ssize_t k;

			if (flags & SBX_RESOLVE_NO_SYMLINKS) {
				child_done(&ch);
				return -ELOOP;
			}
			if (++nlinks > MAX_SYMLINKS) {
				child_done(&ch);
				return -ELOOP;
			}
			if (ch.synthetic_link) {
				snprintf(target, sizeof(target), "%s", ch.link);
				k = (ssize_t) strlen(target);
			} else {
				k = readlinkat(ch.fd, "", target, sizeof(target) - 1);
				if (k < 0) {
					r = -errno;
					child_done(&ch);
					return r;
				}
				if ((size_t) k >= sizeof(target) - 1) {
					child_done(&ch);
					return -ENAMETOOLONG;
				}
				target[k] = 0;
			}
			child_done(&ch);
			if (k == 0)
				return -ENOENT;
			if (w.m && w.m->kind == SBX_MOUNT_PROC && target[0] == '/') {
				/* a magic link (/proc/PID/cwd, exe, fd/N): its text is a host
				 * path; follow the virtual path it maps to, or nothing */
				char mapped[PATH_MAX];

				if (clen == 4 && memcmp(comp, "root", 4) == 0)
					strcpy(mapped, "/"); /* /proc/PID/root: the view's root */
				else if (sbx_view_vpath_of_host(v, target, mapped, sizeof(mapped),
								NULL) < 0)
					return -ENOENT;
				strcpy(target, mapped);
				k = (ssize_t) strlen(target);
			}
			tlen = (size_t) k;
			rlen = strlen(rest + pos);
			if (tlen + rlen + 1 > sizeof(rest))
				return -ENAMETOOLONG;
			/* rest := target + remaining (which starts with '/' or is empty) */
			memmove(rest + tlen, rest + pos, rlen + 1);
			memcpy(rest, target, tlen);
			pos = 0;
			if (target[0] == '/') {
				if (flags & SBX_RESOLVE_BENEATH)
					return -EXDEV;
				walk_root(&w);
				w.depth = 0;
			}
			continue;
		}

		if (!last) {
			if (ch.type != S_IFDIR) {
				child_done(&ch);
				return -ENOTDIR;
			}
			walk_push(&w, ch.fd, ch.owned);
			w.m = ch.m;
			w.skel = ch.skel;
			memcpy(w.vp, newvp, newlen + 1);
			w.vlen = newlen;
			w.depth++;
			continue;
		}

		/* The last component, found (a kept magic link is checked after the reopen). */
		if ((trailing || (flags & SBX_RESOLVE_DIRECTORY)) && ch.type != S_IFDIR &&
		    !(ch.type == S_IFLNK && (flags & SBX_RESOLVE_KEEP_MAGIC))) {
			child_done(&ch);
			return -ENOTDIR;
		}
		if (ch.fixed && !ch.dev && ch.type == S_IFDIR) {
			/* mount root or skeleton directory: name it as "." inside itself */
			walk_set(&w, ch.fd, ch.owned);
			w.m = ch.m;
			w.skel = ch.skel;
			memcpy(w.vp, newvp, newlen + 1);
			w.vlen = newlen;
			r = result_cur(&w, ret, false);
			if (r >= 0)
				ret->fixed = true;
			ret->trailing_slash = trailing;
			return r;
		}
		if (ch.synthetic_link) {
			snprintf(ret->synthetic_link, sizeof(ret->synthetic_link), "%s", ch.link);
			ret->fd = -1;
		} else {
			ret->fd = ch.owned ? ch.fd : dup_fd(ch.fd);
			if (ret->fd < 0)
				return ret->fd;
		}
		ret->parent_fd = dup_fd(ch.pts ? v->pts_fd : ch.dev ? v->dev_fd : w.cur);
		if (ret->parent_fd < 0) {
			r = ret->parent_fd;
			(void) close(ret->fd);
			ret->fd = -1;
			return r;
		}
		memcpy(ret->name, comp, clen);
		ret->name[clen] = 0;
		ret->exists = true;
		ret->type = ch.type;
		ret->fixed = ch.fixed;
		ret->trailing_slash = trailing;
		ret->mount = ch.m;
		memcpy(ret->vpath, newvp, newlen + 1);
		finish(v, ret, ch.skel, ch.dev);
		return 0;
	}
}

/*
 * The fast path met a symlink as the last component (/usr/bin/sh -> dash): go on with the
 * walk from the parent directory it reached, instead of starting again from the root.
 * Returns like resolve_fast().
 */
static int follow_from(const SbxView *v, const SbxLookup *l, int pfd, const char *norm,
		       const char *last, bool trailing, SbxResolved *ret)
{
	char target[PATH_MAX], dir[PATH_MAX];
	SbxLookup l2 = *l;
	size_t dlen = (size_t) (last - norm) - 1;
	ssize_t k;
	int r;

	if (l->flags & (SBX_RESOLVE_NO_SYMLINKS | SBX_RESOLVE_BENEATH))
		return 0;
	k = readlinkat(pfd, last, target, sizeof(target) - 2);
	if (k <= 0 || (size_t) k >= sizeof(target) - 2)
		return 0; /* changed, empty or huge: the walk from the root decides */
	target[k] = 0;
	if (trailing)
		strcat(target, "/");
	if (dlen == 0)
		dlen = 1; /* parent is "/" */
	memcpy(dir, norm, dlen);
	dir[dlen] = 0;
	l2.path = target;
	l2.dirfd = pfd;
	l2.dir_vpath = dir;
	for (unsigned i = 0; i < MAX_RETRIES; i++) {
		r = resolve_walk(v, &l2, 1, ret);
		if (r != -EAGAIN)
			break;
		sbx_resolved_done(ret);
	}
	return r < 0 ? r : 1;
}

/*
 * SbxResolved.kernel_same for a fast walk that ended in mount m: the kernel, walking the
 * caller's own string, starts where the view's walk started and meets what it met. The fast
 * path already refused symlinks on the way and ".." after a real component; a leading ".."
 * of a relative path it resolves from the start's virtual path, which the host need not
 * share (the start may be a mount's root), so here no ".." at all. A mount with another
 * beneath it is left out: the host holds the outer source's own directory there.
 */
static bool kernel_walk_same(const SbxLookup *l, const SbxMount *m)
{
	const char *d = l->dir_vpath;

	if (m->nested)
		return false;
	for (const char *p = strstr(l->path, ".."); p; p = strstr(p + 1, ".."))
		if ((p == l->path || p[-1] == '/') && (p[2] == 0 || p[2] == '/'))
			return false;
	if (l->path[0] == '/')
		return m->host_same;
	/* relative: from the caller's real cwd or dirfd, which lies in this mount */
	return d && (m->vlen == 1 || (strncmp(d, m->vpath, m->vlen) == 0 &&
				      (d[m->vlen] == '/' || d[m->vlen] == 0)));
}

/* 1: answered; 0: not applicable, use the walk; < 0: the answer is this error. */
static int resolve_fast(const SbxView *v, const SbxLookup *l, SbxResolved *ret)
{
	char full[PATH_MAX], norm[PATH_MAX];
	const SbxMount *m;
	const char *rest, *slash, *last;
	bool trailing, borrowed = false;
	struct stat st;
	size_t len;
	_cleanup_close_ int pfd = -1;
	int fd, r;

	/* EMPTY_PATH matters only for an empty path (readlink always passes it) */
	if ((l->flags & SBX_RESOLVE_NO_FAST) ||
	    ((l->flags & SBX_RESOLVE_EMPTY_PATH) && !l->path[0]) || (v->flags & SBX_VIEW_NO_FAST))
		return 0;
	if (l->path[0] == '/') {
		if (l->flags & SBX_RESOLVE_BENEATH)
			return 0;
		r = (int) MIN(str_copy(full, sizeof(full), l->path), (size_t) INT_MAX);
	} else {
		if (!l->dir_vpath || !l->path[0])
			return 0;
		r = snprintf(full, sizeof(full), "%s/%s", l->dir_vpath, l->path);
	}
	if (r < 0 || (size_t) r >= sizeof(full))
		return 0;
	len = (size_t) r;
	/* No ".." after a real component: then the lexical path is the canonical one. Leading
	 * "../" of a relative path are fine, since dir_vpath is canonical (it was mapped from
	 * the host path of a directory, which has no symlinks in it). */
	{
		const char *p = full;

		if (l->path[0] != '/' && !(l->flags & SBX_RESOLVE_BENEATH)) {
			p = full + strlen(l->dir_vpath) + 1;
			while ((p[0] == '.' && p[1] == '.' && (p[2] == '/' || !p[2])) ||
			       (p[0] == '.' && (p[1] == '/' || !p[1])) || p[0] == '/')
				p += p[0] == '/' ? 1 : p[1] == '.' ? 2 : 1;
		}
		for (p = strstr(p, ".."); p; p = strstr(p + 1, ".."))
			if ((p == full || p[-1] == '/') && (p[2] == 0 || p[2] == '/'))
				return 0;
	}
	trailing = full[len - 1] == '/';
	while (len > 1 && full[len - 1] == '/')
		len--;
	if (full[len - 1] == '.' && (len == 1 || full[len - 2] == '/'))
		return 0; /* ends in ".": the walk knows what that means */
	if (sbx_path_normalize(full, norm, sizeof(norm)) < 0)
		return 0;
	m = view_mount_of(v, norm);
	if (!m || m->kind != SBX_MOUNT_DIR)
		return 0;
	rest = norm + (m->vlen == 1 ? 1 : m->vlen + 1);
	if (v->has_rules) {
		SbxAccess a = sbx_view_access(v, norm, NULL);

		if (a == SBX_ACCESS_HIDDEN || a == SBX_ACCESS_DENIED)
			return 0;
	}
	if (norm[m->vlen == 1 ? 0 : m->vlen] == 0 || !*rest) {
		/* The mount root itself: what the walk's result_cur() gives, without its two
		 * dups when no fd of the object is wanted (readlink("/usr") is a third of gcc's
		 * readlinks: glibc's realpath() of every include directory). */
		if (!(l->flags & SBX_RESOLVE_NO_FD))
			return 0;
		ret->parent_fd = m->fd;
		ret->parent_borrowed = true;
		strcpy(ret->name, ".");
		ret->exists = true;
		ret->type = S_IFDIR;
		ret->fixed = true;
		ret->trailing_slash = trailing && norm[1]; /* "/" has no trailing slash */
		ret->mount = m;
		ret->fast = true;
		ret->kernel_same = kernel_walk_same(l, m);
		memcpy(ret->vpath, norm, strlen(norm) + 1);
		finish(v, ret, false, false);
		return 1;
	}
	slash = strrchr(rest, '/');
	if (slash) {
		char parent[PATH_MAX];
		struct open_how how = {
			.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};

		memcpy(parent, rest, (size_t) (slash - rest));
		parent[slash - rest] = 0;
		pfd = (int) syscall(SYS_openat2, m->fd, parent, &how, sizeof(how));
		if (pfd < 0) {
			r = -errno;
			if ((r == -ENOENT || r == -ENOTDIR) && !m->nested)
				return r;
			return 0; /* ELOOP, EXDEV, EAGAIN, ENOSYS…: the walk decides */
		}
		last = slash + 1;
	} else {
		pfd = m->fd; /* borrowed: one dup and one close less */
		borrowed = true;
		last = rest;
	}
	if (l->flags & SBX_RESOLVE_NO_FD) {
		/* one fstatat instead of openat+fstat+close: the caller acts on parent+name */
		fd = -1;
		if (fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) < 0)
			r = -errno;
		else
			r = 0;
	} else {
		fd = openat(pfd, last, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		r = fd < 0 ? -errno : 0;
		if (fd >= 0 && fstat(fd, &st) < 0) {
			r = -errno;
			(void) close(fd);
			fd = -1;
		}
	}
	if (r < 0) {
		int answer = 1;

		if (r != -ENOENT)
			answer = r == -ENOTDIR && !m->nested ? r : 0;
		else if (m->nested && view_is_mount_ancestor(v, norm, strlen(norm)))
			answer = 0;
		else if (!(l->flags & SBX_RESOLVE_CREATE))
			answer = -ENOENT;
		if (answer != 1) {
			if (borrowed)
				pfd = -1;
			return answer;
		}
		ret->exists = false;
		ret->fd = -1;
	} else {
		if (S_ISLNK(st.st_mode) && (trailing || (l->flags & SBX_RESOLVE_FOLLOW))) {
			if (fd >= 0)
				(void) close(fd);
			r = follow_from(v, l, pfd, norm, last, trailing, ret);
			if (borrowed)
				pfd = -1;
			return r;
		}
		if (m->nested && !S_ISDIR(st.st_mode) &&
		    view_is_mount_ancestor(v, norm, strlen(norm))) {
			if (fd >= 0)
				(void) close(fd);
			if (borrowed)
				pfd = -1;
			return 0;
		}
		if ((trailing || (l->flags & SBX_RESOLVE_DIRECTORY)) && !S_ISDIR(st.st_mode)) {
			if (fd >= 0)
				(void) close(fd);
			if (borrowed)
				pfd = -1;
			return -ENOTDIR;
		}
		ret->exists = true;
		ret->fd = fd;
		ret->type = st.st_mode & S_IFMT;
		ret->st = st;
		ret->st_valid = true;
	}
	if (strlen(last) > NAME_MAX) {
		if (ret->fd >= 0)
			(void) close(ret->fd);
		ret->fd = -1;
		if (borrowed)
			pfd = -1;
		return -ENAMETOOLONG;
	}
	ret->parent_fd = TAKE_FD(pfd);
	ret->parent_borrowed = borrowed;
	strcpy(ret->name, last);
	ret->trailing_slash = trailing;
	ret->mount = m;
	ret->fast = true;
	ret->kernel_same = kernel_walk_same(l, m);
	memcpy(ret->vpath, norm, strlen(norm) + 1);
	finish(v, ret, false, false);
	return 1;
}

int sbx_view_resolve(const SbxView *v, const SbxLookup *l, SbxResolved *ret)
{
	int r;

	*ret = (SbxResolved){.parent_fd = -1, .fd = -1};
	if (!l->path)
		return -EFAULT;
	if (!l->path[0] && !(l->flags & SBX_RESOLVE_EMPTY_PATH))
		return -ENOENT;
	r = resolve_fast(v, l, ret);
	if (r > 0)
		return 0;
	if (r < 0) {
		sbx_resolved_done(ret);
		return r;
	}
	for (unsigned i = 0; i < MAX_RETRIES; i++) {
		sbx_resolved_done(ret);
		r = resolve_walk(v, l, 0, ret);
		if (r != -EAGAIN)
			break;
	}
	if (r < 0)
		sbx_resolved_done(ret);
	return r;
}

void sbx_resolved_done(SbxResolved *r)
{
	if (r->fd >= 0)
		(void) close(r->fd);
	if (r->parent_fd >= 0 && !r->parent_borrowed)
		(void) close(r->parent_fd);
	*r = (SbxResolved){.parent_fd = -1, .fd = -1};
}
