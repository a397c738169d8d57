/* SPDX-License-Identifier: MIT */
#pragma once

/* The child's memory, for handler tests that play the child themselves: its "pointers" are
 * addresses in this process. A read of memory that is not mapped (NULL included) fails with
 * EFAULT, as a bad child pointer does (process_vm_readv of this process, as the supervisor
 * reads a child); strings that do not fit fail with ENAMETOOLONG, as the supervisor's reader
 * does. */

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "emulation/emu.h"

static inline int self_mem_read(const ChildMem *m, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len}, remote = {(void *) (uintptr_t) addr, len};

	(void) m;
	if (!addr)
		return -EFAULT;
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t) len ? 0 : -EFAULT;
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
