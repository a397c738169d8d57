/* SPDX-License-Identifier: MIT */
/*
 * Issue 24, item 6: every way to name the process the kernel sends SIGIO/SIGURG to must stay
 * inside the tree. fcntl(F_SETOWN) was checked, but ioctl(FIOSETOWN) and ioctl(SIOCSPGRP) set
 * the same owner on a socket; with F_SETSIG any signal, sent by the kernel when the socket
 * becomes readable. The victim is this test's own process outside the sandbox (its pid and
 * process group in SBX_VICTIM_*): it counts SIGUSR1. Inside, each way to set the owner to the
 * victim or its group must fail with EPERM (ESRCH in a pid namespace of the tree's own, where
 * they have no pid: --kernel-view-proc) and no signal may arrive; setting it to itself
 * works and delivers exactly one signal (the positive control). The test that matters runs
 * without Landlock, whose signal scope (ABI 6) would otherwise stop the delivery.
 *
 * Exactly one: where the supervisor keeps the tree's sockets (no pidfd_getfd, net/socktab.c)
 * it closes its references to a closed pair later, in a sweep; closing the reference to s[1]
 * while s[0] still had its SIGIO owner sent that owner a POLL_HUP signal a few ms later, in
 * the middle of a later control (or interrupting a later call with EINTR). --long (the slow
 * suite) repeats every round many times, so that those sweeps land in the controls.
 */
#define FS_HAVE_PREPARE
#define FS_HAVE_CHECK
#include "tests/security/fs-escape.h"

#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

static volatile sig_atomic_t got; /* inside: the control's signal; outside: the victim's */
static volatile sig_atomic_t last_code, last_fd; /* inside: the latest signal's si_code, si_fd */

static void on_usr1(int sig)
{
	(void) sig;
	got++;
}

static void on_usr1_info(int sig, siginfo_t *si, void *uc)
{
	(void) sig;
	(void) uc;
	last_code = si->si_code;
	last_fd = si->si_fd;
	got++;
}

/* A socket pair whose s[0] signals SIGUSR1 to its owner when s[1] writes. */
static int async_pair(int s[2])
{
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) < 0 ||
	    fcntl(s[0], F_SETSIG, SIGUSR1) < 0 ||
	    fcntl(s[0], F_SETFL, fcntl(s[0], F_GETFL) | O_ASYNC) < 0)
		return -1;
	return 0;
}

/* Sets the owner of a fresh pair's socket by method to owner, makes it readable, and
 * returns the call's result (errno set). */
static int try_owner(const char *method, int owner)
{
	struct f_owner_ex ex = {owner < 0 ? F_OWNER_PGRP : F_OWNER_PID, owner < 0 ? -owner : owner};
	int s[2], r, e;

	if (async_pair(s) < 0)
		return -2;
	if (strcmp(method, "FIOSETOWN") == 0)
		r = ioctl(s[0], FIOSETOWN, &owner);
	else if (strcmp(method, "SIOCSPGRP") == 0)
		r = ioctl(s[0], SIOCSPGRP, &owner);
	else if (strcmp(method, "F_SETOWN") == 0)
		r = fcntl(s[0], F_SETOWN, owner);
	else
		r = fcntl(s[0], F_SETOWN_EX, &ex);
	e = errno;
	(void) !write(s[1], "x", 1);
	close(s[0]);
	close(s[1]);
	errno = e;
	return r;
}

static int attack(void)
{
	static const char *const methods[] = {"FIOSETOWN", "SIOCSPGRP", "F_SETOWN", "F_SETOWN_EX"};
	const char *p = getenv("SBX_VICTIM_PID"), *g = getenv("SBX_VICTIM_PGRP");
	int victim = p ? atoi(p) : 0, group = g ? atoi(g) : 0, rounds = fs_long ? 1000 : 1;
	struct sigaction sa = {.sa_sigaction = on_usr1_info, .sa_flags = SA_SIGINFO};
	int refused = getenv("SBX_FS_PIDNS") ? ESRCH : EPERM;

	if (victim <= 1 || group <= 1) {
		fprintf(stderr, "control: no victim pid\n");
		return 1;
	}
	sigaction(SIGUSR1, &sa, NULL);
	for (int round = 0; round < rounds && !fs_failures; round++) {
		for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
			int before = got, r;
			char m[128];

			/* positive control: itself as the owner gets its POLL_IN, once */
			last_code = 0;
			r = try_owner(methods[i], getpid());
			if (r != 0 || got != before + 1) {
				fprintf(stderr,
					"control (round %d): %s to itself: %s, %d signal(s), "
					"the last with si_code %d on fd %d\n",
					round, methods[i], r == 0 ? "accepted" : strerror(errno),
					got - before, (int) last_code, (int) last_fd);
				return 1;
			}
			r = try_owner(methods[i], victim);
			if (r == 0 || errno != refused) {
				snprintf(m, sizeof(m), "%s to the parent outside: %s", methods[i],
					 r == 0 ? "accepted" : strerror(errno));
				fs_bad(m);
			}
			if (group != getpgrp()) {
				r = try_owner(methods[i], -group);
				if (r == 0 || errno != refused) {
					snprintf(m, sizeof(m), "%s to the group outside: %s",
						 methods[i], r == 0 ? "accepted" : strerror(errno));
					fs_bad(m);
				}
			}
		}
	}
	return 0;
}

static void fs_prepare(const char *ws)
{
	static char pid[32], pgrp[32];
	struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_RESTART};

	(void) ws;
	got = 0;
	sigaction(SIGUSR1, &sa, NULL);
	snprintf(pid, sizeof(pid), "%d", (int) getpid());
	snprintf(pgrp, sizeof(pgrp), "%d", (int) getpgrp());
	(void) setenv("SBX_VICTIM_PID", pid, 1);
	(void) setenv("SBX_VICTIM_PGRP", pgrp, 1);
}

static int fs_check(void)
{
	if (got) {
		fprintf(stderr, "ESCAPE: the process outside got %d SIGUSR1 from the sandbox\n",
			(int) got);
		return 1;
	}
	return 0;
}
