/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The handler interface (common/handler.h: the request, the decision, the host) plus what
 * only the syscall table's rows say of a handler (syscalls/syscalls.h). net/ includes
 * common/handler.h, never this: emulation/ and net/ do not include each other.
 */

#include "common/handler.h"
#include "policy/policy.h" /* the emulation handlers read the request's policy */

/* How much of a syscall the sandbox gives, as a row of the syscall table says
 * (syscalls/syscalls.h); a partial one's row says what is missing. */
typedef enum EmuSupport {
	EMU_FULL,
	EMU_PARTIAL,
	EMU_DENIED,
	_EMU_SUPPORT_MAX,
	_EMU_SUPPORT_INVALID = -EINVAL,
} EmuSupport;

/* What the dispatch must know of a handler (flags of its row in syscalls/table.c). */
typedef enum EmuFlags {
	EMU_MAY_BLOCK = 1 << 0, /* may block (connect, a held call): dispatch.c moves the lead */
	EMU_TRACE = 1 << 2,	/* route through ptrace (SCMP_ACT_TRACE) when the tracer is on */
	/* the handler may answer CONTINUE for a call that can sleep interruptibly in the kernel
	 * (connect, sendto): an ERESTARTSYS from it is the kernel's (tracer/ptrace.c) */
	EMU_KERNEL_INTR = 1 << 3,
} EmuFlags;
