/* SPDX-License-Identifier: MIT */
/* An exec whose path buffer another thread flips between a program the view shows
 * (/usr/bin/true) and one outside every mount (BASE/outside/run-me, which exits 42):
 * whatever the supervisor read, the program outside must never run. The emulated view checks
 * after an exec that what ran is what it checked (PTRACE_EVENT_EXEC), except where Landlock
 * holds the tree to exactly the view and the path went to the kernel as the child wrote it
 * (the --kernel-open variant): there the tracer asks for no event (tracer/ptrace.c,
 * exec_event_needed) and Landlock alone must refuse the file outside. Before the race, the
 * file outside is named plainly, by execveat on a directory fd and through a symlink in the
 * workspace: each must fail. */
#define FS_HAVE_PREPARE
#include "tests/security/fs-escape.h"

#include <signal.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <stdint.h>
#include <time.h>

#define RAN_OUTSIDE 42

static volatile int stop;
static char *flip;
static int *kernel_refused; /* shared by the racing children */
static char outside[PATH_MAX];
static const char allowed[] = "/usr/bin/true";

/* outside the sandbox: BASE/outside/run-me, beside the workspace and outside every mount, a
 * copy of this program, which exits RAN_OUTSIDE at once when started under that name */
static void fs_prepare(const char *ws)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/../outside", ws);
	if (mkdir(p, 0755) < 0)
		perror("preparing outside/");
	snprintf(p, sizeof(p), "%s/../outside/run-me", ws);
	if (sbx_copy_self(p) < 0)
		perror("preparing outside/run-me");
}

/* AT_EXECFN: the path as the kernel read it when it ran this program */
__attribute__((constructor)) static void ran_outside(void)
{
	const char *fn = (const char *) getauxval(AT_EXECFN);
	size_t n = fn ? strlen(fn) : 0;

	if (n >= 15 && strcmp(fn + n - 15, "/outside/run-me") == 0)
		_exit(RAN_OUTSIDE);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* the vDSO: no system call */
	return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

/* Each path held for 0-40 µs (about a notification's round trip), so that what the
 * supervisor reads and what the kernel reads after it are each whole paths, often not the
 * same one; a plain loop of copies would leave the buffer torn nearly all the time. */
static void *flipper(void *arg)
{
	size_t no = strlen(outside) + 1;
	unsigned seed = (unsigned) getpid();

	(void) arg;
	while (!stop) {
		uint64_t until;

		memcpy(flip, outside, no);
		until = now_ns() + (uint64_t) (rand_r(&seed) % 40000);
		while (now_ns() < until)
			;
		memcpy(flip, allowed, sizeof(allowed));
		until = now_ns() + (uint64_t) (rand_r(&seed) % 40000);
		while (now_ns() < until)
			;
	}
	return NULL;
}

static int attack(void)
{
	int n = fs_long ? 2000 : 300, killed = 0, dfd;
	char *argv[] = {NULL, NULL};
	char *envp[] = {NULL};
	char dir[PATH_MAX];

	snprintf(outside, sizeof(outside), "%s/outside/run-me", fs_base);
	snprintf(dir, sizeof(dir), "%s/outside", fs_base);
	if (fs_try_exec(allowed, -1, false) != 0) {
		fprintf(stderr, "%s does not run\n", allowed);
		return 1;
	}
	if (fs_try_exec(outside, -1, false) == RAN_OUTSIDE)
		fs_bad("the program outside ran by its path");
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fs_bad("the directory outside opened");
		if (fs_try_exec("run-me", dfd, true) == RAN_OUTSIDE)
			fs_bad("the program outside ran by execveat on its directory");
		close(dfd);
	}
	if (symlink(outside, "/workspace/to-outside") == 0 &&
	    fs_try_exec("/workspace/to-outside", -1, false) == RAN_OUTSIDE)
		fs_bad("the program outside ran through a symlink");

	/* the race: many children, each flipping its own buffer during execve */
	flip = malloc(PATH_MAX);
	kernel_refused = mmap(NULL, sizeof(*kernel_refused), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!flip || kernel_refused == MAP_FAILED)
		return 1;
	for (int i = 0; i < n && !fs_failures; i++) {
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			pthread_t th;

			memcpy(flip, allowed, sizeof(allowed));
			if (pthread_create(&th, NULL, flipper, NULL) != 0)
				_exit(2);
			for (;;) {
				argv[0] = flip;
				execve(flip, argv, envp);
				/* refused (the file outside, or a torn string, seen): again. EACCES
				 * is the kernel's (Landlock): the view says ENOENT for a file
				 * outside it. */
				if (errno == EACCES)
					__atomic_fetch_add(kernel_refused, 1, __ATOMIC_RELAXED);
			}
		}
		if (pid < 0 || waitpid(pid, &st, 0) < 0)
			return 1;
		if (WIFEXITED(st) && WEXITSTATUS(st) == RAN_OUTSIDE)
			fs_bad("the program outside ran through a flipped path");
		else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
			killed++;
		else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "a racing child ended with status %#x\n", st);
			return 1;
		}
	}
	fprintf(stderr, "%d racing execs: %d killed after the exec, %d refused by the kernel\n", n,
		killed, *kernel_refused);
	/* the view in the kernel has no path outside to flip to (ENOENT before any check) */
	if (!getenv("SBX_FS_KERNEL_VIEW") && killed + *kernel_refused == 0) {
		fprintf(stderr, "skip: no exec ever read the path outside after the check: the "
				"race was not run\n");
		return 77;
	}
	return 0;
}
