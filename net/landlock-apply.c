/* SPDX-License-Identifier: MIT */
/*
 * The Landlock network rules of net_landlock_plan(), in the form the launcher loads them
 * (tracer/landlock.c). Runs in the child between vfork and exec: no allocation, no locks.
 * Landlock ABI 4 (6.7) handles TCP bind/connect by port; ABI 6 (6.12) scopes abstract unix
 * sockets. Debian 12's <linux/landlock.h> (6.1) has neither, hence the definitions below.
 */
#include "net/handlers.h"

#include <errno.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/missing-seccomp.h"
#include "net/landlock-plan.h"

#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif
#define SBX_LANDLOCK_ACCESS_NET_BIND_TCP    (1ULL << 0)
#define SBX_LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#define SBX_LANDLOCK_RULE_NET_PORT	    2

struct sbx_landlock_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
} __attribute__((packed));

void net_landlock_access(const Policy *p, int abi, unsigned long long *ret_handled_net,
			 unsigned long long *ret_scoped)
{
	NetLandlockPlan plan;

	*ret_handled_net = 0;
	*ret_scoped = 0;
	if (net_landlock_plan(&p->network, p->network.mode, &plan) < 0)
		return;
	if (abi >= 4) {
		if (plan.restrict_connect)
			*ret_handled_net |= SBX_LANDLOCK_ACCESS_NET_CONNECT_TCP;
		if (plan.restrict_bind)
			*ret_handled_net |= SBX_LANDLOCK_ACCESS_NET_BIND_TCP;
	}
	if (abi >= 6 && plan.scope_abstract_unix)
		*ret_scoped |= LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET;
}

int net_landlock_add_rules(const Policy *p, int abi, int ruleset_fd)
{
	NetLandlockPlan plan;

	if (abi < 4 || ruleset_fd < 0)
		return 0;
	if (net_landlock_plan(&p->network, p->network.mode, &plan) < 0 || !plan.restrict_connect)
		return 0;
	for (size_t i = 0; i < plan.n_connect_ports; i++) {
		struct sbx_landlock_net_port_attr a = {
			.allowed_access = SBX_LANDLOCK_ACCESS_NET_CONNECT_TCP,
			.port = plan.connect_ports[i],
		};

		if (syscall(SYS_landlock_add_rule, ruleset_fd, SBX_LANDLOCK_RULE_NET_PORT, &a, 0) <
		    0)
			return -errno;
	}
	return 0;
}
