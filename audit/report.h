/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Reading an audit log back (docs/audit.md) and summarizing it: per process, what it ran,
 * read, wrote, where it connected, what was denied, which syscalls it made; as text, or as one
 * self-contained HTML page (inline CSS and SVG, no script, nothing fetched) with the process
 * tree, a timeline and the denials.
 */

#include <stdio.h>

typedef struct AuditReport AuditReport;

/** Called for each line that is skipped: line number (from 1) and why. */
typedef void (*AuditReportWarn)(unsigned line, const char *why, void *userdata);

/**
 * Reads a log from f. A line that is not a JSON object, or a record of an unknown schema
 * version, is passed to warn (may be NULL) and skipped; a log cut in the middle of its last
 * line is reported the same way. Returns 0, or -ENOMEM / -EIO.
 */
int audit_report_load(FILE *f, AuditReportWarn warn, void *userdata, AuditReport **ret);
AuditReport *audit_report_free(AuditReport *r);

/** Number of records read and of lines skipped. */
unsigned audit_report_records(const AuditReport *r);
unsigned audit_report_skipped(const AuditReport *r);

/** The text summary. */
int audit_report_write_text(const AuditReport *r, FILE *out);
/** The HTML page; title names the log. */
int audit_report_write_html(const AuditReport *r, const char *title, FILE *out);
