/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The Model Context Protocol, server side (docs/agents.md): JSON-RPC 2.0 messages, the
 * initialize handshake (revisions 2025-11-25 and 2025-06-18), ping, tools/list and
 * tools/call, cancellation, progress, logging and server-to-client requests made during a
 * call (elicitation, sampling). It knows nothing of sandboxes: tools are a table of
 * names, JSON Schemas and handlers that the caller registers (agent/tools.c for `sbxtrace
 * mcp`, tests/mcp/fixture-server.c for the conformance suite's fixtures).
 *
 * Transports (agent/mcp-stdio.c, agent/mcp-http.c) turn bytes into messages and hand each to
 * mcp_server_handle(), which may be called from many threads at once: a tools/call blocks its
 * caller's thread for as long as the tool runs.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct McpServer McpServer;
typedef struct McpConn McpConn;
typedef struct McpCall McpCall;
typedef struct McpStream McpStream;

/* JSON-RPC error codes. */
enum {
	MCP_PARSE_ERROR = -32700,
	MCP_INVALID_REQUEST = -32600,
	MCP_METHOD_NOT_FOUND = -32601,
	MCP_INVALID_PARAMS = -32602,
	MCP_INTERNAL_ERROR = -32603,
};

/**
 * A tool's handler. args is the call's "arguments" object, already checked against
 * input_schema (types, required keys, enums, no unknown keys). Returns 0 with *ret_result
 * set to a CallToolResult object (mcp_result_*() build one), or a negative errno when the
 * server itself failed (the client gets a JSON-RPC internal error).
 */
typedef int (*McpToolHandler)(McpCall *call, json_t *args, void *userdata, json_t **ret_result);

typedef struct McpTool {
	const char *name;
	const char *title;
	const char *description;
	const char *input_schema;  /* JSON text of an object schema */
	const char *output_schema; /* JSON text, or NULL */
	const char *annotations;   /* JSON text, or NULL */
	McpToolHandler handler;
	void *userdata;
} McpTool;

/** A server named name/version; NULL on OOM. */
McpServer *mcp_server_new(const char *name, const char *version);
void mcp_server_free(McpServer *s);
/** Adds a tool (the strings are borrowed for the server's life; the schemas are parsed
 * here). -EINVAL for a schema that is not JSON, -EEXIST for a duplicate name. */
int mcp_server_add_tool(McpServer *s, const McpTool *t);
/**
 * Methods beyond those of the core (resources, prompts, completion of a test fixture):
 * returns the result object (owned by the caller), or NULL with *reterr_code set to a
 * JSON-RPC error code (MCP_METHOD_NOT_FOUND when it does not know the method).
 */
typedef json_t *(*McpMethodHandler)(void *userdata, McpConn *c, const char *method,
				    const json_t *params, int *reterr_code);
void mcp_server_set_fallback(McpServer *s, McpMethodHandler fn, void *userdata);
/** Capabilities added to initialize's result ("resources", "prompts", …); borrowed. */
void mcp_server_set_capabilities(McpServer *s, json_t *extra);

/** The text of the "instructions" field of initialize's result (borrowed), or NULL. */
void mcp_server_set_instructions(McpServer *s, const char *text);

/* Log levels of notifications/message (RFC 5424 severities, as the spec names them). */
typedef enum McpLogLevel {
	MCP_LOG_DEBUG,
	MCP_LOG_INFO,
	MCP_LOG_NOTICE,
	MCP_LOG_WARNING,
	MCP_LOG_ERROR,
	MCP_LOG_CRITICAL,
	MCP_LOG_ALERT,
	MCP_LOG_EMERGENCY,
} McpLogLevel;

/*
 * A connection: one MCP session of a transport (stdio has one; HTTP one per Mcp-Session-Id).
 * send() delivers a server-initiated message (a notification or a request) to the client, or
 * is NULL where the transport has no channel outside of a request (HTTP: there, messages of a
 * call travel on that request's own stream, an McpStream).
 *
 * Zero-initialize it; the core fills client_capabilities and log_level, and the transport
 * calls mcp_conn_clear() before freeing it.
 */
struct McpConn {
	char id[64];	    /* "stdio", or the Mcp-Session-Id */
	char tenant[64];    /* who is calling (operator config), "local" on stdio */
	char protocol[16];  /* negotiated revision, "" before initialize */
	bool initialized;   /* initialize answered */
	int (*send)(McpConn *c, json_t *msg); /* borrows msg; thread-safe; may be NULL */
	void *transport;
	/* the core's: the "capabilities" the client declared in initialize (owned, guarded by
	 * the server's lock: read them with mcp_call_client_supports()), and the lowest level
	 * of notifications/message it wants (logging/setLevel; MCP_LOG_DEBUG until then) */
	json_t *client_capabilities;
	int log_level;
};

/** Frees what the core stored on c (the transport calls it before freeing c). */
void mcp_conn_clear(McpConn *c);

/*
 * The channel of one request: over Streamable HTTP, the SSE stream that answers the POST
 * carrying a tools/call. Every message the server sends during that call (progress, log
 * messages, its own requests) goes there, and so does the call's response (the transport
 * sends what mcp_server_handle_stream() returns). Transports without one pass NULL, and
 * conn->send is used.
 */
struct McpStream {
	int (*send)(McpStream *st, json_t *msg); /* borrows msg; thread-safe */
};

/**
 * Handles one message from the client (a request, a notification or a response). Returns the
 * response to send back (owned by the caller), or NULL when there is none (notifications,
 * responses, a cancelled request).
 */
json_t *mcp_server_handle(McpServer *s, McpConn *c, json_t *msg);
/** The same, with the channel of this request (see McpStream; NULL: conn->send). */
json_t *mcp_server_handle_stream(McpServer *s, McpConn *c, json_t *msg, McpStream *stream);

/** Cancels every call in flight on connection c (its client went away); returns at once. */
void mcp_server_cancel_conn(McpServer *s, const McpConn *c);
/** Cancels the call of request id on c, if it is in flight (as notifications/cancelled). */
void mcp_server_cancel(McpServer *s, const McpConn *c, const json_t *id);
/** How many calls are in flight on c (all connections when c is NULL). */
size_t mcp_server_calls(McpServer *s, const McpConn *c);

/** Parses text as one message and handles it; a parse error gets its JSON-RPC error. */
json_t *mcp_server_handle_text(McpServer *s, McpConn *c, const char *text, size_t len);

/** Whether msg is a request (has a method and an id). */
bool mcp_message_is_request(const json_t *msg);
/** Whether msg is the initialize request. */
bool mcp_message_is_initialize(const json_t *msg);
/** The revisions this server speaks, newest first, NULL-terminated. */
extern const char *const mcp_protocol_versions[];

/* The call being handled (borrowed by the handler for the call's duration). */
const McpConn *mcp_call_conn(const McpCall *call);
/** Whether the client cancelled this call (notifications/cancelled). */
bool mcp_call_cancelled(McpCall *call);
/**
 * Registers fn(userdata) to run once, on the thread that receives the cancellation, if the
 * call is cancelled while registered; fn NULL unregisters (after which fn is never running
 * nor going to run). If the call was already cancelled, fn runs at once, here.
 */
void mcp_call_on_cancel(McpCall *call, void (*fn)(void *), void *userdata);
/** Sends notifications/progress when the request asked for progress and the transport can
 * send; otherwise nothing. progress must grow; total <= 0 means unknown; message may be NULL. */
void mcp_call_progress(McpCall *call, double progress, double total, const char *message);
/** Sends notifications/message {level, data: text} when level is at or above the one the
 * client set (logging/setLevel; all levels until it does) and there is a channel. */
void mcp_call_log(McpCall *call, McpLogLevel level, const char *text);
/** Whether the client declared that capability ("elicitation", "sampling", "roots") in
 * initialize. */
bool mcp_call_client_supports(McpCall *call, const char *capability);
/**
 * Sends a request to the client during the call (elicitation/create, sampling/createMessage,
 * roots/list; params borrowed, may be NULL) on the call's channel, and waits for the answer:
 * over stdio it arrives as a line, over HTTP as a POST of its own; the core matches its id.
 * timeout_ms <= 0: no limit but the call's cancellation. Returns
 *   0 with *ret_result the response's result (owned by the caller);
 *   -EREMOTEIO with *ret_result the response's error object (owned by the caller);
 *   -EOPNOTSUPP when the client did not declare the method's capability or there is no
 *   channel (HTTP client that does not accept SSE), -ETIMEDOUT, -ECANCELED (the call was
 *   cancelled; notifications/cancelled then goes to the client for our request), or another
 *   -errno from the transport; *ret_result NULL in these cases.
 */
int mcp_call_request(McpCall *call, const char *method, json_t *params, int timeout_ms,
		     json_t **ret_result);

/* CallToolResult builders. */
/** {content: [text], structuredContent: structured (stolen), isError}. */
json_t *mcp_result_structured(json_t *structured, const char *text, bool is_error);
/** A tool error the model should read: {content: [text], isError: true}. */
json_t *mcp_result_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * Checks value against a JSON Schema of the subset the tools use (type, properties,
 * required, enum, items, additionalProperties false, minimum/maximum, minLength/maxLength,
 * pattern is not checked). Returns true, or false with a one-line reason in err.
 */
bool mcp_schema_check(const json_t *schema, const json_t *value, char *err, size_t errsize);

/* Transports. Both return when the client is gone (stdio: EOF) or on SIGINT/SIGTERM (HTTP),
 * after cancelling what was in flight; 0, or -errno when they could not start. */

/** Serves newline-delimited JSON-RPC on in_fd/out_fd for tenant. */
int mcp_serve_stdio(McpServer *s, const char *tenant, int in_fd, int out_fd);

typedef struct McpHttpOptions {
	const char *listen; /* "HOST:PORT"; port 0 picks a free one */
	/* Bearer token -> tenant name (borrowed, static for the server's life), NULL when the
	 * token is unknown. tenant_for_token NULL: no authentication, every caller is
	 * default_tenant. */
	const char *(*tenant_for_token)(void *userdata, const char *token);
	void *userdata;
	const char *default_tenant;
	char *const *allowed_hosts;   /* Host header names besides loopback and the bind host */
	char *const *allowed_origins; /* Origin values ("https://app.example") besides loopback */
	size_t max_body;	      /* bytes of one POST; 0: 4 MiB */
	/* a request of an unknown or missing Mcp-Session-Id is served as if initialized (with
	 * the MCP-Protocol-Version header's revision): any server behind a load balancer can
	 * take any request */
	bool stateless;
	/* written once the socket listens (for tests and benches), may be NULL */
	void (*listening)(void *userdata, const char *url);
} McpHttpOptions;

/** Serves Streamable HTTP at http://HOST:PORT/mcp until SIGINT or SIGTERM. */
int mcp_serve_http(McpServer *s, const McpHttpOptions *o);
