/* SPDX-License-Identifier: MIT */
/*
 * What a session keeps of its history (docs/agents.md, "Records"):
 *  - audit.jsonl: one JSON line per tool call and per session event (created, ratchet,
 *    expired), with a sequence number and the SHA-256 of the previous line, so a line taken
 *    out or changed shows;
 *  - artifacts/executions/<timestamp>_<hash>.json: each execution's result and, as the
 *    operator's store_code says, its code.
 * Both are written by the server, outside the sandbox's view (the session directory is not
 * mounted; only workspace/ and run/ are). Best effort: a full disk loses a record, not the
 * call.
 */
#include "agent/internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/util.h"

void record_sha256(const void *data, size_t len, char out[65])
{
	uint8_t d[AGENT_SHA256_SIZE];

	out[0] = 0;
	if (agent_sha256(data, len, d) < 0)
		return;
	for (size_t i = 0; i < sizeof(d); i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* The last line's sequence number and hash, read back from the end of the log. */
static void last_line(int fd, uint64_t *ret_seq, char ret_hash[65])
{
	char buf[8192];
	off_t end = lseek(fd, 0, SEEK_END), from = end > (off_t) sizeof(buf) - 1 ? end - (off_t) sizeof(buf) + 1 : 0;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, from);
	char *line;
	json_t *j;

	*ret_seq = 0;
	strcpy(ret_hash, "0");
	if (n <= 0)
		return;
	buf[n] = 0;
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = 0;
	line = strrchr(buf, '\n');
	line = line ? line + 1 : buf;
	j = json_loads(line, 0, NULL);
	*ret_seq = json_integer_value(json_object_get(j, "seq"));
	record_sha256(line, strlen(line), ret_hash);
	json_decref(j);
}

void record_event(Session *s, const char *kind, json_t *fields)
{
	_cleanup_free_ char *path = strdup_printf("%s/audit.jsonl", s->dir);
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;
	char prev[65];
	uint64_t seq;
	json_t *e;

	if (!path)
		goto out;
	fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		goto out;
	/* one writer at a time per session: the sequence and the chain stay whole */
	pthread_mutex_lock(&s->lock);
	last_line(fd, &seq, prev);
	e = json_pack("{s:I, s:I, s:s, s:s, s:s}", "seq", (json_int_t) seq + 1, "time_ms",
		      (json_int_t) (now_realtime_ns() / 1000000), "kind", kind, "session_id", s->id,
		      "prev_sha256", prev);
	if (e && fields)
		json_object_update(e, fields);
	text = e ? json_dumps(e, JSON_COMPACT) : NULL;
	json_decref(e);
	if (text) {
		(void) write_all(fd, text, strlen(text));
		(void) write_all(fd, "\n", 1);
	}
	pthread_mutex_unlock(&s->lock);
out:
	json_decref(fields);
}

char *record_execution(Session *s, const ExecParams *p, json_t *result, bool failed)
{
	StoreCode sc = s->agent->config->store_code;
	char sha[65], stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	char *rel;
	_cleanup_free_ char *path = NULL;
	json_t *a;
	int r;

	record_sha256(p->code, strlen(p->code), sha);
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	rel = strdup_printf("artifacts/executions/%s_%.12s_%s.json", stamp, sha,
			    json_string_value(json_object_get(result, "execution_id")) ?: "x");
	if (!rel)
		return NULL;
	path = strdup_printf("%s/%s", s->dir, rel);
	a = json_pack("{s:s, s:s, s:O}", "language", p->language, "code_sha256", sha, "result",
		      result);
	if (!path || !a) {
		json_decref(a);
		free(rel);
		return NULL;
	}
	if (sc == STORE_CODE_ALWAYS || (sc == STORE_CODE_ON_ERROR && failed))
		json_object_set_new(a, "code", json_string(p->code));
	r = json_dump_file(a, path, JSON_INDENT(1));
	json_decref(a);
	if (r < 0) {
		free(rel);
		return NULL;
	}
	return rel;
}

/*
 * The syscall-level records of a run ([server] audit_syscalls: the run was given --audit
 * FILE in the session directory), merged into audit.jsonl so that code_audit pages one log:
 * each complete line from *offset on becomes a record of kind "syscall" (the run's syscall
 * records) or "sandbox_<type>" (its run, process, budget, ratchet, approval records), with
 * the execution id and the run's record as "record". At most RUN_IMPORT_MAX a run; what is
 * left over is counted in a "sandbox_records_dropped" record.
 */
#define RUN_IMPORT_MAX 100000

void record_import_run_log(Session *s, const char *path, uint64_t *offset, uint64_t *imported,
			   const char *execution_id)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	uint64_t dropped = 0;

	if (fd < 0 || lseek(fd, (off_t) *offset, SEEK_SET) < 0)
		return;
	f = fdopen(fd, "r");
	if (!f)
		return;
	fd = -1;
	while ((n = getline(&line, &cap, f)) > 0) {
		json_t *j;
		const char *type;
		char kind[48];

		if (line[n - 1] != '\n')
			break; /* a line the run is still writing: next time */
		*offset += (uint64_t) n;
		if (*imported >= RUN_IMPORT_MAX) {
			dropped++;
			continue;
		}
		j = json_loadb(line, (size_t) n, 0, NULL);
		type = json_string_value(json_object_get(j, "type"));
		if (!json_is_object(j) || !type) {
			json_decref(j);
			continue;
		}
		if (streq(type, "syscall"))
			snprintf(kind, sizeof(kind), "syscall");
		else
			snprintf(kind, sizeof(kind), "sandbox_%.32s", type);
		(*imported)++;
		record_event(s, kind, json_pack("{s:s, s:o}", "execution_id", execution_id, "record", j));
	}
	free(line);
	fclose(f);
	if (dropped)
		record_event(s, "sandbox_records_dropped",
			     json_pack("{s:s, s:I, s:I}", "execution_id", execution_id, "dropped",
				       (json_int_t) dropped, "max", (json_int_t) RUN_IMPORT_MAX));
}

char *record_run_log_path(Session *s, const char *execution_id)
{
	_cleanup_free_ char *dir = strdup_printf("%s/audit-runs", s->dir);

	if (!dir || (mkdir(dir, 0700) < 0 && errno != EEXIST))
		return NULL;
	return strdup_printf("%s/%s.jsonl", dir, execution_id);
}

int record_page(Session *s, uint64_t since_seq, size_t limit, char *const *kinds, json_t **ret)
{
	_cleanup_free_ char *path = strdup_printf("%s/audit.jsonl", s->dir);
	json_t *events = json_array(), *o;
	uint64_t next = since_seq, last = since_seq;
	bool more = false;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;

	if (!path || !events) {
		json_decref(events);
		return -ENOMEM;
	}
	f = fopen(path, "re");
	while (f && (n = getline(&line, &cap, f)) > 0) {
		json_t *j = json_loadb(line, (size_t) n, 0, NULL);
		uint64_t seq = (uint64_t) json_integer_value(json_object_get(j, "seq"));
		const char *kind = json_string_value(json_object_get(j, "kind"));

		if (!json_is_object(j) || seq <= since_seq) {
			json_decref(j);
			continue;
		}
		if (json_array_size(events) >= limit) {
			/* full: anything after the last one returned is for the next page */
			more = true;
			json_decref(j);
			break;
		}
		last = seq;
		if (kinds && kinds[0] && (!kind || !strv_contains(kinds, kind))) {
			json_decref(j);
			continue;
		}
		json_array_append_new(events, j);
		next = seq;
	}
	free(line);
	if (f)
		fclose(f);
	/* without more, every line up to `last` was read: the next page starts after it */
	if (!more)
		next = last;
	o = json_pack("{s:s, s:o, s:I, s:b}", "session_id", s->id, "events", events, "next_seq",
		      (json_int_t) next, "has_more", more);
	if (!o)
		return -ENOMEM;
	*ret = o;
	return 0;
}
