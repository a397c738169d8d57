/* SPDX-License-Identifier: MIT */
/*
 * sbx-probe MODE [ARGS]: does one thing inside the sandbox and reports by its exit status
 * (0 = behaved as expected, 1 = not, other codes as documented per mode) and a line on stdout.
 * Built without sanitizers: their runtimes make syscalls of their own.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t helper_child;
static pid_t outside;
static atomic_int failures;

static void *thread_main(void *arg)
{
	(void) arg;
	for (int i = 0; i < 300; i++) {
		/* emulated: another process of the tree */
		if (kill(helper_child, 0) != 0)
			atomic_fetch_add(&failures, 1);
		/* continued: ourselves */
		if (kill(getpid(), 0) != 0)
			atomic_fetch_add(&failures, 1);
		/* denied: outside the tree */
		if (outside > 0 && (kill(outside, 0) != -1 || errno != EPERM))
			atomic_fetch_add(&failures, 1);
	}
	return NULL;
}

static pid_t spawn_sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

static int mode_threads(void)
{
	pthread_t th[16];
	const char *o = getenv("SBX_OUTSIDE_PID");

	outside = o ? atoi(o) : 0;
	helper_child = spawn_sleeper();
	if (helper_child < 0)
		return 2;
	for (int i = 0; i < 16; i++)
		if (pthread_create(&th[i], NULL, thread_main, NULL) != 0)
			return 2;
	for (int i = 0; i < 16; i++)
		pthread_join(th[i], NULL);
	kill(helper_child, SIGKILL);
	waitpid(helper_child, NULL, 0);
	printf("threads failures=%d\n", atomic_load(&failures));
	return atomic_load(&failures) == 0 ? 0 : 1;
}

/* chain N: exec ourselves N levels deep through fork+exec; the deepest exits 42 */
static int mode_chain(const char *self, int n)
{
	char buf[16];
	int status;
	pid_t pid;

	if (n == 0)
		return 42;
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		snprintf(buf, sizeof(buf), "%d", n - 1);
		execl(self, self, "chain", buf, (char *) NULL);
		_exit(3);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return 4;
	return WEXITSTATUS(status);
}

static int mode_many(int n)
{
	for (int i = 0; i < n; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			return 2;
		if (pid == 0)
			_exit(i % 7);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != i % 7)
			return 1;
	}
	printf("many %d ok\n", n);
	return 0;
}

/* forkstorm N: N forks, each child exiting at once, with a SIGCHLD handler installed without
 * SA_RESTART (as dash's): the children's exits land while later forks are under way. fork
 * must never fail (the kernel restarts a clone a signal interrupts); 1 if one did. */
static volatile sig_atomic_t sigchld_seen;

static void on_sigchld(int sig)
{
	(void) sig;
	sigchld_seen++;
}

static int mode_forkstorm(int n)
{
	struct sigaction sa = {.sa_handler = on_sigchld}; /* no SA_RESTART */
	int failed = 0, first_errno = 0;

	sigaction(SIGCHLD, &sa, NULL);
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			if (!failed++)
				first_errno = errno;
			continue;
		}
		if (pid == 0)
			_exit(0);
		/* reap the one before: at most two children, each exit a SIGCHLD */
		if (i > 0)
			while (waitpid(-1, NULL, 0) < 0 && errno == EINTR)
				;
	}
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	printf("forkstorm: %d of %d forks failed (first: %s), %d SIGCHLD handled\n", failed, n,
	       failed ? strerror(first_errno) : "none", (int) sigchld_seen);
	return failed ? 1 : 0;
}

/* sigchld-calls N PATH: N times, a child that exits after 50 us while we open and stat PATH
 * 20 times each, with the SIGCHLD handler of forkstorm (no SA_RESTART). Neither call fails
 * with EINTR natively on a regular file; 1 if one did. */
static int mode_sigchld_calls(int n, const char *path)
{
	struct sigaction sa = {.sa_handler = on_sigchld}; /* no SA_RESTART */
	int intr = 0, calls = 0;

	sigaction(SIGCHLD, &sa, NULL);
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			usleep(50);
			_exit(0);
		}
		for (int j = 0; j < 20; j++) {
			struct stat st;
			int fd = open(path, O_RDONLY | O_CLOEXEC);

			if (fd >= 0)
				close(fd);
			else if (errno == EINTR)
				intr++;
			if (stat(path, &st) < 0 && errno == EINTR)
				intr++;
			calls += 2;
		}
		if (pid > 0)
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
	}
	printf("sigchld-calls: %d of %d calls failed with EINTR, %d SIGCHLD handled\n", intr, calls,
	       (int) sigchld_seen);
	return intr ? 1 : 0;
}

/* int $0x80 open(path, O_CREAT|O_WRONLY, 0600): i386 entry; must never run */
static int mode_int80(const char *path)
{
	char *p = mmap((void *) 0x10000000, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	long ret;

	if (p == MAP_FAILED)
		return 2;
	snprintf(p, 4096, "%s", path); /* below 4 GiB: reachable by 32-bit arguments */
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(5 /* i386 open */), "b"((uint32_t) (uintptr_t) p),
			   "c"(O_CREAT | O_WRONLY), "d"(0600)
			 : "memory");
	printf("int80 returned %ld\n", ret);
	return 1;
}

static int mode_x32(const char *path)
{
	long ret = syscall(0x40000000 | 257 /* x32 openat */, AT_FDCWD, path, O_CREAT | O_WRONLY,
			   0600);

	printf("x32 returned %ld errno %d\n", ret, errno);
	return ret < 0 ? 0 : 1;
}

static int mode_io_uring(int want_errno)
{
	struct io_uring_params params = {};
	long ret = syscall(SYS_io_uring_setup, 8, &params);

	printf("io_uring_setup returned %ld errno %d\n", ret, errno);
	return ret == -1 && errno == want_errno ? 0 : 1;
}

static int mode_errno(const char *name, int want)
{
	long ret;

	if (strcmp(name, "getppid") == 0)
		ret = syscall(SYS_getppid);
	else if (strcmp(name, "uname") == 0)
		ret = syscall(SYS_uname, NULL);
	else if (strcmp(name, "ptrace") == 0)
		ret = syscall(SYS_ptrace, 0 /* TRACEME */, 0, 0, 0);
	else if (strcmp(name, "clone3") == 0)
		ret = syscall(SYS_clone3, NULL, 0);
	else if (strcmp(name, "unshare") == 0)
		ret = syscall(SYS_unshare, 0x10000000 /* CLONE_NEWUSER */);
	else
		return 2;
	printf("%s returned %ld errno %d\n", name, ret, errno);
	return ret == -1 && errno == want ? 0 : 1;
}

/* Garbage pointers in notified syscalls: EFAULT, and the supervisor still answers. */
static int mode_efault(void)
{
	pid_t child = spawn_sleeper();
	void *unmapped = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int bad = 0;

	if (child < 0 || unmapped == MAP_FAILED)
		return 2;
	munmap(unmapped, 4096);
	if (syscall(SYS_rt_sigqueueinfo, child, SIGUSR1, (void *) 1) != -1 || errno != EFAULT)
		bad |= 1;
	if (syscall(SYS_rt_sigqueueinfo, child, SIGUSR1, unmapped) != -1 || errno != EFAULT)
		bad |= 2;
	if (syscall(SYS_rt_tgsigqueueinfo, child, child, SIGUSR1, (void *) -4096L) != -1 ||
	    errno != EFAULT)
		bad |= 4;
	if (fcntl(1, F_SETOWN_EX, (void *) 8) != -1 || errno != EFAULT)
		bad |= 8;
	/* the supervisor carries on */
	if (kill(child, 0) != 0)
		bad |= 16;
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	printf("efault bad=%d\n", bad);
	return bad ? 1 : 0;
}

static int mode_kill_outside(pid_t pid)
{
	int bad = 0;

	if (kill(pid, SIGTERM) != -1 || errno != EPERM)
		bad |= 1;
	if (syscall(SYS_tkill, pid, SIGTERM) != -1 || errno != EPERM)
		bad |= 2;
	if (syscall(SYS_tgkill, pid, pid, SIGTERM) != -1 || errno != EPERM)
		bad |= 4;
	int pfd = (int) syscall(SYS_pidfd_open, pid, 0);
	if (pfd < 0 || syscall(SYS_pidfd_send_signal, pfd, SIGTERM, NULL, 0) != -1 ||
	    errno != EPERM)
		bad |= 8;
	if (setpriority(PRIO_PROCESS, (id_t) pid, 19) != -1 || errno != EPERM)
		bad |= 16;
	/* joining the caller's process group (same session: Linux would allow it) */
	pid_t pgid = getpgid(pid);
	if (pgid <= 0 || setpgid(0, pgid) != -1 || errno != EPERM)
		bad |= 32;
	printf("kill-outside bad=%d\n", bad);
	return bad ? 1 : 0;
}

/* daemon FILE: setsid + double fork; the daemon and a busy loop write their pids to FILE
 * and run forever; the top process waits forever too. */
static int mode_daemon(const char *file)
{
	pid_t busy = fork();

	if (busy == 0) {
		for (volatile unsigned long i = 0;; i++)
			;
	}
	if (fork() == 0) {
		setsid();
		if (fork() == 0) {
			FILE *f = fopen(file, "w");

			if (!f)
				_exit(1);
			fprintf(f, "%d %d\n", (int) getpid(), (int) busy);
			fclose(f);
			for (;;)
				pause();
		}
		_exit(0);
	}
	wait(NULL);
	for (;;)
		pause();
}

static void exit_on_signal(int sig)
{
	_exit(100 + sig);
}

/* wait-signal FILE: exit 100+N on signal N (USR1, USR2, TERM, INT, HUP, QUIT, WINCH) */
static int mode_wait_signal(const char *file)
{
	int sigs[] = {SIGUSR1, SIGUSR2, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGWINCH};
	FILE *f;

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], exit_on_signal);
	f = fopen(file, "w");
	if (!f)
		return 2;
	fprintf(f, "ready\n");
	fclose(f);
	for (;;)
		pause();
}

/* fg: stdin is a terminal whose foreground process group is ours */
static int mode_fg(void)
{
	if (!isatty(0))
		return 3;
	return tcgetpgrp(0) == getpgrp() ? 0 : 1;
}

static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int ppid = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		sscanf(p + 1, " %*c %d", &ppid);
	fclose(f);
	return ppid;
}

/* supervisor-mem: the keeper (our parent) and the supervisor (its parent) keep their memory
 * and descriptors to themselves: /proc/PID/mem and /proc/PID/fd are refused */
static int mode_supervisor_mem(void)
{
	pid_t keeper = getppid(), sup = parent_of(keeper);
	pid_t targets[2] = {keeper, sup};
	int bad = 0;

	for (int i = 0; i < 2; i++) {
		char path[64];
		int fd;

		if (i == 0 && targets[i] <= 1)
			return 2;
		if (targets[i] <= 1) {
			/* the file-system view hides /proc entries of processes outside the tree
			 * (the keeper): the supervisor's pid cannot even be learnt from it */
			printf("supervisor pid not visible\n");
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%d/mem", (int) targets[i]);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd >= 0 || (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
			printf("opened %s\n", path);
			close(fd);
			bad |= 1 << (2 * i);
		}
		snprintf(path, sizeof(path), "/proc/%d/fd/0", (int) targets[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			printf("opened %s\n", path);
			close(fd);
			bad |= 2 << (2 * i);
		}
	}
	printf("supervisor-mem bad=%d\n", bad);
	return bad ? 1 : 0;
}

/*
 * connect-blocked DIR N: N threads' connects to a unix listener whose backlog is full wait
 * in the supervisor (which connects for the caller: the name is resolved in the view), and
 * the main thread's notified calls meanwhile must still be answered (tracer/dispatch.c,
 * "Leader and followers"); with N above the supervisor's pool of threads too. Then the backlog
 * drains and every connect completes. Exit 0; a supervisor that holds every call while
 * connects wait hangs here until the wall-time limit.
 */
#define CB_MAX 1024
static atomic_int cb_started;
static atomic_int cb_done;
static atomic_int cb_failed;
static struct sockaddr_un cb_addr;

static void *cb_thread(void *arg)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	(void) arg;
	atomic_fetch_add(&cb_started, 1);
	if (connect(fd, (struct sockaddr *) &cb_addr, sizeof(cb_addr)) != 0) {
		perror("connect");
		atomic_fetch_add(&cb_failed, 1);
	}
	close(fd);
	atomic_fetch_add(&cb_done, 1);
	return NULL;
}

static int mode_connect_blocked(const char *dir, int n)
{
	int lfd, fill[16], nfill = 0, full = 0;
	pthread_t th[CB_MAX];
	struct stat st;

	if (n < 1 || n > CB_MAX)
		return 2;
	cb_addr.sun_family = AF_UNIX;
	if (snprintf(cb_addr.sun_path, sizeof(cb_addr.sun_path), "%s/probe.sock", dir) >=
	    (int) sizeof(cb_addr.sun_path))
		return 2;
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *) &cb_addr, sizeof(cb_addr)) < 0 ||
	    listen(lfd, 0) < 0) {
		perror("listener");
		return 2;
	}
	/* backlog 0 queues one connection: the next blocks, or fails with EAGAIN non-blocking */
	while (nfill < 16 && !full) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

		if (connect(fd, (struct sockaddr *) &cb_addr, sizeof(cb_addr)) == 0) {
			fill[nfill++] = fd;
			continue;
		}
		full = errno == EAGAIN;
		if (!full)
			perror("filling connect");
		close(fd);
		if (!full)
			return 2;
	}
	if (!full) {
		printf("the backlog never filled\n");
		return 2;
	}
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	(void) pthread_attr_setstacksize(&attr, 64 * 1024);
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], &attr, cb_thread, NULL) != 0) {
			perror("pthread_create");
			return 2;
		}
	pthread_attr_destroy(&attr);
	while (atomic_load(&cb_started) < n)
		usleep(1000);
	usleep(300 * 1000); /* their connects are waiting by now */
	if (atomic_load(&cb_done) != 0) {
		printf("%d connects did not wait\n", atomic_load(&cb_done));
		return 1;
	}
	for (int i = 0; i < 200; i++)
		if (stat(dir, &st) != 0) {
			perror("stat");
			return 1;
		}
	printf("200 calls answered while %d connects waited\n", n);
	/* drain: each waiting connection gets its place in turn and its connect returns */
	(void) fcntl(lfd, F_SETFL, O_NONBLOCK);
	while (atomic_load(&cb_done) < n) {
		int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (c >= 0)
			close(c);
		else
			usleep(1000);
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < nfill; i++)
		close(fill[i]);
	close(lfd);
	unlink(cb_addr.sun_path);
	printf("connects after the drain: %d done, %d failed\n", atomic_load(&cb_done),
	       atomic_load(&cb_failed));
	return atomic_load(&cb_failed) == 0 ? 0 : 1;
}

int main(int argc, char *argv[])
{
	const char *m = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(m, "exit") == 0 && argc > 2)
		return atoi(argv[2]);
	if (strcmp(m, "signal") == 0 && argc > 2) {
		signal(atoi(argv[2]), SIG_DFL);
		raise(atoi(argv[2]));
		return 1;
	}
	if (strcmp(m, "threads") == 0)
		return mode_threads();
	if (strcmp(m, "chain") == 0 && argc > 2)
		return mode_chain(argv[0], atoi(argv[2]));
	if (strcmp(m, "many") == 0 && argc > 2)
		return mode_many(atoi(argv[2]));
	if (strcmp(m, "sigchld-calls") == 0 && argc > 3)
		return mode_sigchld_calls(atoi(argv[2]), argv[3]);
	if (strcmp(m, "forkstorm") == 0 && argc > 2)
		return mode_forkstorm(atoi(argv[2]));
	if (strcmp(m, "int80") == 0 && argc > 2)
		return mode_int80(argv[2]);
	if (strcmp(m, "x32") == 0 && argc > 2)
		return mode_x32(argv[2]);
	if (strcmp(m, "io_uring") == 0 && argc > 2)
		return mode_io_uring(atoi(argv[2]));
	if (strcmp(m, "errno") == 0 && argc > 3)
		return mode_errno(argv[2], atoi(argv[3]));
	if (strcmp(m, "efault") == 0)
		return mode_efault();
	if (strcmp(m, "kill-outside") == 0 && argc > 2)
		return mode_kill_outside(atoi(argv[2]));
	if (strcmp(m, "daemon") == 0 && argc > 2)
		return mode_daemon(argv[2]);
	if (strcmp(m, "wait-signal") == 0 && argc > 2)
		return mode_wait_signal(argv[2]);
	if (strcmp(m, "fg") == 0)
		return mode_fg();
	if (strcmp(m, "supervisor-mem") == 0)
		return mode_supervisor_mem();
	if (strcmp(m, "connect-blocked") == 0 && argc > 3)
		return mode_connect_blocked(argv[2], atoi(argv[3]));
	fprintf(stderr, "sbx-probe: unknown mode '%s'\n", m);
	return 2;
}
