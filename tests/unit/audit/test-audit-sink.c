/* SPDX-License-Identifier: MIT */
/* The JSON Lines sink without a supervisor: records in, lines out, parsed back with jansson. */
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "audit/audit.h"
#include "policy/policy.h"
#include "syscalls/syscalls.h"
#include "tests/unit/tap.h"

static char path[512];

static Audit *open_log(unsigned events)
{
	const char *t = getenv("TMPDIR");
	AuditOptions o = {.log_fd = -1, .events = events};
	Audit *a = NULL;
	int fd;

	snprintf(path, sizeof(path), "%s/audit-sink-XXXXXX", t && *t ? t : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	o.log_fd = fd; /* taken over */
	if (audit_open(&o, &a) < 0)
		return NULL;
	return a;
}

static json_t *read_log(void)
{
	json_t *all = json_array();
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;

	while (f && getline(&line, &cap, f) > 0) {
		json_t *r = json_loads(line, 0, NULL);

		json_array_append_new(all, r ? r : json_string("unparsable"));
	}
	free(line);
	if (f)
		fclose(f);
	unlink(path);
	return all;
}

TEST(nothing_requested_is_null)
{
	AuditOptions o = {.log_fd = -1};
	Audit *a = (Audit *) 1;

	EXPECT_EQ(audit_open(&o, &a), 0);
	EXPECT_TRUE(a == NULL);
	/* every entry point accepts NULL */
	audit_syscall(NULL, &(AuditRecord){.nr = 1});
	audit_budget_event(NULL, "memory", 1, 2, "bytes", "kill", 0);
	EXPECT_FALSE(audit_wants_syscall(NULL, __NR_kill, true, true));
	EXPECT_EQ(audit_close(NULL), 0);
}

TEST(unwritable_path_fails)
{
	AuditOptions o = {.log_fd = -1, .log_path = "/nonexistent-dir-sbxtrace/x.jsonl"};
	Audit *a = NULL;

	EXPECT_EQ(audit_open(&o, &a), -ENOENT);
	EXPECT_TRUE(a == NULL);
}

TEST(records_round_trip)
{
	Audit *a = open_log(AUDIT_EVENT_ALL);
	char *argv[] = {"ls", "-l", "bad\n\xff", NULL};
	AuditRecord r = {
		.pid = getpid(),
		.tid = getpid(),
		.nr = __NR_openat,
		.args = {(uint64_t) -100, 0x1000, 02000000 | 01, 0644},
		.data = {[1] = {.str = "rel/a.txt"}},
		.path = "/workspace/rel/a.txt",
		.host_path = "/home/u/ws/rel/a.txt",
		.decision = AUDIT_EMULATED,
		.ret = 7,
		.latency_ns = 12345,
		.ip = 0x7f00,
		.outside_libc = 0,
	};
	json_t *all, *rec, *args;

	ASSERT_TRUE(a != NULL);
	audit_run_start(a, "preset:standard", argv, "emulated", "tracer.kernel_view = false");
	audit_syscall(a, &r);
	r.nr = __NR_kill;
	r.args[0] = 1;
	r.args[1] = SIGKILL;
	r.decision = AUDIT_DENIED;
	r.error = EPERM;
	r.why = "outside the tree";
	r.outside_libc = 1;
	r.path = NULL;
	audit_syscall(a, &r);
	audit_process_exit(a, 42, -1, SIGKILL);
	audit_budget_event(a, "memory", 100, 200, "bytes", "kill", 0);
	audit_ratchet_event(a, 42, "/data/s.pem", "secret", "full", "none", 2);
	EXPECT_EQ(audit_close(a), 0);

	all = read_log();
	ASSERT_EQ(json_array_size(all), 7u);
	rec = json_array_get(all, 0);
	EXPECT_STREQ(json_string_value(json_object_get(rec, "type")), "run");
	/* child bytes that are not UTF-8 become U+FFFD: the line stays valid JSON */
	EXPECT_STREQ(json_string_value(json_array_get(json_object_get(rec, "argv"), 2)),
		     "bad\n\xef\xbf\xbd");
	EXPECT_STREQ(json_string_value(json_object_get(rec, "view")), "emulated");
	EXPECT_STREQ(json_string_value(json_object_get(rec, "view_reason")),
		     "tracer.kernel_view = false");

	/* a "seen" process event precedes the first record of a process */
	rec = json_array_get(all, 1);
	EXPECT_STREQ(json_string_value(json_object_get(rec, "event")), "seen");
	EXPECT_EQ(json_integer_value(json_object_get(rec, "pid")), getpid());

	rec = json_array_get(all, 2);
	args = json_object_get(rec, "args");
	EXPECT_EQ(json_integer_value(json_object_get(rec, "v")), 1);
	EXPECT_STREQ(json_string_value(json_object_get(rec, "syscall")), "openat");
	EXPECT_STREQ(json_string_value(json_object_get(rec, "category")), "file");
	EXPECT_STREQ(json_string_value(json_object_get(args, "dirfd")), "AT_FDCWD");
	EXPECT_STREQ(json_string_value(json_object_get(args, "path")), "rel/a.txt");
	EXPECT_STREQ(json_string_value(json_object_get(args, "flags")), "O_WRONLY|O_CLOEXEC");
	EXPECT_STREQ(json_string_value(json_object_get(args, "mode")), "0644");
	EXPECT_STREQ(json_string_value(json_object_get(rec, "path")), "/workspace/rel/a.txt");
	EXPECT_STREQ(json_string_value(json_object_get(rec, "host_path")), "/home/u/ws/rel/a.txt");
	EXPECT_STREQ(json_string_value(json_object_get(rec, "decision")), "emulated");
	EXPECT_EQ(json_integer_value(json_object_get(rec, "result")), 7);
	EXPECT_EQ(json_integer_value(json_object_get(rec, "latency_us")), 12);
	EXPECT_STREQ(json_string_value(json_object_get(rec, "ip")), "0x7f00");
	EXPECT_TRUE(json_is_false(json_object_get(rec, "outside_libc")));
	EXPECT_TRUE(json_object_get(rec, "errno") == NULL);

	rec = json_array_get(all, 3);
	args = json_object_get(rec, "args");
	EXPECT_STREQ(json_string_value(json_object_get(rec, "decision")), "denied");
	EXPECT_STREQ(json_string_value(json_object_get(rec, "errno")), "EPERM");
	EXPECT_STREQ(json_string_value(json_object_get(rec, "why")), "outside the tree");
	EXPECT_EQ(json_integer_value(json_object_get(rec, "result")), -1);
	EXPECT_EQ(json_integer_value(json_object_get(args, "pid")), 1);
	EXPECT_STREQ(json_string_value(json_object_get(args, "sig")), "SIGKILL");
	EXPECT_TRUE(json_is_true(json_object_get(rec, "outside_libc")));
	EXPECT_TRUE(json_object_get(rec, "path") == NULL);

	rec = json_array_get(all, 4);
	EXPECT_STREQ(json_string_value(json_object_get(rec, "event")), "exit");
	EXPECT_STREQ(json_string_value(json_object_get(rec, "signal")), "SIGKILL");
	EXPECT_TRUE(json_is_null(json_object_get(rec, "exit_code")));
	rec = json_array_get(all, 5);
	EXPECT_STREQ(json_string_value(json_object_get(rec, "type")), "budget");
	EXPECT_EQ(json_integer_value(json_object_get(rec, "used")), 200);
	rec = json_array_get(all, 6);
	EXPECT_STREQ(json_string_value(json_object_get(rec, "type")), "ratchet");
	EXPECT_STREQ(json_string_value(json_object_get(rec, "to")), "none");
	EXPECT_EQ(json_integer_value(json_object_get(rec, "sockets_shut")), 2);
	json_decref(all);
}

TEST(events_filter_denied_only)
{
	Audit *a = open_log(AUDIT_EVENT_DENIED);
	AuditRecord r = {.pid = getpid(), .tid = getpid(), .nr = __NR_kill, .args = {1, 0}};
	json_t *all;

	ASSERT_TRUE(a != NULL);
	EXPECT_FALSE(audit_wants_syscall(a, __NR_kill, false, false));
	EXPECT_TRUE(audit_wants_syscall(a, __NR_kill, true, false));
	EXPECT_TRUE(audit_wants_syscall(a, __NR_kill, false, true)); /* policy "log" */
	r.decision = AUDIT_EMULATED;
	audit_syscall(a, &r);
	r.decision = AUDIT_DENIED;
	r.error = EPERM;
	audit_syscall(a, &r);
	audit_ratchet_event(a, 1, "/x", "secret", "full", "none", 0);
	EXPECT_EQ(audit_close(a), 0);
	all = read_log();
	/* only the denial: no "seen" (process not selected), no ratchet */
	ASSERT_EQ(json_array_size(all), 1u);
	EXPECT_STREQ(json_string_value(json_object_get(json_array_get(all, 0), "decision")),
		     "denied");
	json_decref(all);
}

TEST(many_records_all_written)
{
	Audit *a = open_log(AUDIT_EVENT_ALL);
	AuditRecord r = {.pid = getpid(), .tid = getpid(), .nr = __NR_kill, .args = {1, 0}};
	json_t *all;
	size_t bad = 0, i;
	json_t *rec;

	ASSERT_TRUE(a != NULL);
	/* well past the flush threshold, so the writer thread swaps buffers many times */
	for (int k = 0; k < 20000; k++) {
		r.args[0] = (uint64_t) k;
		audit_syscall(a, &r);
	}
	EXPECT_EQ(audit_close(a), 0);
	all = read_log();
	ASSERT_EQ(json_array_size(all), 20001u); /* + the seen event */
	json_array_foreach(all, i, rec)
	{
		if (i == 0)
			continue;
		if (json_integer_value(json_object_get(json_object_get(rec, "args"), "pid")) !=
		    (json_int_t) (i - 1))
			bad++;
	}
	EXPECT_EQ(bad, 0u);
	json_decref(all);
}

int main(void)
{
	/* the layouts come from the syscall table */
	syscalls_audit_init();
	return tap_run();
}
