/* SPDX-License-Identifier: MIT */
/* Processes outside the tree (this test's own process, and a sleeper it starts) can be
 * neither seen in /proc nor signalled, reprioritized or limited, by pid or by pidfd; /proc/1
 * is not the host's init and its links are refused. In the emulated view the supervisor
 * checks each call against the tree; in the view in the kernel with a /proc mount
 * (--kernel-view-proc) the tree has a pid namespace of its own and these calls run in the
 * kernel, which resolves their pids there (issue 23; docs/filesystem.md "A pid namespace for
 * /proc"). Checked from outside too: no signal arrived, priorities and limits are
 * unchanged, the sleeper lives. */
#define FS_HAVE_PREPARE
#define FS_HAVE_CHECK
#include "tests/security/fs-escape.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#define VICTIM "sbx-victim-pid"

static volatile sig_atomic_t got;
static pid_t sleeper = -1;
static int nice_before;
static struct rlimit nofile_before;

static void on_signal(int sig)
{
	(void) sig;
	got++;
}

static void fs_prepare(const char *ws)
{
	char p[PATH_MAX + 32];
	FILE *f;
	int sync[2];
	char c;

	signal(SIGTERM, on_signal);
	signal(SIGUSR1, on_signal);
	signal(SIGINT, on_signal);
	errno = 0;
	nice_before = getpriority(PRIO_PROCESS, 0);
	(void) getrlimit(RLIMIT_NOFILE, &nofile_before);
	if (pipe(sync) < 0)
		return;
	sleeper = fork();
	if (sleeper == 0) {
		(void) prctl(PR_SET_NAME, VICTIM);
		close(sync[0]);
		close(sync[1]);
		for (;;)
			pause();
	}
	close(sync[1]);
	(void) !read(sync[0], &c, 1); /* the child has named itself (EOF) */
	close(sync[0]);
	snprintf(p, sizeof(p), "%s/outside.pid", ws);
	f = fopen(p, "w");
	if (f) {
		fprintf(f, "%d %d\n", (int) getpid(), (int) sleeper);
		fclose(f);
	}
}

static int fs_check(void)
{
	struct rlimit nofile;
	int bad = 0, st;

	if (got) {
		fprintf(stderr, "ESCAPE: this process got %d signal(s) from inside\n", (int) got);
		bad = 1;
	}
	errno = 0;
	if (getpriority(PRIO_PROCESS, 0) != nice_before) {
		fprintf(stderr, "ESCAPE: this process's priority was changed\n");
		bad = 1;
	}
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != nofile_before.rlim_cur) {
		fprintf(stderr, "ESCAPE: this process's RLIMIT_NOFILE was changed\n");
		bad = 1;
	}
	if (sleeper > 0) {
		if (waitpid(sleeper, &st, WNOHANG) != 0) {
			fprintf(stderr, "ESCAPE: the sleeper outside the tree was killed\n");
			bad = 1;
		} else if (getpriority(PRIO_PROCESS, sleeper) != nice_before) {
			fprintf(stderr, "ESCAPE: the sleeper's priority was changed\n");
			bad = 1;
		}
		kill(sleeper, SIGKILL);
		waitpid(sleeper, &st, 0);
	}
	return bad;
}

static void expect_fail(long r, const char *what)
{
	char m[160];

	if (r < 0)
		return;
	snprintf(m, sizeof(m), "%s succeeded", what);
	fs_bad(m);
}

static void attack_pid(pid_t t)
{
	struct rlimit one = {1, 1};
	siginfo_t si = {.si_signo = SIGUSR1, .si_code = SI_QUEUE};
	char m[96];
	long fd;

	snprintf(m, sizeof(m), "kill(%d, SIGTERM)", (int) t);
	expect_fail(kill(t, SIGTERM), m);
	expect_fail(syscall(SYS_tkill, t, SIGTERM), "tkill outside");
	expect_fail(syscall(SYS_tgkill, t, t, SIGTERM), "tgkill outside");
	expect_fail(syscall(SYS_rt_sigqueueinfo, t, SIGUSR1, &si), "rt_sigqueueinfo outside");
	expect_fail(syscall(SYS_prlimit64, t, RLIMIT_NOFILE, &one, NULL), "prlimit64 outside");
	expect_fail(setpriority(PRIO_PROCESS, (id_t) t, 19), "setpriority outside");
	/* the emulated view lets pidfd_open run (a pidfd alone reaches nothing); its signal
	 * must not */
	fd = syscall(SYS_pidfd_open, t, 0);
	if (fd >= 0) {
		expect_fail(syscall(SYS_pidfd_send_signal, (int) fd, SIGTERM, NULL, 0),
			    "pidfd_send_signal outside");
		close((int) fd);
	}
}

static void look_at_proc(void)
{
	char p[300], buf[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir("/proc");
	ssize_t n;

	if (!d) {
		fprintf(stderr, "no /proc in this view: the listing is not tried\n");
		return;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(p, sizeof(p), "/proc/%s/comm", de->d_name);
		if (fs_read_file(p, buf, sizeof(buf)) == 0 && strstr(buf, VICTIM))
			fs_bad("/proc lists the sleeper outside the tree");
	}
	closedir(d);
	/* /proc/1: absent (emulated) or the pid namespace's init, never the host's; its
	 * links, which would lead out of the view, are refused */
	if (fs_read_file("/proc/1/comm", buf, sizeof(buf)) == 0 &&
	    strcmp(buf, "sbxtrace-init\n") != 0) {
		snprintf(p, sizeof(p), "/proc/1 is '%.100s', not the namespace's init", buf);
		fs_bad(p);
	}
	n = readlink("/proc/1/exe", buf, sizeof(buf) - 1);
	if (n >= 0)
		fs_bad("readlink(/proc/1/exe) succeeded");
	n = readlink("/proc/1/cwd", buf, sizeof(buf) - 1);
	if (n >= 0)
		fs_bad("readlink(/proc/1/cwd) succeeded");
	if (fs_read_file("/proc/1/environ", buf, sizeof(buf)) == 0)
		fs_bad("/proc/1/environ is readable");
	if (fs_read_file("/proc/1/cmdline", buf, sizeof(buf)) == 0 && strstr(buf, "sbxtrace") &&
	    strcmp(buf, "sbxtrace-init") != 0)
		fs_bad("/proc/1/cmdline shows the supervisor's command line");
}

static int attack(void)
{
	char buf[64];
	int self = 0, sl = 0;

	if (fs_read_file("/workspace/outside.pid", buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%d %d", &self, &sl) != 2 || self <= 1 || sl <= 1) {
		fprintf(stderr, "no /workspace/outside.pid\n");
		return 1;
	}
	attack_pid(self);
	attack_pid(sl);
	/* Not tried: kill(-1, …) and setpriority(PRIO_USER, …). A regression would reach every
	 * process of the user, or of the machine when the suite runs as root (a mutation test of
	 * this file did, once): docs/filesystem.md says why the kernel confines both to the
	 * namespace. */
	look_at_proc();
	/* positive control: a process of the tree can be signalled */
	{
		pid_t c = fork();
		int st;

		if (c == 0) {
			pause();
			_exit(0);
		}
		if (c < 0 || kill(c, SIGKILL) < 0 || waitpid(c, &st, 0) != c || !WIFSIGNALED(st)) {
			fprintf(stderr, "a child of the tree could not be killed\n");
			return 1;
		}
	}
	return 0;
}
