/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The agent layer (docs/agents.md): sandbox sessions that outlive one command, and the MCP
 * tools that drive them. It sits on top of the engine and reaches it only through its public
 * faces: each execution is one `sbxtrace run --json` of this same binary (the run API and
 * its documented result, docs/json-result.md), and the file tools resolve paths with the
 * view's resolver (emulation/path/view.h), the one the sandbox itself is held to.
 *
 * Files: config.c (the operator's TOML), session.c (the store: ids, directories, state files,
 * idle expiry), exec.c (one execution), context.c (stateful interpreters), process.c
 * (background processes), run-args.c (their `sbxtrace run` command lines), held.c (their
 * held connects), approval.c (human approval), files.c (the file tools' resolution and I/O),
 * record.c (the session's audit log and artifacts), install.c (code_install_package), tools.c
 * (the MCP tool table).
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/mcp.h"
#include "policy/policy.h"

/* What an agent may ask for, per session (and the operator's maximum of each). 0: unset. */
typedef struct AgentLimits {
	uint64_t wall_s, cpu_s, memory_mb, tasks, disk_mb, output_kb;
} AgentLimits;

typedef enum StoreCode {
	STORE_CODE_ON_ERROR,
	STORE_CODE_ALWAYS,
	STORE_CODE_NEVER,
	_STORE_CODE_MAX,
	_STORE_CODE_INVALID = -EINVAL,
} StoreCode;

/* Human approval (docs/agents.md, "Human approval"): seed 003's risk levels. */
typedef enum RiskLevel {
	RISK_LOW,
	RISK_MEDIUM,
	RISK_HIGH,
	RISK_CRITICAL,
	_RISK_MAX,
	_RISK_INVALID = -EINVAL,
} RiskLevel;
const char *risk_level_to_string(RiskLevel r);
RiskLevel risk_level_from_string(const char *s); /* "HIGH" or "high"; _RISK_INVALID */

/* One condition on a tool call's arguments: param (a key, or a dotted path into objects;
 * "_session.network_mode" is the session's current mode, set by the server) equals a value,
 * or matches a POSIX extended regex (a leading "(?i)" makes it case-insensitive). */
typedef struct ApprovalCondition {
	char *param;
	json_t *equals;	 /* or NULL */
	char *matches;	 /* or NULL; compiled into re */
	void *re;	 /* regex_t *, owned */
} ApprovalCondition;

typedef struct ApprovalRule {
	char **tools; /* tool names the rule applies to; "*": any */
	ApprovalCondition *conditions; /* all must hold */
	size_t n_conditions;
	RiskLevel risk;
	uint64_t timeout_s; /* how long a decision is awaited; then deny */
	char *description;
} ApprovalRule;

typedef struct ApprovalConfig {
	bool require[_RISK_MAX]; /* levels that need a human's approval; none by default */
	ApprovalRule *rules;	 /* the operator's, tried first */
	size_t n_rules;
	bool default_rules; /* then seed 003's set (true unless default_rules = false) */
	RiskLevel default_risk; /* for a call no rule matches: HIGH */
	char *socket;		/* [approval] socket, NULL: the runtime directory's */
} ApprovalConfig;

/** Frees the rules' contents (not the array). */
void approval_rule_clear(ApprovalRule *r);
/** Compiles pattern into c->re (a leading "(?i)" is REG_ICASE); -EINVAL with the reason. */
int approval_condition_compile(ApprovalCondition *c, const char *pattern, char *err,
			       size_t errsize);

typedef struct AgentTenant {
	char *name;  /* [A-Za-z0-9_-]{1,63}: a directory name under data_dir */
	char *token; /* bearer token over HTTP */
} AgentTenant;

/* [packages]: code_install_package (agent/install.c). */
typedef enum PackageManager {
	PACKAGE_MANAGER_PIP,
	PACKAGE_MANAGER_NPM,
	_PACKAGE_MANAGER_MAX,
} PackageManager;

typedef struct AgentPackages {
	bool managers[_PACKAGE_MANAGER_MAX]; /* which an agent may use */
	char *pip_index;    /* NULL: the host's pip configuration, else pip's default */
	char *npm_registry; /* NULL: `npm config get registry` */
	char **registries;  /* other URLs an agent may name in `registry` */
	char **allow;	    /* more destinations opened with every install ("host:port") */
	uint64_t timeout_s; /* of one install (wall and CPU time) */
	bool install_scripts; /* npm lifecycle scripts, pip builds from source */
} AgentPackages;

typedef struct AgentConfig {
	char *path;	      /* the file it came from, NULL: defaults */
	char *data_dir;	      /* DATA_DIR: DATA_DIR/TENANT/SESSION/ */
	char *default_policy; /* policy for sessions that name none (one of policies) */
	char **policies;      /* what an agent may name: presets, and policy files' names */
	char **policy_files;  /* index by index with policies: the file's absolute path, ""
			       * for a preset; NULL: all are presets */
	bool policies_ask;    /* one of them may hold a call for a decision (exec.unlisted,
			       * network.unlisted, an ask rule): the approval channels open */
	uint64_t idle_timeout_s;
	uint64_t max_sessions; /* per tenant */
	StoreCode store_code;
	bool audit_syscalls; /* executions write the run's audit log, merged into audit.jsonl */
	AgentLimits max_limits; /* the most an agent may ask for */
	bool net_modes[_NET_MODE_MAX];
	char **allowed_domains; /* entries an agent may list in allowlist mode ("*.pypi.org:443") */
	char **trusted;		/* the allowlist left after a confidential level, may be empty */
	bool net_ask;		/* [network] unlisted = "ask": sessions' connects outside their
				 * allowlist are held for a decision (docs/agents.md) */
	uint64_t net_ask_timeout_s; /* 0: the policy's default (30 s) */
	AgentTenant *tenants;
	size_t n_tenants;
	char **allowed_hosts, **allowed_origins; /* HTTP: besides loopback */
	ApprovalConfig approval;
	AgentPackages packages;
	char *shard; /* [a-z0-9]{1,16} or NULL: session ids are sbx_SHARD_… (docs/deploy.md) */
	bool http_stateless; /* serve requests of unknown MCP sessions (docs/deploy.md) */
} AgentConfig;

/** Whether s is a shard name: 1 to 16 lowercase letters and digits. */
bool agent_shard_valid(const char *s);

/**
 * Loads the operator's config from path (NULL: the defaults of docs/agents.md). data_dir
 * overrides the file's when not NULL. On error returns -errno and writes
 * "file:line:column: key: message" into reterr.
 */
int agent_config_load(const char *path, const char *data_dir, AgentConfig **ret,
		      char *reterr, size_t errsize);
/** Sets the shard (--shard, overriding server.shard); -EINVAL when it is not a shard name. */
int agent_config_set_shard(AgentConfig *c, const char *shard);
AgentConfig *agent_config_free(AgentConfig *c);

/** Whether a run of p may hold a call for a human's decision: exec.unlisted = "ask", an
 * ask or ask-write [[rule]], network.unlisted = "ask" in allowlist or loopback mode. */
bool agent_policy_asks(const Policy *p);

/** The absolute path of the policy file an agent names name (server.policies), NULL for a
 * preset or a name not offered. Borrowed from c. */
const char *agent_config_policy_file(const AgentConfig *c, const char *name);
/** The tenant whose token this is (constant-time compare), or NULL. */
const char *agent_config_tenant_for_token(const AgentConfig *c, const char *token);

/**
 * The allowlist entry ("host:port", "1.2.3.4:port", "[::1]:port") that an index or registry
 * URL needs: http or https, a host name, IPv4 address or [IPv6], an optional port, then a
 * path of printable ASCII without quotes, backslashes or spaces. 0, or -EINVAL for any other
 * URL. ret may be NULL (a check only). agent/install.c.
 */
int install_url_allow_entry(const char *url, char *ret, size_t size);
/** A packages.allow entry: HOST:PORTS, *.DOMAIN:PORTS, ADDRESS:PORTS or [IPV6]:PORTS (a port
 * or N-M). */
bool install_allow_entry_ok(const char *entry);

typedef struct Agent Agent;

/**
 * The agent layer over config (borrowed for its life): opens data_dir (made 0700 if missing),
 * re-reads the sessions found there, starts the idle reaper. self_exe: this binary, which
 * runs executions as `self_exe run --json …`.
 */
int agent_new(const AgentConfig *config, const char *self_exe, Agent **ret, char *reterr,
	      size_t errsize);
/** Stops the reaper, kills what still runs; sessions stay on disk. NULL is fine. */
void agent_free(Agent *a);

/**
 * Human approval: when the config requires approval for some level (or socket_path is
 * given), listens on the approval socket (socket_path, else the config's, else
 * $XDG_RUNTIME_DIR/sbxtrace/approval-PID.sock) and makes agent_register_tools() guard each
 * tool. Call before agent_register_tools(). *ret_socket: the socket's path (borrowed), NULL
 * when approval is off.
 */
int agent_approval_start(Agent *a, const char *socket_path, const char **ret_socket,
			 char *reterr, size_t errsize);
/** The directory of the default approval sockets (owned): $XDG_RUNTIME_DIR/sbxtrace,
 * /run/user/UID/sbxtrace, else /tmp/sbxtrace-UID. */
char *agent_approval_socket_dir(void);
/** Denies what waits, stops the socket (before agent_free). NULL-safe. */
void agent_approval_stop(Agent *a);

/** Registers the agent's tools (code_*) on server s. */
int agent_register_tools(Agent *a, McpServer *s);
