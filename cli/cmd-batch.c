/* SPDX-License-Identifier: MIT */
/*
 * sbxtrace batch TASKS.jsonl -o OUTDIR [POLICY] [-j N] [-s KEY=VALUE…]
 *
 * Runs many tasks under one policy, N at a time, each in a fresh workspace with its own
 * audit log, and writes one results table (docs/research.md). Each task is a line of
 * TASKS.jsonl; it runs as
 *
 *   sbxtrace run --json -q --audit OUTDIR/tasks/ID/audit.jsonl -w OUTDIR/tasks/ID/workspace
 *                [-s global…] [-s mount=[{/run/sbxtrace: the code}]] [-s task's set…]
 *                POLICY -- COMMAND…
 *
 * of this very binary, started with fork+exec: tracer_run() forks and starts threads and
 * must own its process, and a supervisor per task means that one task crashing its sandbox
 * loses nothing of the others. This process stays single-threaded: it forks, waits with
 * sigtimedwait() for SIGCHLD (and SIGINT/SIGTERM/SIGHUP, which stop the batch), and does
 * the bookkeeping in between.
 *
 * OUTDIR/tasks/ID/ holds task.json (the line), workspace/, code/ (for code tasks),
 * audit.jsonl, result.json (the run's --json result), stderr.txt (sbxtrace's own messages),
 * report.html (the run's report) and row.json, the task's row of the results, written last
 * and atomically: a task with a row.json is finished, and a rerun skips it. A task without
 * one (interrupted) is started again from scratch. results.jsonl and results.csv are rebuilt
 * from the rows at the end of every batch, in the order of the task file.
 */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "audit/digest.h"
#include "audit/report.h"
#include "common/language.h"
#include "common/log.h"
#include "common/macros.h"
#include "common/util.h"

#define TASK_LINE_MAX (4u << 20) /* one task: the code inline */
#define TASK_ID_MAX   128
#define ROW_LIST_MAX  50 /* entries of each list in a row (most frequent first) */
#define RESULT_MAX    (96u << 20)

extern char **environ;

#define _cleanup_strv_free_ _cleanup_(strv_freep)

typedef enum TaskState {
	TASK_PENDING,
	TASK_SKIPPED, /* finished by an earlier batch */
	TASK_RUNNING,
	TASK_DONE,
	TASK_LOST, /* could not be started, or its row could not be written */
} TaskState;

typedef struct Task {
	unsigned line;
	char *id;
	json_t *obj; /* the line as read */
	char **argv; /* the command; for code, the interpreter and the code's path */
	const Language *lang;
	const char *code; /* borrowed from obj */
	char *workspace;  /* real path of the directory to copy in, or NULL */
	char **sets;	  /* the task's -s overrides */
	TaskState state;
	pid_t pid;
	uint64_t start_ns;
} Task;

typedef struct Batch {
	const char *self;
	const char *policy;
	char **sets;  /* global -s */
	char *outdir; /* real path */
	Task *tasks;
	size_t n_tasks;
	unsigned bad_lines;
	unsigned jobs;
	unsigned running, done, failed, lost, skipped, total;
	bool progress;
	uint64_t start_ns;
} Batch;

static void help(FILE *f)
{
	fputs("Usage: sbxtrace batch [OPTIONS] TASKS.jsonl -o OUTDIR [POLICY]\n"
	      "\n"
	      "Run every task of TASKS.jsonl under POLICY (default: standard), N at a time, each\n"
	      "in a fresh workspace with its own audit log, and write OUTDIR/results.csv and\n"
	      "OUTDIR/results.jsonl. Finished tasks are skipped when the batch runs again.\n"
	      "\n"
	      "One JSON object per line:\n"
	      "  id         string: the task's name (letters, digits, '.', '_', '-'), required\n"
	      "  command    [\"argv\", …] or \"a shell line\" (run with /bin/sh -c), or:\n"
	      "  code       the program's text, with\n"
	      "  language   python, javascript or shell\n"
	      "  workspace  a directory copied into the task's workspace first (relative to\n"
	      "             the task file's directory)\n"
	      "  set        {\"limits.wall_time\": \"5s\", …}: policy overrides for this task\n"
	      "  any other field is kept in the results, for 'report --corpus --group-by'\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output DIR     where tasks/ID/, results.csv and results.jsonl go "
	      "(required)\n"
	      "  -j, --jobs N         tasks at a time (default: the number of CPUs)\n"
	      "  -s, --set KEY=VALUE  override one policy setting for every task (repeatable)\n"
	      "  -q, --quiet          no progress line and no summary\n"
	      "  -h, --help           show this help\n"
	      "\n"
	      "Examples:\n"
	      "  sbxtrace batch tasks.jsonl -o out python -j 4\n"
	      "  sbxtrace report --corpus out --group-by model --html out/corpus.html\n"
	      "\n"
	      "Exit status: 0 when every line was a task and every task has its row; 1 when\n"
	      "some lines were bad or some tasks could not be run; 125 when the batch cannot\n"
	      "start (bad policy, unwritable OUTDIR); 130 when interrupted (rerun to go on).\n",
	      f);
}

/* ---- small helpers ---- */

static unsigned cpu_count(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned) CPU_COUNT(&set);
	return 1;
}

static bool valid_id(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > TASK_ID_MAX || s[0] == '.')
		return false;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

/* A JSON value as the VALUE of -s KEY=VALUE (read as TOML, else as a string): strings as
 * they are, numbers and booleans as text, arrays of scalars in TOML syntax. NULL: no. */
static char *override_value(const json_t *v)
{
	char *buf = NULL;
	size_t size = 0, i;
	const json_t *e;
	FILE *f;

	if (json_is_string(v))
		return strdup(json_string_value(v));
	if (json_is_integer(v))
		return strdup_printf("%lld", (long long) json_integer_value(v));
	if (json_is_real(v))
		return strdup_printf("%g", json_real_value(v));
	if (json_is_boolean(v))
		return strdup(json_is_true(v) ? "true" : "false");
	if (!json_is_array(v))
		return NULL;
	f = open_memstream(&buf, &size);
	if (!f)
		return NULL;
	fputc('[', f);
	json_array_foreach(v, i, e)
	{
		if (i)
			fputs(", ", f);
		if (json_is_string(e))
			policy_write_string(f, json_string_value(e), false);
		else if (json_is_integer(e))
			fprintf(f, "%lld", (long long) json_integer_value(e));
		else if (json_is_boolean(e))
			fputs(json_is_true(e) ? "true" : "false", f);
		else {
			fclose(f);
			free(buf);
			return NULL;
		}
	}
	fputc(']', f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void) st;
	(void) ftw;
	if (type == FTW_DP)
		(void) rmdir(path);
	else
		(void) unlink(path);
	return 0;
}

static int chmod_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void) ftw;
	/* a task may leave directories it made read-only: their entries could not go */
	if (type == FTW_D && (st->st_mode & 0700) != 0700)
		(void) chmod(path, (st->st_mode & 07777) | 0700);
	return 0;
}

/* rm -rf path (never following symlinks, never leaving the file system) */
static int remove_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	(void) nftw(path, chmod_entry, 16, FTW_PHYS | FTW_MOUNT);
	(void) nftw(path, rm_entry, 16, FTW_PHYS | FTW_MOUNT | FTW_DEPTH);
	return lstat(path, &st) < 0 && errno == ENOENT ? 0 : -ENOTEMPTY;
}

static int write_file_atomic(const char *dir, const char *name, const char *text, size_t len)
{
	_cleanup_free_ char *tmp = strdup_printf("%s/.%s.tmp", dir, name);
	_cleanup_free_ char *path = strdup_printf("%s/%s", dir, name);
	int fd, r = 0;

	if (!tmp || !path)
		return -ENOMEM;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write_all(fd, text, len) < 0 || fsync(fd) < 0)
		r = -EIO;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		(void) unlink(tmp);
	return r;
}

static int write_json_atomic(const char *dir, const char *name, const json_t *v)
{
	_cleanup_free_ char *text = json_dumps(v, JSON_COMPACT | JSON_ENSURE_ASCII);
	size_t len;

	if (!text)
		return -ENOMEM;
	len = strlen(text);
	text[len] = 0;
	{
		_cleanup_free_ char *line = strdup_printf("%s\n", text);

		if (!line)
			return -ENOMEM;
		return write_file_atomic(dir, name, line, len + 1);
	}
}

static char *task_dir(const Batch *b, const Task *t)
{
	return strdup_printf("%s/tasks/%s", b->outdir, t->id);
}

/* ---- the task file ---- */

static void task_done(Task *t)
{
	free(t->id);
	json_decref(t->obj);
	strv_free(t->argv);
	free(t->workspace);
	strv_free(t->sets);
}

/* Checks the line's fields and fills t; on a bad line, why. */
static int task_parse(Batch *b, const char *taskdir, json_t *obj, Task *t, char *why, size_t size)
{
	const json_t *id = json_object_get(obj, "id"), *cmd = json_object_get(obj, "command");
	const json_t *code = json_object_get(obj, "code"), *lang = json_object_get(obj, "language");
	const json_t *ws = json_object_get(obj, "workspace"), *set = json_object_get(obj, "set");

	if (json_is_string(id))
		t->id = strdup(json_string_value(id));
	else if (json_is_integer(id))
		t->id = strdup_printf("%lld", (long long) json_integer_value(id));
	else {
		snprintf(why, size, "no \"id\" (a string)");
		return -EINVAL;
	}
	if (!t->id)
		return -ENOMEM;
	if (!valid_id(t->id)) {
		snprintf(why, size,
			 "id '%.64s' is not a name of letters, digits, '.', '_', '-' "
			 "(at most %d, not starting with '.')",
			 t->id, TASK_ID_MAX);
		return -EINVAL;
	}
	for (size_t i = 0; i < b->n_tasks; i++)
		if (streq(b->tasks[i].id, t->id)) {
			snprintf(why, size, "id '%s' again (first on line %u)", t->id,
				 b->tasks[i].line);
			return -EINVAL;
		}
	if (cmd && code) {
		snprintf(why, size, "both \"command\" and \"code\": give one");
		return -EINVAL;
	}
	if (json_is_string(cmd) && json_string_length(cmd) > 0) {
		if (strv_push(&t->argv, "/bin/sh") < 0 || strv_push(&t->argv, "-c") < 0 ||
		    strv_push(&t->argv, json_string_value(cmd)) < 0)
			return -ENOMEM;
	} else if (json_is_array(cmd) && json_array_size(cmd) > 0) {
		size_t i;
		const json_t *a;

		json_array_foreach(cmd, i, a)
		{
			if (!json_is_string(a)) {
				snprintf(why, size, "command[%zu] is not a string", i);
				return -EINVAL;
			}
			if (strv_push(&t->argv, json_string_value(a)) < 0)
				return -ENOMEM;
		}
	} else if (cmd) {
		snprintf(why, size, "\"command\" must be a non-empty array of strings or a string");
		return -EINVAL;
	} else if (json_is_string(code)) {
		const char *interp;

		t->lang = json_is_string(lang) ? language_find(json_string_value(lang)) : NULL;
		if (!t->lang) {
			snprintf(why, size, "\"code\" needs \"language\": " LANGUAGE_NAMES);
			return -EINVAL;
		}
		interp = language_interp(t->lang);
		if (!interp) {
			snprintf(why, size, "no interpreter for %s on this host (looked for %s)",
				 t->lang->name, t->lang->interp[0]);
			return -EINVAL;
		}
		t->code = json_string_value(code);
		{
			_cleanup_free_ char *vpath =
				strdup_printf("/run/sbxtrace/task.%s", t->lang->ext);

			if (!vpath || strv_push(&t->argv, interp) < 0 ||
			    strv_push(&t->argv, vpath) < 0)
				return -ENOMEM;
		}
	} else {
		snprintf(why, size, "no \"command\" (argv array or string) and no \"code\"");
		return -EINVAL;
	}
	if (ws) {
		_cleanup_free_ char *p = NULL;
		char real[PATH_MAX];
		struct stat st;

		if (!json_is_string(ws) || !json_string_length(ws)) {
			snprintf(why, size, "\"workspace\" must be a path");
			return -EINVAL;
		}
		p = json_string_value(ws)[0] == '/'
			    ? strdup(json_string_value(ws))
			    : strdup_printf("%s/%s", taskdir, json_string_value(ws));
		if (!p)
			return -ENOMEM;
		if (!realpath(p, real) || stat(real, &st) < 0) {
			snprintf(why, size, "workspace '%.200s': %s", json_string_value(ws),
				 strerror(errno));
			return -EINVAL;
		}
		if (!S_ISDIR(st.st_mode)) {
			snprintf(why, size, "workspace '%.200s' is not a directory",
				 json_string_value(ws));
			return -EINVAL;
		}
		t->workspace = strdup(real);
		if (!t->workspace)
			return -ENOMEM;
	}
	if (json_is_object(set)) {
		const char *k;
		const json_t *v;

		json_object_foreach((json_t *) set, k, v)
		{
			_cleanup_free_ char *val = override_value(v), *kv = NULL;

			if (!val) {
				snprintf(why, size, "set.%.64s: a string, number, boolean or array",
					 k);
				return -EINVAL;
			}
			kv = strdup_printf("%s=%s", k, val);
			if (!kv || strv_push(&t->sets, kv) < 0)
				return -ENOMEM;
		}
	} else if (json_is_array(set)) {
		size_t i;
		const json_t *v;

		json_array_foreach(set, i, v)
		{
			if (!json_is_string(v) || !strchr(json_string_value(v), '=')) {
				snprintf(why, size, "set[%zu] is not \"KEY=VALUE\"", i);
				return -EINVAL;
			}
			if (strv_push(&t->sets, json_string_value(v)) < 0)
				return -ENOMEM;
		}
	} else if (set) {
		snprintf(why, size, "\"set\" must be an object or an array of \"KEY=VALUE\"");
		return -EINVAL;
	}
	if (t->sets) {
		/* the overrides must make a policy: a typo would fail every run of the task */
		_cleanup_strv_free_ char **all = strv_copy(b->sets);
		PolicyArgs pa = {.workspace = b->outdir, .quiet = true};
		Policy *p = NULL;
		int r;

		for (size_t i = 0; t->sets[i]; i++)
			if (strv_push(&all, t->sets[i]) < 0)
				return -ENOMEM;
		pa.overrides = TAKE_PTR(all);
		r = policy_args_load(&pa, b->policy, &p);
		policy_args_done(&pa);
		policy_free(p);
		if (r < 0) {
			snprintf(why, size,
				 "\"set\": the policy does not load with these overrides "
				 "(the error is above)");
			return -EINVAL;
		}
	}
	t->obj = json_incref(obj);
	return 0;
}

static int tasks_load(Batch *b, const char *path)
{
	_cleanup_free_ char *line = NULL, *dir = NULL;
	FILE *f = streq(path, "-") ? stdin : fopen(path, "re");
	size_t cap = 0;
	ssize_t n;
	unsigned no = 0;
	int r = 0;

	if (!f)
		return log_error_errno(-errno, "cannot open '%.200s'", path);
	{
		char real[PATH_MAX];
		const char *slash;

		if (f == stdin || !realpath(path, real))
			dir = getcwd(NULL, 0);
		else {
			slash = strrchr(real, '/');
			dir = strndup(real, slash == real ? 1 : (size_t) (slash - real));
		}
		if (!dir) {
			r = -ENOMEM;
			goto out;
		}
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		char why[512] = "";
		json_error_t e;
		json_t *obj;
		Task t = {};
		size_t len = (size_t) n;

		no++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		if (strspn(line, " \t\r\n") == (size_t) n || line[strspn(line, " \t")] == '#')
			continue; /* blank lines and comments */
		obj = len < TASK_LINE_MAX ? json_loadb(line, len, 0, &e) : NULL;
		if (!json_is_object(obj)) {
			log_warn("%.200s:%u: %s, skipping the line", path, no,
				 len >= TASK_LINE_MAX ? "line too long"
				 : !obj		      ? e.text
						      : "not a JSON object");
			json_decref(obj);
			b->bad_lines++;
			continue;
		}
		t.line = no;
		r = task_parse(b, dir, obj, &t, why, sizeof(why));
		json_decref(obj);
		if (r == -ENOMEM) {
			task_done(&t);
			goto out;
		}
		if (r < 0) {
			log_warn("%.200s:%u: %s, skipping the task", path, no, why);
			task_done(&t);
			b->bad_lines++;
			r = 0;
			continue;
		}
		if (b->n_tasks % 64 == 0) {
			Task *v = realloc(b->tasks, (b->n_tasks + 64) * sizeof(Task));

			if (!v) {
				task_done(&t);
				r = -ENOMEM;
				goto out;
			}
			b->tasks = v;
		}
		b->tasks[b->n_tasks++] = t;
	}
	if (ferror(f))
		r = log_error_errno(-EIO, "reading '%.200s'", path);
out:
	if (f != stdin)
		fclose(f);
	return r;
}

/* ---- running ---- */

static void progress(const Batch *b, bool final)
{
	uint64_t s = (now_monotonic_ns() - b->start_ns) / 1000000000ULL;

	if (!b->progress)
		return;
	fprintf(stderr, "\r\033[K[%u/%u] %u running, %u done, %u failed, %u skipped, %02llu:%02llu",
		b->done + b->lost + b->skipped, b->total, b->running, b->done, b->failed,
		b->skipped, (unsigned long long) s / 60, (unsigned long long) s % 60);
	if (final)
		fputc('\n', stderr);
	fflush(stderr);
}

/* In the child: copy the workspace in (with cp, a child of its own), then exec the run. */
_noreturn_ static void task_child(const char *dir, const char *src, char *const *argv,
				  const char *self)
{
	_cleanup_free_ char *out = strdup_printf("%s/result.json.part", dir);
	_cleanup_free_ char *err = strdup_printf("%s/stderr.txt", dir);
	_cleanup_free_ char *dst = strdup_printf("%s/workspace/", dir);
	_cleanup_free_ char *from = src ? strdup_printf("%s/.", src) : NULL;
	sigset_t none;
	int fd;

	/* its own process group: a ^C at the terminal stops the batch, which then kills the
	 * runs; a run that saw the ^C itself would end with a result that looks like one */
	(void) setpgid(0, 0);
	(void) prctl(PR_SET_PDEATHSIG, SIGKILL);
	sigemptyset(&none);
	(void) sigprocmask(SIG_SETMASK, &none, NULL);
	if (!out || !err || !dst || (src && !from))
		_exit(125);
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || dup2(fd, 0) < 0)
		_exit(125);
	fd = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || dup2(fd, 2) < 0)
		_exit(125);
	if (src) {
		char *cp[] = {(char *) "cp", (char *) "-a", (char *) "--reflink=auto",
			      (char *) "--", from,	    dst,
			      NULL};
		int status;
		pid_t pid = fork();

		if (pid == 0) {
			execve("/bin/cp", cp, environ);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0) {
			dprintf(2, "sbxtrace batch: copying the workspace '%s' failed\n", src);
			_exit(125);
		}
	}
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || dup2(fd, 1) < 0)
		_exit(125);
	(void) syscall(SYS_close_range, 3, ~0U, 0);
	execve(self, argv, environ);
	_exit(127);
}

static int task_start(Batch *b, Task *t)
{
	_cleanup_free_ char *dir = task_dir(b, t), *ws = NULL, *audit = NULL, *mount = NULL;
	_cleanup_strv_free_ char **argv = NULL;
	pid_t pid;
	int r;

	if (!dir)
		return -ENOMEM;
	/* an earlier attempt that did not finish: from scratch */
	r = remove_tree(dir);
	if (r < 0)
		return log_warn_errno(r, "task '%s': cannot remove the unfinished '%.200s'", t->id,
				      dir);
	ws = strdup_printf("%s/workspace", dir);
	audit = strdup_printf("%s/audit.jsonl", dir);
	if (!ws || !audit)
		return -ENOMEM;
	if (mkdir(dir, 0755) < 0 || mkdir(ws, 0755) < 0)
		return log_warn_errno(-errno, "task '%s': cannot create '%.200s'", t->id, dir);
	r = write_json_atomic(dir, "task.json", t->obj);
	if (r < 0)
		return log_warn_errno(r, "task '%s': cannot write task.json", t->id);
	if (t->code) {
		_cleanup_free_ char *cdir = strdup_printf("%s/code", dir);
		_cleanup_free_ char *name = strdup_printf("task.%s", t->lang->ext);
		char *buf = NULL;
		size_t size = 0;
		FILE *f;

		if (!cdir || !name)
			return -ENOMEM;
		if (mkdir(cdir, 0755) < 0)
			return log_warn_errno(-errno, "task '%s': cannot create '%.200s'", t->id,
					      cdir);
		r = write_file_atomic(cdir, name, t->code, strlen(t->code));
		if (r < 0)
			return log_warn_errno(r, "task '%s': cannot write its code", t->id);
		/* read-only at /run/sbxtrace, as code_execute does (agent/exec.c) */
		f = open_memstream(&buf, &size);
		if (!f)
			return -ENOMEM;
		fputs("mount=[{path = \"/run/sbxtrace\", mode = \"ro\", source = ", f);
		policy_write_string(f, cdir, true);
		fputs("}]", f);
		if (fclose(f) != 0)
			return -ENOMEM;
		mount = buf;
	}

	if (strv_push(&argv, "sbxtrace") < 0 || strv_push(&argv, "run") < 0 ||
	    strv_push(&argv, "--json") < 0 || strv_push(&argv, "-q") < 0 ||
	    strv_push(&argv, "--audit") < 0 || strv_push(&argv, audit) < 0 ||
	    strv_push(&argv, "-w") < 0 || strv_push(&argv, ws) < 0)
		return -ENOMEM;
	for (size_t i = 0; b->sets && b->sets[i]; i++)
		if (strv_push(&argv, "-s") < 0 || strv_push(&argv, b->sets[i]) < 0)
			return -ENOMEM;
	if (mount && (strv_push(&argv, "-s") < 0 || strv_push(&argv, mount) < 0))
		return -ENOMEM;
	for (size_t i = 0; t->sets && t->sets[i]; i++)
		if (strv_push(&argv, "-s") < 0 || strv_push(&argv, t->sets[i]) < 0)
			return -ENOMEM;
	if (strv_push(&argv, b->policy) < 0 || strv_push(&argv, "--") < 0)
		return -ENOMEM;
	for (size_t i = 0; t->argv[i]; i++)
		if (strv_push(&argv, t->argv[i]) < 0)
			return -ENOMEM;

	t->start_ns = now_monotonic_ns();
	pid = fork();
	if (pid < 0)
		return log_warn_errno(-errno, "task '%s': fork", t->id);
	if (pid == 0)
		task_child(dir, t->workspace, argv, b->self);
	t->pid = pid;
	t->state = TASK_RUNNING;
	b->running++;
	return 0;
}

/* "ok", "failed" (its own nonzero exit), "timeout", "killed" (a budget or a syscall the
 * policy kills for), "sandbox_error" (125, no result), "crashed" (sbxtrace itself died) */
static const char *status_of(const json_t *res, int wstatus)
{
	const json_t *ec = json_object_get(res, "exit_code");

	if (!WIFEXITED(wstatus))
		return "crashed";
	if (!json_is_object(res))
		return "sandbox_error";
	if (json_is_true(json_object_get(res, "timed_out")))
		return "timeout";
	if (json_is_string(json_object_get(res, "killed_by")))
		return "killed";
	if (json_integer_value(ec) == EXIT_SANDBOX_ERROR)
		return "sandbox_error";
	return json_integer_value(ec) == 0 ? "ok" : "failed";
}

static void warn_skip(unsigned line, const char *why, void *userdata)
{
	(void) line;
	(void) why;
	(void) userdata;
}

/* The run ended: its result, the digest of its log, its report, and its row (last). */
static int task_finish(Batch *b, Task *t, int wstatus, const struct rusage *ru)
{
	_cleanup_free_ char *dir = task_dir(b, t), *part = NULL, *text = NULL;
	_cleanup_free_ char *audit = NULL, *html = NULL;
	AuditDigest *dg = NULL;
	json_t *res = NULL, *row, *usage, *dj, *fields, *budgets;
	const char *status, *k;
	size_t len = 0;
	json_t *v;
	int r;

	if (!dir)
		return -ENOMEM;
	part = strdup_printf("%s/result.json.part", dir);
	audit = strdup_printf("%s/audit.jsonl", dir);
	html = strdup_printf("%s/report.html", dir);
	if (!part || !audit || !html)
		return -ENOMEM;
	if (read_full_file(AT_FDCWD, part, RESULT_MAX, &text, &len) == 0 && len > 0)
		res = json_loadb(text, len, 0, NULL);
	if (!json_is_object(res)) {
		json_decref(res);
		res = NULL;
	}
	if (res) {
		_cleanup_free_ char *final = strdup_printf("%s/result.json", dir);

		if (final)
			(void) rename(part, final);
	}
	status = status_of(res, wstatus);

	row = json_object();
	if (!row) {
		json_decref(res);
		return -ENOMEM;
	}
	json_object_set_new(row, "id", json_string(t->id));
	json_object_set_new(row, "line", json_integer(t->line));
	json_object_set_new(row, "status", json_string(status));
	json_object_set_new(row, "exit_code",
			    res			 ? json_incref(json_object_get(res, "exit_code"))
			    : WIFEXITED(wstatus) ? json_integer(WEXITSTATUS(wstatus))
						 : json_null());
	if (!WIFEXITED(wstatus))
		json_object_set_new(row, "sandbox_signal", json_integer(WTERMSIG(wstatus)));
	json_object_set_new(row, "signal",
			    res && json_object_get(res, "signal")
				    ? json_incref(json_object_get(res, "signal"))
				    : json_null());
	json_object_set_new(row, "duration_ms",
			    res ? json_incref(json_object_get(res, "duration_ms")) : json_null());
	json_object_set_new(
		row, "wall_ms",
		json_integer((json_int_t) ((now_monotonic_ns() - t->start_ns) / 1000000)));
	/* the budgets' own figures when the policy sets them (the presets do); else what the
	 * kernel counted for the run's process and its reaped descendants, supervisor included */
	usage = res ? json_object_get(res, "usage") : NULL;
	if (json_is_object(usage)) {
		json_object_set(row, "cpu_ms", json_object_get(usage, "cpu_time_ms"));
		json_object_set(row, "memory_peak", json_object_get(usage, "memory_peak"));
		json_object_set_new(row, "usage_source", json_string("budgets"));
	} else {
		json_object_set_new(
			row, "cpu_ms",
			json_integer((json_int_t) (ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) *
					     1000 +
				     (ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1000));
		json_object_set_new(row, "memory_peak",
				    json_integer((json_int_t) ru->ru_maxrss * 1024));
		json_object_set_new(row, "usage_source", json_string("rusage"));
	}
	/* always, for comparison: the supervisor's share is in these */
	json_object_set_new(
		row, "rusage_cpu_ms",
		json_integer((json_int_t) (ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000 +
			     (ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1000));
	json_object_set_new(row, "rusage_maxrss", json_integer((json_int_t) ru->ru_maxrss * 1024));
	json_object_set_new(row, "denied",
			    res ? json_incref(json_object_get(res, "denied")) : json_null());

	budgets = json_array();
	if (res && json_is_string(json_object_get(res, "killed_by")) &&
	    !streq(json_string_value(json_object_get(res, "killed_by")), "syscall"))
		json_array_append(budgets, json_object_get(res, "killed_by"));
	r = audit_digest_load_path(audit, warn_skip, NULL, &dg);
	dj = r >= 0 ? audit_digest_to_json(dg, ROW_LIST_MAX) : NULL;
	if (dj) {
		static const char *const keys[] = {
			"denials_by_kind", "not_found",	    "out_of_view", "out_of_view_paths",
			"network",	   "files_written", "execs",	   "syscalls",
			"processes"};
		size_t i;
		json_t *e;

		json_array_foreach(json_object_get(dj, "budgets"), i, e)
		{
			bool seen = false;
			size_t j;
			json_t *x;

			json_array_foreach(budgets, j, x) seen |= json_equal(x, e);
			if (!seen)
				json_array_append(budgets, e);
		}
		for (size_t j = 0; j < ARRAY_SIZE(keys); j++)
			json_object_set(row, keys[j], json_object_get(dj, keys[j]));
		json_object_set_new(row, "audit_complete", json_boolean(audit_digest_finished(dg)));
	} else
		json_object_set_new(row, "audit_complete", json_false());
	json_object_set_new(row, "budgets", budgets);
	json_decref(dj);
	audit_digest_free(dg);

	/* the run's own report, which the corpus page links to */
	{
		FILE *in = fopen(audit, "re");
		AuditReport *rep = NULL;

		if (in && audit_report_load(in, warn_skip, NULL, &rep) >= 0) {
			FILE *out = fopen(html, "we");

			if (out) {
				(void) audit_report_write_html(rep, t->id, out);
				fclose(out);
			}
		}
		audit_report_free(rep);
		if (in)
			fclose(in);
	}

	fields = json_object();
	json_object_foreach(t->obj, k, v)
	{
		if (streq(k, "id") || streq(k, "command") || streq(k, "code") ||
		    streq(k, "workspace") || streq(k, "set"))
			continue;
		json_object_set(fields, k, v);
	}
	json_object_set_new(row, "task", fields);
	if (!res) {
		_cleanup_free_ char *errp = strdup_printf("%s/stderr.txt", dir);
		_cleanup_free_ char *etext = NULL;
		size_t elen = 0;

		if (errp && read_full_file(AT_FDCWD, errp, 4096, &etext, &elen) >= 0 && elen)
			json_object_set_new(row, "sandbox_error", json_stringn(etext, elen));
	}
	json_decref(res);

	r = write_json_atomic(dir, "row.json", row);
	json_decref(row);
	if (r < 0)
		return log_warn_errno(r, "task '%s': cannot write its row", t->id);
	if (!streq(status, "ok"))
		b->failed++;
	return 0;
}

static Task *task_of_pid(Batch *b, pid_t pid)
{
	for (size_t i = 0; i < b->n_tasks; i++)
		if (b->tasks[i].state == TASK_RUNNING && b->tasks[i].pid == pid)
			return &b->tasks[i];
	return NULL;
}

/* Reaps what ended; returns how many. */
static unsigned reap(Batch *b)
{
	unsigned n = 0;

	for (;;) {
		struct rusage ru = {};
		int status;
		pid_t pid = wait4(-1, &status, WNOHANG, &ru);
		Task *t;

		if (pid <= 0)
			return n;
		t = task_of_pid(b, pid);
		if (!t)
			continue;
		n++;
		b->running--;
		if (task_finish(b, t, status, &ru) < 0) {
			t->state = TASK_LOST;
			b->lost++;
		} else {
			t->state = TASK_DONE;
			b->done++;
		}
	}
}

/* ---- the results ---- */

static void csv_field(FILE *f, const char *s)
{
	if (!s[strcspn(s, ",\"\r\n")]) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* A value as CSV text: strings as they are, arrays joined with ' ', objects "k=v k=v". */
static void csv_value(FILE *f, const json_t *v)
{
	char *buf = NULL;
	size_t size = 0, i;
	FILE *m;
	const char *k;
	json_t *e;

	if (!v || json_is_null(v))
		return;
	if (json_is_string(v)) {
		csv_field(f, json_string_value(v));
		return;
	}
	m = open_memstream(&buf, &size);
	if (!m)
		return;
	if (json_is_array(v)) {
		json_array_foreach((json_t *) v, i, e)
		{
			if (i)
				fputc(' ', m);
			if (json_is_string(e))
				fputs(json_string_value(e), m);
			else {
				char *t = json_dumps(e, JSON_ENCODE_ANY | JSON_COMPACT);

				fputs(t ? t : "", m);
				free(t);
			}
		}
	} else if (json_is_object(v)) {
		bool first = true;

		json_object_foreach((json_t *) v, k, e)
		{
			fprintf(m, "%s%s=%lld", first ? "" : " ", k,
				(long long) json_integer_value(e));
			first = false;
		}
	} else {
		char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

		fputs(t ? t : "", m);
		free(t);
	}
	if (fclose(m) == 0)
		csv_field(f, buf);
	free(buf);
}

static int results_write(Batch *b, unsigned *ret_rows)
{
	static const char *const cols[] = {
		"id",
		"status",
		"exit_code",
		"signal",
		"duration_ms",
		"wall_ms",
		"cpu_ms",
		"memory_peak",
		"budgets",
		"denied",
		"denials_by_kind",
		"not_found",
		"out_of_view",
		"out_of_view_paths",
		"network",
		"files_written",
		"execs",
		"syscalls",
		"processes",
	};
	_cleanup_free_ char *jl = NULL, *csv = NULL;
	json_t *extra = json_array(); /* task fields, in the order first seen */
	json_t **rows = calloc(b->n_tasks ? b->n_tasks : 1, sizeof(json_t *));
	char *jbuf = NULL, *cbuf = NULL;
	size_t jsize = 0, csize = 0;
	FILE *jf = NULL, *cf = NULL;
	unsigned n = 0;
	int r = -ENOMEM;

	if (!rows || !extra)
		goto out;
	for (size_t i = 0; i < b->n_tasks; i++) {
		_cleanup_free_ char *dir = task_dir(b, &b->tasks[i]), *p = NULL;
		const char *k;
		json_t *v;

		if (!dir || !(p = strdup_printf("%s/row.json", dir)))
			goto out;
		rows[i] = json_load_file(p, 0, NULL);
		if (!json_is_object(rows[i])) {
			json_decref(rows[i]);
			rows[i] = NULL;
			continue;
		}
		n++;
		json_object_foreach(json_object_get(rows[i], "task"), k, v)
		{
			bool seen = false;
			size_t j;
			json_t *x;

			json_array_foreach(extra, j, x) seen |= streq(json_string_value(x), k);
			if (!seen)
				json_array_append_new(extra, json_string(k));
		}
	}
	jf = open_memstream(&jbuf, &jsize);
	cf = open_memstream(&cbuf, &csize);
	if (!jf || !cf)
		goto out;
	for (size_t c = 0; c < ARRAY_SIZE(cols); c++)
		fprintf(cf, "%s%s", c ? "," : "", cols[c]);
	{
		size_t j;
		json_t *x;

		json_array_foreach(extra, j, x)
		{
			fputs(",task.", cf);
			csv_field(cf, json_string_value(x));
		}
	}
	fputc('\n', cf);
	for (size_t i = 0; i < b->n_tasks; i++) {
		char *line;
		size_t j;
		json_t *x;

		if (!rows[i])
			continue;
		line = json_dumps(rows[i], JSON_COMPACT | JSON_ENSURE_ASCII);
		if (!line)
			goto out;
		fprintf(jf, "%s\n", line);
		free(line);
		for (size_t c = 0; c < ARRAY_SIZE(cols); c++) {
			if (c)
				fputc(',', cf);
			csv_value(cf, json_object_get(rows[i], cols[c]));
		}
		json_array_foreach(extra, j, x)
		{
			fputc(',', cf);
			csv_value(cf, json_object_get(json_object_get(rows[i], "task"),
						      json_string_value(x)));
		}
		fputc('\n', cf);
	}
	if (fclose(jf) != 0 || fclose(cf) != 0) {
		jf = cf = NULL;
		goto out;
	}
	jf = cf = NULL;
	r = write_file_atomic(b->outdir, "results.jsonl", jbuf, jsize);
	if (r >= 0)
		r = write_file_atomic(b->outdir, "results.csv", cbuf, csize);
	if (r < 0)
		log_error_errno(r, "cannot write the results in '%.200s'", b->outdir);
	*ret_rows = n;
out:
	if (jf)
		fclose(jf);
	if (cf)
		fclose(cf);
	free(jbuf);
	free(cbuf);
	for (size_t i = 0; rows && i < b->n_tasks; i++)
		json_decref(rows[i]);
	free(rows);
	json_decref(extra);
	return r;
}

/* ---- the command ---- */

static int batch_run(Batch *b)
{
	sigset_t mask;
	size_t next = 0;
	int stop = 0;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return -errno;
	b->start_ns = now_monotonic_ns();
	progress(b, false);
	for (;;) {
		struct timespec ts = {.tv_sec = 1};
		siginfo_t si;
		int sig;

		while (!stop && b->running < b->jobs && next < b->n_tasks) {
			Task *t = &b->tasks[next++];

			if (t->state != TASK_PENDING)
				continue;
			if (task_start(b, t) < 0) {
				t->state = TASK_LOST;
				b->lost++;
			}
			progress(b, false);
		}
		if (b->running == 0 && (stop || next >= b->n_tasks))
			break;
		sig = sigtimedwait(&mask, &si, &ts);
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
			if (!stop) {
				/* the runs die with their supervisor (its keeper kills the tree);
				 * they leave no row, so the next batch starts them again */
				for (size_t i = 0; i < b->n_tasks; i++)
					if (b->tasks[i].state == TASK_RUNNING)
						(void) kill(b->tasks[i].pid, SIGKILL);
			}
			stop = sig;
		}
		if (stop) {
			/* reap the killed runs without rows */
			int status;
			pid_t pid;

			while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
				Task *t = task_of_pid(b, pid);

				if (t) {
					t->state = TASK_PENDING;
					b->running--;
				}
			}
		} else if (reap(b))
			progress(b, false);
		else
			progress(b, false);
	}
	progress(b, true);
	return stop;
}

int cmd_batch(int argc, char *argv[])
{
	static const struct option options[] = {
		{"output", required_argument, NULL, 'o'}, {"jobs", required_argument, NULL, 'j'},
		{"set", required_argument, NULL, 's'},	  {"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},	  {}};
	Batch b = {.policy = "standard", .jobs = cpu_count()};
	const char *out = NULL, *tasks;
	char self[PATH_MAX], real[PATH_MAX];
	bool quiet = false;
	unsigned rows = 0;
	ssize_t n;
	int c, r, ret = EXIT_SANDBOX_ERROR;

	optind = 0;
	while ((c = getopt_long(argc, argv, "o:j:s:qh", options, NULL)) >= 0) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'j': {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end || v < 1 || v > 1024) {
				log_error("batch: -j needs a number of tasks from 1 to 1024, not "
					  "'%.32s'",
					  optarg);
				goto out;
			}
			b.jobs = (unsigned) v;
			break;
		}
		case 's':
			if (strv_push(&b.sets, optarg) < 0)
				goto out;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			help(stdout);
			ret = 0;
			goto out;
		default:
			help(stderr);
			goto out;
		}
	}
	if (optind >= argc || optind + 2 < argc) {
		log_error("batch: expected TASKS.jsonl [POLICY]; try 'sbxtrace batch --help'");
		goto out;
	}
	if (!out) {
		log_error("batch: missing -o OUTDIR (where the tasks' logs and the results go)");
		goto out;
	}
	tasks = argv[optind];
	if (optind + 1 < argc)
		b.policy = argv[optind + 1];
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		log_error("batch: cannot find our own binary in /proc/self/exe");
		goto out;
	}
	self[n] = 0;
	b.self = self;

	if (mkdir(out, 0755) < 0 && errno != EEXIST) {
		log_error_errno(-errno, "cannot create '%.200s'", out);
		goto out;
	}
	if (!realpath(out, real)) {
		log_error_errno(-errno, "'%.200s'", out);
		goto out;
	}
	b.outdir = strdup(real);
	if (!b.outdir)
		goto out;
	{
		_cleanup_free_ char *td = strdup_printf("%s/tasks", b.outdir);

		if (!td || (mkdir(td, 0755) < 0 && errno != EEXIST)) {
			log_error_errno(-errno, "cannot create '%.200s/tasks'", b.outdir);
			goto out;
		}
	}
	/* the policy must load (with the global overrides) before anything runs */
	{
		PolicyArgs pa = {.workspace = b.outdir, .quiet = true};
		Policy *p = NULL;

		pa.overrides = strv_copy(b.sets);
		if (b.sets && !pa.overrides)
			goto out;
		r = policy_args_load(&pa, b.policy, &p);
		policy_args_done(&pa);
		policy_free(p);
		if (r < 0)
			goto out;
		/* the runs load it from their own working directory, which is ours: a relative
		 * file name stays right */
	}
	r = tasks_load(&b, tasks);
	if (r < 0)
		goto out;

	for (size_t i = 0; i < b.n_tasks; i++) {
		_cleanup_free_ char *dir = task_dir(&b, &b.tasks[i]), *row = NULL;

		if (!dir || !(row = strdup_printf("%s/row.json", dir)))
			goto out;
		if (access(row, F_OK) == 0) {
			b.tasks[i].state = TASK_SKIPPED;
			b.skipped++;
		}
	}
	b.total = (unsigned) b.n_tasks;
	b.progress = !quiet && isatty(STDERR_FILENO);
	r = batch_run(&b);
	if (r < 0) {
		log_error_errno(r, "batch");
		goto out;
	}
	if (results_write(&b, &rows) < 0)
		goto out;
	if (!quiet)
		log_info("batch: %zu tasks: %u ran (%u not ok), %u finished before, %u could not "
			 "be run, %u bad lines; %u rows in %s/results.csv and results.jsonl",
			 b.n_tasks, b.done, b.failed, b.skipped, b.lost, b.bad_lines, rows,
			 b.outdir);
	if (r > 0) {
		log_warn("batch: interrupted; run the same command again to go on");
		ret = 130;
	} else
		ret = b.bad_lines || b.lost ? 1 : 0;
out:
	for (size_t i = 0; i < b.n_tasks; i++)
		task_done(&b.tasks[i]);
	free(b.tasks);
	free(b.outdir);
	strv_free(b.sets);
	return ret;
}
