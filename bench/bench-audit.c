/* SPDX-License-Identifier: MIT */
/*
 * bench-audit: what the audit log costs a run. Times `sbxtrace run POLICY -- bench-audit
 * --loop N` without and with `--audit FILE` (and with --audit plus --trace to /dev/null),
 * alternating, best of R runs each, and prints ns per loop iteration and the ratio.
 * One iteration makes interposed syscalls only: kill(self, 0) (continued), kill(child, 0)
 * (emulated), and an open+close of a file (emulated once the file-system view routes it).
 * Usage: bench-audit [--runs R] [--n N] SBXTRACE POLICY. Not a test: figures only.
 */
#include <fcntl.h>
#include <signal.h>
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

static double run(char **argv)
{
	double t0 = now_s();
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
	return now_s() - t0;
}

int main(int argc, char *argv[])
{
	char self[4096], nbuf[32], log[600];
	const char *tmp = getenv("TMPDIR");
	long n = 20000, runs = 3;
	double best[3] = {1e9, 1e9, 1e9};
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
		double t;

		t = run(plain);
		best[0] = t < best[0] ? t : best[0];
		t = run(audited);
		best[1] = t < best[1] ? t : best[1];
		t = run(traced);
		best[2] = t < best[2] ? t : best[2];
	}
	printf("iterations: %ld (kill self, kill child, open+close each), best of %ld\n", n, runs);
	printf("%-28s %10.1f ns/iter\n", "no audit", best[0] * 1e9 / (double) n);
	printf("%-28s %10.1f ns/iter  ratio %.3f\n", "--audit FILE", best[1] * 1e9 / (double) n,
	       best[1] / best[0]);
	printf("%-28s %10.1f ns/iter  ratio %.3f\n", "--audit FILE --trace",
	       best[2] * 1e9 / (double) n, best[2] / best[0]);
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
