/* SPDX-License-Identifier: MIT */
/*
 * The seccomp filter, generated from the syscall table (syscalls/table.c: each row's action,
 * argument check and flags) and the policy's [syscalls] overrides.
 *
 * libseccomp is the source of truth for syscall numbers, but the BPF is generated here: its
 * 2.5 rule language cannot say "the low 32 bits differ from V" (a rule with mask 0 becomes
 * unconditional and wins over conditional ones, and rules on the high half allow what the
 * low half denies), and several arguments the kernel truncates to 32 bits (ioctl cmd, fcntl
 * cmd, clone flags) must be checked on their low half alone. The program:
 *
 *   arch != x86_64                  -> KILL_PROCESS  (i386 int $0x80, anything else)
 *   nr in the x32 range             -> KILL_PROCESS  (nr | __X32_SYSCALL_BIT)
 *   nr >= TRACER_NR_MAX             -> ERRNO(ENOSYS)
 *   binary search over runs of numbers with the same action; a few numbers test arguments.
 *
 * Variants of the program (build_variant()) serve a command in the kernel view, in a pid
 * namespace, in a user namespace, or without a private IPC namespace; the kernel view's
 * also carry, when the policy qualifies, the network namespace's (loopback in a namespace
 * of the tree's own: the address calls in the kernel, net_runs_in_kernel()). The dispatch
 * slots are the same for all.
 *
 * Numbers not in the table fail with ENOSYS (default deny: a syscall added to a later kernel
 * is unreachable until someone reviews it). The kernel's seccomp action cache (5.11) then
 * skips the program for every number whose answer is ALLOW without looking at arguments, so
 * kernel-allowed syscalls cost nothing.
 */
#include "tracer/internal.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/fs.h>
#include <linux/fsverity.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/log.h"
#include "common/missing-seccomp.h"
#include "common/syscall-names.h"
#include "common/util.h"
#include "net/handlers.h"
#include "policy/policy.h"
#include "tracer/budget.h"

#define X32_SYSCALL_BIT 0x40000000U

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* CLONE_NEWTIME shares its bit with CSIGNAL in clone(2), which ignores it there. */
#define CLONE_NS_FLAGS                                                                             \
	(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |             \
	 CLONE_NEWPID | CLONE_NEWNET)

#define ARG_LO(i) ((uint32_t) (offsetof(struct seccomp_data, args) + 8 * (i)))

/*
 * Ids in a user namespace of ours (the kernel view's, tracer/kview.c, or a plain user's
 * private network namespace, tracer/netns.c), which maps the command's own uid and gid to
 * themselves and nothing else. An id outside the map is invalid there: set*id and chown
 * fail with EINVAL (make_kuid() fails) where a process without capabilities gets EPERM
 * outside (it may not become, or give a file to, another user). That program answers EPERM
 * itself when an id argument is neither the command's own nor (u32) -1:
 *  - setuid, setreuid, setresuid, setgid, setregid, setresgid: a caller without
 *    capabilities may take only its real, effective or saved id, all the own one here. -1
 *    goes on: no change, or EINVAL from setuid(-1) and setgid(-1) as natively.
 *  - chown, fchown, lchown, fchownat, where they run in the kernel (the kernel view): the own
 *    ids go on to the kernel's checks (the file's owner, the path). In the emulated view the
 *    supervisor chowns from outside the namespace, and they stay notified.
 * A supplementary group is outside the map too: natively chgrp to it works, in the kernel
 * view it fails with EPERM (docs/compatibility.md). Root runs map 0 to 0: the command is uid
 * 0 without capabilities, and another id is EPERM in both views, as for such a process
 * outside. setfsuid and setfsgid stay: they return the previous id and change nothing for an
 * id the caller may not take, inside the namespace and out alike. What the policy made of
 * a call (deny, kill, log) stays. Which arguments are ids: the rows' uid_args and gid_args
 * (syscalls/table.c).
 */

typedef struct Prog {
	struct sock_filter *insns;
	size_t len, cap;
	bool failed;
} Prog;

static size_t emit(Prog *p, uint16_t code, uint8_t jt, uint8_t jf, uint32_t k)
{
	if (p->len == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		struct sock_filter *n = realloc(p->insns, cap * sizeof(*n));

		if (!n) {
			p->failed = true;
			return p->len;
		}
		p->insns = n;
		p->cap = cap;
	}
	p->insns[p->len] = (struct sock_filter) BPF_JUMP(code, k, jt, jf);
	return p->len++;
}

static void ret(Prog *p, uint32_t action)
{
	emit(p, BPF_RET | BPF_K, 0, 0, action);
}

static void ld(Prog *p, uint32_t off)
{
	emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, off);
}

/* if (A == k) return action; */
static void jeq_ret(Prog *p, uint32_t k, uint32_t action)
{
	emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, k);
	ret(p, action);
}

/* if (args[i] is neither own nor -1) return EPERM; (uid_t, gid_t: the low half) */
static void id_check(Prog *p, unsigned i, uint32_t own)
{
	ld(p, ARG_LO(i));
	emit(p, BPF_JMP | BPF_JEQ | BPF_K, 2, 0, own);
	emit(p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, UINT32_MAX);
	ret(p, SECCOMP_RET_ERRNO | EPERM);
}

/*
 * socket(2) decided by the filter (SLOT_SOCKET_INET, SLOT_SOCKET_UNIX): the decision
 * net_decide_socket() makes (net/allow.c) on the same registers, where it cannot change
 * during the run (tracer_filter_socket_why()) or in a network namespace of the tree's own
 * (VARIANT_NETNS). family, type and protocol are ints: the low halves, as the handler reads
 * them ((int) args[i]). Allowed: AF_UNIX; with inet, AF_INET and AF_INET6 with a type that
 * is SOCK_STREAM or SOCK_DGRAM once SOCK_NONBLOCK and SOCK_CLOEXEC are masked off, and
 * protocol 0 or TCP (stream), 0, UDP or ICMP/ICMPV6 of the family (datagram): a subset of
 * what the handler allows in every mode but none. Everything else is notified, and the
 * handler decides it as before (with its errno, reason and audit record). TOCTOU: none, the
 * arguments are registers.
 */
static void emit_socket(Prog *p, bool inet)
{
	const uint32_t notify = SECCOMP_RET_USER_NOTIF, allow = SECCOMP_RET_ALLOW;

	ld(p, ARG_LO(0));
	jeq_ret(p, AF_UNIX, allow);
	for (int fam = 0; inet && fam < 2; fam++) {
		uint32_t family = fam ? AF_INET6 : AF_INET;
		uint32_t icmp = fam ? IPPROTO_ICMPV6 : IPPROTO_ICMP;

		/* A holds the family here; every path of the block returns, so its 18
		 * instructions after this jump lead to the next family's test */
		emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 18, family);
		ld(p, ARG_LO(1));
		emit(p, BPF_ALU | BPF_AND | BPF_K, 0, 0,
		     ~(uint32_t) (SOCK_NONBLOCK | SOCK_CLOEXEC));
		emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 6, SOCK_STREAM);
		ld(p, ARG_LO(2));
		jeq_ret(p, 0, allow);
		jeq_ret(p, IPPROTO_TCP, allow);
		ret(p, notify);
		emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 7, SOCK_DGRAM);
		ld(p, ARG_LO(2));
		jeq_ret(p, 0, allow);
		jeq_ret(p, IPPROTO_UDP, allow);
		jeq_ret(p, icmp, allow);
		ret(p, notify);
	}
	ret(p, notify);
}

static void emit_special(Prog *p, const TracerSlot *s, const TracerFilter *f)
{
	uint32_t deny = SECCOMP_RET_ERRNO | (uint32_t) (f->deny_errno & SECCOMP_RET_DATA);

	switch (s->special) {
	case SLOT_CLONE:
		/* clone(2) takes the low 32 bits of flags (kernel/fork.c) */
		ld(p, ARG_LO(0));
		emit(p, BPF_JMP | BPF_JSET | BPF_K, 0, 1,
		     CLONE_NS_FLAGS | (s->untraced_denied ? CLONE_UNTRACED : 0));
		ret(p, deny);
		ret(p, s->action);
		return;
	case SLOT_IOCTL:
		/* cmd is an unsigned int: compare the low half only. FIOSETOWN and SIOCSPGRP
		 * name the process that gets SIGIO/SIGURG, as F_SETOWN does: notified
		 * (emu_handle_ioctl); the rest runs in the kernel (or is logged). */
		ld(p, ARG_LO(1));
		jeq_ret(p, TIOCSTI, deny);
		jeq_ret(p, TIOCLINUX, deny);
		if (!s->owner_in_kernel) {
			jeq_ret(p, FIOSETOWN, SECCOMP_RET_USER_NOTIF);
			jeq_ret(p, SIOCSPGRP, SECCOMP_RET_USER_NOTIF);
		}
		/* the inode-changing ioctls (emu_fs_ioctl_changes()): the view's mode */
		jeq_ret(p, FS_IOC_SETFLAGS, SECCOMP_RET_USER_NOTIF);
		jeq_ret(p, FS_IOC32_SETFLAGS, SECCOMP_RET_USER_NOTIF);
		jeq_ret(p, FS_IOC_FSSETXATTR, SECCOMP_RET_USER_NOTIF);
		jeq_ret(p, FS_IOC_SETVERSION, SECCOMP_RET_USER_NOTIF);
		jeq_ret(p, FS_IOC32_SETVERSION, SECCOMP_RET_USER_NOTIF);
		jeq_ret(p, FS_IOC_ENABLE_VERITY, SECCOMP_RET_USER_NOTIF);
		jeq_ret(p, FS_IOC_SET_ENCRYPTION_POLICY, SECCOMP_RET_USER_NOTIF);
		ret(p, s->log ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ALLOW);
		return;
	case SLOT_FCNTL:
		ld(p, ARG_LO(1));
		jeq_ret(p, F_SETOWN, SECCOMP_RET_USER_NOTIF);
		jeq_ret(p, F_SETOWN_EX, SECCOMP_RET_USER_NOTIF);
		ret(p, SECCOMP_RET_ALLOW);
		return;
	case SLOT_PID_ARG0:
		/* pid_t: the low half; 0 is the caller itself */
		ld(p, ARG_LO(0));
		jeq_ret(p, 0, SECCOMP_RET_ALLOW);
		ret(p, SECCOMP_RET_USER_NOTIF);
		return;
	case SLOT_PID_ARG1:
		ld(p, ARG_LO(1));
		jeq_ret(p, 0, SECCOMP_RET_ALLOW);
		ret(p, SECCOMP_RET_USER_NOTIF);
		return;
	case SLOT_ADDR_ARG4:
		/* a pointer: NULL only when both halves are 0 (net/handlers.c) */
		ld(p, ARG_LO(4));
		emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 3, 0);
		ld(p, ARG_LO(4) + 4);
		emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
		ret(p, SECCOMP_RET_ALLOW);
		ret(p, s->action);
		return;
	case SLOT_SETSOCKOPT:
		/* level and optname are ints: the low halves. The options that change where
		 * packets go (net/handlers.c, routing_option()) are notified, the rest run. */
		ld(p, ARG_LO(1));
		emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 8, IPPROTO_IPV6);
		ld(p, ARG_LO(2));
		jeq_ret(p, IPV6_RTHDR, SECCOMP_RET_USER_NOTIF);
		jeq_ret(p, IPV6_2292RTHDR, SECCOMP_RET_USER_NOTIF);
		jeq_ret(p, IPV6_2292PKTOPTIONS, SECCOMP_RET_USER_NOTIF);
		ret(p, SECCOMP_RET_ALLOW);
		emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 4, IPPROTO_IP);
		ld(p, ARG_LO(2));
		jeq_ret(p, IP_OPTIONS, SECCOMP_RET_USER_NOTIF);
		ret(p, SECCOMP_RET_ALLOW);
		ret(p, SECCOMP_RET_ALLOW);
		return;
	case SLOT_FALLOCATE:
		/* mode is an int: the low half. Freeing blocks runs; every mode that may
		 * allocate fails as on a file system without fallocate (glibc's
		 * posix_fallocate() then writes, which RLIMIT_FSIZE limits) */
		ld(p, ARG_LO(1));
		jeq_ret(p, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, s->action);
		jeq_ret(p, FALLOC_FL_COLLAPSE_RANGE, s->action);
		ret(p, SECCOMP_RET_ERRNO | EOPNOTSUPP);
		return;
	case SLOT_SECCOMP:
		ld(p, ARG_LO(0));
		emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 3, SECCOMP_SET_MODE_FILTER);
		ld(p, ARG_LO(1));
		emit(p, BPF_JMP | BPF_JSET | BPF_K, 0, 1, SECCOMP_FILTER_FLAG_NEW_LISTENER);
		ret(p, deny);
		ret(p, s->action);
		return;
	case SLOT_PERSONALITY:
		/* what Docker allows: query, PER_LINUX, UNAME26, PER_LINUX32 and combinations */
		ld(p, ARG_LO(0));
		jeq_ret(p, 0x0, s->action);
		jeq_ret(p, 0x8, s->action);
		jeq_ret(p, 0x20000, s->action);
		jeq_ret(p, 0x20008, s->action);
		jeq_ret(p, 0xffffffff, s->action);
		ret(p, deny);
		return;
	case SLOT_SOCKET_INET:
	case SLOT_SOCKET_UNIX:
		emit_socket(p, s->special == SLOT_SOCKET_INET);
		return;
	case SLOT_IDS:
		/* in a user namespace's program (the rows' uid_args, gid_args): EPERM, not the
		 * kernel's EINVAL */
		for (unsigned i = 0; i < 6; i++) {
			if (s->uid_args & (1U << i))
				id_check(p, i, (uint32_t) f->uid);
			if (s->gid_args & (1U << i))
				id_check(p, i, (uint32_t) f->gid);
		}
		ret(p, s->action);
		return;
	default:
		ret(p, s->action);
		return;
	}
}

typedef struct Run {
	uint32_t lo, hi;	/* inclusive */
	const TracerSlot *slot; /* NULL: default (ENOSYS) */
	size_t size;		/* of the leaf's code (emit_leaf()) */
} Run;

static bool same(const TracerSlot *a, const TracerSlot *b)
{
	if (!a || !b)
		return a == b;
	return a->special == SLOT_PLAIN && b->special == SLOT_PLAIN && a->action == b->action;
}

static void emit_leaf(Prog *p, const Run *r, const TracerFilter *f)
{
	if (r->slot)
		emit_special(p, r->slot, f);
	else
		ret(p, SECCOMP_RET_ERRNO | ENOSYS);
}

/* Instructions of the search over runs[0, n): a leaf's code, or a node's jge, the ja it
 * needs when its left half is longer than a conditional jump reaches (255), and both
 * halves (build_prog()). */
static size_t tree_size(const Run *runs, size_t n)
{
	size_t mid = n / 2, left;

	if (n == 1)
		return runs[0].size;
	left = tree_size(runs, mid);
	return 1 + (left > 255) + left + tree_size(runs + mid, n - mid);
}

/* The search's pending frames: a node pops and pushes its two halves, the left one on top,
 * which is popped next; so one right half at most waits per level of the tree, plus the
 * frame on top: 1 + log2(TRACER_NR_MAX) = 11. */
#define FRAMES_MAX 32

static int build_prog(const TracerFilter *f, const TracerSlot *slots, struct sock_filter **ret_prog,
		      size_t *ret_len)
{
	Prog p = {};
	Run *runs;
	size_t n = 0;

	/* every entry below n is assigned whole */
	runs = malloc(TRACER_NR_MAX * sizeof(*runs));
	if (!runs)
		return -ENOMEM;
	for (uint32_t nr = 0; nr < TRACER_NR_MAX; nr++) {
		const TracerSlot *s = slots[nr].entry || slots[nr].action ? &slots[nr] : NULL;

		if (n > 0 && same(runs[n - 1].slot, s)) {
			runs[n - 1].hi = nr;
			continue;
		}
		runs[n++] = (Run){nr, nr, s, 0};
	}
	/* the leaves' sizes, emitted once into one scratch program that each leaf reuses */
	Prog scratch = {};

	for (size_t i = 0; i < n && !scratch.failed; i++) {
		scratch.len = 0;
		emit_leaf(&scratch, &runs[i], f);
		runs[i].size = scratch.len;
	}
	free(scratch.insns);
	if (scratch.failed) {
		free(runs);
		return -ENOMEM;
	}

	ld(&p, offsetof(struct seccomp_data, arch));
	emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, AUDIT_ARCH_X86_64);
	ret(&p, SECCOMP_RET_KILL_PROCESS);
	ld(&p, offsetof(struct seccomp_data, nr));
	/* x32: the same entry points with bit 30 set; kill rather than trust that the kernel
	 * has CONFIG_X86_X32_ABI off */
	emit(&p, BPF_JMP | BPF_JGE | BPF_K, 0, 3, X32_SYSCALL_BIT);
	emit(&p, BPF_JMP | BPF_JGE | BPF_K, 0, 1, X32_SYSCALL_BIT + TRACER_NR_MAX);
	ret(&p, SECCOMP_RET_ERRNO | ENOSYS);
	ret(&p, SECCOMP_RET_KILL_PROCESS);
	emit(&p, BPF_JMP | BPF_JGE | BPF_K, 0, 1, TRACER_NR_MAX);
	ret(&p, SECCOMP_RET_ERRNO | ENOSYS);

	/* Binary search, left half (below mid) first. Where the left half is at most 255
	 * instructions, one jump over it:
	 *   jge mid, len(left), 0
	 *   left…
	 *   right…
	 * else a ja, since conditional jumps are short:
	 *   jge mid, 0, 1      (>=: fall into "ja right"; <: skip it into left)
	 *   ja right
	 *   left…
	 *   right…
	 * Every node of bench's policy takes the first form (549 → 417 instructions): the
	 * kernel's load (its conversion to eBPF and the JIT) is on C's path to its exec
	 * (docs/performance.md). */
	struct Frame {
		const Run *runs;
		size_t n;
		size_t patch; /* index of a jump to patch to the start of this frame, or SIZE_MAX */
		bool cond;    /* that jump is the jge's jt (else a ja's k) */
	} stack[FRAMES_MAX];
	size_t sp = 0;

	stack[sp++] = (struct Frame){runs, n, SIZE_MAX, false};
	while (sp > 0 && !p.failed) {
		struct Frame fr = stack[--sp];

		if (fr.patch != SIZE_MAX) {
			size_t off = p.len - fr.patch - 1;

			if (fr.cond && off > 255) {
				p.failed = true; /* tree_size() and the code disagree */
				break;
			}
			if (fr.cond)
				p.insns[fr.patch].jt = (uint8_t) off;
			else
				p.insns[fr.patch].k = (uint32_t) off;
		}
		if (fr.n == 1) {
			emit_leaf(&p, &fr.runs[0], f);
			continue;
		}
		size_t mid = fr.n / 2, at;
		bool near = tree_size(fr.runs, mid) <= 255;

		if (near) {
			at = emit(&p, BPF_JMP | BPF_JGE | BPF_K, 0, 0, fr.runs[mid].lo);
		} else {
			emit(&p, BPF_JMP | BPF_JGE | BPF_K, 0, 1, fr.runs[mid].lo);
			at = emit(&p, BPF_JMP | BPF_JA, 0, 0, 0);
		}
		/* right is emitted after left: push right first */
		if (sp + 2 > FRAMES_MAX) {
			p.failed = true; /* never: see FRAMES_MAX */
			break;
		}
		stack[sp++] = (struct Frame){fr.runs + mid, fr.n - mid, at, near};
		stack[sp++] = (struct Frame){fr.runs, mid, SIZE_MAX, false};
	}
	free(runs);
	if (p.failed || p.len > BPF_MAXINSNS) {
		free(p.insns);
		return p.failed ? -ENOMEM : -E2BIG;
	}
	*ret_prog = p.insns;
	*ret_len = p.len;
	return 0;
}

static int resolve(const char *name)
{
	int nr = sbx_syscall_number(name);

	if (nr < 0 || nr >= TRACER_NR_MAX)
		return -ENOENT;
	return nr;
}

static void apply_override(TracerSlot *s, const PolicySyscall *o, int deny_errno)
{
	switch (o->action) {
	case SYSCALL_ACTION_ALLOW:
		if (s->handler && s->handler != emu_handle_log && s->deny_error == 0) {
			/* a notified entry enforces a property (the tree, the view): keep it */
			log_warn("policy allows syscall '%s', which the sandbox checks; keeping "
				 "the check",
				 o->name);
			return;
		}
		s->action = SECCOMP_RET_ALLOW;
		s->special = SLOT_PLAIN;
		s->handler = NULL;
		s->deny_error = 0;
		s->kill = false;
		return;
	case SYSCALL_ACTION_DENY:
		s->action = SECCOMP_RET_USER_NOTIF;
		s->deny_error = o->error > 0 ? o->error : deny_errno;
		s->special = SLOT_PLAIN;
		s->handler = NULL;
		s->kill = false;
		return;
	case SYSCALL_ACTION_KILL:
		/* notified: the supervisor SIGKILLs the caller while it waits, then the whole
		 * tree (SECCOMP_RET_KILL_PROCESS would end one process only). Without a
		 * supervisor the kernel answers ENOSYS. */
		s->action = SECCOMP_RET_USER_NOTIF;
		s->special = SLOT_PLAIN;
		s->handler = NULL;
		s->deny_error = 0;
		s->kill = true;
		return;
	case SYSCALL_ACTION_LOG:
		s->log = true;
		if (!s->handler && s->action == SECCOMP_RET_ALLOW && s->special == SLOT_PLAIN) {
			s->handler = emu_handle_log;
			s->action = SECCOMP_RET_USER_NOTIF;
		}
		return;
	default:
		return;
	}
}

/*
 * The program for a run whose view the kernel enforces (a user+mount namespace that holds
 * exactly the view, tracer/kview.c): the path-taking syscalls the view alone made notified
 * (or traced: chdir, execve) run in the kernel. What the policy's [syscalls] made of them
 * (deny, kill, log) stays, and so does every other entry. The dispatch slots are the same:
 * nothing that is notified here is handled differently.
 */
/* Whether the kernel view's program lets this slot's calls run in the kernel. */
static bool kview_runs_in_kernel(const TracerSlot *s)
{
	return s->entry && (s->entry->flags & SYSCALL_PATH) && s->entry->action != SYSCALL_DENY &&
	       !s->deny_error && !s->kill && !s->log && s->special == SLOT_PLAIN;
}

/*
 * With a pid namespace of the tree's own (proc mounts in the kernel view, tracer/kview.c) a
 * pid argument is a pid of that namespace, which holds the tree and its init only: the
 * kernel resolves it there (find_vpid), so a process outside cannot be named, and kill(-1)
 * reaches the namespace only. The supervisor's checks, which read pids as its own
 * namespace's, would be wrong there, and are not needed: these calls run in the kernel.
 * What the tree can do to its init (pid 1) there: signals without a handler, SIGKILL
 * included, are ignored by an init; prlimit64, sched_setaffinity and setpriority of it
 * harm the tree only (docs/supervisor.md, "Processes in a pid namespace").
 */
bool tracer_filter_pid_in_kernel(const TracerSlot *s)
{
	/* the rows flagged SYSCALL_PID: the signals, the calls checked by emu_handle_pid_target
	 * and fcntl's F_SETOWN */
	if (!s->entry || s->deny_error || s->kill)
		return false;
	return s->entry->flags & SYSCALL_PID;
}

/*
 * The address calls in a network namespace of the tree's own (network.unshare = true, mode
 * "loopback", the view in the kernel; docs/network.md "Loopback in a namespace of its
 * own"). The namespace has one interface, lo, brought up by C (tracer_netns_lo_up()), and no
 * route anywhere else: an inet connect, bind, listen or send can reach only the tree's own
 * sockets, whatever address the kernel reads, so what the handlers check (a loopback
 * destination, a loopback or wildcard bind, a loopback listen, the resolver redirect, the
 * v4-compatible and routing-header refusals) the namespace already holds. AF_UNIX: the
 * filter cannot see the family (the sockaddr is a pointer), so unix addresses run in the
 * kernel too: a path resolves in the mount namespace, which in the kernel view *is* the
 * view (the handler's only other check, a bind in a read-only part, is the kernel's EROFS),
 * and abstract names are per network namespace, so the host's are out of reach and the
 * tree's own are all there is. TOCTOU: none left to the supervisor; the kernel copies the
 * sockaddr once (move_addr_to_kernel()) and the namespace bounds every value a racing thread
 * can write. What stays notified: socket(2) outside the loopback set (the handler denies
 * it), setsockopt's routing options, recvfrom with an address, getsockname/getpeername, and
 * whatever the policy's [syscalls] denies, kills or logs. tracer_filter_net_why() says
 * when the policy allows this at all (no ratchet, no asking, no audit).
 */
static bool net_runs_in_kernel(const TracerSlot *s)
{
	EmuHandler h = s->entry ? s->entry->handler : NULL;

	if (!s->entry || s->entry->action != SYSCALL_NOTIFY || s->deny_error || s->kill || s->log ||
	    s->handler != h)
		return false;
	return h == net_handle_socket || h == net_handle_connect || h == net_handle_bind ||
	       h == net_handle_listen || h == net_handle_sendto || h == net_handle_sendmsg ||
	       h == net_handle_sendmmsg;
}

/*
 * Mode "full" in the kernel view, without a network namespace: every inet destination is
 * allowed, so what the handlers of connect and the sends still decide is AF_UNIX, which the
 * filter cannot tell from inet (the family is in the sockaddr, a pointer). A path resolves
 * in the mount namespace, which in the kernel view is the view; an abstract name is the
 * host's (no network namespace), and the handler refuses a name the policy does not list:
 * Landlock's LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (ABI 6) refuses the same in the kernel, for
 * a connect (unix_stream_connect) and a datagram send (unix_may_send) to a socket made
 * outside the tree's domain, and it is on whenever the policy lists no abstract name
 * (net_landlock_plan()). bind and listen stay notified: a bind to an abstract name is not
 * scoped, and a tree could take a name a host service would later bind (the handler
 * refuses unlisted names). TOCTOU: as for the namespace above, the kernel copies the
 * sockaddr once and checks what it copied. tracer_filter_net_full_why() says when.
 */
static bool net_full_runs_in_kernel(const TracerSlot *s)
{
	EmuHandler h = s->entry ? s->entry->handler : NULL;

	return net_runs_in_kernel(s) && (h == net_handle_connect || h == net_handle_sendto ||
					 h == net_handle_sendmsg || h == net_handle_sendmmsg);
}

/* Whether the network mode can change during a run of p: a rule with a sensitivity level
 * lets the ratchet lower it when such a file is opened. */
static bool ratchet_may_drop(const Policy *p)
{
	for (size_t i = 0; i < p->n_rules; i++)
		if (p->rules[i].level > SENSITIVITY_NONE)
			return true;
	return false;
}

/* What keeps the network calls in the supervisor in every mode: asking, the ratchet, the
 * records of notified calls, the emulated view's AF_UNIX paths. */
static const char *net_checks_why(const Policy *p)
{
	if (p->network.ask_unlisted)
		return "network.unlisted = \"ask\": a held connect needs the supervisor";
	if (ratchet_may_drop(p))
		return "a rule sets a sensitivity level: the ratchet may lower the mode, "
		       "which the supervisor enforces";
	if (p->audit.log || p->audit.trace)
		return "the audit log or --trace records network calls only when notified";
	if (p->kernel_view == TRI_OFF)
		return "tracer.kernel_view = false: an AF_UNIX path must be resolved in the "
		       "emulated view, and the filter cannot tell it from an inet address";
	return NULL;
}

const char *tracer_filter_net_why(const Policy *p)
{
	if (p->network.mode != NET_MODE_LOOPBACK)
		return "only mode \"loopback\" in a network namespace of its own lets the "
		       "network calls run in the kernel";
	if (p->network.unshare_netns <= 0)
		return "network.unshare is not true: the tree shares the host's loopback, which "
		       "only the supervisor can keep to the tree's own addresses";
	return net_checks_why(p);
}

const char *tracer_filter_net_full_why(const Policy *p, int landlock_abi)
{
	const char *why;

	if (p->network.mode != NET_MODE_FULL)
		return "not mode \"full\"";
	why = net_checks_why(p);
	if (why)
		return why;
	for (char **u = p->network.unix_sockets; u && *u; u++)
		if ((*u)[0] == '@')
			return "network.unix lists an abstract name: only the supervisor can tell "
			       "it from the host's others";
	if (p->landlock == TRI_OFF || landlock_abi < 6)
		return "no Landlock of ABI 6 here to keep the host's abstract unix sockets out "
		       "of reach";
	return NULL;
}

const char *tracer_filter_net_calls_why(const Policy *p, int landlock_abi)
{
	return p->network.mode == NET_MODE_FULL ? tracer_filter_net_full_why(p, landlock_abi)
						: tracer_filter_net_why(p);
}

/*
 * socket(2) decided by the filter (emit_socket()) in every program of a run, emulated view
 * included. The handler's verdict depends on the registers and on the network mode only
 * (net_decide_socket()), and the mode is the policy's for the whole run unless a rule sets
 * a sensitivity level (the ratchet lowers it when such a file is opened). What the filter
 * allows, the handler would have allowed with a CONTINUE, so the kernel makes the same socket
 * either way; what it does not allow is notified as before. Not where the supervisor makes
 * the tree's sockets itself (pidfd_getfd refused: net/socktab.c), nor with an audit log or
 * --trace, which record a socket call only when it is notified.
 */
const char *tracer_filter_socket_why(const Policy *p, bool getfd)
{
	if (!getfd)
		return "pidfd_getfd is refused here: the supervisor makes the tree's sockets";
	if (ratchet_may_drop(p))
		return "a rule sets a sensitivity level: the ratchet may lower the mode";
	if (p->audit.log || p->audit.trace)
		return "the audit log or --trace records socket calls only when notified";
	return NULL;
}

/* The socket slot once tracer_filter_socket_why() allows: decided in the filter unless the
 * policy's [syscalls] denies, kills or logs it. */
static void socket_in_filter(TracerFilter *f, const Policy *p)
{
	for (int nr = 0; nr < TRACER_NR_MAX; nr++) {
		TracerSlot *s = &f->slots[nr];

		if (!s->entry || s->entry->handler != net_handle_socket ||
		    s->handler != net_handle_socket || s->action != SECCOMP_RET_USER_NOTIF ||
		    s->special != SLOT_PLAIN || s->deny_error || s->kill || s->log)
			continue;
		s->special = p->network.mode == NET_MODE_NONE ? SLOT_SOCKET_UNIX : SLOT_SOCKET_INET;
		f->socket_in_filter = true;
	}
}

bool tracer_filter_restartable(const TracerFilter *f, long nr, bool kernel_view)
{
	const TracerSlot *s;

	if (nr < 0 || nr >= TRACER_NR_MAX)
		return false;
	s = &f->slots[nr];
	/* the socket slots: see below */
	if ((s->special != SLOT_PLAIN && s->special != SLOT_SOCKET_INET &&
	     s->special != SLOT_SOCKET_UNIX) ||
	    s->action != SECCOMP_RET_USER_NOTIF)
		return false; /* not every call notified: the kernel may have run this one */
	if (kernel_view && kview_runs_in_kernel(s))
		return false;
	if (kernel_view && f->pidns && tracer_filter_pid_in_kernel(s))
		return false;
	/* socket(2) in that program is still notified for what the filter does not answer
	 * itself, and one the kernel runs never returns ERESTARTSYS (it does not block): an
	 * ERESTARTSYS of socket() can only be a notification the supervisor never received */
	if (kernel_view && f->net_in_kernel && net_runs_in_kernel(s) &&
	    s->handler != net_handle_socket)
		return false;
	if (kernel_view && f->net_full_in_kernel && net_full_runs_in_kernel(s))
		return false;
	if (s->handler == emu_handle_log || (s->entry && (s->entry->flags & EMU_KERNEL_INTR)))
		return false; /* a CONTINUE: the kernel ran it, its ERESTARTSYS is real */
	return true;
}

/* What a variant of the program is for. */
typedef enum Variant {
	VARIANT_KVIEW = 1 << 0,	  /* the kernel view's: path calls in the kernel */
	VARIANT_NOIPC = 1 << 1,	  /* no private IPC namespace: host_ipc slots notified, denied */
	VARIANT_PIDNS = 1 << 2,	  /* a pid namespace of the tree's own: pid calls in the kernel */
	VARIANT_USERNS = 1 << 3,  /* a user namespace of ours: ids outside its map (uid_args) */
	VARIANT_NETNS = 1 << 4,	  /* with KVIEW, mode loopback in a network namespace of the
				   * tree's own: the address calls in the kernel */
	VARIANT_NETFULL = 1 << 5, /* with KVIEW, mode full: connect, sends in the kernel */
} Variant;

/* The kernel view's variant, with the network's when the policy qualifies. */
static Variant kview_variant(const TracerFilter *f)
{
	return VARIANT_KVIEW | (f->net_in_kernel ? VARIANT_NETNS : 0) |
	       (f->net_full_in_kernel ? VARIANT_NETFULL : 0);
}

/* A variant of the program; the dispatch slots stay f->slots, for every variant. */
static int build_variant(TracerFilter *f, Variant v, struct sock_filter **ret, size_t *ret_len)
{
	bool kernel_view = v & VARIANT_KVIEW, noipc = v & VARIANT_NOIPC, pidns = v & VARIANT_PIDNS;
	bool netns = (v & VARIANT_NETNS) && kernel_view;
	bool netfull = (v & VARIANT_NETFULL) && kernel_view;
	/* the kernel view is always in a user namespace of ours (tracer_kview_enter()) */
	bool userns = v & (VARIANT_USERNS | VARIANT_KVIEW);
	TracerSlot *slots = malloc(sizeof(f->slots));
	int r;

	if (!slots)
		return -ENOMEM;
	memcpy(slots, f->slots, sizeof(f->slots));
	for (int nr = 0; nr < TRACER_NR_MAX; nr++) {
		TracerSlot *s = &slots[nr];

		if (noipc && s->host_ipc)
			s->action = SECCOMP_RET_USER_NOTIF;
		if (pidns && s->special == SLOT_IOCTL)
			s->owner_in_kernel = true;
		if (pidns && tracer_filter_pid_in_kernel(s) && !s->log) {
			s->action = SECCOMP_RET_ALLOW;
			s->special = SLOT_PLAIN;
			s->handler = NULL;
		} else if (kernel_view && kview_runs_in_kernel(s)) {
			s->action = SECCOMP_RET_ALLOW;
			s->handler = NULL;
		} else if (netns && net_runs_in_kernel(s)) {
			if (s->entry->handler == net_handle_socket) {
				s->special = SLOT_SOCKET_INET;
			} else {
				s->action = SECCOMP_RET_ALLOW;
				s->special = SLOT_PLAIN;
				s->handler = NULL;
			}
		} else if (netfull && net_full_runs_in_kernel(s)) {
			s->action = SECCOMP_RET_ALLOW;
			s->special = SLOT_PLAIN;
			s->handler = NULL;
		}
		/* only a call that would run in the kernel as it is: notified ones (the
		 * emulated view's chown, a policy's deny, kill or log) stay notified */
		if (userns && (s->uid_args || s->gid_args) && s->action == SECCOMP_RET_ALLOW &&
		    s->special == SLOT_PLAIN && !s->handler)
			s->special = SLOT_IDS;
	}
	r = build_prog(f, slots, ret, ret_len);
	free(slots);
	return r;
}

/* The calls that reach the IPC namespace's objects by key, id or name (the rows flagged
 * SYSCALL_HOST_IPC): SysV shared memory, semaphores and message queues, and POSIX message
 * queues by name (mq_timedsend and the others act on an mq fd, which only mq_open gives).
 * Without a private IPC namespace they would reach the host's (docs/security.md, "A private
 * IPC world"). */
static void mark_host_ipc(TracerFilter *f)
{
	for (int nr = 0; nr < TRACER_NR_MAX; nr++) {
		TracerSlot *s = &f->slots[nr];

		if (!s->entry || !(s->entry->flags & SYSCALL_HOST_IPC))
			continue;
		/* what the policy made of it (deny, kill, log) stays as it is */
		if (s->action == SECCOMP_RET_ALLOW && s->special == SLOT_PLAIN && !s->handler &&
		    !s->deny_error && !s->kill)
			s->host_ipc = true;
	}
}

/* A row's slot, before the policy's [syscalls]. */
static void apply_row(TracerFilter *f, TracerSlot *s, const SyscallRow *row, bool listings,
		      bool getfd)
{
	s->entry = row;
	s->special = (SlotSpecial) row->check;
	s->uid_args = row->uid_args;
	s->gid_args = row->gid_args;
	switch (row->action) {
	case SYSCALL_NOTIFY:
		if ((row->flags & SYSCALL_LISTINGS) && !listings) {
			/* nothing to filter out of the listings: the kernel runs it */
			s->action = SECCOMP_RET_ALLOW;
			break;
		}
		/* chdir and exec: the tracer thread rewrites the path and checks the exec'd
		 * file afterwards (tracer/ptrace.c) */
		s->action = (row->flags & EMU_TRACE) && f->ptrace ? SECCOMP_RET_TRACE
								  : SECCOMP_RET_USER_NOTIF;
		s->handler = row->handler;
		break;
	case SYSCALL_DENY:
		/* notified, so that each denial is counted and audited; without a supervisor the
		 * kernel answers ENOSYS: still denied */
		s->action = SECCOMP_RET_USER_NOTIF;
		s->deny_error = f->deny_errno;
		break;
	case SYSCALL_ENOSYS:
		/* clone3: flags live in memory the filter cannot read; ENOSYS makes libc use
		 * clone */
		s->action = SECCOMP_RET_ERRNO | ENOSYS;
		break;
	case SYSCALL_ALLOW:
	default:
		s->action = SECCOMP_RET_ALLOW;
		break;
	}
	/* where pidfd_getfd is refused, the supervisor creates and keeps the tree's sockets
	 * (net/socktab.c): accept is emulated, closes are notified to sweep its references */
	if (!getfd && row->nogetfd_handler && s->action == SECCOMP_RET_ALLOW &&
	    s->special == SLOT_PLAIN) {
		s->action = SECCOMP_RET_USER_NOTIF;
		s->handler = row->nogetfd_handler;
	}
}

int tracer_filter_prepare(const Policy *p, uid_t uid, gid_t gid, TracerFilter **ret_filter)
{
	TracerFilter *f;
	const SyscallRow *table;
	bool listings, getfd;
	size_t n;

	/* the audit log decodes by the same rows (audit/decode.c) */
	syscalls_audit_init();
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->deny_errno = p->deny_errno > 0 ? p->deny_errno : EPERM;
	f->uid = uid;
	f->gid = gid;

	f->ptrace = tracer_fs_needs_ptrace(p);
	listings = tracer_fs_filters_listings(p);
	getfd = pidfd_getfd_usable();
	table = syscalls_table(&n);
	for (size_t i = 0; i < n; i++) {
		int nr = resolve(table[i].name);

		if (nr < 0) {
			log_debug("syscall '%s' unknown to libseccomp, left out of the filter",
				  table[i].name);
			continue;
		}
		apply_row(f, &f->slots[nr], &table[i], listings, getfd);
	}

	for (size_t i = 0; i < p->n_syscalls; i++) {
		int nr = resolve(p->syscalls[i].name);

		if (nr < 0) {
			log_warn("syscall '%s' of the policy is unknown on x86_64, ignoring",
				 p->syscalls[i].name);
			continue;
		}
		apply_override(&f->slots[nr], &p->syscalls[i], f->deny_errno);
	}

	mark_host_ipc(f);
	budget_filter_apply(f, p);
	if (!tracer_filter_socket_why(p, getfd))
		socket_in_filter(f, p);
	/* the kernel view's programs carry the network namespace's choice: C makes the
	 * namespace (with lo up) whenever the policy qualifies (tracer/run.c) */
	f->net_in_kernel = tracer_filter_net_why(p) == NULL;
	f->net_full_in_kernel = tracer_filter_net_full_why(p, tracer_landlock_abi()) == NULL;
	*ret_filter = f;
	return 0;
}

/* The emulated view's programs: C's own (in the view the supervisor emulates), its twin for
 * a command without a private IPC namespace, and the one for a command in a user namespace
 * of ours, when the policy makes one. */
static int build_emulated(TracerFilter *f, const Policy *p)
{
	int r;

	r = build_prog(f, f->slots, &f->prog, &f->len);
	if (r >= 0)
		r = build_variant(f, VARIANT_NOIPC, &f->noipc_prog, &f->noipc_len);
	/* as tracer_run() decides: a plain user makes the network namespace in a user
	 * namespace (tracer_netns_enter()), which is private to the tree (no VARIANT_NOIPC);
	 * mode none with unshare true or "auto", mode loopback with true */
	if (r >= 0 && ((p->network.mode == NET_MODE_NONE && p->network.unshare_netns != 0) ||
		       (p->network.mode == NET_MODE_LOOPBACK && p->network.unshare_netns > 0)))
		r = build_variant(f, VARIANT_USERNS, &f->userns_prog, &f->userns_len);
	return r;
}

int tracer_filter_programs(TracerFilter *f, const Policy *p, unsigned which)
{
	int r = 0;

	if (which & TRACER_PROGS_EMULATED)
		r = build_emulated(f, p);
	if (r >= 0 && (which & TRACER_PROGS_KVIEW) && (which & TRACER_PROGS_PIDNS))
		r = tracer_filter_set_pidns(f);
	else if (r >= 0 && (which & TRACER_PROGS_KVIEW)) {
		r = build_variant(f, kview_variant(f), &f->kview_prog, &f->kview_len);
		if (r >= 0)
			r = build_variant(f, kview_variant(f) | VARIANT_NOIPC, &f->kview_noipc_prog,
					  &f->kview_noipc_len);
	}
	return r;
}

int tracer_filter_build(const Policy *p, uid_t uid, gid_t gid, TracerFilter **ret_filter)
{
	TracerFilter *f;
	int r;

	r = tracer_filter_prepare(p, uid, gid, &f);
	if (r < 0)
		return r;
	r = tracer_filter_programs(
		f, p, TRACER_PROGS_EMULATED | (p->kernel_view != TRI_OFF ? TRACER_PROGS_KVIEW : 0));
	if (r < 0) {
		tracer_filter_free(f);
		return r;
	}
	*ret_filter = f;
	return 0;
}

int tracer_filter_set_pidns(TracerFilter *f)
{
	struct sock_filter *a = NULL, *b = NULL;
	size_t a_len = 0, b_len = 0;
	int r;

	r = build_variant(f, kview_variant(f) | VARIANT_PIDNS, &a, &a_len);
	if (r >= 0)
		r = build_variant(f, kview_variant(f) | VARIANT_NOIPC | VARIANT_PIDNS, &b, &b_len);
	if (r < 0) {
		free(a);
		return r;
	}
	free(f->kview_prog);
	free(f->kview_noipc_prog);
	f->kview_prog = a;
	f->kview_len = a_len;
	f->kview_noipc_prog = b;
	f->kview_noipc_len = b_len;
	f->pidns = true;
	return 0;
}

TracerFilter *tracer_filter_free(TracerFilter *f)
{
	if (!f)
		return NULL;
	free(f->prog);
	free(f->kview_prog);
	free(f->noipc_prog);
	free(f->kview_noipc_prog);
	free(f->userns_prog);
	free(f);
	return NULL;
}

int tracer_ipcns_enter(void)
{
	/* root holds CAP_SYS_ADMIN, a command in a user namespace of ours holds it there */
	return unshare(CLONE_NEWIPC) < 0 ? -errno : 0;
}

int tracer_filter_install(const TracerFilter *f, bool kernel_view, bool ipc_private, bool userns,
			  bool *wait_killable)
{
	struct sock_fprog prog = {.len = (unsigned short) f->len, .filter = f->prog};
	unsigned long flags = SECCOMP_FILTER_FLAG_NEW_LISTENER;
	long fd;

	if (kernel_view && ipc_private) {
		prog.len = (unsigned short) f->kview_len;
		prog.filter = f->kview_prog;
	} else if (kernel_view) {
		prog.len = (unsigned short) f->kview_noipc_len;
		prog.filter = f->kview_noipc_prog;
	} else if (userns && ipc_private && f->userns_prog) {
		prog.len = (unsigned short) f->userns_len;
		prog.filter = f->userns_prog;
	} else if (!ipc_private) {
		/* in a user namespace too (where no IPC namespace could be made, ENOSPC):
		 * host IPC must be denied, and ids outside the map get the kernel's EINVAL */
		prog.len = (unsigned short) f->noipc_len;
		prog.filter = f->noipc_prog;
	}
	if (!prog.filter)
		return -ENOEXEC; /* a program the run did not build (launch_programs()) */
	if (*wait_killable)
		flags |= SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
	fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
	if (fd < 0 && errno == EINVAL && *wait_killable) {
		/* COMPAT: WAIT_KILLABLE_RECV needs 5.19 */
		*wait_killable = false;
		fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			     (unsigned long) SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	}
	if (fd < 0)
		return -errno;
	return (int) fd;
}
