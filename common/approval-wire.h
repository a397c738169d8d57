/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The approval protocol (docs/agents.md, "Human approval"; docs/network.md, "Held
 * connects"): one JSON line each way. Shared by the MCP server's approval socket
 * (agent/approval.c), `sbxtrace approve`/`approvals` (cli/cmd-approve.c) and the supervisor's
 * held connects (tracer/ask.c), which must not link agent/.
 *
 *   to a socket:  {"op":"list"} -> {"ok":true,"pending":[{id, …}]}
 *                 {"op":"decide","id":…,"decision":"allow_once"|"allow_session"|"deny",
 *                  "note":…} -> {"ok":true} | {"ok":false,"error":…}
 *   run -> its --approval-fd:  {"op":"ask","id":…,"kind":"connect","pid":…,"destination":…,
 *                  "name":…,"reason":…,"timeout_s":…}
 *                 <- {"id":…,"decision":…,"decider":…,"channel":…,"note":…}
 *                  {"op":"cancel","id":…} when the run stopped waiting (timeout)
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

typedef enum ApprovalDecision {
	APPROVAL_NONE = -1,
	APPROVAL_ALLOW_ONCE,
	APPROVAL_ALLOW_SESSION,
	APPROVAL_DENY,
	_APPROVAL_MAX,
} ApprovalDecision;

const char *approval_decision_to_string(ApprovalDecision d);
/** APPROVAL_NONE for anything else. */
ApprovalDecision approval_decision_from_string(const char *s);

/** Whether pid is ancestor or one of its descendants (its ancestry read from /proc);
 * unknown ancestry counts as a descendant (refused). */
bool approval_pid_descends_from(pid_t pid, pid_t ancestor);
/** The same for the peer of the connected unix socket sock, whose SO_PEERCRED pid is pid: the
 * walk is anchored to pidfds (SO_PEERPIDFD, Linux 6.5), so a peer that exited and whose pid
 * was handed to someone else is refused; the plain walk on older kernels. */
bool approval_peer_descends_from(int sock, pid_t pid, pid_t ancestor);

/** A fresh id: prefix and 16 base62 characters (95 random bits) into out[32]. */
void approval_new_id(const char *prefix, char out[32]);

/** Reads one line (at most max bytes, within timeout_ms; -1: no limit) and parses it as a
 * JSON object; NULL on EOF, timeout, or anything else. */
json_t *approval_read_json(int fd, size_t max, int timeout_ms);
/** Writes j as one compact line. 0 or -errno. */
int approval_write_json(int fd, const json_t *j);
