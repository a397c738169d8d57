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
	jw_key(w, key);
	if (v == LIMIT_UNSET)
		jw_null(w);
	else
		jw_uint(w, v);
}

int tracer_result_write_json(const Policy *p, const TracerResult *r, FILE *f)
{
	_cleanup_free_ char *text = NULL;
	char buf[32];
	JsonWriter w;
	size_t len;
	int e;

	jw_init(&w, -1);
	jw_begin_object(&w);
	jw_key(&w, "stdout");
	jw_string_len(&w, r->out ? r->out : "", r->out_len);
	jw_key(&w, "stderr");
	jw_string_len(&w, r->err ? r->err : "", r->err_len);
	jw_key(&w, "stdout_truncated");
	jw_bool(&w, r->out_truncated);
	jw_key(&w, "stderr_truncated");
	jw_bool(&w, r->err_truncated);
	jw_key(&w, "truncated");
	jw_bool(&w, r->out_truncated || r->err_truncated);
	jw_key(&w, "exit_code");
	jw_int(&w, r->exit_code);
	jw_key(&w, "signal");
	if (r->signal > 0) {
		const char *n = signal_name(r->signal);

		if (!n) {
			snprintf(buf, sizeof(buf), "SIG%d", r->signal);
			n = buf;
		}
		jw_string(&w, n);
	} else
		jw_null(&w);
	jw_key(&w, "duration_ms");
	jw_uint(&w, r->duration_ms);
	jw_key(&w, "timed_out");
	jw_bool(&w, r->timed_out);
	jw_key(&w, "killed_by");
	if (r->killed_by)
		jw_string(&w, r->killed_by);
	else
		jw_null(&w);
	jw_key(&w, "denied");
	jw_uint(&w, r->denied);
	jw_key(&w, "usage");
	if (r->usage_known) {
		jw_begin_object(&w);
		jw_key(&w, "cpu_time_ms");
		jw_uint(&w, r->cpu_time_ms);
		jw_key(&w, "memory_peak");
		jw_uint(&w, r->memory_peak);
		jw_key(&w, "tasks_peak");
		jw_uint(&w, r->tasks_peak);
		jw_key(&w, "disk_written");
		jw_uint(&w, r->disk_written);
		jw_key(&w, "clones_denied");
		jw_uint(&w, r->clones_denied);
		jw_end_object(&w);
	} else
		jw_null(&w);
	jw_key(&w, "network");
	jw_begin_object(&w);
	jw_key(&w, "mode");
	jw_string(&w, net_mode_to_string(p->network.mode));
	jw_key(&w, "mode_end");
	jw_string(&w, net_mode_to_string((NetMode) r->net_mode_end));
	jw_key(&w, "level");
	if (r->net_level_max > SENSITIVITY_NONE)
		jw_string(&w, sensitivity_to_string((Sensitivity) r->net_level_max));
	else
		jw_null(&w);
	jw_end_object(&w);
	jw_key(&w, "policy");
	jw_begin_object(&w);
	jw_key(&w, "name");
	if (p->name)
		jw_string(&w, p->name);
	else
		jw_null(&w);
	jw_key(&w, "path");
	if (p->path)
		jw_string(&w, p->path);
	else
		jw_null(&w);
	jw_end_object(&w);
	jw_key(&w, "limits");
	jw_begin_object(&w);
	json_limit(&w, "wall_time_ms", p->limits.wall_time_ms);
	json_limit(&w, "cpu_time_ms", p->limits.cpu_time_ms);
	json_limit(&w, "memory", p->limits.memory);
	json_limit(&w, "tasks", p->limits.tasks);
	json_limit(&w, "file_size", p->limits.file_size);
	json_limit(&w, "open_files", p->limits.open_files);
	json_limit(&w, "disk", p->limits.disk);
	json_limit(&w, "output", p->limits.output);
	json_limit(&w, "kill_grace_ms", p->limits.kill_grace_ms);
	jw_end_object(&w);
	/* what held the command; added after the fields above (fields are only ever added) */
	jw_key(&w, "view");
	jw_string(&w, r->kernel_view ? "kernel" : "emulated");
	jw_key(&w, "view_reason");
	if (!r->kernel_view && r->view_reason[0])
		jw_string(&w, r->view_reason);
	else
		jw_null(&w);
	jw_key(&w, "layers");
	jw_begin_object(&w);
	jw_key(&w, "landlock_abi");
	if (r->landlock_abi > 0)
		jw_int(&w, r->landlock_abi);
	else
		jw_null(&w);
	jw_key(&w, "user_namespace");
	jw_bool(&w, r->userns);
	jw_key(&w, "ipc_namespace");
	jw_bool(&w, r->ipcns);
	jw_key(&w, "pid_namespace");
	jw_bool(&w, r->pidns);
	jw_key(&w, "ptrace");
	jw_bool(&w, r->ptrace);
	jw_key(&w, "exec_events");
	jw_bool(&w, r->exec_events);
	jw_end_object(&w);
	/* added after "layers": where connect, bind, listen and the sends were decided */
	jw_key(&w, "network_calls");
	jw_string(&w, r->net_in_kernel ? "kernel" : "supervisor");
	jw_key(&w, "network_calls_reason");
	if (!r->net_in_kernel && r->net_reason[0])
		jw_string(&w, r->net_reason);
	else
		jw_null(&w);
	/* added after "network_calls": who made the file opens (docs/json-result.md) */
	jw_key(&w, "file_opens");
	jw_string(&w, r->file_opens ? r->file_opens : "supervisor");
	jw_key(&w, "file_opens_reason");
	if (r->file_opens_reason[0])
		jw_string(&w, r->file_opens_reason);
	else
		jw_null(&w);
	jw_end_object(&w);
	e = jw_finish(&w, &text, &len);
	if (e < 0)
		return log_error_errno(e, "writing the JSON result");
	text[len] = 0;
	if (fputs(text, f) < 0 || fputc('\n', f) < 0 || fflush(f) != 0)
		return log_error_errno(-EIO, "writing the JSON result");
	return 0;
}
