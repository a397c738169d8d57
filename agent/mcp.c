/* SPDX-License-Identifier: MIT */
/*
 * The MCP protocol core: message dispatch, the initialize handshake, tools/list, tools/call
 * with argument checking, cancellation, progress, logging, and requests to the client made
 * during a call. Transport-neutral and thread-safe: every transport thread calls
 * mcp_server_handle() with its own message; the shared mutable state is the list of calls in
 * flight and the list of our requests awaiting the client's response, under one mutex (and
 * each connection's client capabilities, under the same).
 *
 * Followed: the MCP specification, revisions 2025-11-25 and 2025-06-18 (basic/lifecycle,
 * server/tools, basic/utilities/cancellation and progress, server/utilities/logging,
 * client/elicitation, client/sampling). Version negotiation: a client
 * asking for a revision we speak gets it; any other gets our newest, and decides itself
 * whether to go on. JSON-RPC batches (removed in 2025-06-18) are refused as invalid.
 */
#include "agent/mcp.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/macros.h"

const char *const mcp_protocol_versions[] = {"2025-11-25", "2025-06-18", NULL};

typedef struct ToolEntry {
	McpTool tool;
	json_t *input_schema;
	json_t *output_schema;
	json_t *annotations;
} ToolEntry;

struct McpCall {
	McpCall *next;
	McpServer *server;
	const McpConn *conn;
	McpStream *stream;	/* the request's channel, or NULL (conn->send) */
	json_t *id;		/* the request's id (owned) */
	json_t *progress_token; /* owned, or NULL */
	pthread_mutex_t lock;	/* guards what follows */
	bool cancelled;
	void (*cancel_fn)(void *);
	void *cancel_userdata;
	bool cancel_running; /* cancel_fn is running on another thread */
	pthread_cond_t cancel_done;
};

/* A request of ours to the client, awaiting its response (on the waiter's stack). */
typedef struct Pending {
	struct Pending *next;
	McpCall *call;
	json_int_t id;
	json_t *response; /* the whole response message once it came, owned */
	pthread_cond_t arrived; /* with the server's lock */
} Pending;

struct McpServer {
	char *name, *version;
	const char *instructions;
	ToolEntry *tools;
	size_t n_tools;
	pthread_mutex_t lock; /* guards calls, pending, next_id, McpConn.client_capabilities */
	McpCall *calls;
	Pending *pending;
	json_int_t next_id;
	McpMethodHandler fallback;
	void *fallback_userdata;
	json_t *extra_caps;
};

McpServer *mcp_server_new(const char *name, const char *version)
{
	McpServer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->name = strdup(name);
	s->version = strdup(version);
	if (!s->name || !s->version) {
		mcp_server_free(s);
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	return s;
}

void mcp_server_free(McpServer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_tools; i++) {
		json_decref(s->tools[i].input_schema);
		json_decref(s->tools[i].output_schema);
		json_decref(s->tools[i].annotations);
	}
	free(s->tools);
	free(s->name);
	free(s->version);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void mcp_server_set_fallback(McpServer *s, McpMethodHandler fn, void *userdata)
{
	s->fallback = fn;
	s->fallback_userdata = userdata;
}

void mcp_server_set_capabilities(McpServer *s, json_t *extra)
{
	s->extra_caps = extra;
}

void mcp_server_set_instructions(McpServer *s, const char *text)
{
	s->instructions = text;
}

static json_t *parse_json_text(const char *text)
{
	return text ? json_loads(text, JSON_REJECT_DUPLICATES, NULL) : NULL;
}

int mcp_server_add_tool(McpServer *s, const McpTool *t)
{
	ToolEntry e = {.tool = *t};
	ToolEntry *n;

	for (size_t i = 0; i < s->n_tools; i++)
		if (streq(s->tools[i].tool.name, t->name))
			return -EEXIST;
	e.input_schema = parse_json_text(t->input_schema);
	e.output_schema = parse_json_text(t->output_schema);
	e.annotations = parse_json_text(t->annotations);
	if (!json_is_object(e.input_schema) || (t->output_schema && !e.output_schema) ||
	    (t->annotations && !e.annotations)) {
		json_decref(e.input_schema);
		json_decref(e.output_schema);
		json_decref(e.annotations);
		return -EINVAL;
	}
	n = realloc(s->tools, (s->n_tools + 1) * sizeof(*n));
	if (!n) {
		json_decref(e.input_schema);
		json_decref(e.output_schema);
		json_decref(e.annotations);
		return -ENOMEM;
	}
	s->tools = n;
	s->tools[s->n_tools++] = e;
	return 0;
}

static const ToolEntry *tool_find(const McpServer *s, const char *name)
{
	for (size_t i = 0; i < s->n_tools; i++)
		if (streq(s->tools[i].tool.name, name))
			return &s->tools[i];
	return NULL;
}

/* ---- messages ---- */

static json_t *rpc_result(const json_t *id, json_t *result)
{
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(),
			 "result", result ? result : json_object());
}

static json_t *rpc_error(const json_t *id, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static json_t *rpc_error(const json_t *id, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(),
			 "error", "code", code, "message", msg);
}

bool mcp_message_is_request(const json_t *msg)
{
	return json_is_object(msg) && json_is_string(json_object_get(msg, "method")) &&
	       json_object_get(msg, "id") && !json_is_null(json_object_get(msg, "id"));
}

bool mcp_message_is_initialize(const json_t *msg)
{
	const char *m = json_string_value(json_object_get(msg, "method"));

	return mcp_message_is_request(msg) && m && streq(m, "initialize");
}

json_t *mcp_result_structured(json_t *structured, const char *text, bool is_error)
{
	return json_pack("{s:[{s:s, s:s}], s:o, s:b}", "content", "type", "text", "text",
			 text ? text : "", "structuredContent", structured ? structured : json_object(),
			 "isError", is_error);
}

json_t *mcp_result_error(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", msg, "isError",
			 1);
}

/* ---- the schema subset ---- */

static bool type_matches(const char *type, const json_t *v)
{
	if (streq(type, "object"))
		return json_is_object(v);
	if (streq(type, "array"))
		return json_is_array(v);
	if (streq(type, "string"))
		return json_is_string(v);
	if (streq(type, "integer"))
		return json_is_integer(v) || (json_is_real(v) && json_real_value(v) ==
								 (double) (long long) json_real_value(v));
	if (streq(type, "number"))
		return json_is_number(v);
	if (streq(type, "boolean"))
		return json_is_boolean(v);
	if (streq(type, "null"))
		return json_is_null(v);
	return true;
}

static bool check_at(const json_t *schema, const json_t *v, const char *where, char *err,
		     size_t errsize)
{
	const json_t *type = json_object_get(schema, "type"), *e;
	size_t i;

	if (json_is_string(type) && !type_matches(json_string_value(type), v)) {
		snprintf(err, errsize, "%s must be of type %s", where, json_string_value(type));
		return false;
	}
	if (json_is_array(type)) {
		bool ok = false;

		json_array_foreach(type, i, e)
			if (json_is_string(e) && type_matches(json_string_value(e), v))
				ok = true;
		if (!ok) {
			snprintf(err, errsize, "%s has the wrong type", where);
			return false;
		}
	}
	e = json_object_get(schema, "enum");
	if (json_is_array(e)) {
		const json_t *x;
		bool ok = false;

		json_array_foreach(e, i, x)
			if (json_equal(x, (json_t *) v))
				ok = true;
		if (!ok) {
			_cleanup_free_ char *allowed = json_dumps(e, JSON_COMPACT);

			snprintf(err, errsize, "%s must be one of %s", where, allowed ? allowed : "");
			return false;
		}
	}
	if (json_is_number(v)) {
		const json_t *mn = json_object_get(schema, "minimum"),
			     *mx = json_object_get(schema, "maximum");

		if (json_is_number(mn) && json_number_value(v) < json_number_value(mn)) {
			snprintf(err, errsize, "%s must be at least %g", where, json_number_value(mn));
			return false;
		}
		if (json_is_number(mx) && json_number_value(v) > json_number_value(mx)) {
			snprintf(err, errsize, "%s must be at most %g", where, json_number_value(mx));
			return false;
		}
	}
	if (json_is_string(v)) {
		const json_t *mn = json_object_get(schema, "minLength"),
			     *mx = json_object_get(schema, "maxLength");
		size_t len = json_string_length(v);

		if (json_is_integer(mn) && len < (size_t) json_integer_value(mn)) {
			snprintf(err, errsize, "%s is too short (at least %lld characters)", where,
				 (long long) json_integer_value(mn));
			return false;
		}
		if (json_is_integer(mx) && len > (size_t) json_integer_value(mx)) {
			snprintf(err, errsize, "%s is too long (at most %lld bytes)", where,
				 (long long) json_integer_value(mx));
			return false;
		}
	}
	if (json_is_array(v)) {
		const json_t *items = json_object_get(schema, "items"), *x;
		const json_t *mx = json_object_get(schema, "maxItems");

		if (json_is_integer(mx) && json_array_size(v) > (size_t) json_integer_value(mx)) {
			snprintf(err, errsize, "%s has more than %lld items", where,
				 (long long) json_integer_value(mx));
			return false;
		}
		if (json_is_object(items))
			json_array_foreach(v, i, x) {
				char sub[160];

				snprintf(sub, sizeof(sub), "%.120s[%zu]", where, i);
				if (!check_at(items, x, sub, err, errsize))
					return false;
			}
	}
	if (json_is_object(v)) {
		const json_t *props = json_object_get(schema, "properties");
		const json_t *req = json_object_get(schema, "required");
		const json_t *addl = json_object_get(schema, "additionalProperties");
		const char *key;
		json_t *x;

		json_array_foreach(req, i, e)
			if (json_is_string(e) && !json_object_get(v, json_string_value(e))) {
				snprintf(err, errsize, "%s: '%s' is required", where,
					 json_string_value(e));
				return false;
			}
		json_object_foreach((json_t *) v, key, x) {
			const json_t *ps = json_object_get(props, key);
			char sub[160];

			snprintf(sub, sizeof(sub), "%s%s%.64s", where, *where ? "." : "", key);
			if (!ps) {
				if (json_is_false(addl)) {
					snprintf(err, errsize, "unknown argument '%.64s'", sub);
					return false;
				}
				if (json_is_object(addl) && !check_at(addl, x, sub, err, errsize))
					return false;
				continue;
			}
			if (!check_at(ps, x, sub, err, errsize))
				return false;
		}
	}
	return true;
}

bool mcp_schema_check(const json_t *schema, const json_t *value, char *err, size_t errsize)
{
	return check_at(schema, value, "", err, errsize);
}

/* ---- calls in flight ---- */

const McpConn *mcp_call_conn(const McpCall *call)
{
	return call->conn;
}

bool mcp_call_cancelled(McpCall *call)
{
	bool c;

	pthread_mutex_lock(&call->lock);
	c = call->cancelled;
	pthread_mutex_unlock(&call->lock);
	return c;
}

void mcp_call_on_cancel(McpCall *call, void (*fn)(void *), void *userdata)
{
	pthread_mutex_lock(&call->lock);
	/* unregistering waits for a cancel_fn that is running, so that its userdata may be
	 * freed as soon as we return */
	while (call->cancel_running)
		pthread_cond_wait(&call->cancel_done, &call->lock);
	call->cancel_fn = fn;
	call->cancel_userdata = userdata;
	if (fn && call->cancelled) {
		call->cancel_fn = NULL;
		pthread_mutex_unlock(&call->lock);
		fn(userdata);
		return;
	}
	pthread_mutex_unlock(&call->lock);
}

static void call_cancel(McpCall *call)
{
	void (*fn)(void *);
	void *ud;

	pthread_mutex_lock(&call->lock);
	call->cancelled = true;
	fn = call->cancel_fn;
	ud = call->cancel_userdata;
	call->cancel_fn = NULL;
	if (fn)
		call->cancel_running = true;
	pthread_mutex_unlock(&call->lock);
	if (!fn)
		return;
	fn(ud);
	pthread_mutex_lock(&call->lock);
	call->cancel_running = false;
	pthread_cond_broadcast(&call->cancel_done);
	pthread_mutex_unlock(&call->lock);
}

/* Where the call's messages go: its request's stream, else the connection. */
static bool call_can_send(const McpCall *call)
{
	return call->stream || call->conn->send;
}

static int call_send(McpCall *call, json_t *msg)
{
	if (call->stream)
		return call->stream->send(call->stream, msg);
	if (call->conn->send)
		return call->conn->send((McpConn *) call->conn, msg);
	return -EOPNOTSUPP;
}

void mcp_call_progress(McpCall *call, double progress, double total, const char *message)
{
	json_t *n;

	if (!call->progress_token || !call_can_send(call) || mcp_call_cancelled(call))
		return;
	n = json_pack("{s:s, s:s, s:{s:O, s:f}}", "jsonrpc", "2.0", "method",
		      "notifications/progress", "params", "progressToken", call->progress_token,
		      "progress", progress);
	if (!n)
		return;
	if (total > 0)
		json_object_set_new(json_object_get(n, "params"), "total", json_real(total));
	if (message)
		json_object_set_new(json_object_get(n, "params"), "message", json_string(message));
	(void) call_send(call, n);
	json_decref(n);
}

static const char *const log_level_names[] = {
	[MCP_LOG_DEBUG] = "debug",     [MCP_LOG_INFO] = "info",	  [MCP_LOG_NOTICE] = "notice",
	[MCP_LOG_WARNING] = "warning", [MCP_LOG_ERROR] = "error", [MCP_LOG_CRITICAL] = "critical",
	[MCP_LOG_ALERT] = "alert",     [MCP_LOG_EMERGENCY] = "emergency",
};

void mcp_call_log(McpCall *call, McpLogLevel level, const char *text)
{
	json_t *n;

	if ((unsigned) level >= ARRAY_SIZE(log_level_names) || !call_can_send(call) ||
	    (int) level < __atomic_load_n(&call->conn->log_level, __ATOMIC_RELAXED) ||
	    mcp_call_cancelled(call))
		return;
	n = json_pack("{s:s, s:s, s:{s:s, s:s}}", "jsonrpc", "2.0", "method",
		      "notifications/message", "params", "level", log_level_names[level], "data",
		      text ? text : "");
	if (!n)
		return;
	(void) call_send(call, n);
	json_decref(n);
}

bool mcp_call_client_supports(McpCall *call, const char *capability)
{
	bool yes;

	pthread_mutex_lock(&call->server->lock);
	yes = json_object_get(call->conn->client_capabilities, capability) != NULL;
	pthread_mutex_unlock(&call->server->lock);
	return yes;
}

void mcp_conn_clear(McpConn *c)
{
	json_decref(c->client_capabilities);
	c->client_capabilities = NULL;
}

/* The capability a client must have declared for us to send it that request. */
static const char *capability_of(const char *method)
{
	if (strncmp(method, "elicitation/", 12) == 0)
		return "elicitation";
	if (strncmp(method, "sampling/", 9) == 0)
		return "sampling";
	if (strncmp(method, "roots/", 6) == 0)
		return "roots";
	return NULL;
}

/* Wakes the requests call is waiting on (it was cancelled). Server's lock held. */
static void wake_pending(McpServer *s, const McpCall *call)
{
	for (Pending *p = s->pending; p; p = p->next)
		if (p->call == call)
			pthread_cond_broadcast(&p->arrived);
}

static void pending_remove(McpServer *s, Pending *p)
{
	for (Pending **q = &s->pending; *q; q = &(*q)->next)
		if (*q == p) {
			*q = p->next;
			break;
		}
}

/* A response from the client: hands it to the call waiting for it (ours on this connection,
 * by id); anything else is dropped. */
static void route_response(McpServer *s, const McpConn *c, json_t *msg)
{
	const json_t *id = json_object_get(msg, "id");

	if (!json_is_integer(id))
		return;
	pthread_mutex_lock(&s->lock);
	for (Pending *p = s->pending; p; p = p->next)
		if (p->id == json_integer_value(id) && streq(p->call->conn->id, c->id)) {
			if (!p->response) {
				p->response = json_incref(msg);
				pthread_cond_broadcast(&p->arrived);
			}
			break;
		}
	pthread_mutex_unlock(&s->lock);
}

int mcp_call_request(McpCall *call, const char *method, json_t *params, int timeout_ms,
		     json_t **ret_result)
{
	McpServer *s = call->server;
	const char *cap = capability_of(method);
	Pending p = {.call = call};
	pthread_condattr_t attr;
	struct timespec deadline;
	json_t *msg, *res, *err;
	bool cancelled = false, sent;
	int r;

	*ret_result = NULL;
	if ((cap && !mcp_call_client_supports(call, cap)) || !call_can_send(call))
		return -EOPNOTSUPP;
	if (params && !json_is_object(params))
		return -EINVAL;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&p.arrived, &attr);
	pthread_condattr_destroy(&attr);

	pthread_mutex_lock(&s->lock);
	p.id = ++s->next_id;
	p.next = s->pending;
	s->pending = &p;
	pthread_mutex_unlock(&s->lock);

	msg = json_pack("{s:s, s:I, s:s}", "jsonrpc", "2.0", "id", p.id, "method", method);
	if (msg && params)
		json_object_set(msg, "params", params);
	r = msg ? (mcp_call_cancelled(call) ? -ECANCELED : call_send(call, msg)) : -ENOMEM;
	sent = r >= 0;
	json_decref(msg);

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += timeout_ms / 1000;
	deadline.tv_nsec += (long) (timeout_ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&s->lock);
	while (r >= 0 && !p.response) {
		/* call->lock is taken under the server's lock elsewhere too (cancel_request) */
		cancelled = mcp_call_cancelled(call);
		if (cancelled)
			r = -ECANCELED;
		else if (timeout_ms <= 0)
			pthread_cond_wait(&p.arrived, &s->lock);
		else if (pthread_cond_timedwait(&p.arrived, &s->lock, &deadline) == ETIMEDOUT &&
			 !p.response)
			r = -ETIMEDOUT;
	}
	pending_remove(s, &p);
	pthread_mutex_unlock(&s->lock);
	pthread_cond_destroy(&p.arrived);

	if (sent && (r == -ETIMEDOUT || r == -ECANCELED)) {
		/* we stop waiting: tell the client to stop too (cancellation.mdx); a stream whose
		 * client went away refuses it, and that is fine */
		json_t *n = json_pack("{s:s, s:s, s:{s:I, s:s}}", "jsonrpc", "2.0", "method",
				      "notifications/cancelled", "params", "requestId", p.id,
				      "reason", cancelled ? "the tool call was cancelled" : "timed out");

		if (n)
			(void) call_send(call, n);
		json_decref(n);
	}
	if (r < 0) {
		json_decref(p.response);
		return r;
	}
	res = json_object_get(p.response, "result");
	err = json_object_get(p.response, "error");
	if (res) {
		*ret_result = json_incref(res);
		r = 0;
	} else {
		*ret_result = json_is_object(err) ? json_incref(err) : json_object();
		r = -EREMOTEIO;
	}
	json_decref(p.response);
	return r;
}

/* Cancels the call with that id on connection c (notifications/cancelled). Holding the
 * server's lock while the cancel function runs keeps the call from being freed meanwhile. */
void mcp_server_cancel(McpServer *s, const McpConn *c, const json_t *id)
{
	pthread_mutex_lock(&s->lock);
	for (McpCall *call = s->calls; call; call = call->next)
		if (streq(call->conn->id, c->id) && streq(call->conn->tenant, c->tenant) &&
		    json_equal(call->id, (json_t *) id)) {
			call_cancel(call);
			wake_pending(s, call);
			break;
		}
	pthread_mutex_unlock(&s->lock);
}

void mcp_server_cancel_conn(McpServer *s, const McpConn *c)
{
	pthread_mutex_lock(&s->lock);
	for (McpCall *call = s->calls; call; call = call->next)
		if (call->conn == c) {
			call_cancel(call);
			wake_pending(s, call);
		}
	pthread_mutex_unlock(&s->lock);
}

size_t mcp_server_calls(McpServer *s, const McpConn *c)
{
	size_t n = 0;

	pthread_mutex_lock(&s->lock);
	for (McpCall *call = s->calls; call; call = call->next)
		if (!c || call->conn == c)
			n++;
	pthread_mutex_unlock(&s->lock);
	return n;
}

static void calls_add(McpServer *s, McpCall *call)
{
	pthread_mutex_lock(&s->lock);
	call->next = s->calls;
	s->calls = call;
	pthread_mutex_unlock(&s->lock);
}

static void calls_remove(McpServer *s, McpCall *call)
{
	pthread_mutex_lock(&s->lock);
	for (McpCall **p = &s->calls; *p; p = &(*p)->next)
		if (*p == call) {
			*p = call->next;
			break;
		}
	pthread_mutex_unlock(&s->lock);
}

/* ---- methods ---- */

static json_t *do_initialize(McpServer *s, McpConn *c, const json_t *id, const json_t *params)
{
	const char *asked = json_string_value(json_object_get(params, "protocolVersion"));
	const char *v = mcp_protocol_versions[0];
	json_t *res;

	if (!asked)
		return rpc_error(id, MCP_INVALID_PARAMS, "initialize: 'protocolVersion' is missing");
	for (size_t i = 0; mcp_protocol_versions[i]; i++)
		if (streq(asked, mcp_protocol_versions[i]))
			v = mcp_protocol_versions[i];
	snprintf(c->protocol, sizeof(c->protocol), "%s", v);
	c->initialized = true;
	{
		json_t *caps = json_object_get(params, "capabilities"), *old;

		caps = json_is_object(caps) ? json_deep_copy(caps) : json_object();
		pthread_mutex_lock(&s->lock);
		old = c->client_capabilities;
		c->client_capabilities = caps;
		pthread_mutex_unlock(&s->lock);
		json_decref(old);
	}
	res = json_pack("{s:s, s:{s:{s:b}, s:{}}, s:{s:s, s:s}}", "protocolVersion", v,
			"capabilities", "tools", "listChanged", 0, "logging", "serverInfo", "name",
			s->name, "version", s->version);
	if (res && s->extra_caps)
		json_object_update(json_object_get(res, "capabilities"), s->extra_caps);
	if (res && s->instructions)
		json_object_set_new(res, "instructions", json_string(s->instructions));
	return rpc_result(id, res);
}

static json_t *do_tools_list(McpServer *s, const json_t *id)
{
	json_t *tools = json_array();

	for (size_t i = 0; i < s->n_tools; i++) {
		const ToolEntry *e = &s->tools[i];
		json_t *t = json_pack("{s:s, s:s, s:O}", "name", e->tool.name, "description",
				      e->tool.description ? e->tool.description : "", "inputSchema",
				      e->input_schema);

		if (!t)
			continue;
		if (e->tool.title)
			json_object_set_new(t, "title", json_string(e->tool.title));
		if (e->output_schema)
			json_object_set(t, "outputSchema", e->output_schema);
		if (e->annotations)
			json_object_set(t, "annotations", e->annotations);
		json_array_append_new(tools, t);
	}
	return rpc_result(id, json_pack("{s:o}", "tools", tools));
}

static json_t *do_tools_call(McpServer *s, McpConn *c, const json_t *id, const json_t *params,
			     McpStream *stream)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");
	json_t *meta = json_object_get(params, "_meta");
	McpCall call = {.server = s, .conn = c, .stream = stream};
	const ToolEntry *e;
	json_t *result = NULL;
	char err[512];
	int r;

	if (!name)
		return rpc_error(id, MCP_INVALID_PARAMS, "tools/call: 'name' is missing");
	e = tool_find(s, name);
	if (!e)
		return rpc_error(id, MCP_INVALID_PARAMS, "Unknown tool: %.128s", name);
	if (args && !json_is_object(args))
		return rpc_error(id, MCP_INVALID_PARAMS, "tools/call: 'arguments' must be an object");
	args = args ? json_incref(args) : json_object();
	/* arguments that break the schema are the model's mistake: a tool error it can read
	 * and correct, not a protocol error (tools.mdx, "Error Handling") */
	if (!mcp_schema_check(e->input_schema, args, err, sizeof(err))) {
		json_decref(args);
		return rpc_result(id, mcp_result_error("invalid arguments for %s: %s", name, err));
	}
	call.id = json_deep_copy(id);
	call.progress_token = json_incref(json_object_get(meta, "progressToken"));
	pthread_mutex_init(&call.lock, NULL);
	pthread_cond_init(&call.cancel_done, NULL);
	calls_add(s, &call);
	r = e->tool.handler(&call, args, e->tool.userdata, &result);
	calls_remove(s, &call);
	json_decref(args);
	json_decref(call.id);
	json_decref(call.progress_token);
	pthread_mutex_destroy(&call.lock);
	pthread_cond_destroy(&call.cancel_done);
	if (call.cancelled) {
		/* the client gave up on it: no response (cancellation.mdx) */
		json_decref(result);
		return NULL;
	}
	if (r < 0 || !result)
		return rpc_error(id, MCP_INTERNAL_ERROR, "%s failed: %s", name, strerror(r < 0 ? -r : EIO));
	return rpc_result(id, result);
}

static void do_notification(McpServer *s, McpConn *c, const char *method, const json_t *params)
{
	if (streq(method, "notifications/cancelled")) {
		const json_t *rid = json_object_get(params, "requestId");

		if (rid)
			mcp_server_cancel(s, c, rid);
	}
	/* notifications/initialized and anything else: nothing to do */
}

static json_t *do_set_level(McpConn *c, const json_t *id, const json_t *params)
{
	const char *level = json_string_value(json_object_get(params, "level"));

	for (size_t i = 0; level && i < ARRAY_SIZE(log_level_names); i++)
		if (streq(level, log_level_names[i])) {
			__atomic_store_n(&c->log_level, (int) i, __ATOMIC_RELAXED);
			return rpc_result(id, NULL);
		}
	return rpc_error(id, MCP_INVALID_PARAMS, "logging/setLevel: unknown level '%.32s'",
			 level ? level : "");
}

json_t *mcp_server_handle(McpServer *s, McpConn *c, json_t *msg)
{
	return mcp_server_handle_stream(s, c, msg, NULL);
}

json_t *mcp_server_handle_stream(McpServer *s, McpConn *c, json_t *msg, McpStream *stream)
{
	const json_t *id, *params;
	const char *method;

	if (!json_is_object(msg))
		return rpc_error(NULL, MCP_INVALID_REQUEST, "a message must be a JSON object");
	id = json_object_get(msg, "id");
	method = json_string_value(json_object_get(msg, "method"));
	params = json_object_get(msg, "params");
	if (!method) {
		if (json_object_get(msg, "result") || json_object_get(msg, "error")) {
			route_response(s, c, msg); /* to a call's mcp_call_request() */
			return NULL;
		}
		return rpc_error(id, MCP_INVALID_REQUEST, "no 'method'");
	}
	if (params && !json_is_object(params))
		return id ? rpc_error(id, MCP_INVALID_PARAMS, "'params' must be an object") : NULL;
	if (!id) {
		do_notification(s, c, method, params);
		return NULL;
	}
	if (!json_is_string(id) && !json_is_integer(id))
		return rpc_error(NULL, MCP_INVALID_REQUEST, "'id' must be a string or an integer");

	if (streq(method, "initialize"))
		return do_initialize(s, c, id, params);
	if (streq(method, "ping"))
		return rpc_result(id, NULL);
	if (streq(method, "tools/list"))
		return do_tools_list(s, id);
	if (streq(method, "tools/call"))
		return do_tools_call(s, c, id, params, stream);
	if (streq(method, "logging/setLevel"))
		return do_set_level(c, id, params);
	if (s->fallback) {
		int code = MCP_METHOD_NOT_FOUND;
		json_t *res = s->fallback(s->fallback_userdata, c, method, params, &code);

		if (res)
			return rpc_result(id, res);
		if (code != MCP_METHOD_NOT_FOUND)
			return rpc_error(id, code, "%.128s failed", method);
	}
	return rpc_error(id, MCP_METHOD_NOT_FOUND, "Method not found: %.128s", method);
}

json_t *mcp_server_handle_text(McpServer *s, McpConn *c, const char *text, size_t len)
{
	json_error_t je;
	json_t *msg, *res;

	msg = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!msg)
		return rpc_error(NULL, MCP_PARSE_ERROR, "Parse error: %s", je.text);
	if (json_is_array(msg)) {
		json_decref(msg);
		return rpc_error(NULL, MCP_INVALID_REQUEST, "JSON-RPC batches are not supported");
	}
	res = mcp_server_handle(s, c, msg);
	json_decref(msg);
	return res;
}
