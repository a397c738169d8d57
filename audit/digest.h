/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The digest of one audit log (docs/audit.md): what a run did, reduced to counts and sets —
 * its end (exit, duration, what killed it), syscalls by name and category, denials by kind,
 * out-of-view attempts, network destinations, files read and written, execs, budget events.
 * Small next to the log: the batch's results table, the corpus report and the diff are built
 * from digests (docs/research.md).
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "audit/report.h"

typedef struct AuditDigest AuditDigest;
typedef struct json_t json_t;

/**
 * Reads a log from f as audit_report_load() does (bad lines go to warn, may be NULL, and are
 * skipped). Returns 0, or -ENOMEM / -EIO.
 */
int audit_digest_load(FILE *f, AuditReportWarn warn, void *userdata, AuditDigest **ret);
/** audit_digest_load() on a file: also -errno of fopen. */
int audit_digest_load_path(const char *path, AuditReportWarn warn, void *userdata,
			   AuditDigest **ret);
AuditDigest *audit_digest_free(AuditDigest *d);

/**
 * The digest as one JSON object (a new reference; NULL on OOM), the fields of the batch's
 * results rows: exit_code, signal, killed_by, duration_ms, denied, syscalls, denials_by_kind
 * (object), out_of_view (count), out_of_view_paths, network (destinations attempted),
 * files_written, execs, budgets (names of the budgets that tripped). Lists are capped at max
 * entries (most frequent first).
 */
json_t *audit_digest_to_json(const AuditDigest *d, size_t max);

/** Whether the log has its run end record (the run finished and the log was flushed). */
bool audit_digest_finished(const AuditDigest *d);
/** The run's duration from its end record, or -1. */
int64_t audit_digest_duration_ms(const AuditDigest *d);

/**
 * What one run did that the other did not (sbxtrace report --diff): files written and read,
 * execs, network destinations, denials, out-of-view attempts, syscalls, as text, "-" for a
 * only, "+" for b only. Returns the number of differences (>= 0), or -EIO.
 */
int audit_digest_write_diff(const AuditDigest *a, const char *a_name, const AuditDigest *b,
			    const char *b_name, FILE *out);
