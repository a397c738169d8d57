/* SPDX-License-Identifier: MIT */
/*
 * The /proc/PID/maps parser of backtraces, a pure function on a buffer (the fuzzer,
 * tests/fuzz/fuzz-maps.c, runs it as the session does).
 *
 * The kernel writes each line as "start-end perms offset major:minor inode", padding, then
 * the name (show_map_vma(), fs/proc/task_mmu.c): a path, "[vdso]" and the like, or nothing.
 * The name is the program's choice (any file it maps, any name it gives an anonymous
 * mapping since 5.17, PR_SET_VMA_ANON_NAME): spaces, and " (deleted)" at its end, are its
 * bytes; only a newline ends it, as the kernel escapes "\n" in it as "\012". So a name is
 * taken up to the newline only, and a last line without one (the buffer cut it) is not
 * taken at all. Numbers are parsed strictly (hex digits, at most 16; no sign, no "0x"),
 * unlike sscanf, which also takes what the kernel never writes.
 */
#include "unwind/unwind.h"

#include <string.h>

#include "common/util.h"

/* A hex number at s[*i..end) ending at the character stop; false if malformed. */
static bool parse_hex(const char *s, size_t end, size_t *i, char stop, uint64_t *ret)
{
	uint64_t v = 0;
	size_t digits = 0;

	while (*i < end && hex_digit_value((unsigned char) s[*i]) >= 0) {
		if (++digits > 16)
			return false;
		v = v << 4 | (uint64_t) hex_digit_value((unsigned char) s[*i]);
		(*i)++;
	}
	if (digits == 0 || *i >= end || s[*i] != stop)
		return false;
	(*i)++;
	*ret = v;
	return true;
}

static bool parse_line(const char *s, size_t end, UnwindMapping *m)
{
	uint64_t major, minor;
	size_t i = 0;

	memset(m, 0, sizeof(*m));
	if (!parse_hex(s, end, &i, '-', &m->start) || !parse_hex(s, end, &i, ' ', &m->end))
		return false;
	if (end - i < 5 || s[i + 4] != ' ')
		return false;
	memcpy(m->perms, s + i, 4);
	for (size_t k = 0; k < 4; k++)
		if (m->perms[k] == 0)
			return false;
	i += 5;
	if (!parse_hex(s, end, &i, ' ', &m->offset) || !parse_hex(s, end, &i, ':', &major) ||
	    !parse_hex(s, end, &i, ' ', &minor) || major > UINT32_MAX || minor > UINT32_MAX)
		return false;
	m->dev_major = (unsigned) major;
	m->dev_minor = (unsigned) minor;
	if (i >= end || s[i] < '0' || s[i] > '9')
		return false;
	for (; i < end && s[i] >= '0' && s[i] <= '9'; i++) {
		uint64_t d = (uint64_t) (s[i] - '0');

		if (m->ino > (UINT64_MAX - d) / 10)
			return false;
		m->ino = m->ino * 10 + d;
	}
	if (i < end && s[i] != ' ')
		return false;
	while (i < end && s[i] == ' ')
		i++;
	m->name = s + i;
	m->name_len = end - i;
	return true;
}

int unwind_maps_next(const char *buf, size_t len, size_t *pos, UnwindMapping *ret)
{
	while (*pos < len) {
		const char *line = buf + *pos;
		const char *nl = memchr(line, '\n', len - *pos);
		UnwindMapping m;

		if (!nl)
			return 0; /* cut: left for the caller to complete or drop */
		*pos += (size_t) (nl - line) + 1;
		if (parse_line(line, (size_t) (nl - line), &m)) {
			*ret = m;
			return 1;
		}
	}
	return 0;
}
