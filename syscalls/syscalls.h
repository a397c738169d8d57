/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The syscall table (syscalls/table.c): one row per syscall the sandbox knows, by libseccomp
 * name. Everything that treats syscalls one by one reads its row: the seccomp filter and
 * its argument checks (tracer/filter.c), the dispatch to the handler (tracer/dispatch.c),
 * the tasks and disk budgets (tracer/budget.c), the view in the kernel (tracer/kview.c), and
 * the audit log's argument decoding (audit/decode.c, through syscalls_audit_init()).
 *
 * This layer sits above emulation/ and net/ (it names their handlers) and below tracer/
 * (docs/architecture.md, "Layers"). A number no row names fails with ENOSYS in the kernel:
 * a syscall added by a later kernel is unreachable until someone adds its row.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "emulation/emu.h"

/* What the filter does with a syscall before the policy's [syscalls] changes it. */
typedef enum SyscallClass {
	SYSCALL_ALLOW,	/* runs in the kernel; the kernel's action cache skips the filter */
	SYSCALL_NOTIFY, /* notified: the row's handler answers (EMU_TRACE: through ptrace) */
	SYSCALL_DENY,	/* notified, answered with the policy's errno and counted */
	SYSCALL_ENOSYS, /* the filter answers ENOSYS itself (clone3: libc falls back) */
	_SYSCALL_CLASS_MAX,
	_SYSCALL_CLASS_INVALID = -EINVAL,
} SyscallClass;

/* An argument check the filter makes on register values (the low 32 bits the kernel reads);
 * tracer/filter.c, emit_special(), generates each. */
typedef enum SyscallCheck {
	SYSCALL_CHECK_NONE,
	SYSCALL_CHECK_CLONE,	   /* namespace flags denied */
	SYSCALL_CHECK_IOCTL,	   /* TIOCSTI, TIOCLINUX denied; FIOSETOWN, SIOCSPGRP, FS_IOC_SET*
				    * notified */
	SYSCALL_CHECK_FCNTL,	   /* F_SETOWN, F_SETOWN_EX notified */
	SYSCALL_CHECK_PID_ARG0,	   /* notified unless args[0] (a pid) is 0, the caller */
	SYSCALL_CHECK_PID_ARG1,	   /* notified unless args[1] (a pgid) is 0 */
	SYSCALL_CHECK_SECCOMP,	   /* SECCOMP_FILTER_FLAG_NEW_LISTENER denied */
	SYSCALL_CHECK_PERSONALITY, /* only Docker's personality values */
	SYSCALL_CHECK_ADDR_ARG4,   /* notified when args[4] (an address) is not NULL */
	SYSCALL_CHECK_SETSOCKOPT,  /* IPv6 routing headers and IPv4 options notified */
	_SYSCALL_CHECK_MAX,
	_SYSCALL_CHECK_INVALID = -EINVAL,
} SyscallCheck;

/* Row flags: the EmuFlags of emulation/emu.h (EMU_MAY_BLOCK, EMU_TRACE, EMU_KERNEL_INTR), and
 * these. */
typedef enum SyscallFlags {
	/* path-taking: emulated in the virtual view; the view in the kernel (tracer/kview.c)
	 * lets it run in the kernel unless it is denied */
	SYSCALL_PATH = 1 << 8,
	/* notified only when the view filters directory listings (hide rules, a procfs
	 * mount); allowed in the kernel otherwise */
	SYSCALL_LISTINGS = 1 << 9,
	/* reaches the IPC namespace's objects: allowed in a private IPC namespace, notified and
	 * denied (ENOSYS) without one */
	SYSCALL_HOST_IPC = 1 << 10,
	/* creates a task: under a tasks budget it stops for the tracer (budget_handle_clone) */
	SYSCALL_TASKS = 1 << 11,
	/* CLONE_UNTRACED is denied under a cpu_time budget with ptrace (its end must be seen) */
	SYSCALL_UNTRACED = 1 << 12,
	/* under a disk budget only the modes that free blocks run (fallocate) */
	SYSCALL_DISK = 1 << 13,
	/* grows files: under a disk budget, its EFBIG from RLIMIT_FSIZE becomes EDQUOT
	 * (tracer/ptrace.c, fsize_to_edquot) */
	SYSCALL_GROWS = 1 << 15,
	/* names a process by pid: in a pid namespace of the tree's own (the kernel view with a
	 * /proc mount) it runs in the kernel, which resolves the pid there */
	SYSCALL_PID = 1 << 14,
} SyscallFlags;

typedef struct SyscallRow {
	const char *name;    /* libseccomp's; resolved to x86_64 numbers at startup */
	SyscallClass action; /* before the policy's [syscalls] */
	EmuHandler handler;  /* SYSCALL_NOTIFY: who answers */
	const char *handler_name;
	/* where pidfd_getfd is refused, the supervisor creates and holds the tree's sockets
	 * (net/socktab.c): this handler answers the otherwise allowed call */
	EmuHandler nogetfd_handler;
	const char *nogetfd_handler_name;
	SyscallCheck check; /* the filter's argument check, SYSCALL_CHECK_NONE: none */
	EmuSupport support; /* EMU_PARTIAL needs a note */
	unsigned flags;	    /* EmuFlags | SyscallFlags */
	uint8_t uid_args;   /* bit i: args[i] is a uid (a user namespace's program checks it) */
	uint8_t gid_args;   /* ... a gid */
	unsigned category;  /* the audit event kind (AuditEvent, policy/policy.h) */
	const char *audit;  /* argument layout for the audit log, "name:type …" (audit/decode.c);
			     * NULL: six raw arguments */
	const char *note;   /* one line: why denied, or what is partial */
} SyscallRow;

/** The table, in families; *ret_n rows. Static, never NULL. */
const SyscallRow *syscalls_table(size_t *ret_n);
/** The row named name, or NULL. */
const SyscallRow *syscalls_find(const char *name);
const char *syscalls_class_to_string(SyscallClass a);
const char *syscalls_support_to_string(EmuSupport s);

/** Gives audit/decode.c the rows' argument layouts (audit_decode_set_layouts()). Idempotent
 * and thread-safe; call it before the first audit_syscall_info(): tracer_filter_build() does,
 * and so must a program or test that decodes without building a filter. */
void syscalls_audit_init(void);

/** Writes the table as docs/syscalls.md (also `sbxtrace check --syscalls`). */
void syscalls_write_markdown(FILE *out);
