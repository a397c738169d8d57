/* SPDX-License-Identifier: MIT */
/*
 * sbxtrace run [OPTIONS] POLICY -- CMD [ARGS…]
 *
 * Loads the policy, hands the command to the supervisor (tracer_run) and exits with the
 * command's status (DESIGN.md "Contract"). With --json, prints one JSON object after the run
 * (docs/json-result.md).
 */
#include "cli/cli.h"

#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "common/log.h"
#include "common/util.h"
#include "tracer/tracer.h"

static void help(FILE *f)
{
	fputs("Usage: sbxtrace run [OPTIONS] POLICY -- CMD [ARGS…]\n"
	      "\n"
	      "Run CMD inside the sandbox POLICY describes (a .toml file or a preset name).\n"
	      "\n"
	      "Options:\n"
	      "  -w, --workspace DIR  directory that ${WORKSPACE} names in the policy\n"
	      "                       (default: the current directory)\n"
	      "      --workspace-anywhere  allow /, the home directory or a system directory\n"
	      "                       as the workspace\n"
	      "  -s, --set KEY=VALUE  override one policy setting (repeatable)\n"
	      "      --json           capture stdout and stderr and print one JSON result\n"
	      "      --trace          print a line per interposed syscall on stderr\n"
	      "      --audit FILE     write the audit log (JSON Lines, docs/audit.md) to FILE\n"
	      "      --result-fd N    write the --json result to descriptor N, output not captured\n"
	      "      --approval-fd N  ask for held connects (network.unlisted = \"ask\") over\n"
	      "                       descriptor N (JSON lines; docs/network.md)\n"
	      "      --approval-socket PATH  serve the approval socket on PATH for held connects\n"
	      "                       (sbxtrace approvals/approve --socket PATH)\n"
	      "  -q, --quiet          print only errors of our own\n"
	      "  -h, --help           show this help\n"
	      "\n"
	      "Examples:\n"
	      "  sbxtrace run standard -- python3 main.py  # the current directory as /workspace\n"
	      "  sbxtrace run -w ~/project -s limits.wall_time=5s strict -- ./test.sh\n"
	      "  sbxtrace run --json --audit log.jsonl standard -- sh -c 'make && make test'\n"
	      "\n"
	      "Exit status: the command's own; 128+N if it was killed by signal N; 124 wall-clock\n"
	      "timeout; 125 sandbox error; 126 command cannot be executed; 127 command not "
	      "found.\n",
	      f);
}

DEFINE_FREEP(Audit, audit_free)

/* The audit log (--audit wins over [audit] log) and the trace, opened before anything runs:
 * an unwritable log is a sandbox error, not a run without its record. */
static int run_audit_open(const Policy *p, const char *path, bool trace, Audit **ret)
{
	AuditOptions ao = {
		.log_path = path ? path : p->audit.log,
		.log_fd = -1,
		.trace = trace,
		.events = p->audit.events,
		.disassembly = p->audit.disassembly,
		.disassembly_syscalls = p->audit.disassembly_syscalls,
		.backtrace = p->audit.backtrace,
		.backtrace_syscalls = p->audit.backtrace_syscalls,
	};
	int r;

	/* syscalls the policy marks "log" get a trace line even without --trace */
	for (size_t i = 0; i < p->n_syscalls; i++)
		if (p->syscalls[i].action == SYSCALL_ACTION_LOG)
			ao.trace_logged = !ao.log_path;
	r = audit_open(&ao, ret);
	if (r < 0)
		return log_error_errno(r, "cannot open the audit log '%.200s'",
				       ao.log_path ? ao.log_path : "");
	return 0;
}

int cli_run_recorded(const Policy *policy, TracerOptions *o, Audit *audit, TracerResult *ret)
{
	int r;

	/* tracer_run writes the start record, once it knows the view */
	o->audit = audit;
	r = tracer_run(policy, o, ret);
	if (r < 0) {
		(void) audit_close(audit);
		o->audit = NULL;
		return r;
	}
	audit_run_end(audit, ret->exit_code, ret->signal, ret->killed_by, ret->denied,
		      ret->duration_ms);
	o->audit = NULL;
	r = audit_close(audit);
	if (r < 0) {
		log_warn_errno(r, "writing the audit log");
		return -EIO;
	}
	return 0;
}

int cmd_run(int argc, char *argv[])
{
	enum { ARG_JSON = 0x100, ARG_TRACE, ARG_AUDIT, ARG_RESULT_FD, ARG_APPROVAL_FD,
	       ARG_APPROVAL_SOCKET };
	static const struct option options[] = {
		{"workspace", required_argument, NULL, 'w'},
		{"set", required_argument, NULL, 's'},
		{"workspace-anywhere", no_argument, NULL, ARG_WORKSPACE_ANYWHERE},
		{"json", no_argument, NULL, ARG_JSON},
		{"trace", no_argument, NULL, ARG_TRACE},
		{"audit", required_argument, NULL, ARG_AUDIT},
		{"result-fd", required_argument, NULL, ARG_RESULT_FD},
		{"approval-fd", required_argument, NULL, ARG_APPROVAL_FD},
		{"approval-socket", required_argument, NULL, ARG_APPROVAL_SOCKET},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{}};
	_cleanup_(policy_freep) Policy *policy = NULL;
	_cleanup_(audit_freep) Audit *audit = NULL;
	PolicyArgs pa = {};
	TracerOptions o = {};
	TracerResult res = {};
	const char *name, *audit_path = NULL;
	int c, r, result_fd = -1;

	optind = 0;
	while ((c = getopt_long(argc, argv, "+w:s:qh", options, NULL)) >= 0) {
		r = policy_args_parse_opt(&pa, c, optarg);
		if (r < 0) {
			policy_args_done(&pa);
			return EXIT_SANDBOX_ERROR;
		}
		if (r > 0)
			continue;
		switch (c) {
		case ARG_JSON:
			o.capture = true;
			break;
		case ARG_TRACE:
			o.trace = true;
			break;
		case ARG_AUDIT:
			audit_path = optarg;
			break;
		case ARG_RESULT_FD: {
			char *end;
			long v = strtol(optarg, &end, 10);

			/* the result without capturing the output: the agent layer's stateful contexts
			 * stream the program's output and want the run's end (docs/agents.md) */
			if (*end || v < 3 || v > 1000000 || fcntl((int) v, F_GETFD) < 0) {
				log_error("run: --result-fd needs an open descriptor above 2, not '%.32s'",
					  optarg);
				policy_args_done(&pa);
				return EXIT_SANDBOX_ERROR;
			}
			result_fd = (int) v;
			(void) fcntl(result_fd, F_SETFD, FD_CLOEXEC);
			break;
		}
		case ARG_APPROVAL_FD: {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end || v < 3 || v > 1000000 || fcntl((int) v, F_GETFD) < 0) {
				log_error("run: --approval-fd needs an open descriptor above 2, not "
					  "'%.32s'", optarg);
				policy_args_done(&pa);
				return EXIT_SANDBOX_ERROR;
			}
			o.approval_fd = (int) v;
			/* the supervisor's own: the command never has it */
			(void) fcntl(o.approval_fd, F_SETFD, FD_CLOEXEC);
			break;
		}
		case ARG_APPROVAL_SOCKET:
			o.approval_socket = optarg;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'h':
			help(stdout);
			policy_args_done(&pa);
			return 0;
		default:
			help(stderr);
			policy_args_done(&pa);
			return EXIT_SANDBOX_ERROR;
		}
	}
	if (optind >= argc) {
		log_error("run: missing POLICY; try 'sbxtrace run --help'");
		policy_args_done(&pa);
		return EXIT_SANDBOX_ERROR;
	}
	name = argv[optind++];
	if (optind < argc && streq(argv[optind], "--"))
		optind++;
	if (optind >= argc) {
		log_error("run: missing the command to run after '--'");
		policy_args_done(&pa);
		return EXIT_SANDBOX_ERROR;
	}
	o.argv = argv + optind;

	pa.quiet = o.quiet || o.capture;
	r = policy_args_load(&pa, name, &policy);
	policy_args_done(&pa);
	if (r < 0)
		return EXIT_SANDBOX_ERROR;
	if (policy->audit.trace)
		o.trace = true;
	if (policy->audit.backtrace != AUDIT_SELECT_NONE && !o.quiet && !audit_path &&
	    !policy->audit.log)
		log_warn("audit.backtrace: backtraces are written to the audit log, and there is "
			 "none ([audit] log or --audit FILE)");

	r = run_audit_open(policy, audit_path, o.trace, &audit);
	if (r < 0)
		return EXIT_SANDBOX_ERROR;
	r = cli_run_recorded(policy, &o, TAKE_PTR(audit), &res);
	if (r < 0 && r != -EIO)
		return EXIT_SANDBOX_ERROR;
	if (o.capture && tracer_result_write_json(policy, &res, stdout) < 0) {
		tracer_result_done(&res);
		return EXIT_SANDBOX_ERROR;
	}
	if (result_fd >= 0) {
		FILE *f = fdopen(result_fd, "w");

		if (!f || tracer_result_write_json(policy, &res, f) < 0) {
			tracer_result_done(&res);
			return EXIT_SANDBOX_ERROR;
		}
		fclose(f);
	}
	r = res.exit_code;
	tracer_result_done(&res);
	return r;
}
