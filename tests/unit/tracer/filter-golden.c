/* SPDX-License-Identifier: MIT */
/*
 * The filter's decisions, dumped: for every preset in policies/ and every policy in
 * tests/data (every .toml), with the kernel view off and on, every program variant the filter
 * builds (emulated view, without a private IPC namespace, in a user namespace, the kernel
 * view's, and the kernel view's in a pid namespace) run in a classic-BPF interpreter for
 * every x86_64 number 0..460 and a set of argument vectors that reach each argument check,
 * plus what the dispatch does with each number (its slot: name, handler, may it block, errno).
 *
 *   filter-golden --write FILE   writes the dump
 *   filter-golden --check FILE   compares with FILE (tests/data/filter-golden.txt): exit 1
 *                                and the first differing lines when they differ
 *
 * The committed dump is the proof that a change of the syscall table (issue 22) did not
 * change what the sandbox does: regenerate it only for a deliberate change, and say which
 * in the commit. The dump depends on libseccomp's name list and on whether pidfd_getfd is
 * usable here (the tree's own sockets, net/socktab.c): a different one is a skip (77).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <seccomp.h>

#include "common/log.h"
#include "common/macros.h"
#include "common/util.h"
#include "emulation/fs.h"
#include "emulation/process.h"
#include "net/handlers.h"
#include "policy/policy.h"
#include "tracer/budget.h"
#include "tests/unit/tracer/bpf-interp.h"
#include "tracer/internal.h"

#define NR_LAST 460

static uint32_t run_prog(const struct sock_filter *prog, size_t len, uint32_t nr,
			 const uint64_t args[6])
{
	return bpf_interp_run(prog, len, AUDIT_ARCH_X86_64, nr, args);
}

/* Argument vectors that reach every argument check of the filter (tracer/filter.c,
 * emit_special) on either side: ids own/other/-1, clone flags, ioctl and fcntl commands,
 * pids 0/other, sendto's address, seccomp's NEW_LISTENER, personality, setsockopt options,
 * fallocate modes. */
static const uint64_t probes[][6] = {
	{0},
	{1, 1, 1, 1, 1, 1},
	{1000, 1000, 1000, 1000, 1000, 1000},
	{4242, 4242, 4242, 4242, 4242, 4242},
	{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
	{SIGCHLD | CLONE_NEWUSER},
	{SIGCHLD | CLONE_UNTRACED},
	{(1ULL << 32) | SIGCHLD},
	{0, TIOCSTI},
	{0, (1ULL << 32) | TIOCLINUX},
	{0, FIOSETOWN},
	{0, SIOCSPGRP},
	{0, FS_IOC_SETFLAGS},
	{0, FS_IOC_SET_ENCRYPTION_POLICY},
	{0, F_SETOWN},
	{0, F_SETOWN_EX},
	{1234, 1234},
	{(1ULL << 32), (1ULL << 32)},
	{0, 0, 0, 0, 0x1000},
	{0, 0, 0, 0, 1ULL << 32},
	{SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER},
	{SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC},
	{0x8},
	{0x20008},
	{0x12345},
	{0, IPPROTO_IPV6, IPV6_RTHDR},
	{0, IPPROTO_IPV6, IPV6_V6ONLY},
	{0, IPPROTO_IP, IP_OPTIONS},
	{0, IPPROTO_IP, IP_TOS},
	{0, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE},
	{0, FALLOC_FL_COLLAPSE_RANGE},
	{0, FALLOC_FL_KEEP_SIZE},
};

static void action_name(uint32_t v, char *buf, size_t size)
{
	uint32_t data = v & SECCOMP_RET_DATA;

	switch (v & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_ALLOW:
		snprintf(buf, size, "allow");
		return;
	case SECCOMP_RET_USER_NOTIF:
		snprintf(buf, size, "notify");
		return;
	case SECCOMP_RET_TRACE:
		snprintf(buf, size, "trace");
		return;
	case SECCOMP_RET_KILL_PROCESS:
		snprintf(buf, size, "kill");
		return;
	case SECCOMP_RET_ERRNO:
		snprintf(buf, size, "errno%u", data);
		return;
	default:
		snprintf(buf, size, "0x%x", v);
		return;
	}
}

/* One number's decisions over the probes: "allow" when all agree, else each in order. */
static void decisions(const struct sock_filter *prog, size_t len, uint32_t nr, char *buf,
		      size_t size)
{
	char first[32], one[32];
	size_t n = 0;
	bool all_same = true;

	action_name(run_prog(prog, len, nr, probes[0]), first, sizeof(first));
	for (size_t i = 1; i < ARRAY_SIZE(probes) && all_same; i++) {
		action_name(run_prog(prog, len, nr, probes[i]), one, sizeof(one));
		all_same = streq(one, first);
	}
	if (all_same) {
		snprintf(buf, size, "%s", first);
		return;
	}
	buf[0] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(probes) && n < size; i++) {
		action_name(run_prog(prog, len, nr, probes[i]), one, sizeof(one));
		n += (size_t) snprintf(buf + n, size - n, "%s%s", i ? "," : "", one);
	}
}

static const struct {
	EmuHandler h;
	const char *name;
} handlers[] = {
#define H(x)                                                                                       \
	{                                                                                          \
		x, #x                                                                              \
	}
	H(budget_handle_clone),
	H(emu_handle_access),
	H(emu_handle_chdir),
	H(emu_handle_chmod),
	H(emu_handle_chown),
	H(emu_handle_execve),
	H(emu_handle_fcntl_owner),
	H(emu_handle_fd_attr),
	H(emu_handle_getcwd),
	H(emu_handle_getdents),
	H(emu_handle_inotify_add_watch),
	H(emu_handle_ioctl),
	H(emu_handle_link),
	H(emu_handle_log),
	H(emu_handle_mkdir),
	H(emu_handle_open),
	H(emu_handle_pid_target),
	H(emu_handle_readlink),
	H(emu_handle_rename),
	H(emu_handle_signal),
	H(emu_handle_stat),
	H(emu_handle_statfs),
	H(emu_handle_symlink),
	H(emu_handle_truncate),
	H(emu_handle_unlink),
	H(emu_handle_utimes),
	H(emu_handle_xattr),
	H(net_handle_accept),
	H(net_handle_bind),
	H(net_handle_close),
	H(net_handle_connect),
	H(net_handle_listen),
	H(net_handle_recvfrom),
	H(net_handle_sendmmsg),
	H(net_handle_sendmsg),
	H(net_handle_sendto),
	H(net_handle_setsockopt),
	H(net_handle_socket),
	H(net_handle_socketpair),
	H(net_handle_sockname),
#undef H
};

static const char *handler_name(EmuHandler h)
{
	if (!h)
		return "-";
	for (size_t i = 0; i < ARRAY_SIZE(handlers); i++)
		if (handlers[i].h == h)
			return handlers[i].name;
	return "?";
}

/* What the dispatch does with each number: the slot, with the fields that are not 0. */
static void dump_slots(FILE *out, const TracerFilter *f)
{
	for (uint32_t nr = 0; nr <= NR_LAST; nr++) {
		const TracerSlot *s = &f->slots[nr];
		char act[32];

		if (!s->entry && !s->action && !s->handler)
			continue;
		action_name(s->action, act, sizeof(act));
		fprintf(out, "  %u %s: %s", nr, s->entry ? s->entry->name : "-", act);
		if (s->handler)
			fprintf(out, " handler=%s", handler_name(s->handler));
		/* what the dispatch reads of the row: whether it may block (the rest of the row
		 * shows in the action, the handler, restartable and pid_in_kernel) */
		if (s->handler && s->entry && (s->entry->flags & EMU_MAY_BLOCK))
			fprintf(out, " may_block");
		if (s->special)
			fprintf(out, " special=%d", (int) s->special);
		if (s->deny_error)
			fprintf(out, " deny=%d", s->deny_error);
		if (s->uid_args || s->gid_args)
			fprintf(out, " uid=%#x gid=%#x", s->uid_args, s->gid_args);
		fprintf(out, "%s%s%s%s%s%s%s%s\n", s->log ? " log" : "", s->kill ? " kill" : "",
			s->host_ipc ? " host_ipc" : "",
			s->untraced_denied ? " untraced_denied" : "",
			s->owner_in_kernel ? " owner_in_kernel" : "",
			tracer_filter_restartable(f, nr, false) ? " restartable" : "",
			tracer_filter_restartable(f, nr, true) ? " restartable_kview" : "",
			tracer_filter_pid_in_kernel(s) ? " pid_in_kernel" : "");
	}
}

/* Sections already written, so that an identical one is written as a reference to it. */
static struct {
	char *label, *text;
} seen[512];
static size_t n_seen;

static void section(FILE *out, const char *label, char *text)
{
	for (size_t i = 0; i < n_seen; i++)
		if (streq(seen[i].text, text)) {
			fprintf(out, "%s: same as %s\n", label, seen[i].label);
			free(text);
			return;
		}
	fprintf(out, "%s:\n%s", label, text);
	if (n_seen < ARRAY_SIZE(seen)) {
		seen[n_seen].label = strdup(label);
		seen[n_seen++].text = text;
	} else
		free(text);
}

/* A program: runs of numbers with the same decisions, one line each. */
static void dump_prog(FILE *out, const char *block, const char *label,
		      const struct sock_filter *prog, size_t len)
{
	_cleanup_free_ char *full = strdup_printf("%s prog %s", block, label);
	char prev[2048] = "", cur[2048], *text = NULL;
	size_t text_len = 0;
	uint32_t start = 0;
	FILE *t;

	if (!prog) {
		fprintf(out, "%s: none\n", full);
		return;
	}
	t = open_memstream(&text, &text_len);
	if (!t)
		abort();
	fprintf(t, "  %zu instructions\n", len);
	for (uint32_t nr = 0; nr <= NR_LAST + 1; nr++) {
		if (nr <= NR_LAST)
			decisions(prog, len, nr, cur, sizeof(cur));
		if (nr > 0 && (nr > NR_LAST || !streq(cur, prev))) {
			if (start == nr - 1)
				fprintf(t, "  %u %s\n", start, prev);
			else
				fprintf(t, "  %u-%u %s\n", start, nr - 1, prev);
			start = nr;
		}
		memcpy(prev, cur, sizeof(prev));
	}
	fclose(t);
	section(out, full, text);
}

/* the policies' ${WORKSPACE}, ${HOME}, ${PWD}, with the ro directory tests/data's expect */
static char scratch[64];

static int dump_policy(FILE *out, const char *name, const char *label, const char *const *extra)
{
	static const char *const kv[] = {"tracer.kernel_view=false", "tracer.kernel_view=true"};
	PolicyVars vars = {.workspace = scratch, .home = scratch, .pwd = scratch};

	for (size_t k = 0; k < ARRAY_SIZE(kv); k++) {
		char *overrides[16] = {(char *) kv[k]};

		for (size_t i = 0; extra && extra[i] && i + 2 < ARRAY_SIZE(overrides); i++)
			overrides[i + 1] = (char *) extra[i];
		Policy *p = NULL;
		PolicyError err = {};
		TracerFilter *f = NULL;
		int r;

		r = policy_load(name, &vars, overrides, &p, &err);
		if (r < 0) {
			fprintf(stderr, "%s: %s:%u: %s\n", name, err.file, err.line, err.message);
			return r;
		}
		r = tracer_filter_build(p, 1000, 1000, &f);
		if (r < 0) {
			fprintf(stderr, "%s: filter: %s\n", name, strerror(-r));
			policy_free(p);
			return r;
		}
		{
			_cleanup_free_ char *block = strdup_printf("%s %s", label, kv[k]);
			_cleanup_free_ char *slots_label = strdup_printf("%s slots", block);
			char *text = NULL;
			size_t text_len = 0;
			FILE *t = open_memstream(&text, &text_len);

			if (!t || !block || !slots_label)
				abort();
			dump_slots(t, f);
			fclose(t);
			section(out, slots_label, text);
			dump_prog(out, block, "emulated", f->prog, f->len);
			dump_prog(out, block, "noipc", f->noipc_prog, f->noipc_len);
			dump_prog(out, block, "userns", f->userns_prog, f->userns_len);
			dump_prog(out, block, "kview", f->kview_prog, f->kview_len);
			dump_prog(out, block, "kview-noipc", f->kview_noipc_prog,
				  f->kview_noipc_len);
			if (f->kview_prog) {
				r = tracer_filter_set_pidns(f);
				if (r < 0) {
					tracer_filter_free(f);
					policy_free(p);
					return r;
				}
				dump_prog(out, block, "kview-pidns", f->kview_prog, f->kview_len);
				dump_prog(out, block, "kview-noipc-pidns", f->kview_noipc_prog,
					  f->kview_noipc_len);
			}
		}
		tracer_filter_free(f);
		policy_free(p);
	}
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The *.toml files of dir, sorted. */
static int list_toml(const char *dir, char ***ret, size_t *ret_n)
{
	char **v = NULL;
	size_t n = 0;
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);

		if (l < 6 || !streq(e->d_name + l - 5, ".toml"))
			continue;
		v = realloc(v, (n + 1) * sizeof(*v));
		if (!v)
			abort();
		v[n] = strdup(e->d_name);
		if (!v[n++])
			abort();
	}
	closedir(d);
	qsort(v, n, sizeof(*v), cmp_names);
	*ret = v;
	*ret_n = n;
	return 0;
}

static const struct {
	const char *label;
	const char *overrides[8];
} variations[] = {
	{"standard+syscalls",
	 {"syscalls.errno=\"EACCES\"", "syscalls.allow=[\"ptrace\", \"kill\", \"openat\", \"bpf\"]",
	  "syscalls.deny=[\"getpid\", \"mkdir\", \"clone:ENOMEM\", \"fcntl\"]",
	  "syscalls.kill=[\"reboot\", \"sendto\", \"fork\"]",
	  "syscalls.log=[\"getppid\", \"openat\", \"vfork\", \"ioctl\", \"shmget\", \"setuid\"]",
	  "limits.disk=\"1G\""}},
	{"standard+no-ptrace", {"tracer.ptrace=\"never\"", "limits.disk=\"1G\""}},
	{"standard+no-budgets",
	 {"tracer.ptrace=\"always\"", "limits.tasks=\"unlimited\"", "limits.cpu_time=\"unlimited\"",
	  "limits.disk=\"unlimited\""}},
	{"standard+network",
	 {"network.mode=\"allowlist\"", "network.allow=[\"example.com:443\"]",
	  "tracer.ptrace=\"auto\""}},
	/* loopback in a network namespace of its own: the kernel view's programs let the
	 * address calls run in the kernel (tracer/filter.c, net_runs_in_kernel) */
	{"standard+loopback-netns",
	 {"network.mode=\"loopback\"", "network.unshare=true", "syscalls.log=[\"sendmmsg\"]"}},
};

static int dump_all(FILE *out)
{
	const struct scmp_version *ver = seccomp_version();
	static const char *const dirs[] = {SOURCE_ROOT "/policies", SOURCE_ROOT "/tests/data"};

	fprintf(out, "# libseccomp %u.%u.%u, pidfd_getfd %s\n", ver->major, ver->minor, ver->micro,
		pidfd_getfd_usable() ? "usable" : "refused");
	for (size_t d = 0; d < ARRAY_SIZE(dirs); d++) {
		char **names = NULL;
		size_t n = 0;
		int r = list_toml(dirs[d], &names, &n);

		if (r < 0)
			return r;
		for (size_t i = 0; i < n; i++) {
			_cleanup_free_ char *path = strdup_printf("%s/%s", dirs[d], names[i]);
			_cleanup_free_ char *label = strdup_printf(
				"%s/%s", d == 0 ? "policies" : "tests/data", names[i]);

			r = dump_policy(out, path, label, NULL);
			free(names[i]);
			if (r < 0)
				return r;
		}
		free(names);
	}
	/* what a policy's [syscalls], errno, budgets and ptrace mode make of the table */
	for (size_t i = 0; i < ARRAY_SIZE(variations); i++) {
		int r = dump_policy(out, "standard", variations[i].label, variations[i].overrides);

		if (r < 0)
			return r;
	}
	return 0;
}

int main(int argc, char **argv)
{
	/* freed on every return: the sanitized step of run-all runs this with LeakSanitizer */
	_cleanup_free_ char *buf = NULL, *want = NULL;
	size_t len = 0, want_len = 0;
	FILE *out, *in;
	int r;

	log_max_level = LOG_LEVEL_ERROR;
	if (argc != 3 || (!streq(argv[1], "--write") && !streq(argv[1], "--check"))) {
		fprintf(stderr, "usage: %s --write|--check FILE\n", argv[0]);
		return 2;
	}
	snprintf(scratch, sizeof(scratch), "/tmp/filter-golden-XXXXXX");
	if (!mkdtemp(scratch))
		return 2;
	{
		_cleanup_free_ char *ro = strdup_printf("%s/ro", scratch);

		if (!ro || mkdir(ro, 0755) < 0)
			return 2;
	}
	out = open_memstream(&buf, &len);
	if (!out)
		return 2;
	r = dump_all(out);
	{
		_cleanup_free_ char *ro = strdup_printf("%s/ro", scratch);

		(void) rmdir(ro);
		(void) rmdir(scratch);
	}
	fclose(out);
	if (r < 0) {
		fprintf(stderr, "dump failed: %s\n", strerror(-r));
		return 1;
	}
	if (streq(argv[1], "--write")) {
		out = fopen(argv[2], "we");
		if (!out || fwrite(buf, 1, len, out) != len || fclose(out) != 0) {
			fprintf(stderr, "%s: %m\n", argv[2]);
			return 1;
		}
		return 0;
	}
	in = fopen(argv[2], "re");
	if (!in) {
		fprintf(stderr, "%s: %m\n", argv[2]);
		return 1;
	}
	out = open_memstream(&want, &want_len);
	for (int c; (c = fgetc(in)) != EOF;)
		fputc(c, out);
	fclose(in);
	fclose(out);
	if (want_len == len && memcmp(want, buf, len) == 0) {
		printf("filter decisions: identical to %s\n", argv[2]);
		return 0;
	}
	/* the first line says what was dumped on: another libseccomp or pidfd_getfd state
	 * gives another dump, which is no finding */
	if (strncmp(want, buf, (size_t) (strchr(buf, '\n') - buf)) != 0) {
		printf("skip: dump made with '%.*s', here '%.*s'\n",
		       (int) (strchr(want, '\n') - want), want, (int) (strchr(buf, '\n') - buf),
		       buf);
		return 77;
	}
	for (char *a = want, *b = buf, n = 0; a && b && n < 20;) {
		char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
		int la = ea ? (int) (ea - a) : (int) strlen(a),
		    lb = eb ? (int) (eb - b) : (int) strlen(b);

		if (la != lb || strncmp(a, b, (size_t) la) != 0) {
			printf("- %.*s\n+ %.*s\n", la, a, lb, b);
			n++;
		}
		a = ea ? ea + 1 : NULL;
		b = eb ? eb + 1 : NULL;
	}
	printf("filter decisions differ from %s: regenerate with --write only for a deliberate "
	       "change\n",
	       argv[2]);
	return 1;
}
