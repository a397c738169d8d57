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
 * as any of S, W (or the tree's init in a pid namespace, a fork that does not exec) lives,
 * and the kernel drops it when the last one dies, however it dies. Then the run directory
 * gets the file "scratch", the list of the run's tmp directories, written after every lock is
 * taken: a run directory that holds the list is locked unless its run is gone.
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
 * The list is read through the locked directory's descriptor, so a rename cannot swap it,
 * and each directory is removed through a descriptor of its parent (scratch_rm_rf_at(), which never
 * follows a symlink), after an O_NOFOLLOW open, an owner check and the lock, on that
 * descriptor. The list is written by us into a directory the program cannot reach, unless
 * every base is in its view (a policy that mounts them read-write): such a program can
 * already remove anything of ours in them, and the checks bound what a list it forged can
 * name to unlocked tmp directories of this user.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/util.h"
#include "emulation/path/internal.h"

#define SCRATCH_LIST	      "scratch"
#define SCRATCH_LIST_MAX      (64 * 1024)
#define RUN_PREFIX	      "sbxtrace-"
#define TMP_PREFIX	      "sbxtrace-tmp-"
#define MKDTEMP_SUFFIX_LENGTH 6

int scratch_rm_rf_at(int dfd, const char *name, unsigned char type, unsigned depth)
{
	_cleanup_close_ int fd = -1;
	DIR *d;
	struct dirent *de;
	int r = 0;

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
	if (depth > 256)
		return -ELOOP;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* a directory we could not list (mode 0) still belongs to us */
	(void) fchmod(fd, 0700);
	d = fdopendir(fd);
	if (!d)
		return -errno;
	fd = -1;
	while ((de = readdir(d))) {
		int k;

		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		k = scratch_rm_rf_at(dirfd(d), de->d_name, de->d_type, depth + 1);
		if (k < 0 && r == 0)
			r = k;
	}
	(void) closedir(d);
	if (unlinkat(dfd, name, AT_REMOVEDIR) < 0 && r == 0)
		r = -errno;
	return r;
}

int scratch_make(const char *base, const char *prefix, char *path, size_t size, int *ret_lock)
{
	int fd;

	if ((size_t) snprintf(path, size, "%s/%sXXXXXX", base, prefix) >= size)
		return -ENAMETOOLONG;
	if (!mkdtemp(path))
		return -errno;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || flock(fd, LOCK_SH) < 0) {
		int r = -errno;

		if (fd >= 0)
			(void) close(fd);
		(void) rmdir(path);
		return r;
	}
	*ret_lock = fd;
	return 0;
}

int scratch_write_list(int run_dfd, char *const *tmp_paths)
{
	_cleanup_close_ int fd = -1;
	char buf[SCRATCH_LIST_MAX];
	size_t n = 0;

	buf[0] = 0;
	for (char *const *t = tmp_paths; t && *t; t++) {
		int k = snprintf(buf + n, sizeof(buf) - n, "%s\n", *t);

		if (k < 0 || (size_t) k >= sizeof(buf) - n)
			return -E2BIG;
		n += (size_t) k;
	}
	fd = openat(run_dfd, SCRATCH_LIST, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return -errno;
	return write_all(fd, buf, n);
}

/* "PREFIX" followed by exactly mkdtemp's six characters, nothing else. */
static bool scratch_name(const char *name, const char *prefix)
{
	size_t pl = strlen(prefix);

	return strncmp(name, prefix, pl) == 0 && strlen(name + pl) == MKDTEMP_SUFFIX_LENGTH &&
	       !strchr(name + pl, '/');
}

/* Opens name below dfd if it is a directory of ours (no symlink) that nothing holds: the
 * descriptor, locked LOCK_EX, or -1. */
static int open_unheld(int dfd, const char *name)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid())
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return -1; /* a live run's (EWOULDBLOCK), or not lockable */
	return TAKE_FD(fd);
}

/* The tmp directories a dead run listed, each checked again, then removed. */
static void sweep_listed(int run_fd)
{
	_cleanup_close_ int fd = -1;
	char buf[SCRATCH_LIST_MAX + 1], *save = NULL;
	ssize_t n;

	fd = openat(run_fd, SCRATCH_LIST, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return;
	buf[n] = 0;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *slash = strrchr(line, '/');
		_cleanup_close_ int parent = -1, tmp = -1;

		if (line[0] != '/' || !slash || !scratch_name(slash + 1, TMP_PREFIX))
			continue;
		*slash = 0;
		parent = open(slash == line ? "/" : line, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (parent < 0)
			continue;
		tmp = open_unheld(parent, slash + 1);
		if (tmp < 0)
			continue;
		/* removed while we hold its lock: a run that made the same name anew (after
		 * this removal) would lock a directory of its own */
		(void) scratch_rm_rf_at(parent, slash + 1, DT_DIR, 0);
	}
}

static void sweep_base(const char *base)
{
	_cleanup_close_ int bfd = -1;
	DIR *d;
	struct dirent *de;

	bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0)
		return;
	d = fdopendir(fcntl(bfd, F_DUPFD_CLOEXEC, 3));
	if (!d)
		return;
	while ((de = readdir(d))) {
		_cleanup_close_ int run = -1, list = -1;

		if ((de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) ||
		    !scratch_name(de->d_name, RUN_PREFIX))
			continue;
		/* no list: not made by this protocol (kept, or an older version's run); looked
		 * at first, as it costs one call where most leftovers of older versions are */
		list = openat(bfd, de->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (list < 0 || faccessat(list, SCRATCH_LIST, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		run = open_unheld(bfd, de->d_name);
		if (run < 0)
			continue;
		sweep_listed(run);
		(void) scratch_rm_rf_at(bfd, de->d_name, DT_DIR, 0);
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
