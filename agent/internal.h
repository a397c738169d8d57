/* SPDX-License-Identifier: MIT */
#pragma once

/* Private to agent/: the session store and what the tools call. */

#include <pthread.h>
#include <sys/types.h>

#include "agent/agent.h"

#define SESSION_ID_LEN 28 /* "sbx_" + 24 base62 characters: 142 random bits */
#define SESSION_SHARD_MAX 16
/* "sbx_SHARD_" + 24 base62 when the server has a shard (server.shard, [a-z0-9]{1,16}) */
#define SESSION_ID_MAX (SESSION_ID_LEN + SESSION_SHARD_MAX + 1)

typedef struct Context Context;
typedef struct Process Process;

/* One execution running in a session (a `sbxtrace run` process), for kills from outside. */
typedef struct Running {
	struct Running *next;
	pid_t pid;
	bool killed;
	const char *why; /* static: why it was killed from outside */
} Running;

typedef struct Session {
	struct Session *next;
	Agent *agent;
	char id[SESSION_ID_MAX + 1];
	char tenant[64];
	char *dir; /* DATA_DIR/TENANT/ID, canonical */
	pthread_mutex_t lock; /* guards everything below */
	unsigned refs;	      /* the store's reference and one per tool call using it */
	bool destroyed;	      /* gone from the store; removed when the last reference goes */
	/* state, mirrored in state.json */
	char policy_name[64]; /* as the agent named it: a preset, or a policy file's name */
	char *policy_file;    /* that file's absolute path (what policy.toml extends), or NULL */
	char language[16];
	NetMode mode_asked; /* what the agent asked for */
	NetMode mode;	    /* now: never above mode_asked, lowered by the ratchet */
	char **allowed_domains;
	Sensitivity level; /* highest level that entered the session */
	char **datasets;   /* names given to code_mark_private */
	AgentLimits limits;
	uint64_t idle_timeout_s;
	uint64_t created_ms, last_active_ms; /* realtime */
	uint64_t executions;
	char *notice; /* for the next result, NULL if none */
	bool restarted; /* loaded from disk by this server: processes did not survive */
	Running *running;
	unsigned n_running;
	Policy *policy; /* the session's policy as loaded (for the file tools) */
	Context *contexts; /* stateful interpreters (context.c) */
	Process *processes; /* background processes (process.c) */
	uint64_t processes_started;
} Session;

struct Agent {
	const AgentConfig *config;
	char *self_exe;
	char *data_dir;
	pthread_mutex_t lock; /* guards sessions, stopping */
	Session *sessions;
	pthread_cond_t wake;
	bool stopping;
	pthread_t reaper;
	bool reaper_started;
	struct Approval *approval; /* approval.c, NULL when no level needs approval */
};

/* session.c */
bool session_id_valid(const char *id);
/** Creates a session for tenant from the tool's arguments; on a refusal returns -EINVAL or
 * -EPERM with the reason for the agent in err. The caller holds a reference. */
int session_create(Agent *a, const char *tenant, json_t *args, Session **ret, char *err,
		   size_t errsize);
/** The tenant's session id, with a reference; NULL when there is none (or it is another
 * tenant's: the same answer, no oracle). Marks it active. */
Session *session_get(Agent *a, const char *tenant, const char *id);
void session_put(Session *s);
/** Removes the session: kills what runs in it, deletes its directory when the last reference
 * goes. */
void session_destroy(Session *s);
/** Saves state.json (caller holds s->lock). */
int session_save_locked(Session *s);
/** The ratchet: raises the session's level, lowers its mode and rewrites its policy; kills
 * executions running under the old mode (their sockets are out of our reach). Caller holds
 * s->lock. Returns 1 when the mode dropped. */
int session_raise_level_locked(Session *s, Sensitivity level, const char *cause);
/** The mode a level asks for (the session's default ratchet map). */
NetMode session_mode_for_level(const Session *s, Sensitivity level);
/** A JSON object describing the session for code_sandbox_info (caller holds s->lock). */
json_t *session_info_locked(Session *s);
/** The session's loaded policy (loads it on first use); borrowed while a reference is held. */
const Policy *session_policy(Session *s, char *err, size_t errsize);
/** Whether the session's runs may hold a call for a decision (agent_policy_asks() of its
 * policy as it is now): they then get an --approval-fd (held.c). */
bool session_asks(Session *s);
/** All sessions of tenant, each with a reference, NULL-terminated; NULL on OOM. */
Session **session_list(Agent *a, const char *tenant);

/* exec.c */
typedef struct ExecParams {
	const char *language;
	const char *code;
	const char *stdin_data;
	size_t stdin_len;
	json_t *env; /* object of strings, or NULL */
	uint64_t timeout_s; /* 0: the session's wall limit */
	char *const *argv;  /* code_run_command: run this instead of code (language unused) */
	const char *cwd;    /* virtual working directory, NULL: the policy's */
	char *const *overrides; /* more `-s KEY=VALUE`, after the others (built by the server,
				 * never from arguments: code_install_package's network) */
} ExecParams;
/** Runs code in s. Fills *ret (the structured result) and returns 0; a refusal before
 * anything ran is -EINVAL with err set. */
int exec_run(Session *s, const ExecParams *p, McpCall *call, json_t **ret, char *err,
	     size_t errsize);

/* run-args.c: the command line of every `sbxtrace run` of a session */
/** "process.env.set={ K = "V", … }" for -s, the names checked and the values escaped;
 * NULL with err set for a bad name or a non-string value. */
char *env_override(json_t *env, char *err, size_t errsize);
/** "PREFIX\"VALUE\"" with VALUE as a TOML basic string (for -s overrides); NULL when
 * value is not an absolute path. */
char *toml_string_override(const char *prefix, const char *value);

typedef struct RunArgs {
	int result_fd;	 /* > 2: --result-fd N (output not captured); else --json on stdout */
	int approval_fd; /* > 2: --approval-fd N (held connects, held.c); else none */
	const char *audit_path; /* --audit PATH, or NULL */
	uint64_t wall_s;	/* -s limits.wall_time=Ns; 0: the policy's */
	json_t *env;		/* -s process.env.set={…} (checked, escaped), or NULL */
	const char *cwd;	/* -s process.cwd="…" (an absolute path), or NULL */
	char *const *overrides; /* more -s KEY=VALUE, built by the server, never from arguments */
	char *const *command;	/* after "--" */
} RunArgs;
/** `sbxtrace run -q {--json|--result-fd N} [--approval-fd N] -w SESSION/workspace [--audit P]
 * [-s …] SESSION/policy.toml -- COMMAND` for s, in *ret (owned: strv_free). -EINVAL with the
 * reason for the agent in err (a bad env name, a relative cwd), -ENOMEM. */
int run_argv(const Session *s, const RunArgs *a, char ***ret, char *err, size_t errsize);

/* context.c: stateful interpreters */
/** Runs code in the session's context (language, context_id), made or remade as needed. */
int context_execute(Session *s, const char *context_id, const ExecParams *p, McpCall *call,
		    json_t **ret, char *err, size_t errsize);
/** Drops the contexts of language (NULL: all) named id (NULL: all); returns how many. */
int context_reset(Session *s, const char *language, const char *id);
/** [{language, context_id, alive, executions}] (caller holds s->lock). */
json_t *context_list_locked(Session *s);
/** Kills every context's run (caller holds s->lock): they are remade on the next call. */
void context_kill_all_locked(Session *s);
/** Kills and frees them all (the session's last reference). */
void context_free_all(Session *s);

#define AGENT_SPAWN_FDS_MAX 8
/** Starts exe argv with fds[i] as its descriptor i (n_fds of them, 3 to AGENT_SPAWN_FDS_MAX;
 * every other descriptor closed), from a long-lived thread (PR_SET_PDEATHSIG follows the
 * thread that forked): the pid or -errno. */
pid_t agent_spawn(const char *exe, char *const *argv, const int *fds, size_t n_fds);

/* process.c: background processes */
/** Starts p->argv in the background; *ret {process_id, pid, command}. */
int process_start(Session *s, const ExecParams *p, json_t **ret, char *err, size_t errsize);
/** code_process's actions (list, output, wait, kill, write_stdin) on args. */
int process_action(Session *s, json_t *args, json_t **ret, char *err, size_t errsize);
void process_kill_all_locked(Session *s);
void process_free_all(Session *s);

/* install.c: code_install_package, the tool's handler (userdata: the Agent) */
int install_tool(McpCall *call, json_t *args, void *userdata, json_t **ret);

/* files.c: paths as the sandbox sees them, resolved in the session's view. Errors for the
 * agent in err, return -errno. */
int files_write(Session *s, const char *path, const void *data, size_t len, bool append,
		json_t **ret, char *err, size_t errsize);
int files_read(Session *s, const char *path, size_t max_bytes, void **ret_data, size_t *ret_len,
	       uint64_t *ret_size, char *err, size_t errsize);
int files_list(Session *s, const char *path, bool recursive, size_t max_entries, json_t **ret,
	       char *err, size_t errsize);
/** Removes a directory tree without following any symlink in it. */
int files_remove_tree(int dirfd, const char *name);

/* approval.c */
/**
 * Decides one request read from a run's --approval-fd (req: {"op":"ask",…} of
 * common/approval-wire.h; anything else is not answered: NULL). Asks, in order, through the
 * elicitation of call (a call in flight, borrowed until this returns; NULL: none) when its
 * client takes elicitation, else the approval socket — waiting for a decision, the timeout,
 * or aborted(userdata), which is asked under the approval lock and again after each
 * approval_wake() — else denies with approval_required. A denial or approval_required is
 * appended to notes (an array, may be NULL) for the result. Records approval_request and
 * approval_decision in s's audit log. Returns the answer for the run (owned), NULL on OOM.
 */
json_t *approval_decide_held(Agent *a, Session *s, const json_t *req, McpCall *call,
			     bool (*aborted)(void *), void *userdata, json_t *notes);
/** Makes the requests waiting on the socket ask their aborted() again. */
void approval_wake(Agent *a);
/** Makes t (its handler and userdata already set) ask for approval first, when approval is
 * on (agent_approval_start()). */
void approval_wrap_tool(Agent *a, McpTool *t);

/* held.c: the held connects of one run (network.unlisted = "ask") */
typedef struct HeldRoute HeldRoute;
/** When s's runs hold connects for a decision (the operator's unlisted = "ask", the session
 * in allowlist or loopback mode), a route for one run: *ret_run_fd is the run's end of a
 * socketpair (close-on-exec; becomes its --approval-fd in the spawned child, close ours
 * after), and a thread serves the other. Otherwise 0 with *ret NULL, *ret_run_fd -1. */
int held_route_new(Session *s, HeldRoute **ret, int *ret_run_fd);
/** The call in flight on the run (borrowed until the next set_call), or NULL: requests then
 * go to the approval socket. Setting another waits until no request is being asked through
 * the previous call (bounded by network.ask_timeout). NULL h: nothing. */
void held_route_set_call(HeldRoute *h, McpCall *call);
/** The call in flight was cancelled: what waits on the socket for it is denied (call it from
 * the call's on_cancel, which the route does not take). NULL h: nothing. */
void held_route_cancel(HeldRoute *h);
/** Moves the notes gathered so far (denials, approval_required) to the array notices;
 * returns how many. NULL h: 0. */
size_t held_route_take_notes(HeldRoute *h, json_t *notices);
/** The run ended (or was killed): denies what waits, joins the thread, moves the last notes
 * to notices (may be NULL) and frees h. NULL h is fine; returns NULL. */
HeldRoute *held_route_free(HeldRoute *h, json_t *notices);

/* record.c */
/** Appends one record to the session's audit.jsonl (best effort). */
void record_event(Session *s, const char *kind, json_t *fields);
/** Writes artifacts/executions/<timestamp>_<hash>.json; returns its path inside the session
 * directory (owned) or NULL. */
char *record_execution(Session *s, const ExecParams *p, json_t *result, bool failed);
/** Merges the complete lines of a run's --audit log from *offset on into audit.jsonl
 * (kind "syscall" or "sandbox_<type>"); advances *offset, counts into *imported. */
void record_import_run_log(Session *s, const char *path, uint64_t *offset, uint64_t *imported,
			   const char *execution_id);
/** SESSION/audit-runs/ID.jsonl (the directory made), owned; NULL on failure. */
char *record_run_log_path(Session *s, const char *execution_id);
/** code_audit: the records after since_seq (of kinds, NULL: all), at most limit:
 * {session_id, events, next_seq, has_more}. */
int record_page(Session *s, uint64_t since_seq, size_t limit, char *const *kinds, json_t **ret);
/** Hex SHA-256 of data into out[65] (empty when libnettle cannot be loaded; a server has
 * loaded it before it started, agent_new()). */
void record_sha256(const void *data, size_t len, char out[65]);

/* agent/nettle.c: libnettle, opened on first use (not linked: issue 20, the start of run) */
#define AGENT_SHA256_SIZE 32
/** Loads libnettle once; 0, or -ELIBACC/-ELIBBAD (logged). */
int agent_nettle_load(void);
/** SHA-256 of data; 0 or the load's error. */
int agent_sha256(const void *data, size_t len, uint8_t ret[static AGENT_SHA256_SIZE]);
/** Base64 (RFC 4648, padded) of data, NUL-terminated, owned; NULL on failure. */
char *agent_base64_encode(const void *data, size_t len);
/** Decodes base64 into *ret (owned) and *ret_len; -EINVAL when not base64. */
int agent_base64_decode(const char *in, size_t len, uint8_t **ret, size_t *ret_len);
