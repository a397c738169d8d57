/* SPDX-License-Identifier: MIT */
/* shebang_parse() (common/shebang.c): the "#!" line as execve(2) reads it. The cases marked
 * "native" were checked on Linux 6.18 by running such a script and printing its argv. */
#include "tests/unit/tap.h"

#include <errno.h>

#include "common/shebang.h"

static int parse(const char *text, Shebang *sb)
{
	memset(sb, 'x', sizeof(*sb)); /* every field must be written */
	return shebang_parse(text, strlen(text), sb);
}

TEST(not_a_script)
{
	Shebang sb;

	EXPECT_EQ(shebang_parse("", 0, &sb), 0);
	EXPECT_EQ(shebang_parse("#", 1, &sb), 0);
	EXPECT_EQ(shebang_parse("\177ELF", 4, &sb), 0);
	EXPECT_EQ(shebang_parse(" #!/bin/sh\n", 11, &sb), 0);
	/* only the first two bytes count: "#!" must be the file's first bytes */
	EXPECT_EQ(shebang_parse("#!/bin/sh\n", 1, &sb), 0);
}

TEST(interpreter_alone)
{
	Shebang sb;

	ASSERT_EQ(parse("#!/bin/sh\necho hi\n", &sb), 1);
	EXPECT_STREQ(sb.interp, "/bin/sh");
	EXPECT_STREQ(sb.arg, "");
	/* blanks after "#!" and at the end of the line */
	ASSERT_EQ(parse("#! \t/bin/sh \t \n", &sb), 1);
	EXPECT_STREQ(sb.interp, "/bin/sh");
	EXPECT_STREQ(sb.arg, "");
	/* no newline: the file's end ends the line */
	ASSERT_EQ(parse("#!/bin/sh", &sb), 1);
	EXPECT_STREQ(sb.interp, "/bin/sh");
	EXPECT_STREQ(sb.arg, "");
	/* a relative name is the kernel's to look up, as written */
	ASSERT_EQ(parse("#!sh\n", &sb), 1);
	EXPECT_STREQ(sb.interp, "sh");
	/* a carriage return is not a blank: it is part of the name (the "bad interpreter" of
	 * a script saved with CRLF line ends) */
	ASSERT_EQ(parse("#!/bin/sh\r\n", &sb), 1);
	EXPECT_STREQ(sb.interp, "/bin/sh\r");
}

TEST(one_argument_with_its_inner_blanks)
{
	Shebang sb;

	ASSERT_EQ(parse("#!/usr/bin/env python3\n", &sb), 1);
	EXPECT_STREQ(sb.interp, "/usr/bin/env");
	EXPECT_STREQ(sb.arg, "python3");
	/* everything after the interpreter is one argument, trimmed at both ends only */
	ASSERT_EQ(parse("#! /usr/bin/env  \t python3  -u  x \t\nprint(1)\n", &sb), 1);
	EXPECT_STREQ(sb.interp, "/usr/bin/env");
	EXPECT_STREQ(sb.arg, "python3  -u  x");
	ASSERT_EQ(parse("#!/bin/awk\t-f", &sb), 1);
	EXPECT_STREQ(sb.interp, "/bin/awk");
	EXPECT_STREQ(sb.arg, "-f");
}

TEST(nul_bytes_end_names)
{
	Shebang sb;

	/* a NUL right after the interpreter: no argument */
	ASSERT_EQ(shebang_parse("#!/bin/sh\0 -x\n", 14, &sb), 1);
	EXPECT_STREQ(sb.interp, "/bin/sh");
	EXPECT_STREQ(sb.arg, "");
	/* a NUL inside the argument cuts it */
	ASSERT_EQ(shebang_parse("#!/bin/sh -x\0yz\n", 16, &sb), 1);
	EXPECT_STREQ(sb.interp, "/bin/sh");
	EXPECT_STREQ(sb.arg, "-x");
}

TEST(no_interpreter_is_enoexec)
{
	Shebang sb;

	/* native: "#!\n" and "#!  \n" fail with ENOEXEC */
	EXPECT_EQ(parse("#!\n", &sb), -ENOEXEC);
	EXPECT_EQ(parse("#! \t \nexit 0\n", &sb), -ENOEXEC);
	/* without a newline the kernel tries an empty name (EACCES or ENOENT); refused too */
	EXPECT_EQ(parse("#!", &sb), -ENOEXEC);
	EXPECT_EQ(parse("#!   ", &sb), -ENOEXEC);
}

/* Where the line is longer than the 256 bytes the kernel reads (each case native). */
TEST(long_lines)
{
	char text[600];
	Shebang sb;

	/* an interpreter name that runs through byte 255 may be cut: ENOEXEC */
	memset(text, 0, sizeof(text));
	strcpy(text, "#!/");
	memset(text + 3, 'a', 400);
	text[403] = '\n';
	EXPECT_EQ(parse(text, &sb), -ENOEXEC);
	memset(text, 0, sizeof(text));
	strcpy(text, "#!./");
	memset(text + 4, 'a', SHEBANG_BUF_SIZE - 4); /* through byte 255 */
	strcat(text, " arg\n");
	EXPECT_EQ(parse(text, &sb), -ENOEXEC);
	/* a blank as byte 255 ends the name (bytes 2-254); the argument is past the line */
	memset(text, 0, sizeof(text));
	strcpy(text, "#!./");
	memset(text + 4, 'a', SHEBANG_BUF_SIZE - 5);
	strcat(text, " arg\n");
	ASSERT_EQ(parse(text, &sb), 1);
	EXPECT_EQ(strlen(sb.interp), SHEBANG_BUF_SIZE - 3);
	EXPECT_STREQ(sb.arg, "");
	/* a blank as byte 254: the same, one byte shorter */
	memset(text, 0, sizeof(text));
	strcpy(text, "#!./");
	memset(text + 4, 'a', SHEBANG_BUF_SIZE - 6);
	strcat(text, " arg\n");
	ASSERT_EQ(parse(text, &sb), 1);
	EXPECT_EQ(strlen(sb.interp), SHEBANG_BUF_SIZE - 4);
	EXPECT_STREQ(sb.arg, "");
	/* a short name and an argument past the buffer: the argument is cut at byte 254 */
	memset(text, 0, sizeof(text));
	strcpy(text, "#!./x ");
	memset(text + 6, 'b', 400);
	text[406] = '\n';
	ASSERT_EQ(parse(text, &sb), 1);
	EXPECT_STREQ(sb.interp, "./x");
	EXPECT_EQ(strlen(sb.arg), SHEBANG_BUF_SIZE - 1 - 6);
	/* ... and blanks at its cut end are trimmed */
	memset(text, 0, sizeof(text));
	strcpy(text, "#!./x ");
	memset(text + 6, 'b', SHEBANG_BUF_SIZE - 8);
	strcat(text, "   cccccccccc");
	ASSERT_EQ(parse(text, &sb), 1);
	EXPECT_EQ(strlen(sb.arg), SHEBANG_BUF_SIZE - 8);
	/* a newline within the buffer ends the line even when the file goes on */
	memset(text, 0, sizeof(text));
	strcpy(text, "#!/bin/sh -e\n");
	memset(text + 13, 'c', 400);
	ASSERT_EQ(parse(text, &sb), 1);
	EXPECT_STREQ(sb.arg, "-e");
}

int main(void)
{
	return tap_run();
}
