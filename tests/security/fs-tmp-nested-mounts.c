/* SPDX-License-Identifier: MIT */
/*
 * Mounts nested in a tmp mount (issue 20): the workspace again at /tmp/nest/ws (its mount
 * point and /tmp/nest missing in the tmp directory) and the read-only directory again at
 * /tmp/ro (directly in it). In the kernel view C makes those mount points in the tmp mount
 * and binds /tmp/nest onto itself read-only, as the emulated view shows such ancestors
 * (read-only skeleton directories). The attack climbs out of the nested mounts with "..",
 * writes through the nested read-only mount, and tries to replace or unmount the mount
 * points and their read-only ancestor, to plant a symlink in their place: every attempt must
 * fail, and the outside check finds the read-only directory and the secret unchanged.
 */
#define FS_HAVE_PREPARE
#include "tests/security/fs-escape.h"

#include <sys/mount.h>

static void fs_prepare(const char *ws)
{
	(void) ws;
	/* appended to the policy's mounts; ${PWD} is BASE, as for /ro */
	fs_extra_sets[0] = "mount=[{path = \"/tmp/nest/ws\", source = \"${WORKSPACE}\", mode = "
			   "\"rw\"}, {path = \"/tmp/ro\", source = \"${PWD}/ro\", mode = \"ro\"}]";
}

/* A call that must fail. */
static void must_fail(int r, const char *what)
{
	if (r >= 0)
		fs_bad(what);
}

static int attack(void)
{
	char p[PATH_MAX + 64];
	struct stat st_ws, st_nested;
	int fd;

	/* the nested mounts are there (else nothing below tests anything) */
	if (stat("/workspace", &st_ws) < 0 || stat("/tmp/nest/ws", &st_nested) < 0 ||
	    st_ws.st_ino != st_nested.st_ino || access("/tmp/nest/ws/prog", X_OK) < 0 ||
	    access("/tmp/ro/file", R_OK) < 0) {
		fprintf(stderr, "the nested mounts are not in the view\n");
		return 1;
	}

	/* ".." out of the nested mounts stays in the view */
	fs_try_open("/tmp/nest/ws/../../../secret/secret.txt");
	fs_try_open("/tmp/nest/ws/../../../../../../../../secret/secret.txt");
	snprintf(p, sizeof(p), "/tmp/nest/ws/../../../../../../../..%s", fs_secret);
	fs_try_open(p);
	snprintf(p, sizeof(p), "/tmp/ro/../../../../../../../..%s", fs_secret);
	fs_try_open(p);
	if (chdir("/tmp/nest/ws") == 0) {
		for (int i = 0; i < 12; i++)
			if (chdir("..") < 0)
				break;
		snprintf(p, sizeof(p), ".%s", fs_secret);
		fs_try_open(p);
	}

	/* the read-only mount nested in the tmp mount */
	fd = open("/tmp/ro/file", O_WRONLY | O_CLOEXEC);
	must_fail(fd, "open(/tmp/ro/file, O_WRONLY) succeeded");
	if (fd >= 0)
		close(fd);
	fd = open("/tmp/ro/new", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	must_fail(fd, "creating /tmp/ro/new succeeded");
	if (fd >= 0)
		close(fd);
	must_fail(chmod("/tmp/ro/file", 0666), "chmod(/tmp/ro/file) succeeded");
	must_fail(rename("/tmp/ro/file", "/tmp/ro/moved"), "rename in /tmp/ro succeeded");
	must_fail(truncate("/tmp/ro/file", 0), "truncate(/tmp/ro/file) succeeded");

	/* the mount points and their read-only ancestor cannot be replaced */
	must_fail(rename("/tmp/ro", "/tmp/ro2"), "rename(/tmp/ro) succeeded");
	must_fail(rmdir("/tmp/ro"), "rmdir(/tmp/ro) succeeded");
	must_fail(rename("/tmp/nest", "/tmp/nest2"), "rename(/tmp/nest) succeeded");
	must_fail(rename("/tmp/nest/ws", "/tmp/nest/ws2"), "rename(/tmp/nest/ws) succeeded");
	must_fail(rmdir("/tmp/nest/ws"), "rmdir(/tmp/nest/ws) succeeded");
	must_fail(mkdir("/tmp/nest/other", 0755), "mkdir(/tmp/nest/other) succeeded");
	snprintf(p, sizeof(p), "%s/secret", fs_base);
	must_fail(symlink(p, "/tmp/nest/evil"), "symlink in /tmp/nest succeeded");
	fs_try_open("/tmp/nest/evil/secret.txt");
	must_fail(umount2("/tmp/nest/ws", MNT_DETACH), "umount2(/tmp/nest/ws) succeeded");
	must_fail(umount2("/tmp/nest", MNT_DETACH), "umount2(/tmp/nest) succeeded");
	must_fail(umount2("/tmp/ro", MNT_DETACH), "umount2(/tmp/ro) succeeded");

	/* still the workspace and the read-only directory, where they were */
	if (stat("/tmp/nest/ws", &st_nested) < 0 || st_nested.st_ino != st_ws.st_ino)
		fs_bad("/tmp/nest/ws is no longer the workspace");
	if (access("/tmp/ro/file", R_OK) < 0)
		fs_bad("/tmp/ro is no longer the read-only directory");
	/* sanity: the tmp mount itself stays writable */
	if (fs_write_file("/tmp/scratch", "x") < 0) {
		fprintf(stderr, "the tmp mount is not writable\n");
		return 1;
	}
	return 0;
}
