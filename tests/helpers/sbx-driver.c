/* SPDX-License-Identifier: MIT */
/*
 * sbx-driver: runs a command under the supervisor with a Policy filled in by hand, so the
 * engine can be tested while the policy loader is elsewhere. Options mirror policy keys:
 *   --wall MS  --grace MS  --deny NAME=ERRNO  --kill NAME  --log NAME  --output BYTES
 *   --no-landlock  --json  --trace
 * The environment is passed through (env_keep = "*"), the working directory inherited.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/log.h"
#include "common/util.h"
#include "policy/policy.h"
#include "tracer/tracer.h"

int main(int argc, char *argv[])
{
	static const struct option options[] = {
		{"wall", required_argument, NULL, 'W'},	 {"grace", required_argument, NULL, 'G'},
		{"deny", required_argument, NULL, 'D'},	 {"kill", required_argument, NULL, 'K'},
		{"log", required_argument, NULL, 'L'},	 {"output", required_argument, NULL, 'O'},
		{"no-landlock", no_argument, NULL, 'N'}, {"json", no_argument, NULL, 'J'},
		{"trace", no_argument, NULL, 'T'},	 {}};
	static char *keep[] = {(char *) "*", NULL};
	PolicySyscall sys[32];
	Policy p = {};
	TracerOptions o = {};
	TracerResult res = {};
	int c, r;

	log_set_prefix("sbx-driver");
	p.name = (char *) "driver";
	p.path = (char *) "driver:hand-built";
	p.deny_errno = EPERM;
	p.landlock = TRI_AUTO;
	p.ptrace = PTRACE_MODE_NEVER;
	p.process.env_keep = keep;
	p.limits = (PolicyLimits){LIMIT_UNSET, LIMIT_UNSET, LIMIT_UNSET, LIMIT_UNSET, LIMIT_UNSET,
				  LIMIT_UNSET, LIMIT_UNSET, LIMIT_UNSET, 2000};
	p.syscalls = sys;
	/* the host through the file-system view, read-write: paths are the same inside */
	static PolicyMount mounts[] = {
		{.path = (char *) "/", .source = (char *) "/", .mode = MOUNT_RW},
		{.path = (char *) "/proc", .source = (char *) "/proc", .mode = MOUNT_RW},
		{.path = (char *) "/dev", .source = (char *) "/dev", .mode = MOUNT_RW},
	};
	p.mounts = mounts;
	p.n_mounts = ARRAY_SIZE(mounts);

	while ((c = getopt_long(argc, argv, "+", options, NULL)) >= 0) {
		char *eq;

		switch (c) {
		case 'W':
			p.limits.wall_time_ms = strtoull(optarg, NULL, 10);
			break;
		case 'G':
			p.limits.kill_grace_ms = strtoull(optarg, NULL, 10);
			break;
		case 'O':
			p.limits.output = strtoull(optarg, NULL, 10);
			break;
		case 'D':
		case 'K':
		case 'L':
			if (p.n_syscalls >= 32)
				return 125;
			eq = strchr(optarg, '=');
			if (eq)
				*eq = 0;
			sys[p.n_syscalls] = (PolicySyscall){
				.name = optarg,
				.action = c == 'D'   ? SYSCALL_ACTION_DENY
					  : c == 'K' ? SYSCALL_ACTION_KILL
						     : SYSCALL_ACTION_LOG,
				.error = eq ? errno_from_name(eq + 1) : EPERM,
			};
			if (eq && sys[p.n_syscalls].error <= 0)
				sys[p.n_syscalls].error = atoi(eq + 1);
			p.n_syscalls++;
			break;
		case 'N':
			p.landlock = TRI_OFF;
			break;
		case 'J':
			o.capture = true;
			break;
		case 'T':
			o.trace = true;
			break;
		default:
			return 125;
		}
	}
	if (optind < argc && streq(argv[optind], "--"))
		optind++;
	if (optind >= argc) {
		fprintf(stderr, "usage: sbx-driver [OPTIONS] -- CMD [ARGS…]\n");
		return 125;
	}
	o.argv = argv + optind;
	r = tracer_run(&p, &o, &res);
	if (r < 0)
		return 125;
	if (o.capture && tracer_result_write_json(&p, &res, stdout) < 0)
		return 125;
	r = res.exit_code;
	tracer_result_done(&res);
	return r;
}
