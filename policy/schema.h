/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The policy schema: one table per section listing every key with its type, the Policy field
 * it fills, how a later file merges with an earlier one, and a one-line doc. The loader
 * (policy.c) parses the keys of a regular type from it, the writer (write.c) writes them back
 * from it, unknown keys get their "did you mean" from it, and tests/unit/policy checks that
 * every key is in docs/policy.md and the man page and round-trips through the writer.
 *
 * A key of type SCHEMA_CUSTOM is parsed by its section's handler in policy.c, a key whose row
 * says SCHEMA_WRITE_CUSTOM written by write_custom() in write.c: extends, the section keys of
 * the top level, mount.source and optional, process.env.set, network.allow and ratchet, and
 * the syscall lists. They are rows all the same (suggestions, the docs test). The entries of
 * [[mount]] and [[rule]] are parsed and written from their rows like any section; the checks
 * of a whole entry stay in apply_one_mount() and apply_one_rule().
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum SchemaType {
	SCHEMA_STRING,	 /* char *: a string without NULs */
	SCHEMA_BOOL,	 /* bool */
	SCHEMA_ENUM,	 /* int (or bool with SCHEMA_F_BOOL_FIELD): one of names[first..n) */
	SCHEMA_TRISTATE, /* int: true, false or "auto" (1, 0, -1) */
	SCHEMA_ERRNO,	 /* int: an errno name, "EPERM" */
	SCHEMA_UINT,	 /* unsigned: an integer from min to max */
	SCHEMA_DURATION, /* uint64_t ms, LIMIT_UNSET: [limits] duration, up to max */
	SCHEMA_SIZE,	 /* uint64_t bytes, LIMIT_UNSET: [limits] size, up to max */
	SCHEMA_COUNT,	 /* uint64_t, LIMIT_UNSET: [limits] integer, up to max */
	SCHEMA_TIMEOUT,	 /* uint64_t ms: a held call's timeout, 1 s to 1 h */
	SCHEMA_VPATH,	 /* char *: a virtual path (expanded, absolute, normalized) */
	SCHEMA_HPATH,	 /* char *: a host path (expanded, relative to the policy file) */
	SCHEMA_GLOB,	 /* char *: a virtual path glob (expanded, checked) */
	SCHEMA_STRV,	 /* char **: an array of strings, each checked as item says */
	SCHEMA_SELECT,	 /* AuditSelect + char ** at offset2: "none", "denied", "all" or names */
	SCHEMA_EVENTS,	 /* unsigned AuditEvent mask: "all" or an array of event kinds */
	SCHEMA_CUSTOM,	 /* the section's own code parses and writes it */
	_SCHEMA_TYPE_MAX,
	_SCHEMA_TYPE_INVALID = -EINVAL,
} SchemaType;

/* What each element of a SCHEMA_STRV is. */
typedef enum SchemaItem {
	SCHEMA_ITEM_GLOB,     /* a virtual path glob (written as a path: '$' doubled) */
	SCHEMA_ITEM_DNS,      /* a DNS server address */
	SCHEMA_ITEM_UNIX,     /* a virtual path, or "@name" for an abstract socket */
	SCHEMA_ITEM_ENV_NAME, /* a variable name, globs '*' '?' allowed */
	_SCHEMA_ITEM_MAX,
	_SCHEMA_ITEM_INVALID = -EINVAL,
} SchemaItem;

/* How a later file (a policy over its extends, an override over the files) combines with
 * what was there; docs/policy.md "Merging" says the same. */
typedef enum SchemaMerge {
	SCHEMA_MERGE_REPLACE,	 /* the later value replaces the earlier one */
	SCHEMA_MERGE_TOP_ONLY,	 /* only the file named on the command line counts */
	SCHEMA_MERGE_BY_NAME,	 /* a table merged entry by entry (env.set, ratchet) */
	SCHEMA_MERGE_APPEND,	 /* entries are appended ([[rule]]) */
	SCHEMA_MERGE_BY_PATH,	 /* appended, a later one at the same path replacing ([[mount]]) */
	SCHEMA_MERGE_BY_SYSCALL, /* appended, a later one for the same syscall replacing */
	SCHEMA_MERGE_BASE,	 /* extends: applied before the file itself */
	SCHEMA_MERGE_BY_KEY,	 /* a section: each of its keys by its own rule */
	_SCHEMA_MERGE_MAX,
	_SCHEMA_MERGE_INVALID = -EINVAL,
} SchemaMerge;

/* When the writer writes a key. Defaults are written too, so that the output says everything
 * (write.c); IF_SET leaves out what is unset (NULL, LIMIT_UNSET). */
typedef enum SchemaWrite {
	SCHEMA_WRITE_ALWAYS,
	SCHEMA_WRITE_IF_SET,
	SCHEMA_WRITE_IF_NONZERO,  /* a bool, or an enum not names[0] (its field not 0) */
	SCHEMA_WRITE_ASK_TIMEOUT, /* when the bool at offset2 is set or the value is not 30 s */
	SCHEMA_WRITE_NEVER,	  /* consumed while loading (mount.optional) */
	SCHEMA_WRITE_CUSTOM,	  /* write_custom() in write.c does it (and decides when) */
	_SCHEMA_WRITE_MAX,
	_SCHEMA_WRITE_INVALID = -EINVAL,
} SchemaWrite;

enum {
	SCHEMA_F_NONEMPTY = 1 << 0,	/* STRING: "" is an error */
	SCHEMA_F_BOOL_FIELD = 1 << 1,	/* ENUM: stored as bool (index != 0) */
	SCHEMA_F_NO_UNLIMITED = 1 << 2, /* limits: "unlimited" is not a value */
	SCHEMA_F_ZERO_OK = 1 << 3,	/* limits: 0 is a value */
	SCHEMA_F_WHERE = 1 << 4,	/* the loader remembers where it was set (checks after
					 * the merge point at it) */
	SCHEMA_F_WRITE_LAST = 1 << 5,	/* written after the section's other keys */
};

#define SCHEMA_NO_FIELD SIZE_MAX

typedef struct SchemaKey {
	const char *name;
	SchemaType type;
	size_t offset; /* of the field in Policy (in the entry, PolicyRule, for an array of
			* tables); SCHEMA_NO_FIELD for SCHEMA_CUSTOM */
	SchemaMerge merge;
	SchemaWrite write;
	unsigned flags;	 /* SCHEMA_F_* */
	const char *doc; /* one line: what it means (docs/policy.md has the details) */
	/* a value that is not the default, for the round-trip test: TOML lines to put in the
	 * section, "key = value" unless the key needs others beside it */
	const char *example;

	const char *const *names; /* ENUM */
	int first, n;		  /* ENUM: names[first..n) are accepted */
	uint64_t min, max;	  /* UINT; limits: max */
	SchemaItem item;	  /* STRV */
	size_t offset2;		  /* SELECT: the list; WRITE_ASK_TIMEOUT: the ask flag */
	const char *unset;	  /* STRING, WRITE_ALWAYS: written when the field is NULL */
} SchemaKey;

typedef struct SchemaSection {
	const char *name;  /* "network", "process.env"; "" for the top level */
	bool array;	   /* an array of tables: [[mount]] */
	bool write_if_any; /* the writer leaves the section out when it writes no key */
	const SchemaKey *keys;
	size_t n_keys;
} SchemaSection;

/** Every section, the top level first, then in the order the writer writes them; subsections
 * ("process.env") follow their parent. */
const SchemaSection *policy_schema_sections(size_t *ret_n);

/** The section called name ("limits", "process.env", "" for the top level), or NULL. */
const SchemaSection *policy_schema_section(const char *name);

/** The key called name in section s, or NULL. */
const SchemaKey *policy_schema_key(const SchemaSection *s, const char *name);

/** The names of a section's keys, NULL-terminated, into ret (at least n_keys + 1 slots), for
 * suggestions. */
void policy_schema_key_names(const SchemaSection *s, const char **ret);

#define SCHEMA_KEYS_MAX 16 /* most keys in one section: for policy_schema_key_names() buffers */

/** The field of key k in p. */
#define SCHEMA_FIELD(p, k, type)  ((type *) ((char *) (p) + (k)->offset))
#define SCHEMA_FIELD2(p, k, type) ((type *) ((char *) (p) + (k)->offset2))
