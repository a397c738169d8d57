/* SPDX-License-Identifier: MIT */
#pragma once

/* Private to emulation/path/: the view's layout, shared by view.c and resolve.c. */

#include "emulation/path/view.h"

#define SBX_DEV_MAX 8

struct SbxView {
	const Policy *policy; /* borrowed */
	const EmuHost *host; /* borrowed; never NULL (sbx_view_default_host()) */
	unsigned flags;
	SbxMount *mounts; /* sorted by vpath */
	size_t n_mounts;
	const SbxMount *root_mount; /* the mount at "/", or NULL (skeleton root) */
	int run_fd;		    /* private per-run directory of the skeleton (on tmpfs if any) */
	char *run_path;
	bool run_hidden; /* run_path is below no mount's source: the program cannot reach it */
	char **tmp_paths;	    /* tmp mounts the view made and removes at free */
	bool scratch_disowned;	    /* another process removes run_path and tmp_paths */
	int run_lock_fd;	    /* run_path, flock(LOCK_SH)ed while the run lives (scratch.c) */
	int *tmp_locks;		    /* the same for each of tmp_paths (-1: could not lock) */
	size_t n_tmp_locks;
	int root_fd; /* O_PATH of the skeleton root */
	char *root_path;
	int dev_fd; /* O_PATH of the host /dev, -1 without the built-in /dev */
	const char *dev_allow[SBX_DEV_MAX + 1];
	bool procfs_below_sources; /* a host procfs at or below a directory mount's source */
	bool dev_links;		 /* /dev/fd, /dev/std{in,out,err}: symlinks into the proc mount */
	int pts_fd;		 /* O_PATH of the host /dev/pts with process.pty, else -1 */
	mode_t supervisor_umask; /* read at creation: what the kernel takes off our creations */
	bool has_rules;
	bool has_hide_rules;
	bool kernel_paths; /* sbx_view_set_kernel_paths() */
};

/* Whether prefix is a component-wise prefix of path ("/a" of "/a" and "/a/b", "/" of all). */
static inline bool vpath_has_prefix(const char *path, const char *prefix, size_t plen)
{
	if (plen == 1 && prefix[0] == '/')
		return path[0] == '/';
	return strncmp(path, prefix, plen) == 0 && (path[plen] == 0 || path[plen] == '/');
}

/*
 * The caller's thread group, for /proc/self, /proc/thread-self, its own pid, its /proc listing
 * and /dev/pts: tgid when whoever asked knew it, else asked of the kernel from tid (common/util.h,
 * tid_tgid()), where the view needs it (most lookups never do: the receiver passes 0, issue 20).
 * 0 only without a caller (tid 0), which then has no "self".
 */
static inline pid_t view_caller_tgid(pid_t tid, pid_t tgid)
{
	if (tgid > 0)
		return tgid;
	return tid > 0 ? tid_tgid(tid) : 0;
}

/* The deepest mount containing vpath, NULL if none. */
const SbxMount *view_mount_of(const SbxView *v, const char *vpath);
/* The mount exactly at vpath, NULL if none. */
const SbxMount *view_mount_exact(const SbxView *v, const char *vpath, size_t len);
/* Whether vpath (len bytes) is a strict ancestor of some mount point. */
bool view_is_mount_ancestor(const SbxView *v, const char *vpath, size_t len);
/* Hide/deny restriction of exactly this path (ancestors not looked at). */
SbxAccess view_rule_restriction(const SbxView *v, const char *vpath);
/* sbx_view_access(), and the ask/ask-write rule that applies (NULL: none) */
SbxAccess view_access_rule(const SbxView *v, const char *vpath, Sensitivity *ret_level,
			   const PolicyRule **ret_ask_rule);
bool view_dev_allowed(const SbxView *v, const char *name);
/* One of the /dev symlinks into /proc (fd, stdin, stdout, stderr), when a proc mount exists. */
bool view_dev_link(const SbxView *v, const char *name);

/* scratch.c: the run's scratch directories, their locks, the sweep of dead runs' ones */
#define SCRATCH_BASES_MAX 5
/* Where a skeleton may go, in order of preference, each a usable directory, no repeats
 * ($XDG_RUNTIME_DIR, /dev/shm when a sticky tmpfs, $TMPDIR, /tmp, /var/tmp); the count. */
size_t scratch_candidate_bases(const char *ret[static SCRATCH_BASES_MAX]);
/* mkdtemp(BASE/PREFIXXXXXXX) into path, opened and flock(LOCK_SH)ed: *ret_lock, or -1 where
 * the file system cannot lock it (the directory is then never swept). */
int scratch_make(const char *base, const char *prefix, char *path, size_t size, int *ret_lock);
/* The run directory's list of its locked tmp directories (tmp_locks[i] for tmp_paths[i]),
 * written once, after every lock; none when the run directory is unlocked. */
int scratch_write_list(int run_lock, char *const *tmp_paths, const int *tmp_locks);
/* Removes name below dfd recursively, never following symlinks. type: its d_type when known
 * (DT_DIR skips the unlink that would fail), else DT_UNKNOWN. */
int scratch_rm_rf_at(int dfd, const char *name, unsigned char type, unsigned depth);
