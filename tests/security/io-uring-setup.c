/* SPDX-License-Identifier: MIT */
/* io_uring performs operations without passing through seccomp: io_uring_setup is denied
 * with the policy's deny errno (EPERM by default). */
#include "tests/helpers/sbx-test.h"

int main(void)
{
	char want[16];
	const char *cmd[] = {sbx_probe(), "io_uring", want, NULL};

	snprintf(want, sizeof(want), "%d", EPERM);
	return sbx_run(NULL, cmd, NULL, NULL, 0) == 0 ? 0 : 1;
}
