/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes the audit log reader and both report writers (any bytes as a log), and the escaper
 * of child strings for --trace (the same bytes as a string the child passed).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "audit/internal.h"
#include "audit/digest.h"
#include "audit/report.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char quoted[1024];
	AuditReport *r = NULL;
	FILE *in, *out;
	size_t n;

	if (size > FUZZ_MAX_INPUT)
		return 0;

	n = audit_quote((const char *) data, size, 200, quoted, sizeof(quoted));
	if (n >= sizeof(quoted) || strlen(quoted) != n)
		__builtin_trap();
	for (size_t i = 0; i < n; i++)
		/* nothing outside printable ASCII may reach the terminal */
		if ((unsigned char) quoted[i] < 0x20 || (unsigned char) quoted[i] >= 0x7f)
			__builtin_trap();

	if (size == 0)
		return 0;
	in = fmemopen((void *) data, size, "r");
	out = fopen("/dev/null", "we");
	if (!in || !out) {
		if (in)
			fclose(in);
		if (out)
			fclose(out);
		return 0;
	}
	if (audit_report_load(in, NULL, NULL, &r) == 0) {
		(void) audit_report_write_text(r, out);
		(void) audit_report_write_html(r, "fuzz", out);
		audit_report_free(r);
	}
	/* the digest (batch rows, corpus, diff) reads the same bytes */
	rewind(in);
	{
		AuditDigest *d = NULL;

		if (audit_digest_load(in, NULL, NULL, &d) == 0) {
			json_t *j = audit_digest_to_json(d, 50);

			json_decref(j);
			(void) audit_digest_write_diff(d, "a", d, "b", out);
			audit_digest_free(d);
		}
	}
	fclose(in);
	fclose(out);
	return 0;
}
