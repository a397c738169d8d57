/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The audit log and the live trace (docs/audit.md has the record schema).
 *
 * One Audit object per run. The supervisor fills an AuditRecord after each decision and hands
 * it to audit_syscall(); process, budget and ratchet events have functions of their own. Every
 * function accepts a NULL Audit (no log, no trace) and then does nothing, so callers need no
 * checks of their own. All functions are thread-safe.
 *
 * The JSON Lines sink is buffered: records are formatted by the calling thread into a shared
 * buffer, and a writer thread writes it to the file in large chunks, so a receiver never waits
 * on the disk (it only waits when the writer is more than AUDIT_BUFFER_MAX behind). The --trace
 * lines go to stderr at once, one write(2) each.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The schema version written in every record's "v". */
#define AUDIT_SCHEMA_VERSION 1
/* Longest string argument kept in a record (bytes of the child's string, before escaping). */
#define AUDIT_STRING_MAX 4096
/* Strings in --trace lines are cut after this many bytes (then "..." follows the quote). */
#define AUDIT_TRACE_STRING_MAX 256
/* Most argv entries kept for an exec. */
#define AUDIT_ARGV_MAX 64
/* Bytes copied around a syscall site for the disassembly: before and after the instruction. */
#define AUDIT_CODE_BEFORE 32
#define AUDIT_CODE_AFTER  16

typedef struct Audit Audit;

typedef enum AuditDecision {
	AUDIT_ALLOWED,	/* the kernel ran the call (CONTINUE) */
	AUDIT_EMULATED, /* the supervisor answered (a value, or an errno that is not a denial) */
	AUDIT_DENIED,	/* the policy refused: the child saw an errno */
	AUDIT_KILLED,	/* the policy killed the sandbox */
	_AUDIT_DECISION_MAX,
	_AUDIT_DECISION_INVALID = -EINVAL,
} AuditDecision;

const char *audit_decision_to_string(AuditDecision d);

/* How an argument is decoded (audit/decode.c). */
typedef enum AuditArgType {
	AUDIT_ARG_NONE,
	AUDIT_ARG_INT,	   /* signed 32-bit, decimal */
	AUDIT_ARG_LONG,	   /* signed 64-bit, decimal */
	AUDIT_ARG_HEX,	   /* hexadecimal */
	AUDIT_ARG_PTR,	   /* address, NULL when 0 */
	AUDIT_ARG_FD,	   /* fd number */
	AUDIT_ARG_DIRFD,   /* AT_FDCWD or fd */
	AUDIT_ARG_PATH,	   /* string read from the child: a path */
	AUDIT_ARG_STRING,  /* string read from the child: not a path (symlink target, xattr name) */
	AUDIT_ARG_OFLAGS,  /* O_RDONLY|O_CLOEXEC… */
	AUDIT_ARG_MODE,	   /* octal */
	AUDIT_ARG_ATFLAGS, /* AT_SYMLINK_NOFOLLOW|AT_EMPTY_PATH… */
	AUDIT_ARG_AMODE,   /* F_OK, R_OK|W_OK… */
	AUDIT_ARG_SIGNAL,  /* SIGKILL… */
	AUDIT_ARG_PID,	   /* pid (negative: a process group) */
	AUDIT_ARG_SOCKADDR, /* socket address read from the child (length in the next argument) */
	AUDIT_ARG_ARGV,	    /* exec argument vector read from the child */
	AUDIT_ARG_FCNTL,    /* F_SETOWN… */
	AUDIT_ARG_DOMAIN,   /* AF_INET… */
	AUDIT_ARG_SOCKTYPE, /* SOCK_STREAM|SOCK_CLOEXEC… */
	AUDIT_ARG_RESOURCE, /* RLIMIT_NOFILE… */
	_AUDIT_ARG_TYPE_MAX,
	_AUDIT_ARG_TYPE_INVALID = -EINVAL,
} AuditArgType;

typedef struct AuditSyscallInfo {
	const char *name;
	unsigned category; /* one AuditEvent bit (policy/policy.h): FILE, EXEC, NETWORK, … */
	unsigned n_args;
	AuditArgType type[6];
	const char *arg_name[6];
} AuditSyscallInfo;

/** How the arguments of x86_64 syscall nr are decoded; never NULL (unknown: 6 hex args). */
const AuditSyscallInfo *audit_syscall_info(int nr);

/* One syscall's arguments as the syscall table gives them (syscalls/table.c). */
typedef struct AuditLayout {
	const char *name;  /* libseccomp's */
	unsigned category; /* one AuditEvent bit */
	const char *args;  /* "argname:type …", types as audit_arg_type_from_string() reads */
} AuditLayout;

/** Sets the layouts audit_syscall_info() decodes by: the syscall table's, which the layer
 * above gives (syscalls_audit_init()). layouts is borrowed for the life of the process. Call
 * it before the first audit_syscall_info(); a later call, or a second one, is ignored.
 * Without it every syscall is shown with six raw arguments. */
void audit_decode_set_layouts(const AuditLayout *layouts, size_t n);
/** The argument type named name ("path", "sockaddr", …), or _AUDIT_ARG_TYPE_INVALID. */
AuditArgType audit_arg_type_from_string(const char *name);

/* What the supervisor read from the child for one argument, before answering. */
typedef struct AuditArgData {
	const char *str;     /* PATH, STRING, SOCKADDR (formatted): NULL if unreadable */
	bool truncated;	     /* the string was longer than what was kept */
	char *const *argv;   /* ARGV: NULL-terminated, NULL if unreadable */
	bool argv_truncated; /* more than AUDIT_ARGV_MAX entries */
	/* SOCKADDR: family (AF_*), and for AF_INET/AF_INET6 the address text and the port */
	int family;
	const char *address; /* "1.2.3.4", "::1"; for AF_UNIX the path ("@name": abstract) */
	int port;	     /* -1: none */
} AuditArgData;

/* One frame of a backtrace (tracer/backtrace.c), symbolized from the module's ELF symbols. */
#define AUDIT_FUNCTION_MAX 128
#define AUDIT_MODULE_MAX   256
typedef struct AuditFrame {
	uint64_t ip;			   /* the frame's instruction pointer (return address) */
	uint64_t offset;		   /* ip - start of function, when function[0] */
	char function[AUDIT_FUNCTION_MAX]; /* "" if no symbol covers ip */
	char module[AUDIT_MODULE_MAX];	   /* the mapped file (host path), "[vdso]", or "" */
} AuditFrame;

typedef struct AuditRecord {
	pid_t pid; /* thread group of the caller */
	pid_t tid;
	int nr;
	uint64_t args[6];
	AuditArgData data[6];
	uint64_t ip;	       /* instruction pointer after the syscall instruction, 0 if unknown */
	int outside_libc;      /* 1, 0, or -1 unknown (audit_outside_libc()) */
	const char *path;      /* virtual path the decision was about, NULL or "" if none */
	const char *host_path; /* host path it maps to */
	AuditDecision decision;
	int64_t ret;	 /* EMULATED without errno: the value the child saw */
	int error;	 /* positive errno the child saw, 0 if none */
	const char *why; /* why it was denied or killed, NULL */
	uint64_t latency_ns;
	/* the policy says "log" for this syscall: recorded whatever [audit] events says */
	bool log;
	/* code around the syscall instruction (at ip - 2), for the disassembly; NULL: none */
	const uint8_t *code;
	size_t code_len;
	uint64_t code_addr;
	/* the call stack at the syscall ([audit] backtrace), innermost first; NULL: none */
	const AuditFrame *frames;
	size_t n_frames;
	/* a backtrace was due and could not be taken: why (NULL otherwise) */
	const char *backtrace_error;
	/* an ENOENT for a name that exists on the host though the view does not show it:
	 * "hidden", "outside" or "shadowed" (emulation/path/view.h); NULL otherwise */
	const char *out_of_view;
} AuditRecord;

typedef struct AuditOptions {
	const char *log_path; /* JSON Lines file (created or truncated, mode 0600); NULL: none */
	int log_fd;	      /* or an fd to write to (taken over), -1: none */
	bool trace;	      /* strace-like lines on stderr */
	bool trace_logged;    /* trace lines for records with .log set, even when trace is off */
	unsigned events;      /* AuditEvent mask (policy/policy.h) */
	int disassembly;      /* AuditSelect (policy/policy.h): which records get a disassembly */
	char *const *disassembly_syscalls; /* AUDIT_SELECT_LIST: syscall names */
	int backtrace;			   /* AuditSelect: which records get a backtrace */
	char *const *backtrace_syscalls;   /* AUDIT_SELECT_LIST: syscall names */
} AuditOptions;

/**
 * Opens the sinks. With neither a log nor a trace, *ret is set to NULL and 0 is returned.
 * Errors: -errno from open(2) of the log (the caller reports it and does not start the
 * program), -ENOMEM, or pthread_create's error.
 */
int audit_open(const AuditOptions *o, Audit **ret);
/** Flushes, stops the writer, closes. Returns 0, or the first write error seen (-errno). */
int audit_close(Audit *a);
/** audit_close() that ignores the result; returns NULL. */
Audit *audit_free(Audit *a);

/** Whether a syscall record for nr with this outcome would be written or printed. */
bool audit_wants_syscall(const Audit *a, int nr, bool denied, bool log);
/** Whether a record for nr with this outcome gets a disassembly ([audit] disassembly). */
bool audit_wants_disassembly(const Audit *a, int nr, bool denied);
/** Whether a record for nr with this outcome gets a backtrace ([audit] backtrace). */
bool audit_wants_backtrace(const Audit *a, int nr, bool denied);

/** The command's pid: trace lines of other processes start with "[pid N]". */
void audit_set_main_pid(Audit *a, pid_t pid);

/** One record per interposed syscall (type "syscall"). */
void audit_syscall(Audit *a, const AuditRecord *r);

/**
 * Whether the syscall instruction at ip (seccomp_data.instruction_pointer) lies outside the
 * executable mappings of libc, the dynamic loader and the vDSO of process tgid: 1, 0, or -1
 * when it cannot be told. The mappings are read from /proc/TGID/maps once per process and
 * exec (audit_process_exec_done()), and again (a few times at most) for an address outside
 * them, since libc may be mapped after the first syscall seen.
 */
int audit_outside_libc(Audit *a, pid_t tgid, uint64_t ip);
/** Whether pid is in the process cache as a process (a thread-group leader) seen before. */
bool audit_known_process(Audit *a, pid_t pid);
/** Forgets what is cached about tgid (comm, mappings): call after it exec'd. */
void audit_process_exec_done(Audit *a, pid_t tgid);

/* Run and process events (type "run" and "process"). */
/** view: "kernel", "emulated", or NULL when the run ended before it was known; view_reason:
 * why not in the kernel (NULL: none), as in the JSON result (docs/json-result.md). */
void audit_run_start(Audit *a, const char *policy, char *const *argv, const char *view,
		     const char *view_reason);
void audit_run_end(Audit *a, int exit_code, int signal, const char *killed_by, uint64_t denied,
		   uint64_t duration_ms);
/** The command started (its first exec is its execve record). */
void audit_process_start(Audit *a, pid_t pid, pid_t ppid, char *const *argv);
/** A process ended: exit_code >= 0 for an exit, else signal > 0. */
void audit_process_exit(Audit *a, pid_t pid, int exit_code, int signal);

/**
 * A budget was exceeded (type "budget"): name as in [limits] ("cpu_time", "memory", "tasks",
 * …), the limit and what was used in unit ("ms", "bytes", "count"), and what the supervisor
 * does ("terminate", "kill", "deny"). pid is the process that crossed it, 0 for the tree.
 */
void audit_budget_event(Audit *a, const char *budget, uint64_t limit, uint64_t used,
			const char *unit, const char *action, pid_t pid);

/**
 * The network ratchet moved (type "ratchet"): pid opened path of sensitivity level, and the
 * network mode dropped from from_mode to to_mode; sockets_shut counts the inet sockets shut.
 */
void audit_ratchet_event(Audit *a, pid_t pid, const char *path, const char *level,
			 const char *from_mode, const char *to_mode, unsigned sockets_shut);
/** A held connect (network.unlisted = "ask"): event "request" or "decision"; type
 * "approval". Written whatever [audit] events says. decision/decider/note/reason may be
 * NULL. */
void audit_approval_event(Audit *a, const char *event, const char *id, pid_t pid, const char *op,
			  const char *destination, const char *name, const char *channel,
			  const char *decision, const char *decider, const char *note,
			  const char *reason, uint64_t waited_ms, bool timed_out,
			  uint64_t timeout_ms);
