/* SPDX-License-Identifier: MIT */
/*
 * Issue 24, item 2: after a secret file is opened, no inet socket of the tree may send.
 * The policy (tests/data/ratchet-security.toml) is loopback with secret -> none; the test
 * listens on 127.0.0.1 outside and records what reaches it. Three places a connected socket
 * can hide from the ratchet's walk of /proc/PID/fd:
 *   - in flight: sent in an SCM_RIGHTS message on a socketpair (and closed by the sender)
 *     before the secret is opened, received after;
 *   - in a thread with an fd table of its own (clone with CLONE_THREAD but not CLONE_FILES):
 *     /proc/PID/fd shows the leader's table only;
 *   - in a process that made itself non-dumpable (PR_SET_DUMPABLE 0): a plain user's
 *     supervisor may not list its fds (EACCES) nor take them (EPERM).
 * After the drop each of them tries to send "LEAK"; the listener must receive none. The first
 * two run in one sandbox ("inside" with SBX_RATCHET_CASE=a), which must end normally; the
 * non-dumpable one in another (case b), which may also end with the tree killed (137): the
 * supervisor fails closed when it cannot reach every socket. The kernel view has no ratchet
 * (a level rule keeps the view emulated), so this test runs emulated only.
 */
#define FS_OWN_MAIN
#define FS_HAVE_PREPARE
#define FS_HAVE_CHECK
#include "tests/security/fs-escape.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/socket.h>

static int listen_fd = -1;
static atomic_int leaks;
static atomic_bool stop;
static pthread_t listener;

/* Outside: accepts connections and reads them; counts the ones that carry "LEAK". */
static void *listen_main(void *arg)
{
	struct pollfd p[17];
	int n = 1;

	(void) arg;
	p[0] = (struct pollfd){.fd = listen_fd, .events = POLLIN};
	while (!atomic_load(&stop)) {
		if (poll(p, (nfds_t) n, 100) <= 0)
			continue;
		if ((p[0].revents & POLLIN) && n < 17) {
			int c = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);

			if (c >= 0)
				p[n++] = (struct pollfd){.fd = c, .events = POLLIN};
		}
		for (int i = 1; i < n; i++) {
			char buf[256];
			ssize_t r;

			if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = recv(p[i].fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
			if (r > 0) {
				buf[r] = 0;
				if (strstr(buf, "LEAK")) {
					fprintf(stderr, "ESCAPE: the listener received '%s'\n",
						buf);
					atomic_fetch_add(&leaks, 1);
				}
			} else if (r == 0 || errno != EAGAIN) {
				(void) close(p[i].fd);
				p[i--] = p[--n];
			}
		}
	}
	for (int i = 1; i < n; i++)
		(void) close(p[i].fd);
	return NULL;
}

static void fs_prepare(const char *ws)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(a);
	char p[PATH_MAX + 32], text[32];

	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *) &a, sizeof(a)) < 0 ||
	    listen(listen_fd, 16) < 0 || getsockname(listen_fd, (struct sockaddr *) &a, &l) < 0) {
		perror("listener");
		exit(1);
	}
	snprintf(p, sizeof(p), "%s/port", ws);
	snprintf(text, sizeof(text), "%d\n", ntohs(a.sin_port));
	if (fs_write_file(p, text) < 0) {
		perror("port file");
		exit(1);
	}
	snprintf(p, sizeof(p), "%s/secret-data", ws);
	if (fs_write_file(p, "the secret data\n") < 0) {
		perror("secret-data");
		exit(1);
	}
	atomic_store(&stop, false);
	if (pthread_create(&listener, NULL, listen_main, NULL) != 0)
		exit(1);
}

static int fs_check(void)
{
	/* whatever was sent has arrived by now: the sandbox is gone; give the kernel a moment to
	 * hand the bytes over */
	usleep(200 * 1000);
	atomic_store(&stop, true);
	pthread_join(listener, NULL);
	(void) close(listen_fd);
	return atomic_load(&leaks) ? 1 : 0;
}

/* ---- inside ---- */

static int port;

static int tcp_connect(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t) port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (s < 0 || connect(s, (struct sockaddr *) &a, sizeof(a)) < 0) {
		perror("connect to the listener (loopback is allowed before the drop)");
		exit(1);
	}
	return s;
}

static void open_secret(void)
{
	int fd = open("/workspace/secret-data", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		perror("open the secret");
		exit(1);
	}
	close(fd);
}

static void try_leak(int s, const char *what)
{
	char m[128];

	if (send(s, "LEAK", 4, MSG_NOSIGNAL) == 4) {
		snprintf(m, sizeof(m), "%s: a send after the drop succeeded", what);
		fs_bad(m);
	}
}

static int send_fd(int sock, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u = {};
	struct iovec iov = {(void *) "f", 1};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = u.buf,
			   .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) < 0 ? -1 : 0;
}

static int recv_fd(int sock)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u = {};
	char b;
	struct iovec iov = {&b, 1};
	struct msghdr m = {.msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = u.buf,
			   .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) < 0)
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* The thread with an fd table of its own: raw syscalls only (it shares the leader's TLS). */
static int thread_pipe[2], result_pipe[2];

static int files_thread(void *arg)
{
	int s = *(int *) arg, r;
	char c;

	(void) syscall(SYS_write, thread_pipe[1], "r", 1);
	(void) syscall(SYS_read, result_pipe[0], &c, 1); /* the drop has happened */
	r = (int) syscall(SYS_sendto, s, "LEAK-c", 6, MSG_NOSIGNAL, NULL, 0);
	(void) syscall(SYS_write, thread_pipe[1], r == 6 ? "1" : "0", 1);
	syscall(SYS_exit, 0);
	return 0;
}

static int case_a(void)
{
	static char stack[256 * 1024] __attribute__((aligned(16)));
	int sp[2], s, s2, ts;
	char c;

	/* the thread's socket: connected now, then the thread gets a private copy of the fd
	 * table and the leader closes its own fd, so only the thread's table holds it */
	ts = tcp_connect();
	if (pipe2(thread_pipe, O_CLOEXEC) < 0 || pipe2(result_pipe, O_CLOEXEC) < 0)
		return 1;
	if (clone(files_thread, stack + sizeof(stack), CLONE_VM | CLONE_SIGHAND | CLONE_THREAD,
		  &ts) < 0) {
		perror("clone a thread without CLONE_FILES");
		return 1;
	}
	if (read(thread_pipe[0], &c, 1) != 1)
		return 1;
	close(ts);

	/* the socket in flight */
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sp) < 0)
		return 1;
	s = tcp_connect();
	if (send_fd(sp[0], s) < 0) {
		fprintf(stderr, "SCM_RIGHTS of a TCP socket refused before the drop: %s\n",
			strerror(errno));
		s2 = -1;
	} else
		s2 = 0;
	close(s);

	open_secret();

	if (s2 == 0) {
		s2 = recv_fd(sp[1]);
		if (s2 < 0) {
			perror("recvmsg");
			return 1;
		}
		try_leak(s2, "the socket in flight at the drop");
	}
	if (write(result_pipe[1], "g", 1) != 1 || read(thread_pipe[0], &c, 1) != 1)
		return 1;
	if (c == '1')
		fs_bad("the thread with its own fd table: a send after the drop succeeded");
	return 0;
}

static int case_b(void)
{
	int ready[2], go[2], res[2], st;
	char c;
	pid_t pid;

	if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0 || pipe2(res, O_CLOEXEC) < 0)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		int s;

		/* connected while dumpable: the supervisor reads the sockaddr of a connect in
		 * the caller's memory, which it may not do once the caller is not dumpable */
		s = tcp_connect();
		if (prctl(PR_SET_DUMPABLE, 0) < 0)
			_exit(2);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(3);
		c = send(s, "LEAK-b", 6, MSG_NOSIGNAL) == 6 ? '1' : '0';
		(void) !write(res[1], &c, 1);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	close(res[1]);
	if (read(ready[0], &c, 1) != 1)
		return 1;
	open_secret(); /* fails closed: the tree may be killed here */
	if (write(go[1], "g", 1) != 1 || read(res[0], &c, 1) != 1)
		return 1;
	if (c == '1')
		fs_bad("the non-dumpable process: a send after the drop succeeded");
	(void) waitpid(pid, &st, 0);
	return 0;
}

static int attack(void)
{
	char buf[32];
	const char *which = getenv("SBX_RATCHET_CASE");

	if (fs_read_file("/workspace/port", buf, sizeof(buf)) < 0)
		return 1;
	port = atoi(buf);
	return which && strcmp(which, "b") == 0 ? case_b() : case_a();
}

int main(int argc, char *argv[])
{
	bool landlock = !(argc > 1 && strcmp(argv[1], "--no-landlock") == 0);
	const char *policy = getenv("SBX_RATCHET_POLICY");
	int a, b;

	if (argc >= 3 && strcmp(argv[1], "inside") == 0) {
		setvbuf(stderr, NULL, _IONBF, 0);
		fs_base = argv[2];
		return attack() || fs_failures ? 1 : 0;
	}
	if (!policy || !*policy) {
		fprintf(stderr, "skip: SBX_RATCHET_POLICY is not set (run through meson)\n");
		return 77;
	}
	(void) setenv("SBX_FS_POLICY", policy, 1);
	(void) setenv("SBX_RATCHET_CASE", "a", 1);
	a = fs_outside(landlock);
	(void) setenv("SBX_RATCHET_CASE", "b", 1);
	b = fs_outside(landlock);
	if (b == 137)
		fprintf(stderr, "non-dumpable: the tree was killed (fail closed)\n");
	fprintf(stderr, "in flight and own fd table: %s; non-dumpable: %s\n", a ? "FAIL" : "ok",
		b == 0 || b == 137 ? "ok" : "FAIL");
	return a == 77 || b == 77 ? 77 : (a || (b != 0 && b != 137)) ? 1 : 0;
}
