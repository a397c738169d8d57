/* SPDX-License-Identifier: MIT */
/* Fail closed: SIGKILL the supervisor while the tree has a setsid()+double-forked daemon and
 * a busy loop; afterwards no process of the tree is alive, and the run's scratch directories
 * (made in $XDG_RUNTIME_DIR, which we point at a directory of our own) are gone too. */
#include <sys/stat.h>

#include "tests/helpers/sbx-test.h"

int main(void)
{
	char *dir = sbx_tmpdir(), file[600];
	const char *cmd[] = {sbx_probe(), "daemon", file, NULL};
	int daemon_pid = 0, busy_pid = 0, status, i;
	FILE *f = NULL;
	pid_t sup;

	char rt[600];

	if (!dir)
		return 1;
	snprintf(file, sizeof(file), "%s/pids", dir);
	snprintf(rt, sizeof(rt), "%s/rt", dir);
	if (mkdir(rt, 0700) < 0 || setenv("XDG_RUNTIME_DIR", rt, 1) < 0)
		return 1;
	sup = sbx_spawn(NULL, cmd, -1, NULL);
	if (sup < 0)
		return 1;
	for (i = 0; i < 1000 && !f; i++) {
		sbx_sleep_ms(10);
		f = fopen(file, "re");
		if (f && fscanf(f, "%d %d", &daemon_pid, &busy_pid) != 2) {
			fclose(f);
			f = NULL;
		}
	}
	if (!f) {
		printf("not ok: the daemon did not start\n");
		kill(sup, SIGKILL);
		return 1;
	}
	fclose(f);
	if (!sbx_alive(daemon_pid) || !sbx_alive(busy_pid)) {
		printf("not ok: tree not running before the kill\n");
		return 1;
	}
	kill(sup, SIGKILL);
	waitpid(sup, &status, 0);
	/* the keeper kills the tree when it sees the supervisor gone; allow it time */
	for (i = 0; i < 1000 && (sbx_alive(daemon_pid) || sbx_alive(busy_pid)); i++)
		sbx_sleep_ms(10);
	unlink(file);
	if (!sbx_dir_empties(rt, 10000)) {
		printf("not ok: the scratch directories outlived the supervisor's kill\n");
		return 1;
	}
	rmdir(rt);
	rmdir(dir);
	if (sbx_alive(daemon_pid) || sbx_alive(busy_pid)) {
		printf("not ok: daemon %d alive %d, busy %d alive %d\n", daemon_pid,
		       sbx_alive(daemon_pid), busy_pid, sbx_alive(busy_pid));
		kill(daemon_pid, SIGKILL);
		kill(busy_pid, SIGKILL);
		return 1;
	}
	return 0;
}
