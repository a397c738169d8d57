/* SPDX-License-Identifier: MIT */
/*
 * The dispatcher's side of the audit log (audit/audit.h): after each decision, fill an
 * AuditRecord from the notification and the EmuDecision, reading from the child what the
 * record shows (path strings as given, socket addresses, exec argv).
 *
 * Those reads happen before the reply, while the caller is still blocked in the call: after
 * it, an exec has replaced the memory and any thread could have rewritten it. They are display
 * only — decisions were made by the handler on its own copies (TOCTOU: nothing here is used to
 * decide) — and they are made only when a record will be written, so a run without audit pays
 * nothing but one pointer test.
 */
#include "tracer/internal.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "audit/audit.h"
#include "common/log.h"
#include "common/util.h"
#include "emulation/path/view.h"
#include "net/sockaddr.h"
#include "policy/policy.h"
#include "tracer/budget.h"

static bool has_log_actions(const TracerFilter *f)
{
	for (size_t i = 0; i < TRACER_NR_MAX; i++)
		if (f->slots[i].log)
			return true;
	return false;
}

int tracer_audit_setup(Tracer *t)
{
	AuditOptions o = {.log_fd = -1, .events = t->policy->audit.events};

	/* (trace-only sinks have no log, hence no disassembly) */
	int r;

	if (t->opts->audit) {
		t->audit = t->opts->audit;
	} else {
		/* no sink from the caller: still print --trace lines and those of "log" syscalls */
		o.trace = t->opts->trace;
		o.trace_logged = has_log_actions(t->filter);
		r = audit_open(&o, &t->own_audit);
		if (r < 0)
			return r;
		t->audit = t->own_audit;
	}
	/* Trace lines go to stderr, which may be a pipe whose reader goes away (`… 2>&1 | head`):
	 * the write must fail with EPIPE, not kill the supervisor (and with it the tree) before
	 * the log is flushed. C resets SIGPIPE to default before it execs. */
	if (t->audit)
		(void) signal(SIGPIPE, SIG_IGN);
	return 0;
}

void tracer_audit_done(Tracer *t)
{
	t->own_audit = audit_free(t->own_audit);
	t->audit = NULL;
}

_Static_assert(sizeof(((TracerAuditCtx *) 0)->addr_text) >= NET_ADDR_FORMAT_MAX,
	       "room for net_addr_format()");

static void read_sockaddr(ChildMemCtx *mc, uint64_t addr, uint64_t len, AuditArgData *d,
			  TracerAuditCtx *c)
{
	unsigned char buf[NET_SOCKADDR_MAX];
	NetAddr na;

	if (!addr || len == 0 || len > sizeof(buf))
		return;
	if (mc->mem.read(&mc->mem, addr, buf, (size_t) len) < 0)
		return;
	if (net_sockaddr_decode(buf, (size_t) len, &na) < 0)
		return;
	net_addr_format(&na, c->addr_text, sizeof(c->addr_text));
	d->str = c->addr_text;
	d->family = na.family;
	d->port = -1;
	if (na.family == AF_INET || na.family == AF_INET6) {
		if (na.family == AF_INET)
			inet_ntop(AF_INET, na.addr, c->addr_ip, sizeof(c->addr_ip));
		else
			inet_ntop(AF_INET6, na.raw6, c->addr_ip, sizeof(c->addr_ip));
		d->address = c->addr_ip;
		d->port = na.port;
	} else if (na.family == AF_UNIX && na.unix_kind != NET_UNIX_UNNAMED) {
		/* abstract names may hold NULs and anything: the escaped text is safer */
		d->address = c->addr_text;
	}
}

static void read_argv(ChildMemCtx *mc, uint64_t addr, AuditArgData *d, TracerAuditCtx *c)
{
	size_t used = 0, n = 0;

	if (!addr)
		return;
	for (; n < AUDIT_ARGV_MAX; n++) {
		uint64_t p;
		int r;

		if (mc->mem.read(&mc->mem, addr + n * sizeof(p), &p, sizeof(p)) < 0)
			return;
		if (!p)
			break;
		if (used >= sizeof(c->argv_buf) - 1)
			break;
		r = mc->mem.read_string(&mc->mem, p, c->argv_buf + used,
					sizeof(c->argv_buf) - used);
		if (r == -ENAMETOOLONG) {
			c->argv[n] = c->argv_buf + used;
			used = sizeof(c->argv_buf);
			d->argv_truncated = true;
			n++;
			break;
		}
		if (r < 0)
			return;
		c->argv[n] = c->argv_buf + used;
		used += strlen(c->argv_buf + used) + 1;
	}
	if (n == AUDIT_ARGV_MAX)
		d->argv_truncated = true;
	c->argv[n] = NULL;
	d->argv = c->argv;
}

/* The caller's thread group, while it is blocked in the call: a process the audit cache knows
 * is a leader, without a system call. */
static pid_t caller_tgid_of(Tracer *t, pid_t tid)
{
	if (audit_known_process(t->audit, tid))
		return tid;
	return tid_tgid(tid);
}

static AuditDecision decision_of(const EmuDecision *d)
{
	switch (d->verdict) {
	case EMU_CONTINUE:
		return AUDIT_ALLOWED;
	case EMU_RETURN:
		return AUDIT_EMULATED;
	case EMU_FAIL:
		return d->denied ? AUDIT_DENIED : AUDIT_EMULATED;
	default:
		return AUDIT_KILLED;
	}
}

/* The call stack of the caller (tracer/backtrace.c). A call routed through a ptrace stop
 * (n->id == 0, on the tracer thread) is stopped now: unwound at once. A notified one stops
 * after the reply: the tracer thread interrupts it now, tracer_audit_emit() collects. Not a
 * call answered CONTINUE: it runs in the kernel with the interrupt pending, and a call that
 * checks for signals would give up (clone restarts, a socket call with a timeout fails with
 * EINTR): the program would see a difference. */
static void backtrace_begin(Tracer *t, const struct seccomp_notif *n, const EmuDecision *d,
			    TracerAuditCtx *c)
{
	AuditRecord *r = &c->rec;
	size_t depth = tracer_bt_depth(t);
	const char *err = NULL;

	if (n->id != 0 && d->verdict == EMU_CONTINUE) {
		r->backtrace_error = "not taken for a call the kernel runs (allowed)";
		return;
	}
	c->frames = calloc(depth, sizeof(*c->frames));
	if (!c->frames) {
		r->backtrace_error = "out of memory";
		return;
	}
	if (n->id == 0) {
		r->n_frames = tracer_bt_unwind(t, (pid_t) n->pid, c->frames, depth, &err);
		if (r->n_frames)
			r->frames = c->frames;
		else
			r->backtrace_error = err;
		return;
	}
	c->bt.frames = c->frames;
	c->bt.max = depth;
	if (tracer_bt_begin(t, (pid_t) n->pid, d->verdict == EMU_KILL, &c->bt))
		c->bt_pending = true;
	else
		r->backtrace_error = c->bt.error;
}

/* A call routed through a ptrace stop was captured before its decision; denied, it may be
 * due a backtrace it did not get then ([audit] backtrace = "denied"). Still stopped. */
void tracer_audit_backtrace_late(Tracer *t, const struct seccomp_notif *n, const EmuDecision *d,
				 TracerAuditCtx *c)
{
	if (!c->active || c->frames || c->rec.backtrace_error || !t->bt ||
	    !audit_wants_backtrace(t->audit, n->data.nr, d->denied || d->verdict == EMU_KILL))
		return;
	backtrace_begin(t, n, d, c);
}

/*
 * An ENOENT for a path (a file or exec call the view answered "no such file"): its canonical
 * virtual path, for tracer_audit_emit() to look up on the host after the reply. Relative
 * paths need the caller's cwd (or dirfd), read now, while it is blocked in the call. Lexical:
 * ".." pops the path as written, which is what the program asked for.
 */
static void oov_capture(Tracer *t, const struct seccomp_notif *n, const EmuDecision *d,
			const AuditSyscallInfo *info, TracerAuditCtx *c)
{
	const AuditRecord *r = &c->rec;
	const EmuHost *h = &t->host;
	const char *path = NULL;
	char dir[PATH_MAX], vdir[PATH_MAX], joined[2 * PATH_MAX];
	int dirfd = AT_FDCWD;

	c->oov_vpath[0] = 0;
	/* a hidden name is a denial (decision "denied") that the program sees as ENOENT */
	if (!t->view || d->verdict != EMU_FAIL || d->error != ENOENT ||
	    !(info->category & (AUDIT_EVENT_FILE | AUDIT_EVENT_EXEC)))
		return;
	if (d->path[0]) {
		/* the handler named it (a hidden object, reported as absent) */
		snprintf(c->oov_vpath, sizeof(c->oov_vpath), "%s", d->path);
		return;
	}
	for (size_t i = 0; i < info->n_args && !path; i++) {
		if (info->type[i] == AUDIT_ARG_DIRFD)
			dirfd = (int) (int32_t) r->args[i];
		else if (info->type[i] == AUDIT_ARG_PATH)
			path = r->data[i].truncated ? NULL : r->data[i].str;
	}
	if (!path || !path[0])
		return;
	if (path[0] == '/') {
		if (sbx_path_normalize(path, c->oov_vpath, sizeof(c->oov_vpath)) < 0)
			c->oov_vpath[0] = 0;
		return;
	}
	if (!h->get_path || h->get_path(h->userdata, (pid_t) n->pid, dirfd, dir, sizeof(dir)) < 0 ||
	    dir[0] != '/' || sbx_view_vpath_of_child(t->view, dir, vdir, sizeof(vdir)) < 0)
		return;
	snprintf(joined, sizeof(joined), "%s/%s", vdir, path);
	if (strlen(joined) >= PATH_MAX ||
	    sbx_path_normalize(joined, c->oov_vpath, sizeof(c->oov_vpath)) < 0)
		c->oov_vpath[0] = 0;
}

void tracer_audit_capture(Tracer *t, const struct seccomp_notif *n, const TracerSlot *s,
			  const EmuDecision *d, uint64_t t0, TracerAuditCtx *c)
{
	tracer_audit_capture_mem(t, n, s, d, t0, c, NULL);
}

void tracer_audit_capture_mem(Tracer *t, const struct seccomp_notif *n, const TracerSlot *s,
			      const EmuDecision *d, uint64_t t0, TracerAuditCtx *c,
			      const ChildMemCtx *mem)
{
	const AuditSyscallInfo *info;
	AuditRecord *r = &c->rec;
	ChildMemCtx mc;
	size_t nstr = 0;
	bool log = s && s->log;

	c->active = false;
	c->frames = NULL;
	c->bt_pending = false;
	if (!t->audit || n->data.arch != AUDIT_ARCH_X86_64 ||
	    !audit_wants_syscall(t->audit, n->data.nr, d->denied || d->verdict == EMU_KILL, log))
		return;
	c->active = true;
	c->t0 = t0;
	memset(r, 0, sizeof(*r));
	r->tid = (pid_t) n->pid;
	r->pid = (pid_t) n->pid; /* the thread group is looked up in tracer_audit_emit() */
	r->nr = n->data.nr;
	memcpy(r->args, n->data.args, sizeof(r->args));
	r->ip = n->data.instruction_pointer;
	r->log = log;

	/* TOCTOU: display only; read while the caller is blocked, checked with ID_VALID */
	child_mem_init(&mc, (pid_t) n->pid, t->notify_fd, n->id);
	info = audit_syscall_info(n->data.nr);
	for (size_t i = 0; i < info->n_args; i++) {
		AuditArgData *ad = &r->data[i];
		int k;

		switch (info->type[i]) {
		case AUDIT_ARG_PATH:
		case AUDIT_ARG_STRING:
			if (nstr >= ARRAY_SIZE(c->str) || !r->args[i])
				break;
			/* the copy the handler acted on, if it read this one: no second
			 * process_vm_readv + ID_VALID (docs/audit.md, "Cost") */
			k = mem ? child_mem_cached_string(mem, r->args[i], c->str[nstr],
							  sizeof(c->str[nstr]))
				: -ENOENT;
			if (k == -ENOENT)
				k = mc.mem.read_string(&mc.mem, r->args[i], c->str[nstr],
						       sizeof(c->str[nstr]));
			if (k == 0 || k == -ENAMETOOLONG) {
				ad->str = c->str[nstr];
				ad->truncated = k < 0;
				nstr++;
			}
			break;
		case AUDIT_ARG_SOCKADDR:
			if (i + 1 < 6)
				read_sockaddr(&mc, r->args[i], r->args[i + 1], ad, c);
			break;
		case AUDIT_ARG_ARGV:
			read_argv(&mc, r->args[i], ad, c);
			break;
		default:
			break;
		}
	}
	/* the code around the syscall instruction (ip is just after its 2 bytes); near the start
	 * of a mapping only the part from the instruction on may be readable */
	if (r->ip >= 2 + AUDIT_CODE_BEFORE &&
	    audit_wants_disassembly(t->audit, n->data.nr, d->denied || d->verdict == EMU_KILL)) {
		uint64_t at = r->ip - 2 - AUDIT_CODE_BEFORE;

		if (mc.mem.read(&mc.mem, at, c->code, sizeof(c->code)) == 0) {
			r->code_addr = at;
			r->code_len = sizeof(c->code);
			r->code = c->code;
		} else if (mc.mem.read(&mc.mem, r->ip - 2, c->code, 2 + AUDIT_CODE_AFTER) == 0) {
			r->code_addr = r->ip - 2;
			r->code_len = 2 + AUDIT_CODE_AFTER;
			r->code = c->code;
		}
	}
	oov_capture(t, n, d, info, c);
	/* before the reply: an exec replaces the mappings */
	c->tgid = caller_tgid_of(t, (pid_t) n->pid);
	r->outside_libc = audit_outside_libc(t->audit, c->tgid, r->ip);
	if (t->bt &&
	    audit_wants_backtrace(t->audit, n->data.nr, d->denied || d->verdict == EMU_KILL))
		backtrace_begin(t, n, d, c);
}

bool tracer_audit_emit(Tracer *t, const struct seccomp_notif *n, const EmuDecision *d,
		       TracerAuditCtx *c)
{
	AuditRecord *r = &c->rec;
	bool killed = false;

	if (!c->active)
		return false;
	(void) n;
	if (c->bt_pending) {
		killed = tracer_bt_finish(t, &c->bt);
		if (c->bt.n) {
			r->frames = c->frames;
			r->n_frames = c->bt.n;
		} else {
			r->backtrace_error = c->bt.error;
		}
		c->bt_pending = false;
	}
	r->pid = c->tgid;
	r->path = d->path;
	r->host_path = d->host_path;
	r->decision = decision_of(d);
	r->ret = d->val;
	r->error = d->verdict == EMU_FAIL ? (d->error > 0 ? d->error : EPERM) : 0;
	if (d->verdict == EMU_KILL)
		r->error = 0;
	r->why = d->why;
	r->latency_ns = now_monotonic_ns() - c->t0;
	/* after the reply, so that the program learns nothing of it, not even by the time its
	 * call took: the host's answer goes to the log only */
	if (c->oov_vpath[0]) {
		SbxOutOfView k = sbx_view_out_of_view(t->view, c->oov_vpath, c->oov_host,
						      sizeof(c->oov_host));

		if (k != SBX_OOV_NONE) {
			r->out_of_view = sbx_out_of_view_to_string(k);
			r->path = c->oov_vpath;
			r->host_path = c->oov_host;
		}
	}
	audit_syscall(t->audit, r);
	free(c->frames);
	c->frames = NULL;
	if ((r->nr == __NR_execve || r->nr == __NR_execveat) && r->decision == AUDIT_ALLOWED)
		audit_process_exec_done(t->audit, r->pid);
	return killed;
}

void tracer_audit_budget_full(Tracer *t, const Budget *b)
{
	audit_budget_event(t->audit, "disk", t->policy->limits.disk, b->disk_used, "bytes", "deny",
			   0);
}

void tracer_audit_budget(Tracer *t, const Budget *b, const char *which)
{
	const PolicyLimits *l = &t->policy->limits;

	if (streq(which, "memory"))
		audit_budget_event(t->audit, which, l->memory, b->memory, "bytes", "terminate", 0);
	else if (streq(which, "cpu_time"))
		audit_budget_event(t->audit, which, l->cpu_time_ms, b->cpu_ms, "ms", "terminate",
				   0);
	else if (streq(which, "disk"))
		audit_budget_event(t->audit, which, l->disk, b->disk_used, "bytes", "terminate", 0);
	else
		audit_budget_event(t->audit, which, 0, 0, "", "terminate", 0);
}
