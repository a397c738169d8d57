/* SPDX-License-Identifier: MIT */
/*
 * micro: one syscall pattern in a loop, run as the workload inside a sandbox by
 * bench/bench-table.py (issue 20); prints nanoseconds per operation on stdout.
 *   micro getpid N           syscall(SYS_getpid): the filter's fast path
 *   micro openat N PATH      openat(PATH, O_RDONLY) + close
 *   micro stat N PATH        stat(PATH)
 *   micro readlink N PATH    readlink(PATH) of a path that is not a symlink (EINVAL), as
 *                            realpath() does for each component (cpp's many calls)
 *   micro forkexec N         fork + execve("/bin/true") + waitpid
 *   micro write N PATH       write(2) of 4 KiB to PATH, rewinding every 256 writes so the file
 *                            never grows past 1 MiB (the disk budget counts growth, not writes)
 *   micro connect N          socket + connect + close to a listener of its own on 127.0.0.1
 *                            (a thread accepts): loopback inside every sandbox's network
 *   micro stamp PATH         writes CLOCK_MONOTONIC's nanoseconds at the start of main to
 *                            PATH and exits: where a start's launch ends and its end begins
 *                            (bench/start-phases.py)
 * Each loop runs N / 10 times first as a warm-up (page cache, the supervisor's caches), then
 * N times timed. Timed from inside, so the sandbox's start is not counted: bench-table times
 * the start separately. Not a test; exit 1 with a message on failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WRITE_SIZE   4096
#define WRITE_REWIND 256

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

static int op_getpid(long n, const char *path)
{
	(void) path;
	for (long i = 0; i < n; i++)
		syscall(SYS_getpid);
	return 0;
}

static int op_openat(long n, const char *path)
{
	for (long i = 0; i < n; i++) {
		int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			perror("openat");
			return -1;
		}
		close(fd);
	}
	return 0;
}

static int op_stat(long n, const char *path)
{
	struct stat st;

	for (long i = 0; i < n; i++)
		if (stat(path, &st) < 0) {
			perror("stat");
			return -1;
		}
	return 0;
}

/* readlink of a path that is not a symlink, as realpath() asks of each component: EINVAL */
static int op_readlink(long n, const char *path)
{
	char buf[256];

	for (long i = 0; i < n; i++)
		if (readlink(path, buf, sizeof(buf)) >= 0 || errno != EINVAL) {
			fprintf(stderr, "micro: readlink %s: not EINVAL (%s)\n", path,
				strerror(errno));
			return -1;
		}
	return 0;
}

static int op_forkexec(long n, const char *path)
{
	char *argv[] = {"true", NULL};
	char *envp[] = {NULL};

	(void) path;
	for (long i = 0; i < n; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return -1;
		}
		if (pid == 0) {
			execve("/bin/true", argv, envp);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0) {
			fprintf(stderr, "micro: /bin/true failed (status %#x)\n", status);
			return -1;
		}
	}
	return 0;
}

static int op_write(long n, const char *path)
{
	static char buf[WRITE_SIZE];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0) {
		perror("open");
		return -1;
	}
	memset(buf, 'x', sizeof(buf));
	for (long i = 0; i < n; i++) {
		if (i % WRITE_REWIND == 0 && lseek(fd, 0, SEEK_SET) < 0) {
			perror("lseek");
			close(fd);
			return -1;
		}
		if (write(fd, buf, sizeof(buf)) != (ssize_t) sizeof(buf)) {
			perror("write");
			close(fd);
			return -1;
		}
	}
	close(fd);
	return 0;
}

static struct sockaddr_in listen_addr;

static void *acceptor(void *userdata)
{
	int lfd = (int) (intptr_t) userdata;

	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd >= 0)
			close(fd);
	}
	return NULL;
}

/* The listener lives for the whole process: started once, before the warm-up. */
static int start_listener(void)
{
	socklen_t len = sizeof(listen_addr);
	pthread_t th;
	int lfd;

	listen_addr.sin_family = AF_INET;
	listen_addr.sin_port = 0;
	inet_pton(AF_INET, "127.0.0.1", &listen_addr.sin_addr);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *) &listen_addr, sizeof(listen_addr)) < 0 ||
	    listen(lfd, 4096) < 0 || getsockname(lfd, (struct sockaddr *) &listen_addr, &len) < 0) {
		perror("listener");
		return -1;
	}
	if (pthread_create(&th, NULL, acceptor, (void *) (intptr_t) lfd) != 0) {
		fprintf(stderr, "micro: pthread_create failed\n");
		return -1;
	}
	return 0;
}

static int op_connect(long n, const char *path)
{
	(void) path;
	for (long i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0 ||
		    connect(fd, (struct sockaddr *) &listen_addr, sizeof(listen_addr)) < 0) {
			perror("connect");
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(fd);
	}
	return 0;
}

static const struct {
	const char *name;
	int (*run)(long n, const char *path);
	int needs_path;
} ops[] = {
	{"getpid", op_getpid, 0},     {"openat", op_openat, 1}, {"stat", op_stat, 1},
	{"forkexec", op_forkexec, 0}, {"write", op_write, 1},	{"connect", op_connect, 0},
	{"readlink", op_readlink, 1},
};

/* The clock at main's start, in PATH: the only work done before is the loader's. */
static int stamp(const char *path, double t)
{
	FILE *f = fopen(path, "w");

	if (!f || fprintf(f, "%.0f\n", t) < 0 || fclose(f) != 0) {
		perror(path);
		return 1;
	}
	return 0;
}

int main(int argc, char *argv[])
{
	double t = now_ns();
	const char *path = argc > 3 ? argv[3] : NULL;
	long n = argc > 2 ? atol(argv[2]) : 0;

	if (argc == 3 && strcmp(argv[1], "stamp") == 0)
		return stamp(argv[2], t);

	for (size_t i = 0; argc > 1 && i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (strcmp(argv[1], ops[i].name) != 0)
			continue;
		if (n < 1 || (ops[i].needs_path && !path))
			break;
		if (ops[i].run == op_connect && start_listener() < 0)
			return 1;
		if (ops[i].run(n / 10 > 0 ? n / 10 : 1, path) < 0)
			return 1;
		t = now_ns();
		if (ops[i].run(n, path) < 0)
			return 1;
		printf("%.1f\n", (now_ns() - t) / (double) n);
		return 0;
	}
	fprintf(stderr, "usage: micro getpid|openat|stat|readlink|forkexec|write|connect N [PATH]\n"
			"       micro stamp PATH\n");
	return 2;
}
