/* SPDX-License-Identifier: MIT */
/*
 * A run's scratch directories (the skeleton's run directory, the tmp mounts' directories):
 * made and marked as the run's while it lives, removed at its end, and swept when the run
 * died without removing them.
 *
 * Why the sweep: W removes a run's scratch after S is done (tracer/launch.c); when S and W
 * are both killed (the process group's SIGKILL, the OOM killer, a server killed with the
 * views of its file tools) nothing did, and they stayed for good. The skeleton is about
 * 65 KiB of tmpfs (RAM: its copy of ld.so.cache); on the test VM a day of test runs had left
 * 1446 skeletons in /dev/shm (95 MB) and 2880 tmp directories in /tmp.
 *
 * How a live run is told from a dead one: each directory that the run removes is opened
 * (O_RDONLY) and flock(LOCK_SH)ed when made, and the descriptor, close-on-exec, is kept for
 * the view's life. S's fork gives W the same open file description, so the lock lasts as long
 * as S lives, and W until it starts the removal itself (it closes all but two descriptors
 * while it waits for S: from then on only S holds it, and a sweep racing W's own removal
 * after S's exit removes the same directories); the kernel drops it when the last holder
 * dies, however it dies. Then the run directory gets the file "scratch", the list of the
 * run's tmp directories, written after every lock is taken: a run directory that holds the
 * list is locked unless its run is gone. Kept tmp directories (`keep = true`) are named
 * "sbxtrace-keep-XXXXXX", a name no list can name.
 *
 * The sweep lists a base directory and, for each "sbxtrace-XXXXXX" directory that holds the
 * list, is ours and is not locked (LOCK_EX|LOCK_NB succeeds), removes each listed tmp
 * directory that is ours and not locked, then the run directory. W sweeps the base of its own
 * run directory after removing its scratch (sbx_view_sweep_scratch(), off the caller's path:
 * S has exited), where the runs of the same user and environment put theirs; a server sweeps
 * every candidate base when it starts (sbx_scratch_sweep()). No stamp or rate limit: a
 * leftover without the list costs two calls, and a run leaves nothing of its own behind.
 * What it never touches: another user's directories; a directory without the list (a tmp
 * directory a policy keeps, `keep = true`; the scratch of versions before this one, which a
 * sweep cannot tell from a live run of that version); a listed path whose last component is
 * not "sbxtrace-tmp-XXXXXX".
 *
 * TOCTOU: between mkdtemp() and the lock a run directory has no list, so a sweep skips it.
 * The list is read through the locked directory's descriptor (a regular file of ours,
 * O_NONBLOCK: a FIFO planted there must not hang the sweep), so a rename cannot swap it.
 * Each directory is opened O_NOFOLLOW, owner-checked and locked, emptied through that
 * descriptor (never following a symlink) and then removed by name only if the name is still
 * that directory, and only while empty: a directory renamed into its place is not emptied.
 * The list is ours, in a directory the program cannot reach unless a base it lives in is in
 * the view read-write (a policy that mounts /tmp, say); so a listed path must have no
 * symlink and no "..", end in "sbxtrace-tmp-XXXXXX", and have as its parent one of the bases
 * (the one swept, or a candidate of this environment): a forged list can name only unlocked
 * tmp directories of this user in those bases, which a program with such a mount can remove
 * itself. Found by review (a symlinked or ".." parent reached any directory of the user so
 * named, and a FIFO hung the server's start); tests/integration/scratch-sweep.sh tries both.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/util.h"
#include "emulation/path/internal.h"

#define SCRATCH_LIST	      "scratch"
#define SCRATCH_LIST_MAX      (64 * 1024)
#define RUN_PREFIX	      "sbxtrace-"
#define TMP_PREFIX	      "sbxtrace-tmp-"
#define MKDTEMP_SUFFIX_LENGTH 6

/* Empties the directory open as fd, never following a symlink. */
static int rm_contents(int fd, unsigned depth)
{
	DIR *d;
	struct dirent *de;
	int r = 0, dup_fd;

	if (depth > 256)
		return -ELOOP;
	/* a directory we could not list (mode 0) still belongs to us */
	(void) fchmod(fd, 0700);
	dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (dup_fd < 0)
		return -errno;
	d = fdopendir(dup_fd);
	if (!d) {
		r = -errno;
		(void) close(dup_fd);
		return r;
	}
	while ((de = readdir(d))) {
		int k;

		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		k = scratch_rm_rf_at(dirfd(d), de->d_name, de->d_type, depth + 1);
		if (k < 0 && r == 0)
			r = k;
	}
	(void) closedir(d);
	return r;
}

int scratch_rm_rf_at(int dfd, const char *name, unsigned char type, unsigned depth)
{
	_cleanup_close_ int fd = -1;
	int r;

	if (type != DT_DIR) {
		if (unlinkat(dfd, name, 0) >= 0 || errno == ENOENT)
			return 0;
		if (errno != EISDIR && errno != EPERM)
			return -errno;
	}
	/* an empty directory (the skeleton's mount points, most of a run's tree) goes at once */
	if (unlinkat(dfd, name, AT_REMOVEDIR) >= 0 || errno == ENOENT)
		return 0;
	if (errno != ENOTEMPTY && errno != EEXIST && errno != EACCES && errno != EPERM)
		return -errno;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = rm_contents(fd, depth);
	if (unlinkat(dfd, name, AT_REMOVEDIR) < 0 && r == 0)
		r = -errno;
	return r;
}

int scratch_make(const char *base, const char *prefix, char *path, size_t size, int *ret_lock)
{
	int fd;

	*ret_lock = -1;
	if ((size_t) snprintf(path, size, "%s/%sXXXXXX", base, prefix) >= size)
		return -ENAMETOOLONG;
	if (!mkdtemp(path))
		return -errno;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int r = -errno;

		(void) rmdir(path);
		return r;
	}
	/* LOCK_NB: nothing can hold a name mkdtemp() just made, and a file system without
	 * flock (ENOLCK, EOPNOTSUPP on some network ones) costs the sweep, not the run: the
	 * directory stays unlocked and unlisted, so no sweep ever takes it */
	if (flock(fd, LOCK_SH | LOCK_NB) < 0) {
		(void) close(fd);
		return 0;
	}
	*ret_lock = fd;
	return 0;
}

int scratch_write_list(int run_lock, char *const *tmp_paths, const int *tmp_locks)
{
	_cleanup_close_ int fd = -1;
	char buf[SCRATCH_LIST_MAX];
	size_t n = 0, i = 0;

	/* the run directory unlocked: no list, never swept (scratch_make()) */
	if (run_lock < 0)
		return 0;
	buf[0] = 0;
	for (char *const *t = tmp_paths; t && *t; t++, i++) {
		int k;

		if (tmp_locks[i] < 0)
			continue; /* unlocked: left out, never swept */
		/* a path with a newline would read back as two: this run is not swept */
		if (strchr(*t, '\n'))
			return 0;
		k = snprintf(buf + n, sizeof(buf) - n, "%s\n", *t);
		if (k < 0 || (size_t) k >= sizeof(buf) - n)
			return 0; /* too many to list: the same */
		n += (size_t) k;
	}
	fd = openat(run_lock, SCRATCH_LIST, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return -errno;
	return write_all(fd, buf, n);
}

/* "PREFIX" followed by exactly mkdtemp's six characters, nothing else (names come from
 * readdir() or after the last '/' of a listed path: never with a '/'). */
static bool scratch_name(const char *name, const char *prefix)
{
	size_t pl = strlen(prefix);

	return strncmp(name, prefix, pl) == 0 && strlen(name + pl) == MKDTEMP_SUFFIX_LENGTH;
}

/* Opens name below dfd if it is a directory of ours (no symlink) that nothing holds: the
 * descriptor, locked LOCK_EX, or -1. */
static int open_unheld(int dfd, const char *name, struct stat *ret_st)
{
	_cleanup_close_ int fd = -1;

	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, ret_st) < 0 || ret_st->st_uid != geteuid())
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return -1; /* a live run's (EWOULDBLOCK), or not lockable */
	return TAKE_FD(fd);
}

/* Removes the directory name below dfd that we opened, checked and locked as fd: emptied
 * through fd, so a directory renamed into its place meanwhile is not the one emptied; the
 * name is then removed only if it is still that directory, and only while empty
 * (AT_REMOVEDIR), so what a rename in the last instant put there stays. */
static void remove_checked(int dfd, const char *name, int fd, const struct stat *st)
{
	struct stat now;

	(void) rm_contents(fd, 0);
	if (fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) < 0 || now.st_dev != st->st_dev ||
	    now.st_ino != st->st_ino)
		return;
	(void) unlinkat(dfd, name, AT_REMOVEDIR);
}

/* The bases a listed tmp directory may be in (device and inode): the one swept and the
 * candidates of this process's environment. */
typedef struct Bases {
	dev_t dev[SCRATCH_BASES_MAX + 1];
	ino_t ino[SCRATCH_BASES_MAX + 1];
	size_t n;
} Bases;

static void bases_add(Bases *b, int fd)
{
	struct stat st;

	if (b->n < ARRAY_SIZE(b->dev) && fstat(fd, &st) >= 0) {
		b->dev[b->n] = st.st_dev;
		b->ino[b->n] = st.st_ino;
		b->n++;
	}
}

static bool bases_have(const Bases *b, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return false;
	for (size_t i = 0; i < b->n; i++)
		if (b->dev[i] == st.st_dev && b->ino[i] == st.st_ino)
			return true;
	return false;
}

/* The run's list: a regular file of ours, read without blocking (a FIFO planted there
 * would otherwise hang the sweep), at most SCRATCH_LIST_MAX bytes; < 0 if not. */
static ssize_t read_list(int run_fd, char *buf, size_t size)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	ssize_t n;

	fd = openat(run_fd, SCRATCH_LIST, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (size_t) st.st_size >= size)
		return -1;
	n = read(fd, buf, size - 1);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

/* The tmp directories a dead run listed, each checked again, then removed. */
static void sweep_listed(int run_fd, const Bases *bases)
{
	char buf[SCRATCH_LIST_MAX + 1], *save = NULL;

	if (read_list(run_fd, buf, sizeof(buf)) <= 0)
		return;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *slash = strrchr(line, '/');
		_cleanup_close_ int parent = -1, tmp = -1;
		struct open_how how = {
			.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};
		struct stat st;

		if (line[0] != '/' || !slash || !scratch_name(slash + 1, TMP_PREFIX) ||
		    strstr(line, "/./") || strstr(line, "/../"))
			continue;
		*slash = 0;
		/* the parent by a path with no symlink and no "..", and one of the bases: a
		 * forged list names nothing elsewhere */
		parent = (int) syscall(SYS_openat2, AT_FDCWD, slash == line ? "/" : line, &how,
				       sizeof(how));
		if (parent < 0 || !bases_have(bases, parent))
			continue;
		tmp = open_unheld(parent, slash + 1, &st);
		if (tmp < 0)
			continue;
		/* removed while we hold its lock: a run that made the same name anew (after
		 * this removal) would lock a directory of its own */
		remove_checked(parent, slash + 1, tmp, &st);
	}
}

static void sweep_base(const char *base)
{
	_cleanup_close_ int bfd = -1;
	const char *cand[SCRATCH_BASES_MAX];
	size_t n_cand = scratch_candidate_bases(cand);
	Bases bases = {};
	DIR *d;
	struct dirent *de;
	int dup_fd;

	bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0)
		return;
	bases_add(&bases, bfd);
	for (size_t i = 0; i < n_cand; i++) {
		_cleanup_close_ int c = open(cand[i], O_PATH | O_DIRECTORY | O_CLOEXEC);

		if (c >= 0)
			bases_add(&bases, c);
	}
	dup_fd = fcntl(bfd, F_DUPFD_CLOEXEC, 3);
	if (dup_fd < 0)
		return;
	d = fdopendir(dup_fd);
	if (!d) {
		(void) close(dup_fd);
		return;
	}
	while ((de = readdir(d))) {
		_cleanup_close_ int run = -1, probe = -1;
		struct stat st;

		if ((de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) ||
		    !scratch_name(de->d_name, RUN_PREFIX))
			continue;
		/* no list: not made by this protocol (kept, or an older version's run); looked
		 * at first, as it costs one call where most leftovers of older versions are */
		probe = openat(bfd, de->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (probe < 0 || faccessat(probe, SCRATCH_LIST, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		run = open_unheld(bfd, de->d_name, &st);
		if (run < 0)
			continue;
		sweep_listed(run, &bases);
		remove_checked(bfd, de->d_name, run, &st);
	}
	(void) closedir(d);
}

void sbx_scratch_sweep(void)
{
	const char *bases[SCRATCH_BASES_MAX];
	size_t n = scratch_candidate_bases(bases);

	for (size_t i = 0; i < n; i++)
		sweep_base(bases[i]);
}

void sbx_view_sweep_scratch(const SbxView *v)
{
	char base[PATH_MAX];
	char *slash;

	if (!v->run_path ||
	    (size_t) snprintf(base, sizeof(base), "%s", v->run_path) >= sizeof(base))
		return;
	slash = strrchr(base, '/');
	if (!slash)
		return;
	*slash = 0;
	sweep_base(slash == base ? "/" : base);
}
