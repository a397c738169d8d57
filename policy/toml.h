/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A complete TOML 1.0.0 parser (https://toml.io/en/v1.0.0). The document is parsed into a
 * tree of TomlValue nodes; tables keep their keys in document order. Every node records the
 * line and column (1-based, columns counted in bytes) where it was defined, so the policy
 * layer can point at the offending key.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum TomlType {
	TOML_STRING,
	TOML_INTEGER,
	TOML_FLOAT,
	TOML_BOOL,
	TOML_DATETIME,	     /* offset date-time */
	TOML_DATETIME_LOCAL, /* local date-time */
	TOML_DATE_LOCAL,
	TOML_TIME_LOCAL,
	TOML_ARRAY,
	TOML_TABLE,
	_TOML_TYPE_MAX,
	_TOML_TYPE_INVALID = -EINVAL,
} TomlType;

typedef struct TomlDatetime {
	int year, month, day;	  /* valid for DATETIME, DATETIME_LOCAL, DATE_LOCAL */
	int hour, minute, second; /* valid for DATETIME, DATETIME_LOCAL, TIME_LOCAL */
	uint32_t nanosecond;	  /* fractional seconds, truncated to nanoseconds */
	int offset_minutes;	  /* DATETIME only: offset east of UTC ("Z" = 0) */
} TomlDatetime;

typedef struct TomlValue TomlValue;

typedef struct TomlKeyValue {
	char *key; /* NUL-terminated; holds no NUL (rejected) unless TOML_PARSE_NUL_KEYS */
	TomlValue *value;
	unsigned line, column; /* where the key was written */
	size_t key_len;	       /* == strlen(key), except with TOML_PARSE_NUL_KEYS */
} TomlKeyValue;

struct TomlValue {
	TomlType type;
	unsigned line, column; /* where the value (or the [table] header) starts */
	union {
		struct {
			char *ptr; /* NUL-terminated; may contain embedded NULs (\u0000): use len */
			size_t len;
		} str;
		int64_t integer;
		double flt;
		bool boolean;
		TomlDatetime datetime;
		struct {
			TomlValue **items;
			size_t n;
		} array;
		struct {
			TomlKeyValue *items;
			size_t n;
		} table;
	};
	/* parser bookkeeping: how the table/array came to be (header, dotted key, inline,
	 * array of tables); needed for redefinition errors, ignore elsewhere. */
	unsigned origin;
};

typedef struct TomlError {
	unsigned line, column; /* 1-based; 0 when not tied to a position */
	char message[200];     /* one line, no trailing newline, no position prefix */
} TomlError;

/**
 * Parses a whole document of len bytes (not necessarily NUL-terminated; embedded NULs are an
 * error). On success *ret_root is a TOML_TABLE owned by the caller (free with toml_free()).
 * Returns -EINVAL with *reterr filled for a syntax or semantic error, -ENOMEM on OOM.
 */
int toml_parse(const char *text, size_t len, TomlValue **ret_root, TomlError *reterr);

/* Nesting limit: key parts of a header plus those of a dotted key plus array/inline-table
 * levels; deeper documents are rejected ("nesting deeper than 128 levels"). */
#define TOML_MAX_DEPTH 128

enum {
	/* Accept keys holding NUL ("\u0000" = 1), as TOML allows; such keys are visible only
	 * through TomlKeyValue.key_len, toml_table_get() cannot find them. Conformance testing
	 * only: the policy layer uses toml_parse(), which rejects them. */
	TOML_PARSE_NUL_KEYS = 1 << 0,
};

/** toml_parse() with TOML_PARSE_* flags. */
int toml_parse_flags(const char *text, size_t len, unsigned flags, TomlValue **ret_root,
		     TomlError *reterr);

/** Frees a value tree; accepts NULL; returns NULL. */
TomlValue *toml_free(TomlValue *v);
static inline void toml_freep(TomlValue **v)
{
	if (*v)
		(void) toml_free(*v);
}

/** The value of key in table, or NULL (also when table is not a table). */
const TomlValue *toml_table_get(const TomlValue *table, const char *key);

/** "string", "integer", "float", "bool", "datetime", …, "array", "table". */
const char *toml_type_name(TomlType t);

/**
 * Formats a date-time value as RFC 3339 (offset form for TOML_DATETIME, the matching part
 * for local kinds); fractional seconds are printed when nonzero. Returns buf.
 */
char *toml_format_datetime(const TomlValue *v, char *buf, size_t size);
