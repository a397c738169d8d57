/* SPDX-License-Identifier: MIT */
/* Bad pointers in notified syscalls: EFAULT for the child, and the supervisor carries on. */
#include "tests/helpers/sbx-test.h"

int main(void)
{
	const char *cmd[] = {sbx_probe(), "efault", NULL};

	return sbx_run(NULL, cmd, NULL, NULL, 0) == 0 ? 0 : 1;
}
