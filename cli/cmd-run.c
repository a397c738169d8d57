/* SPDX-License-Identifier: MIT */
/*
 * sbxtrace run [OPTIONS] POLICY -- CMD [ARGS…]
 *
 * Loads the policy, hands the command to the supervisor (tracer_run) and exits with the
 * command's status (DESIGN.md "Contract"). With --json, prints one JSON object after the run
 * (docs/json-result.md).
 */
#include "cli/cli.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	      "  -s, --set KEY=VALUE  override one policy setting (repeatable)\n"
	      "      --json           capture stdout and stderr and print one JSON result\n"
	      "      --trace          print a line per interposed syscall on stderr\n"
	      "  -q, --quiet          print only errors of our own\n"
	      "  -h, --help           show this help\n"
	      "\n"
	      "Exit status: the command's own; 128+N if it was killed by signal N; 124 wall-clock\n"
	      "timeout; 125 sandbox error; 126 command cannot be executed; 127 command not "
	      "found.\n",
	      f);
}

int cmd_run(int argc, char *argv[])
{
	enum { ARG_JSON = 0x100, ARG_TRACE };
	static const struct option options[] = {{"workspace", required_argument, NULL, 'w'},
						{"set", required_argument, NULL, 's'},
						{"json", no_argument, NULL, ARG_JSON},
						{"trace", no_argument, NULL, ARG_TRACE},
						{"quiet", no_argument, NULL, 'q'},
						{"help", no_argument, NULL, 'h'},
						{}};
	_cleanup_(policy_freep) Policy *policy = NULL;
	PolicyArgs pa = {};
	TracerOptions o = {};
	TracerResult res = {};
	const char *name;
	int c, r;

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

	r = policy_args_load(&pa, name, &policy);
	policy_args_done(&pa);
	if (r < 0)
		return EXIT_SANDBOX_ERROR;
	if (policy->audit.trace)
		o.trace = true;

	r = tracer_run(policy, &o, &res);
	if (r < 0)
		return EXIT_SANDBOX_ERROR;
	if (o.capture && tracer_result_write_json(policy, &res, stdout) < 0) {
		tracer_result_done(&res);
		return EXIT_SANDBOX_ERROR;
	}
	r = res.exit_code;
	tracer_result_done(&res);
	return r;
}
