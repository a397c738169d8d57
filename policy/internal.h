/* SPDX-License-Identifier: MIT */
#pragma once

/* Private shared bits of the policy module; other modules include policy/policy.h only. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "policy/policy.h"

/* Upper bounds past which a limit is taken for a typo (documented in docs/policy.md). */
#define POLICY_SIZE_MAX		   (UINT64_C(1) << 40)		    /* 1 TiB */
#define POLICY_DURATION_MAX_MS	   (UINT64_C(7) * 24 * 3600 * 1000) /* 7 days */
#define POLICY_TASKS_MAX	   UINT64_C(1000000)
#define POLICY_OPEN_FILES_MAX	   UINT64_C(1048576)
#define POLICY_KILL_GRACE_MAX_MS   (UINT64_C(3600) * 1000) /* 1 hour */
#define POLICY_CPUS_MAX		   UINT64_C(4096)
#define POLICY_BACKTRACE_DEPTH_MAX 256
#define POLICY_MAX_BYTES	   (1024 * 1024) /* largest policy file read */
#define POLICY_EXTENDS_DEPTH_MAX   16

/* units.c: canonical strings for the writer ("512MiB", "30s", "250ms"). */
void policy_format_size(uint64_t bytes, char *buf, size_t size);
void policy_format_duration_ms(uint64_t ms, char *buf, size_t size);

/* host-limits.c: NULL if limit NAME = val is within what this host has, else the reason
 * (written into buf). */
const char *policy_host_limit_reason(const char *name, uint64_t val, char *buf, size_t size);

/* glob.c: NULL if glob is well formed, else a static one-line reason. */
const char *policy_glob_check(const char *glob);

/* net.c: parse one [network] allow entry / dns server; NULL on success, else a reason
 * (static, or written into errbuf). ret is only written on success. */
const char *policy_parse_net_allow(const char *s, PolicyNetAllow *ret, char *errbuf, size_t size);
const char *policy_check_dns(const char *s, char *errbuf, size_t size);
void policy_net_allow_done(PolicyNetAllow *a);

/* syscall-groups.c */
typedef struct PolicySyscallGroup {
	const char *name;	     /* "@keyring" */
	const char *help;	     /* one line */
	const char *const *syscalls; /* NULL-terminated; names unknown to libseccomp are skipped */
} PolicySyscallGroup;
const PolicySyscallGroup *policy_syscall_group_find(const char *name);
const PolicySyscallGroup *policy_syscall_groups(size_t *ret_n);
/* The native syscall number of name; -ENOENT if libseccomp does not know the name, -EDOM if
 * it names a syscall of another architecture only. */
int policy_syscall_resolve(const char *name);

/* schema.c: the names of enum values, indexed by value */
#define POLICY_AUDIT_EVENTS 9 /* bits of AUDIT_EVENT_ALL */
extern const char *const policy_mount_mode_names[_MOUNT_MODE_MAX];
extern const char *const policy_rule_access_names[_RULE_ACCESS_MAX];
extern const char *const policy_sensitivity_names[_SENSITIVITY_MAX];
extern const char *const policy_net_mode_names[_NET_MODE_MAX];
extern const char *const policy_syscall_action_names[_SYSCALL_ACTION_MAX];
extern const char *const policy_ptrace_mode_names[_PTRACE_MODE_MAX];
extern const char *const policy_audit_select_names[_AUDIT_SELECT_MAX];
extern const char *const policy_audit_event_names[POLICY_AUDIT_EVENTS];

/* write.c helpers shared with tests */

const char *audit_event_to_string(unsigned bit);
const char *audit_select_to_string(AuditSelect s);

/* units.c: NULL on success, else a static one-line reason ("unknown size unit …"). */
const char *policy_size_reason(const char *s, uint64_t *ret_bytes);
const char *policy_duration_reason(const char *s, uint64_t *ret_ms);
