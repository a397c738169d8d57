/* SPDX-License-Identifier: MIT */
/*
 * The tree's sockets, kept by the supervisor where pidfd_getfd(2) is refused (a container's
 * default seccomp profile; issue 19, docs/network.md "In a container").
 *
 * A socket cannot be reopened through /proc/PID/fd/N (ENXIO), and without pidfd_getfd the
 * supervisor has no other way to reach a socket of the child. So it creates them itself:
 * socket(2), socketpair(2) and accept(2)/accept4(2) are emulated (net/handlers.c), the new
 * socket is installed in the caller with SECCOMP_IOCTL_NOTIF_ADDFD, and the supervisor keeps
 * a reference of its own in this table, keyed by the socket's inode number — what
 * /proc/PID/fd/N reads as ("socket:[INO]"). A socket has exactly one open file description
 * (it cannot be reopened), so the reference shares the child's: a connect, bind or send on it
 * is the child's, with the child's O_NONBLOCK.
 *
 * Rules:
 *  - Lookup (net_socks_get): the link /proc/TID/fd/N of the calling thread (its own fd
 *    table) is read once, then the table gives a duplicate of the supervisor's reference
 *    (never the reference itself: a sweep may close that meanwhile). TOCTOU: another thread
 *    may close or replace fd N after the read; the supervisor then acts on a socket that the
 *    tree created through it, with the family and type of that socket (from the table) and
 *    the policy checked on the supervisor's copy of the address: a race the program runs
 *    against itself, never a way around the policy. A thread killed meanwhile whose number
 *    is reused names a socket outside the table: refused (EPERM), and ID_VALID is checked
 *    after the read all the same. A socket not in the table (inherited as fd 0-2, received
 *    from outside the tree) is refused with EPERM: fail closed.
 *  - References are dropped by a sweep of the tree's fd tables (/proc/PID/fd, then every
 *    thread's table before anything is dropped): an entry no table holds is closed. Sweeps
 *    run 2 ms after a close(2) of a socket of the table (and once more 20 ms later, in case
 *    the close had not run yet), when the table doubles, every 200 ms while it holds
 *    sockets (exits and exec's close-on-exec close no socket through close(2)), before a
 *    bind(2) that failed with EADDRINUSE is tried again, and the rest go when the run ends.
 *    Until then the peer of a closed connection sees no FIN: the delay is a sweep's.
 *  - An entry is judged only by a sweep that started after it was installed (the epoch
 *    below): a socket being installed is in no fd table yet.
 *  - A socket passed in SCM_RIGHTS (every sendmsg is the supervisor's) is in no fd table
 *    while in flight: it is kept at least NET_SOCK_PASSED_NS after the send.
 *  - A sweep that cannot read every table (a non-dumpable process) drops nothing.
 *  - What a sweep drops it disarms first, all of them before it closes any (disarm()): the
 *    tree closed those sockets, and their SIGIO owner must get nothing from their release.
 * Every mistake here is fail-closed: a reference dropped too early makes the socket
 * unknown, and the calls that need the supervisor then fail with EPERM (and a ratchet kills
 * the tree); one kept too long delays the close.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/macros.h"
#include "common/missing-seccomp.h"
#include "common/util.h"
#include "net/internal.h"

#define NET_SOCK_PASSED_NS (10ULL * 1000 * 1000 * 1000)
#define SWEEP_SOON_NS	   (2ULL * 1000 * 1000)
#define SWEEP_AGAIN_NS	   (20ULL * 1000 * 1000)
#define SWEEP_PERIOD_NS	   (200ULL * 1000 * 1000)

/* ---- the set of socket inodes some fd table holds ---- */

typedef struct Held {
	uint64_t *v;
	size_t n, cap;
	bool incomplete; /* a table could not be read */
	bool all_threads;
} Held;

static void held_add(Held *h, uint64_t ino)
{
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 64;
		uint64_t *n = realloc(h->v, cap * sizeof(*n));

		if (!n) {
			h->incomplete = true;
			return;
		}
		h->v = n;
		h->cap = cap;
	}
	h->v[h->n++] = ino;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

static bool held_has(const Held *h, uint64_t ino)
{
	return bsearch(&ino, h->v, h->n, sizeof(*h->v), cmp_u64) != NULL;
}

/* "socket:[INO]" -> INO; 0 when the link names something else */
static uint64_t link_socket_ino(const char *link)
{
	unsigned long long ino = 0;

	if (strncmp(link, "socket:[", 8) != 0 || sscanf(link + 8, "%llu]", &ino) != 1)
		return 0;
	return (uint64_t) ino;
}

/*
 * The key of an inotify instance the supervisor made: every instance is the same anonymous
 * inode, so each gets a watch of its own on a private memfd (a "marker", watch descriptor
 * 1, on an inode nobody else reaches, so it never reports anything), and fdinfo's watch
 * lines name the marker's inode. 0 when fdinfo names no marker of ours' shape.
 */
static uint64_t fdinfo_inotify_key(const char *fdinfo_path)
{
	char buf[4096], *p = buf;
	int fd = open(fdinfo_path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	(void) close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	while ((p = strstr(p, "inotify wd:"))) {
		unsigned wd = 0;
		unsigned long long ino = 0;

		if (sscanf(p, "inotify wd:%x ino:%llx", &wd, &ino) == 2 && wd == 1)
			return (uint64_t) ino | NET_KEY_INOTIFY;
		p += 11;
	}
	return 0;
}

/* The table key of what link (read from dir/name, a /proc/.../fd entry) names: a socket's
 * inode, an inotify instance's marker, or 0. */
static uint64_t link_key(const char *link, const char *dir, const char *name)
{
	char path[160];
	size_t l;

	if (strncmp(link, "socket:[", 8) == 0)
		return link_socket_ino(link);
	if (strcmp(link, "anon_inode:inotify") != 0)
		return 0;
	/* .../fd -> .../fdinfo/NAME */
	l = strlen(dir);
	if (l < 3 || strcmp(dir + l - 3, "/fd") != 0)
		return 0;
	snprintf(path, sizeof(path), "%sinfo/%s", dir, name);
	return fdinfo_inotify_key(path);
}

/* One fd table (a /proc/.../fd directory): every socket inode, through visit(). */
typedef void (*FdVisit)(void *userdata, const char *dir, const char *name, uint64_t ino);

static int read_table(const char *path, FdVisit visit, void *userdata)
{
	DIR *d = opendir(path);
	struct dirent *de;

	if (!d)
		return errno == ENOENT || errno == ESRCH ? 0 : -errno;
	while ((de = readdir(d))) {
		char link[64];
		ssize_t n;
		uint64_t ino;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n < 0 && errno != ENOENT) {
			/* EACCES: a non-dumpable process, whose fd directory root may list
			 * (it owns it) but whose links it may not read: out of reach */
			int e = -errno;

			(void) closedir(d);
			return e;
		}
		if (n <= 0)
			continue; /* closed since readdir() */
		link[n] = 0;
		ino = link_key(link, path, de->d_name);
		if (ino)
			visit(userdata, path, de->d_name, ino);
	}
	(void) closedir(d);
	return 0;
}

typedef struct TreeTables {
	FdVisit visit;
	void *userdata;
	bool all_threads;
	int error;
} TreeTables;

/* The fd tables of process pid: its own (the thread-group leader's), and with all_threads
 * every thread's (a thread cloned without CLONE_FILES has a table of its own). */
static int tables_visit(pid_t pid, void *userdata)
{
	TreeTables *tt = userdata;
	char path[96];
	DIR *tasks;
	struct dirent *de;
	int r;

	if (!tt->all_threads) {
		snprintf(path, sizeof(path), "/proc/%d/fd", (int) pid);
		r = read_table(path, tt->visit, tt->userdata);
		if (r < 0 && !tt->error)
			tt->error = r;
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
	tasks = opendir(path);
	if (!tasks)
		return 0; /* gone */
	while ((de = readdir(tasks))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/fd", (int) pid, de->d_name);
		r = read_table(path, tt->visit, tt->userdata);
		if (r < 0 && !tt->error)
			tt->error = r;
	}
	(void) closedir(tasks);
	return 0;
}

static int walk_tables(NetRuntime *rt, bool all_threads, FdVisit visit, void *userdata)
{
	TreeTables tt = {.visit = visit, .userdata = userdata, .all_threads = all_threads};
	int r;

	if (!rt->walk)
		return -ENOSYS;
	r = rt->walk(rt->root, tables_visit, &tt);
	return r < 0 ? r : tt.error;
}

static void held_visit(void *userdata, const char *dir, const char *name, uint64_t ino)
{
	(void) dir;
	(void) name;
	held_add(userdata, ino);
}

/* ---- the table ---- */

static NetSock *find(NetRuntime *rt, uint64_t ino)
{
	for (size_t i = 0; i < rt->n_socks; i++)
		if (rt->socks[i].ino == ino)
			return &rt->socks[i];
	return NULL;
}

static void remove_at(NetRuntime *rt, size_t i)
{
	(void) close(rt->socks[i].fd);
	if (rt->socks[i].fd2 >= 0)
		(void) close(rt->socks[i].fd2);
	rt->socks[i] = rt->socks[--rt->n_socks];
}

/*
 * Before a sweep closes the supervisor's reference to an entry no table holds (the last
 * reference): no SIGIO owner and no O_ASYNC. In the kernel the tree's last close of the
 * socket removed its O_ASYNC registration (__fput), so its owner got nothing more from it;
 * here that close left the registration on the supervisor's reference, and closing the
 * references later signals it: unix_release_sock() wakes the peer with POLL_HUP
 * (sk_wake_async), so closing s[1] while s[0] still has its owner sent that owner SIGIO (or
 * its F_SETSIG signal) a sweep after the program had closed both, in the middle of whatever
 * it did then (a signal it counted twice, a call interrupted with EINTR). The owner is the
 * tree's (checked when set); the file is nobody else's any more.
 */
static void disarm(int fd)
{
	struct f_owner_ex ex = {};
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0 && (fl & O_ASYNC))
		(void) fcntl(fd, F_SETFL, fl & ~O_ASYNC);
	/* the owner too: a TCP socket's urgent data sends SIGURG without O_ASYNC */
	if (fcntl(fd, F_GETOWN_EX, &ex) == 0 && ex.pid != 0) {
		ex = (struct f_owner_ex){.type = F_OWNER_PID, .pid = 0};
		(void) fcntl(fd, F_SETOWN_EX, &ex);
	}
}

static void request_locked(NetRuntime *rt, uint64_t delay_ns, bool again)
{
	uint64_t due = now_monotonic_ns() + delay_ns;

	if (!rt->sweep_due || due < rt->sweep_due)
		rt->sweep_due = due;
	if (again)
		rt->sweep_again = true;
	(void) pthread_cond_signal(&rt->sock_cond);
}

void net_socks_request_sweep(NetRuntime *rt, bool again)
{
	pthread_mutex_lock(&rt->sock_lock);
	request_locked(rt, SWEEP_SOON_NS, again);
	pthread_mutex_unlock(&rt->sock_lock);
}

/* Drops the entries no table holds. Returns how many. */
int net_socks_sweep(NetRuntime *rt)
{
	Held h = {}, h2 = {};
	uint64_t epoch, now;
	bool candidates = false;
	int r, dropped = 0;

	epoch = atomic_fetch_add(&rt->sock_epoch, 1) + 1;
	pthread_mutex_lock(&rt->sock_lock);
	r = rt->n_socks;
	pthread_mutex_unlock(&rt->sock_lock);
	if (r == 0)
		return 0;
	/* the cheap pass: each process's own table */
	r = walk_tables(rt, false, held_visit, &h);
	if (r < 0 || h.incomplete)
		goto done;
	qsort(h.v, h.n, sizeof(*h.v), cmp_u64);
	now = now_monotonic_ns();
	pthread_mutex_lock(&rt->sock_lock);
	for (size_t i = 0; i < rt->n_socks && !candidates; i++) {
		NetSock *s = &rt->socks[i];

		candidates = s->installed && s->installed < epoch && s->keep_until < now &&
			     !held_has(&h, s->ino);
	}
	pthread_mutex_unlock(&rt->sock_lock);
	if (!candidates)
		goto done;
	/* before anything goes: every thread's table */
	r = walk_tables(rt, true, held_visit, &h2);
	if (r < 0 || h2.incomplete)
		goto done;
	qsort(h2.v, h2.n, sizeof(*h2.v), cmp_u64);
	now = now_monotonic_ns();
	pthread_mutex_lock(&rt->sock_lock);
	/* every entry that goes is disarmed before any is closed: closing one wakes its peer,
	 * which may go in this sweep too */
	for (size_t i = 0; i < rt->n_socks; i++) {
		NetSock *s = &rt->socks[i];

		s->dropping = s->installed && s->installed < epoch && s->keep_until < now &&
			      !held_has(&h, s->ino) && !held_has(&h2, s->ino);
		if (s->dropping)
			disarm(s->fd);
	}
	for (size_t i = 0; i < rt->n_socks;) {
		if (rt->socks[i].dropping) {
			remove_at(rt, i);
			dropped++;
		} else
			i++;
	}
	pthread_mutex_unlock(&rt->sock_lock);
done:
	free(h.v);
	free(h2.v);
	return dropped;
}

static void *sweeper(void *arg)
{
	NetRuntime *rt = arg;

	pthread_mutex_lock(&rt->sock_lock);
	while (!rt->sweeper_stop) {
		uint64_t now = now_monotonic_ns(), due = rt->sweep_due;

		if (!due && rt->n_socks > 0)
			due = now + SWEEP_PERIOD_NS;
		if (!due) {
			(void) pthread_cond_wait(&rt->sock_cond, &rt->sock_lock);
			continue;
		}
		if (now < due) {
			struct timespec ts;
			uint64_t wait = due - now;

			(void) clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_sec += (time_t) (wait / 1000000000ULL);
			ts.tv_nsec += (long) (wait % 1000000000ULL);
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			if (!rt->sweep_due)
				rt->sweep_due = due; /* the periodic one */
			(void) pthread_cond_timedwait(&rt->sock_cond, &rt->sock_lock, &ts);
			continue;
		}
		rt->sweep_due = 0;
		if (rt->sweep_again) {
			rt->sweep_again = false;
			rt->sweep_due = now + SWEEP_AGAIN_NS;
		}
		pthread_mutex_unlock(&rt->sock_lock);
		(void) net_socks_sweep(rt);
		pthread_mutex_lock(&rt->sock_lock);
	}
	pthread_mutex_unlock(&rt->sock_lock);
	return NULL;
}

void net_socks_init(NetRuntime *rt, bool own)
{
	rt->own_sockets = own;
	pthread_mutex_init(&rt->sock_lock, NULL);
	pthread_condattr_t ca;

	(void) pthread_condattr_init(&ca);
	(void) pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&rt->sock_cond, &ca);
	(void) pthread_condattr_destroy(&ca);
	atomic_init(&rt->sock_epoch, 1);
}

void net_socks_done(NetRuntime *rt)
{
	pthread_mutex_lock(&rt->sock_lock);
	rt->sweeper_stop = true;
	(void) pthread_cond_signal(&rt->sock_cond);
	pthread_mutex_unlock(&rt->sock_lock);
	if (rt->sweeper_running)
		(void) pthread_join(rt->sweeper_thread, NULL);
	while (rt->n_socks > 0)
		remove_at(rt, rt->n_socks - 1);
	free(rt->socks);
	rt->socks = NULL;
	rt->n_socks = 0;
	pthread_cond_destroy(&rt->sock_cond);
	pthread_mutex_destroy(&rt->sock_lock);
}

int net_socks_add(NetRuntime *rt, int fd, int domain, int type, uint64_t *ret_ino)
{
	struct stat st;
	int copy, r = 0;

	if (domain == NET_KIND_INOTIFY) {
		st.st_ino = (ino_t) *ret_ino; /* the marker's key */
	} else if (fstat(fd, &st) < 0)
		return -errno;
	copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (copy < 0)
		return -errno;
	pthread_mutex_lock(&rt->sock_lock);
	if (!rt->sweeper_running && !rt->sweeper_stop) {
		if (pthread_create(&rt->sweeper_thread, NULL, sweeper, rt) == 0)
			rt->sweeper_running = true;
	}
	if (rt->n_socks == rt->cap_socks) {
		size_t cap = rt->cap_socks ? rt->cap_socks * 2 : 32;
		NetSock *n = realloc(rt->socks, cap * sizeof(*n));

		if (!n)
			r = -ENOMEM;
		else {
			rt->socks = n;
			rt->cap_socks = cap;
		}
	}
	if (r == 0) {
		NetSock *old = find(rt, (uint64_t) st.st_ino);

		if (old) /* only after an inode number wrapped: the newest wins */
			remove_at(rt, (size_t) (old - rt->socks));
		rt->socks[rt->n_socks++] = (NetSock){
			.ino = (uint64_t) st.st_ino,
			.fd = copy,
			.fd2 = domain == NET_KIND_INOTIFY ? type : -1,
			.domain = domain,
			.type = domain == NET_KIND_INOTIFY ? 0 : type,
		};
		if (rt->n_socks >= rt->sweep_at) {
			rt->sweep_at = MAX(rt->n_socks * 2, (size_t) 64);
			request_locked(rt, 0, false);
		}
	}
	pthread_mutex_unlock(&rt->sock_lock);
	if (r < 0) {
		(void) close(copy);
		return r;
	}
	*ret_ino = (uint64_t) st.st_ino;
	return 0;
}

void net_socks_installed(NetRuntime *rt, uint64_t ino, bool ok)
{
	pthread_mutex_lock(&rt->sock_lock);
	NetSock *s = find(rt, ino);

	if (s && ok)
		s->installed = atomic_load(&rt->sock_epoch);
	else if (s)
		remove_at(rt, (size_t) (s - rt->socks));
	pthread_mutex_unlock(&rt->sock_lock);
}

int net_socks_install(const EmuRequest *req, int fd, bool cloexec)
{
	struct seccomp_notif_addfd addfd = {
		.id = req->id,
		.srcfd = (uint32_t) fd,
		.newfd_flags = cloexec ? O_CLOEXEC : 0,
	};
	int r;

	if (req->listener <= 0)
		return -ENOSYS;
	r = ioctl(req->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
	return r < 0 ? -errno : r;
}

uint64_t net_socks_child_ino(pid_t tid, int childfd, int *ret_error)
{
	char dir[64], name[16], path[96], link[64];
	ssize_t n;
	uint64_t key;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int) tid);
	snprintf(name, sizeof(name), "%d", childfd);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0) {
		*ret_error = errno == ENOENT ? EBADF : errno == EACCES ? EPERM : errno;
		return 0;
	}
	link[n] = 0;
	key = link_key(link, dir, name);
	if (!key)
		*ret_error = strcmp(link, "anon_inode:inotify") == 0 ? EPERM : ENOTSOCK;
	return key;
}

int net_socks_get(NetRuntime *rt, const EmuRequest *req, int childfd, bool passed, int *ret_fd,
		  int *ret_domain, int *ret_type)
{
	int error = 0, fd = -1;
	uint64_t ino;
	NetSock *s;

	if (childfd < 0)
		return EBADF;
	ino = net_socks_child_ino(req->pid, childfd, &error);
	if (!ino)
		return error;
	if (req->listener > 0) {
		uint64_t id = req->id;

		/* the tid could have been reused by then only if the caller was killed */
		if (ioctl(req->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0)
			return ESRCH;
	}
	pthread_mutex_lock(&rt->sock_lock);
	s = find(rt, ino);
	if (s) {
		fd = fcntl(s->fd, F_DUPFD_CLOEXEC, 3);
		if (fd >= 0) {
			*ret_domain = s->domain;
			*ret_type = s->type;
			if (passed)
				s->keep_until = now_monotonic_ns() + NET_SOCK_PASSED_NS;
		} else
			error = -errno;
	}
	pthread_mutex_unlock(&rt->sock_lock);
	if (!s)
		return EPERM; /* not created through the supervisor: out of reach */
	if (fd < 0)
		return error;
	*ret_fd = fd;
	return 0;
}

bool net_socks_any(NetRuntime *rt)
{
	bool any;

	pthread_mutex_lock(&rt->sock_lock);
	any = rt->n_socks > 0;
	pthread_mutex_unlock(&rt->sock_lock);
	return any;
}

bool net_socks_has(NetRuntime *rt, uint64_t ino)
{
	bool has;

	pthread_mutex_lock(&rt->sock_lock);
	has = find(rt, ino) != NULL;
	pthread_mutex_unlock(&rt->sock_lock);
	return has;
}

/* ---- the ratchet ---- */

typedef struct Outside {
	NetRuntime *rt;
	bool inet;
} Outside;

static void outside_visit(void *userdata, const char *dir, const char *name, uint64_t ino)
{
	Outside *o = userdata;
	char path[128], proto[32];
	ssize_t n;

	if (o->inet || (ino & NET_KEY_INOTIFY) || net_socks_has(o->rt, ino))
		return;
	/* a socket the supervisor did not create: its protocol from sockfs's xattr, read
	 * through the link (no open needed); anything but a unix socket may be an inet one */
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	n = getxattr(path, "system.sockprotoname", proto, sizeof(proto) - 1);
	if (n < 0 && errno == ENOENT)
		return; /* closed meanwhile */
	if (n < 0) {
		o->inet = true;
		return;
	}
	proto[n] = 0;
	if (strcmp(proto, "UNIX") != 0 && strcmp(proto, "UNIX-STREAM") != 0)
		o->inet = true;
}

int net_socks_shutdown_inet(NetRuntime *rt, unsigned *ret_count)
{
	Outside o = {.rt = rt};
	unsigned count = 0;
	int r;

	pthread_mutex_lock(&rt->sock_lock);
	for (size_t i = 0; i < rt->n_socks; i++) {
		NetSock *s = &rt->socks[i];

		if (s->domain != AF_INET && s->domain != AF_INET6)
			continue;
		/* listening and unconnected sockets are marked too (net/shutdown.c) */
		if (shutdown(s->fd, SHUT_RDWR) == 0 || errno == ENOTCONN)
			count++;
	}
	pthread_mutex_unlock(&rt->sock_lock);
	*ret_count = count;
	/* completeness: no fd table may hold an inet socket outside the table */
	r = walk_tables(rt, true, outside_visit, &o);
	if (r < 0)
		return r;
	return o.inet ? -EPERM : 0;
}

/* ---- inotify instances ---- */

int net_inotify_new(NetRuntime *rt, int flags, int *ret_fd, uint64_t *ret_key)
{
	_cleanup_close_ int ifd = -1, marker = -1;
	char path[64];
	struct stat st;
	int wd, r;

	ifd = inotify_init1((flags & IN_NONBLOCK) | IN_CLOEXEC);
	if (ifd < 0)
		return -errno;
	marker = memfd_create("sbxtrace-inotify-marker", MFD_CLOEXEC);
	if (marker < 0 || fstat(marker, &st) < 0)
		return -errno;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", marker);
	wd = inotify_add_watch(ifd, path, IN_ATTRIB);
	if (wd != 1)
		return wd < 0 ? -errno : -EIO;
	*ret_key = (uint64_t) st.st_ino | NET_KEY_INOTIFY;
	r = net_socks_add(rt, ifd, NET_KIND_INOTIFY, marker, ret_key);
	if (r < 0)
		return r;
	marker = -1; /* the table's now (net_socks_add keeps it as fd2) */
	*ret_fd = TAKE_FD(ifd);
	return 0;
}

int net_child_object_dup(NetRuntime *rt, pid_t tid, int childfd)
{
	int error = 0, fd = -ENOENT;
	uint64_t key;
	NetSock *e;

	if (!rt || !rt->own_sockets)
		return -ENOENT;
	key = net_socks_child_ino(tid, childfd, &error);
	if (!key)
		return -ENOENT;
	pthread_mutex_lock(&rt->sock_lock);
	e = find(rt, key);
	if (e) {
		fd = fcntl(e->fd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			fd = -errno;
	}
	pthread_mutex_unlock(&rt->sock_lock);
	return fd;
}
