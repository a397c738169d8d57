/* SPDX-License-Identifier: MIT */
/*
 * bench-audit: what the audit log costs a run. Times `sbxtrace run POLICY -- bench-audit
 * --loop N` without and with `--audit FILE` (and with --audit plus --trace to /dev/null, and
 * with --audit and a backtrace of every call: `-s audit.backtrace="all"`), alternating, best
 * of R runs each, and prints ns per loop iteration and the ratio.
 * One iteration makes interposed syscalls only: kill(self, 0) (continued), kill(child, 0)
 * (emulated), and an open+close of a file (emulated once the file-system view routes it).
 * Usage: bench-audit [--runs R] [--n N] SBXTRACE POLICY. Not a test: figures only.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static int loop(long n)
{
	pid_t child = fork();

	if (child < 0)
		return 1;
	if (child == 0) {
		for (;;)
			pause();
	}
	for (long i = 0; i < n; i++) {
		int fd;

		(void) kill(getpid(), 0);
		(void) kill(child, 0);
		fd = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			close(fd);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return 0;
}

static double cpu_children(void)
{
	struct rusage ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return (double) ru.ru_utime.tv_sec + (double) ru.ru_utime.tv_usec / 1e6 +
	       (double) ru.ru_stime.tv_sec + (double) ru.ru_stime.tv_usec / 1e6;
}

/* Wall time of one run; *ret_cpu gets the CPU time (user + system) of the run's whole tree,
 * which the machine's load disturbs less than the wall time. */
static double run(char **argv, double *ret_cpu)
{
	double t0 = now_s(), c0 = cpu_children();
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		dup2(null, 1);
		dup2(null, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench-audit: run failed\n");
		exit(1);
	}
	*ret_cpu = cpu_children() - c0;
	return now_s() - t0;
}

int main(int argc, char *argv[])
{
	char self[4096], nbuf[32], log[600];
	const char *tmp = getenv("TMPDIR");
	long n = 20000, runs = 3;
	double best[4] = {1e9, 1e9, 1e9, 1e9}, cpu[4] = {1e9, 1e9, 1e9, 1e9};
	ssize_t k;
	int i = 1;

	if (argc == 3 && strcmp(argv[1], "--loop") == 0)
		return loop(atol(argv[2]));
	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (strcmp(argv[i], "--runs") == 0)
			runs = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--n") == 0)
			n = atol(argv[i + 1]);
	}
	if (argc - i != 2) {
		fprintf(stderr, "usage: bench-audit [--runs R] [--n N] SBXTRACE POLICY\n");
		return 2;
	}
	k = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (k <= 0)
		return 1;
	self[k] = 0;
	snprintf(nbuf, sizeof(nbuf), "%ld", n);
	snprintf(log, sizeof(log), "%s/bench-audit-%d.jsonl", tmp && *tmp ? tmp : "/tmp",
		 (int) getpid());

	for (long r = 0; r < runs; r++) {
		char *plain[] = {argv[i], "run", argv[i + 1], "--", self, "--loop", nbuf, NULL};
		char *audited[] = {argv[i], "run", "--audit", log,  argv[i + 1],
				   "--",    self,  "--loop",  nbuf, NULL};
		char *traced[] = {argv[i], "run", "--audit", log,  "--trace", argv[i + 1],
				  "--",	   self,  "--loop",  nbuf, NULL};
		char *unwound[] = {
			argv[i],     "run", "--audit", log,	 "-s", "audit.backtrace=\"all\"",
			argv[i + 1], "--",  self,      "--loop", nbuf, NULL};
		char **which[4] = {plain, audited, traced, unwound};

		for (int w = 0; w < 4; w++) {
			double c, t = run(which[w], &c);

			best[w] = t < best[w] ? t : best[w];
			cpu[w] = c < cpu[w] ? c : cpu[w];
		}
	}
	printf("iterations: %ld (kill self, kill child, open+close each), best of %ld\n", n, runs);
	printf("%-22s %12s %8s %12s %8s\n", "", "wall ns/iter", "ratio", "cpu ns/iter", "ratio");
	{
		static const char *const names[] = {"no audit", "--audit FILE",
						    "--audit FILE --trace",
						    "--audit, backtrace all"};

		for (int w = 0; w < 4; w++)
			printf("%-22s %12.1f %8.3f %12.1f %8.3f\n", names[w],
			       best[w] * 1e9 / (double) n, best[w] / best[0],
			       cpu[w] * 1e9 / (double) n, cpu[w] / cpu[0]);
	}
	{
		FILE *f = fopen(log, "re");
		long lines = 0;
		int c;

		while (f && (c = fgetc(f)) != EOF)
			lines += c == '\n';
		if (f)
			fclose(f);
		printf("records in the last log: %ld\n", lines);
	}
	unlink(log);
	return 0;
}
