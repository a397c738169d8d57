/* SPDX-License-Identifier: MIT */
/* Threads making notified syscalls at once, fork/exec chains, many short-lived processes,
 * fork and emulated calls while SIGCHLD handlers without SA_RESTART run. */
#include <limits.h>
#include <sys/resource.h>

#include "common/util.h"
#include "tests/helpers/sbx-test.h"
#include "tests/unit/tap.h"
#include "tracer/internal.h" /* TRACER_MAX_WORKERS */

TEST(sixteen_threads_get_correct_results)
{
	const char *cmd[] = {sbx_probe(), "threads", NULL};
	char pid[32];

	/* our own pid: outside the tree, so kill() of it must fail with EPERM */
	snprintf(pid, sizeof(pid), "%d", (int) getpid());
	setenv("SBX_OUTSIDE_PID", pid, 1);
	EXPECT_EQ(sbx_run(NULL, cmd, NULL, NULL, 0), 0);
}

TEST(fork_exec_chain_five_deep)
{
	const char *cmd[] = {sbx_probe(), "chain", "5", NULL};

	EXPECT_EQ(sbx_run(NULL, cmd, NULL, NULL, 0), 42);
}

TEST(thousand_short_lived_processes)
{
	const char *cmd[] = {sbx_probe(), "many", "1000", NULL};

	EXPECT_EQ(sbx_run(NULL, cmd, NULL, NULL, 0), 0);
}

TEST(shell_pipeline_and_background_job)
{
	const char *cmd[] = {"sh", "-c", "sleep 0.1 & printf 'a\\nb\\n' | wc -l; wait", NULL};
	char out[64];

	EXPECT_EQ(sbx_run(NULL, cmd, NULL, out, sizeof(out)), 0);
	EXPECT_EQ(atoi(out), 2);
}

/* The command exits and leaves processes behind (its background job, a busy child, a
 * setsid()+double-forked daemon): the run ends with the command's status and with none of
 * them alive. The keeper's end skips its walk of /proc only when it has no child left; here
 * all three were reparented to it. */
TEST(processes_left_behind_end_with_the_command)
{
	char *dir = sbx_tmpdir(), file[600], script[1400];
	const char *cmd[] = {"sh", "-c", script, NULL};

	ASSERT_TRUE(dir != NULL);
	snprintf(file, sizeof(file), "%s/pids", dir);
	snprintf(script, sizeof(script),
		 "'%s' daemon '%s' & while [ ! -s '%s' ]; do sleep 0.01; done; exit 7", sbx_probe(),
		 file, file);
	EXPECT_EQ(sbx_run(NULL, cmd, NULL, NULL, 0), 7);
	/* the supervisor returns only after the tree is gone: no waiting needed */
	EXPECT_EQ(sbx_daemon_pids_alive(file), 0);
	rmdir(dir);
}

/*
 * A tasks budget sends every fork to the supervisor. If that is a seccomp notification, a
 * SIGCHLD that arrives before the supervisor has read it ends the wait with EINTR for a
 * handler without SA_RESTART: natively fork never fails so. 2000 forks saw 40-120 such
 * failures before the fix (docs/budgets.md). Once with the test policy (the emulated view),
 * once with `standard` (the view in the kernel where user namespaces allow it).
 */
static int forkstorm(bool standard)
{
	const char *argv[16], *policy = sbx_env("SBX_POLICY");
	char *ws = NULL, probe[PATH_MAX], cmd[PATH_MAX + 64];
	size_t n = 0;
	int code;

	snprintf(probe, sizeof(probe), "%s", sbx_probe());
	if (standard) {
		ws = sbx_tmpdir();
		if (!ws)
			return -1;
		/* the build tree is not in standard's view: a copy in the workspace */
		snprintf(cmd, sizeof(cmd), "cp '%s' '%s/sbx-probe'", probe, ws);
		if (system(cmd) != 0)
			return -1;
		snprintf(probe, sizeof(probe), "/workspace/sbx-probe");
	}
	argv[n++] = sbx_env("SBXTRACE");
	argv[n++] = "run";
	argv[n++] = "-s";
	argv[n++] = "limits.tasks=64";
	if (ws) {
		argv[n++] = "-w";
		argv[n++] = ws;
		policy = "standard";
	}
	argv[n++] = policy;
	argv[n++] = "--";
	argv[n++] = probe;
	argv[n++] = "forkstorm";
	argv[n++] = "2000";
	argv[n] = NULL;
	code = sbx_run_argv(argv, NULL);
	if (ws) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", ws);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", ws);
	}
	return code;
}

TEST(fork_under_a_tasks_budget_never_fails_with_eintr)
{
	EXPECT_EQ(forkstorm(false), 0);
	EXPECT_EQ(forkstorm(true), 0);
}

/*
 * The same race for an emulated open or stat: a SIGCHLD that arrives before the supervisor
 * has read the notification ended the call with EINTR (12 000 calls saw 20-45 of them); the
 * tracer makes it restart instead (tracer/ptrace.c, restart_unreceived). The test policy's
 * view is emulated; the tracer is on here for that fix alone.
 */
TEST(emulated_calls_never_fail_with_eintr)
{
	/* Runs on every kernel. Before 6.17 the tracer leaves these calls alone (the kernel could
	 * turn a reply that raced the signal into ERESTARTSYS of a call that was done, and uname
	 * cannot tell a stable kernel with the fix backported), so there an EINTR is the known
	 * defect, reported as TODO rather than hidden by a skip: Debian 12's 6.1 runs it too. */
	if (!kernel_at_least(6, 17))
		TAP_TODO("before 6.17 the tracer does not restart calls a signal interrupted "
			 "(tracer/ptrace.c, restart_unreceived)");
	const char *argv[] = {sbx_env("SBXTRACE"),
			      "run",
			      "-s",
			      "tracer.ptrace=\"always\"",
			      sbx_env("SBX_POLICY"),
			      "--",
			      sbx_probe(),
			      "sigchld-calls",
			      "300",
			      sbx_env("SBX_POLICY"),
			      NULL};

	EXPECT_EQ(sbx_run_argv(argv, NULL), 0);
}

/*
 * Connects that wait (a unix listener's backlog full) run in the supervisor, which connects
 * for the caller. The other calls of the tree must still be answered meanwhile: the thread
 * that took such a connect hands the lead on when it outlasts its grace (tracer/dispatch.c,
 * "Leader and followers"); with more waiting connects than the pool has threads
 * (TRACER_MAX_WORKERS), the rest are queued and the leader stays free. Without either, the
 * probe's stat calls wait for the connects, which wait for the probe: the wall-time limit
 * ends the run (exit 124).
 */
static int connects_wait(int threads)
{
	char *dir = sbx_tmpdir(), n[16];
	const char *argv[] = {sbx_env("SBXTRACE"),
			      "run",
			      "-s",
			      "limits.wall_time=\"60s\"",
			      sbx_env("SBX_POLICY"),
			      "--",
			      sbx_probe(),
			      "connect-blocked",
			      dir,
			      n,
			      NULL};

	if (!dir)
		return -1;
	snprintf(n, sizeof(n), "%d", threads);
	return sbx_run_argv(argv, NULL);
}

TEST(a_connect_that_waits_does_not_hold_up_the_other_calls)
{
	EXPECT_EQ(connects_wait(1), 0);
}

TEST(twenty_waiting_connects_do_not_hold_up_the_other_calls)
{
	EXPECT_EQ(connects_wait(20), 0);
}

TEST(more_waiting_connects_than_pool_threads_do_not_hold_up_the_other_calls)
{
	/* Where pidfd_getfd is refused the supervisor holds the tree's sockets and the
	 * probe's accept is itself a call that needs a pool thread: with every thread taken
	 * by a waiting connect, it waits in the queue behind the connects it would let through
	 * (docs/supervisor.md, "Notifications"). */
	if (!pidfd_getfd_usable())
		SKIP("pidfd_getfd is refused here: the supervisor's accept would queue behind the "
		     "connects it drains");
	EXPECT_EQ(connects_wait(TRACER_MAX_WORKERS + 8), 0);
}

/* The supervisor raises its own soft RLIMIT_NOFILE (it holds descriptors for the tree's
 * waiting calls); the tree gets the caller's soft limit back (tracer/budget.c). An unusual
 * soft limit of ours, then `ulimit -Sn` inside. */
TEST(the_tree_gets_the_callers_soft_open_files_limit)
{
	const char *cmd[] = {"sh", "-c", "ulimit -Sn; ulimit -Hn", NULL};
	struct rlimit old, rl;
	char out[128], want[64];

	ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
	if (old.rlim_max != RLIM_INFINITY && old.rlim_max < 600)
		SKIP("the hard RLIMIT_NOFILE is below 600 here");
	rl = (struct rlimit){.rlim_cur = 517, .rlim_max = old.rlim_max};
	ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
	EXPECT_EQ(sbx_run(NULL, cmd, NULL, out, sizeof(out)), 0);
	(void) setrlimit(RLIMIT_NOFILE, &old);
	if (old.rlim_max == RLIM_INFINITY)
		snprintf(want, sizeof(want), "517\nunlimited\n");
	else
		snprintf(want, sizeof(want), "517\n%llu\n", (unsigned long long) old.rlim_max);
	EXPECT_STREQ(out, want);
}

int main(void)
{
	return tap_run();
}
