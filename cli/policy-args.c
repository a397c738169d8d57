/* SPDX-License-Identifier: MIT */
#include "cli/cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"

void policy_args_done(PolicyArgs *a)
{
	a->overrides = strv_free(a->overrides);
	a->workspace = NULL;
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
	default:
		return 0;
	}
}

int policy_args_load(const PolicyArgs *a, const char *name, Policy **ret_policy)
{
	char cwd[PATH_MAX], runtime[PATH_MAX], ws[PATH_MAX];
	PolicyVars vars = {0};
	PolicyError err = {0};
	char buf[1024];
	int r;

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
	}

	r = policy_load(name, &vars, a->overrides, ret_policy, &err);
	if (r == -ENOMEM)
		return log_error_errno(r, "loading policy");
	if (r < 0) {
		log_error("%s", policy_error_format(&err, buf, sizeof(buf)));
		return r;
	}
	return 0;
}
