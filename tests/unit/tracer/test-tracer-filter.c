/* SPDX-License-Identifier: MIT */
/*
 * The generated seccomp program, run in a small classic-BPF interpreter over hand-made
 * seccomp_data: other arches and x32 numbers are killed, argument checks look at the low
 * 32 bits the kernel uses, and for every syscall number the binary search lands on the
 * action of that number's slot. The variants for the kernel view and a user namespace
 * answer EPERM for ids outside the namespace's map.
 */
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "common/log.h"
#include "common/syscall-names.h"
#include "common/util.h"
#include "net/allow.h"
#include "policy/policy.h"
#include "tests/unit/tap.h"
#include "tests/unit/tracer/bpf-interp.h"
#include "tracer/internal.h"

static uint32_t run_prog(const struct sock_filter *prog, size_t len, uint32_t arch, uint32_t nr,
			 const uint64_t args[6])
{
	if (!prog)
		return 0x404; /* no such variant */
	return bpf_interp_run(prog, len, arch, nr, args);
}

static uint32_t run(const TracerFilter *f, uint32_t arch, uint32_t nr, const uint64_t args[6])
{
	return run_prog(f->prog, f->len, arch, nr, args);
}

static Policy policy = {.deny_errno = EPERM};

static TracerFilter *build(void)
{
	TracerFilter *f = NULL;

	if (tracer_filter_build(&policy, 1000, 1000, &f) < 0)
		return NULL;
	return f;
}

#define X86_64	 AUDIT_ARCH_X86_64
#define ERRNO(e) (SECCOMP_RET_ERRNO | (e))
#define HI	 (1ULL << 32) /* the kernel reads uid_t, gid_t and ints from the low half */

TEST(other_arches_and_x32_are_killed)
{
	TracerFilter *f = build();

	ASSERT_TRUE(f != NULL);
	EXPECT_EQ(run(f, AUDIT_ARCH_I386, 5, NULL), SECCOMP_RET_KILL_PROCESS);
	EXPECT_EQ(run(f, AUDIT_ARCH_I386, 20, NULL), SECCOMP_RET_KILL_PROCESS);
	EXPECT_EQ(run(f, AUDIT_ARCH_AARCH64, SYS_getpid, NULL), SECCOMP_RET_KILL_PROCESS);
	EXPECT_EQ(run(f, X86_64, 0x40000000 | SYS_openat, NULL), SECCOMP_RET_KILL_PROCESS);
	EXPECT_EQ(run(f, X86_64, 0x40000000 | 512, NULL), SECCOMP_RET_KILL_PROCESS);
	EXPECT_EQ(run(f, X86_64, 0xffffffff, NULL), ERRNO(ENOSYS));
	EXPECT_EQ(run(f, X86_64, 5000, NULL), ERRNO(ENOSYS));
	tracer_filter_free(f);
}

TEST(plain_actions_match_the_slots_for_every_number)
{
	TracerFilter *f = build();
	unsigned allowed = 0;

	ASSERT_TRUE(f != NULL);
	for (uint32_t nr = 0; nr < TRACER_NR_MAX; nr++) {
		const TracerSlot *s = &f->slots[nr];
		uint32_t want = s->entry || s->action ? s->action : ERRNO(ENOSYS);

		if (s->special != SLOT_PLAIN)
			continue;
		EXPECT_EQ(run(f, X86_64, nr, NULL), want);
		allowed += want == SECCOMP_RET_ALLOW;
	}
	EXPECT_GE(allowed, 200);
	EXPECT_EQ(run(f, X86_64, SYS_getpid, NULL), SECCOMP_RET_ALLOW);
	EXPECT_EQ(run(f, X86_64, SYS_kill, NULL), SECCOMP_RET_USER_NOTIF);
	EXPECT_EQ(run(f, X86_64, SYS_clone3, NULL), ERRNO(ENOSYS));
	/* denied entries are notified to be counted, and denied with the policy's errno */
	EXPECT_EQ(run(f, X86_64, SYS_ptrace, NULL), SECCOMP_RET_USER_NOTIF);
	EXPECT_EQ(f->slots[SYS_ptrace].deny_error, EPERM);
	EXPECT_EQ(f->slots[SYS_io_uring_setup].deny_error, EPERM);
	tracer_filter_free(f);
}

TEST(ioctl_tiocsti_is_denied_whatever_the_high_bits)
{
	TracerFilter *f = build();
	uint64_t a[6] = {0, TIOCSTI};

	ASSERT_TRUE(f != NULL);
	EXPECT_EQ(run(f, X86_64, SYS_ioctl, a), ERRNO(EPERM));
	a[1] = (1ULL << 32) | TIOCSTI;
	EXPECT_EQ(run(f, X86_64, SYS_ioctl, a), ERRNO(EPERM));
	a[1] = TIOCLINUX;
	EXPECT_EQ(run(f, X86_64, SYS_ioctl, a), ERRNO(EPERM));
	a[1] = TCGETS;
	EXPECT_EQ(run(f, X86_64, SYS_ioctl, a), SECCOMP_RET_ALLOW);
	/* the SIGIO owner of a socket, as F_SETOWN: notified, whatever the high bits */
	a[1] = FIOSETOWN;
	EXPECT_EQ(run(f, X86_64, SYS_ioctl, a), SECCOMP_RET_USER_NOTIF);
	a[1] = (1ULL << 32) | SIOCSPGRP;
	EXPECT_EQ(run(f, X86_64, SYS_ioctl, a), SECCOMP_RET_USER_NOTIF);
	a[1] = FIOGETOWN;
	EXPECT_EQ(run(f, X86_64, SYS_ioctl, a), SECCOMP_RET_ALLOW);
	/* inode changes through an fd: the view's mode decides (emu_handle_fs_ioctl) */
	a[1] = (1ULL << 32) | FS_IOC_SETFLAGS;
	EXPECT_EQ(run(f, X86_64, SYS_ioctl, a), SECCOMP_RET_USER_NOTIF);
	a[1] = FS_IOC_FSSETXATTR;
	EXPECT_EQ(run(f, X86_64, SYS_ioctl, a), SECCOMP_RET_USER_NOTIF);
	a[1] = FS_IOC_GETFLAGS;
	EXPECT_EQ(run(f, X86_64, SYS_ioctl, a), SECCOMP_RET_ALLOW);
	/* and the fd-based metadata calls are notified (emu_handle_fd_attr) */
	EXPECT_EQ(run(f, X86_64, SYS_fchmod, a), SECCOMP_RET_USER_NOTIF);
	EXPECT_EQ(run(f, X86_64, SYS_fchown, a), SECCOMP_RET_USER_NOTIF);
	EXPECT_EQ(run(f, X86_64, SYS_fsetxattr, a), SECCOMP_RET_USER_NOTIF);
	EXPECT_EQ(run(f, X86_64, SYS_fremovexattr, a), SECCOMP_RET_USER_NOTIF);
	tracer_filter_free(f);
}

TEST(clone_namespace_flags_are_denied)
{
	TracerFilter *f = build();
	uint64_t a[6] = {SIGCHLD};

	ASSERT_TRUE(f != NULL);
	EXPECT_EQ(run(f, X86_64, SYS_clone, a), SECCOMP_RET_ALLOW);
	a[0] = CLONE_VM | CLONE_THREAD | CLONE_SIGHAND;
	EXPECT_EQ(run(f, X86_64, SYS_clone, a), SECCOMP_RET_ALLOW);
	a[0] = CLONE_NEWUSER | SIGCHLD;
	EXPECT_EQ(run(f, X86_64, SYS_clone, a), ERRNO(EPERM));
	a[0] = CLONE_NEWNS;
	EXPECT_EQ(run(f, X86_64, SYS_clone, a), ERRNO(EPERM));
	a[0] = CLONE_NEWNET;
	EXPECT_EQ(run(f, X86_64, SYS_clone, a), ERRNO(EPERM));
	tracer_filter_free(f);
}

/* cpu_time counts the ends the tracer thread sees: an untraced child would escape it
 * (docs/budgets.md, "cpu_time, exited processes"). Refused only then. */
TEST(clone_untraced_is_denied_with_a_cpu_time_budget)
{
	uint64_t a[6] = {SIGCHLD | CLONE_UNTRACED};
	TracerFilter *f = build();

	ASSERT_TRUE(f != NULL);
	EXPECT_EQ(run(f, X86_64, SYS_clone, a), SECCOMP_RET_ALLOW);
	tracer_filter_free(f);

	policy.limits.cpu_time_ms = 2000;
	f = build();
	ASSERT_TRUE(f != NULL);
	EXPECT_TRUE(f->ptrace); /* "auto" turns it on for cpu_time */
	EXPECT_EQ(run(f, X86_64, SYS_clone, a), ERRNO(EPERM));
	a[0] = SIGCHLD;
	EXPECT_EQ(run(f, X86_64, SYS_clone, a), SECCOMP_RET_ALLOW);
	a[0] = CLONE_VM | CLONE_THREAD | CLONE_SIGHAND | CLONE_UNTRACED;
	EXPECT_EQ(run(f, X86_64, SYS_clone, a), ERRNO(EPERM));
	tracer_filter_free(f);

	/* without the tracer nothing is traced anyway: left alone */
	policy.ptrace = PTRACE_MODE_NEVER;
	f = build();
	policy.ptrace = PTRACE_MODE_AUTO;
	policy.limits.cpu_time_ms = 0;
	ASSERT_TRUE(f != NULL);
	a[0] = SIGCHLD | CLONE_UNTRACED;
	EXPECT_EQ(run(f, X86_64, SYS_clone, a), SECCOMP_RET_ALLOW);
	tracer_filter_free(f);
}

TEST(fallocate_that_may_allocate_is_refused_with_a_disk_budget)
{
	/* RLIMIT_FSIZE does not hold fallocate (KEEP_SIZE, or inside a sparse file):
	 * tests/security/disk-fallocate-budget.c */
	static const uint64_t freeing[] = {FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					   FALLOC_FL_COLLAPSE_RANGE};
	static const uint64_t allocating[] = {0,
					      FALLOC_FL_KEEP_SIZE,
					      FALLOC_FL_ZERO_RANGE,
					      FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
					      FALLOC_FL_INSERT_RANGE,
					      FALLOC_FL_UNSHARE_RANGE,
					      UINT64_C(1) << 32}; /* mode 0 in the low half */
	uint64_t a[6] = {3, 0, 0, 4096};
	TracerFilter *f = build();

	ASSERT_TRUE(f != NULL);
	EXPECT_EQ(run(f, X86_64, SYS_fallocate, a), SECCOMP_RET_ALLOW);
	tracer_filter_free(f);

	policy.limits.disk = 1 << 20;
	f = build();
	policy.limits.disk = 0;
	ASSERT_TRUE(f != NULL);
	for (size_t i = 0; i < ARRAY_SIZE(allocating); i++) {
		a[1] = allocating[i];
		EXPECT_EQ(run(f, X86_64, SYS_fallocate, a), ERRNO(EOPNOTSUPP));
	}
	for (size_t i = 0; i < ARRAY_SIZE(freeing); i++) {
		a[1] = freeing[i];
		EXPECT_EQ(run(f, X86_64, SYS_fallocate, a), SECCOMP_RET_ALLOW);
	}
	tracer_filter_free(f);
}

TEST(argument_dependent_notifications)
{
	TracerFilter *f = build();
	uint64_t a[6] = {1, F_SETOWN};

	ASSERT_TRUE(f != NULL);
	EXPECT_EQ(run(f, X86_64, SYS_fcntl, a), SECCOMP_RET_USER_NOTIF);
	a[1] = F_SETOWN_EX;
	EXPECT_EQ(run(f, X86_64, SYS_fcntl, a), SECCOMP_RET_USER_NOTIF);
	a[1] = F_GETFL;
	EXPECT_EQ(run(f, X86_64, SYS_fcntl, a), SECCOMP_RET_ALLOW);
	a[0] = 0;
	EXPECT_EQ(run(f, X86_64, SYS_prlimit64, a), SECCOMP_RET_ALLOW);
	a[0] = 1234;
	EXPECT_EQ(run(f, X86_64, SYS_prlimit64, a), SECCOMP_RET_USER_NOTIF);
	a[0] = 0;
	a[1] = 0;
	EXPECT_EQ(run(f, X86_64, SYS_setpgid, a), SECCOMP_RET_ALLOW);
	a[1] = 77;
	EXPECT_EQ(run(f, X86_64, SYS_setpgid, a), SECCOMP_RET_USER_NOTIF);
	tracer_filter_free(f);
}

TEST(setsockopt_routing_options_are_notified_on_the_low_halves)
{
	TracerFilter *f = build();
	uint64_t a[6] = {3, IPPROTO_IPV6, IPV6_RTHDR};

	ASSERT_TRUE(f != NULL);
	EXPECT_EQ(run(f, X86_64, SYS_setsockopt, a), SECCOMP_RET_USER_NOTIF);
	a[2] = IPV6_2292RTHDR;
	EXPECT_EQ(run(f, X86_64, SYS_setsockopt, a), SECCOMP_RET_USER_NOTIF);
	a[2] = IPV6_2292PKTOPTIONS;
	EXPECT_EQ(run(f, X86_64, SYS_setsockopt, a), SECCOMP_RET_USER_NOTIF);
	/* the kernel takes ints: high bits change nothing */
	a[1] = (1ULL << 32) | IPPROTO_IPV6;
	a[2] = (7ULL << 40) | IPV6_RTHDR;
	EXPECT_EQ(run(f, X86_64, SYS_setsockopt, a), SECCOMP_RET_USER_NOTIF);
	a[1] = IPPROTO_IP;
	a[2] = IP_OPTIONS;
	EXPECT_EQ(run(f, X86_64, SYS_setsockopt, a), SECCOMP_RET_USER_NOTIF);
	a[1] = (1ULL << 63) | IPPROTO_IP;
	EXPECT_EQ(run(f, X86_64, SYS_setsockopt, a), SECCOMP_RET_USER_NOTIF);
	/* everything else runs in the kernel */
	a[1] = IPPROTO_IP;
	a[2] = IP_TTL;
	EXPECT_EQ(run(f, X86_64, SYS_setsockopt, a), SECCOMP_RET_ALLOW);
	a[1] = IPPROTO_IPV6;
	a[2] = IPV6_UNICAST_HOPS;
	EXPECT_EQ(run(f, X86_64, SYS_setsockopt, a), SECCOMP_RET_ALLOW);
	a[1] = SOL_SOCKET;
	a[2] = IP_OPTIONS; /* the same number at another level */
	EXPECT_EQ(run(f, X86_64, SYS_setsockopt, a), SECCOMP_RET_ALLOW);
	a[1] = IPPROTO_TCP;
	a[2] = IPV6_RTHDR;
	EXPECT_EQ(run(f, X86_64, SYS_setsockopt, a), SECCOMP_RET_ALLOW);
	tracer_filter_free(f);
}

TEST(nested_listener_and_personality)
{
	TracerFilter *f = build();
	uint64_t a[6] = {SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER};

	ASSERT_TRUE(f != NULL);
	EXPECT_EQ(run(f, X86_64, SYS_seccomp, a), ERRNO(EPERM));
	a[1] = SECCOMP_FILTER_FLAG_TSYNC;
	EXPECT_EQ(run(f, X86_64, SYS_seccomp, a), SECCOMP_RET_ALLOW);
	a[0] = 0xffffffff;
	EXPECT_EQ(run(f, X86_64, SYS_personality, a), SECCOMP_RET_ALLOW);
	a[0] = 0x0400000; /* READ_IMPLIES_EXEC */
	EXPECT_EQ(run(f, X86_64, SYS_personality, a), ERRNO(EPERM));
	tracer_filter_free(f);
}

TEST(policy_overrides)
{
	PolicySyscall sys[] = {
		{.name = (char *) "getppid", .action = SYSCALL_ACTION_DENY, .error = EACCES},
		{.name = (char *) "uname", .action = SYSCALL_ACTION_KILL},
		{.name = (char *) "ptrace", .action = SYSCALL_ACTION_ALLOW},
		{.name = (char *) "kill", .action = SYSCALL_ACTION_ALLOW},
		{.name = (char *) "getuid", .action = SYSCALL_ACTION_LOG},
	};
	Policy p = {.deny_errno = EACCES, .syscalls = sys, .n_syscalls = ARRAY_SIZE(sys)};
	TracerFilter *f = NULL;

	ASSERT_EQ(tracer_filter_build(&p, 1000, 1000, &f), 0);
	EXPECT_EQ(run(f, X86_64, SYS_getppid, NULL), SECCOMP_RET_USER_NOTIF);
	EXPECT_EQ(f->slots[SYS_getppid].deny_error, EACCES);
	EXPECT_EQ(run(f, X86_64, SYS_uname, NULL), SECCOMP_RET_USER_NOTIF);
	EXPECT_TRUE(f->slots[SYS_uname].kill);
	EXPECT_EQ(run(f, X86_64, SYS_ptrace, NULL), SECCOMP_RET_ALLOW);
	/* the tree check on kill stays */
	EXPECT_EQ(run(f, X86_64, SYS_kill, NULL), SECCOMP_RET_USER_NOTIF);
	EXPECT_TRUE(f->slots[SYS_kill].handler != NULL);
	EXPECT_EQ(run(f, X86_64, SYS_getuid, NULL), SECCOMP_RET_USER_NOTIF);
	EXPECT_TRUE(f->slots[SYS_getuid].log);
	/* the built-in denied set takes the policy's errno */
	EXPECT_EQ(f->slots[SYS_bpf].deny_error, EACCES);
	tracer_filter_free(f);
}

/* The search's two node forms (tracer/filter.c, build_prog()): a policy that alternates
 * allow and deny over every number makes a run per number, so the halves near the root are
 * longer than a conditional jump reaches and take the ja; the others jump over their left
 * half. Every plain number still gets its slot's action. */
TEST(a_long_program_decides_as_its_slots)
{
	PolicySyscall *sys = calloc(sbx_syscall_names_count, sizeof(*sys));
	TracerFilter *f = NULL;
	size_t ja = 0, jge = 0;

	ASSERT_TRUE(sys != NULL);
	for (size_t i = 0; i < sbx_syscall_names_count; i++)
		sys[i] =
			(PolicySyscall){.name = (char *) sbx_syscall_names[i].name,
					.action = sbx_syscall_names[i].nr % 2 ? SYSCALL_ACTION_ALLOW
									      : SYSCALL_ACTION_DENY,
					.error = EACCES};
	Policy p = {.deny_errno = EACCES, .syscalls = sys, .n_syscalls = sbx_syscall_names_count};

	ASSERT_EQ(tracer_filter_build(&p, 1000, 1000, &f), 0);
	for (size_t i = 0; i < f->len; i++) {
		ja += f->prog[i].code == (BPF_JMP | BPF_JA);
		jge += f->prog[i].code == (BPF_JMP | BPF_JGE | BPF_K);
	}
	EXPECT_GE(ja, 1);
	EXPECT_GE(jge, ja + 100);
	for (uint32_t nr = 0; nr < TRACER_NR_MAX; nr++) {
		const TracerSlot *s = &f->slots[nr];

		if (s->special == SLOT_PLAIN)
			EXPECT_EQ(run(f, X86_64, nr, NULL),
				  s->entry || s->action ? s->action : ERRNO(ENOSYS));
	}
	tracer_filter_free(f);
	free(sys);
}

/* Issue 20: loopback in a network namespace of the tree's own, the view in the kernel: the
 * address calls run in the kernel, socket(2) is decided by the filter exactly as the handler
 * decides it, and a condition that fails keeps everything notified. */
static uint32_t call(const struct sock_filter *prog, size_t len, int nr, uint64_t a0, uint64_t a1,
		     uint64_t a2, uint64_t a3, uint64_t a4)
{
	uint64_t a[6] = {a0, a1, a2, a3, a4};

	return run_prog(prog, len, X86_64, (uint32_t) nr, a);
}

/* The filter's answer to socket(2) in program prog is the handler's in mode, on every mix
 * of arguments (the low halves, as both read them): allowed where the handler allows,
 * notified elsewhere, and some of each. */
static void socket_matches_handler(int *_tap_failed, const struct sock_filter *prog, size_t len,
				   const Policy *p, NetMode mode)
{
	static const uint64_t families[] = {AF_UNSPEC,	  AF_UNIX,   AF_INET,  AF_INET6,
					    AF_NETLINK,	  AF_PACKET, AF_VSOCK, AF_INET | HI,
					    AF_UNIX | HI, 0xffffffff};
	static const uint64_t protos[] = {0,
					  IPPROTO_TCP,
					  IPPROTO_UDP,
					  IPPROTO_ICMP,
					  IPPROTO_ICMPV6,
					  IPPROTO_SCTP,
					  IPPROTO_MPTCP,
					  255,
					  IPPROTO_TCP | HI};
	static const uint64_t flags[] = {
		0, SOCK_NONBLOCK, SOCK_CLOEXEC, SOCK_NONBLOCK | SOCK_CLOEXEC, 0x100, HI};
	NetContext ctx = {.policy = &p->network, .mode = mode};
	unsigned checked = 0, allowed = 0;

	for (size_t a = 0; a < ARRAY_SIZE(families); a++)
		for (uint64_t t = 0; t <= 11; t++)
			for (size_t fl = 0; fl < ARRAY_SIZE(flags); fl++)
				for (size_t pr = 0; pr < ARRAY_SIZE(protos); pr++) {
					uint64_t type = t | flags[fl];
					NetDecision d;
					uint32_t got;

					ASSERT_EQ(net_decide_socket(&ctx, (int) families[a],
								    (int) type, (int) protos[pr],
								    &d),
						  0);
					got = call(prog, len, SYS_socket, families[a], type,
						   protos[pr], 0, 0);
					/* the filter may leave an allowed call to the handler,
					 * never allow one the handler denies */
					if (got == SECCOMP_RET_ALLOW &&
					    d.verdict != NET_VERDICT_ALLOW)
						fprintf(stderr, "# socket(%#llx, %#llx, %#llx)\n",
							(unsigned long long) families[a],
							(unsigned long long) type,
							(unsigned long long) protos[pr]);
					EXPECT_TRUE(got == SECCOMP_RET_ALLOW ||
						    got == SECCOMP_RET_USER_NOTIF);
					EXPECT_FALSE(got == SECCOMP_RET_ALLOW &&
						     d.verdict != NET_VERDICT_ALLOW);
					checked++;
					allowed += got == SECCOMP_RET_ALLOW;
				}
	EXPECT_TRUE(allowed > 0 && allowed < checked);
	/* what programs create every day runs in the kernel */
	EXPECT_EQ(call(prog, len, SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, 0, 0),
		  SECCOMP_RET_ALLOW);
	EXPECT_EQ(call(prog, len, SYS_socket, AF_INET6, SOCK_DGRAM, 0, 0, 0),
		  mode == NET_MODE_NONE ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ALLOW);
}

TEST(loopback_in_a_namespace_runs_the_address_calls_in_the_kernel)
{
	Policy p = {.deny_errno = EPERM,
		    .kernel_view = TRI_AUTO,
		    .network = {.mode = NET_MODE_LOOPBACK, .unshare_netns = 1}};
	static const int addr_calls[] = {SYS_connect, SYS_bind,	   SYS_listen,
					 SYS_sendto,  SYS_sendmsg, SYS_sendmmsg};
	TracerFilter *f = NULL;

	ASSERT_TRUE(tracer_filter_net_why(&p) == NULL);
	ASSERT_EQ(tracer_filter_build(&p, 1000, 1000, &f), 0);
	EXPECT_TRUE(f->net_in_kernel);
	for (int pass = 0; pass < 2; pass++) {
		const struct sock_filter *k = pass ? f->kview_noipc_prog : f->kview_prog;
		size_t n = pass ? f->kview_noipc_len : f->kview_len;

		for (size_t i = 0; i < ARRAY_SIZE(addr_calls); i++) {
			EXPECT_EQ(call(k, n, addr_calls[i], 3, 0x1000, 16, 0, 0x2000),
				  SECCOMP_RET_ALLOW);
			/* the emulated view's program: notified as ever */
			EXPECT_EQ(call(f->prog, f->len, addr_calls[i], 3, 0x1000, 16, 0, 0x2000),
				  SECCOMP_RET_USER_NOTIF);
		}
		/* still notified: routing options, recvfrom with an address, names */
		EXPECT_EQ(call(k, n, SYS_setsockopt, 3, IPPROTO_IPV6, IPV6_RTHDR, 0, 0),
			  SECCOMP_RET_USER_NOTIF);
		EXPECT_EQ(call(k, n, SYS_recvfrom, 3, 0, 0, 0, 0x2000), SECCOMP_RET_USER_NOTIF);
		EXPECT_EQ(call(k, n, SYS_getsockname, 3, 0, 0, 0, 0), SECCOMP_RET_USER_NOTIF);
	}
	/* socket(2): the filter's answer is the handler's */
	socket_matches_handler(_tap_failed, f->kview_prog, f->kview_len, &p, NET_MODE_LOOPBACK);
	/* a plain user's namespace in the emulated view is a user namespace too: its program
	 * answers ids outside the map with EPERM, and notifies the address calls */
	ASSERT_TRUE(f->userns_prog != NULL);
	EXPECT_EQ(call(f->userns_prog, f->userns_len, SYS_setuid, 65534, 0, 0, 0, 0), ERRNO(EPERM));
	EXPECT_EQ(call(f->userns_prog, f->userns_len, SYS_connect, 3, 0x1000, 16, 0, 0),
		  SECCOMP_RET_USER_NOTIF);
	/* a pid namespace's programs keep it */
	ASSERT_EQ(tracer_filter_set_pidns(f), 0);
	EXPECT_EQ(call(f->kview_prog, f->kview_len, SYS_connect, 3, 0x1000, 16, 0, 0),
		  SECCOMP_RET_ALLOW);
	tracer_filter_free(f);
}

TEST(loopback_namespace_conditions_keep_the_calls_notified)
{
	PolicyRule rule = {.glob = (char *) "/workspace/x.key", .level = SENSITIVITY_SECRET};
	PolicySyscall logged = {.name = (char *) "connect", .action = SYSCALL_ACTION_LOG};
	TracerFilter *f = NULL;

	for (int c = 0; c < 6; c++) {
		Policy p = {.deny_errno = EPERM,
			    .kernel_view = TRI_AUTO,
			    .network = {.mode = NET_MODE_LOOPBACK, .unshare_netns = 1}};

		switch (c) {
		case 0:
			p.rules = &rule;
			p.n_rules = 1;
			break;
		case 1:
			p.network.ask_unlisted = true;
			break;
		case 2:
			p.network.unshare_netns = -1; /* "auto" has no effect with loopback */
			break;
		case 3:
			p.network.mode = NET_MODE_ALLOWLIST;
			break;
		case 4:
			p.audit.log = (char *) "/tmp/x";
			break;
		default:
			/* what [syscalls] logs stays notified, the rest goes to the kernel */
			p.syscalls = &logged;
			p.n_syscalls = 1;
			break;
		}
		ASSERT_EQ(tracer_filter_build(&p, 1000, 1000, &f), 0);
		if (c < 5) {
			EXPECT_TRUE(tracer_filter_net_why(&p) != NULL);
			EXPECT_FALSE(f->net_in_kernel);
		}
		EXPECT_EQ(call(f->kview_prog, f->kview_len, SYS_connect, 3, 0x1000, 16, 0, 0),
			  SECCOMP_RET_USER_NOTIF);
		EXPECT_EQ(call(f->kview_prog, f->kview_len, SYS_bind, 3, 0x1000, 16, 0, 0),
			  c == 5 ? SECCOMP_RET_ALLOW : SECCOMP_RET_USER_NOTIF);
		tracer_filter_free(f);
		f = NULL;
	}
}

/* Mode full in the kernel view without a namespace (tracer_filter_net_full_why()): connect and
 * the sends in the kernel, bind and listen notified (abstract names), and each condition
 * keeps them all notified; with this host's Landlock below ABI 6 nothing qualifies. */
TEST(full_mode_runs_connect_and_the_sends_in_the_kernel)
{
	PolicyRule rule = {.glob = (char *) "/workspace/x.key", .level = SENSITIVITY_SECRET};
	char *abstract[] = {(char *) "@listed", NULL};
	static const int in_kernel[] = {SYS_connect, SYS_sendto, SYS_sendmsg, SYS_sendmmsg};
	bool host_ok = tracer_landlock_abi() >= 6;
	TracerFilter *f = NULL;

	for (int c = 0; c < 6; c++) {
		Policy p = {.deny_errno = EPERM,
			    .kernel_view = TRI_AUTO,
			    .landlock = TRI_AUTO,
			    .network = {.mode = NET_MODE_FULL}};
		bool qualifies = c == 0 && host_ok;

		switch (c) {
		case 1:
			p.rules = &rule;
			p.n_rules = 1;
			break;
		case 2:
			p.audit.trace = true;
			break;
		case 3:
			p.network.unix_sockets = abstract;
			break;
		case 4:
			p.landlock = TRI_OFF;
			break;
		case 5:
			p.kernel_view = TRI_OFF;
			break;
		}
		EXPECT_EQ(tracer_filter_net_full_why(&p, 6) == NULL, c == 0);
		EXPECT_TRUE(tracer_filter_net_full_why(&p, 5) != NULL);
		ASSERT_EQ(tracer_filter_build(&p, 1000, 1000, &f), 0);
		EXPECT_EQ(f->net_full_in_kernel, qualifies);
		EXPECT_FALSE(f->net_in_kernel); /* no namespace for mode full */
		if (c == 5) {
			tracer_filter_free(f);
			f = NULL;
			continue; /* no kernel view's program */
		}
		for (size_t i = 0; i < ARRAY_SIZE(in_kernel); i++) {
			EXPECT_EQ(call(f->kview_prog, f->kview_len, in_kernel[i], 3, 0x1000, 16, 0,
				       0x2000),
				  qualifies ? SECCOMP_RET_ALLOW : SECCOMP_RET_USER_NOTIF);
			/* the emulated view's program: notified as ever */
			EXPECT_EQ(call(f->prog, f->len, in_kernel[i], 3, 0x1000, 16, 0, 0x2000),
				  SECCOMP_RET_USER_NOTIF);
			EXPECT_FALSE(tracer_filter_restartable(f, in_kernel[i], true) && qualifies);
		}
		EXPECT_EQ(call(f->kview_prog, f->kview_len, SYS_bind, 3, 0x1000, 16, 0, 0),
			  SECCOMP_RET_USER_NOTIF);
		EXPECT_EQ(call(f->kview_prog, f->kview_len, SYS_listen, 3, 16, 0, 0, 0),
			  SECCOMP_RET_USER_NOTIF);
		tracer_filter_free(f);
		f = NULL;
	}
}

/* socket(2) in every program of a run, the emulated view's included, where the network mode
 * cannot change: the handler's allowed set in the filter (tracer_filter_socket_why()) */
TEST(socket_is_decided_in_the_filter_where_the_mode_is_fixed)
{
	static const NetMode modes[] = {NET_MODE_NONE, NET_MODE_LOOPBACK, NET_MODE_ALLOWLIST,
					NET_MODE_FULL};

	if (!pidfd_getfd_usable()) {
		Policy p = {.deny_errno = EPERM, .network = {.mode = NET_MODE_LOOPBACK}};
		TracerFilter *f = NULL;

		/* the supervisor makes the tree's sockets: every socket call is its own */
		EXPECT_TRUE(tracer_filter_socket_why(&p, false) != NULL);
		ASSERT_EQ(tracer_filter_build(&p, 1000, 1000, &f), 0);
		EXPECT_EQ(call(f->prog, f->len, SYS_socket, AF_UNIX, SOCK_STREAM, 0, 0, 0),
			  SECCOMP_RET_USER_NOTIF);
		tracer_filter_free(f);
		SKIP("pidfd_getfd is refused here: only the notified case was checked");
	}
	for (size_t m = 0; m < ARRAY_SIZE(modes); m++) {
		Policy p = {.deny_errno = EPERM,
			    .kernel_view = TRI_AUTO,
			    .network = {.mode = modes[m], .unshare_netns = 0}};
		TracerFilter *f = NULL;

		ASSERT_TRUE(tracer_filter_socket_why(&p, true) == NULL);
		ASSERT_EQ(tracer_filter_build(&p, 1000, 1000, &f), 0);
		EXPECT_TRUE(f->socket_in_filter);
		socket_matches_handler(_tap_failed, f->prog, f->len, &p, modes[m]);
		socket_matches_handler(_tap_failed, f->noipc_prog, f->noipc_len, &p, modes[m]);
		socket_matches_handler(_tap_failed, f->kview_prog, f->kview_len, &p, modes[m]);
		/* one the kernel never ran: a notification never received, restarted */
		EXPECT_TRUE(tracer_filter_restartable(f, SYS_socket, false));
		tracer_filter_free(f);
	}
}

TEST(socket_stays_notified_where_the_mode_may_change_or_is_recorded)
{
	PolicyRule rule = {.glob = (char *) "/workspace/x.key", .level = SENSITIVITY_SECRET};
	PolicySyscall logged = {.name = (char *) "socket", .action = SYSCALL_ACTION_LOG};
	TracerFilter *f = NULL;

	for (int c = 0; c < 4; c++) {
		Policy p = {.deny_errno = EPERM,
			    .kernel_view = TRI_AUTO,
			    .network = {.mode = NET_MODE_LOOPBACK}};
		bool getfd = true;

		switch (c) {
		case 0:
			p.rules = &rule; /* the ratchet may lower the mode */
			p.n_rules = 1;
			break;
		case 1:
			p.audit.log = (char *) "/tmp/x";
			break;
		case 2:
			getfd = false;
			break;
		default:
			p.syscalls = &logged; /* what [syscalls] logs stays notified */
			p.n_syscalls = 1;
			break;
		}
		EXPECT_EQ(tracer_filter_socket_why(&p, getfd) != NULL, c < 3);
		if (c == 2)
			continue; /* the build asks the host; the reason is what is checked */
		ASSERT_EQ(tracer_filter_build(&p, 1000, 1000, &f), 0);
		EXPECT_EQ(call(f->prog, f->len, SYS_socket, AF_UNIX, SOCK_STREAM, 0, 0, 0),
			  SECCOMP_RET_USER_NOTIF);
		EXPECT_EQ(call(f->kview_prog, f->kview_len, SYS_socket, AF_INET, SOCK_STREAM, 0, 0,
			       0),
			  SECCOMP_RET_USER_NOTIF);
		tracer_filter_free(f);
		f = NULL;
	}
}

#define ANY_ID 0xffffffffULL

/* The action of prog for the call nr(a0, a1, a2, a3). */
static uint32_t ids(const struct sock_filter *prog, size_t len, int nr, uint64_t a0, uint64_t a1,
		    uint64_t a2, uint64_t a3)
{
	uint64_t a[6] = {a0, a1, a2, a3};

	return run_prog(prog, len, X86_64, (uint32_t) nr, a);
}

/* Issue 23: in a user namespace that maps only the command's uid and gid, the kernel says
 * EINVAL for set*id and chown to other ids; natively a plain user gets EPERM. */
TEST(ids_outside_a_user_namespace_map_fail_with_eperm)
{
	Policy p = {.deny_errno = EPERM, .kernel_view = TRI_AUTO};
	TracerFilter *f = NULL;
	const struct sock_filter *k;
	size_t n;

	ASSERT_EQ(tracer_filter_build(&p, 1001, 1002, &f), 0);
	k = f->kview_prog;
	n = f->kview_len;
	ASSERT_TRUE(k != NULL);
	/* set*uid: the own uid and -1 go to the kernel, whatever the high half */
	EXPECT_EQ(ids(k, n, SYS_setuid, 1001, 0, 0, 0), SECCOMP_RET_ALLOW);
	EXPECT_EQ(ids(k, n, SYS_setuid, HI | 1001, 0, 0, 0), SECCOMP_RET_ALLOW);
	EXPECT_EQ(ids(k, n, SYS_setuid, ANY_ID, 0, 0, 0), SECCOMP_RET_ALLOW);
	EXPECT_EQ(ids(k, n, SYS_setuid, 65534, 0, 0, 0), ERRNO(EPERM));
	EXPECT_EQ(ids(k, n, SYS_setuid, HI | 65534, 0, 0, 0), ERRNO(EPERM));
	EXPECT_EQ(ids(k, n, SYS_setuid, 0, 0, 0, 0), ERRNO(EPERM));
	EXPECT_EQ(ids(k, n, SYS_setuid, 1002, 0, 0, 0), ERRNO(EPERM)); /* the gid */
	EXPECT_EQ(ids(k, n, SYS_setreuid, ANY_ID, 1001, 0, 0), SECCOMP_RET_ALLOW);
	EXPECT_EQ(ids(k, n, SYS_setreuid, ANY_ID, 65534, 0, 0), ERRNO(EPERM));
	EXPECT_EQ(ids(k, n, SYS_setreuid, 65534, ANY_ID, 0, 0), ERRNO(EPERM));
	EXPECT_EQ(ids(k, n, SYS_setresuid, 1001, ANY_ID, 1001, 0), SECCOMP_RET_ALLOW);
	EXPECT_EQ(ids(k, n, SYS_setresuid, 1001, 1001, 65534, 0), ERRNO(EPERM));
	EXPECT_EQ(ids(k, n, SYS_setresuid, ANY_ID, 0, ANY_ID, 0), ERRNO(EPERM));
	/* set*gid: against the own gid */
	EXPECT_EQ(ids(k, n, SYS_setgid, 1002, 0, 0, 0), SECCOMP_RET_ALLOW);
	EXPECT_EQ(ids(k, n, SYS_setgid, 1001, 0, 0, 0), ERRNO(EPERM));
	EXPECT_EQ(ids(k, n, SYS_setgid, 65534, 0, 0, 0), ERRNO(EPERM));
	EXPECT_EQ(ids(k, n, SYS_setregid, 1002, ANY_ID, 0, 0), SECCOMP_RET_ALLOW);
	EXPECT_EQ(ids(k, n, SYS_setregid, ANY_ID, 65534, 0, 0), ERRNO(EPERM));
	EXPECT_EQ(ids(k, n, SYS_setresgid, ANY_ID, ANY_ID, 1002, 0), SECCOMP_RET_ALLOW);
	EXPECT_EQ(ids(k, n, SYS_setresgid, ANY_ID, ANY_ID, HI | 65534, 0), ERRNO(EPERM));
	/* setfsuid, setfsgid, setgroups: as they were (the kernel answers as natively) */
	EXPECT_EQ(ids(k, n, SYS_setfsuid, 65534, 0, 0, 0), SECCOMP_RET_ALLOW);
	EXPECT_EQ(ids(k, n, SYS_setfsgid, 65534, 0, 0, 0), SECCOMP_RET_ALLOW);
	EXPECT_EQ(ids(k, n, SYS_setgroups, 1, 0, 0, 0), SECCOMP_RET_ALLOW);
	/* the chown family runs in the kernel there: uid and gid arguments only */
	EXPECT_EQ(ids(k, n, SYS_chown, 65534, 1001, 1002, 0), SECCOMP_RET_ALLOW);
	EXPECT_EQ(ids(k, n, SYS_chown, 0, ANY_ID, ANY_ID, 0), SECCOMP_RET_ALLOW);
	EXPECT_EQ(ids(k, n, SYS_chown, 0, 65534, ANY_ID, 0), ERRNO(EPERM));
	EXPECT_EQ(ids(k, n, SYS_chown, 0, ANY_ID, 65534, 0), ERRNO(EPERM));
	EXPECT_EQ(ids(k, n, SYS_chown, 0, 1001, 1001, 0), ERRNO(EPERM)); /* the uid as gid */
	EXPECT_EQ(ids(k, n, SYS_lchown, 0, 1001, 0, 0), ERRNO(EPERM));
	EXPECT_EQ(ids(k, n, SYS_lchown, 0, HI | 1001, HI | 1002, 0), SECCOMP_RET_ALLOW);
	EXPECT_EQ(ids(k, n, SYS_fchown, 3, 0, ANY_ID, 0), ERRNO(EPERM));
	EXPECT_EQ(ids(k, n, SYS_fchown, 3, 1001, ANY_ID, 0), SECCOMP_RET_ALLOW);
	EXPECT_EQ(ids(k, n, SYS_fchownat, 3, 65534, 1001, 1002), SECCOMP_RET_ALLOW);
	EXPECT_EQ(ids(k, n, SYS_fchownat, 3, 0, 65534, ANY_ID), ERRNO(EPERM));
	EXPECT_EQ(ids(k, n, SYS_fchownat, 3, 0, ANY_ID, 0), ERRNO(EPERM));
	/* the same rules without a private IPC namespace, and in a pid namespace */
	EXPECT_EQ(ids(f->kview_noipc_prog, f->kview_noipc_len, SYS_setuid, 65534, 0, 0, 0),
		  ERRNO(EPERM));
	EXPECT_EQ(ids(f->kview_noipc_prog, f->kview_noipc_len, SYS_chown, 0, 0, 0, 0),
		  ERRNO(EPERM));
	ASSERT_EQ(tracer_filter_set_pidns(f), 0);
	EXPECT_EQ(ids(f->kview_prog, f->kview_len, SYS_setgid, 65534, 0, 0, 0), ERRNO(EPERM));
	EXPECT_EQ(ids(f->kview_prog, f->kview_len, SYS_fchownat, 3, 0, 1001, 1002),
		  SECCOMP_RET_ALLOW);
	EXPECT_EQ(ids(f->kview_noipc_prog, f->kview_noipc_len, SYS_setresuid, 0, 0, 0, 0),
		  ERRNO(EPERM));
	/* outside a user namespace every id is mapped: the kernel decides; the emulated
	 * view's chown is the supervisor's */
	EXPECT_EQ(ids(f->prog, f->len, SYS_setuid, 65534, 0, 0, 0), SECCOMP_RET_ALLOW);
	EXPECT_EQ(ids(f->noipc_prog, f->noipc_len, SYS_setuid, 65534, 0, 0, 0), SECCOMP_RET_ALLOW);
	EXPECT_EQ(ids(f->prog, f->len, SYS_chown, 0, 65534, 0, 0), SECCOMP_RET_USER_NOTIF);
	EXPECT_TRUE(f->userns_prog == NULL); /* no private network namespace */
	tracer_filter_free(f);
}

/* Root runs map 0 to 0; the command is uid 0 without capabilities (docs/compatibility.md) */
TEST(ids_of_a_root_run)
{
	Policy p = {.deny_errno = EPERM, .kernel_view = TRI_ON};
	TracerFilter *f = NULL;

	ASSERT_EQ(tracer_filter_build(&p, 0, 0, &f), 0);
	EXPECT_EQ(ids(f->kview_prog, f->kview_len, SYS_setuid, 0, 0, 0, 0), SECCOMP_RET_ALLOW);
	EXPECT_EQ(ids(f->kview_prog, f->kview_len, SYS_setuid, 65534, 0, 0, 0), ERRNO(EPERM));
	EXPECT_EQ(ids(f->kview_prog, f->kview_len, SYS_setresgid, 0, 0, 1, 0), ERRNO(EPERM));
	EXPECT_EQ(ids(f->kview_prog, f->kview_len, SYS_chown, 0, 0, 0, 0), SECCOMP_RET_ALLOW);
	EXPECT_EQ(ids(f->kview_prog, f->kview_len, SYS_chown, 0, 65534, 0, 0), ERRNO(EPERM));
	EXPECT_EQ(ids(f->prog, f->len, SYS_setuid, 65534, 0, 0, 0), SECCOMP_RET_ALLOW);
	tracer_filter_free(f);
}

/* A plain user's private network namespace is a user namespace too, in the emulated view:
 * set*id as in the kernel view, chown notified (the supervisor chowns from outside) */
TEST(ids_in_the_user_namespace_of_a_private_network)
{
	Policy p = {.deny_errno = EPERM, .kernel_view = TRI_OFF};
	TracerFilter *f = NULL;

	p.network.mode = NET_MODE_NONE;
	p.network.unshare_netns = -1;
	ASSERT_EQ(tracer_filter_build(&p, 1001, 1001, &f), 0);
	EXPECT_TRUE(f->kview_prog == NULL);
	ASSERT_TRUE(f->userns_prog != NULL);
	EXPECT_EQ(ids(f->userns_prog, f->userns_len, SYS_setuid, 65534, 0, 0, 0), ERRNO(EPERM));
	EXPECT_EQ(ids(f->userns_prog, f->userns_len, SYS_setuid, 1001, 0, 0, 0), SECCOMP_RET_ALLOW);
	EXPECT_EQ(ids(f->userns_prog, f->userns_len, SYS_setregid, 1001, 65534, 0, 0),
		  ERRNO(EPERM));
	EXPECT_EQ(ids(f->userns_prog, f->userns_len, SYS_chown, 0, 65534, 0, 0),
		  SECCOMP_RET_USER_NOTIF);
	EXPECT_EQ(ids(f->userns_prog, f->userns_len, SYS_fchown, 3, 65534, 0, 0),
		  SECCOMP_RET_USER_NOTIF);
	/* the IPC calls of a private IPC namespace run, as in the main program */
	EXPECT_EQ(ids(f->userns_prog, f->userns_len, SYS_shmget, 0, 0, 0, 0), SECCOMP_RET_ALLOW);
	EXPECT_EQ(ids(f->prog, f->len, SYS_setuid, 65534, 0, 0, 0), SECCOMP_RET_ALLOW);
	tracer_filter_free(f);
}

/* What the policy made of a call stays: it is notified, and answered as the policy says */
TEST(ids_policy_overrides_stay)
{
	PolicySyscall sys[] = {
		{.name = (char *) "setuid", .action = SYSCALL_ACTION_DENY, .error = EACCES},
		{.name = (char *) "setgid", .action = SYSCALL_ACTION_LOG},
		{.name = (char *) "chown", .action = SYSCALL_ACTION_KILL},
	};
	Policy p = {.deny_errno = EPERM,
		    .kernel_view = TRI_AUTO,
		    .syscalls = sys,
		    .n_syscalls = ARRAY_SIZE(sys)};
	TracerFilter *f = NULL;

	ASSERT_EQ(tracer_filter_build(&p, 1001, 1001, &f), 0);
	EXPECT_EQ(ids(f->kview_prog, f->kview_len, SYS_setuid, 65534, 0, 0, 0),
		  SECCOMP_RET_USER_NOTIF);
	EXPECT_EQ(ids(f->kview_prog, f->kview_len, SYS_setgid, 65534, 0, 0, 0),
		  SECCOMP_RET_USER_NOTIF);
	EXPECT_EQ(ids(f->kview_prog, f->kview_len, SYS_chown, 0, 65534, 0, 0),
		  SECCOMP_RET_USER_NOTIF);
	EXPECT_EQ(ids(f->kview_prog, f->kview_len, SYS_lchown, 0, 65534, 0, 0), ERRNO(EPERM));
	tracer_filter_free(f);
}

/*
 * PTRACE_EVENT_EXEC is asked for only where on_exec_event() reads it (tracer/ptrace.c,
 * tracer_ptrace_exec_why): the emulated view, whose execve stops at the tracer and is checked
 * again after it ran. In the kernel view execve runs in the kernel, so there is nothing to
 * check after it; an [exec] list, held execs or backtraces keep the event in any view.
 */
TEST(exec_events_only_where_an_exec_was_checked)
{
	uint64_t a[6] = {0};
	char *globs[] = {"/usr/bin/*", NULL};
	TracerFilter *f;

	policy.limits.disk = 1 << 30; /* "auto" turns ptrace on for a disk budget */
	policy.kernel_view = TRI_AUTO;
	f = build();
	ASSERT_TRUE(f != NULL);
	EXPECT_TRUE(f->ptrace);
	/* the emulated view stops execve at the tracer and checks it after it ran */
	EXPECT_EQ(run(f, X86_64, SYS_execve, a), SECCOMP_RET_TRACE);
	EXPECT_EQ(run(f, X86_64, SYS_execveat, a), SECCOMP_RET_TRACE);
	EXPECT_TRUE(tracer_ptrace_exec_why(&policy, false) != NULL);
	/* the kernel view runs it in the kernel: no check before, none after */
	EXPECT_EQ(run_prog(f->kview_prog, f->kview_len, X86_64, SYS_execve, a), SECCOMP_RET_ALLOW);
	EXPECT_EQ(run_prog(f->kview_prog, f->kview_len, X86_64, SYS_execveat, a),
		  SECCOMP_RET_ALLOW);
	EXPECT_TRUE(tracer_ptrace_exec_why(&policy, true) == NULL);
	tracer_filter_free(f);

	/* what would read the event keeps it, whatever the view */
	policy.exec_allow = globs;
	EXPECT_TRUE(tracer_ptrace_exec_why(&policy, true) != NULL);
	policy.exec_allow = NULL;
	policy.exec_deny = globs;
	EXPECT_TRUE(tracer_ptrace_exec_why(&policy, true) != NULL);
	policy.exec_deny = NULL;
	policy.exec_ask_unlisted = true;
	EXPECT_TRUE(tracer_ptrace_exec_why(&policy, true) != NULL);
	policy.exec_ask_unlisted = false;
	policy.audit.backtrace = AUDIT_SELECT_DENIED;
	EXPECT_TRUE(tracer_ptrace_exec_why(&policy, true) != NULL);
	policy.audit.backtrace = AUDIT_SELECT_NONE;
	policy.limits.disk = 0;
	policy.kernel_view = TRI_OFF;
}

/* Issue 20: a run builds the programs C may install and no other (launch_programs() in
 * tracer/run.c). The slots come first, without programs; each set is built when asked, the
 * same as tracer_filter_build() builds it (filter-golden compares those); and a program
 * that was not built is refused at install, before any seccomp call, so C fails rather
 * than run unfiltered. */
TEST(programs_are_built_when_asked_and_only_those)
{
	Policy p = {.deny_errno = EPERM, .kernel_view = TRI_ON};
	TracerFilter *f = NULL, *all = NULL;
	bool wk = false;

	ASSERT_EQ(tracer_filter_prepare(&p, 1000, 1000, &f), 0);
	EXPECT_TRUE(f->prog == NULL && f->noipc_prog == NULL && f->kview_prog == NULL &&
		    f->kview_noipc_prog == NULL && f->userns_prog == NULL);
	EXPECT_TRUE(f->slots[SYS_openat].handler != NULL);
	EXPECT_EQ(tracer_filter_install(f, false, true, false, &wk), -ENOEXEC);

	ASSERT_EQ(tracer_filter_programs(f, &p, TRACER_PROGS_KVIEW), 0);
	EXPECT_TRUE(f->prog == NULL && f->noipc_prog == NULL);
	ASSERT_TRUE(f->kview_prog != NULL && f->kview_noipc_prog != NULL);
	EXPECT_FALSE(f->pidns);
	ASSERT_EQ(tracer_filter_build(&p, 1000, 1000, &all), 0);
	ASSERT_EQ(f->kview_len, all->kview_len);
	EXPECT_EQ(memcmp(f->kview_prog, all->kview_prog, f->kview_len * sizeof(*f->kview_prog)), 0);
	/* the emulated view's, asked later, are the same as those built all at once */
	ASSERT_EQ(tracer_filter_programs(f, &p, TRACER_PROGS_EMULATED), 0);
	ASSERT_TRUE(f->prog != NULL && f->noipc_prog != NULL);
	ASSERT_EQ(f->len, all->len);
	EXPECT_EQ(memcmp(f->prog, all->prog, f->len * sizeof(*f->prog)), 0);
	tracer_filter_free(f);

	/* a pid namespace's: the kernel view's programs are those of tracer_filter_set_pidns() */
	ASSERT_EQ(tracer_filter_prepare(&p, 1000, 1000, &f), 0);
	ASSERT_EQ(tracer_filter_programs(f, &p, TRACER_PROGS_KVIEW | TRACER_PROGS_PIDNS), 0);
	EXPECT_TRUE(f->pidns && f->prog == NULL);
	ASSERT_EQ(tracer_filter_set_pidns(all), 0);
	ASSERT_EQ(f->kview_noipc_len, all->kview_noipc_len);
	EXPECT_EQ(memcmp(f->kview_noipc_prog, all->kview_noipc_prog,
			 f->kview_noipc_len * sizeof(*f->kview_noipc_prog)),
		  0);
	EXPECT_EQ(run_prog(f->kview_prog, f->kview_len, X86_64, SYS_kill, NULL), SECCOMP_RET_ALLOW);
	tracer_filter_free(f);
	tracer_filter_free(all);
}

int main(void)
{
	log_max_level = LOG_LEVEL_ERROR;
	return tap_run();
}
