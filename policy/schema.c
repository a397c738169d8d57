/* SPDX-License-Identifier: MIT */
/*
 * The key tables of the policy language (schema.h says who reads them). A key of a regular
 * type is added by one row here, its field in policy.h (with its default in policy_new() when
 * that is not zero) and its line in docs/policy.md and man/sbxtrace-policy.5.scd, which
 * test-policy-schema checks. The order of the rows is the order `check` writes the keys in;
 * it also breaks ties between equally near suggestions, so keep a new key at the end.
 */
#include "policy/schema.h"

#include <assert.h>
#include <string.h>

#include "common/macros.h"
#include "common/util.h"
#include "policy/internal.h"
#include "policy/policy.h"

/* ----- enum names ----------------------------------------------------------------------- */

const char *const policy_mount_mode_names[_MOUNT_MODE_MAX] = {
	[MOUNT_RO] = "ro",
	[MOUNT_RW] = "rw",
	[MOUNT_TMP] = "tmp",
};
const char *const policy_rule_access_names[_RULE_ACCESS_MAX] = {
	[RULE_ACCESS_UNSET] = "unset",
	[RULE_ACCESS_HIDE] = "hide",
	[RULE_ACCESS_DENY] = "deny",
	[RULE_ACCESS_RO] = "ro",
	[RULE_ACCESS_RW] = "rw",
	[RULE_ACCESS_ASK] = "ask",
	[RULE_ACCESS_ASK_WRITE] = "ask-write",
};
const char *const policy_sensitivity_names[_SENSITIVITY_MAX] = {
	[SENSITIVITY_NONE] = "none",
	[SENSITIVITY_INTERNAL] = "internal",
	[SENSITIVITY_CONFIDENTIAL] = "confidential",
	[SENSITIVITY_SECRET] = "secret",
};
const char *const policy_net_mode_names[_NET_MODE_MAX] = {
	[NET_MODE_NONE] = "none",
	[NET_MODE_LOOPBACK] = "loopback",
	[NET_MODE_ALLOWLIST] = "allowlist",
	[NET_MODE_FULL] = "full",
};
const char *const policy_syscall_action_names[_SYSCALL_ACTION_MAX] = {
	[SYSCALL_ACTION_ALLOW] = "allow",
	[SYSCALL_ACTION_DENY] = "deny",
	[SYSCALL_ACTION_KILL] = "kill",
	[SYSCALL_ACTION_LOG] = "log",
};
const char *const policy_ptrace_mode_names[_PTRACE_MODE_MAX] = {
	[PTRACE_MODE_AUTO] = "auto",
	[PTRACE_MODE_ALWAYS] = "always",
	[PTRACE_MODE_NEVER] = "never",
};
const char *const policy_audit_select_names[_AUDIT_SELECT_MAX] = {
	[AUDIT_SELECT_NONE] = "none",
	[AUDIT_SELECT_DENIED] = "denied",
	[AUDIT_SELECT_ALL] = "all",
	[AUDIT_SELECT_LIST] = "list",
};
const char *const policy_audit_event_names[POLICY_AUDIT_EVENTS] = {
	"file", "exec", "network", "process", "signal", "budget", "ratchet", "denied", "syscall",
};
/* exec.unlisted, network.unlisted: stored as a bool, "ask" = true */
static const char *const unlisted_names[] = {"deny", "ask"};

/* ----- the tables ----------------------------------------------------------------------- */

#define FIELD(f) offsetof(Policy, f)
#define CUSTOM	 .type = SCHEMA_CUSTOM, .offset = SCHEMA_NO_FIELD, .write = SCHEMA_WRITE_CUSTOM

static const SchemaKey top_keys[] = {
	{"extends", CUSTOM, .merge = SCHEMA_MERGE_BASE,
	 .doc = "presets or files this policy is built on, applied first",
	 .example = "extends = \"permissive\""},
	{"sandbox", CUSTOM, .merge = SCHEMA_MERGE_BY_KEY, .doc = "the [sandbox] section",
	 .example = "[sandbox]\nname = \"ex\""},
	{"mount", CUSTOM, .merge = SCHEMA_MERGE_BY_PATH, .doc = "the [[mount]] entries",
	 .example = "[[mount]]\npath = \"/ex\"\nmode = \"tmp\""},
	{"rule", CUSTOM, .merge = SCHEMA_MERGE_APPEND, .doc = "the [[rule]] entries",
	 .example = "[[rule]]\npath = \"/ex\"\naccess = \"hide\""},
	{"process", CUSTOM, .merge = SCHEMA_MERGE_BY_KEY, .doc = "the [process] section",
	 .example = "[process]\ntty = true"},
	{"exec", CUSTOM, .merge = SCHEMA_MERGE_BY_KEY, .doc = "the [exec] section",
	 .example = "[exec]\ndeny = [\"/ex\"]"},
	{"network", CUSTOM, .merge = SCHEMA_MERGE_BY_KEY, .doc = "the [network] section",
	 .example = "[network]\nmode = \"loopback\""},
	{"limits", CUSTOM, .merge = SCHEMA_MERGE_BY_KEY, .doc = "the [limits] section",
	 .example = "[limits]\ntasks = 5"},
	{"syscalls", CUSTOM, .merge = SCHEMA_MERGE_BY_KEY, .doc = "the [syscalls] section",
	 .example = "[syscalls]\nkill = [\"uname\"]"},
	{"tracer", CUSTOM, .merge = SCHEMA_MERGE_BY_KEY, .doc = "the [tracer] section",
	 .example = "[tracer]\nptrace = \"always\""},
	{"audit", CUSTOM, .merge = SCHEMA_MERGE_BY_KEY, .doc = "the [audit] section",
	 .example = "[audit]\ntrace = true"},
};

static const SchemaKey sandbox_keys[] = {
	{"name", SCHEMA_STRING, FIELD(name), SCHEMA_MERGE_TOP_ONLY, SCHEMA_WRITE_ALWAYS,
	 SCHEMA_F_NONEMPTY, "shown in the audit log and check output", "name = \"ex\"",
	 .unset = "policy"},
	{"description", SCHEMA_STRING, FIELD(description), SCHEMA_MERGE_TOP_ONLY,
	 SCHEMA_WRITE_IF_SET, 0, "one line for humans", "description = \"an example\""},
};

/* [[mount]]: fields of the PolicyMount being built; apply_one_mount() resolves the source and
 * checks the whole entry */
#define MOUNT(f) offsetof(PolicyMount, f)
static const SchemaKey mount_keys[] = {
	{"path", SCHEMA_VPATH, MOUNT(path), SCHEMA_MERGE_BY_PATH, SCHEMA_WRITE_ALWAYS, 0,
	 "where the program sees it", "path = \"/usr\""},
	{"source", CUSTOM, .doc = "the host directory or file behind it",
	 .example = "path = \"/ex\"\nsource = \"/usr\""},
	{"mode", SCHEMA_ENUM, MOUNT(mode), SCHEMA_MERGE_BY_PATH, SCHEMA_WRITE_ALWAYS, 0,
	 "ro, rw, or tmp (a private scratch directory)", "path = \"/ex\"\nmode = \"tmp\"",
	 .names = policy_mount_mode_names, .n = _MOUNT_MODE_MAX},
	{"keep", SCHEMA_BOOL, MOUNT(keep), SCHEMA_MERGE_BY_PATH, SCHEMA_WRITE_CUSTOM, 0,
	 "tmp only: keep the scratch directory after the run",
	 "path = \"/ex\"\nmode = \"tmp\"\nkeep = true"},
	{"optional", .type = SCHEMA_CUSTOM, .offset = SCHEMA_NO_FIELD, .write = SCHEMA_WRITE_NEVER,
	 .doc = "skip the mount when its source does not exist",
	 .example = "path = \"/nonexistent-ex\"\noptional = true"},
};
#undef MOUNT

/* [[rule]]: fields of the PolicyRule being built; apply_one_rule() checks the whole entry */
#define RULE(f) offsetof(PolicyRule, f)
static const SchemaKey rule_keys[] = {
	{"path", SCHEMA_GLOB, RULE(glob), SCHEMA_MERGE_APPEND, SCHEMA_WRITE_ALWAYS, 0,
	 "a glob over virtual paths", "path = \"/ex/**\"\nlevel = \"secret\""},
	{"access", SCHEMA_ENUM, RULE(access), SCHEMA_MERGE_APPEND, SCHEMA_WRITE_IF_NONZERO, 0,
	 "hide, deny, ro, rw, ask or ask-write", "path = \"/ex\"\naccess = \"deny\"",
	 .names = policy_rule_access_names, .first = RULE_ACCESS_HIDE, .n = _RULE_ACCESS_MAX},
	{"level", SCHEMA_ENUM, RULE(level), SCHEMA_MERGE_APPEND, SCHEMA_WRITE_IF_NONZERO, 0,
	 "sensitivity: internal, confidential or secret", "path = \"/ex\"\nlevel = \"internal\"",
	 .names = policy_sensitivity_names, .first = SENSITIVITY_INTERNAL, .n = _SENSITIVITY_MAX},
	{"ask_timeout", SCHEMA_TIMEOUT, RULE(ask_timeout_ms), SCHEMA_MERGE_APPEND,
	 SCHEMA_WRITE_CUSTOM, 0, "ask, ask-write: no decision within it denies",
	 "path = \"/ex\"\naccess = \"ask\"\nask_timeout = \"45s\""},
};
#undef RULE

static const SchemaKey process_keys[] = {
	{"cwd", SCHEMA_VPATH, FIELD(process.cwd), SCHEMA_MERGE_REPLACE, SCHEMA_WRITE_IF_SET,
	 SCHEMA_F_WHERE, "the virtual working directory; must be inside a mount",
	 "cwd = \"/base\""},
	{"env", CUSTOM, .flags = SCHEMA_F_WRITE_LAST, .doc = "the environment: keep and set",
	 .example = "env = { keep = [\"LANG\"] }"},
	{"tty", SCHEMA_BOOL, FIELD(process.tty), SCHEMA_MERGE_REPLACE, SCHEMA_WRITE_ALWAYS, 0,
	 "the terminal is usable inside", "tty = true"},
	{"pty", SCHEMA_BOOL, FIELD(process.pty), SCHEMA_MERGE_REPLACE, SCHEMA_WRITE_ALWAYS, 0,
	 "the tree may create pseudo-terminals", "pty = true"},
};

static const SchemaKey process_env_keys[] = {
	{"keep", SCHEMA_STRV, FIELD(process.env_keep), SCHEMA_MERGE_REPLACE, SCHEMA_WRITE_CUSTOM, 0,
	 "host variables passed through (globs allowed)", "keep = [\"LANG\", \"LC_*\"]",
	 .item = SCHEMA_ITEM_ENV_NAME},
	{"set", CUSTOM, .merge = SCHEMA_MERGE_BY_NAME, .doc = "variables set inside, after keep",
	 .example = "set = { A = \"1\" }"},
};

static const SchemaKey exec_keys[] = {
	{"allow", SCHEMA_STRV, FIELD(exec_allow), SCHEMA_MERGE_REPLACE, SCHEMA_WRITE_IF_SET, 0,
	 "only programs matching one of these globs may run", "allow = [\"/usr/bin/*\"]",
	 .item = SCHEMA_ITEM_GLOB},
	{"deny", SCHEMA_STRV, FIELD(exec_deny), SCHEMA_MERGE_REPLACE, SCHEMA_WRITE_IF_SET, 0,
	 "programs matching one of these globs never run", "deny = [\"/usr/bin/sudo\"]",
	 .item = SCHEMA_ITEM_GLOB},
	{"unlisted", SCHEMA_ENUM, FIELD(exec_ask_unlisted), SCHEMA_MERGE_REPLACE,
	 SCHEMA_WRITE_IF_NONZERO, SCHEMA_F_BOOL_FIELD | SCHEMA_F_WHERE,
	 "deny or ask: what an exec allow does not list gets",
	 "allow = [\"/usr/bin/*\"]\nunlisted = \"ask\"", .names = unlisted_names, .n = 2},
	{"ask_timeout", SCHEMA_TIMEOUT, FIELD(exec_ask_timeout_ms), SCHEMA_MERGE_REPLACE,
	 SCHEMA_WRITE_ASK_TIMEOUT, 0, "no decision within it denies the exec",
	 "ask_timeout = \"45s\"", .offset2 = FIELD(exec_ask_unlisted)},
};

/* unlisted and ask_timeout come before the errnos here, as `check` writes them; that cannot
 * change a suggestion (the two pairs are too far apart for any name to be as near both) */
static const SchemaKey network_keys[] = {
	{"mode", SCHEMA_ENUM, FIELD(network.mode), SCHEMA_MERGE_REPLACE, SCHEMA_WRITE_ALWAYS,
	 SCHEMA_F_WHERE, "none, loopback, allowlist or full", "mode = \"full\"",
	 .names = policy_net_mode_names, .n = _NET_MODE_MAX},
	{"allow", CUSTOM, .doc = "with allowlist: where connections may go",
	 .example = "allow = [\"192.0.2.0/24:443\", \"example.com\"]"},
	{"dns", SCHEMA_STRV, FIELD(network.dns), SCHEMA_MERGE_REPLACE, SCHEMA_WRITE_IF_SET, 0,
	 "upstream resolvers for the DNS stub", "dns = [\"192.0.2.53\"]", .item = SCHEMA_ITEM_DNS},
	{"unix", SCHEMA_STRV, FIELD(network.unix_sockets), SCHEMA_MERGE_REPLACE,
	 SCHEMA_WRITE_IF_SET, 0, "AF_UNIX sockets that may be reached",
	 "unix = [\"/run/ex.sock\", \"@ex\"]", .item = SCHEMA_ITEM_UNIX},
	{"ratchet", CUSTOM, .merge = SCHEMA_MERGE_BY_NAME,
	 .doc = "per sensitivity level, the mode to drop to",
	 .example = "ratchet = { internal = \"loopback\" }"},
	{"unshare", SCHEMA_TRISTATE, FIELD(network.unshare_netns), SCHEMA_MERGE_REPLACE,
	 SCHEMA_WRITE_ALWAYS, SCHEMA_F_WHERE,
	 "with mode none: a private network namespace; true with loopback: one with lo only",
	 "unshare = \"auto\""},
	{"unlisted", SCHEMA_ENUM, FIELD(network.ask_unlisted), SCHEMA_MERGE_REPLACE,
	 SCHEMA_WRITE_ALWAYS, SCHEMA_F_BOOL_FIELD,
	 "deny or ask: what a destination outside the allowlist gets", "unlisted = \"ask\"",
	 .names = unlisted_names, .n = 2},
	{"ask_timeout", SCHEMA_TIMEOUT, FIELD(network.ask_timeout_ms), SCHEMA_MERGE_REPLACE,
	 SCHEMA_WRITE_ASK_TIMEOUT, 0, "no decision within it denies", "ask_timeout = \"2m\"",
	 .offset2 = FIELD(network.ask_unlisted)},
	{"connect_errno", SCHEMA_ERRNO, FIELD(network.connect_errno), SCHEMA_MERGE_REPLACE,
	 SCHEMA_WRITE_ALWAYS, 0, "the errno of a denied connect or sendto",
	 "connect_errno = \"EPERM\""},
	{"socket_errno", SCHEMA_ERRNO, FIELD(network.socket_errno), SCHEMA_MERGE_REPLACE,
	 SCHEMA_WRITE_ALWAYS, 0, "the errno of a denied socket", "socket_errno = \"ENOSYS\""},
};

static const SchemaKey network_ratchet_keys[] = {
	{"internal", CUSTOM, .merge = SCHEMA_MERGE_BY_NAME,
	 .doc = "the mode once an internal path is opened", .example = "internal = \"none\""},
	{"confidential", CUSTOM, .merge = SCHEMA_MERGE_BY_NAME,
	 .doc = "the mode once a confidential path is opened",
	 .example = "confidential = \"full\""},
	{"secret", CUSTOM, .merge = SCHEMA_MERGE_BY_NAME,
	 .doc = "the mode once a secret path is opened", .example = "secret = \"loopback\""},
};

#define LIMIT(n, t, f, m, fl, d, ex)                                                               \
	{                                                                                          \
		n, t, FIELD(limits.f), SCHEMA_MERGE_REPLACE, SCHEMA_WRITE_IF_SET, fl, d, ex,       \
			.max = (m)                                                                 \
	}
static const SchemaKey limits_keys[] = {
	LIMIT("wall_time", SCHEMA_DURATION, wall_time_ms, POLICY_DURATION_MAX_MS, 0,
	      "wall-clock time of the run", "wall_time = \"90s\""),
	LIMIT("cpu_time", SCHEMA_DURATION, cpu_time_ms, POLICY_DURATION_MAX_MS, 0,
	      "CPU time of the whole tree", "cpu_time = \"1.5m\""),
	LIMIT("memory", SCHEMA_SIZE, memory, POLICY_SIZE_MAX, 0, "memory of the whole tree",
	      "memory = \"64MiB\""),
	LIMIT("tasks", SCHEMA_COUNT, tasks, POLICY_TASKS_MAX, 0,
	      "processes and threads alive at once", "tasks = 5"),
	LIMIT("file_size", SCHEMA_SIZE, file_size, POLICY_SIZE_MAX, 0,
	      "largest file the program may write", "file_size = 4096"),
	LIMIT("open_files", SCHEMA_COUNT, open_files, POLICY_OPEN_FILES_MAX, 0,
	      "open files per process", "open_files = 100"),
	LIMIT("disk", SCHEMA_SIZE, disk, POLICY_SIZE_MAX, 0, "bytes written into rw and tmp mounts",
	      "disk = \"2GiB\""),
	LIMIT("output", SCHEMA_SIZE, output, POLICY_SIZE_MAX, 0,
	      "bytes of captured stdout and stderr", "output = \"1MiB\""),
	LIMIT("cpus", SCHEMA_COUNT, cpus, POLICY_CPUS_MAX, 0, "CPUs the tree may run on at once",
	      "cpus = 1"),
	LIMIT("kill_grace", SCHEMA_DURATION, kill_grace_ms, POLICY_KILL_GRACE_MAX_MS,
	      SCHEMA_F_NO_UNLIMITED | SCHEMA_F_ZERO_OK,
	      "between SIGTERM and SIGKILL when a budget is exceeded", "kill_grace = 0"),
};
#undef LIMIT

static const SchemaKey syscalls_keys[] = {
	{"errno", SCHEMA_ERRNO, FIELD(deny_errno), SCHEMA_MERGE_REPLACE, SCHEMA_WRITE_ALWAYS, 0,
	 "the errno of the built-in denied set and of deny entries without one",
	 "errno = \"EACCES\""},
	{"allow", CUSTOM, .merge = SCHEMA_MERGE_BY_SYSCALL, .doc = "let these run in the kernel",
	 .example = "allow = [\"@keyring\"]"},
	{"deny", CUSTOM, .merge = SCHEMA_MERGE_BY_SYSCALL,
	 .doc = "fail these; name:ERRNO picks the errno",
	 .example = "deny = [\"uname:ENOSYS\", \"getpid\"]"},
	{"kill", CUSTOM, .merge = SCHEMA_MERGE_BY_SYSCALL,
	 .doc = "kill the sandbox when one is attempted", .example = "kill = [\"reboot\"]"},
	{"log", CUSTOM, .merge = SCHEMA_MERGE_BY_SYSCALL,
	 .doc = "allow, and always write an audit record", .example = "log = [\"getpid\"]"},
};

static const SchemaKey tracer_keys[] = {
	{"ptrace", SCHEMA_ENUM, FIELD(ptrace), SCHEMA_MERGE_REPLACE, SCHEMA_WRITE_ALWAYS, 0,
	 "auto, always or never", "ptrace = \"always\"", .names = policy_ptrace_mode_names,
	 .n = _PTRACE_MODE_MAX},
	{"landlock", SCHEMA_TRISTATE, FIELD(landlock), SCHEMA_MERGE_REPLACE, SCHEMA_WRITE_ALWAYS, 0,
	 "a Landlock ruleset as a second layer", "landlock = false"},
	{"kernel_view", SCHEMA_TRISTATE, FIELD(kernel_view), SCHEMA_MERGE_REPLACE,
	 SCHEMA_WRITE_ALWAYS, 0, "the file-system view in a user and mount namespace",
	 "kernel_view = true"},
};

static const SchemaKey audit_keys[] = {
	{"log", SCHEMA_HPATH, FIELD(audit.log), SCHEMA_MERGE_REPLACE, SCHEMA_WRITE_IF_SET, 0,
	 "host path of the JSON Lines audit log", "log = \"/tmp/ex.jsonl\""},
	{"events", SCHEMA_EVENTS, FIELD(audit.events), SCHEMA_MERGE_REPLACE, SCHEMA_WRITE_ALWAYS, 0,
	 "kinds of events to record", "events = [\"file\", \"denied\"]"},
	{"backtrace", SCHEMA_SELECT, FIELD(audit.backtrace), SCHEMA_MERGE_REPLACE,
	 SCHEMA_WRITE_ALWAYS, 0, "which events get a symbolized backtrace",
	 "backtrace = [\"openat\"]", .offset2 = FIELD(audit.backtrace_syscalls)},
	{"backtrace_depth", SCHEMA_UINT, FIELD(audit.backtrace_depth), SCHEMA_MERGE_REPLACE,
	 SCHEMA_WRITE_ALWAYS, 0, "frames per backtrace", "backtrace_depth = 32", .min = 1,
	 .max = POLICY_BACKTRACE_DEPTH_MAX},
	{"disassembly", SCHEMA_SELECT, FIELD(audit.disassembly), SCHEMA_MERGE_REPLACE,
	 SCHEMA_WRITE_ALWAYS, 0, "which events get the disassembly around the syscall",
	 "disassembly = \"denied\"", .offset2 = FIELD(audit.disassembly_syscalls)},
	{"trace", SCHEMA_BOOL, FIELD(audit.trace), SCHEMA_MERGE_REPLACE, SCHEMA_WRITE_ALWAYS, 0,
	 "a strace-like line per event on stderr", "trace = true"},
};

#define SECTION(n, k, ...)                                                                         \
	{                                                                                          \
		.name = n, .keys = k, .n_keys = ARRAY_SIZE(k), __VA_ARGS__                         \
	}
static const SchemaSection sections[] = {
	SECTION("", top_keys),
	SECTION("sandbox", sandbox_keys),
	SECTION("mount", mount_keys, .array = true),
	SECTION("rule", rule_keys, .array = true),
	SECTION("process", process_keys),
	SECTION("process.env", process_env_keys),
	SECTION("exec", exec_keys, .write_if_any = true),
	SECTION("network", network_keys),
	SECTION("network.ratchet", network_ratchet_keys),
	SECTION("limits", limits_keys),
	SECTION("syscalls", syscalls_keys),
	SECTION("tracer", tracer_keys),
	SECTION("audit", audit_keys),
};

const SchemaSection *policy_schema_sections(size_t *ret_n)
{
	*ret_n = ARRAY_SIZE(sections);
	return sections;
}

const SchemaSection *policy_schema_section(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(sections); i++)
		if (streq(sections[i].name, name))
			return &sections[i];
	return NULL;
}

const SchemaKey *policy_schema_key(const SchemaSection *s, const char *name)
{
	for (size_t i = 0; i < s->n_keys; i++)
		if (streq(s->keys[i].name, name))
			return &s->keys[i];
	return NULL;
}

void policy_schema_key_names(const SchemaSection *s, const char **ret)
{
	assert(s->n_keys < SCHEMA_KEYS_MAX);
	for (size_t i = 0; i < s->n_keys; i++)
		ret[i] = s->keys[i].name;
	ret[s->n_keys] = NULL;
}
