/* SPDX-License-Identifier: MIT */
#pragma once

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define _unused_ __attribute__((unused))
#define _noreturn_ __attribute__((noreturn))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _likely_(x) __builtin_expect(!!(x), 1)
#define _unlikely_(x) __builtin_expect(!!(x), 0)

static inline void freep(void *p)
{
	free(*(void **) p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		(void) close(*fd);
		errno = saved;
	}
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)

/* Hand ownership out of a cleanup-attributed variable. */
#define TAKE_PTR(p)                                                                                \
	({                                                                                         \
		typeof(p) _p = (p);                                                                \
		(p) = NULL;                                                                        \
		_p;                                                                                \
	})
#define TAKE_FD(fd)                                                                                \
	({                                                                                         \
		int _fd = (fd);                                                                    \
		(fd) = -1;                                                                         \
		_fd;                                                                               \
	})

/* Declare x_freep() for a destructor x_free() that returns NULL. */
#define DEFINE_FREEP(type, func)                                                                   \
	static inline void func##p(type **p)                                                       \
	{                                                                                          \
		if (*p)                                                                            \
			(void) func(*p);                                                           \
	}

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#define streq(a, b) (strcmp((a), (b)) == 0)

/* Negative errno from a libc call that sets errno, never 0. */
static inline int negative_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}
