/* SPDX-License-Identifier: MIT */
/*
 * Run by root, the supervisor must not lend the command root's capabilities: the command
 * runs as uid 0 with none (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER dropped), so a
 * file of another user with mode 0600, or a directory of theirs with mode 0700, in a rw
 * mount stays closed to it — also when the open is emulated by a supervisor that has them.
 * Skipped for a plain user (no file of another user can be prepared, and nothing to lend),
 * and for a root without CAP_CHOWN (`docker run --cap-drop ALL`: the same).
 */
#define FS_HAVE_PREPARE
#include "tests/security/fs-escape.h"

#define NOBODY 65534

static void fs_prepare(const char *ws)
{
	char p[PATH_MAX + 64];

	if (geteuid() != 0)
		return;
	snprintf(p, sizeof(p), "%s/theirs.txt", ws);
	if (fs_write_file(p, SECRET "\n") < 0 || chown(p, NOBODY, NOBODY) < 0 || chmod(p, 0600) < 0)
		perror("preparing theirs.txt");
	snprintf(p, sizeof(p), "%s/theirdir", ws);
	if (mkdir(p, 0755) < 0)
		perror("preparing theirdir");
	snprintf(p, sizeof(p), "%s/theirdir/inner.txt", ws);
	if (fs_write_file(p, SECRET "\n") < 0)
		perror("preparing theirdir/inner.txt");
	snprintf(p, sizeof(p), "%s/theirdir", ws);
	if (chown(p, NOBODY, NOBODY) < 0 || chmod(p, 0700) < 0)
		perror("preparing theirdir");
	/* root's own file without any permission bits: only a capability opens it */
	snprintf(p, sizeof(p), "%s/nobits.txt", ws);
	if (fs_write_file(p, SECRET "\n") < 0 || chmod(p, 0) < 0)
		perror("preparing nobits.txt");
}

static int attack(void)
{
	struct stat st;
	int fd;

	if (stat("/workspace/theirs.txt", &st) < 0 || st.st_uid != NOBODY) {
		if (geteuid() != 0)
			fprintf(stderr, "skip: not run as root (no file of another user to try)\n");
		else /* chown refused: no capability to lend either (docker run --cap-drop ALL) */
			fprintf(stderr,
				"skip: root without CAP_CHOWN (a container's --cap-drop ALL?): "
				"no file of another user to try, no capability to lend\n");
		return 77;
	}
	fs_try_open("/workspace/theirs.txt");
	fs_try_open("/workspace/theirdir/inner.txt");
	fs_try_open("/workspace/nobits.txt");
	fd = open("/workspace/theirs.txt", O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd >= 0) {
		fs_bad("opened another user's 0600 file for writing");
		close(fd);
	}
	if (open("/workspace/theirdir/new.txt", O_WRONLY | O_CREAT | O_CLOEXEC, 0644) >= 0)
		fs_bad("created a file in another user's 0700 directory");
	if (chmod("/workspace/theirs.txt", 0644) == 0)
		fs_bad("chmod of another user's file (CAP_FOWNER)");
	if (chown("/workspace/nobits.txt", NOBODY, NOBODY) == 0)
		fs_bad("chown (CAP_CHOWN)");
	/* sanity: what the owner bits allow still works */
	fd = open("/workspace/prog", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror("open /workspace/prog");
		return 1;
	}
	close(fd);
	return 0;
}
