/* SPDX-License-Identifier: MIT */
/*
 * The filesystem view in the supervisor (issue 4; docs/filesystem.md, "In the supervisor"):
 * builds the SbxView from the policy before launch, says what the filter needs of the policy
 * for the path-taking syscalls (ptrace for chdir and exec, getdents64 notified), and maps the
 * policy's virtual working directory to the host directory the command starts in.
 */
#include "tracer/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "emulation/fs.h"
#include "emulation/path/view.h"
#include "policy/policy.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

static bool host_in_tree(void *userdata, pid_t pid)
{
	Tracer *t = userdata;

	return t->keeper > 0 && tree_contains(t->keeper, pid, NULL) == 1;
}

/*
 * Pseudo-terminals (policy process.pty, docs/filesystem.md "/dev"). The supervisor may be
 * root and opens on the child's behalf, so /dev/pts/N must never reach a terminal of another
 * user or session: N must be a pty whose master the supervisor opened for the tree (recorded
 * here from TIOCGPTN of that very fd), and a master of N must still be held by a process of
 * the tree, whose peer is then opened with TIOCGPTPEER — never the host path, since pty
 * numbers are reused as soon as a master is closed.
 */
typedef struct TracerPtys {
	pthread_mutex_t lock;
	unsigned *n;
	size_t len, cap;
} TracerPtys;

#define PTYS_MAX 4096 /* beyond: the oldest numbers are forgotten (their pts absent) */

static void host_pty_created(void *userdata, pid_t pid, int master_fd)
{
	Tracer *t = userdata;
	TracerPtys *s = t->ptys;
	unsigned n;

	(void) pid;
	if (!s || ioctl(master_fd, TIOCGPTN, &n) < 0)
		return;
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->len; i++)
		if (s->n[i] == n)
			goto out;
	if (s->len == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		unsigned *v = cap <= PTYS_MAX ? realloc(s->n, cap * sizeof(*v)) : NULL;

		if (!v) {
			/* full: forget the oldest */
			memmove(s->n, s->n + 1, (s->len - 1) * sizeof(*s->n));
			s->len--;
		} else {
			s->n = v;
			s->cap = cap;
		}
	}
	if (s->len < s->cap)
		s->n[s->len++] = n;
out:
	pthread_mutex_unlock(&s->lock);
}

static bool ptys_has(TracerPtys *s, unsigned n, bool forget)
{
	bool found = false;

	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->len && !found; i++)
		if (s->n[i] == n) {
			found = true;
			if (forget)
				s->n[i] = s->n[--s->len];
		}
	pthread_mutex_unlock(&s->lock);
	return found;
}

typedef struct PtsSearch {
	Tracer *t;
	unsigned n;
	int flags;  /* < 0: only find the master */
	int result; /* the pts fd, 0 (found, flags < 0), or -ENOENT */
} PtsSearch;

/* The "tty-index:" of a pty master fd of pid (its fdinfo), or -1. */
static long master_index(pid_t pid, int fd)
{
	char path[64], buf[512], *p;
	_cleanup_close_ int f = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int) pid, fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -1;
	n = read(f, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strstr(buf, "tty-index:");
	return p ? strtol(p + 10, NULL, 10) : -1;
}

/*
 * COMPAT (pidfd_getfd refused): the master fd of pid is out of reach, so neither TIOCGPTN
 * nor TIOCGPTPEER can be used on it. Its fdinfo names its pty ("tty-index:"); when that is
 * s->n the pts is opened by number from the host's /dev/pts, and the master's fdinfo read
 * again: still naming s->n, the master was open across our open, and a pty number is not
 * handed out again while its master is open, so what we opened is that pty's peer. Returns
 * 1 when found (s->result set), 0 to go on.
 */
static int master_by_fdinfo(pid_t pid, int fd, PtsSearch *s)
{
	char name[16];
	int pts;

	if (master_index(pid, fd) != (long) s->n)
		return 0;
	if (s->flags < 0) {
		s->result = 0;
		return 1;
	}
	snprintf(name, sizeof(name), "%u", s->n);
	pts = openat(sbx_view_pts_fd(s->t->view), name,
		     s->flags | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW);
	if (pts < 0) {
		s->result = -errno;
		return 1;
	}
	if (master_index(pid, fd) != (long) s->n) {
		(void) close(pts);
		s->result = -ENOENT;
		return 1;
	}
	s->result = pts;
	return 1;
}

/* The fds of pid that are pty masters of number s->n (their /proc link names a ptmx). */
static int search_masters(pid_t pid, void *userdata)
{
	PtsSearch *s = userdata;
	char dir[64];
	DIR *d;
	struct dirent *e;

	(void) snprintf(dir, sizeof(dir), "/proc/%d/fd", (int) pid);
	d = opendir(dir);
	if (!d)
		return 0; /* gone meanwhile */
	while ((e = readdir(d))) {
		char link[PATH_MAX];
		unsigned n;
		ssize_t k;
		int cfd, fd, r;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		k = readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1);
		if (k <= 0)
			continue;
		link[k] = 0;
		if (!strstr(link, "ptmx"))
			continue;
		if (!pidfd_getfd_usable()) {
			r = master_by_fdinfo(pid, atoi(e->d_name), s);
			if (r)
				break;
			continue;
		}
		cfd = sbx_default_get_fd(s->t, pid, atoi(e->d_name));
		if (cfd < 0)
			continue;
		/* TIOCGPTN succeeds on pty masters only, and names the pty of this fd */
		if (ioctl(cfd, TIOCGPTN, &n) < 0 || n != s->n) {
			(void) close(cfd);
			continue;
		}
		if (s->flags < 0)
			s->result = 0;
		else {
			fd = ioctl(cfd, TIOCGPTPEER, s->flags | O_NOCTTY | O_CLOEXEC);
			s->result = fd < 0 ? -errno : fd;
		}
		(void) close(cfd);
		break;
	}
	closedir(d);
	return s->result == -ENOENT ? 0 : -ECANCELED; /* found: stop the walk */
}

static int host_open_pts(void *userdata, pid_t pid, unsigned n, int flags)
{
	Tracer *t = userdata;
	PtsSearch s = {.t = t, .n = n, .flags = flags, .result = -ENOENT};

	if (!t->ptys || t->keeper <= 0 || !ptys_has(t->ptys, n, false))
		return -ENOENT;
	/* the caller first: it usually holds the master it just opened */
	if (search_masters(pid, &s) == 0 && t->keeper > 0)
		(void) tree_walk(t->keeper, search_masters, &s);
	if (s.result == -ENOENT)
		/* no master in the tree any more: N may be handed to someone else next */
		(void) ptys_has(t->ptys, n, true);
	return s.result;
}

/*
 * An open a [[rule]] access = "ask"/"ask-write" holds (emulation/fs-open.c "Held opens"), on
 * a worker: the run's asker decides (tracer/ask.c), as for a held connect or exec: nobody to
 * ask denies at once, and nothing is asked after a ratchet drop. allow_session remembers the
 * virtual path (a write allowed covers reads of it too): rules bind names, and a file that is
 * written is often replaced (editors, build tools) — the next open of the path is not asked.
 */
#define MAX_OPEN_SESSION 256

static struct {
	pthread_mutex_t lock;
	struct {
		char *vpath;
		bool write;
	} allowed[MAX_OPEN_SESSION];
	size_t n;
} open_session = {.lock = PTHREAD_MUTEX_INITIALIZER};

static bool open_session_find(const char *vpath, bool write)
{
	bool found = false;

	pthread_mutex_lock(&open_session.lock);
	for (size_t i = 0; i < open_session.n && !found; i++)
		found = (open_session.allowed[i].write || !write) &&
			streq(open_session.allowed[i].vpath, vpath);
	pthread_mutex_unlock(&open_session.lock);
	return found;
}

static void open_session_add(const char *vpath, bool write)
{
	pthread_mutex_lock(&open_session.lock);
	if (open_session.n < MAX_OPEN_SESSION) {
		char *v = strdup(vpath);

		if (v) {
			open_session.allowed[open_session.n].vpath = v;
			open_session.allowed[open_session.n++].write = write;
		}
	}
	pthread_mutex_unlock(&open_session.lock);
}

static int host_ask_open(void *userdata, pid_t pid, pid_t tgid, const char *vpath, bool write,
			 const PolicyRule *rule)
{
	Tracer *t = userdata;
	char text[PATH_MAX + 80];
	NetAskRequest rq = {
		.pid = pid,
		.tgid = tgid,
		.op = write ? "write" : "open",
		.destination = vpath,
		.why = "held by an ask rule",
		.rule = text,
		.outside = "which a [[rule]] holds for a decision",
		.timeout_ms = rule ? rule->ask_timeout_ms : 30000,
	};
	NetAskAnswer ans;

	if (open_session_find(vpath, write))
		return 2;
	/* never after a ratchet drop (private data entered the run): denied unasked */
	if (net_runtime_mode(t->net) != t->policy->network.mode)
		return 0;
	snprintf(text, sizeof(text), "[[rule]] path = \"%s\", access = \"%s\"",
		 rule ? rule->glob : "?", rule ? rule_access_to_string(rule->access) : "ask");
	ans = tracer_ask(t, &rq);
	if (ans == NET_ASK_ALLOW_SESSION)
		open_session_add(vpath, write);
	return ans == NET_ASK_DENY ? 0 : ans == NET_ASK_ALLOW_SESSION ? 2 : 1;
}

void tracer_fs_host_init(EmuHost *h)
{
	h->get_fd = tracer_get_fd;
	h->get_umask = sbx_default_get_umask;
	h->in_tree = host_in_tree;
	h->get_path = sbx_default_get_path;
	h->pty_created = host_pty_created;
	h->open_pts = host_open_pts;
	h->ask_open = host_ask_open;
}

int tracer_fs_setup(Tracer *t, const Policy *p)
{
	char why[512] = "";
	int r;

	if (p->process.pty) {
		t->ptys = calloc(1, sizeof(*t->ptys));
		if (!t->ptys)
			return -ENOMEM;
		pthread_mutex_init(&t->ptys->lock, NULL);
	}

	/* the run's host, which every request points to: the walk asks it which pids and ptys
	 * the tree has (tracer_host_init() filled it before); the skeleton's files come after
	 * the fork (tracer_fs_write_files(), tracer/run.c) */
	r = sbx_view_new(p, &t->host, SBX_VIEW_FILES_LATER, &t->view, why, sizeof(why));
	if (r < 0)
		return log_error_errno(r, "cannot build the file-system view: %s",
				       why[0] ? why : strerror(-r));
	return 0;
}

int tracer_fs_write_files(Tracer *t)
{
	char why[512] = "";
	int r = sbx_view_write_files(t->view, why, sizeof(why));

	if (r < 0)
		return log_error_errno(r, "cannot build the file-system view: %s",
				       why[0] ? why : strerror(-r));
	return 0;
}

void tracer_fs_done(Tracer *t)
{
	t->view = sbx_view_free(t->view);
	pthread_mutex_lock(&open_session.lock);
	for (size_t i = 0; i < open_session.n; i++)
		free(open_session.allowed[i].vpath);
	open_session.n = 0;
	pthread_mutex_unlock(&open_session.lock);
	if (t->ptys) {
		pthread_mutex_destroy(&t->ptys->lock);
		free(t->ptys->n);
		free(t->ptys);
		t->ptys = NULL;
	}
}

/* Whether getdents64 must go through the supervisor: hide rules, or a procfs mount (other
 * pids are removed from its listing). Decided from the policy, before the view exists. */
bool tracer_fs_filters_listings(const Policy *p)
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

/* ptrace = "auto": on when some mount's virtual path differs from its host path (chdir
 * there needs the argument rewritten), for backtraces, with a cpu_time, disk or tasks
 * budget, and with exec.unlisted = "ask". */
bool tracer_fs_needs_ptrace(const Policy *p)
{
	if (p->ptrace == PTRACE_MODE_ALWAYS)
		return true;
	if (p->ptrace == PTRACE_MODE_NEVER)
		return false;
	if (p->audit.backtrace != AUDIT_SELECT_NONE)
		return true; /* complete registers come from a ptrace stop (tracer/backtrace.c) */
	if (p->limits.disk != LIMIT_UNSET && p->limits.disk != 0)
		return true; /* growth past the disk budget fails with EDQUOT (tracer/ptrace.c) */
	if (p->limits.tasks != LIMIT_UNSET && p->limits.tasks != 0)
		return true; /* fork decided at a stop: no EINTR (tracer/ptrace.c) */
	if (p->exec_ask_unlisted)
		return true; /* a held exec is checked after it ran (tracer/ptrace.c) */
	if (p->limits.cpu_time_ms != LIMIT_UNSET && p->limits.cpu_time_ms != 0)
		return true; /* every end of a process is seen, also those reaped by the kernel
			      * (tracer/budget-cpu.c) */
	for (size_t i = 0; i < p->n_mounts; i++)
		if (!p->mounts[i].source || !streq(p->mounts[i].source, p->mounts[i].path))
			return true;
	return false;
}

const char *tracer_fs_virtual_cwd(const Policy *p)
{
	if (p->process.cwd)
		return p->process.cwd;
	/* the first rw mount, else the root (docs/policy.md) */
	for (size_t i = 0; i < p->n_mounts; i++)
		if (p->mounts[i].mode == MOUNT_RW)
			return p->mounts[i].path;
	return "/";
}

char *tracer_fs_host_cwd(const Tracer *t, const Policy *p)
{
	const char *v = tracer_fs_virtual_cwd(p);
	const SbxMount *best = NULL;

	/* no cwd set and the first rw mount at "/" (the host seen through the view, as in test
	 * policies): keep the caller's working directory, which lies inside it */
	for (size_t i = 0; !p->process.cwd && streq(v, "/") && i < p->n_mounts; i++)
		if (p->mounts[i].mode == MOUNT_RW)
			return strdup(".");
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
