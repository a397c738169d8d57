/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes the /proc/PID/maps parser of backtraces (unwind_maps_next(), unwind/maps.c). The
 * names in the file are the sandboxed program's: the files it maps and the names it gives
 * anonymous mappings. Input: the file's text, as the session reads it into its buffer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "unwind/unwind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *) data;
	size_t pos = 0, last = 0, lines = 0;
	UnwindMapping m;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	while (unwind_maps_next(buf, size, &pos, &m) > 0) {
		/* the name inside the line just parsed, which ends at the newline before pos */
		if (pos <= last || pos > size || buf[pos - 1] != '\n')
			abort();
		if (m.name_len && (m.name < buf + last || m.name + m.name_len > buf + pos - 1))
			abort();
		if (memchr(m.name, '\n', m.name_len) || strlen(m.perms) != 4)
			abort();
		if (lines-- == 0)
			abort(); /* more mappings than lines */
		last = pos;
	}
	/* what is left is one cut line at most */
	if (pos > size || memchr(buf + pos, '\n', size - pos))
		abort();
	return 0;
}
