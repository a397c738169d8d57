/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/* How much of a script the kernel reads to find its "#!" line (BINPRM_BUF_SIZE, 256 since
 * Linux 5.1): the line, "#!" included, has at most SHEBANG_BUF_SIZE - 1 bytes. */
#define SHEBANG_BUF_SIZE 256

typedef struct Shebang {
	char interp[SHEBANG_BUF_SIZE]; /* the interpreter, as written (a path or a name) */
	char arg[SHEBANG_BUF_SIZE];    /* the one optional argument, "" if none */
} Shebang;

/**
 * Parses the "#!" line of a script from the first len bytes of the file (bytes past
 * SHEBANG_BUF_SIZE are ignored), as execve(2) does on Linux: spaces and tabs after "#!" are
 * skipped; the interpreter runs to the next space, tab or NUL; whatever follows on the line,
 * its leading and trailing spaces and tabs removed, is a single argument (cut at a NUL). A
 * line without a newline ends where the bytes the kernel reads end.
 *
 * Returns 1 and fills ret; 0 when buf does not start with "#!" (not a script: ret is left
 * alone); -ENOEXEC where the kernel refuses the line: no interpreter after "#!", or an
 * interpreter name that runs to the end of the bytes read (it may be cut short). (A file
 * that holds nothing but "#!" and blanks, without a newline, the kernel tries to run with an
 * empty interpreter name and fails with EACCES or ENOENT; here it is -ENOEXEC too.)
 */
int shebang_parse(const void *buf, size_t len, Shebang *ret);
