/* SPDX-License-Identifier: MIT */
/*
 * Held connects and sends (network.unlisted = "ask"; docs/network.md, "Held connects and
 * sends"): the asker the network handlers call on a worker thread while the child waits in
 * its connect(2), sendto(2), sendmsg(2) or sendmmsg(2). The seccomp notification is the
 * hold; no decision within network.ask_timeout denies.
 *
 * Channels, the first available:
 *  1. --approval-fd N: a descriptor to whoever started the run (the MCP server gives each
 *     execution one; it routes the request to the session's elicitation or approval socket).
 *     One JSON line each way (common/approval-wire.h): {"op":"ask",…} → {"id","decision",…}.
 *  2. --approval-socket PATH: a Unix socket of this run (mode 0600, this user or root, never
 *     a process of the sandbox: its ancestry is checked) that `sbxtrace approvals --socket
 *     PATH` lists and `sbxtrace approve ID --socket PATH` answers — the MCP server's protocol,
 *     served by the same code as the MCP server's socket (common/approval-board.c).
 *  3. The terminal: a prompt on /dev/tty. The supervisor takes the terminal's foreground
 *     group for the prompt (the program then cannot read it: a read stops it with SIGTTIN;
 *     TOSTOP is set so that it cannot draw over the prompt either), and gives it back after;
 *     the program cannot type an answer (TIOCSTI and TIOCLINUX are denied by the filter). A
 *     read the program had already blocked in before the prompt could swallow the answer:
 *     then the prompt times out, which denies.
 * None: denied at once ("approval_required"). Every request and decision is an "approval"
 * record of the audit log.
 *
 * The descriptors are the supervisor's own (close-on-exec, opened after the tree was
 * forked): the program has none of them.
 */
#include "tracer/internal.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "audit/audit.h"
#include "common/approval-board.h"
#include "common/approval-wire.h"
#include "common/log.h"
#include "common/macros.h"
#include "common/util.h"
#include "net/handlers.h"
#include "policy/policy.h"

struct TracerAsk {
	Tracer *t;
	int fd; /* --approval-fd, -1 */
	pthread_mutex_t fd_lock;
	bool fd_broken;
	ApprovalBoard *board;	/* the requests waiting on the socket */
	ApprovalServer *server; /* --approval-socket, NULL */
	atomic_bool stopping;
	int tty_fd; /* /dev/tty, -1 */
	pthread_mutex_t tty_lock;
	atomic_bool prompting, stopped_during_prompt;
};

typedef struct Outcome {
	ApprovalDecision decision;
	const char *channel;
	char decider[160];
	char *note;
	bool timed_out;
	char reason[200];
} Outcome;

/* The verb of the question: "connect to", "send to" (sendto, sendmsg, sendmmsg), "run". */
static const char *verb(const NetAskRequest *rq)
{
	if (streq(rq->op, "exec"))
		return "run";
	if (streq(rq->op, "open"))
		return "open";
	if (streq(rq->op, "write"))
		return "write to";
	return strncmp(rq->op, "send", 4) == 0 ? "send to" : "connect to";
}

static const char *rule_of(const NetAskRequest *rq)
{
	return rq->rule ?: "network.unlisted = \"ask\": a destination outside the allowlist";
}

static const char *outside_of(const NetAskRequest *rq)
{
	return rq->outside ?: "which is not in the allowlist";
}

/* The destination or name for a terminal: an exec's path comes from the program, so bytes
 * that are not printable ASCII become '?' and it is capped (STYLE: never raw child bytes). */
static const char *printable(const char *s, char *buf, size_t size)
{
	size_t n = 0;

	for (; s && *s && n + 4 < size && n < 200; s++)
		buf[n++] = (unsigned char) *s >= 0x20 && (unsigned char) *s < 0x7f ? *s : '?';
	if (s && *s)
		buf[n++] = '.', buf[n++] = '.', buf[n++] = '.';
	buf[n] = 0;
	return buf;
}

/* ---- channel 1: the descriptor ---- */

static int ask_fd(TracerAsk *a, const char *id, const NetAskRequest *rq, Outcome *o)
{
	uint64_t deadline = now_monotonic_ns() / 1000000 + rq->timeout_ms;
	json_t *req;
	int r;

	o->channel = "approval-fd";
	pthread_mutex_lock(&a->fd_lock); /* one request at a time on the descriptor */
	if (a->fd_broken) {
		pthread_mutex_unlock(&a->fd_lock);
		return 1;
	}
	req = json_pack("{s:s, s:s, s:s, s:i, s:s, s:s?, s:s, s:s, s:I}", "op", "ask", "id", id,
			"kind", rq->op, "pid", (int) rq->tgid, "destination", rq->destination,
			"name", rq->name, "reason", rq->why, "rule", rule_of(rq), "timeout_s",
			(json_int_t) ((rq->timeout_ms + 999) / 1000));
	r = req ? approval_write_json(a->fd, req) : -ENOMEM;
	json_decref(req);
	if (r < 0) {
		a->fd_broken = true;
		pthread_mutex_unlock(&a->fd_lock);
		return 1;
	}
	for (;;) {
		uint64_t now = now_monotonic_ns() / 1000000;
		json_t *rep;
		const char *rid;

		if (now >= deadline) {
			json_t *c = json_pack("{s:s, s:s}", "op", "cancel", "id", id);

			if (c)
				(void) approval_write_json(a->fd, c);
			json_decref(c);
			o->decision = APPROVAL_DENY;
			o->timed_out = true;
			snprintf(o->decider, sizeof(o->decider), "timeout");
			snprintf(o->reason, sizeof(o->reason), "no decision within %llu s",
				 (unsigned long long) (rq->timeout_ms / 1000));
			break;
		}
		if (a->stopping)
			deadline = now; /* the run is ending */
		{
			struct pollfd p = {.fd = a->fd, .events = POLLIN};

			if (poll(&p, 1, (int) MIN(deadline - now, 500u)) <= 0)
				continue;
		}
		rep = approval_read_json(a->fd, 64 * 1024, 5000);
		if (!rep) {
			a->fd_broken = true; /* EOF or garbage: the other end is gone */
			pthread_mutex_unlock(&a->fd_lock);
			return 1;
		}
		rid = json_string_value(json_object_get(rep, "id"));
		if (!rid || !streq(rid, id)) {
			json_decref(rep); /* a late answer to an earlier request */
			continue;
		}
		o->decision = approval_decision_from_string(
			json_string_value(json_object_get(rep, "decision")));
		if (o->decision == APPROVAL_NONE)
			o->decision = APPROVAL_DENY;
		snprintf(o->decider, sizeof(o->decider), "%s",
			 json_string_value(json_object_get(rep, "decider")) ?: "approval-fd");
		if (json_string_value(json_object_get(rep, "channel")))
			o->channel = strdup(json_string_value(json_object_get(rep, "channel")))
					     ?: o->channel;
		else
			o->channel = strdup(o->channel);
		if (json_string_value(json_object_get(rep, "note")))
			o->note = strndup(json_string_value(json_object_get(rep, "note")), 1000);
		snprintf(o->reason, sizeof(o->reason), "%s",
			 json_string_value(json_object_get(rep, "reason")) ?: "");
		o->timed_out = json_is_true(json_object_get(rep, "timed_out"));
		json_decref(rep);
		pthread_mutex_unlock(&a->fd_lock);
		return 2; /* channel string owned */
	}
	pthread_mutex_unlock(&a->fd_lock);
	return 0;
}

/* ---- channel 2: the socket ---- */

static int ask_socket(TracerAsk *a, const char *id, const NetAskRequest *rq, Outcome *o)
{
	uint64_t deadline = now_monotonic_ns() + rq->timeout_ms * 1000000ull;
	_cleanup_free_ char *args = NULL;
	char dest[208], name[208];
	ApprovalWaiter w;
	ApprovalWait end;
	json_t *shown, *info;

	o->channel = "socket";
	/* a path may hold any byte but NUL: escaped by jansson, not pasted into JSON text */
	shown = json_pack("{s:i, s:s, s:s?}", "pid", (int) rq->tgid, "destination", rq->destination,
			  "name", rq->name);
	args = shown ? json_dumps(shown, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	json_decref(shown);
	info = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:s}", "id", id, "tool", rq->op, "risk",
			 "HIGH", "rule", rule_of(rq), "timeout_s",
			 (json_int_t) (rq->timeout_ms / 1000), "requested_ms",
			 (json_int_t) (now_realtime_ns() / 1000000), "arguments", args ?: "");
	if (!info)
		return 1;
	if (approval_board_post(a->board, &w, id, info) < 0) {
		end = APPROVAL_WAIT_STOPPING; /* the run is ending: nobody will answer */
		goto denied;
	}
	fprintf(stderr,
		"sbxtrace: approval %s: pid %d wants to %s %s%s%s%s, %s; answer with `sbxtrace "
		"approve --socket %s %s --allow|--allow-session|--deny` within %llu s\n",
		id, (int) rq->tgid, verb(rq), printable(rq->destination, dest, sizeof(dest)),
		rq->name ? " (" : "", rq->name ? printable(rq->name, name, sizeof(name)) : "",
		rq->name ? ")" : "", outside_of(rq), approval_server_path(a->server), id,
		(unsigned long long) (rq->timeout_ms / 1000));
	fflush(stderr);
	end = approval_board_wait(a->board, &w, deadline, NULL);
	if (end == APPROVAL_WAIT_DECIDED) {
		o->decision = w.decision;
		o->note = w.note;
		memcpy(o->decider, w.decider, sizeof(o->decider));
		return 0;
	}
denied:
	o->decision = APPROVAL_DENY;
	o->timed_out = end != APPROVAL_WAIT_STOPPING;
	snprintf(o->decider, sizeof(o->decider),
		 end == APPROVAL_WAIT_STOPPING ? "run ending" : "timeout");
	snprintf(o->reason, sizeof(o->reason), "no decision within %llu s",
		 (unsigned long long) (rq->timeout_ms / 1000));
	return 0;
}

/* ---- channel 3: the terminal ---- */

static int ask_tty(TracerAsk *a, const NetAskRequest *rq, Outcome *o)
{
	Tracer *t = a->t;
	uint64_t deadline = now_monotonic_ns() / 1000000 + rq->timeout_ms;
	struct termios saved, tio;
	sigset_t block, old;
	pid_t fg;
	char line[64], dest[208], name[208];
	size_t n = 0;
	bool have_termios;
	_cleanup_free_ char *prompt = NULL;

	o->channel = "tty";
	pthread_mutex_lock(&a->tty_lock); /* one prompt at a time */
	sigemptyset(&block);
	sigaddset(&block, SIGTTOU);
	sigaddset(&block, SIGTTIN);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	atomic_store(&a->prompting, true);
	fg = tcgetpgrp(a->tty_fd);
	/* the foreground is ours while we ask: the program's reads stop it (SIGTTIN) */
	(void) tcsetpgrp(a->tty_fd, getpgrp());
	have_termios = tcgetattr(a->tty_fd, &saved) == 0;
	if (have_termios) {
		tio = saved;
		tio.c_lflag |= ICANON | ECHO | ECHOE | TOSTOP; /* TOSTOP: no writes over us */
		tio.c_iflag |= ICRNL;
		(void) tcsetattr(a->tty_fd, TCSANOW, &tio);
	}
	(void) tcflush(a->tty_fd, TCIFLUSH); /* nothing typed before the question answers it */
	prompt = strdup_printf(
		"\r\nsbxtrace: pid %d wants to %s %s%s%s%s, %s.\r\nAllow it? "
		"[o]nce, for the [s]ession, [N]o (denied in %llu s): ",
		(int) rq->tgid, verb(rq), printable(rq->destination, dest, sizeof(dest)),
		rq->name ? " (" : "", rq->name ? printable(rq->name, name, sizeof(name)) : "",
		rq->name ? ")" : "", outside_of(rq), (unsigned long long) (rq->timeout_ms / 1000));
	if (prompt)
		(void) write_all(a->tty_fd, prompt, strlen(prompt));
	o->decision = APPROVAL_NONE;
	while (n < sizeof(line) - 1) {
		uint64_t now = now_monotonic_ns() / 1000000;
		struct pollfd p = {.fd = a->tty_fd, .events = POLLIN};
		ssize_t k;

		if (now >= deadline || a->stopping)
			break;
		if (poll(&p, 1, (int) MIN(deadline - now, 500u)) <= 0)
			continue;
		k = read(a->tty_fd, line + n, sizeof(line) - 1 - n);
		if (k <= 0)
			break;
		n += (size_t) k;
		if (memchr(line, '\n', n)) {
			line[n] = 0;
			switch (line[strspn(line, " \t")]) {
			case 'o':
			case 'O':
			case 'y':
			case 'Y':
				o->decision = APPROVAL_ALLOW_ONCE;
				break;
			case 's':
			case 'S':
				o->decision = APPROVAL_ALLOW_SESSION;
				break;
			default:
				o->decision = APPROVAL_DENY;
			}
			break;
		}
	}
	if (o->decision == APPROVAL_NONE) {
		o->decision = APPROVAL_DENY;
		o->timed_out = true;
		snprintf(o->decider, sizeof(o->decider), "timeout");
		snprintf(o->reason, sizeof(o->reason), "no answer on the terminal within %llu s",
			 (unsigned long long) (rq->timeout_ms / 1000));
		(void) write_all(a->tty_fd, "\r\nsbxtrace: no answer: denied\r\n", 31);
	} else
		snprintf(o->decider, sizeof(o->decider), "terminal (uid %u)", (unsigned) getuid());
	if (have_termios)
		(void) tcsetattr(a->tty_fd, TCSADRAIN, &saved);
	if (fg > 0)
		(void) tcsetpgrp(a->tty_fd, fg);
	atomic_store(&a->prompting, false);
	/* a program stopped by SIGTTIN/SIGTTOU while we held the terminal goes on */
	if (atomic_exchange(&a->stopped_during_prompt, false) && t->child > 0)
		(void) kill(-t->child, SIGCONT);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_mutex_unlock(&a->tty_lock);
	return 0;
}

/* ---- the asker ---- */

static NetAskAnswer asker(void *userdata, const NetAskRequest *rq)
{
	TracerAsk *a = userdata;
	Outcome o = {.decision = APPROVAL_NONE, .channel = "none"};
	uint64_t t0 = now_monotonic_ns();
	const char *channel;
	char id[32];
	int r = 1;
	bool owned = false;

	approval_new_id("ask_", id);
	channel = a->fd >= 0 && !a->fd_broken ? "approval-fd"
		  : a->server		      ? "socket"
		  : a->tty_fd >= 0	      ? "tty"
					      : "none";
	audit_approval_event(a->t->audit, "request", id, rq->tgid, rq->op, rq->destination,
			     rq->name, channel, NULL, NULL, NULL, rq->why, 0, false,
			     rq->timeout_ms);
	if (a->fd >= 0) {
		r = ask_fd(a, id, rq, &o);
		owned = r == 2;
	}
	if (r == 1 && a->server)
		r = ask_socket(a, id, rq, &o);
	if (r == 1 && a->tty_fd >= 0)
		r = ask_tty(a, rq, &o);
	if (r == 1) {
		o.decision = APPROVAL_DENY;
		o.channel = "none";
		snprintf(o.decider, sizeof(o.decider), "none");
		snprintf(
			o.reason, sizeof(o.reason),
			"approval_required: nobody to ask (no --approval-fd, no --approval-socket, "
			"no terminal)");
	}
	audit_approval_event(a->t->audit, "decision", id, rq->tgid, rq->op, rq->destination,
			     rq->name, o.channel, approval_decision_to_string(o.decision),
			     o.decider, o.note, o.reason[0] ? o.reason : NULL,
			     (now_monotonic_ns() - t0) / 1000000, o.timed_out, rq->timeout_ms);
	if (owned)
		free((char *) o.channel);
	free(o.note);
	return o.decision == APPROVAL_ALLOW_ONCE      ? NET_ASK_ALLOW_ONCE
	       : o.decision == APPROVAL_ALLOW_SESSION ? NET_ASK_ALLOW_SESSION
						      : NET_ASK_DENY;
}

NetAskAnswer tracer_ask(Tracer *t, const NetAskRequest *rq)
{
	if (!t->ask)
		return NET_ASK_DENY;
	return asker(t->ask, rq);
}

int tracer_ask_start(Tracer *t)
{
	const TracerOptions *opts = t->opts;
	TracerAsk *a;
	int r;

	bool rules_ask = false;

	for (size_t i = 0; i < t->policy->n_rules; i++)
		rules_ask |= t->policy->rules[i].access == RULE_ACCESS_ASK ||
			     t->policy->rules[i].access == RULE_ACCESS_ASK_WRITE;
	if (!t->policy->network.ask_unlisted && !t->policy->exec_ask_unlisted && !rules_ask)
		return 0;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->t = t;
	a->fd = opts->approval_fd > 2 ? opts->approval_fd : -1;
	a->tty_fd = -1;
	pthread_mutex_init(&a->fd_lock, NULL);
	pthread_mutex_init(&a->tty_lock, NULL);
	t->ask = a;
	if (opts->approval_socket) {
		ApprovalServerOptions so = {
			.path = opts->approval_socket,
			.refusal = "refused: a process of this sandbox cannot decide its approvals",
		};
		char err[400];

		a->board = approval_board_new();
		if (!a->board)
			return -ENOMEM;
		r = approval_server_start(a->board, &so, &a->server, err, sizeof(err));
		if (r < 0)
			return log_error_errno(r, "--approval-socket: %s", err);
	}
	if (a->fd < 0 && !a->server && isatty(STDIN_FILENO))
		a->tty_fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	net_runtime_set_asker(t->net, asker, a);
	return 0;
}

void tracer_ask_cancel(Tracer *t)
{
	TracerAsk *a = t->ask;

	if (!a)
		return;
	atomic_store(&a->stopping, true);
	if (a->board)
		approval_board_stop(a->board);
}

bool tracer_ask_job_stopped(Tracer *t)
{
	TracerAsk *a = t->ask;

	if (!a || !atomic_load(&a->prompting))
		return false;
	atomic_store(&a->stopped_during_prompt, true);
	return true;
}

void tracer_ask_stop(Tracer *t)
{
	TracerAsk *a = t->ask;

	if (!a)
		return;
	tracer_ask_cancel(t);
	a->server = approval_server_stop(a->server);
	if (a->tty_fd >= 0)
		close(a->tty_fd);
	/* the workers are stopped (tracer_dispatch_stop) before this: nobody asks any more */
	a->board = approval_board_free(a->board);
	free(a);
	t->ask = NULL;
}
