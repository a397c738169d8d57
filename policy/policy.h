/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The policy model: what a loaded, validated, variable-expanded policy says. Immutable once
 * loaded; shared read-only by the supervisor's threads. docs/policy.md documents every key.
 */

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/sensitivity.h" /* Sensitivity: also the handler interface's */

typedef enum MountMode {
	MOUNT_RO,
	MOUNT_RW,
	MOUNT_TMP, /* private scratch directory made for the run, removed after unless keep */
	_MOUNT_MODE_MAX,
	_MOUNT_MODE_INVALID = -EINVAL,
} MountMode;

typedef struct PolicyMount {
	char *path;   /* absolute, normalized virtual path ("/workspace") */
	char *source; /* absolute host path; NULL for MOUNT_TMP (the supervisor makes one) */
	MountMode mode;
	bool keep;     /* MOUNT_TMP: keep the directory after the run */
	unsigned line; /* where it was defined (0: preset/override) */
} PolicyMount;

typedef enum RuleAccess {
	RULE_ACCESS_UNSET, /* the rule only sets a sensitivity level */
	RULE_ACCESS_HIDE,  /* ENOENT, absent from directory listings */
	RULE_ACCESS_DENY,  /* EACCES */
	RULE_ACCESS_RO,
	RULE_ACCESS_RW,
	/* held for a human's decision (issue 17; docs/policy.md "[[rule]]"): "ask" holds every
	 * open of a matching path, "ask-write" the opens for writing (and creates); otherwise
	 * both are "ro" */
	RULE_ACCESS_ASK,
	RULE_ACCESS_ASK_WRITE,
	_RULE_ACCESS_MAX,
	_RULE_ACCESS_INVALID = -EINVAL,
} RuleAccess;

typedef struct PolicyRule {
	char *glob; /* virtual path glob: '*' within a component, '**' across, '?', [set] */
	RuleAccess access;
	Sensitivity level;
	uint64_t ask_timeout_ms; /* "ask", "ask-write": no decision within it denies (30 s) */
	unsigned line;
} PolicyRule;

typedef enum NetMode {
	NET_MODE_NONE,
	NET_MODE_LOOPBACK,
	NET_MODE_ALLOWLIST,
	NET_MODE_FULL,
	_NET_MODE_MAX,
	_NET_MODE_INVALID = -EINVAL,
} NetMode;

typedef enum NetAllowKind {
	NET_ALLOW_CIDR,	  /* address/prefix */
	NET_ALLOW_HOST,	  /* exact host name */
	NET_ALLOW_DOMAIN, /* "*.example.com": any name below example.com (not example.com) */
	_NET_ALLOW_KIND_MAX,
	_NET_ALLOW_KIND_INVALID = -EINVAL,
} NetAllowKind;

typedef struct PolicyNetAllow {
	char *text; /* as written */
	NetAllowKind kind;
	int family; /* AF_INET or AF_INET6 for CIDR */
	uint8_t addr[16];
	unsigned prefix;
	char *name;		   /* HOST/DOMAIN: lower-case name without the "*." */
	uint16_t port_lo, port_hi; /* 0-65535 when no port given */
} PolicyNetAllow;

typedef struct PolicyNetwork {
	NetMode mode;
	PolicyNetAllow *allow;
	size_t n_allow;
	char **dns; /* upstream resolvers ("1.1.1.1", "[::1]:5353"); NULL: /etc/resolv.conf */
	char **unix_sockets; /* allowed AF_UNIX: virtual paths, or "@name" for abstract */
	NetMode ratchet[_SENSITIVITY_MAX]; /* mode to drop to when a path of that level is opened;
					    * [SENSITIVITY_NONE] is unused */
	bool has_ratchet[_SENSITIVITY_MAX];
	int connect_errno; /* default ECONNREFUSED */
	int socket_errno;  /* default EACCES */
	int unshare_netns; /* -1 auto, 0 no, 1 yes */
	bool ask_unlisted; /* unlisted = "ask": hold a connect or send outside the allowlist
			    * for a human's decision (docs/network.md, "Held connects and sends") */
	uint64_t ask_timeout_ms; /* no decision within it denies; default 30 s */
} PolicyNetwork;

#define LIMIT_UNSET UINT64_MAX

typedef struct PolicyLimits {
	/* LIMIT_UNSET means no limit */
	uint64_t wall_time_ms;
	uint64_t cpu_time_ms;
	uint64_t memory;	/* bytes */
	uint64_t tasks;		/* processes + threads alive at once */
	uint64_t file_size;	/* bytes */
	uint64_t open_files;	/* per process */
	uint64_t disk;		/* bytes written into rw/tmp mounts */
	uint64_t output;	/* bytes of captured stdout+stderr */
	uint64_t kill_grace_ms; /* between SIGTERM and SIGKILL; always set (default 2000) */
	uint64_t cpus;		/* CPUs the tree may run on at once (affinity); added for the
				 * presets' "one CPU" */
} PolicyLimits;

typedef enum SyscallAction {
	SYSCALL_ACTION_ALLOW,
	SYSCALL_ACTION_DENY,
	SYSCALL_ACTION_KILL,
	SYSCALL_ACTION_LOG, /* allowed, and always written to the audit log */
	_SYSCALL_ACTION_MAX,
	_SYSCALL_ACTION_INVALID = -EINVAL,
} SyscallAction;

typedef struct PolicySyscall {
	char *name; /* a syscall name known to libseccomp (groups are expanded on load) */
	SyscallAction action;
	int error; /* DENY: positive errno */
	unsigned line;
} PolicySyscall;

typedef enum TriState {
	TRI_AUTO = -1,
	TRI_OFF = 0,
	TRI_ON = 1,
} TriState;

typedef enum PtraceMode {
	PTRACE_MODE_AUTO,
	PTRACE_MODE_ALWAYS,
	PTRACE_MODE_NEVER,
	_PTRACE_MODE_MAX,
	_PTRACE_MODE_INVALID = -EINVAL,
} PtraceMode;

typedef enum AuditEvent {
	AUDIT_EVENT_FILE = 1 << 0,
	AUDIT_EVENT_EXEC = 1 << 1,
	AUDIT_EVENT_NETWORK = 1 << 2,
	AUDIT_EVENT_PROCESS = 1 << 3,
	AUDIT_EVENT_SIGNAL = 1 << 4,
	AUDIT_EVENT_BUDGET = 1 << 5,
	AUDIT_EVENT_RATCHET = 1 << 6,
	AUDIT_EVENT_DENIED = 1 << 7,  /* every denial, whatever its kind */
	AUDIT_EVENT_SYSCALL = 1 << 8, /* every other interposed syscall */
	AUDIT_EVENT_ALL = (1 << 9) - 1,
} AuditEvent;

typedef enum AuditSelect {
	AUDIT_SELECT_NONE,
	AUDIT_SELECT_DENIED,
	AUDIT_SELECT_ALL,
	AUDIT_SELECT_LIST, /* the syscalls named in the list */
	_AUDIT_SELECT_MAX,
	_AUDIT_SELECT_INVALID = -EINVAL,
} AuditSelect;

typedef struct PolicyAudit {
	char *log;	 /* host path of the JSON Lines log, NULL: none */
	unsigned events; /* AuditEvent mask */
	AuditSelect backtrace;
	char **backtrace_syscalls;
	unsigned backtrace_depth; /* default 16 */
	AuditSelect disassembly;
	char **disassembly_syscalls;
	bool trace; /* strace-like lines on stderr */
} PolicyAudit;

typedef struct PolicyProcess {
	char *cwd;	 /* virtual working directory; NULL: first rw mount, else "/" */
	char **env_keep; /* names of host variables passed through ("*" globs allowed) */
	char **env_set;	 /* "NAME=value" entries, applied after env_keep */
	bool tty;	 /* the controlling terminal (and /dev/tty) is usable inside */
	bool pty;	 /* /dev/ptmx: the tree may create pseudo-terminals (and open their pts) */
} PolicyProcess;

typedef struct Policy {
	char *path; /* file it was loaded from, or "preset:NAME" */
	char *name; /* [sandbox] name or the preset's name */
	char *description;
	char **extends; /* presets/files it was built on, in order (for check output) */
	/* ${WORKSPACE} was expanded somewhere in it (extends and overrides included) */
	bool uses_workspace;

	PolicyMount *mounts;
	size_t n_mounts;
	PolicyRule *rules;
	size_t n_rules;

	char **exec_allow; /* virtual path globs; NULL: everything visible may run */
	char **exec_deny;
	bool exec_ask_unlisted;	      /* exec.unlisted = "ask": hold an exec outside exec.allow
				       * for a human's decision (docs/policy.md "[exec]") */
	uint64_t exec_ask_timeout_ms; /* no decision within it denies; default 30 s */

	PolicyNetwork network;
	PolicyLimits limits;

	PolicySyscall *syscalls;
	size_t n_syscalls;
	int deny_errno; /* errno of the built-in denied set; default EPERM */

	PtraceMode ptrace;
	TriState landlock;
	TriState kernel_view; /* the view in a user+mount namespace (docs/filesystem.md) */

	PolicyAudit audit;
	PolicyProcess process;
} Policy;

/* Variables expanded in paths: ${WORKSPACE}, ${HOME}, ${PWD}, ${RUNTIME_DIR}. */
typedef struct PolicyVars {
	const char *workspace; /* -w/--workspace; NULL: ${WORKSPACE} is an error if used
				* (Policy.uses_workspace tells the caller whether it was) */
	const char *home;
	const char *pwd;
	const char *runtime_dir;
} PolicyVars;

typedef struct PolicyError {
	char file[256]; /* policy file (or "preset:NAME", "-s override") */
	unsigned line, column;
	char key[128];	   /* dotted key, "" if none */
	char message[512]; /* one line */
} PolicyError;

/**
 * Loads a policy: name is a path (contains '/' or ends in .toml) or a preset name. Presets
 * are searched in $SBXTRACE_PRESET_DIR, the source tree's policies/ and the installed
 * preset directory. overrides are "dotted.key=value" strings applied last (value parsed as a
 * TOML value; if that fails, taken as a string). Returns 0, -EINVAL with *reterr filled for a
 * bad policy, -ENOENT (also filled) when the file or preset does not exist, -ENOMEM.
 */
int policy_load(const char *name, const PolicyVars *vars, char *const *overrides,
		Policy **ret_policy, PolicyError *reterr);

/**
 * Same as policy_load() for a policy held in memory (len bytes of text). label names it in
 * errors and in Policy.path; relative paths in it start at vars->pwd (or the current
 * directory). For tests, fuzzers, and programs that generate policies.
 */
int policy_load_string(const char *text, size_t len, const char *label, const PolicyVars *vars,
		       char *const *overrides, Policy **ret_policy, PolicyError *reterr);

Policy *policy_free(Policy *p);
static inline void policy_freep(Policy **p)
{
	if (*p)
		(void) policy_free(*p);
}

/** Writes s as a TOML basic string (quotes included). path: for keys whose ${VAR}s are
 * expanded (mount sources, cwd…), '$' is doubled so that it reads back as itself. For
 * programs that generate policies: never paste a string into TOML by hand. */
void policy_write_string(FILE *out, const char *s, bool path);

/** Writes the effective policy as TOML that itself loads to the same policy. */
int policy_write_toml(const Policy *p, FILE *out);

/** Formats an error as "file:line:column: key: message" into buf. */
const char *policy_error_format(const PolicyError *e, char *buf, size_t size);

/** Names for enums ("ro", "allowlist", …), and parsers returning the enum or -EINVAL. */
const char *mount_mode_to_string(MountMode m);
const char *net_mode_to_string(NetMode m);
NetMode net_mode_from_string(const char *s);
const char *sensitivity_to_string(Sensitivity s);
const char *rule_access_to_string(RuleAccess a);
const char *syscall_action_to_string(SyscallAction a);
const char *ptrace_mode_to_string(PtraceMode m);

/** Size ("512MiB", "1G", 4096) and duration ("30s", "1.5m", "250ms") parsing. */
int policy_parse_size(const char *s, uint64_t *ret_bytes);
int policy_parse_duration_ms(const char *s, uint64_t *ret_ms);

/** Glob match of a virtual path ('*' stops at '/', '**' is zero or more components). */
bool policy_glob_match(const char *glob, const char *path);

/**
 * The rules for a virtual path. A rule whose glob matches the path or one of its parent
 * directories applies. "hide" wins over "deny", which wins over "ro"/"rw"; among "ro"/"rw"
 * rules, the one matching the deepest directory wins (at equal depth the later rule). The
 * level is the highest of all applying rules. RULE_ACCESS_UNSET / SENSITIVITY_NONE if no rule
 * applies; "rw" never makes a read-only mount writable (the caller takes the stricter of the
 * two). Either output may be NULL.
 */
void policy_rule_lookup(const Policy *p, const char *path, RuleAccess *ret_access,
			Sensitivity *ret_level);

/** As policy_rule_lookup(); *ret_rule (may be NULL) is the rule whose access applies, NULL
 * when none does or when hide/deny (of possibly several rules) decided. */
void policy_rule_lookup_rule(const Policy *p, const char *path, RuleAccess *ret_access,
			     Sensitivity *ret_level, const PolicyRule **ret_rule);

/** Whether exec of a virtual path is allowed: no exec.deny glob matches, and exec.allow is
 * unset or one of its globs matches. */
bool policy_exec_allowed(const Policy *p, const char *path);

/** Whether an exec of a virtual path that policy_exec_allowed() refuses may be asked about
 * (exec.unlisted = "ask"): only one that no exec.deny glob matches, refused because
 * exec.allow lists it nowhere. */
bool policy_exec_askable(const Policy *p, const char *path);

/** The [syscalls] entry for a syscall name, or NULL (the built-in defaults apply). */
const PolicySyscall *policy_syscall_find(const Policy *p, const char *name);

/** Directory list where presets are looked up ($SBXTRACE_PRESET_DIR, the source tree's
 * policies/, the installed directory), NULL-terminated, static storage rewritten by each call:
 * not thread-safe, call it while loading only. */
const char *const *policy_preset_dirs(void);
