/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * x86_64 syscall names and numbers, taken from libseccomp at build time
 * (common/gen-syscall-names.c): the start resolves the syscall table's rows with a binary
 * search instead of one library call each, and the binary does not load libseccomp. A name
 * the build's libseccomp did not know is unknown here too (a newer syscall: its row stays
 * out of the filter until a rebuild against a newer libseccomp).
 */

#include <stdbool.h>
#include <stddef.h>

typedef struct SbxSyscallName {
	const char *name;
	int nr;
} SbxSyscallName;

/* Sorted by name (strcmp); generated. */
extern const SbxSyscallName sbx_syscall_names[];
extern const size_t sbx_syscall_names_count;
/* Indexed by number, NULL where none; generated. */
extern const char *const sbx_syscall_names_by_nr[];
extern const int sbx_syscall_names_nr_max;
/* Names libseccomp knows only on other architectures, sorted; generated. */
extern const char *const sbx_syscall_foreign_names[];
extern const size_t sbx_syscall_foreign_names_count;

/* The number of an x86_64 syscall by its libseccomp name; -ENOENT when it is not one. */
int sbx_syscall_number(const char *name);

/* The name of x86_64 syscall nr, NULL when the table has none. */
const char *sbx_syscall_name(int nr);

/* Whether name is a syscall of another architecture only (socketcall, _llseek, …): a name
 * a policy may give, with nothing to filter on x86_64. */
bool sbx_syscall_foreign(const char *name);
