/* SPDX-License-Identifier: MIT */
/*
 * The stdio transport of MCP (basic/transports, "stdio"): one JSON-RPC message per line on
 * standard input and output, nothing else on standard output, logs on standard error.
 *
 * A tools/call can run for minutes, and the client must still be able to cancel it (a
 * notifications/cancelled line) or make other calls meanwhile, so each tools/call runs on a
 * thread of its own; everything else is answered in order on the reading thread, including
 * the client's responses to our requests (mcp_call_request()), which wake the call's thread.
 * Progress, log messages and our requests of a call go out as lines like any reply. Writes of
 * whole lines are serialized by one mutex, so replies never interleave. At end of input every
 * call in flight is cancelled and waited for: nothing the client started outlives it.
 */
#include "agent/mcp.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/macros.h"
#include "common/util.h"

#define STDIO_MAX_LINE	  (16u << 20) /* bytes of one message */
#define STDIO_MAX_WORKERS 256	      /* tools/call threads at once */

typedef struct StdioTransport {
	McpServer *server;
	McpConn conn;
	int out_fd;
	pthread_mutex_t write_lock;
	pthread_mutex_t lock; /* guards workers */
	pthread_cond_t idle;
	unsigned workers;
} StdioTransport;

static int stdio_send(McpConn *c, json_t *msg)
{
	StdioTransport *t = c->transport;
	_cleanup_free_ char *text = json_dumps(msg, JSON_COMPACT);
	int r;

	if (!text)
		return -ENOMEM;
	pthread_mutex_lock(&t->write_lock);
	r = write_all(t->out_fd, text, strlen(text));
	if (r >= 0)
		r = write_all(t->out_fd, "\n", 1);
	pthread_mutex_unlock(&t->write_lock);
	return r;
}

static void reply(StdioTransport *t, json_t *res)
{
	if (!res)
		return;
	if (stdio_send(&t->conn, res) < 0)
		log_debug("stdio: the client no longer reads our replies");
	json_decref(res);
}

typedef struct Work {
	StdioTransport *t;
	json_t *msg;
} Work;

static void *worker(void *userdata)
{
	Work *w = userdata;
	StdioTransport *t = w->t;

	reply(t, mcp_server_handle(t->server, &t->conn, w->msg));
	json_decref(w->msg);
	free(w);
	pthread_mutex_lock(&t->lock);
	t->workers--;
	pthread_cond_broadcast(&t->idle);
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

static bool is_tool_call(const json_t *msg)
{
	const char *m = json_string_value(json_object_get(msg, "method"));

	return mcp_message_is_request(msg) && m && streq(m, "tools/call");
}

static void dispatch(StdioTransport *t, json_t *msg)
{
	pthread_attr_t attr;
	pthread_t th;
	Work *w;

	if (!is_tool_call(msg)) {
		reply(t, mcp_server_handle(t->server, &t->conn, msg));
		json_decref(msg);
		return;
	}
	pthread_mutex_lock(&t->lock);
	if (t->workers >= STDIO_MAX_WORKERS) {
		pthread_mutex_unlock(&t->lock);
		reply(t, json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
				   json_object_get(msg, "id"), "error", "code", MCP_INTERNAL_ERROR,
				   "message", "too many calls in flight; wait for some to finish"));
		json_decref(msg);
		return;
	}
	t->workers++;
	pthread_mutex_unlock(&t->lock);
	w = malloc(sizeof(*w));
	if (w) {
		*w = (Work){.t = t, .msg = msg};
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&th, &attr, worker, w) == 0) {
			pthread_attr_destroy(&attr);
			return;
		}
		pthread_attr_destroy(&attr);
		free(w);
	}
	/* no thread: answer on this one */
	pthread_mutex_lock(&t->lock);
	t->workers--;
	pthread_mutex_unlock(&t->lock);
	reply(t, mcp_server_handle(t->server, &t->conn, msg));
	json_decref(msg);
}

int mcp_serve_stdio(McpServer *s, const char *tenant, int in_fd, int out_fd)
{
	StdioTransport t = {.server = s, .out_fd = out_fd};
	_cleanup_free_ char *line = NULL;
	FILE *in;
	size_t cap = 0;
	ssize_t n;

	snprintf(t.conn.id, sizeof(t.conn.id), "stdio");
	snprintf(t.conn.tenant, sizeof(t.conn.tenant), "%s", tenant);
	t.conn.send = stdio_send;
	t.conn.transport = &t;
	pthread_mutex_init(&t.write_lock, NULL);
	pthread_mutex_init(&t.lock, NULL);
	pthread_cond_init(&t.idle, NULL);

	in = fdopen(dup(in_fd), "r");
	if (!in)
		return -errno;
	while ((n = getline(&line, &cap, in)) >= 0) {
		json_error_t je;
		json_t *msg;

		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = 0;
		if (n == 0)
			continue;
		if ((size_t) n > STDIO_MAX_LINE) {
			reply(&t, mcp_server_handle_text(s, &t.conn, "[", 1));
			continue;
		}
		msg = json_loadb(line, n, JSON_REJECT_DUPLICATES, &je);
		if (!msg || json_is_array(msg)) {
			json_decref(msg);
			reply(&t, mcp_server_handle_text(s, &t.conn, line, n));
			continue;
		}
		dispatch(&t, msg);
	}
	fclose(in);

	/* the client is gone: stop what it started, then wait for the threads to finish */
	pthread_mutex_lock(&t.lock);
	while (t.workers > 0) {
		struct timespec ts;

		/* again and again: a worker may not have registered its call at the first go */
		pthread_mutex_unlock(&t.lock);
		mcp_server_cancel_conn(s, &t.conn);
		pthread_mutex_lock(&t.lock);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		(void) pthread_cond_timedwait(&t.idle, &t.lock, &ts);
	}
	pthread_mutex_unlock(&t.lock);
	mcp_conn_clear(&t.conn);
	return 0;
}
