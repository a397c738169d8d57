/* SPDX-License-Identifier: MIT */
/* An x32 syscall number (nr | 0x40000000) is not a way around the table: the file the
 * x32 openat would create must not exist afterwards. */
#include "tests/helpers/sbx-test.h"

int main(void)
{
	char *dir = sbx_tmpdir(), path[600];
	const char *cmd[] = {sbx_probe(), "x32", path, NULL};
	int code;

	if (!dir)
		return 1;
	snprintf(path, sizeof(path), "%s/created-by-x32", dir);
	code = sbx_run(NULL, cmd, NULL, NULL, 0);
	printf("# exit %d\n", code);
	if (access(path, F_OK) == 0) {
		printf("not ok: the x32 openat created %s\n", path);
		unlink(path);
		rmdir(dir);
		return 1;
	}
	rmdir(dir);
	/* the filter kills x32 numbers whether or not the kernel has CONFIG_X86_X32_ABI */
	return code == 128 + SIGSYS ? 0 : 1;
}
