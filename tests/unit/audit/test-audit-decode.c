/* SPDX-License-Identifier: MIT */
/* Symbolic decoding of arguments, quoting of child strings, the syscall table. */
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "audit/internal.h"
#include "policy/policy.h"
#include "syscalls/syscalls.h"
#include "tests/unit/tap.h"

TEST(open_flags)
{
	char b[256];

	EXPECT_STREQ(audit_format_oflags(O_RDONLY | O_CLOEXEC, b, sizeof(b)), "O_RDONLY|O_CLOEXEC");
	EXPECT_STREQ(audit_format_oflags(O_WRONLY | O_CREAT | O_TRUNC, b, sizeof(b)),
		     "O_WRONLY|O_CREAT|O_TRUNC");
	EXPECT_STREQ(audit_format_oflags(0, b, sizeof(b)), "O_RDONLY");
	EXPECT_STREQ(audit_format_oflags(O_RDWR | O_TMPFILE, b, sizeof(b)), "O_RDWR|O_TMPFILE");
	EXPECT_STREQ(audit_format_oflags(O_RDONLY | 0x40000000, b, sizeof(b)),
		     "O_RDONLY|0x40000000");
	/* a tiny buffer is cut, never overrun */
	EXPECT_TRUE(strlen(audit_format_oflags(O_WRONLY | O_CREAT | O_EXCL, b, 6)) <= 5);
}

TEST(at_flags_modes_signals)
{
	char b[256];

	EXPECT_STREQ(audit_format_atflags(0, b, sizeof(b)), "0");
	EXPECT_STREQ(audit_format_atflags(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH, b, sizeof(b)),
		     "AT_SYMLINK_NOFOLLOW|AT_EMPTY_PATH");
	EXPECT_STREQ(audit_format_amode(0, b, sizeof(b)), "F_OK");
	EXPECT_STREQ(audit_format_amode(R_OK | W_OK, b, sizeof(b)), "R_OK|W_OK");
	EXPECT_STREQ(audit_format_signal(SIGKILL, b, sizeof(b)), "SIGKILL");
	EXPECT_STREQ(audit_format_signal(0, b, sizeof(b)), "0");
	EXPECT_STREQ(audit_format_signal((uint64_t) SIGRTMIN + 2, b, sizeof(b)), "SIGRTMIN+2");
	EXPECT_STREQ(audit_format_socktype(SOCK_STREAM | SOCK_CLOEXEC, b, sizeof(b)),
		     "SOCK_STREAM|SOCK_CLOEXEC");
	EXPECT_STREQ(audit_format_domain(AF_INET6, b, sizeof(b)), "AF_INET6");
	EXPECT_STREQ(
		audit_format_scalar(AUDIT_ARG_DIRFD, (uint64_t) (int64_t) AT_FDCWD, b, sizeof(b)),
		"AT_FDCWD");
	EXPECT_STREQ(audit_format_scalar(AUDIT_ARG_MODE, 0644, b, sizeof(b)), "0644");
	EXPECT_STREQ(audit_format_scalar(AUDIT_ARG_PTR, 0, b, sizeof(b)), "NULL");
	EXPECT_STREQ(audit_format_scalar(AUDIT_ARG_FD, 0xffffffffULL, b, sizeof(b)), "-1");
}

TEST(quote_escapes_and_caps)
{
	char out[64];
	const char s[] = "a\nb\"c\\\x1b\xff";

	audit_quote(s, sizeof(s) - 1, 100, out, sizeof(out));
	EXPECT_STREQ(out, "\"a\\nb\\\"c\\\\\\x1b\\xff\"");
	audit_quote("abcdef", 6, 3, out, sizeof(out));
	EXPECT_STREQ(out, "\"abc\"...");
	/* NUL bytes inside are shown, not a terminator */
	audit_quote("a\0b", 3, 100, out, sizeof(out));
	EXPECT_STREQ(out, "\"a\\x00b\"");
	/* a small output buffer cuts and marks */
	audit_quote("0123456789abcdef", 16, 100, out, 12);
	EXPECT_TRUE(strlen(out) < 12);
	EXPECT_TRUE(out[0] == '"');
}

TEST(syscall_table)
{
	const AuditSyscallInfo *i = audit_syscall_info(__NR_openat);

	EXPECT_STREQ(i->name, "openat");
	EXPECT_EQ(i->category, (unsigned) AUDIT_EVENT_FILE);
	EXPECT_EQ(i->n_args, 4u);
	EXPECT_EQ(i->type[0], AUDIT_ARG_DIRFD);
	EXPECT_EQ(i->type[1], AUDIT_ARG_PATH);
	EXPECT_EQ(i->type[2], AUDIT_ARG_OFLAGS);
	EXPECT_STREQ(i->arg_name[2], "flags");

	i = audit_syscall_info(__NR_connect);
	EXPECT_EQ(i->category, (unsigned) AUDIT_EVENT_NETWORK);
	EXPECT_EQ(i->type[1], AUDIT_ARG_SOCKADDR);
	i = audit_syscall_info(__NR_execve);
	EXPECT_EQ(i->category, (unsigned) AUDIT_EVENT_EXEC);
	EXPECT_EQ(i->type[1], AUDIT_ARG_ARGV);
	i = audit_syscall_info(__NR_kill);
	EXPECT_EQ(i->category, (unsigned) AUDIT_EVENT_SIGNAL);

	/* every call the filter can notify has a layout, also those that were raw before the
	 * syscall table gave them one; their kind stays "syscall" */
	i = audit_syscall_info(__NR_ioctl);
	EXPECT_STREQ(i->name, "ioctl");
	EXPECT_EQ(i->category, (unsigned) AUDIT_EVENT_SYSCALL);
	EXPECT_EQ(i->n_args, 3u);
	EXPECT_STREQ(i->arg_name[1], "cmd");
	i = audit_syscall_info(__NR_fchmod);
	EXPECT_EQ(i->type[1], AUDIT_ARG_MODE);
	EXPECT_EQ(audit_arg_type_from_string("sockaddr"), AUDIT_ARG_SOCKADDR);
	EXPECT_EQ(audit_arg_type_from_string("nonsense"), _AUDIT_ARG_TYPE_INVALID);

	/* no decoder: named by libseccomp, six raw arguments */
	i = audit_syscall_info(__NR_sysinfo);
	EXPECT_STREQ(i->name, "sysinfo");
	EXPECT_EQ(i->category, (unsigned) AUDIT_EVENT_SYSCALL);
	EXPECT_EQ(i->n_args, 6u);
	EXPECT_STREQ(i->arg_name[5], "arg5");
	EXPECT_STREQ(audit_syscall_info(-1)->name, "syscall_out_of_range");
	EXPECT_STREQ(audit_syscall_info(5000)->name, "syscall_out_of_range");
	EXPECT_STREQ(audit_category_to_string(AUDIT_EVENT_RATCHET), "ratchet");
}

int main(void)
{
	/* the layouts come from the syscall table */
	syscalls_audit_init();
	return tap_run();
}
