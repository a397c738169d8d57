/* SPDX-License-Identifier: MIT */
/* int $0x80 reaches the i386 syscall table, whose numbers differ from x86_64's: the filter
 * must kill it rather than judge it by the x86_64 table. The file must not be created. */
#include "tests/helpers/sbx-test.h"

int main(void)
{
	char *dir = sbx_tmpdir(), path[600];
	const char *cmd[] = {sbx_probe(), "int80", path, NULL};
	int code;

	if (!dir)
		return 1;
	/* natively first: some kernels (and VMs) have no working i386 entry */
	snprintf(path, sizeof(path), "%s/native", dir);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(2, 1);
		execl(cmd[0], cmd[0], "int80", path, (char *) NULL);
		_exit(99);
	}
	waitpid(pid, &code, 0);
	if (access(path, F_OK) != 0) {
		fprintf(stderr, "skip: int $0x80 does not open files natively on this machine\n");
		rmdir(dir);
		return 77;
	}
	unlink(path);

	snprintf(path, sizeof(path), "%s/created-by-int80", dir);
	code = sbx_run(NULL, cmd, NULL, NULL, 0);
	printf("# exit %d\n", code);
	if (access(path, F_OK) == 0) {
		printf("not ok: int $0x80 open created %s\n", path);
		unlink(path);
		rmdir(dir);
		return 1;
	}
	rmdir(dir);
	return code == 128 + SIGSYS ? 0 : 1;
}
