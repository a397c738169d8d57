/* SPDX-License-Identifier: MIT */
/*
 * The key table of the policy language (policy/schema.c) against what is built from it: every
 * key is documented in docs/policy.md and in man/sbxtrace-policy.5.scd, under its section,
 * and every key round-trips through the writer (check's output) with its example value.
 * usage: test-policy-schema DOCS_POLICY_MD MAN_POLICY_SCD
 */
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/util.h"
#include "policy/policy.h"
#include "policy/schema.h"
#include "tests/unit/tap.h"

static char *docs, *man;
static char scratch[PATH_MAX];
static PolicyVars vars;

static char *slurp(const char *path)
{
	char *text = NULL;
	size_t len;

	if (read_full_file(AT_FDCWD, path, 1 << 20, &text, &len) < 0)
		return NULL;
	return text;
}

/* The part of text from the line heading (exactly) to the next line that starts with
 * level (a heading of the same level), or NULL; *ret_len its length. */
static const char *part(const char *text, const char *heading, const char *level, size_t *ret_len)
{
	char line[128];
	const char *start, *end;

	snprintf(line, sizeof(line), "\n%s\n", heading);
	start = strstr(text, line);
	if (!start)
		return NULL;
	start++;
	snprintf(line, sizeof(line), "\n%s", level);
	end = strstr(start + 1, line);
	*ret_len = end ? (size_t) (end - start) : strlen(start);
	return start;
}

static bool contains(const char *s, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = 0; i + n <= len; i++)
		if (memcmp(s + i, needle, n) == 0)
			return true;
	return false;
}

/* The section's heading in docs/policy.md and in the man page ("[[mount]]", "[[MOUNT]]"). */
static void headings(const SchemaSection *s, char *docs_h, char *man_h, size_t size)
{
	char parent[64], upper[64];
	const char *dot = strchr(s->name, '.');

	snprintf(parent, sizeof(parent), "%.*s", (int) (dot ? dot - s->name : 63), s->name);
	for (size_t i = 0; i < sizeof(upper); i++)
		if (!(upper[i] = (char) toupper((unsigned char) parent[i])))
			break;
	snprintf(docs_h, size, "## %s%s%s", s->array ? "[[" : "[", parent, s->array ? "]]" : "]");
	snprintf(man_h, size, "# %s%s%s", s->array ? "[[" : "[", upper, s->array ? "]]" : "]");
}

TEST(every_key_is_documented)
{
	const SchemaSection *sections;
	size_t n, n_keys = 0;

	sections = policy_schema_sections(&n);
	for (size_t i = 0; i < n; i++) {
		const SchemaSection *s = &sections[i];
		char docs_h[80], man_h[80];
		const char *d, *m;
		size_t dlen, mlen;

		if (!*s->name) {
			/* the top level: extends has a part of its own, the others are sections */
			EXPECT_TRUE(part(docs, "## extends", "## ", &dlen) != NULL);
			EXPECT_TRUE(part(man, "# EXTENDS", "# ", &mlen) != NULL);
			continue;
		}
		headings(s, docs_h, man_h, sizeof(docs_h));
		d = part(docs, docs_h, "## ", &dlen);
		m = part(man, man_h, "# ", &mlen);
		if (!d)
			TAP_FAIL_(0, "docs/policy.md has no heading '%s'", docs_h);
		if (!m)
			TAP_FAIL_(0, "the man page has no heading '%s'", man_h);
		for (size_t j = 0; d && m && j < s->n_keys; j++) {
			const SchemaKey *k = &s->keys[j];
			const char *dot = strchr(s->name, '.');
			char want[128];

			/* docs: `key` in the section's table; `env.keep` for a subsection of
			 * [process], whose own key may then show only so (`env.`); the ratchet's
			 * levels have a table of their own under [network] */
			char sub[128], alt[128] = "";

			snprintf(sub, sizeof(sub), "%s.%s", s->name, k->name);
			if (dot && !streq(dot + 1, "ratchet"))
				snprintf(want, sizeof(want), "`%s.%s`", dot + 1, k->name);
			else
				snprintf(want, sizeof(want), "`%s`", k->name);
			if (policy_schema_section(sub))
				snprintf(alt, sizeof(alt), "`%s.", k->name);
			if (!contains(d, dlen, want) && !(*alt && contains(d, dlen, alt)))
				TAP_FAIL_(0, "docs/policy.md, %s: no %s", docs_h, want);
			snprintf(want, sizeof(want), "*%s*", k->name);
			if (!contains(m, mlen, want))
				TAP_FAIL_(0, "man page, %s: no %s", man_h, want);
			n_keys++;
		}
	}
	EXPECT_GE(n_keys, 58); /* all but the top level's */
}

TEST(every_row_is_complete)
{
	const SchemaSection *sections;
	size_t n;

	sections = policy_schema_sections(&n);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < sections[i].n_keys; j++) {
			const SchemaKey *k = &sections[i].keys[j];

			if (!k->doc || !*k->doc || !k->example || !*k->example)
				TAP_FAIL_(0, "%s.%s: no doc or no example", sections[i].name,
					  k->name);
			if ((k->type == SCHEMA_CUSTOM) != (k->offset == SCHEMA_NO_FIELD))
				TAP_FAIL_(0, "%s.%s: only a custom key has no field",
					  sections[i].name, k->name);
			if (k->type == SCHEMA_ENUM && (!k->names || k->n <= k->first))
				TAP_FAIL_(0, "%s.%s: an enum without names", sections[i].name,
					  k->name);
			EXPECT_TRUE(policy_schema_key(&sections[i], k->name) == k);
		}
}

static char *to_toml(const Policy *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	(void) policy_write_toml(p, f);
	fclose(f);
	return buf;
}

/* Loads text and returns what check would print, or NULL (the error printed). */
static char *load_write(const char *text, const char *what)
{
	_cleanup_(policy_freep) Policy *p = NULL;
	PolicyError err;
	char buf[1024];

	if (policy_load_string(text, strlen(text), "schema-test", &vars, NULL, &p, &err) < 0) {
		printf("# %s: %s\n", what, policy_error_format(&err, buf, sizeof(buf)));
		return NULL;
	}
	return to_toml(p);
}

/* the base every example is added to: a mount for process.cwd to be inside of */
#define BASE "[[mount]]\npath = \"/base\"\nmode = \"tmp\"\n"

TEST(every_key_round_trips)
{
	_cleanup_free_ char *plain = load_write(BASE, "the base");
	const SchemaSection *sections;
	size_t n;

	ASSERT_TRUE(plain != NULL);
	sections = policy_schema_sections(&n);
	for (size_t i = 0; i < n; i++) {
		const SchemaSection *s = &sections[i];

		for (size_t j = 0; j < s->n_keys; j++) {
			const SchemaKey *k = &s->keys[j];
			_cleanup_free_ char *text = NULL, *a = NULL, *b = NULL;
			char what[128];

			snprintf(what, sizeof(what), "%s%s%s", s->name, *s->name ? "." : "",
				 k->name);
			if (!*s->name)
				text = strdup_printf("%s\n" BASE, k->example);
			else
				text = strdup_printf(BASE "%s%s%s\n%s\n", s->array ? "[[" : "[",
						     s->name, s->array ? "]]" : "]", k->example);
			ASSERT_TRUE(text != NULL);
			a = load_write(text, what);
			if (!a) {
				TAP_FAIL_(0, "%s: the example does not load", what);
				continue;
			}
			b = load_write(a, what);
			if (!b || !streq(a, b))
				TAP_FAIL_(0, "%s: the written policy does not round-trip", what);
			/* the example is not the default: it must show in what is written */
			if (k->write != SCHEMA_WRITE_NEVER && streq(a, plain))
				TAP_FAIL_(0, "%s: the writer leaves it out", what);
		}
	}
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");
	int r;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DOCS_POLICY_MD MAN_POLICY_SCD\n", argv[0]);
		return 1;
	}
	docs = slurp(argv[1]);
	man = slurp(argv[2]);
	if (!docs || !man) {
		fprintf(stderr, "cannot read %s or %s\n", argv[1], argv[2]);
		return 1;
	}
	snprintf(scratch, sizeof(scratch), "%s/test-policy-schema-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(scratch))
		return 1;
	vars = (PolicyVars){
		.workspace = scratch, .home = scratch, .pwd = scratch, .runtime_dir = scratch};
	r = tap_run();
	(void) rmdir(scratch);
	free(docs);
	free(man);
	return r;
}
