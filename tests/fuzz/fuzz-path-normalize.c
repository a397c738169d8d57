/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes the lexical path normalizer (sbx_path_normalize(), emulation/path/view.c), which
 * every path a sandboxed program names goes through. Input: one byte for the size of the
 * output buffer (0: PATH_MAX), then the path (up to its first NUL). The output buffer is a
 * heap block of exactly that size, so that a write past it is caught.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emulation/path/view.h"
#include "tests/fuzz/fuzz.h"

static void check_normal(const char *out, size_t in_len, size_t size)
{
	size_t len = strlen(out);

	if (out[0] != '/' || len >= size || len > (in_len ? in_len : 1))
		abort();
	/* no empty, "." or ".." component, no trailing slash but the root's */
	if (strstr(out, "//") || strstr(out, "/./") || strstr(out, "/../"))
		abort();
	if (len > 1 && (out[len - 1] == '/' || strcmp(out + len - 2, "/.") == 0 ||
			(len > 2 && strcmp(out + len - 3, "/..") == 0)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *path, *out, again[PATH_MAX], full[PATH_MAX];
	size_t out_size;
	int r;

	if (size < 1 || size > FUZZ_MAX_INPUT)
		return 0;
	out_size = data[0] ? data[0] : PATH_MAX;
	path = strndup((const char *) data + 1, size - 1);
	out = malloc(out_size);
	if (!path || !out)
		abort();
	r = sbx_path_normalize(path, out, out_size);
	if (r == 0) {
		check_normal(out, strlen(path), out_size);
		/* normal already: a second pass changes nothing */
		if (sbx_path_normalize(out, again, sizeof(again)) != 0 || strcmp(out, again) != 0)
			abort();
		/* a larger buffer gives the same answer */
		if (sbx_path_normalize(path, full, sizeof(full)) != 0 || strcmp(out, full) != 0)
			abort();
	} else if (r == -EINVAL) {
		if (path[0] == '/' && out_size >= 2)
			abort();
	} else if (r != -ENAMETOOLONG) {
		abort();
	}
	free(out);
	free(path);
	return 0;
}
