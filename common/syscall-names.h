/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * x86_64 syscall names and numbers, taken from libseccomp at build time
 * (common/gen-syscall-names.c): the start resolves the syscall table's rows with a binary
 * search instead of one library call each. A name the table lacks is asked of libseccomp
 * at run time, which may be newer.
 */

#include <stddef.h>

typedef struct SbxSyscallName {
	const char *name;
	int nr;
} SbxSyscallName;

/* Sorted by name (strcmp); generated. */
extern const SbxSyscallName sbx_syscall_names[];
extern const size_t sbx_syscall_names_count;

/* The number of an x86_64 syscall by its libseccomp name: the table's, else the run-time
 * libseccomp's; -ENOENT when neither knows it on x86_64. */
int sbx_syscall_number(const char *name);
