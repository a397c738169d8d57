/* SPDX-License-Identifier: MIT */
/*
 * The approval board and its socket (docs/agents.md, "Human approval"; docs/network.md,
 * "Held connects and sends").
 *
 * Why one copy: the MCP server (agent/approval.c) and `sbxtrace run --approval-socket`
 * (tracer/ask.c) serve the same protocol to the same client, `sbxtrace approve`/`approvals`,
 * and each used to carry its own list of waiters, its own `list`/`decide`, its own socket
 * thread with its own peer checks and its own 0600 bind. Those checks are what keeps a
 * sandboxed program from approving its own calls; two copies of them can drift apart, and
 * one did (one thread blocked signals, the other did not). What the two users still do
 * differently — who is asked first (elicitation, a descriptor, a terminal), what they audit,
 * what a waiter shows in `list`, how a wait is cancelled — stays with them: they build the
 * waiter's info, pass hooks to the wait, and choose the options of the socket.
 *
 * Threads: a waiter is posted and waited for by one thread (a tool call's, a tracer
 * worker's), and lives on that thread's stack; the socket thread reads and decides it. The
 * board's mutex guards the list, every waiter's fields while posted, and `stopping`; the
 * condition variable (CLOCK_MONOTONIC, so a clock step neither shortens nor stretches a
 * timeout) is broadcast on every decide, cancel, wake and stop. A waiter is taken off the
 * list under the lock before its wait returns, so the socket thread never sees a stack frame
 * that is gone. aborted() runs under the lock and must not call back into the board; beat()
 * runs without it.
 *
 * Who may decide. TOCTOU: the peer's credentials are read once, with SO_PEERCRED, when the
 * connection is accepted; the kernel recorded them at the peer's connect(2), so what the peer
 * does afterwards (setuid, exec) does not change them, and every check below is made on that
 * copy:
 *  - the uid must be ours or root (the socket's mode 0600 already keeps others out; this is
 *    the second lock), else the connection is closed without an answer;
 *  - the peer must not be this process or one of its descendants (approval_peer_descends_from,
 *    which walks /proc; unknown ancestry counts as a descendant). A sandbox we started runs
 *    as our user, so the uid cannot tell it apart; its ancestry can. The walk starts from
 *    the peer's pidfd (SO_PEERPIDFD, Linux 6.5) and checks each step against a pidfd, so a
 *    descendant that connects and exits at once, leaving its pid number to a process that
 *    is not ours, is refused (a reaped peer is refused outright). On kernels before 6.5 the
 *    walk starts from the pid number, and that window stays open: it needs the pid space
 *    to wrap between the connect and the walk. test-approval-board makes the wrap happen in
 *    a pid namespace of its own and checks the refusal.
 * Refused peers get options->refusal; nothing they send is read.
 *
 * The bind: the directory must be ours or root's and not writable by others (unless sticky),
 * so nobody else can put a socket of theirs in our place; bind(2) under umask 0177 makes the
 * socket 0600 from birth, and the chmod() after it only makes sure.
 */
#include "common/approval-board.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/macros.h"
#include "common/util.h"

#define REQUEST_MAX    (64u * 1024)
#define PEER_TIMEOUT_S 5

struct ApprovalBoard {
	pthread_mutex_t lock; /* guards what follows */
	pthread_cond_t cond;  /* CLOCK_MONOTONIC */
	ApprovalWaiter *waiters;
	bool stopping;
};

struct ApprovalServer {
	ApprovalBoard *board; /* borrowed */
	char *path;
	char *refusal; /* the whole reply line */
	int listen_fd, stop_pipe[2];
	pthread_t thread;
	bool thread_started;
};

/* ---- the board ---- */

ApprovalBoard *approval_board_new(void)
{
	ApprovalBoard *b = calloc(1, sizeof(*b));
	pthread_condattr_t attr;

	if (!b)
		return NULL;
	pthread_mutex_init(&b->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&b->cond, &attr);
	pthread_condattr_destroy(&attr);
	return b;
}

ApprovalBoard *approval_board_free(ApprovalBoard *b)
{
	if (!b)
		return NULL;
	assert(!b->waiters);
	pthread_cond_destroy(&b->cond);
	pthread_mutex_destroy(&b->lock);
	free(b);
	return NULL;
}

int approval_board_post(ApprovalBoard *b, ApprovalWaiter *w, const char *id, json_t *info)
{
	*w = (ApprovalWaiter){
		.decision = APPROVAL_NONE, .info = info, .start_ns = now_monotonic_ns()};
	snprintf(w->id, sizeof(w->id), "%s", id);
	pthread_mutex_lock(&b->lock);
	if (b->stopping) {
		pthread_mutex_unlock(&b->lock);
		json_decref(w->info);
		w->info = NULL;
		return -ESHUTDOWN;
	}
	w->next = b->waiters;
	b->waiters = w;
	pthread_mutex_unlock(&b->lock);
	return 0;
}

ApprovalWait approval_board_wait(ApprovalBoard *b, ApprovalWaiter *w, uint64_t deadline_ns,
				 const ApprovalWaitHooks *hooks)
{
	bool beats = hooks && hooks->beat && hooks->beat_ns > 0;
	uint64_t next_beat = beats ? w->start_ns + hooks->beat_ns : UINT64_MAX;
	ApprovalWait r;

	pthread_mutex_lock(&b->lock);
	for (;;) {
		uint64_t now = now_monotonic_ns(), until;
		struct timespec ts;

		if (hooks && hooks->aborted && !w->cancelled && hooks->aborted(hooks->userdata))
			w->cancelled = true;
		if (w->decision != APPROVAL_NONE) {
			r = APPROVAL_WAIT_DECIDED;
			break;
		}
		if (w->cancelled) {
			r = APPROVAL_WAIT_CANCELLED;
			break;
		}
		if (b->stopping) {
			r = APPROVAL_WAIT_STOPPING;
			break;
		}
		if (now >= deadline_ns) {
			r = APPROVAL_WAIT_TIMEOUT;
			break;
		}
		if (now >= next_beat) {
			pthread_mutex_unlock(&b->lock);
			hooks->beat(hooks->userdata, now - w->start_ns);
			pthread_mutex_lock(&b->lock);
			next_beat += hooks->beat_ns;
			continue;
		}
		until = MIN(deadline_ns, next_beat);
		ts.tv_sec = (time_t) (until / 1000000000ull);
		ts.tv_nsec = (long) (until % 1000000000ull);
		(void) pthread_cond_timedwait(&b->cond, &b->lock, &ts);
	}
	for (ApprovalWaiter **p = &b->waiters; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	w->next = NULL;
	pthread_mutex_unlock(&b->lock);
	json_decref(w->info);
	w->info = NULL;
	return r;
}

void approval_board_cancel(ApprovalBoard *b, ApprovalWaiter *w)
{
	pthread_mutex_lock(&b->lock);
	w->cancelled = true;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

void approval_board_wake(ApprovalBoard *b)
{
	pthread_mutex_lock(&b->lock);
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

void approval_board_stop(ApprovalBoard *b)
{
	pthread_mutex_lock(&b->lock);
	b->stopping = true;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

static json_t *error_reply(const char *text)
{
	return json_pack("{s:b, s:s}", "ok", 0, "error", text);
}

static json_t *list(ApprovalBoard *b)
{
	json_t *pending = json_array();
	uint64_t now = now_monotonic_ns();

	pthread_mutex_lock(&b->lock);
	for (ApprovalWaiter *w = b->waiters; w && pending; w = w->next)
		if (w->decision == APPROVAL_NONE) {
			json_t *x = json_deep_copy(w->info);

			if (x)
				json_object_set_new(x, "waited_s",
						    json_integer((json_int_t) ((now - w->start_ns) /
									       1000000000ull)));
			json_array_append_new(pending, x);
		}
	pthread_mutex_unlock(&b->lock);
	return json_pack("{s:b, s:o}", "ok", 1, "pending", pending ?: json_array());
}

static json_t *decide(ApprovalBoard *b, const json_t *req, const struct ucred *cred)
{
	const char *id = json_string_value(json_object_get(req, "id"));
	const char *note = json_string_value(json_object_get(req, "note"));
	ApprovalDecision d =
		approval_decision_from_string(json_string_value(json_object_get(req, "decision")));
	struct passwd pwd, *pw = NULL;
	char pwbuf[16384], who[64];
	bool found = false;

	if (!id || d == APPROVAL_NONE)
		return error_reply(
			"decide needs id and decision (allow_once, allow_session, deny)");
	if (getpwuid_r(cred->uid, &pwd, pwbuf, sizeof(pwbuf), &pw) != 0)
		pw = NULL;
	snprintf(who, sizeof(who), "%s", pw ? pw->pw_name : "?");
	pthread_mutex_lock(&b->lock);
	for (ApprovalWaiter *w = b->waiters; w; w = w->next)
		if (streq(w->id, id) && w->decision == APPROVAL_NONE) {
			w->decision = d;
			w->note = note ? strndup(note, 1000) : NULL;
			snprintf(w->decider, sizeof(w->decider),
				 "approval socket (uid %u %s, pid %d)", (unsigned) cred->uid, who,
				 (int) cred->pid);
			found = true;
			pthread_cond_broadcast(&b->cond);
		}
	pthread_mutex_unlock(&b->lock);
	if (!found)
		return error_reply(
			"no pending approval request with that id (decided, timed out, or "
			"never asked)");
	return json_pack("{s:b, s:s, s:s}", "ok", 1, "id", id, "decision",
			 approval_decision_to_string(d));
}

json_t *approval_board_handle(ApprovalBoard *b, const json_t *req, const struct ucred *cred)
{
	const char *op = json_string_value(json_object_get(req, "op"));

	if (op && streq(op, "list"))
		return list(b);
	if (op && streq(op, "decide"))
		return decide(b, req, cred);
	return error_reply("unknown op (list, decide)");
}

/* ---- the socket ---- */

static void serve(ApprovalServer *s, int fd)
{
	struct timeval tv = {.tv_sec = PEER_TIMEOUT_S};
	struct ucred cred;
	socklen_t len = sizeof(cred);
	json_t *req, *rep;

	(void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void) setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	/* TOCTOU: cred is the kernel's record of the peer at connect(2); see the top comment */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (cred.uid != geteuid() && cred.uid != 0))
		return; /* 0600 keeps others out already; this is the second lock */
	if (cred.pid <= 0 || approval_peer_descends_from(fd, cred.pid, getpid())) {
		/* a sandbox runs as our user: its processes are refused by ancestry */
		(void) write_all(fd, s->refusal, strlen(s->refusal));
		return;
	}
	req = approval_read_json(fd, REQUEST_MAX, PEER_TIMEOUT_S * 1000);
	rep = req ? approval_board_handle(s->board, req, &cred) : error_reply("not a JSON object");
	json_decref(req);
	if (rep)
		(void) approval_write_json(fd, rep);
	json_decref(rep);
}

static void *server_thread(void *userdata)
{
	ApprovalServer *s = userdata;
	sigset_t all;

	/* signals are for the threads that wait for them (a sigwait, a signalfd): this one
	 * blocking them all means a SIGINT or SIGTERM is never handled here by default */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		struct pollfd p[2] = {{.fd = s->listen_fd, .events = POLLIN},
				      {.fd = s->stop_pipe[0], .events = POLLIN}};
		_cleanup_close_ int fd = -1;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			serve(s, fd);
	}
	return NULL;
}

static int bind_socket(const ApprovalServerOptions *o, char *err, size_t errsize)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	_cleanup_free_ char *dir = strdup(o->path);
	_cleanup_close_ int fd = -1;
	struct stat st;
	mode_t old;
	int r;

	if (!dir)
		return -ENOMEM;
	if (strlen(o->path) >= sizeof(sa.sun_path)) {
		snprintf(err, errsize, "approval socket path '%.200s' is too long", o->path);
		return -ENAMETOOLONG;
	}
	if (strrchr(dir, '/'))
		*strrchr(dir, '/') = 0;
	else
		strcpy(dir, ".");
	if (!*dir)
		strcpy(dir, "/");
	if (o->check_dir) {
		char real[PATH_MAX];

		if (!realpath(dir, real)) {
			r = -errno;
			snprintf(err, errsize, "approval socket directory '%.200s': %s", dir,
				 strerror(-r));
			return r;
		}
		r = o->check_dir(real, o->userdata, err, errsize);
		if (r < 0)
			return r;
	}
	if (stat(dir, &st) < 0 || (st.st_uid != geteuid() && st.st_uid != 0) ||
	    (st.st_mode & 0022 && !(st.st_mode & S_ISVTX))) {
		snprintf(err, errsize,
			 "approval socket directory '%.200s' must be ours and not writable by "
			 "others",
			 dir);
		return -EPERM;
	}
	strcpy(sa.sun_path, o->path);
	if (lstat(o->path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errsize, "'%.200s' exists and is not a socket", o->path);
			return -EEXIST;
		}
		if (o->refuse_live) {
			_cleanup_close_ int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

			if (probe >= 0 &&
			    connect(probe, (struct sockaddr *) &sa, sizeof(sa)) == 0) {
				snprintf(err, errsize, "another server listens on '%.200s'",
					 o->path);
				return -EADDRINUSE;
			}
		}
		(void) unlink(o->path); /* stale */
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	old = umask(0177); /* mode 0600 from birth; callers bind before they start threads */
	r = bind(fd, (struct sockaddr *) &sa, sizeof(sa));
	umask(old);
	if (r < 0 || chmod(o->path, 0600) < 0 || listen(fd, 16) < 0) {
		r = -errno;
		snprintf(err, errsize, "approval socket '%.200s': %s", o->path, strerror(-r));
		return r;
	}
	return TAKE_FD(fd);
}

int approval_server_start(ApprovalBoard *b, const ApprovalServerOptions *opts, ApprovalServer **ret,
			  char *reterr, size_t errsize)
{
	_cleanup_free_ char *text = NULL;
	ApprovalServer *s;
	json_t *refusal;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->board = b;
	s->listen_fd = s->stop_pipe[0] = s->stop_pipe[1] = -1;
	s->path = strdup(opts->path);
	refusal = error_reply(opts->refusal);
	text = refusal ? json_dumps(refusal, JSON_COMPACT) : NULL;
	json_decref(refusal);
	s->refusal = text ? strdup_printf("%s\n", text) : NULL;
	if (!s->path || !s->refusal) {
		approval_server_stop(s);
		return -ENOMEM;
	}
	r = bind_socket(opts, reterr, errsize);
	if (r < 0) {
		approval_server_stop(s); /* with no listen_fd, it removes nothing */
		return r;
	}
	s->listen_fd = r;
	if (pipe2(s->stop_pipe, O_CLOEXEC) < 0) {
		r = -errno;
		snprintf(reterr, errsize, "approval socket: %s", strerror(-r));
		approval_server_stop(s);
		return r;
	}
	r = pthread_create(&s->thread, NULL, server_thread, s);
	if (r != 0) {
		snprintf(reterr, errsize, "approval socket: %s", strerror(r));
		approval_server_stop(s);
		return -r;
	}
	s->thread_started = true;
	*ret = s;
	return 0;
}

const char *approval_server_path(const ApprovalServer *s)
{
	return s->path;
}

ApprovalServer *approval_server_stop(ApprovalServer *s)
{
	if (!s)
		return NULL;
	if (s->thread_started) {
		if (write(s->stop_pipe[1], "x", 1) < 0)
			log_debug("approval: cannot wake the socket thread");
		pthread_join(s->thread, NULL);
	}
	if (s->listen_fd >= 0) {
		close(s->listen_fd);
		if (s->path)
			(void) unlink(s->path);
	}
	if (s->stop_pipe[0] >= 0) {
		close(s->stop_pipe[0]);
		close(s->stop_pipe[1]);
	}
	free(s->refusal);
	free(s->path);
	free(s);
	return NULL;
}
