/* SPDX-License-Identifier: MIT */
/*
 * The filesystem view in the supervisor (issue 4; docs/filesystem.md, "In the supervisor"):
 * builds the SbxView from the policy before launch, adds the path-taking syscalls of
 * emulation/fs.h (and execve/execveat) to the filter as notified entries, and maps the
 * policy's virtual working directory to the host directory the command starts in.
 */
#include "tracer/internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <seccomp.h>

#include "common/log.h"
#include "common/util.h"
#include "emulation/fs.h"
#include "emulation/path/view.h"
#include "policy/policy.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

/* exec routing belongs to the tracer (emulation/fs.h): checked, identity-mapped targets
 * continue, translated ones fail with EACCES (no ptrace rewrite yet, docs/filesystem.md) */
static const EmuEntry exec_entries[] = {
	{"execve", emu_handle_execve, EMU_PARTIAL, EMU_NOTIFY | EMU_TRACE,
	 "checked, then run by the kernel on the child's path string (no ptrace rewrite yet)"},
	{"execveat", emu_handle_execve, EMU_PARTIAL, EMU_NOTIFY | EMU_TRACE,
	 "checked, then run by the kernel on the child's path string (no ptrace rewrite yet)"},
};

static bool hook_in_tree(void *ctx, pid_t pid)
{
	Tracer *t = ctx;

	return t->keeper > 0 && tree_contains(t->keeper, pid, NULL) == 1;
}

int tracer_fs_setup(Tracer *t, const Policy *p)
{
	SbxHooks hooks = {
		.ctx = t,
		.get_fd = tracer_get_fd,
		.get_umask = sbx_default_get_umask,
		.in_tree = hook_in_tree,
		.get_path = sbx_default_get_path,
	};
	char why[512] = "";
	int r;

	r = sbx_view_new(p, &hooks, 0, &t->view, why, sizeof(why));
	if (r < 0)
		return log_error_errno(r, "cannot build the file-system view: %s",
				       why[0] ? why : strerror(-r));
	return 0;
}

void tracer_fs_done(Tracer *t)
{
	t->view = sbx_view_free(t->view);
}

/* Whether getdents64 must go through the supervisor: hide rules, or a procfs mount (other
 * pids are removed from its listing). Decided from the policy, before the view exists. */
static bool policy_filters_listings(const Policy *p)
{
	for (size_t i = 0; i < p->n_rules; i++)
		if (p->rules[i].access == RULE_ACCESS_HIDE)
			return true;
	for (size_t i = 0; i < p->n_mounts; i++) {
		struct statfs sf;

		if (p->mounts[i].source && statfs(p->mounts[i].source, &sf) == 0 &&
		    sf.f_type == PROC_SUPER_MAGIC)
			return true;
	}
	return false;
}

static void add_entry(TracerFilter *f, const EmuEntry *e)
{
	int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, e->name);
	TracerSlot *s;

	if (nr < 0 || nr >= TRACER_NR_MAX) {
		log_debug("syscall '%s' unknown to libseccomp, left out of the filter", e->name);
		return;
	}
	s = &f->slots[nr];
	s->entry = e;
	s->handler = e->handler;
	s->action = SECCOMP_RET_USER_NOTIF;
	s->special = SLOT_PLAIN;
	s->deny_error = 0;
}

/* ptrace = "auto": on when some mount's virtual path differs from its host path (chdir
 * there needs the argument rewritten). */
static bool policy_needs_ptrace(const Policy *p)
{
	if (p->ptrace == PTRACE_MODE_ALWAYS)
		return true;
	if (p->ptrace == PTRACE_MODE_NEVER)
		return false;
	for (size_t i = 0; i < p->n_mounts; i++)
		if (!p->mounts[i].source || !streq(p->mounts[i].source, p->mounts[i].path))
			return true;
	return false;
}

void tracer_fs_filter(TracerFilter *f, const Policy *p)
{
	bool listings = policy_filters_listings(p);
	int nr;

	for (size_t i = 0; i < emu_fs_n_entries; i++) {
		const EmuEntry *e = &emu_fs_entries[i];

		if (streq(e->name, "getdents64") && !listings)
			continue; /* allowed in the kernel: nothing to filter out */
		add_entry(f, e);
	}
	for (size_t i = 0; i < ARRAY_SIZE(exec_entries); i++)
		add_entry(f, &exec_entries[i]);

	f->ptrace = policy_needs_ptrace(p);
	nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, "chdir");
	if (f->ptrace && nr >= 0 && nr < TRACER_NR_MAX)
		/* the tracer thread rewrites the path (tracer/ptrace.c) */
		f->slots[nr].action = SECCOMP_RET_TRACE;
	for (size_t i = 0; f->ptrace && i < ARRAY_SIZE(exec_entries); i++) {
		/* and checks the exec'd file afterwards */
		nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, exec_entries[i].name);
		if (nr >= 0 && nr < TRACER_NR_MAX)
			f->slots[nr].action = SECCOMP_RET_TRACE;
	}
}

char *tracer_fs_host_cwd(const Tracer *t, const Policy *p)
{
	const char *v = p->process.cwd;
	const SbxMount *best = NULL;

	if (!v) {
		/* the first rw mount, else the root (docs/policy.md) */
		for (size_t i = 0; i < p->n_mounts && !v; i++)
			if (p->mounts[i].mode == MOUNT_RW)
				v = p->mounts[i].path;
		/* a read-write root (the host seen through the view, as in test policies):
		 * keep the caller's working directory, which lies inside it */
		if (v && streq(v, "/"))
			return strdup(".");
		if (!v)
			v = "/";
	}
	for (size_t i = 0; i < sbx_view_n_mounts(t->view); i++) {
		const SbxMount *m = sbx_view_mount(t->view, i);

		if (m->kind != SBX_MOUNT_DIR)
			continue;
		if ((streq(m->vpath, "/") ||
		     (strncmp(v, m->vpath, m->vlen) == 0 && (v[m->vlen] == '/' || !v[m->vlen]))) &&
		    (!best || m->vlen > best->vlen))
			best = m;
	}
	if (!best)
		/* no mount holds it: the skeleton's directory for it (the root, a mount point's
		 * ancestor) */
		return strdup_printf("%s%s", sbx_view_root_path(t->view), streq(v, "/") ? "" : v);
	return strdup_printf("%s%s", best->source, v + (streq(best->vpath, "/") ? 0 : best->vlen));
}

int tracer_fs_opath_fallback(int fd)
{
	char p[64];
	int fl = fcntl(fd, F_GETFL), nfd;

	if (fl < 0 || !(fl & O_PATH))
		return -EBADF;
	/* Deviation (docs/filesystem.md): the child gets a read-only fd of the object the
	 * view allowed it to name; O_NONBLOCK so that a FIFO cannot block us, then cleared. A
	 * symlink (O_PATH|O_NOFOLLOW) cannot be opened this way: EOPNOTSUPP, which is what
	 * glibc's lchmod()/fchmodat(AT_SYMLINK_NOFOLLOW) (the common user: it opens O_PATH to
	 * fstat) would answer for a symlink anyway, so tar and cp -a go on. */
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	nfd = open(p, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (nfd < 0)
		return errno == ELOOP ? -EOPNOTSUPP : -errno;
	(void) fcntl(nfd, F_SETFL, 0);
	return nfd;
}
