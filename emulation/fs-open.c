/* SPDX-License-Identifier: MIT */
/*
 * open(2), openat(2), openat2(2), creat(2).
 *
 * The supervisor resolves the path in the view, opens the object itself relative to the
 * pinned parent directory with O_NOFOLLOW on the last component (the walk already followed
 * what had to be followed), and hands the fd to the child with SECCOMP_IOCTL_NOTIF_ADDFD
 * (SECCOMP_ADDFD_FLAG_SEND, 5.14), O_CLOEXEC passed through newfd_flags.
 *
 * Deviations from Linux:
 *  - O_CREAT applies the child's umask (read from /proc/PID/status) by hand; a default ACL
 *    on the parent directory is combined with that mode rather than replacing the umask.
 *  - The supervisor always adds O_NOCTTY: opening a terminal never makes it the child's
 *    controlling terminal.
 *  - openat2: RESOLVE_BENEATH, RESOLVE_NO_SYMLINKS are honoured; RESOLVE_IN_ROOT is
 *    treated as RESOLVE_BENEATH (EXDEV instead of clamping at the dirfd); RESOLVE_NO_XDEV
 *    and RESOLVE_NO_MAGICLINKS are accepted but not enforced (/proc magic links are
 *    followed by mapping their target into the view); RESOLVE_CACHED answers EAGAIN, which
 *    the man page allows (the caller retries without it).
 *  - Writes into a ro mount or a ro rule: EROFS, as a read-only bind mount would answer.
 */
#include "emulation/fs-internal.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/util.h"

#ifndef OPEN_HOW_SIZE_VER0
#define OPEN_HOW_SIZE_VER0 24
#endif
#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif

#define OPEN_VALID_FLAGS                                                                           \
	(O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | O_DSYNC |     \
	 FASYNC | O_DIRECT | O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | O_NOATIME | O_CLOEXEC |      \
	 O_PATH | __O_TMPFILE | O_SYNC)

typedef struct OpenArgs {
	int dirfd;
	uint64_t path;
	uint64_t flags;
	uint64_t mode;
	uint64_t resolve;
} OpenArgs;

static int open_args(const EmuRequest *req, OpenArgs *a)
{
	switch (req->nr) {
	case SYS_open:
		*a = (OpenArgs){AT_FDCWD, req->args[0], (uint32_t) req->args[1], req->args[2], 0};
		return 0;
	case SYS_creat:
		*a = (OpenArgs){AT_FDCWD, req->args[0], O_CREAT | O_WRONLY | O_TRUNC, req->args[1],
				0};
		return 0;
	case SYS_openat:
		*a = (OpenArgs){fs_arg_fd(req->args[0]), req->args[1], (uint32_t) req->args[2],
				req->args[3], 0};
		return 0;
	case SYS_openat2: {
		struct open_how how = {0};
		unsigned char extra[256];
		uint64_t size = req->args[3];
		int r;

		if (size < OPEN_HOW_SIZE_VER0)
			return -EINVAL;
		if (size > 4096)
			return -E2BIG;
		/* TOCTOU: how is copied once and only the copy is used. */
		r = req->mem->read(req->mem, req->args[2], &how, sizeof(how));
		if (r < 0)
			return -EFAULT;
		/* a larger struct from a newer libc: the tail must be zero (E2BIG otherwise) */
		for (uint64_t off = sizeof(how); off < size; off += sizeof(extra)) {
			size_t n = MIN(sizeof(extra), size - off);

			if (req->mem->read(req->mem, req->args[2] + off, extra, n) < 0)
				return -EFAULT;
			for (size_t i = 0; i < n; i++)
				if (extra[i])
					return -E2BIG;
		}
		if (how.flags & ~(uint64_t) OPEN_VALID_FLAGS)
			return -EINVAL;
		if (how.resolve &
		    ~(uint64_t) (RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS |
				 RESOLVE_BENEATH | RESOLVE_IN_ROOT | RESOLVE_CACHED))
			return -EINVAL;
		if ((how.resolve & RESOLVE_BENEATH) && (how.resolve & RESOLVE_IN_ROOT))
			return -EINVAL;
		if (how.mode && !(how.flags & (O_CREAT | __O_TMPFILE)))
			return -EINVAL;
		if (how.mode & ~(uint64_t) 07777)
			return -EINVAL;
		if (how.resolve & RESOLVE_CACHED)
			return -EAGAIN;
		*a = (OpenArgs){fs_arg_fd(req->args[0]), req->args[1], how.flags, how.mode,
				how.resolve};
		return 0;
	}
	default:
		return -ENOSYS;
	}
}

/*
 * /proc/PID/fd/N (also reached through /dev/stdin, /dev/fd/N): reopen the object of the
 * child's own fd, never with more access than that fd has (an O_PATH fd allows only O_PATH).
 * Linux checks the inode's permissions instead; DESIGN.md asks for the stricter rule.
 */
static int reopen_proc_fd(const EmuRequest *req, EmuDecision *d, pid_t pid, int n, int flags,
			  bool may_block)
{
	_cleanup_close_ int cfd = -1;
	char p[64];
	struct stat st;
	int fl, have, want, fd;
	bool need_r, need_w, has_r, has_w;

	cfd = sbx_host_get_fd(fs_host(req), pid, n);
	if (cfd < 0)
		return fs_fail(d, cfd == -EBADF || cfd == -ESRCH ? -ENOENT : cfd, NULL);
	fl = fcntl(cfd, F_GETFL);
	if (fl < 0)
		return fs_fail(d, -errno, NULL);
	if (!pidfd_getfd_usable()) {
		/* COMPAT: cfd is our O_PATH reopen (no pidfd_getfd): the child's access mode is
		 * in its fdinfo, read after the reopen; the same inode proves both name one file
		 * (TOCTOU: a swap of fd N in between is ENOENT, as if it had come first) */
		uint64_t ino = 0;
		int r = child_fd_info(pid, n, NULL, &fl, &ino);

		if (r < 0 || fstat(cfd, &st) < 0 || st.st_ino != ino)
			return fs_fail(d, -ENOENT, NULL);
	}
	if ((flags & O_CREAT) && (flags & O_EXCL))
		return fs_fail(d, -EEXIST, NULL);
	if (!(flags & O_PATH)) {
		have = fl & O_ACCMODE;
		want = flags & O_ACCMODE;
		has_r = !(fl & O_PATH) && (have == O_RDONLY || have == O_RDWR);
		has_w = !(fl & O_PATH) && (have == O_WRONLY || have == O_RDWR);
		need_r = want == O_RDONLY || want == O_RDWR;
		need_w = want == O_WRONLY || want == O_RDWR || (flags & O_TRUNC);
		if ((need_r && !has_r) || (need_w && !has_w)) {
			d->denied = true;
			return fs_fail(d, -EACCES, "reopening an fd with more access than it has");
		}
		if (fstat(cfd, &st) < 0)
			return fs_fail(d, -errno, NULL);
		if (S_ISFIFO(st.st_mode) && !(flags & O_NONBLOCK) && !may_block)
			return -EWOULDBLOCK;
	}
	fs_fd_path(cfd, p);
	fd = open(p, (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC)) | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return fs_fail(d, -errno, NULL);
	d->inject_fd = fd;
	d->inject_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
	return fs_ok(d, 0);
}

/*
 * /dev/pts/N: never opened by name (pty N may have been closed and handed to another session
 * since the walk); the hook opens the peer of the master the tree holds (TIOCGPTPEER), and
 * says ENOENT when there is none any more.
 */
static int open_pts(const EmuRequest *req, EmuDecision *d, const SbxResolved *res, int flags)
{
	const EmuHost *h = fs_host(req);
	unsigned long n;
	char *end;
	int fd;

	if (!h->open_pts)
		return fs_fail(d, -ENOENT, NULL);
	n = strtoul(res->vpath + 9, &end, 10);
	if (*end || n > UINT_MAX)
		return fs_fail(d, -ENOENT, NULL);
	fd = h->open_pts(h->userdata, req->pid, (unsigned) n,
			 (flags & O_PATH) ? O_RDONLY : flags & (O_ACCMODE | O_NONBLOCK));
	if (fd < 0)
		return fs_fail(d, fd, NULL);
	d->inject_fd = fd;
	d->inject_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
	return fs_ok(d, 0);
}

/*
 * Held opens ([[rule]] access = "ask" / "ask-write"; docs/policy.md "[[rule]]"). The
 * seccomp notification is the hold: on the receiver the open answers -EWOULDBLOCK and goes
 * to a worker (as a FIFO open does), which asks through the host's ask_open (the
 * tracer's asker: tracer/ask.c) while the program waits in its open.
 *
 * TOCTOU: the question is about a virtual path and what it named when asked: the object's
 * dev/ino, or for a create the parent directory's (the name was absent). After an allowed
 * answer the path is walked again from the start; the walk must find the same virtual path
 * and the same object (or the same parent, the name still absent), else the open fails with
 * EACCES (a program that changed the path while a human decided gets nothing). The open
 * itself is made on the walk's pinned parent with O_NOFOLLOW, and an existing object's fd
 * must still be the dev/ino asked about (a rename between the walk and the openat). The
 * answer covers the one open; allow_session remembers the path (in the tracer).
 */
typedef struct OpenAsk {
	bool approved; /* an answer allowed it: the next walk must find the same thing */
	bool exists;
	dev_t dev;
	ino_t ino;
	const char *why;
	char vpath[PATH_MAX];
} OpenAsk;

/* The object's identity, or its parent directory's when it does not exist (a create). */
static int open_identity(const SbxResolved *res, dev_t *ret_dev, ino_t *ret_ino)
{
	struct stat st;

	if (res->exists ? fstatat(res->parent_fd, res->name, &st, AT_SYMLINK_NOFOLLOW) < 0
			: fstat(res->parent_fd, &st) < 0)
		return -errno;
	*ret_dev = st.st_dev;
	*ret_ino = st.st_ino;
	return 0;
}

/*
 * An open an ask rule holds. Returns 0 when it may go on (approved, and the walk found what
 * was asked about), 1 with the failure in d, 2 after an allowing answer (walk again), or
 * -EWOULDBLOCK on the receiver (the worker asks).
 */
static int hold_open(const EmuRequest *req, EmuDecision *d, const SbxResolved *res, bool write,
		     bool may_block, OpenAsk *oa)
{
	const EmuHost *h = fs_host(req);
	dev_t dev = 0;
	ino_t ino = 0;
	int r;

	r = open_identity(res, &dev, &ino);
	if (r < 0)
		return fs_fail(d, r, NULL) + 1;
	if (oa->approved) {
		if (streq(oa->vpath, res->vpath) && oa->exists == res->exists && oa->dev == dev &&
		    oa->ino == ino)
			return 0;
		d->denied = true;
		return fs_fail(d, -EACCES, "the path changed while asking") + 1;
	}
	if (!may_block)
		return -EWOULDBLOCK;
	r = h->ask_open ? h->ask_open(h->userdata, req->pid, emu_req_tgid(req), res->vpath, write,
				      res->ask_rule)
			: 0;
	if (r <= 0) {
		d->denied = true;
		return fs_fail(d, -EACCES, "held by an ask rule: not allowed") + 1;
	}
	*oa = (OpenAsk){.approved = true,
			.exists = res->exists,
			.dev = dev,
			.ino = ino,
			.why = r == 2 ? "allowed when asked (for the session)"
				      : "allowed when asked (once)"};
	snprintf(oa->vpath, sizeof(oa->vpath), "%s", res->vpath);
	return 2;
}

/*
 * Opens the kernel makes (docs/filesystem.md, "Opens the kernel makes"): after every check
 * above has passed, an open the view resolved to where the kernel's own walk of the
 * caller's string ends as well (SbxResolved.kernel_same: one mount, no symlink, no "..",
 * the same start) is continued, not made here and injected: ADDFD's two wake-ups are not the
 * synchronous kind and cost 30-40 µs more than a plain answer when they cross CPUs.
 *
 * TOCTOU: between this check and the kernel's own walk another thread may rewrite the
 * string, and the tree may rename or swap what lies beneath a rw mount; the kernel then
 * opens whatever the new walk reaches. That is safe only because of what holds whatever it
 * reaches, checked by the kernel at the open itself: Landlock, in every process of the tree
 * (inherited, never lifted), allows read beneath ro sources and every right beneath rw and
 * tmp sources and nothing else, and EmuHost.landlock_exact says the view shows exactly
 * those trees with exactly those rights. So a rewritten open gets a file the view would
 * have given it under another name, with the same rights, or EACCES. What Landlock does not
 * check is never continued: O_PATH (no access is checked for it), openat2 (its flags sit in
 * memory, which the kernel reads again), sensitivity levels and held opens (rules, which
 * landlock_exact excludes anyway). The flags of open, openat and creat are registers: the
 * access the kernel checks is the one checked here. Tests: the tests/security variants named
 * -kernel-open.
 *
 * The exception (found by review, and accepted; docs/filesystem.md): Landlock does not
 * check objects of the kernel's internal file systems (pipes, memfds, namespace files). A
 * string rewritten to /proc/self/fd/N (the host's /proc: the emulated view has no mount
 * namespace) reopens such an object the tree already holds with any access mode, where
 * reopen_proc_fd() below refuses more access than the fd has; /proc/self/ns/X opens a
 * namespace file. Objects of processes outside the tree are refused (Landlock's ptrace
 * scope), files on disk are checked on their path. The EACCES of a rewritten path outside
 * the view also tells the tree that a host file exists, as a continued chdir or exec did.
 */
static bool kernel_opens(const EmuRequest *req, const SbxResolved *res, int flags,
			 bool write_intent)
{
	if (!fs_host(req)->landlock_exact || !res->kernel_same)
		return false;
	if (req->nr == SYS_openat2 || (flags & O_PATH))
		return false;
	if (res->level > SENSITIVITY_NONE || res->ask != SBX_ASK_NONE)
		return false;
	/* a device is the supervisor's to open (O_NOCTTY, and beneath a ro source Landlock
	 * would refuse its ioctls where the supervisor's fd allowed them); found by review */
	if (res->exists && res->type != S_IFREG && res->type != S_IFDIR && res->type != S_IFIFO)
		return false;
	/* once the disk budget is used up no open may create: a name found existing here can be
	 * gone, or the string rewritten, by the kernel's walk (found by review) */
	if ((flags & O_CREAT) && emu_host_disk_full(req))
		return false;
	return res->access == SBX_ACCESS_RW || (res->access == SBX_ACCESS_RO && !write_intent);
}

static int do_open(const EmuRequest *req, EmuDecision *d, bool may_block)
{
	OpenAsk oa = {};
	OpenArgs a;
	char path[PATH_MAX];
	unsigned rflags;
	int flags, r, acc, um = 0;
	bool tmpfile, creat, excl, write_intent;

	r = open_args(req, &a);
	if (r < 0)
		return fs_fail(d, r, NULL);
	flags = (int) a.flags;
	if (flags & O_PATH) /* open(2): other flags are ignored with O_PATH */
		flags &= O_PATH | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW;
	/* glibc adds O_LARGEFILE on 64-bit; it is a no-op there */
	tmpfile = (flags & __O_TMPFILE) == __O_TMPFILE;
	creat = (flags & O_CREAT) && !tmpfile;
	excl = creat && (flags & O_EXCL);
	acc = flags & O_ACCMODE;
	if (acc == 3 && !(flags & O_PATH))
		return fs_fail(d, -EINVAL, NULL);
	if (tmpfile && acc == O_RDONLY)
		return fs_fail(d, -EINVAL, NULL);
	write_intent = !(flags & O_PATH) &&
		       (acc == O_WRONLY || acc == O_RDWR || (flags & O_TRUNC) || tmpfile);

	r = fs_read_path(req, a.path, path, sizeof(path));
	if (r < 0)
		return fs_fail(d, r, NULL);
	if ((a.resolve & RESOLVE_IN_ROOT) && path[0] == '/')
		return fs_fail(d, -EXDEV, "RESOLVE_IN_ROOT with an absolute path");

	rflags = 0;
	if (!(flags & O_NOFOLLOW) && !excl)
		rflags |= SBX_RESOLVE_FOLLOW;
	if ((flags & O_DIRECTORY) || tmpfile)
		rflags |= SBX_RESOLVE_DIRECTORY;
	if (creat)
		rflags |= SBX_RESOLVE_CREATE;
	if (!tmpfile)
		rflags |= SBX_RESOLVE_NO_FD; /* opened through parent_fd + name */
	if (rflags & SBX_RESOLVE_FOLLOW)
		rflags |= SBX_RESOLVE_KEEP_MAGIC;
	if (a.resolve & RESOLVE_NO_SYMLINKS)
		rflags |= SBX_RESOLVE_NO_SYMLINKS;
	if (a.resolve & (RESOLVE_BENEATH | RESOLVE_IN_ROOT))
		rflags |= SBX_RESOLVE_BENEATH;

	if (creat || tmpfile) {
		um = fs_child_umask(req);
		if (um < 0)
			return um;
	}

	for (unsigned attempt = 0; attempt < FS_MAX_RETRIES; attempt++) {
		_cleanup_(sbx_resolved_done) SbxResolved res = {.fd = -1, .parent_fd = -1};
		int oflags, fd;

		r = fs_resolve_at(req, a.dirfd, path, rflags, &res);
		if (r < 0)
			return fs_fail(d, r, NULL);
		fs_note(d, &res);

		if ((rflags & SBX_RESOLVE_KEEP_MAGIC) && res.exists && res.type == S_IFLNK &&
		    res.mount && res.mount->kind == SBX_MOUNT_PROC) {
			pid_t pid;
			int n;

			if (res.access == SBX_ACCESS_HIDDEN || res.access == SBX_ACCESS_DENIED) {
				d->denied = true;
				return fs_fail(d,
					       res.access == SBX_ACCESS_HIDDEN ? -ENOENT : -EACCES,
					       "hidden or denied by the policy");
			}
			if (sbx_proc_fd_path(res.mount, res.vpath, &pid, &n))
				return reopen_proc_fd(req, d, pid, n, flags, may_block);
			/* exe, cwd, root…: follow the virtual path they map to */
			rflags &= ~(unsigned) SBX_RESOLVE_KEEP_MAGIC;
			attempt--;
			continue;
		}

		if (tmpfile) {
			r = fs_check_read(&res);
			if (r == 0)
				r = fs_check_write(&res, true);
			if (r < 0) {
				d->denied = true;
				return fs_fail(d, r, "O_TMPFILE where the policy allows no writes");
			}
			if (emu_host_disk_full(req)) {
				d->denied = true;
				return fs_fail(d, -EDQUOT, "the disk budget is used up");
			}
			fd = openat(res.fd, ".", (flags & ~O_CLOEXEC) | O_CLOEXEC | O_NOCTTY,
				    (mode_t) (a.mode & 07777 & ~(unsigned) um));
			if (fd < 0)
				return fs_fail(d, -errno, NULL);
			(void) fs_fix_mode(req, fd, -1, NULL,
					   (mode_t) (a.mode & 07777 & ~(unsigned) um));
			d->inject_fd = fd;
			d->inject_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
			return fs_ok(d, 0);
		}

		if (res.access == SBX_ACCESS_HIDDEN) {
			d->denied = true;
			return fs_fail(d, creat ? -EACCES : -ENOENT, "hidden by the policy");
		}
		if (res.access == SBX_ACCESS_DENIED) {
			d->denied = true;
			return fs_fail(d, -EACCES, "denied by the policy");
		}

		/* an ask rule: every open ("ask") or those that write or create ("ask-write"),
		 * where an allowed write could write at all (the mount is rw) */
		if (res.ask != SBX_ASK_NONE && !res.trailing_slash &&
		    (res.ask == SBX_ASK_OPEN || write_intent || !res.exists) &&
		    (res.ask_writable || (!write_intent && res.exists))) {
			r = hold_open(req, d, &res, write_intent || !res.exists, may_block, &oa);
			if (r == 2) {
				attempt--; /* the answer is no retry: walk again, and check */
				continue;
			}
			if (r != 0)
				return r > 0 ? 0 : r;
		}

		if (!res.exists) {
			/* only with O_CREAT: the resolver says ENOENT otherwise */
			if (res.trailing_slash)
				return fs_fail(d, -EISDIR, NULL);
			if (res.access != SBX_ACCESS_RW && !(oa.approved && res.ask_writable)) {
				d->denied = true;
				return fs_fail(d, -EROFS, "create in a read-only part of the view");
			}
			if (emu_host_disk_full(req)) {
				d->denied = true;
				return fs_fail(d, -EDQUOT, "the disk budget is used up");
			}
			if (kernel_opens(req, &res, flags, write_intent))
				return fs_continue(d);
			oflags = (flags & ~(O_CLOEXEC | O_NOFOLLOW)) | O_CLOEXEC | O_NOCTTY |
				 O_NOFOLLOW | O_CREAT | O_EXCL;
			fd = openat(res.parent_fd, res.name, oflags,
				    (mode_t) (a.mode & 07777 & ~(unsigned) um));
			if (fd < 0 && (errno == EEXIST || errno == ELOOP) && !excl)
				continue; /* created (maybe as a symlink) meanwhile: again */
			if (fd < 0)
				return fs_fail(d, -errno, NULL);
			/* created by us (O_EXCL): give it the child's mode, whatever our umask */
			(void) fs_fix_mode(req, fd, -1, NULL,
					   (mode_t) (a.mode & 07777 & ~(unsigned) um));
			if (oa.approved)
				d->why = oa.why;
			d->inject_fd = fd;
			d->inject_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
			return fs_ok(d, 0);
		}

		if (excl)
			return fs_fail(d, -EEXIST, NULL);
		if (res.type == S_IFLNK && !(flags & O_PATH))
			return fs_fail(d, -ELOOP, NULL); /* O_NOFOLLOW on a symlink */
		if (res.type == S_IFDIR && write_intent)
			return fs_fail(d, -EISDIR, NULL);
		if (write_intent && res.access != SBX_ACCESS_RW &&
		    !(oa.approved && res.ask_writable)) {
			d->denied = true;
			return fs_fail(d, -EROFS, "write to a read-only part of the view");
		}
		if (!oa.approved && kernel_opens(req, &res, flags, write_intent))
			return fs_continue(d); /* a FIFO then waits in the caller, as it should */
		if (res.type == S_IFIFO && !(flags & (O_NONBLOCK | O_PATH)) && !may_block)
			return -EWOULDBLOCK;

		/* a path with a sensitivity level: the network ratchet drops (and shuts the
		 * tree's inet sockets) before the child gets the fd; the ratchet is the run's,
		 * so it is reached through the host (common/handler.h, EmuHost).
		 * TOCTOU: the level is that of the virtual path the walk resolved from the
		 * supervisor's copy of the path (rules match virtual paths), and the openat
		 * below opens that same name in the same pinned parent, so whatever file it
		 * gets has this level. A swap that makes the open fail walks again; at worst
		 * the ratchet fired for a file then not opened, which errs on the safe side
		 * (it only ever tightens). */
		if (res.level > SENSITIVITY_NONE) {
			r = emu_host_sensitive_open(req, res.level, res.vpath);
			if (r < 0) {
				d->verdict = EMU_KILL;
				d->why = "network ratchet: cannot reach every inet socket of the "
					 "tree (a non-dumpable process?)";
				return 0;
			}
		}

		if (res.mount && res.mount->kind == SBX_MOUNT_DEV &&
		    strncmp(res.vpath, "/dev/pts/", 9) == 0)
			return open_pts(req, d, &res, flags);

		/* The object exists: never create here (the view decided on the existing one). */
		oflags = (flags & ~(O_CLOEXEC | O_CREAT | O_EXCL | O_NOFOLLOW)) | O_CLOEXEC |
			 O_NOCTTY | O_NOFOLLOW;
		fd = openat(res.parent_fd, res.name, oflags);
		if (fd < 0 && (errno == ENOENT || (errno == ELOOP && res.type != S_IFLNK)))
			continue; /* swapped or removed since the walk: walk again */
		if (fd < 0)
			return fs_fail(d, -errno, NULL);
		if (oa.approved) {
			struct stat st;

			/* TOCTOU: renamed in between the walk and the openat: not what was asked */
			if (fstat(fd, &st) < 0 || st.st_dev != oa.dev || st.st_ino != oa.ino) {
				(void) close(fd);
				d->denied = true;
				return fs_fail(d, -EACCES, "the path changed while asking");
			}
			d->why = oa.why;
		}
		if (res.mount && res.mount->kind == SBX_MOUNT_DEV &&
		    streq(res.vpath, "/dev/ptmx")) {
			const EmuHost *h = fs_host(req);

			/* a new pty: the tree may open its pts by name from now on */
			if (h->pty_created)
				h->pty_created(h->userdata, req->pid, fd);
		}
		d->inject_fd = fd;
		d->inject_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
		return fs_ok(d, 0);
	}
	return fs_fail(d, -EAGAIN, "the path kept changing during the open");
}

int emu_handle_open(const EmuRequest *req, EmuDecision *d)
{
	return do_open(req, d, false);
}

int emu_handle_open_blocking(const EmuRequest *req, EmuDecision *d)
{
	return do_open(req, d, true);
}
