/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Process and signal family (emulation/signal.c): what the handlers need from the tracer.
 * Tree membership and signal delivery need the tracer's process table and pidfds, which
 * emulation/ must not own (STYLE.md: dependencies point down), so the tracer hands them in
 * through this interface. EmuRequest.tracer points to a struct whose first member is a
 * `const EmuProcessOps *`; unit tests pass a fake.
 */

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "emulation/emu.h"

typedef enum EmuSignalScope {
	EMU_SIGNAL_PROCESS, /* a thread group (kill(pid>0), rt_sigqueueinfo) */
	EMU_SIGNAL_THREAD,  /* one thread (tkill, tgkill, rt_tgsigqueueinfo) */
	EMU_SIGNAL_GROUP,   /* a process group (kill(0), kill(-pgid)) */
	EMU_SIGNAL_ALL,	    /* kill(-1): every process the caller may signal */
	EMU_SIGNAL_PIDFD,   /* pidfd_send_signal: target named by a pidfd of the caller */
	_EMU_SIGNAL_SCOPE_MAX,
	_EMU_SIGNAL_SCOPE_INVALID = -EINVAL,
} EmuSignalScope;

typedef struct EmuSignal {
	EmuSignalScope scope;
	pid_t pid;	       /* PROCESS/THREAD: tid or tgid; GROUP: pgid (0: the caller's) */
	pid_t tgid;	       /* THREAD: required thread group (tgkill), 0: any (tkill) */
	int pidfd;	       /* PIDFD: the fd number in the caller */
	unsigned pidfd_flags;  /* PIDFD: PIDFD_SIGNAL_* */
	int sig;	       /* 0 probes existence */
	const siginfo_t *info; /* NULL: the kernel fills SI_USER */
} EmuSignal;

typedef struct EmuProcessOps {
	/*
	 * Sends s on behalf of the caller, only to processes of the sandboxed tree. Returns 0
	 * when delivered, a positive errno for the child (EPERM outside the tree, ESRCH gone),
	 * or a negative errno when the supervisor itself failed.
	 */
	int (*send_signal)(void *tracer, const EmuRequest *req, const EmuSignal *s);
	/* 0 if pid (a tid, tgid, or with is_pgid a process group) is in the tree, else a
	 * positive errno (EPERM, ESRCH); negative on supervisor failure. */
	int (*check_target)(void *tracer, const EmuRequest *req, pid_t pid, bool is_pgid);
	/* Runs fcntl(fd, cmd, arg) on a duplicate of the caller's fd (pidfd_getfd). Returns the
	 * result (>= 0), a positive errno for the child, or a negative supervisor failure. */
	int (*fcntl_dup)(void *tracer, const EmuRequest *req, int fd, int cmd, void *arg);
	/* Runs ioctl(fd, cmd, arg) on a duplicate of the caller's fd, arg pointing into the
	 * supervisor's memory. Returns 0, a positive errno for the child, or a negative
	 * supervisor failure (only for commands whose result is 0). */
	int (*ioctl_dup)(void *tracer, const EmuRequest *req, int fd, unsigned long cmd, void *arg);
	/* Whether the disk budget is used up (docs/budgets.md): creating files, directories,
	 * nodes and symlinks then fails with EDQUOT. NULL: never. */
	bool (*disk_full)(void *tracer);
	/* Whether the caller's RLIMIT_FSIZE is the disk budget's, so that growth past it fails
	 * with EDQUOT rather than EFBIG (docs/budgets.md). NULL: never. */
	bool (*efbig_is_disk)(void *tracer);
} EmuProcessOps;

static inline bool emu_disk_full(const EmuRequest *req)
{
	const EmuProcessOps *ops = req->tracer ? *(const EmuProcessOps *const *) req->tracer : NULL;

	return ops && ops->disk_full && ops->disk_full(req->tracer);
}

static inline const EmuProcessOps *emu_process_ops(const EmuRequest *req)
{
	return req->tracer ? *(const EmuProcessOps *const *) req->tracer : NULL;
}

/* Handlers (emulation/signal.c). */
int emu_handle_signal(const EmuRequest *req, EmuDecision *ret_decision);
int emu_handle_pid_target(const EmuRequest *req, EmuDecision *ret_decision);
int emu_handle_fcntl_owner(const EmuRequest *req, EmuDecision *ret_decision);
/* ioctl(2): the commands the filter notifies (FIOSETOWN, SIOCSPGRP, and the inode-changing
 * FS_IOC_* of emu_fs_ioctl_changes()); others continue. */
int emu_handle_ioctl(const EmuRequest *req, EmuDecision *ret_decision);
int emu_handle_log(const EmuRequest *req, EmuDecision *ret_decision);
