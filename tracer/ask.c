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
 *     PATH` lists and `sbxtrace approve ID --socket PATH` answers — the MCP server's protocol.
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
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "audit/audit.h"
#include "common/approval-wire.h"
#include "common/log.h"
#include "common/macros.h"
#include "common/util.h"
#include "net/handlers.h"
#include "policy/policy.h"

typedef struct AskWaiter {
	struct AskWaiter *next;
	char id[32];
	json_t *info;
	uint64_t start_ns;
	ApprovalDecision decision;
	char decider[160];
	char *note;
} AskWaiter;

struct TracerAsk {
	Tracer *t;
	int fd; /* --approval-fd, -1 */
	pthread_mutex_t fd_lock;
	bool fd_broken;
	int listen_fd; /* --approval-socket, -1 */
	char *socket_path;
	int stop_pipe[2];
	pthread_t thread;
	bool thread_started;
	pthread_mutex_t lock; /* waiters, stopping */
	pthread_cond_t cond;
	AskWaiter *waiters;
	bool stopping;
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
			o->channel = strdup(json_string_value(json_object_get(rep, "channel"))) ?: o->channel;
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
	AskWaiter w = {.decision = APPROVAL_NONE, .start_ns = now_monotonic_ns()};
	uint64_t deadline = w.start_ns + rq->timeout_ms * 1000000ull;
	_cleanup_free_ char *args = NULL;
	char dest[208], name[208];
	struct timespec ts;
	json_t *shown;

	o->channel = "socket";
	memcpy(w.id, id, sizeof(w.id));
	/* a path may hold any byte but NUL: escaped by jansson, not pasted into JSON text */
	shown = json_pack("{s:i, s:s, s:s?}", "pid", (int) rq->tgid, "destination", rq->destination,
			  "name", rq->name);
	args = shown ? json_dumps(shown, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	json_decref(shown);
	w.info = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:s}", "id", id, "tool", rq->op, "risk",
			   "HIGH", "rule", rule_of(rq), "timeout_s",
			   (json_int_t) (rq->timeout_ms / 1000), "requested_ms",
			   (json_int_t) (now_realtime_ns() / 1000000), "arguments", args ?: "");
	if (!w.info)
		return 1;
	pthread_mutex_lock(&a->lock);
	w.next = a->waiters;
	a->waiters = &w;
	pthread_mutex_unlock(&a->lock);
	fprintf(stderr,
		"sbxtrace: approval %s: pid %d wants to %s %s%s%s%s, %s; answer with `sbxtrace "
		"approve --socket %s %s --allow|--allow-session|--deny` within %llu s\n",
		id, (int) rq->tgid, verb(rq), printable(rq->destination, dest, sizeof(dest)),
		rq->name ? " (" : "", rq->name ? printable(rq->name, name, sizeof(name)) : "",
		rq->name ? ")" : "", outside_of(rq), a->socket_path, id,
		(unsigned long long) (rq->timeout_ms / 1000));
	fflush(stderr);
	pthread_mutex_lock(&a->lock);
	while (w.decision == APPROVAL_NONE && !a->stopping && now_monotonic_ns() < deadline) {
		ts.tv_sec = (time_t) (deadline / 1000000000ull);
		ts.tv_nsec = (long) (deadline % 1000000000ull);
		(void) pthread_cond_timedwait(&a->cond, &a->lock, &ts);
	}
	for (AskWaiter **p = &a->waiters; *p; p = &(*p)->next)
		if (*p == &w) {
			*p = w.next;
			break;
		}
	pthread_mutex_unlock(&a->lock);
	json_decref(w.info);
	if (w.decision != APPROVAL_NONE) {
		o->decision = w.decision;
		o->note = w.note;
		memcpy(o->decider, w.decider, sizeof(o->decider));
		return 0;
	}
	o->decision = APPROVAL_DENY;
	o->timed_out = !a->stopping;
	snprintf(o->decider, sizeof(o->decider), a->stopping ? "run ending" : "timeout");
	snprintf(o->reason, sizeof(o->reason), "no decision within %llu s",
		 (unsigned long long) (rq->timeout_ms / 1000));
	return 0;
}

static json_t *handle(TracerAsk *a, const json_t *req, const struct ucred *cred)
{
	const char *op = json_string_value(json_object_get(req, "op"));

	if (op && streq(op, "list")) {
		json_t *list = json_array();
		uint64_t now = now_monotonic_ns();

		pthread_mutex_lock(&a->lock);
		for (AskWaiter *w = a->waiters; w && list; w = w->next)
			if (w->decision == APPROVAL_NONE) {
				json_t *x = json_deep_copy(w->info);

				if (x)
					json_object_set_new(x, "waited_s",
							    json_integer((json_int_t) ((now - w->start_ns) / 1000000000ull)));
				json_array_append_new(list, x);
			}
		pthread_mutex_unlock(&a->lock);
		return json_pack("{s:b, s:o}", "ok", 1, "pending", list ?: json_array());
	}
	if (op && streq(op, "decide")) {
		const char *id = json_string_value(json_object_get(req, "id"));
		const char *note = json_string_value(json_object_get(req, "note"));
		ApprovalDecision d = approval_decision_from_string(
			json_string_value(json_object_get(req, "decision")));
		struct passwd *pw;
		bool found = false;

		if (!id || d == APPROVAL_NONE)
			return json_pack("{s:b, s:s}", "ok", 0, "error",
					 "decide needs id and decision (allow_once, allow_session, deny)");
		pw = getpwuid(cred->uid); /* only the socket thread calls it */
		pthread_mutex_lock(&a->lock);
		for (AskWaiter *w = a->waiters; w; w = w->next)
			if (streq(w->id, id) && w->decision == APPROVAL_NONE) {
				w->decision = d;
				w->note = note ? strndup(note, 1000) : NULL;
				snprintf(w->decider, sizeof(w->decider),
					 "approval socket (uid %u %s, pid %d)", (unsigned) cred->uid,
					 pw ? pw->pw_name : "?", (int) cred->pid);
				found = true;
				pthread_cond_broadcast(&a->cond);
			}
		pthread_mutex_unlock(&a->lock);
		if (!found)
			return json_pack("{s:b, s:s}", "ok", 0, "error",
					 "no pending approval request with that id (decided, timed "
					 "out, or never asked)");
		return json_pack("{s:b, s:s, s:s}", "ok", 1, "id", id, "decision",
				 approval_decision_to_string(d));
	}
	return json_pack("{s:b, s:s}", "ok", 0, "error", "unknown op (list, decide)");
}

static void *socket_thread(void *userdata)
{
	TracerAsk *a = userdata;
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		struct pollfd p[2] = {{.fd = a->listen_fd, .events = POLLIN},
				      {.fd = a->stop_pipe[0], .events = POLLIN}};
		struct timeval tv = {.tv_sec = 5};
		struct ucred cred;
		socklen_t len = sizeof(cred);
		_cleanup_close_ int fd = -1;
		json_t *req, *rep;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		fd = accept4(a->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		(void) setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
		    (cred.uid != geteuid() && cred.uid != 0))
			continue;
		if (cred.pid <= 0 || approval_pid_descends_from(cred.pid, getpid())) {
			/* the sandbox runs as our user: its processes are refused by ancestry */
			static const char no[] = "{\"ok\":false,\"error\":\"refused: a process of "
						 "this sandbox cannot decide its approvals\"}\n";

			(void) write_all(fd, no, sizeof(no) - 1);
			continue;
		}
		req = approval_read_json(fd, 64 * 1024, 5000);
		rep = req ? handle(a, req, &cred)
			  : json_pack("{s:b, s:s}", "ok", 0, "error", "not a JSON object");
		json_decref(req);
		if (rep)
			(void) approval_write_json(fd, rep);
		json_decref(rep);
	}
	return NULL;
}

static int socket_open(TracerAsk *a, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	_cleanup_free_ char *dir = strdup(path);
	struct stat st;
	mode_t old;
	int fd, r;

	if (!dir)
		return -ENOMEM;
	if (strlen(path) >= sizeof(sa.sun_path))
		return log_error_errno(-ENAMETOOLONG, "--approval-socket: path too long");
	if (strrchr(dir, '/'))
		*strrchr(dir, '/') = 0;
	else
		strcpy(dir, ".");
	if (!*dir)
		strcpy(dir, "/");
	if (stat(dir, &st) < 0 || (st.st_uid != geteuid() && st.st_uid != 0) ||
	    (st.st_mode & 0022 && !(st.st_mode & S_ISVTX)))
		return log_error_errno(-EPERM, "--approval-socket: the directory '%.200s' must be "
				       "ours and not writable by others", dir);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return log_error_errno(-EEXIST, "--approval-socket: '%.200s' exists and is "
					       "not a socket", path);
		(void) unlink(path);
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	old = umask(0177);
	r = bind(fd, (struct sockaddr *) &sa, sizeof(sa));
	umask(old);
	if (r < 0 || chmod(path, 0600) < 0 || listen(fd, 16) < 0) {
		r = -errno;
		close(fd);
		return log_error_errno(r, "--approval-socket '%.200s'", path);
	}
	a->listen_fd = fd;
	a->socket_path = strdup(path);
	return a->socket_path ? 0 : -ENOMEM;
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
			case 'o': case 'O': case 'y': case 'Y':
				o->decision = APPROVAL_ALLOW_ONCE;
				break;
			case 's': case 'S':
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
		  : a->listen_fd >= 0	       ? "socket"
		  : a->tty_fd >= 0	       ? "tty"
					       : "none";
	audit_approval_event(a->t->audit, "request", id, rq->tgid, rq->op, rq->destination,
			     rq->name, channel, NULL, NULL, NULL, rq->why, 0, false,
			     rq->timeout_ms);
	if (a->fd >= 0) {
		r = ask_fd(a, id, rq, &o);
		owned = r == 2;
	}
	if (r == 1 && a->listen_fd >= 0)
		r = ask_socket(a, id, rq, &o);
	if (r == 1 && a->tty_fd >= 0)
		r = ask_tty(a, rq, &o);
	if (r == 1) {
		o.decision = APPROVAL_DENY;
		o.channel = "none";
		snprintf(o.decider, sizeof(o.decider), "none");
		snprintf(o.reason, sizeof(o.reason),
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
	return o.decision == APPROVAL_ALLOW_ONCE	? NET_ASK_ALLOW_ONCE
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
	pthread_condattr_t attr;
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
	a->listen_fd = a->tty_fd = a->stop_pipe[0] = a->stop_pipe[1] = -1;
	pthread_mutex_init(&a->fd_lock, NULL);
	pthread_mutex_init(&a->lock, NULL);
	pthread_mutex_init(&a->tty_lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&a->cond, &attr);
	pthread_condattr_destroy(&attr);
	t->ask = a;
	if (opts->approval_socket) {
		r = socket_open(a, opts->approval_socket);
		if (r < 0)
			return r;
		if (pipe2(a->stop_pipe, O_CLOEXEC) < 0)
			return -errno;
		r = pthread_create(&a->thread, NULL, socket_thread, a);
		if (r != 0)
			return -r;
		a->thread_started = true;
	}
	if (a->fd < 0 && a->listen_fd < 0 && isatty(STDIN_FILENO))
		a->tty_fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	net_runtime_set_asker(asker, a);
	return 0;
}

void tracer_ask_cancel(Tracer *t)
{
	TracerAsk *a = t->ask;

	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stopping = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
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
	pthread_mutex_lock(&a->lock);
	a->stopping = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	if (a->thread_started) {
		if (write(a->stop_pipe[1], "x", 1) < 0)
			log_debug("ask: cannot wake the socket thread");
		pthread_join(a->thread, NULL);
	}
	if (a->listen_fd >= 0) {
		close(a->listen_fd);
		(void) unlink(a->socket_path);
	}
	if (a->stop_pipe[0] >= 0) {
		close(a->stop_pipe[0]);
		close(a->stop_pipe[1]);
	}
	if (a->tty_fd >= 0)
		close(a->tty_fd);
	/* the workers are stopped (tracer_dispatch_stop) before this: nobody asks any more */
	free(a->socket_path);
	free(a);
	t->ask = NULL;
}
