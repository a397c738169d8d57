/* SPDX-License-Identifier: MIT */
/*
 * sbxtrace doctor: what the running kernel offers the sandbox, probed (tracer/probe.c), and
 * what each policy feature needs. Exit 0 when the essentials are there, 125 otherwise.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "tracer/tracer.h"

static void line(const char *what, bool ok, const char *need)
{
	printf("  %-40s %-4s %s\n", what, ok ? "yes" : "no", need);
}

int cmd_doctor(int argc, char *argv[])
{
	TracerFeatures f;
	const char *missing;

	if (argc > 1 && (streq(argv[1], "-h") || streq(argv[1], "--help"))) {
		printf("Usage: sbxtrace doctor\n"
		       "\n"
		       "List what this kernel offers the sandbox, and what each policy feature "
		       "needs.\n"
		       "\n"
		       "Examples:\n"
		       "  sbxtrace doctor                     # before the first run on a machine\n"
		       "  sbxtrace doctor | grep -i landlock  # is the second layer there?\n"
		       "\n"
		       "Exit status: 0 when the essentials are there, 125 otherwise.\n");
		return 0;
	}
	tracer_probe_features(&f);
	printf("Kernel features (probed):\n");
	line("seccomp user notification (listener)", f.listener, "essential");
	line("SECCOMP_ADDFD_FLAG_SEND", f.addfd_send, "essential: emulated open (5.14)");
	line("SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", f.wait_killable,
	     "optional: signals do not restart notified calls (5.19)");
	line("SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP", f.sync_wakeup,
	     "optional: faster round trips (6.6)");
	line("pidfd_open", f.pidfd_open, "essential: race-free signals (5.3)");
	line("pidfd_getfd", f.pidfd_getfd,
	     f.pidfd_getfd ? "sockets, fcntl owner, fds of the program (5.6)"
			   : "refused (EPERM: a container's seccomp profile without "
			     "CAP_SYS_PTRACE?) or missing: see below");
	line("PIDFD_THREAD", f.pidfd_thread, "optional: race-free tgkill (6.9)");
	line("openat2", f.openat2, "file-system view fast path (5.6)");
	line("process_vm_readv", f.process_vm_readv, "optional: else /proc/PID/mem");
	line("ptrace (PTRACE_SEIZE of a child)", f.ptrace,
	     "tracer.ptrace: exec/chdir rewrite, backtraces");
	line("libunwind-ptrace (loaded on demand)", tracer_backtraces_loadable(),
	     "audit.backtrace (without: frame pointers only); also needs ptrace and "
	     "WAIT_KILLABLE_RECV");
	line("user namespaces (as this user)", f.userns,
	     "the view in the kernel (tracer.kernel_view); a network namespace for a plain user");
	line("private network namespace", f.netns,
	     "network.unshare: mode none (optional layer), loopback (connects in the kernel)");
	printf("  %-40s %-4d %s\n", "Landlock ABI", f.landlock_abi,
	       "tracer.landlock: >= 1 file-system rules from the mounts, >= 6 also scopes signals "
	       "and abstract sockets");
	{
		char cg[640] = "";
		bool delegated = tracer_cgroup_delegated(cg, sizeof(cg));

		printf("\nBudgets (docs/budgets.md): enforced by the supervisor (/proc sampling, "
		       "rlimits,\n  clone notifications); no cgroup needed.\n");
		printf("  %-40s %-4s %s\n", "cgroup v2 subtree writable", delegated ? "yes" : "no",
		       cg[0] ? cg : "(no cgroup v2)");
		printf("  %-40s %-4s %s\n", "cgroup v2 used as an extra layer", "no",
		       "not implemented");
	}
	if (!f.pidfd_getfd)
		printf("\nWithout pidfd_getfd (Docker's and containerd's default seccomp profiles "
		       "allow it\n"
		       "only with CAP_SYS_PTRACE): the listener reaches the supervisor with "
		       "SCM_RIGHTS and\n"
		       "the program's descriptors are reopened through /proc/PID/fd. What that "
		       "costs:\n"
		       "  - sockets: the supervisor creates them (socket, socketpair, accept) and "
		       "keeps a\n"
		       "    reference; close, close_range, dup2 and dup3 are notified so it can "
		       "let go\n"
		       "    (a round trip per close); a blocking accept defers the caller's "
		       "signal handlers;\n"
		       "    sockets from outside the tree fail closed (docs/network.md "
		       "\"In a container\");\n"
		       "  - inotify instances are made by the supervisor too; F_SETOWN_EX, "
		       "FIOSETOWN and\n"
		       "    SIOCSPGRP work on sockets only (EPERM on other fds), F_SETOWN runs "
		       "in the kernel\n"
		       "    after its check; pidfd_send_signal finds the pid through fdinfo;\n"
		       "  - getdents64: a dup of the directory fd no longer shares its offset.\n");
	if (!f.process_vm_readv)
		printf("\nWithout process_vm_readv/writev (containerd's profile, Docker's before "
		       "23.0): child memory "
		       "goes through\n/proc/PID/mem (one more open per access).\n");
	if (!f.userns)
		printf("\nWithout user namespaces (refused by default container profiles): no "
		       "kernel view\n(tracer.kernel_view = true fails; \"auto\" uses the "
		       "emulated view) and, as a\nplain user, no network.unshare.\n");
	missing = tracer_features_missing(&f);
	if (missing) {
		printf("\nMissing an essential feature: %s\n", missing);
		return EXIT_SANDBOX_ERROR;
	}
	printf("\nAll essential features are present.\n");
	return 0;
}
