/* SPDX-License-Identifier: MIT */
/*
 * Signals and calls that name another process.
 *
 * Covers kill(2), tkill(2), tgkill(2), rt_sigqueueinfo(2), rt_tgsigqueueinfo(2),
 * pidfd_send_signal(2); setpgid(2) joining an existing group; prlimit(2) (prlimit64),
 * sched_setaffinity(2), sched_setparam(2), sched_setscheduler(2), sched_setattr(2), setpriority(2),
 * ioprio_set(2), migrate_pages(2), move_pages(2); fcntl(2) F_SETOWN and F_SETOWN_EX, and the
 * ioctl(2)s that do the same on a socket, FIOSETOWN and SIOCSPGRP (sock_ioctl(): f_setown()):
 * every way to name the process that the kernel later sends SIGIO or SIGURG (F_SETSIG picks
 * the signal, any signal).
 *
 * The sandboxed program may reach only processes of its own tree. A call aimed at the caller
 * itself continues in the kernel (register-only decision, and the caller cannot go away while
 * it is in the call, so its pid cannot be reused). Signals to other processes of the tree are
 * delivered by the supervisor through pidfds, so the target cannot be swapped between check
 * and delivery (DESIGN.md). Deviation from Linux: a signal delivered that way carries the
 * supervisor's pid in si_pid (SI_USER), not the sender's; rt_sigqueueinfo keeps the child's
 * siginfo as Linux does.
 *
 * The pid-target calls (prlimit64, sched_*, setpriority…) are register-only decisions that
 * continue in the kernel: the pid could in theory be reaped and reused between the check and
 * the call; Landlock cannot back these up. See docs/supervisor.md.
 */
#include "emulation/process.h"

#include <fcntl.h>
#include <linux/ioprio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "common/missing-seccomp.h"
#include "emulation/fs.h"

static void fail(EmuDecision *d, int error, bool denied, const char *why)
{
	d->verdict = EMU_FAIL;
	d->error = error;
	d->denied = denied;
	d->why = why;
}

static int finish(int r, EmuDecision *d)
{
	if (r == -EXDEV) {
		/* the fd is out of the supervisor's reach (no pidfd_getfd, not a socket it
		 * made): fail closed */
		fail(d, EPERM, true, "descriptor out of the supervisor's reach (no pidfd_getfd)");
		return 0;
	}
	if (r < 0)
		return r;
	if (r > 0) {
		fail(d, r, r == EPERM, r == EPERM ? "target outside the sandbox" : NULL);
		return 0;
	}
	d->verdict = EMU_RETURN;
	d->val = 0;
	return 0;
}

/*
 * The siginfo of rt_(tg)sigqueueinfo: copied once, checked as the kernel does (a process may
 * not forge kernel or kill() siginfo for others), si_signo set to sig. 0 or a positive errno.
 */
static int read_queued_siginfo(const EmuRequest *req, uint64_t addr, int sig, siginfo_t *ret_info)
{
	/* TOCTOU: the siginfo is copied once and the supervisor sends its own copy. */
	int r = req->mem->read(req->mem, addr, ret_info, sizeof(*ret_info));

	if (r < 0)
		return -r;
	if (ret_info->si_code >= 0 || ret_info->si_code == SI_TKILL)
		return EPERM;
	ret_info->si_signo = sig;
	return 0;
}

int emu_handle_signal(const EmuRequest *req, EmuDecision *ret_decision)
{
	const EmuHost *host = emu_process_host(req);
	EmuSignal s = {.pidfd = -1};
	siginfo_t info;
	pid_t a0 = (pid_t) req->args[0], a1 = (pid_t) req->args[1];
	int r;

	emu_decision_init(ret_decision);
	if (!host)
		return -EINVAL;

	switch (req->nr) {
	case SYS_kill:
		s.sig = (int) req->args[1];
		if (a0 == emu_req_tgid(req))
			return 0; /* self: continue */
		if (a0 > 0) {
			s.scope = EMU_SIGNAL_PROCESS;
			s.pid = a0;
		} else if (a0 == -1) {
			s.scope = EMU_SIGNAL_ALL;
		} else if (a0 == 0) {
			s.scope = EMU_SIGNAL_GROUP;
			s.pid = 0;
		} else if (a0 == INT32_MIN) {
			fail(ret_decision, ESRCH, false, NULL);
			return 0;
		} else {
			s.scope = EMU_SIGNAL_GROUP;
			s.pid = -a0;
		}
		break;
	case SYS_tkill:
		s.sig = (int) req->args[1];
		if (a0 <= 0) {
			fail(ret_decision, EINVAL, false, NULL);
			return 0;
		}
		if (a0 == req->pid)
			return 0;
		s.scope = EMU_SIGNAL_THREAD;
		s.pid = a0;
		break;
	case SYS_tgkill:
		s.sig = (int) req->args[2];
		if (a0 <= 0 || a1 <= 0) {
			fail(ret_decision, EINVAL, false, NULL);
			return 0;
		}
		if (a0 == emu_req_tgid(req))
			return 0; /* the kernel only finds threads of the caller's own group */
		s.scope = EMU_SIGNAL_THREAD;
		s.pid = a1;
		s.tgid = a0;
		break;
	case SYS_rt_sigqueueinfo:
		if (a0 == emu_req_tgid(req))
			return 0;
		s.sig = (int) req->args[1];
		r = read_queued_siginfo(req, req->args[2], s.sig, &info);
		if (r > 0) {
			fail(ret_decision, r, false, NULL);
			return 0;
		}
		s.info = &info;
		s.scope = EMU_SIGNAL_PROCESS;
		s.pid = a0;
		if (a0 <= 0) {
			fail(ret_decision, a0 == 0 ? ESRCH : EINVAL, false, NULL);
			return 0;
		}
		break;
	case SYS_rt_tgsigqueueinfo:
		if (a0 == emu_req_tgid(req))
			return 0;
		if (a0 <= 0 || a1 <= 0) {
			fail(ret_decision, EINVAL, false, NULL);
			return 0;
		}
		s.sig = (int) req->args[2];
		r = read_queued_siginfo(req, req->args[3], s.sig, &info);
		if (r > 0) {
			fail(ret_decision, r, false, NULL);
			return 0;
		}
		s.info = &info;
		s.scope = EMU_SIGNAL_THREAD;
		s.pid = a1;
		s.tgid = a0;
		break;
	case SYS_pidfd_send_signal:
		s.scope = EMU_SIGNAL_PIDFD;
		s.pidfd = (int) req->args[0];
		s.sig = (int) req->args[1];
		s.pidfd_flags = (unsigned) req->args[3];
		if (s.pidfd_flags & ~(PIDFD_SIGNAL_THREAD | PIDFD_SIGNAL_THREAD_GROUP |
				      PIDFD_SIGNAL_PROCESS_GROUP)) {
			fail(ret_decision, EINVAL, false, NULL);
			return 0;
		}
		if (s.pidfd_flags & PIDFD_SIGNAL_PROCESS_GROUP) {
			fail(ret_decision, EPERM, true,
			     "process-group pidfd signals not supported");
			return 0;
		}
		if (req->args[2]) {
			/* the kernel refuses a forged siginfo here too when we send it (the
			 * sender is the supervisor, not the target): say so before sending */
			r = read_queued_siginfo(req, req->args[2], s.sig, &info);
			if (r > 0) {
				fail(ret_decision, r, false, NULL);
				return 0;
			}
			s.info = &info;
		}
		break;
	default:
		fail(ret_decision, ENOSYS, false, NULL);
		return 0;
	}

	if (s.sig < 0 || s.sig > 64) {
		fail(ret_decision, EINVAL, false, NULL);
		return 0;
	}
	return finish(host->send_signal(host->userdata, req, &s), ret_decision);
}

static int check_continue(const EmuRequest *req, EmuDecision *d, pid_t pid, bool is_pgid)
{
	const EmuHost *host = emu_process_host(req);
	int r;

	if (!host)
		return -EINVAL;
	if (pid == 0 || (!is_pgid && (pid == req->pid || pid == emu_req_tgid(req))))
		return 0; /* self: continue */
	if (pid < 0) {
		fail(d, ESRCH, false, NULL);
		return 0;
	}
	r = host->check_target(host->userdata, req, pid, is_pgid);
	if (r < 0)
		return r;
	if (r > 0)
		fail(d, r, r == EPERM, r == EPERM ? "target outside the sandbox" : NULL);
	/* else: CONTINUE, a register-only decision */
	return 0;
}

int emu_handle_pid_target(const EmuRequest *req, EmuDecision *ret_decision)
{
	int which = (int) req->args[0];
	pid_t who = (pid_t) req->args[1];

	emu_decision_init(ret_decision);

	switch (req->nr) {
	case SYS_setpgid: {
		pid_t pid = (pid_t) req->args[0], pgid = (pid_t) req->args[1];

		if (pid == 0)
			pid = emu_req_tgid(req);
		if (pgid == 0 || pgid == pid)
			return 0; /* a new group of its own: continue */
		/* an existing group: its leader must be in the tree (a group outside, in the
		 * same session, is the caller's shell's) */
		return check_continue(req, ret_decision, pgid, true);
	}
	case SYS_setpriority:
		if (which == PRIO_PROCESS)
			return check_continue(req, ret_decision, who, false);
		if (which == PRIO_PGRP)
			return check_continue(req, ret_decision, who, true);
		if (which == PRIO_USER) {
			fail(ret_decision, EPERM, true, "reaches every process of the user");
			return 0;
		}
		fail(ret_decision, EINVAL, false, NULL);
		return 0;
	case SYS_ioprio_set:
		if (which == IOPRIO_WHO_PROCESS)
			return check_continue(req, ret_decision, who, false);
		if (which == IOPRIO_WHO_PGRP)
			return check_continue(req, ret_decision, who, true);
		if (which == IOPRIO_WHO_USER) {
			fail(ret_decision, EPERM, true, "reaches every process of the user");
			return 0;
		}
		fail(ret_decision, EINVAL, false, NULL);
		return 0;
	default:
		/* prlimit64, sched_set*, migrate_pages, move_pages: pid in args[0] */
		return check_continue(req, ret_decision, (pid_t) req->args[0], false);
	}
}

int emu_handle_fcntl_owner(const EmuRequest *req, EmuDecision *ret_decision)
{
	const EmuHost *host = emu_process_host(req);
	int fd = (int) req->args[0], cmd = (int) req->args[1];
	struct f_owner_ex ex;
	pid_t target;
	bool is_pgid;
	int r;

	emu_decision_init(ret_decision);
	if (!host)
		return -EINVAL;

	if (cmd == F_SETOWN) {
		int arg = (int) req->args[2];

		if (arg == 0 || arg == emu_req_tgid(req))
			return 0; /* clear, or self: continue */
		is_pgid = arg < 0;
		target = is_pgid ? -arg : arg;
		if (arg == INT32_MIN) {
			fail(ret_decision, ESRCH, false, NULL);
			return 0;
		}
	} else if (cmd == F_SETOWN_EX) {
		/* TOCTOU: the struct is copied and the supervisor applies its copy. */
		r = req->mem->read(req->mem, req->args[2], &ex, sizeof(ex));
		if (r < 0) {
			fail(ret_decision, -r, false, NULL);
			return 0;
		}
		if (ex.type != F_OWNER_TID && ex.type != F_OWNER_PID && ex.type != F_OWNER_PGRP) {
			fail(ret_decision, EINVAL, false, NULL);
			return 0;
		}
		if (ex.pid == 0 || (ex.type != F_OWNER_PGRP &&
				    (ex.pid == req->pid || ex.pid == emu_req_tgid(req)))) {
			/* self or clear; still apply our copy so no re-read happens */
			r = host->fcntl_dup(host->userdata, req, fd, cmd, &ex);
			return finish(r, ret_decision);
		}
		is_pgid = ex.type == F_OWNER_PGRP;
		target = ex.pid;
		if (target < 0) {
			fail(ret_decision, EINVAL, false, NULL);
			return 0;
		}
	} else {
		return 0; /* the filter only notifies the two owner commands */
	}

	r = host->check_target(host->userdata, req, target, is_pgid);
	if (r < 0)
		return r;
	if (r > 0) {
		fail(ret_decision, r, r == EPERM,
		     r == EPERM ? "SIGIO owner outside the sandbox" : NULL);
		return 0;
	}
	if (cmd == F_SETOWN)
		r = host->fcntl_dup(host->userdata, req, fd, cmd,
				    (void *) (intptr_t) (int) req->args[2]);
	else
		r = host->fcntl_dup(host->userdata, req, fd, cmd, &ex);
	if (r == -EXDEV && cmd == F_SETOWN) {
		/* an fd the supervisor cannot reach (no pidfd_getfd, not a socket of its
		 * own): the owner is a register, checked above, so the kernel may run it; the
		 * residual risk of prlimit64's: the target reaped and its pid reused between
		 * the check and the call */
		ret_decision->verdict = EMU_CONTINUE;
		return 0;
	}
	return finish(r, ret_decision);
}

int emu_handle_ioctl(const EmuRequest *req, EmuDecision *ret_decision)
{
	const EmuHost *host = emu_process_host(req);
	unsigned cmd = (unsigned) req->args[1]; /* an unsigned int in the kernel */
	int fd = (int) req->args[0], owner, r;
	pid_t target;

	emu_decision_init(ret_decision);
	if (emu_fs_ioctl_changes(cmd) && req->view)
		return emu_handle_fs_ioctl(req, ret_decision);
	if (cmd != FIOSETOWN && cmd != SIOCSPGRP)
		return 0; /* the filter notifies only these commands (or a logged ioctl) */
	if (!host || !host->ioctl_dup)
		return -EINVAL;
	/* TOCTOU: the owner is an int in child memory: copied once, checked, and the
	 * supervisor makes the call with its copy on a duplicate of the fd (the owner belongs
	 * to the open file description, which the duplicate shares). */
	r = req->mem->read(req->mem, req->args[2], &owner, sizeof(owner));
	if (r < 0) {
		fail(ret_decision, -r, false, NULL);
		return 0;
	}
	/* f_setown(): negative is a process group; 0 clears; INT_MIN cannot be negated */
	if (owner == INT32_MIN) {
		fail(ret_decision, EINVAL, false, NULL);
		return 0;
	}
	target = owner < 0 ? -owner : owner;
	if (owner != 0 && !(owner > 0 && (owner == req->pid || owner == emu_req_tgid(req)))) {
		r = host->check_target(host->userdata, req, target, owner < 0);
		if (r < 0)
			return r;
		if (r > 0) {
			fail(ret_decision, r, r == EPERM,
			     r == EPERM ? "SIGIO owner outside the sandbox" : NULL);
			return 0;
		}
	}
	r = host->ioctl_dup(host->userdata, req, fd, cmd, &owner);
	return finish(r, ret_decision);
}

int emu_handle_log(const EmuRequest *req, EmuDecision *ret_decision)
{
	(void) req;
	emu_decision_init(ret_decision);
	ret_decision->why = "logged by policy";
	return 0; /* CONTINUE: the policy only asked for a record */
}
