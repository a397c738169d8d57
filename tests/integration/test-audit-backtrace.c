/* SPDX-License-Identifier: MIT */
/*
 * Backtraces in the audit log ([audit] backtrace; docs/audit.md, tracer/backtrace.c): this
 * program runs itself as the probe under `sbxtrace run --audit LOG`, makes calls from
 * functions with known names, and the test checks that each record's frames name them, in
 * order, with the probe's file as their module:
 *
 *   - a denied call through libc, two functions deep (a notified call: interrupt, reply, stop);
 *   - the same call from an inline `syscall` instruction (the innermost frame is ours);
 *   - a fork under a tasks budget and a chdir (each routed through a ptrace stop of its own);
 *   - 8 threads making 25 denied calls each at once: every call answered right, every record
 *     with its thread's frames;
 *   - a call the policy kills the sandbox for: frames, and the caller never runs on;
 *   - tracer.ptrace = "never": no frames, and the record says why.
 *
 * Built with -fno-optimize-sibling-calls so that the named functions keep their frames.
 */
#include <jansson.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "tests/helpers/sbx-test.h"
#include "common/macros.h"
#include "tests/unit/tap.h"
#include "tests/integration/audit-probe.h"

#define PROBE_EXIT 3
#define THREADS	   8
#define PER_THREAD 25

/* ---- the probe, inside the sandbox ---- */

static volatile long sink_value;

__attribute__((noinline, noipa)) static long bt_denied_inner(void)
{
	long r = syscall(SYS_sysinfo, NULL);

	sink_value = r;
	return r;
}

__attribute__((noinline, noipa)) static long bt_denied_outer(void)
{
	long r = bt_denied_inner();

	sink_value = r;
	return r;
}

__attribute__((noinline, noipa)) static long bt_inline_call(void)
{
	long r;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "0"((long) SYS_sysinfo), "D"(0L)
			 : "rcx", "r11", "memory");
	sink_value = r;
	return r;
}

__attribute__((noinline, noipa)) static pid_t bt_fork_call(void)
{
	pid_t p = fork();

	sink_value = p;
	return p;
}

__attribute__((noinline, noipa)) static int bt_chdir_call(const char *path)
{
	int r = chdir(path);

	sink_value = r;
	return r;
}

__attribute__((noinline, noipa)) static long bt_thread_call(void)
{
	long r = syscall(SYS_sysinfo, NULL);

	sink_value = r;
	return r;
}

__attribute__((noinline, noipa)) static long bt_kill_call(void)
{
	long r = syscall(SYS_getpriority, 0, 0);

	sink_value = r;
	return r;
}

static void *thread_main(void *arg)
{
	long bad = 0;

	for (int i = 0; i < PER_THREAD; i++)
		if (bt_thread_call() != -1 || errno != EACCES)
			bad++;
	*(long *) arg = bad;
	return NULL;
}

static int probe(const char *what, const char *file)
{
	pthread_t th[THREADS];
	long bad[THREADS];
	pid_t child;
	int status;

	if (strcmp(what, "kill") == 0) {
		int fd;

		bt_kill_call();
		/* not reached: the policy kills the sandbox at the call */
		fd = open(file, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd >= 0) {
			(void) !write(fd, "survived\n", 9);
			close(fd);
		}
		return 20;
	}
	if (bt_denied_outer() != -1 || errno != EACCES)
		return 10;
	if (bt_inline_call() != -EACCES)
		return 11;
	child = bt_fork_call();
	if (child < 0)
		return 12;
	if (child == 0)
		_exit(7);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 7)
		return 13;
	if (bt_chdir_call("/") != 0)
		return 14;
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&th[i], NULL, thread_main, &bad[i]) != 0)
			return 15;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		if (bad[i])
			return 16;
	}
	return PROBE_EXIT;
}

/* ---- the test, outside ---- */

/* The records of syscall name (in log order) into out; returns how many. */
static size_t find_all(json_t *all, const char *name, json_t **out, size_t max)
{
	size_t i, n = 0;
	json_t *r;

	json_array_foreach(all, i, r)
	{
		if (json_is_object(r) && strcmp(str(r, "type"), "syscall") == 0 &&
		    strcmp(str(r, "syscall"), name) == 0 && n < max)
			out[n++] = r;
	}
	return n;
}

/* Index of the first frame whose function is fn, or -1. */
static int frame_index(const json_t *bt, const char *fn)
{
	size_t i;
	json_t *f;

	json_array_foreach(bt, i, f)
	{
		if (strcmp(str(f, "function"), fn) == 0)
			return (int) i;
	}
	return -1;
}

static bool module_is_self(const json_t *bt, int i)
{
	const char *m = str(json_array_get(bt, (size_t) i), "module");
	const char *base = strrchr(self, '/');

	return base && strlen(m) >= strlen(base) && strcmp(m + strlen(m) - strlen(base), base) == 0;
}

static void show_stderr(void)
{
	char buf[2048];
	FILE *f = fopen(err_path, "re");

	while (f && fgets(buf, sizeof(buf), f))
		printf("# stderr: %s", buf);
	if (f)
		fclose(f);
}

static bool have_backtraces(void)
{
	return HAVE_LIBUNWIND;
}

TEST(frames_name_the_callers_in_order)
{
	/* a tasks budget routes clone through a ptrace stop */
	const char *extra[] = {"-s", "audit.backtrace=[\"sysinfo\", \"clone\", \"chdir\"]", "-s",
			       "limits.tasks=64", NULL};
	json_t *all, *recs[THREADS * PER_THREAD + 8], *bt;
	int inner, outer, code;
	size_t n, with_frames = 0;

	if (!have_backtraces())
		SKIP("built without libunwind: no backtraces to check");
	ASSERT_TRUE(setup());
	code = run_logged(extra, true, "calls");
	if (code != PROBE_EXIT)
		show_stderr();
	ASSERT_EQ(code, PROBE_EXIT);
	all = load_log();

	/* 1 through libc, 1 inline, THREADS * PER_THREAD from the threads */
	n = find_all(all, "sysinfo", recs, ARRAY_SIZE(recs));
	EXPECT_EQ(n, (size_t) (2 + THREADS * PER_THREAD));
	ASSERT_GE(n, 2u);

	bt = json_object_get(recs[0], "backtrace");
	ASSERT_TRUE(json_is_array(bt));
	inner = frame_index(bt, "bt_denied_inner");
	outer = frame_index(bt, "bt_denied_outer");
	EXPECT_GE(inner, 0);
	EXPECT_EQ(outer, inner + 1);
	EXPECT_GE(frame_index(bt, "main"), outer + 1);
	EXPECT_TRUE(module_is_self(bt, inner));
	/* the innermost frame is libc's wrapper, at the instruction after the syscall */
	EXPECT_STREQ(str(json_array_get(bt, 0), "ip"), str(recs[0], "ip"));
	EXPECT_TRUE(json_is_false(json_object_get(recs[0], "outside_libc")));

	/* inline: our function is the innermost frame */
	bt = json_object_get(recs[1], "backtrace");
	ASSERT_TRUE(json_is_array(bt));
	EXPECT_EQ(frame_index(bt, "bt_inline_call"), 0);
	EXPECT_TRUE(module_is_self(bt, 0));
	EXPECT_TRUE(json_is_true(json_object_get(recs[1], "outside_libc")));

	/* every thread's call: its frames, none failed */
	for (size_t i = 2; i < n; i++) {
		bt = json_object_get(recs[i], "backtrace");
		if (json_is_array(bt) && frame_index(bt, "bt_thread_call") >= 0 &&
		    frame_index(bt, "thread_main") > frame_index(bt, "bt_thread_call"))
			with_frames++;
		else if (with_frames + 3 == i)
			printf("# record %zu: backtrace_error %s\n", i,
			       str(recs[i], "backtrace_error"));
	}
	EXPECT_EQ(with_frames, n - 2);

	/* the fork and the threads' clones: decided at a ptrace stop, where the caller stands
	 * still already (tracer/ptrace.c, on_clone_stop) */
	n = find_all(all, "clone", recs, ARRAY_SIZE(recs));
	EXPECT_EQ(n, (size_t) (1 + THREADS));
	ASSERT_GE(n, 1u);
	bt = json_object_get(recs[0], "backtrace");
	EXPECT_TRUE(json_is_array(bt) && frame_index(bt, "bt_fork_call") > 0);

	/* chdir goes through its own ptrace stop */
	n = find_all(all, "chdir", recs, ARRAY_SIZE(recs));
	EXPECT_EQ(n, 1u);
	ASSERT_GE(n, 1u);
	bt = json_object_get(recs[0], "backtrace");
	EXPECT_TRUE(json_is_array(bt) && frame_index(bt, "bt_chdir_call") > 0);

	/* calls not selected carry none */
	n = find_all(all, "execve", recs, ARRAY_SIZE(recs));
	ASSERT_GE(n, 1u);
	EXPECT_TRUE(json_object_get(recs[0], "backtrace") == NULL);
	EXPECT_TRUE(json_object_get(recs[0], "backtrace_error") == NULL);
	json_decref(all);
	cleanup();
}

/* `sbxtrace report LOG` prints needle (the text summary). */
static bool report_has(const char *needle)
{
	const char *argv[] = {sbx_env("SBXTRACE"), "report", log_path, NULL};
	char out[700], line[4096];
	bool found = false;
	int status, fd;
	FILE *f;
	pid_t pid;

	snprintf(out, sizeof(out), "%s/report.txt", dir);
	pid = fork();
	if (pid == 0) {
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(98);
		execv(argv[0], (char **) argv);
		_exit(99);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || sbx_status_code(status) != 0)
		return false;
	f = fopen(out, "re");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, needle))
			found = true;
	if (f)
		fclose(f);
	unlink(out);
	return found;
}

TEST(denied_selects_only_denials)
{
	const char *extra[] = {"-s", "audit.backtrace=\"denied\"", "-s", "limits.tasks=64", NULL};
	json_t *all, *recs[THREADS * PER_THREAD + 8];
	size_t n;

	if (!have_backtraces())
		SKIP("built without libunwind: no backtraces to check");
	ASSERT_TRUE(setup());
	ASSERT_EQ(run_logged(extra, true, "calls"), PROBE_EXIT);
	all = load_log();
	n = find_all(all, "sysinfo", recs, ARRAY_SIZE(recs));
	ASSERT_GE(n, 1u);
	EXPECT_TRUE(json_is_array(json_object_get(recs[0], "backtrace")));
	n = find_all(all, "clone", recs, ARRAY_SIZE(recs));
	ASSERT_GE(n, 1u);
	EXPECT_TRUE(json_object_get(recs[0], "backtrace") == NULL);
	/* the report names the code that asked, for each denial */
	EXPECT_TRUE(report_has("(denied: denied by policy) at bt_denied_inner+"));
	EXPECT_TRUE(report_has("(denied: denied by policy) at bt_inline_call+"));
	json_decref(all);
	cleanup();
}

TEST(a_call_that_kills_the_sandbox_has_frames_and_does_not_return)
{
	const char *extra[] = {"-s", "syscalls.kill=[\"getpriority\"]", "-s",
			       "audit.backtrace=\"denied\"", NULL};
	json_t *all, *recs[4], *bt;
	struct stat st;
	size_t n;

	if (!have_backtraces())
		SKIP("built without libunwind: no backtraces to check");
	ASSERT_TRUE(setup());
	EXPECT_EQ(run_logged(extra, true, "kill"), 137);
	all = load_log();
	n = find_all(all, "getpriority", recs, ARRAY_SIZE(recs));
	ASSERT_EQ(n, 1u);
	EXPECT_STREQ(str(recs[0], "decision"), "killed");
	bt = json_object_get(recs[0], "backtrace");
	EXPECT_TRUE(json_is_array(bt) && frame_index(bt, "bt_kill_call") > 0);
	/* the line after the call never ran */
	ASSERT_EQ(stat(marker, &st), 0);
	EXPECT_EQ(st.st_size, 0);
	json_decref(all);
	cleanup();
}

TEST(without_ptrace_the_record_says_why)
{
	const char *extra[] = {"-s", "audit.backtrace=\"denied\"", "-s", "tracer.ptrace=\"never\"",
			       NULL};
	json_t *all, *recs[THREADS * PER_THREAD + 8];
	size_t n;

	ASSERT_TRUE(setup());
	ASSERT_EQ(run_logged(extra, true, "calls"), PROBE_EXIT);
	all = load_log();
	n = find_all(all, "sysinfo", recs, ARRAY_SIZE(recs));
	ASSERT_GE(n, 1u);
	EXPECT_TRUE(json_object_get(recs[0], "backtrace") == NULL);
	EXPECT_TRUE(strstr(str(recs[0], "backtrace_error"), "ptrace") != NULL);
	json_decref(all);
	cleanup();
}

int main(int argc, char *argv[])
{
	if (argc == 4 && strcmp(argv[1], "probe") == 0)
		return probe(argv[2], argv[3]);
	if (!sbx_self_exe(self, sizeof(self)))
		return 1;
	return tap_run();
}
