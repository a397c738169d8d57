/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdarg.h>

#include "common/macros.h"

typedef enum LogLevel {
	LOG_LEVEL_ERROR,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
	_LOG_LEVEL_MAX,
	_LOG_LEVEL_INVALID = -EINVAL,
} LogLevel;

extern LogLevel log_max_level;

/** Set the program name printed before each line ("sbxtrace"). */
void log_set_prefix(const char *prefix);

/** Writes one line to stderr: "prefix: [level: ]message". Returns -abs(error) (or 0). */
int log_internal(LogLevel level, int error, const char *file, int line, const char *fmt, ...)
	_printf_(5, 6);

#define log_full_errno(level, error, ...)                                                          \
	({                                                                                         \
		int _e = (error);                                                                  \
		(level) <= log_max_level ? log_internal((level), _e, __FILE__, __LINE__, __VA_ARGS__) \
					 : -abs(_e);                                               \
	})

#define log_error(...) (void) log_full_errno(LOG_LEVEL_ERROR, 0, __VA_ARGS__)
#define log_warn(...) (void) log_full_errno(LOG_LEVEL_WARN, 0, __VA_ARGS__)
#define log_info(...) (void) log_full_errno(LOG_LEVEL_INFO, 0, __VA_ARGS__)
#define log_debug(...) (void) log_full_errno(LOG_LEVEL_DEBUG, 0, __VA_ARGS__)

/* Log with ": strerror(r)" appended and evaluate to r (negative errno). */
#define log_error_errno(r, ...) log_full_errno(LOG_LEVEL_ERROR, (r), __VA_ARGS__)
#define log_warn_errno(r, ...) log_full_errno(LOG_LEVEL_WARN, (r), __VA_ARGS__)
#define log_debug_errno(r, ...) log_full_errno(LOG_LEVEL_DEBUG, (r), __VA_ARGS__)
