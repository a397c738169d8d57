/* SPDX-License-Identifier: MIT */
/*
 * The effective policy as TOML. Everything is written out explicitly (defaults included) and
 * variables are already expanded, so the output loads on its own, without extends or -w, to
 * the same policy: writing it again gives the same bytes (tests/unit/policy checks this).
 */
#include "policy/policy.h"

#include <string.h>

#include "common/macros.h"
#include "common/util.h"
#include "policy/internal.h"

/* A TOML basic string; path-valued strings double '$' so that "$$" reads back as '$'. */
void policy_write_string(FILE *out, const char *s, bool path)
{
	fputc('"', out);
	for (const unsigned char *c = (const unsigned char *) s; *c; c++) {
		switch (*c) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		case '$':
			fputs(path ? "$$" : "$", out);
			break;
		default:
			if (*c < 0x20 || *c == 0x7f)
				fprintf(out, "\\u%04x", *c);
			else
				fputc(*c, out);
		}
	}
	fputc('"', out);
}

static void write_kv_string(FILE *out, const char *key, const char *s, bool path)
{
	fprintf(out, "%s = ", key);
	policy_write_string(out, s, path);
	fputc('\n', out);
}

static void write_strv(FILE *out, char *const *v, bool path)
{
	fputc('[', out);
	for (size_t i = 0; v && v[i]; i++) {
		if (i)
			fputs(", ", out);
		/* abstract socket names are not paths: no variables in them */
		policy_write_string(out, v[i], path && v[i][0] != '@');
	}
	fputc(']', out);
}

static void write_kv_strv(FILE *out, const char *key, char *const *v, bool path)
{
	fprintf(out, "%s = ", key);
	write_strv(out, v, path);
	fputc('\n', out);
}

static void write_tristate(FILE *out, const char *key, int v)
{
	fprintf(out, "%s = %s\n", key, v < 0 ? "\"auto\"" : v ? "true" : "false");
}

static void write_select(FILE *out, const char *key, AuditSelect s, char *const *list)
{
	if (s == AUDIT_SELECT_LIST)
		write_kv_strv(out, key, list, false);
	else
		write_kv_string(out, key, audit_select_to_string(s), false);
}

static const char *errno_name(int e)
{
	const char *n = errno_to_name(e);
	return n ? n : "EPERM";
}

int policy_write_toml(const Policy *p, FILE *out)
{
	char buf[64];

	fputs("# Effective sbxtrace policy: presets, variables and overrides applied.\n", out);

	fputs("\n[sandbox]\n", out);
	write_kv_string(out, "name", p->name ? p->name : "policy", false);
	if (p->description)
		write_kv_string(out, "description", p->description, false);

	for (size_t i = 0; i < p->n_mounts; i++) {
		const PolicyMount *m = &p->mounts[i];

		fputs("\n[[mount]]\n", out);
		write_kv_string(out, "path", m->path, true);
		if (m->source)
			write_kv_string(out, "source", m->source, true);
		write_kv_string(out, "mode", mount_mode_to_string(m->mode), false);
		if (m->mode == MOUNT_TMP)
			fprintf(out, "keep = %s\n", m->keep ? "true" : "false");
	}

	for (size_t i = 0; i < p->n_rules; i++) {
		const PolicyRule *r = &p->rules[i];

		fputs("\n[[rule]]\n", out);
		write_kv_string(out, "path", r->glob, true);
		if (r->access != RULE_ACCESS_UNSET)
			write_kv_string(out, "access", rule_access_to_string(r->access), false);
		if (r->level != SENSITIVITY_NONE)
			write_kv_string(out, "level", sensitivity_to_string(r->level), false);
		if ((r->access == RULE_ACCESS_ASK || r->access == RULE_ACCESS_ASK_WRITE) &&
		    r->ask_timeout_ms != 30000) {
			policy_format_duration_ms(r->ask_timeout_ms, buf, sizeof(buf));
			write_kv_string(out, "ask_timeout", buf, false);
		}
	}

	fputs("\n[process]\n", out);
	if (p->process.cwd)
		write_kv_string(out, "cwd", p->process.cwd, true);
	fprintf(out, "tty = %s\n", p->process.tty ? "true" : "false");
	fprintf(out, "pty = %s\n", p->process.pty ? "true" : "false");
	fputs("env = { ", out);
	if (p->process.env_keep) {
		fputs("keep = ", out);
		write_strv(out, p->process.env_keep, false);
		fputs(", ", out);
	}
	fputs("set = {", out);
	for (char **e = p->process.env_set; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		fprintf(out, "%s %.*s = ", e == p->process.env_set ? "" : ",", (int) (eq - *e), *e);
		policy_write_string(out, eq + 1, false);
	}
	fputs(p->process.env_set && *p->process.env_set ? " } }\n" : "} }\n", out);

	if (p->exec_allow || p->exec_deny || p->exec_ask_unlisted ||
	    p->exec_ask_timeout_ms != 30000) {
		fputs("\n[exec]\n", out);
		if (p->exec_allow)
			write_kv_strv(out, "allow", p->exec_allow, true);
		if (p->exec_deny)
			write_kv_strv(out, "deny", p->exec_deny, true);
		if (p->exec_ask_unlisted)
			write_kv_string(out, "unlisted", "ask", false);
		if (p->exec_ask_unlisted || p->exec_ask_timeout_ms != 30000) {
			policy_format_duration_ms(p->exec_ask_timeout_ms, buf, sizeof(buf));
			write_kv_string(out, "ask_timeout", buf, false);
		}
	}

	fputs("\n[network]\n", out);
	write_kv_string(out, "mode", net_mode_to_string(p->network.mode), false);
	if (p->network.n_allow) {
		fputs("allow = [", out);
		for (size_t i = 0; i < p->network.n_allow; i++) {
			if (i)
				fputs(", ", out);
			policy_write_string(out, p->network.allow[i].text, false);
		}
		fputs("]\n", out);
	}
	if (p->network.dns)
		write_kv_strv(out, "dns", p->network.dns, false);
	if (p->network.unix_sockets)
		write_kv_strv(out, "unix", p->network.unix_sockets, true);
	{
		bool any = false;

		for (int s = SENSITIVITY_INTERNAL; s < _SENSITIVITY_MAX; s++) {
			if (!p->network.has_ratchet[s])
				continue;
			fprintf(out, "%s%s = \"%s\"", any ? ", " : "ratchet = { ",
				sensitivity_to_string((Sensitivity) s),
				net_mode_to_string(p->network.ratchet[s]));
			any = true;
		}
		if (any)
			fputs(" }\n", out);
	}
	write_tristate(out, "unshare", p->network.unshare_netns);
	write_kv_string(out, "unlisted", p->network.ask_unlisted ? "ask" : "deny", false);
	if (p->network.ask_unlisted || p->network.ask_timeout_ms != 30000) {
		policy_format_duration_ms(p->network.ask_timeout_ms, buf, sizeof(buf));
		write_kv_string(out, "ask_timeout", buf, false);
	}
	write_kv_string(out, "connect_errno", errno_name(p->network.connect_errno), false);
	write_kv_string(out, "socket_errno", errno_name(p->network.socket_errno), false);

	fputs("\n[limits]\n", out);
#define DURATION(key, v)                                                                           \
	if ((v) != LIMIT_UNSET) {                                                                  \
		policy_format_duration_ms((v), buf, sizeof(buf));                                  \
		write_kv_string(out, key, buf, false);                                             \
	}
#define SIZE(key, v)                                                                               \
	if ((v) != LIMIT_UNSET) {                                                                  \
		policy_format_size((v), buf, sizeof(buf));                                         \
		write_kv_string(out, key, buf, false);                                             \
	}
#define COUNT(key, v)                                                                              \
	if ((v) != LIMIT_UNSET)                                                                    \
		fprintf(out, "%s = %llu\n", key, (unsigned long long) (v));
	DURATION("wall_time", p->limits.wall_time_ms);
	DURATION("cpu_time", p->limits.cpu_time_ms);
	SIZE("memory", p->limits.memory);
	COUNT("tasks", p->limits.tasks);
	SIZE("file_size", p->limits.file_size);
	COUNT("open_files", p->limits.open_files);
	SIZE("disk", p->limits.disk);
	SIZE("output", p->limits.output);
	COUNT("cpus", p->limits.cpus);
	DURATION("kill_grace", p->limits.kill_grace_ms);
#undef DURATION
#undef SIZE
#undef COUNT

	fputs("\n[syscalls]\n", out);
	write_kv_string(out, "errno", errno_name(p->deny_errno), false);
	for (int a = 0; a < _SYSCALL_ACTION_MAX; a++) {
		size_t n = 0;

		for (size_t i = 0; i < p->n_syscalls; i++) {
			const PolicySyscall *s = &p->syscalls[i];

			if ((int) s->action != a)
				continue;
			if (n++ == 0)
				fprintf(out, "%s = [", syscall_action_to_string((SyscallAction) a));
			else
				fputs(", ", out);
			fprintf(out, "\"%s", s->name);
			if (s->action == SYSCALL_ACTION_DENY)
				fprintf(out, ":%s", errno_name(s->error));
			fputc('"', out);
		}
		if (n)
			fputs("]\n", out);
	}

	fputs("\n[tracer]\n", out);
	write_kv_string(out, "ptrace", ptrace_mode_to_string(p->ptrace), false);
	write_tristate(out, "landlock", p->landlock);
	write_tristate(out, "kernel_view", p->kernel_view);

	fputs("\n[audit]\n", out);
	if (p->audit.log)
		write_kv_string(out, "log", p->audit.log, true);
	if (p->audit.events == AUDIT_EVENT_ALL)
		write_kv_string(out, "events", "all", false);
	else {
		size_t n = 0;

		fputs("events = [", out);
		for (unsigned bit = 1; bit < AUDIT_EVENT_ALL; bit <<= 1)
			if (p->audit.events & bit)
				fprintf(out, "%s\"%s\"", n++ ? ", " : "",
					audit_event_to_string(bit));
		fputs("]\n", out);
	}
	write_select(out, "backtrace", p->audit.backtrace, p->audit.backtrace_syscalls);
	fprintf(out, "backtrace_depth = %u\n", p->audit.backtrace_depth);
	write_select(out, "disassembly", p->audit.disassembly, p->audit.disassembly_syscalls);
	fprintf(out, "trace = %s\n", p->audit.trace ? "true" : "false");

	fflush(out);
	return ferror(out) ? -EIO : 0;
}
