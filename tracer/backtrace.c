/* SPDX-License-Identifier: MIT */
/*
 * Backtraces of the sandboxed program at a syscall ([audit] backtrace; docs/audit.md).
 *
 * A seccomp notification carries only the instruction pointer. Unwinding needs the stack
 * pointer and the callee-saved registers too, and only a ptrace stop gives those. So a
 * notified call that is due a backtrace takes this route:
 *
 *   receiver: handler decided → queue a request → wake the tracer thread (BT_SIGNAL breaks
 *             its waitpid) → it PTRACE_INTERRUPTs the caller → receiver replies →
 *   caller:   the call returns; on its way to user space the pending interrupt traps it in a
 *             PTRACE_EVENT_STOP, before it runs one instruction, with the registers of the
 *             syscall site (RIP just after the `syscall` instruction) →
 *   tracer:   unwinds (unwind/: libunwind, or the frame pointers), hands the frames over,
 *             PTRACE_CONTs →
 *   receiver: writes the record with the frames.
 *
 * Why the interrupt does not abort the call: after SECCOMP_IOCTL_NOTIF_RECV the caller waits
 * *killable* (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, which C asks for), so the interrupt
 * only leaves TIF_SIGPENDING set and takes effect on the return. Without that flag it would
 * wake the caller, the kernel would withdraw the notification and restart the call, and the
 * call would be handled twice: no backtraces then.
 *
 * ptrace requests must come from the thread that seized the tree (tracer/ptrace.c), hence the
 * queue. Every wait for the tracer thread or the caller has a deadline: a caller killed in
 * between never stops, and its receiver must go on; the unwind itself is bounded (unwind/). Calls
 * routed through SECCOMP_RET_TRACE (chdir, exec) are stopped already when they are decided: the
 * tracer thread unwinds them at once.
 *
 * This file is only that choreography. The unwind itself is unwind/'s (unwind/unwind.h): a
 * session made here for the tracer thread, which picks libunwind when it loads (dlopen, only
 * in runs that ask for backtraces) and the frame-pointer walker otherwise, reads the
 * program's memory and files without trusting them, and bounds its own work.
 */
#include "tracer/internal.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "emulation/path/view.h"
#include "policy/policy.h"
#include "unwind/unwind.h"

#define BT_SIGNAL (SIGRTMIN + 3)

/* A caller's interrupt must be acknowledged within this (the tracer thread is busy only
 * with other stops), and its stop must come within BT_STOP_MS after the reply. */
#define BT_ACK_MS      200
#define BT_STOP_MS     2000
#define BT_RESIGNAL_MS 2

enum {
	BT_QUEUED,
	BT_INTERRUPTED,
	BT_UNWINDING,
	BT_DONE,
	BT_FAILED,
};

struct TracerBt {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC */
	TracerBtReq *head;
	atomic_int queued;     /* requests in BT_QUEUED: the tracer thread's cheap test */
	atomic_int ptrace_tid; /* the tracer thread, 0 while it does not run */
	unsigned depth;
	const char *unavailable; /* why no backtrace can be taken, or NULL */
	UnwindSession *unwind;	 /* used by the tracer thread only */
};

bool tracer_backtraces_loadable(void)
{
	return unwinder_libunwind.open();
}

static void bt_signal_handler(int sig)
{
	(void) sig; /* only there to make the tracer thread's waitpid() fail with EINTR */
}

/* The module names of a backtrace are the files as the sandbox sees them: the view's path of
 * the host file the mapping names (unwind/unwind.h asks the layer above). */
static int module_path(void *userdata, const char *host, char *ret, size_t size)
{
	const Tracer *t = userdata;

	if (!t->view)
		return -ENOENT;
	return sbx_view_vpath_of_host(t->view, host, ret, size, NULL);
}

int tracer_bt_setup(Tracer *t)
{
	struct sigaction sa = {.sa_handler = bt_signal_handler}; /* no SA_RESTART */
	pthread_condattr_t ca;
	struct TracerBt *b;

	if (t->policy->audit.backtrace == AUDIT_SELECT_NONE || !t->audit)
		return 0;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	pthread_mutex_init(&b->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&b->cond, &ca);
	pthread_condattr_destroy(&ca);
	b->depth = t->policy->audit.backtrace_depth ? t->policy->audit.backtrace_depth : 16;
	b->unwind = unwind_session_new(&(UnwindHost){.module_path = module_path, .userdata = t});
	if (!b->unwind) {
		pthread_mutex_destroy(&b->lock);
		pthread_cond_destroy(&b->cond);
		free(b);
		return -ENOMEM;
	}
	if (!t->filter->ptrace)
		b->unavailable = "no ptrace (tracer.ptrace = \"never\")";
	else {
		/* C asks for WAIT_KILLABLE_RECV and goes on without it on an older kernel; probed
		 * here (a few small children), only in runs that ask for backtraces */
		TracerFeatures f;

		tracer_probe_features(&f);
		if (!f.wait_killable)
			b->unavailable = "the kernel lacks SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV "
					 "(5.19)";
	}
	(void) sigaction(BT_SIGNAL, &sa, NULL);
	t->bt = b;
	if (b->unavailable)
		log_warn("audit.backtrace: no backtraces in this run: %s", b->unavailable);
	else if (unwind_session_primary(b->unwind) != &unwinder_libunwind)
		log_warn("audit.backtrace: libunwind-ptrace cannot be loaded: backtraces follow "
			 "frame pointers only, and end at the first function built without them");
	return 0;
}

void tracer_bt_done(Tracer *t)
{
	if (!t->bt)
		return;
	t->bt->unwind = unwind_session_free(t->bt->unwind); /* the tracer thread has ended */
	pthread_mutex_destroy(&t->bt->lock);
	pthread_cond_destroy(&t->bt->cond);
	free(t->bt);
	t->bt = NULL;
}

unsigned tracer_bt_depth(const Tracer *t)
{
	return t->bt ? t->bt->depth : 0;
}

static void deadline_in(struct timespec *ts, unsigned ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long) (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static bool past(const struct timespec *d)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > d->tv_sec || (now.tv_sec == d->tv_sec && now.tv_nsec >= d->tv_nsec);
}

static void unlink_req(struct TracerBt *b, TracerBtReq *req)
{
	for (TracerBtReq **p = &b->head; *p; p = &(*p)->next)
		if (*p == req) {
			*p = req->next;
			return;
		}
}

/* ---- the tracer thread ---- */

void tracer_bt_thread_ready(Tracer *t, bool running)
{
	sigset_t ss;

	if (!t->bt)
		return;
	if (running) {
		sigemptyset(&ss);
		sigaddset(&ss, BT_SIGNAL);
		pthread_sigmask(SIG_UNBLOCK, &ss, NULL);
		atomic_store(&t->bt->ptrace_tid, (int) syscall(SYS_gettid));
	} else {
		atomic_store(&t->bt->ptrace_tid, 0);
	}
}

void tracer_bt_service(Tracer *t)
{
	struct TracerBt *b = t->bt;

	if (!b || atomic_load(&b->queued) == 0)
		return;
	pthread_mutex_lock(&b->lock);
	for (TracerBtReq *r = b->head; r; r = r->next) {
		if (r->state != BT_QUEUED)
			continue;
		if (ptrace(PTRACE_INTERRUPT, r->tid, NULL, NULL) == 0)
			r->state = BT_INTERRUPTED;
		else {
			r->state = BT_FAILED;
			r->error = "PTRACE_INTERRUPT failed (the thread is not traced)";
		}
		atomic_fetch_sub(&b->queued, 1);
	}
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

/* Unwinds the stopped tracee pid (called on the tracer thread). Returns the number of frames
 * (0 with *err set). */
size_t tracer_bt_unwind(Tracer *t, pid_t pid, AuditFrame *frames, size_t max, const char **err)
{
	const Unwinder *used = NULL;
	size_t n;

	if (!t->bt || !t->bt->unwind) {
		*err = "backtraces are off";
		return 0;
	}
	n = unwind_backtrace(t->bt->unwind, pid, frames, max, err, &used);
	if (used && used != unwind_session_primary(t->bt->unwind))
		log_debug("backtrace of %d: %zu frame(s) from %s, the fallback", (int) pid, n,
			  used->name);
	return n;
}

/* A call that kills the sandbox, held for its backtrace: the caller (stopped, or about to
 * stop, and not yet reaped: its tid is still its own) dies, then the tree, as respond()
 * does for such a call without a backtrace. */
static void kill_now(Tracer *t, pid_t tid)
{
	(void) syscall(SYS_tkill, tid, SIGKILL);
	atomic_store(&t->kill_requested, true);
	(void) eventfd_write(t->kill_eventfd, 1);
}

int tracer_bt_on_stop(Tracer *t, pid_t pid)
{
	struct TracerBt *b = t->bt;
	TracerBtReq *req = NULL;
	const char *err = NULL;
	bool kill_after;
	size_t n;

	if (!b)
		return 0;
	pthread_mutex_lock(&b->lock);
	for (TracerBtReq *r = b->head; r; r = r->next)
		if (r->tid == pid && r->state == BT_INTERRUPTED) {
			req = r;
			break;
		}
	if (!req) {
		pthread_mutex_unlock(&b->lock);
		return 0;
	}
	/* the receiver waits for BT_UNWINDING to end without a deadline: req stays valid */
	req->state = BT_UNWINDING;
	kill_after = req->kill_after;
	pthread_mutex_unlock(&b->lock);

	n = tracer_bt_unwind(t, pid, req->frames, req->max, &err);
	if (kill_after)
		/* the call was to kill the sandbox: the thread dies here, before it runs on */
		kill_now(t, pid);
	pthread_mutex_lock(&b->lock);
	req->n = n;
	req->error = n ? NULL : err;
	req->state = n ? BT_DONE : BT_FAILED;
	req->killed = kill_after;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
	return kill_after ? 2 : 1;
}

void tracer_bt_on_exit(Tracer *t, pid_t pid)
{
	struct TracerBt *b = t->bt;

	if (!b)
		return;
	pthread_mutex_lock(&b->lock);
	for (TracerBtReq *r = b->head; r; r = r->next)
		if (r->tid == pid && (r->state == BT_QUEUED || r->state == BT_INTERRUPTED)) {
			if (r->state == BT_QUEUED)
				atomic_fetch_sub(&b->queued, 1);
			r->state = BT_FAILED;
			r->error = "the thread ended before it stopped";
			r->killed = r->kill_after; /* nothing left to kill, and the tid is free */
		}
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

/* ---- the receiving thread ---- */

bool tracer_bt_begin(Tracer *t, pid_t tid, bool kill_after, TracerBtReq *req)
{
	struct TracerBt *b = t->bt;
	struct timespec deadline, next;
	pid_t ptid;
	bool ok;

	req->tid = tid;
	req->n = 0;
	req->error = NULL;
	req->kill_after = kill_after;
	req->killed = false;
	req->state = BT_FAILED;
	if (!b) {
		req->error = "backtraces are off";
		return false;
	}
	if (b->unavailable) {
		req->error = b->unavailable;
		return false;
	}
	ptid = (pid_t) atomic_load(&b->ptrace_tid);
	if (!ptid) {
		req->error = "the tracer thread is not running";
		return false;
	}
	deadline_in(&deadline, BT_ACK_MS);
	pthread_mutex_lock(&b->lock);
	req->state = BT_QUEUED;
	req->next = b->head;
	b->head = req;
	atomic_fetch_add(&b->queued, 1);
	while (req->state == BT_QUEUED && !past(&deadline)) {
		/* a signal that lands between the tracer thread's look at the queue and its
		 * waitpid() is lost: send it again until the request is taken */
		ptid = (pid_t) atomic_load(&b->ptrace_tid);
		if (!ptid)
			break; /* the tracer thread has ended: no stop will come */
		(void) syscall(SYS_tgkill, getpid(), ptid, BT_SIGNAL);
		deadline_in(&next, BT_RESIGNAL_MS);
		(void) pthread_cond_timedwait(&b->cond, &b->lock, &next);
	}
	if (req->state == BT_QUEUED) {
		atomic_fetch_sub(&b->queued, 1);
		req->state = BT_FAILED;
		req->error = "the tracer thread did not answer in time";
	}
	ok = req->state == BT_INTERRUPTED;
	if (!ok)
		unlink_req(b, req);
	pthread_mutex_unlock(&b->lock);
	return ok;
}

bool tracer_bt_finish(Tracer *t, TracerBtReq *req)
{
	struct TracerBt *b = t->bt;
	struct timespec deadline;
	bool killed;

	deadline_in(&deadline, BT_STOP_MS);
	pthread_mutex_lock(&b->lock);
	for (;;) {
		if (req->state == BT_UNWINDING) {
			/* the tracer thread uses req until it is done: no deadline here, the
			 * unwind has its own (UNWIND_READS_MAX, UNWIND_TIME_MAX_NS, unwind/) */
			(void) pthread_cond_wait(&b->cond, &b->lock);
			continue;
		}
		if (req->state != BT_INTERRUPTED)
			break;
		if (past(&deadline)) {
			/* under the lock: the tracer thread has not reported the caller gone, so
			 * its tid is still its own */
			if (req->kill_after) {
				kill_now(t, req->tid);
				req->killed = true;
			}
			req->state = BT_FAILED;
			req->error = "the thread did not stop after the call";
			break;
		}
		(void) pthread_cond_timedwait(&b->cond, &b->lock, &deadline);
	}
	killed = req->killed;
	unlink_req(b, req);
	pthread_mutex_unlock(&b->lock);
	return killed;
}
