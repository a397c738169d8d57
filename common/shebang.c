/* SPDX-License-Identifier: MIT */
/*
 * The "#!" line of a script, read as Linux's execve(2) reads it (man execve, "Interpreter
 * scripts"). The one parser of it: emulation/fs-exec.c checks the interpreter a script will
 * run, the tracer rebuilds the argv the kernel would pass to it.
 */
#include "common/shebang.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

int shebang_parse(const void *buf, size_t len, Shebang *ret)
{
	/* what the kernel sees: the first bytes of the file, zeros after its end */
	char line[SHEBANG_BUF_SIZE] = {0};
	size_t end, i, interp, sep;
	char *nl;

	if (len > sizeof(line))
		len = sizeof(line);
	memcpy(line, buf, len);
	if (len < 2 || line[0] != '#' || line[1] != '!')
		return 0;

	/* the line: up to its newline, else the bytes read but the last one */
	nl = memchr(line, '\n', sizeof(line));
	end = nl ? (size_t) (nl - line) : sizeof(line) - 1;

	for (interp = 2; interp < end && blank(line[interp]); interp++)
		;
	if (interp == end || line[interp] == 0)
		return -ENOEXEC; /* nothing after "#!" but blanks */
	if (!nl) {
		/* the name must end within the bytes read, the last one included (a blank or a
		 * NUL there ends it), else it may go on in the file */
		for (i = interp; i < sizeof(line) && !blank(line[i]) && line[i]; i++)
			;
		if (i == sizeof(line))
			return -ENOEXEC;
	}
	for (sep = interp; sep < end && !blank(line[sep]) && line[sep]; sep++)
		;

	while (end > sep && blank(line[end - 1]))
		end--;
	memcpy(ret->interp, line + interp, sep - interp);
	ret->interp[sep - interp] = 0;
	ret->arg[0] = 0;
	if (sep < end && line[sep]) {
		for (i = sep; i < end && blank(line[i]); i++)
			;
		line[end] = 0;
		/* a NUL inside the argument ends it, as in any C string the kernel passes */
		strcpy(ret->arg, line + i);
	}
	return 1;
}
