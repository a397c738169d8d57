/* SPDX-License-Identifier: MIT */
/* Placeholder until its issue lands. */
#include "cli/cli.h"

#include "common/log.h"

int cmd_run(int argc, char *argv[])
{
	(void) argc;
	(void) argv;
	log_error("'run' is not built yet");
	return EXIT_SANDBOX_ERROR;
}
