/* SPDX-License-Identifier: MIT */
/* Unit tests for the TOML parser API (policy/toml.h); toml-test covers the grammar. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/macros.h"
#include "policy/toml.h"
#include "tests/unit/tap.h"

static TomlValue *parse_ok(const char *text)
{
	TomlValue *root = NULL;
	TomlError err = {};
	int r = toml_parse(text, strlen(text), &root, &err);
	if (r < 0)
		printf("# unexpected error: %u:%u: %s\n", err.line, err.column, err.message);
	return r < 0 ? NULL : root;
}

/* Parses text that must fail; returns the error. */
static TomlError parse_bad(const char *text, size_t len)
{
	TomlValue *root = NULL;
	TomlError err = {};
	int r = toml_parse(text, len, &root, &err);
	if (r != -EINVAL) {
		printf("# expected -EINVAL, got %d\n", r);
		root = toml_free(root);
		err.line = err.column = 9999;
	}
	return err;
}

#define EXPECT_ERROR(text, l, c, msg)                                                              \
	do {                                                                                       \
		TomlError _e = parse_bad(text, sizeof(text) - 1);                                  \
		EXPECT_EQ(_e.line, l);                                                             \
		EXPECT_EQ(_e.column, c);                                                           \
		if (!strstr(_e.message, msg))                                                      \
			TAP_FAIL_(0, "message '%s' lacks '%s'", _e.message, msg);                  \
	} while (0)

TEST(error_positions)
{
	EXPECT_ERROR("a = 1\nb = 2\na = 3\n", 3, 1, "duplicate key 'a' (first defined at line 1)");
	EXPECT_ERROR("[t]\nx = 1\n\n[t]\n", 4, 2, "duplicate table 't' (first defined at line 1)");
	EXPECT_ERROR("s = \"abc\nx = 1\n", 1, 9, "newline in single-line string");
	EXPECT_ERROR("x = 1\ny = 0x_1\n", 2, 7, "expected a digit, found '_'");
	EXPECT_ERROR("y = 1__2\n", 1, 6, "'_' must stand between two digits");
	EXPECT_ERROR("a = { b = 1 }\n[a.c]\n", 2, 2, "cannot extend inline table 'a'");
	EXPECT_ERROR("a = [1]\n[[a]]\n", 2, 3, "cannot append to static array 'a'");
	EXPECT_ERROR("[a]\n[[a]]\n", 2, 3, "already a table");
	EXPECT_ERROR("[x]\nb.c = 1\n[x.b]\n", 3, 4, "duplicate table 'b'");
	EXPECT_ERROR("[a.b]\n[a]\nb.c = 1\n", 3, 1, "with a dotted key");
	EXPECT_ERROR("x = 1\n# ok\ny = \"\xc3\x28\"\n", 3, 6, "invalid UTF-8");
	EXPECT_ERROR("x = 1\ry = 2\n", 1, 6, "carriage return");
	EXPECT_ERROR("x = \"\\e\"\n", 1, 6, "invalid escape sequence '\\e'");
	EXPECT_ERROR("x = \"\\ud800\"\n", 1, 6, "not a Unicode scalar value");
	EXPECT_ERROR("x = 9223372036854775808\n", 1, 5, "integer out of range");
	EXPECT_ERROR("x = 2023-02-29\n", 1, 5, "invalid day 29");
	EXPECT_ERROR("x = {a = 1,}\n", 1, 12, "trailing comma");
	EXPECT_ERROR("x = [1, 2\n", 1, 5, "unterminated array");
	EXPECT_ERROR("\"\\u0000\" = 1\n", 1, 1, "NUL");
	/* column counts bytes: "é" is two */
	EXPECT_ERROR("\"é\" = 1 2\n", 1, 10, "expected end of line");
}

TEST(nul_byte_in_document)
{
	static const char text[] = "a = 1\nb = \0\n";
	TomlError e = parse_bad(text, sizeof(text) - 1);
	EXPECT_EQ(e.line, 2);
	EXPECT_EQ(e.column, 5);
}

TEST(values)
{
	_cleanup_(toml_freep) TomlValue *root =
		parse_ok("s = 'lit'\ni = -9_223_372_036_854_775_808\nh = 0xDEAD_beef\n"
			 "[t]\nf = 1_0.5e-1\nb = true\nd = 1979-05-27T07:32:00-07:00\n"
			 "a = [1, 'two', [3.0]]\n");
	ASSERT_TRUE(root);
	const TomlValue *v = toml_table_get(root, "s");
	ASSERT_TRUE(v);
	EXPECT_EQ(v->type, TOML_STRING);
	EXPECT_STREQ(v->str.ptr, "lit");
	v = toml_table_get(root, "i");
	ASSERT_TRUE(v);
	EXPECT_EQ(v->type, TOML_INTEGER);
	EXPECT_TRUE(v->integer == INT64_MIN);
	v = toml_table_get(root, "h");
	ASSERT_TRUE(v);
	EXPECT_EQ(v->integer, 0xdeadbeef);
	const TomlValue *t = toml_table_get(root, "t");
	ASSERT_TRUE(t);
	EXPECT_EQ(t->type, TOML_TABLE);
	EXPECT_EQ(t->line, 4);
	EXPECT_EQ(t->column, 1);
	v = toml_table_get(t, "f");
	ASSERT_TRUE(v);
	EXPECT_EQ(v->type, TOML_FLOAT);
	EXPECT_TRUE(fabs(v->flt - 1.05) < 1e-12);
	EXPECT_EQ(v->line, 5);
	EXPECT_EQ(v->column, 5);
	v = toml_table_get(t, "b");
	ASSERT_TRUE(v);
	EXPECT_EQ(v->type, TOML_BOOL);
	EXPECT_TRUE(v->boolean);
	v = toml_table_get(t, "d");
	ASSERT_TRUE(v);
	EXPECT_EQ(v->type, TOML_DATETIME);
	EXPECT_EQ(v->datetime.offset_minutes, -420);
	v = toml_table_get(t, "a");
	ASSERT_TRUE(v);
	ASSERT_EQ(v->type, TOML_ARRAY);
	ASSERT_EQ(v->array.n, 3);
	EXPECT_EQ(v->array.items[1]->type, TOML_STRING);
	EXPECT_EQ(v->array.items[2]->type, TOML_ARRAY);
	EXPECT_EQ(toml_table_get(t, "missing"), NULL);
	EXPECT_EQ(toml_table_get(v, "a"), NULL); /* not a table */
	EXPECT_EQ(toml_table_get(NULL, "a"), NULL);
	EXPECT_STREQ(toml_type_name(TOML_DATETIME_LOCAL), "datetime-local");
	EXPECT_STREQ(toml_type_name(TOML_TABLE), "table");
	EXPECT_EQ(toml_type_name(_TOML_TYPE_MAX), NULL);
}

TEST(document_order)
{
	_cleanup_(toml_freep) TomlValue *root =
		parse_ok("zeta = 1\nalpha = 2\n[mid]\nb = 1\na = 2\n[aa]\n[mid.sub]\n");
	static const char *const top[] = {"zeta", "alpha", "mid", "aa"};
	ASSERT_TRUE(root);
	ASSERT_EQ(root->table.n, ARRAY_SIZE(top));
	for (size_t i = 0; i < ARRAY_SIZE(top); i++)
		EXPECT_STREQ(root->table.items[i].key, top[i]);
	const TomlValue *mid = toml_table_get(root, "mid");
	ASSERT_TRUE(mid);
	ASSERT_EQ(mid->table.n, 3);
	EXPECT_STREQ(mid->table.items[0].key, "b");
	EXPECT_STREQ(mid->table.items[1].key, "a");
	EXPECT_STREQ(mid->table.items[2].key, "sub");
	EXPECT_EQ(mid->table.items[1].line, 5);
	EXPECT_EQ(mid->table.items[1].column, 1);
}

TEST(many_keys)
{
	/* exercises the lookup index past several growths */
	char *text = malloc(20000 * 16);
	size_t len = 0;
	ASSERT_TRUE(text);
	for (int i = 0; i < 20000; i++)
		len += (size_t) sprintf(text + len, "k%d = %d\n", i, i);
	TomlValue *root = NULL;
	TomlError err;
	EXPECT_EQ(toml_parse(text, len, &root, &err), 0);
	if (root) {
		EXPECT_EQ(root->table.n, 20000);
		const TomlValue *v = toml_table_get(root, "k12345");
		EXPECT_TRUE(v && v->integer == 12345);
	}
	toml_free(root);
	len += (size_t) sprintf(text + len, "k777 = 1\n");
	EXPECT_EQ(toml_parse(text, len, &root, &err), -EINVAL);
	EXPECT_EQ(err.line, 20001);
	free(text);
}

TEST(embedded_nul)
{
	_cleanup_(toml_freep) TomlValue *root = parse_ok("s = \"a\\u0000b\"\n");
	ASSERT_TRUE(root);
	const TomlValue *s = toml_table_get(root, "s");
	ASSERT_TRUE(s);
	EXPECT_EQ(s->str.len, 3);
	EXPECT_EQ(s->str.ptr[0], 'a');
	EXPECT_EQ(s->str.ptr[1], 0);
	EXPECT_EQ(s->str.ptr[2], 'b');
	EXPECT_EQ(s->str.ptr[3], 0);
}

TEST(nul_keys_flag)
{
	static const char text[] = "\"a\\u0000b\" = 1\n";
	TomlValue *root = NULL;
	TomlError err;
	EXPECT_EQ(toml_parse(text, sizeof(text) - 1, &root, &err), -EINVAL);
	ASSERT_EQ(toml_parse_flags(text, sizeof(text) - 1, TOML_PARSE_NUL_KEYS, &root, &err), 0);
	ASSERT_EQ(root->table.n, 1);
	EXPECT_EQ(root->table.items[0].key_len, 3);
	EXPECT_EQ(memcmp(root->table.items[0].key, "a\0b", 4), 0);
	EXPECT_EQ(toml_table_get(root, "a"), NULL);
	toml_free(root);
}

TEST(free_null)
{
	EXPECT_EQ(toml_free(NULL), NULL);
	TomlValue *v = NULL;
	toml_freep(&v);
}

TEST(empty_document)
{
	TomlValue *root = NULL;
	TomlError err;
	ASSERT_EQ(toml_parse(NULL, 0, &root, &err), 0);
	EXPECT_EQ(root->type, TOML_TABLE);
	EXPECT_EQ(root->table.n, 0);
	root = toml_free(root);
	static const char bom[] = "\xef\xbb\xbf# only a comment\r\n";
	ASSERT_EQ(toml_parse(bom, sizeof(bom) - 1, &root, &err), 0);
	EXPECT_EQ(root->table.n, 0);
	toml_free(root);
}

TEST(datetime_format)
{
	static const struct {
		const char *toml, *expect;
		TomlType type;
	} cases[] = {
		{"v = 1979-05-27T07:32:00Z", "1979-05-27T07:32:00Z", TOML_DATETIME},
		{"v = 1979-05-27t07:32:00z", "1979-05-27T07:32:00Z", TOML_DATETIME},
		{"v = 1979-05-27 00:32:00.999999-07:00", "1979-05-27T00:32:00.999999-07:00",
		 TOML_DATETIME},
		{"v = 1979-05-27T00:32:00+05:30", "1979-05-27T00:32:00+05:30", TOML_DATETIME},
		{"v = 1979-05-27T00:32:00.1234567891", "1979-05-27T00:32:00.123456789",
		 TOML_DATETIME_LOCAL},
		{"v = 2000-02-29", "2000-02-29", TOML_DATE_LOCAL},
		{"v = 23:59:60.5", "23:59:60.5", TOML_TIME_LOCAL},
		{"v = 00:00:00.000", "00:00:00", TOML_TIME_LOCAL},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_(toml_freep) TomlValue *root = parse_ok(cases[i].toml);
		char buf[64];
		if (!root) {
			TAP_FAIL_(0, "case %zu did not parse", i);
			continue;
		}
		const TomlValue *v = toml_table_get(root, "v");
		EXPECT_EQ(v->type, cases[i].type);
		EXPECT_STREQ(toml_format_datetime(v, buf, sizeof(buf)), cases[i].expect);
	}
	_cleanup_(toml_freep) TomlValue *root = parse_ok("v = 1979-05-27T07:32:00.5Z");
	ASSERT_TRUE(root);
	char small[8];
	toml_format_datetime(toml_table_get(root, "v"), small, sizeof(small));
	EXPECT_STREQ(small, "1979-05");
	const TomlValue *v = toml_table_get(root, "v");
	EXPECT_EQ(v->datetime.nanosecond, 500000000);
}

TEST(nesting_limit)
{
	char text[1024];
	size_t n = 0;

	n += (size_t) sprintf(text, "a = ");
	for (int i = 0; i < TOML_MAX_DEPTH - 1; i++)
		text[n++] = '[';
	for (int i = 0; i < TOML_MAX_DEPTH - 1; i++)
		text[n++] = ']';
	text[n] = 0;
	TomlValue *root = NULL;
	TomlError err;
	EXPECT_EQ(toml_parse(text, n, &root, &err), 0);
	root = toml_free(root);

	n = (size_t) sprintf(text, "a = ");
	for (int i = 0; i < TOML_MAX_DEPTH + 1; i++)
		text[n++] = '[';
	for (int i = 0; i < TOML_MAX_DEPTH + 1; i++)
		text[n++] = ']';
	text[n] = 0;
	EXPECT_EQ(toml_parse(text, n, &root, &err), -EINVAL);
	EXPECT_TRUE(strstr(err.message, "nesting"));

	/* inline tables count one level each, as arrays do */
	char big[2048];
	n = (size_t) sprintf(big, "a = ");
	for (int i = 0; i < TOML_MAX_DEPTH - 1; i++)
		n += (size_t) sprintf(big + n, "{b=");
	big[n++] = '1';
	for (int i = 0; i < TOML_MAX_DEPTH - 1; i++)
		big[n++] = '}';
	EXPECT_EQ(toml_parse(big, n, &root, &err), 0);
	root = toml_free(root);
	n = (size_t) sprintf(big, "a = {b=");
	for (int i = 0; i < TOML_MAX_DEPTH; i++)
		n += (size_t) sprintf(big + n, "{b=");
	EXPECT_EQ(toml_parse(big, n, &root, &err), -EINVAL);
	EXPECT_TRUE(strstr(err.message, "nesting"));
}

TEST(implied_tables)
{
	/* a.b is only implied by [a.b.c], so dotted keys in [a] may add to it ... */
	_cleanup_(toml_freep) TomlValue *root = parse_ok("[a.b.c]\n[a]\nb.d = 1\n");
	ASSERT_TRUE(root);
	const TomlValue *b = toml_table_get(toml_table_get(root, "a"), "b");
	ASSERT_TRUE(b);
	EXPECT_TRUE(toml_table_get(b, "c") && toml_table_get(b, "d"));
	/* ... after which it counts as defined by dotted keys */
	EXPECT_ERROR("[a.b.c]\n[a]\nb.d = 1\n[a.b]\n", 4, 4, "duplicate table 'b'");
	/* and [a] may still be defined once after [a.b] */
	_cleanup_(toml_freep) TomlValue *r2 = parse_ok("[a.b]\n[a]\nx = 1\n");
	EXPECT_TRUE(r2);
	EXPECT_ERROR("[a.b]\n[a]\n[a]\n", 3, 2, "duplicate table 'a' (first defined at line 2)");
}

TEST(array_of_tables)
{
	_cleanup_(toml_freep) TomlValue *root =
		parse_ok("[[p]]\nn = 1\n[p.sub]\nx = 1\n[[p]]\nn = 2\n[p.sub]\nx = 2\n");
	ASSERT_TRUE(root);
	const TomlValue *p = toml_table_get(root, "p");
	ASSERT_TRUE(p);
	ASSERT_EQ(p->type, TOML_ARRAY);
	ASSERT_EQ(p->array.n, 2);
	EXPECT_EQ(p->array.items[1]->line, 5);
	const TomlValue *x = toml_table_get(toml_table_get(p->array.items[1], "sub"), "x");
	ASSERT_TRUE(x);
	EXPECT_EQ(x->integer, 2);
}

TEST(multiline_strings)
{
	_cleanup_(toml_freep) TomlValue *root =
		parse_ok("a = \"\"\"\r\none \\\r\n   \t two\r\n\"\"\"\nb = '''x''''' \nc = "
			 "\"\"\"q\"\"\"\"\"\n");
	ASSERT_TRUE(root);
	EXPECT_STREQ(toml_table_get(root, "a")->str.ptr, "one two\n");
	EXPECT_STREQ(toml_table_get(root, "b")->str.ptr, "x''");
	EXPECT_STREQ(toml_table_get(root, "c")->str.ptr, "q\"\"");
}

int main(void)
{
	return tap_run();
}
