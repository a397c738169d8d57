/* SPDX-License-Identifier: MIT */
/*
 * Named syscall groups for [syscalls] lists ("@keyring"), each with a help line, in the
 * spirit of systemd's filter sets. A member libseccomp does not know on this architecture is
 * skipped when the group is expanded.
 */
#include "policy/policy.h"

#include <string.h>

#include "common/macros.h"
#include "common/syscall-names.h"
#include "policy/internal.h"

#define G(...) ((const char *const[]){__VA_ARGS__, NULL})

static const PolicySyscallGroup groups[] = {
	{"@clock", "change the system clock",
	 G("adjtimex", "clock_adjtime", "clock_adjtime64", "clock_settime", "clock_settime64",
	   "settimeofday", "stime")},
	{"@debug", "debug and trace other processes, performance counters",
	 G("lookup_dcookie", "perf_event_open", "pidfd_getfd", "ptrace", "process_vm_readv",
	   "process_vm_writev", "rtas", "s390_runtime_instr", "sys_debug_setcontext")},
	{"@keyring", "the kernel keyring", G("add_key", "keyctl", "request_key")},
	{"@module", "load and unload kernel modules",
	 G("delete_module", "finit_module", "init_module")},
	{"@mount", "mount and unmount file systems, change the root",
	 G("chroot", "fsconfig", "fsmount", "fsopen", "fspick", "mount", "mount_setattr",
	   "move_mount", "open_tree", "pivot_root", "umount", "umount2")},
	{"@obsolete", "unusual, obsolete or unimplemented syscalls",
	 G("_sysctl", "afs_syscall", "bdflush", "break", "create_module", "ftime",
	   "get_kernel_syms", "getpmsg", "gtty", "idle", "lock", "mpx", "prof", "profil", "putpmsg",
	   "query_module", "security", "sgetmask", "ssetmask", "stty", "sysfs", "tuxcall", "ulimit",
	   "uselib", "ustat", "vserver")},
	{"@raw-io", "raw I/O port and PCI access",
	 G("ioperm", "iopl", "pciconfig_iobase", "pciconfig_read", "pciconfig_write",
	   "s390_mmio_read", "s390_mmio_write")},
	{"@reboot", "reboot the machine, load a new kernel",
	 G("kexec_file_load", "kexec_load", "reboot")},
	{"@swap", "enable and disable swap devices", G("swapoff", "swapon")},
	{"@io-uring", "io_uring, whose operations bypass seccomp",
	 G("io_uring_enter", "io_uring_register", "io_uring_setup")},
	{"@namespace", "create and join namespaces", G("setns", "unshare")},
};

const PolicySyscallGroup *policy_syscall_groups(size_t *ret_n)
{
	*ret_n = ARRAY_SIZE(groups);
	return groups;
}

const PolicySyscallGroup *policy_syscall_group_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(groups); i++)
		if (streq(groups[i].name, name))
			return &groups[i];
	return NULL;
}

int policy_syscall_resolve(const char *name)
{
	int nr = sbx_syscall_number(name);

	/* libseccomp knows it, but not on this architecture */
	if (nr < 0 && sbx_syscall_foreign(name))
		return -EDOM;
	return nr;
}
