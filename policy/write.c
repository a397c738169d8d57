/* SPDX-License-Identifier: MIT */
/*
 * The effective policy as TOML. Everything is written out explicitly (defaults included) and
 * variables are already expanded, so the output loads on its own, without extends or -w, to
 * the same policy: writing it again gives the same bytes (tests/unit/policy checks this).
 * The keys and their order come from the schema (schema.c); the few whose row says
 * SCHEMA_WRITE_CUSTOM are written by write_custom().
 */
#include "policy/policy.h"

#include <assert.h>
#include <string.h>

#include "common/macros.h"
#include "common/util.h"
#include "policy/internal.h"
#include "policy/schema.h"

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

/* ----- keys of a regular type (schema.h) ------------------------------------------------ */

/* Whether key k of base (the policy, or an entry of an array of tables) is written at all
 * (SCHEMA_WRITE_CUSTOM: write_custom() decides). */
static bool key_written(const void *base, const SchemaKey *k)
{
	switch (k->write) {
	case SCHEMA_WRITE_IF_SET:
		switch (k->type) {
		case SCHEMA_DURATION:
		case SCHEMA_SIZE:
		case SCHEMA_COUNT:
			return *SCHEMA_FIELD(base, k, const uint64_t) != LIMIT_UNSET;
		case SCHEMA_STRV:
			return *SCHEMA_FIELD(base, k, char **const) != NULL;
		default:
			return *SCHEMA_FIELD(base, k, char *const) != NULL;
		}
	case SCHEMA_WRITE_IF_NONZERO:
		if (k->type == SCHEMA_BOOL || (k->flags & SCHEMA_F_BOOL_FIELD))
			return *SCHEMA_FIELD(base, k, const bool);
		return *SCHEMA_FIELD(base, k, const int) != 0;
	case SCHEMA_WRITE_ASK_TIMEOUT:
		return *SCHEMA_FIELD2(base, k, const bool) ||
		       *SCHEMA_FIELD(base, k, const uint64_t) != 30000;
	case SCHEMA_WRITE_NEVER:
		return false;
	default:
		return true;
	}
}

static void write_events(FILE *out, const char *key, unsigned events)
{
	size_t n = 0;

	if (events == AUDIT_EVENT_ALL) {
		write_kv_string(out, key, "all", false);
		return;
	}
	fprintf(out, "%s = [", key);
	for (unsigned bit = 1; bit < AUDIT_EVENT_ALL; bit <<= 1)
		if (events & bit)
			fprintf(out, "%s\"%s\"", n++ ? ", " : "", audit_event_to_string(bit));
	fputs("]\n", out);
}

/* Writes key k of a regular type from its field in base. */
static void write_key(FILE *out, const void *base, const SchemaKey *k)
{
	char buf[64];
	int i;

	switch (k->type) {
	case SCHEMA_STRING: {
		const char *s = *SCHEMA_FIELD(base, k, char *const);

		write_kv_string(out, k->name, s ? s : k->unset, false);
		break;
	}
	case SCHEMA_BOOL:
		fprintf(out, "%s = %s\n", k->name,
			*SCHEMA_FIELD(base, k, const bool) ? "true" : "false");
		break;
	case SCHEMA_ENUM:
		i = k->flags & SCHEMA_F_BOOL_FIELD ? *SCHEMA_FIELD(base, k, const bool)
						   : *SCHEMA_FIELD(base, k, const int);
		assert(i >= 0 && i < k->n);
		write_kv_string(out, k->name, k->names[i], false);
		break;
	case SCHEMA_TRISTATE:
		write_tristate(out, k->name, *SCHEMA_FIELD(base, k, const int));
		break;
	case SCHEMA_ERRNO:
		write_kv_string(out, k->name, errno_name(*SCHEMA_FIELD(base, k, const int)), false);
		break;
	case SCHEMA_UINT:
		fprintf(out, "%s = %u\n", k->name, *SCHEMA_FIELD(base, k, const unsigned));
		break;
	case SCHEMA_DURATION:
	case SCHEMA_TIMEOUT:
		policy_format_duration_ms(*SCHEMA_FIELD(base, k, const uint64_t), buf, sizeof(buf));
		write_kv_string(out, k->name, buf, false);
		break;
	case SCHEMA_SIZE:
		policy_format_size(*SCHEMA_FIELD(base, k, const uint64_t), buf, sizeof(buf));
		write_kv_string(out, k->name, buf, false);
		break;
	case SCHEMA_COUNT:
		fprintf(out, "%s = %llu\n", k->name,
			(unsigned long long) *SCHEMA_FIELD(base, k, const uint64_t));
		break;
	case SCHEMA_VPATH:
	case SCHEMA_HPATH:
	case SCHEMA_GLOB:
		write_kv_string(out, k->name, *SCHEMA_FIELD(base, k, char *const), true);
		break;
	case SCHEMA_STRV:
		write_kv_strv(out, k->name, *SCHEMA_FIELD(base, k, char **const),
			      k->item == SCHEMA_ITEM_GLOB || k->item == SCHEMA_ITEM_UNIX);
		break;
	case SCHEMA_SELECT:
		write_select(out, k->name, *SCHEMA_FIELD(base, k, const AuditSelect),
			     *SCHEMA_FIELD2(base, k, char **const));
		break;
	case SCHEMA_EVENTS:
		write_events(out, k->name, *SCHEMA_FIELD(base, k, const unsigned));
		break;
	default:
		assert(!"a key of a type write_key() does not know");
	}
}

/* ----- keys the sections write themselves ----------------------------------------------- */

/* mount.source: none for tmp; keep: for tmp only */
static void write_mount_key(FILE *out, const PolicyMount *m, const SchemaKey *k)
{
	if (streq(k->name, "source") && m->source)
		write_kv_string(out, "source", m->source, true);
	else if (streq(k->name, "keep") && m->mode == MOUNT_TMP)
		fprintf(out, "keep = %s\n", m->keep ? "true" : "false");
}

/* rule.ask_timeout: for ask and ask-write, when not the default */
static void write_rule_key(FILE *out, const PolicyRule *r, const SchemaKey *k)
{
	char buf[64];

	assert(streq(k->name, "ask_timeout"));
	if ((r->access == RULE_ACCESS_ASK || r->access == RULE_ACCESS_ASK_WRITE) &&
	    r->ask_timeout_ms != 30000) {
		policy_format_duration_ms(r->ask_timeout_ms, buf, sizeof(buf));
		write_kv_string(out, "ask_timeout", buf, false);
	}
}

/* process.env as an inline table: keep (when set), then set */
static void write_env(FILE *out, const Policy *p)
{
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
}

static void write_net_allow(FILE *out, const Policy *p)
{
	if (!p->network.n_allow)
		return;
	fputs("allow = [", out);
	for (size_t i = 0; i < p->network.n_allow; i++) {
		if (i)
			fputs(", ", out);
		policy_write_string(out, p->network.allow[i].text, false);
	}
	fputs("]\n", out);
}

static void write_ratchet(FILE *out, const Policy *p)
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

/* syscalls.allow, deny, kill, log: the entries of that action */
static void write_syscall_action(FILE *out, const Policy *p, SyscallAction a)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_syscalls; i++) {
		const PolicySyscall *s = &p->syscalls[i];

		if (s->action != a)
			continue;
		if (n++ == 0)
			fprintf(out, "%s = [", syscall_action_to_string(a));
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

/* A key whose row says SCHEMA_WRITE_CUSTOM, of base (p, or the entry being written). */
static void write_custom(FILE *out, const Policy *p, const void *base, const SchemaSection *s,
			 const SchemaKey *k)
{
	if (streq(s->name, "mount"))
		write_mount_key(out, base, k);
	else if (streq(s->name, "rule"))
		write_rule_key(out, base, k);
	else if (streq(s->name, "process") && streq(k->name, "env"))
		write_env(out, p);
	else if (streq(s->name, "network") && streq(k->name, "allow"))
		write_net_allow(out, p);
	else if (streq(s->name, "network") && streq(k->name, "ratchet"))
		write_ratchet(out, p);
	else if (streq(s->name, "syscalls")) {
		for (int a = 0; a < _SYSCALL_ACTION_MAX; a++)
			if (streq(k->name, policy_syscall_action_names[a]))
				write_syscall_action(out, p, (SyscallAction) a);
	} else
		assert(!"a custom key write_custom() does not know");
}

/* The keys of one table of section s, from base: in the order of the table,
 * SCHEMA_F_WRITE_LAST ones at the end. */
static void write_keys(FILE *out, const Policy *p, const void *base, const SchemaSection *s)
{
	for (int last = 0; last <= 1; last++)
		for (size_t i = 0; i < s->n_keys; i++) {
			const SchemaKey *k = &s->keys[i];

			if (!!(k->flags & SCHEMA_F_WRITE_LAST) != last || !key_written(base, k))
				continue;
			if (k->write == SCHEMA_WRITE_CUSTOM)
				write_custom(out, p, base, s, k);
			else
				write_key(out, base, k);
		}
}

/* One section: a [section] table, or an [[array]] of them. */
static void write_section(FILE *out, const Policy *p, const SchemaSection *s)
{
	if (streq(s->name, "mount")) {
		for (size_t i = 0; i < p->n_mounts; i++) {
			fputs("\n[[mount]]\n", out);
			write_keys(out, p, &p->mounts[i], s);
		}
		return;
	}
	if (streq(s->name, "rule")) {
		for (size_t i = 0; i < p->n_rules; i++) {
			fputs("\n[[rule]]\n", out);
			write_keys(out, p, &p->rules[i], s);
		}
		return;
	}
	if (s->write_if_any) {
		bool any = false;

		for (size_t i = 0; i < s->n_keys; i++)
			any = any || key_written(p, &s->keys[i]);
		if (!any)
			return;
	}
	fprintf(out, "\n[%s]\n", s->name);
	write_keys(out, p, p, s);
}

int policy_write_toml(const Policy *p, FILE *out)
{
	const SchemaSection *sections;
	size_t n;

	fputs("# Effective sbxtrace policy: presets, variables and overrides applied.\n", out);

	/* the sections in the order of the schema; the top level (extends) is already applied,
	 * and subsections are written inline by their parent's custom writer */
	sections = policy_schema_sections(&n);
	for (size_t i = 0; i < n; i++) {
		const SchemaSection *s = &sections[i];

		if (!*s->name || strchr(s->name, '.'))
			continue;
		write_section(out, p, s);
	}

	fflush(out);
	return ferror(out) ? -EIO : 0;
}
