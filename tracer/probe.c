/* SPDX-License-Identifier: MIT */
/*
 * Kernel feature probe for `sbxtrace doctor`: each feature is tried, never inferred from the
 * version. Probes that would change our own process (a seccomp filter, unshare, ptrace) run
 * in short-lived children.
 */
#include "tracer/internal.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/missing-seccomp.h"

enum {
	PROBE_LISTENER = 1 << 0,
	PROBE_ADDFD_SEND = 1 << 1,
	PROBE_WAIT_KILLABLE = 1 << 2,
	PROBE_SYNC_WAKEUP = 1 << 3,
};

static int seccomp_probe_child(void)
{
	struct sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
	struct sock_fprog prog = {1, allow};
	struct seccomp_notif_addfd addfd = {.id = 0x5eed, .flags = SECCOMP_ADDFD_FLAG_SEND};
	uint64_t fl = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
	int bits = 0;
	long fd;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return 0;
	fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		     SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
		     &prog);
	if (fd >= 0)
		bits |= PROBE_LISTENER | PROBE_WAIT_KILLABLE;
	else {
		fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			     &prog);
		if (fd < 0)
			return bits;
		bits |= PROBE_LISTENER;
	}
	/* flags are checked before the id: ENOENT says SEND is known */
	if (ioctl((int) fd, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd) < 0 && errno == ENOENT)
		bits |= PROBE_ADDFD_SEND;
	if (ioctl((int) fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, fl) == 0)
		bits |= PROBE_SYNC_WAKEUP;
	return bits;
}

static int in_child(int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(fn() & 0xff);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* what tracer/kview.c and a plain user's network namespace need: a user namespace with our
 * ids mapped, and a mount namespace in it */
static int userns_child(void)
{
	return tracer_userns_enter(CLONE_NEWNS, NULL) == 0;
}

static bool probe_ptrace(void)
{
	int status;
	bool ok;
	pid_t pid = fork();

	if (pid < 0)
		return false;
	if (pid == 0) {
		pause();
		_exit(0);
	}
	ok = ptrace(PTRACE_SEIZE, pid, 0, 0) == 0;
	(void) kill(pid, SIGKILL);
	(void) waitpid(pid, &status, __WALL);
	return ok;
}

void tracer_probe_features(TracerFeatures *ret)
{
	TracerFeatures f = {};
	struct open_how how = {.flags = O_PATH | O_CLOEXEC};
	char src[8] = "probe", dst[8] = {};
	struct iovec l = {dst, sizeof(dst)}, r = {src, sizeof(src)};
	long fd, dup;
	int bits;

	bits = in_child(seccomp_probe_child);
	if (bits > 0) {
		f.listener = bits & PROBE_LISTENER;
		f.addfd_send = bits & PROBE_ADDFD_SEND;
		f.wait_killable = bits & PROBE_WAIT_KILLABLE;
		f.sync_wakeup = bits & PROBE_SYNC_WAKEUP;
	}

	fd = syscall(SYS_pidfd_open, getpid(), 0);
	f.pidfd_open = fd >= 0;
	if (fd >= 0) {
		dup = syscall(SYS_pidfd_getfd, (int) fd, STDERR_FILENO, 0);
		f.pidfd_getfd = dup >= 0;
		if (dup >= 0)
			(void) close((int) dup);
		(void) close((int) fd);
	}
	fd = syscall(SYS_pidfd_open, gettid(), PIDFD_THREAD);
	f.pidfd_thread = fd >= 0;
	if (fd >= 0)
		(void) close((int) fd);

	fd = syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));
	f.openat2 = fd >= 0;
	if (fd >= 0)
		(void) close((int) fd);

	f.process_vm_readv = process_vm_readv(getpid(), &l, 1, &r, 1, 0) == sizeof(dst);
	f.ptrace = probe_ptrace();
	f.userns = in_child(userns_child) == 1;
	f.netns = tracer_netns_possible();
	f.landlock_abi = tracer_landlock_abi();
	*ret = f;
}

const char *tracer_features_missing(const TracerFeatures *f)
{
	if (!f->listener)
		return "seccomp user notification (SECCOMP_FILTER_FLAG_NEW_LISTENER, Linux 5.0)";
	if (!f->addfd_send)
		return "SECCOMP_ADDFD_FLAG_SEND (Linux 5.14)";
	/* pidfd_getfd is a fast path: without it (a container's seccomp profile refuses it
	 * without CAP_SYS_PTRACE) the listener goes with SCM_RIGHTS and descriptors are reopened
	 * through /proc/PID/fd (issue 19; cli/cmd-doctor.c says what that costs) */
	if (!f->pidfd_open)
		return "pidfd_open (Linux 5.3)";
	return NULL;
}
