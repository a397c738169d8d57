/* SPDX-License-Identifier: MIT */
/*
 * The syscall table (syscalls/table.c) is well-formed: every name once and known to
 * libseccomp, a handler for every notified row, an audit layout for every call the filter
 * can notify, a note for every partial or denied one, and flags only where they mean
 * something.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <seccomp.h>

#include "audit/audit.h"
#include "common/macros.h"
#include "common/syscall-names.h"
#include "syscalls/syscalls.h"
#include "tests/unit/tap.h"

/* Rows for syscalls newer than libseccomp 2.5: left out of the filter (ENOSYS) where
 * libseccomp does not know them, as tracer/filter.c says at debug level. */
static const char *const newer_than_libseccomp_2_5[] = {"mseal", "statmount", "listmount"};

static bool newer(const char *name)
{
	for (size_t i = 0; i < sizeof(newer_than_libseccomp_2_5) / sizeof(char *); i++)
		if (streq(name, newer_than_libseccomp_2_5[i]))
			return true;
	return false;
}

TEST(every_name_once)
{
	size_t n;
	const SyscallRow *t = syscalls_table(&n);

	EXPECT_GE(n, 300);
	for (size_t i = 0; i < n; i++) {
		EXPECT_TRUE(t[i].name && t[i].name[0]);
		for (size_t j = 0; j < i; j++)
			if (streq(t[i].name, t[j].name))
				TAP_FAIL_(0, "'%s' is listed twice", t[i].name);
		EXPECT_TRUE(syscalls_find(t[i].name) == &t[i]);
	}
	EXPECT_TRUE(syscalls_find("no_such_call") == NULL);
}

TEST(every_name_known_to_libseccomp)
{
	const struct scmp_version *v = seccomp_version();
	size_t n;
	const SyscallRow *t = syscalls_table(&n);

	for (size_t i = 0; i < n; i++) {
		int nr = seccomp_syscall_resolve_name(t[i].name);

		if (nr != __NR_SCMP_ERROR)
			continue;
		if (newer(t[i].name) && v->major == 2 && v->minor <= 5)
			continue;
		TAP_FAIL_(0, "'%s' is unknown to libseccomp %u.%u.%u", t[i].name, v->major,
			  v->minor, v->micro);
	}
}

/* The build-time name table (common/syscall-names.c) answers as libseccomp does, for every
 * row and every name it holds, and it is sorted (the lookup is a binary search). */
TEST(name_table_agrees_with_libseccomp)
{
	size_t n;
	const SyscallRow *t = syscalls_table(&n);

	ASSERT_TRUE(sbx_syscall_names_count > 300);
	for (size_t i = 0; i < n; i++) {
		int lib = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, t[i].name);

		if (sbx_syscall_number(t[i].name) != (lib >= 0 ? lib : -ENOENT))
			TAP_FAIL_(0, "'%s': table %d, libseccomp %d", t[i].name,
				  sbx_syscall_number(t[i].name), lib);
	}
	for (size_t i = 0; i < sbx_syscall_names_count; i++) {
		const SbxSyscallName *e = &sbx_syscall_names[i];

		EXPECT_EQ(seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, e->name), e->nr);
		if (i > 0 && strcmp(sbx_syscall_names[i - 1].name, e->name) >= 0)
			TAP_FAIL_(0, "not sorted at '%s'", e->name);
	}
	EXPECT_EQ(sbx_syscall_number("no_such_call"), -ENOENT);
	EXPECT_EQ(sbx_syscall_number("accept4"), 288);
}

/* The numbers' names answer as libseccomp does for every number (the binary does not load
 * libseccomp: audit records and traces name calls from this table). */
TEST(number_table_agrees_with_libseccomp)
{
	for (int nr = -1; nr < 1024; nr++) {
		char *lib = nr >= 0 ? seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr) : NULL;
		const char *ours = sbx_syscall_name(nr);

		/* the name table holds what survives the round trip; so must this one */
		if (lib && seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, lib) != nr) {
			free(lib);
			lib = NULL;
		}
		if (!lib != !ours || (lib && strcmp(lib, ours) != 0))
			TAP_FAIL_(0, "%d: table '%s', libseccomp '%s'", nr, ours ? ours : "(none)",
				  lib ? lib : "(none)");
		free(lib);
	}
	EXPECT_STREQ(sbx_syscall_name(0), "read");
	EXPECT_TRUE(sbx_syscall_name(100000) == NULL);
}

/* A name libseccomp knows only on other architectures is "foreign" (a policy may name it,
 * with nothing to filter here); an x86_64 name or an unknown one is not. */
TEST(foreign_names_agree_with_libseccomp)
{
	ASSERT_TRUE(sbx_syscall_foreign_names_count > 50);
	for (size_t i = 0; i < sbx_syscall_foreign_names_count; i++) {
		const char *n = sbx_syscall_foreign_names[i];
		int lib = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, n);

		if (lib >= 0 || lib == __NR_SCMP_ERROR)
			TAP_FAIL_(0, "'%s' is foreign here, libseccomp says %d", n, lib);
		if (i > 0 && strcmp(sbx_syscall_foreign_names[i - 1], n) >= 0)
			TAP_FAIL_(0, "not sorted at '%s'", n);
	}
	EXPECT_TRUE(sbx_syscall_foreign("socketcall"));
	EXPECT_TRUE(sbx_syscall_foreign("_llseek"));
	EXPECT_FALSE(sbx_syscall_foreign("read"));
	EXPECT_FALSE(sbx_syscall_foreign("no_such_call"));
}

/* "name:type name:type …" with types audit/decode.c knows, at most six */
static bool layout_ok(const char *layout)
{
	char copy[256], *save = NULL;
	unsigned n = 0;

	if (strlen(layout) >= sizeof(copy))
		return false;
	strcpy(copy, layout);
	for (char *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *colon = strchr(tok, ':');

		if (!colon || colon == tok || ++n > 6)
			return false;
		if (audit_arg_type_from_string(colon + 1) < 0)
			return false;
	}
	return true;
}

TEST(every_notified_call_has_a_handler_and_an_audit_layout)
{
	size_t n, notified = 0;
	const SyscallRow *t = syscalls_table(&n);

	for (size_t i = 0; i < n; i++) {
		const SyscallRow *r = &t[i];
		/* what the filter can send to the supervisor: a handler, a denial, the tree's
		 * sockets without pidfd_getfd, a task under a tasks budget */
		bool notifies = r->action == SYSCALL_NOTIFY || r->action == SYSCALL_DENY ||
				r->nogetfd_handler || (r->flags & SYSCALL_TASKS);

		if (r->action == SYSCALL_NOTIFY && !(r->handler && r->handler_name))
			TAP_FAIL_(0, "'%s' is notified without a handler", r->name);
		if (!r->handler != !r->handler_name ||
		    !r->nogetfd_handler != !r->nogetfd_handler_name)
			TAP_FAIL_(0, "'%s': a handler without its name", r->name);
		if (r->action != SYSCALL_NOTIFY && r->handler)
			TAP_FAIL_(0, "'%s' has a handler it is never notified to", r->name);
		if (notifies && !r->audit)
			TAP_FAIL_(0, "'%s' can be notified but has no audit layout", r->name);
		if (r->audit && !layout_ok(r->audit))
			TAP_FAIL_(0, "'%s': bad audit layout '%s'", r->name, r->audit);
		if (r->audit && !r->category)
			TAP_FAIL_(0, "'%s': an audit layout without an event kind", r->name);
		notified += notifies;
	}
	EXPECT_GE(notified, 150);
}

TEST(every_partial_or_denied_call_has_a_note)
{
	size_t n;
	const SyscallRow *t = syscalls_table(&n);

	for (size_t i = 0; i < n; i++) {
		const SyscallRow *r = &t[i];

		if ((r->support == EMU_PARTIAL || r->support == EMU_DENIED) &&
		    !(r->note && r->note[0]))
			TAP_FAIL_(0, "'%s' is %s without a note", r->name,
				  syscalls_support_to_string(r->support));
		if ((r->action == SYSCALL_DENY || r->action == SYSCALL_ENOSYS) &&
		    r->support != EMU_DENIED)
			TAP_FAIL_(0, "'%s' is denied but its support is not 'denied'", r->name);
		if (r->note && strchr(r->note, '\n'))
			TAP_FAIL_(0, "'%s': a note of more than one line", r->name);
	}
}

TEST(flags_only_where_they_mean_something)
{
	size_t n;
	const SyscallRow *t = syscalls_table(&n);

	for (size_t i = 0; i < n; i++) {
		const SyscallRow *r = &t[i];

		if ((r->flags & (EMU_TRACE | SYSCALL_LISTINGS | EMU_KERNEL_INTR)) &&
		    r->action != SYSCALL_NOTIFY)
			TAP_FAIL_(0, "'%s': routing flags on a call that is not notified", r->name);
		if (r->nogetfd_handler && r->action != SYSCALL_ALLOW)
			TAP_FAIL_(0, "'%s': a handler without pidfd_getfd for a call not allowed",
				  r->name);
		if (r->check != SYSCALL_CHECK_NONE && r->action != SYSCALL_ALLOW &&
		    r->action != SYSCALL_NOTIFY)
			TAP_FAIL_(0, "'%s': an argument check on a denied call", r->name);
		if ((r->flags &
		     (SYSCALL_TASKS | SYSCALL_HOST_IPC | SYSCALL_DISK | SYSCALL_GROWS)) &&
		    r->action != SYSCALL_ALLOW)
			TAP_FAIL_(0, "'%s': a budget or IPC flag on a call the kernel does not run",
				  r->name);
		EXPECT_TRUE(syscalls_class_to_string(r->action) != NULL);
		EXPECT_TRUE(syscalls_support_to_string(r->support) != NULL);
	}
	/* the duplicates issue 22 found are one row each, and chroot answers as the other
	 * denials do */
	EXPECT_EQ(syscalls_find("chroot")->action, SYSCALL_DENY);
	EXPECT_EQ(syscalls_find("pivot_root")->action, SYSCALL_DENY);
	EXPECT_EQ(syscalls_find("getdents64")->action, SYSCALL_NOTIFY);
	EXPECT_TRUE(syscalls_find("getdents64")->flags & SYSCALL_LISTINGS);
}

int main(void)
{
	return tap_run();
}
