/* SPDX-License-Identifier: MIT */
/*
 * The disk budget (docs/budgets.md): allocated bytes under the rw mount sources and the
 * private directories of tmp mounts, minus their usage at the start. The walks are the
 * truth; between walks, inotify change reports keep an estimate (below), so a fast writer
 * is seen within a few writes; once the budget is used up, creation fails with EDQUOT
 * (handlers ask budget_disk_full_now()) and RLIMIT_FSIZE of every process drops to 0.
 *
 * Its own file because it is the one budget with state of its own between samples (the
 * index, the watches, the quiet time) and the only one other threads touch (disk_lock);
 * budget.c calls budget_disk_init/done/sample() at its init, end and every sample.
 */
#include "tracer/budget.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/macros.h"
#include "common/util.h"
#include "emulation/path/view.h"
#include "policy/policy.h"
#include "tracer/budget-internal.h"
#include "tracer/internal.h"

/* the shortest interval between two walks, whatever they cost */
#define TICK_DISK_MIN_MS 200
#define DISK_WALK_MAX	 1000000 /* inodes counted per walk; beyond, the walk stops */
/* A file grows at most this fast per CPU (page-cache writes: ~1.5 GiB/s measured here for
 * 64 KiB writes, with room for faster machines); bounds how long changes may go unread */
#define DISK_BYTES_PER_S_PER_CPU (UINT64_C(16) << 30)
#define DISK_QUIET_MAX_MS	 50
#define DISK_QUIET_MIN_MS	 5    /* shorter: not worth two inotify_add_watch calls */
#define DISK_RESCAN_MAX		 1024 /* entries counted again after a quiet time */

/* ---- disk usage of the rw mount sources ---- */

/*
 * Between two walks, inotify says which files change: every directory a walk visits is
 * watched, and each change is stat'ed at once against an index of the allocated bytes per
 * inode as of the last walk. That estimate can only be trusted while nothing was removed or
 * moved since the walk (a deletion names no inode; a rename can replace a file); otherwise a
 * crossing it shows asks for a walk now. The walk is the truth; the estimate only makes a
 * fast writer seen within a few writes instead of a walk interval (docs/budgets.md).
 */
#define DISK_WATCH_MAX 8192	 /* directories watched per run; beyond, walks only */
#define DISK_INDEX_MAX (1 << 18) /* inodes indexed; beyond, changes to others are missed */
#define DISK_WATCH_MASK                                                                            \
	(IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_EXCL_UNLINK |        \
	 IN_ONLYDIR)

typedef struct DiskInode {
	dev_t dev;
	ino_t ino; /* 0: free slot */
	uint64_t bytes;
} DiskInode;

struct DiskIndex {
	DiskInode *v;
	size_t cap, n; /* cap: a power of two, at most half full */
	bool full;     /* DISK_INDEX_MAX reached */
};

static DiskInode *index_slot(DiskIndex *x, dev_t dev, ino_t ino, bool add)
{
	size_t h;

	if (ino == 0)
		return NULL;
	if (add && !x->full && (x->n + 1) * 2 > x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 1024;
		DiskInode *v;

		if (x->n + 1 > DISK_INDEX_MAX || !(v = calloc(cap, sizeof(*v)))) {
			x->full = true;
		} else {
			for (size_t i = 0; i < x->cap; i++) {
				size_t j;

				if (!x->v[i].ino)
					continue;
				j = (size_t) ((x->v[i].ino * 0x9E3779B97F4A7C15ULL) ^ x->v[i].dev);
				while (v[j & (cap - 1)].ino)
					j++;
				v[j & (cap - 1)] = x->v[i];
			}
			free(x->v);
			x->v = v;
			x->cap = cap;
		}
	}
	if (!x->cap)
		return NULL;
	for (h = (size_t) ((ino * 0x9E3779B97F4A7C15ULL) ^ dev);; h++) {
		DiskInode *e = &x->v[h & (x->cap - 1)];

		if (e->ino == ino && e->dev == dev)
			return e;
		if (!e->ino) {
			if (!add || x->full)
				return NULL;
			*e = (DiskInode){dev, ino, 0};
			x->n++;
			return e;
		}
	}
}

static void index_free(DiskIndex *x)
{
	if (x) {
		free(x->v);
		free(x);
	}
}

/* Watches dirfd's directory (path: its host path, for the events) */
static void disk_watch(Budget *b, int dirfd, const char *path)
{
	char proc[64];
	int wd;

	if (b->disk_ifd < 0 || b->disk_watches >= DISK_WATCH_MAX)
		return;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dirfd);
	wd = inotify_add_watch(b->disk_ifd, proc, DISK_WATCH_MASK);
	if (wd < 0) {
		if (errno == ENOSPC)
			b->disk_watches = DISK_WATCH_MAX; /* the user's max_user_watches */
		return;
	}
	if ((size_t) wd >= b->disk_wd_cap) {
		size_t cap = MAX((size_t) wd + 1, b->disk_wd_cap * 2);
		char **v = realloc(b->disk_wd_path, cap * sizeof(*v));

		if (!v) {
			(void) inotify_rm_watch(b->disk_ifd, wd);
			return;
		}
		uint8_t *big = realloc(b->disk_wd_big, cap);

		if (big)
			b->disk_wd_big = big;
		memset(v + b->disk_wd_cap, 0, (cap - b->disk_wd_cap) * sizeof(*v));
		b->disk_wd_path = v;
		if (!big) {
			/* keep both arrays of one size: the new watch goes */
			(void) inotify_rm_watch(b->disk_ifd, wd);
			return;
		}
		memset(big + b->disk_wd_cap, 0, cap - b->disk_wd_cap);
		b->disk_wd_cap = cap;
	}
	if (!b->disk_wd_path[wd]) {
		b->disk_watches++;
	} else if (streq(b->disk_wd_path[wd], path)) {
		return;
	}
	free(b->disk_wd_path[wd]);
	b->disk_wd_path[wd] = strdup(path);
}

typedef struct DiskWalk {
	Budget *b;
	DiskIndex *index; /* NULL: not indexing */
	uint64_t bytes;
	uint64_t inodes;
	dev_t *seen_dev; /* hard links: (dev, ino) of files with nlink > 1 */
	ino_t *seen_ino;
	size_t n_seen, cap_seen;
	char path[PATH_MAX]; /* of the directory being walked, unless unnamed */
	unsigned unnamed;    /* > 0: below a directory whose path is too long */
} DiskWalk;

static bool seen_before(DiskWalk *w, const struct stat *st)
{
	DiskInode *e;

	if (w->index && (e = index_slot(w->index, st->st_dev, st->st_ino, false)))
		return true;
	if (w->index && !w->index->full)
		return false; /* the index has every inode so far */
	for (size_t i = 0; i < w->n_seen; i++)
		if (w->seen_ino[i] == st->st_ino && w->seen_dev[i] == st->st_dev)
			return true;
	if (w->n_seen == w->cap_seen) {
		size_t cap = w->cap_seen ? w->cap_seen * 2 : 64;
		dev_t *d = realloc(w->seen_dev, cap * sizeof(*d));
		ino_t *i;

		if (!d)
			return false;
		w->seen_dev = d;
		i = realloc(w->seen_ino, cap * sizeof(*i));
		if (!i)
			return false;
		w->seen_ino = i;
		w->cap_seen = cap;
	}
	w->seen_dev[w->n_seen] = st->st_dev;
	w->seen_ino[w->n_seen++] = st->st_ino;
	return false;
}

/* Allocated bytes beneath dirfd (which it closes); never follows symlinks and does not
 * descend into other file systems mounted below. */
static void disk_walk_dir(DiskWalk *w, int dirfd, dev_t dev, unsigned depth)
{
	size_t len = strlen(w->path);
	DIR *d;
	struct dirent *de;

	if (depth > 256) {
		(void) close(dirfd);
		return;
	}
	if (!w->unnamed)
		disk_watch(w->b, dirfd, w->path);
	d = fdopendir(dirfd);
	if (!d) {
		(void) close(dirfd);
		return;
	}
	while ((de = readdir(d)) && w->inodes < DISK_WALK_MAX) {
		struct stat st;
		DiskInode *e;

		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		w->inodes++;
		if (st.st_nlink > 1 && !S_ISDIR(st.st_mode) && seen_before(w, &st))
			continue;
		w->bytes += (uint64_t) st.st_blocks * 512;
		if (w->index && (e = index_slot(w->index, st.st_dev, st.st_ino, true)))
			e->bytes = (uint64_t) st.st_blocks * 512;
		/* one file system per root: a mount point below (a /proc, another disk) is not
		 * walked */
		if (S_ISDIR(st.st_mode) && st.st_dev == dev) {
			int fd = openat(dirfd, de->d_name,
					O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (fd < 0)
				continue;
			if (w->unnamed || len + 1 + strlen(de->d_name) >= sizeof(w->path)) {
				/* too deep to name for the events: counted, not watched */
				w->unnamed++;
				disk_walk_dir(w, fd, dev, depth + 1);
				w->unnamed--;
				continue;
			}
			snprintf(w->path + len, sizeof(w->path) - len, "/%s", de->d_name);
			disk_walk_dir(w, fd, dev, depth + 1);
			w->path[len] = '\0';
		}
	}
	closedir(d);
}

/* Walks the roots: their allocated bytes; the index and the watches are renewed. */
static uint64_t disk_usage(Budget *b)
{
	DiskWalk w = {.b = b};

	w.index = b->disk_ifd >= 0 ? calloc(1, sizeof(*w.index)) : NULL;
	for (char **r = b->disk_roots; r && *r; r++) {
		int fd = open(*r, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct stat st;

		snprintf(w.path, sizeof(w.path), "%s", *r);
		if (fd >= 0 && fstat(fd, &st) == 0)
			disk_walk_dir(&w, fd, st.st_dev, 0);
		else if (fd >= 0)
			(void) close(fd);
	}
	free(w.seen_dev);
	free(w.seen_ino);
	if (w.index) {
		index_free(b->disk_index);
		b->disk_index = w.index;
	}
	b->disk_est = w.bytes;
	b->disk_est_high = false;
	return w.bytes;
}

int budget_disk_init(Budget *b, const Policy *p, const SbxView *view)
{
	/* rw mounts and the private directories of tmp mounts, as the view resolved
	 * them; without a view (unit tests), the policy's rw sources */
	for (size_t i = 0; view && i < sbx_view_n_mounts(view); i++) {
		const SbxMount *m = sbx_view_mount(view, i);

		if (m->kind == SBX_MOUNT_DIR && (m->mode == MOUNT_RW || m->mode == MOUNT_TMP) &&
		    m->source && strv_push(&b->disk_roots, m->source) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; !view && i < p->n_mounts; i++)
		if (p->mounts[i].mode == MOUNT_RW && p->mounts[i].source &&
		    strv_push(&b->disk_roots, p->mounts[i].source) < 0)
			return -ENOMEM;
	/* none: walks only. Made here, before the fork, so that the keeper holds it too and its
	 * slow last close is the keeper's (budget_disk_hand_over()) */
	if (b->disk_roots)
		b->disk_ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	return 0;
}

void budget_disk_baseline(Budget *b)
{
	if (b->disk_roots && !b->disk_walk_end_ns) {
		uint64_t t0 = now_monotonic_ns();

		b->disk_baseline = disk_usage(b);
		b->disk_walk_end_ns = now_monotonic_ns();
		b->disk_walk_cost_ns = b->disk_walk_end_ns - t0;
		/* walking costs in proportion to the files: at most ~5% of one CPU */
		b->disk_interval_ns = MAX(b->disk_walk_cost_ns * 20, TICK_DISK_MIN_MS * 1000000ULL);
		b->disk_next_ns = now_monotonic_ns() + b->disk_interval_ns;
		if (!b->tick_ms || b->tick_ms > TICK_DISK_MIN_MS)
			b->tick_ms = b->tick_ms ? b->tick_ms : TICK_DISK_MIN_MS;
	}
}

void budget_disk_hand_over(Budget *b)
{
	if (b->disk_ifd >= 0)
		(void) close(b->disk_ifd);
	b->disk_ifd = -1;
	b->disk_watches = 0;
}

void budget_disk_done(Budget *b)
{
	strv_free(b->disk_roots);
	b->disk_roots = NULL;
	/* with watches, the release waits for an RCU grace period (docs/performance.md) */
	if (b->disk_ifd >= 0 && b->disk_watches > 0)
		close_detached(b->disk_ifd);
	else if (b->disk_ifd >= 0)
		(void) close(b->disk_ifd);
	b->disk_ifd = -1;
	for (size_t i = 0; i < b->disk_wd_cap; i++)
		free(b->disk_wd_path[i]);
	free(b->disk_wd_path);
	b->disk_wd_path = NULL;
	free(b->disk_wd_big);
	b->disk_wd_big = NULL;
	for (size_t i = 0; i < b->n_disk_quiet; i++)
		(void) close(b->disk_quiet[i].fd);
	b->n_disk_quiet = 0;
	b->disk_wd_cap = 0;
	index_free(b->disk_index);
	b->disk_index = NULL;
}

/* Disk budget used up: no regular file of this process grows or is written any more (the
 * kernel's RLIMIT_FSIZE check: EFBIG). Hard limit too, so that it stays. */
static int fsize_zero(pid_t pid, void *userdata)
{
	struct rlimit zero = {0, 0};

	(void) userdata;
	(void) prlimit(pid, RLIMIT_FSIZE, &zero, NULL);
	return 0;
}

/* The rlimits first: a program that sees a creation fail (the flag) finds its writes
 * failing too. */
static void disk_now_full(Budget *b, pid_t keeper)
{
	if (!atomic_load(&b->disk_full)) {
		(void) tree_walk(keeper, fsize_zero, NULL);
		atomic_store(&b->disk_full, true);
		b->disk_full_new = true;
	}
}

/* A walk as soon as the cost rule allows (20 × the last walk's cost after it), sooner than
 * the interval: the estimate says the budget is crossed but cannot be trusted alone. */
static void disk_walk_soon(Budget *b)
{
	uint64_t soon = b->disk_walk_end_ns + b->disk_walk_cost_ns * 20;

	b->disk_next_ns = MIN(b->disk_next_ns, MAX(soon, now_monotonic_ns()));
}

/* The estimate moved by st's change since the walk (or since its last change); false when
 * the inode is not indexed (the next walk counts it). */
static bool disk_account(Budget *b, const struct stat *st)
{
	DiskInode *e =
		b->disk_index ? index_slot(b->disk_index, st->st_dev, st->st_ino, true) : NULL;
	uint64_t was;

	if (!e)
		return false;
	was = e->bytes;
	e->bytes = (uint64_t) st->st_blocks * 512;
	b->disk_est = b->disk_est + e->bytes >= was ? b->disk_est + e->bytes - was : 0;
	return true;
}

static void disk_hot_add(Budget *b, int wd)
{
	if ((size_t) wd >= b->disk_wd_cap || b->disk_wd_big[wd])
		return;
	for (size_t i = 0; i < b->n_disk_hot; i++)
		if (b->disk_hot[i] == wd)
			return;
	if (b->n_disk_hot < ARRAY_SIZE(b->disk_hot))
		b->disk_hot[b->n_disk_hot++] = wd;
}

/* A directory that appeared since the walk (dirfd, which this closes; path: its host path):
 * watched, and its entries counted, at most *left of them, below it too. */
static void disk_scan_new(Budget *b, int dirfd, const char *path, dev_t dev, unsigned depth,
			  size_t *left)
{
	char sub[PATH_MAX];
	struct dirent *de;
	DIR *d;

	disk_watch(b, dirfd, path);
	d = depth < 16 ? fdopendir(dirfd) : NULL;
	if (!d) {
		(void) close(dirfd);
		*left = 0; /* not counted: a walk */
		return;
	}
	while (*left && (de = readdir(d))) {
		struct stat st;
		int fd;

		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		(*left)--;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		(void) disk_account(b, &st);
		if (!S_ISDIR(st.st_mode) || st.st_dev != dev)
			continue;
		if ((size_t) snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name) >= sizeof(sub) ||
		    (fd = openat(dirfd, de->d_name,
				 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			*left = 0;
			break;
		}
		disk_scan_new(b, fd, sub, dev, depth + 1, left);
	}
	closedir(d);
}

/* One change in a watched directory: the named file stat'ed, the estimate moved by its
 * change since the walk (or since its last change). */
static void disk_change(Budget *b, const struct inotify_event *ev)
{
	const char *dir = (size_t) ev->wd < b->disk_wd_cap ? b->disk_wd_path[ev->wd] : NULL;
	char path[PATH_MAX];
	struct stat st;

	if (!dir || !ev->len ||
	    (size_t) snprintf(path, sizeof(path), "%s/%s", dir, ev->name) >= sizeof(path))
		return;
	if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (ev->mask & IN_MODIFY)
		disk_hot_add(b, ev->wd);
	if (!disk_account(b, &st))
		return; /* not indexed: the next walk counts it */
	if (S_ISDIR(st.st_mode) && (ev->mask & (IN_CREATE | IN_MOVED_TO))) {
		/* a new directory: watched from now on, and what it got before counted now
		 * (the event may have waited for a quiet time to end: up to 50 ms of writes) */
		int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		size_t left = DISK_RESCAN_MAX;

		if (fd >= 0)
			disk_scan_new(b, fd, path, st.st_dev, 0, &left);
		if (!left)
			disk_walk_soon(b);
	}
}

int budget_disk_fd(const Budget *b)
{
	return b->disk_ifd;
}

/* buffers: how many reads of the queue at most (a writer keeps queueing while we read) */
static bool disk_changes_locked(Budget *b, pid_t keeper, unsigned buffers)
{
	const PolicyLimits *l = &b->policy->limits;
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	uint64_t used;
	ssize_t n;

	/* A bounded number of buffers: a writer keeps queueing changes while we read them, so
	 * reading until the queue is empty could last as long as it writes. The main loop
	 * reads one; the rest waits for its next round (the quiet time in tracer/loop.c), no later
	 * than the budget allows. */
	while (buffers-- > 0 && (n = read(b->disk_ifd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *) (void *) p;

			p += sizeof(*ev) + ev->len;
			b->disk_events++;
			if (ev->mask & IN_Q_OVERFLOW) {
				disk_walk_soon(b); /* changes were lost */
			} else if (ev->mask & IN_IGNORED) {
				if ((size_t) ev->wd < b->disk_wd_cap && b->disk_wd_path[ev->wd]) {
					free(b->disk_wd_path[ev->wd]);
					b->disk_wd_path[ev->wd] = NULL;
					b->disk_watches--;
				}
			} else if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) {
				/* the inode is not named: the estimate may be high from now on */
				b->disk_est_high = true;
			} else {
				disk_change(b, ev);
			}
		}
	}
	if (!is_set(l->disk) || atomic_load(&b->disk_full))
		return false;
	used = b->disk_est > b->disk_baseline ? b->disk_est - b->disk_baseline : 0;
	if (used < l->disk)
		return false;
	if (!b->disk_est_high) {
		/* every change since the walk was a growth or shrink seen: trusted */
		disk_now_full(b, keeper);
		return false;
	}
	disk_walk_soon(b);
	return true;
}

bool budget_disk_changes(Budget *b, pid_t keeper)
{
	bool soon;

	pthread_mutex_lock(&b->disk_lock);
	soon = disk_changes_locked(b, keeper, 1) || b->disk_walk_asked;
	b->disk_walk_asked = false;
	pthread_mutex_unlock(&b->disk_lock);
	return soon;
}

bool budget_disk_full_now(Budget *b, pid_t keeper)
{
	if (b->disk_ifd >= 0 && !atomic_load(&b->disk_full) &&
	    pthread_mutex_trylock(&b->disk_lock) == 0) {
		/* busy: a walk is under way, the flag is what we know */
		/* a creation reads what is queued, not only a buffer of it, as it did before the
		 * quiet time: its answer is EDQUOT or not */
		b->disk_walk_asked |= disk_changes_locked(b, keeper, 64);
		pthread_mutex_unlock(&b->disk_lock);
	}
	return atomic_load(&b->disk_full);
}

/*
 * The quiet time. A watch with IN_MODIFY costs every write into its directory an event the
 * kernel allocates (and merges with the last queued one): half a microsecond on a 4 KiB
 * write of 0.6 µs. For the quiet time, the directories written into are watched without it,
 * and at its end with it again, after which every entry is stat'ed: what the files gained
 * meanwhile is in the estimate then. The quiet time is what is left of the budget at the
 * fastest rate the tree can write, so a budget cannot be used up unseen during it: the
 * estimate is exact again at its end, as it would be from the events.
 * TOCTOU: the directory is reached by its path (the program can rename it or swap a symlink
 * in); the watch is changed through an fd of what was opened, and only when inotify gives
 * back the same watch descriptor, i.e. the same inode. Otherwise nothing changes for it.
 * The end goes through that fd, whatever has become of the path.
 */
uint64_t budget_disk_quiet_start(Budget *b)
{
	const PolicyLimits *l = &b->policy->limits;
	uint64_t used, left, rate, ms = 0;

	pthread_mutex_lock(&b->disk_lock);
	used = b->disk_est > b->disk_baseline ? b->disk_est - b->disk_baseline : 0;
	/* nothing written: no reason to wait (creations, removals are read at once) */
	if (b->n_disk_hot && is_set(l->disk) && !atomic_load(&b->disk_full) && used < l->disk) {
		left = l->disk - used;
		rate = DISK_BYTES_PER_S_PER_CPU * (uint64_t) MAX(b->ncpus, 1L);
		ms = MIN(left / (rate / 1000), (uint64_t) DISK_QUIET_MAX_MS);
	}
	for (size_t i = 0; ms >= DISK_QUIET_MIN_MS && i < b->n_disk_hot; i++) {
		int wd = b->disk_hot[i], fd, got;
		char proc[64];

		if (b->n_disk_quiet == ARRAY_SIZE(b->disk_quiet) || !b->disk_wd_path[wd])
			continue;
		fd = open(b->disk_wd_path[wd], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		got = inotify_add_watch(b->disk_ifd, proc, DISK_WATCH_MASK & ~(uint32_t) IN_MODIFY);
		if (got == wd) {
			b->disk_quiet[b->n_disk_quiet].wd = wd;
			b->disk_quiet[b->n_disk_quiet++].fd = fd;
			continue;
		}
		/* another inode now has that path: as it was */
		if (got >= 0 && ((size_t) got >= b->disk_wd_cap || !b->disk_wd_path[got]))
			(void) inotify_rm_watch(b->disk_ifd, got);
		else if (got >= 0)
			(void) inotify_add_watch(b->disk_ifd, proc, DISK_WATCH_MASK);
		(void) close(fd);
	}
	b->n_disk_hot = 0;
	pthread_mutex_unlock(&b->disk_lock);
	return ms;
}

void budget_disk_quiet_end(Budget *b)
{
	pthread_mutex_lock(&b->disk_lock);
	for (size_t i = 0; i < b->n_disk_quiet; i++) {
		int fd = b->disk_quiet[i].fd, wd = b->disk_quiet[i].wd;
		size_t n = 0;
		char proc[64];
		struct dirent *de;
		DIR *d;

		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		/* first the watch, then the count: a write between them is seen twice, harmless */
		if (inotify_add_watch(b->disk_ifd, proc, DISK_WATCH_MASK) != wd)
			b->disk_est_high = true; /* gone meanwhile: the walk is the truth */
		d = fdopendir(fd);
		if (!d) {
			(void) close(fd);
			disk_walk_soon(b);
			continue;
		}
		while ((de = readdir(d))) {
			struct stat st;

			if (streq(de->d_name, ".") || streq(de->d_name, ".."))
				continue;
			if (++n > DISK_RESCAN_MAX) {
				/* too big to count every time: not quiet again, a walk now */
				if ((size_t) wd < b->disk_wd_cap)
					b->disk_wd_big[wd] = 1;
				disk_walk_soon(b);
				break;
			}
			if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    !S_ISDIR(st.st_mode))
				(void) disk_account(b, &st);
		}
		closedir(d);
	}
	b->n_disk_quiet = 0;
	pthread_mutex_unlock(&b->disk_lock);
}

uint64_t budget_disk_walk_due_ms(const Budget *b)
{
	uint64_t now = now_monotonic_ns();

	return b->disk_next_ns > now ? (b->disk_next_ns - now + 999999) / 1000000 : 0;
}

void budget_disk_sample(Budget *b, pid_t keeper, uint64_t deleted_bytes)
{
	const PolicyLimits *l = &b->policy->limits;

	pthread_mutex_lock(&b->disk_lock);
	if (b->disk_roots && now_monotonic_ns() >= b->disk_next_ns) {
		uint64_t w0 = now_monotonic_ns(), used = disk_usage(b);

		b->disk_walk_end_ns = now_monotonic_ns();
		b->disk_walk_cost_ns = b->disk_walk_end_ns - w0;
		b->disk_walks++;
		b->disk_walk_used = used > b->disk_baseline ? used - b->disk_baseline : 0;
		b->disk_interval_ns = MAX(b->disk_walk_cost_ns * 20, TICK_DISK_MIN_MS * 1000000ULL);
		b->disk_next_ns = b->disk_walk_end_ns + b->disk_interval_ns;
	}

	/* the last walk, plus what the tree holds in files no walk can find (every sample) */
	b->disk_used = b->disk_walk_used + deleted_bytes;
	b->disk_peak = MAX(b->disk_peak, b->disk_used);
	if (is_set(l->disk) && b->disk_roots && b->disk_used >= l->disk &&
	    !atomic_load(&b->disk_full))
		disk_now_full(b, keeper);
	else if (atomic_load(&b->disk_full))
		/* at every sample: a process forked while the last sweep ran may have copied the
		 * old limit */
		(void) tree_walk(keeper, fsize_zero, NULL);
	pthread_mutex_unlock(&b->disk_lock);
}

bool budget_efbig_is_disk(const Budget *b)
{
	const PolicyLimits *l = &b->policy->limits;

	if (!is_set(l->disk))
		return false;
	/* RLIMIT_FSIZE is min(file_size, disk) until the disk is full, 0 after */
	return atomic_load(&b->disk_full) || !is_set(l->file_size) || l->disk <= l->file_size;
}

uint64_t budget_disk_slack(uint64_t disk)
{
	return MAX(disk / 4, 1ULL << 20);
}
