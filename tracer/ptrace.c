/* SPDX-License-Identifier: MIT */
/*
 * ptrace where seccomp-notify cannot do the job (DESIGN.md "Where ptrace is needed"): chdir
 * into a directory whose virtual path differs from its host path. The kernel runs chdir on
 * the child's path string, a virtual path; at the SECCOMP_RET_TRACE stop the tracer checks
 * the path in the view and rewrites the argument to the resolved host directory, written
 * below the stack pointer's red zone of the stopped thread.
 *
 * One thread of S is the tracer of every process of the tree: it PTRACE_SEIZEs the command
 * before it execs, with TRACECLONE/FORK/VFORK so that every descendant is traced from its
 * first instruction, and EXITKILL so that the tree dies with the tracer. ptrace requests
 * must come from the tracing thread, so this thread does all of them and all waiting for
 * tracees (waitpid(__WNOTHREAD): the main thread waits only for its own child, the keeper).
 *
 * execve/execveat take the same route: the target is checked in the view
 * (emu_fs_exec_check: visible, executable, [exec] globs, the "#!" interpreter), the path
 * argument rewritten to the host path when it differs, and the checked dev/ino remembered
 * per process; at PTRACE_EVENT_EXEC /proc/PID/exe must be that file (the interpreter for a
 * script), else the process is SIGKILLed before it runs an instruction of the new image.
 * The event is asked for only where such a check is made (tracer_ptrace_exec_why): not in
 * the kernel view, where exec runs in the kernel.
 * An exec exec.allow leaves out under exec.unlisted = "ask" is held at its stop while a
 * human decides ("Held execs" below).
 *
 * With a cpu_time budget this thread also reads the end of every process before it is
 * reaped (wait_counting_ends), so that children the kernel reaps by itself are counted.
 *
 * TOCTOU: another thread of the tracee can rewrite the scratch copy between the rewrite and
 * the kernel's read. That is harmless for chdir: the cwd grants nothing by itself (every
 * relative lookup maps the cwd back into the view; a cwd outside it resolves nothing); for
 * exec, the post-exec dev/ino check catches it.
 */
#include "tracer/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "common/shebang.h"
#include "common/util.h"
#include "emulation/fs.h"
#include "policy/policy.h"
#include "tracer/budget.h"

#define RED_ZONE 128

typedef struct PtraceStart {
	Tracer *t;
	pid_t child;
	int result; /* 1: running; < 0: failed */
	pthread_mutex_t lock;
	pthread_cond_t cond;
} PtraceStart;

static void ptrace_start_free(PtraceStart *st)
{
	if (!st)
		return;
	pthread_mutex_destroy(&st->lock);
	pthread_cond_destroy(&st->cond);
	free(st);
}

/* Expected executables, per thread group: written at the exec's seccomp stop, checked at
 * its PTRACE_EVENT_EXEC (reported with the thread-group leader's pid). Only the tracer
 * thread touches it. */
#define MAX_EXPECT 256
typedef struct Expect {
	pid_t tgid;
	dev_t dev;
	ino_t ino;
} Expect;
static Expect expects[MAX_EXPECT];

static Expect *expect_slot(pid_t tgid, bool create)
{
	Expect *free_slot = NULL;

	for (size_t i = 0; i < MAX_EXPECT; i++) {
		if (expects[i].tgid == tgid)
			return &expects[i];
		if (!free_slot && (expects[i].tgid == 0 || kill(expects[i].tgid, 0) < 0))
			free_slot = &expects[i];
	}
	if (create && free_slot) {
		free_slot->tgid = tgid;
		return free_slot;
	}
	return NULL;
}

/* An audit record for a call routed here (chdir, exec) as for a notified one: captured with
 * the original registers, emitted with the decision. */
typedef struct PtraceAudit {
	struct seccomp_notif n;
	TracerAuditCtx *c;
	uint64_t t0;
} PtraceAudit;

static void audit_begin(Tracer *t, PtraceAudit *a, pid_t pid, const struct user_regs_struct *regs,
			const EmuDecision *d)
{
	a->c = NULL;
	if (!t->audit)
		return;
	a->c = malloc(sizeof(*a->c));
	if (!a->c)
		return;
	memset(&a->n, 0, sizeof(a->n));
	a->n.id = 0; /* no notification: child-mem skips ID_VALID, the thread is stopped */
	a->n.pid = (uint32_t) pid;
	a->n.data.nr = (int) regs->orig_rax;
	a->n.data.arch = 0xc000003e; /* AUDIT_ARCH_X86_64 */
	a->n.data.instruction_pointer = regs->rip;
	a->n.data.args[0] = regs->rdi;
	a->n.data.args[1] = regs->rsi;
	a->n.data.args[2] = regs->rdx;
	a->n.data.args[3] = regs->r10;
	a->n.data.args[4] = regs->r8;
	a->n.data.args[5] = regs->r9;
	a->t0 = now_monotonic_ns();
	/* the record is wanted or not by syscall, denial and [syscalls] log: decided again at
	 * the end */
	tracer_audit_capture(
		t, &a->n, regs->orig_rax < TRACER_NR_MAX ? &t->filter->slots[regs->orig_rax] : NULL,
		d, a->t0, a->c);
}

static void audit_end(Tracer *t, PtraceAudit *a, const EmuDecision *d)
{
	if (!a->c)
		return;
	if (d->denied && !a->c->active)
		/* a denial may be recorded where the call itself is not */
		tracer_audit_capture(t, &a->n, &t->filter->slots[a->n.data.nr], d, a->t0, a->c);
	else
		tracer_audit_backtrace_late(t, &a->n, d, a->c);
	tracer_audit_emit(t, &a->n, d, a->c);
	free(a->c);
	a->c = NULL;
}

static void skip_syscall(pid_t pid, struct user_regs_struct *regs, int error)
{
	/* at a seccomp stop, nr -1 skips the call and rax is what the tracee sees */
	regs->orig_rax = (unsigned long long) -1;
	regs->rax = (unsigned long long) -error;
	(void) ptrace(PTRACE_SETREGS, pid, NULL, regs);
}

#define MAX_ARGS 4096

/* The "#!" line of host file path, parsed as execve(2) does (common/shebang.h): 1 and ret
 * filled, or 0 / -errno (no such line, or one the kernel refuses). */
static int read_shebang(const char *path, Shebang *ret)
{
	char buf[SHEBANG_BUF_SIZE];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	n = pread(fd, buf, sizeof(buf), 0);
	(void) close(fd);
	return n < 0 ? -EIO : shebang_parse(buf, (size_t) n, ret);
}

/* The optional argument of the "#!" line of host file path ("" if none). */
static void shebang_arg(const char *path, char *ret, size_t size)
{
	Shebang sb;

	ret[0] = 0;
	if (read_shebang(path, &sb) > 0)
		snprintf(ret, size, "%s", sb.arg);
}

/* The interpreter text of the "#!" line (unchanged if none). */
static void shebang_interp(const char *path, char *ret, size_t size)
{
	Shebang sb;

	if (read_shebang(path, &sb) > 0 && sb.interp[0])
		snprintf(ret, size, "%s", sb.interp);
}

/* Pushes len bytes below *sp (16-aligned); returns the address or 0. */
static uint64_t push(pid_t pid, uint64_t *sp, const void *data, size_t len)
{
	*sp = (*sp - len) & ~(uint64_t) 15;
	return child_mem_write(pid, *sp, data, len) < 0 ? 0 : *sp;
}

/*
 * A script named by a translated path: the kernel would hand the interpreter the host path,
 * which the view does not show. Do what the kernel does for "#!" ourselves, with the path
 * the child gave: filename = the interpreter, argv = {"#!" text, [arg], path, argv[1..]}.
 */
static int rewrite_script(pid_t pid, struct user_regs_struct *regs, bool at, const ChildMem *mem,
			  const char *path, const EmuExecTarget *et, const char *interp_text)
{
	uint64_t argv_addr = at ? regs->rdx : regs->rsi, sp = regs->rsp - RED_ZONE;
	uint64_t *argv = NULL, a_interp, a_arg = 0, a_path, a_file, a_argv;
	char arg[256];
	size_t n = 0, k = 0;
	int r = -E2BIG;

	argv = calloc(MAX_ARGS + 4, sizeof(*argv));
	if (!argv)
		return -ENOMEM;
	/* the original argv[1..]: pointers only, the strings stay where they are */
	for (n = 0; argv_addr && n < MAX_ARGS; n++) {
		uint64_t p;

		if (mem->read(mem, argv_addr + 8 * n, &p, sizeof(p)) < 0) {
			r = -EFAULT;
			goto out;
		}
		if (!p)
			break;
		argv[3 + n] = p;
	}
	if (n >= MAX_ARGS)
		goto out;
	shebang_arg(et->host_path, arg, sizeof(arg));
	a_file = push(pid, &sp, et->interp_host_path, strlen(et->interp_host_path) + 1);
	a_interp = push(pid, &sp, interp_text, strlen(interp_text) + 1);
	if (arg[0])
		a_arg = push(pid, &sp, arg, strlen(arg) + 1);
	a_path = push(pid, &sp, path, strlen(path) + 1);
	if (!a_file || !a_interp || !a_path || (arg[0] && !a_arg)) {
		r = -EFAULT;
		goto out;
	}
	argv[k++] = a_interp;
	if (a_arg)
		argv[k++] = a_arg;
	argv[k++] = a_path;
	/* argv[3..3+n) holds the original argv[0..n): keep argv[1..] */
	if (n > 1)
		memmove(argv + k, argv + 4, (n - 1) * sizeof(*argv));
	k += n > 1 ? n - 1 : 0;
	argv[k++] = 0;
	a_argv = push(pid, &sp, argv, k * sizeof(*argv));
	if (!a_argv) {
		r = -EFAULT;
		goto out;
	}
	if (at) {
		regs->rsi = a_file;
		regs->rdx = a_argv;
		regs->r8 &= ~(unsigned long long) AT_EMPTY_PATH;
	} else {
		regs->rdi = a_file;
		regs->rsi = a_argv;
	}
	r = 0;
out:
	free(argv);
	return r;
}

/*
 * The exec the check allowed goes on: the expected file is remembered for the post-exec
 * check (unless check_after is false: no PTRACE_EVENT_EXEC will read it), and a translated
 * path is rewritten to the host path (a translated script by doing the kernel's "#!" work).
 * Fills d on failure (the call is then skipped).
 */
static void exec_go(pid_t pid, struct user_regs_struct *regs, pid_t tgid, const ChildMem *mem,
		    const char *path, const EmuExecTarget *et, bool check_after, EmuDecision *d)
{
	bool at = regs->orig_rax == SYS_execveat;
	const char *host;
	Expect *e;
	uint64_t addr;
	int r;

	snprintf(d->path, sizeof(d->path), "%s", et->vpath);
	snprintf(d->host_path, sizeof(d->host_path), "%s", et->host_path);
	if (!check_after && et->identity)
		/* no event will come to free an expectation (exec_event_needed): none taken */
		return;
	e = expect_slot(tgid, true);
	if (!e) {
		skip_syscall(pid, regs, EAGAIN);
		d->verdict = EMU_FAIL;
		d->error = EAGAIN;
		return;
	}
	e->dev = et->interp_vpath[0] ? et->interp_dev : et->dev;
	e->ino = et->interp_vpath[0] ? et->interp_ino : et->ino;
	if (et->identity)
		return; /* the child's string names the checked file */
	if (et->interp_vpath[0]) {
		char interp_text[PATH_MAX];

		/* the "#!" text as written: what the kernel would pass as argv[0] */
		snprintf(interp_text, sizeof(interp_text), "%s", et->interp_host_path);
		shebang_interp(et->host_path, interp_text, sizeof(interp_text));
		r = rewrite_script(pid, regs, at, mem, path, et, interp_text);
		if (r < 0) {
			skip_syscall(pid, regs, -r);
			d->verdict = EMU_FAIL;
			d->error = -r;
		} else if (ptrace(PTRACE_SETREGS, pid, NULL, regs) < 0)
			log_debug_errno(-errno, "PTRACE_SETREGS of %d", (int) pid);
		return;
	}
	host = et->host_path;
	addr = (regs->rsp - RED_ZONE - strlen(host) - 1) & ~(uint64_t) 15;
	if (child_mem_write(pid, addr, host, strlen(host) + 1) < 0) {
		skip_syscall(pid, regs, EFAULT);
		d->verdict = EMU_FAIL;
		d->error = EFAULT;
		return;
	}
	if (at) {
		regs->rsi = addr;
		regs->r8 &= ~(unsigned long long) AT_EMPTY_PATH;
	} else
		regs->rdi = addr;
	if (ptrace(PTRACE_SETREGS, pid, NULL, regs) < 0)
		log_debug_errno(-errno, "PTRACE_SETREGS of %d", (int) pid);
}

/*
 * The emulated view, exec by exec: where Landlock holds the tree to exactly the view
 * (EmuHost.landlock_exact, tracer/landlock.c) and the exec went to the kernel with the
 * child's own string (et->identity: the path, and the "#!" interpreter's, name the checked
 * files on the host as they are), the check after it would catch only a path another thread
 * rewrote between our read and the kernel's. The file the kernel then runs is one Landlock
 * lets it open for execution: beneath a mount's source, which the view shows (the same
 * argument as for the opens the kernel makes: docs/filesystem.md), regular and executable
 * by the kernel's own checks, and with no [exec] list, ask or backtrace (the policy keys
 * tracer_ptrace_exec_why() names) the view would have let it run too. So that exec goes
 * without PTRACE_EVENT_EXEC: a stop less per exec. Translated paths (the tracer wrote the
 * host path into the stack, where another thread can reach it) keep the event.
 * tests/security/fs-exec-flip.c races the path to a program outside the view.
 */
/* Whether an exec may go without the event at all in this run: decided by the run alone */
static bool exec_events_per_exec(const Tracer *t)
{
	return !t->kview && t->host.landlock_exact && !tracer_ptrace_exec_why(t->policy, true);
}

static bool exec_event_needed(const Tracer *t, const EmuExecTarget *et)
{
	return !exec_events_per_exec(t) || !et->identity;
}

/* PTRACE_O_* of every tracee; PTRACE_O_TRACEEXEC as tracer_ptrace_exec_why() decides for the
 * run, and in the emulated view per exec (exec_event_needed). Options are per thread, and a
 * child the tracer attaches at fork inherits its parent's: each exec stop sets them anew. */
static long ptrace_options(bool exec_event)
{
	return PTRACE_O_TRACESECCOMP | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
	       PTRACE_O_TRACEVFORK | PTRACE_O_EXITKILL | (exec_event ? PTRACE_O_TRACEEXEC : 0);
}

/* After exec_go() let the exec go on: whether it stops again once it ran. Where the run
 * decides for every exec the options never change, and no call is made. */
static void exec_event_choose(const Tracer *t, pid_t pid, bool check_after, const EmuDecision *d)
{
	if (d->verdict == EMU_FAIL || !exec_events_per_exec(t))
		return;
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *) ptrace_options(check_after)) < 0)
		log_debug_errno(-errno, "PTRACE_SETOPTIONS of %d", (int) pid);
}

/*
 * Held execs (exec.unlisted = "ask"; docs/policy.md "[exec]"). The exec's seccomp-trace stop
 * is the hold: the tracer thread leaves the thread stopped (no PTRACE_CONT) and goes on
 * serving the rest of the tree, while a thread of its own asks the run's channels
 * (tracer_ask(), tracer/ask.c). The answer comes back to the tracer thread — only it may
 * make ptrace requests — through the done list, and ASK_SIGNAL breaks its waitpid (sent
 * again every 20 ms until it took the answer: a signal just before waitpid would be lost
 * otherwise). It then lets the exec go on as an allowed one (exec_go) or skips it with
 * EACCES, and continues the thread.
 *
 * TOCTOU: what the human decides on is the file the check resolved in the view — its
 * virtual path and its dev/ino. The program has ask_timeout to change things while it waits
 * (another thread can rename, replace, or swap a symlink under the path); the exec then
 * still runs the kernel's own lookup of the path (or of our copy of the host path), which
 * may find another file. That is what the post-exec check is for: at PTRACE_EVENT_EXEC,
 * /proc/PID/exe must be the dev/ino that was asked about (the interpreter's, for a script),
 * else the process is killed before it runs an instruction of the new image. This is why
 * asking needs ptrace (the loader refuses exec.unlisted = "ask" with ptrace = "never", and
 * emu_handle_execve denies what it would have to ask). The contents of a file the program
 * can write are the program's, before the question as after it: the decision is about a
 * name and a file, as exec.allow is.
 *
 * allow_session remembers the virtual path with its dev/ino: the same file under the same
 * path runs unasked for the rest of the run; another file at that path (the program
 * rebuilt it) is asked about again. At most MAX_HELD_EXEC execs are held at once (each has a
 * thread); more are denied at once.
 */
#define ASK_SIGNAL	 (SIGRTMIN + 4)
#define MAX_HELD_EXEC	 16
#define MAX_EXEC_SESSION 256

typedef struct HeldExec {
	struct HeldExec *next;
	Tracer *t;
	pid_t pid, tgid;
	struct user_regs_struct regs;
	char path[PATH_MAX];
	EmuExecTarget *et;
	EmuDecision *d;
	PtraceAudit au;
	NetAskAnswer answer;
	bool gone; /* the thread died while held */
} HeldExec;

typedef struct ExecAllowed {
	char *vpath;
	dev_t dev;
	ino_t ino;
} ExecAllowed;

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* n_threads went down */
	HeldExec *asking;    /* a thread asks about each */
	HeldExec *done;	     /* answered, for the tracer thread */
	unsigned n_threads;  /* asking threads that have not ended */
	atomic_uint n_done;
	atomic_int tracer_tid; /* 0: the tracer thread has ended (or not started) */
	ExecAllowed allowed[MAX_EXEC_SESSION];
	size_t n_allowed;
} held = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static void ask_signal_handler(int sig)
{
	(void) sig; /* only breaks waitpid (no SA_RESTART) */
}

static bool session_allowed_one(const char *vpath, dev_t dev, ino_t ino)
{
	bool found = false;

	pthread_mutex_lock(&held.lock);
	for (size_t i = 0; i < held.n_allowed && !found; i++)
		found = held.allowed[i].dev == dev && held.allowed[i].ino == ino &&
			streq(held.allowed[i].vpath, vpath);
	pthread_mutex_unlock(&held.lock);
	return found;
}

static void session_add_one(const char *vpath, dev_t dev, ino_t ino)
{
	pthread_mutex_lock(&held.lock);
	if (held.n_allowed < MAX_EXEC_SESSION) {
		char *v = strdup(vpath);

		if (v)
			held.allowed[held.n_allowed++] = (ExecAllowed){v, dev, ino};
	}
	pthread_mutex_unlock(&held.lock);
}

/* Whether every file of et that needs a decision was allowed for the session. */
static bool session_allowed(const EmuExecTarget *et)
{
	return (!et->ask || session_allowed_one(et->vpath, et->dev, et->ino)) &&
	       (!et->interp_ask ||
		session_allowed_one(et->interp_vpath, et->interp_dev, et->interp_ino));
}

/* A ratchet drop (private data entered the run) ends all asking: not in the policy's own
 * network mode any more. */
static bool ratchet_dropped(const Tracer *t)
{
	return net_runtime_mode(t->net) != t->policy->network.mode;
}

static void *held_main(void *userdata)
{
	HeldExec *h = userdata;
	const EmuExecTarget *et = h->et;
	char name[PATH_MAX + 40];
	NetAskRequest rq = {
		.pid = h->pid,
		.tgid = h->tgid,
		.op = "exec",
		.destination = et->ask ? et->vpath : et->interp_vpath,
		.why = "not in exec.allow",
		.rule = "exec.unlisted = \"ask\": a program outside exec.allow",
		.outside = "which is not in [exec] allow",
		.timeout_ms = h->t->policy->exec_ask_timeout_ms,
	};
	int tid;

	if (et->ask && et->interp_ask) {
		snprintf(name, sizeof(name), "and its interpreter %s", et->interp_vpath);
		rq.name = name;
	} else if (et->interp_ask) {
		snprintf(name, sizeof(name), "the interpreter of %s", et->vpath);
		rq.name = name;
	}
	h->answer = tracer_ask(h->t, &rq);

	pthread_mutex_lock(&held.lock);
	for (HeldExec **p = &held.asking; *p; p = &(*p)->next)
		if (*p == h) {
			*p = h->next;
			break;
		}
	h->next = held.done;
	held.done = h;
	atomic_fetch_add(&held.n_done, 1);
	pthread_mutex_unlock(&held.lock);
	/* until the tracer thread took every answer (or has ended: tracer_ptrace_stop then
	 * drains the list) */
	while (atomic_load(&held.n_done) > 0 && (tid = atomic_load(&held.tracer_tid)) != 0) {
		(void) syscall(SYS_tgkill, getpid(), tid, ASK_SIGNAL);
		(void) usleep(20000);
	}
	pthread_mutex_lock(&held.lock);
	held.n_threads--;
	pthread_cond_broadcast(&held.cond);
	pthread_mutex_unlock(&held.lock);
	return NULL;
}

/* Holds the exec for a decision; false when it cannot (too many held, no thread). Takes
 * et, d and the audit context on success. */
static bool exec_hold(Tracer *t, pid_t pid, const struct user_regs_struct *regs, pid_t tgid,
		      const char *path, EmuExecTarget *et, EmuDecision *d, PtraceAudit *au)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t thread;
	HeldExec *h;
	int r;

	h = calloc(1, sizeof(*h));
	if (!h)
		return false;
	*h = (HeldExec){.t = t,
			.pid = pid,
			.tgid = tgid,
			.regs = *regs,
			.et = et,
			.d = d,
			.au = *au,
			.answer = NET_ASK_DENY};
	snprintf(h->path, sizeof(h->path), "%s", path);
	pthread_mutex_lock(&held.lock);
	if (held.n_threads >= MAX_HELD_EXEC) {
		pthread_mutex_unlock(&held.lock);
		free(h);
		return false;
	}
	held.n_threads++;
	h->next = held.asking;
	held.asking = h;
	pthread_mutex_unlock(&held.lock);

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all); /* the asking thread takes no signal (ask.c blocks what it needs) */
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = pthread_create(&thread, &attr, held_main, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (r != 0) {
		pthread_mutex_lock(&held.lock);
		held.n_threads--;
		for (HeldExec **p = &held.asking; *p; p = &(*p)->next)
			if (*p == h) {
				*p = h->next;
				break;
			}
		pthread_mutex_unlock(&held.lock);
		free(h);
		return false;
	}
	au->c = NULL; /* the held exec's now */
	return true;
}

static void exec_deny(Tracer *t, pid_t pid, struct user_regs_struct *regs, EmuDecision *d,
		      const char *why)
{
	atomic_fetch_add(&t->denied, 1);
	d->denied = true;
	d->verdict = EMU_FAIL;
	d->error = EACCES;
	d->why = why;
	skip_syscall(pid, regs, EACCES);
}

/* On the tracer thread: an answered exec goes on or fails, and its thread is continued. */
static void held_finish(Tracer *t, HeldExec *h)
{
	EmuDecision *d = h->d;

	if (h->gone) {
		d->verdict = EMU_FAIL;
		d->error = ESRCH;
		d->why = "the process ended while asking";
	} else if (h->answer == NET_ASK_DENY)
		exec_deny(t, h->pid, &h->regs, d, "not in exec.allow (denied when asked)");
	else if (ratchet_dropped(t))
		exec_deny(t, h->pid, &h->regs, d, "network restricted while asking");
	else {
		ChildMemCtx mc;

		if (h->answer == NET_ASK_ALLOW_SESSION) {
			if (h->et->ask)
				session_add_one(h->et->vpath, h->et->dev, h->et->ino);
			if (h->et->interp_ask)
				session_add_one(h->et->interp_vpath, h->et->interp_dev,
						h->et->interp_ino);
		}
		d->why = h->answer == NET_ASK_ALLOW_SESSION ? "allowed when asked (for the session)"
							    : "allowed when asked (once)";
		child_mem_init(&mc, h->pid, -1, 0);
		/* a run that holds execs asks for the event after every one
		 * (tracer_ptrace_exec_why): a human's answer is tied to the file that runs */
		exec_go(h->pid, &h->regs, h->tgid, &mc.mem, h->path, h->et, true, d);
	}
	audit_end(t, &h->au, d);
	if (!h->gone)
		(void) ptrace(PTRACE_CONT, h->pid, NULL, NULL);
	free(h->et);
	free(h->d);
	free(h);
}

/* On the tracer thread, before it waits: the answers that came. */
static void held_service(Tracer *t)
{
	HeldExec *list;

	if (atomic_load(&held.n_done) == 0)
		return;
	pthread_mutex_lock(&held.lock);
	list = held.done;
	held.done = NULL;
	atomic_store(&held.n_done, 0);
	pthread_mutex_unlock(&held.lock);
	while (list) {
		HeldExec *h = list;

		list = h->next;
		held_finish(t, h);
	}
}

/* A traced thread ended: a held exec of it must not touch its pid again. */
static void held_gone(pid_t pid)
{
	pthread_mutex_lock(&held.lock);
	for (HeldExec *h = held.asking; h; h = h->next)
		if (h->pid == pid)
			h->gone = true;
	for (HeldExec *h = held.done; h; h = h->next)
		if (h->pid == pid)
			h->gone = true;
	pthread_mutex_unlock(&held.lock);
}

/* Returns true when the exec is held (the thread must stay stopped). */
static bool on_exec_stop(Tracer *t, pid_t pid, struct user_regs_struct *regs, pid_t tgid,
			 const ChildMem *mem, EmuRequest *req)
{
	bool at = regs->orig_rax == SYS_execveat;
	uint64_t path_addr = at ? regs->rsi : regs->rdi;
	int dirfd = at ? (int) regs->rdi : AT_FDCWD, flags = at ? (int) regs->r8 : 0;
	char path[PATH_MAX];
	EmuExecTarget *et = NULL;
	EmuDecision *d;
	PtraceAudit au = {};
	bool check_after;
	int r;

	d = malloc(sizeof(*d));
	if (!d) {
		skip_syscall(pid, regs, ENOMEM);
		return false;
	}
	emu_decision_init(d);
	audit_begin(t, &au, pid, regs, d);

	/* TOCTOU: copied once; the kernel then reads either the same string (identity) or our
	 * copy of the host path; the exec event below checks what actually ran */
	r = mem->read_string(mem, path_addr, path, sizeof(path));
	if (r < 0)
		r = r == -ENAMETOOLONG ? -ENAMETOOLONG : -EFAULT;
	else if (at && (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)))
		r = -EINVAL;
	else if (!(et = malloc(sizeof(*et))))
		r = -ENOMEM;
	if (r < 0) {
		skip_syscall(pid, regs, -r);
		d->verdict = EMU_FAIL;
		d->error = -r;
		goto out;
	}
	req->nr = (int) regs->orig_rax;
	r = emu_fs_exec_check(req, dirfd, path, flags, et);
	if (r == 0 && !et->interp_identity) {
		r = -EACCES; /* the kernel reads "#!" itself: a translated interpreter cannot be
			      * rewritten */
		et->refused = true;
	}
	if (r < 0) {
		if (et->refused) {
			atomic_fetch_add(&t->denied, 1);
			d->denied = true;
		}
		skip_syscall(pid, regs, -r);
		d->verdict = EMU_FAIL;
		d->error = -r;
		goto out;
	}
	if (et->ask || et->interp_ask) {
		/* exec.unlisted = "ask": held for a decision (see "Held execs" above) */
		snprintf(d->path, sizeof(d->path), "%s", et->vpath);
		snprintf(d->host_path, sizeof(d->host_path), "%s", et->host_path);
		if (session_allowed(et))
			d->why = "allowed for the session by an earlier decision";
		else if (ratchet_dropped(t)) {
			exec_deny(t, pid, regs, d,
				  "not in exec.allow (no asking after a ratchet "
				  "drop)");
			goto out;
		} else if (exec_hold(t, pid, regs, tgid, path, et, d, &au))
			return true; /* et, d and the audit record are the held exec's now */
		else {
			exec_deny(t, pid, regs, d, "not in exec.allow (too many held execs)");
			goto out;
		}
	}
	check_after = exec_event_needed(t, et);
	exec_go(pid, regs, tgid, mem, path, et, check_after, d);
	exec_event_choose(t, pid, check_after, d);
out:
	audit_end(t, &au, d);
	free(d);
	free(et);
	return false;
}

/* PTRACE_EVENT_EXEC: the new image must be the file that was checked. */
static void on_exec_event(Tracer *t, pid_t pid)
{
	char p[64];
	struct stat st;
	Expect *e;

	if (t->kview)
		return; /* exec runs in the kernel, in a namespace that holds only the view */
	e = expect_slot(pid, false);
	snprintf(p, sizeof(p), "/proc/%d/exe", (int) pid);
	if (e && stat(p, &st) == 0 && st.st_dev == e->dev && st.st_ino == e->ino) {
		e->tgid = 0;
		return;
	}
	log_error("pid %d executed a file other than the one checked: killing it", (int) pid);
	(void) kill(pid, SIGKILL);
}

/*
 * clone, fork and vfork under a tasks budget (budget_filter_apply): decided at a seccomp stop
 * rather than by a notification. A signal that reaches a thread whose notification the
 * supervisor has not read yet ends its wait with ERESTARTSYS, which a handler installed
 * without SA_RESTART (dash's SIGCHLD handler) turns into EINTR: a fork that fails with
 * EINTR, which the kernel's own clone never returns (it restarts with ERESTARTNOINTR). A
 * shell that forks while its children exit hit this in about 1 run in 30. A ptrace stop is
 * not ended by a signal; it stays pending until the call has run.
 */
static void on_clone_stop(Tracer *t, pid_t pid, struct user_regs_struct *regs)
{
	PtraceAudit au = {};
	EmuRequest req = {
		.policy = t->policy,
		.view = t->view,
		.pid = pid,
		.known_tgid = pid,  /* unused by the budget */
		.arch = 0xc000003e, /* AUDIT_ARCH_X86_64 */
		.nr = (int) regs->orig_rax,
		.host = &t->host,
		.args = {regs->rdi, regs->rsi, regs->rdx, regs->r10, regs->r8, regs->r9},
	};
	EmuDecision *d = malloc(sizeof(*d));

	if (!d) {
		skip_syscall(pid, regs, ENOMEM);
		return;
	}
	emu_decision_init(d);
	audit_begin(t, &au, pid, regs, d);
	if (budget_handle_clone(&req, d) < 0) {
		d->verdict = EMU_FAIL;
		d->error = ENOMEM;
		d->why = "supervisor error";
	}
	if (d->verdict == EMU_FAIL)
		skip_syscall(pid, regs, d->error);
	audit_end(t, &au, d);
	free(d);
}

/* Returns true when the thread stays stopped (a held exec), false when it is to go on. */
static bool on_seccomp_stop(Tracer *t, pid_t pid)
{
	const TracerSlot *slot;
	struct user_regs_struct regs;
	char path[PATH_MAX], host[PATH_MAX];
	ChildMemCtx mc;
	EmuRequest req;
	EmuDecision *d;
	PtraceAudit au = {};
	pid_t tgid = 0;
	uint64_t addr;
	int r;

	if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) < 0)
		return false;
	if (regs.orig_rax >= TRACER_NR_MAX)
		return false;
	slot = &t->filter->slots[regs.orig_rax];
	if (slot->entry && (slot->entry->flags & SYSCALL_TASKS)) {
		/* ours only when the tasks budget routed it here; a RET_TRACE of a filter the
		 * program installed itself is let through as before */
		if (slot->action == SECCOMP_RET_TRACE)
			on_clone_stop(t, pid, &regs);
		return false;
	}
	if (!slot->entry || !(slot->entry->flags & EMU_TRACE))
		return false; /* not routed here: let it run as the filter's action says */

	child_mem_init(&mc, pid, -1, 0);
	if (proc_read_tgid(pid, &tgid) < 0)
		tgid = pid;
	req = (EmuRequest){
		.policy = t->policy,
		.view = t->view,
		.mem = &mc.mem,
		.pid = pid,
		.known_tgid = tgid,
		.arch = 0xc000003e, /* AUDIT_ARCH_X86_64: the filter kills other arches */
		.nr = SYS_chdir,
		.host = &t->host,
	};
	req.args[0] = regs.rdi;
	if (slot->entry->handler == emu_handle_execve)
		return on_exec_stop(t, pid, &regs, tgid, &mc.mem, &req);
	d = malloc(sizeof(*d));
	if (!d) {
		skip_syscall(pid, &regs, ENOMEM);
		return false;
	}
	emu_decision_init(d);
	audit_begin(t, &au, pid, &regs, d);
	/* TOCTOU: the path is copied once and checked; what the kernel then reads is our copy
	 * of the host path (see the header for why a rewrite of it is harmless) */
	r = mc.mem.read_string(&mc.mem, regs.rdi, path, sizeof(path));
	if (r >= 0)
		r = emu_fs_chdir_check(&req, path, host, sizeof(host), d);
	if (d->denied)
		atomic_fetch_add(&t->denied, 1);
	if (r < 0) {
		int e = r == -ENAMETOOLONG ? ENAMETOOLONG : r == -EFAULT ? EFAULT : -r;

		skip_syscall(pid, &regs, e);
		d->verdict = EMU_FAIL;
		d->error = e;
		goto out;
	}
	if (!host[0])
		goto out; /* the kernel reaches the checked directory with the child's string */
	addr = (regs.rsp - RED_ZONE - strlen(host) - 1) & ~(uint64_t) 15;
	r = child_mem_write(pid, addr, host, strlen(host) + 1);
	if (r < 0) {
		skip_syscall(pid, &regs, EFAULT);
		d->verdict = EMU_FAIL;
		d->error = EFAULT;
		goto out;
	}
	regs.rdi = addr;
	if (ptrace(PTRACE_SETREGS, pid, NULL, &regs) < 0)
		log_debug_errno(-errno, "PTRACE_SETREGS of %d", (int) pid);
out:
	audit_end(t, &au, d);
	free(d);
	return false;
}

/*
 * The disk budget's answer to growth is EDQUOT, as on a disk with quotas, but the kernel
 * check a plain user can set on another process's writes is RLIMIT_FSIZE, whose answer is
 * EFBIG plus SIGXFSZ to the writer (docs/budgets.md). The signal is the hook: it is sent
 * during the call and reported to us at its delivery, on the way back from the call before
 * the thread runs an instruction, also when the program ignores it. If the call was one
 * that grows files, it returned EFBIG, and the rlimit it hit is the disk budget's, the
 * result becomes EDQUOT and the signal is dropped (a real EDQUOT sends none). Anything else
 * (a SIGXFSZ from kill, a file_size limit) is delivered as it is. Returns whether it
 * rewrote the call.
 */
static bool fsize_to_edquot(Tracer *t, pid_t pid)
{
	struct user_regs_struct regs;
	siginfo_t si;

	if (!t->budget || !budget_efbig_is_disk(t->budget))
		return false;
	if (ptrace(PTRACE_GETSIGINFO, pid, NULL, &si) < 0 || si.si_code != SI_USER)
		return false;
	if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) < 0 || (long long) regs.rax != -EFBIG)
		return false;
	/* the calls that grow files: their rows' SYSCALL_GROWS (syscalls/table.c) */
	if (regs.orig_rax >= TRACER_NR_MAX || !t->filter->slots[regs.orig_rax].entry ||
	    !(t->filter->slots[regs.orig_rax].entry->flags & SYSCALL_GROWS))
		return false;
	regs.rax = (unsigned long long) -EDQUOT;
	if (ptrace(PTRACE_SETREGS, pid, NULL, &regs) < 0) {
		log_debug_errno(-errno, "PTRACE_SETREGS of %d", (int) pid);
		return false;
	}
	return true;
}

/*
 * The next event of a tracee, as waitpid(-1, status, __WALL | __WNOTHREAD) returns it, but
 * an end is first read without reaping it (WNOWAIT) and handed to the cpu_time budget
 * (budget_task_ended: /proc/PID is still there, and the rusage of the wait is the group's).
 * This thread is the first to learn of every end of the tree: a tracee's end is reported
 * to its tracer, and its real parent sees it only after the tracer's wait, even when that
 * parent ignores SIGCHLD (kernel/exit.c: exit_notify notifies the tracer and does not
 * autoreap a traced task; wait_task_zombie of a ptrace_reparented task goes through
 * EXIT_TRACE to do_notify_parent, which then reaps it for a parent that ignores SIGCHLD or
 * set SA_NOCLDWAIT, its time added to no one's cutime).
 *
 * A stop seen with WNOWAIT is then taken with waitid(WSTOPPED | WNOHANG), which reports
 * stops only: had the tracee been killed meanwhile, a waitpid would reap its end uncounted;
 * this finds nothing, and the end is read with WNOWAIT on the next round. Returns -1 with
 * errno as waitpid does (EINTR, ECHILD).
 */
static pid_t wait_counting_ends(Tracer *t, int *ret_status)
{
	for (unsigned round = 0;; round++) {
		struct rusage ru;
		siginfo_t si;
		pid_t pid;

		memset(&si, 0, sizeof(si));
		/* the raw call: glibc's waitid has no rusage argument */
		if (syscall(SYS_waitid, P_ALL, 0, &si, WEXITED | WNOWAIT | __WALL | __WNOTHREAD,
			    &ru) < 0)
			return -1;
		if (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED ||
		    si.si_code == CLD_DUMPED) {
			budget_task_ended(t->budget, si.si_pid, &ru);
			/* a zombie stays one until its tracer's wait: this is the same end */
			return waitpid(si.si_pid, ret_status, __WALL | __WNOTHREAD);
		}
		pid = si.si_pid;
		if (round >= 1000)
			/* never seen; should a stop show with WNOWAIT and not without, take it
			 * as before rather than spin */
			return waitpid(pid, ret_status, __WALL | __WNOTHREAD);
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t) pid, &si, WSTOPPED | WNOHANG | __WALL | __WNOTHREAD) < 0)
			return -1;
		if (si.si_pid == 0)
			continue; /* no longer stopped: killed, its end comes next */
		/* wait_task_stopped: the waitid status is the stop's exit_code (signal and ptrace
		 * event), the waitpid one is (exit_code << 8) | 0x7f */
		*ret_status = (si.si_status << 8) | 0x7f;
		return si.si_pid;
	}
}

/* the kernel's restart codes (include/linux/errno.h), never seen by user space */
#define ERESTARTSYS    512
#define ERESTARTNOINTR 513

/*
 * A signal that reaches a thread waiting for the supervisor to read its notification ends
 * the wait: the call, which never ran, returns ERESTARTSYS, and a handler installed without
 * SA_RESTART turns that into EINTR. For an emulated open, stat or kill, which natively never
 * fail so, programs do not retry: a shell whose SIGCHLD handler has no SA_RESTART saw about
 * 1 in 250 of its emulated calls fail while children exited. At the signal's delivery stop,
 * on the way back from such a call, the result becomes ERESTARTNOINTR: the kernel then runs
 * the handler and restarts the call, as if the signal had come just before it.
 *
 * Only where the ERESTARTSYS can come from nothing else: a call that every time goes to the
 * supervisor and is answered by it (tracer_filter_restartable: not one it lets the kernel
 * run, as a connect), with WAIT_KILLABLE_RECV, so that a call the supervisor has received
 * cannot be interrupted but by SIGKILL (without it, the interrupted call may have been done
 * by the supervisor already and must not run twice). And on 6.17 or later: before
 * "seccomp: Fix a race with WAIT_KILLABLE_RECV if the tracer replies too fast" (6.17,
 * backported to some stable kernels, which uname cannot tell), a reply that came between
 * the signal and the thread's wake-up also made ERESTARTSYS of a call that was done.
 */
static void restart_unreceived(Tracer *t, pid_t pid, bool kernel_fixed)
{
	struct user_regs_struct regs;

	if (!kernel_fixed || !atomic_load(&t->wait_killable) ||
	    ptrace(PTRACE_GETREGS, pid, NULL, &regs) < 0)
		return;
	if ((long long) regs.rax != -ERESTARTSYS ||
	    !tracer_filter_restartable(t->filter, (long) regs.orig_rax, t->kview))
		return;
	regs.rax = (unsigned long long) -ERESTARTNOINTR;
	if (ptrace(PTRACE_SETREGS, pid, NULL, &regs) < 0)
		log_debug_errno(-errno, "PTRACE_SETREGS of %d", (int) pid);
}

/*
 * Whether the tracer asks for PTRACE_EVENT_EXEC (PTRACE_O_TRACEEXEC); NULL when no one reads
 * it, else what reads it. Every stop costs the tracee two context switches and the tracer
 * thread a wake-up, crossing CPUs on a small machine: at fork+exec+wait in the kernel view
 * the exec event was a fifth of what the tracer added (docs/performance.md, "Processes in
 * the kernel view"). It is read by on_exec_event() only, to check that what ran is what
 * on_exec_stop() checked, and that holds only in the emulated view: in the kernel view exec
 * runs in the kernel, in a mount namespace that holds the view alone (tracer/kview.c), and
 * the policies that would want the event there (an [exec] list, exec.unlisted = "ask",
 * backtraces, an audit log) do not qualify for it (tracer_kview_qualify()). The last three
 * are tested here too, so that should the kernel view ever take them, the event comes back
 * with them rather than silently going. Without the option a PTRACE_SEIZEd tracee gets no
 * SIGTRAP after exec (ptrace(2), "execve(2) under ptrace"), and the tracer keeps nothing
 * per tid that an exec by a non-leader thread would leave stale in the kernel view (the
 * expectations and held execs are the emulated view's, the backtrace state needs
 * [audit] backtrace). Decided once per run, here: run --json reports it ("layers",
 * "exec_events") and `check` prints it.
 */
const char *tracer_ptrace_exec_why(const Policy *p, bool kview)
{
	if (!kview)
		return "the emulated view checks after each exec that the file that ran is the "
		       "one checked";
	if (p->exec_allow || p->exec_deny || p->exec_ask_unlisted)
		return "[exec] lists are checked after the exec";
	if (p->audit.backtrace != AUDIT_SELECT_NONE)
		return "backtraces follow the tracee across exec";
	return NULL;
}

static void *ptrace_main(void *userdata)
{
	PtraceStart *st = userdata;
	Tracer *t = st->t;
	long opts = ptrace_options(tracer_ptrace_exec_why(t->policy, t->kview) != NULL);
	bool restart_fixed = kernel_at_least(6, 17); /* restart_unreceived */
	int r = 0;

	if (ptrace(PTRACE_SEIZE, st->child, NULL, (void *) opts) < 0)
		r = -errno;
	pthread_mutex_lock(&st->lock);
	st->result = r < 0 ? r : 1;
	pthread_cond_broadcast(&st->cond);
	pthread_mutex_unlock(&st->lock);
	if (r < 0)
		return NULL;
	/* st stays until tracer_ptrace_stop(), but nothing here needs it any more */
	/* With a cpus limit the tree runs on known CPUs: so does this thread, as the receivers
	 * do (tracer/dispatch.c). Every stop wakes it and every PTRACE_CONT wakes the tracee;
	 * on this 2-core VM a wake-up that crosses CPUs costs tens of µs, and the tracer's
	 * four stops per fork+exec+wait made it 1.25x native, against 1.03x with the whole
	 * run on one CPU (docs/performance.md, "Processes in the kernel view"). Affinity only:
	 * what the thread decides does not depend on where it runs. */
	(void) budget_pin_cpus(t->budget);
	tracer_bt_thread_ready(t, true);
	if (t->policy->exec_ask_unlisted) {
		sigset_t ss;

		/* held execs: their asking threads wake us with ASK_SIGNAL */
		atomic_store(&held.tracer_tid, (int) syscall(SYS_gettid));
		sigemptyset(&ss);
		sigaddset(&ss, ASK_SIGNAL);
		pthread_sigmask(SIG_UNBLOCK, &ss, NULL);
	}

	for (;;) {
		int status, sig, event;
		pid_t pid;

		/* backtraces: receivers wake us with a signal to interrupt their callers */
		tracer_bt_service(t);
		/* held execs that were answered (the same way) */
		held_service(t);
		if (t->budget && t->budget->cpu_by_ends)
			pid = wait_counting_ends(t, &status);
		else
			pid = waitpid(-1, &status, __WALL | __WNOTHREAD);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			wall_trace("T no tracee left");
			break; /* ECHILD: no tracee left */
		}
		wall_trace("T %d: status %#x", (int) pid, status);
		if (!WIFSTOPPED(status)) {
			tracer_bt_on_exit(t, pid);
			held_gone(pid);
			continue; /* exited: released to its real parent */
		}
		sig = WSTOPSIG(status);
		event = status >> 16;
		if (sig == SIGTRAP && event == PTRACE_EVENT_SECCOMP) {
			if (on_seccomp_stop(t, pid))
				continue; /* a held exec: stays stopped until its answer */
			sig = 0;
		} else if (event == PTRACE_EVENT_STOP) {
			/* a caller interrupted for its backtrace, on its way back from the call
			 * (tracer/backtrace.c); a group-stop may have come with it */
			if (tracer_bt_on_stop(t, pid) == 2)
				continue; /* killed there: the call was to kill the sandbox */
			if (sig != SIGTRAP) {
				/* group-stop (SIGSTOP, SIGTSTP…): stay stopped, as without us */
				(void) ptrace(PTRACE_LISTEN, pid, NULL, NULL);
				continue;
			}
			sig = 0; /* a new tracee's first stop */
		} else if (sig == SIGTRAP && event == PTRACE_EVENT_EXEC) {
			on_exec_event(t, pid);
			sig = 0;
		} else if (sig == SIGTRAP && event) {
			/* fork, clone events: the child is visible now */
			if (t->budget && t->policy->limits.tasks != LIMIT_UNSET)
				budget_clone_done(t->budget, pid);
			sig = 0;
		} else if (sig == SIGXFSZ && fsize_to_edquot(t, pid)) {
			sig = 0; /* the disk budget's EFBIG, now EDQUOT */
		} else if (!event)
			restart_unreceived(t, pid, restart_fixed);
		/* else a signal-delivery stop: deliver it */
		(void) ptrace(PTRACE_CONT, pid, NULL, (void *) (long) sig);
	}
	tracer_bt_thread_ready(t, false);
	atomic_store(&held.tracer_tid, 0);
	return NULL;
}

int tracer_ptrace_start(Tracer *t, pid_t child)
{
	PtraceStart *st = calloc(1, sizeof(*st));
	sigset_t all, old;
	int r;

	if (!st)
		return -ENOMEM;
	*st = (PtraceStart){.t = t, .child = child};
	pthread_mutex_init(&st->lock, NULL);
	pthread_cond_init(&st->cond, NULL);
	if (t->policy->exec_ask_unlisted) {
		struct sigaction sa = {.sa_handler = ask_signal_handler}; /* no SA_RESTART */

		(void) sigaction(ASK_SIGNAL, &sa, NULL);
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = -pthread_create(&t->ptrace_thread, NULL, ptrace_main, st);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		ptrace_start_free(st);
		return r;
	}
	t->ptrace_start = st;
	t->ptrace_started = true;
	return 0;
}

int tracer_ptrace_seized(Tracer *t)
{
	PtraceStart *st = t->ptrace_start;
	int r;

	pthread_mutex_lock(&st->lock);
	while (st->result == 0)
		pthread_cond_wait(&st->cond, &st->lock);
	r = st->result;
	pthread_mutex_unlock(&st->lock);
	if (r > 0)
		return 0;
	/* the thread has returned */
	(void) pthread_join(t->ptrace_thread, NULL);
	t->ptrace_started = false;
	return r;
}

void tracer_ptrace_stop(Tracer *t)
{
	/* returns once no tracee is left (the tree is dead by now) */
	if (t->ptrace_started)
		(void) pthread_join(t->ptrace_thread, NULL);
	t->ptrace_started = false;
	ptrace_start_free(TAKE_PTR(t->ptrace_start));
	/* held execs whose threads died: their asks end now (the run is ending), and what
	 * they leave is freed; the tracees are gone, nothing is continued */
	pthread_mutex_lock(&held.lock);
	if (held.n_threads > 0) {
		pthread_mutex_unlock(&held.lock);
		tracer_ask_cancel(t);
		pthread_mutex_lock(&held.lock);
		while (held.n_threads > 0)
			pthread_cond_wait(&held.cond, &held.lock);
	}
	while (held.done) {
		HeldExec *h = held.done;

		held.done = h->next;
		h->gone = true;
		pthread_mutex_unlock(&held.lock);
		held_finish(t, h);
		pthread_mutex_lock(&held.lock);
	}
	atomic_store(&held.n_done, 0);
	for (size_t i = 0; i < held.n_allowed; i++)
		free(held.allowed[i].vpath);
	held.n_allowed = 0;
	pthread_mutex_unlock(&held.lock);
}
