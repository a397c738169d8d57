/* SPDX-License-Identifier: MIT */
/*
 * Notification dispatch: the leading thread blocks in SECCOMP_IOCTL_NOTIF_RECV, looks the
 * number up in the slots built from the table, calls the handler and applies its decision
 * (write-backs, ADDFD+SEND, SEND). A handler flagged EMU_MAY_BLOCK runs on the leader, which
 * hands the lead on when it outlasts a grace ("Leader and followers" below); an open found
 * to block (a FIFO) goes to the pool's queue. ENOENT from SEND/ADDFD means the thread is
 * gone (killed while waiting): not an error. docs/supervisor.md explains why receivers block
 * in RECV rather than in epoll.
 */
#include "tracer/internal.h"
#include "tracer/budget.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <limits.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "common/log.h"
#include "common/missing-seccomp.h"
#include "common/syscall-names.h"
#include "common/util.h"
#include "emulation/fs.h"
#include "emulation/path/view.h" /* sbx_view_unix_names, for the host */
#include "net/handlers.h"
#include "policy/policy.h"

#define STOP_SIGNAL (SIGRTMIN + 2)
#define MAX_WORKERS TRACER_MAX_WORKERS
#define MAX_QUEUE   1024
/* how long a call that may block holds the lead before another thread takes it */
#define LEAD_GRACE_NS (1000 * 1000)

typedef struct WorkItem {
	struct WorkItem *next;
	bool blocking;		    /* an open found to block (FIFO): emu_handle_open_blocking() */
	struct seccomp_notif notif; /* followed by the rest of the kernel's size */
} WorkItem;

static const char *syscall_name(const TracerSlot *s, int nr, char *buf, size_t size)
{
	const char *n;

	if (s && s->entry)
		return s->entry->name;
	n = sbx_syscall_name(nr);
	snprintf(buf, size, "%s", n ? n : "?");
	return buf;
}

/* defer_kill: a backtrace of a call that kills the sandbox is pending; the caller is answered
 * EPERM and killed at its ptrace stop (or by run_handler()) after the frames are taken. */
static void respond(Tracer *t, const struct seccomp_notif *n, EmuDecision *d, bool defer_kill)
{
	struct seccomp_notif_resp resp = {.id = n->id};
	int r;

	/* The only writer of handler results into the child (common/handler.h, EmuWriteBack):
	 * after the handler, before the reply, in order; the first failure is the call's
	 * EFAULT. TOCTOU: the data is the handler's copy; the child's other threads may have
	 * changed the destination since, as they may during a kernel's copy_to_user(). */
	if (d->verdict == EMU_RETURN || d->verdict == EMU_CONTINUE) {
		for (size_t i = 0; i < d->n_writeback; i++) {
			r = child_mem_write(n->pid, d->writeback[i].addr, d->writeback[i].data,
					    d->writeback[i].len);
			if (r < 0) {
				d->verdict = EMU_FAIL;
				d->error = -r == ESRCH ? ESRCH : EFAULT;
				break;
			}
		}
	}

	if (d->inject_fd >= 0 && d->inject_setfd >= 0) {
		/* the child's fd replaced by ours (getdents64 without pidfd_getfd), then the
		 * call's own value */
		if (d->verdict == EMU_RETURN) {
			struct seccomp_notif_addfd addfd = {
				.id = n->id,
				.flags = SECCOMP_ADDFD_FLAG_SETFD,
				.srcfd = (uint32_t) d->inject_fd,
				.newfd = (uint32_t) d->inject_setfd,
				.newfd_flags = d->inject_flags,
			};

			r = ioctl(t->notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
			if (r < 0 && errno == ENOENT) {
				(void) close(d->inject_fd);
				d->inject_fd = -1;
				return; /* the thread is gone */
			}
			if (r < 0) {
				d->verdict = EMU_FAIL;
				d->error = errno;
			}
		}
		(void) close(d->inject_fd);
		d->inject_fd = -1;
	}
	if (d->inject_fd >= 0) {
		if (d->verdict == EMU_RETURN) {
			struct seccomp_notif_addfd addfd = {
				.id = n->id,
				.flags = SECCOMP_ADDFD_FLAG_SEND,
				.srcfd = (uint32_t) d->inject_fd,
				.newfd_flags = d->inject_flags,
			};

			r = ioctl(t->notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
			if (r < 0 && errno == EBADF) {
				/* ADDFD cannot install O_PATH files (fget() refuses them) */
				int fd2 = tracer_fs_opath_fallback(d->inject_fd);

				if (fd2 >= 0) {
					(void) close(d->inject_fd);
					d->inject_fd = fd2;
					addfd.srcfd = (uint32_t) fd2;
					r = ioctl(t->notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
				} else if (fd2 != -EBADF)
					errno = -fd2;
			}
			(void) close(d->inject_fd);
			d->inject_fd = -1;
			if (r >= 0)
				d->val = r; /* the fd number the child got, for the audit record */
			if (r >= 0 || errno == ENOENT)
				return; /* installed and answered, or the thread is gone */
			/* e.g. EMFILE in the child: report it as the open's error */
			d->verdict = EMU_FAIL;
			d->error = errno;
		} else {
			(void) close(d->inject_fd);
			d->inject_fd = -1;
		}
	}

	switch (d->verdict) {
	case EMU_CONTINUE:
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		break;
	case EMU_RETURN:
		resp.val = d->val;
		break;
	case EMU_FAIL:
		resp.error = -(d->error > 0 ? d->error : EPERM);
		break;
	case EMU_KILL:
	default:
		if (defer_kill) {
			resp.error = -EPERM;
			break;
		}
		/* The caller is blocked in this notification, so its tid cannot be reused: kill
		 * it before it runs on, then have the main loop kill the rest of the tree. */
		(void) syscall(SYS_tkill, n->pid, SIGKILL);
		atomic_store(&t->kill_requested, true);
		(void) eventfd_write(t->kill_eventfd, 1);
		resp.error = -EPERM;
		break;
	}
	if (ioctl(t->notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
		log_debug_errno(-errno, "NOTIF_SEND for pid %d", (int) n->pid);
}

static bool enqueue(Tracer *t, const struct seccomp_notif *n, bool blocking);

_Thread_local int tracer_current_notify_fd = -1;
_Thread_local uint64_t tracer_current_id;

static void run_handler(Tracer *t, const struct seccomp_notif *n, EmuDecision *d, bool blocking)
{
	const TracerSlot *s = NULL;
	uint64_t t0 = t->audit ? now_monotonic_ns() : 0;
	TracerAuditCtx ac;
	ChildMemCtx mc;
	EmuRequest req;
	bool defer_kill, killed;
	int r;

	emu_decision_init(d);
	child_mem_init(&mc, (pid_t) n->pid, t->notify_fd, n->id);
	if (n->data.arch == AUDIT_ARCH_X86_64 && n->data.nr >= 0 && n->data.nr < TRACER_NR_MAX)
		s = &t->filter->slots[n->data.nr];

	if (!s) {
		/* the filter kills other arches: this cannot happen; fail closed */
		d->verdict = EMU_KILL;
		d->why = "unexpected architecture";
	} else if (s->kill) {
		d->verdict = EMU_KILL;
		d->denied = true;
		d->why = "the policy kills the sandbox for this syscall";
	} else if (s->deny_error > 0) {
		d->verdict = EMU_FAIL;
		d->error = s->deny_error;
		d->denied = true;
		d->why = "denied by policy";
	} else if (s->host_ipc) {
		/* notified only by the program of a command without a private IPC namespace:
		 * ENOSYS, what a kernel without SysV IPC or POSIX mqueues says */
		d->verdict = EMU_FAIL;
		d->error = ENOSYS;
		d->denied = true;
		d->why = "host IPC: no private IPC namespace";
	} else if (t->pidns && tracer_filter_pid_in_kernel(s)) {
		/* a call naming a process by pid, notified in a pid namespace of the tree's
		 * own only to be logged: there the kernel lets it name the tree only, and our
		 * checks would read its pids as ours (tracer/filter.c) */
		d->why = "logged by policy";
	} else if (t->pidns && s->special == SLOT_IOCTL &&
		   ((unsigned) n->data.args[1] == FIOSETOWN ||
		    (unsigned) n->data.args[1] == SIOCSPGRP)) {
		d->why = "logged by policy"; /* the same, for a logged ioctl */
	} else if (!s->handler) {
		/* a bug: the filter is built from the same table */
		d->verdict = EMU_FAIL;
		d->error = ENOSYS;
		d->why = "no handler";
	} else {
		/* the caller's thread group is left to emu_req_tgid(): most calls never need it */
		req = (EmuRequest){
			.policy = t->policy,
			.mem = &mc.mem,
			.pid = (pid_t) n->pid,
			.arch = n->data.arch,
			.nr = n->data.nr,
			.id = n->id,
			.listener = t->notify_fd,
			.host = &t->host,
			.view = t->view,
		};
		memcpy(req.args, n->data.args, sizeof(req.args));
		tracer_current_notify_fd = t->notify_fd;
		tracer_current_id = n->id;
		r = blocking ? emu_handle_open_blocking(&req, d) : s->handler(&req, d);
		if (r == -EWOULDBLOCK && !blocking) {
			/* an open that can block (a FIFO): a worker opens it, the receiver goes
			 * on (emulation/fs.h) */
			if (enqueue(t, n, true)) {
				emu_decision_release(d);
				return;
			}
			r = -EAGAIN;
		}
		if (r < 0) {
			/* the supervisor failed: fail the call closed */
			if (d->inject_fd >= 0)
				(void) close(d->inject_fd);
			emu_decision_release(d);
			emu_decision_init(d);
			d->verdict = EMU_FAIL;
			d->error = r == -ENOMEM ? ENOMEM : r == -EAGAIN ? EAGAIN : EPERM;
			d->why = "supervisor error";
		}
	}
	if (d->denied)
		atomic_fetch_add(&t->denied, 1);
	tracer_audit_capture_mem(t, n, s, d, t0, &ac, &mc);
	defer_kill = d->verdict == EMU_KILL && ac.active && ac.bt_pending;
	respond(t, n, d, defer_kill);
	killed = tracer_audit_emit(t, n, d, &ac);
	if (defer_kill) {
		/* killed at its stop, else (it did not stop in time) now; then the tree */
		if (!killed)
			(void) syscall(SYS_tkill, n->pid, SIGKILL);
		atomic_store(&t->kill_requested, true);
		(void) eventfd_write(t->kill_eventfd, 1);
	}
	if (d->verdict == EMU_KILL) {
		char nb[64];

		if (s && s->kill)
			log_error("pid %d made syscall '%s', which the policy forbids: killing "
				  "the sandbox",
				  (int) n->pid, syscall_name(s, n->data.nr, nb, sizeof(nb)));
		else
			log_error("pid %d, syscall '%s': %s: killing the sandbox", (int) n->pid,
				  syscall_name(s, n->data.nr, nb, sizeof(nb)),
				  d->why ? d->why : "fail closed");
	}
	emu_decision_release(d); /* the write-backs' buffer: answered and audited */
}

/*
 * A supervisor run by root would otherwise open, create and chmod on the command's behalf
 * with root's capabilities (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER, ...), which the
 * command itself does not have (C drops them all): a file of another user with mode 0600 in
 * a rw mount would be readable through emulation and not natively. Capabilities are per
 * thread in Linux, so the threads that run handlers clear their effective set; the permitted
 * set stays, which process_vm_readv, pidfd_getfd and ptrace of the tree check (they compare
 * the target's permitted set with ours). For a plain user this changes nothing.
 */
static int drop_effective_capabilities(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct c[2] = {};

	if (syscall(SYS_capget, &h, c) < 0)
		return -errno;
	if (!c[0].effective && !c[1].effective)
		return 0;
	c[0].effective = c[1].effective = 0;
	if (syscall(SYS_capset, &h, c) < 0)
		return -errno;
	return 0;
}

static void serve(Tracer *t, struct seccomp_notif *n, EmuDecision *d, bool counted);
static void rearm(Tracer *t, long ns);

static void *worker_main(void *userdata)
{
	Tracer *t = userdata;
	struct seccomp_notif *n = malloc(t->notif_size);
	EmuDecision *d = malloc(sizeof(*d));

	if (!n || !d || drop_effective_capabilities() < 0) {
		/* fail closed: a worker with root's capabilities does not answer */
		if (n && d)
			log_error("cannot drop the capabilities of a worker thread");
		pthread_mutex_lock(&t->lock);
		t->idle_workers--; /* counted by its maker */
		/* made to take the lead, maybe: the watchdog makes another (watch_expired()) */
		if (t->has_watchdog && !t->watchdog_failed)
			rearm(t, LEAD_GRACE_NS);
		pthread_mutex_unlock(&t->lock);
		free(n);
		free(d);
		return NULL;
	}
	serve(t, n, d, true);
	tracer_pidfd_cache_flush();
	free(n);
	free(d);
	return NULL;
}

/* Hands a notification to the pool; false when the pool is full (the caller fails it). */
static bool enqueue(Tracer *t, const struct seccomp_notif *n, bool blocking)
{
	WorkItem *w = malloc(sizeof(WorkItem) - sizeof(struct seccomp_notif) + t->notif_size);
	bool ok = true;

	if (!w)
		return false;
	memcpy(&w->notif, n, t->notif_size);
	w->next = NULL;
	w->blocking = blocking;
	pthread_mutex_lock(&t->lock);
	if (t->queue_len >= MAX_QUEUE) {
		ok = false;
	} else {
		if (t->idle_workers <= t->queue_len && t->n_workers < MAX_WORKERS &&
		    !atomic_load(&t->stopping) &&
		    pthread_create(&t->workers[t->n_workers], NULL, worker_main, t) == 0) {
			t->n_workers++;
			t->idle_workers++;
		}
		if (t->n_workers == 0)
			ok = false;
	}
	if (ok) {
		if (t->queue_tail)
			t->queue_tail->next = w;
		else
			t->queue_head = w;
		t->queue_tail = w;
		t->queue_len++;
		pthread_cond_signal(&t->cond);
	}
	pthread_mutex_unlock(&t->lock);
	if (!ok)
		free(w);
	return ok;
}

/* True once no process holds the filter: RECV then fails with ENOENT at once, and retrying
 * it spun both receivers on the CPUs the teardown needs (measured: ~100 calls per run). */
static bool listener_orphaned(int notify_fd)
{
	struct pollfd pfd = {.fd = notify_fd, .events = POLLIN};

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLHUP);
}

/* Faults in the stack a handler will use. It runs while C still sets itself up (both CPUs
 * are otherwise idle then); on a VM where a page fault costs several µs, the first
 * notifications of the command (its execve, the loader's opens) otherwise paid for ~30 of them
 * on the command's critical path (docs/performance.md, "Startup"). */
static __attribute__((noinline)) void warm_stack(void)
{
	volatile char buf[96 * 1024];

	for (size_t i = 0; i < sizeof(buf); i += 4096)
		buf[i] = 0;
}

/*
 * Leader and followers. One thread at a time receives: the leader, blocked in RECV (one, not
 * one per CPU: docs/supervisor.md, "Notifications"). It answers inline, and that includes a
 * call whose handler may block (EMU_MAY_BLOCK: a connect, a send, a held call): most do not
 * (a loopback connect completes within the call), and handing the call to a worker put a
 * wake-up of another thread on the caller's path, which crosses CPUs on this VM. Waking a
 * follower to take the lead at once costs the same, since the next call waits for it to
 * run. So the lead is handed on only when such a call is still running after LEAD_GRACE_NS:
 * the leader notes the call's start and arms a timer (a timerfd) unless it is armed
 * already; a watchdog thread sleeps in the timerfd's read() and, when it fires, hands the
 * lead to an idle thread of the pool (made if none is idle) if the leader's call is older
 * than the grace, or re-arms it for a younger one. Arming once per call cost 10 µs more per
 * connect than answering inline (two timerfd_settime() a call, which reprogram the CPU's
 * timer: VM exits); armed at most once per grace, a connect costs what it does inline. A
 * loopback connect in the emulated view (micro connect): 67-92 µs with the hand-off to a
 * worker, 42-44 µs now, native 27-28 µs (docs/performance.md, "Loopback connect without a
 * namespace"). A call that blocks holds up the tree's other calls for one to two graces, no
 * more. When the watchdog cannot be made, the lead is handed on at once; when the pool is
 * full (MAX_WORKERS busy), the watchdog tries again a grace later.
 */

/* Under t->lock: the lead to an idle thread of the pool, one made when none is. False when
 * none is idle and none can be made: the leader keeps the lead. */
static bool hand_over_lead(Tracer *t)
{
	if (t->idle_workers == 0) {
		/* none made once the run stops: tracer_dispatch_stop() joins the ones it saw
		 * after it set the flag under this lock */
		if (t->n_workers >= MAX_WORKERS || atomic_load(&t->stopping) ||
		    pthread_create(&t->workers[t->n_workers], NULL, worker_main, t) != 0)
			return false;
		t->n_workers++;
		t->idle_workers++;
	}
	t->leading = false;
	/* every idle thread rechecks: the one that runs first leads, the others take queued
	 * work or wait again (a signal could wake one that takes queued work instead) */
	pthread_cond_broadcast(&t->cond);
	return true;
}

static void arm(int fd, long ns)
{
	struct itimerspec its = {
		.it_value = {.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000}};

	(void) timerfd_settime(fd, 0, &its, NULL);
}

/* Under t->lock: the timer armed for ns from now. */
static void rearm(Tracer *t, long ns)
{
	arm(t->lead_timer, ns);
	t->lead_timer_armed = true;
}

/* Under t->lock, at an expiry: the lead to an idle thread when the leader's call that may
 * block is older than the grace; a new thread when a hand-over found no taker (the thread
 * made for it failed to start: worker_main); else the timer re-armed for what is younger. */
static void watch_expired(Tracer *t)
{
	/* read under the lock: a leader's lead_busy_since is never later than now */
	uint64_t now = now_monotonic_ns();

	t->lead_timer_armed = false;
	if (atomic_load(&t->stopping))
		return;
	if (!t->leading && t->notify_fd >= 0 && t->idle_workers == 0) {
		if (!hand_over_lead(t))
			rearm(t, LEAD_GRACE_NS); /* pool full or no thread: later */
		return;
	}
	if (!t->lead_busy)
		return; /* that call ended before we got the lock; its leader leads on */
	if ((int64_t) (now - t->lead_busy_since) < LEAD_GRACE_NS)
		rearm(t, (long) (t->lead_busy_since + LEAD_GRACE_NS - now)); /* a later call */
	else if (hand_over_lead(t))
		t->lead_busy = false;
	else
		rearm(t, LEAD_GRACE_NS); /* pool full: later */
}

static void *watchdog_main(void *userdata)
{
	Tracer *t = userdata;

	if (drop_effective_capabilities() < 0) {
		/* leaders no longer keep a call that may block (watch_lead()); one that does now
		 * gives the lead up at once */
		log_error("cannot drop the capabilities of the dispatch watchdog");
		pthread_mutex_lock(&t->lock);
		t->watchdog_failed = true;
		if (t->lead_busy && hand_over_lead(t))
			t->lead_busy = false;
		pthread_mutex_unlock(&t->lock);
		return NULL;
	}
	while (!atomic_load(&t->stopping)) {
		uint64_t ticks;

		if (read(t->lead_timer, &ticks, sizeof(ticks)) != sizeof(ticks))
			continue; /* EINTR: the stop signal; the loop reads the flag */
		pthread_mutex_lock(&t->lock);
		watch_expired(t);
		pthread_mutex_unlock(&t->lock);
	}
	return NULL;
}

/* Before the leader runs a handler that may block: the call's start noted, and the
 * watchdog's timer armed unless it already is (the watchdog re-arms it for a call that began
 * after it was armed, so a run of short calls arms it about once a grace, not once a call);
 * the watchdog is made on the first such call. False when there is no watchdog (the lead is
 * then handed on at once). */
static bool watch_lead(Tracer *t)
{
	bool ok;

	pthread_mutex_lock(&t->lock);
	if (!t->has_watchdog && !t->watchdog_failed && !atomic_load(&t->stopping)) {
		t->lead_timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		/* made by a dispatch thread: STOP_SIGNAL unblocked, the tree's CPUs */
		if (t->lead_timer >= 0 &&
		    pthread_create(&t->watchdog, NULL, watchdog_main, t) == 0) {
			t->has_watchdog = true;
		} else {
			if (t->lead_timer >= 0)
				close(t->lead_timer);
			t->watchdog_failed = true;
		}
	}
	/* only while a successor can be had: with every thread of the pool busy (MAX_WORKERS
	 * calls that wait) the call goes to the queue, as before, and the leader stays free */
	ok = t->has_watchdog && !t->watchdog_failed &&
	     (t->idle_workers > 0 || t->n_workers < MAX_WORKERS);
	if (ok) {
		t->lead_busy = true;
		t->lead_busy_since = now_monotonic_ns();
		if (!t->lead_timer_armed)
			rearm(t, LEAD_GRACE_NS);
	}
	pthread_mutex_unlock(&t->lock);
	return ok;
}

/* After that handler: true when this thread still leads, i.e. the watchdog had not handed
 * the lead on (epoch: the lead's count when this thread took it; a thread that lost the lead
 * leaves lead_busy, which is then its successor's). The timer stays armed: the watchdog
 * finds nothing busy and lets it lapse. */
static bool keep_lead(Tracer *t, uint64_t epoch)
{
	bool kept;

	pthread_mutex_lock(&t->lock);
	kept = t->leading && t->lead_epoch == epoch;
	if (kept)
		t->lead_busy = false;
	pthread_mutex_unlock(&t->lock);
	return kept;
}

static bool may_block(const TracerSlot *s)
{
	return s && s->entry && (s->entry->flags & EMU_MAY_BLOCK) && s->handler &&
	       s->deny_error == 0;
}

/* The leader's loop. 0: it answered a call that may block and is back in the pool; -1: the
 * run stops, or no process holds the filter any more (RECV would fail at once: the thread
 * ends and keeps the lead, so that no other thread spins on it). */
static int lead(Tracer *t, struct seccomp_notif *n, EmuDecision *d, uint64_t epoch)
{
	while (!atomic_load(&t->stopping)) {
		const TracerSlot *s;
		bool handed;

		memset(n, 0, t->notif_size);
		if (ioctl(t->notify_fd, SECCOMP_IOCTL_NOTIF_RECV, n) < 0) {
			if (errno == ENOENT && listener_orphaned(t->notify_fd))
				return -1; /* no process has the filter any more: nothing can come
					    */
			if (errno == EINTR || errno == ENOENT)
				continue; /* stop signal, or the caller died before we got it */
			if (!atomic_load(&t->stopping))
				log_debug_errno(-errno, "NOTIF_RECV");
			return -1;
		}
		s = n->data.nr >= 0 && n->data.nr < TRACER_NR_MAX ? &t->filter->slots[n->data.nr]
								  : NULL;
		if (!may_block(s)) {
			run_handler(t, n, d, false);
			continue;
		}
		if (watch_lead(t)) {
			run_handler(t, n, d, false);
			if (keep_lead(t, epoch))
				continue;
			return 0; /* the watchdog handed the lead on meanwhile */
		}
		pthread_mutex_lock(&t->lock);
		handed = hand_over_lead(t);
		pthread_mutex_unlock(&t->lock);
		if (handed) {
			run_handler(t, n, d, false);
			return 0;
		}
		if (enqueue(t, n, false))
			continue;
		emu_decision_init(d);
		d->verdict = EMU_FAIL;
		d->error = EAGAIN;
		respond(t, n, d, false);
	}
	return -1;
}

/* Every dispatch thread's loop: lead when no thread does, else take queued work (an open
 * found to block on a FIFO), else wait. counted: its maker counted it idle already. */
static void serve(Tracer *t, struct seccomp_notif *n, EmuDecision *d, bool counted)
{
	for (;;) {
		WorkItem *w = NULL;
		uint64_t epoch = 0;

		pthread_mutex_lock(&t->lock);
		if (!counted)
			t->idle_workers++;
		counted = false;
		while (!atomic_load(&t->stopping) && !t->queue_head &&
		       (t->leading || t->notify_fd < 0))
			pthread_cond_wait(&t->cond, &t->lock);
		t->idle_workers--;
		if (atomic_load(&t->stopping)) {
			pthread_mutex_unlock(&t->lock);
			return;
		}
		/* the lead first: while nobody receives, the whole tree waits */
		if (!t->leading && t->notify_fd >= 0) {
			t->leading = true;
			epoch = ++t->lead_epoch;
		} else {
			w = t->queue_head;
			t->queue_head = w->next;
			if (!t->queue_head)
				t->queue_tail = NULL;
			t->queue_len--;
		}
		pthread_mutex_unlock(&t->lock);

		if (w) {
			run_handler(t, &w->notif, d, w->blocking);
			free(w);
		} else if (lead(t, n, d, epoch) < 0) {
			return;
		}
	}
}

static void *receiver_main(void *userdata)
{
	Tracer *t = userdata;
	struct seccomp_notif *n = malloc(t->notif_size);
	EmuDecision *d = malloc(sizeof(*d));
	sigset_t ss;

	sigemptyset(&ss);
	sigaddset(&ss, STOP_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &ss, NULL);

	if (!n || !d)
		goto out;
	if (drop_effective_capabilities() < 0) {
		/* fail closed: no handler runs with root's capabilities (unanswered, the
		 * command waits until the wall-time limit ends the run) */
		log_error("cannot drop the capabilities of a receiver thread");
		goto out;
	}
	/* With a cpus limit the tree runs on known CPUs: so does the receiver. An emulated open
	 * is answered with ADDFD, whose wake-ups are not the synchronous kind: the kernel wakes
	 * the caller, then us, on whichever CPU is idle, and on this VM a wake-up that crosses
	 * CPUs costs tens of µs. Measured, an emulated open of a real file in standard
	 * (cpus = 1): 44-49 µs with the receiver free, 20-21 µs on the command's CPU. */
	(void) budget_pin_cpus(t->budget);
	/* the first malloc above made this thread's arena; now its pages and the stack */
	memset(d, 0, sizeof(*d));
	warm_stack();
	serve(t, n, d, false);
out:
	tracer_pidfd_cache_flush();
	free(n);
	free(d);
	return NULL;
}

static void stop_handler(int sig)
{
	(void) sig;
}

/* One receiver, not one per CPU: every thread blocked in RECV is woken for each notification
 * (the kernel's wait there is not exclusive), and the one that finds nothing costs the caller
 * two more context switches. Measured with a loop of emulated stat calls: 23 µs per call with
 * two receivers, 18.7 µs with one; a make -j2 build the same within noise. Calls that wait
 * give the lead to another thread of the pool ("Leader and followers"). */
int tracer_dispatch_start(Tracer *t)
{
	struct sigaction sa = {.sa_handler = stop_handler}; /* no SA_RESTART: RECV gets EINTR */
	sigset_t ss, old;
	int r;

	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
	(void) sigaction(STOP_SIGNAL, &sa, NULL);

	/* the thread starts with STOP_SIGNAL blocked and unblocks it itself */
	sigemptyset(&ss);
	sigaddset(&ss, STOP_SIGNAL);
	pthread_sigmask(SIG_BLOCK, &ss, &old);
	r = -pthread_create(&t->receiver, NULL, receiver_main, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0)
		return r;
	t->has_receiver = true;
	return 0;
}

void tracer_dispatch_set_fd(Tracer *t, int notify_fd)
{
	pthread_mutex_lock(&t->lock);
	t->notify_fd = notify_fd;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

/* Interrupts th's blocking call (RECV, or a handler's FIFO open on a worker: the signal has
 * no SA_RESTART, so the call fails with EINTR) until it has seen the stop flag. */
static void interrupt_and_join(pthread_t th)
{
	for (;;) {
		struct timespec ts;

		(void) pthread_kill(th, STOP_SIGNAL);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (pthread_timedjoin_np(th, NULL, &ts) == 0)
			return;
	}
}

void tracer_dispatch_stop(Tracer *t)
{
	atomic_store(&t->stopping, true);
	pthread_mutex_lock(&t->lock);
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
	if (t->has_receiver)
		interrupt_and_join(t->receiver);
	t->has_receiver = false;
	/* none is made once the flag is set: its maker checks it under the lock, as the
	 * workers' makers do */
	if (t->has_watchdog)
		interrupt_and_join(t->watchdog);
	/* no worker is made any more: every maker (a leader, the watchdog) checks the flag
	 * under the lock taken above */
	for (size_t i = 0; i < t->n_workers; i++)
		interrupt_and_join(t->workers[i]);
	t->n_workers = 0;
	/* after the workers: a leader among them may still arm it */
	if (t->has_watchdog)
		close(t->lead_timer);
	t->has_watchdog = false;
	while (t->queue_head) {
		WorkItem *w = t->queue_head;

		t->queue_head = w->next;
		free(w);
	}
	t->queue_tail = NULL;
}

/* ---- EmuHost's process family: the tree and signal delivery through pidfds ---- */

static int pidfd_open_(pid_t pid, unsigned flags)
{
	long fd = syscall(SYS_pidfd_open, pid, flags);

	return fd < 0 ? -errno : (int) fd;
}

static int pidfd_send(int fd, int sig, const siginfo_t *info, unsigned flags)
{
	if (syscall(SYS_pidfd_send_signal, fd, sig, info, flags) < 0)
		return errno; /* positive: the child sees it */
	return 0;
}

/* Signals one process of the tree (a thread group); 0, positive errno, or -errno. */
static int signal_process(Tracer *t, pid_t pid, int sig, const siginfo_t *info)
{
	_cleanup_close_ int fd = -1;
	pid_t tgid = pid;
	int r;

	fd = pidfd_open_(pid, 0);
	if (fd == -EINVAL || fd == -ENOENT) {
		/* not a thread-group leader (EINVAL before 6.15, ENOENT since): kill(2) accepts
		 * any thread id */
		r = proc_read_tgid(pid, &tgid);
		if (r < 0)
			return ESRCH;
		fd = pidfd_open_(tgid, 0);
	}
	if (fd < 0)
		return fd == -ESRCH || fd == -EINVAL || fd == -ENOENT ? ESRCH : fd;
	/* Checked after the pidfd pins the process: if the pid was reused in between, the
	 * pidfd names a dead process and the send below fails with ESRCH. */
	r = tree_contains(t->keeper, tgid, NULL);
	if (r == -ESRCH)
		return ESRCH;
	if (r < 0)
		return r;
	if (r == 0)
		return EPERM;
	return pidfd_send(fd, sig, info, 0);
}

typedef struct GroupCtx {
	Tracer *t;
	pid_t pgid; /* 0: every process */
	pid_t skip; /* kill(-1) skips the caller */
	int sig;
	const siginfo_t *info;
	int sent, tried;
	int first_error;
} GroupCtx;

static int group_visit(pid_t pid, void *userdata)
{
	GroupCtx *c = userdata;
	pid_t pgrp = 0;
	char state = 0;
	int r;

	if (pid == c->skip)
		return 0;
	if (tree_read_stat(pid, NULL, &pgrp, &state) < 0 || state == 'Z' || state == 'X')
		return 0;
	if (c->pgid && pgrp != c->pgid)
		return 0;
	c->tried++;
	r = signal_process(c->t, pid, c->sig, c->info);
	if (r < 0)
		return r;
	if (r == 0)
		c->sent++;
	else if (!c->first_error)
		c->first_error = r;
	return 0;
}

static int send_group(Tracer *t, pid_t pgid, pid_t skip, const EmuSignal *s)
{
	GroupCtx c = {.t = t, .pgid = pgid, .skip = skip, .sig = s->sig, .info = s->info};
	int r;

	r = tree_walk(t->keeper, group_visit, &c);
	if (r < 0)
		return r;
	if (c.sent > 0)
		return 0;
	if (c.tried == 0) {
		/* a group with no member in the tree: outside (EPERM) or nonexistent (ESRCH) */
		if (pgid > 0 && kill(-pgid, 0) == 0)
			return EPERM;
		return ESRCH;
	}
	return c.first_error ? c.first_error : ESRCH;
}

static int send_thread(Tracer *t, pid_t tid, pid_t want_tgid, const EmuSignal *s)
{
	_cleanup_close_ int fd = -1;
	pid_t tgid = 0;
	int r;

	fd = pidfd_open_(tid, PIDFD_THREAD);
	if (fd < 0 && fd != -EINVAL)
		return fd == -ESRCH ? ESRCH : fd;
	r = tree_contains(t->keeper, tid, &tgid);
	if (r == -ESRCH)
		return ESRCH;
	if (r < 0)
		return r;
	if (r == 0)
		return EPERM;
	if (want_tgid && tgid != want_tgid)
		return ESRCH;
	if (fd >= 0)
		return pidfd_send(fd, s->sig, s->info, PIDFD_SIGNAL_THREAD);
	/* COMPAT: no PIDFD_THREAD before 6.9; tgkill with the checked pair: a reused tid
	 * would also need the same tgid, which is alive in the tree (its leader is pinned) */
	if (s->info) {
		if (syscall(SYS_rt_tgsigqueueinfo, tgid, tid, s->sig, s->info) < 0)
			return errno;
		return 0;
	}
	if (syscall(SYS_tgkill, tgid, tid, s->sig) < 0)
		return errno;
	return 0;
}

static int caller_pidfd(const EmuRequest *req)
{
	return pidfd_open_(emu_req_tgid(req), 0);
}

/* The "Pid:" of a pidfd's fdinfo at path (-1: exited, 0: another namespace), its flags in
 * *ret_flags; -EBADF when it is not a pidfd, -errno. */
static long pidfd_info_pid(const char *path, int *ret_flags)
{
	char buf[1024], *p;
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return errno == ENOENT ? -EBADF : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	p = strstr(buf, "\nPid:");
	if (!p)
		return -EBADF;
	if (ret_flags) {
		char *f = strstr(buf, "flags:");

		*ret_flags = f ? (int) strtol(f + 6, NULL, 8) : 0;
	}
	return strtol(p + 5, NULL, 10);
}

/*
 * COMPAT (pidfd_getfd refused): the process the caller's pidfd names, as a pidfd of ours.
 * A pidfd cannot be reopened, but its fdinfo says which pid its process has now. We open
 * our own pidfd for that number, then read the caller's fdinfo again: the same pid still
 * shown means that process lived across our open (a pid shows -1 once its process has
 * exited, and a number is not reused while its process lives), so ours names the same
 * struct pid. Another thread swapping the fd meanwhile makes the two reads differ: ESRCH.
 */
static int pidfd_reopen(const EmuRequest *req, int childfd, int *ret_fd)
{
	char path[64];
	int flags = 0, fd;
	long pid, again;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int) req->pid, childfd);
	pid = pidfd_info_pid(path, &flags);
	if (pid == 0 || pid == -1)
		return ESRCH; /* exited, or in another pid namespace */
	if (pid < 0)
		return pid == -EBADF ? EBADF : (int) pid;
	fd = (int) syscall(SYS_pidfd_open, (pid_t) pid, flags & PIDFD_THREAD);
	if (fd < 0)
		return errno == ESRCH ? ESRCH : -errno;
	again = pidfd_info_pid(path, NULL);
	if (again != pid) {
		(void) close(fd);
		return ESRCH;
	}
	*ret_fd = fd;
	return 0;
}

/*
 * pidfd_send_signal() also takes an fd of a /proc/PID directory (test_signal's
 * test_pidfd_send_signal opens /proc/<its pid>): the pid it names in our namespace, or 0 when
 * fd is not such a directory (the same inode as our /proc/PID: a thread's task/TID directory
 * or another procfs instance is not).
 */
static long proc_dir_pid(int fd)
{
	char link[64], target[PATH_MAX], *base, *end;
	struct stat st, mine;
	ssize_t n;
	long pid;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0 || fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	target[n] = 0;
	base = strrchr(target, '/');
	if (!base || !base[1])
		return 0;
	pid = strtol(base + 1, &end, 10);
	if (*end || pid <= 0)
		return 0;
	snprintf(link, sizeof(link), "/proc/%ld", pid);
	if (stat(link, &mine) < 0 || mine.st_dev != st.st_dev || mine.st_ino != st.st_ino)
		return 0;
	return pid;
}

/*
 * COMPAT (pidfd_getfd refused, as in a container): the caller's fd when it is a directory,
 * reopened through /proc/PID/fd/N (the kernel follows that link to the file itself, so the
 * child's bytes play no part); proc_dir_pid() then says whether it is a /proc/PID directory.
 * O_DIRECTORY: nothing but a directory is ever opened (a FIFO would block). 0 or EBADF.
 */
static int proc_dir_reopen(const EmuRequest *req, int childfd, int *ret_fd)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) req->pid, childfd);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return EBADF;
	*ret_fd = fd;
	return 0;
}

static int pidfd_target(Tracer *t, const EmuRequest *req, const EmuSignal *s)
{
	_cleanup_close_ int pfd = -1, fd = -1, info_fd = -1;
	char path[64], buf[1024], *p;
	ssize_t n;
	long pid;
	int r;

	if (!pidfd_getfd_usable()) {
		r = pidfd_reopen(req, s->pidfd, &fd);
		if (r == EBADF)
			r = proc_dir_reopen(req, s->pidfd, &fd);
		if (r != 0)
			return r;
	} else {
		pfd = caller_pidfd(req);
		if (pfd < 0)
			return pfd == -ESRCH ? ESRCH : pfd;
		fd = (int) syscall(SYS_pidfd_getfd, pfd, s->pidfd, 0);
	}
	if (fd < 0)
		return EBADF;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	info_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (info_fd < 0)
		return -errno;
	n = read(info_fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	p = strstr(buf, "\nPid:");
	if (p)
		pid = strtol(p + 5, NULL, 10);
	else if ((pid = proc_dir_pid(fd)) == 0)
		return EBADF; /* neither a pidfd nor a /proc/PID directory */
	if (pid <= 0)
		return ESRCH; /* exited (-1) or in another namespace (0) */
	r = tree_contains(t->keeper, (pid_t) pid, NULL);
	if (r == -ESRCH)
		return ESRCH;
	if (r < 0)
		return r;
	if (r == 0)
		return EPERM;
	/* same struct pid as the child's fd: no reuse window */
	return pidfd_send(fd, s->sig, s->info, s->pidfd_flags);
}

static int op_send_signal(void *tracer, const EmuRequest *req, const EmuSignal *s)
{
	Tracer *t = tracer;
	pid_t pgrp = 0;

	switch (s->scope) {
	case EMU_SIGNAL_PROCESS:
		return signal_process(t, s->pid, s->sig, s->info);
	case EMU_SIGNAL_THREAD:
		return send_thread(t, s->pid, s->tgid, s);
	case EMU_SIGNAL_GROUP:
		if (s->pid == 0) {
			if (tree_read_stat(emu_req_tgid(req), NULL, &pgrp, NULL) < 0)
				return ESRCH;
			return send_group(t, pgrp, 0, s);
		}
		return send_group(t, s->pid, 0, s);
	case EMU_SIGNAL_ALL:
		return send_group(t, 0, emu_req_tgid(req), s);
	case EMU_SIGNAL_PIDFD:
		return pidfd_target(t, req, s);
	default:
		return EINVAL;
	}
}

static int op_check_target(void *tracer, const EmuRequest *req, pid_t pid, bool is_pgid)
{
	Tracer *t = tracer;
	int r;

	(void) req;
	/* a process group is checked through its leader; members join only from the same
	 * session and the leader's group id is its pid */
	r = tree_contains(t->keeper, pid, NULL);
	if (r == -ESRCH)
		return is_pgid && kill(-pid, 0) == 0 ? EPERM : ESRCH;
	if (r < 0)
		return r;
	return r ? 0 : EPERM;
}

/*
 * The caller's fd as the supervisor's own open file description: a pidfd_getfd duplicate, or
 * where that is refused the socket the supervisor made and keeps (net/socktab.c); -EXDEV
 * when it cannot be reached (another kind of file: a reopen would be another open file
 * description, whose owner is not the caller's).
 */
static int caller_fd_dup(Tracer *t, const EmuRequest *req, int fd, int *ret_dup)
{
	_cleanup_close_ int pfd = -1;
	int dup;

	if (!pidfd_getfd_usable()) {
		char path[64];

		dup = net_child_object_dup(t->net, req->pid, fd);
		if (dup < 0) {
			snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) req->pid, fd);
			return faccessat(AT_FDCWD, path, F_OK, AT_SYMLINK_NOFOLLOW) < 0 ? EBADF
											: -EXDEV;
		}
	} else {
		pfd = caller_pidfd(req);
		if (pfd < 0)
			return pfd == -ESRCH ? ESRCH : pfd;
		dup = (int) syscall(SYS_pidfd_getfd, pfd, fd, 0);
		if (dup < 0)
			return EBADF;
	}
	*ret_dup = dup;
	return 0;
}

static int op_fcntl_dup(void *tracer, const EmuRequest *req, int fd, int cmd, void *arg)
{
	_cleanup_close_ int dup = -1;
	int r;

	r = caller_fd_dup(tracer, req, fd, &dup);
	if (r != 0)
		return r;
	if (fcntl(dup, cmd, arg) < 0)
		return errno;
	return 0;
}

static int op_ioctl_dup(void *tracer, const EmuRequest *req, int fd, unsigned long cmd, void *arg)
{
	_cleanup_close_ int dup = -1;
	int r;

	r = caller_fd_dup(tracer, req, fd, &dup);
	if (r != 0)
		return r;
	r = ioctl(dup, cmd, arg);
	if (r < 0)
		return errno;
	return 0;
}

static bool op_disk_full(void *tracer)
{
	Tracer *t = tracer;

	return t->budget && budget_disk_full_now(t->budget, t->keeper);
}

static bool op_efbig_is_disk(void *tracer)
{
	Tracer *t = tracer;

	return t->budget && budget_efbig_is_disk(t->budget);
}

/* ---- EmuHost: what the handlers reach the supervisor through ---- */

/* The ratchet is net/'s code but the run's state: emulation/ reaches it only through here,
 * so that it never includes net/ (docs/architecture.md, "Layers"). */
static int host_sensitive_open(void *userdata, const EmuRequest *req, Sensitivity level,
			       const char *vpath)
{
	Tracer *t = userdata;

	return net_on_sensitive_open(t->net, req, level, vpath);
}

/* The run's network state, started by run_start() (tracer/run.c) before the receiver and
 * stopped after it and the workers: a handler never sees it change under it. */
static NetRuntime *host_net_runtime(void *userdata)
{
	Tracer *t = userdata;

	return t->net;
}

void tracer_host_init(Tracer *t)
{
	t->host = (EmuHost){
		.sensitive_open = host_sensitive_open,
		.send_signal = op_send_signal,
		.check_target = op_check_target,
		.fcntl_dup = op_fcntl_dup,
		.ioctl_dup = op_ioctl_dup,
		.disk_full = op_disk_full,
		.efbig_is_disk = op_efbig_is_disk,
		.net_runtime = host_net_runtime,
		.unix_names = &sbx_view_unix_names,
		.userdata = t,
	};
	tracer_fs_host_init(&t->host);
}
