/* SPDX-License-Identifier: MIT */
/*
 * The filesystem part of the handler table, for emulation/table.c to include. Names are
 * libseccomp's; one handler per family.
 */
#include "emulation/fs.h"

#include "common/macros.h"

#define N (EMU_NOTIFY)

const EmuEntry emu_fs_entries[] = {
	{"open", emu_handle_open, EMU_PARTIAL, N,
	 "FIFO opens without O_NONBLOCK run on a worker (-EWOULDBLOCK); O_NOCTTY always"},
	{"openat", emu_handle_open, EMU_PARTIAL, N,
	 "FIFO opens without O_NONBLOCK run on a worker (-EWOULDBLOCK); O_NOCTTY always"},
	{"openat2", emu_handle_open, EMU_PARTIAL, N,
	 "RESOLVE_IN_ROOT acts as RESOLVE_BENEATH; RESOLVE_NO_XDEV/NO_MAGICLINKS not enforced"},
	{"creat", emu_handle_open, EMU_FULL, N, NULL},
	{"stat", emu_handle_stat, EMU_FULL, N, NULL},
	{"lstat", emu_handle_stat, EMU_FULL, N, NULL},
	{"newfstatat", emu_handle_stat, EMU_FULL, N, NULL},
	{"statx", emu_handle_stat, EMU_FULL, N, NULL},
	{"statfs", emu_handle_statfs, EMU_FULL, N, NULL},
	{"access", emu_handle_access, EMU_FULL, N, NULL},
	{"faccessat", emu_handle_access, EMU_FULL, N, NULL},
	{"faccessat2", emu_handle_access, EMU_FULL, N, NULL},
	{"readlink", emu_handle_readlink, EMU_FULL, N, NULL},
	{"readlinkat", emu_handle_readlink, EMU_FULL, N, NULL},
	{"mkdir", emu_handle_mkdir, EMU_FULL, N, NULL},
	{"mkdirat", emu_handle_mkdir, EMU_FULL, N, NULL},
	{"mknod", emu_handle_mkdir, EMU_PARTIAL, N, "device nodes: EPERM"},
	{"mknodat", emu_handle_mkdir, EMU_PARTIAL, N, "device nodes: EPERM"},
	{"rmdir", emu_handle_unlink, EMU_FULL, N, NULL},
	{"unlink", emu_handle_unlink, EMU_FULL, N, NULL},
	{"unlinkat", emu_handle_unlink, EMU_FULL, N, NULL},
	{"rename", emu_handle_rename, EMU_FULL, N, NULL},
	{"renameat", emu_handle_rename, EMU_FULL, N, NULL},
	{"renameat2", emu_handle_rename, EMU_FULL, N, NULL},
	{"link", emu_handle_link, EMU_FULL, N, NULL},
	{"linkat", emu_handle_link, EMU_PARTIAL, N, "AT_EMPTY_PATH: ENOENT"},
	{"symlink", emu_handle_symlink, EMU_FULL, N, NULL},
	{"symlinkat", emu_handle_symlink, EMU_FULL, N, NULL},
	{"chmod", emu_handle_chmod, EMU_FULL, N, NULL},
	{"fchmodat", emu_handle_chmod, EMU_FULL, N, NULL},
	{"fchmodat2", emu_handle_chmod, EMU_FULL, N, NULL},
	{"chown", emu_handle_chown, EMU_FULL, N, NULL},
	{"lchown", emu_handle_chown, EMU_FULL, N, NULL},
	{"fchownat", emu_handle_chown, EMU_FULL, N, NULL},
	{"truncate", emu_handle_truncate, EMU_FULL, N, NULL},
	{"utime", emu_handle_utimes, EMU_FULL, N, NULL},
	{"utimes", emu_handle_utimes, EMU_FULL, N, NULL},
	{"futimesat", emu_handle_utimes, EMU_FULL, N, NULL},
	{"utimensat", emu_handle_utimes, EMU_FULL, N, NULL},
	{"setxattr", emu_handle_xattr, EMU_PARTIAL, N, "values up to 4096 bytes"},
	{"lsetxattr", emu_handle_xattr, EMU_PARTIAL, N, "values up to 4096 bytes"},
	{"getxattr", emu_handle_xattr, EMU_PARTIAL, N, "values up to 4096 bytes"},
	{"lgetxattr", emu_handle_xattr, EMU_PARTIAL, N, "values up to 4096 bytes"},
	{"listxattr", emu_handle_xattr, EMU_PARTIAL, N, "lists up to 4096 bytes"},
	{"llistxattr", emu_handle_xattr, EMU_PARTIAL, N, "lists up to 4096 bytes"},
	{"removexattr", emu_handle_xattr, EMU_FULL, N, NULL},
	/* changes through an fd: the view's mode of the fd's file (emu_handle_fd_attr) */
	{"fchmod", emu_handle_fd_attr, EMU_FULL, N, NULL},
	{"fchown", emu_handle_fd_attr, EMU_FULL, N, NULL},
	{"fsetxattr", emu_handle_fd_attr, EMU_PARTIAL, N, "values up to 4096 bytes"},
	{"fremovexattr", emu_handle_fd_attr, EMU_FULL, N, NULL},
	{"lremovexattr", emu_handle_xattr, EMU_FULL, N, NULL},
	{"inotify_add_watch", emu_handle_inotify_add_watch, EMU_FULL, N, NULL},
	{"chdir", emu_handle_chdir, EMU_PARTIAL, N | EMU_TRACE,
	 "translated directories need ptrace (path rewrite)"},
	{"getcwd", emu_handle_getcwd, EMU_FULL, N, NULL},
	{"getdents64", emu_handle_getdents, EMU_PARTIAL, N,
	 "at most 4096 bytes per call; route it only when sbx_view_filters_listings()"},
	{"chroot", emu_handle_fs_refuse, EMU_DENIED, N, NULL},
	{"pivot_root", emu_handle_fs_refuse, EMU_DENIED, N, NULL},
};

const size_t emu_fs_n_entries = ARRAY_SIZE(emu_fs_entries);
