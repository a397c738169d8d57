/* SPDX-License-Identifier: MIT */
/*
 * Sessions: a directory and a few facts (docs/agents.md, "Sessions").
 *
 *   DATA_DIR/TENANT/ID/state.json   the facts below, rewritten atomically (rename)
 *                      policy.toml  the session's policy, generated: it extends the preset
 *                                   or the operator's policy file the session was made with
 *                      workspace/   mounted read-write at /workspace
 *                      run/         the code of executions, mounted read-only at /run/sbxtrace
 *                      audit.jsonl  one record per tool call
 *                      artifacts/executions/
 *
 * The directory is the truth: a server that starts re-reads every state.json under DATA_DIR,
 * so sessions (their files, network level, limits) survive a restart; processes do not, and
 * the next result says so. One server owns a data directory at a time.
 *
 * Ids are "sbx_" and 24 base62 characters from getrandom() (142 bits) — "sbx_SHARD_" and the
 * same 24 when the operator set server.shard ([a-z0-9]{1,16}: what a router in front of many
 * servers routes on, docs/deploy.md) — checked against that exact form before they come near
 * a path, so an id can never name a directory of its own choosing. Either form is accepted
 * whatever this server's shard: a server restarted under another name keeps its sessions. A tenant reaches only DATA_DIR/ITS_NAME/: another tenant's id is "unknown",
 * exactly as a made-up id is.
 *
 * References: the store holds one per live session; each tool call takes one for its
 * duration. Destroying (explicitly, or the idle reaper) unlinks it from the store and kills
 * what runs in it; the last reference removes the directory, without following any symlink
 * the code left in the workspace.
 */
#include "agent/internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/macros.h"
#include "common/util.h"
#include "emulation/path/view.h"

#define STATE_MAX_BYTES (256u << 10)

static const char base62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

static uint64_t now_ms(void)
{
	return now_realtime_ns() / 1000000;
}

bool session_id_valid(const char *id)
{
	size_t len, tail = SESSION_ID_LEN - 4;
	const char *p;

	if (!id || strncmp(id, "sbx_", 4) != 0)
		return false;
	len = strnlen(id, SESSION_ID_MAX + 1);
	if (len < SESSION_ID_LEN || len == SESSION_ID_LEN + 1 || len > SESSION_ID_MAX)
		return false;
	if (len > SESSION_ID_LEN) {
		/* sbx_SHARD_: the shard is lowercase letters and digits, then one '_' */
		size_t shard = len - SESSION_ID_LEN - 1;

		if (id[4 + shard] != '_')
			return false;
		for (size_t i = 4; i < 4 + shard; i++)
			if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= '0' && id[i] <= '9')))
				return false;
	}
	for (p = id + len - tail; *p; p++)
		if (!strchr(base62, *p))
			return false;
	return true;
}

static void session_id_new(const char *shard, char id[SESSION_ID_MAX + 1])
{
	size_t n = 4, end = SESSION_ID_LEN;

	memcpy(id, "sbx_", 4);
	if (shard && *shard) {
		size_t sl = strlen(shard);

		if (!agent_shard_valid(shard))
			abort(); /* checked by the config */
		memcpy(id + 4, shard, sl);
		id[4 + sl] = '_';
		n += sl + 1;
		end += sl + 1;
	}
	while (n < end) {
		uint8_t b[32];

		if (getrandom(b, sizeof(b), 0) != sizeof(b))
			abort(); /* never a guessable id */
		for (size_t i = 0; i < sizeof(b) && n < end; i++)
			if (b[i] < 248) /* 4 × 62: no modulo bias */
				id[n++] = base62[b[i] % 62];
	}
	id[n] = 0;
}

/* ---- policy ---- */

NetMode session_mode_for_level(const Session *s, Sensitivity level)
{
	const AgentConfig *c = s->agent->config;

	/* seed 000's rule: internal leaves the network as it is, confidential keeps only the
	 * operator's trusted destinations, secret takes it all away */
	switch (level) {
	case SENSITIVITY_SECRET:
		return NET_MODE_NONE;
	case SENSITIVITY_CONFIDENTIAL:
		return c->trusted && c->trusted[0] ? NET_MODE_ALLOWLIST : NET_MODE_NONE;
	default:
		return NET_MODE_FULL;
	}
}

/* The allow list of the session's mode: after a confidential level, only the trusted one. */
static char **session_allow(const Session *s)
{
	if (s->level >= SENSITIVITY_CONFIDENTIAL)
		return s->agent->config->trusted;
	return s->allowed_domains;
}

static bool strv_subset(char *const *a, char *const *b)
{
	for (size_t i = 0; a && a[i]; i++)
		if (!b || !strv_contains(b, a[i]))
			return false;
	return true;
}

/*
 * Writes policy.toml. Inside one run the ratchet can only change the mode, not the allow
 * list, so a confidential open mid-run drops to allowlist only when the list in force is
 * already within the trusted one, and to none otherwise: stricter inside the run, exact from
 * the next execution on (which gets the trusted list).
 */
static int write_policy_locked(Session *s, bool add_workspace)
{
	_cleanup_free_ char *path = strdup_printf("%s/policy.toml", s->dir);
	_cleanup_free_ char *tmp = strdup_printf("%s/policy.toml.tmp", s->dir);
	char **allow = session_allow(s);
	const AgentConfig *c = s->agent->config;
	NetMode conf;
	FILE *f;

	if (!path || !tmp)
		return -ENOMEM;
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "# The policy of sbxtrace mcp session %s, written by the server: changes are\n"
		   "# overwritten. docs/agents.md\nextends = ",
		s->id);
	policy_write_string(f, s->policy_file ? s->policy_file : s->policy_name, false);
	fputs("\n\n[sandbox]\nname = ", f);
	policy_write_string(f, s->policy_name, false);
	fputs("\n\n[[mount]]\npath = \"/run/sbxtrace\"\nsource = ", f);
	{
		_cleanup_free_ char *run = strdup_printf("%s/run", s->dir);

		policy_write_string(f, run ? run : "/nonexistent", true);
	}
	fputs("\nmode = \"ro\"\n", f);
	if (add_workspace)
		fputs("\n[[mount]]\npath = \"/workspace\"\nsource = \"${WORKSPACE}\"\nmode = \"rw\"\n",
		      f);
	fprintf(f, "\n[network]\nmode = \"%s\"\n", net_mode_to_string(s->mode));
	if (s->mode == NET_MODE_ALLOWLIST) {
		fputs("allow = [", f);
		for (size_t i = 0; allow && allow[i]; i++) {
			fputs(i ? ", " : "", f);
			policy_write_string(f, allow[i], false);
		}
		fputs("]\n", f);
	}
	conf = session_mode_for_level(s, SENSITIVITY_CONFIDENTIAL);
	if (conf == NET_MODE_ALLOWLIST && (s->mode != NET_MODE_ALLOWLIST ||
					   !strv_subset(allow, c->trusted)))
		conf = NET_MODE_NONE;
	if (conf > s->mode)
		conf = s->mode;
	fprintf(f, "ratchet = { confidential = \"%s\", secret = \"none\" }\n",
		net_mode_to_string(conf));
	if (c->net_ask && (s->mode == NET_MODE_ALLOWLIST || s->mode == NET_MODE_LOOPBACK)) {
		/* held connects: the server is asked over each run's --approval-fd */
		fputs("unlisted = \"ask\"\n", f);
		if (c->net_ask_timeout_s)
			fprintf(f, "ask_timeout = \"%llus\"\n", (unsigned long long) c->net_ask_timeout_s);
	}
	/* what code_install_package installs, for every run of the session (agent/install.c) */
	fputs("\n[process]\nenv = { set = { PYTHONPATH = \"/workspace/.packages/python\", "
	      "NODE_PATH = \"/workspace/node_modules\" } }\n", f);
	fputs("\n[limits]\n", f);
	if (s->limits.wall_s)
		fprintf(f, "wall_time = \"%llus\"\n", (unsigned long long) s->limits.wall_s);
	if (s->limits.cpu_s)
		fprintf(f, "cpu_time = \"%llus\"\n", (unsigned long long) s->limits.cpu_s);
	if (s->limits.memory_mb)
		fprintf(f, "memory = \"%lluMiB\"\n", (unsigned long long) s->limits.memory_mb);
	if (s->limits.tasks)
		fprintf(f, "tasks = %llu\n", (unsigned long long) s->limits.tasks);
	if (s->limits.disk_mb)
		fprintf(f, "disk = \"%lluMiB\"\n", (unsigned long long) s->limits.disk_mb);
	if (s->limits.output_kb)
		fprintf(f, "output = \"%lluKiB\"\n", (unsigned long long) s->limits.output_kb);
	if (fclose(f) != 0)
		return -errno;
	if (rename(tmp, path) < 0)
		return -errno;
	s->policy = policy_free(s->policy);
	return 0;
}

const Policy *session_policy(Session *s, char *err, size_t errsize)
{
	_cleanup_free_ char *path = strdup_printf("%s/policy.toml", s->dir);
	_cleanup_free_ char *ws = strdup_printf("%s/workspace", s->dir);
	PolicyVars vars = {.workspace = ws, .home = getenv("HOME"), .pwd = s->dir};
	PolicyError pe = {};
	Policy *p = NULL;
	char buf[900];

	pthread_mutex_lock(&s->lock);
	if (s->policy) {
		p = s->policy;
		pthread_mutex_unlock(&s->lock);
		return p;
	}
	if (path && ws && policy_load(path, &vars, NULL, &p, &pe) < 0) {
		snprintf(err, errsize, "the session's policy does not load: %s",
			 policy_error_format(&pe, buf, sizeof(buf)));
		p = NULL;
	}
	s->policy = p;
	pthread_mutex_unlock(&s->lock);
	return p;
}

bool session_asks(Session *s)
{
	char err[8];
	bool yes = false;

	if (!session_policy(s, err, sizeof(err)))
		return false; /* the run fails to load it too */
	/* under the lock: the ratchet rewrites the policy and drops the loaded one */
	pthread_mutex_lock(&s->lock);
	if (s->policy)
		yes = agent_policy_asks(s->policy);
	else
		yes = s->agent->config->net_ask || s->agent->config->policies_ask;
	pthread_mutex_unlock(&s->lock);
	return yes;
}

/* ---- state ---- */

static json_t *limits_json(const AgentLimits *l)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "wall_s", (json_int_t) l->wall_s,
			 "cpu_s", (json_int_t) l->cpu_s, "memory_mb", (json_int_t) l->memory_mb,
			 "tasks", (json_int_t) l->tasks, "disk_mb", (json_int_t) l->disk_mb,
			 "output_kb", (json_int_t) l->output_kb);
}

static json_t *strv_json(char *const *v)
{
	json_t *a = json_array();

	for (size_t i = 0; v && v[i]; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

int session_save_locked(Session *s)
{
	_cleanup_free_ char *path = strdup_printf("%s/state.json", s->dir);
	_cleanup_free_ char *tmp = strdup_printf("%s/state.json.tmp", s->dir);
	json_t *st;
	int r;

	if (!path || !tmp)
		return -ENOMEM;
	st = json_pack("{s:i, s:s, s:s, s:s, s:s?, s:s, s:s, s:s, s:o, s:o, s:o, s:s?, s:I, s:I, "
		       "s:I, s:I}",
		       "version", 1, "id", s->id, "tenant", s->tenant, "policy", s->policy_name,
		       "policy_file", s->policy_file, "language", s->language, "network_asked",
		       net_mode_to_string(s->mode_asked), "network_mode",
		       net_mode_to_string(s->mode), "allowed_domains",
		       strv_json(s->allowed_domains), "datasets", strv_json(s->datasets), "limits",
		       limits_json(&s->limits), "level",
		       s->level ? sensitivity_to_string(s->level) : NULL, "idle_timeout_s",
		       (json_int_t) s->idle_timeout_s, "created_ms", (json_int_t) s->created_ms,
		       "last_active_ms", (json_int_t) s->last_active_ms, "executions",
		       (json_int_t) s->executions);
	if (!st)
		return -ENOMEM;
	r = json_dump_file(st, tmp, JSON_INDENT(1) | JSON_SORT_KEYS);
	json_decref(st);
	if (r < 0)
		return -EIO;
	if (rename(tmp, path) < 0)
		return -errno;
	return 0;
}

static char **strv_from_json(const json_t *a)
{
	char **v = calloc(1, sizeof(char *));
	const json_t *x;
	size_t i;

	if (!v)
		return NULL;
	json_array_foreach(a, i, x)
		if (json_is_string(x) && strv_push(&v, json_string_value(x)) < 0)
			return strv_free(v);
	return v;
}

static Session *session_alloc(Agent *a, const char *tenant, const char *id)
{
	Session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->agent = a;
	snprintf(s->id, sizeof(s->id), "%s", id);
	snprintf(s->tenant, sizeof(s->tenant), "%s", tenant);
	s->dir = strdup_printf("%s/%s/%s", a->data_dir, tenant, id);
	pthread_mutex_init(&s->lock, NULL);
	s->refs = 1;
	if (!s->dir) {
		free(s);
		return NULL;
	}
	return s;
}

static void session_free(Session *s)
{
	context_free_all(s);
	process_free_all(s);
	policy_free(s->policy);
	free(s->policy_file);
	strv_free(s->allowed_domains);
	strv_free(s->datasets);
	free(s->notice);
	free(s->dir);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* Loads DATA_DIR/tenant/id/state.json written by an earlier server. */
static Session *session_load(Agent *a, const char *tenant, const char *id)
{
	_cleanup_free_ char *path = strdup_printf("%s/%s/%s/state.json", a->data_dir, tenant, id);
	json_error_t je;
	json_t *st;
	Session *s;
	const char *v;

	if (!path)
		return NULL;
	st = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!st)
		return NULL;
	s = session_alloc(a, tenant, id);
	if (!s) {
		json_decref(st);
		return NULL;
	}
	v = json_string_value(json_object_get(st, "policy"));
	snprintf(s->policy_name, sizeof(s->policy_name), "%s", v ? v : "standard");
	/* kept from the session's creation: what its policy.toml extends, even when the
	 * operator has since changed server.policies */
	v = json_string_value(json_object_get(st, "policy_file"));
	if (v && v[0] == '/' && !(s->policy_file = strdup(v))) {
		json_decref(st);
		session_free(s);
		return NULL;
	}
	v = json_string_value(json_object_get(st, "language"));
	snprintf(s->language, sizeof(s->language), "%s", v ? v : "");
	s->mode_asked = net_mode_from_string(json_string_value(json_object_get(st, "network_asked")) ?: "none");
	s->mode = net_mode_from_string(json_string_value(json_object_get(st, "network_mode")) ?: "none");
	if (s->mode_asked < 0 || s->mode < 0)
		s->mode_asked = s->mode = NET_MODE_NONE;
	if (s->mode > s->mode_asked)
		s->mode = s->mode_asked;
	s->allowed_domains = strv_from_json(json_object_get(st, "allowed_domains"));
	s->datasets = strv_from_json(json_object_get(st, "datasets"));
	v = json_string_value(json_object_get(st, "level"));
	s->level = SENSITIVITY_NONE;
	for (int l = SENSITIVITY_INTERNAL; v && l < _SENSITIVITY_MAX; l++)
		if (streq(v, sensitivity_to_string(l)))
			s->level = l;
	{
		const json_t *l = json_object_get(st, "limits");

		s->limits = (AgentLimits){
			.wall_s = json_integer_value(json_object_get(l, "wall_s")),
			.cpu_s = json_integer_value(json_object_get(l, "cpu_s")),
			.memory_mb = json_integer_value(json_object_get(l, "memory_mb")),
			.tasks = json_integer_value(json_object_get(l, "tasks")),
			.disk_mb = json_integer_value(json_object_get(l, "disk_mb")),
			.output_kb = json_integer_value(json_object_get(l, "output_kb")),
		};
	}
	s->idle_timeout_s = json_integer_value(json_object_get(st, "idle_timeout_s"));
	if (!s->idle_timeout_s)
		s->idle_timeout_s = a->config->idle_timeout_s;
	s->created_ms = json_integer_value(json_object_get(st, "created_ms"));
	s->last_active_ms = json_integer_value(json_object_get(st, "last_active_ms"));
	s->executions = json_integer_value(json_object_get(st, "executions"));
	s->restarted = true;
	json_decref(st);
	return s;
}

/* Re-reads every session under the data directory (server start). */
static void sessions_load_all(Agent *a)
{
	DIR *d = opendir(a->data_dir);
	struct dirent *te;

	if (!d)
		return;
	while ((te = readdir(d))) {
		_cleanup_free_ char *tdir = NULL;
		DIR *sd;
		struct dirent *se;

		if (te->d_name[0] == '.')
			continue;
		tdir = strdup_printf("%s/%s", a->data_dir, te->d_name);
		sd = tdir ? opendir(tdir) : NULL;
		if (!sd)
			continue;
		while ((se = readdir(sd))) {
			Session *s;

			if (!session_id_valid(se->d_name))
				continue;
			s = session_load(a, te->d_name, se->d_name);
			if (!s) {
				log_warn("session %s/%s: no readable state.json, ignoring", te->d_name,
					 se->d_name);
				continue;
			}
			s->next = a->sessions;
			a->sessions = s;
		}
		closedir(sd);
	}
	closedir(d);
}

/* ---- creation ---- */

static int mkdir_p(const char *path, mode_t mode)
{
	_cleanup_free_ char *p = strdup(path);

	if (!p)
		return -ENOMEM;
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			if (mkdir(p, mode) < 0 && errno != EEXIST)
				return -errno;
			*s = '/';
		}
	if (mkdir(p, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* Checks one asked limit against the operator's maximum; 0 when absent. */
static int ask_limit(const json_t *limits, const char *key, uint64_t max, uint64_t *ret, char *err,
		     size_t errsize)
{
	const json_t *v = json_object_get(limits, key);

	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) <= 0) {
		snprintf(err, errsize, "limits.%s must be a positive integer", key);
		return -EINVAL;
	}
	if (max && (uint64_t) json_integer_value(v) > max) {
		snprintf(err, errsize,
			 "limits.%s = %lld is more than this server allows (at most %llu); ask for "
			 "less",
			 key, (long long) json_integer_value(v), (unsigned long long) max);
		return -EPERM;
	}
	*ret = (uint64_t) json_integer_value(v);
	return 0;
}

/* Whether entry (an agent's allowed_domains item) is covered by the operator's list. */
static bool domain_permitted(const AgentConfig *c, const char *entry)
{
	for (size_t i = 0; c->allowed_domains && c->allowed_domains[i]; i++) {
		const char *rule = c->allowed_domains[i];

		if (streq(rule, entry) || streq(rule, "*"))
			return true;
		/* "*.example.com:443" covers "a.example.com:443" and "*.b.example.com:443" */
		if (strncmp(rule, "*.", 2) == 0) {
			const char *suffix = rule + 1; /* ".example.com:443" */
			size_t sl = strlen(suffix), el = strlen(entry);

			if (el > sl && streq(entry + el - sl, suffix))
				return true;
		}
	}
	return false;
}

int session_create(Agent *a, const char *tenant, json_t *args, Session **ret, char *err,
		   size_t errsize)
{
	const AgentConfig *c = a->config;
	const char *policy = json_string_value(json_object_get(args, "policy"));
	const char *language = json_string_value(json_object_get(args, "language"));
	const json_t *net = json_object_get(args, "network");
	const json_t *limits = json_object_get(args, "limits");
	const json_t *idle = json_object_get(args, "idle_timeout_s");
	char id[SESSION_ID_MAX + 1];
	size_t n_tenant = 0;
	Session *s;
	int r;

	if (!policy)
		policy = c->default_policy;
	if (!strv_contains(c->policies, policy)) {
		char offered[400] = "";
		size_t n = 0;

		for (size_t i = 0; c->policies[i] && n < sizeof(offered); i++)
			n += (size_t) snprintf(offered + n, sizeof(offered) - n, "%s%s",
					       i ? ", " : "", c->policies[i]);
		snprintf(err, errsize, "policy '%.64s' is not offered here; choose one of: %s",
			 policy, offered);
		return -EPERM;
	}
	pthread_mutex_lock(&a->lock);
	for (Session *x = a->sessions; x; x = x->next)
		if (streq(x->tenant, tenant))
			n_tenant++;
	pthread_mutex_unlock(&a->lock);
	if (c->max_sessions && n_tenant >= c->max_sessions) {
		snprintf(err, errsize,
			 "this tenant has %zu sessions, the most this server allows; destroy one "
			 "first (code_destroy_sandbox)",
			 n_tenant);
		return -EPERM;
	}

	session_id_new(c->shard, id);
	s = session_alloc(a, tenant, id);
	if (!s)
		return -ENOMEM;
	snprintf(s->policy_name, sizeof(s->policy_name), "%s", policy);
	if (agent_config_policy_file(c, policy) &&
	    !(s->policy_file = strdup(agent_config_policy_file(c, policy)))) {
		r = -ENOMEM;
		goto fail;
	}
	snprintf(s->language, sizeof(s->language), "%s", language ? language : "");
	s->idle_timeout_s = idle ? (uint64_t) json_integer_value(idle) : c->idle_timeout_s;
	s->mode_asked = NET_MODE_NONE;
	if (net) {
		const char *m = json_string_value(json_object_get(net, "mode"));
		const json_t *doms = json_object_get(net, "allowed_domains");
		const json_t *x;
		size_t i;

		s->mode_asked = m ? net_mode_from_string(m) : NET_MODE_NONE;
		if (s->mode_asked < 0 || !c->net_modes[s->mode_asked]) {
			snprintf(err, errsize, "network mode '%.32s' is not allowed by this server",
				 m ? m : "");
			r = -EPERM;
			goto fail;
		}
		s->allowed_domains = calloc(1, sizeof(char *));
		json_array_foreach(doms, i, x) {
			const char *d = json_string_value(x);

			if (!d || !domain_permitted(c, d)) {
				snprintf(err, errsize,
					 "allowed_domains: '%.128s' is not one this server allows",
					 d ? d : "");
				r = -EPERM;
				goto fail;
			}
			if (strv_push(&s->allowed_domains, d) < 0) {
				r = -ENOMEM;
				goto fail;
			}
		}
		if (s->mode_asked == NET_MODE_ALLOWLIST && json_array_size(doms) == 0) {
			snprintf(err, errsize,
				 "network mode 'allowlist' needs allowed_domains (\"host:port\", "
				 "\"*.domain:port\")");
			r = -EINVAL;
			goto fail;
		}
	}
	s->mode = s->mode_asked;
	if ((r = ask_limit(limits, "wall_s", c->max_limits.wall_s, &s->limits.wall_s, err,
			   errsize)) < 0 ||
	    (r = ask_limit(limits, "cpu_s", c->max_limits.cpu_s, &s->limits.cpu_s, err, errsize)) <
		    0 ||
	    (r = ask_limit(limits, "memory_mb", c->max_limits.memory_mb, &s->limits.memory_mb, err,
			   errsize)) < 0 ||
	    (r = ask_limit(limits, "tasks", c->max_limits.tasks, &s->limits.tasks, err, errsize)) <
		    0 ||
	    (r = ask_limit(limits, "disk_mb", c->max_limits.disk_mb, &s->limits.disk_mb, err,
			   errsize)) < 0 ||
	    (r = ask_limit(limits, "output_kb", c->max_limits.output_kb, &s->limits.output_kb, err,
			   errsize)) < 0)
		goto fail;
	s->created_ms = s->last_active_ms = now_ms();

	{
		_cleanup_free_ char *ws = strdup_printf("%s/workspace", s->dir);
		_cleanup_free_ char *run = strdup_printf("%s/run", s->dir);
		_cleanup_free_ char *art = strdup_printf("%s/artifacts/executions", s->dir);
		_cleanup_free_ char *tdir = strdup_printf("%s/%s", a->data_dir, tenant);
		PolicyVars vars = {.workspace = ws, .home = getenv("HOME"), .pwd = s->dir};
		PolicyError pe = {};
		Policy *preset = NULL;
		bool add_ws;

		if (!ws || !run || !art || !tdir) {
			r = -ENOMEM;
			goto fail;
		}
		if ((r = mkdir_p(tdir, 0700)) < 0 || mkdir(s->dir, 0700) < 0 ||
		    mkdir(ws, 0755) < 0 || mkdir(run, 0755) < 0 || (r = mkdir_p(art, 0700)) < 0) {
			r = r < 0 ? r : -errno;
			snprintf(err, errsize, "cannot make the session's directory: %s", strerror(-r));
			goto fail_dir;
		}
		/* a preset or an operator's file without /workspace (permissive mounts the data at
		 * /data) gets one */
		if (policy_load(s->policy_file ? s->policy_file : policy, &vars, NULL, &preset,
				&pe) < 0) {
			char buf[900];

			snprintf(err, errsize, "policy '%.64s' does not load: %s", policy,
				 policy_error_format(&pe, buf, sizeof(buf)));
			r = -EINVAL;
			goto fail_dir;
		}
		add_ws = true;
		for (size_t i = 0; i < preset->n_mounts; i++)
			if (streq(preset->mounts[i].path, "/workspace"))
				add_ws = false;
		policy_free(preset);
		pthread_mutex_lock(&s->lock);
		r = write_policy_locked(s, add_ws);
		if (r >= 0)
			r = session_save_locked(s);
		pthread_mutex_unlock(&s->lock);
		if (r < 0) {
			snprintf(err, errsize, "cannot write the session's state: %s", strerror(-r));
			goto fail_dir;
		}
		if (!session_policy(s, err, errsize)) {
			r = -EINVAL;
			goto fail_dir;
		}
	}

	pthread_mutex_lock(&a->lock);
	/* counted again under the lock that inserts: concurrent creations cannot pass the cap */
	n_tenant = 0;
	for (Session *x = a->sessions; x; x = x->next)
		if (streq(x->tenant, tenant))
			n_tenant++;
	if (c->max_sessions && n_tenant >= c->max_sessions) {
		pthread_mutex_unlock(&a->lock);
		snprintf(err, errsize,
			 "this tenant has %zu sessions, the most this server allows; destroy one "
			 "first (code_destroy_sandbox)",
			 n_tenant);
		r = -EPERM;
		goto fail_dir;
	}
	s->next = a->sessions;
	a->sessions = s;
	s->refs++; /* the caller's */
	pthread_mutex_unlock(&a->lock);
	*ret = s;
	return 0;

fail_dir:
	{
		_cleanup_free_ char *tdir = strdup_printf("%s/%s", a->data_dir, tenant);
		int fd = tdir ? open(tdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW) : -1;

		if (fd >= 0) {
			(void) files_remove_tree(fd, s->id);
			close(fd);
		}
	}
fail:
	session_free(s);
	return r;
}

/* ---- lookup and lifetime ---- */

Session *session_get(Agent *a, const char *tenant, const char *id)
{
	Session *found = NULL;

	if (!session_id_valid(id))
		return NULL;
	pthread_mutex_lock(&a->lock);
	for (Session *s = a->sessions; s; s = s->next)
		if (streq(s->id, id) && streq(s->tenant, tenant)) {
			pthread_mutex_lock(&s->lock);
			if (!s->destroyed) {
				s->refs++;
				s->last_active_ms = now_ms();
				found = s;
			}
			pthread_mutex_unlock(&s->lock);
			break;
		}
	pthread_mutex_unlock(&a->lock);
	return found;
}

Session **session_list(Agent *a, const char *tenant)
{
	Session **v;
	size_t n = 0, k = 0;

	pthread_mutex_lock(&a->lock);
	for (Session *s = a->sessions; s; s = s->next)
		n++;
	v = calloc(n + 1, sizeof(*v));
	for (Session *s = a->sessions; v && s; s = s->next)
		if (streq(s->tenant, tenant)) {
			pthread_mutex_lock(&s->lock);
			if (!s->destroyed) {
				s->refs++;
				v[k++] = s;
			}
			pthread_mutex_unlock(&s->lock);
		}
	pthread_mutex_unlock(&a->lock);
	return v;
}

static void remove_dir(Session *s)
{
	_cleanup_free_ char *tdir = strdup_printf("%s/%s", s->agent->data_dir, s->tenant);
	int fd = tdir ? open(tdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW) : -1;

	if (fd < 0)
		return;
	if (files_remove_tree(fd, s->id) < 0)
		log_warn("session %s: could not remove all of its directory", s->id);
	close(fd);
}

void session_put(Session *s)
{
	bool last;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	last = --s->refs == 0;
	if (!last && !s->destroyed)
		s->last_active_ms = now_ms(); /* the end of a call is activity too */
	pthread_mutex_unlock(&s->lock);
	if (!last)
		return;
	/* the contexts' runs first, waited for: a context still writing into the workspace
	 * would race the removal (safely: nothing is followed) and leave files behind */
	context_free_all(s);
	if (s->destroyed)
		remove_dir(s);
	session_free(s);
}

static void kill_running_locked(Session *s, const char *why)
{
	for (Running *r = s->running; r; r = r->next)
		if (!r->killed) {
			r->killed = true;
			r->why = why;
			(void) kill(r->pid, SIGKILL);
		}
}

void session_destroy(Session *s)
{
	Agent *a = s->agent;
	bool unlinked = false;

	pthread_mutex_lock(&a->lock);
	for (Session **p = &a->sessions; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			unlinked = true;
			break;
		}
	pthread_mutex_unlock(&a->lock);
	pthread_mutex_lock(&s->lock);
	s->destroyed = true;
	kill_running_locked(s, "the session was destroyed");
	context_kill_all_locked(s);
	process_kill_all_locked(s);
	pthread_mutex_unlock(&s->lock);
	if (unlinked)
		session_put(s); /* the store's reference */
}

int session_raise_level_locked(Session *s, Sensitivity level, const char *cause)
{
	NetMode target = session_mode_for_level(s, level);
	bool dropped = false;
	int r;

	if (level > s->level)
		s->level = level;
	if (target < s->mode) {
		NetMode old = s->mode;

		s->mode = target;
		dropped = true;
		free(s->notice);
		s->notice = strdup_printf(
			"[SYSTEM] Network access has been restricted (from %s to %s) because %s "
			"private data entered this session (%s). It stays restricted for the rest of "
			"this session.",
			net_mode_to_string(old), net_mode_to_string(target),
			sensitivity_to_string(level), cause);
		/* what runs now holds sockets of the old mode that we cannot reach from here:
		 * stop it rather than let it go on sending (fail closed) */
		kill_running_locked(s, "the network was restricted while it ran");
		/* and the contexts and background processes hold the old mode in their runs */
		context_kill_all_locked(s);
		process_kill_all_locked(s);
	}
	if (dropped) {
		/* the generated file says whether it mounts /workspace itself: keep that */
		_cleanup_free_ char *path = strdup_printf("%s/policy.toml", s->dir);
		_cleanup_free_ char *text = NULL;
		bool add_ws = true;
		size_t len;

		if (path && read_full_file(-100 /* AT_FDCWD */, path, 1 << 20, &text, &len) >= 0)
			add_ws = strstr(text, "source = \"${WORKSPACE}\"") != NULL;
		r = write_policy_locked(s, add_ws);
		if (r < 0)
			return r;
	}
	r = session_save_locked(s);
	if (r < 0)
		return r;
	return dropped;
}

json_t *session_info_locked(Session *s)
{
	uint64_t now = now_ms();
	uint64_t idle_ms = now > s->last_active_ms ? now - s->last_active_ms : 0;
	uint64_t expires = s->last_active_ms + s->idle_timeout_s * 1000;
	const Policy *p = s->policy;
	json_t *o;

	o = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:s, s:s, s:s?, s:o, s:I, s:I, s:I, s:b}",
		      "session_id", s->id, "state", s->n_running ? "running" : "idle", "policy",
		      s->policy_name, "workspace", "/workspace", "idle_s",
		      (json_int_t) (idle_ms / 1000), "expires_at_ms", (json_int_t) expires,
		      "network_mode", net_mode_to_string(s->mode), "network_asked",
		      net_mode_to_string(s->mode_asked), "level",
		      s->level ? sensitivity_to_string(s->level) : NULL, "allowed_domains",
		      strv_json(session_allow(s)), "executions", (json_int_t) s->executions,
		      "running", (json_int_t) s->n_running, "idle_timeout_s",
		      (json_int_t) s->idle_timeout_s, "processes_lost_at_restart", s->restarted);
	if (o && p) {
		json_t *l = json_object();

#define LIM(k, v) json_object_set_new(l, k, (v) == LIMIT_UNSET ? json_null() : json_integer((json_int_t) (v)))
		LIM("wall_s", p->limits.wall_time_ms == LIMIT_UNSET ? LIMIT_UNSET
								     : p->limits.wall_time_ms / 1000);
		LIM("cpu_s", p->limits.cpu_time_ms == LIMIT_UNSET ? LIMIT_UNSET
								   : p->limits.cpu_time_ms / 1000);
		LIM("memory_mb", p->limits.memory == LIMIT_UNSET ? LIMIT_UNSET
								  : p->limits.memory >> 20);
		LIM("tasks", p->limits.tasks);
		LIM("disk_mb", p->limits.disk == LIMIT_UNSET ? LIMIT_UNSET : p->limits.disk >> 20);
		LIM("output_kb", p->limits.output == LIMIT_UNSET ? LIMIT_UNSET
								  : p->limits.output >> 10);
#undef LIM
		json_object_set_new(o, "limits", l);
	}
	if (o && s->contexts)
		json_object_set_new(o, "contexts", context_list_locked(s));
	if (o && s->datasets && s->datasets[0])
		json_object_set_new(o, "datasets", strv_json(s->datasets));
	return o;
}

/* ---- the agent ---- */

static void *reaper(void *userdata)
{
	Agent *a = userdata;

	pthread_mutex_lock(&a->lock);
	while (!a->stopping) {
		struct timespec ts;
		uint64_t now = now_ms();
		Session *expired = NULL;

		for (Session *s = a->sessions; s; s = s->next) {
			pthread_mutex_lock(&s->lock);
			/* running work counts as activity: only an idle session expires */
			if (!s->destroyed && s->n_running == 0 && s->refs == 1 &&
			    now >= s->last_active_ms + s->idle_timeout_s * 1000) {
				s->refs++;
				expired = s;
			}
			pthread_mutex_unlock(&s->lock);
			if (expired)
				break;
		}
		if (expired) {
			pthread_mutex_unlock(&a->lock);
			log_info("session %s/%s expired after %llu s idle", expired->tenant,
				 expired->id, (unsigned long long) expired->idle_timeout_s);
			record_event(expired, "session_expired", NULL);
			session_destroy(expired);
			session_put(expired);
			pthread_mutex_lock(&a->lock);
			continue;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		(void) pthread_cond_timedwait(&a->wake, &a->lock, &ts);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

static void *sweep_main(void *userdata)
{
	(void) userdata;
	sbx_scratch_sweep();
	return NULL;
}

int agent_new(const AgentConfig *config, const char *self_exe, Agent **ret, char *reterr,
	      size_t errsize)
{
	Agent *a = calloc(1, sizeof(*a));
	char real[PATH_MAX];
	int r;

	if (!a)
		return -ENOMEM;
	/* SHA-256 and base64 (agent/nettle.c): a server that cannot load them does not start */
	r = agent_nettle_load();
	if (r < 0) {
		snprintf(reterr, errsize, "cannot load %s (install libnettle8): %s", NETTLE_SONAME,
			 strerror(-r));
		free(a);
		return r;
	}
	a->config = config;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->wake, NULL);
	r = mkdir_p(config->data_dir, 0700);
	if (r < 0 || !realpath(config->data_dir, real)) {
		r = r < 0 ? r : -errno;
		snprintf(reterr, errsize, "data directory '%s': %s", config->data_dir, strerror(-r));
		agent_free(a);
		return r;
	}
	a->data_dir = strdup(real);
	a->self_exe = strdup(self_exe);
	if (!a->data_dir || !a->self_exe) {
		agent_free(a);
		return -ENOMEM;
	}
	sessions_load_all(a);
	/* the scratch of runs and file-tool views a killed server left (emulation/path/scratch.c),
	 * on a thread of its own: a large dead tree must not hold up the server's start */
	{
		pthread_t sweeper;

		if (pthread_create(&sweeper, NULL, sweep_main, NULL) == 0)
			(void) pthread_detach(sweeper);
	}
	if (pthread_create(&a->reaper, NULL, reaper, a) == 0)
		a->reaper_started = true;
	*ret = a;
	return 0;
}

void agent_free(Agent *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stopping = true;
	pthread_cond_broadcast(&a->wake);
	pthread_mutex_unlock(&a->lock);
	if (a->reaper_started)
		pthread_join(a->reaper, NULL);
	while (a->sessions) {
		Session *s = a->sessions;

		a->sessions = s->next;
		pthread_mutex_lock(&s->lock);
		kill_running_locked(s, "the server stopped");
		context_kill_all_locked(s);
		process_kill_all_locked(s);
		s->last_active_ms = s->last_active_ms ? s->last_active_ms : now_ms();
		(void) session_save_locked(s);
		pthread_mutex_unlock(&s->lock);
		session_put(s);
	}
	free(a->data_dir);
	free(a->self_exe);
	free(a);
}
