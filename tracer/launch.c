/* SPDX-License-Identifier: MIT */
/*
 * The command (C) and the keeper (W) of a run, and the messages they send the supervisor.
 * S's side of the run, tracer_run() and its phases, is in tracer/run.c and its event loop in
 * tracer/loop.c; what the three files share (Msg, Launch, the run state) in tracer/run.h.
 * C and W are here, apart from S, because they run in other processes: after a vfork (C
 * shares W's memory until it execs, so it calls nothing that allocates) or a fork, with
 * their own signal mask, and under the filter (C, from tracer_filter_install() on).
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
#include "tracer/run.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "common/util.h"
#include "emulation/path/view.h"
#include "policy/policy.h"
#include "tracer/budget.h"

extern char **environ;

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

int tracer_recv_msg(int sock, int kind, Msg *ret_msg)
{
	return recv_msg_fd(sock, kind, ret_msg, NULL);
}

int tracer_recv_fd(int sock, int *ret_fd, Msg *ret_msg)
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

/*
 * The keeper's hold on the command's mount namespace (kernel view), or -1. The namespace's
 * end unmounts its tree, and the unmount waits for an RCU grace period (namespace_unlock):
 * 50-80 µs on the 2-core VM, in the exit of the namespace's last process, before its parent
 * (and so S) learns of it. With our descriptor open the tree goes when we close it, after S
 * is done (keeper_remove_scratch), and the command's end is reported that much sooner.
 * Opened from /proc/PID/ns/mnt once C has exec'd; a command that is already gone by then
 * (the open fails) just ends as before. The namespace holds nothing we could be made to
 * use: we never enter it, and the descriptor is closed before the scratch directories are
 * removed, so none of them is still a mount point anywhere.
 */
static int held_mnt_ns = -1;

static void keeper_hold_mnt_ns(const Launch *l, pid_t child)
{
	char path[64];

	if (!l->kview || child <= 0)
		return;
	(void) snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int) child);
	held_mnt_ns = open(path, O_RDONLY | O_CLOEXEC);
}

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

/* What C learns on its way, for its message to S and the filter it loads. */
typedef struct ChildSetup {
	pid_t self;		/* our pid as S sees it (in a pid namespace: the command's) */
	bool kview;		/* the view is in the kernel */
	const char *kview_what; /* why a planned kernel view fell back: the step */
	int kview_errno;	/* ... and its errno */
	bool userns;		/* we are in a user namespace of ours */
	bool netns_made;	/* the kernel view made the private network namespace */
	bool ipcns;		/* in a private IPC namespace */
	bool wait_killable;	/* our filter has WAIT_KILLABLE_RECV */
} ChildSetup;

/* W and C: back on the CPUs the caller gave us, when S moved W (tracer/run.c,
 * plan_keeper_cpu()); a no-op otherwise */
static void keeper_cpus_restore(const Launch *l)
{
	if (l->keeper_moved)
		(void) sched_setaffinity(0, sizeof(l->caller_cpus), &l->caller_cpus);
}

/* restore what the keeper changed: signal mask, ignored signals, the scheduling policy and
 * the CPUs survive exec */
static void child_reset(const Launch *l)
{
	sigset_t none;

	keeper_cpus_restore(l);
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
}

/* Our parent-death signal, our own process group (the terminal's, when there is one) and
 * the capture pipes as stdout and stderr. */
static void child_own_group(const Launch *l, pid_t keeper)
{
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
}

/* The view in the kernel, when S planned it. */
static void child_enter_kview(const Launch *l, ChildSetup *c)
{
	bool entered = false;
	int r;

	if (!l->kview)
		return;
	/* "auto" falls back to the emulated view when no user namespace can be made;
	 * once one exists there is no way back */
	r = tracer_kview_enter(l->kview, l->netns != 0, &c->kview_what, &entered, &c->netns_made);
	if (r < 0 && (entered || l->policy->kernel_view == TRI_ON))
		child_fail(l->sock_c, MSG_SETUP_FAILED, -r, c->kview_what);
	c->kview = r == 0;
	c->kview_errno = r < 0 ? -r : 0;
	c->userns = c->kview;
}

/* With proc mounts: C exits here, and its new sibling goes on as the command. */
static void child_spawn_command(const Launch *l, ChildSetup *c)
{
	int p[2];
	pid_t x;

	if (!c->kview || !l->kview->n_procs)
		return;
	/* a pid namespace: we are outside it, its init is our sibling, and the command
	 * is a new sibling, pid 2 there, that goes on from here (docs/filesystem.md,
	 * "A pid namespace for /proc") */
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
	c->self = spawned_setup(l, p[0]);
}

static void child_send_prepared(const Launch *l, const ChildSetup *c)
{
	Msg pm = {.kind = MSG_PREPARED, .value = c->self};

	/* S must be able to read our memory (the exec's path, notified), take the listener
	 * (pidfd_getfd) and seize us: as S's descendant we are not dumpable (the keeper resets
	 * this for the memory we share once we exec). No code of the command runs before the
	 * exec, and the tree of another run (same user) is kept from ptrace by its filter. */
	if (prctl(PR_SET_DUMPABLE, 1) < 0)
		child_fail(l->sock_c, MSG_SETUP_FAILED, errno, "PR_SET_DUMPABLE");
	/* S's tracer thread seizes us while we set up the rest; the message says the view,
	 * and why a planned kernel view fell back: errno, the step */
	pm.what[0] = c->kview;
	pm.what[1] = (char) MIN(c->kview_errno, 255);
	(void) snprintf(pm.what + 2, sizeof(pm.what) - 2, "%s",
			c->kview_errno ? c->kview_what : "");
	if (send(l->sock_c, &pm, sizeof(pm), MSG_NOSIGNAL) < 0)
		_exit(125);
}

/* The namespaces that take capabilities, while we still have them. */
static void child_namespaces(const Launch *l, ChildSetup *c)
{
	/* before the capabilities go: root makes the namespace with CAP_SYS_ADMIN */
	if (l->netns && !c->netns_made) {
		bool netns_userns = false;
		int r = tracer_netns_enter(&netns_userns);

		if (r == 0 && netns_userns)
			c->userns = true;
		if (r < 0 && l->netns > 0)
			child_fail(l->sock_c, MSG_SETUP_FAILED, -r, "network namespace");
	}
	/* mode loopback: the namespace's own loopback, for the tree's own listeners (the
	 * namespace exists here: netns is 1, and its failure ended C above) */
	if (l->netns_lo) {
		int r = tracer_netns_lo_up();

		if (r < 0)
			child_fail(l->sock_c, MSG_SETUP_FAILED, -r, "network namespace's lo");
	}

	/* A private IPC world (docs/security.md): SysV objects and POSIX mqueues of its own,
	 * freed by the kernel with the namespace when the last process of the tree is gone.
	 * Root, and a command in a user namespace of ours, may make one; a plain user outside
	 * one may not, and gets a filter that denies the IPC calls instead. */
	c->ipcns = tracer_ipcns_enter() == 0;
}

static void child_restrict(const Launch *l, const ChildSetup *c)
{
	int r;

	/* Even under root the program runs without capabilities: CAP_SYS_PTRACE would reach
	 * the supervisor's memory, CAP_DAC_OVERRIDE every file, and so on. */
	r = drop_capabilities();
	if (r < 0)
		child_fail(l->sock_c, MSG_SETUP_FAILED, -r, "dropping capabilities");

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(l->sock_c, MSG_SETUP_FAILED, errno, "PR_SET_NO_NEW_PRIVS");
	r = tracer_landlock_apply(l->policy, l->view, c->kview ? l->kview : NULL, l->landlock_abi);
	if (r < 0)
		child_fail(l->sock_c, MSG_SETUP_FAILED, -r, "landlock");
}

/* The filter, its listener to S, and S's go. */
static void child_load_filter(const Launch *l, ChildSetup *c)
{
	Courier courier = {.pipe = {-1, -1}};
	int listener, r;
	char go;

	if (l->courier) {
		r = courier_start(&courier, l->sock_c);
		if (r < 0)
			child_fail(l->sock_c, MSG_SETUP_FAILED, -r, "the listener's courier");
	}
	c->wait_killable = l->wait_killable;
	listener =
		tracer_filter_install(l->filter, c->kview, c->ipcns, c->userns, &c->wait_killable);
	if (listener < 0)
		child_fail(l->sock_c, MSG_SETUP_FAILED, -listener, "seccomp filter");
	/* From here on every syscall goes through the filter. */
	if (l->courier)
		r = courier_send(&courier, listener, c->self, c->wait_killable, c->userns,
				 c->ipcns);
	else
		r = send_fd(l->sock_c, listener, c->self, c->wait_killable, c->userns, c->ipcns);
	if (r < 0)
		_exit(125);
	if (read(l->sock_c, &go, 1) != 1)
		_exit(125);
	(void) close(listener);
}

/* C, from W's vfork to the exec: each step in the order the kernel needs it. */
static _noreturn_ void child_main(const Launch *l, int sock_w, int sfd)
{
	ChildSetup c = {.self = getpid(), .kview_what = ""};
	pid_t keeper = getppid();

	(void) close(sock_w);
	(void) close(sfd);

	child_reset(l);
	child_own_group(l, keeper);
	child_enter_kview(l, &c);
	child_spawn_command(l, &c);
	if (!c.kview && l->cwd && chdir(l->cwd) < 0)
		child_fail(l->sock_c, MSG_SETUP_FAILED, errno, "chdir");
	child_send_prepared(l, &c);

	/* file_size, open_files and the per-process backstops of the budgets */
	budget_child_setup(l->budget);

	child_namespaces(l, &c);
	child_restrict(l, &c);
	child_load_filter(l, &c);

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

/*
 * Whether S is dead or dying: we were reparented away from it, its /proc entry is gone, or
 * its main thread is exiting (PF_EXITING in the flags of /proc/S/stat). Why not getppid()
 * alone: the EOF (or EPIPE) on our socket comes when S's last thread closes its
 * descriptors, a moment before the kernel reparents us, and a keeper that got there first
 * took S for alive and left the scratch directories to it (supervisor-sigkill, 1 run in
 * 600 under load, once the end of an empty tree got fast: tracer/tree.c). Every thread of
 * S, the main one included, is marked exiting before the last one closes the descriptors,
 * and a live S never is while it can still tell us to end (it then waits for us).
 */
static bool supervisor_gone(pid_t supervisor)
{
	/* unreadable (< 0): as before, by getppid() alone */
	return getppid() != supervisor || tree_exiting(supervisor) > 0;
}

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

/* W's signals (a signalfd for SIGCHLD and the ends), its scheduling, its parent-death
 * signal and the subreaper flag. Returns the signalfd. */
static int keeper_setup(Launch *l, pid_t supervisor)
{
	sigset_t ss;
	int sfd;

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
	return sfd;
}

/* Every descriptor but S's socket, the disk budget's inotify instance and the held mount
 * namespace. */
static void close_keeper_fds(const Launch *l, int sock_w)
{
	int keep[] = {sock_w, budget_disk_fd(l->budget), held_mnt_ns};

	close_all_except(keep, sizeof(keep) / sizeof(keep[0]));
}

/* The command ended with status: the rest of the tree goes, then S is told. Whether it was. */
static bool keeper_report_end(Launch *l, int sock_w, int status)
{
	Msg m = {.kind = MSG_STATUS, .value = status};

	/* The command is over: so is the rest of its tree. We are its subreaper
	 * and learn it first; S no longer walks the tree for this. Killed and
	 * reaped before S is told, so that S need not wait for us. */
	tree_kill_all(getpid(), true);
	wall_trace("W tree killed and reaped");
	/* Our copies of the caller's descriptors go now: S exits as soon as it
	 * is told, and a caller that reads S's output to EOF (a pipe, `$(…)`,
	 * subprocess) waits for these too (issue 21, docs/budgets.md). */
	close_keeper_fds(l, sock_w);
	wall_trace("W descriptors closed");
	m.what[0] = 1; /* and the keeper removes the scratch directories */
	if (send(sock_w, &m, sizeof(m), MSG_NOSIGNAL) == sizeof(m)) {
		wall_trace("W status sent");
		return true;
	}
	return false;
}

/* Reaps the tree until the command ends (true: S has its status) or S ends or dies (false). */
static bool keeper_reap(Launch *l, int sock_w, int sfd, pid_t supervisor, pid_t child)
{
	for (;;) {
		struct pollfd p[2] = {{sock_w, POLLIN, 0}, {sfd, POLLIN, 0}};
		struct signalfd_siginfo si;
		bool end = false;
		int status;
		pid_t pid;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return false;
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
				Msg m = {.kind = MSG_STOPPED, .value = status};

				(void) send(sock_w, &m, sizeof(m), MSG_NOSIGNAL);
				continue;
			}
			return keeper_report_end(l, sock_w, status);
		}
		if (end || getppid() != supervisor)
			return false;
	}
}

static _noreturn_ void keeper_remove_scratch(Launch *l, int sock_w, pid_t supervisor)
{
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
	close_keeper_fds(l, sock_w);
	keeper_wait_supervisor(sock_w, supervisor);
	if (held_mnt_ns >= 0)
		(void) close(held_mnt_ns); /* the view's tree is unmounted here */
	wall_trace("W S is done: removing the scratch directories");
	if (l->view)
		sbx_view_remove_scratch(l->view);
	wall_trace("W scratch directories removed");
	/* and those of runs that died with their keeper (emulation/path/scratch.c) */
	if (l->view)
		sbx_view_sweep_scratch(l->view);
	_exit(0);
}

_noreturn_ void tracer_keeper_main(Launch *l, int sock_w, pid_t supervisor)
{
	int sfd = keeper_setup(l, supervisor);
	pid_t child;
	Msg m = {};

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
	keeper_hold_mnt_ns(l, child);
	keeper_cpus_restore(l); /* S moved us before its "go", so before C's exec */
	/* C shared our memory until its exec and may have made it dumpable */
	(void) prctl(PR_SET_DUMPABLE, 0);
	(void) close(l->sock_c);
	if (l->out_w >= 0) {
		(void) close(l->out_w);
		(void) close(l->err_w);
	}

	m.kind = MSG_CHILD_PID;
	m.value = child;
	if (send(sock_w, &m, sizeof(m), MSG_NOSIGNAL) >= 0 &&
	    keeper_reap(l, sock_w, sfd, supervisor, child))
		keeper_remove_scratch(l, sock_w, supervisor);
	wall_trace("W told to end");
	tree_kill_all(getpid(), true);
	if (supervisor_gone(supervisor))
		keeper_remove_scratch(l, sock_w, supervisor); /* S died: no one else will */
	_exit(0);
}
