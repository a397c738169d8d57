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
 * idle expiry), exec.c (one execution), files.c (the file tools' resolution and I/O),
 * record.c (the session's audit log and artifacts), tools.c (the MCP tool table).
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

typedef struct AgentTenant {
	char *name;  /* [A-Za-z0-9_-]{1,63}: a directory name under data_dir */
	char *token; /* bearer token over HTTP */
} AgentTenant;

typedef struct AgentConfig {
	char *path;	      /* the file it came from, NULL: defaults */
	char *data_dir;	      /* DATA_DIR: DATA_DIR/TENANT/SESSION/ */
	char *default_policy; /* preset for sessions that name none */
	char **policies;      /* presets an agent may name */
	uint64_t idle_timeout_s;
	uint64_t max_sessions; /* per tenant */
	StoreCode store_code;
	AgentLimits max_limits; /* the most an agent may ask for */
	bool net_modes[_NET_MODE_MAX];
	char **allowed_domains; /* entries an agent may list in allowlist mode ("*.pypi.org:443") */
	char **trusted;		/* the allowlist left after a confidential level, may be empty */
	AgentTenant *tenants;
	size_t n_tenants;
	char **allowed_hosts, **allowed_origins; /* HTTP: besides loopback */
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
/** The tenant whose token this is (constant-time compare), or NULL. */
const char *agent_config_tenant_for_token(const AgentConfig *c, const char *token);

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

/** Registers the agent's tools (code_*) on server s. */
int agent_register_tools(Agent *a, McpServer *s);
