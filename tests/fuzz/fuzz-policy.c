/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes policy validation: any input either loads, and then its effective policy written
 * as TOML loads again to the very same text (what `sbxtrace check` promises), or fails with
 * -EINVAL/-ENOENT and a one-line message; never crash, leak or hang.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "tests/fuzz/fuzz.h"

static char *to_toml(const Policy *p, size_t *ret_len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, ret_len);

	assert(f);
	assert(policy_write_toml(p, f) == 0);
	fclose(f);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const PolicyVars vars = {
		.workspace = "/tmp", .home = "/tmp", .pwd = "/tmp", .runtime_dir = "/tmp",
	};
	Policy *p = NULL, *q = NULL;
	char *a, *b;
	size_t alen, blen;
	PolicyError err;
	int r;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	r = policy_load_string((const char *) data, size, "fuzz.toml", &vars, NULL, &p, &err);
	if (r < 0) {
		assert(r == -EINVAL || r == -ENOENT || r == -ENOMEM);
		assert(!p);
		assert(err.message[0] && !strchr(err.message, '\n'));
		return 0;
	}

	a = to_toml(p, &alen);
	r = policy_load_string(a, alen, "written.toml", &vars, NULL, &q, &err);
	if (r < 0) {
		fprintf(stderr, "written policy does not load: %s\n%s\n", err.message, a);
		abort();
	}
	b = to_toml(q, &blen);
	if (alen != blen || memcmp(a, b, alen) != 0) {
		fprintf(stderr, "written policy does not round-trip:\n%s\n---\n%s\n", a, b);
		abort();
	}
	free(a);
	free(b);
	policy_free(p);
	policy_free(q);
	return 0;
}
