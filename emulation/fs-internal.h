/* SPDX-License-Identifier: MIT */
#pragma once

/* Private to the emulation/fs-*.c handlers. */

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "emulation/emu.h"
#include "emulation/fs.h"
#include "emulation/path/view.h"
#include "emulation/process.h"

/* Arguments are registers: fds are C ints in the low 32 bits. */
static inline int fs_arg_fd(uint64_t a)
{
	return (int) (int32_t) (uint32_t) a;
}

/*
 * Copies a path string from the child. 0, or the errno the child sees (negative):
 * -EFAULT, -ENAMETOOLONG.
 */
int fs_read_path(const EmuRequest *req, uint64_t addr, char *buf, size_t size);

/*
 * Resolves path (already copied) relative to the child's dirfd (AT_FDCWD: its cwd). Returns
 * 0 or the negative errno the child should see.
 */
int fs_resolve_at(const EmuRequest *req, int dirfd, const char *path, unsigned flags,
		  SbxResolved *ret);

/* Reads the path at addr and resolves it: the common prologue. */
int fs_resolve_arg(const EmuRequest *req, int dirfd, uint64_t addr, unsigned flags,
		   SbxResolved *ret);

/* The host a handler reaches the caller's fds, paths and umask through: req->host, or with
 * none (unit tests that run handlers alone) the view's default host, which acts on the
 * calling process itself. Never NULL. */
static inline const EmuHost *fs_host(const EmuRequest *req)
{
	return req->host ? req->host : sbx_view_default_host();
}

/* A dup of the child's fd (AT_FDCWD: cwd) through the host (EmuHost.get_fd); -EBADF etc. */
int fs_child_fd(const EmuRequest *req, int fd);

/* The child's umask, or -errno (supervisor failure). */
int fs_child_umask(const EmuRequest *req);

/* Checks for reading/looking at an existing object: 0, -ENOENT (absent, hidden), -EACCES. */
/** Whether the kernel, given the same path string from the child's own cwd/dirfd, would
 * reach the object the view resolved (vpath, host_path): an identity-mapped path, or one
 * whose host resolution (from the child's real cwd/dirfd when relative) is the same object
 * right now. Advisory, for calls the kernel runs on the child's string (chdir, whose cwd
 * grants nothing; exec, verified after the fact under ptrace). */
bool fs_kernel_same(const EmuRequest *req, int dirfd, const char *path, const char *vpath,
		    const char *host_path);

int fs_check_read(const SbxResolved *r);
/* Checks for changing the object (or creating it): -ENOENT hidden+existing lookups are not
 * distinguished: hidden → -EACCES when creating, -ENOENT otherwise; denied -EACCES; ro -EROFS. */
int fs_check_write(const SbxResolved *r, bool creating);

/*
 * After creating an object with mode want (the child's umask applied already): the kernel
 * also took off the supervisor's own umask; put back the bits it took. fd: the new object
 * (any kind of fd), or -1 to look it up as (dirfd, name) without following.
 */
int fs_fix_mode(const EmuRequest *req, int fd, int dirfd, const char *name, mode_t want);

/* "/proc/self/fd/N" of a supervisor fd: reaches the inode without following a path again. */
void fs_fd_path(int fd, char buf[64]);

/* Decision helpers; they return 0 so that handlers can "return fs_fail(d, …)". */
int fs_fail(EmuDecision *d, int negative_errno, const char *why);
int fs_ok(EmuDecision *d, int64_t val);
/* The kernel runs the call with the caller's own arguments (each caller says why that is
 * safe, TOCTOU included). */
int fs_continue(EmuDecision *d);
void fs_note(EmuDecision *d, const SbxResolved *r);
/* Copies len bytes into the scratch and queues them for writing at addr (-E2BIG if full). */
int fs_writeback(EmuDecision *d, uint64_t addr, const void *data, size_t len);

#define FS_MAX_RETRIES 8
