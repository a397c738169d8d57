/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes the TOML parser: any input must either parse into a tree whose invariants hold, or
 * fail with -EINVAL and a position inside the document; never crash, leak or hang.
 */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "policy/toml.h"
#include "tests/fuzz/fuzz.h"

static bool nul_keys;

static void walk(const TomlValue *v, unsigned depth)
{
	char buf[64];

	assert(depth <= 4 * TOML_MAX_DEPTH);
	assert(v->line >= 1 && v->column >= 1);
	assert(toml_type_name(v->type));
	switch (v->type) {
	case TOML_STRING:
		assert(v->str.ptr && v->str.ptr[v->str.len] == 0);
		break;
	case TOML_DATETIME:
	case TOML_DATETIME_LOCAL:
	case TOML_DATE_LOCAL:
	case TOML_TIME_LOCAL:
		assert(v->datetime.nanosecond < 1000000000u);
		(void) toml_format_datetime(v, buf, sizeof(buf));
		assert(strlen(buf) < sizeof(buf) - 1);
		break;
	case TOML_ARRAY:
		for (size_t i = 0; i < v->array.n; i++)
			walk(v->array.items[i], depth + 1);
		break;
	case TOML_TABLE:
		for (size_t i = 0; i < v->table.n; i++) {
			const TomlKeyValue *kv = &v->table.items[i];
			assert(kv->key && kv->key[kv->key_len] == 0);
			assert(strlen(kv->key) == kv->key_len || nul_keys);
			assert(kv->line >= 1 && kv->column >= 1);
			/* keys are unique, so lookup finds this very entry */
			if (v->table.n <= 64 && strlen(kv->key) == kv->key_len)
				assert(toml_table_get(v, kv->key) == kv->value);
			walk(kv->value, depth + 1);
		}
		break;
	default:
		break;
	}
}

static void parse_one(const uint8_t *data, size_t size, unsigned flags)
{
	TomlValue *root = NULL;
	TomlError err;
	int r;

	r = toml_parse_flags((const char *) data, size, flags, &root, &err);
	if (r < 0) {
		assert(r == -EINVAL || r == -ENOMEM);
		assert(!root);
		if (r == -EINVAL) {
			/* the position is inside the document (or just past its end) */
			unsigned lines = 1;
			for (size_t i = 0; i < size; i++)
				lines += data[i] == '\n';
			assert(err.line >= 1 && err.line <= lines);
			assert(err.column >= 1 && err.column <= size + 1);
			assert(err.message[0] && !strchr(err.message, '\n'));
			/* the conformance decoder's mode: go on past NUL in keys */
			if (!flags && strstr(err.message, "key contains a NUL"))
				parse_one(data, size, TOML_PARSE_NUL_KEYS);
		}
		return;
	}
	assert(root && root->type == TOML_TABLE);
	nul_keys = flags & TOML_PARSE_NUL_KEYS;
	walk(root, 0);
	root = toml_free(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size <= FUZZ_MAX_INPUT)
		parse_one(data, size, 0);
	return 0;
}
