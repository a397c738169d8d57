/* SPDX-License-Identifier: MIT */
/*
 * The syscall table: the one list that both builds the seccomp filter (tracer/filter.c) and
 * dispatches notifications (tracer/dispatch.c), so the two can never disagree.
 *
 * Every syscall the sandbox lets run is listed here; anything else, including syscalls newer
 * than this table, fails with ENOSYS in the kernel (default deny). An entry is
 *   - allowed in the kernel: no handler, EMU_FULL (the fast path: the kernel's seccomp
 *     action cache skips the filter entirely for these on x86_64);
 *   - denied: EMU_DENIED, the policy's deny_errno (default EPERM), with a note saying why;
 *   - notified: a handler and EMU_NOTIFY; the supervisor decides.
 * Argument conditions (clone namespace flags, ioctl TIOCSTI, seccomp NEW_LISTENER, …) are
 * added on top by tracer/filter.c, which names the entries it refines.
 *
 * Path-taking syscalls are not listed here: emulation/fs.h has them (emu_fs_entries), and
 * tracer/fs.c adds them to the filter as notified entries.
 */
#include "emulation/process.h"
#include "net/handlers.h"

#define ALLOW(n)                                                                                   \
	{                                                                                          \
		.name = (n), .support = EMU_FULL                                                   \
	}
#define DENY(n, why)                                                                               \
	{                                                                                          \
		.name = (n), .support = EMU_DENIED, .note = (why)                                  \
	}
#define NOTIFY(n, h, s, why)                                                                       \
	{                                                                                          \
		.name = (n), .handler = (h), .support = (s), .flags = EMU_NOTIFY, .note = (why)    \
	}

#define NET_NOTIFY_BLOCKING(n, h, s, why)                                                          \
	{                                                                                          \
		.name = (n), .handler = (h), .support = (s),                                       \
		.flags = EMU_NOTIFY | EMU_MAY_BLOCK | EMU_KERNEL_INTR, .note = (why)               \
	}

static const EmuEntry table[] = {
	/* memory */
	ALLOW("brk"),
	ALLOW("mmap"),
	ALLOW("munmap"),
	ALLOW("mprotect"),
	ALLOW("mremap"),
	ALLOW("msync"),
	ALLOW("mincore"),
	ALLOW("madvise"),
	ALLOW("mlock"),
	ALLOW("mlock2"),
	ALLOW("munlock"),
	ALLOW("mlockall"),
	ALLOW("munlockall"),
	ALLOW("remap_file_pages"),
	ALLOW("mbind"),
	ALLOW("set_mempolicy"),
	ALLOW("get_mempolicy"),
	ALLOW("set_mempolicy_home_node"),
	ALLOW("pkey_mprotect"),
	ALLOW("pkey_alloc"),
	ALLOW("pkey_free"),
	ALLOW("membarrier"),
	ALLOW("memfd_create"),
	ALLOW("memfd_secret"),
	ALLOW("map_shadow_stack"),
	ALLOW("mseal"),
	ALLOW("cachestat"),

	/* file descriptors (no path) */
	ALLOW("read"),
	ALLOW("write"),
	ALLOW("close"),
	ALLOW("close_range"),
	ALLOW("fstat"),
	ALLOW("lseek"),
	ALLOW("pread64"),
	ALLOW("pwrite64"),
	ALLOW("readv"),
	ALLOW("writev"),
	ALLOW("preadv"),
	ALLOW("pwritev"),
	ALLOW("preadv2"),
	ALLOW("pwritev2"),
	ALLOW("dup"),
	ALLOW("dup2"),
	ALLOW("dup3"),
	ALLOW("pipe"),
	ALLOW("pipe2"),
	ALLOW("sendfile"),
	ALLOW("splice"),
	ALLOW("tee"),
	ALLOW("vmsplice"),
	ALLOW("copy_file_range"),
	ALLOW("flock"),
	ALLOW("fsync"),
	ALLOW("fdatasync"),
	ALLOW("syncfs"),
	ALLOW("sync"),
	ALLOW("sync_file_range"),
	ALLOW("ftruncate"),
	ALLOW("fallocate"),
	ALLOW("fadvise64"),
	ALLOW("readahead"),
	ALLOW("getdents"),
	ALLOW("getdents64"),
	/* fchmod, fchown, fsetxattr, fremovexattr: emu_fs_entries (the mount's mode) */
	ALLOW("fstatfs"),
	ALLOW("fchdir"),
	ALLOW("fgetxattr"),
	ALLOW("flistxattr"),
	/* ioctl: TIOCSTI and TIOCLINUX are denied, FIOSETOWN and SIOCSPGRP (a SIGIO owner,
	 * like F_SETOWN) and the inode-changing FS_IOC_* notified, the rest allowed:
	 * tracer/filter.c */
	NOTIFY("ioctl", emu_handle_ioctl, EMU_FULL, NULL),
	/* fcntl: F_SETOWN and F_SETOWN_EX are notified (tracer/filter.c): they name a
	 * process that later receives SIGIO/SIGURG */
	NOTIFY("fcntl", emu_handle_fcntl_owner, EMU_FULL, NULL),

	/* polling, events, timers */
	ALLOW("select"),
	ALLOW("pselect6"),
	ALLOW("poll"),
	ALLOW("ppoll"),
	ALLOW("epoll_create"),
	ALLOW("epoll_create1"),
	ALLOW("epoll_ctl"),
	ALLOW("epoll_wait"),
	ALLOW("epoll_pwait"),
	ALLOW("epoll_pwait2"),
	ALLOW("eventfd"),
	ALLOW("eventfd2"),
	ALLOW("signalfd"),
	ALLOW("signalfd4"),
	ALLOW("timerfd_create"),
	ALLOW("timerfd_settime"),
	ALLOW("timerfd_gettime"),
	ALLOW("inotify_init"),
	ALLOW("inotify_init1"),
	ALLOW("inotify_rm_watch"),
	ALLOW("nanosleep"),
	ALLOW("clock_nanosleep"),
	ALLOW("clock_gettime"),
	ALLOW("clock_getres"),
	ALLOW("gettimeofday"),
	ALLOW("time"),
	ALLOW("getitimer"),
	ALLOW("setitimer"),
	ALLOW("alarm"),
	ALLOW("timer_create"),
	ALLOW("timer_settime"),
	ALLOW("timer_gettime"),
	ALLOW("timer_getoverrun"),
	ALLOW("timer_delete"),
	ALLOW("pause"),
	ALLOW("futex"),
	ALLOW("futex_waitv"),
	ALLOW("futex_wake"),
	ALLOW("futex_wait"),
	ALLOW("futex_requeue"),
	ALLOW("set_robust_list"),
	ALLOW("get_robust_list"),
	ALLOW("restart_syscall"),
	ALLOW("io_setup"),
	ALLOW("io_destroy"),
	ALLOW("io_getevents"),
	ALLOW("io_pgetevents"),
	ALLOW("io_submit"),
	ALLOW("io_cancel"),

	/* sockets: the address-taking calls are decided on the supervisor's copy and performed
	 * on a duplicate of the child's socket (net/handlers.c, docs/network.md); sendto and
	 * recvfrom are notified only with an address (tracer/filter.c) */
	NOTIFY("socket", net_handle_socket, EMU_FULL, NULL),
	NOTIFY("socketpair", net_handle_socketpair, EMU_PARTIAL, "AF_UNIX only"),
	NET_NOTIFY_BLOCKING("connect", net_handle_connect, EMU_PARTIAL,
			    "AF_UNIX paths: network.unix list until the file-system view"),
	ALLOW("accept"),
	ALLOW("accept4"),
	NOTIFY("bind", net_handle_bind, EMU_PARTIAL,
	       "AF_UNIX paths: network.unix list until the file-system view"),
	NOTIFY("listen", net_handle_listen, EMU_FULL, NULL),
	NET_NOTIFY_BLOCKING("sendto", net_handle_sendto, EMU_PARTIAL,
			    "at most 64 KiB of data per call"),
	{.name = "recvfrom",
	 .handler = net_handle_recvfrom,
	 .support = EMU_FULL,
	 .flags = EMU_NOTIFY | EMU_KERNEL_INTR},
	NET_NOTIFY_BLOCKING("sendmsg", net_handle_sendmsg, EMU_PARTIAL,
			    "at most 64 KiB of data and 4 KiB of control data per call"),
	ALLOW("recvmsg"),
	NET_NOTIFY_BLOCKING("sendmmsg", net_handle_sendmmsg, EMU_PARTIAL,
			    "at most 8 messages of 64 KiB per call"),
	ALLOW("recvmmsg"),
	ALLOW("shutdown"),
	/* an AF_UNIX name bound under an alias (no user namespace) is given back as bound */
	NOTIFY("getsockname", net_handle_sockname, EMU_FULL, NULL),
	NOTIFY("getpeername", net_handle_sockname, EMU_FULL, NULL),
	/* setsockopt: only the options that change where packets go are notified
	 * (tracer/filter.c, net_handle_setsockopt) */
	NOTIFY("setsockopt", net_handle_setsockopt, EMU_FULL, NULL),
	ALLOW("getsockopt"),

	/* file-system: the path-taking syscalls (open, stat, …, chdir, getcwd, execve) are
	 * emulated in the virtual view: emulation/fs.h lists them (emu_fs_entries) and
	 * tracer/fs.c adds them to the filter as notified entries. */
	ALLOW("umask"),

	/* processes and threads. clone is checked in the filter (namespace flags denied);
	 * clone3 passes its flags in memory the filter cannot see: ENOSYS (tracer/filter.c)
	 * makes libc fall back to clone. */
	ALLOW("clone"),
	ALLOW("fork"),
	ALLOW("vfork"),
	ALLOW("clone3"),
	ALLOW("exit"),
	ALLOW("exit_group"),
	ALLOW("wait4"),
	ALLOW("waitid"),
	ALLOW("set_tid_address"),
	ALLOW("arch_prctl"),
	ALLOW("prctl"),
	ALLOW("rseq"),
	ALLOW("getpid"),
	ALLOW("gettid"),
	ALLOW("getppid"),
	ALLOW("getpgrp"),
	ALLOW("getpgid"),
	ALLOW("getsid"),
	ALLOW("setsid"),
	ALLOW("uname"),
	ALLOW("sysinfo"),
	ALLOW("times"),
	ALLOW("getrusage"),
	ALLOW("getrlimit"),
	ALLOW("setrlimit"),
	ALLOW("getrandom"),
	ALLOW("getcpu"),
	ALLOW("getpriority"),
	ALLOW("sched_yield"),
	ALLOW("sched_getparam"),
	ALLOW("sched_getscheduler"),
	ALLOW("sched_getattr"),
	ALLOW("sched_getaffinity"),
	ALLOW("sched_get_priority_max"),
	ALLOW("sched_get_priority_min"),
	ALLOW("sched_rr_get_interval"),
	ALLOW("ioprio_get"),
	ALLOW("capget"),
	ALLOW("capset"),
	ALLOW("personality"),
	ALLOW("seccomp"),
	ALLOW("pidfd_open"),
	ALLOW("landlock_create_ruleset"),
	ALLOW("landlock_add_rule"),
	ALLOW("landlock_restrict_self"),
	ALLOW("sysfs"),
	ALLOW("ustat"),

	/* credentials (only ever within what the invoking user already has: NO_NEW_PRIVS) */
	ALLOW("getuid"),
	ALLOW("geteuid"),
	ALLOW("getgid"),
	ALLOW("getegid"),
	ALLOW("getresuid"),
	ALLOW("getresgid"),
	ALLOW("getgroups"),
	ALLOW("setuid"),
	ALLOW("setgid"),
	ALLOW("setreuid"),
	ALLOW("setregid"),
	ALLOW("setresuid"),
	ALLOW("setresgid"),
	ALLOW("setfsuid"),
	ALLOW("setfsgid"),
	ALLOW("setgroups"),

	/* System V and POSIX IPC */
	ALLOW("shmget"),
	ALLOW("shmat"),
	ALLOW("shmctl"),
	ALLOW("shmdt"),
	ALLOW("semget"),
	ALLOW("semop"),
	ALLOW("semtimedop"),
	ALLOW("semctl"),
	ALLOW("msgget"),
	ALLOW("msgsnd"),
	ALLOW("msgrcv"),
	ALLOW("msgctl"),
	ALLOW("mq_open"),
	ALLOW("mq_unlink"),
	ALLOW("mq_timedsend"),
	ALLOW("mq_timedreceive"),
	ALLOW("mq_notify"),
	ALLOW("mq_getsetattr"),

	/* signals to oneself */
	ALLOW("rt_sigaction"),
	ALLOW("rt_sigprocmask"),
	ALLOW("rt_sigreturn"),
	ALLOW("rt_sigpending"),
	ALLOW("rt_sigtimedwait"),
	ALLOW("rt_sigsuspend"),
	ALLOW("sigaltstack"),

	/* signals to others: checked against the tree and delivered by the supervisor */
	NOTIFY("kill", emu_handle_signal, EMU_PARTIAL,
	       "delivered by the supervisor: si_pid is the supervisor's"),
	NOTIFY("tkill", emu_handle_signal, EMU_PARTIAL,
	       "delivered by the supervisor: si_pid is the supervisor's"),
	NOTIFY("tgkill", emu_handle_signal, EMU_PARTIAL,
	       "delivered by the supervisor: si_pid is the supervisor's"),
	NOTIFY("rt_sigqueueinfo", emu_handle_signal, EMU_FULL, NULL),
	NOTIFY("rt_tgsigqueueinfo", emu_handle_signal, EMU_FULL, NULL),
	NOTIFY("pidfd_send_signal", emu_handle_signal, EMU_PARTIAL,
	       "PIDFD_SIGNAL_PROCESS_GROUP not supported"),

	/* calls naming another process: notified when the pid argument is not 0 (self), and
	 * allowed only for processes of the tree (tracer/filter.c) */
	NOTIFY("prlimit64", emu_handle_pid_target, EMU_FULL, NULL),
	/* joining a process group: only groups of the tree (notified when pgid is not 0) */
	NOTIFY("setpgid", emu_handle_pid_target, EMU_PARTIAL,
	       "a group whose leader has exited cannot be joined"),
	NOTIFY("sched_setaffinity", emu_handle_pid_target, EMU_FULL, NULL),
	NOTIFY("sched_setparam", emu_handle_pid_target, EMU_FULL, NULL),
	NOTIFY("sched_setscheduler", emu_handle_pid_target, EMU_FULL, NULL),
	NOTIFY("sched_setattr", emu_handle_pid_target, EMU_FULL, NULL),
	NOTIFY("setpriority", emu_handle_pid_target, EMU_PARTIAL, "PRIO_USER is denied"),
	NOTIFY("ioprio_set", emu_handle_pid_target, EMU_PARTIAL, "IOPRIO_WHO_USER is denied"),
	NOTIFY("migrate_pages", emu_handle_pid_target, EMU_FULL, NULL),
	NOTIFY("move_pages", emu_handle_pid_target, EMU_FULL, NULL),

	/* denied: what Docker's default profile denies, and more (DESIGN.md) */
	DENY("ptrace", "reaches other processes' memory and registers"),
	DENY("process_vm_readv", "reads another process's memory"),
	DENY("process_vm_writev", "writes another process's memory"),
	DENY("process_madvise", "acts on another process's memory"),
	DENY("process_mrelease", "acts on another process"),
	DENY("pidfd_getfd", "steals another process's file descriptors"),
	DENY("kcmp", "compares kernel objects of other processes"),
	DENY("io_uring_setup", "io_uring operations bypass seccomp"),
	DENY("io_uring_enter", "io_uring operations bypass seccomp"),
	DENY("io_uring_register", "io_uring operations bypass seccomp"),
	DENY("bpf", "kernel attack surface"),
	DENY("perf_event_open", "kernel attack surface"),
	DENY("userfaultfd", "widens kernel race windows"),
	DENY("kexec_load", "replaces the kernel"),
	DENY("kexec_file_load", "replaces the kernel"),
	DENY("init_module", "loads kernel code"),
	DENY("finit_module", "loads kernel code"),
	DENY("delete_module", "unloads kernel code"),
	DENY("create_module", "obsolete"),
	DENY("get_kernel_syms", "obsolete"),
	DENY("query_module", "obsolete"),
	DENY("mount", "mount API"),
	DENY("umount2", "mount API"),
	DENY("fsopen", "mount API"),
	DENY("fsconfig", "mount API"),
	DENY("fsmount", "mount API"),
	DENY("fspick", "mount API"),
	DENY("move_mount", "mount API"),
	DENY("open_tree", "mount API"),
	DENY("mount_setattr", "mount API"),
	DENY("statmount", "mount API"),
	DENY("listmount", "mount API"),
	DENY("pivot_root", "changes the root"),
	DENY("chroot", "changes the root"),
	DENY("unshare", "namespaces"),
	DENY("setns", "namespaces"),
	DENY("keyctl", "kernel keyring"),
	DENY("add_key", "kernel keyring"),
	DENY("request_key", "kernel keyring"),
	DENY("open_by_handle_at", "opens files by handle, around any path check"),
	DENY("name_to_handle_at", "file handles"),
	DENY("acct", "host accounting"),
	DENY("quotactl", "host quotas"),
	DENY("quotactl_fd", "host quotas"),
	DENY("reboot", "host"),
	DENY("swapon", "host"),
	DENY("swapoff", "host"),
	DENY("settimeofday", "host clock"),
	DENY("clock_settime", "host clock"),
	DENY("clock_adjtime", "host clock"),
	DENY("adjtimex", "host clock"),
	DENY("sethostname", "host name"),
	DENY("setdomainname", "host name"),
	DENY("lookup_dcookie", "kernel internals"),
	DENY("syslog", "kernel log"),
	DENY("vhangup", "terminal"),
	DENY("iopl", "I/O ports"),
	DENY("ioperm", "I/O ports"),
	DENY("modify_ldt", "kernel attack surface"),
	DENY("uselib", "obsolete"),
	DENY("_sysctl", "obsolete"),
	DENY("nfsservctl", "obsolete"),
	DENY("fanotify_init", "watches the host file system"),
	DENY("fanotify_mark", "watches the host file system"),
	DENY("vm86", "i386 only"),
	DENY("vm86old", "i386 only"),
};

const EmuEntry *emu_table(size_t *ret_n)
{
	*ret_n = sizeof(table) / sizeof(table[0]);
	return table;
}
