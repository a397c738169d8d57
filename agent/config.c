/* SPDX-License-Identifier: MIT */
/*
 * The operator's config of `sbxtrace mcp` (docs/agents.md, "Operator config"): TOML through
 * our own parser, one table of keys per section, so that unknown keys are errors with a
 * suggestion and every error names file, line, column and key, as policy errors do.
 */
#include "agent/agent.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/util.h"
#include "policy/policy.h"
#include "policy/toml.h"

#define CONFIG_MAX_BYTES (1u << 20)

typedef struct Ctx {
	const char *file;
	char *err;
	size_t errsize;
} Ctx;

static int fail(Ctx *x, const TomlValue *at, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(Ctx *x, const TomlValue *at, const char *key, const char *fmt, ...)
{
	char msg[1600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(x->err, x->errsize, "%s:%u:%u: %s: %s", x->file, at ? at->line : 0,
		 at ? at->column : 0, key, msg);
	return -EINVAL;
}

static bool tenant_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 63)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			return false;
	return true;
}

bool agent_shard_valid(const char *s)
{
	size_t n = 0;

	if (!s)
		return false;
	for (; s[n]; n++)
		if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9')) || n >= 16)
			return false;
	return n >= 1;
}

int agent_config_set_shard(AgentConfig *c, const char *shard)
{
	char *n;

	if (!agent_shard_valid(shard))
		return -EINVAL;
	n = strdup(shard);
	if (!n)
		return -ENOMEM;
	free(c->shard);
	c->shard = n;
	return 0;
}

/* Rejects keys of table t that are not in known[], with the closest known one. */
static int check_keys(Ctx *x, const TomlValue *t, const char *section, const char *const *known)
{
	for (size_t i = 0; i < t->table.n; i++) {
		const TomlKeyValue *kv = &t->table.items[i];
		const char *best = NULL;
		unsigned bestd = 4;
		bool ok = false;

		for (size_t k = 0; known[k]; k++) {
			unsigned d = edit_distance(kv->key, known[k]);

			if (d == 0)
				ok = true;
			if (d < bestd)
				bestd = d, best = known[k];
		}
		if (!ok) {
			char key[160];

			snprintf(key, sizeof(key), "%s%s%.64s", section, *section ? "." : "", kv->key);
			return fail(x, kv->value, key, "unknown key%s%s%s", best ? " (did you mean '" : "",
				    best ? best : "", best ? "'?)" : "");
		}
	}
	return 0;
}

static int get_string(Ctx *x, const TomlValue *t, const char *section, const char *key, char **ret)
{
	const TomlValue *v = toml_table_get(t, key);
	char k[128];

	if (!v)
		return 0;
	snprintf(k, sizeof(k), "%s.%s", section, key);
	if (v->type != TOML_STRING)
		return fail(x, v, k, "must be a string");
	free(*ret);
	*ret = strdup(v->str.ptr);
	return *ret ? 0 : -ENOMEM;
}

static int get_strv(Ctx *x, const TomlValue *t, const char *section, const char *key, char ***ret)
{
	const TomlValue *v = toml_table_get(t, key);
	char k[128];

	if (!v)
		return 0;
	snprintf(k, sizeof(k), "%s.%s", section, key);
	if (v->type != TOML_ARRAY)
		return fail(x, v, k, "must be an array of strings");
	*ret = strv_free(*ret);
	*ret = calloc(1, sizeof(char *));
	if (!*ret)
		return -ENOMEM;
	for (size_t i = 0; i < v->array.n; i++) {
		if (v->array.items[i]->type != TOML_STRING)
			return fail(x, v->array.items[i], k, "must be an array of strings");
		if (strv_push(ret, v->array.items[i]->str.ptr) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int get_uint(Ctx *x, const TomlValue *t, const char *section, const char *key, uint64_t *ret)
{
	const TomlValue *v = toml_table_get(t, key);
	char k[128];

	if (!v)
		return 0;
	snprintf(k, sizeof(k), "%s.%s", section, key);
	if (v->type != TOML_INTEGER || v->integer < 0)
		return fail(x, v, k, "must be a non-negative integer");
	*ret = (uint64_t) v->integer;
	return 0;
}

static int get_bool(Ctx *x, const TomlValue *t, const char *section, const char *key, bool *ret)
{
	const TomlValue *v = toml_table_get(t, key);
	char k[128];

	if (!v)
		return 0;
	snprintf(k, sizeof(k), "%s.%s", section, key);
	if (v->type != TOML_BOOL)
		return fail(x, v, k, "must be true or false");
	*ret = v->boolean;
	return 0;
}

/* A name agents may give: a preset's, or a policy file's [sandbox] name (session.c writes it
 * into state.json and the session's policy, and keeps it in a 64-byte field). */
static bool policy_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 63)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' || *s == '.'))
			return false;
	return true;
}

static bool is_preset(const char *name)
{
	for (const char *const *dir = policy_preset_dirs(); *dir; dir++) {
		_cleanup_free_ char *path = strdup_printf("%s/%s.toml", *dir, name);

		if (path && access(path, F_OK) == 0)
			return true;
	}
	return false;
}

/* One entry of server.policies: loads it, adds its name and file to *names and *files. */
static int check_policy(Ctx *x, const TomlValue *item, const PolicyVars *vars, char ***names,
			char ***files, bool *asks)
{
	_cleanup_(policy_freep) Policy *p = NULL;
	const char *entry = item->str.ptr, *name = entry;
	size_t len = strlen(entry);
	/* as policy_load() tells a file from a preset */
	bool file = strchr(entry, '/') || (len > 5 && streq(entry + len - 5, ".toml"));
	PolicyError pe = {};
	char buf[1100];
	int r;

	if (file && entry[0] != '/')
		return fail(x, item, "server.policies",
			    "'%.200s': a policy file must be named by its absolute path", entry);
	r = policy_load(entry, vars, NULL, &p, &pe);
	if (r == -ENOMEM)
		return r;
	if (r < 0 && file)
		return fail(x, item, "server.policies", "policy file '%.200s' does not load: %s",
			    entry, policy_error_format(&pe, buf, sizeof(buf)));
	if (r < 0)
		return fail(x, item, "server.policies", "%s",
			    policy_error_format(&pe, buf, sizeof(buf)));
	if (file) {
		name = p->name;
		if (!policy_name_ok(name))
			return fail(x, item, "server.policies",
				    "policy file '%.200s' is named '%.64s': agents name it by its "
				    "[sandbox] name, which must be 1-63 letters, digits, '_', '-' "
				    "or '.'",
				    entry, name);
		if (is_preset(name))
			return fail(x, item, "server.policies",
				    "policy file '%.200s' is named '%s', as a preset is; give it "
				    "another [sandbox] name (agents name it by that name)",
				    entry, name);
	}
	for (size_t k = 0; (*names)[k]; k++)
		if (streq((*names)[k], name))
			return fail(x, item, "server.policies",
				    "'%.200s' is offered twice under the name '%s'%s%.200s%s",
				    entry, name, (*files)[k][0] ? " (also '" : "", (*files)[k],
				    (*files)[k][0] ? "')" : "");
	if (strv_push(names, name) < 0 || strv_push(files, file ? entry : "") < 0)
		return -ENOMEM;
	/* the session decides the network mode: a file's unlisted = "ask" counts */
	*asks |= agent_policy_asks(p) || p->network.ask_unlisted;
	return 0;
}

/*
 * server.policies: each entry is a preset's name or the absolute path of a policy file. Each
 * is loaded now, so that a typo, a missing file or a policy error stops the server at start
 * rather than failing the first session that asks for it. An agent names a file by the name
 * the policy gives itself ([sandbox] name; without one, the file's name less ".toml"): the
 * path stays the operator's. c->policies becomes those names, c->policy_files the paths
 * ("" for a preset), index by index.
 */
static int check_policies(Ctx *x, const TomlValue *t, AgentConfig *c)
{
	const TomlValue *v = toml_table_get(t, "policies");
	_cleanup_(strv_freep) char **names = NULL, **files = NULL;
	char ws[] = "/tmp/sbxtrace-policy-check-XXXXXX";
	/* ${WORKSPACE} is each session's own; a mount source must exist: an empty directory
	 * of ours stands for it */
	PolicyVars vars = {.workspace = ws, .home = getenv("HOME"), .pwd = "/"};
	bool asks = false;
	int r = 0;

	if (!v)
		return 0;
	names = calloc(1, sizeof(char *));
	files = calloc(1, sizeof(char *));
	if (!names || !files)
		return -ENOMEM;
	if (!mkdtemp(ws))
		return fail(x, v, "server.policies", "cannot make a directory to check them in: %s",
			    strerror(errno));
	for (size_t i = 0; i < v->array.n && r >= 0; i++)
		r = check_policy(x, v->array.items[i], &vars, &names, &files, &asks);
	(void) rmdir(ws);
	if (r < 0)
		return r;
	strv_free(c->policies);
	strv_free(c->policy_files);
	c->policies_ask = asks;
	c->policies = TAKE_PTR(names);
	c->policy_files = TAKE_PTR(files);
	return 0;
}

bool agent_policy_asks(const Policy *p)
{
	if (p->exec_ask_unlisted)
		return true;
	if (p->network.ask_unlisted &&
	    (p->network.mode == NET_MODE_ALLOWLIST || p->network.mode == NET_MODE_LOOPBACK))
		return true;
	for (size_t i = 0; i < p->n_rules; i++)
		if (p->rules[i].access == RULE_ACCESS_ASK ||
		    p->rules[i].access == RULE_ACCESS_ASK_WRITE)
			return true;
	return false;
}

const char *agent_config_policy_file(const AgentConfig *c, const char *name)
{
	for (size_t i = 0; c->policies && c->policies[i]; i++)
		if (streq(c->policies[i], name))
			return c->policy_files && c->policy_files[i] && c->policy_files[i][0]
				       ? c->policy_files[i]
				       : NULL;
	return NULL;
}

static int parse_server(Ctx *x, const TomlValue *t, AgentConfig *c)
{
	static const char *const known[] = {"data_dir",	    "default_policy",  "policies",
					    "idle_timeout", "max_sessions",    "store_code",
					    "allowed_hosts", "allowed_origins", "audit_syscalls",
					    "shard", "http_stateless", NULL};
	_cleanup_free_ char *idle = NULL, *store = NULL;
	const TomlValue *v;
	int r;

	r = check_keys(x, t, "server", known);
	if (r < 0)
		return r;
	if ((r = get_string(x, t, "server", "data_dir", &c->data_dir)) < 0 ||
	    (r = get_string(x, t, "server", "default_policy", &c->default_policy)) < 0 ||
	    (r = get_strv(x, t, "server", "policies", &c->policies)) < 0 ||
	    (r = check_policies(x, t, c)) < 0 ||
	    (r = get_uint(x, t, "server", "max_sessions", &c->max_sessions)) < 0 ||
	    (r = get_strv(x, t, "server", "allowed_hosts", &c->allowed_hosts)) < 0 ||
	    (r = get_strv(x, t, "server", "allowed_origins", &c->allowed_origins)) < 0 ||
	    (r = get_string(x, t, "server", "store_code", &store)) < 0 ||
	    (r = get_bool(x, t, "server", "audit_syscalls", &c->audit_syscalls)) < 0 ||
	    (r = get_string(x, t, "server", "shard", &c->shard)) < 0)
		return r;
	if (c->shard && !agent_shard_valid(c->shard))
		return fail(x, toml_table_get(t, "shard"), "server.shard",
			    "must be 1 to 16 lowercase letters and digits, like \"s0\"");
	if ((r = get_bool(x, t, "server", "http_stateless", &c->http_stateless)) < 0)
		return r;
	v = toml_table_get(t, "idle_timeout");
	if (v) {
		uint64_t ms;

		if (v->type != TOML_STRING || policy_parse_duration_ms(v->str.ptr, &ms) < 0 ||
		    ms < 1000)
			return fail(x, v, "server.idle_timeout",
				    "must be a duration of at least 1s, like \"30m\"");
		c->idle_timeout_s = ms / 1000;
	}
	if (store) {
		if (streq(store, "on_error"))
			c->store_code = STORE_CODE_ON_ERROR;
		else if (streq(store, "always"))
			c->store_code = STORE_CODE_ALWAYS;
		else if (streq(store, "never"))
			c->store_code = STORE_CODE_NEVER;
		else
			return fail(x, toml_table_get(t, "store_code"), "server.store_code",
				    "must be \"on_error\", \"always\" or \"never\"");
	}
	if (c->data_dir && c->data_dir[0] != '/')
		return fail(x, toml_table_get(t, "data_dir"), "server.data_dir",
			    "must be an absolute path");
	return 0;
}

static int parse_limits(Ctx *x, const TomlValue *t, AgentLimits *l)
{
	static const char *const known[] = {"wall_s",  "cpu_s",	  "memory_mb",
					    "tasks",   "disk_mb", "output_kb", NULL};
	int r = check_keys(x, t, "limits", known);

	if (r < 0 || (r = get_uint(x, t, "limits", "wall_s", &l->wall_s)) < 0 ||
	    (r = get_uint(x, t, "limits", "cpu_s", &l->cpu_s)) < 0 ||
	    (r = get_uint(x, t, "limits", "memory_mb", &l->memory_mb)) < 0 ||
	    (r = get_uint(x, t, "limits", "tasks", &l->tasks)) < 0 ||
	    (r = get_uint(x, t, "limits", "disk_mb", &l->disk_mb)) < 0 ||
	    (r = get_uint(x, t, "limits", "output_kb", &l->output_kb)) < 0)
		return r;
	return 0;
}

static int parse_network(Ctx *x, const TomlValue *t, AgentConfig *c)
{
	static const char *const known[] = {"modes", "allowed_domains", "trusted", "unlisted",
					    "ask_timeout", NULL};
	_cleanup_(strv_freep) char **modes = NULL;
	_cleanup_free_ char *unlisted = NULL;
	int r = check_keys(x, t, "network", known);

	if (r < 0 || (r = get_strv(x, t, "network", "modes", &modes)) < 0 ||
	    (r = get_strv(x, t, "network", "allowed_domains", &c->allowed_domains)) < 0 ||
	    (r = get_strv(x, t, "network", "trusted", &c->trusted)) < 0 ||
	    (r = get_string(x, t, "network", "unlisted", &unlisted)) < 0 ||
	    (r = get_uint(x, t, "network", "ask_timeout", &c->net_ask_timeout_s)) < 0)
		return r;
	if (unlisted && !streq(unlisted, "deny") && !streq(unlisted, "ask"))
		return fail(x, toml_table_get(t, "unlisted"), "network.unlisted",
			    "must be \"deny\" or \"ask\"");
	c->net_ask = unlisted && streq(unlisted, "ask");
	if (toml_table_get(t, "ask_timeout") && (c->net_ask_timeout_s < 1 || c->net_ask_timeout_s > 3600))
		return fail(x, toml_table_get(t, "ask_timeout"), "network.ask_timeout",
			    "must be seconds from 1 to 3600");
	if (modes) {
		for (size_t i = 0; i < _NET_MODE_MAX; i++)
			c->net_modes[i] = false;
		for (size_t i = 0; modes[i]; i++) {
			NetMode m = net_mode_from_string(modes[i]);

			if (m < 0)
				return fail(x, toml_table_get(t, "modes"), "network.modes",
					    "'%.32s' is not a mode (none, loopback, allowlist, full)",
					    modes[i]);
			c->net_modes[m] = true;
		}
		c->net_modes[NET_MODE_NONE] = true; /* "off" is always allowed */
	}
	return 0;
}

/* An index or registry URL: http or https, a host name, an IPv4 address or [IPv6], an
 * optional port, a path of printable characters. Checked again by install.c, which derives
 * the allowlist entry from it. */
static bool url_ok(const char *u)
{
	return install_url_allow_entry(u, NULL, 0) == 0;
}

static int parse_packages(Ctx *x, const TomlValue *t, AgentPackages *p)
{
	static const char *const known[] = {"managers", "pip_index", "npm_registry", "registries",
					    "allow", "timeout", "install_scripts", NULL};
	_cleanup_(strv_freep) char **managers = NULL;
	const TomlValue *v;
	int r = check_keys(x, t, "packages", known);

	if (r < 0 || (r = get_strv(x, t, "packages", "managers", &managers)) < 0 ||
	    (r = get_string(x, t, "packages", "pip_index", &p->pip_index)) < 0 ||
	    (r = get_string(x, t, "packages", "npm_registry", &p->npm_registry)) < 0 ||
	    (r = get_strv(x, t, "packages", "registries", &p->registries)) < 0 ||
	    (r = get_strv(x, t, "packages", "allow", &p->allow)) < 0)
		return r;
	if (managers) {
		p->managers[PACKAGE_MANAGER_PIP] = p->managers[PACKAGE_MANAGER_NPM] = false;
		for (size_t i = 0; managers[i]; i++) {
			if (streq(managers[i], "pip"))
				p->managers[PACKAGE_MANAGER_PIP] = true;
			else if (streq(managers[i], "npm"))
				p->managers[PACKAGE_MANAGER_NPM] = true;
			else
				return fail(x, toml_table_get(t, "managers"), "packages.managers",
					    "'%.32s' is not a package manager (pip, npm)", managers[i]);
		}
	}
	if (p->pip_index && !url_ok(p->pip_index))
		return fail(x, toml_table_get(t, "pip_index"), "packages.pip_index",
			    "must be an http:// or https:// URL with a host name or address");
	if (p->npm_registry && !url_ok(p->npm_registry))
		return fail(x, toml_table_get(t, "npm_registry"), "packages.npm_registry",
			    "must be an http:// or https:// URL with a host name or address");
	for (size_t i = 0; p->registries && p->registries[i]; i++)
		if (!url_ok(p->registries[i]))
			return fail(x, toml_table_get(t, "registries"), "packages.registries",
				    "'%.200s' is not an http:// or https:// URL with a host name or "
				    "address", p->registries[i]);
	for (size_t i = 0; p->allow && p->allow[i]; i++)
		if (!install_allow_entry_ok(p->allow[i]))
			return fail(x, toml_table_get(t, "allow"), "packages.allow",
				    "'%.200s' is not HOST:PORT, ADDRESS:PORT or [IPV6]:PORT",
				    p->allow[i]);
	v = toml_table_get(t, "timeout");
	if (v) {
		uint64_t ms;

		if (v->type != TOML_STRING || policy_parse_duration_ms(v->str.ptr, &ms) < 0 ||
		    ms < 1000 || ms > 24 * 3600 * 1000ull)
			return fail(x, v, "packages.timeout",
				    "must be a duration from 1s to 24h, like \"5m\"");
		p->timeout_s = ms / 1000;
	}
	v = toml_table_get(t, "install_scripts");
	if (v) {
		if (v->type != TOML_BOOL)
			return fail(x, v, "packages.install_scripts", "must be true or false");
		p->install_scripts = v->boolean;
	}
	return 0;
}

static int parse_tenants(Ctx *x, const TomlValue *arr, AgentConfig *c)
{
	static const char *const known[] = {"name", "token", "token_file", NULL};

	if (arr->type != TOML_ARRAY)
		return fail(x, arr, "tenant", "must be an array of tables ([[tenant]])");
	c->tenants = calloc(arr->array.n ? arr->array.n : 1, sizeof(*c->tenants));
	if (!c->tenants)
		return -ENOMEM;
	for (size_t i = 0; i < arr->array.n; i++) {
		const TomlValue *t = arr->array.items[i];
		AgentTenant *tn = &c->tenants[c->n_tenants++];
		_cleanup_free_ char *file = NULL;
		int r;

		if (t->type != TOML_TABLE)
			return fail(x, t, "tenant", "must be a table");
		r = check_keys(x, t, "tenant", known);
		if (r < 0 || (r = get_string(x, t, "tenant", "name", &tn->name)) < 0 ||
		    (r = get_string(x, t, "tenant", "token", &tn->token)) < 0 ||
		    (r = get_string(x, t, "tenant", "token_file", &file)) < 0)
			return r;
		if (!tn->name || !tenant_name_ok(tn->name))
			return fail(x, t, "tenant.name",
				    "each tenant needs a name of 1-63 letters, digits, '_' or '-'");
		if (file && !tn->token) {
			size_t len;

			r = read_full_file(-100 /* AT_FDCWD */, file, 4096, &tn->token, &len);
			if (r < 0)
				return fail(x, toml_table_get(t, "token_file"), "tenant.token_file",
					    "cannot read '%.200s': %s", file, strerror(-r));
			while (len > 0 && (tn->token[len - 1] == '\n' || tn->token[len - 1] == ' '))
				tn->token[--len] = 0;
		}
		if (!tn->token || strlen(tn->token) < 16)
			return fail(x, t, "tenant.token",
				    "tenant '%s' needs a token (or token_file) of at least 16 characters",
				    tn->name);
		for (size_t k = 0; k + 1 < c->n_tenants; k++)
			if (streq(c->tenants[k].name, tn->name) || streq(c->tenants[k].token, tn->token))
				return fail(x, t, "tenant",
					    "tenant '%s' repeats another tenant's name or token",
					    tn->name);
	}
	return 0;
}

/* A TOML value as JSON (for `equals`): strings, integers, floats, booleans. */
static json_t *toml_to_json(const TomlValue *v)
{
	switch (v->type) {
	case TOML_STRING:
		return json_stringn(v->str.ptr, v->str.len);
	case TOML_INTEGER:
		return json_integer(v->integer);
	case TOML_FLOAT:
		return json_real(v->flt);
	case TOML_BOOL:
		return json_boolean(v->boolean);
	default:
		return NULL;
	}
}

static int parse_condition(Ctx *x, const TomlValue *t, ApprovalCondition *c)
{
	static const char *const known[] = {"param", "equals", "matches", NULL};
	const TomlValue *eq = toml_table_get(t, "equals");
	_cleanup_free_ char *matches = NULL;
	char err[200];
	int r;

	if (t->type != TOML_TABLE)
		return fail(x, t, "approval.rule.conditions",
			    "must be an array of tables like { param = \"code\", matches = \"…\" }");
	r = check_keys(x, t, "approval.rule.conditions", known);
	if (r < 0 || (r = get_string(x, t, "approval.rule.conditions", "param", &c->param)) < 0 ||
	    (r = get_string(x, t, "approval.rule.conditions", "matches", &matches)) < 0)
		return r;
	if (!c->param || !*c->param)
		return fail(x, t, "approval.rule.conditions.param", "each condition needs a param");
	if (!!eq == !!matches)
		return fail(x, t, "approval.rule.conditions",
			    "give either equals (a value) or matches (a regex)");
	if (eq) {
		c->equals = toml_to_json(eq);
		if (!c->equals)
			return fail(x, eq, "approval.rule.conditions.equals",
				    "must be a string, a number or a boolean");
	} else {
		r = approval_condition_compile(c, matches, err, sizeof(err));
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			return fail(x, toml_table_get(t, "matches"), "approval.rule.conditions.matches",
				    "%s", err);
	}
	return 0;
}

static int parse_rule(Ctx *x, const TomlValue *t, ApprovalRule *rule)
{
	static const char *const known[] = {"tool",	   "tools",	  "risk",
					    "timeout",	   "description", "conditions", NULL};
	const TomlValue *v, *conds;
	_cleanup_free_ char *tool = NULL, *risk = NULL;
	int r;

	if (t->type != TOML_TABLE)
		return fail(x, t, "approval.rule", "must be a table ([[approval.rule]])");
	r = check_keys(x, t, "approval.rule", known);
	if (r < 0 || (r = get_string(x, t, "approval.rule", "tool", &tool)) < 0 ||
	    (r = get_strv(x, t, "approval.rule", "tools", &rule->tools)) < 0 ||
	    (r = get_string(x, t, "approval.rule", "risk", &risk)) < 0 ||
	    (r = get_string(x, t, "approval.rule", "description", &rule->description)) < 0)
		return r;
	if (tool) {
		if (!rule->tools && !(rule->tools = calloc(1, sizeof(char *))))
			return -ENOMEM;
		if (strv_push(&rule->tools, tool) < 0)
			return -ENOMEM;
	}
	if (!rule->tools || !rule->tools[0])
		return fail(x, t, "approval.rule.tool", "each rule names a tool (or tools = [...])");
	if (!risk || (rule->risk = risk_level_from_string(risk)) < 0)
		return fail(x, t, "approval.rule.risk",
			    "each rule needs a risk: LOW, MEDIUM, HIGH or CRITICAL");
	v = toml_table_get(t, "timeout");
	if (v) {
		uint64_t ms;

		if (v->type == TOML_INTEGER && v->integer > 0)
			rule->timeout_s = (uint64_t) v->integer;
		else if (v->type == TOML_STRING && policy_parse_duration_ms(v->str.ptr, &ms) >= 0 &&
			 ms >= 1000)
			rule->timeout_s = ms / 1000;
		else
			return fail(x, v, "approval.rule.timeout",
				    "must be a duration of at least 1s, like \"60s\", or seconds");
	}
	conds = toml_table_get(t, "conditions");
	if (conds) {
		if (conds->type != TOML_ARRAY)
			return fail(x, conds, "approval.rule.conditions",
				    "must be an array of tables like { param = \"code\", matches = \"…\" }");
		rule->conditions = calloc(conds->array.n + 1, sizeof(*rule->conditions));
		if (!rule->conditions)
			return -ENOMEM;
		for (size_t i = 0; i < conds->array.n; i++) {
			r = parse_condition(x, conds->array.items[i], &rule->conditions[i]);
			rule->n_conditions = i + 1;
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int parse_approval(Ctx *x, const TomlValue *t, AgentConfig *c)
{
	static const char *const known[] = {"require", "rule",	 "default_rules",
					    "default_risk", "socket", NULL};
	_cleanup_(strv_freep) char **require = NULL;
	_cleanup_free_ char *dflt = NULL;
	const TomlValue *v;
	int r;

	if (t->type != TOML_TABLE)
		return fail(x, t, "approval", "must be a table");
	r = check_keys(x, t, "approval", known);
	if (r < 0 || (r = get_strv(x, t, "approval", "require", &require)) < 0 ||
	    (r = get_string(x, t, "approval", "default_risk", &dflt)) < 0 ||
	    (r = get_string(x, t, "approval", "socket", &c->approval.socket)) < 0)
		return r;
	for (size_t i = 0; require && require[i]; i++) {
		RiskLevel l = risk_level_from_string(require[i]);

		if (l < 0)
			return fail(x, toml_table_get(t, "require"), "approval.require",
				    "'%.32s' is not a level (LOW, MEDIUM, HIGH, CRITICAL)", require[i]);
		c->approval.require[l] = true;
	}
	if (dflt && (c->approval.default_risk = risk_level_from_string(dflt)) < 0)
		return fail(x, toml_table_get(t, "default_risk"), "approval.default_risk",
			    "must be LOW, MEDIUM, HIGH or CRITICAL");
	v = toml_table_get(t, "default_rules");
	if (v) {
		if (v->type != TOML_BOOL)
			return fail(x, v, "approval.default_rules", "must be true or false");
		c->approval.default_rules = v->boolean;
	}
	if (c->approval.socket && c->approval.socket[0] != '/')
		return fail(x, toml_table_get(t, "socket"), "approval.socket",
			    "must be an absolute path");
	v = toml_table_get(t, "rule");
	if (v) {
		if (v->type != TOML_ARRAY)
			return fail(x, v, "approval.rule", "must be an array of tables ([[approval.rule]])");
		c->approval.rules = calloc(v->array.n + 1, sizeof(*c->approval.rules));
		if (!c->approval.rules)
			return -ENOMEM;
		for (size_t i = 0; i < v->array.n; i++) {
			r = parse_rule(x, v->array.items[i], &c->approval.rules[i]);
			c->approval.n_rules = i + 1;
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int set_defaults(AgentConfig *c)
{
	static const char *const presets[] = {"standard", "strict", "python", "node", "shell",
					      NULL};

	c->default_policy = strdup("standard");
	c->policies = strv_copy((char *const *) presets);
	c->idle_timeout_s = 30 * 60;
	c->max_sessions = 100;
	c->store_code = STORE_CODE_ON_ERROR;
	c->max_limits = (AgentLimits){.wall_s = 600,
				      .cpu_s = 600,
				      .memory_mb = 4096,
				      .tasks = 512,
				      .disk_mb = 8192,
				      .output_kb = 64 * 1024};
	c->net_modes[NET_MODE_NONE] = true;
	c->net_modes[NET_MODE_LOOPBACK] = true;
	c->approval.default_rules = true;
	c->approval.default_risk = RISK_HIGH;
	c->packages.managers[PACKAGE_MANAGER_PIP] = c->packages.managers[PACKAGE_MANAGER_NPM] = true;
	c->packages.timeout_s = 300;
	return c->default_policy && c->policies ? 0 : -ENOMEM;
}

int agent_config_load(const char *path, const char *data_dir, AgentConfig **ret, char *reterr,
		      size_t errsize)
{
	_cleanup_(toml_freep) TomlValue *root = NULL;
	_cleanup_free_ char *text = NULL;
	AgentConfig *c = calloc(1, sizeof(*c));
	Ctx x = {.file = path ? path : "(defaults)", .err = reterr, .errsize = errsize};
	TomlError te = {};
	size_t len;
	int r;

	if (!c)
		return -ENOMEM;
	r = set_defaults(c);
	if (r < 0)
		goto fail;
	if (path) {
		static const char *const known[] = {"server", "limits", "network", "packages",
						    "tenant", "approval", NULL};
		const TomlValue *v;

		c->path = strdup(path);
		r = read_full_file(-100 /* AT_FDCWD */, path, CONFIG_MAX_BYTES, &text, &len);
		if (r < 0) {
			snprintf(reterr, errsize, "%s: cannot read the config: %s", path, strerror(-r));
			goto fail;
		}
		r = toml_parse(text, len, &root, &te);
		if (r < 0) {
			snprintf(reterr, errsize, "%s:%u:%u: %s", path, te.line, te.column, te.message);
			goto fail;
		}
		r = check_keys(&x, root, "", known);
		if (r < 0)
			goto fail;
		if ((v = toml_table_get(root, "server")) && (r = parse_server(&x, v, c)) < 0)
			goto fail;
		if ((v = toml_table_get(root, "limits")) &&
		    (r = parse_limits(&x, v, &c->max_limits)) < 0)
			goto fail;
		if ((v = toml_table_get(root, "network")) && (r = parse_network(&x, v, c)) < 0)
			goto fail;
		if ((v = toml_table_get(root, "packages")) &&
		    (r = parse_packages(&x, v, &c->packages)) < 0)
			goto fail;
		if ((v = toml_table_get(root, "tenant")) && (r = parse_tenants(&x, v, c)) < 0)
			goto fail;
		if ((v = toml_table_get(root, "approval")) && (r = parse_approval(&x, v, c)) < 0)
			goto fail;
		/* the operator may name a file by its path here too: agents see its name */
		for (size_t i = 0; c->default_policy && c->policy_files && c->policy_files[i]; i++)
			if (c->policy_files[i][0] && streq(c->policy_files[i], c->default_policy)) {
				free(c->default_policy);
				c->default_policy = strdup(c->policies[i]);
				if (!c->default_policy) {
					r = -ENOMEM;
					goto fail;
				}
				break;
			}
		if (c->default_policy && !strv_contains(c->policies, c->default_policy)) {
			r = fail(&x, toml_table_get(toml_table_get(root, "server"), "default_policy"),
				 "server.default_policy", "'%s' is not in server.policies",
				 c->default_policy);
			goto fail;
		}
	}
	if (data_dir) {
		free(c->data_dir);
		c->data_dir = strdup(data_dir);
	}
	if (!c->data_dir) {
		const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");

		if (state && *state == '/')
			c->data_dir = strdup_printf("%s/sbxtrace/sessions", state);
		else if (home && *home == '/')
			c->data_dir = strdup_printf("%s/.local/state/sbxtrace/sessions", home);
		else {
			snprintf(reterr, errsize, "no data directory: set server.data_dir or --data-dir");
			r = -EINVAL;
			goto fail;
		}
	}
	if (!c->data_dir) {
		r = -ENOMEM;
		goto fail;
	}
	*ret = c;
	return 0;
fail:
	agent_config_free(c);
	return r;
}

AgentConfig *agent_config_free(AgentConfig *c)
{
	if (!c)
		return NULL;
	free(c->path);
	free(c->data_dir);
	free(c->default_policy);
	strv_free(c->policies);
	strv_free(c->policy_files);
	strv_free(c->allowed_domains);
	strv_free(c->trusted);
	strv_free(c->allowed_hosts);
	strv_free(c->allowed_origins);
	free(c->packages.pip_index);
	free(c->packages.npm_registry);
	strv_free(c->packages.registries);
	strv_free(c->packages.allow);
	free(c->shard);
	for (size_t i = 0; i < c->n_tenants; i++) {
		free(c->tenants[i].name);
		free(c->tenants[i].token);
	}
	free(c->tenants);
	for (size_t i = 0; i < c->approval.n_rules; i++)
		approval_rule_clear(&c->approval.rules[i]);
	free(c->approval.rules);
	free(c->approval.socket);
	free(c);
	return NULL;
}

const char *agent_config_tenant_for_token(const AgentConfig *c, const char *token)
{
	const char *found = NULL;
	size_t tl = strlen(token);

	/* compare with every token in full, whatever matches: no timing hint of a prefix */
	for (size_t i = 0; i < c->n_tenants; i++) {
		const char *t = c->tenants[i].token;
		size_t n = strlen(t);
		unsigned char diff = (unsigned char) (n != tl);

		for (size_t k = 0; k < n; k++)
			diff |= (unsigned char) (t[k] ^ (k < tl ? token[k] : 0));
		if (!diff)
			found = c->tenants[i].name;
	}
	return found;
}
