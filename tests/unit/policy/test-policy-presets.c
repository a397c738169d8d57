/* SPDX-License-Identifier: MIT */
/*
 * Every file in policies/ loads (by path and by preset name), and its effective policy
 * round-trips: written, loaded again and written again, the text is the same.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/macros.h"
#include "policy/policy.h"
#include "tests/unit/tap.h"

static char *to_toml(const Policy *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	(void) policy_write_toml(p, f);
	fclose(f);
	return buf;
}

static const char *preset_dir;
static char scratch[PATH_MAX];
static PolicyVars vars;

static int check_one(const char *file)
{
	_cleanup_(policy_freep) Policy *p = NULL, *by_name = NULL, *q = NULL;
	_cleanup_free_ char *a = NULL, *b = NULL, *c = NULL;
	char path[PATH_MAX * 2], name[256], out[PATH_MAX + 64], buf[1024];
	PolicyError err;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", preset_dir, file);
	snprintf(name, sizeof(name), "%.*s", (int) (strlen(file) - 5), file);
	if (policy_load(path, &vars, NULL, &p, &err) < 0) {
		printf("# %s\n", policy_error_format(&err, buf, sizeof(buf)));
		return -1;
	}
	if (policy_load(name, &vars, NULL, &by_name, &err) < 0) {
		printf("# by name: %s\n", policy_error_format(&err, buf, sizeof(buf)));
		return -1;
	}
	a = to_toml(p);
	c = to_toml(by_name);
	if (!a || !c || strcmp(a, c) != 0) {
		printf("# %s: loading by path and by name differ\n", file);
		return -1;
	}
	if (strcmp(by_name->path, "preset:") <= 0 || strncmp(by_name->path, "preset:", 7) != 0) {
		printf("# %s: path '%s'\n", file, by_name->path);
		return -1;
	}
	snprintf(out, sizeof(out), "%s/%s", scratch, file);
	f = fopen(out, "we");
	if (!f)
		return -1;
	fputs(a, f);
	fclose(f);
	if (policy_load(out, &vars, NULL, &q, &err) < 0) {
		printf("# written %s: %s\n", file, policy_error_format(&err, buf, sizeof(buf)));
		return -1;
	}
	b = to_toml(q);
	if (!b || strcmp(a, b) != 0) {
		printf("# %s: output does not round-trip\n", file);
		return -1;
	}
	if (!p->name || !streq(p->name, name)) {
		printf("# %s: [sandbox] name is '%s'\n", file, p->name);
		return -1;
	}
	return 0;
}

TEST(every_preset_loads_and_round_trips)
{
	DIR *d = opendir(preset_dir);
	struct dirent *de;
	int n = 0;

	ASSERT_TRUE(d != NULL);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len <= 5 || !streq(de->d_name + len - 5, ".toml"))
			continue;
		n++;
		if (check_one(de->d_name) < 0)
			TAP_FAIL_(0, "preset %s", de->d_name);
	}
	closedir(d);
	EXPECT_GE(n, 6);
}

TEST(named_presets_exist)
{
	static const char *const names[] = {"permissive", "standard", "strict",
					    "python",	  "node",     "shell"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		_cleanup_(policy_freep) Policy *p = NULL;
		PolicyError err;

		if (policy_load(names[i], &vars, NULL, &p, &err) < 0)
			TAP_FAIL_(0, "preset %s: %s", names[i], err.message);
	}
}

TEST(preset_levels_are_ordered)
{
	_cleanup_(policy_freep) Policy *perm = NULL, *std = NULL, *strict = NULL;
	PolicyError err;

	ASSERT_EQ(policy_load("permissive", &vars, NULL, &perm, &err), 0);
	ASSERT_EQ(policy_load("standard", &vars, NULL, &std, &err), 0);
	ASSERT_EQ(policy_load("strict", &vars, NULL, &strict, &err), 0);
	EXPECT_EQ(perm->limits.wall_time_ms, 60000);
	EXPECT_EQ(perm->limits.memory, 1ull << 30);
	EXPECT_EQ(std->limits.wall_time_ms, 30000);
	EXPECT_EQ(std->limits.memory, 512ull << 20);
	EXPECT_EQ(std->limits.cpus, 1);
	EXPECT_EQ(strict->limits.wall_time_ms, 10000);
	EXPECT_EQ(strict->limits.memory, 256ull << 20);
	EXPECT_EQ(perm->network.mode, NET_MODE_NONE);
	EXPECT_EQ(std->network.mode, NET_MODE_NONE);
	EXPECT_EQ(strict->network.mode, NET_MODE_NONE);
	EXPECT_LT(strict->limits.tasks, std->limits.tasks);
}

TEST(preset_dir_env_comes_first)
{
	_cleanup_(policy_freep) Policy *p = NULL;
	char dir[PATH_MAX + 16], file[PATH_MAX + 64];
	const char *const *dirs;
	PolicyError err;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/presets", scratch);
	ASSERT_EQ(mkdir(dir, 0755), 0);
	snprintf(file, sizeof(file), "%s/standard.toml", dir);
	f = fopen(file, "we");
	ASSERT_TRUE(f != NULL);
	fputs("[sandbox]\nname = \"shadowed\"\n", f);
	fclose(f);

	ASSERT_EQ(setenv("SBXTRACE_PRESET_DIR", dir, 1), 0);
	dirs = policy_preset_dirs();
	EXPECT_STREQ(dirs[0], dir);
	if (SBX_SOURCE_PRESET_DIR[0]) {
		EXPECT_STREQ(dirs[1], SBX_SOURCE_PRESET_DIR);
		EXPECT_STREQ(dirs[2], SBX_PRESET_DIR);
		EXPECT_TRUE(dirs[3] == NULL);
	} else {
		EXPECT_STREQ(dirs[1], SBX_PRESET_DIR);
		EXPECT_TRUE(dirs[2] == NULL);
	}
	EXPECT_EQ(policy_load("standard", &vars, NULL, &p, &err), 0);
	EXPECT_TRUE(p && streq(p->name, "shadowed"));
	EXPECT_EQ(setenv("SBXTRACE_PRESET_DIR", preset_dir, 1), 0);
}

int main(void)
{
	char ws[PATH_MAX + 8];
	const char *tmp = getenv("TMPDIR");
	int r;

	preset_dir = getenv("SBXTRACE_PRESET_DIR");
	if (preset_dir)
		preset_dir = strdup(preset_dir);
	if (!preset_dir) {
		fprintf(stderr, "SBXTRACE_PRESET_DIR is not set (meson test sets it)\n");
		return 77;
	}
	snprintf(scratch, sizeof(scratch), "%s/test-policy-presets-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(scratch))
		return 1;
	snprintf(ws, sizeof(ws), "%s/ws", scratch);
	if (mkdir(ws, 0755) < 0)
		return 1;
	vars = (PolicyVars){
		.workspace = ws, .home = scratch, .pwd = scratch, .runtime_dir = scratch};
	r = tap_run();
	if (r == 0) {
		char cmd[PATH_MAX + 32];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
		(void) !system(cmd);
	}
	return r;
}
