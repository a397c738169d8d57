/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "policy/policy.h"

/* What `sbxtrace learn` recorded (docs/learn.md). */
typedef struct LearnRun {
	const Policy *base;    /* the policy the command ran under while recording */
	const char *from;      /* the --from preset or file, for the header */
	const char *workspace; /* -w DIR: a mount source equal to it is written as ${WORKSPACE} */
	char *const *argv;
	int exit_code;
	uint64_t duration_ms;
	bool usage_known;
	uint64_t cpu_time_ms, memory_peak, tasks_peak;
} LearnRun;

/**
 * Reads the audit log at log_path (JSON Lines, docs/audit.md) and writes to out a policy
 * that allows what the run did and nothing else the base allowed: the base's mounts that
 * were used (ro unless written; "/" split by its top-level directories), the programs it
 * executed, the inet destinations it connected to, limits with headroom, the base's
 * [process]. Returns 0 or -errno; bad log lines are skipped (audit_read semantics).
 */
int learn_write_policy(const char *log_path, const LearnRun *run, FILE *out);
