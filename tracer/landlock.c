/* SPDX-License-Identifier: MIT */
/*
 * Landlock as a second layer (DESIGN.md "Defence in depth"). File-system rules from the
 * view's mounts (ABI 1+, below), and scopes (ABI 6, 6.12): the child can neither
 * signal processes outside its domain (LANDLOCK_SCOPE_SIGNAL, which also covers
 * F_SETOWN/SIGIO) nor connect to abstract unix sockets created outside it
 * (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET).
 */
#include "tracer/internal.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/missing-seccomp.h"
#include "emulation/path/view.h"
#include "net/handlers.h"
#include "policy/policy.h"

#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#endif
#define FS_READ                                                                                    \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
/* the rights that make sense on a file (a mount whose source is a file) */
#define FS_FILE_RIGHTS                                                                             \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |                              \
	 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |                              \
	 LANDLOCK_ACCESS_FS_IOCTL_DEV)

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_restrict_self  446
#endif

/* struct landlock_ruleset_attr of ABI 6; the kernel accepts shorter sizes of older ABIs */
struct sbx_landlock_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

int tracer_landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return abi < 0 ? 0 : (int) abi;
}

/* Every file-system right the running ABI knows: all of them are handled, so whatever is not
 * granted beneath a mount below is refused. */
static uint64_t fs_handled(int abi)
{
	uint64_t a = LANDLOCK_ACCESS_FS_MAKE_SYM * 2 - 1; /* ABI 1: bits 0..12 */

	if (abi >= 2)
		a |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		a |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		a |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return a;
}

/*
 * Read-only beneath the sources of ro mounts (read, list, execute: the kernel itself opens
 * the binaries, the dynamic loader and "#!" interpreters the program execs), everything
 * beneath rw and tmp sources, nothing elsewhere. The supervisor's own opens (the fds it
 * injects) are not subject to this: it only catches what reaches the kernel unchecked.
 */
static int add_fs_rules(int ruleset, const SbxView *view, uint64_t handled)
{
	for (size_t i = 0; i < sbx_view_n_mounts(view); i++) {
		const SbxMount *m = sbx_view_mount(view, i);
		struct landlock_path_beneath_attr pb = {.parent_fd = m->fd};
		struct stat st;

		/* /dev nodes are opened by the supervisor, and so are the files of a procfs
		 * mount, which the view narrows to the tree's processes: a grant beneath the
		 * host's /proc would reach every process of this user through whatever the kernel
		 * resolves itself (a continued exec or open; an fd from outside). The kernel checks
		 * a magic link's target (/proc/self/exe), not the link. */
		if (m->fd < 0 || m->kind == SBX_MOUNT_DEV || m->kind == SBX_MOUNT_PROC)
			continue;
		pb.allowed_access = m->mode == MOUNT_RO ? handled & FS_READ : handled;
		if (fstat(m->fd, &st) < 0)
			return -errno;
		if (!S_ISDIR(st.st_mode))
			pb.allowed_access &= FS_FILE_RIGHTS;
		if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
			return -errno;
	}
	return 0;
}

/* With the view in the kernel (tracer/kview.c) the program itself lists "/" and opens the
 * skeleton's files (/etc/passwd, the loader's cache) and the /dev nodes, which the emulated
 * view opens for it: read beneath its root, and the file rights on each device. Called after
 * pivot_root: these are the program's paths. */
static int add_path_rule(int ruleset, const char *path, uint64_t access)
{
	struct landlock_path_beneath_attr pb = {.allowed_access = access};
	int r = 0;

	pb.parent_fd = open(path, O_PATH | O_CLOEXEC);
	if (pb.parent_fd < 0)
		return -errno;
	if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
		r = -errno;
	(void) close(pb.parent_fd);
	return r;
}

static int add_kview_rules(int ruleset, const KView *k, uint64_t handled)
{
	int r = add_path_rule(ruleset, "/", handled & FS_READ);

	for (size_t i = 0; i < k->n_binds && r >= 0; i++)
		if (k->binds[i].device)
			r = add_path_rule(ruleset, k->binds[i].vpath, handled & FS_FILE_RIGHTS);
	if (r >= 0 && k->pts) /* the private devpts: its ptmx and the ptys beneath */
		r = add_path_rule(ruleset, "/dev/ptmx", handled & FS_FILE_RIGHTS);
	if (r >= 0 && k->pts)
		r = add_path_rule(ruleset, "/dev/pts", handled & (FS_FILE_RIGHTS | FS_READ));
	return r;
}

/*
 * Whether the Landlock layer of an emulated view's run allows exactly what the view shows,
 * so that the kernel may make an open the view checked (EmuHost.landlock_exact,
 * emulation/fs-open.c "Opens the kernel makes"); NULL when it does, else why not. The rules
 * above (add_fs_rules) grant each directory mount's source its mode beneath, and nothing
 * beneath /dev or a procfs mount; the view shows more narrowly where a rule hides, denies or
 * makes read-only part of a directory mount (Landlock only grants, and beneath; a rule
 * within a procfs mount narrows nothing Landlock grants) and where a mount lies beneath
 * another that is not a tmp one (the outer source's own directory there is hidden by the
 * view, granted by Landlock). A directory mount of /dev's files would let the kernel open a
 * terminal without the O_NOCTTY the supervisor adds. Truncation is checked from ABI 3 on. An
 * audit log or --trace records each open's result, which a continued call does not give the
 * supervisor.
 */
const char *tracer_landlock_exact_why(const Policy *p, const SbxView *view, int abi)
{
	if (p->landlock == TRI_OFF)
		return "Landlock is off (tracer.landlock = false)";
	if (abi < 1)
		return "this kernel has no Landlock";
	if (abi < 3)
		return "this kernel's Landlock (ABI < 3) does not check truncation";
	if (p->audit.log || p->audit.trace)
		return "the audit log or --trace records what each open returned";
	if (sbx_view_rules_outside_proc(view))
		return "a [[rule]] narrows a mount, and Landlock can only grant beneath a source";
	for (size_t i = 0; i < sbx_view_n_mounts(view); i++) {
		const SbxMount *m = sbx_view_mount(view, i);

		if (m->kind != SBX_MOUNT_DIR)
			continue; /* /dev and procfs mounts: Landlock grants nothing (add_fs_rules)
				   */
		/* a tmp directory holds only the mount points the view made in it, and whatever
		 * the tree itself writes there */
		if (m->nested && !m->tmp)
			return "a mount lies beneath another: the view hides what the outer source "
			       "holds there";
		if (streq(m->source, "/dev") || strncmp(m->source, "/dev/", 5) == 0)
			return "a mount of /dev's files: the supervisor opens them (O_NOCTTY)";
	}
	return NULL;
}

int tracer_landlock_apply(const Policy *p, const SbxView *view, const KView *kview, int abi)
{
	struct sbx_landlock_ruleset_attr attr = {};
	size_t size = sizeof(attr);
	unsigned long long net_access = 0, net_scope = 0;
	long fd;
	int r = 0;

	if (p->landlock == TRI_OFF)
		return 0;
	if (abi < 6 && p->landlock == TRI_ON)
		return -EOPNOTSUPP;
	if (abi < 1)
		return 0;

	if (view)
		attr.handled_access_fs = fs_handled(abi);
	/* network: TCP ports by mode (ABI 4), abstract unix sockets unless the policy lists
	 * some (ABI 6); net/landlock-apply.c */
	net_landlock_access(p, abi, &net_access, &net_scope);
	attr.handled_access_net = net_access;
	if (abi >= 6)
		attr.scoped = LANDLOCK_SCOPE_SIGNAL | net_scope;
	else if (abi < 4)
		size = offsetof(struct sbx_landlock_ruleset_attr, handled_access_net);
	else
		size = offsetof(struct sbx_landlock_ruleset_attr, scoped);
	if (!attr.handled_access_fs && !attr.scoped && !attr.handled_access_net)
		return 0;
	fd = syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (fd < 0)
		return -errno;
	if (view)
		r = add_fs_rules((int) fd, view, attr.handled_access_fs);
	if (r >= 0 && view && kview)
		r = add_kview_rules((int) fd, kview, attr.handled_access_fs);
	if (r >= 0)
		r = net_landlock_add_rules(p, abi, (int) fd);
	if (r >= 0 && syscall(SYS_landlock_restrict_self, (int) fd, 0) < 0)
		r = -errno;
	(void) close((int) fd);
	return r;
}
