/* SPDX-License-Identifier: MIT */
/*
 * Checking execve(2)/execveat(2) in the view (DESIGN "Where ptrace is needed"). The kernel
 * performs the exec itself, on a path: the check here decides, the tracer rewrites translated
 * paths at the seccomp-trace stop and verifies /proc/PID/exe after PTRACE_EVENT_EXEC against
 * the dev/ino checked here.
 */
#include "emulation/fs-internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/shebang.h"
#include "policy/policy.h"

/* One file: visible, regular, executable, allowed by [exec] (or askable: *ret_ask). */
static int check_one(const EmuRequest *req, int dirfd, const char *path, unsigned rflags,
		     SbxResolved *res, struct stat *st, bool *ret_refused, bool *ret_ask)
{
	const Policy *p = sbx_view_policy(req->view);

	int r;

	r = fs_resolve_at(req, dirfd, path, rflags, res);
	if (r < 0)
		return r;
	r = fs_check_read(res);
	if (r < 0) {
		*ret_refused = res->access == SBX_ACCESS_HIDDEN || res->access == SBX_ACCESS_DENIED;
		return r;
	}
	if (res->type == S_IFLNK)
		return -ELOOP; /* AT_SYMLINK_NOFOLLOW on a symlink */
	if (res->type == S_IFDIR)
		return -EACCES;
	if (res->type != S_IFREG)
		return -EACCES;
	if (fstat(res->fd, st) < 0)
		return -errno;
	/* on the object's fd: for execveat(fd, "", AT_EMPTY_PATH) parent_fd is the file */
	if (syscall(SYS_faccessat2, res->fd, "", X_OK, AT_EMPTY_PATH) < 0)
		return -errno;
	*ret_ask = false;
	if (!policy_exec_allowed(p, res->vpath)) {
		if (policy_exec_askable(p, res->vpath)) {
			*ret_ask = true; /* exec.unlisted = "ask": the caller holds it */
			return 0;
		}
		*ret_refused = true;
		return -EACCES;
	}
	return 0;
}

/* The interpreter of a "#!" script (first line), or "" */
static int read_shebang(const SbxResolved *res, char *interp, size_t size)
{
	char p[64], buf[SHEBANG_BUF_SIZE];
	_cleanup_close_ int fd = -1;
	Shebang sb;
	ssize_t n;
	int r;

	interp[0] = 0;
	fs_fd_path(res->fd, p);
	fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errno == EACCES ? 0 : -errno; /* not readable: the kernel will say */
	n = pread(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return 0;
	r = shebang_parse(buf, (size_t) n, &sb);
	if (r <= 0)
		return r;
	if (strlen(sb.interp) >= size)
		return -ENAMETOOLONG;
	strcpy(interp, sb.interp);
	return 0;
}

int emu_fs_exec_check(const EmuRequest *req, int dirfd, const char *path, int at_flags,
		      EmuExecTarget *ret)
{
	_cleanup_(sbx_resolved_done) SbxResolved res = {.fd = -1, .parent_fd = -1};
	_cleanup_(sbx_resolved_done) SbxResolved ires = {.fd = -1, .parent_fd = -1};
	unsigned rflags = (at_flags & AT_SYMLINK_NOFOLLOW) ? 0 : SBX_RESOLVE_FOLLOW;
	char interp[PATH_MAX];
	struct stat st;
	bool ask = false, interp_ask = false;
	int r;

	ret->refused = false;
	if (at_flags & AT_EMPTY_PATH && !path[0])
		rflags |= SBX_RESOLVE_EMPTY_PATH;
	r = check_one(req, dirfd, path, rflags, &res, &st, &ret->refused, &ask);
	if (r < 0)
		return r;
	r = read_shebang(&res, interp, sizeof(interp));
	if (r < 0)
		return r;
	*ret = (EmuExecTarget){.dev = st.st_dev, .ino = st.st_ino, .ask = ask};
	/* (ret->refused is false again: nothing failed so far) */
	snprintf(ret->vpath, sizeof(ret->vpath), "%s", res.vpath);
	snprintf(ret->host_path, sizeof(ret->host_path), "%s", res.host_path);
	ret->identity = fs_kernel_same(req, dirfd, path, res.vpath, res.host_path);
	ret->interp_identity = true;
	if (interp[0]) {
		/* the kernel resolves the interpreter path itself, relative to the cwd if
		 * relative; check what it names in the view */
		r = check_one(req, AT_FDCWD, interp, SBX_RESOLVE_FOLLOW, &ires, &st, &ret->refused,
			      &interp_ask);
		if (r < 0)
			return r == -ENOENT ? -ENOENT : r;
		snprintf(ret->interp_vpath, sizeof(ret->interp_vpath), "%s", ires.vpath);
		snprintf(ret->interp_host_path, sizeof(ret->interp_host_path), "%s",
			 ires.host_path);
		ret->interp_dev = st.st_dev;
		ret->interp_ino = st.st_ino;
		ret->interp_ask = interp_ask;
		/* a script whose interpreter is translated cannot be rewritten by changing the
		 * script's path: the kernel reads "#!" itself */
		ret->interp_identity =
			fs_kernel_same(req, AT_FDCWD, interp, ires.vpath, ires.host_path);
		ret->identity = ret->identity && ret->interp_identity;
	}
	return 0;
}

int emu_handle_execve(const EmuRequest *req, EmuDecision *d)
{
	EmuExecTarget *t;
	char path[PATH_MAX];
	int dirfd = AT_FDCWD, flags = 0, r;
	uint64_t addr;

	switch (req->nr) {
	case SYS_execve:
		addr = req->args[0];
		break;
	case SYS_execveat:
		dirfd = fs_arg_fd(req->args[0]), addr = req->args[1], flags = (int) req->args[4];
		if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
			return fs_fail(d, -EINVAL, NULL);
		break;
	default:
		return fs_fail(d, -ENOSYS, NULL);
	}
	r = fs_read_path(req, addr, path, sizeof(path));
	if (r < 0)
		return fs_fail(d, r, NULL);
	t = malloc(sizeof(*t));
	if (!t)
		return -ENOMEM;
	r = emu_fs_exec_check(req, dirfd, path, flags, t);
	if (r < 0) {
		d->denied = t->refused;
		free(t);
		return fs_fail(d, r, NULL);
	}
	snprintf(d->path, sizeof(d->path), "%s", t->vpath);
	snprintf(d->host_path, sizeof(d->host_path), "%s", t->host_path);
	if (t->ask || t->interp_ask) {
		/* exec.unlisted = "ask" needs the ptrace route (the policy loader refuses it
		 * with ptrace = "never"): without the post-exec check, a decision could not be
		 * tied to the file that runs */
		free(t);
		d->denied = true;
		return fs_fail(d, -EACCES, "not in exec.allow (asking needs ptrace)");
	}
	if (t->identity) {
		free(t);
		/* TOCTOU: the kernel reads the path again; without ptrace nothing verifies
		 * that it runs what was checked (DESIGN says so; `check` warns). With ptrace the
		 * tracer compares /proc/PID/exe with the dev/ino from emu_fs_exec_check(). */
		d->verdict = EMU_CONTINUE;
		return 0;
	}
	free(t);
	d->denied = true;
	return fs_fail(d, -EACCES, "exec of a translated path needs ptrace");
}
