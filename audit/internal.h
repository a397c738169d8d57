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
