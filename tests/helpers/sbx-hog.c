/* SPDX-License-Identifier: MIT */
/*
 * sbx-hog MODE [ARGS]: misbehaves inside the sandbox so the budget tests can check that the
 * supervisor stops it (tests/integration/test-budget-*.c). Each mode reports what it
 * reached on stdout, one line per step, so the test can see how far it got. Modes that
 * must be stopped by the supervisor never end by themselves (they sleep forever once
 * their work is done, holding what they took).
 *
 *   forkmax                 fork children (which wait) until fork fails: "children N errno E"
 *   threadmax               same with threads: "threads N errno E"
 *   forkbomb FUEL           recursive fork bomb with a bounded amount of work, then exits 0
 *   memhog STEP_MIB TOTAL   allocate and touch TOTAL MiB in steps: "allocated N" per step
 *   multihog N MIB          N children each touch MIB MiB: "child I" each
 *   spin THREADS            busy threads, forever
 *   spinsleep ITERS MS      count to ITERS, then sleep MS, forever (issue 21's wall-clock case)
 *   autoreap HOW N MS       SIGCHLD ignored (HOW "ign") or SA_NOCLDWAIT ("nocldwait"), then N
 *                           children one after another, each burning MS ms of CPU, never
 *                           waited for (the kernel reaps them): "children I" every 10; exits 0
 *   fsize DIR KIB           DIR/keep (KIB KiB), then DIR/fill until a write fails:
 *                           "errno E size S"; exits 0
 *   diskfill DIR N KIB [MS] DIR/keep, then N files of KIB KiB each (MS ms apart): "file I"
 *                           each; on an error "stopped at I errno E", then whether an append
 *                           to DIR/keep still works, and exit 0
 *   dirfill DIR N KIB       as diskfill, but each file in a directory of its own made just
 *                           before it (DIR/dI/fill), and 4 KiB appended to DIR/hot between
 *                           two files (so that DIR is being written into all along)
 *   grow FILE BYTES         create FILE empty, then grow it to BYTES with truncate(2),
 *                           ftruncate(2) and fallocate(2) in turn: "truncate ok|errno E",
 *                           "ftruncate …", "fallocate …" (shrunk to 0 between them); exits 0
 *   flood BYTES             write BYTES bytes of 'x' on stdout, then "done" on stderr
 *   fdleak                  open /dev/null until it fails: "fds N errno E"; exits 0
 *   sleep MS                sleep, exit 0
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *errname(int e)
{
	switch (e) {
	case EAGAIN:
		return "EAGAIN";
	case ENOMEM:
		return "ENOMEM";
	case EFBIG:
		return "EFBIG";
	case ENOSPC:
		return "ENOSPC";
	case EDQUOT:
		return "EDQUOT";
	case EMFILE:
		return "EMFILE";
	case ENFILE:
		return "ENFILE";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	default:
		return "other";
	}
}

/* the compiler must not drop an allocation nobody reads */
static void keep(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

static void forever(void)
{
	for (;;)
		pause();
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int forkmax(void)
{
	int p[2], n = 0, e = 0;
	char c;

	if (pipe(p) < 0)
		return 2;
	for (;;) {
		pid_t pid = fork();

		if (pid == 0) {
			close(p[1]);
			(void) !read(p[0], &c, 1); /* until the parent closes its end */
			_exit(0);
		}
		if (pid < 0) {
			e = errno;
			break;
		}
		n++;
		if (n > 100000)
			break;
	}
	printf("children %d errno %s\n", n, errname(e));
	fflush(stdout);
	close(p[1]);
	while (wait(NULL) > 0)
		;
	return 0;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *thread_wait(void *arg)
{
	(void) arg;
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static int threadmax(void)
{
	pthread_t th[4096];
	pthread_attr_t a;
	int n = 0, e = 0;

	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 * 1024);
	pthread_mutex_lock(&lock);
	for (; n < 4096; n++) {
		e = pthread_create(&th[n], &a, thread_wait, NULL);
		if (e != 0)
			break;
	}
	printf("threads %d errno %s\n", n, errname(e));
	fflush(stdout);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}

/* Every process spends its fuel on fork attempts; a child takes half of what is left, so
 * the total work is bounded by the initial fuel whatever the budget lets through. */
static int forkbomb(long fuel)
{
	while (fuel > 0) {
		pid_t pid;

		fuel--;
		pid = fork();
		if (pid == 0) {
			fuel /= 2;
			continue;
		}
		if (pid > 0)
			fuel -= fuel / 2;
	}
	sleep_ms(50);
	while (wait(NULL) > 0)
		;
	return 0;
}

static int memhog(long step_mib, long total_mib)
{
	for (long done = 0; done < total_mib; done += step_mib) {
		size_t len = (size_t) step_mib << 20;
		char *p = malloc(len);

		if (!p) {
			printf("malloc failed at %ld\n", done);
			fflush(stdout);
			forever(); /* hold what we have: the supervisor must end us */
		}
		memset(p, 0x5a, len);
		keep(p);
		printf("allocated %ld\n", done + step_mib);
		fflush(stdout);
	}
	forever();
	return 0;
}

static int multihog(int n, long mib)
{
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			size_t len = (size_t) mib << 20;
			char *p = malloc(len);

			if (p) {
				memset(p, 0x5a, len);
				keep(p);
			}
			printf("child %d\n", i);
			fflush(stdout);
			forever();
		}
	}
	forever();
	return 0;
}

static void *spin_main(void *arg)
{
	volatile uint64_t x = 0;

	(void) arg;
	for (;;)
		x++;
	return NULL;
}

static int spin(int n)
{
	pthread_t th;

	for (int i = 1; i < n; i++)
		pthread_create(&th, NULL, spin_main, NULL);
	spin_main(NULL);
	return 0;
}

static int spinsleep(long iters, long ms)
{
	volatile uint64_t x = 0;

	for (;;) {
		for (long i = 0; i < iters; i++)
			x++;
		sleep_ms(ms);
	}
	return 0;
}

/* Issue 24, item 7: children reaped by the kernel take their CPU time along (no one's
 * cutime gets it). One at a time: the next starts when the last one's end of a pipe closes. */
static int autoreap(const char *how, long n, long ms)
{
	struct sigaction sa = {.sa_handler = SIG_IGN};

	if (strcmp(how, "nocldwait") == 0) {
		sa.sa_handler = SIG_DFL;
		sa.sa_flags = SA_NOCLDWAIT;
	} else if (strcmp(how, "ign") != 0)
		return 2;
	if (sigaction(SIGCHLD, &sa, NULL) < 0)
		return 3;
	for (long i = 1; i <= n; i++) {
		int p[2];
		char c;
		pid_t pid;

		if (pipe(p) < 0)
			return 4;
		pid = fork();
		if (pid < 0)
			return 5;
		if (pid == 0) {
			struct timespec t0, t;
			volatile uint64_t x = 0;
			long used_ms;

			close(p[0]);
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
			do {
				for (int k = 0; k < 10000; k++)
					x++;
				clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
				used_ms = (t.tv_sec - t0.tv_sec) * 1000 +
					  (t.tv_nsec - t0.tv_nsec) / 1000000;
			} while (used_ms < ms);
			_exit(0);
		}
		close(p[1]);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		close(p[0]);
		if (i % 10 == 0)
			printf("children %ld\n", i);
	}
	return 0;
}

static int write_file(const char *dir, const char *name, long kib, int *ret_errno, long *ret_size)
{
	char path[4096], buf[4096];
	long size = 0;
	int fd;

	memset(buf, 'k', sizeof(buf));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		*ret_errno = errno;
		return -1;
	}
	*ret_errno = 0;
	while (kib < 0 || size < kib * 1024) {
		ssize_t k = write(fd, buf, sizeof(buf));

		if (k < 0) {
			*ret_errno = errno;
			break;
		}
		size += k;
	}
	if (ret_size)
		*ret_size = size;
	close(fd);
	return *ret_errno ? -1 : 0;
}

static int dirfill(const char *dir, int n, long kib)
{
	char sub[4096], hot[4096], buf[4096];
	int e, fd;

	memset(buf, 'h', sizeof(buf));
	snprintf(hot, sizeof(hot), "%s/hot", dir);
	fd = open(hot, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return 1;
	for (int i = 0; i < n; i++) {
		snprintf(sub, sizeof(sub), "%s/d%d", dir, i);
		if (write(fd, buf, sizeof(buf)) < 0 || mkdir(sub, 0755) < 0 ||
		    write_file(sub, "fill", kib, &e, NULL) < 0) {
			printf("stopped at %d errno %s\n", i, errname(e ? e : errno));
			return 0;
		}
		printf("file %d\n", i);
	}
	fflush(stdout);
	return 0;
}

static int fsize(const char *dir, long kib)
{
	int e;
	long size = 0;

	if (write_file(dir, "keep", kib, &e, NULL) < 0) {
		printf("keep failed errno %s\n", errname(e));
		return 1;
	}
	(void) write_file(dir, "fill", -1, &e, &size);
	printf("errno %s size %ld\n", errname(e), size);
	return 0;
}

static int diskfill(const char *dir, int n, long kib, long pause_ms)
{
	struct timespec ts = {pause_ms / 1000, (pause_ms % 1000) * 1000000L};
	char name[32], path[4096];
	int e, fd;

	if (write_file(dir, "keep", kib, &e, NULL) < 0) {
		printf("keep failed errno %s\n", errname(e));
		return 1;
	}
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "fill%d", i);
		if (write_file(dir, name, kib, &e, NULL) < 0) {
			/* the disk is full: an existing file cannot grow either */
			printf("stopped at %d errno %s\n", i, errname(e));
			snprintf(path, sizeof(path), "%s/keep", dir);
			fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
			if (fd >= 0 && write(fd, "x", 1) < 0)
				printf("append errno %s\n", errname(errno));
			else
				printf("append worked\n");
			if (fd >= 0)
				close(fd);
			fflush(stdout);
			return 0;
		}
		printf("file %d\n", i);
		fflush(stdout);
		if (pause_ms > 0)
			nanosleep(&ts, NULL);
	}
	forever();
	return 0;
}

static int flood(long long bytes)
{
	char buf[65536];

	memset(buf, 'x', sizeof(buf));
	while (bytes > 0) {
		size_t n = bytes < (long long) sizeof(buf) ? (size_t) bytes : sizeof(buf);
		ssize_t k = write(1, buf, n);

		if (k < 0)
			return 1;
		bytes -= k;
	}
	fprintf(stderr, "done\n");
	return 0;
}

static int fdleak(void)
{
	int n = 0, e = 0;

	for (; n < 10000000; n++)
		if (open("/dev/null", O_RDONLY) < 0) {
			e = errno;
			break;
		}
	printf("fds %d errno %s\n", n, errname(e));
	return 0;
}

static void grow_report(const char *what, int r)
{
	if (r == 0)
		printf("%s ok\n", what);
	else
		printf("%s errno %s\n", what, errname(errno));
}

static int grow(const char *path, long long bytes)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0) {
		printf("create errno %s\n", errname(errno));
		return 1;
	}
	grow_report("truncate", truncate(path, bytes));
	if (ftruncate(fd, 0) < 0)
		printf("shrink errno %s\n", errname(errno));
	grow_report("ftruncate", ftruncate(fd, bytes));
	if (ftruncate(fd, 0) < 0)
		printf("shrink errno %s\n", errname(errno));
	grow_report("fallocate", fallocate(fd, 0, 0, bytes));
	close(fd);
	return 0;
}

/*
 * Holds MIB MiB of pages that belong to no process's RSS nor to any file a walk finds (issue
 * 24, item 7): "memfd" writes them into a memfd never mapped; "unlinked" into a file of dir
 * removed right after its creation; "tmpfile" into an O_TMPFILE of dir. 1 MiB at a time,
 * printing "held N" (MiB); at an error prints it and stops writing; then waits 5 s, so the
 * sampler has time to see what is held, and exits 0.
 */
/* One more file of the kind held() fills, or -1 (the error printed). */
static int held_file(const char *kind, const char *dir, int i)
{
	char path[4096];
	int fd = -1;

	if (strcmp(kind, "memfd") == 0)
		fd = (int) syscall(SYS_memfd_create, "held", 0);
	else if (strcmp(kind, "tmpfile") == 0)
		fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	else if (strcmp(kind, "unlinked") == 0) {
		snprintf(path, sizeof(path), "%s/held-unlinked-%d", dir, i);
		fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
		if (fd >= 0 && unlink(path) < 0) {
			printf("unlink errno %s\n", errname(errno));
			return -1;
		}
	}
	if (fd < 0)
		printf("open errno %s\n", errname(errno));
	return fd;
}

/* SysV segments of 8 MiB, each attached, written 1 MiB at a time ("held N"), and detached
 * without IPC_RMID: their pages stay in the IPC namespace, in no process's RSS. */
static int held_shm(long mib)
{
	char *p = NULL;

	for (long i = 1; i <= mib; i++) {
		if ((i - 1) % 8 == 0) {
			int id = shmget(IPC_PRIVATE, 8 << 20, IPC_CREAT | 0600);

			if (p)
				(void) shmdt(p);
			p = id < 0 ? (void *) -1 : shmat(id, NULL, 0);
			if (p == (void *) -1) {
				printf("shm errno %s\n", errname(errno));
				p = NULL;
				break;
			}
		}
		memset(p + ((i - 1) % 8) * (1 << 20), 'h', 1 << 20);
		printf("held %ld\n", i);
	}
	if (p)
		(void) shmdt(p);
	sleep_ms(5000);
	return 0;
}

/*
 * Holds MIB MiB of pages that belong to no process's RSS nor to any file a walk finds (issue
 * 24, item 7): "sysvshm" into SysV segments detached without IPC_RMID (held_shm); "memfd"
 * writes them into memfds never mapped; "unlinked" into files of dir
 * removed right after their creation; "tmpfile" into O_TMPFILEs of dir. 8 MiB per file (under
 * any per-file limit), 1 MiB at a time, printing "held N" (MiB); at an error prints it and
 * stops writing; then waits 5 s, so the sampler sees what is held, and exits 0.
 */
static int held(const char *kind, const char *dir, long mib)
{
	static char chunk[1 << 20];
	int fd = -1;

	if (strcmp(kind, "sysvshm") == 0)
		return held_shm(mib);
	memset(chunk, 'h', sizeof(chunk));
	(void) signal(SIGXFSZ, SIG_IGN);
	for (long i = 1; i <= mib; i++) {
		if ((i - 1) % 8 == 0 && (fd = held_file(kind, dir, (int) i)) < 0)
			break;
		if (write(fd, chunk, sizeof(chunk)) != (ssize_t) sizeof(chunk)) {
			printf("write errno %s\n", errname(errno));
			break;
		}
		printf("held %ld\n", i);
	}
	sleep_ms(5000);
	return 0;
}

int main(int argc, char *argv[])
{
	const char *m = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(m, "forkmax") == 0)
		return forkmax();
	if (strcmp(m, "threadmax") == 0)
		return threadmax();
	if (strcmp(m, "forkbomb") == 0 && argc > 2)
		return forkbomb(atol(argv[2]));
	if (strcmp(m, "memhog") == 0 && argc > 3)
		return memhog(atol(argv[2]), atol(argv[3]));
	if (strcmp(m, "multihog") == 0 && argc > 3)
		return multihog(atoi(argv[2]), atol(argv[3]));
	if (strcmp(m, "spin") == 0 && argc > 2)
		return spin(atoi(argv[2]));
	if (strcmp(m, "spinsleep") == 0 && argc > 3)
		return spinsleep(atol(argv[2]), atol(argv[3]));
	if (strcmp(m, "autoreap") == 0 && argc > 4)
		return autoreap(argv[2], atol(argv[3]), atol(argv[4]));
	if (strcmp(m, "fsize") == 0 && argc > 3)
		return fsize(argv[2], atol(argv[3]));
	if (strcmp(m, "diskfill") == 0 && argc > 4)
		return diskfill(argv[2], atoi(argv[3]), atol(argv[4]),
				argc > 5 ? atol(argv[5]) : 0);
	if (strcmp(m, "dirfill") == 0 && argc > 4)
		return dirfill(argv[2], atoi(argv[3]), atol(argv[4]));
	if (strcmp(m, "grow") == 0 && argc > 3)
		return grow(argv[2], atoll(argv[3]));
	if (strcmp(m, "flood") == 0 && argc > 2)
		return flood(atoll(argv[2]));
	if (strcmp(m, "held") == 0 && argc > 4)
		return held(argv[2], argv[3], atol(argv[4]));
	if (strcmp(m, "fdleak") == 0)
		return fdleak();
	if (strcmp(m, "sleep") == 0 && argc > 2) {
		sleep_ms(atol(argv[2]));
		return 0;
	}
	fprintf(stderr, "usage: sbx-hog MODE [ARGS] (see the source)\n");
	return 2;
}
