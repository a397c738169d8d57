/* SPDX-License-Identifier: MIT */
/*
 * The ratchet's socket shutdown (net/shutdown.c) on a real child: its TCP connection to us is
 * shut down through pidfd_getfd(), its unix socketpair is left alone.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net/shutdown.h"
#include "tests/unit/tap.h"

/* Child: connect to port, report ready, wait for go, then check what works. Exit codes:
 * 0 = TCP send fails with EPIPE and the socketpair still works; 1.. = what went wrong. */
static int child(uint16_t port, int ready_w, int go_r)
{
	struct sockaddr_in in = {.sin_family = AF_INET,
				 .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int s, sp[2];
	char c;

	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *) &in, sizeof(in)) < 0)
		return 2;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		return 3;
	if (write(ready_w, "r", 1) != 1)
		return 4;
	if (read(go_r, &c, 1) != 1)
		return 5;
	if (send(s, "x", 1, MSG_NOSIGNAL) >= 0 || errno != EPIPE)
		return 6;
	if (write(sp[0], "y", 1) != 1 || read(sp[1], &c, 1) != 1 || c != 'y')
		return 7;
	return 0;
}

TEST(shutdown_child_inet_sockets)
{
	struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(in);
	int lfd, cfd, ready[2], go[2], pidfd, status, k;
	unsigned count = 0;
	char c;
	pid_t pid;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_TRUE(lfd >= 0);
	ASSERT_EQ(bind(lfd, (struct sockaddr *) &in, sizeof(in)), 0);
	ASSERT_EQ(listen(lfd, 1), 0);
	ASSERT_EQ(getsockname(lfd, (struct sockaddr *) &in, &l), 0);
	ASSERT_EQ(pipe2(ready, O_CLOEXEC), 0);
	ASSERT_EQ(pipe2(go, O_CLOEXEC), 0);

	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (pid == 0) {
		/* the listener is shared with us: shutting it down would hit ours too */
		close(lfd);
		_exit(child(ntohs(in.sin_port), ready[1], go[0]));
	}
	cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	ASSERT_TRUE(cfd >= 0);
	ASSERT_EQ(read(ready[0], &c, 1), 1);

	pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
	ASSERT_TRUE(pidfd >= 0);
	k = net_shutdown_inet_sockets(pidfd, pid, &count);
	if (k == -EPERM || k == -ENOSYS) {
		(void) kill(pid, SIGKILL);
		(void) waitpid(pid, NULL, 0);
		close(pidfd), close(cfd), close(lfd);
		SKIP("pidfd_getfd() refused here (%s): nothing to shut down from outside",
		     strerror(-k));
	}
	EXPECT_EQ(k, 0);
	EXPECT_EQ(count, 1);
	/* our end sees the FIN */
	EXPECT_EQ(read(cfd, &c, 1), 0);

	ASSERT_EQ(write(go[1], "g", 1), 1);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(WEXITSTATUS(status), 0);

	/* the process is gone now */
	EXPECT_EQ(net_shutdown_inet_sockets(pidfd, pid, &count), -ESRCH);
	close(pidfd), close(cfd), close(lfd);
	close(ready[0]), close(ready[1]), close(go[0]), close(go[1]);
}

TEST(notice)
{
	char buf[128];

	EXPECT_STREQ(net_ratchet_notice(NET_MODE_NONE, SENSITIVITY_SECRET, buf, sizeof(buf)),
		     "sbxtrace: network restricted to none: a secret file was opened\n");
	EXPECT_STREQ(
		net_ratchet_notice(NET_MODE_ALLOWLIST, SENSITIVITY_CONFIDENTIAL, buf, sizeof(buf)),
		"sbxtrace: network restricted to allowlist: a confidential file was opened\n");
	EXPECT_TRUE(net_mode_name((NetMode) 4) == NULL);
}

int main(void)
{
	return tap_run();
}
