/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Harness of the file-system escape tests (one program per technique, issue 4). Run by meson
 * without arguments, a test makes a scratch directory on the host:
 *     BASE/ws/            the workspace (/workspace inside), holding a copy of the test
 *     BASE/ro/file        a read-only mount (/ro inside)
 *     BASE/secret/secret.txt, BASE/ws-secret -> ../secret   outside every mount
 * and runs itself inside: sbxtrace run -w BASE/ws tests/data/fs-security.toml --
 * /workspace/prog inside BASE (with -s tracer.landlock=false for the --no-landlock
 * variant; --kernel-view runs under tests/data/fs-security-kernel.toml instead, whose view
 * the kernel holds: tracer.kernel_view; --kernel-view-proc under
 * tests/data/fs-security-kernel-proc.toml, the same with a /proc mount: a pid namespace;
 * --kernel-open under tests/data/fs-security-kernel.toml with the view emulated, where the
 * kernel makes the opens the supervisor checked: emulation/fs-open.c, "Opens the kernel
 * makes"; it skips, saying why, where `run --json` does not report "file_opens":"checked").
 * Inside, attack() tries its technique and returns 0 when every attempt failed closed, 1
 * when one reached the secret (saying which on stderr). Outside, the test then checks that
 * the secret and the read-only file are unchanged.
 * An attack that cannot be tried here returns 77 (skip) and says why on stderr; an escape
 * recorded with fs_bad() before that still fails the test.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/helpers/sbx-namespaces.h"
#include "tests/helpers/sbx-scratch.h"
#include "tests/helpers/sbx-selftest.h"

#define SECRET	"TOPSECRET-3141"
#define RO_TEXT "read-only content\n"

static const char *fs_base; /* the host scratch directory (inside: a host path, invisible) */
static __attribute__((unused)) char fs_secret[PATH_MAX]; /* host path of the secret */
static int fs_failures;
static bool fs_long;		 /* the slow variant: more iterations */
static const char *fs_extra_set; /* one more "-s KEY=VALUE" for the run, set by a test */
static bool fs_kernel_view;	 /* --kernel-view: SBX_FS_POLICY_KERNEL, the view in the kernel */
static bool fs_kernel_view_proc; /* --kernel-view-proc: SBX_FS_POLICY_KERNEL_PROC, with /proc */
static bool fs_kernel_open;	 /* --kernel-open: SBX_FS_POLICY_KERNEL emulated, opens continued */
/* more "-s KEY=VALUE" (NULL-terminated), e.g. set by fs_prepare() */
static const char *fs_extra_sets[6];

/* Attack, inside the sandbox: return 0 when everything failed closed. */
static int attack(void);

static __attribute__((unused)) void fs_bad(const char *what)
{
	fprintf(stderr, "ESCAPE: %s\n", what);
	fs_failures++;
}

/* Whether fd reads the secret. */
static __attribute__((unused)) bool fs_fd_is_secret(int fd)
{
	char buf[64] = "";
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	return n > 0 && strstr(buf, SECRET) != NULL;
}

/* Opens path (read-only) and reports an escape if it reads the secret. */
static __attribute__((unused)) void fs_try_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (fs_fd_is_secret(fd)) {
			char m[PATH_MAX + 64];

			snprintf(m, sizeof(m), "open('%s') read the secret", path);
			fs_bad(m);
		}
		close(fd);
	}
}

static __attribute__((unused)) int fs_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t) strlen(text) ? 0 : -1;
}

static __attribute__((unused)) int fs_read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

static __attribute__((unused)) void fs_rm_rf(const char *path)
{
	char cmd[2 * PATH_MAX + 64];

	/* chmod first: a test may have left read-only directories */
	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", path, path);
	(void) !system(cmd);
}

#ifdef FS_HAVE_PREPARE
/* Prepares more of the workspace from outside (a test defines FS_HAVE_PREPARE). */
static __attribute__((unused)) void fs_prepare(const char *ws);
#endif
#ifdef FS_HAVE_CHECK
/* Checks from outside after the run what the attack may have reached (a server of the test,
 * a process): returns 0 when nothing was (a test defines FS_HAVE_CHECK). */
static int fs_check(void);
#endif

/* The number of entries of directory path but "." and "..", -1 when it cannot be listed. */
static int fs_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* Inside: runs path in a child with no arguments and no environment (execveat on dirfd when
 * at); its exit code, 126 when the exec failed. */
static __attribute__((unused)) int fs_try_exec(const char *path, int dirfd, bool at)
{
	char *argv[] = {(char *) path, NULL};
	char *envp[] = {NULL};
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		if (at)
			syscall(SYS_execveat, dirfd, path, argv, envp, 0);
		else
			execve(path, argv, envp);
		_exit(126);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* --kernel-open: whether a run of the policy, the view emulated, has the kernel make the opens
 * the supervisor checked ("file_opens":"checked" in `run --json`); else why not in why. */
static bool fs_opens_checked(const char *sbxtrace, const char *policy, const char *base,
			     const char *ws, char *why, size_t size)
{
	char cmd[4 * PATH_MAX], out[8192];
	size_t n;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && '%s' run --json -q -w '%s' -s tracer.kernel_view=false '%s' -- "
		 "/bin/true 2>&1",
		 base, sbxtrace, ws, policy);
	f = popen(cmd, "r");
	if (!f) {
		snprintf(why, size, "popen: %s", strerror(errno));
		return false;
	}
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = 0;
	(void) pclose(f);
	if (strstr(out, "\"file_opens\":\"checked\""))
		return true;
	{
		const char *r = strstr(out, "\"file_opens_reason\":");

		snprintf(why, size, "%.400s", r ? r : out);
	}
	return false;
}

static __attribute__((unused)) int fs_outside(bool landlock)
{
	const char *sbxtrace = getenv("SBXTRACE");
	const char *policy = getenv(fs_kernel_view_proc		       ? "SBX_FS_POLICY_KERNEL_PROC"
				    : fs_kernel_view || fs_kernel_open ? "SBX_FS_POLICY_KERNEL"
								       : "SBX_FS_POLICY");
	const char *t = getenv("TMPDIR");
	char base[PATH_MAX - 64], p[PATH_MAX + 64], ws[PATH_MAX], buf[256];
	struct stat st_before, st_after;
	int status, code;
	pid_t pid;

	if (!sbxtrace || !*sbxtrace || !policy || !*policy) {
		fprintf(stderr, "skip: SBXTRACE or SBX_FS_POLICY is not set (run through meson)\n");
		return 77;
	}
	snprintf(base, sizeof(base), "%s/sbxfs-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(base))
		return 1;
	/* removed at exit on the paths below that return without fs_rm_rf() (the skips) */
	(void) sbx_scratch_add(base);
	snprintf(ws, sizeof(ws), "%s/ws", base);
	snprintf(p, sizeof(p), "%s/secret", base);
	if (mkdir(ws, 0755) < 0 || mkdir(p, 0755) < 0)
		goto fail;
	snprintf(p, sizeof(p), "%s/secret/secret.txt", base);
	if (fs_write_file(p, SECRET "\n") < 0)
		goto fail;
	snprintf(p, sizeof(p), "%s/ro", base);
	if (mkdir(p, 0755) < 0)
		goto fail;
	snprintf(p, sizeof(p), "%s/ro/file", base);
	if (fs_write_file(p, RO_TEXT) < 0 || stat(p, &st_before) < 0)
		goto fail;
	snprintf(p, sizeof(p), "%s/ws/prog", base);
	if (sbx_copy_self(p) < 0)
		goto fail;
	if (fs_kernel_view) {
		const char *why = sbx_namespaces_refused();

		if (why) {
			fprintf(stderr, "skip: the view in the kernel needs namespaces: %s\n", why);
			return 77;
		}
		(void) setenv("SBX_FS_KERNEL_VIEW", "1",
			      1);	 /* for the attack: the policy keeps SBX_* */
		if (fs_kernel_view_proc) /* a pid namespace: outside pids do not exist */
			(void) setenv("SBX_FS_PIDNS", "1", 1);
	}
	if (fs_kernel_open) {
		char why[512];

		if (!fs_opens_checked(sbxtrace, policy, base, ws, why, sizeof(why))) {
			fprintf(stderr, "skip: the kernel makes no checked opens here: %s\n", why);
			fs_rm_rf(base);
			return 77;
		}
	}
	/* after the skips above: what it starts (a helper process holding our stdout) would
	 * outlive a skip */
#ifdef FS_HAVE_PREPARE
	fs_prepare(ws);
#endif
	pid = fork();
	if (pid < 0)
		goto fail;
	if (pid == 0) {
		const char *argv[32];
		int n = 0;

		if (chdir(base) < 0)
			_exit(99);
		argv[n++] = sbxtrace;
		argv[n++] = "run";
		argv[n++] = "-w";
		argv[n++] = ws;
		if (!landlock) {
			argv[n++] = "-s";
			argv[n++] = "tracer.landlock=false";
		}
		if (fs_extra_set) {
			argv[n++] = "-s";
			argv[n++] = fs_extra_set;
		}
		if (fs_kernel_open) {
			argv[n++] = "-s";
			argv[n++] = "tracer.kernel_view=false";
		}
		for (size_t i = 0; i < sizeof(fs_extra_sets) / sizeof(char *) && fs_extra_sets[i];
		     i++) {
			argv[n++] = "-s";
			argv[n++] = fs_extra_sets[i];
		}
		argv[n++] = policy;
		argv[n++] = "--";
		argv[n++] = "/workspace/prog";
		argv[n++] = fs_long ? "inside-long" : "inside";
		argv[n++] = base;
		argv[n] = NULL;
		execv(sbxtrace, (char **) argv);
		_exit(99);
	}
	if (waitpid(pid, &status, 0) < 0)
		goto fail;
	code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (code != 0)
		fprintf(stderr, "inside: exit code %d\n", code);
#ifdef FS_HAVE_CHECK
	/* on a skip too: it also stops what fs_prepare() started */
	if (fs_check() != 0 && code != 77)
		code = 1;
#endif

	/* the secret and the read-only file are intact */
	snprintf(p, sizeof(p), "%s/secret/secret.txt", base);
	if (fs_read_file(p, buf, sizeof(buf)) < 0 || strcmp(buf, SECRET "\n") != 0) {
		fprintf(stderr, "ESCAPE: the secret was changed\n");
		code = 1;
	}
	snprintf(p, sizeof(p), "%s/ro/file", base);
	if (fs_read_file(p, buf, sizeof(buf)) < 0 || strcmp(buf, RO_TEXT) != 0 ||
	    stat(p, &st_after) < 0 || st_after.st_mode != st_before.st_mode ||
	    st_after.st_mtim.tv_sec != st_before.st_mtim.tv_sec ||
	    st_after.st_mtim.tv_nsec != st_before.st_mtim.tv_nsec ||
	    st_after.st_uid != st_before.st_uid) {
		fprintf(stderr, "ESCAPE: the read-only file was changed\n");
		code = 1;
	}
	/* each holds its one file still: nothing was created beside it */
	snprintf(p, sizeof(p), "%s/ro", base);
	if (fs_entries(p) != 1) {
		fprintf(stderr, "ESCAPE: the read-only directory gained entries\n");
		code = 1;
	}
	snprintf(p, sizeof(p), "%s/secret", base);
	if (fs_entries(p) != 1) {
		fprintf(stderr, "ESCAPE: the secret's directory gained entries\n");
		code = 1;
	}
	fs_rm_rf(base);
	return code;
fail:
	perror("setting up");
	fs_rm_rf(base);
	return 1;
}

#ifndef FS_OWN_MAIN /* a test with its own main() calls fs_outside() itself */
int main(int argc, char *argv[])
{
	if (argc >= 3 && (strcmp(argv[1], "inside") == 0 || strcmp(argv[1], "inside-long") == 0)) {
		int r;

		setvbuf(stderr, NULL, _IONBF, 0);
		fs_long = strcmp(argv[1], "inside-long") == 0;
		fs_base = argv[2];
		snprintf(fs_secret, sizeof(fs_secret), "%s/secret/secret.txt", fs_base);
		r = attack();
		/* a skip only when nothing was found before the attack gave up */
		if (r == 77 && !fs_failures)
			return 77;
		return r || fs_failures ? 1 : 0;
	}
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--long") == 0)
			fs_long = true;
		if (strcmp(argv[i], "--kernel-view") == 0)
			fs_kernel_view = true;
		if (strcmp(argv[i], "--kernel-view-proc") == 0)
			fs_kernel_view = fs_kernel_view_proc = true;
		if (strcmp(argv[i], "--kernel-open") == 0)
			fs_kernel_open = true;
	}
	return fs_outside(!(argc > 1 && strcmp(argv[1], "--no-landlock") == 0));
}
#endif
