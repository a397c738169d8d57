/* SPDX-License-Identifier: MIT */
/*
 * sbxtrace report --corpus: many audit logs at once (audit/corpus.h). Each log is read once
 * into a digest (audit/digest.c); the summaries are sums and counts over the digests: "runs"
 * counts logs that show a thing at least once, "calls" or "attempts" count the records.
 * Charts are inline SVG (bars with <title> tooltips), tables plain HTML; nothing is fetched
 * and no script runs, so the page opens from a file anywhere.
 */
#include "audit/corpus.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "audit/digest.h"
#include "audit/escape.h"
#include "audit/internal.h"
#include "common/macros.h"
#include "common/util.h"

#define WALK_DEPTH_MAX 8
#define TOP_TEXT       15   /* entries per list in the text */
#define TOP_HTML       25   /* bars per chart */
#define ROWS_HTML_MAX  5000 /* rows of the per-run table */
#define HIST_BINS      24

typedef struct Run {
	char *log;    /* absolute path */
	char *rel;    /* relative to the corpus root */
	char *id;     /* the task's id, else the log's directory or file name */
	char *report; /* report.html next to the log (absolute), or NULL */
	char *status;
	json_t *task; /* task.json's object, or NULL */
	AuditDigest *d;
} Run;

struct AuditCorpus {
	char *root;
	Run *runs;
	size_t n, cap;
	unsigned files_skipped, lines_skipped;
};

typedef struct Agg {
	unsigned runs, finished, with_denial, with_oov, with_net, with_budget;
	uint64_t calls, denials, oov;
	StrSet status;	    /* status → runs */
	StrSet syscalls;    /* name → calls */
	StrSet categories;  /* category → calls */
	StrSet denial_runs; /* kind → runs with one at least */
	StrSet denial_n;    /* kind → denials */
	StrSet oov_runs;    /* "PATH (KIND)" → runs */
	StrSet oov_n;	    /* → attempts */
	StrSet net_runs;    /* destination → runs; denied: some attempt was */
	StrSet budget_runs; /* budget → runs */
	int64_t *dur;	    /* durations of finished runs, ms */
	size_t n_dur;
} Agg;

/* ---- loading ---- */

static void count_line(unsigned line, const char *why, void *userdata)
{
	(void) line;
	(void) why;
	(*(unsigned *) userdata)++;
}

/* Whether the file's first line is an audit record (cheap: one line). */
static bool looks_like_log(int dirfd, const char *name)
{
	char buf[4096];
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	ssize_t n;
	json_t *rec;
	bool ok;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	rec = json_loads(buf, 0, NULL);
	ok = json_is_object(rec) && json_integer_value(json_object_get(rec, "v")) == 1 &&
	     json_is_string(json_object_get(rec, "type"));
	json_decref(rec);
	return ok;
}

static int add_path(char ***v, size_t *n, size_t *cap, char *p)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		char **nv = realloc(*v, c * sizeof(char *));

		if (!nv) {
			free(p);
			return -ENOMEM;
		}
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = p;
	return 0;
}

/* Collects the paths (relative to the root) of *.jsonl files that look like logs. */
static int walk(int dirfd, const char *rel, unsigned depth, char ***v, size_t *n, size_t *cap)
{
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (depth > WALK_DEPTH_MAX)
		return 0;
	d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return -errno;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char *p;

		if (de->d_name[0] == '.')
			continue;
		if (de->d_type == DT_DIR) {
			int fd = openat(dirfd, de->d_name,
					O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (fd < 0)
				continue;
			p = rel[0] ? strdup_printf("%s/%s", rel, de->d_name) : strdup(de->d_name);
			if (!p) {
				close(fd);
				r = -ENOMEM;
				break;
			}
			r = walk(fd, p, depth + 1, v, n, cap);
			free(p);
			if (r == -ENOMEM)
				break;
			r = 0;
			continue;
		}
		if (de->d_type != DT_REG || len < 7 || !streq(de->d_name + len - 6, ".jsonl") ||
		    !looks_like_log(dirfd, de->d_name))
			continue;
		p = rel[0] ? strdup_printf("%s/%s", rel, de->d_name) : strdup(de->d_name);
		if (!p || add_path(v, n, cap, p) < 0) {
			r = -ENOMEM;
			break;
		}
	}
	closedir(d);
	return r;
}

static int cmp_vers(const void *a, const void *b)
{
	return strverscmp(*(char *const *) a, *(char *const *) b);
}

static json_t *load_json_beside(const char *dir, const char *name)
{
	_cleanup_free_ char *p = strdup_printf("%s/%s", dir, name);
	json_t *v = p ? json_load_file(p, 0, NULL) : NULL;

	if (!json_is_object(v)) {
		json_decref(v);
		return NULL;
	}
	return v;
}

static const char *derive_status(const AuditDigest *d)
{
	if (!d->finished)
		return "unfinished";
	if (d->killed_by && streq(d->killed_by, "wall_time"))
		return "timeout";
	if (d->killed_by)
		return "killed";
	if (d->exit_code == 125)
		return "sandbox_error";
	return d->exit_code == 0 ? "ok" : "failed";
}

static int run_load(AuditCorpus *c, char *rel, AuditCorpusWarn warn, void *userdata)
{
	_cleanup_free_ char *dir = NULL;
	json_t *row;
	Run run = {.rel = rel};
	unsigned bad = 0;
	const char *slash;
	struct stat st;
	int r;

	run.log = strdup_printf("%s/%s", c->root, rel);
	if (!run.log)
		goto oom;
	r = audit_digest_load_path(run.log, count_line, &bad, &run.d);
	if (r < 0 || !run.d->started) {
		if (r < 0 && warn)
			warn(run.log, strerror(-r), userdata);
		if (r >= 0 || r != -ENOMEM)
			c->files_skipped += r < 0;
		audit_digest_free(run.d);
		free(run.log);
		free(rel);
		return r == -ENOMEM ? r : 0;
	}
	c->lines_skipped += bad;
	slash = strrchr(run.log, '/');
	dir = strndup(run.log, (size_t) (slash - run.log));
	if (!dir)
		goto oom;
	run.task = load_json_beside(dir, "task.json");
	row = load_json_beside(dir, "row.json");
	run.status = strdup(json_is_string(json_object_get(row, "status"))
				    ? json_string_value(json_object_get(row, "status"))
				    : derive_status(run.d));
	json_decref(row);
	if (json_is_string(json_object_get(run.task, "id")))
		run.id = strdup(json_string_value(json_object_get(run.task, "id")));
	else {
		/* "tasks/t1/audit.jsonl" → "tasks/t1"; "logs/a.jsonl" → "logs/a.jsonl" */
		const char *s = strrchr(rel, '/');

		run.id = s && streq(s + 1, "audit.jsonl") ? strndup(rel, (size_t) (s - rel))
							  : strdup(rel);
	}
	{
		_cleanup_free_ char *rp = strdup_printf("%s/report.html", dir);

		if (rp && stat(rp, &st) == 0 && S_ISREG(st.st_mode))
			run.report = TAKE_PTR(rp);
	}
	if (!run.status || !run.id)
		goto oom;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		Run *v = realloc(c->runs, cap * sizeof(Run));

		if (!v)
			goto oom;
		c->runs = v;
		c->cap = cap;
	}
	c->runs[c->n++] = run;
	return 0;
oom:
	free(run.log);
	free(run.rel);
	free(run.id);
	free(run.report);
	free(run.status);
	json_decref(run.task);
	audit_digest_free(run.d);
	return -ENOMEM;
}

int audit_corpus_load(const char *dir, AuditCorpusWarn warn, void *userdata, AuditCorpus **ret)
{
	AuditCorpus *c = calloc(1, sizeof(*c));
	char real[PATH_MAX], **paths = NULL;
	size_t n = 0, cap = 0, i;
	int fd, r;

	if (!c)
		return -ENOMEM;
	if (!realpath(dir, real) || !(c->root = strdup(real))) {
		r = errno ? -errno : -ENOMEM;
		free(c);
		return r;
	}
	fd = open(c->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		audit_corpus_free(c);
		return r;
	}
	r = walk(fd, "", 0, &paths, &n, &cap);
	if (r >= 0 && n)
		qsort(paths, n, sizeof(char *), cmp_vers);
	for (i = 0; r >= 0 && i < n; i++) {
		r = run_load(c, paths[i], warn, userdata);
		paths[i] = NULL; /* taken */
	}
	for (; i < n; i++)
		free(paths[i]);
	free(paths);
	if (r < 0) {
		audit_corpus_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

AuditCorpus *audit_corpus_free(AuditCorpus *c)
{
	if (!c)
		return NULL;
	for (size_t i = 0; i < c->n; i++) {
		Run *r = &c->runs[i];

		free(r->log);
		free(r->rel);
		free(r->id);
		free(r->report);
		free(r->status);
		json_decref(r->task);
		audit_digest_free(r->d);
	}
	free(c->runs);
	free(c->root);
	free(c);
	return NULL;
}

size_t audit_corpus_runs(const AuditCorpus *c)
{
	return c->n;
}

/* ---- aggregation ---- */

static void group_value(const Run *run, const char *field, char *buf, size_t size)
{
	const json_t *v = json_object_get(run->task, field);

	if (json_is_string(v))
		snprintf(buf, size, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, size, "%lld", (long long) json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, size, "%g", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, size, "%s", json_is_true(v) ? "true" : "false");
	else
		snprintf(buf, size, "(none)");
}

static void agg_add(Agg *a, const Run *run)
{
	const AuditDigest *d = run->d;

	a->runs++;
	(void) audit_strset_add(&a->status, run->status);
	if (d->finished) {
		a->finished++;
		if (d->duration_ms >= 0) {
			if ((a->n_dur & (a->n_dur - 1)) == 0) {
				int64_t *v = realloc(a->dur, (a->n_dur ? a->n_dur * 2 : 1) *
								     sizeof(int64_t));

				if (!v)
					return;
				a->dur = v;
			}
			a->dur[a->n_dur++] = d->duration_ms;
		}
	}
	a->calls += d->n_syscalls;
	a->denials += d->n_denied;
	a->oov += d->n_out_of_view;
	a->with_denial += d->n_denied > 0;
	a->with_oov += d->n_out_of_view > 0;
	a->with_net += d->network.n > 0;
	a->with_budget += d->budgets.n > 0 || (d->killed_by && !streq(d->killed_by, "syscall"));
	for (size_t i = 0; i < d->syscalls.n; i++)
		(void) audit_strset_add_n(&a->syscalls, d->syscalls.v[i].s, d->syscalls.v[i].n);
	for (size_t i = 0; i < d->categories.n; i++)
		(void) audit_strset_add_n(&a->categories, d->categories.v[i].s,
					  d->categories.v[i].n);
	for (size_t i = 0; i < d->denial_kinds.n; i++) {
		(void) audit_strset_add(&a->denial_runs, d->denial_kinds.v[i].s);
		(void) audit_strset_add_n(&a->denial_n, d->denial_kinds.v[i].s,
					  d->denial_kinds.v[i].n);
	}
	for (size_t i = 0; i < d->out_of_view.n; i++) {
		(void) audit_strset_add(&a->oov_runs, d->out_of_view.v[i].s);
		(void) audit_strset_add_n(&a->oov_n, d->out_of_view.v[i].s, d->out_of_view.v[i].n);
	}
	for (size_t i = 0; i < d->network.n; i++) {
		StrCount *x = audit_strset_add(&a->net_runs, d->network.v[i].s);

		if (x && d->network.v[i].denied)
			x->denied = true;
	}
	for (size_t i = 0; i < d->budgets.n; i++)
		(void) audit_strset_add(&a->budget_runs, d->budgets.v[i].s);
	if (d->killed_by && !streq(d->killed_by, "syscall") &&
	    !audit_strset_find(&d->budgets, d->killed_by))
		(void) audit_strset_add(&a->budget_runs, d->killed_by);
}

static void agg_done(Agg *a)
{
	audit_strset_done(&a->status);
	audit_strset_done(&a->syscalls);
	audit_strset_done(&a->categories);
	audit_strset_done(&a->denial_runs);
	audit_strset_done(&a->denial_n);
	audit_strset_done(&a->oov_runs);
	audit_strset_done(&a->oov_n);
	audit_strset_done(&a->net_runs);
	audit_strset_done(&a->budget_runs);
	free(a->dur);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of the sorted durations; -1 when there are none. */
static int64_t pct(const Agg *a, double p)
{
	size_t k;

	if (!a->n_dur)
		return -1;
	k = (size_t) ((p * (double) a->n_dur + 99.999) / 100.0);
	return a->dur[k ? k - 1 : 0];
}

static double mean_dur(const Agg *a)
{
	double s = 0;

	for (size_t i = 0; i < a->n_dur; i++)
		s += (double) a->dur[i];
	return a->n_dur ? s / (double) a->n_dur : 0;
}

static int agg_build(const AuditCorpus *c, const char *group_by, const char *value, Agg *a)
{
	char buf[512];

	*a = (Agg){};
	for (size_t i = 0; i < c->n; i++) {
		if (group_by) {
			group_value(&c->runs[i], group_by, buf, sizeof(buf));
			if (!streq(buf, value))
				continue;
		}
		agg_add(a, &c->runs[i]);
	}
	if (a->n_dur)
		qsort(a->dur, a->n_dur, sizeof(int64_t), cmp_i64);
	return 0;
}

/* The group values in the order they first appear. */
static void groups_of(const AuditCorpus *c, const char *group_by, StrSet *ret)
{
	char buf[512];

	for (size_t i = 0; i < c->n; i++) {
		group_value(&c->runs[i], group_by, buf, sizeof(buf));
		(void) audit_strset_add(ret, buf);
	}
}

static double rate(unsigned n, unsigned of)
{
	return of ? 100.0 * n / of : 0;
}

/* ---- text ---- */

/* "  name  N runs (P%), M attempts" lines, by runs */
static void text_runs(FILE *out, const char *title, const StrSet *runs, const StrSet *n,
		      unsigned total, const char *unit)
{
	_cleanup_free_ size_t *o = audit_strset_by_count(runs);

	if (!runs->n || !o)
		return;
	fprintf(out, "%s (%zu):\n", title, runs->n);
	for (size_t i = 0; i < runs->n && i < TOP_TEXT; i++) {
		const StrCount *x = &runs->v[o[i]];
		const StrCount *y = n ? audit_strset_find(n, x->s) : NULL;

		fputs("  ", out);
		audit_put_text(out, x->s);
		fprintf(out, "  %u run%s (%.1f%%)", x->n, x->n == 1 ? "" : "s", rate(x->n, total));
		if (y)
			fprintf(out, ", %u %s%s", y->n, unit, y->n == 1 ? "" : "s");
		if (x->denied)
			fputs("  [denied]", out);
		fputc('\n', out);
	}
	if (runs->n > TOP_TEXT)
		fprintf(out, "  … and %zu more\n", runs->n - TOP_TEXT);
}

static void text_agg(FILE *out, const Agg *a)
{
	_cleanup_free_ size_t *os = audit_strset_by_count(&a->status);
	_cleanup_free_ size_t *oc = audit_strset_by_count(&a->syscalls);
	_cleanup_free_ size_t *og = audit_strset_by_count(&a->categories);

	fprintf(out, "runs: %u (%u finished)", a->runs, a->finished);
	for (size_t i = 0; os && i < a->status.n; i++)
		fprintf(out, "%s %s %u", i ? "," : ";", a->status.v[os[i]].s, a->status.v[os[i]].n);
	fputc('\n', out);
	if (a->n_dur)
		fprintf(out,
			"runtime: median %lld ms, p90 %lld ms, p99 %lld ms, max %lld ms, mean %.0f "
			"ms\n",
			(long long) pct(a, 50), (long long) pct(a, 90), (long long) pct(a, 99),
			(long long) a->dur[a->n_dur - 1], mean_dur(a));
	fprintf(out,
		"interposed syscalls: %llu (%.0f per run); runs with a denial: %u (%.1f%%), with "
		"an out-of-view attempt: %u (%.1f%%), reaching for the network: %u (%.1f%%), "
		"tripping a budget: %u (%.1f%%)\n",
		(unsigned long long) a->calls, a->runs ? (double) a->calls / a->runs : 0,
		a->with_denial, rate(a->with_denial, a->runs), a->with_oov,
		rate(a->with_oov, a->runs), a->with_net, rate(a->with_net, a->runs), a->with_budget,
		rate(a->with_budget, a->runs));
	if (og && a->categories.n) {
		fputs("categories:", out);
		for (size_t i = 0; i < a->categories.n; i++)
			fprintf(out, "%s %s %.1f%%", i ? "," : "", a->categories.v[og[i]].s,
				a->calls ? 100.0 * a->categories.v[og[i]].n / (double) a->calls
					 : 0);
		fputc('\n', out);
	}
	if (oc && a->syscalls.n) {
		fputs("top syscalls:", out);
		for (size_t i = 0; i < a->syscalls.n && i < TOP_TEXT; i++) {
			fprintf(out, "%s ", i ? "," : "");
			audit_put_text(out, a->syscalls.v[oc[i]].s);
			fprintf(out, " %u", a->syscalls.v[oc[i]].n);
		}
		fputc('\n', out);
	}
	text_runs(out, "denials by kind", &a->denial_runs, &a->denial_n, a->runs, "denial");
	text_runs(out, "most reached-for names out of view", &a->oov_runs, &a->oov_n, a->runs,
		  "attempt");
	text_runs(out, "network destinations", &a->net_runs, NULL, a->runs, "");
	text_runs(out, "budgets tripped", &a->budget_runs, NULL, a->runs, "");
}

int audit_corpus_write_text(const AuditCorpus *c, const char *group_by, FILE *out)
{
	Agg all;
	unsigned shown = 0;

	fputs("corpus: ", out);
	audit_put_text(out, c->root);
	fprintf(out, " — %zu runs, %u unreadable files, %u bad lines skipped\n", c->n,
		c->files_skipped, c->lines_skipped);
	agg_build(c, NULL, NULL, &all);
	text_agg(out, &all);
	agg_done(&all);

	if (group_by) {
		StrSet groups = {};

		groups_of(c, group_by, &groups);
		fputs("\nby ", out);
		audit_put_text(out, group_by);
		fprintf(out, " (%zu groups):\n", groups.n);
		fprintf(out, "  %-20s %6s %6s %10s %8s %8s %8s %8s\n", "group", "runs", "ok%",
			"median ms", "denial%", "oov%", "net%", "budget%");
		for (size_t i = 0; i < groups.n; i++) {
			Agg a;
			const StrCount *ok;

			agg_build(c, group_by, groups.v[i].s, &a);
			ok = audit_strset_find(&a.status, "ok");
			fputs("  ", out);
			audit_put_text(out, groups.v[i].s);
			fprintf(out, "%*s %6u %6.1f %10lld %8.1f %8.1f %8.1f %8.1f\n",
				(int) (strlen(groups.v[i].s) < 20 ? 20 - strlen(groups.v[i].s) : 0),
				"", a.runs, rate(ok ? ok->n : 0, a.runs), (long long) pct(&a, 50),
				rate(a.with_denial, a.runs), rate(a.with_oov, a.runs),
				rate(a.with_net, a.runs), rate(a.with_budget, a.runs));
			agg_done(&a);
		}
		for (size_t i = 0; i < groups.n; i++) {
			Agg a;

			agg_build(c, group_by, groups.v[i].s, &a);
			fputs("\n[", out);
			audit_put_text(out, group_by);
			fputs(" = ", out);
			audit_put_text(out, groups.v[i].s);
			fputs("]\n", out);
			text_agg(out, &a);
			agg_done(&a);
		}
		audit_strset_done(&groups);
	}

	for (size_t i = 0; i < c->n; i++) {
		const Run *r = &c->runs[i];

		if (streq(r->status, "ok"))
			continue;
		if (shown++ == 0)
			fputs("\nruns not ok:\n", out);
		if (shown > 20) {
			continue;
		}
		fputs("  ", out);
		audit_put_text(out, r->id);
		fprintf(out, "  %s, exit %lld, %lld ms\n", r->status, (long long) r->d->exit_code,
			(long long) r->d->duration_ms);
	}
	if (shown > 20)
		fprintf(out, "  … and %u more\n", shown - 20);
	return ferror(out) ? -EIO : 0;
}

/* ---- HTML ---- */

/* A link target: path relative to dir (both absolute and canonical), percent-encoded; a
 * file:// URL when dir is NULL. */
static void href(FILE *out, const char *path, const char *dir)
{
	const char *p = path;

	if (dir) {
		size_t dl = strlen(dir), common = 0, i = 0;

		if (strncmp(path, dir, dl) == 0 && path[dl] == '/')
			common = dl; /* below the page's directory */
		else {
			/* up to the last directory both share */
			for (; dir[i] && path[i] && dir[i] == path[i]; i++)
				if (dir[i] == '/')
					common = i;
		}
		/* one "../" for each component of dir below the shared part */
		for (const char *s = dir + common; *s; s++)
			if (*s == '/' && s[1] && s[1] != '/')
				fputs("../", out);
		p = path + common + 1;
	} else
		fputs("file://", out);
	for (; *p; p++) {
		unsigned char c = (unsigned char) *p;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("/._-~", c))
			fputc(c, out);
		else
			fprintf(out, "%%%02X", c);
	}
}

/* Horizontal bars: label, bar (value of max), text; the label also in a tooltip. */
static void svg_hbars(FILE *out, const char *const *labels, const double *vals,
		      const char *const *texts, const bool *marks, size_t n, double max)
{
	const int lw = 360, bw = 420, row = 18;

	if (!n) {
		fputs("<p class=m>None.</p>\n", out);
		return;
	}
	fprintf(out,
		"<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%zu' role='img' "
		"class=chart>\n",
		lw + bw + 200, n * row + 4);
	for (size_t i = 0; i < n; i++) {
		double w = max > 0 ? vals[i] / max * bw : 0;
		size_t y = i * row;
		size_t len = strlen(labels[i]);

		fprintf(out, "<g><title>");
		audit_put_html(out, labels[i]);
		fputs(": ", out);
		audit_put_html(out, texts[i]);
		fprintf(out, "</title><text x='%d' y='%zu' class='lbl' text-anchor='end'>", lw - 6,
			y + 13);
		if (len > 52) {
			/* the end of a path says more than its start */
			fputs("…", out);
			audit_put_html(out, labels[i] + len - 50);
		} else
			audit_put_html(out, labels[i]);
		fprintf(out,
			"</text><rect x='%d' y='%zu' width='%.1f' height='%d' class='%s'></rect>"
			"<text x='%.1f' y='%zu' class='val'>",
			lw, y + 3, MAX(w, 1.0), row - 5, marks && marks[i] ? "bar den" : "bar",
			lw + MAX(w, 1.0) + 4, y + 13);
		audit_put_html(out, texts[i]);
		fputs("</text></g>\n", out);
	}
	fputs("</svg>\n", out);
}

/* Bars of a StrSet by count: as runs of total (percent), or as plain counts. */
static void chart_set(FILE *out, const StrSet *set, const StrSet *extra, const char *extra_unit,
		      unsigned total, bool percent)
{
	_cleanup_free_ size_t *o = audit_strset_by_count(set);
	const char *labels[TOP_HTML];
	double vals[TOP_HTML];
	char *texts[TOP_HTML];
	bool marks[TOP_HTML];
	size_t n = MIN(set->n, (size_t) TOP_HTML);
	double max = 0;

	if (!o)
		return;
	for (size_t i = 0; i < n; i++) {
		const StrCount *x = &set->v[o[i]];
		const StrCount *y = extra ? audit_strset_find(extra, x->s) : NULL;

		labels[i] = x->s;
		vals[i] = percent ? rate(x->n, total) : x->n;
		marks[i] = x->denied;
		max = MAX(max, vals[i]);
		if (percent && y)
			texts[i] = strdup_printf("%.1f%% (%u of %u runs), %u %s%s", vals[i], x->n,
						 total, y->n, extra_unit,
						 x->denied ? " [denied]" : "");
		else if (percent)
			texts[i] = strdup_printf("%.1f%% (%u of %u runs)%s", vals[i], x->n, total,
						 x->denied ? " [denied]" : "");
		else
			texts[i] = strdup_printf("%u", x->n);
		if (!texts[i])
			texts[i] = strdup("");
	}
	if (percent)
		max = MAX(max, 1.0);
	svg_hbars(out, labels, vals, (const char *const *) texts, marks, n, max);
	for (size_t i = 0; i < n; i++)
		free(texts[i]);
	if (set->n > n)
		fprintf(out, "<p class=m>… and %zu more.</p>\n", set->n - n);
}

static void chart_hist(FILE *out, const Agg *a)
{
	const int left = 50, width = 760, height = 160;
	unsigned bins[HIST_BINS] = {0}, top = 0;
	int64_t max;
	double bw;

	if (!a->n_dur) {
		fputs("<p class=m>No finished runs.</p>\n", out);
		return;
	}
	max = MAX(a->dur[a->n_dur - 1], (int64_t) 1);
	for (size_t i = 0; i < a->n_dur; i++) {
		size_t b = (size_t) ((double) a->dur[i] / (double) max * HIST_BINS);

		bins[MIN(b, (size_t) HIST_BINS - 1)]++;
	}
	for (size_t b = 0; b < HIST_BINS; b++)
		top = MAX(top, bins[b]);
	bw = (double) width / HIST_BINS;
	fprintf(out,
		"<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' role='img' "
		"class=chart>\n",
		left + width + 20, height + 40);
	for (size_t b = 0; b < HIST_BINS; b++) {
		double hgt = top ? (double) bins[b] / top * height : 0;
		double lo = (double) max * b / HIST_BINS, hi = (double) max * (b + 1) / HIST_BINS;

		fprintf(out,
			"<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' class='bar'><title>%.0f"
			"–%.0f ms: %u runs</title></rect>\n",
			left + b * bw + 1, 10 + height - hgt, bw - 2, MAX(hgt, bins[b] ? 1.0 : 0.0),
			lo, hi, bins[b]);
	}
	fprintf(out,
		"<line x1='%d' x2='%d' y1='%d' y2='%d' class='axis'></line>"
		"<text x='%d' y='%d' class='lbl'>0 ms</text>"
		"<text x='%d' y='%d' class='lbl' text-anchor='end'>%lld ms</text>"
		"<text x='%d' y='%d' class='lbl' text-anchor='end'>%u</text>\n",
		left, left + width, height + 10, height + 10, left, height + 26, left + width,
		height + 26, (long long) max, left - 4, 20, top);
	fputs("</svg>\n", out);
	fprintf(out,
		"<p class=m>median %lld ms, p90 %lld ms, p99 %lld ms, max %lld ms, mean %.0f ms "
		"(%zu finished runs)</p>\n",
		(long long) pct(a, 50), (long long) pct(a, 90), (long long) pct(a, 99),
		(long long) a->dur[a->n_dur - 1], mean_dur(a), a->n_dur);
}

static void html_agg(FILE *out, const Agg *a)
{
	fputs("<div class=cards>", out);
	fprintf(out, "<div><b>%u</b> runs<br><span class=m>%u finished</span></div>", a->runs,
		a->finished);
	fprintf(out, "<div><b>%.1f%%</b> with a denial<br><span class=m>%llu denials</span></div>",
		rate(a->with_denial, a->runs), (unsigned long long) a->denials);
	fprintf(out,
		"<div><b>%.1f%%</b> reached out of view<br><span class=m>%llu "
		"attempts</span></div>",
		rate(a->with_oov, a->runs), (unsigned long long) a->oov);
	fprintf(out, "<div><b>%.1f%%</b> reached for the network</div>",
		rate(a->with_net, a->runs));
	fprintf(out, "<div><b>%.1f%%</b> tripped a budget</div>", rate(a->with_budget, a->runs));
	fprintf(out,
		"<div><b>%.0f</b> interposed syscalls per run<br><span class=m>%llu "
		"in all</span></div>",
		a->runs ? (double) a->calls / a->runs : 0, (unsigned long long) a->calls);
	fputs("</div>\n", out);

	fputs("<h3>Status</h3>\n", out);
	chart_set(out, &a->status, NULL, NULL, a->runs, true);
	fputs("<h3>Runtime distribution</h3>\n", out);
	chart_hist(out, a);
	fputs("<h3>Syscall categories</h3><p class=m>Interposed calls by category (the kernel "
	      "runs the others without asking: docs/audit.md).</p>\n",
	      out);
	chart_set(out, &a->categories, NULL, NULL, 0, false);
	fputs("<h3>Top syscalls</h3>\n", out);
	chart_set(out, &a->syscalls, NULL, NULL, 0, false);
	fputs("<h3>Denials by kind</h3><p class=m>Share of runs with at least one denial of the "
	      "kind; hover for the number of denials.</p>\n",
	      out);
	chart_set(out, &a->denial_runs, &a->denial_n, "denials", a->runs, true);
	fputs("<h3>Most reached-for names out of view</h3><p class=m>Names that exist on the host "
	      "but not in the view (hidden, outside every mount, or shadowed by a mount); the "
	      "programs saw ENOENT. Share of runs that tried each.</p>\n",
	      out);
	chart_set(out, &a->oov_runs, &a->oov_n, "attempts", a->runs, true);
	fputs("<h3>Network destinations</h3><p class=m>Share of runs that tried to reach each "
	      "(connect, sendto); red: denied at least once.</p>\n",
	      out);
	chart_set(out, &a->net_runs, NULL, NULL, a->runs, true);
	fputs("<h3>Budgets tripped</h3>\n", out);
	chart_set(out, &a->budget_runs, NULL, NULL, a->runs, true);
}

static void pct_cell(FILE *out, double v)
{
	fprintf(out, "<td class=num><span class=pb style='width:%.0fpx'></span> %.1f%%</td>",
		v * 0.6, v);
}

int audit_corpus_write_html(const AuditCorpus *c, const char *group_by, const char *title,
			    const char *html_dir, FILE *out)
{
	StrSet groups = {};
	Agg all;

	fputs("<!DOCTYPE html>\n<html lang=en><head><meta charset='utf-8'>\n<title>sbxtrace "
	      "corpus: ",
	      out);
	audit_put_html(out, title);
	fputs("</title>\n<style>\n"
	      "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1200px}\n"
	      "h1{font-size:1.4em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}"
	      "h3{font-size:1.02em;margin:1.1em 0 .3em}\n"
	      ".m{color:#666}code{background:#f3f3f3;padding:0 .2em}\n"
	      "table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:2px 6px;"
	      "text-align:left;font-size:13px}td.num{text-align:right;white-space:nowrap}\n"
	      ".cards{display:flex;flex-wrap:wrap;gap:.6em}.cards div{border:1px solid #ddd;"
	      "border-radius:4px;padding:.4em .8em;min-width:9em}.cards b{font-size:1.3em}\n"
	      ".lbl{font:11px monospace;fill:#333}.val{font:11px sans-serif;fill:#555}"
	      ".bar{fill:#1565c0}.bar.den{fill:#c62828}.axis{stroke:#999}\n"
	      ".pb{display:inline-block;height:9px;background:#1565c0;vertical-align:middle}\n"
	      "tr.st-ok td:nth-child(2){color:#2e7d32}tr.bad td:nth-child(2){color:#c62828}\n"
	      "</style></head><body>\n<h1>sbxtrace corpus: ",
	      out);
	audit_put_html(out, title);
	fputs("</h1>\n<p>", out);
	fprintf(out, "%zu runs from <code>", c->n);
	audit_put_html(out, c->root);
	fprintf(out,
		"</code><span class=m>; %u unreadable files, %u bad lines skipped</span></p>\n",
		c->files_skipped, c->lines_skipped);

	fputs("<h2>All runs</h2>\n", out);
	agg_build(c, NULL, NULL, &all);
	html_agg(out, &all);
	agg_done(&all);

	if (group_by) {
		groups_of(c, group_by, &groups);
		fputs("<h2>By ", out);
		audit_put_html(out, group_by);
		fprintf(out, " (%zu groups)</h2>\n", groups.n);
		fputs("<table><tr><th>group</th><th>runs</th><th>ok</th><th>median ms</th>"
		      "<th>p90 ms</th><th>with a denial</th><th>out of view</th><th>network</th>"
		      "<th>budget</th><th>syscalls/run</th></tr>\n",
		      out);
		for (size_t i = 0; i < groups.n; i++) {
			Agg a;
			const StrCount *ok;

			agg_build(c, group_by, groups.v[i].s, &a);
			ok = audit_strset_find(&a.status, "ok");
			fprintf(out, "<tr><td><a href='#g%zu'>", i);
			audit_put_html(out, groups.v[i].s);
			fprintf(out, "</a></td><td class=num>%u</td>", a.runs);
			pct_cell(out, rate(ok ? ok->n : 0, a.runs));
			fprintf(out, "<td class=num>%lld</td><td class=num>%lld</td>",
				(long long) pct(&a, 50), (long long) pct(&a, 90));
			pct_cell(out, rate(a.with_denial, a.runs));
			pct_cell(out, rate(a.with_oov, a.runs));
			pct_cell(out, rate(a.with_net, a.runs));
			pct_cell(out, rate(a.with_budget, a.runs));
			fprintf(out, "<td class=num>%.0f</td></tr>\n",
				a.runs ? (double) a.calls / a.runs : 0);
			agg_done(&a);
		}
		fputs("</table>\n", out);
		for (size_t i = 0; i < groups.n; i++) {
			Agg a;

			agg_build(c, group_by, groups.v[i].s, &a);
			fprintf(out, "<details id='g%zu'><summary><b>", i);
			audit_put_html(out, group_by);
			fputs(" = ", out);
			audit_put_html(out, groups.v[i].s);
			fprintf(out, "</b> <span class=m>%u runs</span></summary>\n", a.runs);
			html_agg(out, &a);
			fputs("</details>\n", out);
			agg_done(&a);
		}
	}

	fputs("<h2>Runs</h2>\n<table><tr><th>run</th><th>status</th><th>exit</th>", out);
	if (group_by) {
		fputs("<th>", out);
		audit_put_html(out, group_by);
		fputs("</th>", out);
	}
	fputs("<th>ms</th><th>syscalls</th><th>denied</th><th>out of view</th><th>network</th>"
	      "<th>files written</th><th>budgets</th><th>report</th></tr>\n",
	      out);
	for (size_t i = 0; i < c->n && i < ROWS_HTML_MAX; i++) {
		const Run *r = &c->runs[i];
		const AuditDigest *d = r->d;
		char buf[512];

		fprintf(out, "<tr class='%s'><td>", streq(r->status, "ok") ? "st-ok" : "bad");
		audit_put_html(out, r->id);
		fputs("</td><td>", out);
		audit_put_html(out, r->status);
		if (d->finished)
			fprintf(out, "</td><td class=num>%lld</td>", (long long) d->exit_code);
		else
			fputs("</td><td></td>", out);
		if (group_by) {
			group_value(r, group_by, buf, sizeof(buf));
			fputs("<td>", out);
			audit_put_html(out, buf);
			fputs("</td>", out);
		}
		fprintf(out,
			"<td class=num>%lld</td><td class=num>%u</td><td class=num>%u</td>"
			"<td class=num>%u</td><td class=num>%zu</td><td class=num>%zu</td><td>",
			(long long) d->duration_ms, d->n_syscalls, d->n_denied, d->n_out_of_view,
			d->network.n, d->writes.n);
		for (size_t k = 0; k < d->budgets.n; k++) {
			audit_put_html(out, d->budgets.v[k].s);
			fputc(' ', out);
		}
		if (d->killed_by && !audit_strset_find(&d->budgets, d->killed_by))
			audit_put_html(out, d->killed_by);
		fputs("</td><td><a href='", out);
		href(out, r->report ? r->report : r->log, html_dir);
		fprintf(out, "'>%s</a></td></tr>\n", r->report ? "report" : "log");
	}
	fputs("</table>\n", out);
	if (c->n > ROWS_HTML_MAX)
		fprintf(out, "<p class=m>%zu more runs not listed.</p>\n", c->n - ROWS_HTML_MAX);
	fputs("</body></html>\n", out);
	audit_strset_done(&groups);
	return ferror(out) ? -EIO : 0;
}
