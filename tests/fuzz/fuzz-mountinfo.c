/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes the /proc/PID/mountinfo reader (mountinfo_next(), common/util.c), which the view
 * (emulation/path/view.c) runs over the host's mount table at start-up. Mount points are
 * names that whoever made the mount chose, escapes and all (any user can name a FUSE mount
 * or a removable medium's). Input: the file's text, read through a stdio stream as the
 * view reads it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = NULL, *point, *fstype;
	size_t cap = 0, lines = 1;
	FILE *f;

	/* fmemopen() of an empty buffer fails before glibc 2.22 */
	if (size == 0 || size > FUZZ_MAX_INPUT)
		return 0;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	f = fmemopen((void *) data, size, "r");
	if (!f)
		abort();
	while (mountinfo_next(f, &line, &cap, &point, &fstype) > 0) {
		size_t plen = strlen(point), flen = strlen(fstype);

		/* both inside the line, which is at most the input */
		if (point < line || point + plen >= line + cap || fstype < line ||
		    fstype + flen >= line + cap || plen > size || flen > size)
			abort();
		/* the fields are cut at a space: an escaped one (\040) is the only one left */
		if (strchr(fstype, ' ') || point > fstype)
			abort();
		if (lines-- == 0)
			abort(); /* more entries than lines */
	}
	free(line);
	(void) fclose(f);
	return 0;
}
