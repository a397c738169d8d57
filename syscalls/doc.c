/* SPDX-License-Identifier: MIT */
/*
 * docs/syscalls.md, written from the syscall table (syscalls/table.c): what the sandbox does
 * with each syscall, the handler, the checks and routing, the audit layout and the note.
 * `sbxtrace check --syscalls` prints it; the unit test syscalls-doc fails when the committed
 * file differs, so the page cannot go stale.
 */
#include "syscalls/syscalls.h"

#include <stdio.h>
#include <string.h>

#include "common/macros.h"
#include "policy/policy.h"

static const char *const check_names[_SYSCALL_CHECK_MAX] = {
	[SYSCALL_CHECK_NONE] = NULL,
	[SYSCALL_CHECK_CLONE] = "namespace flags denied",
	[SYSCALL_CHECK_IOCTL] = "TIOCSTI, TIOCLINUX denied; SIGIO owner and inode flags notified",
	[SYSCALL_CHECK_FCNTL] = "F_SETOWN(_EX) notified",
	[SYSCALL_CHECK_PID_ARG0] = "notified unless the pid is 0",
	[SYSCALL_CHECK_PID_ARG1] = "notified unless the pgid is 0",
	[SYSCALL_CHECK_SECCOMP] = "NEW_LISTENER denied",
	[SYSCALL_CHECK_PERSONALITY] = "Docker's values only",
	[SYSCALL_CHECK_ADDR_ARG4] = "notified only with an address",
	[SYSCALL_CHECK_SETSOCKOPT] = "routing options notified",
};

static const struct {
	unsigned flag;
	const char *text;
} flag_names[] = {
	{EMU_MAY_BLOCK, "may block: another thread takes the lead after 1 ms"},
	{EMU_TRACE, "ptrace stop when the tracer is on"},
	{EMU_KERNEL_INTR, "may continue into the kernel"},
	{SYSCALL_PATH, "path-taking"},
	{SYSCALL_LISTINGS, "only when listings are filtered"},
	{SYSCALL_HOST_IPC, "denied without a private IPC namespace"},
	{SYSCALL_TASKS, "tasks budget: a stop"},
	{SYSCALL_UNTRACED, "cpu_time budget: CLONE_UNTRACED denied"},
	{SYSCALL_DISK, "disk budget: allocating modes EOPNOTSUPP"},
	{SYSCALL_GROWS, "disk budget: EFBIG becomes EDQUOT"},
	{SYSCALL_PID, "pid namespace: runs in the kernel"},
};

static const struct {
	unsigned bit;
	const char *name;
} kinds[] = {
	{AUDIT_EVENT_FILE, "file"},	  {AUDIT_EVENT_EXEC, "exec"},
	{AUDIT_EVENT_NETWORK, "network"}, {AUDIT_EVENT_PROCESS, "process"},
	{AUDIT_EVENT_SIGNAL, "signal"},	  {AUDIT_EVENT_SYSCALL, "syscall"},
};

/* Table cells: '|' would end the cell. */
static void cell(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '|')
			fputc('\\', out);
		fputc(*s, out);
	}
}

static void routing(FILE *out, const SyscallRow *r)
{
	const char *sep = "";

	if (r->check != SYSCALL_CHECK_NONE && r->check < _SYSCALL_CHECK_MAX) {
		fprintf(out, "%s", check_names[r->check]);
		sep = "; ";
	}
	for (size_t i = 0; i < ARRAY_SIZE(flag_names); i++)
		if (r->flags & flag_names[i].flag) {
			fprintf(out, "%s%s", sep, flag_names[i].text);
			sep = "; ";
		}
	if ((r->flags & SYSCALL_PATH) && r->action != SYSCALL_DENY) {
		fprintf(out, "%semulated in the view, run by the kernel view", sep);
		sep = "; ";
	}
	if (r->uid_args || r->gid_args) {
		fprintf(out, "%sids checked in a user namespace", sep);
		sep = "; ";
	}
	if (r->nogetfd_handler)
		fprintf(out, "%swithout pidfd_getfd: `%s`", sep, r->nogetfd_handler_name);
}

static const char *kind_name(unsigned category)
{
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (kinds[i].bit == category)
			return kinds[i].name;
	return "syscall";
}

void syscalls_write_markdown(FILE *out)
{
	size_t n, counts[_SYSCALL_CLASS_MAX] = {}, partial = 0;
	const SyscallRow *t = syscalls_table(&n);

	for (size_t i = 0; i < n; i++) {
		if (t[i].action >= 0 && t[i].action < _SYSCALL_CLASS_MAX)
			counts[t[i].action]++;
		partial += t[i].support == EMU_PARTIAL;
	}
	fputs("# Syscalls\n"
	      "\n"
	      "<!-- Generated from syscalls/table.c by `sbxtrace check --syscalls > "
	      "docs/syscalls.md`;\n"
	      "     do not edit: the unit test syscalls-doc fails when this file is stale. -->\n"
	      "\n"
	      "What the sandbox does with each syscall it knows, on x86_64, before a policy's\n"
	      "`[syscalls]` changes it (docs/policy.md). A syscall that is not listed fails with\n"
	      "ENOSYS (default deny: a syscall of a newer kernel is unreachable until it gets a "
	      "row).\n"
	      "i386 and x32 calls kill the process (docs/supervisor.md, \"The filter\").\n"
	      "\n",
	      out);
	fprintf(out,
		"%zu syscalls: %zu run in the kernel, %zu are answered by the supervisor, %zu are "
		"denied,\n"
		"%zu answered with ENOSYS by the filter; %zu are supported partially (see their "
		"notes).\n"
		"A row whose name the build's libseccomp did not know (a syscall newer than it) is "
		"left\n"
		"out of the filter: ENOSYS.\n\n",
		n, counts[SYSCALL_ALLOW], counts[SYSCALL_NOTIFY], counts[SYSCALL_DENY],
		counts[SYSCALL_ENOSYS], partial);
	fputs("- **action**: `allow` runs in the kernel (the kernel's action cache skips the "
	      "filter);\n"
	      "  `notify` is answered by the handler; `deny` is notified and answered with the "
	      "policy's\n"
	      "  errno (`[syscalls] errno`, default EPERM), and counted; `enosys` is answered by "
	      "the filter.\n"
	      "- **support**: `full`, `partial` (the note says what is missing), `denied`.\n"
	      "- **checks and routing**: the argument check the filter makes on registers, and how "
	      "the\n"
	      "  run's state routes the call (budgets, ptrace, the view in the kernel, a pid "
	      "namespace).\n"
	      "- **audit**: the event kind and the arguments as the audit log names and decodes "
	      "them\n"
	      "  (docs/audit.md); without, six raw arguments.\n"
	      "\n"
	      "| syscall | action | handler | support | checks and routing | audit | note |\n"
	      "|---|---|---|---|---|---|---|\n",
	      out);
	for (size_t i = 0; i < n; i++) {
		const SyscallRow *r = &t[i];

		fprintf(out, "| `%s` | %s | ", r->name, syscalls_class_to_string(r->action));
		if (r->handler_name)
			fprintf(out, "`%s`", r->handler_name);
		fprintf(out, " | %s | ", syscalls_support_to_string(r->support));
		routing(out, r);
		fputs(" | ", out);
		if (r->audit)
			fprintf(out, "%s: `%s`", kind_name(r->category),
				r->audit[0] ? r->audit : "()");
		fputs(" | ", out);
		cell(out, r->note);
		fputs(" |\n", out);
	}
}
