/* SPDX-License-Identifier: MIT */
/*
 * sbxtrace: the command line. Subcommands live in cmd-*.c; this file dispatches and handles
 * --help/--version. The only main() of the project.
 */
#include "cli/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/macros.h"

static void help(FILE *f)
{
	fputs("Usage: sbxtrace COMMAND [OPTIONS…]\n"
	      "\n"
	      "Run untrusted programs under a rootless seccomp user-notification supervisor.\n"
	      "\n"
	      "Commands:\n"
	      "  run [OPTIONS] POLICY -- CMD [ARGS…]  run CMD inside the sandbox POLICY describes\n"
	      "  check [OPTIONS] POLICY               validate POLICY, print the effective policy\n"
	      "  doctor                               list what this kernel offers the sandbox\n"
	      "  report [--html FILE] AUDIT.jsonl     summarize an audit log (run --audit FILE)\n"
	      "  learn [-o FILE] [--from POLICY] -- CMD [ARGS…]\n"
	      "                                       write a least-privilege policy from a run\n"
	      "  mcp [--http HOST:PORT] [--config FILE]\n"
	      "                                       serve sandbox sessions to AI agents (MCP)\n"
	      "  approvals [--socket PATH]            list tool calls waiting for a human's approval\n"
	      "  approve ID --allow|--allow-session|--deny\n"
	      "                                       decide one of them\n"
	      "\n"
	      "POLICY is a .toml file or the name of a preset: permissive, standard, strict,\n"
	      "python, node, shell.\n"
	      "\n"
	      "Options:\n"
	      "  -h, --help       show this help (also: sbxtrace COMMAND --help)\n"
	      "  -V, --version    show the version and the optional features built in\n"
	      "\n"
	      "Exit status of run: the command's own; 128+N if it was killed by signal N;\n"
	      "124 wall-clock timeout; 125 sandbox error (bad policy, unsupported kernel);\n"
	      "126 command cannot be executed; 127 command not found.\n"
	      "See sbxtrace(1) and sbxtrace-policy(5).\n",
	      f);
}

static void version(void)
{
	printf("sbxtrace %s\n", SBX_VERSION);
	printf("features: seccomp-notify +json %clibunwind %ccapstone\n", HAVE_LIBUNWIND ? '+' : '-',
	       HAVE_CAPSTONE ? '+' : '-');
}

int main(int argc, char *argv[])
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "run", cmd_run },
		{ "check", cmd_check },
		{ "doctor", cmd_doctor },
		{ "report", cmd_report },
		{ "learn", cmd_learn },
		{ "mcp", cmd_mcp },
		{ "approve", cmd_approve },
		{ "approvals", cmd_approvals },
	};
	const char *e = getenv("SBXTRACE_LOG");

	if (e && streq(e, "debug"))
		log_max_level = LOG_LEVEL_DEBUG;

	if (argc < 2) {
		help(stderr);
		return EXIT_SANDBOX_ERROR;
	}
	if (streq(argv[1], "-h") || streq(argv[1], "--help") || streq(argv[1], "help")) {
		help(stdout);
		return 0;
	}
	if (streq(argv[1], "-V") || streq(argv[1], "--version")) {
		version();
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		if (streq(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);

	log_error("unknown command '%.64s'; try 'sbxtrace --help'", argv[1]);
	return EXIT_SANDBOX_ERROR;
}
