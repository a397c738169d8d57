/* SPDX-License-Identifier: MIT */
/*
 * Stateful contexts (docs/agents.md, "Stateful contexts"): code_execute in a session keeps
 * interpreter state between calls, per language and context_id. A context is a long-lived
 * `sbxtrace run` of the session's policy whose command is a small driver shipped in this
 * binary (agent/drivers/, copied into the session's run/ directory, read-only inside):
 * python3 with one namespace, node with one vm context, bash with its cwd, variables and
 * functions.
 *
 *   server --"<id> <base64 code>\n"--> driver stdin      (a pipe of this context only)
 *   server <-- code's output + "\x1eSBX{json}\x1f" frames -- driver stdout
 *   server <-- code's stderr ------------------------------ driver stderr
 *   server <-- the run's --json result at its end --------- fd 3 of sbxtrace (--result-fd)
 *   server <-> held connects (network.unlisted = "ask") ---- fd 4 of sbxtrace (--approval-fd)
 *
 * Each context has its own pipes and its own sandboxed tree, so the code of one context
 * cannot speak for another (signals and ptrace outside the tree are refused by the engine);
 * the code can forge a frame on its own stdout, which only misreports its own result.
 *
 * Timeout: SIGINT to `sbxtrace run`, which forwards it to the driver's process group — the
 * running statement is interrupted, the state survives (KeyboardInterrupt in Python,
 * breakOnSigint in node, a trap in bash); after kill_grace the context is killed. A context
 * that dies (a budget, a crash, `exit` in shell) is reported once, with the run's result,
 * and recreated on the next call; the workspace is untouched.
 *
 * Held connects: a context outlives the tools/call that runs code in it, so its route
 * (held.c) is given the call of each execution while that call runs — a connect the code
 * makes then is asked through that call's elicitation — and no call between executions: a
 * thread the code left running then asks through the approval socket. A request asked
 * through a call keeps it open until decided (at most network.ask_timeout). A cancelled call
 * interrupts the code and denies what that call waits for; the route lives as long as the
 * context's run.
 *
 * The `sbxtrace run` processes are started by one long-lived thread (the spawner), so that
 * PR_SET_PDEATHSIG — which follows the *thread* that forked — kills them with the server and
 * not when the tool call's thread ends.
 */
#include "agent/internal.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/drivers.h"
#include "common/language.h"
#include "common/log.h"
#include "common/macros.h"
#include "common/util.h"

#define CONTEXT_WALL_S 604800 /* a context lives as long as its session, up to a week */
#define FRAME_MAGIC   "\x1eSBX"
#define FRAME_END     '\x1f'
#define PROGRESS_MS   250
#define HEARTBEAT_MS  2000
#define FRAME_MAX     (64u << 20)
/* Each context is a live `sbxtrace run` and an interpreter (tens of MiB): without a bound, one
 * session could hold any number of them by naming new context_ids (max_sessions bounds only
 * sessions). code_reset_context makes room. */
#define CONTEXTS_MAX  8

extern char **environ;

struct Context {
	struct Context *next;
	char key[96]; /* "language/context_id" */
	char language[16];
	char id[65];
	pid_t pid; /* sbxtrace run */
	int in_fd, out_fd, err_fd, res_fd;
	pthread_mutex_t lock; /* one execution at a time */
	bool dead;
	volatile bool killed; /* killed from outside (destroy, ratchet): remade on next use */
	uint64_t count; /* executions so far */
	/* [server] audit_syscalls: the run's --audit log, merged into audit.jsonl after each
	 * call (record_import_run_log) */
	char *audit_path;
	char run_id[128];
	uint64_t audit_off, audit_n;
	/* the held connects of this run (held.c), NULL when the session does not ask; the call
	 * of each execution is set on it while that call runs */
	HeldRoute *held;
};

/* ---- the spawner ---- */

typedef struct SpawnJob {
	char *const *argv;
	const char *exe;
	const int *fds; /* fds[i] becomes i */
	size_t n_fds;
	pid_t pid;
	int error;
	bool done;
} SpawnJob;

static pthread_mutex_t spawn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t spawn_cond = PTHREAD_COND_INITIALIZER;
static SpawnJob *spawn_job;
static bool spawner_started;

static pid_t fork_exec(const char *exe, char *const *argv, const int *fds, size_t n_fds)
{
	pid_t ppid = getpid(), pid = fork();

	if (pid != 0)
		return pid;
	/* async-signal-safe calls only: we were forked from a threaded process */
	{
		sigset_t none;
		int tmp[AGENT_SPAWN_FDS_MAX];

		(void) prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != ppid)
			_exit(125);
		sigemptyset(&none);
		(void) sigprocmask(SIG_SETMASK, &none, NULL);
		/* move them out of 0..n-1 first (above any of them), then into place; the
		 * copies are not close-on-exec, what else we had is (pipe2, SOCK_CLOEXEC) and
		 * goes with close_range besides */
		for (size_t i = 0; i < n_fds; i++) {
			tmp[i] = fcntl(fds[i], F_DUPFD, 16);
			if (tmp[i] < 0)
				_exit(125);
		}
		for (size_t i = 0; i < n_fds; i++)
			if (dup2(tmp[i], (int) i) < 0)
				_exit(125);
		(void) syscall(SYS_close_range, (unsigned) n_fds, ~0U, 0);
		execve(exe, argv, environ);
		_exit(127);
	}
}

static void *spawner(void *userdata)
{
	(void) userdata;
	pthread_mutex_lock(&spawn_lock);
	for (;;) {
		while (!spawn_job)
			pthread_cond_wait(&spawn_cond, &spawn_lock);
		spawn_job->pid = fork_exec(spawn_job->exe, spawn_job->argv, spawn_job->fds,
					   spawn_job->n_fds);
		spawn_job->error = spawn_job->pid < 0 ? errno : 0;
		spawn_job->done = true;
		spawn_job = NULL;
		pthread_cond_broadcast(&spawn_cond);
	}
	return NULL;
}

pid_t agent_spawn(const char *exe, char *const *argv, const int *fds, size_t n_fds)
{
	SpawnJob job = {.argv = argv, .exe = exe, .fds = fds, .n_fds = n_fds};

	if (n_fds < 3 || n_fds > AGENT_SPAWN_FDS_MAX)
		return -EINVAL;

	pthread_mutex_lock(&spawn_lock);
	if (!spawner_started) {
		pthread_t th;
		pthread_attr_t a;
		sigset_t all, old;

		/* the spawner blocks every signal: they belong to the server's own threads */
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&th, &a, spawner, NULL) != 0) {
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			pthread_mutex_unlock(&spawn_lock);
			return -EAGAIN;
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		spawner_started = true;
	}
	while (spawn_job)
		pthread_cond_wait(&spawn_cond, &spawn_lock);
	spawn_job = &job;
	pthread_cond_broadcast(&spawn_cond);
	while (!job.done)
		pthread_cond_wait(&spawn_cond, &spawn_lock);
	pthread_mutex_unlock(&spawn_lock);
	return job.pid < 0 ? -job.error : job.pid;
}

/* ---- contexts ---- */

/* each language's driver; its interpreter is the language's (common/language.c) */
static const struct {
	const char *language, *file, *text;
} drivers[] = {
	{"python", "driver.py", driver_python},
	{"javascript", "driver.js", driver_javascript},
	{"shell", "driver.sh", driver_shell},
};

static void context_close(Context *c)
{
	if (c->in_fd >= 0)
		close(c->in_fd);
	if (c->out_fd >= 0)
		close(c->out_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	if (c->res_fd >= 0)
		close(c->res_fd);
	c->in_fd = c->out_fd = c->err_fd = c->res_fd = -1;
	c->held = held_route_free(c->held, NULL);
}

/* Kills the context's run and reaps it (the keeper kills its tree). */
static void context_kill(Context *c)
{
	if (c->pid > 0) {
		(void) kill(c->pid, SIGKILL);
		(void) waitpid(c->pid, NULL, 0);
		c->pid = -1;
	}
	context_close(c);
	c->dead = true;
}

void context_free_all(Session *s)
{
	while (s->contexts) {
		Context *c = s->contexts;

		s->contexts = c->next;
		context_kill(c);
		pthread_mutex_destroy(&c->lock);
		free(c->audit_path);
		free(c);
	}
}

void context_kill_all_locked(Session *s)
{
	for (Context *c = s->contexts; c; c = c->next)
		if (c->pid > 0) {
			c->killed = true;
			(void) kill(c->pid, SIGKILL);
		}
}

int context_reset(Session *s, const char *language, const char *id)
{
	int n = 0;

	pthread_mutex_lock(&s->lock);
	for (Context **p = &s->contexts; *p;) {
		Context *c = *p;

		if ((!language || streq(c->language, language)) && (!id || streq(c->id, id))) {
			*p = c->next;
			pthread_mutex_unlock(&s->lock);
			(void) kill(c->pid, SIGKILL);
			pthread_mutex_lock(&c->lock); /* a running execution ends with the kill */
			context_kill(c);
			if (c->audit_path) {
				record_import_run_log(s, c->audit_path, &c->audit_off, &c->audit_n,
						      c->run_id);
				(void) unlink(c->audit_path);
			}
			pthread_mutex_unlock(&c->lock);
			pthread_mutex_destroy(&c->lock);
			free(c->audit_path);
			free(c);
			n++;
			pthread_mutex_lock(&s->lock);
			p = &s->contexts;
			continue;
		}
		p = &c->next;
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

json_t *context_list_locked(Session *s)
{
	json_t *a = json_array();

	for (Context *c = s->contexts; a && c; c = c->next)
		json_array_append_new(a, json_pack("{s:s, s:s, s:b, s:I}", "language", c->language,
						   "context_id", c->id, "alive", !c->dead && c->pid > 0,
						   "executions", (json_int_t) c->count));
	return a;
}

/* Starts the driver for c; caller holds c->lock. */
static int context_start(Session *s, Context *c, char *err, size_t errsize)
{
	const char *interp = NULL, *file = NULL, *text = NULL;
	_cleanup_free_ char *host = NULL, *vpath = NULL;
	_cleanup_(strv_freep) char **argv = NULL;
	_cleanup_close_ int held_run = -1;
	int in[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1}, res[2] = {-1, -1};
	pid_t pid;
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(drivers); i++)
		if (streq(drivers[i].language, c->language)) {
			file = drivers[i].file;
			text = drivers[i].text;
			interp = language_interp(language_find(c->language));
		}
	if (!file) {
		snprintf(err, errsize, "no context driver for '%.32s'", c->language);
		return -EINVAL;
	}
	if (!interp) {
		snprintf(err, errsize, "no interpreter for %s on this host", c->language);
		return -EINVAL;
	}
	host = strdup_printf("%s/run/%s", s->dir, file);
	vpath = strdup_printf("/run/sbxtrace/%s", file);
	if (!host || !vpath)
		return -ENOMEM;
	{
		/* the driver as this binary carries it, written anew (never a file the code made:
		 * run/ is read-only inside) */
		/* unique: two contexts of one language may start at once */
		_cleanup_free_ char *tmp = strdup_printf("%s.%d.%p.tmp", host, (int) gettid(), (void *) c);
		_cleanup_close_ int fd = tmp ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644) : -1;

		if (fd < 0 || write_all(fd, text, strlen(text)) < 0 || rename(tmp, host) < 0) {
			snprintf(err, errsize, "cannot install the %s driver: %s", c->language,
				 strerror(errno));
			return -EIO;
		}
	}
	free(c->audit_path);
	c->audit_path = NULL;
	if (s->agent->config->audit_syscalls) {
		snprintf(c->run_id, sizeof(c->run_id), "context-%s-%s-%llu", c->language, c->id,
			 (unsigned long long) (now_realtime_ns() / 1000));
		c->audit_off = c->audit_n = 0;
		c->audit_path = record_run_log_path(s, c->run_id);
	}
	/* without a route (out of memory), a held connect is denied at once: fail closed */
	c->held = held_route_free(c->held, NULL);
	(void) held_route_new(s, &c->held, &held_run);
	{
		char *cmd[4];
		size_t n = 0;
		RunArgs ra = {
			.result_fd = 3,
			.approval_fd = held_run >= 0 ? 4 : -1,
			.audit_path = c->audit_path,
			.wall_s = CONTEXT_WALL_S,
			.command = cmd,
		};

		cmd[n++] = (char *) interp;
		if (streq(c->language, "python"))
			cmd[n++] = (char *) "-u";
		cmd[n++] = vpath;
		cmd[n] = NULL;
		r = run_argv(s, &ra, &argv, err, errsize);
		if (r < 0) {
			c->held = held_route_free(c->held, NULL);
			return r;
		}
	}
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0 ||
	    pipe2(res, O_CLOEXEC) < 0) {
		int e = -errno;

		for (int i = 0; i < 2; i++) {
			if (in[i] >= 0)
				close(in[i]);
			if (out[i] >= 0)
				close(out[i]);
			if (er[i] >= 0)
				close(er[i]);
			if (res[i] >= 0)
				close(res[i]);
		}
		c->held = held_route_free(c->held, NULL);
		return e;
	}
	{
		/* 3: the run's result; 4: its --approval-fd, when it asks */
		int fds[5] = {in[0], out[1], er[1], res[1], held_run};

		pid = agent_spawn(s->agent->self_exe, argv, fds, held_run >= 0 ? 5 : 4);
	}
	close(in[0]);
	close(out[1]);
	close(er[1]);
	close(res[1]);
	if (pid < 0) {
		close(in[1]);
		close(out[0]);
		close(er[0]);
		close(res[0]);
		snprintf(err, errsize, "cannot start the %s context: %s", c->language,
			 strerror((int) -pid));
		c->held = held_route_free(c->held, NULL);
		return (int) pid;
	}
	c->pid = pid;
	c->in_fd = in[1];
	c->out_fd = out[0];
	c->err_fd = er[0];
	c->res_fd = res[0];
	(void) fcntl(c->out_fd, F_SETFL, O_NONBLOCK);
	(void) fcntl(c->err_fd, F_SETFL, O_NONBLOCK);
	(void) fcntl(c->res_fd, F_SETFL, O_NONBLOCK);
	c->dead = false;
	return 0;
}

/* The context for (language, id), made if missing; with a reference on nothing: contexts
 * live as long as the session. NULL with *full set when the session has CONTEXTS_MAX. */
static Context *context_get(Session *s, const char *language, const char *id, bool *full)
{
	char key[96];
	Context *c;
	size_t n = 0;

	*full = false;
	snprintf(key, sizeof(key), "%s/%s", language, id);
	pthread_mutex_lock(&s->lock);
	for (c = s->contexts; c; c = c->next, n++)
		if (streq(c->key, key))
			break;
	if (!c && n >= CONTEXTS_MAX)
		*full = true;
	else if (!c) {
		c = calloc(1, sizeof(*c));
		if (c) {
			snprintf(c->key, sizeof(c->key), "%s", key);
			snprintf(c->language, sizeof(c->language), "%s", language);
			snprintf(c->id, sizeof(c->id), "%s", id);
			c->pid = -1;
			c->in_fd = c->out_fd = c->err_fd = c->res_fd = -1;
			c->dead = true;
			pthread_mutex_init(&c->lock, NULL);
			c->next = s->contexts;
			s->contexts = c;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return c;
}

/* ---- one execution ---- */

typedef struct Buf {
	char *p;
	size_t len, cap, max;
	bool truncated;
} Buf;

static void buf_add(Buf *b, const char *data, size_t n)
{
	if (b->len + n > b->max) {
		b->truncated = true;
		n = b->max > b->len ? b->max - b->len : 0;
	}
	if (n == 0)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t nc = MAX(b->cap * 2, b->len + n + 1);
		char *np = realloc(b->p, nc);

		if (!np) {
			b->truncated = true;
			return;
		}
		b->p = np;
		b->cap = nc;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = 0;
}

/* A JSON string of len bytes, invalid UTF-8 replaced by U+FFFD as run --json does. */
static json_t *json_text(const char *p, size_t len)
{
	json_t *j = json_stringn(p ? p : "", p ? len : 0);
	Buf b = {.max = SIZE_MAX};

	if (j || !p)
		return j;
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char) p[i];
		size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
		bool ok = n > 0 && i + n <= len;

		for (size_t k = 1; ok && k < n; k++)
			ok = ((unsigned char) p[i + k] >> 6) == 2;
		if (ok && n > 1) {
			json_t *t = json_stringn(p + i, n);

			ok = t != NULL;
			json_decref(t);
		}
		if (ok) {
			buf_add(&b, p + i, n);
			i += n;
		} else {
			buf_add(&b, "\xef\xbf\xbd", 3);
			i++;
		}
	}
	j = json_stringn(b.p ? b.p : "", b.len);
	free(b.p);
	return j;
}

/* Splits the driver's stdout into the code's bytes (out) and frames; returns the done frame
 * for id when one is complete. */
typedef struct Parser {
	Buf pending;
	size_t frame_max; /* an unterminated frame may hold at most this much */
	Buf *out;
	uint64_t id;
	json_t *done;
	bool barrier; /* the err-done frame of id came (stderr's parser) */
} Parser;

static void parse(Parser *P)
{
	for (;;) {
		char *p = P->pending.p;
		size_t len = P->pending.len, keep = 0;
		char *m = p ? memmem(p, len, FRAME_MAGIC, 4) : NULL;

		if (!p || len == 0)
			return;
		if (!m) {
			/* all but a tail that may begin the magic */
			for (size_t k = MIN(len, 3); k > 0; k--)
				if (memcmp(p + len - k, FRAME_MAGIC, k) == 0) {
					keep = k;
					break;
				}
			buf_add(P->out, p, len - keep);
			memmove(p, p + len - keep, keep);
			P->pending.len = keep;
			return;
		}
		buf_add(P->out, p, (size_t) (m - p));
		{
			char *end = memchr(m + 4, FRAME_END, len - (size_t) (m + 4 - p));
			size_t used;

			if (!end) {
				memmove(p, m, len - (size_t) (m - p));
				P->pending.len = len - (size_t) (m - p);
				return;
			}
			{
				json_t *f = json_loadb(m + 4, (size_t) (end - m - 4), 0, NULL);
				const char *t = json_string_value(json_object_get(f, "t"));

				bool mine = (uint64_t) json_integer_value(json_object_get(f, "id")) == P->id;

				if (t && streq(t, "done") && mine && !P->done)
					P->done = f;
				else {
					if (t && streq(t, "err-done") && mine)
						P->barrier = true;
					json_decref(f);
				}
			}
			used = (size_t) (end + 1 - p);
			memmove(p, p + used, len - used);
			P->pending.len = len - used;
		}
	}
}

static bool drain(int fd, Buf *into, Parser *P)
{
	char tmp[65536];
	bool eof = false;

	for (;;) {
		ssize_t n = read(fd, tmp, sizeof(tmp));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			eof = n == 0;
			break;
		}
		if (P) {
			size_t cap = P->pending.max;

			P->pending.max = P->frame_max ? P->frame_max : FRAME_MAX;
			buf_add(&P->pending, tmp, (size_t) n);
			P->pending.max = cap;
			parse(P);
		} else
			buf_add(into, tmp, (size_t) n);
	}
	return eof;
}

/* One progress notification with the output of b from *sent on (see the call site). */
static void progress_stream(McpCall *call, uint64_t elapsed_ms, const char *label, const Buf *b,
			    size_t *sent)
{
	size_t n = b->len - *sent, cut;
	json_t *text;
	char *msg;

	if (n == 0)
		return;
	if (n > (64u << 10)) {
		n = 64u << 10;
		/* back to the first byte of a character */
		while (n > 0 && ((unsigned char) b->p[*sent + n] & 0xc0) == 0x80)
			n--;
	}
	cut = n;
	text = json_text(b->p + *sent, cut);
	msg = text ? strdup_printf("%s%s", label, json_string_value(text)) : NULL;
	if (msg)
		mcp_call_progress(call, (double) elapsed_ms, 0, msg);
	free(msg);
	json_decref(text);
	*sent += cut;
}

typedef struct Interrupt {
	Context *c;
	bool cancelled;
} Interrupt;

static void on_cancel(void *userdata)
{
	Interrupt *i = userdata;

	i->cancelled = true;
	if (i->c->pid > 0)
		(void) kill(i->c->pid, SIGINT);
	held_route_cancel(i->c->held); /* a held connect waiting on the socket for this call */
}

/* The run's result after the context's death (the --result-fd JSON), or NULL. */
static json_t *death_result(Context *c)
{
	Buf b = {.max = 1u << 20};
	json_t *r;

	(void) drain(c->res_fd, &b, NULL);
	r = b.p ? json_loadb(b.p, b.len, 0, NULL) : NULL;
	free(b.p);
	return r;
}

int context_execute(Session *s, const char *context_id, const ExecParams *p, McpCall *call,
		    json_t **ret, char *err, size_t errsize)
{
	const Policy *pol = session_policy(s, err, errsize);
	Context *c;
	_cleanup_free_ char *code64 = NULL, *req = NULL;
	Buf out = {}, errb = {};
	Parser P = {.out = &out}, E = {.out = &errb};
	Interrupt intr = {};
	uint64_t start = now_monotonic_ns(), timeout_ms, deadline, grace_until = 0, last_progress = start / 1000000;
	uint64_t kill_grace_ms, barrier_until = 0;
	size_t sent_out = 0, sent_err = 0;
	bool interrupted = false, died = false, restarted = false, full;
	json_t *res, *death = NULL, *notices, *held_notes;
	size_t held_denied;
	int status = 0, r;

	if (!pol)
		return -EINVAL;
	out.max = errb.max = pol->limits.output == LIMIT_UNSET ? (64u << 20) : pol->limits.output;
	/* a frame is small (results, an error); a figure is a few hundred KiB: bound what an
	 * unterminated one can make us hold by the session's output limit */
	P.frame_max = E.frame_max = MIN((size_t) FRAME_MAX, (size_t) out.max + (4u << 20));
	kill_grace_ms = pol->limits.kill_grace_ms;
	timeout_ms = p->timeout_s ? p->timeout_s * 1000
				  : (pol->limits.wall_time_ms == LIMIT_UNSET ? 0 : pol->limits.wall_time_ms);
	if (p->timeout_s && pol->limits.wall_time_ms != LIMIT_UNSET &&
	    p->timeout_s * 1000 > pol->limits.wall_time_ms) {
		snprintf(err, errsize,
			 "timeout %llu s is more than the session's wall-time limit (%llu s); create "
			 "the session with a larger limits.wall_s",
			 (unsigned long long) p->timeout_s,
			 (unsigned long long) (pol->limits.wall_time_ms / 1000));
		return -EINVAL;
	}
	c = context_get(s, p->language, context_id, &full);
	if (!c && full) {
		snprintf(err, errsize,
			 "this session already has %d interpreter contexts, the most it may hold; "
			 "end one with code_reset_context, or run with fresh: true",
			 CONTEXTS_MAX);
		return -EUSERS;
	}
	if (!c)
		return -ENOMEM;
	pthread_mutex_lock(&c->lock);
	if (c->killed) {
		context_kill(c);
		c->killed = false;
	}
	if (c->dead || c->pid <= 0) {
		restarted = c->count > 0;
		if (c->pid > 0)
			context_kill(c);
		r = context_start(s, c, err, errsize);
		if (r < 0) {
			pthread_mutex_unlock(&c->lock);
			return r;
		}
	}
	intr.c = c;
	P.id = E.id = ++c->count;
	code64 = agent_base64_encode(p->code, strlen(p->code));
	req = code64 ? strdup_printf("%llu %s\n", (unsigned long long) P.id, code64) : NULL;
	if (!req) {
		pthread_mutex_unlock(&c->lock);
		return -ENOMEM;
	}
	pthread_mutex_lock(&s->lock);
	s->n_running++;
	pthread_mutex_unlock(&s->lock);
	/* held connects of this run go to this call while it runs (held.c) */
	held_route_set_call(c->held, call);
	mcp_call_on_cancel(call, on_cancel, &intr);
	if (write_all(c->in_fd, req, strlen(req)) < 0)
		died = true;
	deadline = timeout_ms ? start / 1000000 + timeout_ms : UINT64_MAX;

	/* until the done frame on stdout, and the barrier frame on stderr that the driver wrote
	 * just before it (the run relays the two streams through pipes of their own, so stderr
	 * can arrive after stdout's frame); the barrier is awaited at most a second */
	while (!died && (!P.done || (!E.barrier && now_monotonic_ns() / 1000000 < barrier_until))) {
		struct pollfd pf[2] = {{.fd = c->out_fd, .events = POLLIN},
				       {.fd = c->err_fd, .events = POLLIN}};
		uint64_t now;

		(void) poll(pf, 2, 100);
		if (drain(c->out_fd, NULL, &P))
			died = true;
		(void) drain(c->err_fd, NULL, &E);
		now = now_monotonic_ns() / 1000000;
		if (P.done && !barrier_until)
			barrier_until = now + 1000;
		if (!interrupted && (now >= deadline || intr.cancelled)) {
			interrupted = true;
			/* a cancellation sent its SIGINT already (on_cancel): a second one could
			 * interrupt the driver's reply or the next cell */
			if (!intr.cancelled)
				(void) kill(c->pid, SIGINT);
			grace_until = now + kill_grace_ms;
		} else if (interrupted && now >= grace_until) {
			(void) kill(c->pid, SIGKILL);
			died = true;
		}
		if (waitpid(c->pid, &status, WNOHANG) == c->pid) {
			c->pid = -1;
			died = true;
		}
		if (now - last_progress >= HEARTBEAT_MS && out.len == sent_out && errb.len == sent_err) {
			/* a heartbeat while the code is silent: clients that reset their request
			 * timeout on progress keep waiting */
			mcp_call_progress(call, (double) (now - start / 1000000), 0, NULL);
			last_progress = now;
		}
		if (now - last_progress >= PROGRESS_MS &&
		    (out.len > sent_out || errb.len > sent_err)) {
			/* live output for clients that asked for progress: what came since the
			 * last one, up to 64 KiB a stream a tick (the rest on the next tick; the
			 * result has it all), cut at a UTF-8 character boundary */
			progress_stream(call, now - start / 1000000, "stdout: ", &out, &sent_out);
			progress_stream(call, now - start / 1000000, "stderr: ", &errb, &sent_err);
			last_progress = now;
		}
	}
	mcp_call_on_cancel(call, NULL, NULL);
	/* from now on the socket; waits while a request is still asked through this call */
	held_route_set_call(c->held, NULL);
	held_notes = json_array();
	(void) drain(c->err_fd, NULL, &E);
	if (died) {
		if (c->pid > 0) {
			(void) kill(c->pid, SIGKILL);
			(void) waitpid(c->pid, &status, 0);
			c->pid = -1;
		}
		(void) drain(c->out_fd, NULL, &P);
		(void) drain(c->err_fd, NULL, &E);
		death = death_result(c);
		c->held = held_route_free(c->held, held_notes);
		context_close(c);
		c->dead = true;
	} else
		(void) held_route_take_notes(c->held, held_notes);
	held_denied = json_array_size(held_notes);
	if (c->audit_path) {
		record_import_run_log(s, c->audit_path, &c->audit_off, &c->audit_n, c->run_id);
		if (died) {
			(void) unlink(c->audit_path);
			free(c->audit_path);
			c->audit_path = NULL;
		}
	}
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_lock(&s->lock);
	s->n_running--;
	pthread_mutex_unlock(&s->lock);

	res = json_pack("{s:o, s:o, s:b, s:b, s:b, s:I, s:b, s:n, s:n, s:i, s:s, s:s, s:I}",
			"stdout", json_text(out.p, out.len), "stderr", json_text(errb.p, errb.len),
			"stdout_truncated", out.truncated, "stderr_truncated", errb.truncated,
			"truncated", out.truncated || errb.truncated, "duration_ms",
			(json_int_t) ((now_monotonic_ns() - start) / 1000000), "timed_out",
			interrupted && !intr.cancelled, "killed_by", "signal", "denied", 0,
			"context_id", context_id, "language", p->language, "execution_count",
			(json_int_t) P.id);
	free(out.p);
	free(errb.p);
	free(P.pending.p);
	free(E.pending.p);
	json_decref(E.done);
	if (!res) {
		json_decref(P.done);
		json_decref(death);
		json_decref(held_notes);
		return -ENOMEM;
	}
	notices = json_array();
	if (restarted)
		json_array_append_new(notices,
				      json_string("this context had ended; it was started anew and "
						  "its earlier state is gone (the workspace is intact)"));
	if (P.done) {
		json_t *e = json_object_get(P.done, "error");

		json_object_set_new(res, "exit_code",
				    json_integer(json_integer_value(json_object_get(P.done, "exit_code"))));
		json_object_set(res, "results", json_object_get(P.done, "results") ?: json_array());
		json_object_set(res, "error", e ? e : json_null());
		json_decref(P.done);
	} else {
		const char *killed = json_string_value(json_object_get(death, "killed_by"));
		int code = death ? (int) json_integer_value(json_object_get(death, "exit_code"))
				 : (WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));

		json_object_set_new(res, "exit_code", json_integer(code));
		json_object_set_new(res, "results", json_array());
		if (killed)
			json_object_set_new(res, "killed_by", json_string(killed));
		if (death)
			json_object_set(res, "usage", json_object_get(death, "usage"));
		if (intr.cancelled)
			json_object_set_new(res, "killed_by", json_string("cancelled"));
		/* `exit N` in a shell context is an ordinary way to end: no error object */
		if (streq(p->language, "shell") && !killed && !interrupted)
			json_object_set_new(res, "error", json_null());
		else
			json_object_set_new(
				res, "error",
				json_pack("{s:s, s:s, s:s}", "name", "ContextDied", "value",
					  killed ? "the context was stopped by a budget"
						 : "the context ended",
					  "traceback", ""));
		json_array_append_new(notices,
				      json_string("the context ended during this call; the next call "
						  "starts a new one (its state will be empty)"));
	}
	if (interrupted && !intr.cancelled)
		json_object_set_new(res, "exit_code", json_integer(124));
	if (held_denied) {
		json_object_set_new(res, "held_connects_denied", json_integer((json_int_t) held_denied));
		json_array_extend(notices, held_notes);
	}
	json_decref(held_notes);
	json_object_set_new(res, "notices", notices);
	json_decref(death);
	*ret = res;
	return 0;
}
