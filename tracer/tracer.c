/* SPDX-License-Identifier: MIT */
/*
 * tracer_run(): launch and the main loop.
 *
 * Three processes (docs/supervisor.md):
 *   S  the supervisor (this process): answers notifications on receiver threads; its main
 *      thread waits in epoll for signals, the wall-clock timer, the keeper, the command's exec
 *      status and captured output. S is a child subreaper too.
 *   W  the keeper, forked by S: a child subreaper whose descendants are "the tree". It reaps
 *      them, reports the command's wait status to S, and when S goes away (EOF on its socket,
 *      or the parent-death signal) kills every descendant before it exits. So a SIGKILL of S
 *      leaves nothing running (fail closed).
 *   C  the command, forked by W: own process group (the terminal's foreground group when
 *      stdin is a terminal), rlimits, PR_SET_PDEATHSIG, Landlock scopes, NO_NEW_PRIVS, the
 *      filter with a listener that it hands to S over a socket; on S's go it execs.
 * The socket C shares with S is close-on-exec: EOF means the exec happened, a message means
 * it failed (126/127) or the setup failed (125).
 * With the view in the kernel and a /proc mount (tracer/kview.c) the tree has a pid
 * namespace of its own: C clones its init and then the command's process into it, both
 * children of W (CLONE_PARENT), and exits; the command's process goes on with C's steps and
 * is what W reports and S traces ("the command" below).
 */
#include "tracer/internal.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "common/log.h"
#include "audit/audit.h"
#include "common/missing-seccomp.h"
#include "common/util.h"
#include "emulation/path/view.h"
#include "net/handlers.h"
#include "net/shutdown.h"
#include "policy/policy.h"
#include "tracer/budget.h"

extern char **environ;

#define EXIT_SANDBOX_ERROR_CODE 125
#define OUTPUT_HARD_CAP		(64ULL << 20) /* captured bytes when the policy sets no limit */

enum {
	MSG_EXEC_FAILED = 1,
	MSG_SETUP_FAILED = 2,
	MSG_STATUS = 3,
	MSG_CHILD_PID = 4,
	MSG_STOPPED = 5,
	MSG_PREPARED = 6, /* C's pid and whether the view is in the kernel: S may seize it */
};

typedef struct Msg {
	int32_t kind;
	int32_t value; /* errno, wait status, pid */
	char what[48];
} Msg;

void tracer_result_done(TracerResult *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

/* ---- the command (C) ---- */

static _noreturn_ void child_fail(int sock, int kind, int error, const char *what)
{
	Msg m = {.kind = kind, .value = error};

	snprintf(m.what, sizeof(m.what), "%s", what);
	(void) send(sock, &m, sizeof(m), MSG_NOSIGNAL);
	_exit(kind == MSG_EXEC_FAILED ? (error == ENOENT ? 127 : 126) : 125);
}

/* The listener goes to S by number, and S takes it with pidfd_getfd() (C is dumpable): not
 * with SCM_RIGHTS from C, because sendmsg() is notified (net/handlers.c) and nobody could
 * answer it before S has the listener. send() without an address runs in the kernel.
 * Where pidfd_getfd() is refused (a container's default seccomp profile, issue 19), a
 * courier sends it with SCM_RIGHTS instead: see courier_start(). */
/* The listener's number in C, and whether its filter has WAIT_KILLABLE_RECV. */
static void fd_msg(Msg *m, int fd, pid_t pid, bool wait_killable, bool userns, bool ipcns)
{
	*m = (Msg){.kind = MSG_CHILD_PID, .value = pid};
	memcpy(m->what, &fd, sizeof(fd));
	m->what[sizeof(fd)] = wait_killable;
	m->what[sizeof(fd) + 1] = userns;
	m->what[sizeof(fd) + 2] = ipcns;
}

static int send_fd(int sock, int fd, pid_t pid, bool wait_killable, bool userns, bool ipcns)
{
	Msg m;

	fd_msg(&m, fd, pid, wait_killable, userns, ipcns);
	return send(sock, &m, sizeof(m), MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/*
 * The courier: a process C clones just before it loads its filter, sharing C's descriptor
 * table (CLONE_FILES) and memory (CLONE_VM, as posix_spawn does: no copy of page tables). A
 * filter binds the thread that loads it and what that thread starts afterwards, so the
 * courier is not under it and its sendmsg() runs in the kernel. It waits until C has the
 * listener, sends C's message with the listener attached (SCM_RIGHTS) and exits; C waits for
 * it before it goes on, so it never outlives C's setup, and only our code runs in it. Its
 * parent-death signal ends it if C dies first (the shared table would keep its pipe open).
 */
typedef struct Courier {
	int sock;    /* C's end of the socket to S */
	int pipe[2]; /* C -> courier: "msg is ready" */
	Msg msg;
	int listener;
	pid_t pid;
} Courier;

static char courier_stack[16384] __attribute__((aligned(16)));

static int courier_main(void *arg)
{
	Courier *c = arg;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u = {};
	struct iovec iov;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *cm;
	char go;

	/* CLONE_VM: errno is C's; only the return values are used */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		_exit(1);
	if (read(c->pipe[0], &go, 1) != 1)
		_exit(1);
	iov = (struct iovec){&c->msg, sizeof(c->msg)};
	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof(u.buf);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &c->listener, sizeof(int));
	_exit(sendmsg(c->sock, &mh, MSG_NOSIGNAL) == (ssize_t) sizeof(c->msg) ? 0 : 1);
}

static int courier_start(Courier *c, int sock)
{
	c->sock = sock;
	if (pipe2(c->pipe, O_CLOEXEC) < 0)
		return -errno;
	c->pid = clone(courier_main, courier_stack + sizeof(courier_stack),
		       CLONE_VM | CLONE_FILES | SIGCHLD, c);
	return c->pid < 0 ? -errno : 0;
}

/* Under the filter now: write, wait4 and close run in the kernel. */
static int courier_send(Courier *c, int listener, pid_t self, bool wait_killable, bool userns,
			bool ipcns)
{
	int status;

	fd_msg(&c->msg, listener, self, wait_killable, userns, ipcns);
	c->listener = listener;
	if (write(c->pipe[1], "g", 1) != 1)
		return -EIO;
	if (waitpid(c->pid, &status, 0) != c->pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -EIO;
	(void) close(c->pipe[0]);
	(void) close(c->pipe[1]);
	return 0;
}

/* One message from C, of the kind expected; anything else (C's MSG_SETUP_FAILED, say) is
 * returned in *ret_msg with -EBADMSG. With ret_fd, a descriptor attached (SCM_RIGHTS) goes
 * there (-1: none). */
static int recv_msg_fd(int sock, int kind, Msg *ret_msg, int *ret_fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u = {};
	Msg m = {};
	struct iovec iov = {&m, sizeof(m)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	if (ret_fd) {
		*ret_fd = -1;
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
	}
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (ret_fd)
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
			    c->cmsg_len == CMSG_LEN(sizeof(int)))
				memcpy(ret_fd, CMSG_DATA(c), sizeof(int));
	if (n == 0)
		return -EPIPE;
	if ((size_t) n >= offsetof(Msg, what))
		*ret_msg = m;
	if ((size_t) n != sizeof(m) || m.kind != kind)
		return -EBADMSG;
	return 0;
}

static int recv_msg(int sock, int kind, Msg *ret_msg)
{
	return recv_msg_fd(sock, kind, ret_msg, NULL);
}

static int recv_fd(int sock, int *ret_fd, Msg *ret_msg)
{
	_cleanup_close_ int attached = -1;
	Msg m = {};
	long pidfd;
	int fd, cfd, r;

	r = recv_msg_fd(sock, MSG_CHILD_PID, &m, &attached);
	*ret_msg = m;
	if (r < 0)
		return r;
	if (attached >= 0) {
		/* the courier's (pidfd_getfd refused) */
		*ret_fd = TAKE_FD(attached);
		return 0;
	}
	memcpy(&cfd, m.what, sizeof(cfd));
	pidfd = syscall(SYS_pidfd_open, m.value, 0);
	if (pidfd < 0)
		return -errno;
	/* C waits for our "go" before it closes its copy */
	fd = (int) syscall(SYS_pidfd_getfd, (int) pidfd, cfd, 0);
	if (fd < 0)
		fd = -errno;
	(void) close((int) pidfd);
	if (fd < 0)
		return fd;
	*ret_fd = fd;
	return 0;
}

typedef struct Launch {
	const Policy *policy;
	const TracerOptions *opts;
	const TracerFilter *filter;
	const SbxView *view;
	char **envp;
	const char *cwd;
	const char *exec_path; /* argv[0] found on PATH in the view by S, or NULL: execvp */
	const KView *kview;    /* the view to build in the kernel (tracer/kview.c), or NULL */
	int netns;	       /* a private network namespace: 1 required, -1 if possible, 0 no */
	bool tty;
	bool wait_killable;
	bool courier; /* pidfd_getfd refused: the listener goes with SCM_RIGHTS */
	int landlock_abi;
	int sched_policy; /* the caller's, which the keeper changes and C restores */
	struct sched_param sched_param;
	int sock_c;	  /* C's end of the socket to S */
	int out_w, err_w; /* capture pipes, -1 */
	pid_t keeper;
	const Budget *budget;
} Launch;

static int drop_capabilities(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2] = {};

	/* Without CAP_SETPCAP (a plain user) the bounding set cannot change, and need not: with
	 * no_new_privs an exec gains nothing. Capabilities are numbered without gaps, so EINVAL
	 * ends the list (one prctl per capability, not 64). */
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
			if (errno == EINVAL || errno == EPERM)
				break;
			return -errno;
		}
	(void) prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (syscall(SYS_capset, &h, d) < 0)
		return -errno;
	return 0;
}

/* With a pid namespace (proc mounts in the kernel view) the command is not C but a process
 * C clones into it (tracer_kview_spawn()): C writes its pid here before it exits, for the
 * keeper, whose memory C shares until then (vfork). */
static volatile pid_t spawned_command;

/* In the command's process in a pid namespace: its own group and the terminal again (C's
 * were made for C), and its pid as S sees it, from C. */
static pid_t spawned_setup(const Launch *l, int from_c)
{
	pid_t self;

	if (read(from_c, &self, sizeof(self)) != sizeof(self))
		_exit(125);
	(void) close(from_c);
	/* our parent is the keeper, as C's was; we cannot see it from here (getppid() is 0),
	 * and it waits for C's exit before it goes on, so it is alive now */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		child_fail(l->sock_c, MSG_SETUP_FAILED, errno, "PR_SET_PDEATHSIG");
	if (setpgid(0, 0) < 0)
		child_fail(l->sock_c, MSG_SETUP_FAILED, errno, "setpgid");
	if (l->tty) {
		(void) signal(SIGTTOU, SIG_IGN);
		(void) tcsetpgrp(STDIN_FILENO, getpgrp());
		(void) signal(SIGTTOU, SIG_DFL);
	}
	return self;
}

static _noreturn_ void child_main(const Launch *l, int sock_w, int sfd)
{
	sigset_t none;
	int listener, r;
	pid_t keeper = getppid(), self = getpid();
	bool kview = false, wait_killable, userns = false, ipcns, netns_made = false;
	const char *kview_what = "";
	int kview_errno = 0;
	Courier courier = {.pipe = {-1, -1}};
	char go;

	(void) close(sock_w);
	(void) close(sfd);

	/* restore what the keeper changed: signal mask, ignored signals and the scheduling
	 * policy survive exec */
	if (l->sched_policy >= 0)
		(void) sched_setscheduler(0, l->sched_policy, &l->sched_param);
	sigemptyset(&none);
	(void) sigprocmask(SIG_SETMASK, &none, NULL);
	(void) signal(SIGTTOU, SIG_DFL);
	(void) signal(SIGTTIN, SIG_DFL);
	(void) signal(SIGTSTP, SIG_DFL);
	(void) signal(SIGINT, SIG_DFL);
	(void) signal(SIGQUIT, SIG_DFL);
	(void) signal(SIGHUP, SIG_DFL);
	(void) signal(SIGUSR1, SIG_DFL);
	(void) signal(SIGTERM, SIG_DFL);
	(void) signal(SIGPIPE, SIG_DFL);

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		child_fail(l->sock_c, MSG_SETUP_FAILED, errno, "PR_SET_PDEATHSIG");
	if (getppid() != keeper)
		_exit(125); /* the keeper is already gone */

	if (setpgid(0, 0) < 0)
		child_fail(l->sock_c, MSG_SETUP_FAILED, errno, "setpgid");
	if (l->tty) {
		/* we are in a background group now: tcsetpgrp would stop us with SIGTTOU */
		(void) signal(SIGTTOU, SIG_IGN);
		(void) tcsetpgrp(STDIN_FILENO, getpid());
		(void) signal(SIGTTOU, SIG_DFL);
	}
	if (l->out_w >= 0) {
		if (dup2(l->out_w, STDOUT_FILENO) < 0 || dup2(l->err_w, STDERR_FILENO) < 0)
			child_fail(l->sock_c, MSG_SETUP_FAILED, errno, "dup2");
		(void) close(l->out_w);
		(void) close(l->err_w);
	}
	if (l->kview) {
		bool entered = false;

		/* "auto" falls back to the emulated view when no user namespace can be made;
		 * once one exists there is no way back */
		r = tracer_kview_enter(l->kview, l->netns != 0, &kview_what, &entered,
				       &netns_made);
		if (r < 0 && (entered || l->policy->kernel_view == TRI_ON))
			child_fail(l->sock_c, MSG_SETUP_FAILED, -r, kview_what);
		kview = r == 0;
		kview_errno = r < 0 ? -r : 0;
		userns = kview;
	}
	if (kview && l->kview->n_procs) {
		/* a pid namespace: we are outside it, its init is our sibling, and the command
		 * is a new sibling, pid 2 there, that goes on from here (docs/filesystem.md,
		 * "A pid namespace for /proc") */
		int p[2];
		pid_t x;

		if (pipe2(p, O_CLOEXEC) < 0)
			child_fail(l->sock_c, MSG_SETUP_FAILED, errno, "pipe");
		x = tracer_kview_spawn();
		if (x < 0)
			child_fail(l->sock_c, MSG_SETUP_FAILED, -x, "the command's process (pid 2)");
		if (x > 0) {
			spawned_command = x;
			_exit(write(p[1], &x, sizeof(x)) == sizeof(x) ? 0 : 125);
		}
		(void) close(p[1]);
		self = spawned_setup(l, p[0]);
	}
	if (!kview && l->cwd && chdir(l->cwd) < 0)
		child_fail(l->sock_c, MSG_SETUP_FAILED, errno, "chdir");

	/* S must be able to read our memory (the exec's path, notified), take the listener
	 * (pidfd_getfd) and seize us: as S's descendant we are not dumpable (the keeper resets
	 * this for the memory we share once we exec). No code of the command runs before the
	 * exec, and the tree of another run (same user) is kept from ptrace by its filter. */
	if (prctl(PR_SET_DUMPABLE, 1) < 0)
		child_fail(l->sock_c, MSG_SETUP_FAILED, errno, "PR_SET_DUMPABLE");
	/* S's tracer thread seizes us while we set up the rest */
	{
		Msg pm = {.kind = MSG_PREPARED, .value = self};

		/* the view, and why a planned kernel view fell back: errno, the step */
		pm.what[0] = kview;
		pm.what[1] = (char) MIN(kview_errno, 255);
		(void) snprintf(pm.what + 2, sizeof(pm.what) - 2, "%s",
				kview_errno ? kview_what : "");
		if (send(l->sock_c, &pm, sizeof(pm), MSG_NOSIGNAL) < 0)
			_exit(125);
	}

	/* file_size, open_files and the per-process backstops of the budgets */
	budget_child_setup(l->budget);

	/* before the capabilities go: root makes the namespace with CAP_SYS_ADMIN */
	if (l->netns && !netns_made) {
		bool netns_userns = false;

		r = tracer_netns_enter(&netns_userns);
		if (r == 0 && netns_userns)
			userns = true;
		if (r < 0 && l->netns > 0)
			child_fail(l->sock_c, MSG_SETUP_FAILED, -r, "network namespace");
	}

	/* A private IPC world (docs/security.md): SysV objects and POSIX mqueues of its own,
	 * freed by the kernel with the namespace when the last process of the tree is gone.
	 * Root, and a command in a user namespace of ours, may make one; a plain user outside
	 * one may not, and gets a filter that denies the IPC calls instead. */
	ipcns = tracer_ipcns_enter() == 0;

	/* Even under root the program runs without capabilities: CAP_SYS_PTRACE would reach
	 * the supervisor's memory, CAP_DAC_OVERRIDE every file, and so on. */
	r = drop_capabilities();
	if (r < 0)
		child_fail(l->sock_c, MSG_SETUP_FAILED, -r, "dropping capabilities");

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(l->sock_c, MSG_SETUP_FAILED, errno, "PR_SET_NO_NEW_PRIVS");
	r = tracer_landlock_apply(l->policy, l->view, kview ? l->kview : NULL, l->landlock_abi);
	if (r < 0)
		child_fail(l->sock_c, MSG_SETUP_FAILED, -r, "landlock");

	if (l->courier) {
		r = courier_start(&courier, l->sock_c);
		if (r < 0)
			child_fail(l->sock_c, MSG_SETUP_FAILED, -r, "the listener's courier");
	}
	wait_killable = l->wait_killable;
	listener = tracer_filter_install(l->filter, kview, ipcns, userns, &wait_killable);
	if (listener < 0)
		child_fail(l->sock_c, MSG_SETUP_FAILED, -listener, "seccomp filter");
	/* From here on every syscall goes through the filter. */
	if (l->courier) {
		if (courier_send(&courier, listener, self, wait_killable, userns, ipcns) < 0)
			_exit(125);
	} else if (send_fd(l->sock_c, listener, self, wait_killable, userns, ipcns) < 0)
		_exit(125);
	if (read(l->sock_c, &go, 1) != 1)
		_exit(125);
	(void) close(listener);

	/* only stdin, stdout and stderr pass: no inherited descriptor of the caller (a
	 * directory, a socket) may reach around the view */
	(void) syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
	environ = l->envp;
	if (l->exec_path)
		execve(l->exec_path, l->opts->argv, l->envp);
	/* not found by S, or the file changed since: execvp's own search and errors */
	execvp(l->opts->argv[0], l->opts->argv);
	child_fail(l->sock_c, MSG_EXEC_FAILED, errno, "exec");
}

/* ---- the keeper (W) ---- */

/* Returns once S is done with us: EOF on our socket, which S closes when it returns from
 * tracer_run() (at its exit, in effect) after a status it has read, or as soon as it leaves
 * its loop otherwise (it may then wait for us), and which its death closes too. S sends us
 * nothing. The timeout and getppid() are only a safety net. */
static void keeper_wait_supervisor(int sock_w, pid_t supervisor)
{
	while (getppid() == supervisor) {
		struct pollfd p = {sock_w, POLLIN, 0};
		char buf[64];
		ssize_t n;

		if (poll(&p, 1, 1000) <= 0)
			continue;
		n = read(sock_w, buf, sizeof(buf));
		if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
			return;
	}
}

static _noreturn_ void keeper_main(Launch *l, int sock_w, pid_t supervisor)
{
	sigset_t ss;
	int sfd;
	pid_t child;
	Msg m = {};

	/* W is in the caller's process group: terminal signals are not for it. It ends when S
	 * says so (EOF) or dies (EOF, or the parent-death signal). */
	sigfillset(&ss);
	(void) sigprocmask(SIG_SETMASK, &ss, NULL);
	/* SCHED_BATCH: woken when the command exits, we do not preempt S's tracer thread,
	 * which woke us and has one more wait to do before S can finish (the CPU share is
	 * unchanged: the tree's end is not delayed under load) */
	l->sched_policy = sched_getscheduler(0);
	if (l->sched_policy == SCHED_OTHER && sched_getparam(0, &l->sched_param) == 0)
		(void) sched_setscheduler(0, SCHED_BATCH, &l->sched_param);
	else
		l->sched_policy = -1; /* left as the caller set it */
	sigemptyset(&ss);
	sigaddset(&ss, SIGCHLD);
	sigaddset(&ss, SIGUSR1);
	sigaddset(&ss, SIGTERM);
	sfd = signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		_exit(125);
	/* Not SIGKILL: W must outlive S long enough to kill the tree. */
	if (prctl(PR_SET_PDEATHSIG, SIGUSR1) < 0 || prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		_exit(125);
	if (getppid() != supervisor)
		_exit(125);

	/* vfork: no copy of our page tables (a fork costs milliseconds on some VMs). W sleeps
	 * until C execs or exits; C talks to S directly meanwhile and calls nothing that
	 * allocates (child_main). */
	child = vfork();
	if (child < 0)
		_exit(125);
	if (child == 0)
		child_main(l, sock_w, sfd);
	if (spawned_command > 0)
		child = spawned_command; /* C's sibling in a pid namespace; C has exited */
	/* C shared our memory until its exec and may have made it dumpable */
	(void) prctl(PR_SET_DUMPABLE, 0);
	(void) close(l->sock_c);
	if (l->out_w >= 0) {
		(void) close(l->out_w);
		(void) close(l->err_w);
	}

	m.kind = MSG_CHILD_PID;
	m.value = child;
	if (send(sock_w, &m, sizeof(m), MSG_NOSIGNAL) < 0)
		goto kill;

	for (;;) {
		struct pollfd p[2] = {{sock_w, POLLIN, 0}, {sfd, POLLIN, 0}};
		struct signalfd_siginfo si;
		bool end = false;
		int status;
		pid_t pid;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		wall_trace("W woken: sock %#x signals %#x", p[0].revents, p[1].revents);
		if (p[0].revents) {
			char buf[64];

			if (read(sock_w, buf, sizeof(buf)) <= 0)
				end = true; /* S closed (done) or died */
		}
		while (read(sfd, &si, sizeof(si)) == sizeof(si))
			if (si.ssi_signo != SIGCHLD)
				end = true;
		while ((pid = waitpid(-1, &status, WNOHANG | WUNTRACED | __WALL)) > 0) {
			wall_trace("W reaped %d: status %#x", (int) pid, status);
			if (pid != child)
				continue;
			if (WIFSTOPPED(status)) {
				/* a stop (Ctrl-Z): S hands the terminal back */
				m.kind = MSG_STOPPED;
				m.value = status;
				(void) send(sock_w, &m, sizeof(m), MSG_NOSIGNAL);
				continue;
			}
			/* The command is over: so is the rest of its tree. We are its subreaper
			 * and learn it first; S no longer walks the tree for this. Killed and
			 * reaped before S is told, so that S need not wait for us. */
			tree_kill_all(getpid(), true);
			wall_trace("W tree killed and reaped");
			/* Our copies of the caller's descriptors go now: S exits as soon as it
			 * is told, and a caller that reads S's output to EOF (a pipe, `$(…)`,
			 * subprocess) waits for these too (issue 21, docs/budgets.md). */
			close_all_but(sock_w, budget_disk_fd(l->budget));
			wall_trace("W descriptors closed");
			m.kind = MSG_STATUS;
			m.value = status;
			m.what[0] = 1; /* and the keeper removes the scratch directories */
			if (send(sock_w, &m, sizeof(m), MSG_NOSIGNAL) == sizeof(m)) {
				wall_trace("W status sent");
				goto scratch;
			}
			goto kill;
		}
		if (end || getppid() != supervisor)
			break;
	}
kill:
	wall_trace("W told to end");
	tree_kill_all(getpid(), true);
	if (getppid() != supervisor)
		goto scratch; /* S died: no one else will */
	_exit(0);

scratch:
	/*
	 * What is left is the run's scratch directories (the skeleton, tmp mounts), and S
	 * exits without waiting for them. Every descriptor but two goes first (our caller's
	 * pipes must see EOF when S exits). Then we wait for S to be done, asleep: S's last
	 * work (its threads, its exit) has the CPU to itself, and we need no lower priority
	 * for that. Not SCHED_IDLE, as before: removing a directory takes the lock of its
	 * parent, /tmp or /dev/shm, shared with everything that creates files there, and an
	 * idle task preempted while it holds that lock (or queued for it) may not run again
	 * for seconds on a busy machine. The next run's supervisor, creating its own scratch
	 * directories there, then waited up to 25 s (docs/budgets.md, "The wall clock on a busy
	 * machine"). At our normal share, SCHED_BATCH, the removal takes its milliseconds.
	 * The disk budget's inotify instance stays open until S is done: the last close
	 * waits for an RCU grace period (docs/performance.md), and it is then ours, not S's.
	 */
	close_all_but(sock_w, budget_disk_fd(l->budget));
	keeper_wait_supervisor(sock_w, supervisor);
	wall_trace("W S is done: removing the scratch directories");
	if (l->view)
		sbx_view_remove_scratch(l->view);
	wall_trace("W scratch directories removed");
	_exit(0);
}

/* ---- the supervisor (S) ---- */

static bool env_kept(const Policy *p, const char *entry)
{
	char name[256];
	const char *eq = strchr(entry, '=');
	size_t len = eq ? (size_t) (eq - entry) : strlen(entry);

	if (!p->process.env_keep || len >= sizeof(name))
		return false;
	memcpy(name, entry, len);
	name[len] = 0;
	for (char **k = p->process.env_keep; *k; k++)
		if (fnmatch(*k, name, 0) == 0)
			return true;
	return false;
}

static int build_env(const Policy *p, char ***ret_env)
{
	char **env = NULL;

	for (char **e = environ; e && *e; e++)
		if (env_kept(p, *e) && strv_push(&env, *e) < 0)
			goto oom;
	for (char **s = p->process.env_set; s && *s; s++) {
		const char *eq = strchr(*s, '=');
		size_t len = eq ? (size_t) (eq - *s) + 1 : strlen(*s);

		/* replace an earlier entry of the same name */
		for (size_t i = 0; env && env[i]; i++)
			if (strncmp(env[i], *s, len) == 0) {
				free(env[i]);
				env[i] = env[strv_length(env) - 1];
				env[strv_length(env) - 1] = NULL;
				break;
			}
		if (strv_push(&env, *s) < 0)
			goto oom;
	}
	if (!env && strv_push(&env, "PATH=/usr/local/bin:/usr/bin:/bin") < 0)
		goto oom;
	*ret_env = env;
	return 0;
oom:
	strv_free(env);
	return -ENOMEM;
}

typedef struct Capture {
	int fd;
	char *buf;
	size_t len, cap;
	bool truncated;
	int relay_fd; /* >= 0: copy to this fd (an output limit without --json) */
} Capture;

#define OUTPUT_MARKER "[sbxtrace: output truncated at %llu bytes]\n"

static void relay(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return; /* our own output is gone: drop the rest */
		p += k;
		n -= (size_t) k;
	}
}

static bool capture_store(Capture *c, const char *p, size_t take)
{
	if (c->relay_fd >= 0) {
		relay(c->relay_fd, p, take);
		return true;
	}
	if (c->len + take + 1 > c->cap) {
		size_t cap = MAX(c->cap * 2, c->len + take + 1);
		char *b = realloc(c->buf, cap);

		if (!b)
			return false;
		c->buf = b;
		c->cap = cap;
	}
	memcpy(c->buf + c->len, p, take);
	c->len += take;
	c->buf[c->len] = 0;
	return true;
}

static void capture_read(Capture *c, uint64_t *budget, uint64_t limit, bool *marked)
{
	char tmp[65536];
	ssize_t n = read(c->fd, tmp, sizeof(tmp));

	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			wall_trace("S output pipe %d: EOF", c->fd);
			(void) close(c->fd);
			c->fd = -1;
		}
		return;
	}
	size_t take = (uint64_t) n <= *budget ? (size_t) n : (size_t) *budget;

	if (take > 0 && !capture_store(c, tmp, take)) {
		c->truncated = true;
		return;
	}
	*budget -= take;
	if (take < (size_t) n) {
		c->truncated = true;
		/* the rest is read and dropped, so the program never blocks on a full pipe; the
		 * stream that crossed the limit says so once (docs/budgets.md) */
		if (!*marked) {
			char mk[96];
			int k = snprintf(mk, sizeof(mk), OUTPUT_MARKER, (unsigned long long) limit);

			*marked = true;
			(void) capture_store(c, mk, (size_t) k);
		}
	}
}

static void arm(int tfd, uint64_t ms)
{
	struct itimerspec its = {};

	its.it_value.tv_sec = (time_t) (ms / 1000);
	its.it_value.tv_nsec = (long) (ms % 1000) * 1000000;
	if (ms == 0)
		its.it_value.tv_nsec = 1;
	(void) timerfd_settime(tfd, 0, &its, NULL);
}

/* Arms tfd for ms from now unless it is armed to expire sooner. */
static void arm_sooner(int tfd, uint64_t ms)
{
	struct itimerspec cur;

	if (timerfd_gettime(tfd, &cur) == 0 && (cur.it_value.tv_sec || cur.it_value.tv_nsec) &&
	    (uint64_t) cur.it_value.tv_sec * 1000 + (uint64_t) cur.it_value.tv_nsec / 1000000 <= ms)
		return;
	arm(tfd, ms);
}

static void report_disk_full(Tracer *t, Budget *b, const Policy *p)
{
	char lim[32];

	if (!b->disk_full_new)
		return;
	b->disk_full_new = false;
	budget_format_size(p->limits.disk, lim, sizeof(lim));
	log_warn("disk limit of %s used up: creating files now fails with EDQUOT and writing "
		 "them with %s",
		 lim, t->filter->ptrace ? "EDQUOT" : "EFBIG (no ptrace)");
	tracer_audit_budget_full(t, b);
}

static void format_ms(uint64_t ms, char *buf, size_t size)
{
	if (ms % 1000 == 0)
		snprintf(buf, size, "%llus", (unsigned long long) (ms / 1000));
	else
		snprintf(buf, size, "%llums", (unsigned long long) ms);
}

/* A budget or the wall clock ran out: SIGTERM to the tree, SIGKILL after kill_grace. */
static void begin_stop(const Policy *p, pid_t keeper, int grace_tfd)
{
	int n;

	wall_trace("S SIGTERM to the tree");
	n = tree_signal_all(keeper, SIGTERM);
	wall_trace("S SIGTERM sent to %d", n);
	arm(grace_tfd, p->limits.kill_grace_ms != LIMIT_UNSET ? p->limits.kill_grace_ms : 2000);
}

static int forward_signal(Tracer *t, int sig)
{
	/* to the command's process group, and only to processes of the tree */
	EmuSignal s = {.scope = EMU_SIGNAL_GROUP, .pid = t->child, .sig = sig, .pidfd = -1};
	EmuRequest req = {.tgid = t->child, .pid = t->child};
	int r;

	r = tracer_process_ops.send_signal(t, &req, &s);
	if (r != 0) {
		/* the command left its group (setsid, setpgid): to the command itself */
		s.scope = EMU_SIGNAL_PROCESS;
		r = tracer_process_ops.send_signal(t, &req, &s);
	}
	return r;
}

/* The command stopped (Ctrl-Z on the terminal): give the terminal back to our caller's
 * group and stop ourselves, as a shell expects of its job; when the shell continues us
 * (fg), give the terminal to the command again and continue it. */
static void job_stopped(Tracer *t, bool tty)
{
	if (!tty || tracer_ask_job_stopped(t))
		return;
	(void) tcsetpgrp(STDIN_FILENO, getpgrp());
	(void) kill(getpid(), SIGSTOP);
	/* continued */
	(void) tcsetpgrp(STDIN_FILENO, t->child);
	(void) forward_signal(t, SIGCONT);
}

/* The network ratchet dropped (net/runtime.c): its audit record. */
static void ratchet_event(void *userdata, pid_t pid, const char *path, Sensitivity level,
			  NetMode from, NetMode to, unsigned sockets_shut)
{
	Tracer *t = userdata;

	log_debug("network restricted from %s to %s: pid %d opened a %s path", net_mode_name(from),
		  net_mode_name(to), (int) pid, sensitivity_to_string(level));
	if (t->audit)
		audit_ratchet_event(t->audit, pid, path ? path : "", sensitivity_to_string(level),
				    net_mode_name(from), net_mode_name(to), sockets_shut);
}

/* Whether vpath names, in the view, a visible regular file we may execute. */
static bool view_executable(const SbxView *v, const char *vpath)
{
	_cleanup_(sbx_resolved_done) SbxResolved res = {.fd = -1, .parent_fd = -1};
	SbxLookup l = {.path = vpath, .dirfd = -1, .dir_vpath = "/", .flags = SBX_RESOLVE_FOLLOW};

	if (sbx_view_resolve(v, &l, &res) < 0 || !res.exists || res.type != S_IFREG ||
	    res.access == SBX_ACCESS_HIDDEN || res.access == SBX_ACCESS_DENIED)
		return false;
	if (faccessat(res.parent_fd, res.name, X_OK, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	return policy_exec_allowed(sbx_view_policy(v), res.vpath);
}

/*
 * A command name without '/': execvp() in C would try each directory of PATH in turn, and
 * each try is a notified execve (100-300 µs on this VM; `python3` is the fourth try of a
 * usual PATH). S looks it up in the view once instead, as execvp would: the first absolute
 * PATH entry where the name is a visible, executable regular file that [exec] allows. C then
 * execs that virtual path, checked as every execve is. Anything unusual (a relative or empty
 * PATH entry, nothing found) is left to execvp, for its exact search and errors.
 */
static char *lookup_command(const SbxView *v, char *const *envp, const char *name)
{
	const char *path = "/bin:/usr/bin"; /* execvp's default (confstr _CS_PATH) */
	char cand[PATH_MAX];

	if (!v || !name[0] || strchr(name, '/') || strlen(name) > NAME_MAX)
		return NULL;
	for (char *const *e = envp; e && *e; e++)
		if (strncmp(*e, "PATH=", 5) == 0)
			path = *e + 5;
	while (*path) {
		const char *end = strchrnul(path, ':');
		size_t len = (size_t) (end - path);

		if (len == 0 || path[0] != '/' || len + 1 + strlen(name) >= sizeof(cand))
			return NULL;
		snprintf(cand, sizeof(cand), "%.*s/%s", (int) len, path, name);
		if (view_executable(v, cand))
			return strdup(cand);
		path = *end ? end + 1 : end;
	}
	return NULL;
}

/* Waits for the keeper, then kills whatever of the tree came to us as orphans (if the keeper
 * died first, or a descendant escaped its last sweep). */
static void reap_keeper(pid_t keeper)
{
	while (waitpid(keeper, NULL, __WALL) < 0 && errno == EINTR)
		;
	tree_kill_all(getpid(), true);
}

int tracer_run(const Policy *p, const TracerOptions *opts, TracerResult *ret_result)
{
	_cleanup_close_ int sock_c_s = -1, sock_w_s = -1, sfd = -1, wall_tfd = -1, grace_tfd = -1,
			    epfd = -1, budget_tfd = -1, disk_quiet_tfd = -1;
	Budget budget;
	bool relay_output, output_marked = false;
	struct seccomp_notif_sizes sizes = {};
	Capture out = {.fd = -1, .relay_fd = -1}, err = {.fd = -1, .relay_fd = -1};
	Tracer t = {.ops = &tracer_process_ops,
		    .policy = p,
		    .opts = opts,
		    .notify_fd = -1,
		    .kill_eventfd = -1};
	TracerResult res = {.exit_code = EXIT_SANDBOX_ERROR_CODE, .net_mode_end = p->network.mode};
	Launch l = {.policy = p, .opts = opts, .out_w = -1, .err_w = -1, .sock_c = -1};
	int sp_c[2] = {-1, -1}, sp_w[2] = {-1, -1}, po[2] = {-1, -1}, pe[2] = {-1, -1};
	sigset_t ss, old_mask;
	mode_t old_umask = (mode_t) -1;
	uint64_t start, out_budget, out_limit, wall_armed = 0;
	bool child_done = false, exec_known = false, keeper_gone = false, tree_killed = false;
	bool started_dispatch = false, tty_taken = false, keeper_cleans = false;
	bool start_recorded = false;
	int status = 0, exec_errno = 0, setup_errno = 0, r;
	char setup_what[48] = "";
	char *cwd = NULL, *exec_path = NULL;
	char **envp = NULL;
	KView *kview = NULL;
	int notify_fd = -1;
	pid_t keeper;
	Msg m;

	start = now_monotonic_ns();
	wall_trace("S tracer_run");
	/* C runs with S's credentials (it is our fork) */
	r = tracer_filter_build(p, geteuid(), getegid(), &t.filter);
	if (r < 0)
		return log_error_errno(r, "building the seccomp filter");
	r = tracer_audit_setup(&t);
	if (r < 0) {
		log_error_errno(r, "starting the audit trace");
		goto out_filter;
	}
	r = tracer_bt_setup(&t);
	if (r < 0) {
		log_error_errno(r, "preparing backtraces");
		goto out_filter;
	}
	wall_trace("S setup: the view");
	r = tracer_fs_setup(&t, p);
	if (r < 0)
		goto out_filter;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0) {
		r = log_error_errno(-errno, "seccomp user notification is unavailable (Linux 5.0)");
		goto out_filter;
	}
	t.notif_size = MAX((size_t) sizes.seccomp_notif, sizeof(struct seccomp_notif));
	t.resp_size = MAX((size_t) sizes.seccomp_notif_resp, sizeof(struct seccomp_notif_resp));

	wall_trace("S setup: the budgets");
	r = budget_init(&budget, p, t.view);
	if (r < 0) {
		budget_done(&budget);
		goto out_filter;
	}
	t.budget = &budget;
	l.budget = &budget;
	/* Without --json the output goes straight to our stdout and stderr; an output limit
	 * needs it to pass through us. */
	relay_output = !opts->capture && p->limits.output != LIMIT_UNSET;

	r = build_env(p, &envp);
	if (r < 0)
		goto out_filter;
	cwd = tracer_fs_host_cwd(&t, p);
	if (!cwd) {
		r = log_error_errno(-ENOMEM, "out of memory");
		goto out_fds;
	}

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp_c) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp_w) < 0) {
		r = log_error_errno(-errno, "socketpair");
		goto out_fds;
	}
	if (opts->capture || relay_output) {
		if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
			r = log_error_errno(-errno, "pipe");
			goto out_fds;
		}
		l.out_w = po[1];
		l.err_w = pe[1];
	}
	t.kill_eventfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (t.kill_eventfd < 0) {
		r = log_error_errno(-errno, "eventfd");
		goto out_fds;
	}

	wall_trace("S setup: the kernel-view plan");
	/* the decision `sbxtrace check` reports too (tracer_kview_verdict) */
	r = tracer_kview_qualify(p, t.view, t.audit != NULL, &kview, res.view_reason,
				 sizeof(res.view_reason));
	if (r < 0) {
		log_error("%s", res.view_reason);
		goto out_fds;
	}
	if (r == 0 && p->kernel_view == TRI_ON) {
		log_error("tracer.kernel_view = true, but %s", res.view_reason);
		r = -EINVAL;
		goto out_fds;
	}
	if (r == 0)
		log_debug("the view is emulated: %s", res.view_reason);
	if (kview && kview->n_procs && (r = tracer_filter_set_pidns(t.filter)) < 0) {
		log_error_errno(r, "building the filter");
		goto out_fds;
	}
	l.kview = kview;
	l.filter = t.filter;
	l.view = t.view;
	l.envp = envp;
	l.cwd = cwd;
	exec_path = lookup_command(t.view, envp, opts->argv[0]);
	l.exec_path = exec_path;
	/* network.unshare: only with mode none (policy validation refuses true otherwise) */
	l.netns = p->network.mode == NET_MODE_NONE ? p->network.unshare_netns : 0;
	l.tty = isatty(STDIN_FILENO) == 1;
	l.wait_killable = true;
	l.courier = !pidfd_getfd_usable();
	l.landlock_abi = tracer_landlock_abi();
	l.sock_c = sp_c[1];

	/* Orphans come to us if the keeper dies; then we kill them. */
	(void) prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* Not dumpable: the sandboxed processes run as our user, and /proc/PID/mem, fd/ and
	 * ptrace of a dumpable process of the same user would hand them the supervisor (its
	 * memory, its listener). W inherits this; C's exec makes the command dumpable again,
	 * which our process_vm_readv of it needs. */
	(void) prctl(PR_SET_DUMPABLE, 0);

	/* Signals are read from a signalfd; the mask is inherited by W, which resets it. */
	sigemptyset(&ss);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGHUP);
	sigaddset(&ss, SIGQUIT);
	sigaddset(&ss, SIGUSR1);
	sigaddset(&ss, SIGUSR2);
	sigaddset(&ss, SIGWINCH);
	sigaddset(&ss, SIGCHLD);
	sigaddset(&ss, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ss, &old_mask);

	wall_trace("S forking the keeper");
	keeper = fork();
	if (keeper < 0) {
		r = log_error_errno(-errno, "fork");
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		goto out_fds;
	}
	if (keeper == 0) {
		(void) close(sp_c[0]);
		(void) close(sp_w[0]);
		if (po[0] >= 0) {
			(void) close(po[0]);
			(void) close(pe[0]);
		}
		keeper_main(&l, sp_w[1], getppid());
	}
	t.keeper = keeper;
	/* the network state (DNS stub, ratchet) before anything of the command can ask */
	r = net_runtime_start(p, keeper, tree_walk);
	if (r < 0)
		log_error_errno(r, "starting the network supervision");
	else {
		net_runtime_set_event(ratchet_event, &t);
		/* without network.unshare the tree is in our network namespace for good (the
		 * filter denies unshare and setns) */
		net_runtime_set_netns_private(l.netns != 0);
		r = tracer_ask_start(&t);
		if (r < 0)
			log_error_errno(r, "starting the approval channel of held calls");
	}
	/* The handlers that create files apply the child's umask themselves (emulation/fs.h). */
	old_umask = umask(0);
	sock_c_s = TAKE_FD(sp_c[0]);
	sock_w_s = TAKE_FD(sp_w[0]);
	(void) close(sp_c[1]);
	(void) close(sp_w[1]);
	sp_c[1] = sp_w[1] = -1;
	if (po[0] >= 0) {
		(void) close(po[1]);
		(void) close(pe[1]);
		out.fd = po[0];
		err.fd = pe[0];
		(void) fcntl(out.fd, F_SETFL, O_NONBLOCK);
		(void) fcntl(err.fd, F_SETFL, O_NONBLOCK);
		if (relay_output) {
			out.relay_fd = STDOUT_FILENO;
			err.relay_fd = STDERR_FILENO;
			/* a closed stdout of ours must not kill the supervisor */
			(void) signal(SIGPIPE, SIG_IGN);
		}
	}
	tty_taken = l.tty;

	if (r < 0) {
		setup_errno = -r;
		goto finish;
	}
	/* the receiver starts while C sets itself up */
	r = tracer_dispatch_start(&t);
	if (r < 0) {
		log_error_errno(r, "starting the receiver threads");
		goto finish;
	}
	started_dispatch = true;

	/* C's pid once its view is made, then the listener, or why it failed (W reports C's
	 * pid again once C has exec'd; the event loop ignores that) */
	memset(&m, 0, sizeof(m));
	r = recv_msg(sock_c_s, MSG_PREPARED, &m);
	wall_trace("S C prepared");
	if (r >= 0) {
		t.child = m.value;
		t.kview = m.what[0] != 0;
		t.pidns = t.kview && kview->n_procs > 0;
		res.pidns = t.pidns;
		if (kview && !t.kview)
			/* planned, but C could not enter it ("auto"): a host that refuses this
			 * user a user namespace, a directory on stdin… */
			snprintf(res.view_reason, sizeof(res.view_reason),
				 "the kernel view could not be made here (%.46s: %s)", m.what + 2,
				 strerror((unsigned char) m.what[1]));
		if (t.kview)
			/* relative AF_UNIX addresses: /proc/PID/cwd reads as the program's path */
			sbx_view_set_kernel_paths(t.view);
		log_debug("the view is %s", t.kview ? "in the kernel" : "emulated");
		/* the log's first record, now that the view is known */
		audit_run_start(opts->audit, p->path, opts->argv, t.kview ? "kernel" : "emulated",
				t.kview ? NULL : res.view_reason);
		start_recorded = true;
		audit_set_main_pid(t.audit, t.child);
		audit_process_start(t.audit, t.child, t.keeper, opts->argv);

		/* the tracer thread seizes C while C goes on with its setup; with a cpu_time
		 * budget it reports the end of every process of the tree (tracer/budget.c) */
		if (t.filter->ptrace)
			(void) budget_count_ends(&budget);
		if (t.filter->ptrace && (r = tracer_ptrace_start(&t, t.child)) < 0) {
			Msg m2 = {};
			struct pollfd pf = {.fd = sock_c_s, .events = POLLIN};

			/* C may have failed its setup (a namespace the host refuses, issue 19):
			 * gone before the seize (ESRCH) or not yet dumpable (EPERM). Its
			 * reason, not ptrace's */
			if ((r == -ESRCH || r == -EPERM) && poll(&pf, 1, 1000) > 0 &&
			    recv_msg(sock_c_s, MSG_CHILD_PID, &m2) < 0 &&
			    m2.kind == MSG_SETUP_FAILED) {
				m = m2;
				r = -EPROTO;
			} else {
				log_error("cannot trace the command (ptrace serves chdir into "
					  "translated mounts, the cpu_time, disk and tasks "
					  "budgets and backtraces; [tracer] ptrace = \"never\" "
					  "turns it off): %s",
					  strerror(-r));
				setup_errno = -r;
				goto finish;
			}
		} else {
			r = recv_fd(sock_c_s, &notify_fd, &m);
			wall_trace("S listener received");
		}
		/* read by the tracer thread at stops, all after C's exec, which follows "go" */
		if (r >= 0) {
			atomic_store(&t.wait_killable, m.what[sizeof(int)] != 0);
			res.userns = m.what[sizeof(int) + 1] != 0;
			res.ipcns = m.what[sizeof(int) + 2] != 0;
			/* the memory budget counts SysV shared memory there (tracer/budget.c);
			 * C is dumpable and has not exec'd yet */
			budget.ipc_private = res.ipcns;
			budget_shm_start(&budget, t.child);
		}
	}
	if (r < 0) {
		if (m.kind == MSG_SETUP_FAILED) {
			setup_errno = m.value;
			snprintf(setup_what, sizeof(setup_what), "%s", m.what);
		} else
			setup_errno = -r;
		log_error("cannot set up the sandbox: %s: %s",
			  setup_what[0] ? setup_what : "listener", strerror(setup_errno));
		goto finish;
	}

	/* Essentials the filter cannot prove by loading: ADDFD with SEND (5.14) and pidfds
	 * (5.6). Flags are checked before the id, so ENOENT for a bogus id means "known". */
	{
		struct seccomp_notif_addfd probe = {.id = 0, .flags = SECCOMP_ADDFD_FLAG_SEND};
		long pfd = syscall(SYS_pidfd_open, getpid(), 0);

		if (pfd >= 0)
			(void) close((int) pfd);
		if ((ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &probe) < 0 && errno == EINVAL) ||
		    pfd < 0) {
			log_error("this kernel lacks %s; see 'sbxtrace doctor'",
				  pfd < 0 ? "pidfd_open (Linux 5.3)"
					  : "SECCOMP_ADDFD_FLAG_SEND (Linux 5.14)");
			setup_errno = ENOSYS;
			goto finish;
		}
	}

	/* COMPAT: synchronous wake-up needs 6.6 */
	uint64_t fl = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
	t.sync_wakeup = ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, fl) == 0;

	tracer_dispatch_set_fd(&t, notify_fd);

	if (send(sock_c_s, "g", 1, MSG_NOSIGNAL) != 1) {
		log_error("the command went away before it could start");
		goto finish;
	}

	sfd = signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	wall_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	grace_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	budget_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	disk_quiet_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (sfd < 0 || epfd < 0 || wall_tfd < 0 || grace_tfd < 0 || budget_tfd < 0 ||
	    disk_quiet_tfd < 0) {
		log_error_errno(-errno, "setting up the event loop");
		goto finish;
	}
	{
		int fds[] = {sfd,      wall_tfd,       grace_tfd, sock_c_s,
			     sock_w_s, t.kill_eventfd, out.fd,	  err.fd, budget_tfd,
			     budget_disk_fd(&budget), disk_quiet_tfd};

		for (size_t i = 0; i < ARRAY_SIZE(fds); i++) {
			struct epoll_event ev = {.events = EPOLLIN, .data.fd = fds[i]};

			/* the disk changes: one wake-up, then the quiet time (below) */
			if (fds[i] == budget_disk_fd(&budget))
				ev.events |= EPOLLONESHOT;

			if (fds[i] >= 0 && epoll_ctl(epfd, EPOLL_CTL_ADD, fds[i], &ev) < 0) {
				log_error_errno(-errno, "epoll_ctl");
				goto finish;
			}
		}
	}
	wall_armed = now_monotonic_ns();
	wall_trace("S wall clock armed");
	if (p->limits.wall_time_ms != LIMIT_UNSET)
		arm(wall_tfd, p->limits.wall_time_ms);
	if (budget.tick_ms)
		arm(budget_tfd, budget.tick_ms);

	out_budget = p->limits.output != LIMIT_UNSET ? p->limits.output : OUTPUT_HARD_CAP;
	out_limit = out_budget;

	/* Loop until the command has ended and captured output is drained. */
	while (!(child_done && exec_known && out.fd < 0 && err.fd < 0) && !keeper_gone) {
		struct epoll_event evs[8];
		int n = epoll_wait(epfd, evs, ARRAY_SIZE(evs), child_done ? 2000 : -1);

		if (res.killed_by)
			wall_trace("S epoll: %d events", n);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			log_error_errno(-errno, "epoll_wait");
			break;
		}
		if (n == 0 && child_done) {
			/* output still open after the tree is gone: someone outside holds it */
			break;
		}
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == sfd) {
				struct signalfd_siginfo si;

				while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
					int st;

					if (si.ssi_signo == SIGCHLD) {
						/* W is our only child; orphans after its death
						 * too. W's end is told by EOF on its socket,
						 * after its last message: deciding it here
						 * could come before its status is read. */
						while (waitpid(-1, &st,
							       WNOHANG | __WALL | __WNOTHREAD) > 0)
							;
						continue;
					}
					if (si.ssi_signo == SIGTTOU)
						continue;
					if (!child_done)
						(void) forward_signal(&t, (int) si.ssi_signo);
				}
			} else if (fd == wall_tfd) {
				char wb[32];
				uint64_t exp;

				if (read(wall_tfd, &exp, sizeof(exp)) <= 0)
					continue;
				wall_trace("S wall timer read: %.1f ms after it was armed",
					   (double) (now_monotonic_ns() - wall_armed) / 1e6);
				format_ms(p->limits.wall_time_ms, wb, sizeof(wb));
				log_error(
					"wall time limit of %s reached: stopping the process tree",
					wb);
				res.timed_out = true;
				res.killed_by = "wall_time";
				begin_stop(p, keeper, grace_tfd);
			} else if (fd == budget_tfd) {
				char msg[256];
				const char *which;
				uint64_t exp;

				if (read(budget_tfd, &exp, sizeof(exp)) <= 0 || child_done)
					continue;
				which = budget_sample(&budget, keeper, msg, sizeof(msg));
				arm(budget_tfd, budget_next_ms(&budget));
				report_disk_full(&t, &budget, p);
				if (res.killed_by && !tree_killed && budget_hard_exceeded(&budget)) {
					/* still growing in the grace period: no more grace */
					tree_kill_all(keeper, false);
					tree_killed = true;
				} else if (which && !res.killed_by) {
					log_error("%s: stopping the process tree", msg);
					tracer_audit_budget(&t, &budget, which);
					res.killed_by = which;
					begin_stop(p, keeper, grace_tfd);
				}
			} else if (fd == budget_disk_fd(&budget) || fd == disk_quiet_tfd) {
				/* changes in the rw mounts between two disk walks. The fd is in
				 * the loop with EPOLLONESHOT: after a round, it stays out for the
				 * quiet time (budget_disk_quiet_start), so that a write loop does
				 * not wake us once per write */
				struct epoll_event dev = {.events = EPOLLIN | EPOLLONESHOT,
							  .data.fd = budget_disk_fd(&budget)};
				uint64_t exp, quiet_ms;

				if (fd == disk_quiet_tfd) {
					if (read(disk_quiet_tfd, &exp, sizeof(exp)) <= 0)
						continue;
					budget_disk_quiet_end(&budget);
				}
				if (budget_disk_changes(&budget, keeper) && !child_done)
					arm_sooner(budget_tfd, budget_disk_walk_due_ms(&budget));
				report_disk_full(&t, &budget, p);
				quiet_ms = budget_disk_quiet_start(&budget);
				if (quiet_ms)
					arm(disk_quiet_tfd, quiet_ms);
				else
					(void) epoll_ctl(epfd, EPOLL_CTL_MOD, dev.data.fd, &dev);
			} else if (fd == grace_tfd) {
				uint64_t exp;

				if (read(grace_tfd, &exp, sizeof(exp)) <= 0)
					continue;
				wall_trace("S kill_grace over: SIGKILL to the tree");
				tree_kill_all(keeper, false);
				wall_trace("S SIGKILL sweep done");
				tree_killed = true;
			} else if (fd == t.kill_eventfd) {
				eventfd_t v;

				(void) eventfd_read(t.kill_eventfd, &v);
				if (!res.killed_by)
					res.killed_by = "syscall";
				tree_kill_all(keeper, false);
				tree_killed = true;
			} else if (fd == sock_c_s) {
				ssize_t k = recv(sock_c_s, &m, sizeof(m), MSG_DONTWAIT);

				if (k == sizeof(m) && m.kind == MSG_EXEC_FAILED)
					exec_errno = m.value ? m.value : EIO;
				else if (k == sizeof(m) && m.kind == MSG_SETUP_FAILED) {
					setup_errno = m.value ? m.value : EIO;
					snprintf(setup_what, sizeof(setup_what), "%s", m.what);
				} else if (k < 0 && errno == EAGAIN)
					continue;
				exec_known = true;
				(void) epoll_ctl(epfd, EPOLL_CTL_DEL, sock_c_s, NULL);
			} else if (fd == sock_w_s) {
				ssize_t k = recv(sock_w_s, &m, sizeof(m), MSG_DONTWAIT);

				if (k == sizeof(m) && m.kind == MSG_STOPPED) {
					job_stopped(&t, tty_taken);
				} else if (k == sizeof(m) && m.kind == MSG_STATUS) {
					wall_trace("S status from the keeper: %#x", m.value);
					status = m.value;
					child_done = true;
					/* the tree is gone, and the keeper removes the scratch
					 * directories: we need not wait for it */
					keeper_cleans = m.what[0] == 1;
					audit_process_exit(
						t.audit, t.child,
						WIFEXITED(status) ? WEXITSTATUS(status) : -1,
						WIFSIGNALED(status) ? WTERMSIG(status) : 0);
					res.duration_ms = (now_monotonic_ns() - start) / 1000000;
					/* the keeper has killed the rest of the tree
					 * (keeper_main) */
					tree_killed = true;
				} else if (k == 0 && keeper_cleans) {
					wall_trace("S keeper socket EOF");
					(void) epoll_ctl(epfd, EPOLL_CTL_DEL, sock_w_s, NULL);
				} else if (k == 0 || (k < 0 && errno != EAGAIN)) {
					keeper_gone = true;
				}
			} else if (fd == out.fd) {
				capture_read(&out, &out_budget, out_limit, &output_marked);
			} else if (fd == err.fd) {
				capture_read(&err, &out_budget, out_limit, &output_marked);
			}
		}
	}
	(void) tree_killed;
	wall_trace("S event loop left");

finish:
	if (keeper_cleans)
		/* before the socket closes: the keeper's reference is then the last one */
		budget_disk_hand_over(&budget);
	/* Whatever happened, nothing of the tree survives us. */
	if (sock_w_s >= 0) {
		/* after the command's end the keeper has done it (keeper_main) */
		if (!keeper_gone && !child_done)
			tree_kill_all(keeper, false);
		/* After a status we have read, the keeper removes the scratch directories when
		 * this closes: at our return (its cleanup), so that the removal does not compete
		 * with our last work. Otherwise now: we may wait for the keeper below, and it
		 * for this. */
		if (!keeper_cleans) {
			(void) close(sock_w_s);
			sock_w_s = -1;
		}
	}
	if (keeper_gone) {
		/* orphans that came to us when the keeper died: tracees the tracer thread waits
		 * for below */
		reap_keeper(keeper);
	}
	/* the tracer thread ends when no tracee is left */
	wall_trace("S joining the tracer thread");
	tracer_ptrace_stop(&t);
	wall_trace("S tracer thread joined");
	if (!res.duration_ms)
		res.duration_ms = (now_monotonic_ns() - start) / 1000000;

	tracer_ask_cancel(&t);
	if (started_dispatch)
		tracer_dispatch_stop(&t);
	wall_trace("S receivers stopped");
	tracer_ask_stop(&t);
	/* a creation refused on a handler thread just before the end found the disk budget
	 * used up: the main loop may not have woken since, and its warning must not be lost */
	report_disk_full(&t, &budget, p);
	res.net_mode_end = net_runtime_mode();
	res.net_level_max = net_runtime_level();
	net_runtime_stop();
	wall_trace("S network runtime stopped");
	/* The keeper exits (an address space torn down) while we stopped our threads above;
	 * waiting for it only now keeps that off the critical path (docs/performance.md).
	 * After a status it has killed and reaped the tree already and removes the scratch
	 * directories: it is not waited for at all (init or a subreaper reaps it). */
	if (keeper_cleans)
		sbx_view_disown_scratch(t.view);
	else if (!keeper_gone)
		reap_keeper(keeper);
	if (tty_taken) {
		/* take the terminal back for our process group (SIGTTOU is blocked) */
		(void) tcsetpgrp(STDIN_FILENO, getpgrp());
	}
	if (sfd >= 0) {
		struct signalfd_siginfo si;

		while (read(sfd, &si, sizeof(si)) == sizeof(si))
			;
	}
	sigprocmask(SIG_SETMASK, &old_mask, NULL);

	if (setup_errno) {
		if (exec_known && setup_what[0])
			log_error("cannot set up the sandbox: %s: %s", setup_what,
				  strerror(setup_errno));
		res.exit_code = EXIT_SANDBOX_ERROR_CODE;
	} else if (exec_errno) {
		log_error("cannot execute '%.200s': %s", opts->argv[0], strerror(exec_errno));
		res.exit_code = exec_errno == ENOENT ? 127 : 126;
	} else if (res.timed_out) {
		res.exit_code = 124;
		if (child_done && WIFSIGNALED(status))
			res.signal = WTERMSIG(status);
	} else if (res.killed_by) {
		/* a budget (or a syscall the policy kills on): 128+SIGKILL whatever the command
		 * did with the SIGTERM (docs/budgets.md) */
		res.exit_code = 128 + SIGKILL;
		if (child_done && WIFSIGNALED(status))
			res.signal = WTERMSIG(status);
	} else if (child_done && WIFEXITED(status)) {
		res.exit_code = WEXITSTATUS(status);
	} else if (child_done && WIFSIGNALED(status)) {
		res.signal = WTERMSIG(status);
		res.exit_code = 128 + res.signal;
	} else {
		if (keeper_gone && !child_done)
			log_error("the keeper process died: the process tree was killed");
		res.exit_code = EXIT_SANDBOX_ERROR_CODE;
	}
	res.kernel_view = t.kview;
	if (t.kview)
		res.view_reason[0] = 0;
	else if (!res.view_reason[0])
		/* planned, but C could not make the user and mount namespace ("auto") */
		snprintf(res.view_reason, sizeof(res.view_reason),
			 "the user and mount namespace could not be made");
	res.landlock_abi = p->landlock != TRI_OFF && l.landlock_abi >= 1 ? l.landlock_abi : 0;
	res.ptrace = t.filter->ptrace;
	res.denied = atomic_load(&t.denied);
	res.usage_known = budget.samples > 0 || p->limits.tasks != LIMIT_UNSET;
	res.cpu_time_ms = budget.cpu_ms;
	res.memory_peak = budget.memory_peak;
	res.tasks_peak = budget.tasks_peak;
	res.disk_written = budget.disk_peak;
	res.clones_denied = budget.clones_denied;
	res.out = out.buf;
	res.out_len = out.len;
	res.out_truncated = out.truncated;
	res.err = err.buf;
	res.err_len = err.len;
	res.err_truncated = err.truncated;
	if (out.fd >= 0)
		(void) close(out.fd);
	if (err.fd >= 0)
		(void) close(err.fd);
	if (notify_fd >= 0)
		(void) close(notify_fd);
	*ret_result = res;
	wall_trace("S tracer_run done: exit %d", res.exit_code);
	r = 0;
out_fds:
	for (int *fd = (int[]){sp_c[0], sp_c[1], sp_w[0], sp_w[1], po[0], po[1], pe[0], pe[1],
			       t.kill_eventfd, -2};
	     *fd != -2; fd++)
		if (*fd >= 0 && r < 0)
			(void) close(*fd);
	if (r >= 0 && t.kill_eventfd >= 0)
		(void) close(t.kill_eventfd);
	strv_free(envp);
	free(cwd);
	free(exec_path);
	tracer_kview_free(kview);
	if (old_umask != (mode_t) -1)
		(void) umask(old_umask);
out_filter:
	/* ended before C was ready: the view was never known */
	if (!start_recorded)
		audit_run_start(opts->audit, p->path, opts->argv, NULL, res.view_reason);
	tracer_audit_done(&t);
	tracer_bt_done(&t);
	tracer_fs_done(&t);
	if (t.budget)
		budget_done(t.budget);
	tracer_filter_free(t.filter);
	return r;
}
