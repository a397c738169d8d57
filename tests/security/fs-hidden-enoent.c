/* SPDX-License-Identifier: MIT */
/* A path hidden by a rule (/workspace/hidden*, tests/data/fs-security.toml) looks absent
 * everywhere: ENOENT from every path syscall and missing from the listing of its parent. */
#define FS_HAVE_PREPARE 1
#include "tests/security/fs-escape.h"

#include <sys/xattr.h>

static void fs_prepare(const char *ws)
{
	char p[PATH_MAX + 32];

	snprintf(p, sizeof(p), "%s/hidden.txt", ws);
	(void) fs_write_file(p, SECRET "\n");
	snprintf(p, sizeof(p), "%s/hiddendir", ws);
	(void) mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/hiddendir/f", ws);
	(void) fs_write_file(p, SECRET "\n");
}

#define EXPECT_ENOENT(call, what)                                                                  \
	do {                                                                                       \
		errno = 0;                                                                         \
		if ((call) >= 0 || errno != ENOENT) {                                              \
			char m_[160];                                                              \
			snprintf(m_, sizeof(m_), "%s: %s instead of ENOENT", what,                 \
				 errno ? strerror(errno) : "success");                             \
			fs_bad(m_);                                                                \
		}                                                                                  \
	} while (0)

static int attack(void)
{
	const char *names[] = {"/workspace/hidden.txt",
			       "/workspace/hiddendir",
			       "/workspace/hiddendir/f",
			       "hidden.txt",
			       "hiddendir/f",
			       NULL};
	struct stat st;
	char buf[256];
	DIR *d;
	struct dirent *de;
	bool saw_prog = false;

	for (const char **n = names; *n; n++) {
		EXPECT_ENOENT(open(*n, O_RDONLY | O_CLOEXEC), *n);
		EXPECT_ENOENT(stat(*n, &st), "stat");
		EXPECT_ENOENT(lstat(*n, &st), "lstat");
		EXPECT_ENOENT(access(*n, F_OK), "access");
		EXPECT_ENOENT(readlink(*n, buf, sizeof(buf)), "readlink");
		EXPECT_ENOENT(getxattr(*n, "user.x", buf, sizeof(buf)), "getxattr");
		EXPECT_ENOENT(chdir(*n), "chdir");
		EXPECT_ENOENT(unlink(*n), "unlink");
		EXPECT_ENOENT(rename(*n, "/workspace/moved"), "rename");
		EXPECT_ENOENT(chmod(*n, 0777), "chmod");
		EXPECT_ENOENT(truncate(*n, 0), "truncate");
		if (chdir("/workspace") < 0)
			return 1;
	}
	EXPECT_ENOENT(open("/workspace/hiddendir/", O_RDONLY | O_DIRECTORY | O_CLOEXEC), "opendir");
	/* a symlink to it is no way around */
	if (symlink("hidden.txt", "/workspace/to-hidden") == 0)
		EXPECT_ENOENT(open("/workspace/to-hidden", O_RDONLY | O_CLOEXEC), "via symlink");
	d = opendir("/workspace");
	if (!d) {
		perror("opendir /workspace");
		return 1;
	}
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "hidden", 6) == 0)
			fs_bad("a hidden name is listed in /workspace");
		if (strcmp(de->d_name, "prog") == 0)
			saw_prog = true;
	}
	closedir(d);
	if (!saw_prog) {
		fprintf(stderr, "the listing of /workspace lacks prog\n");
		return 1;
	}
	return 0;
}
