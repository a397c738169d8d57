/* SPDX-License-Identifier: MIT */
/* Signals sent to sbxtrace reach the program; on a terminal the program is the foreground
 * process group, and sbxtrace gets the terminal back afterwards. */
#include <pty.h>
#include <termios.h>

#include "tests/helpers/sbx-test.h"
#include "tests/unit/tap.h"

static int signal_round_trip(int sig)
{
	char *dir = sbx_tmpdir(), file[600];
	const char *cmd[] = { sbx_probe(), "wait-signal", file, NULL };
	int status = -1, i;
	pid_t sup;

	if (!dir)
		return -1;
	snprintf(file, sizeof(file), "%s/ready", dir);
	sup = sbx_spawn(NULL, cmd, -1, NULL);
	for (i = 0; i < 1000 && access(file, F_OK) != 0; i++)
		sbx_sleep_ms(10);
	kill(sup, sig);
	waitpid(sup, &status, 0);
	unlink(file);
	rmdir(dir);
	return sbx_status_code(status);
}

TEST(sigusr1_reaches_the_program)
{
	EXPECT_EQ(signal_round_trip(SIGUSR1), 100 + SIGUSR1);
}

TEST(sigterm_reaches_the_program)
{
	EXPECT_EQ(signal_round_trip(SIGTERM), 100 + SIGTERM);
}

TEST(sighup_reaches_the_program)
{
	EXPECT_EQ(signal_round_trip(SIGHUP), 100 + SIGHUP);
}

TEST(program_is_the_terminal_foreground_group)
{
	const char *cmd[] = { sbx_probe(), "fg", NULL };
	int master, status;
	char buf[256];
	pid_t pid;

	pid = forkpty(&master, NULL, NULL, NULL);
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		/* we are the session leader and foreground group on a new terminal */
		pid_t c = sbx_spawn(NULL, cmd, 0, NULL);
		int st, code;

		waitpid(c, &st, 0);
		code = sbx_status_code(st);
		/* sbxtrace gave the terminal back to our group */
		if (code == 0 && tcgetpgrp(0) != getpgrp())
			code = 50;
		_exit(code);
	}
	/* drain the terminal so nothing blocks on it */
	while (read(master, buf, sizeof(buf)) > 0)
		;
	waitpid(pid, &status, 0);
	EXPECT_EQ(sbx_status_code(status), 0);
	close(master);
}

int main(void)
{
	return tap_run();
}
