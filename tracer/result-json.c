/* SPDX-License-Identifier: MIT */
/* The --json result (docs/json-result.md): one object per run. */
#include "tracer/tracer.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "common/json-writer.h"
#include "common/log.h"
#include "common/macros.h"
#include "policy/policy.h"

static const char *signal_name(int sig)
{
	static const struct {
		int sig;
		const char *name;
	} names[] = {
		{SIGHUP, "SIGHUP"},	  {SIGINT, "SIGINT"},	{SIGQUIT, "SIGQUIT"},
		{SIGILL, "SIGILL"},	  {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"},
		{SIGBUS, "SIGBUS"},	  {SIGFPE, "SIGFPE"},	{SIGKILL, "SIGKILL"},
		{SIGUSR1, "SIGUSR1"},	  {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
		{SIGPIPE, "SIGPIPE"},	  {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
		{SIGCHLD, "SIGCHLD"},	  {SIGCONT, "SIGCONT"}, {SIGSTOP, "SIGSTOP"},
		{SIGTSTP, "SIGTSTP"},	  {SIGTTIN, "SIGTTIN"}, {SIGTTOU, "SIGTTOU"},
		{SIGURG, "SIGURG"},	  {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"},
		{SIGVTALRM, "SIGVTALRM"}, {SIGPROF, "SIGPROF"}, {SIGWINCH, "SIGWINCH"},
		{SIGIO, "SIGIO"},	  {SIGPWR, "SIGPWR"},	{SIGSYS, "SIGSYS"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].sig == sig)
			return names[i].name;
	return NULL;
}

static void json_limit(JsonWriter *w, const char *key, uint64_t v)
{
	json_key(w, key);
	if (v == LIMIT_UNSET)
		json_null(w);
	else
		json_uint(w, v);
}

int tracer_result_write_json(const Policy *p, const TracerResult *r, FILE *f)
{
	_cleanup_free_ char *text = NULL;
	char buf[32];
	JsonWriter w;
	size_t len;
	int e;

	json_init(&w, -1);
	json_begin_object(&w);
	json_key(&w, "stdout");
	json_string_len(&w, r->out ? r->out : "", r->out_len);
	json_key(&w, "stderr");
	json_string_len(&w, r->err ? r->err : "", r->err_len);
	json_key(&w, "stdout_truncated");
	json_bool(&w, r->out_truncated);
	json_key(&w, "stderr_truncated");
	json_bool(&w, r->err_truncated);
	json_key(&w, "truncated");
	json_bool(&w, r->out_truncated || r->err_truncated);
	json_key(&w, "exit_code");
	json_int(&w, r->exit_code);
	json_key(&w, "signal");
	if (r->signal > 0) {
		const char *n = signal_name(r->signal);

		if (!n) {
			snprintf(buf, sizeof(buf), "SIG%d", r->signal);
			n = buf;
		}
		json_string(&w, n);
	} else
		json_null(&w);
	json_key(&w, "duration_ms");
	json_uint(&w, r->duration_ms);
	json_key(&w, "timed_out");
	json_bool(&w, r->timed_out);
	json_key(&w, "killed_by");
	if (r->killed_by)
		json_string(&w, r->killed_by);
	else
		json_null(&w);
	json_key(&w, "denied");
	json_uint(&w, r->denied);
	json_key(&w, "usage");
	if (r->usage_known) {
		json_begin_object(&w);
		json_key(&w, "cpu_time_ms");
		json_uint(&w, r->cpu_time_ms);
		json_key(&w, "memory_peak");
		json_uint(&w, r->memory_peak);
		json_key(&w, "tasks_peak");
		json_uint(&w, r->tasks_peak);
		json_key(&w, "disk_written");
		json_uint(&w, r->disk_written);
		json_key(&w, "clones_denied");
		json_uint(&w, r->clones_denied);
		json_end_object(&w);
	} else
		json_null(&w);
	json_key(&w, "policy");
	json_begin_object(&w);
	json_key(&w, "name");
	if (p->name)
		json_string(&w, p->name);
	else
		json_null(&w);
	json_key(&w, "path");
	if (p->path)
		json_string(&w, p->path);
	else
		json_null(&w);
	json_end_object(&w);
	json_key(&w, "limits");
	json_begin_object(&w);
	json_limit(&w, "wall_time_ms", p->limits.wall_time_ms);
	json_limit(&w, "cpu_time_ms", p->limits.cpu_time_ms);
	json_limit(&w, "memory", p->limits.memory);
	json_limit(&w, "tasks", p->limits.tasks);
	json_limit(&w, "file_size", p->limits.file_size);
	json_limit(&w, "open_files", p->limits.open_files);
	json_limit(&w, "disk", p->limits.disk);
	json_limit(&w, "output", p->limits.output);
	json_limit(&w, "kill_grace_ms", p->limits.kill_grace_ms);
	json_end_object(&w);
	/* what held the command; added after the fields above (fields are only ever added) */
	json_key(&w, "view");
	json_string(&w, r->kernel_view ? "kernel" : "emulated");
	json_key(&w, "view_reason");
	if (!r->kernel_view && r->view_reason[0])
		json_string(&w, r->view_reason);
	else
		json_null(&w);
	json_key(&w, "layers");
	json_begin_object(&w);
	json_key(&w, "landlock_abi");
	if (r->landlock_abi > 0)
		json_int(&w, r->landlock_abi);
	else
		json_null(&w);
	json_key(&w, "user_namespace");
	json_bool(&w, r->userns);
	json_key(&w, "ptrace");
	json_bool(&w, r->ptrace);
	json_end_object(&w);
	json_end_object(&w);
	e = json_finish(&w, &text, &len);
	if (e < 0)
		return log_error_errno(e, "writing the JSON result");
	text[len] = 0;
	if (fputs(text, f) < 0 || fputc('\n', f) < 0 || fflush(f) != 0)
		return log_error_errno(-EIO, "writing the JSON result");
	return 0;
}
