/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A corpus of audit logs (sbxtrace report --corpus DIR, docs/research.md): every log under a
 * directory, reduced to digests (audit/digest.h) and aggregated — syscalls and categories,
 * denial rates per kind, the most reached-for out-of-view paths, network destinations,
 * budget trips, the runtime distribution, one row per run — as text or as one
 * self-contained HTML page (inline CSS and SVG charts, no script, nothing fetched), grouped
 * by a field of the task file when asked.
 */

#include <stdio.h>

typedef struct AuditCorpus AuditCorpus;

/** Called for each file under the directory that is skipped, and why. */
typedef void (*AuditCorpusWarn)(const char *path, const char *why, void *userdata);

/**
 * Loads every audit log under dir (at most 8 levels down, not following symlinks): each
 * regular file named *.jsonl whose records include a run start (others, such as a batch's
 * results.jsonl, are passed over silently; unreadable ones go to warn, may be NULL). Next to
 * a log, task.json (the batch's task: its fields, for grouping) and row.json (the batch's
 * row: its status) are read when present, and report.html is what the page links to.
 * Bad lines inside a log are skipped and counted. Returns 0 (an empty corpus too), or
 * -ENOMEM, or -errno when dir cannot be read.
 */
int audit_corpus_load(const char *dir, AuditCorpusWarn warn, void *userdata, AuditCorpus **ret);
AuditCorpus *audit_corpus_free(AuditCorpus *c);

/** Runs (logs) loaded. */
size_t audit_corpus_runs(const AuditCorpus *c);

/** The text summary; group_by (may be NULL) names a task field to compare groups by. */
int audit_corpus_write_text(const AuditCorpus *c, const char *group_by, FILE *out);

/**
 * The HTML page. Links to each run's report (or its log) are made relative to html_dir, the
 * directory the page is written to (NULL: absolute file paths). Returns 0 or -EIO.
 */
int audit_corpus_write_html(const AuditCorpus *c, const char *group_by, const char *title,
			    const char *html_dir, FILE *out);
