/* SPDX-License-Identifier: MIT */
/* The escapes of audit/escape.h, shared by the text and HTML writers of report and corpus. */
#include "audit/escape.h"

void audit_put_text(FILE *out, const char *s)
{
	for (const unsigned char *c = (const unsigned char *) s; c && *c; c++) {
		if (*c < 0x20 || *c == 0x7f)
			fprintf(out, "\\x%02x", *c);
		else if (*c == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f) {
			fprintf(out, "\\xc2\\x%02x", c[1]);
			c++;
		} else
			fputc(*c, out);
	}
}

void audit_put_html(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '&':
			fputs("&amp;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&#39;", out);
			break;
		default:
			/* control characters from the program: visible, as in the text output */
			if ((unsigned char) *s < 0x20 || *s == 0x7f)
				fprintf(out, "\\x%02x", (unsigned char) *s);
			else
				fputc(*s, out);
		}
	}
}
