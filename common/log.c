/* SPDX-License-Identifier: MIT */
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

LogLevel log_max_level = LOG_LEVEL_INFO;
static const char *log_prefix = "sbxtrace";

void log_set_prefix(const char *prefix)
{
	log_prefix = prefix;
}

int log_internal(LogLevel level, int error, const char *file, int line, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	(void) vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);

	if (log_max_level >= LOG_LEVEL_DEBUG)
		fprintf(stderr, "%s: [%s:%d] ", log_prefix, file, line);
	else
		fprintf(stderr, "%s: ", log_prefix);
	if (level == LOG_LEVEL_WARN)
		fputs("warning: ", stderr);
	if (error != 0)
		fprintf(stderr, "%s: %s\n", buf, strerror(abs(error)));
	else
		fprintf(stderr, "%s\n", buf);
	errno = saved;
	return -abs(error);
}
