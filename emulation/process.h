/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Process and signal family (emulation/signal.c). Tree membership and signal delivery need
 * the tracer's process table and pidfds, which emulation/ must not own (STYLE.md:
 * dependencies point down), so the handlers ask the host for them: the process operations
 * of EmuHost (common/handler.h), which tracer/ fills and unit tests fake.
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

/* The host, when it offers the process family (EmuHost's send_signal, check_target and
 * fcntl_dup); NULL otherwise, and the handlers then fail (-EINVAL). */
static inline const EmuHost *emu_process_host(const EmuRequest *req)
{
	const EmuHost *h = req->host;

	return h && h->send_signal && h->check_target && h->fcntl_dup ? h : NULL;
}

/* Handlers (emulation/signal.c). */
int emu_handle_signal(const EmuRequest *req, EmuDecision *ret_decision);
int emu_handle_pid_target(const EmuRequest *req, EmuDecision *ret_decision);
int emu_handle_fcntl_owner(const EmuRequest *req, EmuDecision *ret_decision);
/* ioctl(2): the commands the filter notifies (FIOSETOWN, SIOCSPGRP, and the inode-changing
 * FS_IOC_* of emu_fs_ioctl_changes()); others continue. */
int emu_handle_ioctl(const EmuRequest *req, EmuDecision *ret_decision);
int emu_handle_log(const EmuRequest *req, EmuDecision *ret_decision);
