/* SPDX-License-Identifier: MIT */
/*
 * Human approval of tool calls (docs/agents.md, "Human approval"; seed 003's HITL gate).
 *
 * Before a tool runs, the first rule that matches the call (the operator's [[approval.rule]],
 * then seed 003's set) gives its risk level; when the operator requires approval for that
 * level ([approval] require), the call waits for a decision — allow_once, allow_session or
 * deny — asked, in order, through:
 *   1. the MCP client's elicitation (a form), when the client declared that capability;
 *   2. the approval socket: a Unix socket of this server (mode 0600, in the user's runtime
 *      directory, never inside a session's view) that `sbxtrace approvals` lists and
 *      `sbxtrace approve ID --allow|--allow-session|--deny` answers; its board of waiting
 *      calls, its thread and its peer checks are common/approval-board.c, shared with
 *      `sbxtrace run --approval-socket`;
 * and with neither, the call fails with approval_required. A timeout denies. allow_session
 * remembers the rule for the session (for calls outside one: the MCP connection).
 *
 * A decision never comes from the call itself: its arguments are only matched against the
 * rules (and the tools' schemas refuse unknown keys before we run); the answer comes from
 * the client's human or from the socket, whose peer must be this user or root.
 *
 * Every request, decision, decider and timing goes to the session's audit log (record.c);
 * calls outside a session go to DATA_DIR/TENANT/audit.jsonl.
 */
#include "agent/internal.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/approval-board.h"
#include "common/approval-wire.h"
#include "common/macros.h"
#include "common/util.h"

#define MAX_TOOLS   64
#define HEARTBEAT_S 5

/* ---- levels, rules ---- */

static const char *const risk_names[_RISK_MAX] = {"LOW", "MEDIUM", "HIGH", "CRITICAL"};

const char *risk_level_to_string(RiskLevel r)
{
	return r >= 0 && r < _RISK_MAX ? risk_names[r] : NULL;
}

RiskLevel risk_level_from_string(const char *s)
{
	for (int i = 0; s && i < _RISK_MAX; i++)
		if (strcasecmp(s, risk_names[i]) == 0)
			return i;
	return _RISK_INVALID;
}

int approval_condition_compile(ApprovalCondition *c, const char *pattern, char *err,
			       size_t errsize)
{
	int flags = REG_EXTENDED | REG_NOSUB, r;
	const char *p = pattern;
	regex_t *re;

	if (strncmp(p, "(?i)", 4) == 0) {
		flags |= REG_ICASE;
		p += 4;
	}
	re = calloc(1, sizeof(*re));
	c->matches = strdup(pattern);
	if (!re || !c->matches) {
		free(re);
		return -ENOMEM;
	}
	r = regcomp(re, p, flags);
	if (r != 0) {
		char msg[160];

		regerror(r, re, msg, sizeof(msg));
		snprintf(err, errsize, "not a POSIX extended regex: %s", msg);
		free(re);
		return -EINVAL;
	}
	c->re = re;
	return 0;
}

void approval_rule_clear(ApprovalRule *r)
{
	strv_free(r->tools);
	for (size_t i = 0; i < r->n_conditions; i++) {
		ApprovalCondition *c = &r->conditions[i];

		free(c->param);
		json_decref(c->equals);
		free(c->matches);
		if (c->re) {
			regfree(c->re);
			free(c->re);
		}
	}
	free(r->conditions);
	free(r->description);
	*r = (ApprovalRule){};
}

/* Seed 003's rule set, in our tools' terms (docs/agents.md lists it). */
#define DANGEROUS "(?i)(rm\\s+-rf|curl.*\\|\\s*sh|eval\\(|exec\\()"
static const struct {
	const char *tools[8];
	const char *param, *matches, *equals;
	RiskLevel risk;
	uint64_t timeout_s;
	const char *description;
} default_rules[] = {
	{{"code_execute", "code_run_command"}, "_session.network_mode", "^(allowlist|full)$", NULL,
	 RISK_CRITICAL, 30, "Code execution with network access"},
	{{"code_execute"}, "code", DANGEROUS, NULL, RISK_CRITICAL, 30,
	 "Dangerous code patterns detected"},
	{{"code_run_command"}, "command", DANGEROUS, NULL, RISK_CRITICAL, 30,
	 "Dangerous code patterns detected"},
	{{"code_run_command"}, "argv", DANGEROUS, NULL, RISK_CRITICAL, 30,
	 "Dangerous code patterns detected"},
	{{"code_execute", "code_run_command"}, NULL, NULL, NULL, RISK_HIGH, 60,
	 "Code execution in sandbox"},
	{{"code_install_package"}, NULL, NULL, NULL, RISK_HIGH, 60, "Package installation"},
	{{"code_process"}, "action", NULL, "write_stdin", RISK_HIGH, 60,
	 "Input to a running process"},
	{{"code_write_file"}, "path", "(?i)\\.(sh|bash|py|js|mjs|cjs|pl|rb)$", NULL, RISK_HIGH, 60,
	 "Writing an executable file"},
	{{"code_write_file", "code_read_file", "code_list_files"}, NULL, NULL, NULL, RISK_MEDIUM,
	 120, "Reading or writing files in the workspace"},
	{{"code_destroy_sandbox", "code_sandbox_info", "code_reset_context", "code_create_sandbox",
	  "code_mark_private", "code_process", "code_audit"},
	 NULL, NULL, NULL, RISK_LOW, 300, "Sandbox lifecycle and metadata"},
};

static int build_default_rules(ApprovalRule **ret, size_t *ret_n)
{
	ApprovalRule *v = calloc(ARRAY_SIZE(default_rules), sizeof(*v));
	char err[200];

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < ARRAY_SIZE(default_rules); i++) {
		ApprovalRule *r = &v[i];

		*ret_n = i + 1;
		r->tools = strv_copy((char *const *) default_rules[i].tools);
		r->description = strdup(default_rules[i].description);
		r->risk = default_rules[i].risk;
		r->timeout_s = default_rules[i].timeout_s;
		if (!r->tools || !r->description)
			goto oom;
		if (default_rules[i].param) {
			r->conditions = calloc(1, sizeof(*r->conditions));
			if (!r->conditions)
				goto oom;
			r->n_conditions = 1;
			r->conditions[0].param = strdup(default_rules[i].param);
			if (!r->conditions[0].param)
				goto oom;
			if (default_rules[i].equals)
				r->conditions[0].equals = json_string(default_rules[i].equals);
			else if (approval_condition_compile(&r->conditions[0], default_rules[i].matches,
							    err, sizeof(err)) < 0)
				goto oom;
		}
	}
	*ret = v;
	return 0;
oom:
	for (size_t i = 0; i < *ret_n; i++)
		approval_rule_clear(&v[i]);
	free(v);
	return -ENOMEM;
}

/* The value at a dotted path of view, or NULL. */
static const json_t *lookup(const json_t *view, const char *path)
{
	char key[128];

	while (view && *path) {
		size_t n = strcspn(path, ".");

		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = 0;
		view = json_object_get(view, key);
		path += n + (path[n] == '.');
	}
	return view;
}

/* What `matches` is matched against: a string as it is, an array's strings joined by
 * spaces (argv), anything else as JSON. */
static char *match_text(const json_t *v)
{
	if (json_is_string(v))
		return strdup(json_string_value(v));
	if (json_is_array(v)) {
		char *buf = NULL;
		size_t size = 0, i;
		const json_t *x;
		FILE *f = open_memstream(&buf, &size);

		if (!f)
			return NULL;
		json_array_foreach((json_t *) v, i, x) {
			if (i)
				fputc(' ', f);
			if (json_is_string(x))
				fputs(json_string_value(x), f);
			else {
				char *t = json_dumps(x, JSON_COMPACT | JSON_ENCODE_ANY);

				fputs(t ? t : "", f);
				free(t);
			}
		}
		fclose(f);
		return buf;
	}
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

static bool rule_matches(const ApprovalRule *r, const char *tool, const json_t *view)
{
	if (!strv_contains(r->tools, tool) && !strv_contains(r->tools, "*"))
		return false;
	for (size_t i = 0; i < r->n_conditions; i++) {
		const ApprovalCondition *c = &r->conditions[i];
		const json_t *v = lookup(view, c->param);

		if (!v)
			return false;
		if (c->equals) {
			if (!json_equal((json_t *) v, c->equals))
				return false;
		} else {
			_cleanup_free_ char *t = match_text(v);

			if (!t || regexec(c->re, t, 0, NULL, 0) != 0)
				return false;
		}
	}
	return true;
}

/* ---- the state ---- */

typedef struct Approval Approval;

/* An allow_session: rule index in scope (a session id, or "conn:" and the connection's). */
typedef struct Remembered {
	struct Remembered *next;
	char tenant[64];
	char scope[96];
	size_t rule;
} Remembered;

typedef struct ToolWrap {
	Approval *ap;
	const char *name;
	McpToolHandler handler;
	void *userdata;
} ToolWrap;

/* The audit log of a tenant's calls outside a session: record_event() on a stand-in. */
typedef struct TenantLog {
	struct TenantLog *next;
	Session s;
} TenantLog;

struct Approval {
	Agent *agent;
	const ApprovalConfig *cfg;
	const ApprovalRule **rules; /* the operator's, then the defaults */
	size_t n_rules;
	ApprovalRule *defaults;
	size_t n_defaults;
	ApprovalBoard *board;	/* the calls waiting on the socket */
	ApprovalServer *server; /* the socket, NULL: none (or stopped) */
	char *socket_path;	/* where it was; stays after the stop, as ret_socket points here */
	bool have_socket;
	pthread_mutex_t lock; /* guards what follows */
	Remembered *remembered;
	TenantLog *logs;
	ToolWrap wraps[MAX_TOOLS];
	size_t n_wraps;
};

static void audit(Approval *ap, Session *s, const char *tenant, const char *kind, json_t *f)
{
	TenantLog *l;

	if (s) {
		record_event(s, kind, f);
		return;
	}
	pthread_mutex_lock(&ap->lock);
	for (l = ap->logs; l; l = l->next)
		if (streq(l->s.tenant, tenant))
			break;
	if (!l && (l = calloc(1, sizeof(*l)))) {
		snprintf(l->s.tenant, sizeof(l->s.tenant), "%s", tenant);
		l->s.dir = strdup_printf("%s/%s", ap->agent->data_dir, tenant);
		pthread_mutex_init(&l->s.lock, NULL);
		if (l->s.dir)
			(void) mkdir(l->s.dir, 0700);
		l->next = ap->logs;
		ap->logs = l;
	}
	pthread_mutex_unlock(&ap->lock);
	if (l && l->s.dir)
		record_event(&l->s, kind, f);
	else
		json_decref(f);
}

/* ---- asking ---- */

typedef struct Request {
	char id[32];
	const char *tool, *tenant, *session_id;
	RiskLevel risk;
	const char *rule; /* description */
	uint64_t timeout_s;
	char *shown; /* the arguments for a human, JSON */
} Request;

typedef struct Outcome {
	ApprovalDecision decision;
	char decider[160];
	char *note;
	const char *channel; /* "elicitation", "socket", "none" */
	bool timed_out, cancelled;
	char reason[300]; /* when denied without a human */
} Outcome;

static int ask_elicitation(McpCall *call, const Request *rq, Outcome *o)
{
	_cleanup_free_ char *msg = strdup_printf(
		"sbxtrace asks for approval (request %s)\n%s risk: %s\nTool: %s%s%s\nArguments: "
		"%.4000s%s\nDecide within %llu s, or it is denied.",
		rq->id, risk_level_to_string(rq->risk), rq->rule, rq->tool,
		rq->session_id ? " in session " : "", rq->session_id ? rq->session_id : "",
		rq->shown, strlen(rq->shown) > 4000 ? "…" : "", (unsigned long long) rq->timeout_s);
	json_t *params, *res = NULL;
	const char *action, *d;
	int r;

	if (!msg)
		return -ENOMEM;
	params = json_pack(
		"{s:s, s:{s:s, s:{s:{s:s, s:s, s:s, s:[sss]}, s:{s:s, s:s, s:s, s:i}}, s:[s]}}",
		"message", msg, "requestedSchema", "type", "object", "properties", "decision",
		"type", "string", "title", "Decision", "description",
		"allow_once: run this call; allow_session: also later calls of this rule in the "
		"session; deny: refuse it",
		"enum", "allow_once", "allow_session", "deny", "note", "type", "string", "title", "Note",
		"description", "optional, recorded in the audit log and shown to the agent",
		"maxLength", 1000, "required", "decision");
	if (!params)
		return -ENOMEM;
	r = mcp_call_request(call, "elicitation/create", params, (int) (rq->timeout_s * 1000), &res);
	json_decref(params);
	o->channel = "elicitation";
	switch (r) {
	case 0:
		action = json_string_value(json_object_get(res, "action"));
		d = json_string_value(json_object_get(json_object_get(res, "content"), "decision"));
		o->note = json_is_string(json_object_get(json_object_get(res, "content"), "note"))
				  ? strdup(json_string_value(json_object_get(json_object_get(res, "content"), "note")))
				  : NULL;
		snprintf(o->decider, sizeof(o->decider), "elicitation (the MCP client's user, action %s)",
			 action ? action : "?");
		if (action && streq(action, "accept") &&
		    approval_decision_from_string(d) != APPROVAL_NONE)
			o->decision = approval_decision_from_string(d);
		else {
			o->decision = APPROVAL_DENY;
			if (action && streq(action, "accept"))
				snprintf(o->reason, sizeof(o->reason), "the form's decision was not one of "
					 "allow_once, allow_session, deny");
			else
				snprintf(o->reason, sizeof(o->reason), "the user answered %s",
					 action ? action : "without an action");
		}
		json_decref(res);
		return 0;
	case -ETIMEDOUT:
		o->decision = APPROVAL_DENY;
		o->timed_out = true;
		snprintf(o->decider, sizeof(o->decider), "timeout");
		snprintf(o->reason, sizeof(o->reason), "no answer to the elicitation within %llu s",
			 (unsigned long long) rq->timeout_s);
		return 0;
	case -ECANCELED:
		o->decision = APPROVAL_DENY;
		o->cancelled = true;
		snprintf(o->decider, sizeof(o->decider), "cancelled");
		snprintf(o->reason, sizeof(o->reason), "the tool call was cancelled");
		return 0;
	default:
		/* no channel after all (an HTTP client without SSE) or the client failed: next */
		json_decref(res);
		return r == -ENOMEM ? r : 1;
	}
}

typedef struct CancelCtx {
	ApprovalBoard *board;
	ApprovalWaiter *w;
} CancelCtx;

static void cancel_waiter(void *userdata)
{
	CancelCtx *c = userdata;

	approval_board_cancel(c->board, c->w);
}

/* What the board's hooks of a wait on the socket see. */
typedef struct WaitCtx {
	McpCall *call;
	bool (*aborted)(void *);
	void *userdata;
} WaitCtx;

static bool wait_aborted(void *userdata)
{
	WaitCtx *c = userdata;

	return c->aborted(c->userdata);
}

static void heartbeat(void *userdata, uint64_t waited_ns)
{
	WaitCtx *c = userdata;

	/* progress while waiting, for clients that reset their timeout on it */
	if (c->call)
		mcp_call_progress(c->call, (double) waited_ns / 1e9, 0,
				  "waiting for a human's approval");
}

/* Waits for `sbxtrace approve` on the socket, until a decision, the timeout, the server's
 * stop, or: without aborted, the call's cancellation (on_cancel is ours while we wait); with
 * aborted, whenever aborted(userdata) says so — asked under the board's lock, again after
 * each approval_wake() — because the call's on_cancel belongs to whoever runs the code then. */
static int wait_socket(Approval *ap, McpCall *call, bool (*aborted)(void *), void *userdata,
		       const Request *rq, Outcome *o)
{
	uint64_t deadline = now_monotonic_ns() + rq->timeout_s * 1000000000ull;
	WaitCtx wc = {call, aborted, userdata};
	ApprovalWaitHooks hooks = {
		.aborted = aborted ? wait_aborted : NULL,
		.beat = heartbeat,
		.beat_ns = HEARTBEAT_S * 1000000000ull,
		.userdata = &wc,
	};
	_cleanup_free_ char *line = NULL;
	ApprovalWaiter w;
	CancelCtx cc = {ap->board, &w};
	ApprovalWait end;
	json_t *info;

	info = json_pack("{s:s, s:s, s:s, s:s, s:s?, s:s, s:I, s:I}", "id", rq->id, "tool",
			 rq->tool, "risk", risk_level_to_string(rq->risk), "rule", rq->rule,
			 "session_id", rq->session_id, "tenant", rq->tenant, "timeout_s",
			 (json_int_t) rq->timeout_s, "requested_ms",
			 (json_int_t) (now_realtime_ns() / 1000000));
	if (!info)
		return -ENOMEM;
	json_object_set_new(info, "arguments", json_string(rq->shown));
	o->channel = "socket";

	if (approval_board_post(ap->board, &w, rq->id, info) < 0) {
		o->decision = APPROVAL_DENY;
		snprintf(o->decider, sizeof(o->decider), "server stopping");
		snprintf(o->reason, sizeof(o->reason), "the server is stopping");
		return 0;
	}

	line = strdup_printf("approval %s: %s risk, %s: %s%s%s; answer with `sbxtrace approve %s "
			     "--allow|--allow-session|--deny` within %llu s",
			     rq->id, risk_level_to_string(rq->risk), rq->rule, rq->tool,
			     rq->session_id ? " in session " : "", rq->session_id ? rq->session_id : "",
			     rq->id, (unsigned long long) rq->timeout_s);
	if (line) {
		fprintf(stderr, "%s\n", line);
		fflush(stderr);
		if (call)
			mcp_call_log(call, MCP_LOG_WARNING, line);
	}
	if (call && !aborted)
		mcp_call_on_cancel(call, cancel_waiter, &cc);

	end = approval_board_wait(ap->board, &w, deadline, &hooks);
	if (call && !aborted)
		mcp_call_on_cancel(call, NULL, NULL);

	if (end == APPROVAL_WAIT_DECIDED) {
		o->decision = w.decision;
		o->note = w.note;
		memcpy(o->decider, w.decider, sizeof(o->decider));
		return 0;
	}
	o->decision = APPROVAL_DENY;
	if (end == APPROVAL_WAIT_CANCELLED) {
		o->cancelled = true;
		snprintf(o->decider, sizeof(o->decider), "cancelled");
		snprintf(o->reason, sizeof(o->reason), "%s",
			 aborted ? "the tool call was cancelled, or the run stopped waiting"
				 : "the tool call was cancelled");
	} else if (end == APPROVAL_WAIT_STOPPING) {
		snprintf(o->decider, sizeof(o->decider), "server stopping");
		snprintf(o->reason, sizeof(o->reason), "the server is stopping");
	} else {
		o->timed_out = true;
		snprintf(o->decider, sizeof(o->decider), "timeout");
		snprintf(o->reason, sizeof(o->reason), "no decision within %llu s",
			 (unsigned long long) rq->timeout_s);
	}
	return 0;
}

/* The refusal the model reads: isError, the reason in the text, the details in _meta. */
static json_t *refusal(const char *key, const Request *rq, const Outcome *o, const char *text)
{
	json_t *res = mcp_result_error("%s", text), *m;

	if (!res)
		return NULL;
	m = json_pack("{s:b, s:s, s:s, s:s, s:s, s:s, s:s?, s:s, s:s?}", key, 1, "approval_id", rq->id,
		      "tool", rq->tool, "risk", risk_level_to_string(rq->risk), "rule", rq->rule,
		      "reason", o->reason, "decider", o->decider[0] ? o->decider : NULL, "channel",
		      o->channel, "note", o->note);
	if (m)
		json_object_set_new(res, "_meta", json_pack("{s:o}", "io.sbxtrace/approval", m));
	return res;
}

static bool remembered(Approval *ap, const char *tenant, const char *scope, size_t rule)
{
	bool yes = false;

	pthread_mutex_lock(&ap->lock);
	for (Remembered *m = ap->remembered; m; m = m->next)
		if (m->rule == rule && streq(m->tenant, tenant) && streq(m->scope, scope))
			yes = true;
	pthread_mutex_unlock(&ap->lock);
	return yes;
}

static void remember(Approval *ap, const char *tenant, const char *scope, size_t rule)
{
	Remembered *m = calloc(1, sizeof(*m));

	if (!m)
		return;
	snprintf(m->tenant, sizeof(m->tenant), "%s", tenant);
	snprintf(m->scope, sizeof(m->scope), "%s", scope);
	m->rule = rule;
	pthread_mutex_lock(&ap->lock);
	m->next = ap->remembered;
	ap->remembered = m;
	pthread_mutex_unlock(&ap->lock);
}

static int guarded(McpCall *call, json_t *args, void *userdata, json_t **ret)
{
	ToolWrap *tw = userdata;
	Approval *ap = tw->ap;
	const McpConn *conn = mcp_call_conn(call);
	const char *sid = json_string_value(json_object_get(args, "session_id"));
	const ApprovalRule *rule = NULL;
	Request rq = {.tool = tw->name, .tenant = conn->tenant};
	Outcome o = {.decision = APPROVAL_NONE, .channel = "none"};
	char scope[96], dig[65];
	size_t idx = SIZE_MAX;
	Session *s = NULL;
	json_t *view;
	uint64_t t0;
	int r;

	if (sid) {
		s = session_get(ap->agent, conn->tenant, sid);
		if (!s) /* the tool answers "unknown session"; nothing to approve */
			return tw->handler(call, args, tw->userdata, ret);
	}
	/* what the rules see: the arguments, and the server's own view of the session */
	view = json_deep_copy(args);
	if (!view) {
		session_put(s);
		return -ENOMEM;
	}
	if (s) {
		pthread_mutex_lock(&s->lock);
		json_object_set_new(view, "_session",
				    json_pack("{s:s, s:s, s:s}", "network_mode", net_mode_to_string(s->mode),
					      "policy", s->policy_name, "level",
					      s->level ? sensitivity_to_string(s->level) : "none"));
		pthread_mutex_unlock(&s->lock);
	} else
		json_object_del(view, "_session");
	for (size_t i = 0; i < ap->n_rules; i++)
		if (rule_matches(ap->rules[i], tw->name, view)) {
			rule = ap->rules[i];
			idx = i;
			break;
		}
	json_decref(view);
	rq.risk = rule ? rule->risk : ap->cfg->default_risk;
	if (!ap->cfg->require[rq.risk]) {
		session_put(s);
		return tw->handler(call, args, tw->userdata, ret);
	}
	rq.rule = rule && rule->description ? rule->description
					    : (rule ? "operator rule" : "no rule matched (default risk)");
	rq.timeout_s = rule && rule->timeout_s ? rule->timeout_s
			: rq.risk == RISK_CRITICAL ? 30
			: rq.risk == RISK_HIGH	   ? 60
						   : 120;
	rq.session_id = s ? s->id : NULL;
	if (s)
		snprintf(scope, sizeof(scope), "%s", s->id);
	else
		snprintf(scope, sizeof(scope), "conn:%.80s", conn->id);
	approval_new_id("apr_", rq.id);
	{
		_cleanup_free_ char *text = json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS);

		record_sha256(text ? text : "", text ? strlen(text) : 0, dig);
	}

	if (idx != SIZE_MAX && remembered(ap, conn->tenant, scope, idx)) {
		audit(ap, s, conn->tenant, "approval_decision",
		      json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:b}", "approval_id", rq.id,
				"tool", rq.tool, "risk", risk_level_to_string(rq.risk), "rule", rq.rule,
				"decision", "allow_session", "decider",
				"remembered (an earlier allow_session of this rule)", "channel",
				"session", "waited_ms", (json_int_t) 0, "timed_out", 0));
		session_put(s);
		return tw->handler(call, args, tw->userdata, ret);
	}

	rq.shown = json_dumps(args, JSON_INDENT(1) | JSON_SORT_KEYS);
	if (!rq.shown) {
		session_put(s);
		return -ENOMEM;
	}
	t0 = now_monotonic_ns();
	r = 1;
	if (mcp_call_client_supports(call, "elicitation")) {
		audit(ap, s, conn->tenant, "approval_request",
		      json_pack("{s:s, s:s, s:s, s:s, s:I, s:s, s:s}", "approval_id", rq.id, "tool",
				rq.tool, "risk", risk_level_to_string(rq.risk), "rule", rq.rule,
				"timeout_s", (json_int_t) rq.timeout_s, "channel", "elicitation",
				"args_sha256", dig));
		r = ask_elicitation(call, &rq, &o);
	}
	if (r > 0 && ap->have_socket) {
		audit(ap, s, conn->tenant, "approval_request",
		      json_pack("{s:s, s:s, s:s, s:s, s:I, s:s, s:s}", "approval_id", rq.id, "tool",
				rq.tool, "risk", risk_level_to_string(rq.risk), "rule", rq.rule,
				"timeout_s", (json_int_t) rq.timeout_s, "channel", "socket",
				"args_sha256", dig));
		r = wait_socket(ap, call, NULL, NULL, &rq, &o);
	}
	if (r < 0) {
		free(rq.shown);
		free(o.note);
		session_put(s);
		return r;
	}
	if (r > 0) {
		o.decision = APPROVAL_DENY;
		o.channel = "none";
		snprintf(o.decider, sizeof(o.decider), "none");
		snprintf(o.reason, sizeof(o.reason),
			 "%s risk (%s) needs a human's approval, and there is no channel to ask: the "
			 "client did not declare elicitation and the server has no approval socket",
			 risk_level_to_string(rq.risk), rq.rule);
	}
	audit(ap, s, conn->tenant, "approval_decision",
	      json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s?, s:s?, s:I, s:b}", "approval_id",
			rq.id, "tool", rq.tool, "risk", risk_level_to_string(rq.risk), "rule",
			rq.rule, "decision",
			r > 0 ? "approval_required" : approval_decision_to_string(o.decision),
			"decider", o.decider, "channel", o.channel, "note", o.note, "reason",
			o.reason[0] ? o.reason : NULL, "waited_ms",
			(json_int_t) ((now_monotonic_ns() - t0) / 1000000), "timed_out",
			o.timed_out));
	free(rq.shown);
	session_put(s);

	if (r > 0) {
		char text[600];

		snprintf(text, sizeof(text), "approval_required: %s. Ask the operator to approve "
			 "through an MCP client with elicitation, or to run the server with an "
			 "approval socket (sbxtrace approve).", o.reason);
		*ret = refusal("approval_required", &rq, &o, text);
	} else if (o.decision == APPROVAL_DENY) {
		char text[900];

		snprintf(text, sizeof(text), "denied: %s of %s (%s risk: %s) was not approved (%s%s%s)%s%s",
			 rq.id, rq.tool, risk_level_to_string(rq.risk), rq.rule, o.decider,
			 o.reason[0] ? ": " : "", o.reason, o.note ? ". Note: " : "",
			 o.note ? o.note : "");
		*ret = refusal("approval_denied", &rq, &o, text);
	} else {
		if (o.decision == APPROVAL_ALLOW_SESSION && idx != SIZE_MAX)
			remember(ap, conn->tenant, scope, idx);
		free(o.note);
		return tw->handler(call, args, tw->userdata, ret);
	}
	free(o.note);
	return *ret ? 0 : -ENOMEM;
}

/* ---- the socket ---- */

/* The default directory: $XDG_RUNTIME_DIR/sbxtrace, /run/user/UID/sbxtrace, else
 * /tmp/sbxtrace-UID; made 0700 and checked to be ours. */
static char *default_socket_dir(void)
{
	const char *x = getenv("XDG_RUNTIME_DIR");
	char run[64];
	struct stat st;

	snprintf(run, sizeof(run), "/run/user/%u", (unsigned) geteuid());
	if (x && *x == '/' && stat(x, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid())
		return strdup_printf("%s/sbxtrace", x);
	if (stat(run, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid())
		return strdup_printf("%s/sbxtrace", run);
	return strdup_printf("/tmp/sbxtrace-%u", (unsigned) geteuid());
}

char *agent_approval_socket_dir(void)
{
	return default_socket_dir();
}

/* The socket's directory must not be the data directory or inside it: sessions' workspaces
 * live there, and a view could show them the socket. */
static int check_socket_dir(const char *real, void *userdata, char *err, size_t errsize)
{
	const Approval *ap = userdata;
	size_t n = strlen(ap->agent->data_dir);

	if (strncmp(real, ap->agent->data_dir, n) == 0 && (real[n] == 0 || real[n] == '/')) {
		snprintf(err, errsize,
			 "the approval socket must not be inside the data "
			 "directory '%s' (sessions' workspaces live there)",
			 ap->agent->data_dir);
		return -EPERM;
	}
	return 0;
}

int agent_approval_start(Agent *a, const char *socket_path, const char **ret_socket,
			 char *reterr, size_t errsize)
{
	const ApprovalConfig *cfg = &a->config->approval;
	ApprovalServerOptions so = {
		.refuse_live = true,
		.refusal = "refused: a process started by this server cannot decide its approvals",
	};
	Approval *ap;
	bool any = false;
	int r;

	*ret_socket = NULL;
	for (int i = 0; i < _RISK_MAX; i++)
		any |= cfg->require[i];
	/* held connects, execs and opens are asked through the same channels */
	any |= a->config->net_ask || a->config->policies_ask;
	if (!any)
		return 0; /* nothing to approve: tools run unguarded, no socket */
	ap = calloc(1, sizeof(*ap));
	if (!ap)
		return -ENOMEM;
	ap->agent = a;
	ap->cfg = cfg;
	pthread_mutex_init(&ap->lock, NULL);
	a->approval = ap;
	ap->board = approval_board_new();
	if (!ap->board)
		return -ENOMEM;
	if (cfg->default_rules && (r = build_default_rules(&ap->defaults, &ap->n_defaults)) < 0)
		return r;
	ap->rules = calloc(cfg->n_rules + ap->n_defaults + 1, sizeof(*ap->rules));
	if (!ap->rules)
		return -ENOMEM;
	for (size_t i = 0; i < cfg->n_rules; i++)
		ap->rules[ap->n_rules++] = &cfg->rules[i];
	for (size_t i = 0; i < ap->n_defaults; i++)
		ap->rules[ap->n_rules++] = &ap->defaults[i];

	if (!socket_path)
		socket_path = cfg->socket;
	if (socket_path && streq(socket_path, "none"))
		return 0; /* elicitation only */
	if (socket_path)
		ap->socket_path = strdup(socket_path);
	else {
		_cleanup_free_ char *dir = default_socket_dir();
		struct stat st;

		if (!dir)
			return -ENOMEM;
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			r = -errno;
			snprintf(reterr, errsize, "approval socket directory '%s': %s", dir, strerror(-r));
			return r;
		}
		if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
		    (st.st_mode & 0077)) {
			snprintf(reterr, errsize, "approval socket directory '%s' must be a directory "
				 "of ours with mode 0700", dir);
			return -EPERM;
		}
		ap->socket_path = strdup_printf("%s/approval-%d.sock", dir, (int) getpid());
	}
	if (!ap->socket_path)
		return -ENOMEM;
	so.path = ap->socket_path;
	so.check_dir = check_socket_dir;
	so.userdata = ap;
	r = approval_server_start(ap->board, &so, &ap->server, reterr, errsize);
	if (r < 0) {
		free(ap->socket_path);
		ap->socket_path = NULL;
		return r;
	}
	ap->have_socket = true;
	*ret_socket = ap->socket_path;
	return 0;
}

void agent_approval_stop(Agent *a)
{
	Approval *ap = a ? a->approval : NULL;

	if (!ap)
		return;
	approval_board_stop(ap->board);
	ap->server = approval_server_stop(ap->server);
	/* calls still waiting see the board stop, deny and leave; the state stays allocated (the
	 * process is ending, and a call may still be on its way out through it) */
}

void approval_wrap_tool(Agent *a, McpTool *t)
{
	Approval *ap = a->approval;
	ToolWrap *w;

	if (!ap || ap->n_wraps >= MAX_TOOLS)
		return;
	w = &ap->wraps[ap->n_wraps++];
	*w = (ToolWrap){.ap = ap, .name = t->name, .handler = t->handler, .userdata = t->userdata};
	t->handler = guarded;
	t->userdata = w;
}

/* ---- held calls of a session's runs (network.unlisted = "ask") ---- */

/* The tool name, the call named in the rule, and the phrase of the notes, for the kind of a
 * held call the run asks about ("connect", "sendto", "sendmsg", "sendmmsg" for a held send,
 * "exec", "open" and "write" for an open an ask rule holds). The kind comes from the run,
 * not from the program: anything else is shown as a connect. */
static void held_kind(const char *kind, const char **ret_tool, const char **ret_call,
		      const char **ret_what)
{
	static const char *const sends[] = {"sendto", "sendmsg", "sendmmsg"};

	*ret_tool = "connect";
	*ret_call = "a connect";
	*ret_what = "a connect to";
	for (size_t i = 0; kind && i < ARRAY_SIZE(sends); i++)
		if (streq(kind, sends[i])) {
			*ret_tool = sends[i];
			*ret_call = "a send";
			*ret_what = "a send to";
		}
	if (kind && streq(kind, "exec")) {
		*ret_tool = "exec";
		*ret_call = "a program";
		*ret_what = "an exec of";
	}
	if (kind && (streq(kind, "open") || streq(kind, "write"))) {
		*ret_tool = streq(kind, "open") ? "open" : "write";
		*ret_call = "a file";
		*ret_what = streq(kind, "open") ? "an open of" : "a write to";
	}
}

void approval_wake(Agent *a)
{
	Approval *ap = a->approval;

	if (!ap)
		return;
	approval_board_wake(ap->board);
}

json_t *approval_decide_held(Agent *a, Session *s, const json_t *req, McpCall *call,
			     bool (*aborted)(void *), void *userdata, json_t *notes)
{
	Approval *ap = a->approval;
	const char *op = json_string_value(json_object_get(req, "op"));
	const char *id = json_string_value(json_object_get(req, "id"));
	const char *dest = json_string_value(json_object_get(req, "destination"));
	const char *name = json_string_value(json_object_get(req, "name"));
	json_int_t tmo = json_integer_value(json_object_get(req, "timeout_s"));
	const char *tool, *call_what, *what;
	Request rq = {.tenant = s->tenant, .session_id = s->id, .risk = RISK_HIGH};
	Outcome o = {.decision = APPROVAL_NONE, .channel = "none"};
	uint64_t t0 = now_monotonic_ns();
	char rule[160];
	json_t *rep;
	int r = 1;

	if (!op || !streq(op, "ask") || !id || !dest)
		return NULL; /* "cancel": the run stopped waiting; it is answered anyway */
	held_kind(json_string_value(json_object_get(req, "kind")), &tool, &call_what, &what);
	rq.tool = tool;
	snprintf(rq.id, sizeof(rq.id), "%.31s", id);
	if ((streq(tool, "open") || streq(tool, "write")) &&
	    json_is_string(json_object_get(req, "rule")))
		/* the run says which [[rule]] holds it (the policy's words) */
		snprintf(rule, sizeof(rule), "%.150s",
			 json_string_value(json_object_get(req, "rule")));
	else if (streq(tool, "exec"))
		snprintf(rule, sizeof(rule),
			 "exec.unlisted = \"ask\": %s outside the session's exec.allow", call_what);
	else
		snprintf(rule, sizeof(rule),
			 "network.unlisted = \"ask\": %s outside the session's allowlist",
			 call_what);
	rq.rule = rule;
	rq.timeout_s = tmo > 0 && tmo <= 3600 ? (uint64_t) tmo : 30;
	{
		json_t *shown = json_pack("{s:s, s:s?, s:I, s:s}", "destination", dest, "name", name,
					  "pid", json_integer_value(json_object_get(req, "pid")),
					  "reason",
					  json_string_value(json_object_get(req, "reason")) ?: "");

		rq.shown = shown ? json_dumps(shown, JSON_INDENT(1) | JSON_SORT_KEYS) : NULL;
		json_decref(shown);
	}
	if (!rq.shown)
		return NULL; /* out of memory: the run's own timeout denies */
	if (ap && call && mcp_call_client_supports(call, "elicitation")) {
		record_event(s, "approval_request",
			     json_pack("{s:s, s:s, s:s, s:s, s:s, s:s?, s:I, s:s}", "approval_id",
				       rq.id, "tool", tool, "risk", "HIGH", "rule", rule,
				       "destination", dest, "name", name, "timeout_s",
				       (json_int_t) rq.timeout_s, "channel", "elicitation"));
		r = ask_elicitation(call, &rq, &o);
	}
	if (r > 0 && ap && ap->have_socket) {
		record_event(s, "approval_request",
			     json_pack("{s:s, s:s, s:s, s:s, s:s, s:s?, s:I, s:s}", "approval_id",
				       rq.id, "tool", tool, "risk", "HIGH", "rule", rule,
				       "destination", dest, "name", name, "timeout_s",
				       (json_int_t) rq.timeout_s, "channel", "socket"));
		r = wait_socket(ap, call, aborted, userdata, &rq, &o);
	}
	if (r != 0) {
		o.decision = APPROVAL_DENY;
		o.channel = "none";
		snprintf(o.decider, sizeof(o.decider), "none");
		snprintf(o.reason, sizeof(o.reason),
			 "approval_required: %s %.120s%s%.80s%s was held for a "
			 "decision, and there is no channel to ask (no call in flight whose "
			 "client takes elicitation, no approval socket)",
			 what, dest, name ? " (" : "", name ? name : "", name ? ")" : "");
		if (notes)
			json_array_append_new(notes, json_string(o.reason));
	} else if (o.decision == APPROVAL_DENY && notes) {
		char text[600];

		snprintf(text, sizeof(text),
			 "denied: %s %.120s%s%.80s%s was not "
			 "approved (%.100s%s%.150s)",
			 what, dest, name ? " (" : "", name ? name : "", name ? ")" : "", o.decider,
			 o.reason[0] ? ": " : "", o.reason);
		json_array_append_new(notes, json_string(text));
	}
	record_event(
		s, "approval_decision",
		json_pack("{s:s, s:s, s:s, s:s, s:s, s:s?, s:s, s:s, s:s, s:s?, s:s?, "
			  "s:I, s:b}",
			  "approval_id", rq.id, "tool", tool, "risk", "HIGH", "rule", rule,
			  "destination", dest, "name", name, "decision",
			  r != 0 ? "approval_required" : approval_decision_to_string(o.decision),
			  "decider", o.decider, "channel", o.channel, "note", o.note, "reason",
			  o.reason[0] ? o.reason : NULL, "waited_ms",
			  (json_int_t) ((now_monotonic_ns() - t0) / 1000000), "timed_out",
			  o.timed_out));
	rep = json_pack("{s:s, s:s, s:s, s:s, s:s?, s:s?, s:b}", "id", rq.id, "decision",
			approval_decision_to_string(o.decision), "decider", o.decider, "channel",
			o.channel, "note", o.note, "reason", o.reason[0] ? o.reason : NULL,
			"timed_out", o.timed_out);
	free(rq.shown);
	free(o.note);
	return rep;
}
