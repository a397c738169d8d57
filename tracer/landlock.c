/* SPDX-License-Identifier: MIT */
/*
 * Landlock as a second layer (DESIGN.md "Defence in depth"). For now the ruleset handles no
 * file-system or network access and only scopes the child (ABI 6, 6.12): it can neither
 * signal processes outside its domain (LANDLOCK_SCOPE_SIGNAL, which also covers
 * F_SETOWN/SIGIO) nor connect to abstract unix sockets created outside it
 * (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET). The file-system view extends the ruleset here.
 */
#include "tracer/internal.h"

#include <linux/landlock.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/missing-seccomp.h"
#include "policy/policy.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_restrict_self  446
#endif

/* struct landlock_ruleset_attr of ABI 6; the kernel accepts shorter sizes of older ABIs */
struct sbx_landlock_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

int tracer_landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return abi < 0 ? 0 : (int) abi;
}

int tracer_landlock_apply(const Policy *p, int abi)
{
	struct sbx_landlock_ruleset_attr attr = {};
	long fd;
	int r = 0;

	if (p->landlock == TRI_OFF)
		return 0;
	if (abi < 6)
		return p->landlock == TRI_ON ? -EOPNOTSUPP : 0;

	attr.scoped = LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET;
	fd = syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (fd < 0)
		return -errno;
	if (syscall(SYS_landlock_restrict_self, (int) fd, 0) < 0)
		r = -errno;
	(void) close((int) fd);
	return r;
}
