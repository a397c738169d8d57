/* SPDX-License-Identifier: MIT */
/*
 * One execution in a session (code_execute): the code goes into the session's run/ directory
 * (read-only inside, at /run/sbxtrace), and this same binary runs it as
 *
 *   sbxtrace run --json -q -w WORKSPACE -s limits.wall_time=Ts [-s process.env.set={…}]
 *                SESSION/policy.toml -- INTERPRETER /run/sbxtrace/ID.EXT
 *
 * Why a process and not tracer_run() in ours: tracer_run() forks and starts threads and must
 * be called from a single-threaded process, and the server is not one; a supervisor of its
 * own per execution also means that one run's crash or kill cannot touch another session,
 * and that killing it (cancellation, destroy, the ratchet) is the fail-closed path the
 * engine already guarantees: when S dies, its keeper kills the whole tree. The cost is one
 * exec of a small binary (bench/bench-mcp measures it against `sbxtrace run` itself).
 *
 * Its stdout carries the documented result (docs/json-result.md), which becomes the tool's
 * structured result; its stderr carries only sbxtrace's own errors (the program's output is
 * captured into the result). The child dies with the thread that started it
 * (PR_SET_PDEATHSIG), so a server that dies leaves no sandbox running.
 */
#include "agent/internal.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/language.h"
#include "common/log.h"
#include "common/macros.h"
#include "common/util.h"

#define RESULT_MAX_BYTES (96u << 20) /* the JSON result: output limit plus escaping */
#define ERR_MAX_BYTES	 (64u << 10)
#define HEARTBEAT_MS	 2000 /* progress while waiting, for clients that reset their timeout on it */

extern char **environ;

static void unlink_maybe(const char *path)
{
	if (path)
		(void) unlink(path);
}

typedef struct Spawned {
	pid_t pid;
	int out, err;
} Spawned;

static int spawn(const char *exe, char *const *argv, int stdin_fd, int fd3, Spawned *ret)
{
	int po[2] = {-1, -1}, pe[2] = {-1, -1};
	pid_t ppid = getpid(), pid;

	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
		int e = -errno;

		if (po[0] >= 0)
			close(po[0]), close(po[1]);
		return e;
	}
	pid = fork();
	if (pid < 0) {
		int e = -errno;

		close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
		return e;
	}
	if (pid == 0) {
		/* only async-signal-safe calls from here: we were forked from a threaded process */
		sigset_t none;

		(void) prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != ppid)
			_exit(125);
		sigemptyset(&none);
		(void) sigprocmask(SIG_SETMASK, &none, NULL);
		if (dup2(stdin_fd, 0) < 0 || dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0)
			_exit(125);
		if (fd3 >= 0) {
			/* the run's --approval-fd 3 (held connects) */
			if (fd3 == 3 ? fcntl(3, F_SETFD, 0) < 0 : dup2(fd3, 3) < 0)
				_exit(125);
			(void) syscall(SYS_close_range, 4, ~0U, 0);
		} else
			(void) syscall(SYS_close_range, 3, ~0U, 0);
		execve(exe, argv, environ);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	*ret = (Spawned){.pid = pid, .out = po[0], .err = pe[0]};
	return 0;
}

/* Reads both pipes to their end (bounded; the rest is drained and dropped). */
/* Reads both pipes to their end (bounded; the rest is drained and dropped). While waiting,
 * a heartbeat every HEARTBEAT_MS through call's progress (when the client asked for
 * progress): the output itself comes only at the end, in the result. */
static void collect(Spawned *sp, McpCall *call, char **ret_out, size_t *ret_out_len,
		    char **ret_err, size_t *ret_err_len)
{
	uint64_t start = now_monotonic_ns() / 1000000, last = start;
	struct {
		int fd;
		char *buf;
		size_t len, max;
	} s[2] = {{sp->out, NULL, 0, RESULT_MAX_BYTES}, {sp->err, NULL, 0, ERR_MAX_BYTES}};
	size_t cap[2] = {0, 0};
	bool open_[2] = {true, true};

	while (open_[0] || open_[1]) {
		struct pollfd pf[2];
		nfds_t n = 0;
		int map[2];

		for (int i = 0; i < 2; i++)
			if (open_[i]) {
				pf[n] = (struct pollfd){.fd = s[i].fd, .events = POLLIN};
				map[n++] = i;
			}
		if (poll(pf, n, HEARTBEAT_MS) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		{
			uint64_t now = now_monotonic_ns() / 1000000;

			if (call && now - last >= HEARTBEAT_MS) {
				mcp_call_progress(call, (double) (now - start), 0, NULL);
				last = now;
			}
		}
		for (nfds_t k = 0; k < n; k++) {
			int i = map[k];
			char tmp[65536];
			ssize_t got;

			if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			got = read(s[i].fd, tmp, sizeof(tmp));
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				open_[i] = false;
				continue;
			}
			if (s[i].len + (size_t) got > s[i].max)
				continue; /* drained, dropped */
			if (s[i].len + (size_t) got + 1 > cap[i]) {
				size_t nc = MAX(cap[i] * 2, s[i].len + (size_t) got + 1);
				char *nb = realloc(s[i].buf, nc);

				if (!nb)
					continue;
				s[i].buf = nb;
				cap[i] = nc;
			}
			memcpy(s[i].buf + s[i].len, tmp, got);
			s[i].len += got;
			s[i].buf[s[i].len] = 0;
		}
	}
	*ret_out = s[0].buf;
	*ret_out_len = s[0].len;
	*ret_err = s[1].buf;
	*ret_err_len = s[1].len;
}

typedef struct CancelCtx {
	Session *s;
	Running *run;
	HeldRoute *held;
} CancelCtx;

static void cancel_run(void *userdata)
{
	CancelCtx *c = userdata;

	pthread_mutex_lock(&c->s->lock);
	if (!c->run->killed) {
		c->run->killed = true;
		c->run->why = "the client cancelled the call";
		(void) kill(c->run->pid, SIGKILL);
	}
	pthread_mutex_unlock(&c->s->lock);
	held_route_cancel(c->held); /* a held connect waiting on the socket for this call */
}

static void running_remove_locked(Session *s, Running *r)
{
	for (Running **p = &s->running; *p; p = &(*p)->next)
		if (*p == r) {
			*p = r->next;
			s->n_running--;
			break;
		}
}

/* The text block models read: the status, then both streams (bounded). */
static char *render(const json_t *res)
{
	const char *out = json_string_value(json_object_get(res, "stdout"));
	const char *err = json_string_value(json_object_get(res, "stderr"));
	const char *killed = json_string_value(json_object_get(res, "killed_by"));
	const json_t *notices = json_object_get(res, "notices");
	char *buf = NULL;
	size_t size = 0, i;
	const json_t *n;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		return NULL;
	fprintf(f, "exit_code %lld in %lld ms", json_integer_value(json_object_get(res, "exit_code")),
		json_integer_value(json_object_get(res, "duration_ms")));
	if (json_is_true(json_object_get(res, "timed_out")))
		fputs(" (timed out)", f);
	if (killed)
		fprintf(f, " (stopped: %s)", killed);
	fputc('\n', f);
	json_array_foreach(notices, i, n)
		fprintf(f, "%s\n", json_string_value(n));
	if (out && *out)
		fprintf(f, "--- stdout ---\n%.16384s%s\n", out, strlen(out) > 16384 ? "\n[…]" : "");
	if (err && *err)
		fprintf(f, "--- stderr ---\n%.16384s%s\n", err, strlen(err) > 16384 ? "\n[…]" : "");
	fclose(f);
	return buf;
}

int exec_run(Session *s, const ExecParams *p, McpCall *call, json_t **ret, char *err,
	     size_t errsize)
{
	const Language *lang = language_find(p->language);
	_cleanup_free_ char *code_path = NULL, *code_vpath = NULL;
	_cleanup_free_ char *out = NULL, *serr = NULL;
	_cleanup_close_ int in_fd = -1;
	const char *interp = NULL;
	_cleanup_(strv_freep) char **argv = NULL;
	_cleanup_free_ char *audit_path = NULL;
	char exec_id[40];
	uint8_t rnd[4];
	size_t out_len = 0, err_len = 0;
	Running run = {};
	CancelCtx cc = {.s = s, .run = &run};
	Spawned sp = {.pid = -1, .out = -1, .err = -1};
	HeldRoute *held = NULL;
	int held_child = -1;
	json_t *res, *notices, *held_notes;
	json_error_t je;
	uint64_t start = now_monotonic_ns(), wall_s;
	int status = 0, r;
	const Policy *pol;

	if (!lang && !p->argv) {
		snprintf(err, errsize, "language '%.32s' is not one of " LANGUAGE_NAMES,
			 p->language);
		return -EINVAL;
	}
	if (p->argv)
		interp = p->argv[0];
	else
		interp = language_interp(lang);
	if (!interp) {
		snprintf(err, errsize, "no interpreter for %s on this host (looked for %s)",
			 lang->name, lang->interp[0]);
		return -EINVAL;
	}
	pol = session_policy(s, err, errsize);
	if (!pol)
		return -EINVAL;
	wall_s = pol->limits.wall_time_ms == LIMIT_UNSET ? 0 : pol->limits.wall_time_ms / 1000;
	if (p->timeout_s) {
		if (wall_s && p->timeout_s > wall_s) {
			snprintf(err, errsize,
				 "timeout %llu s is more than the session's wall-time limit (%llu s); "
				 "create the session with a larger limits.wall_s",
				 (unsigned long long) p->timeout_s, (unsigned long long) wall_s);
			return -EINVAL;
		}
		wall_s = p->timeout_s;
	}

	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return -EIO;
	pthread_mutex_lock(&s->lock);
	snprintf(exec_id, sizeof(exec_id), "%llu-%02x%02x%02x%02x",
		 (unsigned long long) ++s->executions, rnd[0], rnd[1], rnd[2], rnd[3]);
	pthread_mutex_unlock(&s->lock);
	if (!p->argv) {
		code_path = strdup_printf("%s/run/%s.%s", s->dir, exec_id, lang->ext);
		code_vpath = strdup_printf("/run/sbxtrace/%s.%s", exec_id, lang->ext);
		if (!code_path || !code_vpath)
			return -ENOMEM;
	}
	/* without a route (out of memory), a held connect is denied at once: fail closed */
	(void) held_route_new(s, &held, &held_child);
	cc.held = held;
	held_route_set_call(held, call);
	if (s->agent->config->audit_syscalls)
		audit_path = record_run_log_path(s, exec_id);
	{
		char *code_cmd[] = {(char *) interp, code_vpath, NULL};
		RunArgs ra = {
			.approval_fd = held_child >= 0 ? 3 : -1,
			.audit_path = audit_path,
			.wall_s = wall_s,
			.env = p->env,
			.cwd = p->cwd,
			.overrides = p->overrides,
			.command = p->argv ? p->argv : code_cmd,
		};

		r = run_argv(s, &ra, &argv, err, errsize);
		if (r < 0)
			goto held_fail;
	}
	if (code_path) {
		_cleanup_close_ int fd =
			open(code_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);

		if (fd < 0 || write_all(fd, p->code, strlen(p->code)) < 0) {
			r = fd < 0 ? -errno : -EIO;
			if (fd >= 0)
				unlink_maybe(code_path);
			goto held_fail;
		}
	}
	in_fd = memfd_create("sbxtrace-stdin", MFD_CLOEXEC);
	if (in_fd < 0 || (p->stdin_len && write_all(in_fd, p->stdin_data, p->stdin_len) < 0) ||
	    lseek(in_fd, 0, SEEK_SET) < 0) {
		unlink_maybe(code_path);
		r = -EIO;
		goto held_fail;
	}

	/* the session lock orders the spawn against a ratchet drop or a destroy: either it
	 * sees this run in the list and kills it, or this run starts with the new policy */
	pthread_mutex_lock(&s->lock);
	if (s->destroyed) {
		pthread_mutex_unlock(&s->lock);
		unlink_maybe(code_path);
		snprintf(err, errsize, "the session was destroyed");
		r = -EINVAL;
		goto held_fail;
	}
	r = spawn(s->agent->self_exe, argv, in_fd, held_child, &sp);
	if (r >= 0) {
		run.pid = sp.pid;
		run.next = s->running;
		s->running = &run;
		s->n_running++;
	}
	pthread_mutex_unlock(&s->lock);
	if (r < 0) {
		unlink_maybe(code_path);
		snprintf(err, errsize, "cannot start the sandbox: %s", strerror(-r));
		goto held_fail;
	}
	if (held_child >= 0)
		close(held_child);
	mcp_call_on_cancel(call, cancel_run, &cc);
	collect(&sp, call, &out, &out_len, &serr, &err_len);
	close(sp.out);
	close(sp.err);
	while (waitpid(sp.pid, &status, 0) < 0 && errno == EINTR)
		;
	mcp_call_on_cancel(call, NULL, NULL);
	held_notes = json_array();
	held = held_route_free(held, held_notes); /* the run ended: what it asked is decided */
	pthread_mutex_lock(&s->lock);
	running_remove_locked(s, &run);
	pthread_mutex_unlock(&s->lock);
	unlink_maybe(code_path);
	if (audit_path) {
		uint64_t off = 0, n = 0;

		record_import_run_log(s, audit_path, &off, &n, exec_id);
		(void) unlink(audit_path);
	}

	/* sbxtrace's own messages name the session's host paths: the agent sees <session> */
	if (serr) {
		size_t dl = strlen(s->dir);

		for (char *m = strstr(serr, s->dir); m; m = strstr(m, s->dir)) {
			memcpy(m, "<session>", 9);
			memmove(m + 9, m + dl, strlen(m + dl) + 1);
		}
	}
	res = out ? json_loadb(out, out_len, 0, &je) : NULL;
	if (!json_is_object(res)) {
		/* no result: sbxtrace itself failed (a sandbox error) or was killed */
		json_decref(res);
		res = json_pack("{s:s, s:s, s:b, s:b, s:b, s:i, s:n, s:I, s:b, s:n, s:i, s:n}",
				"stdout", "", "stderr", serr ? serr : "", "stdout_truncated", 0,
				"stderr_truncated", 0, "truncated", 0, "exit_code",
				WIFEXITED(status) ? WEXITSTATUS(status) : 125, "signal",
				"duration_ms", (json_int_t) ((now_monotonic_ns() - start) / 1000000),
				"timed_out", 0, "killed_by", "denied", 0, "usage");
		if (!res)
			return -ENOMEM;
		if (run.killed) {
			json_object_set_new(res, "killed_by", json_string("cancelled"));
			json_object_set_new(res, "exit_code", json_integer(137));
			json_object_set_new(res, "stderr", json_string(run.why));
		} else
			json_object_set_new(res, "sandbox_error",
					    json_string(serr && *serr ? serr : "sbxtrace run failed"));
	} else if (serr && *serr)
		json_object_set_new(res, "sandbox_messages", json_string(serr));

	notices = json_array();
	pthread_mutex_lock(&s->lock);
	{
		const json_t *net = json_object_get(res, "network");
		const char *lvl = json_string_value(json_object_get(net, "level"));

		if (lvl)
			for (int l = SENSITIVITY_INTERNAL; l < _SENSITIVITY_MAX; l++)
				if (streq(lvl, sensitivity_to_string(l)) && (Sensitivity) l >= s->level)
					(void) session_raise_level_locked(s, l, "a file of that level was opened");
		if (s->notice) {
			json_array_append_new(notices, json_string(s->notice));
			free(s->notice);
			s->notice = NULL;
		}
		json_object_set_new(res, "network_mode", json_string(net_mode_to_string(s->mode)));
		if (s->level)
			json_object_set_new(res, "level", json_string(sensitivity_to_string(s->level)));
		s->last_active_ms = now_realtime_ns() / 1000000;
		(void) session_save_locked(s);
	}
	pthread_mutex_unlock(&s->lock);
	if (run.killed && !json_object_get(res, "sandbox_error"))
		json_array_append_new(notices, json_string(run.why));
	if (json_array_size(held_notes)) {
		json_object_set_new(res, "held_connects_denied",
				    json_integer((json_int_t) json_array_size(held_notes)));
		json_array_extend(notices, held_notes);
	}
	json_decref(held_notes);
	json_object_set_new(res, "notices", notices);
	json_object_set_new(res, "session_id", json_string(s->id));
	json_object_set_new(res, "execution_id", json_string(exec_id));
	json_object_set_new(res, "language", json_string(lang ? lang->name : "command"));
	json_object_del(res, "policy"); /* the session's file path means nothing to the agent */
	json_object_set_new(res, "policy", json_string(s->policy_name));
	{
		_cleanup_free_ char *text = render(res);

		json_object_set_new(res, "_text", json_string(text ? text : ""));
	}
	*ret = res;
	return 0;

held_fail:
	if (held_child >= 0)
		close(held_child);
	held_route_free(held, NULL);
	return r;
}
