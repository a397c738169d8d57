/* SPDX-License-Identifier: MIT */
/*
 * toml-test decoder: reads a TOML document on stdin and prints it on stdout in toml-test's
 * tagged JSON encoding. Invalid input: exit 1 with "stdin:LINE:COL: reason" on stderr.
 * Used by the toml-test conformance run (tests/toml/meson.build).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json-writer.h"
#include "common/macros.h"
#include "policy/toml.h"

static int read_all(int fd, char **ret, size_t *ret_len)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;

	for (;;) {
		if (cap - len < 4096) {
			cap = MAX(cap * 2, (size_t) 65536);
			char *p = realloc(buf, cap);
			if (!p)
				return -ENOMEM;
			buf = p;
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t) n;
	}
	*ret = TAKE_PTR(buf);
	*ret_len = len;
	return 0;
}

/* The shortest %g form that reads back as the same double. */
static void format_float(double d, char *buf, size_t size)
{
	if (isnan(d)) {
		(void) snprintf(buf, size, "nan");
		return;
	}
	if (isinf(d)) {
		(void) snprintf(buf, size, "%sinf", d < 0 ? "-" : "");
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		(void) snprintf(buf, size, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			return;
	}
}

static void tagged(JsonWriter *w, const char *type, const char *value)
{
	jw_begin_object(w);
	jw_key(w, "type");
	jw_string(w, type);
	jw_key(w, "value");
	jw_string(w, value);
	jw_end_object(w);
}

static void emit(JsonWriter *w, const TomlValue *v)
{
	char b[64];

	switch (v->type) {
	case TOML_STRING:
		jw_begin_object(w);
		jw_key(w, "type");
		jw_string(w, "string");
		jw_key(w, "value");
		jw_string_len(w, v->str.ptr, v->str.len);
		jw_end_object(w);
		break;
	case TOML_INTEGER:
		(void) snprintf(b, sizeof(b), "%" PRId64, v->integer);
		tagged(w, "integer", b);
		break;
	case TOML_FLOAT:
		format_float(v->flt, b, sizeof(b));
		tagged(w, "float", b);
		break;
	case TOML_BOOL:
		tagged(w, "bool", v->boolean ? "true" : "false");
		break;
	case TOML_DATETIME:
	case TOML_DATETIME_LOCAL:
	case TOML_DATE_LOCAL:
	case TOML_TIME_LOCAL:
		tagged(w, toml_type_name(v->type), toml_format_datetime(v, b, sizeof(b)));
		break;
	case TOML_ARRAY:
		jw_begin_array(w);
		for (size_t i = 0; i < v->array.n; i++)
			emit(w, v->array.items[i]);
		jw_end_array(w);
		break;
	case TOML_TABLE:
		jw_begin_object(w);
		for (size_t i = 0; i < v->table.n; i++) {
			const TomlKeyValue *kv = &v->table.items[i];
			jw_key_len(w, kv->key, kv->key_len);
			emit(w, kv->value);
		}
		jw_end_object(w);
		break;
	default:
		jw_null(w);
	}
}

int main(void)
{
	_cleanup_free_ char *text = NULL, *out = NULL;
	_cleanup_(toml_freep) TomlValue *root = NULL;
	TomlError err;
	JsonWriter w;
	size_t len = 0, out_len;
	int r;

	r = read_all(STDIN_FILENO, &text, &len);
	if (r < 0) {
		fprintf(stderr, "stdin: %s\n", strerror(-r));
		return 2;
	}
	r = toml_parse_flags(text, len, TOML_PARSE_NUL_KEYS, &root, &err);
	if (r < 0) {
		fprintf(stderr, "stdin:%u:%u: %s\n", err.line, err.column, err.message);
		return 1;
	}
	jw_init(&w, -1);
	emit(&w, root);
	r = jw_finish(&w, &out, &out_len);
	if (r < 0) {
		fprintf(stderr, "out of memory\n");
		return 2;
	}
	fwrite(out, 1, out_len, stdout);
	putchar('\n');
	return 0;
}
