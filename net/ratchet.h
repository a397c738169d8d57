/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The sensitivity ratchet: the network mode of a run only ever goes down. Opening a path of
 * sensitivity L drops the mode to what [network] maps L to (the strictest mapping of any level
 * up to L), and nothing brings it back. One NetRatchet per run, shared by the supervisor's
 * threads.
 */

#include <pthread.h>
#include <stdbool.h>

#include "policy/policy.h"

typedef struct NetRatchet {
	pthread_mutex_t lock;
	NetMode mode;	   /* current mode */
	Sensitivity max;   /* highest level opened so far */
	Sensitivity cause; /* level that caused the last drop, SENSITIVITY_NONE if none */
} NetRatchet;

/** Initializes with the policy's mode. Returns 0 or -errno from pthread_mutex_init(). */
int net_ratchet_init(NetRatchet *r, NetMode initial);
void net_ratchet_done(NetRatchet *r);

/** The current mode. */
NetMode net_ratchet_mode(NetRatchet *r);

/** Highest sensitivity opened so far. */
Sensitivity net_ratchet_max(NetRatchet *r);

/**
 * The mode that opening a path of level asks for under pn: the strictest mode mapped to any
 * level from internal up to level (allowlist counting as none when pn allows nothing), or
 * -ENOENT when no such level is mapped.
 */
int net_ratchet_target(const PolicyNetwork *pn, Sensitivity level);

/**
 * Records that a path of level was opened. Returns 1 when the mode dropped (*ret_old and
 * *ret_new, both optional, say from what to what: the caller shuts down inet sockets, writes
 * the audit event and tells the child), 0 when it did not (already as low), -EINVAL for a bad
 * level. Thread-safe; of racing callers exactly one sees each drop.
 */
int net_ratchet_open(NetRatchet *r, const PolicyNetwork *pn, Sensitivity level, NetMode *ret_old,
		     NetMode *ret_new);
