/* SPDX-License-Identifier: MIT */
/* kill, tkill, tgkill, pidfd_send_signal and setpriority aimed at a process outside the
 * sandboxed tree (this test itself) fail with EPERM, and this process gets no signal. */
#include "tests/helpers/sbx-test.h"

static volatile sig_atomic_t got;

static void on_term(int sig)
{
	(void) sig;
	got = 1;
}

int main(void)
{
	char pid[32];
	const char *cmd[] = {sbx_probe(), "kill-outside", pid, NULL};
	int code;

	signal(SIGTERM, on_term);
	snprintf(pid, sizeof(pid), "%d", (int) getpid());
	code = sbx_run(NULL, cmd, NULL, NULL, 0);
	printf("# exit %d, signalled %d\n", code, (int) got);
	return code == 0 && !got ? 0 : 1;
}
