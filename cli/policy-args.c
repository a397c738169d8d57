/* SPDX-License-Identifier: MIT */
/*
 * The options of the subcommands that load a policy (run, check, learn): -w, -s and
 * --workspace-anywhere, and the workspace rules of docs/policy.md "Variables": ${WORKSPACE} is
 * -w DIR or else the current directory, and never /, a home directory or a system directory
 * unless --workspace-anywhere says so. The presets mount the workspace read-write, so a
 * workspace there would hand the program the user's whole home or the system's
 * configuration.
 */
#include "cli/cli.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/macros.h"
#include "common/util.h"

void policy_args_done(PolicyArgs *a)
{
	a->overrides = strv_free(a->overrides);
	a->workspace = NULL;
	free(a->workspace_path);
	a->workspace_path = NULL;
}

int policy_args_parse_opt(PolicyArgs *a, int opt, const char *optarg_)
{
	switch (opt) {
	case 'w':
		a->workspace = optarg_;
		return 1;
	case 's':
		if (strv_push(&a->overrides, optarg_) < 0)
			return -ENOMEM;
		return 1;
	case ARG_WORKSPACE_ANYWHERE:
		a->workspace_anywhere = true;
		return 1;
	default:
		return 0;
	}
}

/* Whether path, resolved through symlinks, is dir (a real path). */
static bool same_real_path(const char *path, const char *dir)
{
	char real[PATH_MAX];

	if (!path || path[0] != '/')
		return false;
	if (streq(path, dir))
		return true;
	return realpath(path, real) && streq(real, dir);
}

/* What dir (a real path) is when it is no place for a workspace, else NULL. /bin is
 * /usr/bin on a merged-/usr system: each listed directory is compared resolved too. */
static const char *workspace_refusal(const char *dir)
{
	static const char *const system_dirs[] = {"/etc", "/usr",  "/bin", "/sbin", "/boot",
						  "/dev", "/proc", "/sys", "/root", "/var"};
	const struct passwd *pw;

	if (streq(dir, "/"))
		return "the root directory";
	if (same_real_path(getenv("HOME"), dir))
		return "the home directory";
	pw = getpwuid(getuid());
	if (pw && same_real_path(pw->pw_dir, dir))
		return "the home directory";
	for (size_t i = 0; i < ARRAY_SIZE(system_dirs); i++)
		if (same_real_path(system_dirs[i], dir))
			return "a system directory";
	return NULL;
}

int policy_args_load(PolicyArgs *a, const char *name, Policy **ret_policy)
{
	_cleanup_(policy_freep) Policy *p = NULL;
	char cwd[PATH_MAX], runtime[PATH_MAX], ws[PATH_MAX];
	PolicyVars vars = {0};
	PolicyError err = {0};
	const char *why;
	char buf[1024];
	int r;

	free(a->workspace_path);
	a->workspace_path = NULL;
	vars.home = getenv("HOME");
	if (getcwd(cwd, sizeof(cwd)))
		vars.pwd = cwd;
	vars.runtime_dir = getenv("XDG_RUNTIME_DIR");
	if (!vars.runtime_dir) {
		snprintf(runtime, sizeof(runtime), "/tmp/sbxtrace-%u", (unsigned) getuid());
		vars.runtime_dir = runtime;
	}
	if (a->workspace) {
		struct stat st;

		if (!realpath(a->workspace, ws))
			return log_error_errno(-errno, "workspace '%.200s'", a->workspace);
		if (stat(ws, &st) < 0)
			return log_error_errno(-errno, "workspace '%.200s'", ws);
		if (!S_ISDIR(st.st_mode))
			return log_error_errno(-ENOTDIR, "workspace '%.200s'", ws);
		vars.workspace = ws;
	} else if (vars.pwd && realpath(vars.pwd, ws)) {
		/* implied; a current directory that is gone leaves ${WORKSPACE} unset, and the
		 * policy's own error says to use -w */
		vars.workspace = ws;
	}

	r = policy_load(name, &vars, a->overrides, &p, &err);
	if (r == -ENOMEM)
		return log_error_errno(r, "loading policy");
	if (r < 0) {
		log_error("%s", policy_error_format(&err, buf, sizeof(buf)));
		return r;
	}

	/* Only a workspace the policy mounts matters: a policy without ${WORKSPACE} runs from
	 * anywhere, and an unused -w DIR exposes nothing. */
	if (!p->uses_workspace) {
		*ret_policy = TAKE_PTR(p);
		return 0;
	}
	why = a->workspace_anywhere ? NULL : workspace_refusal(ws);
	if (why && a->workspace) {
		log_error("refusing '%.200s'%s%.200s%s as the workspace: it is %s, which the "
			  "policy would expose as ${WORKSPACE}; give -w DIR with a project "
			  "directory, or --workspace-anywhere to use it anyway",
			  a->workspace, streq(a->workspace, ws) ? "" : " (",
			  streq(a->workspace, ws) ? "" : ws, streq(a->workspace, ws) ? "" : ")",
			  why);
		return -EPERM;
	}
	if (why) {
		log_error("refusing the current directory '%.200s' as the workspace: it is %s, "
			  "which the policy would expose as ${WORKSPACE}; run from a project "
			  "directory, give -w DIR, or --workspace-anywhere to use it anyway",
			  ws, why);
		return -EPERM;
	}
	if (!a->workspace && !a->quiet)
		log_info("workspace: %s (the current directory; -w DIR to choose another)", ws);
	a->workspace_path = strdup(ws);
	if (!a->workspace_path)
		return log_error_errno(-ENOMEM, "loading policy");
	*ret_policy = TAKE_PTR(p);
	return 0;
}
