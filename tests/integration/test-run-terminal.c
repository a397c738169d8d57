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

/*
 * The same on a terminal in a pid namespace (issue 23: the shell preset's /proc in the view
 * in the kernel): the command is pid 2 there, not the namespace's init, so Ctrl-C ends it
 * (an init would ignore SIGINT), Ctrl-Z stops it and hands the terminal back, and after
 * "fg" it reads the terminal again. This process plays the shell: a session leader on a new
 * terminal that starts sbxtrace as a job of its own. Exit codes: 0 fine, 77 no view in the
 * kernel here, else the step that failed.
 */
static int job_shell(const char *ws, int step_fd)
{
	const char *sbxtrace = getenv("SBXTRACE");
	const char *argv[] = {sbxtrace, "run", "-s", "tracer.kernel_view=true", "-s",
			      "network.unshare=auto", "-w", ws, "shell", "--", "/bin/sh", "-c",
			      "echo ready; read x; echo got $x; echo again; exec sleep 60", NULL};
	pid_t job;
	int st;
	char c;

	job = fork();
	if (job == 0) {
		/* from a background group, tcsetpgrp() stops the caller with SIGTTOU unless it
		 * ignores it: the job stopped before sbxtrace ran and the rounds went astray
		 * (failed under load in CI, and always where sbxtrace exits 125 at once) */
		setpgid(0, 0);
		(void) signal(SIGTTOU, SIG_IGN);
		(void) tcsetpgrp(0, getpid());
		(void) signal(SIGTTOU, SIG_DFL);
		execv(sbxtrace, (char **) argv);
		_exit(99);
	}
	setpgid(job, job);
	(void) tcsetpgrp(0, job);
	/* Ctrl-Z (sent by the test once the program said "ready"): the job stops */
	if (waitpid(job, &st, WUNTRACED) != job)
		return 10;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 125)
		return 77;
	if (!WIFSTOPPED(st))
		return 11;
	/* the terminal is ours again (a shell takes it back), then "fg" */
	(void) signal(SIGTTOU, SIG_IGN);
	if (tcsetpgrp(0, getpgrp()) < 0 || tcgetpgrp(0) != getpgrp())
		return 12;
	c = 'f';
	if (write(step_fd, &c, 1) != 1)
		return 13;
	(void) tcsetpgrp(0, job);
	(void) kill(-job, SIGCONT);
	/* "x" read and echoed, then Ctrl-C ends sleep, and with it the run: 128 + SIGINT */
	if (waitpid(job, &st, 0) != job)
		return 14;
	(void) tcsetpgrp(0, getpgrp());
	if (WIFEXITED(st) && WEXITSTATUS(st) == 128 + SIGINT)
		return 0;
	/* for the test's diagnostics: how the run ended instead */
	{
		char path[4200];
		FILE *f;

		snprintf(path, sizeof(path), "%s/.job-status", ws);
		f = fopen(path, "we");
		if (f) {
			fprintf(f, "wait status 0x%x (exit %d, signal %d)", st,
				WIFEXITED(st) ? WEXITSTATUS(st) : -1,
				WIFSIGNALED(st) ? WTERMSIG(st) : -1);
			fclose(f);
		}
	}
	return 15;
}

/* Reads the terminal until text appears (or it ends); 0 when it did. */
static int expect_text(int master, const char *text, char *seen, size_t size)
{
	size_t len = strlen(seen);

	while (!strstr(seen, text)) {
		ssize_t n;

		if (len + 1 >= size)
			return -1;
		n = read(master, seen + len, size - 1 - len);
		if (n <= 0)
			return -1;
		len += (size_t) n;
		seen[len] = 0;
	}
	return 0;
}

/* One round of the job-control exchange below; the shell's exit status. */
static int job_round(const char *ws, char *seen, size_t size)
{
	int master, steps[2], status;
	pid_t pid;
	char c;

	if (pipe(steps) < 0)
		return -1;
	pid = forkpty(&master, NULL, NULL, NULL);
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(steps[0]);
		_exit(job_shell(ws, steps[1]));
	}
	close(steps[1]);
	/* the program runs: stop it */
	if (expect_text(master, "ready", seen, size) == 0 && write(master, "\x1a", 1) == 1 &&
	    read(steps[0], &c, 1) == 1 && write(master, "x\n", 2) == 2 &&
	    expect_text(master, "again", seen, size) == 0)
		(void) !write(master, "\x03", 1);
	(void) expect_text(master, "\x01", seen, size); /* to the end */
	waitpid(pid, &status, 0);
	close(master);
	close(steps[0]);
	return sbx_status_code(status);
}

TEST(job_control_in_a_pid_namespace)
{
	char *ws = sbx_tmpdir(), seen[4096] = "", path[4200], why[200] = "";
	int code;
	FILE *f;

	ASSERT_TRUE(ws != NULL);
	code = job_round(ws, seen, sizeof(seen));
	if (code == 77 && strstr(seen, "user namespace")) {
		TAP_SKIP("no view in the kernel here (no user namespace)");
		return;
	}
	if (code != 0) {
		snprintf(path, sizeof(path), "%s/.job-status", ws);
		f = fopen(path, "re");
		if (f) {
			if (!fgets(why, sizeof(why), f))
				why[0] = 0;
			fclose(f);
		}
		printf("# shell exit %d, %s; output: %.200s\n", code, why, seen);
	}
	EXPECT_EQ(code, 0);
}

int main(void)
{
	return tap_run();
}
