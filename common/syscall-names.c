/* SPDX-License-Identifier: MIT */
/* Lookups in the generated name table (common/syscall-names.h). */
#include "common/syscall-names.h"

#include <errno.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>

static int by_name(const void *key, const void *entry)
{
	return strcmp(key, ((const SbxSyscallName *) entry)->name);
}

int sbx_syscall_number(const char *name)
{
	const SbxSyscallName *e;

	if (!name)
		return -ENOENT;
	e = bsearch(name, sbx_syscall_names, sbx_syscall_names_count, sizeof(*e), by_name);
	if (e)
		return e->nr;
	/* a name the build's libseccomp did not know: this one may (a newer library) */
	int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, name);

	return nr >= 0 ? nr : -ENOENT;
}
