/* SPDX-License-Identifier: MIT */
/*
 * bench-budget-count: the cost of one exact count of the tasks budget (budget_count_tasks,
 * a numeric scan of /proc: one stat read per process of the host), paid at a clone only
 * when the cheap upper bound no longer fits (docs/budgets.md). Forks N sleeping children
 * (the "tree", below this process) and M sleeping processes outside it (a double fork
 * moves them away from us), then times K counts of the tree below this process.
 * Prints the processes in /proc, the count found and microseconds per count.
 * Usage: bench-budget-count [TREE_PROCS [HOST_PROCS [COUNTS]]]   (default 20 100 1000)
 */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tracer/budget.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static long proc_count(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	long n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] >= '0' && de->d_name[0] <= '9')
			n++;
	closedir(d);
	return n;
}

/* Forks n children of the caller that sleep until killed. */
static int spawn(int n, pid_t *out)
{
	for (int i = 0; i < n; i++) {
		pid_t p = fork();

		if (p < 0)
			return -1;
		if (p == 0) {
			pause();
			_exit(0);
		}
		out[i] = p;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int tree = argc > 1 ? atoi(argv[1]) : 20, host = argc > 2 ? atoi(argv[2]) : 100;
	int counts = argc > 3 ? atoi(argv[3]) : 1000;
	pid_t *kids = calloc((size_t) (tree + 1), sizeof(pid_t)), outside;
	uint64_t tasks = 0;
	double t0, t1;
	int pfd[2];

	if (!kids || tree < 0 || host < 0 || counts <= 0 || pipe(pfd) < 0)
		return 1;
	if (spawn(tree, kids) < 0)
		return 1;
	/* the host processes: a double fork puts them outside the tree, in one group */
	outside = fork();
	if (outside == 0) {
		pid_t *h = calloc((size_t) host + 1, sizeof(pid_t)), g;

		if (!h)
			_exit(1);
		g = fork();
		if (g != 0)
			_exit(0);
		(void) setpgid(0, 0);
		g = getpid();
		if (spawn(host, h) < 0)
			_exit(1);
		if (write(pfd[1], &g, sizeof(g)) != sizeof(g))
			_exit(1);
		pause();
		_exit(0);
	}
	(void) waitpid(outside, NULL, 0);
	if (read(pfd[0], &outside, sizeof(outside)) != sizeof(outside))
		return 1;
	t0 = now_us();
	for (int i = 0; i < counts; i++)
		if (budget_count_tasks(getpid(), &tasks) < 0)
			return 1;
	t1 = now_us();
	printf("processes in /proc: %ld, tasks below us: %llu (expected %d), one count: %.1f us\n",
	       proc_count(), (unsigned long long) tasks, tree, (t1 - t0) / counts);
	kill(-outside, SIGKILL);
	for (int i = 0; i < tree; i++)
		kill(kids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	return 0;
}
