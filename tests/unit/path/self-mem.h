/* SPDX-License-Identifier: MIT */
#pragma once

/* The child's memory, for handler tests that play the child themselves: its "pointers" are
 * addresses in this process. NULL reads fail with EFAULT, as a bad child pointer does;
 * strings that do not fit fail with ENAMETOOLONG, as the supervisor's reader does. */

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "emulation/emu.h"

static inline int self_mem_read(const ChildMem *m, uint64_t addr, void *buf, size_t len)
{
	(void) m;
	if (!addr)
		return -EFAULT;
	memcpy(buf, (const void *) (uintptr_t) addr, len);
	return 0;
}

static inline int self_mem_read_string(const ChildMem *m, uint64_t addr, char *buf, size_t size)
{
	size_t n;

	(void) m;
	if (!addr)
		return -EFAULT;
	n = strnlen((const char *) (uintptr_t) addr, size);
	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(buf, (const char *) (uintptr_t) addr, n + 1);
	return 0;
}

static const ChildMem self_mem
	__attribute__((unused)) = {self_mem_read, self_mem_read_string, NULL};
