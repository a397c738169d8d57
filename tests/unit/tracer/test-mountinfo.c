/* SPDX-License-Identifier: MIT */
/* mountinfo_next() (common/util.c): the mount point with its octal escapes undone, the file
 * system type, lines longer than any fixed buffer, unparsable lines skipped. The procfs
 * search of both views (emulation/path/view.c, tracer/kview.c) reads mountinfo with it: a
 * procfs below a source whose path has a space was missed before. */
#include "tests/unit/tap.h"

#include "common/util.h"

static FILE *stream(const char *text)
{
	return fmemopen((void *) text, strlen(text), "r");
}

TEST(escapes_and_fstype)
{
	FILE *f = stream("25 1 0:23 / /a\\040b/proc rw,nosuid shared:1 - proc proc rw\n"
			 "garbage without the separator\n"
			 "26 1 0:5 / /dev rw - devtmpfs udev rw\n");
	char *line = NULL, *point, *fstype;
	size_t cap = 0;

	ASSERT_EQ(mountinfo_next(f, &line, &cap, &point, &fstype), 1);
	EXPECT_STREQ(point, "/a b/proc");
	EXPECT_STREQ(fstype, "proc");
	ASSERT_EQ(mountinfo_next(f, &line, &cap, &point, &fstype), 1);
	EXPECT_STREQ(point, "/dev");
	EXPECT_STREQ(fstype, "devtmpfs");
	EXPECT_EQ(mountinfo_next(f, &line, &cap, &point, &fstype), 0);
	free(line);
	fclose(f);
}

TEST(long_line)
{
	size_t n = 10000;
	char *text = malloc(n + 64), *line = NULL, *point, *fstype;
	size_t cap = 0;
	FILE *f;

	strcpy(text, "30 1 0:40 / /");
	memset(text + strlen(text), 'x', n);
	strcpy(text + 13 + n, " rw - proc proc rw\n");
	f = stream(text);
	ASSERT_EQ(mountinfo_next(f, &line, &cap, &point, &fstype), 1);
	EXPECT_EQ(strlen(point), n + 1);
	EXPECT_STREQ(fstype, "proc");
	free(line);
	fclose(f);
	free(text);
}

int main(void)
{
	return tap_run();
}
