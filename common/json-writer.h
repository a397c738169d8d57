/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A small JSON writer into a growing buffer. Strings are escaped; bytes that are not valid
 * UTF-8 are written as U+FFFD so the output is always valid JSON. Commas are managed by the
 * writer: call jw_key() then a value inside objects, values alone inside arrays.
 * On OOM the writer remembers the failure and jw_finish() returns -ENOMEM.
 */
typedef struct JsonWriter {
	char *buf;
	size_t len, cap;
	bool need_comma;
	bool failed;
	int indent; /* < 0: compact */
	int depth;
} JsonWriter;

void jw_init(JsonWriter *w, int indent);
void jw_done(JsonWriter *w);
void jw_begin_object(JsonWriter *w);
void jw_end_object(JsonWriter *w);
void jw_begin_array(JsonWriter *w);
void jw_end_array(JsonWriter *w);
void jw_key(JsonWriter *w, const char *key);
/** jw_key() for a key that may hold NUL bytes. */
void jw_key_len(JsonWriter *w, const char *key, size_t len);
void jw_string(JsonWriter *w, const char *s);
void jw_string_len(JsonWriter *w, const char *s, size_t len);
void jw_int(JsonWriter *w, int64_t v);
void jw_uint(JsonWriter *w, uint64_t v);
void jw_bool(JsonWriter *w, bool v);
void jw_null(JsonWriter *w);
/** Returns 0 and hands out the NUL-terminated text (caller frees), or -ENOMEM. */
int jw_finish(JsonWriter *w, char **ret_text, size_t *ret_len);
