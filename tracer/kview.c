/* SPDX-License-Identifier: MIT */
/*
 * The view in the kernel (docs/filesystem.md, "The view in the kernel"; tracer.kernel_view).
 *
 * The emulated view costs a round trip to the supervisor for every path-taking syscall
 * (15-20 µs here against 1-2 µs in the kernel), and a compiler or a test suite makes tens of
 * thousands of them. Where the kernel lets an unprivileged user make a user namespace, C
 * builds the same view as a mount namespace before its filter: the skeleton root bound as
 * "/", read-only; each mount's host source bound at its mount point (ro mounts read-only),
 * every mount nosuid and, outside /dev, nodev; the /dev allowlist as binds of the host's
 * nodes onto the skeleton's placeholders. Then pivot_root into it and detach the host's tree.
 * The filter of such a run lets the path-taking syscalls run in the kernel
 * (tracer/filter.c): what the namespace does not hold does not exist for the program, and
 * Landlock's rules (tracer/landlock.c) still hold beneath.
 *
 * Pseudo-terminals (process.pty): a new devpts instance at /dev/pts, and its ptmx bound on
 * /dev/ptmx. It holds only the ptys made through it, by the tree: what the emulated view
 * checks pty by pty (tracer/fs.c) holds by construction.
 *
 * Only views the namespace reproduces exactly qualify (tracer_kview_qualify(), which `check`
 * asks too): no rules inside mounts (hide, deny, sensitivity, globs: decided per path) but
 * ro rules on fixed paths that a read-only bind holds exactly (ro_rule) and hide rules on a
 * proc mount's network tables that the tree's own network namespace empties, no [exec]
 * globs, no mount at "/", and no audit or trace, which record file-system calls only when
 * the supervisor sees them.
 *
 * A proc mount (issue 23): the tree gets a pid namespace of its own, whose init (pid 1, a
 * sibling of the command, init_main()) mounts a procfs of it at the mount point: the tree's
 * processes only, as the emulated view's filtered /proc shows (docs/filesystem.md, "A pid
 * namespace for /proc").
 *
 * A mount nested in a tmp mount whose (new, empty) directory lacks its mount point gets one
 * made by C once the tmp mount is bound (make_points), never following a symlink; the first
 * missing ancestor of a deeper one is bound onto itself read-only, as the emulated view's
 * skeleton directories are (mount_point(), docs/filesystem.md "Mounts nested in a tmp
 * mount").
 *
 * Each bind is made by path, since a bind of an fd opened in S's namespace is refused in
 * the new one (do_loopback's check_mnt); the path could have been swapped since S opened
 * it, so the bound directory's st_dev/st_ino must be what S opened, else the run fails.
 */
#include "tracer/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "emulation/fs.h"
#include "emulation/path/view.h"
#include "policy/policy.h"

#define AUDITED "the audit log and --trace see file-system calls only in the emulated view"
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif

/* Whether the first n characters of glob g hold no glob character. */
static bool glob_is_fixed_prefix(const char *g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strchr("*?[\\", g[i]))
			return false;
	return true;
}

/*
 * Why a hide, deny, ask or sensitivity rule keeps the view out of the kernel
 * (docs/filesystem.md, "What stays emulated"): a mount can cover a name or make it
 * read-only, not make it absent or refuse it, even on a fixed path, nor hold an open for a
 * decision. ro and rw rules: ro_rule().
 */
static const char *rule_unsuitable(const PolicyRule *r)
{
	if (r->level)
		return "a rule with a sensitivity level: the ratchet needs the supervisor to see "
		       "the open";
	switch (r->access) {
	case RULE_ACCESS_HIDE:
		return "a hide rule: the kernel cannot make a name absent (ENOENT, unlisted); "
		       "a placeholder bound over it would still be listed and opened";
	case RULE_ACCESS_ASK:
	case RULE_ACCESS_ASK_WRITE:
		return "a rule with access \"ask\" or \"ask-write\" holds opens for a "
		       "decision, and in the kernel view opens do not reach the supervisor";
	default:
		return "a deny rule: the kernel cannot refuse a name with EACCES to its owner";
	}
}

/* The length of P when glob g is P/net, P/STAR/net or P/STAR/task/STAR/net (STAR: "*") with a
 * fixed P:
 * the network tables of a proc mount at P (the presets hide them: the host's sockets, when
 * the network namespace is the host's); 0 otherwise. */
static size_t proc_net_glob(const char *g)
{
	static const char *const tails[] = {"/net", "/*/net", "/*/task/*/net"};
	size_t n = strlen(g);

	for (size_t i = 0; i < ARRAY_SIZE(tails); i++) {
		size_t t = strlen(tails[i]);

		if (n > t && streq(g + n - t, tails[i]) && glob_is_fixed_prefix(g, n - t))
			return n - t;
	}
	return 0;
}

/* What the policy alone rules out (no view, no host needed). */
static const char *policy_unsuitable(const Policy *p)
{
	if (p->kernel_view == TRI_OFF)
		return "tracer.kernel_view = false";
	/* An fd of a directory outside the namespace (a directory on stdin, one received over
	 * a socket from another sandbox or a host daemon) reaches the host tree with openat()
	 * or fchdir(): the emulated view maps every dirfd back into the view, the kernel view
	 * has Landlock's rules on the sources to refuse what lies outside them. */
	if (p->landlock == TRI_OFF)
		return "tracer.landlock = false: the kernel view needs Landlock beneath it";
	if (p->audit.log || p->audit.trace || p->audit.backtrace != AUDIT_SELECT_NONE)
		return AUDITED;
	/* ro and rw rules: the plan (ro_rule); hide rules on a proc mount's network tables:
	 * view_unsuitable (proc_net_rule) */
	for (size_t i = 0; i < p->n_rules; i++)
		if (p->rules[i].level || p->rules[i].access == RULE_ACCESS_DENY ||
		    p->rules[i].access == RULE_ACCESS_ASK ||
		    p->rules[i].access == RULE_ACCESS_ASK_WRITE ||
		    (p->rules[i].access == RULE_ACCESS_HIDE && !proc_net_glob(p->rules[i].glob)))
			return rule_unsuitable(&p->rules[i]);
	if (p->exec_allow || p->exec_deny)
		return "[exec] globs are checked by the supervisor";
	for (size_t i = 0; i < p->n_syscalls; i++) {
		const char *n = p->syscalls[i].name;
		const SyscallRow *row;

		if (p->syscalls[i].action != SYSCALL_ACTION_LOG)
			continue;
		row = syscalls_find(n);
		if (row && (row->flags & SYSCALL_PATH))
			return "[syscalls] log names a path-taking syscall";
	}
	return NULL;
}

/*
 * Whether this mount namespace holds a procfs with nothing mounted below it but on the
 * empty directories procfs keeps for that (binfmt_misc): the kernel lets a user namespace
 * mount a procfs only then (fs/namespace.c, mnt_already_visible()), so that a new one
 * cannot uncover what an administrator (or a container runtime: Docker masks /proc/kcore,
 * /proc/keys… with binds and makes /proc/sys read-only) covered in the old one. Checked
 * here, so that `check` says so and "auto" emulates, rather than C failing after its user
 * namespace exists. -errno: mountinfo unreadable.
 */
static int procfs_fully_visible(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char procs[8][256], *line = NULL;
	size_t n_procs = 0, cap = 0;
	bool covered[8] = {};
	int r = 0;

	if (!f)
		return -errno;
	/* two passes over one read: the procfs mount points, then what lies below them; the
	 * lines are parsed by mountinfo_next() (common/util.c, fuzzed by fuzz-mountinfo) */
	for (int pass = 0; pass < 2; pass++) {
		char *mp, *fstype;

		rewind(f);
		while (mountinfo_next(f, &line, &cap, &mp, &fstype) > 0) {
			if (pass == 0) {
				/* a longer mount point is not tracked: it can only make the
				 * answer "not fully visible", the safe one */
				if (streq(fstype, "proc") && n_procs < ARRAY_SIZE(procs) &&
				    strlen(mp) < sizeof(procs[0]))
					snprintf(procs[n_procs++], sizeof(procs[0]), "%s", mp);
				continue;
			}
			for (size_t i = 0; i < n_procs; i++) {
				size_t n = strlen(procs[i]);

				if (strncmp(mp, procs[i], n) != 0 || mp[n] != '/')
					continue;
				if (!streq(mp + n, "/sys/fs/binfmt_misc"))
					covered[i] = true;
			}
		}
	}
	free(line);
	(void) fclose(f);
	for (size_t i = 0; i < n_procs; i++)
		if (!covered[i])
			r = 1;
	return r;
}

/*
 * A proc mount in the kernel view is a procfs of the tree's own pid namespace, mounted by
 * that namespace's init (tracer_kview_enter). What keeps a policy's proc mounts out of it.
 */
static const char *proc_unsuitable(const Policy *p, const SbxView *v)
{
	bool any = false;

	for (size_t i = 0; i < sbx_view_n_mounts(v); i++) {
		const SbxMount *m = sbx_view_mount(v, i);

		if (m->kind != SBX_MOUNT_PROC)
			continue;
		any = true;
		for (size_t j = 0; j < sbx_view_n_mounts(v); j++) {
			const SbxMount *o = sbx_view_mount(v, j);

			if (o == m)
				continue;
			if (o->vlen < m->vlen && strncmp(m->vpath, o->vpath, o->vlen) == 0 &&
			    (o->vlen == 1 || m->vpath[o->vlen] == '/'))
				return "a /proc mount inside another mount (the kernel view mounts "
				       "procfs on the skeleton only)";
			if (o->vlen > m->vlen && strncmp(o->vpath, m->vpath, m->vlen) == 0 &&
			    o->vpath[m->vlen] == '/')
				return "a mount inside a /proc mount";
		}
	}
	for (size_t i = 0; i < p->n_rules; i++) {
		const PolicyRule *r = &p->rules[i];
		bool on_proc = false;

		if (r->access != RULE_ACCESS_HIDE)
			continue; /* the others: policy_unsuitable, plan */
		for (size_t j = 0; j < sbx_view_n_mounts(v) && !on_proc; j++) {
			const SbxMount *m = sbx_view_mount(v, j);

			on_proc = m->kind == SBX_MOUNT_PROC && proc_net_glob(r->glob) == m->vlen &&
				  strncmp(r->glob, m->vpath, m->vlen) == 0;
		}
		if (!on_proc)
			return rule_unsuitable(r);
		/* the tables of the reader's network namespace: the tree's own (empty in mode
		 * none, its own lo and sockets in loopback with unshare = true), or the host's,
		 * which only the emulated view can hide */
		if (p->network.unshare_netns == 0 ||
		    (p->network.mode != NET_MODE_NONE &&
		     !(p->network.mode == NET_MODE_LOOPBACK && p->network.unshare_netns > 0)))
			return "a hide rule on a proc mount's network tables, with the host's "
			       "network namespace (network.unshare): the kernel cannot hide them";
	}
	if (!any)
		return NULL;
	switch (procfs_fully_visible()) {
	case 1:
		return NULL;
	case 0:
		return "every procfs of this host has mounts on it (a container's masked "
		       "/proc): a user namespace may not mount another (/proc)";
	default:
		return "/proc/self/mountinfo is unreadable (/proc)";
	}
}

/* What the view (the mounts as opened, canonical) and the host rule out. */
static const char *view_unsuitable(const Policy *p, const SbxView *v)
{
	_cleanup_free_ char *aa = NULL;
	size_t aa_len = 0;
	const char *no;

	/* "/." and the like, normalized */
	for (size_t i = 0; i < sbx_view_n_mounts(v); i++)
		if (streq(sbx_view_mount(v, i)->vpath, "/"))
			return "a mount at / (the skeleton is the root of a kernel view)";
	/* A procfs at or below a directory mount's source: the bind would bring in the host's
	 * /proc, whose magic links the kernel follows for real (the emulated view turns such a
	 * procfs into a proc mount of its own). The view read mountinfo already. */
	if (sbx_view_procfs_below_sources(v))
		return "a procfs lies below a mount's source";
	no = proc_unsuitable(p, v);
	if (no)
		return no;
	if (tracer_landlock_abi() < 1)
		return "this kernel has no Landlock, which the kernel view needs beneath it";
	/* Ubuntu's AppArmor lets an unprivileged unshare(CLONE_NEWUSER) succeed, then denies
	 * every capability in the namespace: the ids could not be mapped, and C would be past
	 * the point where it can still emulate */
	if (geteuid() != 0 &&
	    read_full_file(AT_FDCWD, "/proc/sys/kernel/apparmor_restrict_unprivileged_userns", 16,
			   &aa, &aa_len) >= 0 &&
	    aa_len > 0 && aa[0] == '1')
		return "AppArmor restricts unprivileged user namespaces on this host";
	return NULL;
}

static int plan(const Policy *p, const SbxView *v, KView **ret, char *why, size_t size);

int tracer_kview_qualify(const Policy *p, const SbxView *v, bool audited, KView **ret_plan,
			 char *why, size_t size)
{
	const char *no = policy_unsuitable(p);
	KView *k = NULL;
	int r;

	if (!no && audited)
		no = AUDITED;
	if (!no)
		no = view_unsuitable(p, v);
	if (no) {
		(void) snprintf(why, size, "%s", no);
		return 0;
	}
	why[0] = 0;
	r = plan(p, v, &k, why, size);
	if (r < 0 && why[0])
		return 0; /* the plan found what the kernel cannot reproduce */
	if (r < 0) {
		(void) snprintf(why, size, "planning the kernel view: %s", strerror(-r));
		return r;
	}
	if (ret_plan)
		*ret_plan = k;
	else
		tracer_kview_free(k);
	return 1;
}

int tracer_kview_verdict(const Policy *p, char *why, size_t size)
{
	_cleanup_(sbx_view_freep) SbxView *v = NULL;
	char err[256] = "";
	int r;

	/* the view `run` would build, scratch directories and all (removed again at free) */
	r = sbx_view_new(p, NULL, SBX_VIEW_PROBE, &v, err, sizeof(err));
	if (r < 0) {
		(void) snprintf(why, size, "the view cannot be built: %s",
				err[0] ? err : strerror(-r));
		return r;
	}
	_cleanup_(tracer_kview_freep) KView *k = NULL;

	r = tracer_kview_qualify(p, v, false, &k, why, size);
	return r > 0 && k->n_procs ? 2 : r;
}

const char *tracer_opens_verdict(const Policy *p, int landlock_abi)
{
	_cleanup_(sbx_view_freep) SbxView *v = NULL;
	char err[256] = "";

	if (sbx_view_new(p, NULL, SBX_VIEW_PROBE, &v, err, sizeof(err)) < 0)
		return "the view cannot be built";
	return tracer_landlock_exact_why(p, v, landlock_abi);
}

KView *tracer_kview_free(KView *k)
{
	if (!k)
		return NULL;
	for (size_t i = 0; i < k->n_binds; i++) {
		free(k->binds[i].source);
		free(k->binds[i].vpath);
		free(k->binds[i].mkdirs);
	}
	free(k->binds);
	for (size_t i = 0; i < k->n_procs; i++)
		free(k->procs[i]);
	free(k->procs);
	free(k->root);
	free(k->cwd);
	free(k);
	return NULL;
}

static int add_bind(KView *k, const char *source, const char *vpath, uint64_t attr, bool device,
		    dev_t dev, ino_t ino)
{
	KViewBind *b = realloc(k->binds, (k->n_binds + 1) * sizeof(*b));

	if (!b)
		return -ENOMEM;
	k->binds = b;
	b = &k->binds[k->n_binds];
	*b = (KViewBind){.attr = attr, .device = device, .self = !source, .dev = dev, .ino = ino};
	b->source = source ? strdup(source) : NULL;
	b->vpath = strdup(vpath);
	k->n_binds++;
	return (b->source || !source) && b->vpath ? 0 : -ENOMEM;
}

static KViewBind *find_bind(KView *k, const char *vpath)
{
	for (size_t i = 0; i < k->n_binds; i++)
		if (streq(k->binds[i].vpath, vpath))
			return &k->binds[i];
	return NULL;
}

static int add_mkdir(KViewBind *b, const char *rel)
{
	size_t n = strlen(rel) + 1;
	char *d = realloc(b->mkdirs, b->mkdirs_len + n + 1);

	if (!d)
		return -ENOMEM;
	memcpy(d + b->mkdirs_len, rel, n);
	b->mkdirs = d;
	b->mkdirs_len += n;
	d[b->mkdirs_len] = 0; /* the empty one last */
	return 0;
}

static uint64_t nodev(const char *vpath)
{
	/* a policy's own /dev keeps its devices */
	return streq(vpath, "/dev") || strncmp(vpath, "/dev/", 5) == 0 ? 0 : MOUNT_ATTR_NODEV;
}

/*
 * The mount point of m in the source of up, the mount m is nested in. A bind needs a
 * directory to cover: one of the source's, or, when up is a tmp mount (a directory this run
 * made, empty), one C makes in it once up is bound (tracer_kview_enter). The emulated view
 * shows a missing mount point's ancestors as read-only skeleton directories: the first of
 * them is bound onto itself read-only, which holds the rest (mkdir in it: EROFS, rmdir or
 * rename of it: EBUSY, as there). 0; -errno with why set when the kernel cannot make it (a
 * host source is never written to), -ENOMEM without.
 */
static int mount_point(KView *k, const SbxMount *up, const SbxMount *m, char *why, size_t size)
{
	const char *rel = m->vpath + up->vlen + 1, *slash;
	_cleanup_free_ char *inside = NULL, *first = NULL;
	KViewBind *ub;
	struct stat st;
	int r;

	inside = strdup_printf("%s/%s", up->source, rel);
	if (!inside)
		return -ENOMEM;
	if (stat(inside, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	if (!up->tmp) {
		snprintf(why, size, "mount point %s is not a directory in the source of %s",
			 m->vpath, up->vpath);
		return -ENOENT;
	}
	ub = find_bind(k, up->vpath); /* sorted: up is planned already */
	if (!ub) {
		snprintf(why, size, "mount point %s: %s is not planned", m->vpath, up->vpath);
		return -ENOENT;
	}
	r = add_mkdir(ub, rel);
	if (r < 0)
		return r;
	slash = strchr(rel, '/');
	if (!slash)
		return 0; /* directly in the tmp mount: m's bind covers it */
	first = strndup(m->vpath, (size_t) (slash - m->vpath));
	if (!first)
		return -ENOMEM;
	if (find_bind(k, first))
		return 0;
	return add_bind(k, NULL, first, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | nodev(first), false,
			0, 0);
}

static bool glob_is_fixed(const char *g)
{
	return !strpbrk(g, "*?[\\");
}

/* The deepest mount at or above vpath, NULL: the skeleton. */
static const SbxMount *mount_of(const SbxView *v, const char *vpath)
{
	const SbxMount *best = NULL;
	size_t n = strlen(vpath);

	for (size_t i = 0; i < sbx_view_n_mounts(v); i++) {
		const SbxMount *o = sbx_view_mount(v, i);

		if (o->vlen <= n && strncmp(vpath, o->vpath, o->vlen) == 0 &&
		    (vpath[o->vlen] == '/' || vpath[o->vlen] == 0) &&
		    (!best || o->vlen > best->vlen))
			best = o;
	}
	return best;
}

/* Whether a mount other than m lies below vpath. */
static bool mounts_below(const SbxView *v, const char *vpath)
{
	size_t n = strlen(vpath);

	for (size_t i = 0; i < sbx_view_n_mounts(v); i++) {
		const SbxMount *o = sbx_view_mount(v, i);

		if (o->vlen > n && strncmp(o->vpath, vpath, n) == 0 && o->vpath[n] == '/')
			return true;
	}
	return false;
}

/* Whether a mount other than a read-only one lies below vpath. */
static bool writable_below(const SbxView *v, const char *vpath)
{
	size_t n = strlen(vpath);

	for (size_t i = 0; i < sbx_view_n_mounts(v); i++) {
		const SbxMount *o = sbx_view_mount(v, i);

		if (o->vlen > n && strncmp(o->vpath, vpath, n) == 0 && o->vpath[n] == '/' &&
		    !(o->kind == SBX_MOUNT_DIR && o->mode == MOUNT_RO))
			return true;
	}
	return false;
}

/*
 * An ro rule on a fixed path P (docs/filesystem.md, "Read-only rules on fixed paths") is
 * taken by the kernel view only when it changes nothing: P in a read-only mount with only
 * read-only mounts below it, which Landlock holds whatever fd a walk starts from. A bind
 * would make P read-only only in the run's mount namespace (see below). 0: nothing to do;
 * -errno with why set when the rule keeps the view emulated, -ENOMEM without.
 */
static int ro_rule(const SbxView *v, const PolicyRule *rule, char *why, size_t size)
{
	char vpath[PATH_MAX];
	const SbxMount *m;
	int r;

	if (!glob_is_fixed(rule->glob)) {
		snprintf(why, size,
			 "an ro rule with a glob (%.100s): a bind per match, found at the start, "
			 "would miss what is created later",
			 rule->glob);
		return -EINVAL;
	}
	r = sbx_path_normalize(rule->glob, vpath, sizeof(vpath));
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		snprintf(why, size, "an ro rule on %.100s: %s", rule->glob, strerror(-r));
		return r;
	}
	m = mount_of(v, vpath);
	if (!m || m->kind != SBX_MOUNT_DIR) {
		snprintf(why, size, "an ro rule on %.100s, outside a directory mount", vpath);
		return -EINVAL;
	}
	if (m->mode == MOUNT_RO && !mounts_below(v, vpath))
		return 0; /* read-only already */
	/* Over anything writable, a read-only bind is not enough: it holds only in the run's
	 * mount namespace, and Landlock, which grants the writable source as a whole, cannot
	 * take a part of it back. A directory fd that comes from outside the namespace (another
	 * sandbox sharing the workspace, passing it over a socket there) writes below P
	 * (tests/security/fs-ro-rule-outside-dirfd). The emulated view checks the rule on every
	 * walk, whatever fd it starts from. */
	if (m->mode != MOUNT_RO || writable_below(v, vpath)) {
		snprintf(why, size,
			 "an ro rule on %.100s over writable files: a read-only bind would hold "
			 "only "
			 "in the run's mount namespace, not for a directory fd from outside it",
			 vpath);
		return -EINVAL;
	}
	return 0; /* only read-only mounts below: nothing to do */
}

/* An rw rule changes nothing unless an ro rule holds its path: then it would need a
 * writable bind below a read-only one (not done). */
static int rw_rule(const Policy *p, const PolicyRule *rule, char *why, size_t size)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const PolicyRule *o = &p->rules[i];
		size_t n = strlen(o->glob);

		if (o->access == RULE_ACCESS_RO &&
		    (!glob_is_fixed(o->glob) || (strncmp(rule->glob, o->glob, n) == 0 &&
						 (rule->glob[n] == '/' || rule->glob[n] == 0)))) {
			snprintf(why, size, "an rw rule (%.100s) below an ro rule", rule->glob);
			return -EINVAL;
		}
	}
	return 0;
}

/* The deepest other mount that holds vpath, NULL: the skeleton. */
static const SbxMount *parent_mount(const SbxView *v, const SbxMount *m)
{
	const SbxMount *best = NULL;

	for (size_t i = 0; i < sbx_view_n_mounts(v); i++) {
		const SbxMount *o = sbx_view_mount(v, i);

		if (o != m && o->vlen < m->vlen && strncmp(m->vpath, o->vpath, o->vlen) == 0 &&
		    m->vpath[o->vlen] == '/' && (!best || o->vlen > best->vlen))
			best = o;
	}
	return best;
}

static int plan(const Policy *p, const SbxView *v, KView **ret, char *why, size_t size)
{
	KView *k = calloc(1, sizeof(*k));
	int r = -ENOMEM;

	if (!k)
		return -ENOMEM;
	k->root = strdup(sbx_view_root_path(v));
	k->cwd = strdup(tracer_fs_virtual_cwd(p));
	if (!k->root || !k->cwd)
		goto fail;
	{
		struct stat st;

		if (stat(k->root, &st) < 0) {
			r = -errno;
			goto fail;
		}
		k->root_dev = st.st_dev;
		k->root_ino = st.st_ino;
	}
	/* sorted by virtual path: a mount comes before those nested in it */
	for (size_t i = 0; i < sbx_view_n_mounts(v); i++) {
		const SbxMount *m = sbx_view_mount(v, i), *up = parent_mount(v, m);
		uint64_t attr = MOUNT_ATTR_NOSUID;
		struct stat st;

		if (m->kind == SBX_MOUNT_PROC) {
			/* proc_unsuitable(): on the skeleton, nothing below it */
			char **n = realloc(k->procs, (k->n_procs + 1) * sizeof(*n));

			if (!n) {
				r = -ENOMEM;
				goto fail;
			}
			k->procs = n;
			k->procs[k->n_procs] = strdup(m->vpath);
			if (!k->procs[k->n_procs++]) {
				r = -ENOMEM;
				goto fail;
			}
			continue;
		}
		if (m->kind != SBX_MOUNT_DIR)
			continue;
		/* the emulated view makes up missing mount points; a bind needs a directory */
		if (up && (r = mount_point(k, up, m, why, size)) < 0)
			goto fail;
		if (fstat(m->fd, &st) < 0) {
			r = -errno;
			goto fail;
		}
		if (m->mode == MOUNT_RO)
			attr |= MOUNT_ATTR_RDONLY;
		attr |= nodev(m->vpath);
		r = add_bind(k, m->source, m->vpath, attr, false, st.st_dev, st.st_ino);
		if (r < 0)
			goto fail;
	}
	/* after every mount: a rule's bind holds the mounts below its path */
	for (size_t i = 0; i < p->n_rules; i++) {
		const PolicyRule *rule = &p->rules[i];

		/* hide rules left by proc_unsuitable(): a proc mount's network tables, which
		 * a network namespace of the tree's own holds empty */
		if (rule->access == RULE_ACCESS_HIDE)
			k->netns = true;

		r = rule->access == RULE_ACCESS_RO   ? ro_rule(v, rule, why, size)
		    : rule->access == RULE_ACCESS_RW ? rw_rule(p, rule, why, size)
						     : 0;
		if (r < 0)
			goto fail;
	}
	for (const char *const *n = sbx_view_dev_names(v); *n; n++) {
		char host[64], vpath[64];
		struct stat st;

		if (streq(*n, "ptmx")) {
			k->pts = true; /* the new devpts instance's own (tracer_kview_enter) */
			continue;
		}
		snprintf(host, sizeof(host), "/dev/%s", *n);
		snprintf(vpath, sizeof(vpath), "/dev/%s", *n);
		if (stat(host, &st) < 0 || !S_ISCHR(st.st_mode)) {
			r = -ENODEV;
			snprintf(why, size, "%s is not a character device", host);
			goto fail;
		}
		r = add_bind(k, host, vpath, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, true,
			     st.st_rdev, 0);
		if (r < 0)
			goto fail;
	}
	*ret = k;
	return 0;
fail:
	tracer_kview_free(k);
	return r;
}

/* ---- in C (a vfork child: no allocation) ---- */

/*
 * Everything below the skeleton root is reached from one fd of it whose st_dev/st_ino are
 * the skeleton's, with RESOLVE_NO_SYMLINKS: the skeleton's base directory may be writable by
 * other processes of the user (another sandbox that mounts /dev/shm, say), and a path that
 * changed between the mount and the attributes could put "read-only" on some other mount.
 * Mounts are made on, and attributes set through, fds ("/proc/self/fd/N" as the target).
 */
static int open_below(int rootfd, const char *vpath, bool dir)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW | (dir ? O_DIRECTORY : 0),
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	while (*vpath == '/')
		vpath++;
	fd = syscall(SYS_openat2, rootfd, *vpath ? vpath : ".", &how, sizeof(how));
	return fd < 0 ? -errno : (int) fd;
}

static int set_attr(int fd, uint64_t attr, bool recursive)
{
	struct mount_attr a = {.attr_set = attr};
	unsigned flags = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);

	if (syscall(SYS_mount_setattr, fd, "", flags, &a, sizeof(a)) < 0)
		return -errno;
	return 0;
}

static void fd_path(char *buf, size_t size, int fd)
{
	(void) snprintf(buf, size, "/proc/self/fd/%d", fd);
}

/* Whether a bind's root (st) is the object the plan names: dev/ino, or a device's rdev. A
 * self bind with no ino in the plan takes what is there. */
static bool bind_is_planned(const KViewBind *b, const struct stat *st, dev_t dev, ino_t ino)
{
	return b->device ? S_ISCHR(st->st_mode) && st->st_rdev == dev
			 : st->st_dev == dev && st->st_ino == ino;
}

/* A self bind's target fd: it must still be what S saw (the plan's dev/ino, when it has
 * one); *dev and *ino become what it is. */
static int self_target(int fd, const KViewBind *b, dev_t *dev, ino_t *ino)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (b->ino && (st.st_dev != b->dev || st.st_ino != b->ino))
		return -ESTALE;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

/*
 * The bind b with the new mount API: a detached copy of the source (open_tree(), recursive
 * for a directory), checked and given its attributes while still detached, then attached at
 * vpath (move_mount(), fd to fd). What gets attached is the checked tree with its attributes
 * set: no window in which the target shows it writable, and no path is resolved after the
 * check. One walk below the skeleton and no /proc/self/fd lookup, against two of each for
 * mount(2) and the check after it: 17 binds took C 190 µs on the 2-core VM
 * (docs/performance.md, "Less work after the fork"). -ENOSYS when open_tree() fails with
 * ENOSYS or EPERM: a seccomp filter around us that allows mount(2) but not the new calls
 * (nothing is attached then); the caller binds the old way.
 */
static int bind_detached(int rootfd, const KViewBind *b)
{
	_cleanup_close_ int target = -1, tree = -1;
	bool dir = !b->device && !b->file;
	unsigned clone = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (dir ? AT_RECURSIVE : 0);
	dev_t dev = b->dev;
	ino_t ino = b->ino;
	struct stat st;
	long r;

	target = open_below(rootfd, b->vpath, dir);
	if (target < 0)
		return target;
	if (b->self) {
		/* onto itself: what S saw, or (no ino) whatever is there */
		r = self_target(target, b, &dev, &ino);
		if (r < 0)
			return (int) r;
		r = syscall(SYS_open_tree, target, "", clone | AT_EMPTY_PATH);
	} else
		r = syscall(SYS_open_tree, AT_FDCWD, b->source, clone);
	if (r < 0)
		return errno == EPERM ? -ENOSYS : -errno;
	tree = (int) r;
	if (fstat(tree, &st) < 0)
		return -errno;
	if (!bind_is_planned(b, &st, dev, ino))
		return -ESTALE; /* not the object S opened: swapped meanwhile */
	r = set_attr(tree, b->attr, dir);
	if (r < 0)
		return (int) r;
	if (syscall(SYS_move_mount, tree, "", target, "",
		    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return -errno;
	return 0;
}

/* mount source (a host path, or "devpts" with fstype) onto vpath below rootfd, then the
 * attributes on what is there now, which must be dev/ino (or the device rdev) */
static int mount_below(int rootfd, const char *source, const char *fstype, const char *data,
		       const KViewBind *b, const char *vpath, bool dir)
{
	char target[64];
	struct stat st;
	int fd, r = 0;

	dev_t dev = b ? b->dev : 0;
	ino_t ino = b ? b->ino : 0;

	fd = open_below(rootfd, vpath, dir);
	if (fd < 0)
		return fd;
	fd_path(target, sizeof(target), fd);
	if (b && b->self) {
		/* onto itself: a directory made below a tmp mount (make_points), which must still
		 * be what it was, or what an ro rule names, which must be what S saw */
		r = self_target(fd, b, &dev, &ino);
		source = target;
	}
	if (r == 0 &&
	    (fstype ? mount(source, target, fstype, MS_NOSUID | MS_NOEXEC, data) < 0
		    : mount(source, target, NULL, MS_BIND | (dir ? MS_REC : 0), NULL) < 0))
		r = -errno;
	(void) close(fd);
	if (r < 0 || !b)
		return r;
	/* now the new mount's root */
	fd = open_below(rootfd, vpath, dir);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (!bind_is_planned(b, &st, dev, ino))
		r = -ESTALE; /* not the object S opened: swapped meanwhile */
	else
		r = set_attr(fd, b->attr, dir);
	(void) close(fd);
	return r;
}

/*
 * The mount points S planned below a tmp mount (mount_point), in its directory base: each
 * path made a component at a time, never following a symlink (the tmp directory's base may
 * be writable by other processes of the user: what they planted there fails the run rather
 * than redirect a mkdir). An existing directory is fine: S makes them first, after the fork
 * (tracer_kview_make_points()), and C then only checks them (make_points()).
 */
static int make_points_at(int base, const char *mkdirs)
{
	for (const char *p = mkdirs; *p; p += strlen(p) + 1) {
		char comp[NAME_MAX + 1];
		const char *c = p;
		int dir = base;

		while (*c) {
			size_t n = strcspn(c, "/");
			int next;

			if (n == 0 || n > NAME_MAX) {
				if (dir != base)
					(void) close(dir);
				return -EINVAL;
			}
			memcpy(comp, c, n);
			comp[n] = 0;
			c += n + (c[n] == '/');
			if (mkdirat(dir, comp, 0755) < 0 && errno != EEXIST) {
				next = -errno;
			} else {
				next = openat(dir, comp,
					      O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if (next < 0)
					next = -errno;
			}
			if (dir != base)
				(void) close(dir);
			if (next < 0)
				return next;
			dir = next;
		}
		if (dir != base)
			(void) close(dir);
	}
	return 0;
}

/* In C: the points below the tmp mount b, now bound, from the mount's root. */
static int make_points(int rootfd, const KViewBind *b)
{
	int base = open_below(rootfd, b->vpath, true), r;

	if (base < 0)
		return base;
	r = make_points_at(base, b->mkdirs);
	(void) close(base);
	return r;
}

/* In S: the tmp directory of b, a tmp mount with points to make, as this run made it (the
 * plan's dev/ino), or -1 (none, or swapped: C then fails on it). */
static int open_tmp_dir(const KViewBind *b)
{
	struct stat st;
	int fd;

	if (!b->mkdirs || !b->source)
		return -1;
	fd = open(b->source, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_dev != b->dev || st.st_ino != b->ino)) {
		(void) close(fd);
		fd = -1;
	}
	return fd;
}

void tracer_kview_make_points(const KView *k)
{
	for (size_t i = 0; k && i < k->n_binds; i++) {
		int base = open_tmp_dir(&k->binds[i]);

		if (base < 0)
			continue;
		(void) make_points_at(base, k->binds[i].mkdirs);
		(void) close(base);
	}
}

/* rel and then each of its ancestors below base, while each is an empty directory. */
static void unmake_point(int base, const char *rel)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s", rel) >= (int) sizeof(path))
		return;
	for (;;) {
		char *slash = strrchr(path, '/');
		int parent = slash ? (*slash = 0, open_below(base, path, true)) : base;
		int r;

		if (parent < 0)
			return;
		r = unlinkat(parent, slash ? slash + 1 : path, AT_REMOVEDIR);
		if (parent != base)
			(void) close(parent);
		if (r < 0 || !slash)
			return;
	}
}

void tracer_kview_unmake_points(const KView *k)
{
	for (size_t i = 0; k && i < k->n_binds; i++) {
		int base = open_tmp_dir(&k->binds[i]);

		if (base < 0)
			continue;
		/* in any order: an ancestor shared by two points is not empty until the second
		 * is gone, and goes with it */
		for (const char *p = k->binds[i].mkdirs; *p; p += strlen(p) + 1)
			unmake_point(base, p);
		(void) close(base);
	}
}

/*
 * The pid namespace's init (docs/filesystem.md, "A pid namespace for /proc"): pid 1 there,
 * a child of the keeper (CLONE_PARENT), made before C's filter and running only this. It
 * mounts the procfs of its namespace (a procfs shows the pid namespace of the process that
 * mounts it, and a user namespace may mount one only while a fully visible one is in its
 * mount namespace: before the pivot), tells C, and then reaps the orphans the kernel gives
 * it until the keeper is gone. The command is its sibling, not its child, so that the
 * keeper keeps seeing the command's stops and its wait status as without a namespace, and
 * the command keeps the signal semantics of an ordinary process (an init ignores every
 * signal it has no handler for, SIGINT and SIGTERM included). Its death, or the keeper's
 * SIGKILL, kills every process of the namespace (zap_pid_ns_processes).
 */
/* Our command line is S's (a copy of its memory): its paths and arguments, which anyone in
 * the namespace may read from /proc/1/cmdline. Overwritten in our copy of its memory, from
 * arg_start and arg_end of /proc/self/stat (fields 48 and 49; the host's procfs, before the
 * pivot). */
static void scrub_cmdline(void)
{
	static const char name[] = "sbxtrace-init";
	char buf[2048], *p;
	unsigned long start = 0, end = 0;
	ssize_t n;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	(void) close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	p = strrchr(buf, ')');
	/* field 3 follows ") "; arg_start is field 48 */
	for (int field = 2; p && field < 48; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%lu %lu", &start, &end) != 2 || end <= start)
		return;
	memset((void *) start, 0, end - start);
	memcpy((void *) start, name, MIN(sizeof(name), end - start) - 1);
}

static _noreturn_ void init_main(const KView *k, int rootfd, int report, int keeper_pidfd)
{
	static const struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct none[2] = {};
	sigset_t chld;
	int r = 0, sfd;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		_exit(125);
	(void) prctl(PR_SET_NAME, "sbxtrace-init");
	scrub_cmdline();
	for (size_t i = 0; i < k->n_procs && r == 0; i++) {
		char target[64], self[16] = "";
		struct statfs sfs;
		int fd = open_below(rootfd, k->procs[i], true);

		if (fd < 0) {
			r = fd;
			break;
		}
		fd_path(target, sizeof(target), fd);
		/* read-only: the command may run as uid 0, and /proc/sys and sysrq-trigger are
		 * owned by uid 0 (docs/filesystem.md) */
		if (mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
			  NULL) < 0)
			r = -errno;
		(void) close(fd);
		if (r < 0)
			break;
		/* what is there now: a procfs whose "self" is us, pid 1 */
		fd = open_below(rootfd, k->procs[i], true);
		if (fd < 0) {
			r = fd;
			break;
		}
		if (fstatfs(fd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC ||
		    readlinkat(fd, "self", self, sizeof(self) - 1) != 1 || self[0] != '1')
			r = -ESTALE;
		(void) close(fd);
	}
	/* the command cannot read our memory, descriptors or /proc/1/{exe,cwd,root}: not
	 * dumpable, and (below) no capabilities left to lend */
	if (r == 0 && (prctl(PR_SET_DUMPABLE, 0) < 0 || fchdir(rootfd) < 0))
		r = -errno;
	if (write(report, &r, sizeof(r)) != sizeof(r) || r < 0)
		_exit(125);
	/* only the keeper's pidfd stays: no socket to S (its EOF tells S the command
	 * exec'd), no capture pipe, no terminal */
	if (keeper_pidfd > 0)
		(void) syscall(SYS_close_range, 0U, (unsigned) keeper_pidfd - 1, 0U);
	(void) syscall(SYS_close_range, (unsigned) keeper_pidfd + 1, ~0U, 0U);
	if (syscall(SYS_capset, &h, none) < 0)
		_exit(125);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &chld, NULL) < 0)
		_exit(125);
	sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		_exit(125);
	/* every other signal keeps its default action, which an init ignores: nothing can
	 * be queued to us from inside (SIGKILL from inside is ignored too) */
	for (;;) {
		struct pollfd pf[2] = {{sfd, POLLIN, 0}, {keeper_pidfd, POLLIN, 0}};
		struct signalfd_siginfo si;
		int status;

		if (poll(pf, keeper_pidfd >= 0 ? 2 : 1, -1) < 0 && errno != EINTR)
			_exit(1);
		if (pf[1].revents)
			_exit(0); /* the keeper is gone: so is the namespace */
		while (read(sfd, &si, sizeof(si)) == sizeof(si))
			;
		while (waitpid(-1, &status, WNOHANG | __WALL) > 0)
			;
	}
}

pid_t tracer_kview_spawn(void)
{
	long pid =
		syscall(SYS_clone, (unsigned long) (CLONE_PARENT | SIGCHLD), NULL, NULL, NULL, 0UL);

	return pid < 0 ? -errno : (pid_t) pid;
}

/* In C, still in the host's mount tree: the init, then the proc mounts it makes (r < 0: it
 * failed, and dies). */
static int start_init(const KView *k, int rootfd, int keeper_pidfd)
{
	int p[2], r = 0;
	long pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = syscall(SYS_clone, (unsigned long) (CLONE_PARENT | SIGCHLD), NULL, NULL, NULL, 0UL);
	if (pid == 0) {
		(void) close(p[0]);
		init_main(k, rootfd, p[1], keeper_pidfd);
	}
	(void) close(p[1]);
	if (pid < 0)
		r = -errno;
	else if (read(p[0], &r, sizeof(r)) != sizeof(r))
		r = -ECHILD; /* it died: the keeper reaps it */
	(void) close(p[0]);
	return r;
}

int tracer_kview_enter(const KView *k, bool netns, const char **what, bool *entered,
		       bool *ret_netns)
{
	char src[PATH_MAX];
	pid_t parent = getppid();
	struct stat st;
	int rootfd, fd, r, also = CLONE_NEWNS;
	_cleanup_close_ int keeper_pidfd = -1;
	bool new_api = true; /* open_tree() and move_mount() (bind_detached()) */

	*entered = false;
	*ret_netns = false;
	/* a directory (or O_PATH fd) on stdin, stdout or stderr would reach the host's tree
	 * from inside the namespace: such a run stays emulated ("auto") or does not start */
	*what = "stdin/stdout/stderr is a directory";
	for (fd = 0; fd < 3; fd++) {
		int fl = fcntl(fd, F_GETFL);

		if (fl >= 0 && ((fl & O_PATH) || (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))))
			return -EISDIR;
	}
	if (k->n_procs) {
		/* a pid namespace for the proc mounts; its init learns of the keeper's end
		 * through a pidfd (its parent-death signal could come too early to see) */
		also |= CLONE_NEWPID;
		keeper_pidfd = (int) syscall(SYS_pidfd_open, parent, 0);
		/* the init's /proc/1/net: in the tree's network namespace from the start */
		if (netns || k->netns)
			also |= CLONE_NEWNET;
	}
	*what = "user namespace";
	r = tracer_userns_enter(also, entered);
	if (r < 0)
		return r;
	*ret_netns = also & CLONE_NEWNET;
	/* set again, as after any change of credentials (a no-op here) */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent) {
		*what = "PR_SET_PDEATHSIG";
		return -ESRCH;
	}
	*what = "mount namespace";
	/* nothing made here may propagate back to the host */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	*what = "the skeleton root";
	if (mount(k->root, k->root, NULL, MS_BIND, NULL) < 0)
		return -errno;
	rootfd = open(k->root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	if (fstat(rootfd, &st) < 0 || st.st_dev != k->root_dev || st.st_ino != k->root_ino)
		return -ESTALE;
	for (size_t i = 0; i < k->n_binds; i++) {
		const KViewBind *b = &k->binds[i];

		*what = b->vpath;
		r = new_api ? bind_detached(rootfd, b) : -ENOSYS;
		if (r == -ENOSYS) {
			new_api = false;
			r = mount_below(rootfd, b->source, NULL, NULL, b, b->vpath,
					!b->device && !b->file);
		}
		if (r == 0 && b->mkdirs)
			r = make_points(rootfd, b);
		if (r < 0)
			return r;
	}
	if (k->pts) {
		/* a private instance: only the ptys the tree makes; the host's are not in it */
		*what = "/dev/pts";
		r = mount_below(rootfd, "devpts", "devpts", "newinstance,ptmxmode=0666,mode=0620",
				NULL, "dev/pts", true);
		if (r < 0)
			return r;
		*what = "/dev/ptmx";
		fd = open_below(rootfd, "dev/pts/ptmx", false);
		if (fd < 0)
			return fd;
		fd_path(src, sizeof(src), fd);
		r = mount_below(rootfd, src, NULL, NULL, NULL, "dev/ptmx", false);
		(void) close(fd);
		if (r < 0)
			return r;
	}
	if (k->n_procs) {
		/* before the pivot: the host's procfs must still be in this mount namespace */
		*what = "the pid namespace's init (/proc)";
		r = start_init(k, rootfd, keeper_pidfd);
		if (r < 0)
			return r;
	}
	*what = "the skeleton root";
	r = set_attr(rootfd, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false);
	if (r < 0)
		return r;
	*what = "pivot_root";
	if (fchdir(rootfd) < 0)
		return -errno;
	(void) close(rootfd);
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		return -errno;
	/* the host's tree, now stacked under ours: gone for good */
	if (umount2(".", MNT_DETACH) < 0)
		return -errno;
	*what = "chdir";
	if (chdir(k->cwd) < 0)
		return -errno;
	return 0;
}
