/* SPDX-License-Identifier: MIT */
/*
 * How each interposed syscall's arguments are decoded for the audit log and --trace: the
 * argument layouts of the syscall table (syscalls/table.c, one per row, as strace's
 * syscallent; given by audit_decode_set_layouts()), resolved to x86_64 numbers with
 * libseccomp once, and the symbolic formatters (open flags, AT_* flags, signals, socket
 * families…). Pure code but for the one-time table build.
 */
#include "audit/internal.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/syscall-names.h"
#include "policy/policy.h"

static const struct {
	const char *name;
	AuditArgType type;
} type_names[] = {
	{"int", AUDIT_ARG_INT},
	{"long", AUDIT_ARG_LONG},
	{"hex", AUDIT_ARG_HEX},
	{"ptr", AUDIT_ARG_PTR},
	{"fd", AUDIT_ARG_FD},
	{"dirfd", AUDIT_ARG_DIRFD},
	{"path", AUDIT_ARG_PATH},
	{"str", AUDIT_ARG_STRING},
	{"oflags", AUDIT_ARG_OFLAGS},
	{"mode", AUDIT_ARG_MODE},
	{"atflags", AUDIT_ARG_ATFLAGS},
	{"amode", AUDIT_ARG_AMODE},
	{"sig", AUDIT_ARG_SIGNAL},
	{"pid", AUDIT_ARG_PID},
	{"sockaddr", AUDIT_ARG_SOCKADDR},
	{"argv", AUDIT_ARG_ARGV},
	{"fcntl", AUDIT_ARG_FCNTL},
	{"domain", AUDIT_ARG_DOMAIN},
	{"socktype", AUDIT_ARG_SOCKTYPE},
	{"resource", AUDIT_ARG_RESOURCE},
};

#define NR_MAX 1024

static const AuditLayout *layouts;
static size_t n_layouts;
static AuditSyscallInfo *infos;
static const AuditSyscallInfo *by_nr[NR_MAX];
static AuditSyscallInfo unknown[NR_MAX];
static char unknown_names[NR_MAX][32];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const char *const raw_names[6] = {"arg0", "arg1", "arg2", "arg3", "arg4", "arg5"};

/* Splits a spec into the info; the spec strings are static, so names point into copies kept
 * for the life of the process. */
static void parse_spec(const char *spec, AuditSyscallInfo *info)
{
	char *copy = strdup(spec), *save = NULL;

	info->n_args = 0;
	if (!copy)
		return;
	for (char *tok = strtok_r(copy, " ", &save); tok && info->n_args < 6;
	     tok = strtok_r(NULL, " ", &save)) {
		char *colon = strchr(tok, ':');

		if (!colon)
			continue;
		*colon = 0;
		info->arg_name[info->n_args] = tok;
		info->type[info->n_args] = audit_arg_type_from_string(colon + 1);
		if (info->type[info->n_args] < 0)
			info->type[info->n_args] = AUDIT_ARG_HEX;
		info->n_args++;
	}
	/* copy is referenced by arg_name: kept on purpose, unless nothing points into it */
	if (info->n_args == 0)
		free(copy);
}

static void build(void)
{
	/* out of memory: the calls are shown raw */
	infos = n_layouts ? calloc(n_layouts, sizeof(*infos)) : NULL;
	for (size_t i = 0; infos && i < n_layouts; i++) {
		int nr = sbx_syscall_number(layouts[i].name);

		infos[i].name = layouts[i].name;
		infos[i].category = layouts[i].category;
		parse_spec(layouts[i].args, &infos[i]);
		if (nr >= 0 && nr < NR_MAX)
			by_nr[nr] = &infos[i];
	}
	for (int nr = 0; nr < NR_MAX; nr++) {
		const char *n;

		if (by_nr[nr])
			continue;
		n = sbx_syscall_name(nr);
		if (n)
			snprintf(unknown_names[nr], sizeof(unknown_names[nr]), "%s", n);
		else
			snprintf(unknown_names[nr], sizeof(unknown_names[nr]), "syscall_%d", nr);
		unknown[nr].name = unknown_names[nr];
		unknown[nr].category = AUDIT_EVENT_SYSCALL;
		unknown[nr].n_args = 6;
		for (size_t a = 0; a < 6; a++) {
			unknown[nr].type[a] = AUDIT_ARG_HEX;
			unknown[nr].arg_name[a] = raw_names[a];
		}
		by_nr[nr] = &unknown[nr];
	}
}

void audit_decode_set_layouts(const AuditLayout *l, size_t n)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

	pthread_mutex_lock(&lock);
	if (!layouts) {
		n_layouts = n;
		__atomic_store_n(&layouts, l, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&lock);
}

AuditArgType audit_arg_type_from_string(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(type_names); i++)
		if (streq(type_names[i].name, name))
			return type_names[i].type;
	return _AUDIT_ARG_TYPE_INVALID;
}

const AuditSyscallInfo *audit_syscall_info(int nr)
{
	static AuditSyscallInfo out_of_range = {
		.name = "syscall_out_of_range",
		.category = AUDIT_EVENT_SYSCALL,
		.n_args = 6,
		.type = {AUDIT_ARG_HEX, AUDIT_ARG_HEX, AUDIT_ARG_HEX, AUDIT_ARG_HEX, AUDIT_ARG_HEX,
			 AUDIT_ARG_HEX},
		.arg_name = {"arg0", "arg1", "arg2", "arg3", "arg4", "arg5"},
	};

	(void) pthread_once(&once, build);
	if (nr < 0 || nr >= NR_MAX)
		return &out_of_range;
	return by_nr[nr];
}

/* ---- symbolic formatters: write into buf (size > 0), return buf ---- */

typedef struct FlagName {
	uint64_t bit;
	const char *name;
} FlagName;

static const char *format_flags(uint64_t v, const FlagName *names, size_t n, const char *first,
				char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	if (first)
		len = (size_t) snprintf(buf, size, "%s", first);
	for (size_t i = 0; i < n && len < size; i++) {
		if (!names[i].bit || (v & names[i].bit) != names[i].bit)
			continue;
		v &= ~names[i].bit;
		len += (size_t) snprintf(buf + len, size - len, "%s%s", len ? "|" : "",
					 names[i].name);
	}
	if (v && len < size)
		len += (size_t) snprintf(buf + len, size - len, "%s%#llx", len ? "|" : "",
					 (unsigned long long) v);
	if (len == 0)
		snprintf(buf, size, "0");
	return buf;
}

const char *audit_format_oflags(uint64_t v, char *buf, size_t size)
{
	/* O_TMPFILE and O_SYNC include O_DIRECTORY and O_DSYNC: listed first */
	static const FlagName names[] = {
		{O_TMPFILE, "O_TMPFILE"},     {O_SYNC, "O_SYNC"},
		{O_CREAT, "O_CREAT"},	      {O_EXCL, "O_EXCL"},
		{O_NOCTTY, "O_NOCTTY"},	      {O_TRUNC, "O_TRUNC"},
		{O_APPEND, "O_APPEND"},	      {O_NONBLOCK, "O_NONBLOCK"},
		{O_DSYNC, "O_DSYNC"},	      {O_ASYNC, "O_ASYNC"},
		{O_DIRECT, "O_DIRECT"},	      {O_LARGEFILE, "O_LARGEFILE"},
		{O_DIRECTORY, "O_DIRECTORY"}, {O_NOFOLLOW, "O_NOFOLLOW"},
		{O_NOATIME, "O_NOATIME"},     {O_CLOEXEC, "O_CLOEXEC"},
		{O_PATH, "O_PATH"},
	};
	static const char *const acc[] = {"O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE"};
	uint32_t f = (uint32_t) v;

	/* O_TMPFILE includes O_DIRECTORY; O_PATH ignores the access mode */
	return format_flags(f & ~(uint32_t) O_ACCMODE, names, ARRAY_SIZE(names), acc[f & O_ACCMODE],
			    buf, size);
}

const char *audit_format_atflags(uint64_t v, char *buf, size_t size)
{
	static const FlagName names[] = {
		{AT_SYMLINK_NOFOLLOW, "AT_SYMLINK_NOFOLLOW"},
		{AT_REMOVEDIR, "AT_REMOVEDIR"},
		{AT_SYMLINK_FOLLOW, "AT_SYMLINK_FOLLOW"},
		{AT_NO_AUTOMOUNT, "AT_NO_AUTOMOUNT"},
		{AT_EMPTY_PATH, "AT_EMPTY_PATH"},
		{AT_EACCESS, "AT_EACCESS"},
	};

	return format_flags((uint32_t) v, names, ARRAY_SIZE(names), NULL, buf, size);
}

const char *audit_format_amode(uint64_t v, char *buf, size_t size)
{
	static const FlagName names[] = {{R_OK, "R_OK"}, {W_OK, "W_OK"}, {X_OK, "X_OK"}};

	if ((uint32_t) v == F_OK) {
		snprintf(buf, size, "F_OK");
		return buf;
	}
	return format_flags((uint32_t) v, names, ARRAY_SIZE(names), NULL, buf, size);
}

const char *audit_format_signal(uint64_t v, char *buf, size_t size)
{
	static const char *const names[] = {
		[SIGHUP] = "SIGHUP",	   [SIGINT] = "SIGINT",	      [SIGQUIT] = "SIGQUIT",
		[SIGILL] = "SIGILL",	   [SIGTRAP] = "SIGTRAP",     [SIGABRT] = "SIGABRT",
		[SIGBUS] = "SIGBUS",	   [SIGFPE] = "SIGFPE",	      [SIGKILL] = "SIGKILL",
		[SIGUSR1] = "SIGUSR1",	   [SIGSEGV] = "SIGSEGV",     [SIGUSR2] = "SIGUSR2",
		[SIGPIPE] = "SIGPIPE",	   [SIGALRM] = "SIGALRM",     [SIGTERM] = "SIGTERM",
		[SIGSTKFLT] = "SIGSTKFLT", [SIGCHLD] = "SIGCHLD",     [SIGCONT] = "SIGCONT",
		[SIGSTOP] = "SIGSTOP",	   [SIGTSTP] = "SIGTSTP",     [SIGTTIN] = "SIGTTIN",
		[SIGTTOU] = "SIGTTOU",	   [SIGURG] = "SIGURG",	      [SIGXCPU] = "SIGXCPU",
		[SIGXFSZ] = "SIGXFSZ",	   [SIGVTALRM] = "SIGVTALRM", [SIGPROF] = "SIGPROF",
		[SIGWINCH] = "SIGWINCH",   [SIGIO] = "SIGIO",	      [SIGPWR] = "SIGPWR",
		[SIGSYS] = "SIGSYS",
	};
	int s = (int) v;

	if (s == 0)
		snprintf(buf, size, "0");
	else if (s > 0 && (size_t) s < ARRAY_SIZE(names) && names[s])
		snprintf(buf, size, "%s", names[s]);
	else if (s >= SIGRTMIN && s <= SIGRTMAX)
		snprintf(buf, size, "SIGRTMIN+%d", s - SIGRTMIN);
	else
		snprintf(buf, size, "%d", s);
	return buf;
}

const char *audit_format_fcntl(uint64_t v, char *buf, size_t size)
{
	static const struct {
		int cmd;
		const char *name;
	} names[] = {
		{F_DUPFD, "F_DUPFD"},
		{F_GETFD, "F_GETFD"},
		{F_SETFD, "F_SETFD"},
		{F_GETFL, "F_GETFL"},
		{F_SETFL, "F_SETFL"},
		{F_GETLK, "F_GETLK"},
		{F_SETLK, "F_SETLK"},
		{F_SETLKW, "F_SETLKW"},
		{F_SETOWN, "F_SETOWN"},
		{F_GETOWN, "F_GETOWN"},
		{F_SETSIG, "F_SETSIG"},
		{F_GETSIG, "F_GETSIG"},
		{F_SETOWN_EX, "F_SETOWN_EX"},
		{F_GETOWN_EX, "F_GETOWN_EX"},
		{F_DUPFD_CLOEXEC, "F_DUPFD_CLOEXEC"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].cmd == (int) v) {
			snprintf(buf, size, "%s", names[i].name);
			return buf;
		}
	snprintf(buf, size, "%d", (int) v);
	return buf;
}

const char *audit_format_domain(uint64_t v, char *buf, size_t size)
{
	static const struct {
		int af;
		const char *name;
	} names[] = {
		{AF_UNSPEC, "AF_UNSPEC"}, {AF_UNIX, "AF_UNIX"},	      {AF_INET, "AF_INET"},
		{AF_INET6, "AF_INET6"},	  {AF_NETLINK, "AF_NETLINK"}, {AF_PACKET, "AF_PACKET"},
		{AF_VSOCK, "AF_VSOCK"},	  {AF_ALG, "AF_ALG"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].af == (int) v) {
			snprintf(buf, size, "%s", names[i].name);
			return buf;
		}
	snprintf(buf, size, "%d", (int) v);
	return buf;
}

const char *audit_format_socktype(uint64_t v, char *buf, size_t size)
{
	static const char *const types[] = {
		[SOCK_STREAM] = "SOCK_STREAM",
		[SOCK_DGRAM] = "SOCK_DGRAM",
		[SOCK_RAW] = "SOCK_RAW",
		[SOCK_RDM] = "SOCK_RDM",
		[SOCK_SEQPACKET] = "SOCK_SEQPACKET",
		[SOCK_PACKET] = "SOCK_PACKET",
	};
	static const FlagName names[] = {{SOCK_NONBLOCK, "SOCK_NONBLOCK"},
					 {SOCK_CLOEXEC, "SOCK_CLOEXEC"}};
	uint32_t t = (uint32_t) v & 0xf, flags = (uint32_t) v & ~0xfU;
	char first[16];

	if (t < ARRAY_SIZE(types) && types[t])
		snprintf(first, sizeof(first), "%s", types[t]);
	else if (t)
		snprintf(first, sizeof(first), "%u", t);
	else
		first[0] = 0;
	return format_flags(flags, names, ARRAY_SIZE(names), first[0] ? first : NULL, buf, size);
}

const char *audit_format_resource(uint64_t v, char *buf, size_t size)
{
	static const char *const names[] = {
		[RLIMIT_CPU] = "RLIMIT_CPU",	       [RLIMIT_FSIZE] = "RLIMIT_FSIZE",
		[RLIMIT_DATA] = "RLIMIT_DATA",	       [RLIMIT_STACK] = "RLIMIT_STACK",
		[RLIMIT_CORE] = "RLIMIT_CORE",	       [RLIMIT_RSS] = "RLIMIT_RSS",
		[RLIMIT_NPROC] = "RLIMIT_NPROC",       [RLIMIT_NOFILE] = "RLIMIT_NOFILE",
		[RLIMIT_MEMLOCK] = "RLIMIT_MEMLOCK",   [RLIMIT_AS] = "RLIMIT_AS",
		[RLIMIT_LOCKS] = "RLIMIT_LOCKS",       [RLIMIT_SIGPENDING] = "RLIMIT_SIGPENDING",
		[RLIMIT_MSGQUEUE] = "RLIMIT_MSGQUEUE", [RLIMIT_NICE] = "RLIMIT_NICE",
		[RLIMIT_RTPRIO] = "RLIMIT_RTPRIO",     [RLIMIT_RTTIME] = "RLIMIT_RTTIME",
	};

	if (v < ARRAY_SIZE(names) && names[v])
		snprintf(buf, size, "%s", names[v]);
	else
		snprintf(buf, size, "%llu", (unsigned long long) v);
	return buf;
}

/* Formats a register argument that needs no child memory. */
const char *audit_format_scalar(AuditArgType type, uint64_t v, char *buf, size_t size)
{
	switch (type) {
	case AUDIT_ARG_INT:
	case AUDIT_ARG_FD:
	case AUDIT_ARG_PID:
		snprintf(buf, size, "%d", (int) v);
		return buf;
	case AUDIT_ARG_LONG:
		snprintf(buf, size, "%lld", (long long) v);
		return buf;
	case AUDIT_ARG_DIRFD:
		if ((int) v == AT_FDCWD)
			snprintf(buf, size, "AT_FDCWD");
		else
			snprintf(buf, size, "%d", (int) v);
		return buf;
	case AUDIT_ARG_OFLAGS:
		return audit_format_oflags(v, buf, size);
	case AUDIT_ARG_MODE:
		snprintf(buf, size, "0%03o", (unsigned) (v & 07777));
		return buf;
	case AUDIT_ARG_ATFLAGS:
		return audit_format_atflags(v, buf, size);
	case AUDIT_ARG_AMODE:
		return audit_format_amode(v, buf, size);
	case AUDIT_ARG_SIGNAL:
		return audit_format_signal(v, buf, size);
	case AUDIT_ARG_FCNTL:
		return audit_format_fcntl(v, buf, size);
	case AUDIT_ARG_DOMAIN:
		return audit_format_domain(v, buf, size);
	case AUDIT_ARG_SOCKTYPE:
		return audit_format_socktype(v, buf, size);
	case AUDIT_ARG_RESOURCE:
		return audit_format_resource(v, buf, size);
	case AUDIT_ARG_PTR:
		if (v == 0)
			snprintf(buf, size, "NULL");
		else
			snprintf(buf, size, "%#llx", (unsigned long long) v);
		return buf;
	default:
		snprintf(buf, size, "%#llx", (unsigned long long) v);
		return buf;
	}
}

bool audit_arg_is_number(AuditArgType type, uint64_t v)
{
	switch (type) {
	case AUDIT_ARG_INT:
	case AUDIT_ARG_FD:
	case AUDIT_ARG_PID:
	case AUDIT_ARG_LONG:
		return true;
	case AUDIT_ARG_DIRFD:
		return (int) v != AT_FDCWD;
	default:
		return false;
	}
}

const char *audit_category_to_string(unsigned bit)
{
	/* the names of [audit] events in docs/policy.md, by AuditEvent bit */
	static const char *const names[] = {
		"file",	  "exec",    "network", "process", "signal",
		"budget", "ratchet", "denied",	"syscall",
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (bit == 1u << i)
			return names[i];
	return "syscall";
}
