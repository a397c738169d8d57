/* SPDX-License-Identifier: MIT */
/*
 * ro rules on fixed paths (issue 20): /workspace/prot (a directory) and /workspace/prot.txt
 * (a file) are read-only by rule in the read-write workspace. In the kernel view each is
 * bound onto itself read-only (tracer/kview.c, ro_rule); emulated, the supervisor refuses
 * writes by rule. The attack writes, truncates, creates, removes, renames, links, chmods
 * and touches, in and out of the protected paths, and replaces them by rename over them:
 * every attempt must fail, and outside, both are as they were.
 */
#define FS_HAVE_PREPARE
#define FS_HAVE_CHECK
#include "tests/security/fs-escape.h"

#include <utime.h>

#define PROT_TEXT "protected content\n"

static char ws_path[PATH_MAX];
static struct stat st_x, st_txt;

static void fs_prepare(const char *ws)
{
	char p[PATH_MAX + 32];

	snprintf(ws_path, sizeof(ws_path), "%s", ws);
	snprintf(p, sizeof(p), "%s/prot", ws);
	(void) mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/prot/inner", ws);
	(void) mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/prot/inner/x", ws);
	(void) fs_write_file(p, PROT_TEXT);
	(void) stat(p, &st_x);
	snprintf(p, sizeof(p), "%s/prot.txt", ws);
	(void) fs_write_file(p, PROT_TEXT);
	(void) stat(p, &st_txt);
	fs_extra_sets[0] = "rule=[{path = \"/workspace/prot\", access = \"ro\"}, "
			   "{path = \"/workspace/prot.txt\", access = \"ro\"}]";
}

static int unchanged(const char *rel, const struct stat *before)
{
	char p[PATH_MAX + 32], buf[64];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", ws_path, rel);
	if (fs_read_file(p, buf, sizeof(buf)) < 0 || strcmp(buf, PROT_TEXT) != 0 ||
	    stat(p, &st) < 0 || st.st_ino != before->st_ino || st.st_mode != before->st_mode ||
	    st.st_mtim.tv_sec != before->st_mtim.tv_sec ||
	    st.st_mtim.tv_nsec != before->st_mtim.tv_nsec || st.st_nlink != 1) {
		fprintf(stderr, "ESCAPE: %s was changed\n", rel);
		return 1;
	}
	return 0;
}

static int entries(const char *rel)
{
	char p[PATH_MAX + 32];
	DIR *d;
	struct dirent *de;
	int n = 0;

	snprintf(p, sizeof(p), "%s/%s", ws_path, rel);
	d = opendir(p);
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	if (d)
		closedir(d);
	return d ? n : -1;
}

static int fs_check(void)
{
	int bad = unchanged("prot/inner/x", &st_x) | unchanged("prot.txt", &st_txt);

	if (entries("prot") != 1 || entries("prot/inner") != 1) {
		fprintf(stderr, "ESCAPE: the protected directory gained or lost entries\n");
		bad = 1;
	}
	return bad;
}

static void must_fail(int r, const char *what)
{
	if (r >= 0)
		fs_bad(what);
}

static int attack(void)
{
	struct utimbuf t = {.actime = 1, .modtime = 1};
	int fd;

	if (chdir("/workspace") < 0 || access("prot/inner/x", R_OK) < 0 ||
	    access("prot.txt", R_OK) < 0) {
		fprintf(stderr, "the protected paths are not in the view\n");
		return 1;
	}
	/* sanity: the rest of the workspace is writable */
	if (fs_write_file("scratch", "x") < 0 || unlink("scratch") < 0) {
		fprintf(stderr, "the workspace is not writable\n");
		return 1;
	}
	for (const char *const *f = (const char *const[]){"prot/inner/x", "prot.txt", NULL}; *f;
	     f++) {
		char m[PATH_MAX];

		fd = open(*f, O_WRONLY | O_CLOEXEC);
		snprintf(m, sizeof(m), "open(%s, O_WRONLY) succeeded", *f);
		must_fail(fd, m);
		if (fd >= 0)
			close(fd);
		fd = open(*f, O_RDWR | O_TRUNC | O_CLOEXEC);
		must_fail(fd, "open(O_TRUNC) succeeded");
		if (fd >= 0)
			close(fd);
		must_fail(truncate(*f, 0), "truncate succeeded");
		must_fail(chmod(*f, 0666), "chmod succeeded");
		must_fail(utime(*f, &t), "utime succeeded");
		must_fail(unlink(*f), "unlink succeeded");
		must_fail(rename(*f, "moved"), "rename out of the rule succeeded");
		must_fail(link(*f, "linked"), "link out of the rule succeeded");
		if (access("moved", F_OK) == 0)
			(void) unlink("moved"); /* a copy by mv would be fine; a rename is not */
		(void) unlink("linked");
	}
	fd = open("prot/new", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	must_fail(fd, "creating prot/new succeeded");
	if (fd >= 0)
		close(fd);
	must_fail(mkdir("prot/inner/d", 0755), "mkdir in prot succeeded");
	must_fail(symlink("/tmp", "prot/inner/s"), "symlink in prot succeeded");
	must_fail(rmdir("prot/inner"), "rmdir(prot/inner) succeeded");
	must_fail(rename("prot/inner", "inner2"), "rename(prot/inner) succeeded");
	must_fail(rename("prot", "prot2"), "rename(prot) succeeded");
	must_fail(rmdir("prot"), "rmdir(prot) succeeded");
	/* replace the protected names by renaming something else over them */
	if (fs_write_file("decoy", "decoy\n") == 0) {
		must_fail(rename("decoy", "prot.txt"), "rename over prot.txt succeeded");
		must_fail(rename("decoy", "prot/inner/x"), "rename over prot/inner/x succeeded");
		must_fail(link("decoy", "prot/inner/l"), "link into prot succeeded");
		(void) unlink("decoy");
	}
	if (mkdir("decoydir", 0755) == 0) {
		must_fail(rename("decoydir", "prot"), "rename over prot succeeded");
		(void) rmdir("decoydir");
	}
	return 0;
}
