/* SPDX-License-Identifier: MIT */
/* /proc/self and /proc/thread-self name the caller's own process and thread, from the thread
 * group's leader and from the other threads alike, while threads come and go: never the
 * supervisor's process (the emulated view walks /proc in the supervisor, and asks the kernel
 * for the caller's thread group only when a walk gets there), never a thread id taken for a
 * process id, and never a way out of the view through the root or cwd links. */
#include "tests/security/fs-escape.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>

#define ROUNDS	40
#define THREADS 3

static atomic_int bad_rounds;

/* The number after "NAME:\t" in the status file at path; -1 if unreadable. */
static long status_field(const char *path, const char *name)
{
	char buf[4096], key[32], *p;

	if (fs_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	snprintf(key, sizeof(key), "\n%s:", name);
	p = strstr(buf, key);
	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static void expect_link(const char *path, const char *want)
{
	char got[64], m[256];
	ssize_t n = readlink(path, got, sizeof(got) - 1);

	if (n < 0 || (size_t) n >= sizeof(got) - 1 || (got[n] = 0, strcmp(got, want) != 0)) {
		snprintf(m, sizeof(m), "readlink(%s) is '%s', not '%s' (thread %d)", path,
			 n < 0 ? strerror(errno) : got, want, (int) gettid());
		fs_bad(m);
		atomic_fetch_add(&bad_rounds, 1);
	}
}

static void expect_field(const char *path, const char *name, long want)
{
	long got = status_field(path, name);
	char m[256];

	if (got != want) {
		snprintf(m, sizeof(m), "%s of %s is %ld, not %ld (thread %d)", name, path, got,
			 want, (int) gettid());
		fs_bad(m);
		atomic_fetch_add(&bad_rounds, 1);
	}
}

/* What every thread checks: its process and itself by the names the view gives them. */
static void look(void)
{
	char want[64], p[PATH_MAX + 64];
	pid_t pid = getpid(), tid = gettid();

	snprintf(want, sizeof(want), "%d", (int) pid);
	expect_link("/proc/self", want);
	snprintf(want, sizeof(want), "%d/task/%d", (int) pid, (int) tid);
	expect_link("/proc/thread-self", want);
	expect_field("/proc/self/status", "Tgid", pid);
	expect_field("/proc/self/status", "Pid", pid);
	expect_field("/proc/thread-self/status", "Pid", tid);
	snprintf(p, sizeof(p), "/proc/%d/status", (int) pid);
	expect_field(p, "Tgid", pid); /* its own pid, by number, is in the view */
	snprintf(p, sizeof(p), "/proc/self/root%s", fs_secret);
	fs_try_open(p);
	snprintf(p, sizeof(p), "/proc/thread-self/root%s", fs_secret);
	fs_try_open(p);
	fs_try_open("/proc/thread-self/root/../secret/secret.txt");
	fs_try_open("/proc/self/cwd/../secret/secret.txt");
}

static void *thread_main(void *arg)
{
	(void) arg;
	look();
	return NULL;
}

static int attack(void)
{
	if (access("/proc/cpuinfo", F_OK) != 0) {
		fprintf(stderr, "no /proc in this view: %s\n", strerror(errno));
		return 77;
	}
	for (int round = 0; round < (fs_long ? 10 * ROUNDS : ROUNDS); round++) {
		pthread_t th[THREADS];
		int n = 0;

		for (int i = 0; i < THREADS; i++)
			if (pthread_create(&th[n], NULL, thread_main, NULL) == 0)
				n++;
		look(); /* the leader, while the others run */
		for (int i = 0; i < n; i++)
			pthread_join(th[i], NULL);
		if (n == 0) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
		if (atomic_load(&bad_rounds) > 20)
			break; /* enough said */
	}
	return fs_failures ? 1 : 0;
}
