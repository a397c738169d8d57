/* SPDX-License-Identifier: MIT */
#pragma once

/* Private to audit/. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "audit/audit.h"

/* Symbolic formatters (audit/decode.c): write at most size bytes into buf, return buf. */
const char *audit_format_oflags(uint64_t v, char *buf, size_t size);
const char *audit_format_atflags(uint64_t v, char *buf, size_t size);
const char *audit_format_amode(uint64_t v, char *buf, size_t size);
const char *audit_format_signal(uint64_t v, char *buf, size_t size);
const char *audit_format_fcntl(uint64_t v, char *buf, size_t size);
const char *audit_format_domain(uint64_t v, char *buf, size_t size);
const char *audit_format_socktype(uint64_t v, char *buf, size_t size);
const char *audit_format_resource(uint64_t v, char *buf, size_t size);
/** Any register-only argument type; strings, sockaddrs and argv are shown as addresses. */
const char *audit_format_scalar(AuditArgType type, uint64_t v, char *buf, size_t size);
/** Whether the JSON value of the argument is a number (else a string). */
bool audit_arg_is_number(AuditArgType type, uint64_t v);

/**
 * Writes s (len bytes, may hold NULs) as a C string literal with quotes: \n \t \r \" \\ and
 * \xNN for every other byte outside printable ASCII, so nothing from the child can reach the
 * terminal raw. At most max bytes of s are shown; longer strings get "..." after the closing
 * quote. Always NUL-terminates out (size > 0); returns the length written.
 */
size_t audit_quote(const char *s, size_t len, size_t max, char *out, size_t size);

/** The [audit] events name of one AuditEvent bit ("file", "exec", …). */
const char *audit_category_to_string(unsigned bit);

typedef struct AuditInsn {
	uint64_t addr;
	bool site; /* the syscall instruction */
	char text[96];
} AuditInsn;

/**
 * Decodes the x86_64 instructions of code (len bytes at code_addr) around site, the address of
 * the syscall instruction: at most max instructions ending a few after the site. Returns how
 * many were written to out; 0 without capstone or when no start decodes onto the site.
 */
size_t audit_disassemble(const uint8_t *code, size_t len, uint64_t code_addr, uint64_t site,
			 AuditInsn *out, size_t max);

/* ---- counted strings (audit/strset.c), for the readers: report, digest, corpus, diff ---- */

typedef struct StrCount {
	char *s;
	unsigned n;
	bool denied; /* report: at least one attempt was denied */
} StrCount;

/* Strings in insertion order with counts; a hash index makes lookups O(1). */
typedef struct StrSet {
	StrCount *v;
	size_t n, cap;
	size_t *idx; /* index + 1; 0: empty */
	size_t idx_cap;
} StrSet;

/** Adds s (copied) once, or n times; returns its entry (NULL on OOM). */
StrCount *audit_strset_add(StrSet *set, const char *s);
StrCount *audit_strset_add_n(StrSet *set, const char *s, unsigned n);
/** The entry of s, or NULL. */
StrCount *audit_strset_find(const StrSet *set, const char *s);
void audit_strset_done(StrSet *set);
/** Indices of set by count, descending, ties in insertion order; the caller frees. NULL: OOM. */
size_t *audit_strset_by_count(const StrSet *set);

/** Whether an open of syscall with these flags (as the log writes them) writes. */
bool audit_is_write_open(const char *syscall, const char *flags);
/** Whether syscall changes the file system (mkdir, unlink, rename, chmod, …). */
bool audit_is_modifying(const char *syscall);

/* ---- the digest of one log (audit/digest.c, audit/digest.h) ---- */

struct AuditDigest {
	unsigned records, skipped;
	bool started, finished; /* the run start and end records were read */
	char *policy, *cmdline;
	int64_t exit_code, signal, denied, duration_ms; /* from the end record; -1: none */
	char *killed_by;				/* NULL: none */
	uint64_t max_us;
	unsigned n_syscalls, n_denied, n_enoent, n_out_of_view;
	StrSet pids;
	StrSet syscalls, categories;
	StrSet denial_kinds;  /* why (or "CATEGORY ERRNO") → count */
	StrSet denials;	      /* "syscall target: kind" → count */
	StrSet out_of_view;   /* "PATH (KIND)" → count */
	StrSet oov_kinds;     /* "hidden", "outside", "shadowed" → count */
	StrSet network;	      /* destination → count; denied: some attempt was denied */
	StrSet writes, reads; /* paths opened or changed successfully */
	StrSet writes_denied, reads_denied;
	StrSet execs;	/* programs executed (virtual paths) */
	StrSet budgets; /* budget records by name */
};
