/* SPDX-License-Identifier: MIT */
/*
 * The syscall table: one row per syscall, by libseccomp name (syscalls/syscalls.h says
 * what reads each column). A row is
 *   - ALLOW: runs in the kernel. The fast path: the kernel's seccomp action cache skips the
 *     filter for these on x86_64;
 *   - NOTIFY: the handler named in the row answers (emulation/ or net/, one hop away);
 *   - DENY: notified, so that each denial is counted and audited, and answered with the
 *     policy's errno (default EPERM), with a note saying why;
 *   - ENOSYS: the filter answers it (clone3).
 * Anything without a row, including syscalls newer than the table, fails with ENOSYS in the
 * kernel (default deny). A row's check adds a register-only argument test to the filter
 * (tracer/filter.c, emit_special()); its flags route it under budgets, in the kernel view
 * and in a pid namespace. Every notified row has an audit layout, every partial one a note.
 * tests/unit/syscalls/test-syscalls-table.c checks that, and that each name is libseccomp's
 * and appears once.
 */
#include "syscalls/syscalls.h"

#include <pthread.h>
#include <string.h>

#include "audit/audit.h"
#include "common/macros.h"
#include "emulation/fs.h"
#include "emulation/process.h"
#include "net/handlers.h"
#include "policy/policy.h"

#define ALLOW(n, ...)                                                                              \
	{                                                                                          \
		.name = (n), .action = SYSCALL_ALLOW, __VA_ARGS__                                  \
	}
#define NOTIFY(n, h, ...)                                                                          \
	{                                                                                          \
		.name = (n), .action = SYSCALL_NOTIFY, .handler = (h), .handler_name = #h,         \
		__VA_ARGS__                                                                        \
	}
#define DENY(n, why, ...)                                                                          \
	{                                                                                          \
		.name = (n), .action = SYSCALL_DENY, .support = EMU_DENIED, .note = (why),         \
		__VA_ARGS__                                                                        \
	}
/* the handler where pidfd_getfd is refused (net/socktab.c) */
#define NOGETFD(h)   .nogetfd_handler = (h), .nogetfd_handler_name = #h
#define PARTIAL(why) .support = EMU_PARTIAL, .note = (why)

/* audit event kinds (policy/policy.h) */
#define F		   AUDIT_EVENT_FILE
#define X		   AUDIT_EVENT_EXEC
#define N		   AUDIT_EVENT_NETWORK
#define P		   AUDIT_EVENT_PROCESS
#define S		   AUDIT_EVENT_SIGNAL
#define O		   AUDIT_EVENT_SYSCALL /* any other */
#define AUDIT(cat, layout) .category = (cat), .audit = (layout)

/* path-taking: emulated in the view, run in the kernel by the kernel view */
#define FS(n, h, cat, layout, ...)                                                                 \
	NOTIFY(n, h, .flags = SYSCALL_PATH, AUDIT(cat, layout), __VA_ARGS__)

#define NET_BLOCKING (EMU_MAY_BLOCK | EMU_KERNEL_INTR)
#define SI_PID_NOTE  "delivered by the supervisor: si_pid is the supervisor's"
#define XATTR_NOTE   "values up to 4096 bytes"
#define OPEN_NOTE    "a FIFO opened without O_NONBLOCK waits on a worker thread; O_NOCTTY always"
#define EXEC_NOTE                                                                                  \
	"a translated path needs ptrace (rewrite, then /proc/PID/exe checked); without it only "   \
	"identity-mapped files run"

static const SyscallRow table[] = {
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

	/* file descriptors (no path); SYSCALL_GROWS: the disk budget turns their EFBIG into
	 * EDQUOT */
	ALLOW("read"),
	ALLOW("write", .flags = SYSCALL_GROWS),
	ALLOW("close", NOGETFD(net_handle_close), AUDIT(O, "fd:fd")),
	ALLOW("close_range", NOGETFD(net_handle_close), AUDIT(O, "first:fd last:fd flags:hex")),
	ALLOW("fstat"),
	ALLOW("lseek"),
	ALLOW("pread64"),
	ALLOW("pwrite64", .flags = SYSCALL_GROWS),
	ALLOW("readv"),
	ALLOW("writev", .flags = SYSCALL_GROWS),
	ALLOW("preadv"),
	ALLOW("pwritev", .flags = SYSCALL_GROWS),
	ALLOW("preadv2"),
	ALLOW("pwritev2", .flags = SYSCALL_GROWS),
	ALLOW("dup"),
	ALLOW("dup2", NOGETFD(net_handle_close), AUDIT(O, "oldfd:fd newfd:fd")),
	ALLOW("dup3", NOGETFD(net_handle_close), AUDIT(O, "oldfd:fd newfd:fd flags:hex")),
	ALLOW("pipe"),
	ALLOW("pipe2"),
	ALLOW("sendfile", .flags = SYSCALL_GROWS),
	ALLOW("splice", .flags = SYSCALL_GROWS),
	ALLOW("tee"),
	ALLOW("vmsplice"),
	ALLOW("copy_file_range", .flags = SYSCALL_GROWS),
	ALLOW("flock"),
	ALLOW("fsync"),
	ALLOW("fdatasync"),
	ALLOW("syncfs"),
	ALLOW("sync"),
	ALLOW("sync_file_range"),
	ALLOW("ftruncate", .flags = SYSCALL_GROWS),
	/* a disk budget: the modes that may allocate fail with EOPNOTSUPP (tracer/budget.c) */
	ALLOW("fallocate", .flags = SYSCALL_DISK | SYSCALL_GROWS),
	ALLOW("fadvise64"),
	ALLOW("readahead"),
	ALLOW("getdents"),
	ALLOW("fstatfs"),
	ALLOW("fchdir"),
	ALLOW("fgetxattr"),
	ALLOW("flistxattr"),
	NOTIFY("ioctl", emu_handle_ioctl, .check = SYSCALL_CHECK_IOCTL,
	       AUDIT(O, "fd:fd cmd:hex arg:hex"),
	       .note = "TIOCSTI and TIOCLINUX denied; FIOSETOWN, SIOCSPGRP (a SIGIO owner) and the "
		       "inode-changing FS_IOC_SET* notified; the rest runs in the kernel"),
	NOTIFY("fcntl", emu_handle_fcntl_owner, .check = SYSCALL_CHECK_FCNTL, .flags = SYSCALL_PID,
	       AUDIT(F, "fd:fd cmd:fcntl arg:hex"),
	       .note = "F_SETOWN and F_SETOWN_EX notified (the owner gets SIGIO/SIGURG); the rest "
		       "runs in the kernel"),

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
	ALLOW("inotify_init", NOGETFD(net_handle_inotify_init), AUDIT(O, "")),
	ALLOW("inotify_init1", NOGETFD(net_handle_inotify_init), AUDIT(O, "flags:hex")),
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
	 * on a duplicate of the child's socket (net/handlers.c, docs/network.md) */
	NOTIFY("socket", net_handle_socket, AUDIT(N, "domain:domain type:socktype protocol:int")),
	NOTIFY("socketpair", net_handle_socketpair,
	       AUDIT(N, "domain:domain type:socktype protocol:int sv:ptr"),
	       PARTIAL("AF_UNIX only")),
	NOTIFY("connect", net_handle_connect, .flags = NET_BLOCKING,
	       AUDIT(N, "fd:fd addr:sockaddr addrlen:int"),
	       PARTIAL("may wait in the supervisor; interrupted before the supervisor read it, it "
		       "fails with EINTR (as it may natively)")),
	ALLOW("accept", NOGETFD(net_handle_accept), .flags = EMU_MAY_BLOCK,
	      AUDIT(N, "fd:fd addr:ptr addrlen:ptr"),
	      PARTIAL("where pidfd_getfd is refused: a blocking accept defers handled signals")),
	ALLOW("accept4", NOGETFD(net_handle_accept), .flags = EMU_MAY_BLOCK,
	      AUDIT(N, "fd:fd addr:ptr addrlen:ptr flags:socktype"),
	      PARTIAL("where pidfd_getfd is refused: a blocking accept defers handled signals")),
	NOTIFY("bind", net_handle_bind, AUDIT(N, "fd:fd addr:sockaddr addrlen:int")),
	NOTIFY("listen", net_handle_listen, AUDIT(N, "fd:fd backlog:int")),
	/* sendto and recvfrom are notified only with an address */
	NOTIFY("sendto", net_handle_sendto, .flags = NET_BLOCKING, .check = SYSCALL_CHECK_ADDR_ARG4,
	       AUDIT(N, "fd:fd buf:ptr len:long flags:hex addr:sockaddr addrlen:int"),
	       PARTIAL("at most 64 KiB of data per call")),
	NOTIFY("recvfrom", net_handle_recvfrom, .flags = EMU_KERNEL_INTR,
	       .check = SYSCALL_CHECK_ADDR_ARG4,
	       AUDIT(O, "fd:fd buf:ptr len:long flags:hex addr:ptr addrlen:ptr")),
	NOTIFY("sendmsg", net_handle_sendmsg, .flags = NET_BLOCKING,
	       AUDIT(N, "fd:fd msg:ptr flags:hex"),
	       PARTIAL("at most 64 KiB of data and 4 KiB of control data per call")),
	ALLOW("recvmsg"),
	NOTIFY("sendmmsg", net_handle_sendmmsg, .flags = NET_BLOCKING,
	       AUDIT(N, "fd:fd msgvec:ptr vlen:int flags:hex"),
	       PARTIAL("at most 8 messages of 64 KiB per call")),
	ALLOW("recvmmsg"),
	ALLOW("shutdown"),
	NOTIFY("getsockname", net_handle_sockname, AUDIT(O, "fd:fd addr:ptr addrlen:ptr"),
	       .note = "an AF_UNIX name bound under an alias is given back as bound"),
	NOTIFY("getpeername", net_handle_sockname, AUDIT(O, "fd:fd addr:ptr addrlen:ptr"),
	       .note = "an AF_UNIX name bound under an alias is given back as bound"),
	NOTIFY("setsockopt", net_handle_setsockopt, .check = SYSCALL_CHECK_SETSOCKOPT,
	       AUDIT(O, "fd:fd level:int optname:int optval:ptr optlen:int"),
	       .note = "only the options that change where packets go are notified"),
	ALLOW("getsockopt"),

	/* file system: the path-taking calls, emulated in the virtual view (emulation/fs-*.c,
	 * docs/filesystem.md) */
	FS("open", emu_handle_open, F, "path:path flags:oflags mode:mode", PARTIAL(OPEN_NOTE)),
	FS("openat", emu_handle_open, F, "dirfd:dirfd path:path flags:oflags mode:mode",
	   PARTIAL(OPEN_NOTE)),
	FS("openat2", emu_handle_open, F, "dirfd:dirfd path:path how:ptr size:long",
	   PARTIAL("RESOLVE_IN_ROOT acts as RESOLVE_BENEATH; RESOLVE_NO_XDEV and "
		   "RESOLVE_NO_MAGICLINKS not enforced")),
	FS("creat", emu_handle_open, F, "path:path mode:mode"),
	FS("stat", emu_handle_stat, F, "path:path statbuf:ptr"),
	FS("lstat", emu_handle_stat, F, "path:path statbuf:ptr"),
	FS("newfstatat", emu_handle_stat, F, "dirfd:dirfd path:path statbuf:ptr flags:atflags"),
	FS("statx", emu_handle_stat, F,
	   "dirfd:dirfd path:path flags:atflags mask:hex statxbuf:ptr"),
	FS("statfs", emu_handle_statfs, F, "path:path buf:ptr"),
	FS("access", emu_handle_access, F, "path:path mode:amode"),
	FS("faccessat", emu_handle_access, F, "dirfd:dirfd path:path mode:amode"),
	FS("faccessat2", emu_handle_access, F, "dirfd:dirfd path:path mode:amode flags:atflags"),
	FS("readlink", emu_handle_readlink, F, "path:path buf:ptr size:long"),
	FS("readlinkat", emu_handle_readlink, F, "dirfd:dirfd path:path buf:ptr size:long"),
	FS("mkdir", emu_handle_mkdir, F, "path:path mode:mode"),
	FS("mkdirat", emu_handle_mkdir, F, "dirfd:dirfd path:path mode:mode"),
	FS("mknod", emu_handle_mkdir, F, "path:path mode:mode dev:hex",
	   PARTIAL("device nodes: EPERM")),
	FS("mknodat", emu_handle_mkdir, F, "dirfd:dirfd path:path mode:mode dev:hex",
	   PARTIAL("device nodes: EPERM")),
	FS("rmdir", emu_handle_unlink, F, "path:path"),
	FS("unlink", emu_handle_unlink, F, "path:path"),
	FS("unlinkat", emu_handle_unlink, F, "dirfd:dirfd path:path flags:atflags"),
	FS("rename", emu_handle_rename, F, "oldpath:path newpath:path"),
	FS("renameat", emu_handle_rename, F,
	   "olddirfd:dirfd oldpath:path newdirfd:dirfd newpath:path"),
	FS("renameat2", emu_handle_rename, F,
	   "olddirfd:dirfd oldpath:path newdirfd:dirfd newpath:path flags:hex"),
	FS("link", emu_handle_link, F, "oldpath:path newpath:path"),
	FS("linkat", emu_handle_link, F,
	   "olddirfd:dirfd oldpath:path newdirfd:dirfd newpath:path flags:atflags",
	   PARTIAL("AT_EMPTY_PATH: ENOENT")),
	FS("symlink", emu_handle_symlink, F, "target:str linkpath:path"),
	FS("symlinkat", emu_handle_symlink, F, "target:str newdirfd:dirfd linkpath:path"),
	FS("chmod", emu_handle_chmod, F, "path:path mode:mode"),
	FS("fchmodat", emu_handle_chmod, F, "dirfd:dirfd path:path mode:mode"),
	FS("fchmodat2", emu_handle_chmod, F, "dirfd:dirfd path:path mode:mode flags:atflags"),
	FS("chown", emu_handle_chown, F, "path:path owner:int group:int", .uid_args = 1 << 1,
	   .gid_args = 1 << 2),
	FS("lchown", emu_handle_chown, F, "path:path owner:int group:int", .uid_args = 1 << 1,
	   .gid_args = 1 << 2),
	FS("fchownat", emu_handle_chown, F,
	   "dirfd:dirfd path:path owner:int group:int flags:atflags", .uid_args = 1 << 2,
	   .gid_args = 1 << 3),
	FS("truncate", emu_handle_truncate, F, "path:path length:long"),
	FS("utime", emu_handle_utimes, F, "path:path times:ptr"),
	FS("utimes", emu_handle_utimes, F, "path:path times:ptr"),
	FS("futimesat", emu_handle_utimes, F, "dirfd:dirfd path:path times:ptr"),
	FS("utimensat", emu_handle_utimes, F, "dirfd:dirfd path:path times:ptr flags:atflags"),
	FS("setxattr", emu_handle_xattr, F, "path:path name:str value:ptr size:long flags:hex",
	   PARTIAL(XATTR_NOTE)),
	FS("lsetxattr", emu_handle_xattr, F, "path:path name:str value:ptr size:long flags:hex",
	   PARTIAL(XATTR_NOTE)),
	FS("getxattr", emu_handle_xattr, F, "path:path name:str value:ptr size:long",
	   PARTIAL(XATTR_NOTE)),
	FS("lgetxattr", emu_handle_xattr, F, "path:path name:str value:ptr size:long",
	   PARTIAL(XATTR_NOTE)),
	FS("listxattr", emu_handle_xattr, F, "path:path list:ptr size:long",
	   PARTIAL("lists up to 4096 bytes")),
	FS("llistxattr", emu_handle_xattr, F, "path:path list:ptr size:long",
	   PARTIAL("lists up to 4096 bytes")),
	FS("removexattr", emu_handle_xattr, F, "path:path name:str"),
	FS("lremovexattr", emu_handle_xattr, F, "path:path name:str"),
	/* changes through an fd: the view's mode of the fd's file (emu_handle_fd_attr) */
	FS("fchmod", emu_handle_fd_attr, O, "fd:fd mode:mode"),
	FS("fchown", emu_handle_fd_attr, O, "fd:fd owner:int group:int", .uid_args = 1 << 1,
	   .gid_args = 1 << 2),
	FS("fsetxattr", emu_handle_fd_attr, O, "fd:fd name:str value:ptr size:long flags:hex",
	   PARTIAL(XATTR_NOTE)),
	FS("fremovexattr", emu_handle_fd_attr, O, "fd:fd name:str"),
	FS("inotify_add_watch", emu_handle_inotify_add_watch, F, "fd:fd path:path mask:hex"),
	/* chdir and exec: through ptrace when the tracer is on (the path rewrite,
	 * tracer/ptrace.c) */
	{.name = "chdir",
	 .action = SYSCALL_NOTIFY,
	 .handler = emu_handle_chdir,
	 .handler_name = "emu_handle_chdir",
	 .flags = SYSCALL_PATH | EMU_TRACE,
	 AUDIT(F, "path:path"),
	 PARTIAL("a translated directory needs ptrace (the path rewrite); without it EACCES")},
	FS("getcwd", emu_handle_getcwd, F, "buf:ptr size:long"),
	{.name = "getdents64",
	 .action = SYSCALL_NOTIFY,
	 .handler = emu_handle_getdents,
	 .handler_name = "emu_handle_getdents",
	 .flags = SYSCALL_PATH | SYSCALL_LISTINGS,
	 AUDIT(F, "fd:fd dirp:ptr count:long"),
	 PARTIAL("notified only when the view filters listings (hide rules, a /proc mount); "
		 "at most 4096 bytes per call then")},
	{.name = "execve",
	 .action = SYSCALL_NOTIFY,
	 .handler = emu_handle_execve,
	 .handler_name = "emu_handle_execve",
	 .flags = SYSCALL_PATH | EMU_TRACE,
	 AUDIT(X, "path:path argv:argv envp:ptr"),
	 PARTIAL(EXEC_NOTE)},
	{.name = "execveat",
	 .action = SYSCALL_NOTIFY,
	 .handler = emu_handle_execve,
	 .handler_name = "emu_handle_execve",
	 .flags = SYSCALL_PATH | EMU_TRACE,
	 AUDIT(X, "dirfd:dirfd path:path argv:argv envp:ptr flags:atflags"),
	 PARTIAL(EXEC_NOTE)},
	DENY("chroot", "changes the root", .flags = SYSCALL_PATH, AUDIT(F, "path:path")),
	DENY("pivot_root", "changes the root", .flags = SYSCALL_PATH,
	     AUDIT(F, "new_root:path put_old:path")),
	ALLOW("umask"),

	/* processes and threads. clone's namespace flags are denied in the filter; under a
	 * tasks budget clone, fork and vfork stop for the tracer (tracer/budget-tasks.c) */
	ALLOW("clone", .check = SYSCALL_CHECK_CLONE, .flags = SYSCALL_TASKS | SYSCALL_UNTRACED,
	      AUDIT(P, "flags:hex stack:ptr parent_tid:ptr child_tid:ptr tls:ptr")),
	ALLOW("fork", .flags = SYSCALL_TASKS, AUDIT(P, "")),
	ALLOW("vfork", .flags = SYSCALL_TASKS, AUDIT(P, "")),
	{.name = "clone3",
	 .action = SYSCALL_ENOSYS,
	 .support = EMU_DENIED,
	 AUDIT(P, "args:ptr size:long"),
	 .note = "its flags are in memory the filter cannot read: ENOSYS, and libc falls back to "
		 "clone"},
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
	ALLOW("personality", .check = SYSCALL_CHECK_PERSONALITY,
	      .note = "only Docker's values: query, PER_LINUX, UNAME26, PER_LINUX32"),
	ALLOW("seccomp", .check = SYSCALL_CHECK_SECCOMP,
	      .note = "a filter with NEW_LISTENER (a nested supervisor) is denied"),
	ALLOW("pidfd_open"),
	ALLOW("landlock_create_ruleset"),
	ALLOW("landlock_add_rule"),
	ALLOW("landlock_restrict_self"),
	ALLOW("sysfs"),
	ALLOW("ustat"),

	/* credentials (only ever within what the invoking user already has: NO_NEW_PRIVS); in
	 * a user namespace of ours an id outside its map is EPERM, not EINVAL */
	ALLOW("getuid"),
	ALLOW("geteuid"),
	ALLOW("getgid"),
	ALLOW("getegid"),
	ALLOW("getresuid"),
	ALLOW("getresgid"),
	ALLOW("getgroups"),
	ALLOW("setuid", .uid_args = 1 << 0),
	ALLOW("setgid", .gid_args = 1 << 0),
	ALLOW("setreuid", .uid_args = 1 << 0 | 1 << 1),
	ALLOW("setregid", .gid_args = 1 << 0 | 1 << 1),
	ALLOW("setresuid", .uid_args = 1 << 0 | 1 << 1 | 1 << 2),
	ALLOW("setresgid", .gid_args = 1 << 0 | 1 << 1 | 1 << 2),
	ALLOW("setfsuid"),
	ALLOW("setfsgid"),
	ALLOW("setgroups"),

	/* System V and POSIX IPC: SysV objects and POSIX queues by name reach the IPC
	 * namespace's (docs/security.md, "A private IPC world") */
	ALLOW("shmget", .flags = SYSCALL_HOST_IPC),
	ALLOW("shmat", .flags = SYSCALL_HOST_IPC),
	ALLOW("shmctl", .flags = SYSCALL_HOST_IPC),
	ALLOW("shmdt"),
	ALLOW("semget", .flags = SYSCALL_HOST_IPC),
	ALLOW("semop", .flags = SYSCALL_HOST_IPC),
	ALLOW("semtimedop", .flags = SYSCALL_HOST_IPC),
	ALLOW("semctl", .flags = SYSCALL_HOST_IPC),
	ALLOW("msgget", .flags = SYSCALL_HOST_IPC),
	ALLOW("msgsnd", .flags = SYSCALL_HOST_IPC),
	ALLOW("msgrcv", .flags = SYSCALL_HOST_IPC),
	ALLOW("msgctl", .flags = SYSCALL_HOST_IPC),
	ALLOW("mq_open", .flags = SYSCALL_HOST_IPC),
	ALLOW("mq_unlink", .flags = SYSCALL_HOST_IPC),
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
	NOTIFY("kill", emu_handle_signal, .flags = SYSCALL_PID, AUDIT(S, "pid:pid sig:sig"),
	       PARTIAL(SI_PID_NOTE)),
	NOTIFY("tkill", emu_handle_signal, .flags = SYSCALL_PID, AUDIT(S, "tid:pid sig:sig"),
	       PARTIAL(SI_PID_NOTE)),
	NOTIFY("tgkill", emu_handle_signal, .flags = SYSCALL_PID,
	       AUDIT(S, "tgid:pid tid:pid sig:sig"), PARTIAL(SI_PID_NOTE)),
	NOTIFY("rt_sigqueueinfo", emu_handle_signal, .flags = SYSCALL_PID,
	       AUDIT(S, "tgid:pid sig:sig info:ptr")),
	NOTIFY("rt_tgsigqueueinfo", emu_handle_signal, .flags = SYSCALL_PID,
	       AUDIT(S, "tgid:pid tid:pid sig:sig info:ptr")),
	NOTIFY("pidfd_send_signal", emu_handle_signal, .flags = SYSCALL_PID,
	       AUDIT(S, "pidfd:fd sig:sig info:ptr flags:hex"),
	       PARTIAL("PIDFD_SIGNAL_PROCESS_GROUP not supported")),

	/* calls naming another process: notified when the pid argument is not 0 (self), and
	 * allowed only for processes of the tree */
	NOTIFY("prlimit64", emu_handle_pid_target, .check = SYSCALL_CHECK_PID_ARG0,
	       .flags = SYSCALL_PID,
	       AUDIT(P, "pid:pid resource:resource new_limit:ptr old_limit:ptr")),
	/* joining a process group: only groups of the tree (notified when pgid is not 0) */
	NOTIFY("setpgid", emu_handle_pid_target, .check = SYSCALL_CHECK_PID_ARG1,
	       .flags = SYSCALL_PID, AUDIT(P, "pid:pid pgid:pid"),
	       PARTIAL("a group whose leader has exited cannot be joined")),
	NOTIFY("sched_setaffinity", emu_handle_pid_target, .check = SYSCALL_CHECK_PID_ARG0,
	       .flags = SYSCALL_PID, AUDIT(P, "pid:pid size:long mask:ptr")),
	NOTIFY("sched_setparam", emu_handle_pid_target, .check = SYSCALL_CHECK_PID_ARG0,
	       .flags = SYSCALL_PID, AUDIT(P, "pid:pid param:ptr")),
	NOTIFY("sched_setscheduler", emu_handle_pid_target, .check = SYSCALL_CHECK_PID_ARG0,
	       .flags = SYSCALL_PID, AUDIT(P, "pid:pid policy:int param:ptr")),
	NOTIFY("sched_setattr", emu_handle_pid_target, .check = SYSCALL_CHECK_PID_ARG0,
	       .flags = SYSCALL_PID, AUDIT(P, "pid:pid attr:ptr flags:hex")),
	NOTIFY("setpriority", emu_handle_pid_target, .flags = SYSCALL_PID,
	       AUDIT(P, "which:int who:int prio:int"), PARTIAL("PRIO_USER is denied")),
	NOTIFY("ioprio_set", emu_handle_pid_target, .flags = SYSCALL_PID,
	       AUDIT(P, "which:int who:int ioprio:hex"), PARTIAL("IOPRIO_WHO_USER is denied")),
	NOTIFY("migrate_pages", emu_handle_pid_target, .check = SYSCALL_CHECK_PID_ARG0,
	       .flags = SYSCALL_PID, AUDIT(P, "pid:pid maxnode:long old_nodes:ptr new_nodes:ptr")),
	NOTIFY("move_pages", emu_handle_pid_target, .check = SYSCALL_CHECK_PID_ARG0,
	       .flags = SYSCALL_PID,
	       AUDIT(P, "pid:pid count:long pages:ptr nodes:ptr status:ptr flags:hex")),

	/* denied: what Docker's default profile denies, and more (DESIGN.md). Strings of
	 * denied calls are shown as pointers: the supervisor does not read them. */
	DENY("ptrace", "reaches other processes' memory and registers",
	     AUDIT(P, "request:long pid:pid addr:ptr data:ptr")),
	DENY("process_vm_readv", "reads another process's memory",
	     AUDIT(O, "pid:pid local_iov:ptr liovcnt:long remote_iov:ptr riovcnt:long flags:hex")),
	DENY("process_vm_writev", "writes another process's memory",
	     AUDIT(O, "pid:pid local_iov:ptr liovcnt:long remote_iov:ptr riovcnt:long flags:hex")),
	DENY("process_madvise", "acts on another process's memory",
	     AUDIT(O, "pidfd:fd iovec:ptr vlen:long advice:int flags:hex")),
	DENY("process_mrelease", "acts on another process", AUDIT(O, "pidfd:fd flags:hex")),
	DENY("pidfd_getfd", "steals another process's file descriptors",
	     AUDIT(O, "pidfd:fd targetfd:int flags:hex")),
	DENY("kcmp", "compares kernel objects of other processes",
	     AUDIT(O, "pid1:pid pid2:pid type:int idx1:long idx2:long")),
	DENY("io_uring_setup", "io_uring operations bypass seccomp",
	     AUDIT(O, "entries:int params:ptr")),
	DENY("io_uring_enter", "io_uring operations bypass seccomp",
	     AUDIT(O, "fd:fd to_submit:int min_complete:int flags:hex sig:ptr sigsz:long")),
	DENY("io_uring_register", "io_uring operations bypass seccomp",
	     AUDIT(O, "fd:fd opcode:int arg:ptr nr_args:int")),
	DENY("bpf", "kernel attack surface", AUDIT(O, "cmd:int attr:ptr size:int")),
	DENY("perf_event_open", "kernel attack surface",
	     AUDIT(O, "attr:ptr pid:pid cpu:int group_fd:fd flags:hex")),
	DENY("userfaultfd", "widens kernel race windows", AUDIT(O, "flags:hex")),
	DENY("kexec_load", "replaces the kernel",
	     AUDIT(O, "entry:hex nr_segments:long segments:ptr flags:hex")),
	DENY("kexec_file_load", "replaces the kernel",
	     AUDIT(O, "kernel_fd:fd initrd_fd:fd cmdline_len:long cmdline:ptr flags:hex")),
	DENY("init_module", "loads kernel code", AUDIT(O, "image:ptr len:long params:ptr")),
	DENY("finit_module", "loads kernel code", AUDIT(O, "fd:fd params:ptr flags:hex")),
	DENY("delete_module", "unloads kernel code", AUDIT(O, "name:ptr flags:hex")),
	DENY("create_module", "obsolete", AUDIT(O, "name:ptr size:long")),
	DENY("get_kernel_syms", "obsolete", AUDIT(O, "table:ptr")),
	DENY("query_module", "obsolete",
	     AUDIT(O, "name:ptr which:int buf:ptr bufsize:long ret:ptr")),
	DENY("mount", "mount API",
	     AUDIT(F, "source:str target:path fstype:str flags:hex data:ptr")),
	DENY("umount2", "mount API", AUDIT(F, "target:path flags:hex")),
	DENY("fsopen", "mount API", AUDIT(O, "fsname:ptr flags:hex")),
	DENY("fsconfig", "mount API", AUDIT(O, "fd:fd cmd:int key:ptr value:ptr aux:int")),
	DENY("fsmount", "mount API", AUDIT(O, "fd:fd flags:hex attr_flags:hex")),
	DENY("fspick", "mount API", AUDIT(O, "dirfd:dirfd path:ptr flags:hex")),
	DENY("move_mount", "mount API",
	     AUDIT(O, "from_dirfd:dirfd from_path:ptr to_dirfd:dirfd to_path:ptr flags:hex")),
	DENY("open_tree", "mount API", AUDIT(O, "dirfd:dirfd path:ptr flags:hex")),
	DENY("mount_setattr", "mount API",
	     AUDIT(O, "dirfd:dirfd path:ptr flags:hex attr:ptr size:long")),
	DENY("statmount", "mount API", AUDIT(O, "req:ptr buf:ptr bufsize:long flags:hex")),
	DENY("listmount", "mount API", AUDIT(O, "req:ptr mnt_ids:ptr nr_mnt_ids:long flags:hex")),
	DENY("unshare", "namespaces", AUDIT(P, "flags:hex")),
	DENY("setns", "namespaces", AUDIT(P, "fd:fd nstype:hex")),
	DENY("keyctl", "kernel keyring",
	     AUDIT(O, "option:int arg2:hex arg3:hex arg4:hex arg5:hex")),
	DENY("add_key", "kernel keyring",
	     AUDIT(O, "type:ptr description:ptr payload:ptr plen:long keyring:int")),
	DENY("request_key", "kernel keyring",
	     AUDIT(O, "type:ptr description:ptr callout_info:ptr dest_keyring:int")),
	DENY("open_by_handle_at", "opens files by handle, around any path check",
	     AUDIT(O, "mount_fd:fd handle:ptr flags:oflags")),
	DENY("name_to_handle_at", "file handles",
	     AUDIT(O, "dirfd:dirfd path:ptr handle:ptr mount_id:ptr flags:atflags")),
	DENY("acct", "host accounting", AUDIT(O, "path:ptr")),
	DENY("quotactl", "host quotas", AUDIT(O, "cmd:hex special:ptr id:int addr:ptr")),
	DENY("quotactl_fd", "host quotas", AUDIT(O, "fd:fd cmd:hex id:int addr:ptr")),
	DENY("reboot", "host", AUDIT(O, "magic:hex magic2:hex cmd:hex arg:ptr")),
	DENY("swapon", "host", AUDIT(O, "path:ptr flags:hex")),
	DENY("swapoff", "host", AUDIT(O, "path:ptr")),
	DENY("settimeofday", "host clock", AUDIT(O, "tv:ptr tz:ptr")),
	DENY("clock_settime", "host clock", AUDIT(O, "clockid:int tp:ptr")),
	DENY("clock_adjtime", "host clock", AUDIT(O, "clockid:int buf:ptr")),
	DENY("adjtimex", "host clock", AUDIT(O, "buf:ptr")),
	DENY("sethostname", "host name", AUDIT(O, "name:ptr len:long")),
	DENY("setdomainname", "host name", AUDIT(O, "name:ptr len:long")),
	DENY("lookup_dcookie", "kernel internals", AUDIT(O, "cookie:hex buf:ptr len:long")),
	DENY("syslog", "kernel log", AUDIT(O, "type:int buf:ptr len:int")),
	DENY("vhangup", "terminal", AUDIT(O, "")),
	DENY("iopl", "I/O ports", AUDIT(O, "level:int")),
	DENY("ioperm", "I/O ports", AUDIT(O, "from:hex num:long turn_on:int")),
	DENY("modify_ldt", "kernel attack surface", AUDIT(O, "func:int ptr:ptr bytecount:long")),
	DENY("uselib", "obsolete", AUDIT(O, "library:ptr")),
	DENY("_sysctl", "obsolete", AUDIT(O, "args:ptr")),
	DENY("nfsservctl", "obsolete", AUDIT(O, "cmd:int argp:ptr resp:ptr")),
	DENY("fanotify_init", "watches the host file system",
	     AUDIT(O, "flags:hex event_flags:oflags")),
	DENY("fanotify_mark", "watches the host file system",
	     AUDIT(O, "fd:fd flags:hex mask:hex dirfd:dirfd path:ptr")),
	DENY("vm86", "i386 only", AUDIT(O, "fn:long v86:ptr")),
	DENY("vm86old", "i386 only", AUDIT(O, "info:ptr")),
};

const SyscallRow *syscalls_table(size_t *ret_n)
{
	*ret_n = ARRAY_SIZE(table);
	return table;
}

const SyscallRow *syscalls_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(table); i++)
		if (strcmp(table[i].name, name) == 0)
			return &table[i];
	return NULL;
}

const char *syscalls_class_to_string(SyscallClass a)
{
	static const char *const names[_SYSCALL_CLASS_MAX] = {
		[SYSCALL_ALLOW] = "allow",
		[SYSCALL_NOTIFY] = "notify",
		[SYSCALL_DENY] = "deny",
		[SYSCALL_ENOSYS] = "enosys",
	};

	return a >= 0 && a < _SYSCALL_CLASS_MAX ? names[a] : NULL;
}

const char *syscalls_support_to_string(EmuSupport s)
{
	static const char *const names[_EMU_SUPPORT_MAX] = {
		[EMU_FULL] = "full",
		[EMU_PARTIAL] = "partial",
		[EMU_DENIED] = "denied",
	};

	return s >= 0 && s < _EMU_SUPPORT_MAX ? names[s] : NULL;
}

static AuditLayout audit_layouts[ARRAY_SIZE(table)];

static void audit_init_once(void)
{
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(table); i++)
		if (table[i].audit)
			audit_layouts[n++] = (AuditLayout){
				.name = table[i].name,
				.category = table[i].category,
				.args = table[i].audit,
			};
	audit_decode_set_layouts(audit_layouts, n);
}

void syscalls_audit_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	(void) pthread_once(&once, audit_init_once);
}
