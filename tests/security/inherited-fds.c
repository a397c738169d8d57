/* SPDX-License-Identifier: MIT */
/* A descriptor the caller leaks (no O_CLOEXEC) does not reach the sandboxed program: only
 * stdin, stdout and stderr pass. */
#include "tests/helpers/sbx-test.h"

int main(void)
{
	char cmdline[128];
	const char *cmd[] = {"sh", "-c", cmdline, NULL};
	int fd = open("/", O_RDONLY | O_DIRECTORY); /* deliberately inheritable */

	if (fd < 0)
		return 1;
	/* the shell's own fds are 0-2 (and maybe 10+ for its use); test ours */
	snprintf(cmdline, sizeof(cmdline), "test -e /proc/self/fd/%d && exit 1; exit 0", fd);
	return sbx_run(NULL, cmd, NULL, NULL, 0) == 0 ? 0 : 1;
}
