/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Helpers for integration and security tests: run a command under the sandbox and collect
 * its exit code and output. The runner comes from the environment that meson test sets:
 * SBXTRACE and SBX_POLICY (`sbxtrace run SBX_POLICY`, the real command line), else
 * SBX_DRIVER (the supervisor with a hand-built policy, tests/helpers/sbx-driver.c); and
 * SBX_PROBE (tests/helpers/sbx-probe.c). A test that lacks them skips (77).
 *
 * Options are written in the driver's words and translated for sbxtrace:
 *   --wall MS, --grace MS, --output BYTES   -s limits.wall_time=…ms, …
 *   --deny NAME=ERRNO, --kill NAME          -s syscalls.deny=["NAME:ERRNO"], …
 *   --json                                  --json
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/helpers/sbx-scratch.h"

static inline const char *sbx_env(const char *name)
{
	const char *v = getenv(name);

	if (!v || !*v) {
		fprintf(stderr, "skip: %s is not set (run through meson test)\n", name);
		exit(77);
	}
	return v;
}

static inline const char *sbx_driver(void)
{
	return sbx_env("SBX_DRIVER");
}

static inline const char *sbx_probe(void)
{
	return sbx_env("SBX_PROBE");
}

/* Starts DRIVER opts… -- cmd…; stdin from input (NULL: /dev/null), stdout into *ret_out_fd
 * (NULL: inherited). Returns the pid. */
static inline pid_t sbx_spawn(const char *const *opts, const char *const *cmd, int in_fd,
			      int *ret_out_fd)
{
	static char buf[16][160];
	const char *argv[64], *sbxtrace = getenv("SBXTRACE"), *policy = getenv("SBX_POLICY");
	size_t n = 0, nb = 0;
	int out[2] = {-1, -1};
	pid_t pid;

	if (sbxtrace && *sbxtrace && policy && *policy) {
		argv[n++] = sbxtrace;
		argv[n++] = "run";
		for (; opts && *opts && n < 40 && nb < 16; opts++) {
			const char *o = opts[0], *v = opts[1];

			if (strcmp(o, "--json") == 0) {
				argv[n++] = o;
				continue;
			}
			if (!v)
				break;
			opts++;
			if (strcmp(o, "--wall") == 0)
				snprintf(buf[nb], sizeof(buf[nb]), "limits.wall_time=%sms", v);
			else if (strcmp(o, "--grace") == 0)
				snprintf(buf[nb], sizeof(buf[nb]), "limits.kill_grace=%sms", v);
			else if (strcmp(o, "--output") == 0)
				snprintf(buf[nb], sizeof(buf[nb]), "limits.output=%s", v);
			else if (strcmp(o, "--kill") == 0)
				snprintf(buf[nb], sizeof(buf[nb]), "syscalls.kill=[\"%s\"]", v);
			else if (strcmp(o, "--deny") == 0) {
				snprintf(buf[nb], sizeof(buf[nb]), "syscalls.deny=[\"%s\"]", v);
				char *eq = strchr(buf[nb], '=');
				if (eq && (eq = strchr(eq + 1, '=')))
					*eq = ':';
			} else
				continue;
			argv[n++] = "-s";
			argv[n++] = buf[nb++];
		}
		argv[n++] = policy;
	} else {
		argv[n++] = sbx_driver();
		for (; opts && *opts && n < 30; opts++)
			argv[n++] = *opts;
	}
	argv[n++] = "--";
	for (; *cmd && n < 62; cmd++)
		argv[n++] = *cmd;
	argv[n] = NULL;

	if (ret_out_fd && pipe2(out, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		if (in_fd >= 0)
			dup2(in_fd, 0);
		/* without capture, keep the sandbox's stdout out of the TAP stream */
		dup2(out[1] >= 0 ? out[1] : 2, 1);
		execv(argv[0], (char **) argv);
		_exit(99);
	}
	if (out[1] >= 0)
		close(out[1]);
	if (ret_out_fd)
		*ret_out_fd = out[0];
	return pid;
}

static inline int sbx_status_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

/* Runs to the end; returns the exit code (128+N for the driver itself killed by N). */
static inline int sbx_run(const char *const *opts, const char *const *cmd, const char *input,
			  char *out, size_t out_size)
{
	int in[2] = {-1, -1}, out_fd = -1, status;
	size_t len = 0;
	pid_t pid;

	if (input) {
		if (pipe2(in, O_CLOEXEC) < 0)
			return -1;
	} else {
		in[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	pid = sbx_spawn(opts, cmd, in[0], out ? &out_fd : NULL);
	close(in[0]);
	if (input) {
		(void) !write(in[1], input, strlen(input));
		close(in[1]);
	}
	if (out) {
		ssize_t k;

		while (len + 1 < out_size && (k = read(out_fd, out + len, out_size - 1 - len)) > 0)
			len += (size_t) k;
		out[len] = 0;
		close(out_fd);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return sbx_status_code(status);
}

/* Runs argv (argv[0] a path) to the end with our stdin and stderr, its stdout on our stderr
 * (out of a TAP stream, as sbx_spawn); its exit code (128+N for signal N), -1 if it could not
 * be waited for. ret_ru, if not NULL, gets its resource usage. */
static inline int sbx_run_argv(const char *const *argv, struct rusage *ret_ru)
{
	struct rusage ru;
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(2, 1);
		execv(argv[0], (char **) argv);
		_exit(99);
	}
	if (pid < 0 || wait4(pid, &status, 0, &ru) < 0)
		return -1;
	if (ret_ru)
		*ret_ru = ru;
	return sbx_status_code(status);
}

/* Whether pid is alive and not a zombie. */
static inline bool sbx_alive(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	bool alive = false;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		alive = p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
	fclose(f);
	return alive;
}

/* The pids sbx-probe's daemon mode wrote to file ("DAEMON BUSY"), which is then removed: how
 * many of the two are still alive, or -1 when the file holds no such pair. */
static inline int sbx_daemon_pids_alive(const char *file)
{
	int daemon_pid = 0, busy_pid = 0, n;
	FILE *f = fopen(file, "re");

	if (!f)
		return -1;
	n = fscanf(f, "%d %d", &daemon_pid, &busy_pid);
	fclose(f);
	unlink(file);
	if (n != 2)
		return -1;
	return sbx_alive(daemon_pid) + sbx_alive(busy_pid);
}

static inline void sbx_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* This program's own path, for a test that runs itself inside sbxtrace; NULL on failure. */
static inline const char *sbx_self_exe(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);

	if (n <= 0)
		return NULL;
	buf[n] = 0;
	return buf;
}

/* Whether dir is empty now or becomes so within ms: the scratch directories of a run (its
 * skeleton, tmp mounts) are removed by the keeper after sbxtrace has exited. Lists what is
 * left on stderr when not. */
static inline bool sbx_dir_empties(const char *dir, long ms)
{
	for (long waited = 0;; waited += 10) {
		DIR *d = opendir(dir);
		struct dirent *de;
		bool empty = true;

		if (!d)
			return false;
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
				empty = false;
				if (waited >= ms)
					fprintf(stderr, "left in %s: %s\n", dir, de->d_name);
			}
		closedir(d);
		if (empty)
			return true;
		if (waited >= ms)
			return false;
		sbx_sleep_ms(10);
	}
}

/* A scratch directory under $TMPDIR (or /tmp), removed with what it holds when the test exits
 * (tests/helpers/sbx-scratch.h), on failure too; NULL on failure. */
static inline char *sbx_tmpdir(void)
{
	return sbx_scratch_dir("sbxtest");
}
