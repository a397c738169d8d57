/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Whether this process may make the namespaces the view in the kernel needs (a mount
 * namespace, and for a plain user a user namespace): a container's default seccomp profile
 * refuses them (issue 19; tests/helpers/deny-syscalls namespaces). Tests of the kernel view
 * skip with the reason there instead of failing on sbxtrace's exit 125.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* NULL when they can be made, else why not ("unshare(CLONE_NEWUSER): Operation not
 * permitted"), in a static buffer. */
static inline const char *sbx_namespaces_refused(void)
{
	static char why[128];
	int flags = geteuid() == 0 ? CLONE_NEWNS : CLONE_NEWUSER | CLONE_NEWNS, status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(unshare(flags) == 0 ? 0 : errno);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) == 0)
		return NULL;
	snprintf(why, sizeof(why), "unshare(%s): %s",
		 geteuid() == 0 ? "CLONE_NEWNS" : "CLONE_NEWUSER|CLONE_NEWNS",
		 strerror(WEXITSTATUS(status)));
	return why;
}
