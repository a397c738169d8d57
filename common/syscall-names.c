/* SPDX-License-Identifier: MIT */
/* Lookups in the generated name tables (common/syscall-names.h). */
#include "common/syscall-names.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int by_name(const void *key, const void *entry)
{
	return strcmp(key, ((const SbxSyscallName *) entry)->name);
}

static int by_string(const void *key, const void *entry)
{
	return strcmp(key, *(const char *const *) entry);
}

int sbx_syscall_number(const char *name)
{
	const SbxSyscallName *e;

	if (!name)
		return -ENOENT;
	e = bsearch(name, sbx_syscall_names, sbx_syscall_names_count, sizeof(*e), by_name);
	return e ? e->nr : -ENOENT;
}

const char *sbx_syscall_name(int nr)
{
	return nr >= 0 && nr <= sbx_syscall_names_nr_max ? sbx_syscall_names_by_nr[nr] : NULL;
}

bool sbx_syscall_foreign(const char *name)
{
	return name && bsearch(name, sbx_syscall_foreign_names, sbx_syscall_foreign_names_count,
			       sizeof(sbx_syscall_foreign_names[0]), by_string);
}
