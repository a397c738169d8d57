/* SPDX-License-Identifier: MIT */
/*
 * The digest of an audit log (audit/digest.h): one pass over the records, keeping counts and
 * sets only, so that a thousand logs fit in memory at once (sbxtrace report --corpus).
 */
#include "audit/digest.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "audit/escape.h"
#include "audit/internal.h"
#include "common/macros.h"

#define LINE_MAX_BYTES (1 << 20)

static const char *jstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static int64_t jint(const json_t *o, const char *key, int64_t def)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (int64_t) json_integer_value(v) : def;
}

/* "1.2.3.4:443", "[::1]:53", "unix:/run/x.sock", "unix:@abstract" */
static void destination(const json_t *addr, char *buf, size_t size)
{
	const char *fam = jstr(addr, "family"), *a = jstr(addr, "address");
	const json_t *port = json_object_get(addr, "port");

	if (streq(fam, "AF_INET6") && json_is_integer(port))
		snprintf(buf, size, "[%s]:%lld", a, (long long) json_integer_value(port));
	else if (json_is_integer(port))
		snprintf(buf, size, "%s:%lld", a, (long long) json_integer_value(port));
	else if (streq(fam, "AF_UNIX") && a[0])
		snprintf(buf, size, "unix:%s", a);
	else
		snprintf(buf, size, "%s", jstr(addr, "text"));
}

static void on_syscall(AuditDigest *d, const json_t *rec)
{
	const char *sys = jstr(rec, "syscall"), *cat = jstr(rec, "category");
	const char *dec = jstr(rec, "decision"), *err = jstr(rec, "errno");
	const char *why = jstr(rec, "why"), *oov = jstr(rec, "out_of_view");
	const json_t *args = json_object_get(rec, "args");
	bool denied = streq(dec, "denied") || streq(dec, "killed");
	bool ok = !denied && !err[0];
	const char *file = jstr(rec, "path");
	char kind[256], key[1200], dest[600] = "";
	const json_t *addr = json_object_get(args, "addr");

	if (!file[0])
		file = jstr(args, "path");
	if (!file[0])
		file = jstr(args, "newpath");
	if (json_is_object(addr))
		destination(addr, dest, sizeof(dest));

	d->n_syscalls++;
	(void) audit_strset_add(&d->syscalls, sys[0] ? sys : "?");
	(void) audit_strset_add(&d->categories, cat[0] ? cat : "?");
	if (streq(err, "ENOENT") && !denied)
		d->n_enoent++;
	if (oov[0]) {
		d->n_out_of_view++;
		(void) audit_strset_add(&d->oov_kinds, oov);
		if (file[0]) {
			snprintf(key, sizeof(key), "%s (%s)", file, oov);
			(void) audit_strset_add(&d->out_of_view, key);
		}
	}
	if (denied) {
		d->n_denied++;
		if (why[0])
			snprintf(kind, sizeof(kind), "%s", why);
		else
			snprintf(kind, sizeof(kind), "%s %s", cat, err[0] ? err : "denied");
		(void) audit_strset_add(&d->denial_kinds, kind);
		snprintf(key, sizeof(key), "%s %s%s%s", sys, file[0] ? file : dest,
			 file[0] || dest[0] ? ": " : "", kind);
		(void) audit_strset_add(&d->denials, key);
	}

	if (streq(cat, "exec")) {
		if (ok && file[0])
			(void) audit_strset_add(&d->execs, file);
	} else if (streq(cat, "file") && file[0] && (ok || denied)) {
		bool w;

		if (strncmp(sys, "open", 4) == 0 || streq(sys, "creat"))
			w = audit_is_write_open(sys, jstr(args, "flags"));
		else if (audit_is_modifying(sys))
			w = true;
		else
			return;
		/* /dev/null of a shell's 2>/dev/null is no file written */
		if (w && (strncmp(file, "/dev/", 5) == 0 || strncmp(file, "/proc/", 6) == 0))
			return;
		if (w)
			(void) audit_strset_add(ok ? &d->writes : &d->writes_denied, file);
		else
			(void) audit_strset_add(ok ? &d->reads : &d->reads_denied, file);
	} else if (streq(cat, "network") && dest[0] && !streq(sys, "bind")) {
		StrCount *c = audit_strset_add(&d->network, dest);

		if (c && denied)
			c->denied = true;
	}
}

static void on_record(AuditDigest *d, const json_t *rec)
{
	const char *type = jstr(rec, "type"), *ev = jstr(rec, "event");
	const json_t *pid = json_object_get(rec, "pid");

	d->records++;
	d->max_us = MAX(d->max_us, (uint64_t) jint(rec, "t_us", 0));
	if (json_is_integer(pid) && (streq(type, "syscall") || streq(type, "process"))) {
		char buf[32];

		snprintf(buf, sizeof(buf), "%lld", (long long) json_integer_value(pid));
		(void) audit_strset_add(&d->pids, buf);
	}
	if (streq(type, "syscall"))
		on_syscall(d, rec);
	else if (streq(type, "budget"))
		(void) audit_strset_add(&d->budgets, jstr(rec, "budget"));
	else if (streq(type, "run") && streq(ev, "start")) {
		const json_t *argv = json_object_get(rec, "argv"), *v;
		char *buf = NULL;
		size_t size = 0, i;
		FILE *f = open_memstream(&buf, &size);

		d->started = true;
		free(d->policy);
		d->policy = strdup(jstr(rec, "policy"));
		if (f) {
			json_array_foreach(argv, i, v)
				fprintf(f, "%s%s", i ? " " : "", json_string_value(v) ?: "?");
			if (fclose(f) == 0) {
				free(d->cmdline);
				d->cmdline = buf;
			} else
				free(buf);
		}
	} else if (streq(type, "run") && streq(ev, "end")) {
		const char *kb = json_string_value(json_object_get(rec, "killed_by"));

		d->finished = true;
		d->exit_code = jint(rec, "exit_code", -1);
		d->signal = jint(rec, "signal", 0);
		d->denied = jint(rec, "denied", -1);
		d->duration_ms = jint(rec, "duration_ms", -1);
		free(d->killed_by);
		d->killed_by = kb ? strdup(kb) : NULL;
	}
}

int audit_digest_load(FILE *f, AuditReportWarn warn, void *userdata, AuditDigest **ret)
{
	AuditDigest *d = calloc(1, sizeof(*d));
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned no = 0;

	if (!d)
		return -ENOMEM;
	d->exit_code = d->duration_ms = d->denied = -1;
	while ((n = getline(&line, &cap, f)) > 0) {
		json_error_t e;
		json_t *rec;
		bool complete = line[n - 1] == '\n';

		no++;
		if (n == 1 && complete)
			continue;
		rec = n < LINE_MAX_BYTES ? json_loadb(line, (size_t) n, 0, &e) : NULL;
		if (!json_is_object(rec) || jint(rec, "v", 0) != 1) {
			d->skipped++;
			if (warn)
				warn(no,
				     !rec ? (complete ? "not valid JSON"
						      : "truncated (no end of line)")
				     : !json_is_object(rec)
					     ? "not a JSON object"
					     : "unknown schema version (\"v\" is not 1)",
				     userdata);
			json_decref(rec);
			continue;
		}
		on_record(d, rec);
		json_decref(rec);
	}
	if (ferror(f)) {
		audit_digest_free(d);
		return -EIO;
	}
	*ret = d;
	return 0;
}

int audit_digest_load_path(const char *path, AuditReportWarn warn, void *userdata,
			   AuditDigest **ret)
{
	FILE *f = fopen(path, "re");
	int r;

	if (!f)
		return -errno;
	r = audit_digest_load(f, warn, userdata, ret);
	fclose(f);
	return r;
}

AuditDigest *audit_digest_free(AuditDigest *d)
{
	if (!d)
		return NULL;
	free(d->policy);
	free(d->cmdline);
	free(d->killed_by);
	audit_strset_done(&d->pids);
	audit_strset_done(&d->syscalls);
	audit_strset_done(&d->categories);
	audit_strset_done(&d->denial_kinds);
	audit_strset_done(&d->denials);
	audit_strset_done(&d->out_of_view);
	audit_strset_done(&d->oov_kinds);
	audit_strset_done(&d->network);
	audit_strset_done(&d->writes);
	audit_strset_done(&d->reads);
	audit_strset_done(&d->writes_denied);
	audit_strset_done(&d->reads_denied);
	audit_strset_done(&d->execs);
	audit_strset_done(&d->budgets);
	free(d);
	return NULL;
}

bool audit_digest_finished(const AuditDigest *d)
{
	return d->finished;
}

int64_t audit_digest_duration_ms(const AuditDigest *d)
{
	return d->duration_ms;
}

static json_t *list(const StrSet *set, size_t max)
{
	_cleanup_free_ size_t *o = audit_strset_by_count(set);
	json_t *a = json_array();

	if (!a || !o)
		return a;
	for (size_t i = 0; i < set->n && i < max; i++)
		json_array_append_new(a, json_string(set->v[o[i]].s));
	return a;
}

static json_t *counts(const StrSet *set)
{
	_cleanup_free_ size_t *o = audit_strset_by_count(set);
	json_t *obj = json_object();

	if (!obj || !o)
		return obj;
	for (size_t i = 0; i < set->n; i++)
		json_object_set_new(obj, set->v[o[i]].s, json_integer(set->v[o[i]].n));
	return obj;
}

json_t *audit_digest_to_json(const AuditDigest *d, size_t max)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "finished", json_boolean(d->finished));
	json_object_set_new(o, "exit_code", d->finished ? json_integer(d->exit_code) : json_null());
	json_object_set_new(o, "duration_ms",
			    d->duration_ms >= 0 ? json_integer(d->duration_ms) : json_null());
	json_object_set_new(o, "killed_by", d->killed_by ? json_string(d->killed_by) : json_null());
	json_object_set_new(o, "records", json_integer(d->records));
	json_object_set_new(o, "processes", json_integer((json_int_t) d->pids.n));
	json_object_set_new(o, "syscalls", json_integer(d->n_syscalls));
	json_object_set_new(o, "denied", json_integer(d->n_denied));
	json_object_set_new(o, "denials_by_kind", counts(&d->denial_kinds));
	json_object_set_new(o, "not_found", json_integer(d->n_enoent));
	json_object_set_new(o, "out_of_view", json_integer(d->n_out_of_view));
	json_object_set_new(o, "out_of_view_paths", list(&d->out_of_view, max));
	json_object_set_new(o, "network", list(&d->network, max));
	json_object_set_new(o, "files_written", list(&d->writes, max));
	json_object_set_new(o, "execs", list(&d->execs, max));
	json_object_set_new(o, "budgets", list(&d->budgets, max));
	return o;
}

/* ---- diff ---- */

static unsigned diff_set(FILE *out, const char *title, const StrSet *a, const StrSet *b)
{
	unsigned n = 0;

	for (int side = 0; side < 2; side++) {
		const StrSet *x = side ? b : a, *y = side ? a : b;
		_cleanup_free_ size_t *o = audit_strset_by_count(x);

		if (!o)
			continue;
		for (size_t i = 0; i < x->n; i++) {
			const StrCount *c = &x->v[o[i]];

			if (audit_strset_find(y, c->s))
				continue;
			if (!n++)
				fprintf(out, "%s:\n", title);
			fprintf(out, "  %c ", side ? '+' : '-');
			audit_put_text(out, c->s);
			if (c->n > 1)
				fprintf(out, "  (%u×)", c->n);
			if (c->denied)
				fputs("  [denied]", out);
			fputc('\n', out);
		}
	}
	return n;
}

int audit_digest_write_diff(const AuditDigest *a, const char *a_name, const AuditDigest *b,
			    const char *b_name, FILE *out)
{
	static const struct {
		const char *title;
		size_t offset;
	} sets[] = {
		{"files written", offsetof(AuditDigest, writes)},
		{"writes denied", offsetof(AuditDigest, writes_denied)},
		{"files read", offsetof(AuditDigest, reads)},
		{"reads denied", offsetof(AuditDigest, reads_denied)},
		{"execs", offsetof(AuditDigest, execs)},
		{"network destinations", offsetof(AuditDigest, network)},
		{"denials", offsetof(AuditDigest, denials)},
		{"out-of-view attempts", offsetof(AuditDigest, out_of_view)},
		{"budgets tripped", offsetof(AuditDigest, budgets)},
		{"syscalls made", offsetof(AuditDigest, syscalls)},
	};
	unsigned total = 0;

	fputs("--- ", out);
	audit_put_text(out, a_name);
	fputs("\n+++ ", out);
	audit_put_text(out, b_name);
	fputc('\n', out);
	for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
		const StrSet *x = (const StrSet *) ((const char *) a + sets[i].offset);
		const StrSet *y = (const StrSet *) ((const char *) b + sets[i].offset);

		total += diff_set(out, sets[i].title, x, y);
	}
	fprintf(out,
		"summary: %u syscalls, %u denied, %u out of view, exit %lld, %lld ms -> "
		"%u syscalls, %u denied, %u out of view, exit %lld, %lld ms; %u differences\n",
		a->n_syscalls, a->n_denied, a->n_out_of_view, (long long) a->exit_code,
		(long long) a->duration_ms, b->n_syscalls, b->n_denied, b->n_out_of_view,
		(long long) b->exit_code, (long long) b->duration_ms, total);
	return ferror(out) ? -EIO : (int) MIN(total, (unsigned) INT32_MAX);
}
