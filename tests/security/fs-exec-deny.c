/* SPDX-License-Identifier: MIT */
/* [exec] deny (tests/data/fs-security.toml: /workspace/denied, /usr/bin/false) holds whatever
 * names the file: its path, a symlink, a "#!" line, execveat on a dirfd, and a path buffer
 * that another thread flips between /usr/bin/true and the denied /usr/bin/false while execve
 * runs. Those paths are identity-mapped, so the kernel reads the child's buffer again after
 * the check: the post-exec dev/ino check (ptrace) must kill a run of false before it exits 1. */
#include "tests/security/fs-escape.h"

#include <signal.h>

static volatile int stop;
static char *flip;
static const char allowed[] = "/usr/bin/true", denied[] = "/usr/bin/false";

static void *flipper(void *arg)
{
	(void) arg;
	while (!stop) {
		memcpy(flip, denied, sizeof(denied));
		memcpy(flip, allowed, sizeof(allowed));
	}
	return NULL;
}

static int attack(void)
{
	int n = fs_long ? 2000 : 200, dfd, killed = 0;
	char *argv[] = {NULL, NULL};
	char *envp[] = {NULL};

	if (mkdir("/workspace/denied", 0755) < 0 ||
	    fs_write_file("/workspace/denied/s.sh", "#!/bin/sh\necho ran > /workspace/ran\n") < 0 ||
	    chmod("/workspace/denied/s.sh", 0755) < 0 ||
	    fs_write_file("/workspace/ok.sh", "#!/bin/sh\nexit 0\n") < 0 ||
	    chmod("/workspace/ok.sh", 0755) < 0 ||
	    fs_write_file("/workspace/via-interp", "#!/workspace/denied/s.sh\n") < 0 ||
	    chmod("/workspace/via-interp", 0755) < 0 ||
	    symlink("denied/s.sh", "/workspace/link") < 0) {
		perror("setup");
		return 1;
	}
	if (fs_try_exec("/usr/bin/false", -1, false) == 1)
		fs_bad("/usr/bin/false ran");
	if (fs_try_exec("/workspace/ok.sh", -1, false) != 0) {
		fprintf(stderr, "an allowed script does not run\n");
		return 1;
	}
	fs_try_exec("/workspace/denied/s.sh", -1, false);
	fs_try_exec("denied/s.sh", -1, false);
	fs_try_exec("/workspace/link", -1, false);
	fs_try_exec("/workspace/via-interp", -1, false);
	dfd = open("/workspace/denied", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fs_try_exec("s.sh", dfd, true);
		close(dfd);
	}
	if (access("/workspace/ran", F_OK) == 0) {
		fs_bad("a denied program ran");
		return 1;
	}

	/* the race: many children, each flipping its own buffer during execve */
	flip = malloc(PATH_MAX);
	for (int i = 0; i < n && !fs_failures; i++) {
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			pthread_t th;

			memcpy(flip, allowed, sizeof(allowed));
			if (pthread_create(&th, NULL, flipper, NULL) != 0)
				_exit(2);
			for (;;) {
				argv[0] = flip;
				execve(flip, argv, envp);
				/* refused (the denied file seen): try again */
			}
		}
		if (pid < 0 || waitpid(pid, &st, 0) < 0)
			return 1;
		if (WIFEXITED(st) && WEXITSTATUS(st) == 1)
			fs_bad("false ran through a rewritten path");
		else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
			killed++;
	}
	fprintf(stderr, "%d of %d racing execs were killed after the exec\n", killed, n);
	return 0;
}
