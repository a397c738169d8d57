/* SPDX-License-Identifier: MIT */
/*
 * The Streamable HTTP transport of MCP (basic/transports, 2025-11-25), on Debian's
 * libmicrohttpd: we parse no HTTP ourselves.
 *
 * One endpoint, /mcp. POST carries one JSON-RPC message: a request gets its response as
 * application/json (the spec lets a server answer JSON instead of an SSE stream); a
 * notification or a response gets 202. GET (the optional server-to-client stream) is 405,
 * which the spec allows. DELETE with Mcp-Session-Id ends that MCP session.
 *
 * The exception is a tools/call whose client accepts text/event-stream: it is answered with
 * an SSE stream (basic/transports, "Sending Messages to the Server", 6). The call runs on a
 * thread of its own; what it sends meanwhile (progress, log messages, its requests to the
 * client: elicitation, sampling) becomes `id: S-N`, `event: message`, `data: JSON` events on
 * that stream, the response is the last event, and the stream ends. The client answers our
 * requests with POSTs of their own, which the core hands to the waiting call. While nothing
 * happens a `: keepalive` comment goes out every 15 s. We keep no event store, so a stream
 * cannot be resumed (GET is 405, and no priming event invites a reconnection): a client that
 * disconnects from the stream can never get the result, and its call is cancelled.
 *
 * MCP sessions (Mcp-Session-Id, 128 random bits, given at initialize) only scope the protocol
 * state: the negotiated revision and which calls a notifications/cancelled may name. Sandbox
 * sessions are handles in tool arguments (docs/agents.md) and outlive them.
 *
 * Stateless mode (o->stateless, for many servers behind a load balancer, docs/deploy.md): a
 * request whose Mcp-Session-Id this server does not know, or that has none, is served as if
 * initialized — with the revision of its MCP-Protocol-Version header (default the newest)
 * and no client capabilities, so no elicitation or sampling — on a connection state made for
 * that request alone and named by the client's Mcp-Session-Id, so that a notifications/
 * cancelled reaching the same server still finds the call. Only the sandbox session needs a
 * sticky route, and its id carries the shard (Sbx-Session header, below).
 *
 * Routing headers: a client in front of a router sends the sandbox session's id as
 * Sbx-Session (ours) or Mcp-Param-Session-Id (the x-mcp-header mirror of the 2026 revision).
 * On a tools/call they must agree with the arguments' session_id, else 400 with JSON-RPC
 * -32020 (header mismatch): a request routed by one id never acts on another. Sbx-Session
 * with no session_id in the arguments is a routing hint only (code_create_sandbox).
 *
 * Security (transports.mdx, "Security Warning"): the Host header must name this server — a
 * loopback name when we listen on loopback — and an Origin header, when present, must be a
 * loopback origin or one the operator listed, so that a web page cannot reach the server
 * through DNS rebinding (403 otherwise). With tenants configured every request needs
 * "Authorization: Bearer TOKEN" (401 otherwise) and an MCP session is bound to the tenant
 * that opened it: another tenant's token cannot use it (404, as for an unknown session).
 *
 * Threads: one per connection (MHD_USE_THREAD_PER_CONNECTION), so a long tools/call blocks
 * only its own connection; a cancellation arrives on another connection's POST.
 *
 * libmicrohttpd is opened with dlopen() when the HTTP transport starts, not linked: it brings
 * GnuTLS, p11-kit, nettle, gmp and four more libraries whose loading and constructors cost
 * every start of sbxtrace about 1.4-1.8 ms on the 2-core VM (issue 20, docs/performance.md,
 * "Startup against bubblewrap"), `sbxtrace run` included, which never serves HTTP. The name
 * is the SONAME of libmicrohttpd12 (MHD_SONAME, set in agent/meson.build, the package
 * debian/control depends on), looked up as the dynamic loader would have at our start (same
 * search path, same trust), so nothing else can be loaded in its place.
 */
#include "agent/mcp.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "common/macros.h"
#include "common/util.h"

#if MHD_VERSION < 0x00097002
typedef int MhdResult;
#else
typedef enum MHD_Result MhdResult;
#endif

/* the entry points we use, with their declared types (variadic ones included) */
static struct {
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_create_response_from_callback) *create_response_from_callback;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
} mhd;

/* Loads libmicrohttpd once; the serve loop runs once per process. < 0: not loadable. */
static int mhd_load(void)
{
	void *lib;

	if (mhd.stop_daemon)
		return 0;
	lib = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		log_error("cannot load %s (the HTTP transport needs it): %s", MHD_SONAME,
			  dlerror());
		return -ELIBACC;
	}
#define MHD_SYM(name)                                                                              \
	do {                                                                                       \
		*(void **) &mhd.name = dlsym(lib, "MHD_" #name);                                   \
		if (!mhd.name) {                                                                   \
			log_error("%s lacks MHD_%s", MHD_SONAME, #name);                           \
			return -ELIBBAD;                                                           \
		}                                                                                  \
	} while (0)
	MHD_SYM(create_response_from_buffer);
	MHD_SYM(create_response_from_callback);
	MHD_SYM(add_response_header);
	MHD_SYM(queue_response);
	MHD_SYM(destroy_response);
	MHD_SYM(get_connection_info);
	MHD_SYM(lookup_connection_value);
	MHD_SYM(start_daemon);
	MHD_SYM(stop_daemon); /* last: it says the table is complete */
#undef MHD_SYM
	return 0;
}

#define HTTP_MAX_SESSIONS    4096
#define HTTP_MAX_CONNECTIONS 512
#define SSE_KEEPALIVE_MS     15000

typedef struct HttpSession {
	struct HttpSession *next;
	McpConn conn;
	unsigned refs;
	uint64_t last_used;
	bool ephemeral; /* stateless mode: one request's, in no list, freed by its last put */
	bool echo_id;	/* answer with Mcp-Session-Id (not for an ephemeral one without id) */
} HttpSession;

typedef struct HttpServer {
	McpServer *server;
	const McpHttpOptions *o;
	char host[128]; /* the bind address as given */
	bool loopback;
	pthread_mutex_t lock; /* guards sessions, busy, stopping */
	HttpSession *sessions;
	size_t n_sessions;
	unsigned busy;	       /* requests being handled: JSON ones and SSE calls' threads */
	pthread_cond_t idle;   /* busy reached 0 */
	bool stopping;	       /* SIGTERM: no new request */
	unsigned long streams; /* SSE streams opened, for event ids */
} HttpServer;

typedef struct HttpRequest {
	char *body;
	size_t len;
	bool too_large;
	const char *tenant; /* authenticated at the first call, before any of the body */
} HttpRequest;

/* ---- MCP sessions of the transport ---- */

static void session_id_new(char *buf, size_t size)
{
	uint8_t b[16];

	if (getrandom(b, sizeof(b), 0) != sizeof(b))
		abort(); /* no randomness: never hand out a guessable id */
	for (size_t i = 0; i < sizeof(b) && 2 * i + 2 < size; i++)
		snprintf(buf + 2 * i, 3, "%02x", b[i]);
}

static HttpSession *session_new(HttpServer *h, const char *tenant)
{
	HttpSession *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	session_id_new(s->conn.id, sizeof(s->conn.id));
	snprintf(s->conn.tenant, sizeof(s->conn.tenant), "%s", tenant);
	s->refs = 1;
	s->echo_id = true;
	s->last_used = now_monotonic_ns();
	pthread_mutex_lock(&h->lock);
	if (h->n_sessions >= HTTP_MAX_SESSIONS) {
		/* forget the least recently used idle one */
		HttpSession **victim = NULL;

		for (HttpSession **p = &h->sessions; *p; p = &(*p)->next)
			if ((*p)->refs == 0 && (!victim || (*p)->last_used < (*victim)->last_used))
				victim = p;
		if (victim) {
			HttpSession *v = *victim;

			*victim = v->next;
			mcp_conn_clear(&v->conn);
			free(v);
			h->n_sessions--;
		}
	}
	s->next = h->sessions;
	h->sessions = s;
	h->n_sessions++;
	pthread_mutex_unlock(&h->lock);
	return s;
}

static HttpSession *session_get(HttpServer *h, const char *id, const char *tenant)
{
	HttpSession *found = NULL;

	pthread_mutex_lock(&h->lock);
	for (HttpSession *s = h->sessions; s; s = s->next)
		if (streq(s->conn.id, id) && streq(s->conn.tenant, tenant)) {
			s->refs++;
			s->last_used = now_monotonic_ns();
			found = s;
			break;
		}
	pthread_mutex_unlock(&h->lock);
	return found;
}

/* Stateless mode: the state of one request of an MCP session this server does not know (id:
 * the client's Mcp-Session-Id, NULL when it sent none), as if initialized with the revision
 * pv (NULL or unknown: the newest). */
static HttpSession *session_ephemeral(const char *id, const char *tenant, const char *pv)
{
	HttpSession *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (id)
		snprintf(s->conn.id, sizeof(s->conn.id), "%s", id);
	else
		session_id_new(s->conn.id, sizeof(s->conn.id));
	snprintf(s->conn.tenant, sizeof(s->conn.tenant), "%s", tenant);
	snprintf(s->conn.protocol, sizeof(s->conn.protocol), "%s", mcp_protocol_versions[0]);
	for (size_t i = 0; pv && mcp_protocol_versions[i]; i++)
		if (streq(pv, mcp_protocol_versions[i]))
			snprintf(s->conn.protocol, sizeof(s->conn.protocol), "%s", pv);
	s->conn.initialized = true;
	s->refs = 1;
	s->ephemeral = true;
	s->echo_id = id != NULL;
	s->last_used = now_monotonic_ns();
	return s;
}

static void session_put(HttpServer *h, HttpSession *s)
{
	bool gone;

	pthread_mutex_lock(&h->lock);
	gone = --s->refs == 0 && s->ephemeral;
	pthread_mutex_unlock(&h->lock);
	if (gone) {
		mcp_conn_clear(&s->conn);
		free(s);
	}
}

/* An Mcp-Session-Id as the spec has it: 1 to 63 visible ASCII characters. */
static bool session_id_sane(const char *id)
{
	size_t n = 0;

	for (; id[n]; n++)
		if (id[n] < 0x21 || id[n] > 0x7e || n >= 63)
			return false;
	return n > 0;
}

static bool session_delete(HttpServer *h, const char *id, const char *tenant)
{
	bool done = false;

	pthread_mutex_lock(&h->lock);
	for (HttpSession **p = &h->sessions; *p; p = &(*p)->next)
		if (streq((*p)->conn.id, id) && streq((*p)->conn.tenant, tenant)) {
			HttpSession *s = *p;

			mcp_server_cancel_conn(h->server, &s->conn);
			if (s->refs == 0) {
				*p = s->next;
				mcp_conn_clear(&s->conn);
				free(s);
				h->n_sessions--;
			}
			done = true;
			break;
		}
	pthread_mutex_unlock(&h->lock);
	return done;
}

/* ---- checks ---- */

/* The host part of a Host header or an origin's authority: "[::1]:80" -> "::1". */
static void host_part(const char *s, char *buf, size_t size)
{
	const char *end;

	if (*s == '[') {
		end = strchr(s, ']');
		snprintf(buf, size, "%.*s", end ? (int) (end - s - 1) : 0, s + 1);
		return;
	}
	end = strchr(s, ':');
	snprintf(buf, size, "%.*s", end ? (int) (end - s) : (int) strlen(s), s);
}

/* "localhost" or a loopback *address*: a name that merely begins with "127." (such as
 * 127.attacker.example, which the attacker's DNS may answer with 127.0.0.1) is not one, or a
 * web page could reach us through DNS rebinding. */
static bool is_loopback_name(const char *h)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (streq(h, "localhost"))
		return true;
	if (inet_pton(AF_INET, h, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, h, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	return false;
}

static bool host_allowed(const HttpServer *h, const char *host_header)
{
	char name[256];

	if (!host_header)
		return false;
	host_part(host_header, name, sizeof(name));
	if (is_loopback_name(name))
		return true;
	if (h->o->allowed_hosts && strv_contains(h->o->allowed_hosts, name))
		return true;
	/* listening on a non-loopback address: its own address, or any name when the operator
	 * listed none (tokens guard it then) */
	if (!h->loopback)
		return streq(name, h->host) || !h->o->allowed_hosts || !h->o->allowed_hosts[0];
	return false;
}

static bool origin_allowed(const HttpServer *h, const char *origin)
{
	char name[256];
	const char *auth;

	if (!origin)
		return true; /* not a browser */
	if (h->o->allowed_origins && strv_contains(h->o->allowed_origins, origin))
		return true;
	if (strncmp(origin, "http://", 7) == 0)
		auth = origin + 7;
	else if (strncmp(origin, "https://", 8) == 0)
		auth = origin + 8;
	else
		return false;
	host_part(auth, name, sizeof(name));
	return is_loopback_name(name);
}

/* ---- responses ---- */

static MhdResult respond(struct MHD_Connection *c, unsigned status, const char *type,
			 const char *body, const char *session_id)
{
	struct MHD_Response *r;
	MhdResult ret;

	r = mhd.create_response_from_buffer(body ? strlen(body) : 0, (void *) (body ? body : ""),
					    MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	if (type)
		mhd.add_response_header(r, "Content-Type", type);
	if (session_id)
		mhd.add_response_header(r, "Mcp-Session-Id", session_id);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		mhd.add_response_header(r, "Allow", "POST, DELETE");
	if (status == MHD_HTTP_UNAUTHORIZED)
		mhd.add_response_header(r, "WWW-Authenticate", "Bearer");
	ret = mhd.queue_response(c, status, r);
	mhd.destroy_response(r);
	return ret;
}

/* An HTTP-level refusal, with a JSON-RPC error body that says why. */
static MhdResult refuse(struct MHD_Connection *c, unsigned status, const char *why)
{
	_cleanup_free_ char *text = NULL;
	json_t *e = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", "error", "code",
			      MCP_INVALID_REQUEST, "message", why);

	text = e ? json_dumps(e, JSON_COMPACT) : NULL;
	json_decref(e);
	return respond(c, status, "application/json", text, NULL);
}

static MhdResult respond_json(struct MHD_Connection *c, json_t *msg, const char *session_id)
{
	_cleanup_free_ char *text = json_dumps(msg, JSON_COMPACT);

	if (!text)
		return refuse(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	return respond(c, MHD_HTTP_OK, "application/json", text, session_id);
}

/* ---- SSE streams: a tools/call answered as text/event-stream ---- */

#define SSE_MAX_QUEUED (8u << 20) /* bytes of notifications waiting for a slow client */

typedef struct SseStream {
	McpStream base;
	HttpServer *h;
	HttpSession *session; /* a reference, dropped when the call ends */
	char conn_id[64];     /* the session's id and tenant, to cancel the call by */
	char conn_tenant[64];
	json_t *msg; /* the tools/call request */
	json_t *id;  /* its id */
	unsigned long stream_no;
	int wake_fd;	      /* eventfd: buf grew, or the call ended */
	int sock_fd;	      /* the client's socket, watched for its going away; -1: not watched */
	pthread_mutex_t lock; /* guards what follows */
	char *buf;	      /* SSE text not yet handed to MHD: buf[off..len) */
	size_t len, off;
	unsigned long events;
	bool done;     /* the call ended; its response, if any, is in buf */
	bool gone;     /* MHD is done with the stream: nothing more will be read */
	unsigned refs; /* the call's thread and the MHD response */
} SseStream;

static void busy_leave(HttpServer *h)
{
	pthread_mutex_lock(&h->lock);
	if (--h->busy == 0)
		pthread_cond_broadcast(&h->idle);
	pthread_mutex_unlock(&h->lock);
}

static void sse_unref(SseStream *st)
{
	bool last;

	pthread_mutex_lock(&st->lock);
	last = --st->refs == 0;
	pthread_mutex_unlock(&st->lock);
	if (!last)
		return;
	json_decref(st->msg);
	json_decref(st->id);
	free(st->buf);
	if (st->wake_fd >= 0)
		close(st->wake_fd);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

static void sse_wake(SseStream *st)
{
	uint64_t one = 1;

	(void) !write(st->wake_fd, &one, sizeof(one));
}

/* Appends text as one event (final: the call's response, which a full queue does not refuse). */
static int sse_push(SseStream *st, json_t *msg, bool final)
{
	_cleanup_free_ char *text = json_dumps(msg, JSON_COMPACT);
	char head[96];
	size_t tl;
	char *n;
	int hl;

	if (!text)
		return -ENOMEM;
	tl = strlen(text); /* compact JSON has no newline: one data line */
	pthread_mutex_lock(&st->lock);
	if (st->gone || st->done) {
		pthread_mutex_unlock(&st->lock);
		return -EPIPE;
	}
	if (!final && st->len - st->off > SSE_MAX_QUEUED) {
		pthread_mutex_unlock(&st->lock);
		return -ENOBUFS;
	}
	if (st->off > 0) {
		memmove(st->buf, st->buf + st->off, st->len - st->off);
		st->len -= st->off;
		st->off = 0;
	}
	hl = snprintf(head, sizeof(head), "id: %lu-%lu\nevent: message\ndata: ", st->stream_no,
		      ++st->events);
	n = realloc(st->buf, st->len + hl + tl + 2);
	if (!n) {
		pthread_mutex_unlock(&st->lock);
		return -ENOMEM;
	}
	st->buf = n;
	memcpy(st->buf + st->len, head, hl);
	memcpy(st->buf + st->len + hl, text, tl);
	memcpy(st->buf + st->len + hl + tl, "\n\n", 2);
	st->len += hl + tl + 2;
	pthread_mutex_unlock(&st->lock);
	sse_wake(st);
	return 0;
}

static int sse_send(McpStream *base, json_t *msg)
{
	return sse_push((SseStream *) base, msg, false);
}

/* The client went away from the stream (or MHD dropped it): nobody can get the result, so
 * the call is cancelled, if it still runs. */
static void sse_abandon(SseStream *st)
{
	McpConn c = {};
	bool running;

	pthread_mutex_lock(&st->lock);
	running = !st->done && !st->gone;
	st->gone = true;
	pthread_mutex_unlock(&st->lock);
	if (!running)
		return;
	snprintf(c.id, sizeof(c.id), "%s", st->conn_id);
	snprintf(c.tenant, sizeof(c.tenant), "%s", st->conn_tenant);
	mcp_server_cancel(st->h->server, &c, st->id);
}

/* MHD's content reader: blocks (its connection has a thread of its own) until there is
 * something to send, the call ended, the client left, or a keepalive is due. */
static ssize_t sse_read(void *cls, uint64_t pos, char *out, size_t max)
{
	static const char keepalive[] = ": keepalive\n\n";
	SseStream *st = cls;
	uint64_t deadline = now_monotonic_ns() + SSE_KEEPALIVE_MS * 1000000ull;

	(void) pos;
	for (;;) {
		struct pollfd pfd[2] = {{.fd = st->wake_fd, .events = POLLIN},
					{.fd = st->sock_fd, .events = POLLRDHUP}};
		uint64_t now;
		int wait_ms;
		size_t n;

		pthread_mutex_lock(&st->lock);
		if (st->off < st->len) {
			n = MIN(max, st->len - st->off);
			memcpy(out, st->buf + st->off, n);
			st->off += n;
			if (st->off == st->len)
				st->off = st->len = 0;
			pthread_mutex_unlock(&st->lock);
			return (ssize_t) n;
		}
		if (st->done) {
			pthread_mutex_unlock(&st->lock);
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
		pthread_mutex_unlock(&st->lock);
		now = now_monotonic_ns();
		if (now >= deadline) {
			n = MIN(max, sizeof(keepalive) - 1);
			memcpy(out, keepalive, n);
			return (ssize_t) n;
		}
		wait_ms = (int) ((deadline - now) / 1000000 + 1);
		if (poll(pfd, st->sock_fd >= 0 ? 2 : 1, wait_ms) < 0 && errno != EINTR)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		if (pfd[1].revents & (POLLRDHUP | POLLHUP | POLLERR)) {
			log_debug("mcp http: the client left the stream of a tools/call; "
				  "cancelling it");
			sse_abandon(st);
			return MHD_CONTENT_READER_END_WITH_ERROR;
		}
		if (pfd[0].revents & POLLIN) {
			uint64_t v;

			(void) !read(st->wake_fd, &v, sizeof(v));
		}
	}
}

/* MHD destroys the response: the stream ended, or the connection broke. */
static void sse_free(void *cls)
{
	SseStream *st = cls;

	sse_abandon(st);
	sse_unref(st);
}

/* The call's thread: runs the tools/call, then ends the stream with its response. */
static void *sse_call(void *userdata)
{
	SseStream *st = userdata;
	HttpServer *h = st->h;
	json_t *res = mcp_server_handle_stream(h->server, &st->session->conn, st->msg, &st->base);

	if (res)
		(void) sse_push(st, res, true);
	json_decref(res);
	pthread_mutex_lock(&st->lock);
	st->done = true;
	pthread_mutex_unlock(&st->lock);
	sse_wake(st);
	session_put(h, st->session);
	sse_unref(st);
	busy_leave(h);
	return NULL;
}

/* Whether the client lists text/event-stream in Accept. */
static bool accepts_sse(const char *accept)
{
	return accept && strcasestr(accept, "text/event-stream");
}

/* Answers the tools/call msg (stolen) of session s (its reference is taken over) with an SSE
 * stream; NULL response when the stream could not be set up (the caller answers JSON then,
 * with msg and the reference back). */
static struct MHD_Response *sse_start(HttpServer *h, struct MHD_Connection *c, HttpSession *s,
				      json_t *msg)
{
	const union MHD_ConnectionInfo *ci =
		mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	SseStream *st = calloc(1, sizeof(*st));
	struct MHD_Response *r;
	pthread_attr_t attr;
	pthread_t th;

	if (!st)
		return NULL;
	st->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (st->wake_fd < 0) {
		free(st);
		return NULL;
	}
	st->base.send = sse_send;
	st->h = h;
	st->session = s;
	snprintf(st->conn_id, sizeof(st->conn_id), "%s", s->conn.id);
	snprintf(st->conn_tenant, sizeof(st->conn_tenant), "%s", s->conn.tenant);
	st->id = json_deep_copy(json_object_get(msg, "id"));
	st->sock_fd = ci ? ci->connect_fd : -1;
	st->refs = 2;
	pthread_mutex_init(&st->lock, NULL);
	/* a comment first: the headers leave at once, before the tool has anything to say */
	st->buf = strdup(": stream of a tools/call\n\n");
	st->len = st->buf ? strlen(st->buf) : 0;
	pthread_mutex_lock(&h->lock);
	st->stream_no = ++h->streams;
	pthread_mutex_unlock(&h->lock);
	r = mhd.create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, sse_read, st, sse_free);
	if (!r) {
		st->refs = 1;
		sse_unref(st);
		return NULL;
	}
	st->msg = msg;
	mhd.add_response_header(r, "Content-Type", "text/event-stream");
	mhd.add_response_header(r, "Cache-Control", "no-cache");
	if (s->echo_id)
		mhd.add_response_header(r, "Mcp-Session-Id", s->conn.id);

	pthread_mutex_lock(&h->lock);
	h->busy++; /* the call's thread; the request itself is busy already: no stopping check */
	pthread_mutex_unlock(&h->lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, sse_call, st) != 0)
		(void) sse_call(st); /* no thread: the call runs here, the stream replays it */
	pthread_attr_destroy(&attr);
	return r;
}

/* ---- the handler ---- */

static const char *header(struct MHD_Connection *c, const char *name)
{
	return mhd.lookup_connection_value(c, MHD_HEADER_KIND, name);
}

#define MCP_HEADER_MISMATCH (-32020) /* the 2026 revision's: a header disagrees with the body */

/* Whether the routing headers of a tools/call agree with its arguments' session_id (see the
 * top of the file); *why says how they do not. */
static bool routing_headers_agree(struct MHD_Connection *c, const json_t *msg, const char **why)
{
	const char *sbx = header(c, "Sbx-Session"), *param = header(c, "Mcp-Param-Session-Id");
	const json_t *params = json_object_get(msg, "params");
	const char *arg;

	if ((!sbx && !param) || !mcp_message_is_request(msg) ||
	    !streq(json_string_value(json_object_get(msg, "method")), "tools/call"))
		return true;
	arg = json_string_value(
		json_object_get(json_object_get(params, "arguments"), "session_id"));
	if (param && (!arg || !streq(param, arg))) {
		*why = "header mismatch: Mcp-Param-Session-Id is not the arguments' session_id";
		return false;
	}
	if (sbx && arg && !streq(sbx, arg)) {
		*why = "header mismatch: Sbx-Session is not the arguments' session_id (a router "
		       "sent this call by another session's id)";
		return false;
	}
	return true;
}

/* The tenant of this request: 0 and *ret_tenant, or the HTTP status to refuse with. */
static unsigned authenticate(HttpServer *h, struct MHD_Connection *c, const char **ret_tenant)
{
	const char *auth = header(c, "Authorization"), *tenant;

	if (!h->o->tenant_for_token) {
		*ret_tenant = h->o->default_tenant ? h->o->default_tenant : "local";
		return 0;
	}
	if (!auth || strncasecmp(auth, "Bearer ", 7) != 0)
		return MHD_HTTP_UNAUTHORIZED;
	tenant = h->o->tenant_for_token(h->o->userdata, auth + 7);
	if (!tenant)
		return MHD_HTTP_UNAUTHORIZED;
	*ret_tenant = tenant;
	return 0;
}

static MhdResult handle_post_counted(HttpServer *h, struct MHD_Connection *c, const char *tenant,
				     const HttpRequest *req)
{
	const char *sid = header(c, "Mcp-Session-Id");
	const char *pv = header(c, "MCP-Protocol-Version");
	const char *why = NULL;
	json_error_t je;
	json_t *msg, *res;
	HttpSession *s;
	MhdResult ret;

	if (pv) {
		bool known = false;

		for (size_t i = 0; mcp_protocol_versions[i]; i++)
			if (streq(pv, mcp_protocol_versions[i]) || streq(pv, "2025-03-26"))
				known = true;
		if (!known)
			return refuse(c, MHD_HTTP_BAD_REQUEST, "unsupported MCP-Protocol-Version");
	}
	msg = json_loadb(req->body ? req->body : "", req->len, JSON_REJECT_DUPLICATES, &je);
	if (!msg || json_is_array(msg)) {
		McpConn tmp = {};
		_cleanup_free_ char *text = NULL;

		json_decref(msg);
		res = mcp_server_handle_text(h->server, &tmp, req->body ? req->body : "", req->len);
		text = res ? json_dumps(res, JSON_COMPACT) : NULL;
		json_decref(res);
		return respond(c, MHD_HTTP_BAD_REQUEST, "application/json", text, NULL);
	}

	if (mcp_message_is_initialize(msg)) {
		s = session_new(h, tenant);
		if (!s) {
			json_decref(msg);
			return refuse(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
		}
	} else if (h->o->stateless) {
		if (sid && !session_id_sane(sid)) {
			json_decref(msg);
			return refuse(c, MHD_HTTP_BAD_REQUEST, "malformed Mcp-Session-Id");
		}
		s = sid ? session_get(h, sid, tenant) : NULL;
		if (!s)
			s = session_ephemeral(sid, tenant, pv);
		if (!s) {
			json_decref(msg);
			return refuse(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
		}
	} else {
		if (!sid) {
			json_decref(msg);
			return refuse(c, MHD_HTTP_BAD_REQUEST,
				      "Mcp-Session-Id header is required (send initialize first)");
		}
		s = session_get(h, sid, tenant);
		if (!s) {
			json_decref(msg);
			return refuse(c, MHD_HTTP_NOT_FOUND,
				      "unknown MCP session: send initialize again");
		}
	}
	if (!routing_headers_agree(c, msg, &why)) {
		_cleanup_free_ char *text = NULL;
		json_t *e = json_pack("{s:s, s:O?, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
				      json_object_get(msg, "id"), "error", "code",
				      MCP_HEADER_MISMATCH, "message", why);

		text = e ? json_dumps(e, JSON_COMPACT) : NULL;
		json_decref(e);
		json_decref(msg);
		session_put(h, s);
		return respond(c, MHD_HTTP_BAD_REQUEST, "application/json", text, NULL);
	}
	if (accepts_sse(header(c, "Accept")) && mcp_message_is_request(msg) &&
	    streq(json_string_value(json_object_get(msg, "method")), "tools/call")) {
		struct MHD_Response *r = sse_start(h, c, s, msg);

		if (r) {
			/* msg and the session's reference now belong to the call's thread */
			ret = mhd.queue_response(c, MHD_HTTP_OK, r);
			mhd.destroy_response(r);
			return ret;
		}
	}
	res = mcp_server_handle(h->server, &s->conn, msg);
	if (!mcp_message_is_request(msg)) {
		json_decref(msg);
		json_decref(res);
		session_put(h, s);
		return respond(c, MHD_HTTP_ACCEPTED, NULL, NULL, NULL);
	}
	json_decref(msg);
	if (!res) {
		/* the call was cancelled: the client stopped waiting for it */
		session_put(h, s);
		return respond(c, MHD_HTTP_ACCEPTED, NULL, NULL, NULL);
	}
	ret = respond_json(c, res, s->echo_id ? s->conn.id : NULL);
	json_decref(res);
	session_put(h, s);
	return ret;
}

/* The request counts as busy while handled, so that a shutdown waits for it. */
static MhdResult handle_post(HttpServer *h, struct MHD_Connection *c, const char *tenant,
			     const HttpRequest *req)
{
	MhdResult ret;

	pthread_mutex_lock(&h->lock);
	if (h->stopping) {
		pthread_mutex_unlock(&h->lock);
		return refuse(c, MHD_HTTP_SERVICE_UNAVAILABLE, "the server is stopping");
	}
	h->busy++;
	pthread_mutex_unlock(&h->lock);
	ret = handle_post_counted(h, c, tenant, req);
	busy_leave(h);
	return ret;
}

static MhdResult handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			 const char *version, const char *upload_data, size_t *upload_data_size,
			 void **con_cls)
{
	HttpServer *h = cls;
	HttpRequest *req = *con_cls;
	const char *tenant = NULL;
	size_t max = h->o->max_body ? h->o->max_body : (4u << 20);
	unsigned status;

	(void) version;
	if (!req) {
		const char *cl = header(c, "Content-Length");

		/* Everything that refuses a request is decided from its headers, at this first
		 * call, before we buffer a byte of its body: an unauthenticated client must not
		 * make us hold max_body per connection, nor wait for a body it never sends. */
		if (!host_allowed(h, header(c, "Host")))
			return refuse(c, MHD_HTTP_FORBIDDEN, "Host header not allowed");
		if (!origin_allowed(h, header(c, "Origin")))
			return refuse(c, MHD_HTTP_FORBIDDEN, "Origin not allowed");
		if (!streq(url, "/mcp"))
			return refuse(c, MHD_HTTP_NOT_FOUND, "the MCP endpoint is /mcp");
		status = authenticate(h, c, &tenant);
		if (status)
			return refuse(c, status, "a valid bearer token is required");
		if (cl && strtoull(cl, NULL, 10) > max)
			return refuse(c, 413, "message too large");
		req = calloc(1, sizeof(*req));
		if (!req)
			return MHD_NO;
		req->tenant = tenant;
		*con_cls = req;
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		if (!req->too_large && req->len + *upload_data_size <= max) {
			char *n = realloc(req->body, req->len + *upload_data_size + 1);

			if (!n)
				req->too_large = true;
			else {
				req->body = n;
				memcpy(req->body + req->len, upload_data, *upload_data_size);
				req->len += *upload_data_size;
				req->body[req->len] = 0;
			}
		} else
			req->too_large = true;
		*upload_data_size = 0;
		return MHD_YES;
	}

	tenant = req->tenant;
	if (streq(method, "POST")) {
		if (req->too_large)
			return refuse(c, 413, "message too large");
		return handle_post(h, c, tenant, req);
	}
	if (streq(method, "DELETE")) {
		const char *sid = header(c, "Mcp-Session-Id");

		if (!sid || (!session_delete(h, sid, tenant) && !h->o->stateless))
			return refuse(c, MHD_HTTP_NOT_FOUND, "unknown MCP session");
		/* stateless: this server may simply never have seen it; nothing to end here */
		return respond(c, MHD_HTTP_OK, NULL, NULL, NULL);
	}
	return refuse(c, MHD_HTTP_METHOD_NOT_ALLOWED, "use POST");
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	HttpRequest *req = *con_cls;

	(void) cls;
	(void) c;
	(void) toe;
	if (req) {
		free(req->body);
		free(req);
		*con_cls = NULL;
	}
}

/* Binds HOST:PORT; the socket and the URL it serves. */
static int listen_on(const char *listen_addr, char *ret_host, size_t host_size, bool *ret_loopback,
		     char *ret_url, size_t url_size)
{
	struct sockaddr_storage ss = {};
	socklen_t sl;
	char host[128];
	const char *colon = strrchr(listen_addr, ':');
	char *end;
	long port;
	int fd, one = 1;

	if (!colon)
		return -EINVAL;
	port = strtol(colon + 1, &end, 10);
	if (*end || port < 0 || port > 65535 || end == colon + 1)
		return -EINVAL;
	host_part(listen_addr, host, sizeof(host));
	if (!*host || streq(host, "localhost"))
		snprintf(host, sizeof(host), "127.0.0.1");
	if (strchr(host, ':')) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *) &ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			return -EINVAL;
		sl = sizeof(*a);
		*ret_loopback = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *) &ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return -EINVAL;
		sl = sizeof(*a);
		*ret_loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	(void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *) &ss, sl) < 0 || listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *) &ss, &sl) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *) &ss)->sin6_port
					      : ((struct sockaddr_in *) &ss)->sin_port);
	snprintf(ret_host, host_size, "%s", host);
	snprintf(ret_url, url_size, "http://%s%s%s:%ld/mcp", strchr(host, ':') ? "[" : "", host,
		 strchr(host, ':') ? "]" : "", port);
	return fd;
}

int mcp_serve_http(McpServer *s, const McpHttpOptions *o)
{
	HttpServer h = {.server = s, .o = o};
	struct MHD_Daemon *d;
	char url[256];
	sigset_t ss, old;
	int fd, sig;

	fd = mhd_load();
	if (fd < 0)
		return fd;
	fd = listen_on(o->listen, h.host, sizeof(h.host), &h.loopback, url, sizeof(url));
	if (fd < 0)
		return fd;
	pthread_mutex_init(&h.lock, NULL);
	pthread_cond_init(&h.idle, NULL);
	/* the daemon's threads inherit this mask: SIGINT and SIGTERM come to sigwait below */
	sigemptyset(&ss);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &ss, &old);
	d = mhd.start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
				     MHD_USE_ERROR_LOG,
			     0, NULL, NULL, handler, &h, MHD_OPTION_LISTEN_SOCKET, fd,
			     MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned) HTTP_MAX_CONNECTIONS,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned) 300, MHD_OPTION_END);
	if (!d) {
		close(fd);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return -EIO;
	}
	if (o->listening)
		o->listening(o->userdata, url);
	sigdelset(&ss, SIGPIPE);
	do
		sig = 0, (void) sigwait(&ss, &sig);
	while (sig != SIGINT && sig != SIGTERM);

	/* stop what runs and wait for it (again and again: a call may not have registered at
	 * the first go), then the daemon (which waits for its connection threads) */
	pthread_mutex_lock(&h.lock);
	h.stopping = true;
	while (h.busy > 0) {
		struct timespec ts;

		for (HttpSession *x = h.sessions; x; x = x->next)
			mcp_server_cancel_conn(s, &x->conn);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		(void) pthread_cond_timedwait(&h.idle, &h.lock, &ts);
	}
	pthread_mutex_unlock(&h.lock);
	mhd.stop_daemon(d);
	close(fd);
	while (h.sessions) {
		HttpSession *x = h.sessions;

		h.sessions = x->next;
		mcp_conn_clear(&x->conn);
		free(x);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return 0;
}
