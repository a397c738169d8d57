/* SPDX-License-Identifier: MIT */
/* The budgets' derived settings (rlimits, sampling), the filter hook for the tasks budget,
 * the disk accounting of rw mounts, on policies loaded by the real parser, and the CPU time
 * counted at a process's end. */
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "policy/policy.h"
#include "tests/unit/tap.h"
#include "tracer/budget.h"
#include "tracer/internal.h"

static Policy *load(const char *text)
{
	Policy *p = NULL;
	PolicyError e = {};

	if (policy_load_string(text, strlen(text), "test.toml", NULL, NULL, &p, &e) < 0) {
		fprintf(stderr, "# %s\n", e.message);
		return NULL;
	}
	return p;
}

TEST(no_limits_means_no_rlimits_and_no_sampling)
{
	_cleanup_(policy_freep) Policy *p = load("[sandbox]\nname = \"none\"\n");
	Budget b;

	ASSERT_TRUE(p != NULL);
	ASSERT_EQ(budget_init(&b, p, NULL, false), 0);
	EXPECT_EQ(b.rl_fsize, (uint64_t) RLIM_INFINITY);
	EXPECT_EQ(b.rl_nofile, (uint64_t) RLIM_INFINITY);
	EXPECT_EQ(b.rl_cpu_s, (uint64_t) RLIM_INFINITY);
	EXPECT_EQ(b.rl_data, (uint64_t) RLIM_INFINITY);
	EXPECT_FALSE(b.ignore_sigxfsz);
	EXPECT_EQ(b.tick_ms, 0);
	budget_done(&b);
}

TEST(derived_rlimits)
{
	_cleanup_(policy_freep) Policy *p =
		load("[limits]\nfile_size = \"1MiB\"\ndisk = \"512KiB\"\nmemory = \"256MiB\"\n"
		     "cpu_time = \"1500ms\"\nopen_files = 64\n");
	Budget b;

	ASSERT_TRUE(p != NULL);
	ASSERT_EQ(budget_init(&b, p, NULL, false), 0);
	/* one file can never grow past the disk budget */
	EXPECT_EQ(b.rl_fsize, 512 * 1024);
	EXPECT_TRUE(b.ignore_sigxfsz);
	EXPECT_EQ(b.rl_nofile, 64);
	/* the budget rounded up, plus a second */
	EXPECT_EQ(b.rl_cpu_s, 3);
	EXPECT_EQ(b.rl_data, 512ULL << 20);
	EXPECT_EQ(b.memory_hard, 320ULL << 20);
	EXPECT_GE(b.tick_ms, 1);
	budget_done(&b);
}

TEST(small_memory_budget_gets_a_256mib_data_margin)
{
	_cleanup_(policy_freep) Policy *p = load("[limits]\nmemory = \"64MiB\"\n");
	Budget b;

	ASSERT_TRUE(p != NULL);
	ASSERT_EQ(budget_init(&b, p, NULL, false), 0);
	EXPECT_EQ(b.rl_data, 320ULL << 20);
	EXPECT_EQ(b.memory_hard, 96ULL << 20);
	budget_done(&b);
}

static uint32_t slot_action(const Policy *p, int nr, bool *ret_handled)
{
	TracerFilter *f = NULL;
	uint32_t a;

	*ret_handled = false;
	if (tracer_filter_build(p, 1000, 1000, &f) < 0)
		return 0xbad;
	a = f->slots[nr].action;
	*ret_handled = f->slots[nr].handler == budget_handle_clone;
	tracer_filter_free(f);
	return a;
}

TEST(tasks_budget_routes_process_creation_to_the_supervisor)
{
	/* a ptrace stop (a signal cannot end it: no EINTR from fork), notified without ptrace */
	_cleanup_(policy_freep) Policy *with = load("[limits]\ntasks = 10\n");
	_cleanup_(policy_freep) Policy *never =
		load("[limits]\ntasks = 10\n[tracer]\nptrace = \"never\"\n");
	_cleanup_(policy_freep) Policy *without = load("[limits]\nmemory = \"1GiB\"\n");
	const int nrs[] = {SYS_clone, SYS_fork, SYS_vfork};
	bool handled = false;

	ASSERT_TRUE(with != NULL);
	ASSERT_TRUE(never != NULL);
	ASSERT_TRUE(without != NULL);
	for (size_t i = 0; i < 3; i++) {
		EXPECT_EQ(slot_action(with, nrs[i], &handled), SECCOMP_RET_TRACE);
		EXPECT_TRUE(handled);
		EXPECT_EQ(slot_action(never, nrs[i], &handled), SECCOMP_RET_USER_NOTIF);
		EXPECT_TRUE(handled);
		EXPECT_EQ(slot_action(without, nrs[i], &handled), SECCOMP_RET_ALLOW);
		EXPECT_FALSE(handled);
	}
}

TEST(tasks_budget_covers_a_logged_fork)
{
	/* [syscalls] log made fork a notified log entry, which the budget used to skip */
	_cleanup_(policy_freep) Policy *p =
		load("[limits]\ntasks = 10\n[syscalls]\nlog = [\"fork\", \"vfork\"]\n");
	bool handled = false;

	ASSERT_TRUE(p != NULL);
	EXPECT_EQ(slot_action(p, SYS_fork, &handled), SECCOMP_RET_TRACE);
	EXPECT_TRUE(handled);
	EXPECT_EQ(slot_action(p, SYS_vfork, &handled), SECCOMP_RET_TRACE);
	EXPECT_TRUE(handled);
}

TEST(tasks_budget_keeps_a_policy_denial)
{
	_cleanup_(policy_freep) Policy *p =
		load("[limits]\ntasks = 10\n[syscalls]\ndeny = [\"vfork:EPERM\"]\n");
	bool handled = false;

	ASSERT_TRUE(p != NULL);
	EXPECT_EQ(slot_action(p, SYS_vfork, &handled), SECCOMP_RET_USER_NOTIF);
	EXPECT_FALSE(handled);
}

TEST(disk_growth_of_rw_mounts_is_measured_from_the_start)
{
	const char *tmp = getenv("TMPDIR");
	char dir[400], text[600], path[600], msg[256];
	char buf[65536];
	Policy *p;
	Budget b;
	int fd;

	snprintf(dir, sizeof(dir), "%s/budget-unit-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ASSERT_TRUE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/before", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	ASSERT_TRUE(fd >= 0);
	memset(buf, 'a', sizeof(buf));
	for (int i = 0; i < 16; i++)
		ASSERT_EQ(write(fd, buf, sizeof(buf)), (ssize_t) sizeof(buf));
	fsync(fd);
	close(fd);

	snprintf(text, sizeof(text),
		 "[limits]\ndisk = \"512KiB\"\n[[mount]]\npath = \"/w\"\nsource = \"%s\"\n"
		 "mode = \"rw\"\n",
		 dir);
	p = load(text);
	ASSERT_TRUE(p != NULL);
	ASSERT_EQ(budget_init(&b, p, NULL, false), 0);
	/* the 1 MiB already there is not counted */
	EXPECT_GE(b.disk_baseline, 1024 * 1024);
	b.disk_next_ns = 0;
	EXPECT_TRUE(budget_sample(&b, getpid(), msg, sizeof(msg)) == NULL);
	EXPECT_EQ(b.disk_used, 0);

	snprintf(path, sizeof(path), "%s/after", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	ASSERT_TRUE(fd >= 0);
	for (int i = 0; i < 12; i++)
		ASSERT_EQ(write(fd, buf, sizeof(buf)), (ssize_t) sizeof(buf));
	fsync(fd);
	close(fd);
	b.disk_next_ns = 0;
	/* used up: from now on creation and writes fail; the run goes on within the slack */
	EXPECT_TRUE(budget_sample(&b, getpid(), msg, sizeof(msg)) == NULL);
	EXPECT_GE(b.disk_used, 12 * 65536);
	EXPECT_TRUE(atomic_load(&b.disk_full));
	EXPECT_TRUE(b.disk_full_new);
	EXPECT_EQ(budget_disk_slack(512 * 1024), 1024 * 1024);

	/* past the budget and its slack (1 MiB): stopped */
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	ASSERT_TRUE(fd >= 0);
	for (int i = 0; i < 16; i++)
		ASSERT_EQ(write(fd, buf, sizeof(buf)), (ssize_t) sizeof(buf));
	fsync(fd);
	close(fd);
	b.disk_next_ns = 0;
	EXPECT_STREQ(budget_sample(&b, getpid(), msg, sizeof(msg)), "disk");
	EXPECT_GE(b.disk_used, 28 * 65536);
	EXPECT_TRUE(strstr(msg, "disk limit of 512KiB reached") != NULL);
	budget_done(&b);
	policy_free(p);

	unlink(path);
	snprintf(path, sizeof(path), "%s/before", dir);
	unlink(path);
	rmdir(dir);
}

TEST(sizes_in_messages)
{
	char buf[32];

	budget_format_size(512, buf, sizeof(buf));
	EXPECT_STREQ(buf, "512B");
	budget_format_size(256ULL << 20, buf, sizeof(buf));
	EXPECT_STREQ(buf, "256MiB");
	budget_format_size(3ULL << 29, buf, sizeof(buf));
	EXPECT_STREQ(buf, "1.5GiB");
}

/* Burns ms of CPU, then _exit(0); a parent's child (with children > 0, each burning
 * child_ms and waited for) */
static pid_t burner(long ms, int children, long child_ms)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct timespec t0, t;
		volatile uint64_t x = 0;
		long used_ms;

		for (int i = 0; i < children; i++) {
			pid_t c = burner(child_ms, 0, 0);

			(void) waitpid(c, NULL, 0);
		}
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
		do {
			for (int k = 0; k < 10000; k++)
				x++;
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
			used_ms =
				(t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		} while (used_ms < ms);
		_exit(0);
	}
	return pid;
}

/* The tracer thread's view of an end (tracer/ptrace.c): the zombie read with WNOWAIT and the
 * rusage of that wait, then reaped. Here the test is the parent, which the kernel treats
 * alike for this (wait_task_zombie with WNOWAIT). */
static uint64_t ended_us(Budget *b, pid_t pid)
{
	struct rusage ru;
	siginfo_t si = {};
	uint64_t before = atomic_load(&b->cpu_ended_us);

	if (syscall(SYS_waitid, P_PID, pid, &si, WEXITED | WNOWAIT, &ru) < 0)
		return 0;
	budget_task_ended(b, pid, &ru);
	(void) waitpid(pid, NULL, 0);
	return atomic_load(&b->cpu_ended_us) - before;
}

/* Issue 24, item 7: an 8 ms child reads 0 clock ticks in /proc/PID/stat (each value rounded
 * down); the rusage gives it in microseconds. A parent's cutime (its waited children) is
 * not its own time: the children are counted at their own ends. */
TEST(ended_process_counts_its_own_time_in_microseconds)
{
	_cleanup_(policy_freep) Policy *p = load("[limits]\ncpu_time = \"10s\"\n");
	uint64_t one, parent;
	Budget b;

	ASSERT_TRUE(p != NULL);
	ASSERT_EQ(budget_init(&b, p, NULL, false), 0);
	ASSERT_TRUE(budget_count_ends(&b));
	one = ended_us(&b, burner(8, 0, 0));
	EXPECT_GE(one, 8000);
	EXPECT_LT(one, 60000);
	/* 40 ms of its own, 4 × 30 ms in waited children (their ends are not ours to see
	 * here): at most 2 ticks of the cutime's rounding on top of its own */
	parent = ended_us(&b, burner(40, 4, 30));
	EXPECT_GE(parent, 40000);
	EXPECT_LT(parent, 40000 + 20000 + 30000);
	fprintf(stderr, "# 8 ms child: %llu us; 40 ms parent of 4 x 30 ms: %llu us\n",
		(unsigned long long) one, (unsigned long long) parent);
	budget_done(&b);
}

int main(void)
{
	return tap_run();
}
