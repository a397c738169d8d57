/* SPDX-License-Identifier: MIT */
/*
 * sbxtrace report: reads an audit log (docs/audit.md) with jansson, one line at a time, and
 * aggregates it per process. Bad lines are reported with their number and skipped. Output as
 * text, or as one HTML page that needs nothing but itself (inline CSS, inline SVG, tooltips
 * through <title>, collapsible parts through <details>; no script, no fetch).
 */
#include "audit/report.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "audit/escape.h"
#include "audit/internal.h"
#include "common/macros.h"

#define LIST_MAX       20    /* entries per list in the text output */
#define EVENTS_MAX     20000 /* events kept for the timeline and the event table */
#define HTML_DOTS_MAX  5000  /* dots drawn in the timeline */
#define HTML_ROWS_MAX  2000  /* rows of the event table */
#define HTML_PROCS_MAX 200   /* rows of the timeline */
#define LINE_MAX_BYTES (1 << 20)

typedef struct Proc {
	long pid, ppid;
	char *comm;
	char *cmdline; /* argv of the start or the last exec, joined */
	char *exit;    /* "exit 3", "SIGKILL", NULL */
	uint64_t first_us, last_us;
	unsigned n_syscalls, n_denied;
	StrSet execs, reads, writes, net, denials, syscalls;
	StrSet oov; /* "PATH (KIND)": names that exist on the host, not in the view */
} Proc;

typedef struct Event {
	uint64_t t_us;
	long pid;
	char kind; /* a allowed, e emulated, d denied, k killed, o out of view, p process,
		    * b budget, r ratchet */
	char *label;
} Event;

struct AuditReport {
	Proc *procs;
	size_t n_procs, cap_procs;
	Event *events;
	size_t n_events, cap_events;
	size_t events_dropped;
	unsigned records, skipped;
	uint64_t max_us;
	char *policy, *cmdline, *end; /* run start/end */
	unsigned budgets, ratchets, oov;
};

/* ---- small containers ---- */

static Proc *proc_get(AuditReport *r, long pid)
{
	for (size_t i = r->n_procs; i > 0; i--)
		if (r->procs[i - 1].pid == pid)
			return &r->procs[i - 1];
	if (r->n_procs == r->cap_procs) {
		size_t cap = r->cap_procs ? r->cap_procs * 2 : 16;
		Proc *p = realloc(r->procs, cap * sizeof(Proc));

		if (!p)
			return NULL;
		r->procs = p;
		r->cap_procs = cap;
	}
	r->procs[r->n_procs] = (Proc){.pid = pid, .first_us = UINT64_MAX};
	return &r->procs[r->n_procs++];
}

static void add_event(AuditReport *r, uint64_t t, long pid, char kind, const char *label)
{
	if (r->n_events >= EVENTS_MAX) {
		r->events_dropped++;
		return;
	}
	if (r->n_events == r->cap_events) {
		size_t cap = r->cap_events ? r->cap_events * 2 : 256;
		Event *e = realloc(r->events, cap * sizeof(Event));

		if (!e)
			return;
		r->events = e;
		r->cap_events = cap;
	}
	r->events[r->n_events] =
		(Event){.t_us = t, .pid = pid, .kind = kind, .label = strdup(label)};
	if (r->events[r->n_events].label)
		r->n_events++;
}

/* ---- reading ---- */

static const char *jstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* Appends to a bounded buffer; never overflows. */
static void bappend(char *buf, size_t size, const char *fmt, ...) _printf_(3, 4);
static void bappend(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 1 >= size)
		return;
	va_start(ap, fmt);
	(void) vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

static void join_argv(const json_t *argv, char *buf, size_t size)
{
	size_t i;
	json_t *v;

	buf[0] = 0;
	json_array_foreach(argv, i, v) bappend(buf, size, "%s%s", i ? " " : "",
					       json_string_value(v) ? json_string_value(v) : "?");
}

/* The value of an argument as text (numbers and strings). */
static void arg_text(const json_t *v, char *buf, size_t size)
{
	if (json_is_string(v))
		snprintf(buf, size, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, size, "%lld", (long long) json_integer_value(v));
	else if (json_is_object(v))
		snprintf(buf, size, "%s", jstr(v, "text"));
	else if (json_is_array(v))
		join_argv(v, buf, size);
	else
		snprintf(buf, size, "?");
}

static bool is_runtime_module(const char *m)
{
	const char *b = strrchr(m, '/');

	b = b ? b + 1 : m;
	return strncmp(b, "libc.so", 7) == 0 || strncmp(b, "libc-", 5) == 0 ||
	       strncmp(b, "ld-linux", 8) == 0 || strncmp(b, "libpthread", 10) == 0;
}

/* " at FUNCTION+OFFSET (module)": the code that asked, from the record's backtrace — the
 * innermost frame outside libc and the loader ([audit] backtrace). */
static void where(const json_t *bt, char *label, size_t size)
{
	const json_t *f = NULL, *fr;
	const char *fn, *m, *b;
	size_t i;

	if (!json_is_array(bt) || json_array_size(bt) == 0)
		return;
	json_array_foreach((json_t *) bt, i, fr)
	{
		if (!is_runtime_module(jstr(fr, "module"))) {
			f = fr;
			break;
		}
	}
	if (!f)
		f = json_array_get(bt, 0);
	fn = jstr(f, "function");
	m = jstr(f, "module");
	b = strrchr(m, '/');
	b = b ? b + 1 : m;
	if (fn[0])
		bappend(label, size, " at %s+%lld", fn,
			(long long) json_integer_value(json_object_get(f, "offset")));
	else
		bappend(label, size, " at %s", jstr(f, "ip"));
	if (b[0])
		bappend(label, size, " (%s)", b);
}

static void on_syscall(AuditReport *r, const json_t *rec, uint64_t t)
{
	const char *sys = jstr(rec, "syscall"), *cat = jstr(rec, "category");
	const char *dec = jstr(rec, "decision"), *err = jstr(rec, "errno"), *why = jstr(rec, "why");
	const char *oov = jstr(rec, "out_of_view");
	const json_t *args = json_object_get(rec, "args"), *res = json_object_get(rec, "result");
	bool denied = streq(dec, "denied") || streq(dec, "killed");
	bool ok = !denied && !err[0];
	char label[1024] = "", arg[512], result[160];
	const char *path = jstr(rec, "path");
	const char *key;
	json_t *v;
	Proc *p = proc_get(r, (long) json_integer_value(json_object_get(rec, "pid")));

	if (!p)
		return;
	/* the latest name: a process is renamed by exec */
	if (json_is_string(json_object_get(rec, "comm")) &&
	    (!p->comm || !streq(p->comm, jstr(rec, "comm")))) {
		free(p->comm);
		p->comm = strdup(jstr(rec, "comm"));
	}
	p->n_syscalls++;
	(void) audit_strset_add(&p->syscalls, sys);

	/* one line: name(arguments) = result */
	bappend(label, sizeof(label), "%s(", sys);
	{
		bool first = true;

		json_object_foreach((json_t *) args, key, v)
		{
			if (strstr(key, "_truncated"))
				continue;
			arg_text(v, arg, sizeof(arg));
			bappend(label, sizeof(label), "%s%s", first ? "" : ", ", arg);
			first = false;
		}
	}
	if (json_is_integer(res))
		snprintf(result, sizeof(result), " = %lld", (long long) json_integer_value(res));
	else
		snprintf(result, sizeof(result), " = ?");
	if (err[0])
		bappend(result, sizeof(result), " %s", err);
	if (denied)
		bappend(result, sizeof(result), " (%s%s%s)", dec, why[0] ? ": " : "", why);
	bappend(label, sizeof(label), ")%s", result);
	if (denied)
		where(json_object_get(rec, "backtrace"), label, sizeof(label));
	if (oov[0]) {
		char what[PATH_MAX + 64];

		/* the interesting ENOENT: the name exists on the host (docs/audit.md) */
		bappend(label, sizeof(label), " [out of view: %s]", oov);
		snprintf(what, sizeof(what), "%s (%s)", path[0] ? path : jstr(args, "path"), oov);
		(void) audit_strset_add(&p->oov, what);
		r->oov++;
	}
	add_event(r, t, p->pid,
		  oov[0]		   ? 'o'
		  : streq(dec, "allowed")  ? 'a'
		  : streq(dec, "emulated") ? 'e'
		  : streq(dec, "denied")   ? 'd'
					   : 'k',
		  label);

	if (denied) {
		(void) audit_strset_add(&p->denials, label);
		p->n_denied++;
	}
	if (streq(cat, "exec")) {
		char what[1200];

		/* failed attempts (a PATH search) are in the denials or not worth listing */
		if (!ok)
			return;
		arg_text(json_object_get(args, "argv"), arg, sizeof(arg));
		snprintf(what, sizeof(what), "%s%s%s%s", path[0] ? path : jstr(args, "path"),
			 arg[0] ? " (" : "", arg, arg[0] ? ")" : "");
		(void) audit_strset_add(&p->execs, what);
		if (arg[0]) {
			free(p->cmdline);
			p->cmdline = strdup(arg);
		}
	} else if (streq(cat, "file") && (ok || denied)) {
		const char *file = path[0] ? path : jstr(args, "path");

		if (!file[0])
			file = jstr(args, "newpath");
		if (!file[0])
			return;
		if (strncmp(sys, "open", 4) == 0 || streq(sys, "creat")) {
			StrCount *c = audit_strset_add(audit_is_write_open(sys, jstr(args, "flags"))
							       ? &p->writes
							       : &p->reads,
						       file);

			if (c && denied)
				c->denied = true;
		} else if (audit_is_modifying(sys)) {
			StrCount *c = audit_strset_add(&p->writes, file);

			if (c && denied)
				c->denied = true;
		}
	} else if (streq(cat, "network")) {
		const json_t *a = json_object_get(args, "addr");

		if (json_is_object(a)) {
			char dest[600];
			StrCount *c;

			snprintf(dest, sizeof(dest), "%s %s", sys, jstr(a, "text"));
			c = audit_strset_add(&p->net, dest);
			if (c && denied)
				c->denied = true;
		}
	}
}

static void on_record(AuditReport *r, const json_t *rec)
{
	const char *type = jstr(rec, "type"), *ev = jstr(rec, "event");
	uint64_t t = (uint64_t) json_integer_value(json_object_get(rec, "t_us"));
	long pid = (long) json_integer_value(json_object_get(rec, "pid"));
	char buf[1024];
	Proc *p = NULL;

	r->records++;
	r->max_us = MAX(r->max_us, t);
	if (streq(type, "syscall")) {
		on_syscall(r, rec, t);
		p = proc_get(r, pid);
	} else if (streq(type, "process")) {
		p = proc_get(r, pid);
		if (!p)
			return;
		if (json_is_integer(json_object_get(rec, "ppid")) && !p->ppid)
			p->ppid = (long) json_integer_value(json_object_get(rec, "ppid"));
		if (streq(ev, "start")) {
			join_argv(json_object_get(rec, "argv"), buf, sizeof(buf));
			free(p->cmdline);
			p->cmdline = strdup(buf);
		} else if (streq(ev, "seen") && !p->comm) {
			p->comm = strdup(jstr(rec, "comm"));
		} else if (streq(ev, "exit")) {
			const json_t *sig = json_object_get(rec, "signal");

			if (json_is_string(sig))
				snprintf(buf, sizeof(buf), "killed by %s", json_string_value(sig));
			else
				snprintf(buf, sizeof(buf), "exit %lld",
					 (long long) json_integer_value(
						 json_object_get(rec, "exit_code")));
			free(p->exit);
			p->exit = strdup(buf);
		}
		snprintf(buf, sizeof(buf), "process %s%s%s", ev,
			 p->exit && streq(ev, "exit") ? ": " : "",
			 p->exit && streq(ev, "exit") ? p->exit : "");
		add_event(r, t, pid, 'p', buf);
	} else if (streq(type, "run")) {
		if (streq(ev, "start")) {
			join_argv(json_object_get(rec, "argv"), buf, sizeof(buf));
			free(r->cmdline);
			r->cmdline = strdup(buf);
			free(r->policy);
			r->policy = strdup(jstr(rec, "policy"));
		} else if (streq(ev, "end")) {
			const json_t *kb = json_object_get(rec, "killed_by");

			snprintf(
				buf, sizeof(buf), "exit code %lld, %lld ms, %lld denied%s%s",
				(long long) json_integer_value(json_object_get(rec, "exit_code")),
				(long long) json_integer_value(json_object_get(rec, "duration_ms")),
				(long long) json_integer_value(json_object_get(rec, "denied")),
				json_is_string(kb) ? ", killed by " : "",
				json_is_string(kb) ? json_string_value(kb) : "");
			free(r->end);
			r->end = strdup(buf);
		}
	} else if (streq(type, "budget")) {
		r->budgets++;
		snprintf(buf, sizeof(buf), "budget %s exceeded: %llu of %llu %s (%s)",
			 jstr(rec, "budget"),
			 (unsigned long long) json_integer_value(json_object_get(rec, "used")),
			 (unsigned long long) json_integer_value(json_object_get(rec, "limit")),
			 jstr(rec, "unit"), jstr(rec, "action"));
		add_event(r, t, pid, 'b', buf);
	} else if (streq(type, "ratchet")) {
		r->ratchets++;
		snprintf(buf, sizeof(buf), "ratchet: %s (%s), network %s -> %s", jstr(rec, "path"),
			 jstr(rec, "level"), jstr(rec, "from"), jstr(rec, "to"));
		add_event(r, t, pid, 'r', buf);
		p = pid ? proc_get(r, pid) : NULL;
	}
	if (p) {
		p->first_us = MIN(p->first_us, t);
		p->last_us = MAX(p->last_us, t);
	}
}

int audit_report_load(FILE *f, AuditReportWarn warn, void *userdata, AuditReport **ret)
{
	AuditReport *r = calloc(1, sizeof(*r));
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned no = 0;

	if (!r)
		return -ENOMEM;
	while ((n = getline(&line, &cap, f)) > 0) {
		json_error_t e;
		json_t *rec;
		bool complete = line[n - 1] == '\n';

		no++;
		if (n == 1 && complete)
			continue; /* empty line */
		rec = n < LINE_MAX_BYTES ? json_loadb(line, (size_t) n, 0, &e) : NULL;
		if (!rec || !json_is_object(rec)) {
			char why[256];

			if (n >= LINE_MAX_BYTES)
				snprintf(why, sizeof(why), "line too long");
			else if (!rec)
				snprintf(why, sizeof(why), "%s: %s",
					 complete ? "not valid JSON" : "truncated (no end of line)",
					 e.text);
			else
				snprintf(why, sizeof(why), "not a JSON object");
			r->skipped++;
			if (warn)
				warn(no, why, userdata);
			json_decref(rec);
			continue;
		}
		if (json_integer_value(json_object_get(rec, "v")) != 1) {
			r->skipped++;
			if (warn)
				warn(no, "unknown schema version (\"v\" is not 1)", userdata);
			json_decref(rec);
			continue;
		}
		on_record(r, rec);
		json_decref(rec);
	}
	free(line);
	if (ferror(f)) {
		audit_report_free(r);
		return -EIO;
	}
	*ret = r;
	return 0;
}

AuditReport *audit_report_free(AuditReport *r)
{
	if (!r)
		return NULL;
	for (size_t i = 0; i < r->n_procs; i++) {
		Proc *p = &r->procs[i];

		free(p->comm);
		free(p->cmdline);
		free(p->exit);
		audit_strset_done(&p->execs);
		audit_strset_done(&p->reads);
		audit_strset_done(&p->writes);
		audit_strset_done(&p->net);
		audit_strset_done(&p->denials);
		audit_strset_done(&p->syscalls);
		audit_strset_done(&p->oov);
	}
	for (size_t i = 0; i < r->n_events; i++)
		free(r->events[i].label);
	free(r->procs);
	free(r->events);
	free(r->policy);
	free(r->cmdline);
	free(r->end);
	free(r);
	return NULL;
}

unsigned audit_report_records(const AuditReport *r)
{
	return r->records;
}

unsigned audit_report_skipped(const AuditReport *r)
{
	return r->skipped;
}

/* ---- text ---- */

/* Prints s with control characters (C0, DEL, and C1 as UTF-8) escaped as \xNN: strings in a
 * log come from the sandboxed program and must not drive the terminal. */

static void text_list(FILE *out, const char *title, const StrSet *set, bool sorted)
{
	_cleanup_free_ size_t *o = sorted ? audit_strset_by_count(set) : NULL;

	if (set->n == 0)
		return;
	fprintf(out, "  %s (%zu):\n", title, set->n);
	for (size_t i = 0; i < set->n && i < LIST_MAX; i++) {
		const StrCount *c = &set->v[o ? o[i] : i];

		fputs("    ", out);
		audit_put_text(out, c->s);
		if (c->n > 1)
			fprintf(out, "  (%u×)", c->n);
		if (c->denied)
			fputs("  [denied]", out);
		fputc('\n', out);
	}
	if (set->n > LIST_MAX)
		fprintf(out, "    … and %zu more\n", set->n - LIST_MAX);
}

int audit_report_write_text(const AuditReport *r, FILE *out)
{
	unsigned denied = 0;

	for (size_t i = 0; i < r->n_procs; i++)
		denied += r->procs[i].n_denied;
	fputs("run: ", out);
	audit_put_text(out, r->cmdline ? r->cmdline : "(no run record)");
	if (r->policy) {
		fputs("\npolicy: ", out);
		audit_put_text(out, r->policy);
	}
	fputc('\n', out);
	fprintf(out, "result: %s\n", r->end ? r->end : "(no end record: the run did not finish?)");
	fprintf(out, "records: %u, lines skipped: %u, processes: %zu, denials: %u", r->records,
		r->skipped, r->n_procs, denied);
	if (r->budgets)
		fprintf(out, ", budget events: %u", r->budgets);
	if (r->ratchets)
		fprintf(out, ", ratchet events: %u", r->ratchets);
	if (r->oov)
		fprintf(out, ", out of view: %u", r->oov);
	fputc('\n', out);
	for (size_t i = 0; i < r->n_procs; i++) {
		const Proc *p = &r->procs[i];
		_cleanup_free_ size_t *o = audit_strset_by_count(&p->syscalls);

		fprintf(out, "\nprocess %ld (", p->pid);
		audit_put_text(out, p->comm ? p->comm : "?");
		fputc(')', out);
		if (p->ppid)
			fprintf(out, ", parent %ld", p->ppid);
		if (p->exit)
			fprintf(out, ", %s", p->exit);
		fputc('\n', out);
		if (p->cmdline) {
			fputs("  command: ", out);
			audit_put_text(out, p->cmdline);
			fputc('\n', out);
		}
		text_list(out, "execs", &p->execs, false);
		text_list(out, "files read", &p->reads, false);
		text_list(out, "files written", &p->writes, false);
		text_list(out, "network", &p->net, false);
		text_list(out, "denials", &p->denials, false);
		text_list(out, "out of view (on the host, not shown; the program saw ENOENT)",
			  &p->oov, true);
		if (p->syscalls.n && o) {
			fprintf(out, "  top syscalls (%u calls):", p->n_syscalls);
			for (size_t k = 0; k < p->syscalls.n && k < 10; k++) {
				fputs(k ? ", " : " ", out);
				audit_put_text(out, p->syscalls.v[o[k]].s);
				fprintf(out, " %u", p->syscalls.v[o[k]].n);
			}
			fputc('\n', out);
		}
	}
	if (r->events_dropped)
		fprintf(out, "\n(%zu events beyond the first %d are counted but not kept)\n",
			r->events_dropped, EVENTS_MAX);
	return ferror(out) ? -EIO : 0;
}

/* ---- HTML ---- */

static const Proc *find_proc(const AuditReport *r, long pid)
{
	for (size_t i = 0; i < r->n_procs; i++)
		if (r->procs[i].pid == pid)
			return &r->procs[i];
	return NULL;
}

static void html_tree(const AuditReport *r, FILE *out, long parent, unsigned depth)
{
	bool open = false;

	if (depth > 64)
		return;
	for (size_t i = 0; i < r->n_procs; i++) {
		const Proc *p = &r->procs[i];
		bool root = !find_proc(r, p->ppid) || p->ppid == p->pid;

		if (parent < 0 ? !root : (p->ppid != parent || p->pid == parent))
			continue;
		if (!open) {
			fputs("<ul>", out);
			open = true;
		}
		fprintf(out, "<li><b>%ld</b> ", p->pid);
		audit_put_html(out, p->comm ? p->comm : "?");
		if (p->cmdline) {
			fputs(" <code>", out);
			audit_put_html(out, p->cmdline);
			fputs("</code>", out);
		}
		fprintf(out, " <span class=m>%u syscalls", p->n_syscalls);
		if (p->n_denied)
			fprintf(out, ", <span class=den>%u denied</span>", p->n_denied);
		if (p->exit) {
			fputs(", ", out);
			audit_put_html(out, p->exit);
		}
		fputs("</span>", out);
		html_tree(r, out, p->pid, depth + 1);
		fputs("</li>", out);
	}
	if (open)
		fputs("</ul>\n", out);
}

static const char *kind_class(char k)
{
	switch (k) {
	case 'a':
		return "al";
	case 'e':
		return "em";
	case 'd':
		return "de";
	case 'k':
		return "ki";
	case 'o':
		return "oo";
	default:
		return "ev";
	}
}

static void html_list(FILE *out, const char *title, const StrSet *set)
{
	if (!set->n)
		return;
	fprintf(out, "<h4>%s (%zu)</h4><ul>", title, set->n);
	for (size_t i = 0; i < set->n && i < 200; i++) {
		fputs(set->v[i].denied ? "<li class=den>" : "<li>", out);
		audit_put_html(out, set->v[i].s);
		if (set->v[i].n > 1)
			fprintf(out, " <span class=m>(%u×)</span>", set->v[i].n);
		fputs("</li>", out);
	}
	if (set->n > 200)
		fprintf(out, "<li>… and %zu more</li>", set->n - 200);
	fputs("</ul>\n", out);
}

static void html_timeline(const AuditReport *r, FILE *out)
{
	const int left = 160, width = 820, row = 18;
	size_t rows = MIN(r->n_procs, (size_t) HTML_PROCS_MAX), dots = 0;
	double span = r->max_us ? (double) r->max_us : 1.0;

	fprintf(out,
		"<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%zu' role='img' "
		"aria-label='timeline'>\n",
		left + width + 20, rows * row + 30);
	for (size_t i = 0; i < rows; i++) {
		const Proc *p = &r->procs[i];
		double x0 = left +
			    (p->first_us == UINT64_MAX ? 0 : (double) p->first_us) / span * width;
		double x1 = left + (double) p->last_us / span * width;
		size_t y = i * row + 12;

		fprintf(out, "<text x='4' y='%zu' class='lbl'>%ld ", y + 4, p->pid);
		audit_put_html(out, p->comm ? p->comm : "?");
		fprintf(out, "</text><line x1='%.1f' x2='%.1f' y1='%zu' y2='%zu' class='life'/>\n",
			x0, MAX(x1, x0 + 1), y, y);
	}
	for (size_t e = 0; e < r->n_events && dots < HTML_DOTS_MAX; e++) {
		const Event *ev = &r->events[e];
		size_t i;

		for (i = 0; i < rows; i++)
			if (r->procs[i].pid == ev->pid)
				break;
		if (i == rows)
			continue;
		fprintf(out, "<circle cx='%.1f' cy='%zu' r='%d' class='%s'><title>%.3f ms: ",
			left + (double) ev->t_us / span * width, i * row + 12,
			ev->kind == 'd' || ev->kind == 'k' || ev->kind == 'o' ? 5 : 3,
			kind_class(ev->kind), (double) ev->t_us / 1000.0);
		audit_put_html(out, ev->label);
		fputs("</title></circle>\n", out);
		dots++;
	}
	fprintf(out, "<text x='%d' y='%zu' class='lbl'>0 ms</text>", left, rows * row + 26);
	fprintf(out, "<text x='%d' y='%zu' class='lbl' text-anchor='end'>%.1f ms</text>",
		left + width, rows * row + 26, span / 1000.0);
	fputs("</svg>\n", out);
	if (r->n_procs > rows)
		fprintf(out, "<p class=m>%zu more processes not drawn.</p>", r->n_procs - rows);
}

int audit_report_write_html(const AuditReport *r, const char *title, FILE *out)
{
	size_t n_denials = 0;

	fputs("<!DOCTYPE html>\n<html lang=en><head><meta charset='utf-8'>\n<title>sbxtrace "
	      "report: ",
	      out);
	audit_put_html(out, title);
	fputs("</title>\n<style>\n"
	      "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1100px}\n"
	      "h1{font-size:1.4em}h2{font-size:1.15em;border-bottom:1px solid #ccc}h4{margin:.6em "
	      "0 .2em}\n"
	      "code{background:#f3f3f3;padding:0 .2em}.m{color:#666}.den{color:#b00020}\n"
	      "table{border-collapse:collapse;width:100%}td,th{border:1px solid #ddd;padding:2px "
	      "6px;"
	      "text-align:left;vertical-align:top;font-size:13px}\n"
	      "tr.de td,tr.ki td{background:#fde8ea}ul{margin:.2em 0 .2em 1.2em;padding:0}\n"
	      ".lbl{font:11px monospace;fill:#333}.life{stroke:#bbb;stroke-width:2}\n"
	      "circle.al{fill:#999}circle.em{fill:#1565c0}circle.de{fill:#d00}circle.ki{fill:#000}"
	      "circle.ev{fill:#2e7d32}circle.oo{fill:#ef6c00}tr.oo td{background:#fff3e0}\n"
	      "</style></head><body>\n<h1>sbxtrace report: ",
	      out);
	audit_put_html(out, title);
	fputs("</h1>\n<p>Command: <code>", out);
	audit_put_html(out, r->cmdline ? r->cmdline : "(no run record)");
	fputs("</code><br>Policy: <code>", out);
	audit_put_html(out, r->policy ? r->policy : "?");
	fputs("</code><br>Result: ", out);
	audit_put_html(out, r->end ? r->end : "(no end record)");
	fprintf(out, "<br><span class=m>%u records, %u lines skipped, %zu processes</span></p>\n",
		r->records, r->skipped, r->n_procs);

	fputs("<h2>Process tree</h2>\n", out);
	html_tree(r, out, -1, 0);

	fputs("<h2>Timeline</h2>\n<p class=m>One row per process; dots are events (grey allowed, "
	      "blue emulated, red denied, black killed, orange out of view, green "
	      "process/budget/ratchet); hover for "
	      "details.</p>\n",
	      out);
	html_timeline(r, out);

	fputs("<h2>Denials</h2>\n<table><tr><th>ms</th><th>pid</th><th>call</th></tr>\n", out);
	for (size_t e = 0; e < r->n_events; e++) {
		const Event *ev = &r->events[e];

		if (ev->kind != 'd' && ev->kind != 'k')
			continue;
		fprintf(out, "<tr class=%s><td>%.3f</td><td>%ld</td><td><code>",
			kind_class(ev->kind), (double) ev->t_us / 1000.0, ev->pid);
		audit_put_html(out, ev->label);
		fputs("</code></td></tr>\n", out);
		n_denials++;
	}
	fputs("</table>\n", out);
	if (!n_denials)
		fputs("<p>None.</p>\n", out);

	fputs("<h2>Out of view</h2>\n<p class=m>Names the program looked for that exist on the "
	      "host but not in its view (hidden by a rule, outside every mount, or under a mount "
	      "of another directory). The program saw ENOENT, as for any absent name.</p>\n",
	      out);
	if (r->oov) {
		fputs("<table><tr><th>ms</th><th>pid</th><th>call</th></tr>\n", out);
		for (size_t e = 0; e < r->n_events; e++) {
			const Event *ev = &r->events[e];

			if (ev->kind != 'o')
				continue;
			fprintf(out, "<tr class=oo><td>%.3f</td><td>%ld</td><td><code>",
				(double) ev->t_us / 1000.0, ev->pid);
			audit_put_html(out, ev->label);
			fputs("</code></td></tr>\n", out);
		}
		fputs("</table>\n", out);
	} else
		fputs("<p>None.</p>\n", out);

	fputs("<h2>Processes</h2>\n", out);
	for (size_t i = 0; i < r->n_procs; i++) {
		const Proc *p = &r->procs[i];

		fprintf(out, "<details%s><summary><b>%ld</b> ", p->n_denied ? " open" : "", p->pid);
		audit_put_html(out, p->comm ? p->comm : "?");
		fprintf(out, " <span class=m>%u syscalls, %u denied</span></summary>\n",
			p->n_syscalls, p->n_denied);
		html_list(out, "Execs", &p->execs);
		html_list(out, "Files read", &p->reads);
		html_list(out, "Files written", &p->writes);
		html_list(out, "Network", &p->net);
		html_list(out, "Denials", &p->denials);
		html_list(out, "Out of view", &p->oov);
		html_list(out, "Syscalls", &p->syscalls);
		fputs("</details>\n", out);
	}

	fprintf(out, "<h2>Events</h2>\n<details><summary>%zu events", r->n_events);
	if (r->n_events > HTML_ROWS_MAX)
		fprintf(out, " (first %d shown)", HTML_ROWS_MAX);
	fputs("</summary><table><tr><th>ms</th><th>pid</th><th>event</th></tr>\n", out);
	for (size_t e = 0; e < r->n_events && e < HTML_ROWS_MAX; e++) {
		const Event *ev = &r->events[e];

		fprintf(out, "<tr class=%s><td>%.3f</td><td>%ld</td><td><code>",
			kind_class(ev->kind), (double) ev->t_us / 1000.0, ev->pid);
		audit_put_html(out, ev->label);
		fputs("</code></td></tr>\n", out);
	}
	fputs("</table></details>\n</body></html>\n", out);
	return ferror(out) ? -EIO : 0;
}
