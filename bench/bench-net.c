/* SPDX-License-Identifier: MIT */
/*
 * bench-net: connect + close to a loopback listener, natively and under `sbxtrace run` with
 * network modes loopback (every connect decided and made by the supervisor on a duplicate of
 * the child's socket, on a worker thread) and full (the connect runs in the kernel after a
 * register-only decision). Prints microseconds per connect+close and the ratio to native.
 * Not a test: figures only. Usage: bench-net [--sbxtrace PATH] [--policy PATH] [--count N]
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static int client(int port, int count)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t) port)};
	double t0;

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	t0 = now_s();
	for (int i = 0; i < count; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0 || connect(fd, (struct sockaddr *) &a, sizeof(a)) < 0) {
			perror("connect");
			return 1;
		}
		close(fd);
	}
	printf("%.3f\n", (now_s() - t0) * 1e6 / count);
	return 0;
}

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

static double run(char **argv)
{
	int p[2], status;
	char buf[64] = "";
	ssize_t n;
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	waitpid(pid, &status, 0);
	if (n <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	return atof(buf);
}

int main(int argc, char **argv)
{
	const char *sbxtrace = SBXTRACE_PATH, *policy = SBX_POLICY_PATH;
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof(a);
	char self[4096], ports[16], counts[16];
	int count = 5000, lfd, one = 1;
	pthread_t th;
	ssize_t sl;

	if (argc == 4 && strcmp(argv[1], "client") == 0)
		return client(atoi(argv[2]), atoi(argv[3]));
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--sbxtrace") == 0)
			sbxtrace = argv[i + 1];
		else if (strcmp(argv[i], "--policy") == 0)
			policy = argv[i + 1];
		else if (strcmp(argv[i], "--count") == 0)
			count = atoi(argv[i + 1]);
	}
	sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl <= 0)
		return 1;
	self[sl] = 0;
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *) &a, sizeof(a)) < 0 || listen(lfd, 4096) < 0 ||
	    getsockname(lfd, (struct sockaddr *) &a, &al) < 0) {
		perror("listener");
		return 1;
	}
	pthread_create(&th, NULL, acceptor, (void *) (intptr_t) lfd);
	snprintf(ports, sizeof(ports), "%d", ntohs(a.sin_port));
	snprintf(counts, sizeof(counts), "%d", count);

	char *native[] = {self, "client", ports, counts, NULL};
	char *loop[] = {(char *) sbxtrace, "run", "-s", "network.mode=loopback", (char *) policy,
			"--", self, "client", ports, counts, NULL};
	char *full[] = {(char *) sbxtrace, "run", "-s", "network.mode=full", (char *) policy,
			"--", self, "client", ports, counts, NULL};
	double n0 = run(native), nl = run(loop), nf = run(full);

	printf("connect+close, %d times, µs each\n", count);
	printf("native    %8.2f\n", n0);
	printf("loopback  %8.2f  x%.2f\n", nl, n0 > 0 ? nl / n0 : 0);
	printf("full      %8.2f  x%.2f\n", nf, n0 > 0 ? nf / n0 : 0);
	return 0;
}
