/* SPDX-License-Identifier: MIT */
/*
 * The audit tests' common part: the test program runs itself as the probe under
 * `sbxtrace run --audit LOG` (argv: probe [WHAT] MARKER), then reads the log.
 */
#pragma once

#include <jansson.h>

#include "tests/helpers/sbx-test.h"

static char self[4096];
static char dir[512], log_path[600], marker[600], err_path[600];

/* Runs sbxtrace run -s (sysinfo denied) [extra…] [--audit log] policy -- self probe [what]
 * marker, stdin and stdout on /dev/null, stderr into err_path; the exit code. */
static int run_logged(const char *const *extra, bool with_log, const char *what)
{
	const char *argv[40];
	size_t n = 0;
	int status, fd;
	pid_t pid;

	argv[n++] = sbx_env("SBXTRACE");
	argv[n++] = "run";
	argv[n++] = "-s";
	argv[n++] = "syscalls.deny=[\"sysinfo:EACCES\"]";
	for (; extra && *extra && n < 30; extra++)
		argv[n++] = *extra;
	if (with_log) {
		argv[n++] = "--audit";
		argv[n++] = log_path;
	}
	argv[n++] = sbx_env("SBX_POLICY");
	argv[n++] = "--";
	argv[n++] = self;
	argv[n++] = "probe";
	if (what)
		argv[n++] = what;
	argv[n++] = marker;
	argv[n] = NULL;

	pid = fork();
	if (pid == 0) {
		fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			_exit(98);
		dup2(fd, 2);
		fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		dup2(fd, 0);
		dup2(fd, 1);
		execv(argv[0], (char **) argv);
		_exit(99);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return sbx_status_code(status);
}

/* Loads the log: an array of records; every line must parse. */
static json_t *load_log(void)
{
	json_t *all = json_array();
	FILE *f = fopen(log_path, "re");
	char *line = NULL;
	size_t cap = 0;
	unsigned no = 0;

	if (!f)
		return all;
	while (getline(&line, &cap, f) > 0) {
		json_error_t e;
		json_t *rec = json_loads(line, 0, &e);

		no++;
		if (!rec) {
			printf("# line %u does not parse: %s\n", no, e.text);
			json_array_append_new(all, json_string("unparsable"));
			continue;
		}
		json_array_append_new(all, rec);
	}
	free(line);
	fclose(f);
	return all;
}

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static bool setup(void)
{
	char *d = sbx_tmpdir();
	int fd;

	if (!d)
		return false;
	snprintf(dir, sizeof(dir), "%s", d);
	snprintf(log_path, sizeof(log_path), "%s/audit.jsonl", dir);
	snprintf(marker, sizeof(marker), "%s/marker.txt", dir);
	snprintf(err_path, sizeof(err_path), "%s/stderr.txt", dir);
	fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void cleanup(void)
{
	unlink(log_path);
	unlink(marker);
	unlink(err_path);
	rmdir(dir);
}
