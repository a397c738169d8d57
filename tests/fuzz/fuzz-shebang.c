/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes the "#!" parser (shebang_parse(), common/shebang.c): the script is the sandboxed
 * program's to write, and the exec handler and the tracer act on the interpreter it names.
 * Input: the first bytes of the file.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/shebang.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Shebang sb;
	int r;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	memset(&sb, 0x55, sizeof(sb));
	r = shebang_parse(data, size, &sb);
	if (r == 0 || r == -ENOEXEC) {
		/* not a script, or one the kernel refuses */
		if (r == 0 && size >= 2 && data[0] == '#' && data[1] == '!')
			abort();
		return 0;
	}
	if (r != 1 || size < 2 || data[0] != '#' || data[1] != '!')
		abort();
	/* an interpreter with no blank in it; both strings end inside their arrays */
	if (!memchr(sb.interp, 0, sizeof(sb.interp)) || !memchr(sb.arg, 0, sizeof(sb.arg)))
		abort();
	if (!sb.interp[0] || strpbrk(sb.interp, " \t\n") || strchr(sb.arg, '\n'))
		abort();
	/* the argument's leading blanks are skipped (trailing ones stay where the kernel keeps
	 * them: before a NUL, or at the end of a line without a newline) */
	if (sb.arg[0] == ' ' || sb.arg[0] == '\t')
		abort();
	/* what the two came from is on the line */
	if (!memmem(data, size < SHEBANG_BUF_SIZE ? size : SHEBANG_BUF_SIZE, sb.interp,
		    strlen(sb.interp)))
		abort();
	return 0;
}
