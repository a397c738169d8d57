/* SPDX-License-Identifier: MIT */
/*
 * The MCP tools of `sbxtrace mcp` (docs/agents.md, "Tools"). Names and argument names are
 * the contract of seed 003 and issue 16: code_create_sandbox, code_execute, code_write_file,
 * code_read_file, code_list_files, code_sandbox_info, code_mark_private,
 * code_destroy_sandbox. Each has an input and an output schema; each result carries
 * structuredContent and a short text; a failure the model can act on (bad path, unknown
 * session, non-zero exit, timeout) is a result with isError, never a protocol error.
 *
 * The tenant comes from the transport (stdio: "local"; HTTP: the bearer token), never from
 * the arguments: a tool call cannot name another tenant.
 */
#include "agent/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macros.h"
#include "common/util.h"

#define SID_SCHEMA "{\"type\":\"string\",\"description\":\"the handle code_create_sandbox returned\"}"
#define LIMITS_SCHEMA                                                                              \
	"{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"                     \
	"\"wall_s\":{\"type\":\"integer\",\"minimum\":1},\"cpu_s\":{\"type\":\"integer\","          \
	"\"minimum\":1},\"memory_mb\":{\"type\":\"integer\",\"minimum\":1},\"tasks\":{\"type\":"    \
	"\"integer\",\"minimum\":1},\"disk_mb\":{\"type\":\"integer\",\"minimum\":1},"              \
	"\"output_kb\":{\"type\":\"integer\",\"minimum\":1}}}"
#define MODES "[\"none\",\"loopback\",\"allowlist\",\"full\"]"
#define LANGS "[\"python\",\"javascript\",\"shell\"]"

static const char *tenant_of(McpCall *call)
{
	return mcp_call_conn(call)->tenant;
}

static json_t *unknown_session(const char *id)
{
	return mcp_result_error("unknown session '%.64s': it does not exist, expired after being "
				"idle, or was destroyed. Call code_create_sandbox for a new one.",
				id ? id : "");
}

/* The text block: the structured content as JSON (the spec's advice for old clients). */
static json_t *structured(json_t *o, bool is_error)
{
	_cleanup_free_ char *text = json_dumps(o, JSON_COMPACT);

	return mcp_result_structured(o, text, is_error);
}

static void digest_args(json_t *args, char out[65])
{
	_cleanup_free_ char *text = json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS);

	record_sha256(text ? text : "", text ? strlen(text) : 0, out);
}

/* One tool_call record in the session's audit log. */
static void audit_call(Session *s, const char *tool, json_t *args, json_t *summary,
		       uint64_t start_ns)
{
	char dig[65];
	const char *code = json_string_value(json_object_get(args, "code"));
	json_t *f;

	digest_args(args, dig);
	f = json_pack("{s:s, s:s, s:I}", "tool", tool, "args_sha256", dig, "duration_ms",
		      (json_int_t) ((now_monotonic_ns() - start_ns) / 1000000));
	if (!f)
		return;
	if (code) {
		char c[65];

		record_sha256(code, strlen(code), c);
		json_object_set_new(f, "code_sha256", json_string(c));
	}
	if (summary)
		json_object_set_new(f, "result", summary);
	record_event(s, "tool_call", f);
}

static void audit_call_owned(Session *s, const char *tool, json_t *args, json_t *summary,
			     uint64_t start_ns)
{
	if (args)
		audit_call(s, tool, args, summary, start_ns);
	else
		json_decref(summary);
	json_decref(args);
}

/* ---- code_create_sandbox ---- */

static json_t *create_result(Session *s)
{
	json_t *o;

	pthread_mutex_lock(&s->lock);
	o = session_info_locked(s);
	pthread_mutex_unlock(&s->lock);
	if (o)
		json_object_set_new(o, "language", json_string(s->language));
	return o;
}

static int tool_create(McpCall *call, json_t *args, void *userdata, json_t **ret)
{
	Agent *a = userdata;
	uint64_t start = now_monotonic_ns();
	char err[512];
	Session *s;
	json_t *o;
	int r;

	r = session_create(a, tenant_of(call), args, &s, err, sizeof(err));
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		*ret = mcp_result_error("cannot create the sandbox: %s", err);
		return 0;
	}
	record_event(s, "session_created", json_pack("{s:s, s:s}", "tenant", s->tenant, "policy",
						     s->policy_name));
	o = create_result(s);
	audit_call(s, "code_create_sandbox", args, NULL, start);
	session_put(s);
	if (!o)
		return -ENOMEM;
	*ret = structured(o, false);
	return 0;
}

/* ---- code_execute ---- */

/* The text block of a context's result: output, the value of the last expression, the
 * error. */
static json_t *render_context(const json_t *res)
{
	const char *out = json_string_value(json_object_get(res, "stdout"));
	const char *err = json_string_value(json_object_get(res, "stderr"));
	const json_t *results = json_object_get(res, "results"), *notices = json_object_get(res, "notices");
	const json_t *e = json_object_get(res, "error"), *x;
	char *buf = NULL;
	size_t size = 0, i;
	FILE *f = open_memstream(&buf, &size);
	json_t *j;

	if (!f)
		return json_string("");
	fprintf(f, "exit_code %lld in %lld ms", json_integer_value(json_object_get(res, "exit_code")),
		json_integer_value(json_object_get(res, "duration_ms")));
	if (json_is_true(json_object_get(res, "timed_out")))
		fputs(" (timed out: interrupted, the context's state is kept)", f);
	fputc('\n', f);
	json_array_foreach(notices, i, x)
		fprintf(f, "%s\n", json_string_value(x));
	if (out && *out)
		fprintf(f, "--- stdout ---\n%.16384s%s\n", out, strlen(out) > 16384 ? "\n[…]" : "");
	if (err && *err)
		fprintf(f, "--- stderr ---\n%.16384s%s\n", err, strlen(err) > 16384 ? "\n[…]" : "");
	json_array_foreach(results, i, x) {
		const char *t = json_string_value(json_object_get(x, "text/plain"));

		if (t)
			fprintf(f, "Out: %.16384s\n", t);
	}
	if (json_is_object(e) && !(err && *err))
		fprintf(f, "%s: %s\n", json_string_value(json_object_get(e, "name")) ?: "Error",
			json_string_value(json_object_get(e, "value")) ?: "");
	fclose(f);
	j = json_string(buf ? buf : "");
	free(buf);
	return j;
}

/* image/png results also as MCP image content, for clients that show or read images. */
static void add_images(json_t *result, const json_t *results)
{
	json_t *content = json_object_get(result, "content"), *x;
	size_t i;

	json_array_foreach((json_t *) results, i, x) {
		const char *png = json_string_value(json_object_get(x, "image/png"));

		if (png)
			json_array_append_new(content, json_pack("{s:s, s:s, s:s}", "type", "image",
								 "data", png, "mimeType", "image/png"));
	}
}

static int tool_execute(McpCall *call, json_t *args, void *userdata, json_t **ret)
{
	Agent *a = userdata;
	const char *sid = json_string_value(json_object_get(args, "session_id"));
	const char *in = json_string_value(json_object_get(args, "stdin"));
	const char *ctx = json_string_value(json_object_get(args, "context_id"));
	ExecParams p = {
		.language = json_string_value(json_object_get(args, "language")),
		.code = json_string_value(json_object_get(args, "code")),
		.stdin_data = in,
		.stdin_len = in ? json_string_length(json_object_get(args, "stdin")) : 0,
		.env = json_object_get(args, "env"),
		.timeout_s = json_integer_value(json_object_get(args, "timeout")),
	};
	uint64_t start = now_monotonic_ns();
	bool one_shot = !sid, failed;
	char err[512];
	Session *s;
	json_t *res = NULL, *text;
	char *artifact;
	int r;

	if (ctx && strspn(ctx, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") !=
			   strlen(ctx)) {
		*ret = mcp_result_error("context_id may hold letters, digits, '_', '.' and '-' only");
		return 0;
	}
	if (one_shot) {
		json_t *cargs = json_pack("{s:s}", "language", p.language);

		r = cargs ? session_create(a, tenant_of(call), cargs, &s, err, sizeof(err)) : -ENOMEM;
		json_decref(cargs);
		if (r == -ENOMEM)
			return r;
		if (r < 0) {
			*ret = mcp_result_error("cannot create a one-shot sandbox: %s", err);
			return 0;
		}
	} else {
		s = session_get(a, tenant_of(call), sid);
		if (!s) {
			*ret = unknown_session(sid);
			return 0;
		}
	}
	/* a context's interpreter is already running: its stdin and environment are its own */
	if (!one_shot && !json_is_true(json_object_get(args, "fresh")) &&
	    (p.stdin_data || json_object_size(p.env) > 0))
		json_object_set_new(args, "fresh", json_true());
	if (one_shot || json_is_true(json_object_get(args, "fresh")))
		r = exec_run(s, &p, call, &res, err, sizeof(err));
	else
		r = context_execute(s, ctx ? ctx : "default", &p, call, &res, err, sizeof(err));
	if (r < 0) {
		if (one_shot)
			session_destroy(s);
		session_put(s);
		if (r == -ENOMEM)
			return r;
		*ret = mcp_result_error("cannot execute: %s", err);
		return 0;
	}
	failed = json_integer_value(json_object_get(res, "exit_code")) != 0 ||
		 json_is_true(json_object_get(res, "timed_out")) ||
		 json_is_string(json_object_get(res, "killed_by")) ||
		 json_is_object(json_object_get(res, "error"));
	if (!json_object_get(res, "_text")) {
		/* a context's result: finish it as exec_run() does */
		pthread_mutex_lock(&s->lock);
		if (s->notice) {
			json_array_insert_new(json_object_get(res, "notices"), 0, json_string(s->notice));
			free(s->notice);
			s->notice = NULL;
		}
		json_object_set_new(res, "network_mode", json_string(net_mode_to_string(s->mode)));
		if (s->level)
			json_object_set_new(res, "level", json_string(sensitivity_to_string(s->level)));
		(void) session_save_locked(s);
		pthread_mutex_unlock(&s->lock);
		json_object_set_new(res, "session_id", json_string(s->id));
		json_object_set_new(res, "policy", json_string(s->policy_name));
		{
			char idbuf[32];

			snprintf(idbuf, sizeof(idbuf), "%s-%lld", json_string_value(json_object_get(res, "context_id")) ?: "ctx",
				 (long long) json_integer_value(json_object_get(res, "execution_count")));
			json_object_set_new(res, "execution_id", json_string(idbuf));
		}
		json_object_set_new(res, "_text", render_context(res));
	}
	text = json_incref(json_object_get(res, "_text"));
	json_object_del(res, "_text");
	if (one_shot)
		json_object_set_new(res, "session_id", json_null());
	else {
		artifact = record_execution(s, &p, res, failed);
		if (artifact)
			json_object_set_new(res, "artifact", json_string(artifact));
		free(artifact);
		audit_call(s, "code_execute", args,
			   json_pack("{s:O, s:O, s:O, s:O}", "exit_code",
				     json_object_get(res, "exit_code"), "timed_out",
				     json_object_get(res, "timed_out"), "killed_by",
				     json_object_get(res, "killed_by"), "network_mode",
				     json_object_get(res, "network_mode")),
			   start);
	}
	if (one_shot)
		session_destroy(s);
	session_put(s);
	*ret = mcp_result_structured(res, json_string_value(text), failed);
	json_decref(text);
	if (!*ret)
		return -ENOMEM;
	add_images(*ret, json_object_get(json_object_get(*ret, "structuredContent"), "results"));
	return 0;
}

/* ---- files ---- */

static int tool_write(McpCall *call, json_t *args, void *userdata, json_t **ret)
{
	Agent *a = userdata;
	const char *sid = json_string_value(json_object_get(args, "session_id"));
	const char *path = json_string_value(json_object_get(args, "path"));
	const char *enc = json_string_value(json_object_get(args, "encoding"));
	json_t *content = json_object_get(args, "content");
	bool append = json_is_true(json_object_get(args, "append"));
	uint64_t start = now_monotonic_ns();
	_cleanup_free_ uint8_t *bin = NULL;
	const void *data = json_string_value(content);
	size_t len = json_string_length(content);
	char err[768];
	json_t *o = NULL;
	Session *s;
	int r;

	if (enc && streq(enc, "base64")) {
		if (agent_base64_decode(data, len, &bin, &len) < 0) {
			*ret = mcp_result_error("content is not valid base64");
			return 0;
		}
		data = bin;
	}
	s = session_get(a, tenant_of(call), sid);
	if (!s) {
		*ret = unknown_session(sid);
		return 0;
	}
	{
		const Policy *p = session_policy(s, err, sizeof(err));

		if (p && p->limits.file_size != LIMIT_UNSET && len > p->limits.file_size) {
			session_put(s);
			*ret = mcp_result_error("content of %zu bytes is over the session's file size "
						"limit (%llu bytes)",
						len, (unsigned long long) p->limits.file_size);
			return 0;
		}
	}
	r = files_write(s, path, data, len, append, &o, err, sizeof(err));
	audit_call_owned(s, "code_write_file",
			 json_pack("{s:s, s:I, s:b}", "path", path, "bytes", (json_int_t) len,
				   "append", append),
			 json_pack("{s:b}", "ok", r >= 0), start);
	session_put(s);
	if (r == -ENOMEM)
		return r;
	*ret = r < 0 ? mcp_result_error("%s", err) : structured(o, false);
	return 0;
}

static int tool_read(McpCall *call, json_t *args, void *userdata, json_t **ret)
{
	Agent *a = userdata;
	const char *sid = json_string_value(json_object_get(args, "session_id"));
	const char *path = json_string_value(json_object_get(args, "path"));
	const char *enc = json_string_value(json_object_get(args, "encoding"));
	json_t *mb = json_object_get(args, "max_bytes");
	size_t max = mb ? (size_t) json_integer_value(mb) : 1u << 20;
	uint64_t start = now_monotonic_ns(), size = 0;
	_cleanup_free_ void *data = NULL;
	char err[768];
	size_t len = 0;
	json_t *str = NULL, *o;
	Session *s;
	int r;

	s = session_get(a, tenant_of(call), sid);
	if (!s) {
		*ret = unknown_session(sid);
		return 0;
	}
	r = files_read(s, path, max, &data, &len, &size, err, sizeof(err));
	audit_call_owned(s, "code_read_file", json_pack("{s:s}", "path", path),
		   json_pack("{s:b, s:I}", "ok", r >= 0, "bytes", (json_int_t) len), start);
	session_put(s);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		*ret = mcp_result_error("%s", err);
		return 0;
	}
	if (!enc || streq(enc, "utf8"))
		str = json_stringn(data, len); /* NULL when not UTF-8: then base64 */
	if (str)
		enc = "utf8";
	else {
		_cleanup_free_ char *b = agent_base64_encode(data, len);

		if (!b)
			return -ENOMEM;
		str = json_string(b);
		enc = "base64";
	}
	o = json_pack("{s:s, s:o, s:s, s:I, s:b}", "path", path, "content", str, "encoding", enc,
		      "size", (json_int_t) size, "truncated", size > len);
	if (!o)
		return -ENOMEM;
	/* the text block is the content itself for UTF-8 files: what a model wants to read */
	*ret = mcp_result_structured(o, streq(enc, "utf8") ? json_string_value(str) : "(binary, base64 in structuredContent.content)", false);
	return 0;
}

static int tool_list(McpCall *call, json_t *args, void *userdata, json_t **ret)
{
	Agent *a = userdata;
	const char *sid = json_string_value(json_object_get(args, "session_id"));
	const char *path = json_string_value(json_object_get(args, "path"));
	json_t *me = json_object_get(args, "max_entries");
	bool rec = json_is_true(json_object_get(args, "recursive"));
	uint64_t start = now_monotonic_ns();
	char err[768];
	json_t *o = NULL;
	Session *s;
	int r;

	s = session_get(a, tenant_of(call), sid);
	if (!s) {
		*ret = unknown_session(sid);
		return 0;
	}
	r = files_list(s, path ? path : "/workspace", rec, me ? (size_t) json_integer_value(me) : 1000,
		       &o, err, sizeof(err));
	audit_call_owned(s, "code_list_files",
			 json_pack("{s:s, s:b}", "path", path ? path : "/workspace", "recursive", rec),
		   json_pack("{s:b}", "ok", r >= 0), start);
	session_put(s);
	if (r == -ENOMEM)
		return r;
	*ret = r < 0 ? mcp_result_error("%s", err) : structured(o, false);
	return 0;
}

/* ---- info, mark_private, destroy ---- */

static int tool_info(McpCall *call, json_t *args, void *userdata, json_t **ret)
{
	Agent *a = userdata;
	const char *sid = json_string_value(json_object_get(args, "session_id"));
	json_t *list = json_array(), *o;
	Session **v;

	if (!list)
		return -ENOMEM;
	if (sid) {
		Session *s = session_get(a, tenant_of(call), sid);

		if (!s) {
			json_decref(list);
			*ret = unknown_session(sid);
			return 0;
		}
		pthread_mutex_lock(&s->lock);
		o = session_info_locked(s);
		pthread_mutex_unlock(&s->lock);
		session_put(s);
		if (!o) {
			json_decref(list);
			return -ENOMEM;
		}
		/* one session: its fields at the top, and the list form for uniformity */
		json_array_append_new(list, json_deep_copy(o));
		json_object_set_new(o, "sessions", list);
		*ret = structured(o, false);
		return 0;
	} else {
		v = session_list(a, tenant_of(call));
		for (size_t i = 0; v && v[i]; i++) {
			pthread_mutex_lock(&v[i]->lock);
			json_array_append_new(list, session_info_locked(v[i]));
			pthread_mutex_unlock(&v[i]->lock);
			session_put(v[i]);
		}
		free(v);
	}
	o = json_pack("{s:o}", "sessions", list);
	if (!o)
		return -ENOMEM;
	*ret = structured(o, false);
	return 0;
}

static int tool_mark_private(McpCall *call, json_t *args, void *userdata, json_t **ret)
{
	Agent *a = userdata;
	const char *sid = json_string_value(json_object_get(args, "session_id"));
	const char *lvl = json_string_value(json_object_get(args, "level"));
	const char *dataset = json_string_value(json_object_get(args, "dataset"));
	uint64_t start = now_monotonic_ns();
	Sensitivity level = SENSITIVITY_NONE;
	NetMode before;
	char cause[200];
	json_t *o;
	Session *s;
	int r;

	for (int l = SENSITIVITY_INTERNAL; l < _SENSITIVITY_MAX; l++)
		if (streq(lvl, sensitivity_to_string(l)))
			level = l;
	s = session_get(a, tenant_of(call), sid);
	if (!s) {
		*ret = unknown_session(sid);
		return 0;
	}
	snprintf(cause, sizeof(cause), "marked %s by code_mark_private%s%.64s%s", lvl,
		 dataset ? " (dataset '" : "", dataset ? dataset : "", dataset ? "')" : "");
	pthread_mutex_lock(&s->lock);
	before = s->mode;
	/* the names are kept for info and audit: a bounded list */
	if (dataset && !strv_contains(s->datasets, dataset) && strv_length(s->datasets) < 64)
		(void) strv_push(&s->datasets, dataset);
	r = session_raise_level_locked(s, level, cause);
	o = json_pack("{s:s, s:s, s:s, s:s, s:b}", "session_id", s->id, "level",
		      sensitivity_to_string(s->level), "network_mode", net_mode_to_string(s->mode),
		      "previous_network_mode", net_mode_to_string(before), "restricted", r > 0);
	pthread_mutex_unlock(&s->lock);
	if (r > 0)
		record_event(s, "ratchet",
			     json_pack("{s:s, s:s, s:s, s:s?}", "level", lvl, "from",
				       net_mode_to_string(before), "to", json_string_value(json_object_get(o, "network_mode")),
				       "dataset", dataset));
	audit_call(s, "code_mark_private", args, NULL, start);
	session_put(s);
	if (!o)
		return -ENOMEM;
	if (r < 0) {
		json_decref(o);
		*ret = mcp_result_error("the session's policy could not be rewritten: %s",
					strerror(-r));
		return 0;
	}
	*ret = structured(o, false);
	return 0;
}

static int tool_destroy(McpCall *call, json_t *args, void *userdata, json_t **ret)
{
	Agent *a = userdata;
	const char *sid = json_string_value(json_object_get(args, "session_id"));
	Session *s = session_get(a, tenant_of(call), sid);
	json_t *o;

	if (!s) {
		*ret = unknown_session(sid);
		return 0;
	}
	session_destroy(s);
	session_put(s);
	o = json_pack("{s:s, s:b}", "session_id", sid, "destroyed", 1);
	if (!o)
		return -ENOMEM;
	*ret = structured(o, false);
	return 0;
}

/* ---- code_run_command, code_process ---- */

static int tool_run_command(McpCall *call, json_t *args, void *userdata, json_t **ret)
{
	Agent *a = userdata;
	const char *sid = json_string_value(json_object_get(args, "session_id"));
	const char *command = json_string_value(json_object_get(args, "command"));
	const json_t *av = json_object_get(args, "argv"), *x;
	const char *in = json_string_value(json_object_get(args, "stdin"));
	bool background = json_is_true(json_object_get(args, "background"));
	_cleanup_free_ char *joined = NULL;
	char **argv = NULL;
	uint64_t start = now_monotonic_ns();
	char err[512];
	json_t *res = NULL;
	Session *s;
	size_t i;
	int r;

	if (!!command == !!av) {
		*ret = mcp_result_error("give either argv (an array) or command (a shell command line)");
		return 0;
	}
	if (command) {
		const char *sh[] = {"/bin/sh", "-c", command, NULL};

		argv = strv_copy((char *const *) sh);
	} else {
		argv = calloc(json_array_size(av) + 1, sizeof(char *));
		json_array_foreach(av, i, x)
			if (argv)
				argv[i] = strdup(json_string_value(x));
	}
	if (!argv || !argv[0]) {
		strv_free(argv);
		*ret = mcp_result_error("argv must not be empty");
		return 0;
	}
	for (i = 0; argv[i]; i++)
		;
	{
		char *buf = NULL;
		size_t size = 0;
		FILE *f = open_memstream(&buf, &size);

		for (size_t k = 0; f && argv[k]; k++)
			fprintf(f, "%s%s", k ? " " : "", argv[k]);
		if (f)
			fclose(f);
		joined = buf;
	}
	s = session_get(a, tenant_of(call), sid);
	if (!s) {
		strv_free(argv);
		*ret = unknown_session(sid);
		return 0;
	}
	{
		ExecParams p = {
			.language = "command",
			.code = joined ? joined : "",
			.stdin_data = in,
			.stdin_len = in ? json_string_length(json_object_get(args, "stdin")) : 0,
			.env = json_object_get(args, "env"),
			.timeout_s = json_integer_value(json_object_get(args, "timeout")),
			.argv = argv,
			.cwd = json_string_value(json_object_get(args, "cwd")),
		};

		r = background ? process_start(s, &p, &res, err, sizeof(err))
			       : exec_run(s, &p, call, &res, err, sizeof(err));
	}
	strv_free(argv);
	audit_call(s, "code_run_command", args, json_pack("{s:b}", "ok", r >= 0), start);
	session_put(s);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		*ret = mcp_result_error("%s", err);
		return 0;
	}
	if (background) {
		*ret = structured(res, false);
		return 0;
	}
	{
		json_t *text = json_incref(json_object_get(res, "_text"));
		bool failed = json_integer_value(json_object_get(res, "exit_code")) != 0 ||
			      json_is_true(json_object_get(res, "timed_out")) ||
			      json_is_string(json_object_get(res, "killed_by"));

		json_object_del(res, "_text");
		*ret = mcp_result_structured(res, json_string_value(text), failed);
		json_decref(text);
	}
	return *ret ? 0 : -ENOMEM;
}

static int tool_process(McpCall *call, json_t *args, void *userdata, json_t **ret)
{
	Agent *a = userdata;
	const char *sid = json_string_value(json_object_get(args, "session_id"));
	Session *s = session_get(a, tenant_of(call), sid);
	char err[512];
	json_t *o = NULL;
	int r;

	if (!s) {
		*ret = unknown_session(sid);
		return 0;
	}
	r = process_action(s, args, &o, err, sizeof(err));
	session_put(s);
	if (r == -ENOMEM)
		return r;
	*ret = r < 0 ? mcp_result_error("%s", err) : structured(o, false);
	return 0;
}

static int tool_reset_context(McpCall *call, json_t *args, void *userdata, json_t **ret)
{
	Agent *a = userdata;
	const char *sid = json_string_value(json_object_get(args, "session_id"));
	const char *lang = json_string_value(json_object_get(args, "language"));
	const char *ctx = json_string_value(json_object_get(args, "context_id"));
	Session *s = session_get(a, tenant_of(call), sid);
	json_t *o;
	int n;

	if (!s) {
		*ret = unknown_session(sid);
		return 0;
	}
	n = context_reset(s, lang, ctx);
	session_put(s);
	o = json_pack("{s:s, s:i}", "session_id", sid, "reset", n);
	if (!o)
		return -ENOMEM;
	*ret = structured(o, false);
	return 0;
}

static int tool_audit(McpCall *call, json_t *args, void *userdata, json_t **ret)
{
	Agent *a = userdata;
	const char *sid = json_string_value(json_object_get(args, "session_id"));
	const json_t *since = json_object_get(args, "since_seq"), *lim = json_object_get(args, "limit");
	const json_t *kinds = json_object_get(args, "kinds"), *k;
	Session *s = session_get(a, tenant_of(call), sid);
	char **kv = NULL;
	json_t *o = NULL;
	char text[160];
	size_t i;
	int r;

	if (!s) {
		*ret = unknown_session(sid);
		return 0;
	}
	if (json_is_array(kinds) && json_array_size(kinds) > 0) {
		kv = calloc(1, sizeof(char *));
		json_array_foreach((json_t *) kinds, i, k)
			if (!kv || strv_push(&kv, json_string_value(k)) < 0) {
				strv_free(kv);
				session_put(s);
				return -ENOMEM;
			}
	}
	/* not itself audited: polling the log must not grow it */
	r = record_page(s, since ? (uint64_t) json_integer_value(since) : 0,
			lim ? (size_t) json_integer_value(lim) : 100, kv, &o);
	strv_free(kv);
	session_put(s);
	if (r < 0)
		return r;
	snprintf(text, sizeof(text), "%zu audit events; next_seq %lld%s",
		 json_array_size(json_object_get(o, "events")),
		 (long long) json_integer_value(json_object_get(o, "next_seq")),
		 json_is_true(json_object_get(o, "has_more"))
			 ? " (more: call again with since_seq = next_seq)"
			 : "");
	*ret = mcp_result_structured(o, text, false);
	return *ret ? 0 : -ENOMEM;
}

/* ---- the table ---- */

static const McpTool tools[] = {
	{
		.name = "code_create_sandbox",
		.title = "Create a sandbox session",
		.description =
			"Create a sandbox session: a private /workspace that persists across "
			"code_execute calls and file tools until it is destroyed or has been idle "
			"for idle_timeout_s (default 30 minutes). Network is off unless asked for "
			"and allowed by the server. Returns session_id, the handle for later calls.",
		.input_schema =
			"{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
			"\"policy\":{\"type\":\"string\",\"description\":\"one of the "
			"server's policies: a preset (standard, python, …) or the name of a "
			"policy the operator offers\"},"
			"\"language\":{\"type\":\"string\",\"enum\":" LANGS "},"
			"\"network\":{\"type\":\"object\",\"additionalProperties\":false,"
			"\"properties\":{\"mode\":{\"type\":\"string\",\"enum\":" MODES "},"
			"\"allowed_domains\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
			"\"maxItems\":64}}},"
			"\"limits\":" LIMITS_SCHEMA ","
			"\"idle_timeout_s\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":604800}}}",
		.output_schema = "{\"type\":\"object\",\"required\":[\"session_id\",\"workspace\","
				 "\"policy\",\"network_mode\",\"expires_at_ms\"],\"properties\":{"
				 "\"session_id\":{\"type\":\"string\"},\"workspace\":{\"type\":"
				 "\"string\"},\"policy\":{\"type\":\"string\"},\"network_mode\":{"
				 "\"type\":\"string\"},\"expires_at_ms\":{\"type\":\"integer\"},"
				 "\"limits\":{\"type\":\"object\"}}}",
		.handler = tool_create,
	},
	{
		.name = "code_execute",
		.title = "Execute code in a sandbox",
		.description =
			"Run code (python, javascript or shell) in a sandbox. With session_id it "
			"runs in that session's interpreter context, which keeps state between "
			"calls (variables, imports, a shell's cwd; context_id picks one, fresh "
			"runs a stateless process); the value of a final Python or JavaScript "
			"expression comes back in results. Without session_id it runs in a "
			"one-shot sandbox destroyed afterwards. Returns stdout, stderr, exit_code, "
			"error {name, value, traceback}, results, timed_out, network_mode and "
			"notices; isError is set when the code failed.",
		.input_schema =
			"{\"type\":\"object\",\"additionalProperties\":false,\"required\":["
			"\"language\",\"code\"],\"properties\":{"
			"\"session_id\":" SID_SCHEMA ","
			"\"language\":{\"type\":\"string\",\"enum\":" LANGS "},"
			"\"code\":{\"type\":\"string\",\"maxLength\":1048576},"
			"\"timeout\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"seconds\"},"
			"\"stdin\":{\"type\":\"string\",\"maxLength\":16777216},"
			"\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}},"
			"\"context_id\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64,"
			"\"pattern\":\"^[A-Za-z0-9_.-]+$\"},"
			"\"fresh\":{\"type\":\"boolean\",\"description\":\"a stateless one-off "
			"process instead of the session's context\"}}}",
		.output_schema =
			"{\"type\":\"object\",\"required\":[\"stdout\",\"stderr\",\"exit_code\","
			"\"duration_ms\",\"timed_out\",\"network_mode\",\"notices\"],\"properties\":{"
			"\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":\"string\"},"
			"\"exit_code\":{\"type\":\"integer\"},\"duration_ms\":{\"type\":\"integer\"},"
			"\"timed_out\":{\"type\":\"boolean\"},\"truncated\":{\"type\":\"boolean\"},"
			"\"killed_by\":{\"type\":[\"string\",\"null\"]},"
			"\"signal\":{\"type\":[\"string\",\"null\"]},"
			"\"denied\":{\"type\":\"integer\"},\"usage\":{\"type\":[\"object\",\"null\"]},"
			"\"network_mode\":{\"type\":\"string\"},"
			"\"notices\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
			"\"session_id\":{\"type\":[\"string\",\"null\"]}}}",
		.handler = tool_execute,
	},
	{
		.name = "code_write_file",
		.title = "Write a file in a sandbox",
		.description = "Write a file in a session, by its path inside the sandbox (relative "
			       "paths start at /workspace). Missing directories are made. Only "
			       "read-write parts of the sandbox (normally /workspace) can be "
			       "written.",
		.input_schema =
			"{\"type\":\"object\",\"additionalProperties\":false,\"required\":["
			"\"session_id\",\"path\",\"content\"],\"properties\":{"
			"\"session_id\":" SID_SCHEMA ","
			"\"path\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":4096},"
			"\"content\":{\"type\":\"string\"},"
			"\"encoding\":{\"type\":\"string\",\"enum\":[\"utf8\",\"base64\"]},"
			"\"append\":{\"type\":\"boolean\"}}}",
		.output_schema = "{\"type\":\"object\",\"required\":[\"path\",\"bytes\",\"sha256\"],"
				 "\"properties\":{\"path\":{\"type\":\"string\"},\"bytes\":{\"type\":"
				 "\"integer\"},\"sha256\":{\"type\":\"string\"}}}",
		.handler = tool_write,
	},
	{
		.name = "code_read_file",
		.title = "Read a file from a sandbox",
		.description = "Read a file of a session by its path inside the sandbox. Text comes "
			       "as utf8; bytes that are not UTF-8 come as base64 (see encoding).",
		.input_schema =
			"{\"type\":\"object\",\"additionalProperties\":false,\"required\":["
			"\"session_id\",\"path\"],\"properties\":{"
			"\"session_id\":" SID_SCHEMA ","
			"\"path\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":4096},"
			"\"encoding\":{\"type\":\"string\",\"enum\":[\"utf8\",\"base64\"]},"
			"\"max_bytes\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":16777216}}}",
		.output_schema = "{\"type\":\"object\",\"required\":[\"content\",\"encoding\","
				 "\"size\",\"truncated\"],\"properties\":{\"path\":{\"type\":"
				 "\"string\"},\"content\":{\"type\":\"string\"},\"encoding\":{"
				 "\"type\":\"string\"},\"size\":{\"type\":\"integer\"},"
				 "\"truncated\":{\"type\":\"boolean\"}}}",
		.annotations = "{\"readOnlyHint\":true}",
		.handler = tool_read,
	},
	{
		.name = "code_list_files",
		.title = "List files in a sandbox",
		.description = "List a directory of a session (default /workspace), optionally "
			       "recursively. Symlinks are listed, never followed.",
		.input_schema =
			"{\"type\":\"object\",\"additionalProperties\":false,\"required\":["
			"\"session_id\"],\"properties\":{"
			"\"session_id\":" SID_SCHEMA ","
			"\"path\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":4096},"
			"\"recursive\":{\"type\":\"boolean\"},"
			"\"max_entries\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100000}}}",
		.output_schema = "{\"type\":\"object\",\"required\":[\"entries\",\"truncated\"],"
				 "\"properties\":{\"path\":{\"type\":\"string\"},\"entries\":{"
				 "\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":["
				 "\"path\",\"type\",\"size\",\"mtime\"]}},\"truncated\":{\"type\":"
				 "\"boolean\"}}}",
		.annotations = "{\"readOnlyHint\":true}",
		.handler = tool_list,
	},
	{
		.name = "code_sandbox_info",
		.title = "Describe sandbox sessions",
		.description = "State, idle time, expiry, network mode and sensitivity level, "
			       "limits of one session, or of all your sessions without session_id.",
		.input_schema = "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
				"\"session_id\":" SID_SCHEMA "}}",
		.output_schema = "{\"type\":\"object\",\"required\":[\"sessions\"],\"properties\":{"
				 "\"sessions\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}}}",
		.annotations = "{\"readOnlyHint\":true}",
		.handler = tool_info,
	},
	{
		.name = "code_mark_private",
		.title = "Mark private data in a sandbox",
		.description =
			"Say that private data entered a session. The session's network is "
			"restricted for the rest of its life, one way only: internal leaves it as "
			"it is, confidential keeps only the server's trusted destinations, secret "
			"removes it. Code running in the session at that moment is stopped.",
		.input_schema =
			"{\"type\":\"object\",\"additionalProperties\":false,\"required\":["
			"\"session_id\",\"level\"],\"properties\":{"
			"\"session_id\":" SID_SCHEMA ","
			"\"level\":{\"type\":\"string\",\"enum\":[\"internal\",\"confidential\","
			"\"secret\"]},"
			"\"dataset\":{\"type\":\"string\",\"maxLength\":256}}}",
		.output_schema = "{\"type\":\"object\",\"required\":[\"network_mode\",\"level\"],"
				 "\"properties\":{\"network_mode\":{\"type\":\"string\"},\"level\":{"
				 "\"type\":\"string\"},\"restricted\":{\"type\":\"boolean\"}}}",
		.handler = tool_mark_private,
	},
	{
		.name = "code_run_command",
		.title = "Run a command in a sandbox",
		.description =
			"Run a program in a session: argv (an array, no shell) or command (a "
			"shell command line). With background the call returns a process_id at "
			"once; follow it with code_process. Background processes count as "
			"activity and die with the session.",
		.input_schema =
			"{\"type\":\"object\",\"additionalProperties\":false,\"required\":["
			"\"session_id\"],\"properties\":{\"session_id\":" SID_SCHEMA ","
			"\"argv\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
			"\"minItems\":1,\"maxItems\":4096},"
			"\"command\":{\"type\":\"string\",\"maxLength\":1048576},"
			"\"cwd\":{\"type\":\"string\",\"maxLength\":4096},"
			"\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}},"
			"\"stdin\":{\"type\":\"string\",\"maxLength\":16777216},"
			"\"timeout\":{\"type\":\"integer\",\"minimum\":1},"
			"\"background\":{\"type\":\"boolean\"}}}",
		.output_schema = "{\"type\":\"object\"}",
		.handler = tool_run_command,
	},
	{
		.name = "code_process",
		.title = "Manage background processes",
		.description =
			"Background processes of a session: action list; output (stdout and "
			"stderr from the offsets since_stdout, since_stderr; next_* to continue); "
			"wait (up to timeout seconds, default 30); kill (signal TERM by default, "
			"KILL, INT, HUP…); write_stdin (data, eof to close it).",
		.input_schema =
			"{\"type\":\"object\",\"additionalProperties\":false,\"required\":["
			"\"session_id\",\"action\"],\"properties\":{\"session_id\":" SID_SCHEMA ","
			"\"action\":{\"type\":\"string\",\"enum\":[\"list\",\"output\",\"wait\","
			"\"kill\",\"write_stdin\"]},"
			"\"process_id\":{\"type\":\"string\",\"maxLength\":16},"
			"\"since_stdout\":{\"type\":\"integer\",\"minimum\":0},"
			"\"since_stderr\":{\"type\":\"integer\",\"minimum\":0},"
			"\"timeout\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":3600},"
			"\"signal\":{\"type\":\"string\",\"maxLength\":8},"
			"\"data\":{\"type\":\"string\",\"maxLength\":16777216},"
			"\"eof\":{\"type\":\"boolean\"}}}",
		.output_schema = "{\"type\":\"object\"}",
		.handler = tool_process,
	},
	{
		.name = "code_install_package",
		.title = "Install packages in a sandbox",
		.description =
			"Install Python (pip) or Node (npm) packages into a session from the "
			"server's registry: pip into /workspace/.packages/python (importable by "
			"later code_execute calls), npm into /workspace/node_modules. Only the "
			"package manager reaches the registry, for this install alone; the "
			"session's code keeps its network mode. packages are names with optional "
			"versions (\"requests==2.31.0\", \"lodash@^4\"). Returns installed "
			"[{name, version}], exit_code, stdout, stderr.",
		.input_schema =
			"{\"type\":\"object\",\"additionalProperties\":false,\"required\":["
			"\"session_id\",\"manager\",\"packages\"],\"properties\":{"
			"\"session_id\":" SID_SCHEMA ","
			"\"manager\":{\"type\":\"string\",\"enum\":[\"pip\",\"npm\"]},"
			"\"packages\":{\"type\":\"array\",\"minItems\":1,\"maxItems\":64,"
			"\"items\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":256}},"
			"\"registry\":{\"type\":\"string\",\"maxLength\":1024,\"description\":"
			"\"an index or registry URL the server lists; default: the server's\"}}}",
		.output_schema =
			"{\"type\":\"object\",\"required\":[\"installed\",\"exit_code\",\"stdout\","
			"\"stderr\"],\"properties\":{\"installed\":{\"type\":\"array\",\"items\":{"
			"\"type\":\"object\",\"required\":[\"name\",\"version\"],\"properties\":{"
			"\"name\":{\"type\":\"string\"},\"version\":{\"type\":\"string\"}}}},"
			"\"exit_code\":{\"type\":\"integer\"},\"stdout\":{\"type\":\"string\"},"
			"\"stderr\":{\"type\":\"string\"},\"registry\":{\"type\":\"string\"},"
			"\"network_mode\":{\"type\":\"string\"}}}",
		.handler = install_tool,
	},
	{
		.name = "code_reset_context",
		.title = "Reset interpreter state",
		.description = "Drop a session's interpreter context(s): the next code_execute in "
			       "it starts with empty state. Without language or context_id, all of "
			       "them. The workspace is kept.",
		.input_schema =
			"{\"type\":\"object\",\"additionalProperties\":false,\"required\":["
			"\"session_id\"],\"properties\":{\"session_id\":" SID_SCHEMA ","
			"\"language\":{\"type\":\"string\",\"enum\":" LANGS "},"
			"\"context_id\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64}}}",
		.output_schema = "{\"type\":\"object\",\"required\":[\"reset\"],\"properties\":{"
				 "\"reset\":{\"type\":\"integer\"}}}",
		.annotations = "{\"destructiveHint\":true,\"idempotentHint\":true}",
		.handler = tool_reset_context,
	},
	{
		.name = "code_audit",
		.title = "Read a session's audit log",
		.description =
			"Page through a session's audit events, oldest first: tool calls, session "
			"events (created, ratchet), approval requests and decisions, and, when the "
			"operator enables them, the sandbox's syscall records. Each event has seq, "
			"kind, time_ms and prev_sha256 (the SHA-256 of the line before it). Pass "
			"next_seq as since_seq to continue; kinds filters by kind.",
		.input_schema =
			"{\"type\":\"object\",\"additionalProperties\":false,\"required\":["
			"\"session_id\"],\"properties\":{\"session_id\":" SID_SCHEMA ","
			"\"since_seq\":{\"type\":\"integer\",\"minimum\":0,\"description\":"
			"\"return events with a larger seq (default 0: from the start)\"},"
			"\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000,"
			"\"description\":\"at most this many events (default 100)\"},"
			"\"kinds\":{\"type\":\"array\",\"items\":{\"type\":\"string\","
			"\"maxLength\":64},\"maxItems\":32}}}",
		.output_schema = "{\"type\":\"object\",\"required\":[\"events\",\"next_seq\"],"
				 "\"properties\":{\"events\":{\"type\":\"array\",\"items\":{"
				 "\"type\":\"object\"}},\"next_seq\":{\"type\":\"integer\"},"
				 "\"has_more\":{\"type\":\"boolean\"}}}",
		.annotations = "{\"readOnlyHint\":true}",
		.handler = tool_audit,
	},
	{
		.name = "code_destroy_sandbox",
		.title = "Destroy a sandbox session",
		.description = "Stop what runs in a session and delete it with its files.",
		.input_schema = "{\"type\":\"object\",\"additionalProperties\":false,\"required\":["
				"\"session_id\"],\"properties\":{\"session_id\":" SID_SCHEMA "}}",
		.output_schema = "{\"type\":\"object\",\"required\":[\"destroyed\"],\"properties\":{"
				 "\"destroyed\":{\"type\":\"boolean\"}}}",
		.annotations = "{\"destructiveHint\":true,\"idempotentHint\":true}",
		.handler = tool_destroy,
	},
};

int agent_register_tools(Agent *a, McpServer *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(tools); i++) {
		McpTool t = tools[i];
		int r;

		t.userdata = a;
		approval_wrap_tool(a, &t); /* human approval first, when the operator wants it */
		r = mcp_server_add_tool(s, &t);
		if (r < 0)
			return r;
	}
	return 0;
}
