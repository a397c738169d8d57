/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What the ratchet does to sockets that already exist: every AF_INET/AF_INET6 socket of a
 * process is shut down (SHUT_RDWR) through a duplicate taken with pidfd_getfd(2), which acts on
 * the same open file description as the child's fd. Needs Linux 5.6 and ptrace access to the
 * process (the supervisor is its parent or has the same credentials).
 */

#include <stddef.h>
#include <sys/types.h>

#include "policy/policy.h"

/**
 * Shuts down the inet sockets among the open fds of pid (pidfd refers to the same process),
 * in every fd table of its threads. Fds and threads that vanish meanwhile are skipped.
 * Returns 0 with the number shut down in *ret_count (optional), or -errno: -ESRCH when the
 * process is gone; any other error (-EACCES for the fds of a non-dumpable process, -EPERM or
 * -ENOSYS from pidfd_getfd()) means some socket may be out of reach: the caller fails closed
 * and kills the tree.
 */
int net_shutdown_inet_sockets(int pidfd, pid_t pid, unsigned *ret_count);

/**
 * The one line told to the program on stderr when the ratchet drops the mode, e.g.
 * "sbxtrace: network restricted to none: a secret file was opened\n". Returns buf.
 */
const char *net_ratchet_notice(NetMode new_mode, Sensitivity level, char *buf, size_t size);

/** "none", "loopback", "allowlist", "full"; NULL if out of range. */
const char *net_mode_name(NetMode m);
