/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

#include "policy/policy.h"

/* Exit codes (DESIGN.md "Contract"), as timeout(1) and env(1) use them. */
#define EXIT_TIMEOUT	    124
#define EXIT_SANDBOX_ERROR  125
#define EXIT_CANNOT_EXECUTE 126
#define EXIT_NOT_FOUND	    127

/* The getopt value of --workspace-anywhere, which every subcommand with -w takes. */
#define ARG_WORKSPACE_ANYWHERE 0x200

/* Options shared by the subcommands that load a policy. */
typedef struct PolicyArgs {
	const char *workspace;	 /* -w/--workspace; NULL: the current directory (implied) */
	char **overrides;	 /* -s/--set key=value, in order */
	bool workspace_anywhere; /* --workspace-anywhere: no refusal of /, home, /etc, … */
	bool quiet;		 /* no note that the workspace was implied (-q, --json) */
	char *workspace_path;	 /* set by policy_args_load(): the real path of the workspace
				  * the policy uses, NULL if it uses none; owned */
} PolicyArgs;

void policy_args_done(PolicyArgs *a);
/** Handles -w, -s and --workspace-anywhere for getopt loops; returns 1 if opt was one of them,
 * 0 if not, <0 on OOM. */
int policy_args_parse_opt(PolicyArgs *a, int opt, const char *optarg_);
/**
 * Loads the policy named by name with the variables and overrides; logs errors itself.
 * ${WORKSPACE} is -w DIR, else the current directory (said once on stderr unless a->quiet);
 * a workspace the policy uses that is /, a home directory or a system directory is refused
 * unless a->workspace_anywhere (-EPERM). Fills a->workspace_path.
 */
int policy_args_load(PolicyArgs *a, const char *name, Policy **ret_policy);

typedef struct Audit Audit;
typedef struct TracerOptions TracerOptions;
typedef struct TracerResult TracerResult;
/** Runs o->argv under policy with audit (may be NULL; closed here, run start and end
 * recorded): 0, -EIO when only writing the log failed (a warning is logged), or tracer_run()'s
 * -errno. */
int cli_run_recorded(const Policy *policy, TracerOptions *o, Audit *audit, TracerResult *ret);

int cmd_run(int argc, char *argv[]);
int cmd_check(int argc, char *argv[]);
int cmd_doctor(int argc, char *argv[]);
int cmd_report(int argc, char *argv[]);
int cmd_learn(int argc, char *argv[]);
int cmd_mcp(int argc, char *argv[]);
int cmd_approve(int argc, char *argv[]);
int cmd_approvals(int argc, char *argv[]);
