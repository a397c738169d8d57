/* SPDX-License-Identifier: MIT */
#pragma once

/* Private to audit/: how the readers (report, corpus) print strings that came from the
 * sandboxed program — paths, argv, names — so that nothing raw reaches a terminal or a page. */

#include <stdio.h>

/**
 * Writes s for a terminal: control characters (C0, DEL and the two-byte UTF-8 C1 controls)
 * as \xNN, everything else as it is. NULL writes nothing.
 */
void audit_put_text(FILE *out, const char *s);

/**
 * Writes s as HTML text or a quoted attribute value: < > & " ' as entities, control
 * characters as \xNN, as in the text output. NULL writes nothing.
 */
void audit_put_html(FILE *out, const char *s);
