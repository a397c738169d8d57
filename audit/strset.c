/* SPDX-License-Identifier: MIT */
/*
 * Counted strings in insertion order with a hash index (audit/internal.h): what the report,
 * the digest, the corpus and the diff tally (paths, syscalls, destinations, denial kinds).
 */
#include "audit/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/macros.h"

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char) *s) * 1099511628211ULL;
	return h;
}

static int grow_index(StrSet *set)
{
	size_t cap = set->idx_cap ? set->idx_cap * 2 : 64;
	size_t *idx = calloc(cap, sizeof(size_t));

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < set->n; i++) {
		size_t h = (size_t) hash_str(set->v[i].s) & (cap - 1);

		while (idx[h])
			h = (h + 1) & (cap - 1);
		idx[h] = i + 1;
	}
	free(set->idx);
	set->idx = idx;
	set->idx_cap = cap;
	return 0;
}

StrCount *audit_strset_find(const StrSet *set, const char *s)
{
	size_t h;

	if (!set->idx_cap)
		return NULL;
	h = (size_t) hash_str(s) & (set->idx_cap - 1);
	while (set->idx[h]) {
		StrCount *c = &set->v[set->idx[h] - 1];

		if (streq(c->s, s))
			return c;
		h = (h + 1) & (set->idx_cap - 1);
	}
	return NULL;
}

StrCount *audit_strset_add_n(StrSet *set, const char *s, unsigned n)
{
	StrCount *c = audit_strset_find(set, s);
	size_t h;

	if (c) {
		c->n += n;
		return c;
	}
	if ((set->n + 1) * 2 > set->idx_cap && grow_index(set) < 0)
		return NULL;
	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 16;
		StrCount *v = realloc(set->v, cap * sizeof(StrCount));

		if (!v)
			return NULL;
		set->v = v;
		set->cap = cap;
	}
	set->v[set->n] = (StrCount){.s = strdup(s), .n = n};
	if (!set->v[set->n].s)
		return NULL;
	h = (size_t) hash_str(s) & (set->idx_cap - 1);
	while (set->idx[h])
		h = (h + 1) & (set->idx_cap - 1);
	set->idx[h] = ++set->n;
	return &set->v[set->n - 1];
}

StrCount *audit_strset_add(StrSet *set, const char *s)
{
	return audit_strset_add_n(set, s, 1);
}

void audit_strset_done(StrSet *set)
{
	for (size_t i = 0; i < set->n; i++)
		free(set->v[i].s);
	free(set->v);
	free(set->idx);
	*set = (StrSet){};
}

static const StrSet *sort_set;

static int cmp_count(const void *a, const void *b)
{
	const StrCount *x = &sort_set->v[*(const size_t *) a],
		       *y = &sort_set->v[*(const size_t *) b];

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	/* ties in insertion order: the sort is stable */
	return *(const size_t *) a < *(const size_t *) b ? -1 : 1;
}

size_t *audit_strset_by_count(const StrSet *set)
{
	size_t *o = malloc((set->n ? set->n : 1) * sizeof(size_t));

	if (!o)
		return NULL;
	for (size_t i = 0; i < set->n; i++)
		o[i] = i;
	/* not reentrant (a static for qsort's comparator); audit/ is single-threaded readers */
	sort_set = set;
	qsort(o, set->n, sizeof(size_t), cmp_count);
	sort_set = NULL;
	return o;
}

bool audit_is_write_open(const char *syscall, const char *flags)
{
	if (streq(syscall, "creat"))
		return true;
	return strstr(flags, "O_WRONLY") || strstr(flags, "O_RDWR") || strstr(flags, "O_CREAT") ||
	       strstr(flags, "O_TRUNC");
}

bool audit_is_modifying(const char *s)
{
	static const char *const names[] = {
		"mkdir",     "mkdirat",	  "mknod",     "mknodat",     "rmdir",	      "unlink",
		"unlinkat",  "rename",	  "renameat",  "renameat2",   "link",	      "linkat",
		"symlink",   "symlinkat", "chmod",     "fchmodat",    "fchmodat2",    "chown",
		"lchown",    "fchownat",  "truncate",  "utime",	      "utimes",	      "utimensat",
		"futimesat", "setxattr",  "lsetxattr", "removexattr", "lremovexattr",
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (streq(names[i], s))
			return true;
	return false;
}
