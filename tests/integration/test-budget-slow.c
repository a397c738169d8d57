/* SPDX-License-Identifier: MIT */
/*
 * The heavy budget cases (suite slow): a memory hog allocating 1 GiB in 100 MiB steps under
 * 256 MiB, 8 children of 64 MiB each under 256 MiB, and a recursive fork bomb under a tasks
 * budget, whose tree the test counts from outside while it runs.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tests/helpers/sbx-namespaces.h"
#include "tests/integration/budget-run.h"
#include "tests/unit/tap.h"

static const char *hog(void)
{
	return sbx_env("SBX_HOG");
}

TEST(memory_hog_1gib_in_100mib_steps_is_stopped_under_256mib)
{
	const char *sets[] = {"limits.memory=256MiB", "limits.kill_grace=500ms",
			      "limits.wall_time=120s", NULL};
	const char *cmd[] = {hog(), "memhog", "100", "1024", NULL};
	BudgetRun r;

	ASSERT_TRUE(budget_setup() != NULL);
	budget_run(&r, sets, true, cmd);
	EXPECT_EQ(r.code, 137);
	EXPECT_TRUE(strstr(r.err, "memory limit of 256MiB reached") != NULL);
	/* it never got to the end: RLIMIT_DATA (512 MiB) stops one process even if the
	 * sampler were late, and the hog then waits to be killed */
	EXPECT_LT(last_value(&r, "allocated"), 1024);
	budget_cleanup();
}

TEST(eight_children_of_64mib_are_stopped_under_256mib)
{
	const char *sets[] = {"limits.memory=256MiB", "limits.kill_grace=500ms",
			      "limits.wall_time=120s", NULL};
	const char *cmd[] = {hog(), "multihog", "8", "64", NULL};
	BudgetRun r;

	ASSERT_TRUE(budget_setup() != NULL);
	budget_run(&r, sets, true, cmd);
	EXPECT_EQ(r.code, 137);
	EXPECT_TRUE(strstr(r.err, "memory limit of 256MiB reached") != NULL);
	budget_cleanup();
}

/* Issue 24, item 7: pages written into a memfd that is never mapped are in no RSS; the
 * sampler counts the memfds the tree holds open. 512 MiB under 256 MiB. */
TEST(memfd_never_mapped_is_stopped_under_256mib)
{
	const char *sets[] = {"limits.memory=256MiB", "limits.kill_grace=500ms",
			      "limits.wall_time=120s", NULL};
	const char *cmd[] = {hog(), "held", "memfd", "-", "512", NULL};
	BudgetRun r;

	ASSERT_TRUE(budget_setup() != NULL);
	budget_run(&r, sets, false, cmd);
	EXPECT_EQ(r.code, 137);
	EXPECT_TRUE(strstr(r.err, "memory limit of 256MiB reached") != NULL);
	/* how much it got to write before a sample saw it depends on timing: not checked */
	EXPECT_TRUE(last_value(&r, "held") >= 0);
	budget_cleanup();
}

/* Issue 24, item 7: SysV segments detached without IPC_RMID keep their pages in the run's
 * IPC namespace, in no RSS; the sampler asks a helper in that namespace. 512 MiB in 8 MiB
 * segments under 256 MiB: stopped, or the segments refused where the run gets no IPC
 * namespace of its own (a plain user without a user namespace: IPC calls fail). Before, all
 * 512 MiB were held and the run ended normally. */
static void sysv_shm_is_counted(int *_tap_failed, bool kernel)
{
	const char *sets[] = {"limits.memory=256MiB", "limits.kill_grace=500ms",
			      "limits.wall_time=120s", NULL};
	const char *cmd[] = {hog(), "held", "sysvshm", "-", "512", NULL};
	BudgetRun r;
	bool refused;
	long held;

	if (kernel && sbx_namespaces_refused()) {
		TAP_SKIP("the view in the kernel needs namespaces");
		return;
	}
	ASSERT_TRUE(budget_setup_view(kernel));
	budget_run(&r, sets, false, cmd);
	held = last_value(&r, "held");
	refused = strstr(r.out, "shm errno") != NULL;
	fprintf(stderr, "# %s view: exit %d, held %ld MiB%s\n", kernel ? "kernel" : "emulated",
		r.code, held, refused ? ", refused" : "");
	if (refused) {
		EXPECT_TRUE(held < 0);
	} else {
		EXPECT_EQ(r.code, 137);
		EXPECT_TRUE(strstr(r.err, "memory limit of 256MiB reached") != NULL);
		EXPECT_LT(held, 512);
	}
	budget_cleanup();
}

TEST(sysv_shm_detached_is_stopped_under_256mib_emulated)
{
	sysv_shm_is_counted(_tap_failed, false);
}

TEST(sysv_shm_detached_is_stopped_under_256mib_kernel_view)
{
	sysv_shm_is_counted(_tap_failed, true);
}

/* Issue 24, item 7: a file unlinked while open, or an O_TMPFILE, takes disk space no walk
 * of the rw mounts finds; the sampler counts the deleted files the tree holds open on the
 * rw mounts' file systems. 128 MiB under 32 MiB in files of 8 MiB (under the per-file
 * RLIMIT_FSIZE backstop): refused (EDQUOT) or stopped; before, the run ended normally. */
static long held_on_disk(const char *kind, int *ret_code, bool *ret_refused)
{
	const char *sets[] = {"limits.disk=32MiB", "limits.kill_grace=200ms",
			      "limits.wall_time=120s", NULL};
	const char *dir = budget_setup();
	const char *cmd[] = {hog(), "held", kind, dir, "128", NULL};
	BudgetRun r;
	long held;

	if (!dir)
		return -1;
	budget_run(&r, sets, false, cmd);
	held = last_value(&r, "held");
	fprintf(stderr, "# %s: exit %d, held %ld MiB; stdout tail: %.80s\n", kind, r.code, held,
		r.out + (strlen(r.out) > 80 ? strlen(r.out) - 80 : 0));
	*ret_code = r.code;
	*ret_refused = strstr(r.out, "write errno") != NULL || strstr(r.out, "open errno") != NULL;
	budget_cleanup();
	return held;
}

TEST(unlinked_open_file_counts_against_disk)
{
	bool refused = false;
	int code = 0;
	long held = held_on_disk("unlinked", &code, &refused);

	EXPECT_TRUE(code == 137 || refused);
	EXPECT_TRUE(held >= 0); /* how far it got depends on timing: not checked */
}

TEST(o_tmpfile_counts_against_disk)
{
	bool refused = false;
	int code = 0;
	long held = held_on_disk("tmpfile", &code, &refused);

	EXPECT_TRUE(code == 137 || refused);
	EXPECT_TRUE(held >= 0); /* how far it got depends on timing: not checked */
}

/* The disk budget's quiet time (docs/budgets.md): while a directory is written into, its
 * writes are not reported one by one, and the events of directories made meanwhile wait.
 * A filler that writes into a new directory for each file, while it keeps its top directory
 * busy, must still get EDQUOT before the slack, within 32 MiB of the budget: what a new
 * directory holds is counted when its creation is read. 512 MiB: quiet times of 15 ms and
 * more. In both views. (On this project's 2-core VM the walks alone kept this filler within
 * 2 MiB too: it does not write fast enough to show the gap the count of new directories
 * closes; the test holds the bound with the quiet time on.) */
static long quiet_time_filler(const char *view, BudgetRun *r)
{
	const char *sets[] = {"limits.disk=512MiB", "limits.kill_grace=200ms",
			      "limits.wall_time=120s", view, NULL};
	const char *dir = budget_setup();
	/* 768 directories of 1 MiB: 1.5 times the budget */
	const char *cmd[] = {hog(), "dirfill", dir, "768", "1024", NULL};
	char hogdir[512], *slash;
	FILE *f;
	long kib;

	if (!dir)
		return -1;
	/* a policy the kernel view takes (budget_setup's mounts the host at /, which it
	 * does not): the runtime and the hog's directory read-only, the scratch directory */
	snprintf(hogdir, sizeof(hogdir), "%s", hog());
	if ((slash = strrchr(hogdir, '/')))
		*slash = '\0';
	f = fopen(budget_policy, "we");
	if (!f)
		return -1;
	fprintf(f, "[process]\nenv = { keep = [\"*\"] }\ncwd = \"%s\"\n", dir);
	for (const char *const *m =
		     (const char *const[]){"/usr", "/bin", "/lib", "/lib64", hogdir, NULL};
	     *m; m++)
		if (access(*m, F_OK) == 0)
			fprintf(f, "\n[[mount]]\npath = \"%s\"\nmode = \"ro\"\n", *m);
	fprintf(f, "\n[[mount]]\npath = \"%s\"\nmode = \"rw\"\n", dir);
	fclose(f);
	budget_run(r, sets, true, cmd);
	kib = budget_du_kib(dir);
	printf("# %s: exit %d, %ld KiB allocated under a budget of 524288 KiB\n", view, r->code,
	       kib);
	budget_cleanup();
	return kib;
}

/* refused with EDQUOT and ran on to its end, not stopped past the 128 MiB slack */
TEST(disk_filler_in_new_directories_is_seen_in_the_quiet_time)
{
	BudgetRun r;
	long kib = quiet_time_filler("tracer.kernel_view=auto", &r);

	/* where user namespaces are refused (a container) this is the emulated view again */
	printf("# view: %s\n", strstr(r.out, "\"view\":\"kernel\"") ? "kernel" : "emulated");
	EXPECT_EQ(r.code, 0);
	EXPECT_TRUE(strstr(r.out, "errno EDQUOT") != NULL);
	EXPECT_TRUE(kib > 0 && kib < 524288 + 32768);
}

TEST(disk_filler_in_new_directories_is_seen_in_the_quiet_time_emulated)
{
	BudgetRun r;
	long kib = quiet_time_filler("tracer.kernel_view=false", &r);

	EXPECT_EQ(r.code, 0);
	EXPECT_TRUE(strstr(r.out, "errno EDQUOT") != NULL);
	EXPECT_TRUE(kib > 0 && kib < 524288 + 32768);
}

/* The bomb spends a bounded amount of work (fuel), so the run ends by itself; the test
 * counts the tree from outside while it runs (budget-run.h). */
static void run_bomb(BudgetRun *r, unsigned tasks, unsigned fuel)
{
	char lim[64], f[32];
	const char *sets[] = {lim, "limits.wall_time=240s", NULL};
	const char *cmd[] = {hog(), "forkbomb", f, NULL};

	snprintf(lim, sizeof(lim), "limits.tasks=%u", tasks);
	snprintf(f, sizeof(f), "%u", fuel);
	budget_run(r, sets, false, cmd);
	fprintf(stderr, "# fork bomb (fuel %u): exit %d, most tasks seen at once: %ld (limit %u)\n",
		fuel, r->code, r->max_tasks, tasks);
}

TEST(fork_bomb_is_contained_and_ends)
{
	BudgetRun r;

	ASSERT_TRUE(budget_setup() != NULL);
	run_bomb(&r, 24, 800);
	budget_cleanup();
	EXPECT_EQ(r.code, 0);
	EXPECT_TRUE(r.max_tasks > 0 && r.max_tasks <= 24);
}

/* Many exits while others fork: the case where counting through the children files lost
 * processes (docs/budgets.md, "tasks is exact"). */
TEST(fork_bomb_never_has_more_than_tasks_alive)
{
	static const unsigned limits[] = {12, 16, 24, 32};

	ASSERT_TRUE(budget_setup() != NULL);
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		BudgetRun r;

		run_bomb(&r, limits[i], 3000);
		EXPECT_EQ(r.code, 0);
		EXPECT_TRUE(r.max_tasks > 0);
		EXPECT_TRUE(r.max_tasks <= (long) limits[i]);
	}
	budget_cleanup();
}

int main(void)
{
	return tap_run();
}
