/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What Landlock can back up of a network mode (the ruleset itself is built by whoever
 * launches the child). Landlock knows TCP ports, not addresses, and nothing of UDP; it applies
 * to the child's own calls only — connects the supervisor performs on a pidfd_getfd()
 * duplicate are not checked against it — and it is fixed at exec, so it mirrors the starting
 * mode, not later ratchet drops.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

#define NET_LANDLOCK_MAX_PORTS 64

typedef struct NetLandlockPlan {
	bool restrict_connect; /* handle LANDLOCK_ACCESS_NET_CONNECT_TCP (ABI 4) */
	bool restrict_bind;    /* handle LANDLOCK_ACCESS_NET_BIND_TCP (ABI 4) */
	uint16_t connect_ports[NET_LANDLOCK_MAX_PORTS]; /* allowed, when restrict_connect */
	size_t n_connect_ports;
	bool scope_abstract_unix; /* LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (ABI 6) */
} NetLandlockPlan;

/**
 * Plans the Landlock network rules for mode under pn:
 * none: no TCP connect or bind at all; loopback: nothing (ports cannot say "loopback");
 * allowlist: connect limited to the union of the entries' ports when every entry names at most
 * NET_LANDLOCK_MAX_PORTS ports in all, else nothing; full: nothing. Abstract unix sockets are
 * scoped whenever unix_sockets lists none. Returns 0 or -EINVAL.
 */
int net_landlock_plan(const PolicyNetwork *pn, NetMode mode, NetLandlockPlan *ret);
