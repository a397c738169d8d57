/* SPDX-License-Identifier: MIT */
#include "common/json-writer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(JsonWriter *w, const char *s, size_t n)
{
	if (w->failed)
		return;
	if (w->len + n + 1 > w->cap) {
		size_t ncap = w->cap ? w->cap : 256;
		while (ncap < w->len + n + 1)
			ncap *= 2;
		char *nb = realloc(w->buf, ncap);
		if (!nb) {
			w->failed = true;
			return;
		}
		w->buf = nb;
		w->cap = ncap;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = 0;
}

static void puts_(JsonWriter *w, const char *s)
{
	put(w, s, strlen(s));
}

static void newline(JsonWriter *w)
{
	if (w->indent < 0)
		return;
	put(w, "\n", 1);
	for (int i = 0; i < w->depth * w->indent; i++)
		put(w, " ", 1);
}

static void before_value(JsonWriter *w)
{
	if (w->need_comma)
		put(w, ",", 1);
	w->need_comma = true;
}

void jw_init(JsonWriter *w, int indent)
{
	memset(w, 0, sizeof(*w));
	w->indent = indent;
}

void jw_done(JsonWriter *w)
{
	free(w->buf);
	memset(w, 0, sizeof(*w));
}

void jw_begin_object(JsonWriter *w)
{
	before_value(w);
	put(w, "{", 1);
	w->depth++;
	w->need_comma = false;
}

void jw_end_object(JsonWriter *w)
{
	bool had = w->need_comma;
	w->depth--;
	if (had)
		newline(w);
	put(w, "}", 1);
	w->need_comma = true;
}

void jw_begin_array(JsonWriter *w)
{
	before_value(w);
	put(w, "[", 1);
	w->depth++;
	w->need_comma = false;
}

void jw_end_array(JsonWriter *w)
{
	bool had = w->need_comma;
	w->depth--;
	if (had)
		newline(w);
	put(w, "]", 1);
	w->need_comma = true;
}

/* Length of a valid UTF-8 sequence at s (max n bytes), or 0 if invalid. */
static size_t utf8_valid_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xE0) == 0xC0) {
		len = 2;
		cp = s[0] & 0x1F;
	} else if ((s[0] & 0xF0) == 0xE0) {
		len = 3;
		cp = s[0] & 0x0F;
	} else if ((s[0] & 0xF8) == 0xF0) {
		len = 4;
		cp = s[0] & 0x07;
	} else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return len;
}

static void put_escaped(JsonWriter *w, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *) s;
	size_t i = 0;

	put(w, "\"", 1);
	while (i < n) {
		unsigned char c = p[i];
		char esc[8];

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char) c;
			put(w, esc, 2);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			switch (c) {
			case '\n':
				puts_(w, "\\n");
				break;
			case '\t':
				puts_(w, "\\t");
				break;
			case '\r':
				puts_(w, "\\r");
				break;
			case '\b':
				puts_(w, "\\b");
				break;
			case '\f':
				puts_(w, "\\f");
				break;
			default:
				snprintf(esc, sizeof(esc), "\\u%04x", c);
				puts_(w, esc);
			}
			i++;
		} else if (c < 0x80) {
			put(w, (const char *) p + i, 1);
			i++;
		} else {
			size_t l = utf8_valid_len(p + i, n - i);
			if (l == 0) {
				puts_(w, "\\ufffd");
				i++;
			} else {
				put(w, (const char *) p + i, l);
				i += l;
			}
		}
	}
	put(w, "\"", 1);
}

void jw_key(JsonWriter *w, const char *key)
{
	jw_key_len(w, key, strlen(key));
}

void jw_key_len(JsonWriter *w, const char *key, size_t len)
{
	before_value(w);
	newline(w);
	put_escaped(w, key, len);
	put(w, w->indent < 0 ? ":" : ": ", w->indent < 0 ? 1 : 2);
	w->need_comma = false;
}

static void value_prefix(JsonWriter *w)
{
	bool in_array_slot = w->need_comma || w->depth > 0;
	before_value(w);
	(void) in_array_slot;
}

void jw_string_len(JsonWriter *w, const char *s, size_t len)
{
	value_prefix(w);
	put_escaped(w, s, len);
}

void jw_string(JsonWriter *w, const char *s)
{
	if (!s) {
		jw_null(w);
		return;
	}
	jw_string_len(w, s, strlen(s));
}

void jw_int(JsonWriter *w, int64_t v)
{
	char b[32];
	value_prefix(w);
	snprintf(b, sizeof(b), "%" PRId64, v);
	puts_(w, b);
}

void jw_uint(JsonWriter *w, uint64_t v)
{
	char b[32];
	value_prefix(w);
	snprintf(b, sizeof(b), "%" PRIu64, v);
	puts_(w, b);
}

void jw_bool(JsonWriter *w, bool v)
{
	value_prefix(w);
	puts_(w, v ? "true" : "false");
}

void jw_null(JsonWriter *w)
{
	value_prefix(w);
	puts_(w, "null");
}

int jw_finish(JsonWriter *w, char **ret_text, size_t *ret_len)
{
	if (!w->failed && !w->buf)
		put(w, "", 0);
	if (w->failed || !w->buf) {
		jw_done(w);
		return -ENOMEM;
	}
	*ret_text = w->buf;
	if (ret_len)
		*ret_len = w->len;
	w->buf = NULL;
	jw_done(w);
	return 0;
}
