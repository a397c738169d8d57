/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The waiting side of the approval protocol (common/approval-wire.h): a board of requests
 * that wait for a human's decision, and the Unix socket that `sbxtrace approvals` lists and
 * `sbxtrace approve` decides through. The MCP server (agent/approval.c: tool calls, and the
 * held calls of its sessions' runs) and `sbxtrace run --approval-socket` (tracer/ask.c: held
 * connects, sends, execs and opens) are its two users; approval-board.c says why there is
 * one copy and which checks it makes.
 */

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/approval-wire.h"

typedef struct ApprovalBoard ApprovalBoard;
typedef struct ApprovalServer ApprovalServer;
struct ucred;

/* One request on the board. The caller's storage (on the stack of the thread that waits);
 * every field is the board's while it is posted, and read only under its lock. */
typedef struct ApprovalWaiter {
	struct ApprovalWaiter *next;
	char id[32];
	json_t *info; /* what `list` shows of it, owned */
	uint64_t start_ns;
	ApprovalDecision decision;
	char *note;	   /* the decider's note (at most 1000 bytes), owned */
	char decider[160]; /* "approval socket (uid U NAME, pid P)" */
	bool cancelled;
} ApprovalWaiter;

/* How a wait ended. */
typedef enum ApprovalWait {
	APPROVAL_WAIT_DECIDED,	 /* w->decision, w->note, w->decider are set */
	APPROVAL_WAIT_CANCELLED, /* approval_board_cancel(), or the hooks' aborted() */
	APPROVAL_WAIT_STOPPING,	 /* approval_board_stop() */
	APPROVAL_WAIT_TIMEOUT,
	_APPROVAL_WAIT_MAX,
	_APPROVAL_WAIT_INVALID = -EINVAL,
} ApprovalWait;

typedef struct ApprovalWaitHooks {
	/* asked under the board's lock at each wake-up (approval_board_wake() makes one): true
	 * cancels. It must not call into the board. NULL: never. */
	bool (*aborted)(void *userdata);
	/* called without the lock every beat_ns while waiting (0: never), e.g. an MCP progress
	 * notification for clients that reset their timeout on it */
	void (*beat)(void *userdata, uint64_t waited_ns);
	uint64_t beat_ns;
	void *userdata;
} ApprovalWaitHooks;

/** A board with nobody waiting; NULL on OOM. */
ApprovalBoard *approval_board_new(void);
/** Frees b (NULL is fine); nobody may be waiting on it any more. Returns NULL. */
ApprovalBoard *approval_board_free(ApprovalBoard *b);

/**
 * Posts w (zeroed by this call, then filled) with id (truncated to 31 bytes) and info,
 * which it takes in every case. Then `list` shows it and `decide` can decide it, until
 * approval_board_wait() returns. -ESHUTDOWN, nothing posted, once the board stops.
 */
int approval_board_post(ApprovalBoard *b, ApprovalWaiter *w, const char *id, json_t *info);
/**
 * Waits until w is decided, cancelled, the board stops or the CLOCK_MONOTONIC deadline
 * passes (the first that holds, in that order, when several do), then takes w off the board
 * and frees its info. On APPROVAL_WAIT_DECIDED the caller owns w->note. hooks may be NULL.
 */
ApprovalWait approval_board_wait(ApprovalBoard *b, ApprovalWaiter *w, uint64_t deadline_ns,
				 const ApprovalWaitHooks *hooks);
/** Cancels the wait of w (posted, or already taken off: then nothing happens). */
void approval_board_cancel(ApprovalBoard *b, ApprovalWaiter *w);
/** Makes every waiter ask its aborted() again. */
void approval_board_wake(ApprovalBoard *b);
/** Ends every wait (APPROVAL_WAIT_STOPPING) and refuses new posts, for good. */
void approval_board_stop(ApprovalBoard *b);

/**
 * Answers one request of the socket protocol from a peer with credentials cred (read at
 * accept time): {"op":"list"} or {"op":"decide",…}; anything else is an error reply. A
 * decision goes to the waiter with that id if it is still undecided, with the decider
 * "approval socket (uid U NAME, pid P)". Returns the reply (owned); NULL on OOM.
 */
json_t *approval_board_handle(ApprovalBoard *b, const json_t *req, const struct ucred *cred);

typedef struct ApprovalServerOptions {
	const char *path; /* where to bind */
	/* a socket already at path that someone listens on: -EADDRINUSE (else it is replaced) */
	bool refuse_live;
	/* the error a process of ours (this process or a descendant) reads, e.g. "refused: a
	 * process of this sandbox cannot decide its approvals"; JSON-escaped by the server */
	const char *refusal;
	/* a rule of the caller's on where the socket may be: called with the real path of its
	 * directory before anything is bound; < 0 (with a message in err) refuses. NULL: none */
	int (*check_dir)(const char *real_dir, void *userdata, char *err, size_t errsize);
	void *userdata;
} ApprovalServerOptions;

/**
 * Binds the socket (mode 0600, in a directory of this user or root that others cannot write
 * to, or sticky) and starts its thread, which answers one request per connection through
 * approval_board_handle(). b is borrowed until approval_server_stop(). On failure a message
 * for the user is in reterr (no prefix; the caller names the option) and -errno is returned.
 */
int approval_server_start(ApprovalBoard *b, const ApprovalServerOptions *opts, ApprovalServer **ret,
			  char *reterr, size_t errsize);
/** The path it listens on (borrowed from s). */
const char *approval_server_path(const ApprovalServer *s);
/** Stops the thread, closes and removes the socket, frees s (NULL is fine). Returns NULL. */
ApprovalServer *approval_server_stop(ApprovalServer *s);
