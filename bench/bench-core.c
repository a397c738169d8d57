/* SPDX-License-Identifier: MIT */
/*
 * bench-core: the supervisor's costs as ratios against native, measured in the same run.
 *   getpid                  kernel-allowed (the filter's fast path); also under a one-
 *                           instruction allow-all filter: what any seccomp filter costs
 *   kill(self, 0)           notified, answered CONTINUE by the real dispatcher
 *   kill(child, 0)          notified, emulated (pidfd_open + tree check + pidfd_send_signal)
 *   openat floor            a minimal supervisor in this program: RECV, read the path,
 *                           open, ADDFD+SEND (the bare seccomp-notify round trip)
 *   openat                  notified and emulated through the file-system view
 *   fork+exec+wait          /bin/true, inside vs outside
 *   startup floor           `bench-core --launch /bin/true`: the least any seccomp-notify
 *                           supervisor does to start a program (a child, a filter with a
 *                           listener, the listener handed over, go, exec, answer the
 *                           loader's opens, wait), without a policy, a view, Landlock, a
 *                           keeper or threads
 *   startup                 `sbx-driver -- /bin/true` vs `/bin/true`
 * Usage: bench-core [--driver PATH] [--quick]. Not a test: no assertion, figures only.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/missing-seccomp.h"

extern char **environ;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

static const char *bench_file = "/etc/hostname";

/* ---- inner loops (run natively or inside the sandbox); print ns per op ---- */

static double loop_getpid(long n)
{
	double t = now_ns();

	for (long i = 0; i < n; i++)
		syscall(SYS_getpid);
	return (now_ns() - t) / (double) n;
}

/* getpid in a child under a filter that allows everything: the kernel's own cost of having
 * a filter (the syscall entry's slow path), which no filter of ours can go below */
static double getpid_allow_all(long n)
{
	struct sock_filter insn = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = {.len = 1, .filter = &insn};
	double r = -1;
	int p[2];
	pid_t c;

	if (pipe(p) < 0)
		return -1;
	c = fork();
	if (c == 0) {
		double t = -1;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0)
			t = loop_getpid(n);
		(void) !write(p[1], &t, sizeof(t));
		_exit(0);
	}
	close(p[1]);
	if (c < 0 || read(p[0], &r, sizeof(r)) != sizeof(r))
		r = -1;
	close(p[0]);
	if (c > 0)
		waitpid(c, NULL, 0);
	return r;
}

static double loop_kill_self(long n)
{
	pid_t me = getpid();
	double t = now_ns();

	for (long i = 0; i < n; i++)
		kill(me, 0);
	return (now_ns() - t) / (double) n;
}

static double loop_kill_child(long n)
{
	pid_t c = fork();
	double t, r;

	if (c == 0) {
		for (;;)
			pause();
	}
	t = now_ns();
	for (long i = 0; i < n; i++)
		kill(c, 0);
	r = (now_ns() - t) / (double) n;
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	return r;
}

static double loop_openat(long n)
{
	double t = now_ns();

	for (long i = 0; i < n; i++) {
		int fd = openat(AT_FDCWD, bench_file, O_RDONLY | O_CLOEXEC);

		if (fd >= 0)
			close(fd);
	}
	return (now_ns() - t) / (double) n;
}

static double loop_spawn(long n, char *const argv[])
{
	double t = now_ns();

	for (long i = 0; i < n; i++) {
		pid_t pid;
		int st;

		if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0)
			return -1;
		waitpid(pid, &st, 0);
	}
	return (now_ns() - t) / (double) n;
}

static double inner(const char *mode, long n)
{
	char *truev[] = {(char *) "/bin/true", NULL};

	if (strcmp(mode, "getpid") == 0)
		return loop_getpid(n);
	if (strcmp(mode, "kill-self") == 0)
		return loop_kill_self(n);
	if (strcmp(mode, "kill-child") == 0)
		return loop_kill_child(n);
	if (strcmp(mode, "openat") == 0)
		return loop_openat(n);
	if (strcmp(mode, "spawn") == 0)
		return loop_spawn(n, truev);
	return -1;
}

/* runs `driver -- self --inner mode n` and reads its figure */
static double sandboxed(const char *driver, const char *self, const char *mode, long n)
{
	char nb[32], buf[64] = "";
	char *argv[] = {(char *) driver,
			(char *) "--",
			(char *) self,
			(char *) "--inner",
			(char *) mode,
			nb,
			NULL};
	posix_spawn_file_actions_t fa;
	int p[2], st;
	pid_t pid;
	ssize_t k;

	snprintf(nb, sizeof(nb), "%ld", n);
	if (pipe(p) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addclose(&fa, p[0]);
	if (posix_spawn(&pid, driver, &fa, NULL, argv, environ) != 0)
		return -1;
	close(p[1]);
	k = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	waitpid(pid, &st, 0);
	if (k <= 0)
		return -1;
	buf[k] = 0;
	return atof(buf);
}

/* ---- the bare notify floor: a minimal open + ADDFD + SEND supervisor ---- */

typedef struct Floor {
	int fd;
	pid_t pid;
	int epfd; /* >= 0: wait in epoll before each RECV (the alternative design) */
} Floor;

static void *floor_main(void *arg)
{
	Floor *f = arg;
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	char path[4096];

	for (;;) {
		if (f->epfd >= 0) {
			struct epoll_event ev;

			if (epoll_wait(f->epfd, &ev, 1, -1) < 0)
				continue;
			if (ev.events & EPOLLHUP)
				return NULL; /* the child is gone */
		}
		memset(&req, 0, sizeof(req));
		if (ioctl(f->fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			return NULL;
		}
		struct iovec l = {path, sizeof(path) - 1}, r = {(void *) req.data.args[1], 256};
		ssize_t k = process_vm_readv(req.pid, &l, 1, &r, 1, 0);
		uint64_t id = req.id;
		int fd = -1;

		path[k > 0 ? k : 0] = 0;
		path[sizeof(path) - 1] = 0;
		if (ioctl(f->fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0)
			fd = openat(AT_FDCWD, path, (int) req.data.args[2] & ~O_CLOEXEC);
		if (fd >= 0) {
			struct seccomp_notif_addfd a = {.id = req.id,
							.flags = SECCOMP_ADDFD_FLAG_SEND,
							.srcfd = (uint32_t) fd,
							.newfd_flags = O_CLOEXEC};

			(void) ioctl(f->fd, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
			close(fd);
			continue;
		}
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.error = -ENOENT;
		(void) ioctl(f->fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
}

static double floor_openat(long n, bool sync, bool use_epoll)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {4, insns};
	int sp[2], p[2];
	char buf[64] = "";
	pid_t pid;
	double r;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) < 0 || pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		char cbuf[CMSG_SPACE(sizeof(int))] = {}, b = 0;
		struct iovec iov = {&b, 1};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf)};
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		long fd;

		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			     &prog);
		if (fd < 0)
			_exit(1);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &(int){(int) fd}, sizeof(int));
		sendmsg(sp[1], &mh, 0);
		(void) !read(sp[1], &b, 1);
		snprintf(buf, sizeof(buf), "%f\n", loop_openat(n));
		(void) !write(p[1], buf, strlen(buf));
		_exit(0);
	}
	{
		char cbuf[CMSG_SPACE(sizeof(int))] = {}, b = 0;
		struct iovec iov = {&b, 1};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf)};
		pthread_t th;
		Floor f = {-1, pid, -1};
		uint64_t fl = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;

		if (recvmsg(sp[0], &mh, 0) <= 0)
			return -1;
		memcpy(&f.fd, CMSG_DATA(CMSG_FIRSTHDR(&mh)), sizeof(int));
		if (sync)
			(void) ioctl(f.fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, fl);
		if (use_epoll) {
			struct epoll_event ev = {.events = EPOLLIN, .data.fd = f.fd};

			f.epfd = epoll_create1(EPOLL_CLOEXEC);
			(void) epoll_ctl(f.epfd, EPOLL_CTL_ADD, f.fd, &ev);
		}
		pthread_create(&th, NULL, floor_main, &f);
		(void) !write(sp[0], "g", 1);
		close(p[1]);
		(void) !read(p[0], buf, sizeof(buf) - 1);
		waitpid(pid, NULL, 0);
		/* the thread may sit in RECV (not a cancellation point): closing the fd makes the
		 * retry after the cancel signal's EINTR fail with EBADF */
		close(f.fd);
		pthread_cancel(th);
		pthread_join(th, NULL);
		if (f.epfd >= 0)
			close(f.epfd);
	}
	r = atof(buf);
	return r;
}

/* ---- the startup floor: a minimal seccomp-notify launcher ---- */

static int launch_sp[2];
static char *const *launch_argv;

static int launch_child(void *arg)
{
	static struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {4, insns};
	int msg[2];
	long lfd;
	char b;

	(void) arg;
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	prctl(PR_SET_DUMPABLE, 1);
	lfd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
		      &prog);
	if (lfd < 0)
		_exit(125);
	/* by number, taken with pidfd_getfd (as sbxtrace does) */
	msg[0] = (int) lfd;
	msg[1] = (int) syscall(SYS_getpid);
	if (send(launch_sp[1], msg, sizeof(msg), 0) < 0 || read(launch_sp[1], &b, 1) != 1)
		_exit(125);
	execv(launch_argv[0], launch_argv);
	_exit(127);
}

/* bench-core --launch CMD…: runs CMD under a filter that notifies openat, answered CONTINUE,
 * as the least a seccomp-notify supervisor does: a child made with CLONE_VM (no page tables
 * copied), the listener taken with pidfd_getfd, notifications answered by the main thread,
 * no other thread. Returns CMD's exit code. */
static int launch(char *const argv[])
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	int msg[2], fd, pidfd, status;
	pid_t pid;

	launch_argv = argv;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, launch_sp) < 0)
		return 125;
	pid = clone(launch_child, stack + sizeof(stack), CLONE_VM | SIGCHLD, NULL);
	if (pid < 0 || recv(launch_sp[0], msg, sizeof(msg), 0) != sizeof(msg))
		return 125;
	pidfd = (int) syscall(SYS_pidfd_open, msg[1], 0);
	fd = (int) syscall(SYS_pidfd_getfd, pidfd, msg[0], 0);
	if (fd < 0 || write(launch_sp[0], "g", 1) != 1)
		return 125;
	for (;;) {
		struct pollfd p[2] = {{fd, POLLIN, 0}, {pidfd, POLLIN, 0}};
		struct seccomp_notif req;
		struct seccomp_notif_resp resp;

		if (poll(p, 2, -1) < 0)
			continue;
		if ((p[1].revents & POLLIN) || (p[0].revents & POLLHUP))
			break; /* exited, or no process has the filter any more */
		memset(&req, 0, sizeof(req));
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
			continue;
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		(void) ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void row(const char *name, double native, double sandbox)
{
	printf("%-34s %10.1f %10.1f %8.3f\n", name, native, sandbox,
	       native > 0 && sandbox > 0 ? sandbox / native : 0.0);
}

static double best(double a, double b)
{
	return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

int main(int argc, char *argv[])
{
	const char *driver = SBX_DRIVER_PATH;
	char self[4096];
	bool quick = false;
	long k;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--launch") == 0 && i + 1 < argc)
			return launch(argv + i + 1);
		if (strcmp(argv[i], "--inner") == 0 && i + 2 < argc) {
			printf("%f\n", inner(argv[i + 1], atol(argv[i + 2])));
			return 0;
		}
		if (strcmp(argv[i], "--driver") == 0 && i + 1 < argc)
			driver = argv[++i];
		else if (strcmp(argv[i], "--quick") == 0)
			quick = true;
	}
	k = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (k < 0)
		return 1;
	self[k] = 0;
	long scale = quick ? 1 : 5;

	printf("%-34s %10s %10s %8s\n", "ns per operation", "native", "sandbox", "ratio");
	{
		/* best of 3 alternating runs each: the machine is shared and noisy */
		double n = -1, s = -1, a = -1;

		for (int i = 0; i < 3; i++) {
			n = best(n, inner("getpid", 400000 * scale));
			a = best(a, getpid_allow_all(400000 * scale));
			s = best(s, sandboxed(driver, self, "getpid", 400000 * scale));
		}
		row("getpid, allow-all filter (floor)", n, a);
		row("getpid (kernel-allowed)", n, s);
		if (a > 0 && s > 0)
			printf("kernel-allowed getpid / allow-all floor: %.3f\n", s / a);
	}
	{
		double n = inner("kill-self", 200000 * scale), s = -1;

		for (int i = 0; i < 3; i++)
			s = best(s, sandboxed(driver, self, "kill-self", 10000 * scale));
		row("kill(self, 0) (notified, continue)", n, s);
	}
	{
		double n = inner("kill-child", 200000 * scale), s = -1;

		for (int i = 0; i < 3; i++)
			s = best(s, sandboxed(driver, self, "kill-child", 5000 * scale));
		row("kill(child, 0) (notified, emulated)", n, s);
	}
	{
		double n = -1, f = -1, fs = -1, fe = -1, se = -1;

		for (int i = 0; i < 3; i++) {
			n = best(n, inner("openat", 100000 * scale));
			f = best(f, floor_openat(10000 * scale, false, false));
			fs = best(fs, floor_openat(10000 * scale, true, false));
			fe = best(fe, floor_openat(10000 * scale, true, true));
			se = best(se, sandboxed(driver, self, "openat", 10000 * scale));
		}
		row("openat floor (open+ADDFD+SEND)", n, f);
		row("openat floor, sync wake-up", n, fs);
		row("openat floor, sync, epoll+RECV", n, fe);
		row("openat (notified, emulated)", n, se);
		if (se > 0 && fs > 0)
			printf("emulated openat / floor (sync): %.2f (target <= 1.5)\n", se / fs);
	}
	{
		double n = -1, s = -1;

		for (int i = 0; i < 3; i++) {
			n = best(n, inner("spawn", 100 * scale));
			s = best(s, sandboxed(driver, self, "spawn", 100 * scale));
		}
		row("fork+exec+wait /bin/true", n, s);
	}
	{
		char *tv[] = {(char *) "/bin/true", NULL};
		char *dv[] = {(char *) driver, (char *) "--", (char *) "/bin/true", NULL};
		char *lv[] = {self, (char *) "--launch", (char *) "/bin/true", NULL};
		double n = -1, s = -1, l = -1;

		for (int i = 0; i < 3; i++) {
			n = best(n, loop_spawn(50 * scale, tv));
			l = best(l, loop_spawn(50 * scale, lv));
			s = best(s, loop_spawn(50 * scale, dv));
		}
		row("startup floor: launch -- /bin/true", n, l);
		row("startup: run -- /bin/true", n, s);
		printf("startup overhead: %.0f us (floor %.0f us)\n", (s - n) / 1000.0,
		       (l - n) / 1000.0);
	}
	return 0;
}
