/* SPDX-License-Identifier: MIT */
/*
 * Held connects, execs and opens of one run (docs/agents.md, "Held connects"): when a
 * session's policy may hold a call for a decision (session_asks(): the operator's [network]
 * unlisted = "ask", which session.c writes into it, or a policy file of the operator's with
 * exec.unlisted = "ask" or an ask rule), each of its `sbxtrace run` processes — one-shot
 * executions (exec.c), stateful contexts (context.c) and background processes (process.c)
 * alike — gets `--approval-fd N`, one end of a socketpair. The run's supervisor writes one
 * JSON line per held call (common/approval-wire.h) while the call waits on its seccomp
 * notification; a thread of ours reads them one at a time, has approval.c decide each, and
 * writes the answer back.
 *
 * Where a request goes depends on what is in flight on that run when it arrives:
 *  - a tools/call (held_route_set_call): its client's elicitation when it declared the
 *    capability, else the approval socket, with that call's progress and log messages. An
 *    execution has its call for its whole life; a context outlives its calls, so it sets
 *    the call of each code_execute for the time that call runs and clears it after;
 *  - nothing (a background process; a context between calls, where code of an earlier
 *    call still runs in a thread of its own): the approval socket (`sbxtrace approve`);
 *  - no channel: denied at once (approval_required).
 * No decision within network.ask_timeout denies: the supervisor stops waiting and denies on
 * its own, and the server's wait has the same timeout.
 *
 * Lifetimes. A request asked through a call keeps that call borrowed until it is decided:
 * clearing the call (the end of code_execute) waits for it, which is bounded by the timeout.
 * The call's on_cancel belongs to the code's owner (it interrupts or kills the run); the
 * owner forwards it here with held_route_cancel(), which denies what that call waits for on
 * the socket (an elicitation ends by itself: the core fails it with -ECANCELED). The route
 * borrows its Session: the owner frees the route before its own reference on the session
 * goes (exec: the call's; contexts: the session's last; processes: the reader's).
 *
 * Who can decide. The answer comes from the elicitation's human or from the socket
 * (approval.c), never from the tool call: nothing in a call's arguments reaches this file.
 * The code cannot write on the run's end either: `sbxtrace run` sets it close-on-exec at
 * once, and the tracer closes every descriptor above 2 before the command's exec
 * (close_range with CLOSE_RANGE_CLOEXEC), so the sandbox starts with 0, 1 and 2 only
 * (tests/mcp/held.test.mjs looks).
 */
#include "agent/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/approval-wire.h"
#include "common/macros.h"

#define HELD_REQUEST_MAX (64u * 1024)
#define HELD_NOTES_MAX	 64 /* kept for the next result; more are counted only */

struct HeldRoute {
	Session *s; /* borrowed, see above */
	int fd;	    /* ours; the run holds the other end */
	pthread_t thread;
	pthread_mutex_t lock; /* guards what follows */
	pthread_cond_t idle;  /* asking became false */
	McpCall *call;	      /* in flight, or NULL */
	bool asking;	      /* a request is being asked through call */
	bool cancelled;	      /* call was cancelled (reset with each set_call) */
	bool closing;	      /* the run ended: deny what waits, drop what comes */
	json_t *notes;
	size_t notes_dropped;
};

/* approval.c's wait on the socket asks this under its lock; never takes that lock itself */
static bool aborted(void *userdata)
{
	HeldRoute *h = userdata;
	bool yes;

	pthread_mutex_lock(&h->lock);
	yes = h->closing || (h->asking && h->cancelled);
	pthread_mutex_unlock(&h->lock);
	return yes;
}

static void *serve(void *userdata)
{
	HeldRoute *h = userdata;
	json_t *req;

	while ((req = approval_read_json(h->fd, HELD_REQUEST_MAX, -1))) {
		json_t *notes = json_array(), *rep = NULL;
		McpCall *call;
		bool closing;

		pthread_mutex_lock(&h->lock);
		closing = h->closing;
		call = h->call;
		h->asking = call != NULL;
		pthread_mutex_unlock(&h->lock);
		/* the run is gone: nobody waits for an answer */
		if (!closing)
			rep = approval_decide_held(h->s->agent, h->s, req, call, aborted, h, notes);
		pthread_mutex_lock(&h->lock);
		h->asking = false;
		pthread_cond_broadcast(&h->idle);
		for (size_t i = 0; i < json_array_size(notes); i++) {
			if (json_array_size(h->notes) < HELD_NOTES_MAX)
				json_array_append(h->notes, json_array_get(notes, i));
			else
				h->notes_dropped++;
		}
		pthread_mutex_unlock(&h->lock);
		if (rep)
			(void) approval_write_json(h->fd, rep);
		json_decref(rep);
		json_decref(notes);
		json_decref(req);
	}
	return NULL;
}

int held_route_new(Session *s, HeldRoute **ret, int *ret_run_fd)
{
	HeldRoute *h;
	int sp[2], r;

	*ret = NULL;
	*ret_run_fd = -1;
	if (!session_asks(s))
		return 0;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->notes = json_array();
	if (!h->notes) {
		free(h);
		return -ENOMEM;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
		r = -errno;
		json_decref(h->notes);
		free(h);
		return r;
	}
	h->s = s;
	h->fd = sp[0];
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->idle, NULL);
	r = pthread_create(&h->thread, NULL, serve, h);
	if (r != 0) {
		close(sp[0]);
		close(sp[1]);
		pthread_mutex_destroy(&h->lock);
		pthread_cond_destroy(&h->idle);
		json_decref(h->notes);
		free(h);
		return -r;
	}
	*ret = h;
	*ret_run_fd = sp[1];
	return 0;
}

void held_route_set_call(HeldRoute *h, McpCall *call)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	while (h->asking)
		pthread_cond_wait(&h->idle, &h->lock);
	h->call = call;
	h->cancelled = false;
	pthread_mutex_unlock(&h->lock);
}

void held_route_cancel(HeldRoute *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	h->cancelled = true;
	pthread_mutex_unlock(&h->lock);
	approval_wake(h->s->agent);
}

/* Caller holds h->lock. */
static size_t take_notes_locked(HeldRoute *h, json_t *notices)
{
	size_t n = json_array_size(h->notes);

	if (notices) {
		json_array_extend(notices, h->notes);
		if (h->notes_dropped) {
			char text[160];

			snprintf(
				text, sizeof(text),
				"%zu more held connects, execs or opens were denied (see the audit "
				"log)",
				h->notes_dropped);
			json_array_append_new(notices, json_string(text));
		}
	}
	n += h->notes_dropped;
	json_array_clear(h->notes);
	h->notes_dropped = 0;
	return n;
}

size_t held_route_take_notes(HeldRoute *h, json_t *notices)
{
	size_t n;

	if (!h)
		return 0;
	pthread_mutex_lock(&h->lock);
	n = take_notes_locked(h, notices);
	pthread_mutex_unlock(&h->lock);
	return n;
}

HeldRoute *held_route_free(HeldRoute *h, json_t *notices)
{
	if (!h)
		return NULL;
	pthread_mutex_lock(&h->lock);
	h->closing = true;
	pthread_mutex_unlock(&h->lock);
	approval_wake(h->s->agent);
	/* the thread reads to EOF: the run's end may still be open (a run being killed, a
	 * copy in a child that has not exec'd yet); a shutdown is an EOF now */
	(void) shutdown(h->fd, SHUT_RDWR);
	pthread_join(h->thread, NULL);
	close(h->fd);
	(void) take_notes_locked(h, notices);
	json_decref(h->notes);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->idle);
	free(h);
	return NULL;
}
