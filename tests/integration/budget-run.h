/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Shared by the budget tests: write a policy (the host read-only at /, a scratch directory
 * read-write at its own path), run `sbxtrace run -s limits.… POLICY -- sbx-hog …`, collect
 * stdout, stderr and the exit code, and while it runs count the tasks below the keeper from
 * outside (the test's own view, not the supervisor's).
 */

#include <dirent.h>
#include <libgen.h>
#include <poll.h>
#include <sys/stat.h>

#include "tests/helpers/sbx-test.h"

typedef struct BudgetRun {
	int code;
	char out[65536], err[8192];
	size_t out_len;
	long max_tasks; /* most tasks seen below the keeper at once */
} BudgetRun;

static char budget_dir[512], budget_policy[600];

static inline const char *budget_setup(void)
{
	char *d = sbx_tmpdir();
	FILE *f;

	if (!d)
		return NULL;
	snprintf(budget_dir, sizeof(budget_dir), "%s", d);
	snprintf(budget_policy, sizeof(budget_policy), "%s.toml", budget_dir);
	f = fopen(budget_policy, "we");
	if (!f)
		return NULL;
	fprintf(f,
		"[process]\nenv = { keep = [\"*\"] }\ncwd = \"%s\"\n\n"
		"[[mount]]\npath = \"/\"\nmode = \"ro\"\n\n"
		"[[mount]]\npath = \"%s\"\nmode = \"rw\"\n\n"
		"[[mount]]\npath = \"/scratch\"\nmode = \"tmp\"\n",
		budget_dir, budget_dir);
	fclose(f);
	return budget_dir;
}

/* Allocated KiB below dir (du -sk), -1 if unknown */
static inline long budget_du_kib(const char *dir)
{
	char du[700];
	long kib = -1;
	FILE *f;

	snprintf(du, sizeof(du), "du -sk '%s'", dir);
	f = popen(du, "r");
	if (f) {
		if (fscanf(f, "%ld", &kib) != 1)
			kib = -1;
		pclose(f);
	}
	return kib;
}

/* budget_setup(), or with kernel: a policy of the runtime mounts, the hog's directory and
 * the scratch directory, with kernel_view = true (the budget policy mounts / and so gets the
 * emulated view). */
static inline bool budget_setup_view(bool kernel)
{
	char hogdir[512];
	FILE *f;

	if (!budget_setup())
		return false;
	if (!kernel)
		return true;
	snprintf(hogdir, sizeof(hogdir), "%s", sbx_env("SBX_HOG"));
	f = fopen(budget_policy, "we");
	if (!f)
		return false;
	fprintf(f,
		"[process]\nenv = { keep = [\"*\"] }\ncwd = \"%s\"\n\n"
		"[tracer]\nkernel_view = true\n\n"
		"[[mount]]\npath = \"/usr\"\nmode = \"ro\"\n\n"
		"[[mount]]\npath = \"/bin\"\nmode = \"ro\"\n\n"
		"[[mount]]\npath = \"/lib\"\nmode = \"ro\"\n\n"
		"[[mount]]\npath = \"/lib64\"\nmode = \"ro\"\noptional = true\n\n"
		"[[mount]]\npath = \"%s\"\nmode = \"ro\"\n\n"
		"[[mount]]\npath = \"%s\"\nmode = \"rw\"\n",
		budget_dir, dirname(hogdir), budget_dir);
	fclose(f);
	return true;
}

static inline void budget_cleanup(void)
{
	char cmd[1200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", budget_dir, budget_policy);
	(void) !system(cmd);
}

/*
 * A consistent count needs a still tree: each process is stopped (SIGSTOP) before its
 * children are read, and a process with a signal pending cannot finish a fork (the kernel
 * restarts it), so nothing below a stopped process appears or disappears during the walk.
 * Everything stopped is continued afterwards.
 */
typedef struct Stopped {
	pid_t v[4096];
	long tasks[4096];
	size_t n;
} Stopped;

static inline char proc_state(pid_t pid)
{
	char path[64], line[512], *p;
	FILE *f;
	char st = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fgets(line, sizeof(line), f) && (p = strrchr(line, ')')) && p[1] == ' ')
		st = p[2];
	fclose(f);
	return st;
}

static inline long count_tasks_below(pid_t pid, int depth, Stopped *st)
{
	char path[512], buf[64];
	long n = 0;
	DIR *d;
	struct dirent *de;

	if (depth > 200)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/children", (int) pid, de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fscanf(f, "%63s", buf) == 1) {
			pid_t c = (pid_t) atol(buf);
			char tp[64], line[512], *p;
			DIR *td;
			FILE *sf;
			bool zombie;

			if (kill(c, SIGSTOP) < 0)
				continue; /* gone since its parent listed it */
			if (st->n < sizeof(st->v) / sizeof(st->v[0])) {
				st->tasks[st->n] = 0;
				st->v[st->n++] = c;
			}
			/* A zombie is not counted: the keeper (not stopped) may reap it during the
			 * walk, and another process fork in its place. Every process counted is
			 * then alive and stopped at the end of the walk, all at once. */
			snprintf(tp, sizeof(tp), "/proc/%d/stat", (int) c);
			sf = fopen(tp, "re");
			zombie = !sf || !fgets(line, sizeof(line), sf) ||
				 !(p = strrchr(line, ')')) || p[2] == 'Z' || p[2] == 'X';
			if (sf)
				fclose(sf);
			snprintf(tp, sizeof(tp), "/proc/%d/task", (int) c);
			td = zombie ? NULL : opendir(tp);
			if (td) {
				struct dirent *t;
				long k = 0;

				while ((t = readdir(td)))
					if (t->d_name[0] != '.')
						k++;
				closedir(td);
				n += k ? k : 1;
				if (st->n > 0 && st->v[st->n - 1] == c)
					st->tasks[st->n - 1] = k ? k : 1;
			}
			n += count_tasks_below(c, depth + 1, st);
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

/* The keeper is the supervisor's only child; the tree is below it. */
static inline long tasks_of_run(pid_t sbx)
{
	char path[128];
	FILE *f;
	long keeper = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int) sbx, (int) sbx);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%ld", &keeper) != 1)
		keeper = 0;
	fclose(f);
	if (keeper <= 0)
		return 0;
	{
		static Stopped st;
		long n;

		st.n = 0;
		(void) count_tasks_below((pid_t) keeper, 0, &st);
		/* Count only what is stopped once the walk is over: those are all alive at
		 * that moment (an exiting process never stops, and its place may have been
		 * taken meanwhile). SIGSTOP takes effect asynchronously: wait a little. */
		n = 0;
		for (size_t i = 0; i < st.n; i++) {
			char s_ = 0;

			for (int tries = 0; tries < 200; tries++) {
				s_ = proc_state(st.v[i]);
				/* 't': stopped under the supervisor's ptrace (a group-stop it
				 * keeps with PTRACE_LISTEN), the same as 'T' without it */
				if (s_ == 'T' || s_ == 't' || s_ == 0 || s_ == 'Z' || s_ == 'X')
					break;
				sbx_sleep_ms(1);
			}
			if (s_ == 'T' || s_ == 't')
				n += st.tasks[i];
		}
		for (size_t i = 0; i < st.n; i++)
			(void) kill(st.v[i], SIGCONT);
		return n;
	}
}

/* sets: "limits.memory=256MiB", …, NULL. */
static inline void budget_run(BudgetRun *r, const char *const *sets, bool json,
			      const char *const *cmd)
{
	const char *argv[64];
	int po[2], pe[2], status = 0;
	size_t n = 0, err_len = 0;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	r->code = -1;
	argv[n++] = sbx_env("SBXTRACE");
	argv[n++] = "run";
	if (json)
		argv[n++] = "--json";
	for (; sets && *sets && n < 40; sets++) {
		argv[n++] = "-s";
		argv[n++] = *sets;
	}
	argv[n++] = budget_policy;
	argv[n++] = "--";
	for (; *cmd && n < 62; cmd++)
		argv[n++] = *cmd;
	argv[n] = NULL;

	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		dup2(null, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		execv(argv[0], (char **) argv);
		_exit(99);
	}
	close(po[1]);
	close(pe[1]);
	for (bool out_open = true, err_open = true; out_open || err_open;) {
		struct pollfd p[2] = {{out_open ? po[0] : -1, POLLIN, 0},
				      {err_open ? pe[0] : -1, POLLIN, 0}};
		long t;

		if (poll(p, 2, 5) < 0 && errno != EINTR)
			break;
		t = tasks_of_run(pid);
		if (t > r->max_tasks)
			r->max_tasks = t;
		if (p[0].revents) {
			char tmp[65536];
			ssize_t k = read(po[0], tmp, sizeof(tmp));

			if (k <= 0)
				out_open = false;
			else {
				size_t take = (size_t) k < sizeof(r->out) - 1 - r->out_len
						      ? (size_t) k
						      : sizeof(r->out) - 1 - r->out_len;

				memcpy(r->out + r->out_len, tmp, take);
				r->out_len += take;
			}
		}
		if (p[1].revents) {
			char tmp[4096];
			ssize_t k = read(pe[0], tmp, sizeof(tmp));

			if (k <= 0)
				err_open = false;
			else {
				size_t take = (size_t) k < sizeof(r->err) - 1 - err_len
						      ? (size_t) k
						      : sizeof(r->err) - 1 - err_len;

				memcpy(r->err + err_len, tmp, take);
				err_len += take;
			}
		}
	}
	r->out[r->out_len] = 0;
	r->err[err_len] = 0;
	close(po[0]);
	close(pe[0]);
	if (waitpid(pid, &status, 0) == pid)
		r->code = sbx_status_code(status);
	if (r->code != 0)
		fprintf(stderr, "# exit %d, stderr: %s", r->code, r->err);
}

/* The last number after "key " on stdout, or -1. */
static inline long last_value(const BudgetRun *r, const char *key)
{
	const char *p = r->out, *q;
	long v = -1;
	size_t kl = strlen(key);

	while ((q = strstr(p, key))) {
		if ((q == r->out || q[-1] == '\n') && q[kl] == ' ')
			v = atol(q + kl + 1);
		p = q + kl;
	}
	return v;
}

static inline long file_size(const char *dir, const char *name)
{
	char path[1024];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) < 0 ? -1 : (long) st.st_size;
}
