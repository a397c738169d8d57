/* SPDX-License-Identifier: MIT */
/*
 * Loading a policy: read the TOML file, apply the files it extends first (depth first, in
 * order), then its own keys, then the -s overrides; expand variables in path-valued strings;
 * validate every key as it is applied so that each error points at file:line:column and the
 * dotted key. Every key is a row of the key table (schema.c), which apply_section() parses
 * sections by; docs/policy.md is the reference for every key (test-policy-schema checks it).
 *
 * Merging: scalars and plain lists of a later file replace the earlier value; tables that map
 * names (process.env.set, network.ratchet) merge by name; [[mount]] entries are appended, a
 * later mount at the same path replacing the earlier one; [[rule]] entries are appended (see
 * policy_rule_lookup() for which applies); [syscalls] entries are appended, a later entry for
 * the same syscall replacing the earlier one.
 */
#include "policy/policy.h"

#include <assert.h>
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#include "common/macros.h"
#include "common/syscall-names.h"
#include "common/util.h"
#include "policy/internal.h"
#include "policy/schema.h"
#include "policy/toml.h"

typedef struct Loader {
	Policy *p;
	const PolicyVars *vars;
	PolicyError *err;
	char *stack[POLICY_EXTENDS_DEPTH_MAX + 1]; /* real paths being loaded: cycle check */
	size_t depth;
	/* where each key with SCHEMA_F_WHERE was last set, for the checks of finish() that
	 * point at it (network.mode, network.unshare, exec.unlisted, process.cwd) */
	struct {
		const SchemaKey *key;
		PolicyError at;
	} where[8];
	size_t n_where;
} Loader;

typedef struct Doc {
	Loader *l;
	const char *file;   /* for error messages */
	const char *dir;    /* relative paths start here */
	bool top;	    /* the file named on the command line (or an override) */
	bool override;	    /* -s: no line numbers */
	char **mount_paths; /* defined by this file, with their lines: duplicates are errors */
	unsigned *mount_lines;
	char **syscall_names;
	unsigned *syscall_lines;
} Doc;

static void doc_done(Doc *d)
{
	d->mount_paths = strv_free(d->mount_paths);
	d->syscall_names = strv_free(d->syscall_names);
	free(d->mount_lines);
	free(d->syscall_lines);
	d->mount_lines = d->syscall_lines = NULL;
}

/* Messages quote what the policy says; keep them one line of printable text. */
static void escape_line(const char *in, char *out, size_t size)
{
	size_t n = 0;

	for (const unsigned char *c = (const unsigned char *) in; *c && n + 5 < size; c++) {
		if (*c == '\n') {
			out[n++] = '\\';
			out[n++] = 'n';
		} else if (*c < 0x20 || *c == 0x7f)
			n += (size_t) snprintf(out + n, size - n, "\\x%02x", *c);
		else
			out[n++] = (char) *c;
	}
	out[n] = '\0';
}

_printf_(6, 7) static int fail(Doc *d, unsigned line, unsigned column, const char *key, int error,
			       const char *fmt, ...)
{
	PolicyError *e = d->l->err;
	char buf[sizeof(e->message) * 2];
	va_list ap;

	memset(e, 0, sizeof(*e));
	escape_line(d->file, e->file, sizeof(e->file));
	if (!d->override) {
		e->line = line;
		e->column = column;
	}
	escape_line(key ? key : "", e->key, sizeof(e->key));
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	escape_line(buf, e->message, sizeof(e->message));
	return error;
}

#define fail_at(d, v, key, ...) fail((d), (v)->line, (v)->column, (key), -EINVAL, __VA_ARGS__)

static int oom(Doc *d)
{
	return fail(d, 0, 0, NULL, -ENOMEM, "out of memory");
}

/* The nearest name in known (NULL-terminated) if close enough to be a typo. */
static const char *suggest(const char *word, const char *const *known)
{
	const char *best = NULL;
	unsigned best_d = UINT_MAX;

	/* ties go to a name of the same length: "unmae" is a transposed "uname", not "munmap" */
	for (; *known; known++) {
		unsigned dist = edit_distance(word, *known) * 2 + (strlen(*known) != strlen(word));
		if (dist < best_d) {
			best_d = dist;
			best = *known;
		}
	}
	best_d /= 2;
	if (best && best_d <= MAX(2u, (unsigned) strlen(word) / 3) && best_d < strlen(word))
		return best;
	return NULL;
}

static void join_key(char *buf, size_t size, const char *prefix, const char *key)
{
	if (prefix && *prefix)
		snprintf(buf, size, "%s.%s", prefix, key);
	else
		snprintf(buf, size, "%s", key);
}

/* A key the schema does not list in section (schema.h); prefix is how the error names the
 * section ("mount[2]"). */
static int unknown_key(Doc *d, const TomlKeyValue *kv, const char *prefix, const char *section)
{
	const char *known[SCHEMA_KEYS_MAX];
	char key[128];
	const char *s;

	policy_schema_key_names(policy_schema_section(section), known);
	s = suggest(kv->key, known);

	join_key(key, sizeof(key), prefix, kv->key);
	if (s)
		return fail(d, kv->line, kv->column, key, -EINVAL,
			    "unknown key '%.64s'; did you mean '%s'?", kv->key, s);
	return fail(d, kv->line, kv->column, key, -EINVAL, "unknown key '%.64s'", kv->key);
}

static const char *type_article(TomlType t)
{
	return t == TOML_INTEGER || t == TOML_ARRAY ? "an" : "a";
}

static int want_type(Doc *d, const TomlValue *v, const char *key, TomlType t)
{
	if (v->type == t)
		return 0;
	return fail_at(d, v, key, "expected %s %s, got %s %s", type_article(t), toml_type_name(t),
		       type_article(v->type), toml_type_name(v->type));
}

static int want_string(Doc *d, const TomlValue *v, const char *key)
{
	int r = want_type(d, v, key, TOML_STRING);
	if (r < 0)
		return r;
	if (strlen(v->str.ptr) != v->str.len)
		return fail_at(d, v, key, "must not contain NUL characters");
	return 0;
}

/* ----- enums ---------------------------------------------------------------------------- */

#define ENUM_TO_STRING(names, v) ((v) >= 0 && (size_t) (v) < ARRAY_SIZE(names) ? names[v] : NULL)

const char *mount_mode_to_string(MountMode m)
{
	return ENUM_TO_STRING(policy_mount_mode_names, m);
}
const char *net_mode_to_string(NetMode m)
{
	return ENUM_TO_STRING(policy_net_mode_names, m);
}
const char *sensitivity_to_string(Sensitivity s)
{
	return ENUM_TO_STRING(policy_sensitivity_names, s);
}
const char *rule_access_to_string(RuleAccess a)
{
	return ENUM_TO_STRING(policy_rule_access_names, a);
}
const char *syscall_action_to_string(SyscallAction a)
{
	return ENUM_TO_STRING(policy_syscall_action_names, a);
}
const char *ptrace_mode_to_string(PtraceMode m)
{
	return ENUM_TO_STRING(policy_ptrace_mode_names, m);
}
const char *audit_select_to_string(AuditSelect s)
{
	return ENUM_TO_STRING(policy_audit_select_names, s);
}
const char *audit_event_to_string(unsigned bit)
{
	for (size_t i = 0; i < ARRAY_SIZE(policy_audit_event_names); i++)
		if (bit == 1u << i)
			return policy_audit_event_names[i];
	return NULL;
}

NetMode net_mode_from_string(const char *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(policy_net_mode_names); i++)
		if (streq(s, policy_net_mode_names[i]))
			return (NetMode) i;
	return _NET_MODE_INVALID;
}

/* Parses a string value against names[first..n); the index or -EINVAL (error filled). */
static int want_enum(Doc *d, const TomlValue *v, const char *key, const char *const *names,
		     size_t first, size_t n)
{
	const char *list[16];
	char choices[160] = "";
	size_t k = 0;
	int r;

	r = want_string(d, v, key);
	if (r < 0)
		return r;
	for (size_t i = first; i < n; i++) {
		if (streq(v->str.ptr, names[i]))
			return (int) i;
		if (k < ARRAY_SIZE(list) - 1)
			list[k++] = names[i];
		if (strlen(choices) + strlen(names[i]) + 4 < sizeof(choices))
			strcat(strcat(choices, *choices ? ", " : ""), names[i]);
	}
	list[k] = NULL;
	const char *s = suggest(v->str.ptr, list);
	if (s)
		return fail_at(d, v, key, "unknown value '%.64s' (one of: %s); did you mean '%s'?",
			       v->str.ptr, choices, s);
	return fail_at(d, v, key, "unknown value '%.64s' (one of: %s)", v->str.ptr, choices);
}

/* true/false as a bool, or "auto"/"true"/"false" as a string: -1, 0, 1. */
static int want_tristate(Doc *d, const TomlValue *v, const char *key, int *ret)
{
	static const char *const names[] = {"false", "true", "auto"};
	int r;

	if (v->type == TOML_BOOL) {
		*ret = v->boolean ? 1 : 0;
		return 0;
	}
	if (v->type != TOML_STRING)
		return fail_at(d, v, key, "expected \"auto\", true or false, got %s %s",
			       type_article(v->type), toml_type_name(v->type));
	r = want_enum(d, v, key, names, 0, ARRAY_SIZE(names));
	if (r < 0)
		return r;
	*ret = r == 2 ? -1 : r;
	return 0;
}

static int want_errno(Doc *d, const TomlValue *v, const char *key, const char *name, int *ret)
{
	int e = errno_from_name(name);

	if (e < 0)
		return fail_at(d, v, key, "unknown errno name '%.32s' (e.g. EPERM, EACCES, ENOSYS)",
			       name);
	*ret = e;
	return 0;
}

/* ----- variables and paths -------------------------------------------------------------- */

static const char *const var_names[] = {"WORKSPACE", "HOME", "PWD", "RUNTIME_DIR", NULL};

/* Expands ${NAME} and "$$" (a literal '$') in a path-valued string. */
static int expand(Doc *d, const TomlValue *v, const char *key, char **ret)
{
	const PolicyVars *vars = d->l->vars;
	_cleanup_free_ char *out = NULL;
	size_t n = 0, cap = v->str.len + 1;
	int r;

	r = want_string(d, v, key);
	if (r < 0)
		return r;
	out = malloc(cap);
	if (!out)
		return oom(d);

	for (const char *s = v->str.ptr; *s;) {
		const char *val = NULL, *chunk;
		size_t len;

		if (s[0] == '$' && s[1] == '$') {
			chunk = "$";
			len = 1;
			s += 2;
		} else if (s[0] == '$' && s[1] == '{') {
			const char *close = strchr(s, '}');
			char name[64];

			if (!close)
				return fail_at(d, v, key, "'${' without a closing '}'");
			snprintf(name, sizeof(name), "%.*s", (int) MIN(close - s - 2, 63), s + 2);
			if (streq(name, "WORKSPACE")) {
				val = vars ? vars->workspace : NULL;
				if (!val)
					return fail_at(d, v, key,
						       "${WORKSPACE} is used but no workspace was "
						       "given (use -w DIR)");
				d->l->p->uses_workspace = true;
			} else if (streq(name, "HOME"))
				val = vars ? vars->home : NULL;
			else if (streq(name, "PWD"))
				val = vars ? vars->pwd : NULL;
			else if (streq(name, "RUNTIME_DIR"))
				val = vars ? vars->runtime_dir : NULL;
			else {
				const char *sg = suggest(name, var_names);
				if (sg)
					return fail_at(d, v, key,
						       "unknown variable '${%s}'; did you mean "
						       "'${%s}'?",
						       name, sg);
				return fail_at(d, v, key,
					       "unknown variable '${%s}' (known: ${WORKSPACE}, "
					       "${HOME}, ${PWD}, ${RUNTIME_DIR})",
					       name);
			}
			if (!val)
				return fail_at(d, v, key, "${%s} is used but not set", name);
			chunk = val;
			len = strlen(val);
			s = close + 1;
		} else {
			chunk = s;
			len = 1;
			s++;
		}
		if (n + len + 1 > cap) {
			char *t;
			cap = (n + len + 1) * 2;
			t = realloc(out, cap);
			if (!t)
				return oom(d);
			out = t;
		}
		memcpy(out + n, chunk, len);
		n += len;
	}
	out[n] = '\0';
	*ret = TAKE_PTR(out);
	return 0;
}

/* Lexical normalization of an absolute path in place: "//" and "." go, ".." pops (never
 * above "/") unless reject_dotdot, no trailing '/'. Returns false if ".." was rejected. */
static bool normalize_path(char *path, bool reject_dotdot)
{
	char *w = path;
	const char *r = path;

	while (*r) {
		const char *e;
		size_t len;

		while (*r == '/')
			r++;
		if (!*r)
			break;
		e = strchrnul(r, '/');
		len = (size_t) (e - r);
		if (len == 1 && r[0] == '.') {
			r = e;
			continue;
		}
		if (len == 2 && r[0] == '.' && r[1] == '.') {
			if (reject_dotdot)
				return false;
			while (w > path && *--w != '/')
				;
			r = e;
			continue;
		}
		*w++ = '/';
		memmove(w, r, len);
		w += len;
		r = e;
	}
	if (w == path)
		*w++ = '/';
	*w = '\0';
	return true;
}

/* A virtual path: expanded, absolute, normalized, no "..". */
static int virtual_path(Doc *d, const TomlValue *v, const char *key, char **ret)
{
	_cleanup_free_ char *s = NULL;
	int r;

	r = expand(d, v, key, &s);
	if (r < 0)
		return r;
	if (s[0] != '/')
		return fail_at(d, v, key, "'%.200s' is not an absolute path (must start with '/')",
			       s);
	if (strlen(s) >= PATH_MAX)
		return fail_at(d, v, key, "path too long");
	if (!normalize_path(s, true))
		return fail_at(d, v, key, "'%.200s' must not contain '..'", s);
	*ret = TAKE_PTR(s);
	return 0;
}

/* A host path: expanded, relative to the policy file's directory, normalized. */
static int host_path(Doc *d, const TomlValue *v, const char *key, char **ret)
{
	_cleanup_free_ char *s = NULL;
	int r;

	r = expand(d, v, key, &s);
	if (r < 0)
		return r;
	if (!*s)
		return fail_at(d, v, key, "empty path");
	if (s[0] != '/') {
		char *abs = strdup_printf("%s/%s", d->dir, s);
		if (!abs)
			return oom(d);
		free(s);
		s = abs;
	}
	if (strlen(s) >= PATH_MAX)
		return fail_at(d, v, key, "path too long");
	(void) normalize_path(s, false);
	*ret = TAKE_PTR(s);
	return 0;
}

static int glob_value(Doc *d, const TomlValue *v, const char *key, char **ret)
{
	_cleanup_free_ char *s = NULL;
	const char *why;
	int r;

	r = expand(d, v, key, &s);
	if (r < 0)
		return r;
	why = policy_glob_check(s);
	if (why)
		return fail_at(d, v, key, "bad glob '%.200s': %s", s, why);
	*ret = TAKE_PTR(s);
	return 0;
}

/* ----- lists ---------------------------------------------------------------------------- */

typedef int (*ItemFn)(Doc *d, const TomlValue *v, const char *key, char **ret);

static int plain_string(Doc *d, const TomlValue *v, const char *key, char **ret)
{
	int r = want_string(d, v, key);
	if (r < 0)
		return r;
	*ret = strdup(v->str.ptr);
	return *ret ? 0 : oom(d);
}

static int want_strv(Doc *d, const TomlValue *v, const char *key, ItemFn fn, char ***ret)
{
	char **out = NULL;
	int r;

	r = want_type(d, v, key, TOML_ARRAY);
	if (r < 0)
		return r;
	out = calloc(v->array.n + 1, sizeof(char *));
	if (!out)
		return oom(d);
	for (size_t i = 0; i < v->array.n; i++) {
		r = fn(d, v->array.items[i], key, &out[i]);
		if (r < 0) {
			strv_free(out);
			return r;
		}
	}
	*ret = out;
	return 0;
}

static void replace_strv(char ***slot, char **v)
{
	strv_free(*slot);
	*slot = v;
}

static int replace_string(Doc *d, char **slot, const char *s)
{
	char *t = strdup(s);
	if (!t)
		return oom(d);
	free(*slot);
	*slot = t;
	return 0;
}

/* ----- keys of a regular type (schema.h) ------------------------------------------------ */

static const SchemaKey *schema_key(const char *section, const char *name)
{
	return policy_schema_key(policy_schema_section(section), name);
}

/* Remembers where key k was set (value v, dotted name key), for finish(). */
static void remember(Doc *d, const SchemaKey *k, const TomlValue *v, const char *key)
{
	Loader *l = d->l;
	size_t i;

	for (i = 0; i < l->n_where; i++)
		if (l->where[i].key == k)
			break;
	if (i == l->n_where) {
		assert(l->n_where < ARRAY_SIZE(l->where));
		l->where[l->n_where++].key = k;
	}
	(void) fail_at(d, v, key, "-");
	l->where[i].at = *l->err;
}

/* Where section.name was last set; all zero when it was not. */
static PolicyError where_set(const Loader *l, const char *section, const char *name)
{
	const SchemaKey *k = schema_key(section, name);

	for (size_t i = 0; i < l->n_where; i++)
		if (l->where[i].key == k)
			return l->where[i].at;
	return (PolicyError){0};
}

static int apply_limit(Doc *d, const TomlValue *v, const char *key, const SchemaKey *k,
		       uint64_t *slot);
static int want_ask_timeout(Doc *d, const TomlValue *v, const char *key, uint64_t *ret_ms);
static int want_select(Doc *d, const TomlValue *v, const char *key, AuditSelect *ret,
		       char ***ret_list);
static int want_events(Doc *d, const TomlValue *v, const char *key, unsigned *ret);
static int env_keep_item(Doc *d, const TomlValue *v, const char *key, char **ret);
static int dns_item(Doc *d, const TomlValue *v, const char *key, char **ret);
static int unix_item(Doc *d, const TomlValue *v, const char *key, char **ret);

static const ItemFn item_fns[_SCHEMA_ITEM_MAX] = {
	[SCHEMA_ITEM_GLOB] = glob_value,
	[SCHEMA_ITEM_DNS] = dns_item,
	[SCHEMA_ITEM_UNIX] = unix_item,
	[SCHEMA_ITEM_ENV_NAME] = env_keep_item,
};

/* Parses value v of key k (dotted name key) into its field of base: the policy, or the entry
 * of an array of tables ([[rule]]) being built. */
static int apply_key(Doc *d, const SchemaKey *k, const TomlValue *v, const char *key, void *base)
{
	char *str;
	char **strv;
	int r;

	switch (k->type) {
	case SCHEMA_STRING:
		r = want_string(d, v, key);
		if (r < 0)
			return r;
		if ((k->flags & SCHEMA_F_NONEMPTY) && !v->str.ptr[0])
			return fail_at(d, v, key, "must not be empty");
		/* sandbox.name and description describe one file: a base's do not carry over */
		if (k->merge == SCHEMA_MERGE_TOP_ONLY && !d->top)
			return 0;
		r = replace_string(d, SCHEMA_FIELD(base, k, char *), v->str.ptr);
		break;
	case SCHEMA_BOOL:
		r = want_type(d, v, key, TOML_BOOL);
		if (r >= 0)
			*SCHEMA_FIELD(base, k, bool) = v->boolean;
		break;
	case SCHEMA_ENUM:
		r = want_enum(d, v, key, k->names, (size_t) k->first, (size_t) k->n);
		if (r >= 0 && (k->flags & SCHEMA_F_BOOL_FIELD))
			*SCHEMA_FIELD(base, k, bool) = r != 0;
		else if (r >= 0)
			*SCHEMA_FIELD(base, k, int) = r;
		break;
	case SCHEMA_TRISTATE:
		r = want_tristate(d, v, key, SCHEMA_FIELD(base, k, int));
		break;
	case SCHEMA_ERRNO:
		r = want_string(d, v, key);
		if (r >= 0)
			r = want_errno(d, v, key, v->str.ptr, SCHEMA_FIELD(base, k, int));
		break;
	case SCHEMA_UINT:
		r = want_type(d, v, key, TOML_INTEGER);
		if (r >= 0 && (v->integer < 0 || (uint64_t) v->integer < k->min ||
			       (uint64_t) v->integer > k->max))
			r = fail_at(d, v, key, "must be between %llu and %llu",
				    (unsigned long long) k->min, (unsigned long long) k->max);
		if (r >= 0)
			*SCHEMA_FIELD(base, k, unsigned) = (unsigned) v->integer;
		break;
	case SCHEMA_DURATION:
	case SCHEMA_SIZE:
	case SCHEMA_COUNT:
		r = apply_limit(d, v, key, k, SCHEMA_FIELD(base, k, uint64_t));
		break;
	case SCHEMA_TIMEOUT:
		r = want_ask_timeout(d, v, key, SCHEMA_FIELD(base, k, uint64_t));
		break;
	case SCHEMA_VPATH:
	case SCHEMA_HPATH:
	case SCHEMA_GLOB:
		r = k->type == SCHEMA_VPATH   ? virtual_path(d, v, key, &str)
		    : k->type == SCHEMA_HPATH ? host_path(d, v, key, &str)
					      : glob_value(d, v, key, &str);
		if (r >= 0) {
			free(*SCHEMA_FIELD(base, k, char *));
			*SCHEMA_FIELD(base, k, char *) = str;
		}
		break;
	case SCHEMA_STRV:
		r = want_strv(d, v, key, item_fns[k->item], &strv);
		if (r >= 0)
			replace_strv(SCHEMA_FIELD(base, k, char **), strv);
		break;
	case SCHEMA_SELECT:
		r = want_select(d, v, key, SCHEMA_FIELD(base, k, AuditSelect),
				SCHEMA_FIELD2(base, k, char **));
		break;
	case SCHEMA_EVENTS:
		r = want_events(d, v, key, SCHEMA_FIELD(base, k, unsigned));
		break;
	default:
		assert(!"a key of a type apply_key() does not know");
		return -EINVAL;
	}
	if (r >= 0 && (k->flags & SCHEMA_F_WHERE))
		remember(d, k, v, key);
	return r;
}

/* A key of type SCHEMA_CUSTOM: its section's own code. */
typedef int (*CustomFn)(Doc *d, const SchemaKey *k, const TomlKeyValue *kv, const char *key);

/* Applies table t, a table of section name (prefix names it in errors: "mount[2]"), to base:
 * each key by its row in the schema, the SCHEMA_CUSTOM ones by custom (NULL when the section
 * has none). */
static int apply_table(Doc *d, const TomlValue *t, const char *name, const char *prefix,
		       void *base, CustomFn custom)
{
	const SchemaSection *s = policy_schema_section(name);
	char key[128];
	int r;

	assert(s);
	r = want_type(d, t, prefix, TOML_TABLE);
	if (r < 0)
		return r;
	for (size_t i = 0; i < t->table.n; i++) {
		const TomlKeyValue *kv = &t->table.items[i];
		const SchemaKey *k = policy_schema_key(s, kv->key);

		if (!k)
			return unknown_key(d, kv, prefix, name);
		join_key(key, sizeof(key), prefix, kv->key);
		if (k->type == SCHEMA_CUSTOM) {
			assert(custom);
			r = custom(d, k, kv, key);
		} else
			r = apply_key(d, k, kv->value, key, base);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Applies table t, the section called name, to the policy. */
static int apply_section(Doc *d, const TomlValue *t, const char *name, CustomFn custom)
{
	return apply_table(d, t, name, name, d->l->p, custom);
}

/* ----- [[mount]] ------------------------------------------------------------------------ */

static bool path_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (streq(dir, "/"))
		return path[0] == '/' && path[1];
	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

static bool mount_source_is_file(const PolicyMount *m)
{
	struct stat st;

	return m->source && stat(m->source, &st) == 0 && !S_ISDIR(st.st_mode);
}

/* mount.source and mount.optional are only type-checked here: apply_one_mount() resolves them
 * once the whole entry is read (the source defaults to the path, and depends on the mode) */
static int mount_custom(Doc *d, const SchemaKey *k, const TomlKeyValue *kv, const char *key)
{
	if (streq(k->name, "source"))
		return want_string(d, kv->value, key);
	assert(streq(k->name, "optional"));
	return want_type(d, kv->value, key, TOML_BOOL);
}

static int apply_one_mount(Doc *d, const TomlValue *t, size_t index)
{
	Loader *l = d->l;
	Policy *p = l->p;
	_cleanup_free_ char *path = NULL, *source = NULL;
	const TomlValue *path_v, *source_v, *keep_v, *optional_v;
	char prefix[64], key[128];
	PolicyMount m = {.mode = MOUNT_RO, .line = d->override ? 0 : t->line};
	int r;

	snprintf(prefix, sizeof(prefix), "mount[%zu]", index + 1);
	r = apply_table(d, t, "mount", prefix, &m, mount_custom);
	path = TAKE_PTR(m.path);
	if (r < 0)
		return r;
	path_v = toml_table_get(t, "path");
	source_v = toml_table_get(t, "source");
	keep_v = toml_table_get(t, "keep");
	optional_v = toml_table_get(t, "optional");
	join_key(key, sizeof(key), prefix, "path");
	if (!path)
		return fail(d, t->line, t->column, key, -EINVAL, "a mount needs a path");

	if (m.mode == MOUNT_TMP) {
		if (source_v)
			return fail_at(d, source_v,
				       (join_key(key, sizeof(key), prefix, "source"), key),
				       "a mount with mode = \"tmp\" takes no source");
	} else {
		struct stat st;

		if (keep_v)
			return fail_at(d, keep_v, (join_key(key, sizeof(key), prefix, "keep"), key),
				       "keep applies to mode = \"tmp\" only");
		join_key(key, sizeof(key), prefix, "source");
		r = host_path(d, source_v ? source_v : path_v, key, &source);
		if (r < 0)
			return r;
		if (stat(source, &st) < 0 && errno == ENOENT && optional_v && optional_v->boolean)
			return 0; /* optional: skipped when the source does not exist */
		if (stat(source, &st) < 0)
			return fail_at(d, source_v ? source_v : path_v, key,
				       "source '%.200s' %s: %s", source,
				       source_v ? "cannot be used" : "(the default: same as path)",
				       strerror(errno));
		if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
			return fail_at(d, source_v ? source_v : path_v, key,
				       "source '%.200s' is neither a directory nor a file", source);
		if (!S_ISDIR(st.st_mode) && streq(path, "/"))
			return fail_at(d, source_v ? source_v : path_v, key,
				       "the source of '/' must be a directory");
	}

	/* the same path twice in one file is a mistake; a later file replaces the mount */
	for (size_t i = 0; d->mount_paths && d->mount_paths[i]; i++)
		if (streq(d->mount_paths[i], path)) {
			join_key(key, sizeof(key), prefix, "path");
			if (d->override)
				return fail_at(d, path_v, key,
					       "conflicting mounts: '%.200s' is given twice", path);
			return fail_at(d, path_v, key,
				       "conflicting mounts: '%.200s' is already mounted at line %u",
				       path, d->mount_lines[i]);
		}
	m.path = TAKE_PTR(path);
	m.source = TAKE_PTR(source);

	/* nothing can be mounted below a file */
	for (size_t i = 0; i < p->n_mounts; i++) {
		const PolicyMount *e = &p->mounts[i];
		const char *file_mount = NULL;

		if (streq(e->path, m.path))
			continue;
		if (path_below(m.path, e->path) && mount_source_is_file(e))
			file_mount = e->path;
		else if (path_below(e->path, m.path) && mount_source_is_file(&m))
			file_mount = m.path;
		if (file_mount) {
			join_key(key, sizeof(key), prefix, "path");
			r = fail_at(d, path_v, key,
				    "conflicting mounts: '%.200s' and '%.200s', but the source of "
				    "'%.200s' is a file",
				    e->path, m.path, file_mount);
			free(m.path);
			free(m.source);
			return r;
		}
	}

	r = strv_push(&d->mount_paths, m.path);
	if (r >= 0) {
		size_t n = strv_length(d->mount_paths);
		unsigned *lines = realloc(d->mount_lines, n * sizeof(unsigned));
		if (lines) {
			lines[n - 1] = t->line;
			d->mount_lines = lines;
		} else
			r = -ENOMEM;
	}
	if (r < 0) {
		free(m.path);
		free(m.source);
		return oom(d);
	}

	for (size_t i = 0; i < p->n_mounts; i++)
		if (streq(p->mounts[i].path, m.path)) {
			free(p->mounts[i].path);
			free(p->mounts[i].source);
			p->mounts[i] = m;
			return 0;
		}
	PolicyMount *a = reallocarray(p->mounts, p->n_mounts + 1, sizeof(PolicyMount));
	if (!a) {
		free(m.path);
		free(m.source);
		return oom(d);
	}
	p->mounts = a;
	p->mounts[p->n_mounts++] = m;
	return 0;
}

static int apply_array_of_tables(Doc *d, const TomlValue *v, const char *name,
				 int (*fn)(Doc *, const TomlValue *, size_t))
{
	int r;

	if (v->type != TOML_ARRAY)
		return fail_at(d, v, name, "expected an array of tables ([[%s]]), got %s %s", name,
			       type_article(v->type), toml_type_name(v->type));
	for (size_t i = 0; i < v->array.n; i++) {
		r = fn(d, v->array.items[i], i);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ----- [[rule]] ------------------------------------------------------------------------- */

static int apply_one_rule(Doc *d, const TomlValue *t, size_t index)
{
	Policy *p = d->l->p;
	PolicyRule rule = {.line = d->override ? 0 : t->line, .ask_timeout_ms = 30000};
	const TomlValue *timeout_at;
	char prefix[64], key[128];
	int r;

	snprintf(prefix, sizeof(prefix), "rule[%zu]", index + 1);
	r = apply_table(d, t, "rule", prefix, &rule, NULL);
	if (r < 0) {
		free(rule.glob);
		return r;
	}
	if (!rule.glob)
		return fail(d, t->line, t->column, prefix, -EINVAL, "a rule needs a path");
	if (rule.access == RULE_ACCESS_UNSET && rule.level == SENSITIVITY_NONE) {
		free(rule.glob);
		return fail(d, t->line, t->column, prefix, -EINVAL,
			    "a rule needs an access, a level, or both");
	}
	timeout_at = toml_table_get(t, "ask_timeout");
	if (timeout_at && rule.access != RULE_ACCESS_ASK && rule.access != RULE_ACCESS_ASK_WRITE) {
		free(rule.glob);
		join_key(key, sizeof(key), prefix, "ask_timeout");
		return fail_at(d, timeout_at, key,
			       "ask_timeout needs access = \"ask\" or \"ask-write\"");
	}

	PolicyRule *a = reallocarray(p->rules, p->n_rules + 1, sizeof(PolicyRule));
	if (!a) {
		free(rule.glob);
		return oom(d);
	}
	p->rules = a;
	p->rules[p->n_rules++] = rule;
	return 0;
}

/* ----- [process] ------------------------------------------------------------------------ */

static bool valid_env_name(const char *s, bool glob)
{
	if (!*s)
		return false;
	for (const char *c = s; *c; c++)
		if (!(isalnum((unsigned char) *c) || *c == '_' ||
		      (glob && (*c == '*' || *c == '?'))))
			return false;
	return !isdigit((unsigned char) *s);
}

static int env_keep_item(Doc *d, const TomlValue *v, const char *key, char **ret)
{
	int r = want_string(d, v, key);
	if (r < 0)
		return r;
	if (!valid_env_name(v->str.ptr, true))
		return fail_at(
			d, v, key,
			"'%.64s' is not a variable name (letters, digits, '_', globs '*' '?')",
			v->str.ptr);
	*ret = strdup(v->str.ptr);
	return *ret ? 0 : oom(d);
}

static int env_set(Doc *d, const char *name, const char *value)
{
	Policy *p = d->l->p;
	size_t n = strlen(name);
	char *entry = strdup_printf("%s=%s", name, value);

	if (!entry)
		return oom(d);
	for (char **e = p->process.env_set; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') {
			free(*e);
			*e = entry;
			return 0;
		}
	if (strv_push(&p->process.env_set, entry) < 0) {
		free(entry);
		return oom(d);
	}
	free(entry);
	return 0;
}

/* process.env.set: a table of variables, merged by name with what earlier files set */
static int env_custom(Doc *d, const SchemaKey *k, const TomlKeyValue *kv, const char *key)
{
	const TomlValue *s = kv->value;
	int r;

	assert(streq(k->name, "set"));
	r = want_type(d, s, key, TOML_TABLE);
	for (size_t j = 0; r >= 0 && j < s->table.n; j++) {
		const TomlKeyValue *e = &s->table.items[j];
		char k2[160];

		snprintf(k2, sizeof(k2), "%s.%s", key, e->key);
		if (!valid_env_name(e->key, false))
			return fail(d, e->line, e->column, k2, -EINVAL,
				    "'%.64s' is not a variable name", e->key);
		r = want_string(d, e->value, k2);
		if (r >= 0)
			r = env_set(d, e->key, e->value->str.ptr);
	}
	return r;
}

static int process_custom(Doc *d, const SchemaKey *k, const TomlKeyValue *kv, const char *key)
{
	assert(streq(k->name, "env"));
	(void) key; /* the subsection's keys are named "process.env.KEY" */
	return apply_section(d, kv->value, "process.env", env_custom);
}

/* ----- [exec] --------------------------------------------------------------------------- */

/* A held call's timeout (network.ask_timeout, exec.ask_timeout): 1 s to 1 h, an integer of
 * seconds or a duration string. */
static int want_ask_timeout(Doc *d, const TomlValue *v, const char *key, uint64_t *ret_ms)
{
	uint64_t ms = 0;

	if (v->type == TOML_INTEGER && v->integer > 0 && v->integer <= 3600)
		ms = (uint64_t) v->integer * 1000;
	else if (v->type == TOML_STRING && !policy_duration_reason(v->str.ptr, &ms))
		;
	else
		ms = 0;
	if (ms < 1000 || ms > 3600 * 1000)
		return fail_at(d, v, key, "must be a duration from 1s to 1h, such as \"30s\"");
	*ret_ms = ms;
	return 0;
}

/* ----- [network] ------------------------------------------------------------------------ */

static int dns_item(Doc *d, const TomlValue *v, const char *key, char **ret)
{
	char buf[160];
	const char *why;
	int r;

	r = want_string(d, v, key);
	if (r < 0)
		return r;
	why = policy_check_dns(v->str.ptr, buf, sizeof(buf));
	if (why)
		return fail_at(d, v, key, "bad DNS server '%.64s': %s", v->str.ptr, why);
	*ret = strdup(v->str.ptr);
	return *ret ? 0 : oom(d);
}

static int unix_item(Doc *d, const TomlValue *v, const char *key, char **ret)
{
	int r = want_string(d, v, key);
	if (r < 0)
		return r;
	if (v->str.ptr[0] == '@') {
		if (!v->str.ptr[1] || v->str.len > 107)
			return fail_at(d, v, key, "bad abstract socket name '%.64s'", v->str.ptr);
		*ret = strdup(v->str.ptr);
		return *ret ? 0 : oom(d);
	}
	return virtual_path(d, v, key, ret);
}

static void free_allow(PolicyNetAllow *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		policy_net_allow_done(&a[i]);
	free(a);
}

static int apply_allow(Doc *d, const TomlValue *v, const char *key)
{
	PolicyNetwork *net = &d->l->p->network;
	PolicyNetAllow *a;
	char buf[160];
	int r;

	r = want_type(d, v, key, TOML_ARRAY);
	if (r < 0)
		return r;
	a = calloc(v->array.n + 1, sizeof(PolicyNetAllow));
	if (!a)
		return oom(d);
	for (size_t i = 0; i < v->array.n; i++) {
		const TomlValue *e = v->array.items[i];
		const char *why;

		r = want_string(d, e, key);
		if (r < 0) {
			free_allow(a, i);
			return r;
		}
		why = policy_parse_net_allow(e->str.ptr, &a[i], buf, sizeof(buf));
		if (why) {
			free_allow(a, i);
			return fail_at(d, e, key, "bad allow entry '%.100s': %s", e->str.ptr, why);
		}
	}
	free_allow(net->allow, net->n_allow);
	net->allow = a;
	net->n_allow = v->array.n;
	return 0;
}

/* network.ratchet.LEVEL: merged level by level with what earlier files set */
static int ratchet_custom(Doc *d, const SchemaKey *k, const TomlKeyValue *kv, const char *key)
{
	PolicyNetwork *net = &d->l->p->network;
	Sensitivity s = _SENSITIVITY_INVALID;
	int r;

	for (int j = SENSITIVITY_INTERNAL; j < _SENSITIVITY_MAX; j++)
		if (streq(k->name, policy_sensitivity_names[j]))
			s = (Sensitivity) j;
	assert(s >= 0);
	r = want_enum(d, kv->value, key, policy_net_mode_names, 0, _NET_MODE_MAX);
	if (r < 0)
		return r;
	net->ratchet[s] = (NetMode) r;
	net->has_ratchet[s] = true;
	return 0;
}

static int network_custom(Doc *d, const SchemaKey *k, const TomlKeyValue *kv, const char *key)
{
	if (streq(k->name, "allow"))
		return apply_allow(d, kv->value, key);
	assert(streq(k->name, "ratchet"));
	return apply_section(d, kv->value, "network.ratchet", ratchet_custom);
}

/* ----- [limits] ------------------------------------------------------------------------- */

/* A [limits] key: k->type says whether it is a size, a duration or a count. */
static int apply_limit(Doc *d, const TomlValue *v, const char *key, const SchemaKey *k,
		       uint64_t *slot)
{
	SchemaType kind = k->type;
	const char *what = kind == SCHEMA_SIZE	     ? "size"
			   : kind == SCHEMA_DURATION ? "duration"
						     : "count";
	char maxbuf[32];
	uint64_t val;

	if (v->type == TOML_STRING && streq(v->str.ptr, "unlimited") &&
	    !(k->flags & SCHEMA_F_NO_UNLIMITED)) {
		*slot = LIMIT_UNSET;
		return 0;
	}
	if (v->type == TOML_INTEGER) {
		if (v->integer < 0)
			return fail_at(d, v, key, "negative %s %lld", what, (long long) v->integer);
		val = (uint64_t) v->integer;
		if (kind == SCHEMA_DURATION) {
			if (val > POLICY_DURATION_MAX_MS / 1000)
				val = POLICY_DURATION_MAX_MS + 1;
			else
				val *= 1000;
		}
	} else if (v->type == TOML_FLOAT && kind == SCHEMA_DURATION) {
		if (!(v->flt >= 0))
			return fail_at(d, v, key, "negative or not-a-number duration");
		val = v->flt * 1000.0 > (double) POLICY_DURATION_MAX_MS
			      ? POLICY_DURATION_MAX_MS + 1
			      : (uint64_t) (v->flt * 1000.0);
	} else if (v->type == TOML_STRING && kind != SCHEMA_COUNT) {
		const char *why = kind == SCHEMA_SIZE ? policy_size_reason(v->str.ptr, &val)
						     : policy_duration_reason(v->str.ptr, &val);
		if (why) {
			if (v->str.ptr[strspn(v->str.ptr, " ")] == '-')
				return fail_at(d, v, key, "negative %s '%.32s'", what, v->str.ptr);
			return fail_at(d, v, key, "bad %s '%.32s': %s", what, v->str.ptr, why);
		}
	} else
		return fail_at(d, v, key, "expected %s, got %s %s",
			       kind == SCHEMA_SIZE	? "a size (integer bytes or a string "
							  "such as \"512MiB\")"
			       : kind == SCHEMA_DURATION ? "a duration (integer seconds or a "
							  "string such as \"30s\")"
							: "an integer",
			       type_article(v->type), toml_type_name(v->type));

	if (val == 0 && !(k->flags & SCHEMA_F_ZERO_OK))
		return fail_at(d, v, key, "must be greater than zero (\"unlimited\" for no limit)");
	if (val > k->max) {
		if (kind == SCHEMA_SIZE)
			policy_format_size(k->max, maxbuf, sizeof(maxbuf));
		else if (kind == SCHEMA_DURATION)
			policy_format_duration_ms(k->max, maxbuf, sizeof(maxbuf));
		else
			snprintf(maxbuf, sizeof(maxbuf), "%llu",
				 (unsigned long long) k->max);
		return fail_at(d, v, key, "absurd %s: above the maximum of %s", what, maxbuf);
	}
	{
		char hostbuf[128];
		const char *why = policy_host_limit_reason(k->name, val, hostbuf,
							   sizeof(hostbuf));

		if (why)
			return fail_at(d, v, key, "%s", why);
	}
	*slot = val;
	return 0;
}

/* ----- [syscalls] ----------------------------------------------------------------------- */

static const char *suggest_syscall(const char *name, char *buf, size_t size)
{
	unsigned best_d = UINT_MAX;

	*buf = '\0';
	for (size_t i = 0; i < sbx_syscall_names_count; i++) {
		const char *s = sbx_syscall_names[i].name;
		unsigned dist;

		dist = edit_distance(name, s) * 2 + (strlen(s) != strlen(name));
		if (dist < best_d) {
			best_d = dist;
			snprintf(buf, size, "%s", s);
		}
	}
	best_d /= 2;
	if (*buf && best_d <= MAX(2u, (unsigned) strlen(name) / 3) && best_d < strlen(name))
		return buf;
	return NULL;
}

static int add_syscall(Doc *d, const TomlValue *v, const char *key, const char *name,
		       SyscallAction action, int error)
{
	Policy *p = d->l->p;
	PolicySyscall s = {.action = action, .error = error, .line = d->override ? 0 : v->line};

	for (size_t i = 0; d->syscall_names && d->syscall_names[i]; i++)
		if (streq(d->syscall_names[i], name)) {
			if (d->override)
				return fail_at(d, v, key, "syscall '%s' is listed twice", name);
			return fail_at(d, v, key,
				       "syscall '%s' is listed twice (also at line %u); a file may "
				       "name a syscall once",
				       name, d->syscall_lines[i]);
		}
	if (strv_push(&d->syscall_names, name) < 0)
		return oom(d);
	unsigned *lines =
		realloc(d->syscall_lines, strv_length(d->syscall_names) * sizeof(unsigned));
	if (!lines)
		return oom(d);
	d->syscall_lines = lines;
	lines[strv_length(d->syscall_names) - 1] = d->override ? 0 : v->line;

	s.name = strdup(name);
	if (!s.name)
		return oom(d);
	for (size_t i = 0; i < p->n_syscalls; i++)
		if (streq(p->syscalls[i].name, name)) {
			free(p->syscalls[i].name);
			p->syscalls[i] = s;
			return 0;
		}
	PolicySyscall *a = reallocarray(p->syscalls, p->n_syscalls + 1, sizeof(PolicySyscall));
	if (!a) {
		free(s.name);
		return oom(d);
	}
	p->syscalls = a;
	p->syscalls[p->n_syscalls++] = s;
	return 0;
}

static int apply_syscall_entry(Doc *d, const TomlValue *v, const char *key, SyscallAction action)
{
	char name[128], buf[64];
	const char *colon;
	int error = 0, r;

	r = want_string(d, v, key);
	if (r < 0)
		return r;
	colon = strchr(v->str.ptr, ':');
	snprintf(name, sizeof(name), "%.*s", (int) (colon ? colon - v->str.ptr : (long) v->str.len),
		 v->str.ptr);
	if (colon) {
		if (action != SYSCALL_ACTION_DENY)
			return fail_at(d, v, key, "':ERRNO' is only allowed in syscalls.deny");
		r = want_errno(d, v, key, colon + 1, &error);
		if (r < 0)
			return r;
	}

	if (name[0] == '@') {
		const PolicySyscallGroup *g = policy_syscall_group_find(name);

		if (!g) {
			size_t n;
			const PolicySyscallGroup *all = policy_syscall_groups(&n);
			const char *list[32];
			size_t k;

			for (k = 0; k < n && k < ARRAY_SIZE(list) - 1; k++)
				list[k] = all[k].name;
			list[k] = NULL;
			const char *s = suggest(name, list);
			if (s)
				return fail_at(d, v, key,
					       "unknown syscall group '%.64s'; did you mean '%s'?",
					       name, s);
			return fail_at(d, v, key, "unknown syscall group '%.64s'", name);
		}
		for (const char *const *m = g->syscalls; *m; m++) {
			if (policy_syscall_resolve(*m) < 0)
				continue;
			r = add_syscall(d, v, key, *m, action, error);
			if (r < 0)
				return r;
		}
		return 0;
	}

	r = policy_syscall_resolve(name);
	if (r == -ENOENT) {
		const char *s = suggest_syscall(name, buf, sizeof(buf));
		if (s)
			return fail_at(d, v, key,
				       "unknown syscall name '%.64s'; did you mean '%s'?", name, s);
		return fail_at(d, v, key, "unknown syscall name '%.64s'", name);
	}
	if (r < 0) /* another architecture's syscall: nothing to filter here */
		return 0;
	return add_syscall(d, v, key, name, action, error);
}

/* syscalls.allow, deny, kill, log: a list of syscalls and @groups for that action */
static int syscalls_custom(Doc *d, const SchemaKey *k, const TomlKeyValue *kv, const char *key)
{
	SyscallAction action = _SYSCALL_ACTION_INVALID;
	int r;

	for (int a = 0; a < _SYSCALL_ACTION_MAX; a++)
		if (streq(k->name, policy_syscall_action_names[a]))
			action = (SyscallAction) a;
	assert(action >= 0);
	r = want_type(d, kv->value, key, TOML_ARRAY);
	if (r < 0)
		return r;
	for (size_t j = 0; j < kv->value->array.n; j++) {
		r = apply_syscall_entry(d, kv->value->array.items[j], key, action);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ----- [audit] -------------------------------------------------------------------------- */

static int syscall_name_item(Doc *d, const TomlValue *v, const char *key, char **ret)
{
	char buf[64];
	int r = want_string(d, v, key);

	if (r < 0)
		return r;
	if (policy_syscall_resolve(v->str.ptr) == -ENOENT) {
		const char *s = suggest_syscall(v->str.ptr, buf, sizeof(buf));
		if (s)
			return fail_at(d, v, key,
				       "unknown syscall name '%.64s'; did you mean '%s'?",
				       v->str.ptr, s);
		return fail_at(d, v, key, "unknown syscall name '%.64s'", v->str.ptr);
	}
	*ret = strdup(v->str.ptr);
	return *ret ? 0 : oom(d);
}

static int want_select(Doc *d, const TomlValue *v, const char *key, AuditSelect *ret,
		       char ***ret_list)
{
	char **list = NULL;
	int r;

	if (v->type == TOML_ARRAY) {
		r = want_strv(d, v, key, syscall_name_item, &list);
		if (r < 0)
			return r;
		*ret = AUDIT_SELECT_LIST;
		replace_strv(ret_list, list);
		return 0;
	}
	if (v->type != TOML_STRING)
		return fail_at(
			d, v, key,
			"expected \"none\", \"denied\", \"all\" or an array of syscall names, "
			"got %s %s",
			type_article(v->type), toml_type_name(v->type));
	r = want_enum(d, v, key, policy_audit_select_names, 0, AUDIT_SELECT_LIST);
	if (r < 0)
		return r;
	*ret = (AuditSelect) r;
	replace_strv(ret_list, NULL);
	return 0;
}

static int want_events(Doc *d, const TomlValue *v, const char *key, unsigned *ret)
{
	const char *known[ARRAY_SIZE(policy_audit_event_names) + 2];
	unsigned mask = 0;
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(policy_audit_event_names); i++)
		known[i] = policy_audit_event_names[i];
	known[ARRAY_SIZE(policy_audit_event_names)] = "all";
	known[ARRAY_SIZE(policy_audit_event_names) + 1] = NULL;

	if (v->type == TOML_STRING && streq(v->str.ptr, "all")) {
		*ret = AUDIT_EVENT_ALL;
		return 0;
	}
	r = want_type(d, v, key, TOML_ARRAY);
	if (r < 0)
		return fail_at(d, v, key, "expected \"all\" or an array of event kinds, got %s %s",
			       type_article(v->type), toml_type_name(v->type));
	for (size_t i = 0; i < v->array.n; i++) {
		const TomlValue *e = v->array.items[i];

		r = want_enum(d, e, key, known, 0, ARRAY_SIZE(known) - 1);
		if (r < 0)
			return r;
		mask |= (size_t) r == ARRAY_SIZE(policy_audit_event_names) ? (unsigned) AUDIT_EVENT_ALL
								    : 1u << r;
	}
	*ret = mask;
	return 0;
}

/* ----- documents, extends, presets ------------------------------------------------------ */

static bool looks_like_path(const char *name)
{
	size_t n = strlen(name);
	return strchr(name, '/') || (n > 5 && streq(name + n - 5, ".toml"));
}

static bool valid_preset_name(const char *name)
{
	if (!*name || strlen(name) > 64)
		return false;
	for (const char *c = name; *c; c++)
		if (!isalnum((unsigned char) *c) && *c != '-' && *c != '_')
			return false;
	return true;
}

const char *const *policy_preset_dirs(void)
{
	static const char *dirs[4];
	const char *env = getenv("SBXTRACE_PRESET_DIR");
	size_t n = 0;

	if (env && *env)
		dirs[n++] = env;
	if (SBX_SOURCE_PRESET_DIR[0]) /* not in a package: -Dsource_presets=false */
		dirs[n++] = SBX_SOURCE_PRESET_DIR;
	dirs[n++] = SBX_PRESET_DIR;
	dirs[n] = NULL;
	return dirs;
}

/* The file of preset name, or -ENOENT. */
static int find_preset(const char *name, char **ret)
{
	if (!valid_preset_name(name))
		return -ENOENT;
	for (const char *const *dir = policy_preset_dirs(); *dir; dir++) {
		char *path = strdup_printf("%s/%s.toml", *dir, name);
		if (!path)
			return -ENOMEM;
		if (access(path, F_OK) == 0) {
			*ret = path;
			return 0;
		}
		free(path);
	}
	return -ENOENT;
}

static int load_file(Loader *l, const char *path, const char *display, bool top, Doc *parent,
		     const TomlValue *at, const char *at_key);

static int preset_not_found(Doc *d, const TomlValue *at, const char *key, const char *name)
{
	static const char *const presets[] = {"permissive", "standard", "strict", "python",
					      "node",	    "shell",	NULL};
	const char *s = suggest(name, presets);

	if (s)
		return fail(d, at ? at->line : 0, at ? at->column : 0, key, -ENOENT,
			    "no preset named '%.64s'; did you mean '%s'?", name, s);
	return fail(d, at ? at->line : 0, at ? at->column : 0, key, -ENOENT,
		    "no preset named '%.64s' (presets: permissive, standard, strict, python, node, "
		    "shell; a file name needs a '/' or '.toml')",
		    name);
}

/* Loads what one extends entry names, relative to document d. */
static int load_base(Doc *d, const TomlValue *v, const char *key)
{
	_cleanup_free_ char *path = NULL;
	int r;

	r = want_string(d, v, key);
	if (r < 0)
		return r;
	if (looks_like_path(v->str.ptr)) {
		r = host_path(d, v, key, &path);
		if (r < 0)
			return r;
		return load_file(d->l, path, path, false, d, v, key);
	}
	r = find_preset(v->str.ptr, &path);
	if (r == -ENOMEM)
		return oom(d);
	if (r < 0)
		return preset_not_found(d, v, key, v->str.ptr);
	return load_file(d->l, path, path, false, d, v, key);
}

/* The handler of a section's SCHEMA_CUSTOM keys; NULL when it has none. */
static CustomFn section_custom(const char *section)
{
	static const struct {
		const char *section;
		CustomFn custom;
	} customs[] = {
		{"process", process_custom},
		{"network", network_custom},
		{"syscalls", syscalls_custom},
	};

	for (size_t i = 0; i < ARRAY_SIZE(customs); i++)
		if (streq(customs[i].section, section))
			return customs[i].custom;
	return NULL;
}

static int apply_doc(Doc *d, const TomlValue *root)
{
	const TomlValue *ext = toml_table_get(root, "extends");
	Policy *p = d->l->p;
	int r;

	if (ext) {
		if (d->override)
			return fail_at(d, ext, "extends", "extends cannot be overridden with -s");
		if (ext->type == TOML_ARRAY) {
			for (size_t i = 0; i < ext->array.n; i++) {
				r = load_base(d, ext->array.items[i], "extends");
				if (r < 0)
					return r;
			}
		} else if (ext->type == TOML_STRING) {
			r = load_base(d, ext, "extends");
			if (r < 0)
				return r;
		} else
			return fail_at(d, ext, "extends",
				       "expected a string or an array of strings, got %s %s",
				       type_article(ext->type), toml_type_name(ext->type));
		if (d->top) {
			char **names;
			if (ext->type == TOML_STRING) {
				r = strv_push(&p->extends, ext->str.ptr);
				if (r < 0)
					return oom(d);
			} else {
				r = want_strv(d, ext, "extends", plain_string, &names);
				if (r < 0)
					return r;
				for (char **n = names; *n; n++)
					if (strv_push(&p->extends, *n) < 0) {
						strv_free(names);
						return oom(d);
					}
				strv_free(names);
			}
		}
	}

	for (size_t i = 0; i < root->table.n; i++) {
		const TomlKeyValue *kv = &root->table.items[i];
		const TomlValue *v = kv->value;

		if (streq(kv->key, "extends"))
			continue;
		else if (streq(kv->key, "mount"))
			r = apply_array_of_tables(d, v, "mount", apply_one_mount);
		else if (streq(kv->key, "rule"))
			r = apply_array_of_tables(d, v, "rule", apply_one_rule);
		else if (policy_schema_key(policy_schema_section(""), kv->key))
			r = apply_section(d, v, kv->key, section_custom(kv->key));
		else
			r = unknown_key(d, kv, "", "");
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_and_apply(const char *text, size_t len, Doc *d)
{
	_cleanup_(toml_freep) TomlValue *root = NULL;
	TomlError terr = {0};
	int r;

	r = toml_parse(text, len, &root, &terr);
	if (r == -ENOMEM)
		return oom(d);
	if (r < 0)
		return fail(d, terr.line, terr.column, NULL, -EINVAL, "%s",
			    terr.message[0] ? terr.message : "TOML syntax error");
	return apply_doc(d, root);
}

static int load_file(Loader *l, const char *path, const char *display, bool top, Doc *parent,
		     const TomlValue *at, const char *at_key)
{
	_cleanup_free_ char *text = NULL, *real = NULL, *dir = NULL;
	_cleanup_(doc_done) Doc d = {.l = l, .file = display, .top = top};
	size_t len;
	int r;

	real = realpath(path, NULL);
	if (!real) {
		r = -errno;
		if (r == -ENOMEM)
			return oom(&d);
		if (parent)
			return fail(parent, at->line, at->column, at_key, r,
				    "cannot read '%.200s': %s", path, strerror(-r));
		return fail(&d, 0, 0, NULL, r, "cannot read policy: %s", strerror(-r));
	}
	for (size_t i = 0; i < l->depth; i++)
		if (streq(l->stack[i], real))
			return fail(parent, at->line, at->column, at_key, -EINVAL,
				    "'%.200s' extends itself (a cycle)", path);
	if (l->depth >= POLICY_EXTENDS_DEPTH_MAX)
		return fail(parent, at->line, at->column, at_key, -EINVAL,
			    "extends nested deeper than %d files", POLICY_EXTENDS_DEPTH_MAX);

	if (parent) {
		struct stat st;

		/* a base is a file: never wait on a FIFO or a device named by a policy */
		if (stat(real, &st) < 0 || !S_ISREG(st.st_mode))
			return fail(parent, at->line, at->column, at_key, -EINVAL,
				    "'%.200s' is not a regular file", path);
	}
	r = read_full_file(AT_FDCWD, real, POLICY_MAX_BYTES, &text, &len);
	if (r < 0) {
		if (r == -ENOMEM)
			return oom(&d);
		if (parent)
			return fail(parent, at->line, at->column, at_key, r,
				    "cannot read '%.200s': %s", path, strerror(-r));
		return fail(&d, 0, 0, NULL, r, "cannot read policy: %s",
			    r == -EFBIG ? "file larger than 1 MiB" : strerror(-r));
	}

	dir = strdup(real);
	if (!dir)
		return oom(&d);
	*strrchr(dir, '/') = '\0';
	if (!*dir)
		strcpy(dir, "/");
	d.dir = dir;

	l->stack[l->depth++] = real;
	r = parse_and_apply(text, len, &d);
	l->depth--;
	return r;
}

/* "-s key=value": the value as TOML, else as a string. */
static int apply_override(Loader *l, const char *ov, const char *dir)
{
	_cleanup_(doc_done)
		Doc d = {.l = l, .file = "-s override", .dir = dir, .top = true, .override = true};
	_cleanup_(toml_freep) TomlValue *root = NULL;
	_cleanup_free_ char *key = NULL, *text = NULL;
	const char *eq = strchr(ov, '=');
	TomlError terr;
	int r;

	if (!eq || eq == ov)
		return fail(&d, 0, 0, NULL, -EINVAL, "'%.100s' is not key=value", ov);
	key = strndup(ov, (size_t) (eq - ov));
	if (!key)
		return oom(&d);
	for (const char *c = key; *c; c++)
		if (!isalnum((unsigned char) *c) && *c != '_' && *c != '-' && *c != '.')
			return fail(&d, 0, 0, key, -EINVAL,
				    "bad key '%.64s' (use a dotted key such as limits.memory)",
				    key);
	if (key[0] == '.' || key[strlen(key) - 1] == '.' || strstr(key, ".."))
		return fail(&d, 0, 0, key, -EINVAL, "bad dotted key '%.64s'", key);

	text = strdup_printf("%s = %s\n", key, eq + 1);
	if (!text)
		return oom(&d);
	r = toml_parse(text, strlen(text), &root, &terr);
	if (r == -ENOMEM)
		return oom(&d);
	if (r < 0) {
		/* not a TOML value: take it as a string (escape it as a basic string) */
		size_t n = strlen(eq + 1);
		_cleanup_free_ char *q = malloc(n * 6 + 1);
		char *w = q;

		if (!q)
			return oom(&d);
		for (const unsigned char *c = (const unsigned char *) eq + 1; *c; c++) {
			if (*c == '"' || *c == '\\') {
				*w++ = '\\';
				*w++ = (char) *c;
			} else if (*c < 0x20 || *c == 0x7f)
				w += sprintf(w, "\\u%04x", *c);
			else
				*w++ = (char) *c;
		}
		*w = '\0';
		free(text);
		text = strdup_printf("%s = \"%s\"\n", key, q);
		if (!text)
			return oom(&d);
		r = toml_parse(text, strlen(text), &root, &terr);
		if (r == -ENOMEM)
			return oom(&d);
		if (r < 0)
			return fail(&d, 0, 0, key, -EINVAL, "bad override '%.100s': %s", ov,
				    terr.message);
	}
	return apply_doc(&d, root);
}

/* Checks that need the merged policy. */
static int finish(Loader *l, const char *display)
{
	Policy *p = l->p;
	Doc d = {.l = l, .file = display};

	for (size_t i = 0; i < p->n_syscalls; i++)
		if (p->syscalls[i].action == SYSCALL_ACTION_DENY && p->syscalls[i].error == 0)
			p->syscalls[i].error = p->deny_errno;

	if (p->network.mode == NET_MODE_ALLOWLIST && p->network.n_allow == 0 &&
	    !p->network.ask_unlisted) {
		*l->err = where_set(l, "network", "mode");
		snprintf(l->err->message, sizeof(l->err->message),
			 "mode = \"allowlist\" with no entries in network.allow (use \"none\" to "
			 "allow nothing, or unlisted = \"ask\" to ask for each destination)");
		return -EINVAL;
	}
	/* The ratchet map a level on a rule means without one written (issue 21): internal
	 * changes nothing, confidential keeps to the allowlist, secret cuts the network. An
	 * allowlist with no entries allows nothing, so it is written as what it is, none
	 * (net_ratchet_target() reads it so too). A policy lifts a default with "full". */
	if (!p->network.has_ratchet[SENSITIVITY_CONFIDENTIAL]) {
		p->network.ratchet[SENSITIVITY_CONFIDENTIAL] = NET_MODE_ALLOWLIST;
		p->network.has_ratchet[SENSITIVITY_CONFIDENTIAL] = true;
	}
	if (!p->network.has_ratchet[SENSITIVITY_SECRET]) {
		p->network.ratchet[SENSITIVITY_SECRET] = NET_MODE_NONE;
		p->network.has_ratchet[SENSITIVITY_SECRET] = true;
	}
	for (int s = SENSITIVITY_INTERNAL; s < _SENSITIVITY_MAX; s++)
		if (p->network.has_ratchet[s] && p->network.ratchet[s] == NET_MODE_ALLOWLIST &&
		    p->network.n_allow == 0)
			p->network.ratchet[s] = NET_MODE_NONE;

	/* exec.unlisted = "ask" asks about what exec.allow leaves out: without allow nothing is
	 * left out. The decision must be about the file that runs, which only the post-exec
	 * check under ptrace pins (docs/policy.md "[exec]"). */
	if (p->exec_ask_unlisted && !p->exec_allow) {
		*l->err = where_set(l, "exec", "unlisted");
		snprintf(l->err->message, sizeof(l->err->message),
			 "unlisted = \"ask\" needs exec.allow (without it every visible program "
			 "may run, and there is nothing to ask about)");
		return -EINVAL;
	}
	if (p->exec_ask_unlisted && p->ptrace == PTRACE_MODE_NEVER) {
		*l->err = where_set(l, "exec", "unlisted");
		snprintf(l->err->message, sizeof(l->err->message),
			 "unlisted = \"ask\" needs ptrace (tracer.ptrace = \"never\"): only the "
			 "check after the exec makes sure the file a human allowed is the one that "
			 "runs");
		return -EINVAL;
	}
	if (p->network.unshare_netns == 1 && p->network.mode != NET_MODE_NONE &&
	    p->network.mode != NET_MODE_LOOPBACK) {
		*l->err = where_set(l, "network", "unshare");
		snprintf(l->err->message, sizeof(l->err->message),
			 "unshare = true needs mode = \"none\" or \"loopback\" (a private network "
			 "namespace has no route beyond its own loopback; use \"auto\" to have one "
			 "only when the mode is none)");
		return -EINVAL;
	}
	/* what a question could allow lies outside loopback: unreachable from the namespace */
	if (p->network.unshare_netns == 1 && p->network.ask_unlisted) {
		*l->err = where_set(l, "network", "unshare");
		snprintf(l->err->message, sizeof(l->err->message),
			 "unshare = true cannot go with unlisted = \"ask\" (a destination a human "
			 "allows lies outside the namespace's loopback, which is all it reaches)");
		return -EINVAL;
	}
	if (p->process.cwd) {
		bool inside = false;

		for (size_t i = 0; i < p->n_mounts; i++)
			if (streq(p->process.cwd, p->mounts[i].path) ||
			    path_below(p->process.cwd, p->mounts[i].path))
				inside = true;
		if (!inside) {
			char buf[sizeof(l->err->message)];

			*l->err = where_set(l, "process", "cwd");
			snprintf(buf, sizeof(buf), "cwd '%.200s' is not inside any mount",
				 p->process.cwd);
			escape_line(buf, l->err->message, sizeof(l->err->message));
			return -EINVAL;
		}
	}
	if (!p->name) {
		const char *base = strrchr(display, '/');
		size_t n;

		base = base ? base + 1 : display;
		n = strlen(base);
		if (n > 5 && streq(base + n - 5, ".toml"))
			n -= 5;
		p->name = strndup(base, n);
		if (!p->name)
			return oom(&d);
	}
	return 0;
}

static Policy *policy_new(void)
{
	Policy *p = calloc(1, sizeof(Policy));

	if (!p)
		return NULL;
	p->network.mode = NET_MODE_NONE;
	p->network.connect_errno = ECONNREFUSED;
	p->network.socket_errno = EACCES;
	/* off unless asked for: making the namespaces costs every start 0.3-0.8 ms here, and
	 * mode none already denies every inet, packet and netlink socket (docs/network.md) */
	p->network.unshare_netns = 0;
	p->network.ask_timeout_ms = 30000;
	p->exec_ask_timeout_ms = 30000;
	p->limits = (PolicyLimits){
		.wall_time_ms = LIMIT_UNSET,
		.cpu_time_ms = LIMIT_UNSET,
		.memory = LIMIT_UNSET,
		.tasks = LIMIT_UNSET,
		.file_size = LIMIT_UNSET,
		.open_files = LIMIT_UNSET,
		.disk = LIMIT_UNSET,
		.output = LIMIT_UNSET,
		.kill_grace_ms = 2000,
		.cpus = LIMIT_UNSET,
	};
	p->deny_errno = EPERM;
	p->ptrace = PTRACE_MODE_AUTO;
	p->landlock = TRI_AUTO;
	p->kernel_view = TRI_AUTO;
	p->audit.events = AUDIT_EVENT_ALL;
	p->audit.backtrace = AUDIT_SELECT_NONE;
	p->audit.backtrace_depth = 16;
	p->audit.disassembly = AUDIT_SELECT_NONE;
	return p;
}

/* Overrides and the checks of the whole policy, after the file(s) were applied. */
static int load_finish(Loader *l, char *const *overrides, const char *display)
{
	char cwd[PATH_MAX];
	const char *dir;
	int r;

	dir = l->vars && l->vars->pwd ? l->vars->pwd : getcwd(cwd, sizeof(cwd)) ? cwd : "/";
	for (char *const *o = overrides; o && *o; o++) {
		r = apply_override(l, *o, dir);
		if (r < 0)
			return r;
	}
	return finish(l, display);
}

int policy_load(const char *name, const PolicyVars *vars, char *const *overrides,
		Policy **ret_policy, PolicyError *reterr)
{
	_cleanup_(policy_freep) Policy *p = NULL;
	_cleanup_free_ char *path = NULL, *label = NULL;
	PolicyError scratch;
	Loader l = {.vars = vars, .err = reterr ? reterr : &scratch};
	int r;

	memset(l.err, 0, sizeof(*l.err));
	p = policy_new();
	if (!p)
		return -ENOMEM;
	l.p = p;

	if (looks_like_path(name)) {
		path = strdup(name);
		label = strdup(name);
	} else {
		r = find_preset(name, &path);
		if (r == -ENOENT) {
			Doc d = {.l = &l, .file = name};
			return preset_not_found(&d, NULL, NULL, name);
		}
		if (r < 0)
			return r;
		label = strdup_printf("preset:%s", name);
	}
	if (!path || !label)
		return -ENOMEM;

	r = load_file(&l, path, path, true, NULL, NULL, NULL);
	if (r < 0)
		return r;
	if (!looks_like_path(name) && !p->name) {
		p->name = strdup(name);
		if (!p->name)
			return -ENOMEM;
	}
	r = load_finish(&l, overrides, path);
	if (r < 0)
		return r;
	p->path = TAKE_PTR(label);
	*ret_policy = TAKE_PTR(p);
	return 0;
}

int policy_load_string(const char *text, size_t len, const char *label, const PolicyVars *vars,
		       char *const *overrides, Policy **ret_policy, PolicyError *reterr)
{
	_cleanup_(policy_freep) Policy *p = NULL;
	PolicyError scratch;
	Loader l = {.vars = vars, .err = reterr ? reterr : &scratch};
	char cwd[PATH_MAX];
	int r;

	memset(l.err, 0, sizeof(*l.err));
	p = policy_new();
	if (!p)
		return -ENOMEM;
	l.p = p;
	p->path = strdup(label);
	if (!p->path)
		return -ENOMEM;

	{
		_cleanup_(doc_done) Doc d = {.l = &l, .file = label, .top = true};

		d.dir = vars && vars->pwd ? vars->pwd : getcwd(cwd, sizeof(cwd)) ? cwd : "/";
		r = parse_and_apply(text, len, &d);
		if (r < 0)
			return r;
	}
	r = load_finish(&l, overrides, label);
	if (r < 0)
		return r;
	*ret_policy = TAKE_PTR(p);
	return 0;
}

Policy *policy_free(Policy *p)
{
	if (!p)
		return NULL;
	free(p->path);
	free(p->name);
	free(p->description);
	strv_free(p->extends);
	for (size_t i = 0; i < p->n_mounts; i++) {
		free(p->mounts[i].path);
		free(p->mounts[i].source);
	}
	free(p->mounts);
	for (size_t i = 0; i < p->n_rules; i++)
		free(p->rules[i].glob);
	free(p->rules);
	strv_free(p->exec_allow);
	strv_free(p->exec_deny);
	free_allow(p->network.allow, p->network.n_allow);
	strv_free(p->network.dns);
	strv_free(p->network.unix_sockets);
	for (size_t i = 0; i < p->n_syscalls; i++)
		free(p->syscalls[i].name);
	free(p->syscalls);
	free(p->audit.log);
	strv_free(p->audit.backtrace_syscalls);
	strv_free(p->audit.disassembly_syscalls);
	free(p->process.cwd);
	strv_free(p->process.env_keep);
	strv_free(p->process.env_set);
	free(p);
	return NULL;
}

const char *policy_error_format(const PolicyError *e, char *buf, size_t size)
{
	char pos[300];

	if (e->line)
		snprintf(pos, sizeof(pos), "%s:%u:%u", e->file, e->line, e->column);
	else
		snprintf(pos, sizeof(pos), "%s", e->file);
	if (e->key[0])
		snprintf(buf, size, "%s: %s: %s", pos, e->key, e->message);
	else
		snprintf(buf, size, "%s: %s", pos, e->message);
	return buf;
}

void policy_rule_lookup(const Policy *p, const char *path, RuleAccess *ret_access,
			Sensitivity *ret_level)
{
	policy_rule_lookup_rule(p, path, ret_access, ret_level, NULL);
}

void policy_rule_lookup_rule(const Policy *p, const char *path, RuleAccess *ret_access,
			     Sensitivity *ret_level, const PolicyRule **ret_rule)
{
	RuleAccess restrict_ = RULE_ACCESS_UNSET, nearest = RULE_ACCESS_UNSET;
	const PolicyRule *nearest_rule = NULL;
	Sensitivity level = SENSITIVITY_NONE;
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(buf) || path[0] != '/') {
		/* not a path any rule could be about: fail closed */
		restrict_ = RULE_ACCESS_DENY;
		goto done;
	}
	memcpy(buf, path, len + 1);
	/* a rule that matches a directory covers everything below it: try every prefix,
	 * shortest first, so that the ro/rw rule of the deepest directory wins */
	for (size_t end = 1; end <= len; end++) {
		char saved;

		if (end < len && buf[end] != '/')
			continue;
		if (end == 1 && len > 1)
			continue; /* "/" itself only when the path is "/" */
		saved = buf[end];
		buf[end] = '\0';
		for (size_t i = 0; i < p->n_rules; i++) {
			const PolicyRule *r = &p->rules[i];

			if (!policy_glob_match(r->glob, buf))
				continue;
			if (r->level > level)
				level = r->level;
			if (r->access == RULE_ACCESS_HIDE)
				restrict_ = RULE_ACCESS_HIDE;
			else if (r->access == RULE_ACCESS_DENY && restrict_ != RULE_ACCESS_HIDE)
				restrict_ = RULE_ACCESS_DENY;
			else if (r->access == RULE_ACCESS_RO || r->access == RULE_ACCESS_RW ||
				 r->access == RULE_ACCESS_ASK ||
				 r->access == RULE_ACCESS_ASK_WRITE) {
				nearest = r->access;
				nearest_rule = r;
			}
		}
		buf[end] = saved;
	}
done:
	if (ret_access)
		*ret_access = restrict_ != RULE_ACCESS_UNSET ? restrict_ : nearest;
	if (ret_level)
		*ret_level = level;
	if (ret_rule)
		*ret_rule = restrict_ != RULE_ACCESS_UNSET ? NULL : nearest_rule;
}

bool policy_exec_allowed(const Policy *p, const char *path)
{
	for (char **g = p->exec_deny; g && *g; g++)
		if (policy_glob_match(*g, path))
			return false;
	if (!p->exec_allow)
		return true;
	for (char **g = p->exec_allow; *g; g++)
		if (policy_glob_match(*g, path))
			return true;
	return false;
}

bool policy_exec_askable(const Policy *p, const char *path)
{
	if (!p->exec_ask_unlisted || !p->exec_allow)
		return false;
	for (char **g = p->exec_deny; g && *g; g++)
		if (policy_glob_match(*g, path))
			return false; /* deny is never asked about */
	return !policy_exec_allowed(p, path);
}

const PolicySyscall *policy_syscall_find(const Policy *p, const char *name)
{
	for (size_t i = 0; i < p->n_syscalls; i++)
		if (streq(p->syscalls[i].name, name))
			return &p->syscalls[i];
	return NULL;
}
