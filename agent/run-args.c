/* SPDX-License-Identifier: MIT */
/*
 * The command line of every `sbxtrace run` the agent starts: one-shot executions (exec.c),
 * stateful contexts (context.c) and background processes (process.c) differ only in how
 * the result comes back (--json on stdout, or --result-fd), in whether held connects are
 * asked (--approval-fd), and in their overrides; the session's workspace, policy and the
 * escaping of what came from the agent are the same for all, so they are written once here.
 *
 * Everything an agent gives (env, cwd) becomes a TOML value written by policy_write_string(),
 * never text spliced into a key: `-s` overrides are parsed as TOML by the run, so a value can
 * only ever be that value.
 */
#include "agent/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macros.h"
#include "common/util.h"

/* A TOML inline table { "K" = "V", … } of env for -s process.env.set=…; NULL on a bad name. */
char *env_override(json_t *env, char *err, size_t errsize)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	bool first = true;

	if (!f)
		return NULL;
	fputs("process.env.set={", f);
	for (void *it = json_object_iter(env); it; it = json_object_iter_next(env, it)) {
		const char *k = json_object_iter_key(it);
		const char *val = json_string_value(json_object_iter_value(it));

		if (!*k ||
		    strspn(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") !=
			    strlen(k) ||
		    (*k >= '0' && *k <= '9') || !val) {
			snprintf(err, errsize,
				 "env: '%.64s' is not a variable name with a string value", k);
			fclose(f);
			free(buf);
			return NULL;
		}
		fprintf(f, "%s%s = ", first ? " " : ", ", k);
		policy_write_string(f, val, false);
		first = false;
	}
	fputs(" }", f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

char *toml_string_override(const char *prefix, const char *value)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f;

	if (!value || value[0] != '/' || strlen(value) > 4096)
		return NULL;
	f = open_memstream(&buf, &size);
	if (!f)
		return NULL;
	fputs(prefix, f);
	policy_write_string(f, value, true);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int push_fd_option(char ***v, const char *option, int fd)
{
	char num[16];
	int r;

	snprintf(num, sizeof(num), "%d", fd);
	r = strv_push(v, option);
	return r < 0 ? r : strv_push(v, num);
}

static int push_set(char ***v, const char *value)
{
	int r = strv_push(v, "-s");

	return r < 0 ? r : strv_push(v, value);
}

int run_argv(const Session *s, const RunArgs *a, char ***ret, char *err, size_t errsize)
{
	_cleanup_free_ char *ws = NULL, *policy = NULL, *wall = NULL, *env = NULL, *cwd = NULL;
	char **v = NULL;
	int r = 0;

	if (a->cwd && !(cwd = toml_string_override("process.cwd=", a->cwd))) {
		/* a TOML string, so that the override is never parsed as anything else */
		snprintf(err, errsize, "cwd must be an absolute path inside the sandbox");
		return -EINVAL;
	}
	if (a->env && json_object_size(a->env) > 0 && !(env = env_override(a->env, err, errsize)))
		return -EINVAL;
	ws = strdup_printf("%s/workspace", s->dir);
	policy = strdup_printf("%s/policy.toml", s->dir);
	if (a->wall_s)
		wall = strdup_printf("limits.wall_time=%llus", (unsigned long long) a->wall_s);
	if (!ws || !policy || (a->wall_s && !wall))
		return -ENOMEM;

	r = strv_push(&v, "sbxtrace");
	if (r >= 0)
		r = strv_push(&v, "run");
	if (r >= 0)
		r = strv_push(&v, "-q");
	if (r >= 0)
		r = a->result_fd > 2 ? push_fd_option(&v, "--result-fd", a->result_fd)
				     : strv_push(&v, "--json");
	if (r >= 0 && a->approval_fd > 2)
		r = push_fd_option(&v, "--approval-fd", a->approval_fd);
	if (r >= 0)
		r = strv_push(&v, "-w");
	if (r >= 0)
		r = strv_push(&v, ws);
	if (r >= 0 && a->audit_path) {
		r = strv_push(&v, "--audit");
		if (r >= 0)
			r = strv_push(&v, a->audit_path);
	}
	if (r >= 0 && wall)
		r = push_set(&v, wall);
	if (r >= 0 && env)
		r = push_set(&v, env);
	if (r >= 0 && cwd)
		r = push_set(&v, cwd);
	for (size_t i = 0; r >= 0 && a->overrides && a->overrides[i]; i++)
		r = push_set(&v, a->overrides[i]);
	if (r >= 0)
		r = strv_push(&v, policy);
	if (r >= 0)
		r = strv_push(&v, "--");
	for (size_t i = 0; r >= 0 && a->command && a->command[i]; i++)
		r = strv_push(&v, a->command[i]);
	if (r < 0) {
		strv_free(v);
		return r;
	}
	*ret = v;
	return 0;
}
