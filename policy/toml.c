/* SPDX-License-Identifier: MIT */
/*
 * TOML 1.0.0 parser (https://toml.io/en/v1.0.0), hand-written recursive descent.
 *
 * The document is first checked as a whole (UTF-8, NUL bytes, bare CR), so the lexer below
 * may assume well-formed UTF-8 and that every CR is followed by LF. Then one pass builds the
 * tree. Keys are looked up through a hash index private to the parse (keyed by table pointer
 * and key), so documents with many keys stay linear.
 *
 * Redefinition rules follow the spec's prose and toml-test: each table remembers how it came
 * to be (see the ORIGIN_* values stored in TomlValue.origin):
 *   - a [header] may pass through any table except an inline one, and through the last
 *     element of an array of tables; it may define a table only once, and only if that table
 *     was so far merely implied by another header;
 *   - a dotted key may pass through tables created by dotted keys or merely implied by a
 *     header (which then count as created by dotted keys), never through a [header] table,
 *     an inline table or an array;
 *   - inline tables and value arrays are closed once written.
 */
#include "policy/toml.h"

#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macros.h"
#include "common/util.h"

enum {
	ORIGIN_VALUE,	 /* scalars */
	ORIGIN_ROOT,	 /* the document's root table */
	ORIGIN_IMPLICIT, /* a table implied by a header such as [a.b] (for "a") */
	ORIGIN_HEADER,	 /* defined by [header], or an element made by [[header]] */
	ORIGIN_DOTTED,	 /* created by a dotted key a.b = … */
	ORIGIN_INLINE,	 /* an inline table or a table inside one: closed */
	ORIGIN_STATIC,	 /* an array written as a value: closed */
	ORIGIN_AOT,	 /* an array of tables built by [[header]] */
};

typedef struct Buf {
	char *p;
	size_t len, cap;
} Buf;

typedef struct Slot {
	TomlValue *table; /* NULL: empty slot */
	size_t idx;
} Slot;

typedef struct KeyPart {
	char *s;
	size_t len;
	const char *at;
	unsigned line, column;
} KeyPart;

typedef struct KeyPath {
	KeyPart *parts; /* on the heap: nested inline tables recurse with one KeyPath each */
	size_t n, cap;
} KeyPath;

typedef struct Parser {
	const char *start, *end, *p;
	/* a cursor that turns pointers into line/column; moves forward as the parse does */
	const char *cur_pos, *cur_line_start;
	unsigned cur_line;
	Slot *slots;
	size_t nslots, nused;
	unsigned flags;
	TomlError *err;
	bool failed;
} Parser;

static void locate(Parser *P, const char *at, unsigned *ret_line, unsigned *ret_column)
{
	if (at < P->cur_pos) {
		P->cur_pos = P->cur_line_start = P->start;
		P->cur_line = 1;
	}
	for (;;) {
		const char *nl = memchr(P->cur_pos, '\n', at - P->cur_pos);
		if (!nl)
			break;
		P->cur_line++;
		P->cur_pos = P->cur_line_start = nl + 1;
	}
	P->cur_pos = at;
	*ret_line = P->cur_line;
	*ret_column = (unsigned) (at - P->cur_line_start) + 1;
}

_printf_(3, 4) static int fail(Parser *P, const char *at, const char *fmt, ...)
{
	va_list ap;

	if (P->failed)
		return -EINVAL;
	P->failed = true;
	locate(P, at, &P->err->line, &P->err->column);
	va_start(ap, fmt);
	(void) vsnprintf(P->err->message, sizeof(P->err->message), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A key or byte made safe for a one-line message: quoted elsewhere, capped, no controls. */
static const char *show(const char *s, size_t len, char buf[static 64])
{
	size_t j = 0;

	for (size_t i = 0; i < len && j < 60; i++) {
		unsigned char c = s[i];
		buf[j++] = (c < 0x20 || c == 0x7f || c == '\'') ? '?' : (char) c;
	}
	if (j == 60) {
		/* do not leave half a UTF-8 sequence before the ellipsis */
		while (j > 0 && ((unsigned char) buf[j - 1] & 0xc0) == 0x80)
			j--;
		if (j > 0 && (unsigned char) buf[j - 1] >= 0xc0)
			j--;
		buf[j++] = '.';
		buf[j++] = '.';
		buf[j++] = '.';
	}
	buf[j] = 0;
	return buf;
}

static const char *show_char(Parser *P, char buf[static 64])
{
	if (P->p >= P->end)
		return "end of file";
	unsigned char c = *P->p;
	if (c == '\n' || c == '\r')
		return "end of line";
	if (c >= 0x21 && c < 0x7f)
		(void) snprintf(buf, 64, "'%c'", c);
	else
		(void) snprintf(buf, 64, "byte 0x%02x", c);
	return buf;
}

static const char *type_article(TomlType t)
{
	return t == TOML_INTEGER || t == TOML_ARRAY ? "an" : "a";
}

/* ---- buffers ---- */

static void buf_done(Buf *b)
{
	free(b->p);
	b->p = NULL;
}

static int buf_grow(Buf *b, size_t more)
{
	if (b->len + more + 1 <= b->cap)
		return 0;
	size_t cap = MAX(b->cap * 2, b->len + more + 1);
	cap = MAX(cap, (size_t) 32);
	char *p = realloc(b->p, cap);
	if (!p)
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

static int buf_put(Buf *b, const char *s, size_t n)
{
	if (buf_grow(b, n) < 0)
		return -ENOMEM;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
	return 0;
}

static int buf_putc(Buf *b, char c)
{
	return buf_put(b, &c, 1);
}

static int buf_put_utf8(Buf *b, uint32_t cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char) cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char) (0xc0 | (cp >> 6));
		u[1] = (char) (0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char) (0xe0 | (cp >> 12));
		u[1] = (char) (0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char) (0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char) (0xf0 | (cp >> 18));
		u[1] = (char) (0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char) (0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char) (0x80 | (cp & 0x3f));
		n = 4;
	}
	return buf_put(b, u, n);
}

/* ---- values and tables ---- */

static TomlValue *value_new(TomlType type, unsigned origin, unsigned line, unsigned column)
{
	TomlValue *v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->type = type;
	v->origin = origin;
	v->line = line;
	v->column = column;
	return v;
}

TomlValue *toml_free(TomlValue *v)
{
	if (!v)
		return NULL;
	switch (v->type) {
	case TOML_STRING:
		free(v->str.ptr);
		break;
	case TOML_ARRAY:
		for (size_t i = 0; i < v->array.n; i++)
			toml_free(v->array.items[i]);
		free(v->array.items);
		break;
	case TOML_TABLE:
		for (size_t i = 0; i < v->table.n; i++) {
			free(v->table.items[i].key);
			toml_free(v->table.items[i].value);
		}
		free(v->table.items);
		break;
	default:
		break;
	}
	free(v);
	return NULL;
}

static uint64_t hash_key(const TomlValue *t, const char *key, size_t len)
{
	uint64_t h = 14695981039346656037ULL ^ ((uint64_t) (uintptr_t) t * 0x9e3779b97f4a7c15ULL);

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char) key[i];
		h *= 1099511628211ULL;
	}
	return h ^ (h >> 29);
}

static bool item_is(const TomlValue *t, size_t idx, const char *key, size_t len)
{
	const TomlKeyValue *kv = &t->table.items[idx];
	return kv->key_len == len && memcmp(kv->key, key, len) == 0;
}

static TomlKeyValue *table_find(Parser *P, TomlValue *t, const char *key, size_t len)
{
	if (P->nslots == 0)
		return NULL;
	size_t mask = P->nslots - 1;
	for (size_t i = hash_key(t, key, len) & mask; P->slots[i].table; i = (i + 1) & mask) {
		Slot *s = &P->slots[i];
		if (s->table == t && s->idx < t->table.n && item_is(t, s->idx, key, len))
			return &t->table.items[s->idx];
	}
	return NULL;
}

static void slot_insert(Slot *slots, size_t nslots, TomlValue *t, size_t idx)
{
	const TomlKeyValue *kv = &t->table.items[idx];
	size_t mask = nslots - 1, i = hash_key(t, kv->key, kv->key_len) & mask;

	while (slots[i].table)
		i = (i + 1) & mask;
	slots[i] = (Slot){t, idx};
}

/* Takes ownership of key and value, also on failure. */
static int table_add(Parser *P, TomlValue *t, KeyPart *k, TomlValue *v)
{
	_cleanup_free_ char *key = TAKE_PTR(k->s);
	_cleanup_(toml_freep) TomlValue *value = v;

	if ((P->nused + 1) * 2 > P->nslots) {
		size_t n = MAX(P->nslots * 2, (size_t) 64);
		Slot *s = calloc(n, sizeof(Slot));
		if (!s)
			return -ENOMEM;
		for (size_t i = 0; i < P->nslots; i++)
			if (P->slots[i].table)
				slot_insert(s, n, P->slots[i].table, P->slots[i].idx);
		free(P->slots);
		P->slots = s;
		P->nslots = n;
	}
	/* the capacity is implied by n: 4, then doubled whenever n reaches a power of two */
	size_t n = t->table.n;
	if (n == 0 || (n >= 4 && (n & (n - 1)) == 0)) {
		TomlKeyValue *items =
			reallocarray(t->table.items, n ? n * 2 : 4, sizeof(TomlKeyValue));
		if (!items)
			return -ENOMEM;
		t->table.items = items;
	}
	TomlKeyValue *kv = &t->table.items[t->table.n];
	*kv = (TomlKeyValue){.key = TAKE_PTR(key), .key_len = k->len, .value = TAKE_PTR(value)};
	kv->line = k->line;
	kv->column = k->column;
	t->table.n++;
	slot_insert(P->slots, P->nslots, t, t->table.n - 1);
	P->nused++;
	return 0;
}

static int array_push(TomlValue *a, TomlValue *v)
{
	_cleanup_(toml_freep) TomlValue *value = v;

	if (a->array.n >= 4 && (a->array.n & (a->array.n - 1)) == 0) {
		TomlValue **items =
			reallocarray(a->array.items, a->array.n * 2, sizeof(TomlValue *));
		if (!items)
			return -ENOMEM;
		a->array.items = items;
	} else if (!a->array.items) {
		a->array.items = calloc(4, sizeof(TomlValue *));
		if (!a->array.items)
			return -ENOMEM;
	}
	a->array.items[a->array.n++] = TAKE_PTR(value);
	return 0;
}

const TomlValue *toml_table_get(const TomlValue *table, const char *key)
{
	if (!table || table->type != TOML_TABLE || !key)
		return NULL;
	size_t len = strlen(key);
	for (size_t i = 0; i < table->table.n; i++)
		if (item_is(table, i, key, len))
			return table->table.items[i].value;
	return NULL;
}

const char *toml_type_name(TomlType t)
{
	static const char *const names[_TOML_TYPE_MAX] = {
		[TOML_STRING] = "string",	  [TOML_INTEGER] = "integer",
		[TOML_FLOAT] = "float",		  [TOML_BOOL] = "bool",
		[TOML_DATETIME] = "datetime",	  [TOML_DATETIME_LOCAL] = "datetime-local",
		[TOML_DATE_LOCAL] = "date-local", [TOML_TIME_LOCAL] = "time-local",
		[TOML_ARRAY] = "array",		  [TOML_TABLE] = "table",
	};
	if ((int) t < 0 || t >= _TOML_TYPE_MAX)
		return NULL;
	return names[t];
}

/* ---- whole-document checks ---- */

static int check_text(Parser *P)
{
	const unsigned char *s = (const unsigned char *) P->start,
			    *end = (const unsigned char *) P->end;

	while (s < end) {
		unsigned char c = *s;
		if (c >= 0x20 && c < 0x80) {
			s++;
			continue;
		}
		if (c == 0)
			return fail(P, (const char *) s, "NUL byte in document");
		if (c == '\r') {
			if (s + 1 >= end || s[1] != '\n')
				return fail(P, (const char *) s,
					    "carriage return not followed by a line feed");
			s += 2;
			continue;
		}
		if (c < 0x80) {
			s++; /* other control characters are judged where they appear */
			continue;
		}
		size_t n;
		unsigned char lo = 0x80, hi = 0xbf;
		if (c >= 0xc2 && c <= 0xdf)
			n = 2;
		else if (c >= 0xe0 && c <= 0xef) {
			n = 3;
			if (c == 0xe0)
				lo = 0xa0; /* overlong */
			else if (c == 0xed)
				hi = 0x9f; /* surrogates */
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 4;
			if (c == 0xf0)
				lo = 0x90; /* overlong */
			else if (c == 0xf4)
				hi = 0x8f; /* above U+10FFFF */
		} else
			return fail(P, (const char *) s, "invalid UTF-8 byte 0x%02x", c);
		if ((size_t) (end - s) < n)
			return fail(P, (const char *) s, "truncated UTF-8 sequence");
		if (s[1] < lo || s[1] > hi)
			return fail(P, (const char *) s, "invalid UTF-8 sequence");
		for (size_t i = 2; i < n; i++)
			if ((s[i] & 0xc0) != 0x80)
				return fail(P, (const char *) s, "invalid UTF-8 sequence");
		s += n;
	}
	return 0;
}

/* ---- lexing helpers ---- */

static bool more(const Parser *P, size_t n)
{
	return (size_t) (P->end - P->p) >= n;
}

static int peek(const Parser *P, size_t off)
{
	return (size_t) (P->end - P->p) > off ? (unsigned char) P->p[off] : -1;
}

static bool is_ctrl(int c)
{
	return (c >= 0 && c < 0x20 && c != '\t') || c == 0x7f;
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool is_bare(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' ||
	       c == '-';
}

static void skip_ws(Parser *P)
{
	while (P->p < P->end && (*P->p == ' ' || *P->p == '\t'))
		P->p++;
}

static bool at_newline(const Parser *P)
{
	int c = peek(P, 0);
	return c == '\n' || c == '\r'; /* check_text() made sure CR comes with LF */
}

static void skip_newline(Parser *P)
{
	P->p += *P->p == '\r' ? 2 : 1;
}

/* At '#': skips the comment up to (not including) the end of the line. */
static int skip_comment(Parser *P)
{
	for (P->p++; P->p < P->end && !at_newline(P); P->p++)
		if (is_ctrl((unsigned char) *P->p))
			return fail(P, P->p, "control character 0x%02x in comment",
				    (unsigned char) *P->p);
	return 0;
}

/* Whitespace, newlines and comments, as allowed between array elements. */
static int skip_ws_nl(Parser *P)
{
	for (;;) {
		skip_ws(P);
		if (at_newline(P))
			skip_newline(P);
		else if (peek(P, 0) == '#') {
			int r = skip_comment(P);
			if (r < 0)
				return r;
		} else
			return 0;
	}
}

static int expect_eol(Parser *P)
{
	char b[64];

	skip_ws(P);
	if (peek(P, 0) == '#') {
		int r = skip_comment(P);
		if (r < 0)
			return r;
	}
	if (P->p >= P->end)
		return 0;
	if (at_newline(P)) {
		skip_newline(P);
		return 0;
	}
	return fail(P, P->p, "expected end of line, found %s", show_char(P, b));
}

/* ---- strings ---- */

/* At a backslash in a basic string: appends the escaped character. */
static int parse_escape(Parser *P, Buf *b)
{
	const char *at = P->p;
	int c = peek(P, 1), n = 0;
	char e;

	switch (c) {
	case 'b':
		e = '\b';
		break;
	case 't':
		e = '\t';
		break;
	case 'n':
		e = '\n';
		break;
	case 'f':
		e = '\f';
		break;
	case 'r':
		e = '\r';
		break;
	case '"':
		e = '"';
		break;
	case '\\':
		e = '\\';
		break;
	case 'u':
		n = 4;
		break;
	case 'U':
		n = 8;
		break;
	default:
		if (c > 0x20 && c < 0x7f)
			return fail(P, at, "invalid escape sequence '\\%c'", c);
		return fail(P, at, "invalid escape sequence");
	}
	if (n == 0) {
		P->p += 2;
		return buf_putc(b, e);
	}
	uint32_t cp = 0;
	for (int i = 0; i < n; i++) {
		int h = hex_digit_value(peek(P, 2 + i));
		if (h < 0)
			return fail(P, at, "'\\%c' needs %d hexadecimal digits", c, n);
		cp = cp << 4 | (uint32_t) h;
	}
	if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return fail(P, at, "escape '\\%c' is not a Unicode scalar value", c);
	P->p += 2 + n;
	return buf_put_utf8(b, cp);
}

/*
 * At a quote: parses a basic or literal string, multi-line if allow_multi and the quote is
 * tripled. Hands out the bytes (NUL-terminated, may hold NULs) and their length.
 */
static int parse_string(Parser *P, bool allow_multi, char **ret, size_t *ret_len)
{
	_cleanup_(buf_done) Buf b = {};
	const char *open = P->p;
	char q = *P->p;
	bool basic = q == '"';
	bool multi = allow_multi && peek(P, 1) == q && peek(P, 2) == q;
	int r;

	P->p += multi ? 3 : 1;
	if (multi && at_newline(P))
		skip_newline(P); /* a newline right after the opening quotes is trimmed */
	for (;;) {
		if (P->p >= P->end)
			return fail(P, open, "unterminated string");
		int c = (unsigned char) *P->p;
		if (c == q) {
			if (!multi) {
				P->p++;
				break;
			}
			size_t n = 0;
			while (peek(P, n) == q)
				n++;
			if (n >= 3) {
				if (n > 5)
					return fail(P, P->p,
						    "too many quotes in multi-line string");
				r = buf_put(&b, P->p, n - 3);
				if (r < 0)
					return r;
				P->p += n;
				break;
			}
			r = buf_put(&b, P->p, n);
			P->p += n;
		} else if (c == '\n' || c == '\r') {
			if (!multi)
				return fail(P, P->p, "newline in single-line string");
			skip_newline(P); /* CRLF is kept as LF */
			r = buf_putc(&b, '\n');
		} else if (c == '\\' && basic) {
			if (multi) {
				/* line-ending backslash: drop it and all whitespace up to the next
				 * non-blank character, newlines included */
				size_t i = 1;
				while (peek(P, i) == ' ' || peek(P, i) == '\t')
					i++;
				if (peek(P, i) == '\n' || peek(P, i) == '\r') {
					P->p += i;
					while (P->p < P->end &&
					       (*P->p == ' ' || *P->p == '\t' || at_newline(P))) {
						if (at_newline(P))
							skip_newline(P);
						else
							P->p++;
					}
					continue;
				}
			}
			r = parse_escape(P, &b);
		} else if (is_ctrl(c)) {
			return fail(P, P->p, "control character 0x%02x in string", c);
		} else {
			/* copy a run of plain bytes at once */
			const char *s = P->p;
			while (P->p < P->end) {
				int d = (unsigned char) *P->p;
				if (d == q || (d == '\\' && basic) || d == '\n' || d == '\r' ||
				    is_ctrl(d))
					break;
				P->p++;
			}
			r = buf_put(&b, s, P->p - s);
		}
		if (r < 0)
			return r;
	}
	if (!b.p) {
		b.p = strdup("");
		if (!b.p)
			return -ENOMEM;
	}
	*ret_len = b.len;
	*ret = TAKE_PTR(b.p);
	return 0;
}

/* ---- keys ---- */

static void key_path_done(KeyPath *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->parts[i].s);
	free(k->parts);
	k->parts = NULL;
	k->n = 0;
}

static int parse_key(Parser *P, KeyPath *k)
{
	char b[64];
	int r;

	for (;;) {
		skip_ws(P);
		if (k->n >= TOML_MAX_DEPTH)
			return fail(P, P->p, "key has more than %d parts", TOML_MAX_DEPTH);
		if (k->n == k->cap) {
			size_t cap = k->cap ? k->cap * 2 : 4;
			KeyPart *parts = reallocarray(k->parts, cap, sizeof(KeyPart));
			if (!parts)
				return -ENOMEM;
			k->parts = parts;
			k->cap = cap;
		}
		KeyPart *part = &k->parts[k->n];
		int c = peek(P, 0);
		part->at = P->p;
		locate(P, P->p, &part->line, &part->column);
		if (c == '"' || c == '\'') {
			r = parse_string(P, false, &part->s, &part->len);
			if (r < 0)
				return r;
			k->n++;
			if (!(P->flags & TOML_PARSE_NUL_KEYS) && memchr(part->s, 0, part->len))
				return fail(P, part->at, "key contains a NUL character");
		} else if (is_bare(c)) {
			const char *s = P->p;
			while (P->p < P->end && is_bare((unsigned char) *P->p))
				P->p++;
			part->len = P->p - s;
			part->s = strndup(s, part->len);
			if (!part->s)
				return -ENOMEM;
			k->n++;
		} else
			return fail(P, P->p, "expected a key, found %s", show_char(P, b));
		skip_ws(P);
		if (peek(P, 0) != '.')
			return 0;
		P->p++;
	}
}

/* ---- numbers, dates and times ---- */

static bool is_base_digit(int c, int base)
{
	switch (base) {
	case 16:
		return hex_digit_value(c) >= 0;
	case 8:
		return c >= '0' && c <= '7';
	case 2:
		return c == '0' || c == '1';
	default:
		return is_digit(c);
	}
}

/* Digits of base with single underscores between digits. */
static int scan_digits(Parser *P, int base)
{
	char b[64];

	if (!is_base_digit(peek(P, 0), base))
		return fail(P, P->p, "expected a digit, found %s", show_char(P, b));
	for (;;) {
		while (is_base_digit(peek(P, 0), base))
			P->p++;
		if (peek(P, 0) != '_')
			return 0;
		if (!is_base_digit(peek(P, 1), base))
			return fail(P, P->p, "'_' must stand between two digits");
		P->p++;
	}
}

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void c_locale_init(void)
{
	c_locale = newlocale(LC_ALL_MASK, "C", (locale_t) 0);
}

static int parse_number(Parser *P, TomlValue *v)
{
	const char *s = P->p;
	bool neg = false, sign = false;
	int base = 10, r;

	if (peek(P, 0) == '+' || peek(P, 0) == '-') {
		neg = *P->p == '-';
		sign = true;
		P->p++;
	}
	if (more(P, 3) && (memcmp(P->p, "inf", 3) == 0 || memcmp(P->p, "nan", 3) == 0)) {
		v->type = TOML_FLOAT;
		v->flt = *P->p == 'i' ? INFINITY : NAN;
		if (neg)
			v->flt = -v->flt;
		P->p += 3;
		return 0;
	}
	if (peek(P, 0) == '0' && (peek(P, 1) == 'x' || peek(P, 1) == 'o' || peek(P, 1) == 'b')) {
		base = peek(P, 1) == 'x' ? 16 : peek(P, 1) == 'o' ? 8 : 2;
		if (sign)
			return fail(
				P, s,
				"a sign is not allowed on hexadecimal, octal or binary integers");
		P->p += 2;
	}
	const char *int_start = P->p;
	r = scan_digits(P, base);
	if (r < 0)
		return r;
	const char *int_end = P->p;
	if (base == 10 && *int_start == '0' && int_end - int_start > 1)
		return fail(P, s, "leading zeros are not allowed");

	bool is_float = false;
	if (base == 10 && peek(P, 0) == '.') {
		P->p++;
		r = scan_digits(P, 10);
		if (r < 0)
			return r;
		is_float = true;
	}
	if (base == 10 && (peek(P, 0) == 'e' || peek(P, 0) == 'E')) {
		P->p++;
		if (peek(P, 0) == '+' || peek(P, 0) == '-')
			P->p++;
		r = scan_digits(P, 10);
		if (r < 0)
			return r;
		is_float = true;
	}

	if (is_float) {
		char small[128], *buf = small;
		_cleanup_free_ char *big = NULL;
		size_t n = 0, len = P->p - s;

		if (len >= sizeof(small)) {
			buf = big = malloc(len + 1);
			if (!big)
				return -ENOMEM;
		}
		for (const char *q = s; q < P->p; q++)
			if (*q != '_')
				buf[n++] = *q;
		buf[n] = 0;
		(void) pthread_once(&c_locale_once, c_locale_init);
		if (!c_locale)
			return -ENOMEM;
		char *e;
		errno = 0;
		double d = strtod_l(buf, &e, c_locale);
		if (*e != 0)
			return fail(P, s, "invalid float");
		if (errno == ERANGE && isinf(d))
			return fail(P, s, "float out of range");
		v->type = TOML_FLOAT;
		v->flt = d;
		return 0;
	}

	uint64_t acc = 0, limit = neg ? (uint64_t) INT64_MAX + 1 : (uint64_t) INT64_MAX;
	for (const char *q = int_start; q < int_end; q++) {
		if (*q == '_')
			continue;
		uint64_t d = (uint64_t) hex_digit_value((unsigned char) *q);
		if (acc > (limit - d) / (uint64_t) base)
			return fail(P, s, "integer out of range");
		acc = acc * (uint64_t) base + d;
	}
	v->type = TOML_INTEGER;
	v->integer = neg ? (int64_t) (0 - acc) : (int64_t) acc;
	return 0;
}

static bool eat(Parser *P, char c)
{
	if (peek(P, 0) != (unsigned char) c)
		return false;
	P->p++;
	return true;
}

/* Exactly n decimal digits. */
static int fixed_digits(Parser *P, size_t n, int *ret)
{
	int x = 0;

	for (size_t i = 0; i < n; i++) {
		int c = peek(P, i);
		if (!is_digit(c))
			return -1;
		x = x * 10 + (c - '0');
	}
	P->p += n;
	*ret = x;
	return 0;
}

static bool is_leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int parse_date(Parser *P, TomlDatetime *dt)
{
	static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	const char *s = P->p;

	if (fixed_digits(P, 4, &dt->year) < 0 || !eat(P, '-') ||
	    fixed_digits(P, 2, &dt->month) < 0 || !eat(P, '-') || fixed_digits(P, 2, &dt->day) < 0)
		return fail(P, s, "invalid date (expected YYYY-MM-DD)");
	if (dt->month < 1 || dt->month > 12)
		return fail(P, s, "invalid month %02d", dt->month);
	if (dt->day < 1 || dt->day > mdays[dt->month - 1] ||
	    (dt->month == 2 && dt->day == 29 && !is_leap(dt->year)))
		return fail(P, s, "invalid day %02d for %04d-%02d", dt->day, dt->year, dt->month);
	return 0;
}

static int parse_time(Parser *P, TomlDatetime *dt)
{
	const char *s = P->p;

	if (fixed_digits(P, 2, &dt->hour) < 0 || !eat(P, ':') ||
	    fixed_digits(P, 2, &dt->minute) < 0 || !eat(P, ':') ||
	    fixed_digits(P, 2, &dt->second) < 0)
		return fail(P, s, "invalid time (expected HH:MM:SS)");
	if (dt->hour > 23 || dt->minute > 59 || dt->second > 60)
		return fail(P, s, "time out of range");
	dt->nanosecond = 0;
	if (peek(P, 0) == '.') {
		P->p++;
		if (!is_digit(peek(P, 0)))
			return fail(P, P->p, "expected digits after '.' in time");
		uint32_t scale = 100000000;
		while (is_digit(peek(P, 0))) {
			dt->nanosecond += (uint32_t) (*P->p - '0') * scale;
			scale /= 10;
			P->p++;
		}
	}
	return 0;
}

static int parse_datetime(Parser *P, TomlValue *v)
{
	TomlDatetime *dt = &v->datetime;
	int r;

	if (peek(P, 2) == ':') {
		v->type = TOML_TIME_LOCAL;
		return parse_time(P, dt);
	}
	r = parse_date(P, dt);
	if (r < 0)
		return r;
	v->type = TOML_DATE_LOCAL;
	int c = peek(P, 0);
	if (c == 'T' || c == 't' ||
	    (c == ' ' && is_digit(peek(P, 1)) && is_digit(peek(P, 2)) && peek(P, 3) == ':')) {
		P->p++;
		r = parse_time(P, dt);
		if (r < 0)
			return r;
		v->type = TOML_DATETIME_LOCAL;
		c = peek(P, 0);
		if (c == 'Z' || c == 'z') {
			P->p++;
			v->type = TOML_DATETIME;
		} else if (c == '+' || c == '-') {
			const char *s = P->p;
			int h, m;
			P->p++;
			if (fixed_digits(P, 2, &h) < 0 || !eat(P, ':') ||
			    fixed_digits(P, 2, &m) < 0)
				return fail(P, s, "invalid time zone offset (expected +HH:MM)");
			if (h > 23 || m > 59)
				return fail(P, s, "time zone offset out of range");
			dt->offset_minutes = (c == '-' ? -1 : 1) * (h * 60 + m);
			v->type = TOML_DATETIME;
		}
	}
	return 0;
}

/* ---- values ---- */

static int parse_value(Parser *P, unsigned depth, TomlValue **ret);
static int assign(Parser *P, TomlValue *table, KeyPath *k, TomlValue *v);

static void mark_inline(TomlValue *t)
{
	t->origin = ORIGIN_INLINE;
	for (size_t i = 0; i < t->table.n; i++) {
		TomlValue *v = t->table.items[i].value;
		if (v->type == TOML_TABLE && v->origin == ORIGIN_DOTTED)
			mark_inline(v);
	}
}

static int parse_keyval(Parser *P, TomlValue *table, unsigned depth)
{
	_cleanup_(key_path_done) KeyPath k = {};
	_cleanup_(toml_freep) TomlValue *v = NULL;
	char b[64];
	int r;

	r = parse_key(P, &k);
	if (r < 0)
		return r;
	if (depth + k.n > TOML_MAX_DEPTH)
		return fail(P, k.parts[0].at, "nesting deeper than %d levels", TOML_MAX_DEPTH);
	if (peek(P, 0) != '=')
		return fail(P, P->p, "expected '=' after key, found %s", show_char(P, b));
	P->p++;
	skip_ws(P);
	r = parse_value(P, depth + (unsigned) k.n, &v);
	if (r < 0)
		return r;
	return assign(P, table, &k, TAKE_PTR(v));
}

static int parse_array(Parser *P, unsigned depth, TomlValue *a)
{
	const char *open = P->p;
	char b[64];
	int r;

	P->p++;
	for (;;) {
		r = skip_ws_nl(P);
		if (r < 0)
			return r;
		if (P->p >= P->end)
			return fail(P, open, "unterminated array");
		if (*P->p == ']')
			break;
		TomlValue *item;
		r = parse_value(P, depth + 1, &item);
		if (r < 0)
			return r;
		r = array_push(a, item);
		if (r < 0)
			return r;
		r = skip_ws_nl(P);
		if (r < 0)
			return r;
		if (peek(P, 0) == ',') {
			P->p++;
			continue;
		}
		if (peek(P, 0) == ']')
			break;
		if (P->p >= P->end)
			return fail(P, open, "unterminated array");
		return fail(P, P->p, "expected ',' or ']' in array, found %s", show_char(P, b));
	}
	P->p++;
	return 0;
}

static int parse_inline_table(Parser *P, unsigned depth, TomlValue *t)
{
	char b[64];
	int r;

	P->p++;
	skip_ws(P);
	if (peek(P, 0) == '}') {
		P->p++;
		t->origin = ORIGIN_INLINE;
		return 0;
	}
	for (;;) {
		r = parse_keyval(P, t, depth); /* its keys add the level */
		if (r < 0)
			return r;
		skip_ws(P);
		if (peek(P, 0) == ',') {
			P->p++;
			skip_ws(P);
			if (peek(P, 0) == '}')
				return fail(P, P->p, "trailing comma not allowed in inline table");
			continue;
		}
		if (peek(P, 0) == '}')
			break;
		if (at_newline(P))
			return fail(P, P->p, "newline not allowed in inline table");
		return fail(P, P->p, "expected ',' or '}' in inline table, found %s",
			    show_char(P, b));
	}
	P->p++;
	mark_inline(t);
	return 0;
}

static int parse_value(Parser *P, unsigned depth, TomlValue **ret)
{
	_cleanup_(toml_freep) TomlValue *v = NULL;
	char b[64];
	int c = peek(P, 0), r;

	if (depth > TOML_MAX_DEPTH)
		return fail(P, P->p, "nesting deeper than %d levels", TOML_MAX_DEPTH);
	unsigned line, column;
	locate(P, P->p, &line, &column);
	/* a type that owns nothing until the parse below sets the real one */
	v = value_new(TOML_BOOL, ORIGIN_VALUE, line, column);
	if (!v)
		return -ENOMEM;

	switch (c) {
	case '"':
	case '\'':
		v->type = TOML_STRING;
		r = parse_string(P, true, &v->str.ptr, &v->str.len);
		break;
	case 't':
	case 'f': {
		bool t = c == 't';
		size_t n = t ? 4 : 5;
		if (!more(P, n) || memcmp(P->p, t ? "true" : "false", n) != 0)
			return fail(P, P->p, "invalid value (expected true or false)");
		v->type = TOML_BOOL;
		v->boolean = t;
		P->p += n;
		r = 0;
		break;
	}
	case '[':
		v->type = TOML_ARRAY;
		v->origin = ORIGIN_STATIC;
		r = parse_array(P, depth, v);
		break;
	case '{':
		v->type = TOML_TABLE;
		v->origin = ORIGIN_DOTTED; /* while open, dotted keys may add to it */
		r = parse_inline_table(P, depth, v);
		break;
	default:
		if (is_digit(c) && ((is_digit(peek(P, 1)) && peek(P, 2) == ':') ||
				    (is_digit(peek(P, 1)) && is_digit(peek(P, 2)) &&
				     is_digit(peek(P, 3)) && peek(P, 4) == '-')))
			r = parse_datetime(P, v);
		else if (is_digit(c) || c == '+' || c == '-' || c == 'i' || c == 'n')
			r = parse_number(P, v);
		else if (c < 0)
			return fail(P, P->p, "expected a value, found end of file");
		else
			return fail(P, P->p, "expected a value, found %s", show_char(P, b));
	}
	if (r < 0)
		return r;
	*ret = TAKE_PTR(v);
	return 0;
}

/* ---- building the tree ---- */

static int assign(Parser *P, TomlValue *table, KeyPath *k, TomlValue *value)
{
	_cleanup_(toml_freep) TomlValue *v = value;
	TomlValue *t = table;
	char b[64];
	int r;

	for (size_t i = 0; i + 1 < k->n; i++) {
		KeyPart *part = &k->parts[i];
		TomlKeyValue *kv = table_find(P, t, part->s, part->len);
		if (!kv) {
			TomlValue *n =
				value_new(TOML_TABLE, ORIGIN_DOTTED, part->line, part->column);
			if (!n)
				return -ENOMEM;
			r = table_add(P, t, part, n);
			if (r < 0)
				return r;
			t = n;
			continue;
		}
		TomlValue *x = kv->value;
		if (x->type != TOML_TABLE)
			return fail(P, part->at,
				    "key '%s' is %s %s (defined at line %u), not a table",
				    show(part->s, part->len, b), type_article(x->type),
				    toml_type_name(x->type), x->line);
		if (x->origin == ORIGIN_INLINE)
			return fail(P, part->at,
				    "cannot add keys to inline table '%s' (defined at line %u)",
				    show(part->s, part->len, b), x->line);
		if (x->origin != ORIGIN_DOTTED && x->origin != ORIGIN_IMPLICIT)
			return fail(P, part->at,
				    "cannot add keys to table '%s' with a dotted key (table "
				    "defined at line %u)",
				    show(part->s, part->len, b), x->line);
		/* a table so far only implied by a header is now defined by dotted keys, so
		 * a later [header] for it is a redefinition */
		x->origin = ORIGIN_DOTTED;
		t = x;
	}
	KeyPart *last = &k->parts[k->n - 1];
	TomlKeyValue *kv = table_find(P, t, last->s, last->len);
	if (kv)
		return fail(P, last->at, "duplicate key '%s' (first defined at line %u)",
			    show(last->s, last->len, b), kv->line);
	return table_add(P, t, last, TAKE_PTR(v));
}

/* At '[': opens a [table] or [[array of tables]] and makes it the current table. */
static int parse_header(Parser *P, TomlValue *root, TomlValue **current, unsigned *ret_depth)
{
	_cleanup_(key_path_done) KeyPath k = {};
	const char *open = P->p;
	bool aot = peek(P, 1) == '[';
	unsigned line, column;
	TomlValue *t = root;
	char b[64];
	int r;

	locate(P, open, &line, &column);
	P->p += aot ? 2 : 1;
	r = parse_key(P, &k);
	if (r < 0)
		return r;
	if (peek(P, 0) != ']' || (aot && peek(P, 1) != ']'))
		return fail(P, P->p, "expected '%s' after table name, found %s", aot ? "]]" : "]",
			    show_char(P, b));
	P->p += aot ? 2 : 1;

	for (size_t i = 0; i + 1 < k.n; i++) {
		KeyPart *part = &k.parts[i];
		TomlKeyValue *kv = table_find(P, t, part->s, part->len);
		TomlValue *x = kv ? kv->value : NULL;

		if (!x) {
			x = value_new(TOML_TABLE, ORIGIN_IMPLICIT, part->line, part->column);
			if (!x)
				return -ENOMEM;
			r = table_add(P, t, part, x);
			if (r < 0)
				return r;
		} else if (x->type == TOML_ARRAY && x->origin == ORIGIN_AOT)
			x = x->array.items[x->array.n - 1];
		else if (x->type == TOML_ARRAY)
			return fail(P, part->at,
				    "key '%s' is a static array (defined at line %u), not a table",
				    show(part->s, part->len, b), x->line);
		else if (x->type != TOML_TABLE)
			return fail(P, part->at,
				    "key '%s' is %s %s (defined at line %u), not a table",
				    show(part->s, part->len, b), type_article(x->type),
				    toml_type_name(x->type), x->line);
		else if (x->origin == ORIGIN_INLINE)
			return fail(P, part->at,
				    "cannot extend inline table '%s' (defined at line %u)",
				    show(part->s, part->len, b), x->line);
		t = x;
	}

	KeyPart *last = &k.parts[k.n - 1];
	TomlKeyValue *kv = table_find(P, t, last->s, last->len);
	TomlValue *x = kv ? kv->value : NULL;
	const char *name = show(last->s, last->len, b);

	if (aot) {
		TomlValue *array = x;
		if (!x) {
			array = value_new(TOML_ARRAY, ORIGIN_AOT, line, column);
			if (!array)
				return -ENOMEM;
			r = table_add(P, t, last, array);
			if (r < 0)
				return r;
		} else if (x->type == TOML_ARRAY && x->origin != ORIGIN_AOT)
			return fail(P, last->at,
				    "cannot append to static array '%s' (defined at line %u)", name,
				    x->line);
		else if (x->type != TOML_ARRAY)
			return fail(P, last->at,
				    "cannot make '%s' an array of tables: already %s %s (defined "
				    "at line %u)",
				    name, type_article(x->type), toml_type_name(x->type), x->line);
		TomlValue *n = value_new(TOML_TABLE, ORIGIN_HEADER, line, column);
		if (!n)
			return -ENOMEM;
		r = array_push(array, n);
		if (r < 0)
			return r;
		t = n;
	} else {
		if (!x) {
			x = value_new(TOML_TABLE, ORIGIN_HEADER, line, column);
			if (!x)
				return -ENOMEM;
			r = table_add(P, t, last, x);
			if (r < 0)
				return r;
		} else if (x->type == TOML_TABLE && x->origin == ORIGIN_IMPLICIT) {
			x->origin = ORIGIN_HEADER;
			x->line = line;
			x->column = column;
		} else if (x->type == TOML_TABLE)
			return fail(P, last->at, "duplicate table '%s' (first defined at line %u)",
				    name, x->line);
		else
			return fail(P, last->at,
				    "cannot define table '%s': already %s %s (defined at line %u)",
				    name, type_article(x->type), toml_type_name(x->type), x->line);
		t = x;
	}
	*current = t;
	*ret_depth = (unsigned) k.n;
	return 0;
}

static int parse_document(Parser *P, TomlValue *root)
{
	TomlValue *current = root;
	unsigned depth = 0;
	int r;

	if (more(P, 3) && memcmp(P->p, "\xef\xbb\xbf", 3) == 0)
		P->p += 3; /* byte order mark */
	for (;;) {
		skip_ws(P);
		if (P->p >= P->end)
			return 0;
		int c = (unsigned char) *P->p;
		if (c == '[')
			r = parse_header(P, root, &current, &depth);
		else if (c == '#' || c == '\n' || c == '\r')
			r = 0;
		else
			r = parse_keyval(P, current, depth);
		if (r < 0)
			return r;
		r = expect_eol(P);
		if (r < 0)
			return r;
	}
}

int toml_parse_flags(const char *text, size_t len, unsigned flags, TomlValue **ret_root,
		     TomlError *reterr)
{
	_cleanup_(toml_freep) TomlValue *root = NULL;
	TomlError dummy;
	Parser P;
	int r;

	if (!text && len > 0)
		return -EINVAL;
	/* NULL is the empty document; set before text + len is computed, since NULL + 0 is
	 * undefined in C (clang's UBSan reports it) */
	if (!text)
		text = "";
	P = (Parser){
		.start = text,
		.end = text + len,
		.p = text,
		.cur_pos = text,
		.cur_line_start = text,
		.cur_line = 1,
		.flags = flags,
		.err = reterr ?: &dummy,
	};
	root = value_new(TOML_TABLE, ORIGIN_ROOT, 1, 1);
	if (!root)
		r = -ENOMEM;
	else {
		r = check_text(&P);
		if (r >= 0)
			r = parse_document(&P, root);
	}
	free(P.slots);
	if (r < 0) {
		if (!P.failed) {
			P.err->line = P.err->column = 0;
			(void) snprintf(P.err->message, sizeof(P.err->message), "%s",
					r == -ENOMEM ? "out of memory" : "internal error");
		}
		return r;
	}
	*ret_root = TAKE_PTR(root);
	return 0;
}

int toml_parse(const char *text, size_t len, TomlValue **ret_root, TomlError *reterr)
{
	return toml_parse_flags(text, len, 0, ret_root, reterr);
}

char *toml_format_datetime(const TomlValue *v, char *buf, size_t size)
{
	const TomlDatetime *dt = &v->datetime;
	char frac[16] = "";
	size_t n = 0;

	if (size == 0)
		return buf;
	buf[0] = 0;
	if (dt->nanosecond > 0) {
		(void) snprintf(frac, sizeof(frac), ".%09" PRIu32, dt->nanosecond % 1000000000u);
		size_t l = strlen(frac);
		while (l > 2 && frac[l - 1] == '0')
			frac[--l] = 0;
	}
	switch (v->type) {
	case TOML_DATE_LOCAL:
		(void) snprintf(buf, size, "%04d-%02d-%02d", dt->year, dt->month, dt->day);
		break;
	case TOML_TIME_LOCAL:
		(void) snprintf(buf, size, "%02d:%02d:%02d%s", dt->hour, dt->minute, dt->second,
				frac);
		break;
	case TOML_DATETIME_LOCAL:
	case TOML_DATETIME:
		(void) snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d%s", dt->year, dt->month,
				dt->day, dt->hour, dt->minute, dt->second, frac);
		if (v->type == TOML_DATETIME) {
			n = strlen(buf);
			int off = dt->offset_minutes;
			if (off == 0)
				(void) snprintf(buf + n, size - n, "Z");
			else
				(void) snprintf(buf + n, size - n, "%c%02d:%02d",
						off < 0 ? '-' : '+', abs(off) / 60, abs(off) % 60);
		}
		break;
	default:
		break;
	}
	return buf;
}
