/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Handlers for the path-taking syscalls (issue 4; docs/filesystem.md). Each takes the
 * request (with req->view set) and fills the decision; see common/handler.h for the contract.
 *
 * What the dispatcher must do with the decisions:
 *  - inject_fd >= 0: SECCOMP_IOCTL_NOTIF_ADDFD with SECCOMP_ADDFD_FLAG_SEND and
 *    newfd_flags = inject_flags (O_CLOEXEC or 0); the child sees the new fd number.
 *  - n_writeback > 0: process_vm_writev() each block before replying.
 *  - emu_handle_chdir() answers EMU_CONTINUE for an identity-mapped directory; for a
 *    translated one it fails with EACCES unless the tracer rewrites the argument to
 *    decision.host_path through ptrace (DESIGN "Where ptrace is needed").
 *  - a handler returning -EWOULDBLOCK found an open that can block (a FIFO without
 *    O_NONBLOCK): run it again on a worker thread with emu_handle_open_blocking().
 *  - creating handlers apply the child's umask themselves and correct for the supervisor's
 *    own (read when the view is made; umask 0 saves a chmod per creation).
 */

#include <stddef.h>

#include "emulation/emu.h"

/* open, openat, openat2, creat */
int emu_handle_open(const EmuRequest *req, EmuDecision *ret_decision);
int emu_handle_open_blocking(const EmuRequest *req, EmuDecision *ret_decision);
/* stat, lstat, newfstatat, statx */
int emu_handle_stat(const EmuRequest *req, EmuDecision *ret_decision);
/* statfs */
int emu_handle_statfs(const EmuRequest *req, EmuDecision *ret_decision);
/* access, faccessat, faccessat2 */
int emu_handle_access(const EmuRequest *req, EmuDecision *ret_decision);
/* readlink, readlinkat */
int emu_handle_readlink(const EmuRequest *req, EmuDecision *ret_decision);
/* mkdir, mkdirat, mknod, mknodat */
int emu_handle_mkdir(const EmuRequest *req, EmuDecision *ret_decision);
/* unlink, unlinkat, rmdir */
int emu_handle_unlink(const EmuRequest *req, EmuDecision *ret_decision);
/* rename, renameat, renameat2 */
int emu_handle_rename(const EmuRequest *req, EmuDecision *ret_decision);
/* link, linkat */
int emu_handle_link(const EmuRequest *req, EmuDecision *ret_decision);
/* symlink, symlinkat */
int emu_handle_symlink(const EmuRequest *req, EmuDecision *ret_decision);
/* chmod, fchmodat, fchmodat2 */
int emu_handle_chmod(const EmuRequest *req, EmuDecision *ret_decision);
/* chown, lchown, fchownat */
int emu_handle_chown(const EmuRequest *req, EmuDecision *ret_decision);
/* truncate */
int emu_handle_truncate(const EmuRequest *req, EmuDecision *ret_decision);
/* utime, utimes, futimesat, utimensat */
int emu_handle_utimes(const EmuRequest *req, EmuDecision *ret_decision);
/* setxattr, lsetxattr, getxattr, lgetxattr, listxattr, llistxattr, removexattr, lremovexattr */
int emu_handle_xattr(const EmuRequest *req, EmuDecision *ret_decision);
/* fchmod(2), fchown(2), fsetxattr(2), fremovexattr(2): through the child's fd, in the view's
 * mode of the file behind it (EROFS in a ro part). */
int emu_handle_fd_attr(const EmuRequest *req, EmuDecision *ret_decision);
/* The ioctl(2)s that change an inode (FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR, …), the same way;
 * called by emu_handle_ioctl() for the commands emu_fs_ioctl_changes() names. */
bool emu_fs_ioctl_changes(unsigned cmd);
int emu_handle_fs_ioctl(const EmuRequest *req, EmuDecision *ret_decision);
/* inotify_add_watch */
int emu_handle_inotify_add_watch(const EmuRequest *req, EmuDecision *ret_decision);
/* chdir */
int emu_handle_chdir(const EmuRequest *req, EmuDecision *ret_decision);
/**
 * Checks chdir(path) for the tracer's ptrace path: 0 with ret_host "" when the kernel may run
 * the call on the child's own string (identity-mapped, or relative without ".."), 0 with the
 * host directory to rewrite the argument to, or the negative errno the child should see.
 * Fills d->path/host_path/denied for audit.
 */
int emu_fs_chdir_check(const EmuRequest *req, const char *path, char *ret_host, size_t size,
		       EmuDecision *d);
/* getcwd */
int emu_handle_getcwd(const EmuRequest *req, EmuDecision *ret_decision);
/* getdents64: hidden entries removed */
int emu_handle_getdents(const EmuRequest *req, EmuDecision *ret_decision);

/**
 * The virtual path of the child's cwd ("(unreachable)" semantics are not used: a cwd outside
 * the view is -EXDEV). For getcwd(), /proc/PID/cwd and audit.
 */
int emu_fs_cwd_vpath(const EmuRequest *req, char *ret, size_t size);

/* What an execve/execveat would run, as checked in the view (emu_fs_exec_check()). */
typedef struct EmuExecTarget {
	char vpath[4096];     /* canonical virtual path of the file */
	char host_path[4096]; /* where it is on the host: the ptrace rewrite target */
	dev_t dev;	      /* identity of the checked file, for the post-exec check */
	ino_t ino;
	char interp_vpath[4096]; /* "#!" interpreter (one level), "" if none */
	char interp_host_path[4096];
	dev_t interp_dev;
	ino_t interp_ino;
	bool identity;	      /* host paths equal virtual ones: the kernel may run the call as is */
	bool interp_identity; /* no interpreter, or the kernel finds it from the "#!" text */
	bool refused; /* on failure: the policy refused (hidden, denied, [exec]), not the host
		       * (a file that does not exist, is not executable…): counts as a denial */
	/* on success: exec.allow lists the file (ask) or its interpreter (interp_ask) nowhere,
	 * and exec.unlisted = "ask" holds it for a decision (policy_exec_askable). A caller
	 * that cannot hold it must deny it (EACCES, a denial). */
	bool ask, interp_ask;
} EmuExecTarget;

/**
 * Checks what execve(path) / execveat(dirfd, path, at_flags) would run: resolved in the view
 * (following symlinks unless AT_SYMLINK_NOFOLLOW), a visible regular file the child may
 * execute (X_OK), allowed by [exec] allow/deny globs (policy_exec_allowed) on its virtual
 * path; for a "#!" script, the same for its interpreter. Returns 0, or the negative errno the
 * child should see (ENOENT, EACCES, ELOOP, ENOEXEC…), with *ret filled on success. A file
 * only exec.allow leaves out under exec.unlisted = "ask" succeeds with ret->ask (or
 * ret->interp_ask) set: the caller decides.
 */
int emu_fs_exec_check(const EmuRequest *req, int dirfd, const char *path, int at_flags,
		      EmuExecTarget *ret);

/*
 * execve, execveat: checks (emu_fs_exec_check); an identity-mapped target is continued,
 * a translated one fails with EACCES unless the tracer rewrites the path (decision.host_path)
 * at the ptrace stop and verifies /proc/PID/exe against the checked dev/ino afterwards (the
 * row's EMU_TRACE: syscalls/table.c).
 */
int emu_handle_execve(const EmuRequest *req, EmuDecision *ret_decision);
