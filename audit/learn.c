/* SPDX-License-Identifier: MIT */
/*
 * `sbxtrace learn`: from the audit log of a recording run, a least-privilege policy
 * (docs/learn.md). Grouping is by the base policy's mounts, which is what the view can
 * express without a rule per file: a mount the run never touched is left out, one it only
 * read becomes read-only, one it wrote keeps rw (tmp mounts stay tmp). A mount of "/" is
 * split into its top-level directories, so that learning under a wide base does not hand
 * back the whole host. Every line says where it came from.
 */
#include "audit/learn.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/macros.h"
#include "common/util.h"

enum { USE_READ = 1, USE_WRITE = 2 };

typedef struct Use {
	char *path;   /* virtual path of the mount (or a top-level directory under "/") */
	char *source; /* its host source, NULL for tmp */
	MountMode base_mode;
	unsigned flags;
	unsigned long reads, writes;
	char *first; /* the first path seen under it */
} Use;

typedef struct Counted {
	char *s;
	unsigned long n;
} Counted;

typedef struct Learned {
	Use *uses;
	size_t n_uses;
	Counted *execs, *dests, *unix_;
	size_t n_execs, n_dests, n_unix;
	unsigned long records, skipped;
} Learned;

static void toml_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *c = (const unsigned char *) s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(out, "\\%c", *c);
		else if (*c < 0x20 || *c == 0x7f)
			fprintf(out, "\\u%04x", *c);
		else
			fputc(*c, out);
	}
	fputc('"', out);
}

static int count(Counted **v, size_t *n, const char *s)
{
	Counted *nv;

	for (size_t i = 0; i < *n; i++)
		if (streq((*v)[i].s, s)) {
			(*v)[i].n++;
			return 0;
		}
	nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[*n].s = strdup(s);
	if (!nv[*n].s)
		return -ENOMEM;
	nv[*n].n = 1;
	(*n)++;
	return 0;
}

static bool below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (streq(dir, "/"))
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 && (path[n] == 0 || path[n] == '/');
}

/* The base mount that shows vpath (the longest one), or NULL (the skeleton). */
static const PolicyMount *mount_of(const Policy *p, const char *vpath)
{
	const PolicyMount *best = NULL;

	for (size_t i = 0; i < p->n_mounts; i++)
		if (below(vpath, p->mounts[i].path) &&
		    (!best || strlen(p->mounts[i].path) > strlen(best->path)))
			best = &p->mounts[i];
	return best;
}

static int note_path(Learned *l, const Policy *p, const char *vpath, unsigned flag)
{
	const PolicyMount *m = mount_of(p, vpath);
	char top[PATH_MAX], src[PATH_MAX];
	const char *path, *source;
	Use *u = NULL, *nu;

	if (!m)
		return 0; /* the skeleton (mount points, a synthesized /etc/passwd) */
	path = m->path;
	source = m->source;
	if (streq(m->path, "/") && m->mode != MOUNT_TMP) {
		const char *e = strchr(vpath + 1, '/');
		size_t len = e ? (size_t) (e - vpath) : strlen(vpath);

		if (len <= 1)
			return 0; /* "/" itself: listing the root needs no mount */
		snprintf(top, sizeof(top), "%.*s", (int) len, vpath);
		snprintf(src, sizeof(src), "%s%s", streq(m->source, "/") ? "" : m->source, top);
		path = top;
		source = src;
	}
	for (size_t i = 0; i < l->n_uses; i++)
		if (streq(l->uses[i].path, path))
			u = &l->uses[i];
	if (!u) {
		nu = realloc(l->uses, (l->n_uses + 1) * sizeof(*nu));
		if (!nu)
			return -ENOMEM;
		l->uses = nu;
		u = &nu[l->n_uses++];
		*u = (Use){.path = strdup(path), .source = source ? strdup(source) : NULL,
			   .base_mode = m->mode, .first = strdup(vpath)};
		if (!u->path || !u->first || (source && !u->source))
			return -ENOMEM;
	}
	u->flags |= flag;
	if (flag & USE_WRITE)
		u->writes++;
	else
		u->reads++;
	return 0;
}

static bool is_write(const char *sys, json_t *args)
{
	static const char *const w[] = {
		"creat",     "mkdir",	 "mkdirat",   "mknod",	     "mknodat",	     "unlink",
		"unlinkat",  "rmdir",	 "rename",    "renameat",    "renameat2",    "link",
		"linkat",    "symlink",	 "symlinkat", "chmod",	     "fchmodat",     "fchmodat2",
		"chown",     "lchown",	 "fchownat",  "truncate",    "utime",	     "utimes",
		"utimensat", "futimesat", "setxattr", "lsetxattr",   "removexattr", "lremovexattr",
		NULL};
	const char *flags;

	for (size_t i = 0; w[i]; i++)
		if (streq(sys, w[i]))
			return true;
	flags = json_string_value(json_object_get(args, "flags"));
	if (flags && (streq(sys, "open") || streq(sys, "openat") || streq(sys, "openat2")))
		return strstr(flags, "O_WRONLY") || strstr(flags, "O_RDWR") ||
		       strstr(flags, "O_CREAT") || strstr(flags, "O_TRUNC") ||
		       strstr(flags, "O_APPEND");
	return false;
}

/* Whether the program saw the call succeed (or the kernel ran it). */
static bool succeeded(json_t *rec)
{
	json_t *res = json_object_get(rec, "result");
	const char *e = json_string_value(json_object_get(rec, "errno"));

	if (!res || json_is_null(res))
		return true;
	if (json_is_integer(res) && json_integer_value(res) >= 0)
		return true;
	return e && streq(e, "EINPROGRESS"); /* a non-blocking connect on its way */
}

static int note_record(Learned *l, const Policy *p, json_t *rec)
{
	const char *type = json_string_value(json_object_get(rec, "type"));
	const char *sys, *dec, *path, *cat;
	json_t *args, *addr;

	if (!type || !streq(type, "syscall"))
		return 0;
	sys = json_string_value(json_object_get(rec, "syscall"));
	dec = json_string_value(json_object_get(rec, "decision"));
	cat = json_string_value(json_object_get(rec, "category"));
	path = json_string_value(json_object_get(rec, "path"));
	args = json_object_get(rec, "args");
	if (!sys || !dec || (!streq(dec, "allowed") && !streq(dec, "emulated")) || !succeeded(rec))
		return 0;
	l->records++;
	if (streq(sys, "execve") || streq(sys, "execveat")) {
		if (path && streq(dec, "allowed")) {
			int r = note_path(l, p, path, USE_READ);

			return r < 0 ? r : count(&l->execs, &l->n_execs, path);
		}
		return 0;
	}
	addr = json_object_get(args, "addr");
	if (cat && streq(cat, "network") && json_is_object(addr) &&
	    (streq(sys, "connect") || streq(sys, "sendto") || streq(sys, "sendmsg"))) {
		const char *fam = json_string_value(json_object_get(addr, "family"));
		const char *a = json_string_value(json_object_get(addr, "address"));
		json_int_t port = json_integer_value(json_object_get(addr, "port"));
		char d[128];

		if (!fam || !a)
			return 0;
		if (streq(fam, "AF_UNIX")) {
			if (path)
				return note_path(l, p, path, USE_WRITE); /* connect needs write */
			return a[0] == '@' ? count(&l->unix_, &l->n_unix, a) : 0;
		}
		if (streq(fam, "AF_INET"))
			snprintf(d, sizeof(d), "%s:%lld", a, (long long) port);
		else if (streq(fam, "AF_INET6"))
			snprintf(d, sizeof(d), "[%s]:%lld", a, (long long) port);
		else
			return 0;
		return count(&l->dests, &l->n_dests, d);
	}
	if (path)
		return note_path(l, p, path, is_write(sys, args) ? USE_WRITE : USE_READ);
	return 0;
}

static int cmp_use(const void *a, const void *b)
{
	return strcmp(((const Use *) a)->path, ((const Use *) b)->path);
}

static int cmp_counted(const void *a, const void *b)
{
	return strcmp(((const Counted *) a)->s, ((const Counted *) b)->s);
}

static void free_counted(Counted *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].s);
	free(v);
}

static void learned_done(Learned *l)
{
	for (size_t i = 0; i < l->n_uses; i++) {
		free(l->uses[i].path);
		free(l->uses[i].source);
		free(l->uses[i].first);
	}
	free(l->uses);
	free_counted(l->execs, l->n_execs);
	free_counted(l->dests, l->n_dests);
	free_counted(l->unix_, l->n_unix);
}

/* Headroom: twice what was used, at least floor_, rounded up to step. */
static uint64_t headroom(uint64_t used, uint64_t floor_, uint64_t step)
{
	uint64_t v = MAX(used * 2, floor_);

	return (v + step - 1) / step * step;
}

static void write_strv_line(FILE *out, const char *key, char *const *v)
{
	fprintf(out, "%s = [", key);
	for (size_t i = 0; v && v[i]; i++) {
		if (i)
			fputs(", ", out);
		toml_string(out, v[i]);
	}
	fputs("]\n", out);
}

static void write_policy(FILE *out, const Learned *l, const LearnRun *run)
{
	const Policy *p = run->base;
	char when[64];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm);
	fputs("# Learned by `sbxtrace learn` on ", out);
	fputs(when, out);
	fputs(" from:\n#  ", out);
	for (size_t i = 0; run->argv[i]; i++)
		fprintf(out, " %s", run->argv[i]);
	fprintf(out, "\n# run under %s (exec unrestricted while recording); exit status %d, %lu "
		     "records used, %lu lines skipped.\n",
		run->from, run->exit_code, l->records, l->skipped);
	fputs("# It allows what that run did and nothing else: review it before you rely on it "
	      "(docs/learn.md).\n\n",
	      out);

	fputs("[sandbox]\nname = \"learned\"\ndescription = ", out);
	{
		char desc[256] = "learned from a run of";

		for (size_t i = 0; run->argv[i] && strlen(desc) < 200; i++)
			snprintf(desc + strlen(desc), sizeof(desc) - strlen(desc), " %s",
				 run->argv[i]);
		toml_string(out, desc);
		fputc('\n', out);
	}

	for (size_t i = 0; i < l->n_uses; i++) {
		const Use *u = &l->uses[i];
		const char *mode = u->base_mode == MOUNT_TMP		    ? "tmp"
				   : (u->flags & USE_WRITE) && u->base_mode == MOUNT_RW ? "rw"
											      : "ro";

		fprintf(out, "\n# %lu reads, %lu writes under it (first: ", u->reads, u->writes);
		fputs(u->first, out);
		fputs(")\n[[mount]]\npath = ", out);
		toml_string(out, u->path);
		fputc('\n', out);
		if (u->source && u->base_mode != MOUNT_TMP && !streq(u->source, u->path)) {
			fputs("source = ", out);
			if (run->workspace && streq(u->source, run->workspace))
				fputs("\"${WORKSPACE}\"", out);
			else
				toml_string(out, u->source);
			fputc('\n', out);
		}
		fprintf(out, "mode = \"%s\"\n", mode);
	}

	fputs("\n# as in the policy the run was learned under\n[process]\n", out);
	if (p->process.cwd) {
		fputs("cwd = ", out);
		toml_string(out, p->process.cwd);
		fputc('\n', out);
	}
	fputs("env = { keep = [", out);
	for (size_t i = 0; p->process.env_keep && p->process.env_keep[i]; i++) {
		if (i)
			fputs(", ", out);
		toml_string(out, p->process.env_keep[i]);
	}
	fputs("], set = {", out);
	for (size_t i = 0; p->process.env_set && p->process.env_set[i]; i++) {
		const char *eq = strchr(p->process.env_set[i], '=');
		char name[256];

		if (!eq || (size_t) (eq - p->process.env_set[i]) >= sizeof(name))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int) (eq - p->process.env_set[i]),
			 p->process.env_set[i]);
		fprintf(out, "%s %s = ", i ? "," : "", name);
		toml_string(out, eq + 1);
	}
	fputs(" } }\n", out);
	if (p->process.tty)
		fputs("tty = true\n", out);
	if (p->process.pty)
		fputs("pty = true\n", out);

	fputs("\n[exec]\n# the programs the run executed (how many times)\n", out);
	fputs("allow = [", out);
	for (size_t i = 0; i < l->n_execs; i++) {
		fputs("\n\t", out);
		toml_string(out, l->execs[i].s);
		fprintf(out, ", # %lu", l->execs[i].n);
	}
	fputs(l->n_execs ? "\n]\n" : "]\n", out);

	fputs("\n[network]\n", out);
	if (l->n_dests) {
		fputs("# the inet destinations the run reached (connects/sends)\nmode = \"allowlist\"\n"
		      "allow = [",
		      out);
		for (size_t i = 0; i < l->n_dests; i++) {
			fputs("\n\t", out);
			toml_string(out, l->dests[i].s);
			fprintf(out, ", # %lu", l->dests[i].n);
		}
		fputs("\n]\n", out);
	} else
		fputs("# the run reached no inet destination\nmode = \"none\"\n", out);
	if (l->n_unix) {
		char **v = calloc(l->n_unix + 1, sizeof(char *));

		for (size_t i = 0; v && i < l->n_unix; i++)
			v[i] = l->unix_[i].s;
		fputs("# abstract unix sockets it reached\n", out);
		write_strv_line(out, "unix", v);
		free(v);
	}

	fputs("\n[limits]\n", out);
	fprintf(out, "# the run took %llu ms: three times that, at least 10 s\n",
		(unsigned long long) run->duration_ms);
	fprintf(out, "wall_time = \"%llus\"\n",
		(unsigned long long) headroom(run->duration_ms * 3 / 2, 10000, 1000) / 1000);
	if (run->usage_known) {
		fprintf(out, "# used %llu ms of CPU, %llu bytes of memory at most, %llu tasks at once: "
			     "twice that, with floors\n",
			(unsigned long long) run->cpu_time_ms,
			(unsigned long long) run->memory_peak,
			(unsigned long long) run->tasks_peak);
		fprintf(out, "cpu_time = \"%llus\"\n",
			(unsigned long long) headroom(run->cpu_time_ms, 5000, 1000) / 1000);
		fprintf(out, "memory = \"%lluMiB\"\n",
			(unsigned long long) headroom(run->memory_peak, 64ULL << 20, 1ULL << 20) >>
				20);
		fprintf(out, "tasks = %llu\n", (unsigned long long) headroom(run->tasks_peak, 16, 1));
	} else
		fputs("# CPU, memory and tasks were not measured (no budget sampled during the run)\n",
		      out);
}

int learn_write_policy(const char *log_path, const LearnRun *run, FILE *out)
{
	FILE *f = fopen(log_path, "re");
	Learned l = {};
	char *line = NULL;
	size_t cap = 0;
	int r = 0;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		json_error_t e;
		json_t *rec = json_loads(line, 0, &e);

		if (!rec) {
			l.skipped++;
			continue;
		}
		r = note_record(&l, run->base, rec);
		json_decref(rec);
		if (r < 0)
			break;
	}
	free(line);
	fclose(f);
	if (r >= 0) {
		qsort(l.uses, l.n_uses, sizeof(*l.uses), cmp_use);
		qsort(l.execs, l.n_execs, sizeof(*l.execs), cmp_counted);
		qsort(l.dests, l.n_dests, sizeof(*l.dests), cmp_counted);
		qsort(l.unix_, l.n_unix, sizeof(*l.unix_), cmp_counted);
		write_policy(out, &l, run);
	}
	learned_done(&l);
	return r;
}
