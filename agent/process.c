/* SPDX-License-Identifier: MIT */
/*
 * Background processes of a session (code_run_command with background, code_process):
 * a command that runs while the agent goes on — a server, a long build. Each is one
 * `sbxtrace run -q --result-fd 3` of the session's policy, started by the spawner thread
 * (context.c: PR_SET_PDEATHSIG follows the thread that forked), with its stdin, stdout and
 * stderr on pipes of the server. A reader thread per process keeps its output (up to the
 * session's output limit; more is counted and dropped, never blocks the program) and, at
 * its end, the run's result. A running process counts as activity for the idle timeout and
 * dies with its session.
 *
 * Held connects (network.unlisted = "ask"): the run gets --approval-fd 4 (held.c). No
 * tools/call is in flight on a background process — the one that started it has returned —
 * so its requests always go to the approval socket (`sbxtrace approve`), or are denied at
 * once without one; a timeout denies. The denials show in code_process's answers.
 */
#include "agent/internal.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/util.h"

#define PROCESSES_MAX 32 /* per session, running or not yet collected */
#define NOTICES_MAX   64 /* held-connect denials shown by code_process; more are counted */

typedef struct Stream {
	char *p;
	size_t len, cap, max;
	uint64_t dropped;
} Stream;

struct Process {
	struct Process *next;
	Session *s;
	char id[16];
	char *command; /* for list */
	pid_t pid;
	int in_fd, out_fd, err_fd, res_fd;
	pthread_mutex_t lock; /* guards what follows */
	pthread_cond_t changed;
	Stream out, err;
	bool exited;
	int status;
	json_t *result; /* the run's --json result, NULL if none */
	uint64_t started_ms;
	char *audit_path; /* [server] audit_syscalls: the run's log, merged at its end */
	char run_id[48];
	/* held connects (held.c): no call is ever in flight on a background process, so they
	 * go to the approval socket; NULL when the session does not ask. Freed by the reader
	 * at the run's end, under lock. */
	HeldRoute *held;
	json_t *notices; /* the denials so far, at most NOTICES_MAX */
	uint64_t held_denied;
};

static void stream_add(Stream *st, const char *data, size_t n)
{
	if (st->len + n > st->max) {
		size_t room = st->max > st->len ? st->max - st->len : 0;

		st->dropped += n - room;
		n = room;
	}
	if (!n)
		return;
	if (st->len + n > st->cap) {
		size_t nc = MAX(st->cap * 2, st->len + n);
		char *np = realloc(st->p, nc);

		if (!np) {
			st->dropped += n;
			return;
		}
		st->p = np;
		st->cap = nc;
	}
	memcpy(st->p + st->len, data, n);
	st->len += n;
}

/* Adds notes (held-connect denials) to pr->notices, the first NOTICES_MAX of them; caller
 * holds pr->lock. */
static void add_notes_locked(Process *pr, json_t *notes)
{
	size_t i;
	json_t *n;

	json_array_foreach(notes, i, n) {
		pr->held_denied++;
		if (pr->notices && json_array_size(pr->notices) < NOTICES_MAX)
			json_array_append(pr->notices, n);
	}
}

/* The run ended: frees its route (which waits for a request being decided), outside pr->lock
 * — that thread takes s->lock to write the audit log, and s->lock comes before pr->lock */
static void end_held(Process *pr)
{
	json_t *notes = json_array();
	HeldRoute *h;

	pthread_mutex_lock(&pr->lock);
	h = TAKE_PTR(pr->held);
	pthread_mutex_unlock(&pr->lock);
	held_route_free(h, notes);
	pthread_mutex_lock(&pr->lock);
	add_notes_locked(pr, notes);
	pthread_mutex_unlock(&pr->lock);
	json_decref(notes);
}

static void *reader(void *userdata)
{
	Process *pr = userdata;
	Session *s = pr->s;
	bool open_[2] = {true, true};
	char buf[65536];
	int status = 0;
	json_t *result = NULL;

	while (open_[0] || open_[1]) {
		struct pollfd pf[2] = {{.fd = open_[0] ? pr->out_fd : -1, .events = POLLIN},
				       {.fd = open_[1] ? pr->err_fd : -1, .events = POLLIN}};

		if (poll(pf, 2, -1) < 0)
			continue;
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			if (!pf[i].revents)
				continue;
			n = read(i ? pr->err_fd : pr->out_fd, buf, sizeof(buf));
			if (n <= 0) {
				if (n == 0 || errno != EINTR)
					open_[i] = false;
				continue;
			}
			pthread_mutex_lock(&pr->lock);
			stream_add(i ? &pr->err : &pr->out, buf, (size_t) n);
			pthread_cond_broadcast(&pr->changed);
			pthread_mutex_unlock(&pr->lock);
		}
	}
	while (waitpid(pr->pid, &status, 0) < 0 && errno == EINTR)
		;
	end_held(pr);
	if (pr->audit_path) {
		uint64_t off = 0, n = 0;

		record_import_run_log(s, pr->audit_path, &off, &n, pr->run_id);
		(void) unlink(pr->audit_path);
	}
	{
		Stream r = {.max = 1u << 20};
		ssize_t n;

		(void) fcntl(pr->res_fd, F_SETFL, O_NONBLOCK);
		while ((n = read(pr->res_fd, buf, sizeof(buf))) > 0)
			stream_add(&r, buf, (size_t) n);
		result = r.p ? json_loadb(r.p, r.len, 0, NULL) : NULL;
		free(r.p);
	}
	pthread_mutex_lock(&pr->lock);
	pr->exited = true;
	pr->status = status;
	pr->result = result;
	pthread_cond_broadcast(&pr->changed);
	pthread_mutex_unlock(&pr->lock);
	pthread_mutex_lock(&s->lock);
	s->n_running--;
	pthread_mutex_unlock(&s->lock);
	session_put(s); /* the reader's reference: last, it may free the session */
	return NULL;
}

static void process_free(Process *pr)
{
	if (pr->in_fd >= 0)
		close(pr->in_fd);
	close(pr->out_fd);
	close(pr->err_fd);
	close(pr->res_fd);
	pr->held = held_route_free(pr->held, NULL);
	json_decref(pr->notices);
	json_decref(pr->result);
	free(pr->out.p);
	free(pr->err.p);
	free(pr->command);
	free(pr->audit_path);
	pthread_mutex_destroy(&pr->lock);
	pthread_cond_destroy(&pr->changed);
	free(pr);
}

void process_free_all(Session *s)
{
	while (s->processes) {
		Process *pr = s->processes;

		s->processes = pr->next;
		process_free(pr);
	}
}

void process_kill_all_locked(Session *s)
{
	for (Process *pr = s->processes; pr; pr = pr->next)
		(void) kill(pr->pid, SIGKILL);
}

static Process *process_find_locked(Session *s, const char *id)
{
	for (Process *pr = s->processes; pr; pr = pr->next)
		if (id && streq(pr->id, id))
			return pr;
	return NULL;
}

int process_start(Session *s, const ExecParams *p, json_t **ret, char *err, size_t errsize)
{
	const Policy *pol = session_policy(s, err, errsize);
	int in[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1}, res[2] = {-1, -1};
	char **argv = NULL, *cmd = NULL, *audit_path = NULL, run_id[48] = "";
	size_t n = 0;
	Process *pr;
	pthread_t th;
	pthread_attr_t attr;
	HeldRoute *held = NULL;
	int held_run = -1;
	pid_t pid;
	int r;

	if (!pol)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	for (Process *x = s->processes; x; x = x->next)
		n++;
	pthread_mutex_unlock(&s->lock);
	if (n >= PROCESSES_MAX) {
		snprintf(err, errsize, "this session has %d background processes; kill some "
				       "(code_process action kill) first",
			 PROCESSES_MAX);
		return -EPERM;
	}
	if (s->agent->config->audit_syscalls) {
		snprintf(run_id, sizeof(run_id), "process-%llu",
			 (unsigned long long) (now_realtime_ns() / 1000));
		audit_path = record_run_log_path(s, run_id);
	}
	/* without a route (out of memory), a held connect is denied at once: fail closed */
	(void) held_route_new(s, &held, &held_run);
	{
		RunArgs ra = {
			.result_fd = 3,
			.approval_fd = held_run >= 0 ? 4 : -1,
			.audit_path = audit_path,
			.wall_s = p->timeout_s,
			.env = p->env,
			.cwd = p->cwd,
			.command = p->argv,
		};

		r = run_argv(s, &ra, &argv, err, errsize);
		if (r < 0) {
			free(audit_path);
			goto fail_held;
		}
	}
	{
		char *buf = NULL;
		size_t size = 0;
		FILE *f = open_memstream(&buf, &size);

		for (size_t i = 0; f && p->argv[i]; i++)
			fprintf(f, "%s%s", i ? " " : "", p->argv[i]);
		if (f)
			fclose(f);
		cmd = buf;
	}
	if (!cmd) {
		strv_free(argv);
		free(audit_path);
		r = -ENOMEM;
		goto fail_held;
	}

	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0 ||
	    pipe2(res, O_CLOEXEC) < 0) {
		int e = -errno;

		for (int i = 0; i < 2; i++) {
			int *v[] = {in, out, er, res};

			for (int k = 0; k < 4; k++)
				if (v[k][i] >= 0)
					close(v[k][i]);
		}
		strv_free(argv);
		free(cmd);
		free(audit_path);
		r = e;
		goto fail_held;
	}
	pr = calloc(1, sizeof(*pr));
	if (pr)
		pr->notices = json_array();
	if (!pr || !pr->notices) {
		free(pr);
		strv_free(argv);
		free(cmd);
		free(audit_path);
		close(in[0]), close(in[1]), close(out[0]), close(out[1]);
		close(er[0]), close(er[1]), close(res[0]), close(res[1]);
		r = -ENOMEM;
		goto fail_held;
	}
	pthread_mutex_lock(&s->lock);
	if (s->destroyed) {
		pthread_mutex_unlock(&s->lock);
		snprintf(err, errsize, "the session was destroyed");
		pid = -EINVAL;
	} else {
		/* 3: the run's result; 4: its --approval-fd, when it asks */
		int fds[5] = {in[0], out[1], er[1], res[1], held_run};

		pid = agent_spawn(s->agent->self_exe, argv, fds, held_run >= 0 ? 5 : 4);
		if (pid > 0) {
			snprintf(pr->id, sizeof(pr->id), "p%llu", (unsigned long long) ++s->processes_started);
			pr->next = s->processes;
			s->processes = pr;
			s->n_running++;
			s->refs++; /* the reader's */
		}
		pthread_mutex_unlock(&s->lock);
	}
	strv_free(argv);
	close(in[0]);
	close(out[1]);
	close(er[1]);
	close(res[1]);
	if (held_run >= 0)
		close(held_run);
	if (pid < 0) {
		close(in[1]), close(out[0]), close(er[0]), close(res[0]);
		free(cmd);
		json_decref(pr->notices);
		free(pr);
		free(audit_path);
		held_route_free(held, NULL);
		if (pid != -EINVAL)
			snprintf(err, errsize, "cannot start the process: %s", strerror((int) -pid));
		return (int) pid;
	}
	pr->s = s;
	pr->held = held;
	pr->pid = pid;
	pr->command = cmd;
	pr->audit_path = audit_path;
	memcpy(pr->run_id, run_id, sizeof(run_id));
	pr->in_fd = in[1];
	pr->out_fd = out[0];
	pr->err_fd = er[0];
	pr->res_fd = res[0];
	pr->out.max = pr->err.max = pol->limits.output == LIMIT_UNSET ? (64u << 20) : pol->limits.output;
	pr->started_ms = now_realtime_ns() / 1000000;
	pthread_mutex_init(&pr->lock, NULL);
	pthread_cond_init(&pr->changed, NULL);
	if (p->stdin_len)
		(void) write_all(pr->in_fd, p->stdin_data, p->stdin_len);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, reader, pr) != 0) {
		/* no reader: kill it, and account as the reader would have */
		(void) kill(pid, SIGKILL);
		(void) waitpid(pid, NULL, 0);
		pthread_mutex_lock(&s->lock);
		pr->exited = true;
		s->n_running--;
		s->refs--;
		pthread_mutex_unlock(&s->lock);
	}
	pthread_attr_destroy(&attr);
	*ret = json_pack("{s:s, s:i, s:s}", "process_id", pr->id, "pid", (int) pid, "command", cmd);
	return *ret ? 0 : -ENOMEM;

fail_held:
	if (held_run >= 0)
		close(held_run);
	held_route_free(held, NULL);
	return r;
}

static json_t *slice(const Stream *st, uint64_t since)
{
	/* offsets count every byte the stream produced, dropped ones included */
	size_t from = since < st->len ? (size_t) since : st->len;

	return json_stringn(st->p ? st->p + from : "", st->len - from);
}

/* {process_id, command, running, exit_code, …} (caller holds pr->lock). */
static json_t *describe_locked(Process *pr, uint64_t since_out, uint64_t since_err, bool with_output)
{
	json_t *o = json_pack("{s:s, s:s, s:b, s:I}", "process_id", pr->id, "command", pr->command,
			      "running", !pr->exited, "started_ms", (json_int_t) pr->started_ms);

	if (!o)
		return NULL;
	if (pr->exited) {
		const json_t *r = pr->result;
		int code = r ? (int) json_integer_value(json_object_get(r, "exit_code"))
			     : (WIFEXITED(pr->status) ? WEXITSTATUS(pr->status) : 128 + WTERMSIG(pr->status));

		json_object_set_new(o, "exit_code", json_integer(code));
		if (r) {
			json_object_set(o, "timed_out", json_object_get(r, "timed_out"));
			json_object_set(o, "killed_by", json_object_get(r, "killed_by"));
			json_object_set(o, "duration_ms", json_object_get(r, "duration_ms"));
		}
	} else
		json_object_set_new(o, "exit_code", json_null());
	{
		json_t *notes = json_array();

		(void) held_route_take_notes(pr->held, notes);
		add_notes_locked(pr, notes);
		json_decref(notes);
	}
	if (pr->held_denied) {
		json_object_set_new(o, "held_connects_denied", json_integer((json_int_t) pr->held_denied));
		json_object_set_new(o, "notices", json_deep_copy(pr->notices));
	}
	if (with_output) {
		json_t *so = slice(&pr->out, since_out), *se = slice(&pr->err, since_err);

		/* not UTF-8: base64 would be exact; a replacement keeps it readable */
		if (!so)
			so = json_string("(output is not UTF-8)");
		if (!se)
			se = json_string("(output is not UTF-8)");
		json_object_set_new(o, "stdout", so);
		json_object_set_new(o, "stderr", se);
		json_object_set_new(o, "next_stdout", json_integer((json_int_t) pr->out.len));
		json_object_set_new(o, "next_stderr", json_integer((json_int_t) pr->err.len));
		json_object_set_new(o, "dropped_bytes", json_integer((json_int_t) (pr->out.dropped + pr->err.dropped)));
	}
	return o;
}

static int signal_from_name(const char *name)
{
	static const struct {
		const char *n;
		int s;
	} sigs[] = {{"TERM", SIGTERM}, {"KILL", SIGKILL}, {"INT", SIGINT}, {"HUP", SIGHUP},
		    {"QUIT", SIGQUIT}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}};

	if (!name)
		return SIGTERM;
	if (strncmp(name, "SIG", 3) == 0)
		name += 3;
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		if (streq(sigs[i].n, name))
			return sigs[i].s;
	return -EINVAL;
}

int process_action(Session *s, json_t *args, json_t **ret, char *err, size_t errsize)
{
	const char *action = json_string_value(json_object_get(args, "action"));
	const char *id = json_string_value(json_object_get(args, "process_id"));
	uint64_t since_out = json_integer_value(json_object_get(args, "since_stdout"));
	uint64_t since_err = json_integer_value(json_object_get(args, "since_stderr"));
	Process *pr;
	json_t *o;

	if (streq(action, "list")) {
		json_t *list = json_array();

		pthread_mutex_lock(&s->lock);
		for (pr = s->processes; pr; pr = pr->next) {
			pthread_mutex_lock(&pr->lock);
			json_array_append_new(list, describe_locked(pr, 0, 0, false));
			pthread_mutex_unlock(&pr->lock);
		}
		pthread_mutex_unlock(&s->lock);
		*ret = json_pack("{s:o}", "processes", list);
		return *ret ? 0 : -ENOMEM;
	}
	pthread_mutex_lock(&s->lock);
	pr = process_find_locked(s, id);
	pthread_mutex_unlock(&s->lock);
	/* processes are freed only with the session, which our caller holds a reference on */
	if (!pr) {
		snprintf(err, errsize, "no process '%.32s' in this session (code_process action list)",
			 id ? id : "");
		return -ENOENT;
	}
	if (streq(action, "kill")) {
		int sig = signal_from_name(json_string_value(json_object_get(args, "signal")));

		if (sig < 0) {
			snprintf(err, errsize, "signal must be TERM, KILL, INT, HUP, QUIT, USR1 or USR2");
			return -EINVAL;
		}
		/* to sbxtrace run: it forwards TERM, INT, HUP… to the command's process group;
		 * KILL ends the run, and its keeper kills the whole tree */
		pthread_mutex_lock(&pr->lock);
		if (!pr->exited)
			(void) kill(pr->pid, sig);
		pthread_mutex_unlock(&pr->lock);
	} else if (streq(action, "write_stdin")) {
		const char *data = json_string_value(json_object_get(args, "data"));
		bool eof = json_is_true(json_object_get(args, "eof"));
		int r = 0;

		pthread_mutex_lock(&pr->lock);
		if (pr->in_fd < 0)
			r = -EPIPE;
		else if (data)
			r = write_all(pr->in_fd, data, strlen(data));
		if (eof && pr->in_fd >= 0) {
			close(pr->in_fd);
			pr->in_fd = -1;
		}
		pthread_mutex_unlock(&pr->lock);
		if (r < 0) {
			snprintf(err, errsize, "the process's stdin is closed");
			return -EPIPE;
		}
	} else if (streq(action, "wait")) {
		uint64_t t = json_integer_value(json_object_get(args, "timeout"));
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (time_t) (t ? t : 30);
		pthread_mutex_lock(&pr->lock);
		while (!pr->exited)
			if (pthread_cond_timedwait(&pr->changed, &pr->lock, &ts) != 0)
				break;
		pthread_mutex_unlock(&pr->lock);
	} else if (!streq(action, "output")) {
		snprintf(err, errsize, "action must be list, output, wait, kill or write_stdin");
		return -EINVAL;
	}
	pthread_mutex_lock(&pr->lock);
	o = describe_locked(pr, since_out, since_err, true);
	pthread_mutex_unlock(&pr->lock);
	*ret = o;
	return o ? 0 : -ENOMEM;
}
