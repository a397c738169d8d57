/* SPDX-License-Identifier: MIT */
/*
 * bench-budget: the supervisor's own CPU cost of budget accounting (docs/performance.md).
 * Runs `sbxtrace run` on a tree of N processes for S seconds, without budgets and with
 * cpu_time + memory + tasks + disk budgets, and reads the supervisor's own utime+stime
 * (/proc/PID/stat, its threads included, its children not) just before it exits:
 *   idle   N processes sleeping
 *   busy   N processes each spinning on the CPU and forking a short-lived child every ~10 ms
 *          (under a tasks budget every fork is a notification and a count of the tree)
 * Prints CPU seconds of the supervisor per second of run. Not a test: figures only.
 * Usage: bench-budget [--sbxtrace PATH] [--procs N] [--seconds S]
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void spin_ms(double ms)
{
	double end = now_s() + ms / 1000.0;
	volatile uint64_t x = 0;

	while (now_s() < end)
		x++;
}

/* Inside the sandbox: the tree. */
static int tree(bool busy, int n, double seconds)
{
	double end = now_s() + seconds;

	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid > 0)
			continue;
		if (!busy) {
			struct timespec ts = {(time_t) seconds, 0};

			nanosleep(&ts, NULL);
			_exit(0);
		}
		while (now_s() < end) {
			pid_t c;

			spin_ms(10);
			c = fork();
			if (c == 0)
				_exit(0);
			if (c > 0)
				(void) waitpid(c, NULL, 0);
		}
		_exit(0);
	}
	while (wait(NULL) > 0)
		;
	return 0;
}

/* utime+stime of pid itself in seconds, or -1. */
static double own_cpu(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut = 0, st = 0;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	if (!ok || !(p = strrchr(buf, ')')))
		return -1;
	/* fields 14 and 15 after the comm: skip 11 fields after ") " */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (double) (ut + st) / (double) sysconf(_SC_CLK_TCK);
}

/* budgets: 0 none, 1 the sampled ones (cpu_time, memory, disk), 2 those and tasks */
static double measure(const char *sbxtrace, const char *policy, const char *self, bool busy,
		      int budgets, int n, double seconds, double *ret_wall)
{
	char ns[16], ss[16], tasks[64];
	const char *argv[32];
	size_t k = 0;
	double last = 0, t0;
	pid_t pid;
	int status;

	snprintf(ns, sizeof(ns), "%d", n);
	snprintf(ss, sizeof(ss), "%g", seconds);
	snprintf(tasks, sizeof(tasks), "limits.tasks=%d", 4 * n + 10);
	argv[k++] = sbxtrace;
	argv[k++] = "run";
	if (budgets) {
		argv[k++] = "-s";
		argv[k++] = "limits.cpu_time=1h";
		argv[k++] = "-s";
		argv[k++] = "limits.memory=16GiB";
		argv[k++] = "-s";
		argv[k++] = "limits.disk=1GiB";
	}
	if (budgets == 2) {
		argv[k++] = "-s";
		argv[k++] = tasks;
	}
	argv[k++] = policy;
	argv[k++] = "--";
	argv[k++] = self;
	argv[k++] = "--tree";
	argv[k++] = busy ? "busy" : "idle";
	argv[k++] = ns;
	argv[k++] = ss;
	argv[k] = NULL;

	t0 = now_s();
	pid = fork();
	if (pid == 0) {
		execv(argv[0], (char **) argv);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	/* the last reading before it is reaped is its own CPU time */
	for (;;) {
		double c = own_cpu(pid);
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			break;
		if (c >= 0)
			last = c;
		usleep(20000);
	}
	*ret_wall = now_s() - t0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fprintf(stderr, "bench-budget: the run failed (status %#x)\n", status);
	return last;
}

int main(int argc, char *argv[])
{
	const char *sbxtrace = SBXTRACE_PATH;
	char policy[] = "/tmp/bench-budget-XXXXXX";
	char self[4096];
	double seconds = 3;
	int n = 100, fd;
	ssize_t len;

	if (argc == 5 && strcmp(argv[1], "--tree") == 0)
		return tree(strcmp(argv[2], "busy") == 0, atoi(argv[3]), atof(argv[4]));
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--sbxtrace") == 0)
			sbxtrace = argv[i + 1];
		else if (strcmp(argv[i], "--procs") == 0)
			n = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--seconds") == 0)
			seconds = atof(argv[i + 1]);
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0)
		return 1;
	self[len] = 0;
	fd = mkstemp(policy);
	if (fd < 0)
		return 1;
	dprintf(fd,
		"[process]\nenv = { keep = [\"*\"] }\n\n[[mount]]\npath = \"/\"\nmode = \"ro\"\n");
	close(fd);

	printf("supervisor CPU per second of run, %d processes, %g s each\n", n, seconds);
	printf("%-6s %14s %14s %14s\n", "tree", "no budgets", "cpu+mem+disk", "+ tasks");
	for (int busy = 0; busy <= 1; busy++) {
		double w[3], c[3];

		for (int m = 0; m < 3; m++)
			c[m] = measure(sbxtrace, policy, self, busy, m, n, seconds, &w[m]);
		printf("%-6s %12.4f s %12.4f s %12.4f s\n", busy ? "busy" : "idle", c[0] / w[0],
		       c[1] / w[1], c[2] / w[2]);
	}
	unlink(policy);
	return 0;
}
