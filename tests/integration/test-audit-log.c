/* SPDX-License-Identifier: MIT */
/*
 * The audit log and --trace, end to end: this program runs itself as the probe under
 * `sbxtrace run --audit LOG` (argv[1] == "probe"), makes known syscalls — a kill of itself
 * through libc and through an inline `syscall` instruction, a kill of its own child, a denied
 * sysinfo(), an open of a file — and the test then checks the records field by field.
 * Records that depend on parts wired by others (the open through the file-system view, the
 * execve) are checked when present and reported as a TAP comment when not.
 */
#include <jansson.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "tests/helpers/sbx-test.h"
#include "tests/unit/tap.h"
#include "tests/integration/audit-probe.h"

#define PROBE_EXIT 3

/* ---- the probe, inside the sandbox ---- */

static long inline_kill(long pid, long sig)
{
	long r;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "0"((long) SYS_kill), "D"(pid), "S"(sig)
			 : "rcx", "r11", "memory");
	return r;
}

static int probe(const char *file)
{
	pid_t child;
	int fd, status;

	if (kill(getpid(), 0) != 0)
		return 10;
	if (inline_kill(getpid(), 0) != 0)
		return 11;
	child = fork();
	if (child < 0)
		return 12;
	if (child == 0) {
		for (;;)
			pause();
	}
	if (kill(child, SIGKILL) != 0)
		return 13;
	if (waitpid(child, &status, 0) != child || !WIFSIGNALED(status))
		return 14;
	/* denied by the test's policy override */
	if (syscall(SYS_sysinfo, NULL) != -1 || errno != EACCES)
		return 15;
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 16;
	close(fd);
	printf("child=%d\n", (int) child);
	return PROBE_EXIT;
}

/* ---- the test, outside ---- */

/* The first record of type with key == value (strings), or NULL. */
static json_t *find(json_t *all, const char *type, const char *key, const char *value)
{
	size_t i;
	json_t *r;

	json_array_foreach(all, i, r)
	{
		if (!json_is_object(r) || strcmp(str(r, "type"), type) != 0)
			continue;
		if (!key || strcmp(str(r, key), value) == 0)
			return r;
	}
	return NULL;
}

static json_t *find_kill(json_t *all, const char *sig, bool outside)
{
	size_t i;
	json_t *r;

	json_array_foreach(all, i, r)
	{
		json_t *args = json_object_get(r, "args");

		if (strcmp(str(r, "syscall"), "kill") != 0)
			continue;
		if (strcmp(str(args, "sig"), sig) != 0)
			continue;
		if (json_is_true(json_object_get(r, "outside_libc")) == outside)
			return r;
	}
	return NULL;
}

TEST(records_field_by_field)
{
	json_t *all, *r, *args;
	pid_t main_pid;

	ASSERT_TRUE(setup());
	ASSERT_EQ(run_logged(NULL, true, NULL), PROBE_EXIT);
	all = load_log();
	ASSERT_TRUE(json_array_size(all) >= 5);
	EXPECT_TRUE(find(all, "syscall", NULL, NULL) != NULL);

	/* every record: the version and the common fields */
	{
		size_t i;

		json_array_foreach(all, i, r)
		{
			EXPECT_TRUE(json_is_object(r));
			EXPECT_EQ(json_integer_value(json_object_get(r, "v")), 1);
			EXPECT_TRUE(json_is_string(json_object_get(r, "time")));
			EXPECT_TRUE(json_is_integer(json_object_get(r, "t_us")));
		}
	}

	/* run start and end */
	r = find(all, "run", "event", "start");
	ASSERT_TRUE(r != NULL);
	EXPECT_STREQ(json_string_value(json_array_get(json_object_get(r, "argv"), 1)), "probe");
	r = find(all, "run", "event", "end");
	ASSERT_TRUE(r != NULL);
	EXPECT_EQ(json_integer_value(json_object_get(r, "exit_code")), PROBE_EXIT);
	EXPECT_GE(json_integer_value(json_object_get(r, "denied")), 1);

	/* the command's start and exit */
	r = find(all, "process", "event", "start");
	ASSERT_TRUE(r != NULL);
	main_pid = (pid_t) json_integer_value(json_object_get(r, "pid"));
	EXPECT_TRUE(main_pid > 0);
	EXPECT_STREQ(json_string_value(json_array_get(json_object_get(r, "argv"), 2)), marker);
	r = find(all, "process", "event", "exit");
	ASSERT_TRUE(r != NULL);
	EXPECT_EQ(json_integer_value(json_object_get(r, "pid")), main_pid);
	EXPECT_EQ(json_integer_value(json_object_get(r, "exit_code")), PROBE_EXIT);
	r = find(all, "process", "event", "seen");
	ASSERT_TRUE(r != NULL);
	EXPECT_EQ(json_integer_value(json_object_get(r, "pid")), main_pid);

	/* kill(self, 0) through libc: continued in the kernel, inside libc */
	r = find_kill(all, "0", false);
	ASSERT_TRUE(r != NULL);
	EXPECT_STREQ(str(r, "decision"), "allowed");
	EXPECT_STREQ(str(r, "category"), "signal");
	EXPECT_EQ(json_integer_value(json_object_get(r, "pid")), main_pid);
	EXPECT_EQ(json_integer_value(json_object_get(r, "tid")), main_pid);
	EXPECT_EQ(json_integer_value(json_object_get(json_object_get(r, "args"), "pid")), main_pid);
	EXPECT_TRUE(json_is_null(json_object_get(r, "result")));
	EXPECT_TRUE(json_is_false(json_object_get(r, "outside_libc")));
	EXPECT_TRUE(json_is_integer(json_object_get(r, "latency_us")));
	EXPECT_TRUE(strncmp(str(r, "ip"), "0x", 2) == 0);
	EXPECT_TRUE(str(r, "comm")[0] != 0);

	/* the same call from an inline syscall instruction: flagged */
	r = find_kill(all, "0", true);
	ASSERT_TRUE(r != NULL);
	EXPECT_STREQ(str(r, "decision"), "allowed");

	/* kill(child, SIGKILL): emulated through a pidfd, result 0 */
	r = find_kill(all, "SIGKILL", false);
	ASSERT_TRUE(r != NULL);
	args = json_object_get(r, "args");
	EXPECT_STREQ(str(r, "decision"), "emulated");
	EXPECT_EQ(json_integer_value(json_object_get(r, "result")), 0);
	EXPECT_TRUE(json_object_get(r, "errno") == NULL);
	EXPECT_NE(json_integer_value(json_object_get(args, "pid")), main_pid);
	EXPECT_TRUE(json_integer_value(json_object_get(args, "pid")) > 0);

	/* sysinfo: denied with the policy's errno */
	r = find(all, "syscall", "syscall", "sysinfo");
	ASSERT_TRUE(r != NULL);
	EXPECT_STREQ(str(r, "decision"), "denied");
	EXPECT_STREQ(str(r, "errno"), "EACCES");
	EXPECT_EQ(json_integer_value(json_object_get(r, "result")), -1);
	EXPECT_STREQ(str(r, "why"), "denied by policy");
	EXPECT_STREQ(str(r, "category"), "syscall");

	/* the open of the marker: only once path syscalls go through the supervisor */
	r = NULL;
	{
		size_t i;
		json_t *x;

		json_array_foreach(all, i, x)
		{
			args = json_object_get(x, "args");
			if (strncmp(str(x, "syscall"), "open", 4) == 0 &&
			    strcmp(str(args, "path"), marker) == 0)
				r = x;
		}
	}
	if (!r) {
		printf("# no open record: path syscalls are not interposed in this build\n");
	} else {
		args = json_object_get(r, "args");
		EXPECT_STREQ(str(r, "category"), "file");
		EXPECT_STREQ(str(args, "flags"), "O_RDONLY|O_CLOEXEC");
		EXPECT_STREQ(str(r, "decision"), "emulated");
		EXPECT_TRUE(json_integer_value(json_object_get(r, "result")) >= 3);
		EXPECT_STREQ(str(r, "path"), marker);
		EXPECT_TRUE(str(r, "host_path")[0] == '/');
	}

	/* the exec of the probe, with its argv, once execve is interposed */
	r = find(all, "syscall", "syscall", "execve");
	if (!r) {
		printf("# no execve record: exec is not interposed in this build\n");
	} else {
		args = json_object_get(r, "args");
		EXPECT_STREQ(str(r, "category"), "exec");
		EXPECT_STREQ(json_string_value(json_array_get(json_object_get(args, "argv"), 1)),
			     "probe");
	}
	json_decref(all);
	cleanup();
}

static bool file_has(const char *path, const char *needle)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "re");
	bool found;

	if (!f)
		return false;
	text = calloc(1, 1 << 20);
	if (text)
		len = fread(text, 1, (1 << 20) - 1, f);
	fclose(f);
	found = text && len && strstr(text, needle);
	if (!found)
		printf("# '%s' not in:\n# %.2000s\n", needle, text ? text : "");
	free(text);
	return found;
}

TEST(trace_lines_on_stderr)
{
	const char *extra[] = {"--trace", NULL};
	char want[128];
	json_t *all, *r;
	long child;

	ASSERT_TRUE(setup());
	ASSERT_EQ(run_logged(extra, true, NULL), PROBE_EXIT);
	all = load_log();
	r = find_kill(all, "SIGKILL", false);
	ASSERT_TRUE(r != NULL);
	child = (long) json_integer_value(json_object_get(json_object_get(r, "args"), "pid"));
	snprintf(want, sizeof(want), "kill(%ld, SIGKILL) = 0\n", child);
	EXPECT_TRUE(file_has(err_path, want));
	EXPECT_TRUE(file_has(err_path, "= -1 EACCES (denied: denied by policy)\n"));
	EXPECT_TRUE(file_has(err_path, "= ? (allowed) [outside libc]\n"));
	EXPECT_TRUE(file_has(err_path, "+++ exited with 3 +++\n"));
	json_decref(all);
	cleanup();
}

TEST(events_filter)
{
	const char *extra[] = {"-s", "audit.events=[\"denied\"]", NULL};
	json_t *all, *r;
	size_t i;

	ASSERT_TRUE(setup());
	ASSERT_EQ(run_logged(extra, true, NULL), PROBE_EXIT);
	all = load_log();
	EXPECT_TRUE(find(all, "syscall", "syscall", "sysinfo") != NULL);
	EXPECT_TRUE(find(all, "run", "event", "end") != NULL);
	json_array_foreach(all, i, r)
	{
		if (strcmp(str(r, "type"), "syscall") == 0)
			EXPECT_STREQ(str(r, "decision"), "denied");
		EXPECT_TRUE(strcmp(str(r, "type"), "process") != 0);
	}
	json_decref(all);
	cleanup();
}

TEST(disassembly_of_denied_calls)
{
	const char *extra[] = {"-s", "audit.disassembly=\"denied\"", NULL};
	json_t *all, *r, *dis, *insn;
	unsigned long long ip, site = 0;
	size_t i;

	if (!HAVE_CAPSTONE)
		SKIP("built without capstone: no disassembly to check");
	ASSERT_TRUE(setup());
	ASSERT_EQ(run_logged(extra, true, NULL), PROBE_EXIT);
	all = load_log();
	r = find(all, "syscall", "syscall", "sysinfo");
	ASSERT_TRUE(r != NULL);
	ip = strtoull(str(r, "ip"), NULL, 16);
	dis = json_object_get(r, "disassembly");
	ASSERT_TRUE(json_is_array(dis));
	EXPECT_GE(json_array_size(dis), 2u);
	json_array_foreach(dis, i, insn)
	{
		if (json_is_true(json_object_get(insn, "site"))) {
			site = strtoull(str(insn, "addr"), NULL, 16);
			EXPECT_STREQ(str(insn, "insn"), "syscall");
		}
	}
	/* the instruction pointer is just past the 2-byte syscall instruction */
	EXPECT_EQ(site, ip - 2);
	/* allowed calls are not selected */
	r = find_kill(all, "0", false);
	ASSERT_TRUE(r != NULL);
	EXPECT_TRUE(json_object_get(r, "disassembly") == NULL);
	json_decref(all);
	cleanup();
}

TEST(budget_record)
{
	const char *extra[] = {"-s", "limits.cpu_time=200ms", NULL};
	json_t *all, *r;

	ASSERT_TRUE(setup());
	setenv("SBX_AUDIT_SPIN", "1", 1);
	EXPECT_NE(run_logged(extra, true, NULL), PROBE_EXIT);
	unsetenv("SBX_AUDIT_SPIN");
	all = load_log();
	r = find(all, "budget", "budget", "cpu_time");
	ASSERT_TRUE(r != NULL);
	EXPECT_EQ(json_integer_value(json_object_get(r, "limit")), 200);
	EXPECT_TRUE(json_integer_value(json_object_get(r, "used")) > 200);
	EXPECT_STREQ(str(r, "unit"), "ms");
	EXPECT_STREQ(str(r, "action"), "terminate");
	r = find(all, "run", "event", "end");
	ASSERT_TRUE(r != NULL);
	EXPECT_STREQ(str(r, "killed_by"), "cpu_time");
	json_decref(all);
	cleanup();
}

TEST(unwritable_log_is_an_error_before_start)
{
	struct stat st;

	ASSERT_TRUE(setup());
	snprintf(log_path, sizeof(log_path), "%s/no-such-dir/audit.jsonl", dir);
	/* the probe would fail to open it too: remove the marker to see whether it ran */
	unlink(marker);
	EXPECT_EQ(run_logged(NULL, true, NULL), 125);
	EXPECT_TRUE(file_has(err_path, "cannot open the audit log"));
	EXPECT_TRUE(stat(log_path, &st) < 0);
	snprintf(log_path, sizeof(log_path), "%s/audit.jsonl", dir);
	cleanup();
}

int main(int argc, char *argv[])
{
	ssize_t n;

	if (argc == 3 && strcmp(argv[1], "probe") == 0) {
		if (getenv("SBX_AUDIT_SPIN")) /* until the cpu_time budget stops it */
			for (volatile unsigned long i = 0;; i++)
				;
		return probe(argv[2]);
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = 0;
	return tap_run();
}
