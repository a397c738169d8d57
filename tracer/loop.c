/* SPDX-License-Identifier: MIT */
/*
 * The supervisor's event loop: its main thread, from C's "go" to the end of the command
 * (tracer/run.c runs the phases around it). The notifications are not here: the receiver
 * and worker threads answer them (tracer/dispatch.c). The main thread waits in epoll for
 * what only it acts on, and each source has its function here:
 *   the signalfd         signals for the command (forwarded to its process group), SIGCHLD;
 *   the wall-clock timer the wall_time limit: SIGTERM to the tree, then the grace timer;
 *   the budget timer     the sampled budgets (tracer/budget.c);
 *   the disk changes     inotify of the rw mounts, and the quiet timer that follows;
 *   the grace timer      kill_grace over: SIGKILL to the tree;
 *   the kill eventfd     a handler asked to kill the tree (a "kill" syscall);
 *   C's socket           the exec happened (EOF) or failed (a message);
 *   W's socket           the command stopped, or its wait status, or the keeper's end;
 *   the capture pipes    the command's output (--json, or an output limit).
 * All of them act on the run state (tracer/run.h) and on nothing else: the loop is a file of
 * its own so that an event source is added in one place.
 */
#include "tracer/run.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "audit/audit.h"
#include "common/log.h"
#include "common/util.h"
#include "policy/policy.h"
#include "tracer/budget.h"

#define OUTPUT_HARD_CAP (64ULL << 20) /* captured bytes when the policy sets no limit */

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

void run_report_disk_full(Tracer *t, Budget *b, const Policy *p)
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
	EmuRequest req = {.known_tgid = t->child, .pid = t->child};
	int r;

	r = t->host.send_signal(t->host.userdata, &req, &s);
	if (r != 0) {
		/* the command left its group (setsid, setpgid): to the command itself */
		s.scope = EMU_SIGNAL_PROCESS;
		r = t->host.send_signal(t->host.userdata, &req, &s);
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

/* ---- the event sources ---- */

static void on_signals(Run *run)
{
	struct signalfd_siginfo si;

	while (read(run->sfd, &si, sizeof(si)) == sizeof(si)) {
		int st;

		if (si.ssi_signo == SIGCHLD) {
			/* W is our only child; orphans after its death too. W's end is told by
			 * EOF on its socket, after its last message: deciding it here could come
			 * before its status is read. */
			while (waitpid(-1, &st, WNOHANG | __WALL | __WNOTHREAD) > 0)
				;
			continue;
		}
		if (si.ssi_signo == SIGTTOU)
			continue;
		if (!run->child_done)
			(void) forward_signal(&run->t, (int) si.ssi_signo);
	}
}

static void on_wall_timer(Run *run)
{
	char wb[32];
	uint64_t exp;

	if (read(run->wall_tfd, &exp, sizeof(exp)) <= 0)
		return;
	wall_trace("S wall timer read: %.1f ms after it was armed",
		   (double) (now_monotonic_ns() - run->wall_armed) / 1e6);
	format_ms(run->p->limits.wall_time_ms, wb, sizeof(wb));
	log_error("wall time limit of %s reached: stopping the process tree", wb);
	run->res.timed_out = true;
	run->res.killed_by = "wall_time";
	begin_stop(run->p, run->t.keeper, run->grace_tfd);
}

static void on_budget_timer(Run *run)
{
	pid_t keeper = run->t.keeper;
	Budget *b = &run->budget;
	char msg[256];
	const char *which;
	uint64_t exp;

	if (read(run->budget_tfd, &exp, sizeof(exp)) <= 0 || run->child_done)
		return;
	which = budget_sample(b, keeper, msg, sizeof(msg));
	arm(run->budget_tfd, budget_next_ms(b));
	run_report_disk_full(&run->t, b, run->p);
	if (run->res.killed_by && !run->tree_killed && budget_hard_exceeded(b)) {
		/* still growing in the grace period: no more grace */
		tree_kill_all(keeper, false);
		run->tree_killed = true;
	} else if (which && !run->res.killed_by) {
		log_error("%s: stopping the process tree", msg);
		tracer_audit_budget(&run->t, b, which);
		run->res.killed_by = which;
		begin_stop(run->p, keeper, run->grace_tfd);
	}
}

/* fd: the disk budget's inotify descriptor, or the quiet timer. */
static void on_disk_changes(Run *run, int fd)
{
	Budget *b = &run->budget;
	/* changes in the rw mounts between two disk walks. The fd is in the loop with
	 * EPOLLONESHOT: after a round, it stays out for the quiet time
	 * (budget_disk_quiet_start), so that a write loop does not wake us once per write */
	struct epoll_event dev = {.events = EPOLLIN | EPOLLONESHOT, .data.fd = budget_disk_fd(b)};
	uint64_t exp, quiet_ms;

	if (fd == run->disk_quiet_tfd) {
		if (read(run->disk_quiet_tfd, &exp, sizeof(exp)) <= 0)
			return;
		budget_disk_quiet_end(b);
	}
	if (budget_disk_changes(b, run->t.keeper) && !run->child_done)
		arm_sooner(run->budget_tfd, budget_disk_walk_due_ms(b));
	run_report_disk_full(&run->t, b, run->p);
	quiet_ms = budget_disk_quiet_start(b);
	if (quiet_ms)
		arm(run->disk_quiet_tfd, quiet_ms);
	else
		(void) epoll_ctl(run->epfd, EPOLL_CTL_MOD, dev.data.fd, &dev);
}

static void on_grace_timer(Run *run)
{
	uint64_t exp;

	if (read(run->grace_tfd, &exp, sizeof(exp)) <= 0)
		return;
	wall_trace("S kill_grace over: SIGKILL to the tree");
	tree_kill_all(run->t.keeper, false);
	wall_trace("S SIGKILL sweep done");
	run->tree_killed = true;
}

static void on_kill_request(Run *run)
{
	eventfd_t v;

	(void) eventfd_read(run->t.kill_eventfd, &v);
	if (!run->res.killed_by)
		run->res.killed_by = "syscall";
	tree_kill_all(run->t.keeper, false);
	run->tree_killed = true;
}

/* C's socket: EOF once the exec happened (close-on-exec), or why it failed. */
static void on_command_message(Run *run)
{
	Msg m;
	ssize_t k = recv(run->sock_c, &m, sizeof(m), MSG_DONTWAIT);

	if (k == sizeof(m) && m.kind == MSG_EXEC_FAILED)
		run->exec_errno = m.value ? m.value : EIO;
	else if (k == sizeof(m) && m.kind == MSG_SETUP_FAILED) {
		run->setup_errno = m.value ? m.value : EIO;
		snprintf(run->setup_what, sizeof(run->setup_what), "%s", m.what);
	} else if (k < 0 && errno == EAGAIN)
		return;
	run->exec_known = true;
	(void) epoll_ctl(run->epfd, EPOLL_CTL_DEL, run->sock_c, NULL);
}

/* The command's wait status, from the keeper. */
static void command_ended(Run *run, int status, bool keeper_cleans)
{
	wall_trace("S status from the keeper: %#x", status);
	run->status = status;
	run->child_done = true;
	/* the tree is gone, and the keeper removes the scratch
	 * directories: we need not wait for it */
	run->keeper_cleans = keeper_cleans;
	audit_process_exit(run->t.audit, run->t.child, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			   WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	run->res.duration_ms = (now_monotonic_ns() - run->start) / 1000000;
	/* the keeper has killed the rest of the tree
	 * (tracer_keeper_main) */
	run->tree_killed = true;
}

/* W's socket: a stop of the command, its status, and then the keeper's EOF. */
static void on_keeper_message(Run *run)
{
	Msg m;
	ssize_t k = recv(run->sock_w, &m, sizeof(m), MSG_DONTWAIT);

	if (k == sizeof(m) && m.kind == MSG_STOPPED) {
		job_stopped(&run->t, run->tty_taken);
	} else if (k == sizeof(m) && m.kind == MSG_STATUS) {
		command_ended(run, m.value, m.what[0] == 1);
	} else if (k == 0 && run->keeper_cleans) {
		wall_trace("S keeper socket EOF");
		(void) epoll_ctl(run->epfd, EPOLL_CTL_DEL, run->sock_w, NULL);
	} else if (k == 0 || (k < 0 && errno != EAGAIN)) {
		run->keeper_gone = true;
	}
}

static void dispatch(Run *run, int fd)
{
	if (fd == run->sfd)
		on_signals(run);
	else if (fd == run->wall_tfd)
		on_wall_timer(run);
	else if (fd == run->budget_tfd)
		on_budget_timer(run);
	else if (fd == budget_disk_fd(&run->budget) || fd == run->disk_quiet_tfd)
		on_disk_changes(run, fd);
	else if (fd == run->grace_tfd)
		on_grace_timer(run);
	else if (fd == run->t.kill_eventfd)
		on_kill_request(run);
	else if (fd == run->sock_c)
		on_command_message(run);
	else if (fd == run->sock_w)
		on_keeper_message(run);
	else if (fd == run->out.fd)
		capture_read(&run->out, &run->out_budget, run->out_limit, &run->output_marked);
	else if (fd == run->err.fd)
		capture_read(&run->err, &run->out_budget, run->out_limit, &run->output_marked);
}

/* ---- the loop ---- */

int run_loop_setup(Run *run)
{
	const Policy *p = run->p;

	run->sfd = signalfd(-1, &run->ss, SFD_CLOEXEC | SFD_NONBLOCK);
	run->epfd = epoll_create1(EPOLL_CLOEXEC);
	run->wall_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	run->grace_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	run->budget_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	run->disk_quiet_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (run->sfd < 0 || run->epfd < 0 || run->wall_tfd < 0 || run->grace_tfd < 0 ||
	    run->budget_tfd < 0 || run->disk_quiet_tfd < 0)
		return log_error_errno(-errno, "setting up the event loop");
	int fds[] = {run->sfd,		 run->wall_tfd,
		     run->grace_tfd,	 run->sock_c,
		     run->sock_w,	 run->t.kill_eventfd,
		     run->out.fd,	 run->err.fd,
		     run->budget_tfd,	 budget_disk_fd(&run->budget),
		     run->disk_quiet_tfd};

	for (size_t i = 0; i < ARRAY_SIZE(fds); i++) {
		struct epoll_event ev = {.events = EPOLLIN, .data.fd = fds[i]};

		/* the disk changes: one wake-up, then the quiet time (on_disk_changes) */
		if (fds[i] == budget_disk_fd(&run->budget))
			ev.events |= EPOLLONESHOT;

		if (fds[i] >= 0 && epoll_ctl(run->epfd, EPOLL_CTL_ADD, fds[i], &ev) < 0)
			return log_error_errno(-errno, "epoll_ctl");
	}
	run->wall_armed = now_monotonic_ns();
	wall_trace("S wall clock armed");
	if (p->limits.wall_time_ms != LIMIT_UNSET)
		arm(run->wall_tfd, p->limits.wall_time_ms);
	if (run->budget.tick_ms)
		arm(run->budget_tfd, run->budget.tick_ms);

	run->out_budget = p->limits.output != LIMIT_UNSET ? p->limits.output : OUTPUT_HARD_CAP;
	run->out_limit = run->out_budget;
	return 0;
}

void run_loop(Run *run)
{
	/* Loop until the command has ended and captured output is drained. */
	while (!(run->child_done && run->exec_known && run->out.fd < 0 && run->err.fd < 0) &&
	       !run->keeper_gone) {
		struct epoll_event evs[8];
		int n = epoll_wait(run->epfd, evs, ARRAY_SIZE(evs), run->child_done ? 2000 : -1);

		if (run->res.killed_by)
			wall_trace("S epoll: %d events", n);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			log_error_errno(-errno, "epoll_wait");
			break;
		}
		if (n == 0 && run->child_done) {
			/* output still open after the tree is gone: someone outside holds it */
			break;
		}
		for (int i = 0; i < n; i++)
			dispatch(run, evs[i].data.fd);
	}
	wall_trace("S event loop left");
}
