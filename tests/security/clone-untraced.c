/* SPDX-License-Identifier: MIT */
/*
 * A process created with CLONE_UNTRACED escapes the supervisor's tracer thread (the kernel
 * does not auto-attach it). Its execve and chdir, which the filter routes to the tracer
 * (SECCOMP_RET_TRACE) to check and rewrite, must then fail closed (ENOSYS: no tracer), not
 * run unchecked. The program runs itself inside `sbxtrace run` with tracer.ptrace = "always".
 *
 * With a cpu_time budget the clone itself is refused (EPERM): the budget counts the end of
 * every process at the tracer thread, and an untraced child that the kernel reaps by itself
 * (its parent ignores SIGCHLD) would take its CPU time along (issue 24, item 7).
 */
#include <sched.h>
#include <sys/syscall.h>

#include "tests/helpers/sbx-test.h"

#define EXEC_RAN 42

static int probe(const char *self)
{
	int status;
	long pid = syscall(SYS_clone, (unsigned long) (SIGCHLD | CLONE_UNTRACED), 0, 0, 0, 0);

	if (pid < 0 && errno == EPERM) {
		printf("CLONE_UNTRACED refused (30)\n");
		return 30;
	}
	if (pid < 0)
		return 20;
	if (pid == 0) {
		char *argv[] = {(char *) self, "ran", NULL};

		if (chdir("/") == 0)
			_exit(5); /* chdir ran without its check */
		execv(self, argv);
		/* exec refused: ENOSYS, the tracer-less answer to SECCOMP_RET_TRACE */
		_exit(errno == ENOSYS ? 3 : 4);
	}
	if (waitpid((pid_t) pid, &status, 0) != pid || !WIFEXITED(status))
		return 21;
	printf("untraced child exited %d (3: exec and chdir refused)\n", WEXITSTATUS(status));
	return WEXITSTATUS(status);
}

int main(int argc, char *argv[])
{
	const char *sbxtrace = sbx_env("SBXTRACE"), *policy = sbx_env("SBX_POLICY");
	char self[4096];
	int code;

	if (argc == 2 && strcmp(argv[1], "ran") == 0)
		return EXEC_RAN;
	if (argc == 3 && strcmp(argv[1], "probe") == 0)
		return probe(argv[2]);
	if (!sbx_self_exe(self, sizeof(self)))
		return 1;
	{
		const char *args[] = {sbxtrace, "run", "-s", "tracer.ptrace=\"always\"",
				      policy,	"--",  self, "probe",
				      self,	NULL};

		code = sbx_run_argv(args, NULL);
	}
	printf("sbxtrace exited %d (want 3)\n", code);
	if (code != 3)
		return 1;
	{
		const char *args[] = {sbxtrace, "run", "-s", "limits.cpu_time=30s",
				      policy,	"--",  self, "probe",
				      self,	NULL};

		code = sbx_run_argv(args, NULL);
	}
	printf("with a cpu_time budget: sbxtrace exited %d (want 30)\n", code);
	return code == 30 ? 0 : 1;
}
