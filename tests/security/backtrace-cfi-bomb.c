/* SPDX-License-Identifier: MIT */
/*
 * Backtraces must not let the program's unwind tables take the supervisor's time or memory
 * without bound (tests/security/backtrace-cfi.S): a CFA expression that loops forever, and a
 * CFI program of 524288 DW_CFA_remember_state. The program makes denied calls from both,
 * each unwound ([audit] backtrace = "denied"). The run must end with the program's own exit
 * code (an unbounded unwinder never finishes: the supervisor waits for its tracer thread),
 * every call must get its answer, and the supervisor must stay small (an unbounded one
 * keeps a saved state per opcode: over 100 MB here).
 */
#include <sys/syscall.h>

#include "tests/helpers/sbx-test.h"

#define PROBE_EXIT  9
#define CALLS	    10
#define RSS_MAX_KIB (64 * 1024)

long bt_cfi_loop(void);
long bt_cfi_states(void);

static int probe(void)
{
	for (int i = 0; i < CALLS; i++) {
		if (bt_cfi_loop() != -EACCES)
			return 10;
		if (bt_cfi_states() != -EACCES)
			return 11;
	}
	return PROBE_EXIT;
}

int main(int argc, char *argv[])
{
	const char *sbxtrace = sbx_env("SBXTRACE"), *policy = sbx_env("SBX_POLICY");
	char self[4096], *dir, log_path[700];
	struct rusage ru;
	int code;
	ssize_t n;

	if (argc == 2 && strcmp(argv[1], "probe") == 0)
		return probe();
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	dir = sbx_tmpdir();
	if (n <= 0 || !dir)
		return 1;
	self[n] = 0;
	snprintf(log_path, sizeof(log_path), "%s/audit.jsonl", dir);
	{
		const char *args[] = {sbxtrace,	 "run",
				      "-s",	 "syscalls.deny=[\"sysinfo:EACCES\"]",
				      "-s",	 "audit.backtrace=\"denied\"",
				      "-s",	 "limits.wall_time=\"60s\"",
				      "--audit", log_path,
				      policy,	 "--",
				      self,	 "probe",
				      NULL};

		code = sbx_run_argv(args, &ru);
	}
	if (code < 0)
		return 1;
	printf("sbxtrace exited %d (want %d), max RSS %ld KiB (want < %d)\n", code, PROBE_EXIT,
	       ru.ru_maxrss, RSS_MAX_KIB);
	unlink(log_path);
	rmdir(dir);
	return code == PROBE_EXIT && ru.ru_maxrss < RSS_MAX_KIB ? 0 : 1;
}
