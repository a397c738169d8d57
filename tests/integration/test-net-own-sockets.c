/* SPDX-License-Identifier: MIT */
/*
 * Sockets and inotify instances where the supervisor creates and keeps them, and the
 * pidfd_send_signal and owner calls that need the caller's descriptors (pidfd_getfd
 * refused: net/socktab.c,
 * docs/network.md "In a container"); meson runs it under tests/helpers/deny-syscalls docker
 * and containerd, and once as it is (the pidfd_getfd path). Each case runs this program
 * under `sbxtrace run` in loopback mode and checks what a program sees natively:
 *  - a closed end of a socketpair and of a TCP connection gives the peer EOF at once
 *    (well under a second: the supervisor's reference goes at the close's sweep);
 *  - so does a process that exits without closing (the periodic sweep);
 *  - a blocking accept in the tree, accept4's flags and address, EAGAIN on a non-blocking
 *    listener;
 *  - a port bound again right after its listener was closed;
 *  - sockets and a pipe passed in SCM_RIGHTS work on the other side;
 *  - a socket shared with a forked child keeps working after the parent closed it;
 *  - thousands of sockets opened and closed: no EMFILE (references are dropped);
 *  - inotify instances: watches added through a dup and a forked child, events, 300
 *    instances opened and closed (over the default per-user limit of 128);
 *  - pidfd_send_signal through a pidfd of the caller's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/helpers/sbx-test.h"
#include "tests/unit/tap.h"

static const char *self;

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "inside: %s:%d: %s (%s)\n", __FILE__, __LINE__, #c,        \
				strerror(errno));                                                  \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads until EOF (at most 5 s); the ms it took after `since`, or -1. */
static long eof_after(int fd, long since)
{
	char buf[256];

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};

		if (poll(&p, 1, 5000) <= 0)
			return -1;
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n == 0)
			return now_ms() - since;
		if (n < 0)
			return -1;
	}
}

static int listener(int *port, int flags)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | flags, 0);

	a.sin_port = htons((uint16_t) *port);
	if (fd < 0 || bind(fd, (struct sockaddr *) &a, sizeof(a)) < 0 || listen(fd, 8) < 0 ||
	    getsockname(fd, (struct sockaddr *) &a, &l) < 0)
		return -1;
	*port = ntohs(a.sin_port);
	return fd;
}

static int connect_to(int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t) port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *) &a, sizeof(a)) < 0)
		return -1;
	return fd;
}

static int in_socketpair_eof(void)
{
	int sv[2];
	long t;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	CHECK(write(sv[0], "x", 1) == 1);
	t = now_ms();
	CHECK(close(sv[0]) == 0);
	t = eof_after(sv[1], t);
	CHECK(t >= 0 && t < 1000);
	return 0;
}

static int in_tcp_eof_and_accept(void)
{
	struct sockaddr_in peer;
	socklen_t pl = sizeof(peer);
	int port = 0, lfd = listener(&port, 0), c, s, fl;
	long t;

	CHECK(lfd >= 0);
	c = connect_to(port);
	CHECK(c >= 0);
	/* a blocking accept4 with both flags and the peer's address */
	s = accept4(lfd, (struct sockaddr *) &peer, &pl, SOCK_NONBLOCK | SOCK_CLOEXEC);
	CHECK(s >= 0);
	CHECK(pl == sizeof(peer) && peer.sin_family == AF_INET &&
	      peer.sin_addr.s_addr == htonl(INADDR_LOOPBACK));
	fl = fcntl(s, F_GETFL);
	CHECK(fl >= 0 && (fl & O_NONBLOCK));
	CHECK((fcntl(s, F_GETFD) & FD_CLOEXEC) != 0);
	CHECK(send(c, "hello", 5, 0) == 5);
	t = now_ms();
	CHECK(close(c) == 0);
	t = eof_after(s, t);
	CHECK(t >= 0 && t < 1000);
	close(s);
	/* a non-blocking listener with nothing queued */
	fl = fcntl(lfd, F_GETFL);
	CHECK(fcntl(lfd, F_SETFL, fl | O_NONBLOCK) == 0);
	errno = 0;
	CHECK(accept(lfd, NULL, NULL) < 0 && errno == EAGAIN);
	close(lfd);
	return 0;
}

static int in_exit_without_close(void)
{
	int port = 0, lfd = listener(&port, 0), s, status;
	pid_t pid;
	long t;

	CHECK(lfd >= 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		int c = connect_to(port);

		_exit(c >= 0 && send(c, "x", 1, 0) == 1 ? 0 : 1);
	}
	s = accept(lfd, NULL, NULL);
	CHECK(s >= 0);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	t = eof_after(s, now_ms());
	CHECK(t >= 0 && t < 1500);
	close(s);
	close(lfd);
	return 0;
}

static int in_rebind(void)
{
	int port = 0, lfd = listener(&port, 0);

	CHECK(lfd >= 0);
	CHECK(close(lfd) == 0);
	/* natively the port is free at once: a listener has no TIME_WAIT */
	lfd = listener(&port, 0);
	CHECK(lfd >= 0);
	close(lfd);
	return 0;
}

static int send_fds(int via, const int *fds, int n)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 4)] = {};
	struct iovec iov = {.iov_base = "f", .iov_len = 1};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = cbuf,
			   .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t) n)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t) n);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t) n);
	return sendmsg(via, &m, 0) == 1 ? 0 : -1;
}

static int recv_fds(int via, int *fds, int n)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 4)] = {}, b;
	struct iovec iov = {.iov_base = &b, .iov_len = 1};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = cbuf,
			   .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c;

	if (recvmsg(via, &m, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int) * (size_t) n))
		return -1;
	memcpy(fds, CMSG_DATA(c), sizeof(int) * (size_t) n);
	return 0;
}

static int in_scm_rights(void)
{
	int port = 0, lfd = listener(&port, 0), sv[2], p[2], c, s, status;
	char buf[16] = {};
	pid_t pid;

	CHECK(lfd >= 0);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	CHECK(pipe2(p, O_CLOEXEC) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		int got[2];
		struct iovec iov = {.iov_base = "via-sendmsg", .iov_len = 11};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};

		close(sv[0]);
		close(p[1]);
		close(lfd);
		/* a connected TCP socket and a pipe's write end */
		if (recv_fds(sv[1], got, 2) < 0)
			_exit(2);
		if (sendmsg(got[0], &m, 0) != 11) /* needs the supervisor's reference */
			_exit(3);
		if (write(got[1], "pipe", 4) != 4)
			_exit(4);
		_exit(0);
	}
	close(sv[1]);
	c = connect_to(port);
	CHECK(c >= 0);
	s = accept(lfd, NULL, NULL);
	CHECK(s >= 0);
	CHECK(send_fds(sv[0], (int[]){c, p[1]}, 2) == 0);
	close(c); /* in flight: the supervisor keeps it */
	close(p[1]);
	CHECK(waitpid(pid, &status, 0) == pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "inside: the receiver failed: status %d\n", status);
		return 1;
	}
	CHECK(recv(s, buf, sizeof(buf) - 1, MSG_WAITALL) == 11 && strcmp(buf, "via-sendmsg") == 0);
	memset(buf, 0, sizeof(buf));
	CHECK(read(p[0], buf, sizeof(buf) - 1) == 4 && strcmp(buf, "pipe") == 0);
	close(s);
	close(lfd);
	close(sv[0]);
	close(p[0]);
	return 0;
}

static int in_shared_after_parent_close(void)
{
	int port = 0, lfd = listener(&port, 0), c, s, status, go[2];
	char buf[8] = {};
	pid_t pid;

	CHECK(lfd >= 0);
	CHECK(pipe2(go, O_CLOEXEC) == 0);
	c = connect_to(port);
	CHECK(c >= 0);
	s = accept(lfd, NULL, NULL);
	CHECK(s >= 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		char b;
		struct iovec iov = {.iov_base = "late", .iov_len = 4};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};

		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(2);
		usleep(300 * 1000); /* past the close's sweeps */
		/* every sendmsg is the supervisor's: its reference is needed */
		_exit(sendmsg(c, &m, 0) == 4 ? 0 : 3);
	}
	close(go[0]);
	close(c);
	CHECK(write(go[1], "g", 1) == 1);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(recv(s, buf, 4, MSG_WAITALL) == 4 && memcmp(buf, "late", 4) == 0);
	close(s);
	close(lfd);
	close(go[1]);
	return 0;
}

static int in_many(void)
{
	for (int i = 0; i < 3000; i++) {
		int sv[2];

		CHECK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) == 0);
		close(sv[0]);
		close(sv[1]);
	}
	return 0;
}

/* inotify: an instance the supervisor made (its marker, net/socktab.c), reached through a
 * dup and in a forked child; events arrive; 300 instances opened and closed (the user's
 * limit is 128 by default: the supervisor's references must go) */
static int in_inotify(void)
{
	char dir[] = "/tmp/sbx-own-inotify-XXXXXX", path[64], buf[4096];
	int fd, fd2, wd, status;
	pid_t pid;
	ssize_t n;

	CHECK(mkdtemp(dir) != NULL);
	fd = inotify_init1(IN_CLOEXEC);
	CHECK(fd >= 0);
	fd2 = dup(fd);
	CHECK(fd2 >= 0);
	wd = inotify_add_watch(fd2, dir, IN_CREATE);
	CHECK(wd > 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(inotify_add_watch(fd, "/tmp", IN_CREATE) > 0 ? 0 : 1);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	snprintf(path, sizeof(path), "%s/new", dir);
	CHECK(close(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)) == 0);
	/* the child's watch on /tmp sees whatever else is created there (other tests running
	 * beside this one): look for ours among the events */
	{
		bool found = false;

		for (int tries = 0; tries < 50 && !found; tries++) {
			struct pollfd p = {.fd = fd, .events = POLLIN};

			CHECK(poll(&p, 1, 5000) == 1);
			n = read(fd, buf, sizeof(buf));
			CHECK(n >= (ssize_t) sizeof(struct inotify_event));
			for (ssize_t off = 0; off < n;) {
				struct inotify_event *e =
					(struct inotify_event *) (void *) (buf + off);

				if (e->wd == wd && (e->mask & IN_CREATE) && e->len &&
				    strcmp(e->name, "new") == 0)
					found = true;
				off += (ssize_t) (sizeof(*e) + e->len);
			}
		}
		CHECK(found);
	}
	close(fd);
	close(fd2);
	unlink(path);
	rmdir(dir);
	for (int i = 0; i < 300; i++) {
		int f = inotify_init1(IN_CLOEXEC);

		/* the kernel frees a closed instance later (after a grace period), and the
		 * per-user limit (fs.inotify.max_user_instances, 128) is shared with every
		 * process of this user: as root in the Docker suites, with the host's tests
		 * beside it, a run of closes could still count (EMFILE once in CI). Wait for
		 * the frees, 5 s at the most. */
		for (int w = 0; f < 0 && errno == EMFILE && w < 250; w++) {
			usleep(20 * 1000);
			f = inotify_init1(IN_CLOEXEC);
		}
		CHECK(f >= 0);
		close(f);
		if (i % 50 == 49)
			usleep(50 * 1000); /* the sweeps after the closes */
	}
	return 0;
}

/* pidfd_send_signal through the caller's own pidfd of a child */
static int in_pidfd_signal(void)
{
	int pfd, status;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	pfd = (int) syscall(SYS_pidfd_open, pid, 0);
	CHECK(pfd >= 0);
	CHECK(syscall(SYS_pidfd_send_signal, pfd, SIGTERM, NULL, 0) == 0);
	CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) &&
	      WTERMSIG(status) == SIGTERM);
	/* exited: ESRCH, as Linux says */
	errno = 0;
	CHECK(syscall(SYS_pidfd_send_signal, pfd, SIGTERM, NULL, 0) < 0 && errno == ESRCH);
	close(pfd);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(void);
} cases[] = {
	{"socketpair-eof", in_socketpair_eof},
	{"tcp-eof-and-accept", in_tcp_eof_and_accept},
	{"exit-without-close", in_exit_without_close},
	{"rebind", in_rebind},
	{"scm-rights", in_scm_rights},
	{"shared-after-parent-close", in_shared_after_parent_close},
	{"many", in_many},
	{"inotify", in_inotify},
	{"pidfd-signal", in_pidfd_signal},
};

static int run_inside(const char *name)
{
	char *argv[] = {(char *) getenv("SBXTRACE"),
			"run",
			"-s",
			"network.mode=loopback",
			(char *) getenv("SBX_POLICY"),
			"--",
			(char *) self,
			"inside",
			(char *) name,
			NULL};
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		dup2(2, 1);
		execv(argv[0], argv);
		_exit(99);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return sbx_status_code(status);
}

#define CASE(n, i)                                                                                 \
	TEST(n)                                                                                    \
	{                                                                                          \
		EXPECT_EQ(run_inside(cases[i].name), 0);                                           \
	}
CASE(socketpair_end_closed_gives_eof, 0)
CASE(tcp_close_gives_eof_and_accept_works, 1)
CASE(exit_without_close_gives_eof, 2)
CASE(port_bound_again_after_close, 3)
CASE(sockets_and_pipes_pass_in_scm_rights, 4)
CASE(socket_shared_with_a_child_outlives_the_parents_close, 5)
CASE(thousands_of_sockets_no_emfile, 6)
CASE(inotify_instances_watch_and_go, 7)
CASE(pidfd_send_signal_through_the_callers_pidfd, 8)

int main(int argc, char *argv[])
{
	static char exe[4096];

	self = sbx_self_exe(exe, sizeof(exe));
	if (argc == 3 && strcmp(argv[1], "inside") == 0) {
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			if (strcmp(cases[i].name, argv[2]) == 0)
				return cases[i].fn();
		return 2;
	}
	if (!getenv("SBXTRACE") || !getenv("SBX_POLICY")) {
		fprintf(stderr, "skip: SBXTRACE/SBX_POLICY not set (run through meson test)\n");
		return 77;
	}
	return tap_run();
}
