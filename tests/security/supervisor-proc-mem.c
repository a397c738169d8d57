/* SPDX-License-Identifier: MIT */
/* The sandboxed program runs as the same user as the supervisor: it must not reach the
 * supervisor's or the keeper's memory or descriptors through /proc/PID/mem or /proc/PID/fd
 * (both are not dumpable, and the program has no capabilities, even under root). */
#include "tests/helpers/sbx-test.h"

int main(void)
{
	const char *cmd[] = {sbx_probe(), "supervisor-mem", NULL};

	return sbx_run(NULL, cmd, NULL, NULL, 0) == 0 ? 0 : 1;
}
