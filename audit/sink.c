/* SPDX-License-Identifier: MIT */
/*
 * The audit sinks: JSON Lines records (docs/audit.md) into a shared buffer that a writer
 * thread empties into the log file, and --trace lines on stderr. Also the per-process cache
 * (comm, first sight, libc mappings) that keeps /proc reads off the common path.
 *
 * Why a buffer and a writer thread: a receiver answers the child first and records after, but
 * a write(2) per record to a file would still cost a syscall per notification and may block on
 * the disk; one write per 64 KiB does not. Formatting stays on the receiver (about a
 * microsecond), after the child has its answer.
 */
#include "audit/internal.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


#include "common/json-writer.h"
#include "common/macros.h"
#include "common/syscall-names.h"
#include "common/util.h"
#include "policy/policy.h"

#define FLUSH_THRESHOLD	  (64 * 1024)
#define AUDIT_BUFFER_MAX  (4 * 1024 * 1024)
#define FLUSH_INTERVAL_MS 200
#define PROC_SLOTS	  4096 /* power of two */
#define RANGES_MAX	  16
#define MAPS_READS_MAX	  4

typedef struct AuditProc {
	pid_t pid; /* 0: free */
	bool seen; /* the "seen" process event was written */
	char comm[32];
	bool maps_read;
	unsigned maps_reads;
	size_t n_ranges;
	uint64_t range[RANGES_MAX][2]; /* executable mappings of libc, ld.so, vDSO */
} AuditProc;

struct Audit {
	int fd; /* the log, -1: none */
	bool trace, trace_logged;
	unsigned events;
	int disassembly;	      /* AuditSelect */
	uint64_t disassembly_nrs[16]; /* AUDIT_SELECT_LIST: bitmap of syscall numbers < 1024 */
	int backtrace;		      /* AuditSelect */
	uint64_t backtrace_nrs[16];   /* AUDIT_SELECT_LIST, as disassembly_nrs */
	atomic_int main_pid;
	uint64_t start_ns;

	pthread_mutex_t lock;
	pthread_cond_t wake, space;
	char *buf, *spare;
	size_t len, cap, spare_cap;
	bool stopping, writing;
	int error; /* first write error */
	pthread_t writer;
	bool writer_started;

	pthread_mutex_t proc_lock;
	AuditProc *procs;
	size_t n_procs;
};

static const char *const decision_names[_AUDIT_DECISION_MAX] = {
	[AUDIT_ALLOWED] = "allowed",
	[AUDIT_EMULATED] = "emulated",
	[AUDIT_DENIED] = "denied",
	[AUDIT_KILLED] = "killed",
};

const char *audit_decision_to_string(AuditDecision d)
{
	if (d < 0 || d >= _AUDIT_DECISION_MAX)
		return NULL;
	return decision_names[d];
}

size_t audit_quote(const char *s, size_t len, size_t max, char *out, size_t size)
{
	size_t o = 0, n = MIN(len, max);

	if (size < 8) {
		if (size)
			out[0] = 0;
		return 0;
	}
	out[o++] = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char) s[i];
		char esc[8];
		size_t k;

		switch (c) {
		case '\n':
			k = (size_t) snprintf(esc, sizeof(esc), "\\n");
			break;
		case '\t':
			k = (size_t) snprintf(esc, sizeof(esc), "\\t");
			break;
		case '\r':
			k = (size_t) snprintf(esc, sizeof(esc), "\\r");
			break;
		case '"':
		case '\\':
			k = (size_t) snprintf(esc, sizeof(esc), "\\%c", c);
			break;
		default:
			if (c >= 0x20 && c < 0x7f) {
				esc[0] = (char) c;
				esc[1] = 0;
				k = 1;
			} else
				k = (size_t) snprintf(esc, sizeof(esc), "\\x%02x", c);
		}
		if (o + k + 5 >= size) {
			n = 0; /* out of room: mark as cut */
			len = max + 1;
			break;
		}
		memcpy(out + o, esc, k);
		o += k;
	}
	out[o++] = '"';
	if (len > max && o + 4 <= size) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = 0;
	return o;
}

/* ---- the writer ---- */

static void *writer_main(void *userdata)
{
	Audit *a = userdata;

	pthread_mutex_lock(&a->lock);
	for (;;) {
		char *chunk;
		size_t n;
		int r;

		while (a->len < FLUSH_THRESHOLD && !a->stopping) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += FLUSH_INTERVAL_MS * 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			if (pthread_cond_timedwait(&a->wake, &a->lock, &ts) != 0 && a->len > 0)
				break; /* periodic flush, so a log being followed stays current */
		}
		if (a->len == 0) {
			if (a->stopping)
				break;
			continue;
		}
		/* swap the buffers and write outside the lock */
		chunk = a->buf;
		n = a->len;
		a->buf = a->spare;
		a->spare = chunk;
		{
			size_t c = a->cap;

			a->cap = a->spare_cap;
			a->spare_cap = c;
		}
		a->len = 0;
		a->writing = true;
		pthread_cond_broadcast(&a->space);
		pthread_mutex_unlock(&a->lock);

		r = a->error ? 0 : write_all(a->fd, chunk, n);

		pthread_mutex_lock(&a->lock);
		a->writing = false;
		if (r < 0 && !a->error)
			a->error = r;
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

static void append(Audit *a, const char *text, size_t n)
{
	pthread_mutex_lock(&a->lock);
	while (a->len > 0 && a->len + n > AUDIT_BUFFER_MAX && !a->stopping && !a->error) {
		/* the writer is behind: wait for it rather than lose records */
		pthread_cond_signal(&a->wake);
		pthread_cond_wait(&a->space, &a->lock);
	}
	if (a->error) {
		pthread_mutex_unlock(&a->lock);
		return;
	}
	if (a->len + n > a->cap) {
		size_t cap = MAX(a->cap * 2, MAX(a->len + n, (size_t) FLUSH_THRESHOLD * 2));
		char *b = realloc(a->buf, cap);

		if (!b) {
			a->error = -ENOMEM;
			pthread_mutex_unlock(&a->lock);
			return;
		}
		a->buf = b;
		a->cap = cap;
	}
	memcpy(a->buf + a->len, text, n);
	a->len += n;
	if (a->len >= FLUSH_THRESHOLD && !a->writing)
		pthread_cond_signal(&a->wake);
	pthread_mutex_unlock(&a->lock);
}

/* ---- opening and closing ---- */

/* AUDIT_SELECT_LIST: the bitmap of the named syscalls' numbers (< 1024). */
static void select_bitmap(char *const *names, uint64_t nrs[16])
{
	for (size_t i = 0; names && names[i]; i++) {
		int nr = sbx_syscall_number(names[i]);

		if (nr >= 0 && nr < 1024)
			nrs[nr / 64] |= 1ULL << (nr % 64);
	}
}

int audit_open(const AuditOptions *o, Audit **ret)
{
	_cleanup_close_ int fd = o->log_fd;
	Audit *a;
	int r;

	if (!o->log_path && fd < 0 && !o->trace && !o->trace_logged) {
		*ret = NULL;
		return 0;
	}
	if (o->log_path) {
		fd = open(o->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0600);
		if (fd < 0)
			return -errno;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->procs = calloc(PROC_SLOTS, sizeof(AuditProc));
	if (!a->procs) {
		free(a);
		return -ENOMEM;
	}
	a->fd = TAKE_FD(fd);
	a->trace = o->trace;
	a->trace_logged = o->trace_logged;
	a->events = o->events ? o->events : AUDIT_EVENT_ALL;
	a->disassembly = o->disassembly;
	select_bitmap(o->disassembly_syscalls, a->disassembly_nrs);
	a->backtrace = o->backtrace;
	select_bitmap(o->backtrace_syscalls, a->backtrace_nrs);
	a->start_ns = now_monotonic_ns();
	pthread_mutex_init(&a->lock, NULL);
	pthread_mutex_init(&a->proc_lock, NULL);
	pthread_cond_init(&a->wake, NULL);
	pthread_cond_init(&a->space, NULL);
	if (a->fd >= 0) {
		r = -pthread_create(&a->writer, NULL, writer_main, a);
		if (r < 0) {
			(void) close(a->fd);
			free(a->procs);
			free(a);
			return r;
		}
		a->writer_started = true;
	}
	*ret = a;
	return 0;
}

int audit_close(Audit *a)
{
	int r;

	if (!a)
		return 0;
	pthread_mutex_lock(&a->lock);
	a->stopping = true;
	pthread_cond_broadcast(&a->wake);
	pthread_cond_broadcast(&a->space);
	pthread_mutex_unlock(&a->lock);
	if (a->writer_started)
		(void) pthread_join(a->writer, NULL);
	r = a->error;
	if (a->fd >= 0 && close(a->fd) < 0 && !r)
		r = -errno;
	pthread_mutex_destroy(&a->lock);
	pthread_mutex_destroy(&a->proc_lock);
	pthread_cond_destroy(&a->wake);
	pthread_cond_destroy(&a->space);
	free(a->buf);
	free(a->spare);
	free(a->procs);
	free(a);
	return r;
}

Audit *audit_free(Audit *a)
{
	(void) audit_close(a);
	return NULL;
}

static bool selected(int select, const uint64_t *nrs, int nr, bool denied)
{
	switch (select) {
	case AUDIT_SELECT_ALL:
		return true;
	case AUDIT_SELECT_DENIED:
		return denied;
	case AUDIT_SELECT_LIST:
		return nr >= 0 && nr < 1024 && (nrs[nr / 64] & (1ULL << (nr % 64)));
	default:
		return false;
	}
}

bool audit_wants_disassembly(const Audit *a, int nr, bool denied)
{
	if (!a || a->fd < 0 || !HAVE_CAPSTONE)
		return false;
	return selected(a->disassembly, a->disassembly_nrs, nr, denied);
}

bool audit_wants_backtrace(const Audit *a, int nr, bool denied)
{
	if (!a || a->fd < 0)
		return false;
	return selected(a->backtrace, a->backtrace_nrs, nr, denied);
}

void audit_set_main_pid(Audit *a, pid_t pid)
{
	if (a)
		atomic_store(&a->main_pid, pid);
}

static bool wants(const Audit *a, unsigned category, bool denied)
{
	return (a->events & category) || (denied && (a->events & AUDIT_EVENT_DENIED));
}

bool audit_wants_syscall(const Audit *a, int nr, bool denied, bool log)
{
	if (!a)
		return false;
	if (a->trace || (log && (a->trace_logged || a->fd >= 0)))
		return true;
	return a->fd >= 0 && wants(a, audit_syscall_info(nr)->category, denied);
}

/* ---- the per-process cache ---- */

/* Returns the slot of pid, creating it when absent (*ret_new); the proc lock is held. When the
 * table is full it is emptied: a bound on memory, at the price of "seen" events repeating. */
static AuditProc *proc_slot(Audit *a, pid_t pid, bool *ret_new)
{
	size_t i = ((size_t) pid * 2654435761u) & (PROC_SLOTS - 1);

	*ret_new = false;
	for (size_t k = 0; k < PROC_SLOTS; k++, i = (i + 1) & (PROC_SLOTS - 1)) {
		if (a->procs[i].pid == pid)
			return &a->procs[i];
		if (a->procs[i].pid == 0)
			break;
	}
	if (a->n_procs >= PROC_SLOTS * 3 / 4) {
		memset(a->procs, 0, PROC_SLOTS * sizeof(AuditProc));
		a->n_procs = 0;
		i = ((size_t) pid * 2654435761u) & (PROC_SLOTS - 1);
	}
	while (a->procs[i].pid != 0)
		i = (i + 1) & (PROC_SLOTS - 1);
	memset(&a->procs[i], 0, sizeof(AuditProc));
	a->procs[i].pid = pid;
	a->n_procs++;
	*ret_new = true;
	return &a->procs[i];
}

static void read_comm(pid_t pid, char *buf, size_t size)
{
	char path[64], *nl;
	_cleanup_close_ int fd = -1;
	ssize_t n;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int) pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, size - 1);
	if (n <= 0) {
		buf[0] = 0;
		return;
	}
	buf[n] = 0;
	nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
}

static pid_t read_ppid(pid_t pid)
{
	_cleanup_free_ char *text = NULL;
	char path[64], *p;
	size_t len;
	int ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
	if (read_full_file(AT_FDCWD, path, 4096, &text, &len) < 0)
		return 0;
	p = strrchr(text, ')'); /* comm may hold spaces and parentheses */
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return 0;
	return ppid;
}

static bool is_libc_mapping(const char *path)
{
	const char *base = strrchr(path, '/');

	if (streq(path, "[vdso]"))
		return true;
	base = base ? base + 1 : path;
	return strncmp(base, "libc.so", 7) == 0 || strncmp(base, "libc-", 5) == 0 ||
	       strncmp(base, "ld-linux", 8) == 0 || strncmp(base, "ld-musl", 7) == 0 ||
	       strncmp(base, "libc.musl", 9) == 0 || strncmp(base, "libpthread", 10) == 0;
}

static void read_maps(AuditProc *p)
{
	_cleanup_free_ char *text = NULL;
	char path[64];
	size_t len;

	p->maps_read = true;
	p->maps_reads++;
	p->n_ranges = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int) p->pid);
	if (read_full_file(AT_FDCWD, path, 4 * 1024 * 1024, &text, &len) < 0) {
		p->maps_read = false;
		return;
	}
	for (char *line = text, *next; line && *line; line = next) {
		unsigned long long lo, hi;
		char perms[8];
		int off = 0;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %n", &lo, &hi, perms, &off) < 3 ||
		    off <= 0)
			continue;
		if (perms[2] != 'x' || !is_libc_mapping(line + off))
			continue;
		if (p->n_ranges < RANGES_MAX) {
			p->range[p->n_ranges][0] = lo;
			p->range[p->n_ranges][1] = hi;
			p->n_ranges++;
		}
	}
}

static bool in_ranges(const AuditProc *p, uint64_t ip)
{
	for (size_t i = 0; i < p->n_ranges; i++)
		/* ip is after the 2-byte syscall instruction: the instruction starts at ip - 2 */
		if (ip - 2 >= p->range[i][0] && ip - 2 < p->range[i][1])
			return true;
	return false;
}

int audit_outside_libc(Audit *a, pid_t tgid, uint64_t ip)
{
	AuditProc *p;
	bool is_new;
	int r;

	if (!a || ip < 2)
		return -1;
	pthread_mutex_lock(&a->proc_lock);
	p = proc_slot(a, tgid, &is_new);
	if (!p->maps_read || (!in_ranges(p, ip) && p->maps_reads < MAPS_READS_MAX))
		read_maps(p);
	if (!p->maps_read)
		r = -1;
	else
		r = !in_ranges(p, ip);
	pthread_mutex_unlock(&a->proc_lock);
	return r;
}

bool audit_known_process(Audit *a, pid_t pid)
{
	size_t i = ((size_t) pid * 2654435761u) & (PROC_SLOTS - 1);
	bool found = false;

	if (!a)
		return false;
	pthread_mutex_lock(&a->proc_lock);
	for (size_t k = 0; k < PROC_SLOTS; k++, i = (i + 1) & (PROC_SLOTS - 1)) {
		if (a->procs[i].pid == pid) {
			found = true;
			break;
		}
		if (a->procs[i].pid == 0)
			break;
	}
	pthread_mutex_unlock(&a->proc_lock);
	return found;
}

void audit_process_exec_done(Audit *a, pid_t tgid)
{
	AuditProc *p;
	bool is_new;

	if (!a)
		return;
	pthread_mutex_lock(&a->proc_lock);
	p = proc_slot(a, tgid, &is_new);
	p->maps_read = false;
	p->maps_reads = 0;
	p->n_ranges = 0;
	p->comm[0] = 0;
	pthread_mutex_unlock(&a->proc_lock);
}

/* ---- records ---- */

static void begin_record(const Audit *a, JsonWriter *w, const char *type)
{
	char ts[96];
	struct timespec now;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, now.tv_nsec / 1000);
	jw_init(w, -1);
	jw_begin_object(w);
	jw_key(w, "v");
	jw_int(w, AUDIT_SCHEMA_VERSION);
	jw_key(w, "type");
	jw_string(w, type);
	jw_key(w, "time");
	jw_string(w, ts);
	jw_key(w, "t_us");
	jw_uint(w, (now_monotonic_ns() - a->start_ns) / 1000);
}

static void end_record(Audit *a, JsonWriter *w)
{
	_cleanup_free_ char *text = NULL;
	size_t len;

	jw_end_object(w);
	if (jw_finish(w, &text, &len) < 0)
		return;
	text[len] = '\n'; /* replaces the NUL: the writer hands out len + 1 bytes */
	append(a, text, len + 1);
}

static void write_argv(JsonWriter *w, char *const *argv)
{
	jw_begin_array(w);
	for (size_t i = 0; argv && argv[i]; i++)
		jw_string(w, argv[i]);
	jw_end_array(w);
}

static void trace_write(const char *line, size_t len)
{
	(void) write_all(STDERR_FILENO, line, len);
}

/* Looks pid up in the cache: fills comm, and emits a "seen" process event the first time. */
static void lookup_process(Audit *a, pid_t pid, char *comm, size_t size)
{
	AuditProc *p;
	bool is_new, emit = false;
	pid_t ppid = 0;

	pthread_mutex_lock(&a->proc_lock);
	p = proc_slot(a, pid, &is_new);
	if (!p->comm[0])
		read_comm(pid, p->comm, sizeof(p->comm));
	emit = !p->seen;
	p->seen = true;
	snprintf(comm, size, "%s", p->comm);
	pthread_mutex_unlock(&a->proc_lock);

	if (!emit || a->fd < 0 || !(a->events & AUDIT_EVENT_PROCESS))
		return;
	ppid = read_ppid(pid);
	{
		JsonWriter w;

		begin_record(a, &w, "process");
		jw_key(&w, "event");
		jw_string(&w, "seen");
		jw_key(&w, "pid");
		jw_int(&w, pid);
		jw_key(&w, "ppid");
		jw_int(&w, ppid);
		jw_key(&w, "comm");
		jw_string(&w, comm);
		end_record(a, &w);
	}
}

static void json_arg(JsonWriter *w, const AuditSyscallInfo *info, const AuditRecord *r, size_t i)
{
	const AuditArgData *d = &r->data[i];
	AuditArgType type = info->type[i];
	uint64_t v = r->args[i];
	char buf[256];

	jw_key(w, info->arg_name[i]);
	switch (type) {
	case AUDIT_ARG_PATH:
	case AUDIT_ARG_STRING:
		if (d->str)
			jw_string(w, d->str);
		else
			jw_string(w, audit_format_scalar(AUDIT_ARG_PTR, v, buf, sizeof(buf)));
		if (d->str && d->truncated) {
			snprintf(buf, sizeof(buf), "%s_truncated", info->arg_name[i]);
			jw_key(w, buf);
			jw_bool(w, true);
		}
		return;
	case AUDIT_ARG_SOCKADDR:
		if (!d->str) {
			jw_string(w, audit_format_scalar(AUDIT_ARG_PTR, v, buf, sizeof(buf)));
			return;
		}
		jw_begin_object(w);
		jw_key(w, "family");
		jw_string(w, audit_format_domain((uint64_t) d->family, buf, sizeof(buf)));
		if (d->address) {
			jw_key(w, "address");
			jw_string(w, d->address);
		}
		if (d->port >= 0) {
			jw_key(w, "port");
			jw_int(w, d->port);
		}
		jw_key(w, "text");
		jw_string(w, d->str);
		jw_end_object(w);
		return;
	case AUDIT_ARG_ARGV:
		if (!d->argv) {
			jw_string(w, audit_format_scalar(AUDIT_ARG_PTR, v, buf, sizeof(buf)));
			return;
		}
		write_argv(w, d->argv);
		if (d->argv_truncated) {
			snprintf(buf, sizeof(buf), "%s_truncated", info->arg_name[i]);
			jw_key(w, buf);
			jw_bool(w, true);
		}
		return;
	default:
		if (!audit_arg_is_number(type, v)) {
			jw_string(w, audit_format_scalar(type, v, buf, sizeof(buf)));
			return;
		}
		if (type == AUDIT_ARG_LONG)
			jw_int(w, (int64_t) v);
		else
			jw_int(w, (int32_t) v);
	}
}

static void log_syscall(Audit *a, const AuditSyscallInfo *info, const AuditRecord *r,
			const char *comm)
{
	JsonWriter w;
	char buf[32];

	begin_record(a, &w, "syscall");
	jw_key(&w, "pid");
	jw_int(&w, r->pid);
	jw_key(&w, "tid");
	jw_int(&w, r->tid);
	jw_key(&w, "comm");
	jw_string(&w, comm);
	jw_key(&w, "syscall");
	jw_string(&w, info->name);
	jw_key(&w, "nr");
	jw_int(&w, r->nr);
	jw_key(&w, "category");
	jw_string(&w, audit_category_to_string(info->category));
	jw_key(&w, "args");
	jw_begin_object(&w);
	for (size_t i = 0; i < info->n_args; i++)
		json_arg(&w, info, r, i);
	jw_end_object(&w);
	if (r->path && r->path[0]) {
		jw_key(&w, "path");
		jw_string(&w, r->path);
	}
	if (r->host_path && r->host_path[0]) {
		jw_key(&w, "host_path");
		jw_string(&w, r->host_path);
	}
	jw_key(&w, "decision");
	jw_string(&w, audit_decision_to_string(r->decision));
	jw_key(&w, "result");
	if (r->decision == AUDIT_ALLOWED || r->decision == AUDIT_KILLED)
		jw_null(&w);
	else if (r->error)
		jw_int(&w, -1);
	else
		jw_int(&w, r->ret);
	if (r->error) {
		const char *e = errno_to_name(r->error);

		jw_key(&w, "errno");
		if (e)
			jw_string(&w, e);
		else {
			snprintf(buf, sizeof(buf), "%d", r->error);
			jw_string(&w, buf);
		}
	}
	if (r->why) {
		jw_key(&w, "why");
		jw_string(&w, r->why);
	}
	if (r->out_of_view) {
		jw_key(&w, "out_of_view");
		jw_string(&w, r->out_of_view);
	}
	jw_key(&w, "latency_us");
	jw_uint(&w, r->latency_ns / 1000);
	if (r->ip) {
		snprintf(buf, sizeof(buf), "%#llx", (unsigned long long) r->ip);
		jw_key(&w, "ip");
		jw_string(&w, buf);
	}
	jw_key(&w, "outside_libc");
	if (r->outside_libc < 0)
		jw_null(&w);
	else
		jw_bool(&w, r->outside_libc > 0);
	if (r->log) {
		jw_key(&w, "policy_log");
		jw_bool(&w, true);
	}
	if (r->code && r->ip >= 2) {
		AuditInsn insn[12];
		size_t n = audit_disassemble(r->code, r->code_len, r->code_addr, r->ip - 2, insn,
					     ARRAY_SIZE(insn));

		jw_key(&w, "disassembly");
		jw_begin_array(&w);
		for (size_t i = 0; i < n; i++) {
			snprintf(buf, sizeof(buf), "%#llx", (unsigned long long) insn[i].addr);
			jw_begin_object(&w);
			jw_key(&w, "addr");
			jw_string(&w, buf);
			jw_key(&w, "insn");
			jw_string(&w, insn[i].text);
			if (insn[i].site) {
				jw_key(&w, "site");
				jw_bool(&w, true);
			}
			jw_end_object(&w);
		}
		jw_end_array(&w);
	}
	if (r->frames) {
		jw_key(&w, "backtrace");
		jw_begin_array(&w);
		for (size_t i = 0; i < r->n_frames; i++) {
			const AuditFrame *f = &r->frames[i];

			snprintf(buf, sizeof(buf), "%#llx", (unsigned long long) f->ip);
			jw_begin_object(&w);
			jw_key(&w, "ip");
			jw_string(&w, buf);
			jw_key(&w, "function");
			if (f->function[0])
				jw_string(&w, f->function);
			else
				jw_null(&w);
			if (f->function[0]) {
				jw_key(&w, "offset");
				jw_uint(&w, f->offset);
			}
			jw_key(&w, "module");
			if (f->module[0])
				jw_string(&w, f->module);
			else
				jw_null(&w);
			jw_end_object(&w);
		}
		jw_end_array(&w);
	} else if (r->backtrace_error) {
		jw_key(&w, "backtrace_error");
		jw_string(&w, r->backtrace_error);
	}
	end_record(a, &w);
}

/* Appends to a trace line; returns the new length (never past size - 1). */
static size_t tappend(char *line, size_t len, size_t size, const char *fmt, ...) _printf_(4, 5);
static size_t tappend(char *line, size_t len, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (len >= size - 1)
		return len;
	va_start(ap, fmt);
	n = vsnprintf(line + len, size - len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return len;
	return MIN(len + (size_t) n, size - 1);
}

static void trace_syscall(Audit *a, const AuditSyscallInfo *info, const AuditRecord *r)
{
	char line[8192], q[AUDIT_TRACE_STRING_MAX * 4 + 16], buf[256];
	size_t len = 0;
	pid_t main_pid = atomic_load(&a->main_pid);

	if (r->pid != main_pid || r->tid != r->pid)
		len = tappend(line, len, sizeof(line), "[pid %d] ", (int) r->tid);
	len = tappend(line, len, sizeof(line), "%s(", info->name);
	for (size_t i = 0; i < info->n_args; i++) {
		const AuditArgData *d = &r->data[i];
		AuditArgType type = info->type[i];
		const char *sep = i ? ", " : "";

		switch (type) {
		case AUDIT_ARG_PATH:
		case AUDIT_ARG_STRING:
			if (d->str) {
				audit_quote(d->str, strlen(d->str), AUDIT_TRACE_STRING_MAX, q,
					    sizeof(q));
				len = tappend(line, len, sizeof(line), "%s%s%s", sep, q,
					      d->truncated ? "..." : "");
				continue;
			}
			break;
		case AUDIT_ARG_SOCKADDR:
			if (d->str) {
				len = tappend(line, len, sizeof(line), "%s{%s}", sep, d->str);
				continue;
			}
			break;
		case AUDIT_ARG_ARGV:
			if (d->argv) {
				len = tappend(line, len, sizeof(line), "%s[", sep);
				for (size_t k = 0; d->argv[k]; k++) {
					audit_quote(d->argv[k], strlen(d->argv[k]),
						    AUDIT_TRACE_STRING_MAX, q, sizeof(q));
					len = tappend(line, len, sizeof(line), "%s%s",
						      k ? ", " : "", q);
				}
				len = tappend(line, len, sizeof(line), "%s]",
					      d->argv_truncated ? ", ..." : "");
				continue;
			}
			break;
		default:
			break;
		}
		len = tappend(line, len, sizeof(line), "%s%s", sep,
			      audit_format_scalar(type == AUDIT_ARG_PATH ||
								  type == AUDIT_ARG_STRING ||
								  type == AUDIT_ARG_SOCKADDR ||
								  type == AUDIT_ARG_ARGV
							  ? AUDIT_ARG_PTR
							  : type,
						  r->args[i], buf, sizeof(buf)));
	}
	len = tappend(line, len, sizeof(line), ")");
	switch (r->decision) {
	case AUDIT_ALLOWED:
		len = tappend(line, len, sizeof(line), " = ? (allowed)");
		break;
	case AUDIT_KILLED:
		len = tappend(line, len, sizeof(line), " = ? (killed: %s)",
			      r->why ? r->why : "policy");
		break;
	default:
		if (!r->error) {
			len = tappend(line, len, sizeof(line), " = %lld", (long long) r->ret);
			break;
		}
		{
			const char *e = errno_to_name(r->error);

			if (e)
				len = tappend(line, len, sizeof(line), " = -1 %s", e);
			else
				len = tappend(line, len, sizeof(line), " = -1 errno %d", r->error);
		}
		if (r->decision == AUDIT_DENIED)
			len = tappend(line, len, sizeof(line), " (denied: %s)",
				      r->why ? r->why : "policy");
		else
			len = tappend(line, len, sizeof(line), " (%s)", strerror(r->error));
	}
	if (r->outside_libc > 0)
		len = tappend(line, len, sizeof(line), " [outside libc]");
	len = tappend(line, len, sizeof(line), "\n");
	if (line[len - 1] != '\n')
		line[len - 1] = '\n';
	trace_write(line, len);
}

void audit_syscall(Audit *a, const AuditRecord *r)
{
	const AuditSyscallInfo *info;
	bool denied;
	char comm[32];

	if (!a)
		return;
	info = audit_syscall_info(r->nr);
	denied = r->decision == AUDIT_DENIED || r->decision == AUDIT_KILLED;
	if (a->trace || (r->log && a->trace_logged))
		trace_syscall(a, info, r);
	if (a->fd < 0 || !(r->log || wants(a, info->category, denied)))
		return;
	lookup_process(a, r->pid, comm, sizeof(comm));
	log_syscall(a, info, r, comm);
}

/* ---- run, process, budget and ratchet events ---- */

void audit_run_start(Audit *a, const char *policy, char *const *argv, const char *view,
		     const char *view_reason)
{
	JsonWriter w;

	if (!a || a->fd < 0)
		return;
	begin_record(a, &w, "run");
	jw_key(&w, "event");
	jw_string(&w, "start");
	jw_key(&w, "sbxtrace");
	jw_string(&w, SBX_VERSION);
	jw_key(&w, "policy");
	jw_string(&w, policy ? policy : "");
	jw_key(&w, "argv");
	write_argv(&w, argv);
	jw_key(&w, "events");
	jw_begin_array(&w);
	for (unsigned bit = 1; bit < AUDIT_EVENT_ALL; bit <<= 1)
		if (a->events & bit)
			jw_string(&w, audit_category_to_string(bit));
	jw_end_array(&w);
	jw_key(&w, "view");
	if (view)
		jw_string(&w, view);
	else
		jw_null(&w);
	jw_key(&w, "view_reason");
	if (view_reason && view_reason[0])
		jw_string(&w, view_reason);
	else
		jw_null(&w);
	end_record(a, &w);
}

void audit_run_end(Audit *a, int exit_code, int signal, const char *killed_by, uint64_t denied,
		   uint64_t duration_ms)
{
	JsonWriter w;

	if (!a || a->fd < 0)
		return;
	begin_record(a, &w, "run");
	jw_key(&w, "event");
	jw_string(&w, "end");
	jw_key(&w, "exit_code");
	jw_int(&w, exit_code);
	jw_key(&w, "signal");
	jw_int(&w, signal);
	jw_key(&w, "killed_by");
	if (killed_by)
		jw_string(&w, killed_by);
	else
		jw_null(&w);
	jw_key(&w, "denied");
	jw_uint(&w, denied);
	jw_key(&w, "duration_ms");
	jw_uint(&w, duration_ms);
	end_record(a, &w);
}

void audit_process_start(Audit *a, pid_t pid, pid_t ppid, char *const *argv)
{
	JsonWriter w;

	if (!a || a->fd < 0 || !(a->events & AUDIT_EVENT_PROCESS))
		return;
	begin_record(a, &w, "process");
	jw_key(&w, "event");
	jw_string(&w, "start");
	jw_key(&w, "pid");
	jw_int(&w, pid);
	jw_key(&w, "ppid");
	jw_int(&w, ppid);
	jw_key(&w, "argv");
	write_argv(&w, argv);
	end_record(a, &w);
}

void audit_process_exit(Audit *a, pid_t pid, int exit_code, int signal)
{
	JsonWriter w;
	char buf[32];

	if (!a)
		return;
	if (a->trace) {
		char line[128];
		int n;

		char who[32] = "";

		if (pid != atomic_load(&a->main_pid))
			snprintf(who, sizeof(who), "[pid %d] ", (int) pid);
		if (signal > 0)
			n = snprintf(line, sizeof(line), "%s+++ killed by %s +++\n", who,
				     audit_format_signal((uint64_t) signal, buf, sizeof(buf)));
		else
			n = snprintf(line, sizeof(line), "%s+++ exited with %d +++\n", who,
				     exit_code);
		trace_write(line, (size_t) MIN(n, (int) sizeof(line) - 1));
	}
	if (a->fd < 0 || !(a->events & AUDIT_EVENT_PROCESS))
		return;
	begin_record(a, &w, "process");
	jw_key(&w, "event");
	jw_string(&w, "exit");
	jw_key(&w, "pid");
	jw_int(&w, pid);
	jw_key(&w, "exit_code");
	if (signal > 0)
		jw_null(&w);
	else
		jw_int(&w, exit_code);
	jw_key(&w, "signal");
	if (signal > 0)
		jw_string(&w, audit_format_signal((uint64_t) signal, buf, sizeof(buf)));
	else
		jw_null(&w);
	end_record(a, &w);
}

void audit_budget_event(Audit *a, const char *budget, uint64_t limit, uint64_t used,
			const char *unit, const char *action, pid_t pid)
{
	JsonWriter w;

	if (!a)
		return;
	if (a->trace) {
		char line[256];
		int n = snprintf(
			line, sizeof(line), "+++ budget %s exceeded: %llu of %llu %s (%s) +++\n",
			budget ? budget : "?", (unsigned long long) used,
			(unsigned long long) limit, unit ? unit : "", action ? action : "");

		trace_write(line, (size_t) MIN(n, (int) sizeof(line) - 1));
	}
	if (a->fd < 0 || !(a->events & AUDIT_EVENT_BUDGET))
		return;
	begin_record(a, &w, "budget");
	jw_key(&w, "budget");
	jw_string(&w, budget ? budget : "");
	jw_key(&w, "limit");
	jw_uint(&w, limit);
	jw_key(&w, "used");
	jw_uint(&w, used);
	jw_key(&w, "unit");
	jw_string(&w, unit ? unit : "");
	jw_key(&w, "action");
	jw_string(&w, action ? action : "");
	jw_key(&w, "pid");
	jw_int(&w, pid);
	end_record(a, &w);
}

void audit_ratchet_event(Audit *a, pid_t pid, const char *path, const char *level,
			 const char *from_mode, const char *to_mode, unsigned sockets_shut)
{
	JsonWriter w;

	if (!a)
		return;
	if (a->trace) {
		char line[8192], q[AUDIT_TRACE_STRING_MAX * 4 + 16];
		int n;

		audit_quote(path ? path : "", path ? strlen(path) : 0, AUDIT_TRACE_STRING_MAX, q,
			    sizeof(q));
		n = snprintf(line, sizeof(line),
			     "[pid %d] +++ ratchet: opened %s (%s): network %s -> %s +++\n",
			     (int) pid, q, level ? level : "?", from_mode ? from_mode : "?",
			     to_mode ? to_mode : "?");
		trace_write(line, (size_t) MIN(n, (int) sizeof(line) - 1));
	}
	if (a->fd < 0 || !(a->events & AUDIT_EVENT_RATCHET))
		return;
	begin_record(a, &w, "ratchet");
	jw_key(&w, "pid");
	jw_int(&w, pid);
	jw_key(&w, "path");
	jw_string(&w, path ? path : "");
	jw_key(&w, "level");
	jw_string(&w, level ? level : "");
	jw_key(&w, "from");
	jw_string(&w, from_mode ? from_mode : "");
	jw_key(&w, "to");
	jw_string(&w, to_mode ? to_mode : "");
	jw_key(&w, "sockets_shut");
	jw_uint(&w, sockets_shut);
	end_record(a, &w);
}

void audit_approval_event(Audit *a, const char *event, const char *id, pid_t pid, const char *op,
			  const char *destination, const char *name, const char *channel,
			  const char *decision, const char *decider, const char *note,
			  const char *reason, uint64_t waited_ms, bool timed_out,
			  uint64_t timeout_ms)
{
	JsonWriter w;

	if (!a)
		return;
	if (a->trace) {
		char line[1024];
		int n = snprintf(line, sizeof(line), "[pid %d] +++ ask %s %s: %s %s%s%s%s%s%s +++\n",
				 (int) pid, id ? id : "?", event, op ? op : "?",
				 destination ? destination : "?", name ? " (" : "", name ? name : "",
				 name ? ")" : "", decision ? ": " : "", decision ? decision : "");

		trace_write(line, (size_t) MIN(n, (int) sizeof(line) - 1));
	}
	if (a->fd < 0)
		return;
	begin_record(a, &w, "approval");
	jw_key(&w, "event");
	jw_string(&w, event);
	jw_key(&w, "id");
	jw_string(&w, id ? id : "");
	jw_key(&w, "pid");
	jw_int(&w, pid);
	jw_key(&w, "op");
	jw_string(&w, op ? op : "");
	jw_key(&w, "destination");
	jw_string(&w, destination ? destination : "");
	if (name) {
		jw_key(&w, "name");
		jw_string(&w, name);
	}
	jw_key(&w, "channel");
	jw_string(&w, channel ? channel : "");
	jw_key(&w, "timeout_ms");
	jw_uint(&w, timeout_ms);
	if (decision) {
		jw_key(&w, "decision");
		jw_string(&w, decision);
		jw_key(&w, "decider");
		jw_string(&w, decider ? decider : "");
		jw_key(&w, "waited_ms");
		jw_uint(&w, waited_ms);
		jw_key(&w, "timed_out");
		jw_bool(&w, timed_out);
	}
	if (note) {
		jw_key(&w, "note");
		jw_string(&w, note);
	}
	if (reason) {
		jw_key(&w, "reason");
		jw_string(&w, reason);
	}
	end_record(a, &w);
}
