/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The virtual filesystem view (DESIGN.md "The virtual filesystem view", docs/filesystem.md).
 *
 * An SbxView is built once per run from the policy's mounts and is immutable afterwards, so
 * any number of supervisor threads may resolve paths in it at once. It holds an O_PATH fd of
 * each mount's host source, a private skeleton root (empty directories for the mount points,
 * placeholders for the /dev allowlist) and the private directories of tmp mounts.
 *
 * Resolution walks a virtual path component by component from pinned directory fds
 * (openat(…, O_PATH|O_NOFOLLOW)), splices symlinks into the virtual path, pops ".." on the
 * canonical virtual path, and so never reaches a host object outside the view. Nothing is
 * cached between calls.
 */

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "common/handler.h" /* EmuHost, EmuUnixNames */
#include "policy/policy.h"

typedef struct SbxView SbxView;

typedef enum SbxMountKind {
	SBX_MOUNT_DIR,	/* a host directory (ro/rw) or a private tmp directory */
	SBX_MOUNT_DEV,	/* the built-in /dev allowlist */
	SBX_MOUNT_PROC, /* a mount whose source is a procfs: /proc/self translation, pid hiding */
	_SBX_MOUNT_KIND_MAX,
	_SBX_MOUNT_KIND_INVALID = -EINVAL,
} SbxMountKind;

typedef struct SbxMount {
	char *vpath; /* virtual path, normalized, "/" or without trailing slash */
	size_t vlen;
	char *source; /* canonical host path of the source (readlink of /proc/self/fd/N) */
	size_t slen;
	int fd; /* O_PATH|O_DIRECTORY|O_CLOEXEC fd of the source */
	MountMode mode;
	SbxMountKind kind;
	bool nested; /* another mount lies beneath this one */
	/* the host resolves vpath itself to this source (identity-mapped, or /bin where the
	 * host's /bin is a symlink to the source /usr/bin): the kernel's walk of an absolute
	 * path into this mount reaches what the view's does (SbxResolved.kernel_same) */
	bool host_same;
	bool owned; /* a tmp directory the view created (removed at free unless keep) */
	bool tmp;   /* a tmp mount: a directory the view created, empty at the start */
	bool keep;
} SbxMount;

/*
 * How the view reaches into the supervised processes: the fd, path, umask, tree and pty
 * operations of the host (EmuHost, common/handler.h), the handlers' one door to the
 * supervisor. tracer/ gives the view the run's host, the one every request points to;
 * a view made outside a run (agent/files.c, `check`'s probe, unit tests) gets
 * sbx_view_default_host(), whose operations act on the calling process itself.
 *
 * The defaults: pidfd_open+pidfd_getfd (or open of /proc/PID/cwd), /proc/PID/status
 * "Umask:", readlink of /proc/PID/{cwd,fd/N}. The userdata is not used.
 */
int sbx_default_get_fd(void *userdata, pid_t pid, int fd);
int sbx_default_get_umask(void *userdata, pid_t pid);
int sbx_default_get_path(void *userdata, pid_t pid, int fd, char *buf, size_t size);

/** The host of views made outside a run: get_fd, get_umask and get_path are the defaults
 * above; no tree (only the caller's own /proc entry shows), no ptys, no asking (denied). */
const EmuHost *sbx_view_default_host(void);

/** EmuHost.get_fd of h, the default when h or its get_fd is NULL. */
int sbx_host_get_fd(const EmuHost *h, pid_t pid, int fd);
/** EmuHost.get_umask of h, the default when h or its get_umask is NULL. */
int sbx_host_get_umask(const EmuHost *h, pid_t pid);

typedef enum SbxViewFlags {
	SBX_VIEW_KEEP_TMP = 1 << 0,    /* keep every tmp directory at free (debugging) */
	SBX_VIEW_NO_FAST = 1 << 1,     /* never use the openat2() fast path */
	SBX_VIEW_PROBE = 1 << 2,       /* only looked at (sbxtrace check): tmp directories are
					* removed at free even with keep */
	SBX_VIEW_FILES_LATER = 1 << 3, /* the skeleton's files are written by
					* sbx_view_write_files(), not by sbx_view_new() */
} SbxViewFlags;

/**
 * Builds the view of policy (borrowed: it must outlive the view; its rules are read on every
 * lookup). Scratch directories go under $XDG_RUNTIME_DIR or $TMPDIR or /tmp. host (borrowed:
 * it must outlive the view) is what the walk asks which pids and ptys the tree has; NULL:
 * sbx_view_default_host(). On failure returns -errno and writes a one-line reason into reterr (if
 * not NULL): -ENOENT/-ENOTDIR for a missing source, -EINVAL for duplicate or relative mount paths.
 */
int sbx_view_new(const Policy *policy, const EmuHost *host, unsigned flags, SbxView **ret_view,
		 char *reterr, size_t reterr_size);

/**
 * The skeleton's files: the synthesized /etc/passwd, /etc/group, /etc/hosts (with services,
 * protocols and nsswitch.conf) and the loader's cache, each where no mount provides it.
 * sbx_view_new() writes them unless SBX_VIEW_FILES_LATER; then the caller does, before anything
 * may look them up. The supervisor does it after its fork, while the command sets itself up
 * (they are files in directories that exist already, so the kernel view's binds and Landlock
 * rules, which are on directories, cover them when they appear).
 */
int sbx_view_write_files(SbxView *v, char *reterr, size_t reterr_size);

/** Closes the fds and removes the skeleton and tmp directories (unless kept). NULL is fine. */
SbxView *sbx_view_free(SbxView *v);
/* The run's scratch directories (the skeleton, tmp mounts not kept): removed by
 * sbx_view_free, or now by sbx_view_remove_scratch, which may run in another process (a
 * fork of ours, after the tree is gone); sbx_view_disown_scratch makes sbx_view_free leave
 * them to it. */
void sbx_view_remove_scratch(const SbxView *v);
void sbx_view_disown_scratch(SbxView *v);
/* Removes the scratch directories of runs that died without removing theirs (both S and W
 * killed): those whose lock nobody holds (emulation/path/scratch.c), in every directory a
 * skeleton may go to; never another user's, never a kept tmp directory. */
void sbx_scratch_sweep(void);
/* The same in the directory of the view's own run directory (a keeper, after removing its
 * own: its environment need not be the one the view was made in). */
void sbx_view_sweep_scratch(const SbxView *v);
static inline void sbx_view_freep(SbxView **v)
{
	if (*v)
		(void) sbx_view_free(*v);
}

const Policy *sbx_view_policy(const SbxView *v);
/** The supervisor's umask when the view was made (creating handlers correct for it). */
mode_t sbx_view_supervisor_umask(const SbxView *v);
/** Host path of the skeleton root (for the supervisor: the child's initial chroot-less cwd…). */
const char *sbx_view_root_path(const SbxView *v);
size_t sbx_view_n_mounts(const SbxView *v);
/* Whether the host has a procfs mounted at or below a directory mount's source (read from
 * /proc/self/mountinfo when the view was made; true when that could not be read). */
bool sbx_view_procfs_below_sources(const SbxView *v);
/** Names of the built-in /dev allowlist (null, zero, …), NULL-terminated; empty when the
 * policy mounts /dev itself. */
const char *const *sbx_view_dev_names(const SbxView *v);
const SbxMount *sbx_view_mount(const SbxView *v, size_t i);
/** The mount with that exact virtual path, or NULL. */
const SbxMount *sbx_view_mount_at(const SbxView *v, const char *vpath);

typedef enum SbxAccess {
	SBX_ACCESS_HIDDEN, /* looks absent: ENOENT, filtered from listings */
	SBX_ACCESS_DENIED, /* EACCES */
	SBX_ACCESS_RO,	   /* writes: EROFS */
	SBX_ACCESS_RW,
	_SBX_ACCESS_MAX,
	_SBX_ACCESS_INVALID = -EINVAL,
} SbxAccess;

const char *sbx_access_to_string(SbxAccess a);

/* Which opens of a path a [[rule]] with access "ask" or "ask-write" holds. */
typedef enum SbxAsk {
	SBX_ASK_NONE,
	SBX_ASK_WRITE, /* "ask-write": opens for writing, creates */
	SBX_ASK_OPEN,  /* "ask": every open */
} SbxAsk;

/**
 * Policy access of a canonical virtual path: the mount's mode, restricted by the rules
 * (hide/deny on the path or any ancestor win; otherwise the nearest ro/rw rule; a rule never
 * grants more than the mount). Also returns the highest sensitivity of matching rules.
 */
SbxAccess sbx_view_access(const SbxView *v, const char *vpath, Sensitivity *ret_level);

/* What a name the view answered ENOENT for is on the host (the audit log's out_of_view). */
typedef enum SbxOutOfView {
	SBX_OOV_NONE,	  /* absent on the host too, or it could not be told */
	SBX_OOV_HIDDEN,	  /* the view has its place but hides it: a hide rule, the /dev
			   * allowlist, another process in /proc; it exists where its mount maps */
	SBX_OOV_OUTSIDE,  /* no mount covers it; it exists at the same path on the host */
	SBX_OOV_SHADOWED, /* a mount of another directory covers it and lacks it; the same
			   * path exists on the host (a tmp mount's /tmp, the workspace's place) */
	_SBX_OOV_MAX,
	_SBX_OOV_INVALID = -EINVAL,
} SbxOutOfView;

/** "hidden", "outside", "shadowed"; NULL for SBX_OOV_NONE. */
const char *sbx_out_of_view_to_string(SbxOutOfView k);

/**
 * For the audit log only, never for a decision: whether vpath (canonical, absolute), which
 * the view answered as absent, names something on the host that the policy does not show,
 * and where (ret_host, the host path that exists; "" for SBX_OOV_NONE). One fstatat(2) with
 * AT_SYMLINK_NOFOLLOW|AT_NO_AUTOMOUNT of a host path, made by the supervisor: nothing is
 * opened and the program is not told (the caller makes it after the reply). Not asked for
 * names inside a mount whose source is the same path (the view looked there already).
 */
SbxOutOfView sbx_view_out_of_view(const SbxView *v, const char *vpath, char *ret_host, size_t size);

typedef enum SbxResolveFlags {
	SBX_RESOLVE_FOLLOW = 1 << 0,	  /* follow a symlink in the last component */
	SBX_RESOLVE_DIRECTORY = 1 << 1,	  /* the object must be a directory (ENOTDIR) */
	SBX_RESOLVE_CREATE = 1 << 2,	  /* a missing last component is success (exists=false) */
	SBX_RESOLVE_EMPTY_PATH = 1 << 3,  /* "" names the start directory (AT_EMPTY_PATH) */
	SBX_RESOLVE_NO_FAST = 1 << 4,	  /* skip the openat2() fast path */
	SBX_RESOLVE_NO_SYMLINKS = 1 << 5, /* ELOOP on any symlink (openat2 RESOLVE_NO_SYMLINKS) */
	SBX_RESOLVE_BENEATH = 1 << 6,	  /* EXDEV on absolute paths/symlinks or ".." above start */
	SBX_RESOLVE_NO_FD = 1 << 7,	  /* the caller needs parent_fd+name only: ret->fd may be -1
					   * even when the object exists (saves syscalls) */
	SBX_RESOLVE_KEEP_MAGIC = 1 << 8,  /* a /proc magic link as last component is returned
					   * (type S_IFLNK) instead of followed: open() reopens
					   * /proc/PID/fd/N through the child's own fd */
} SbxResolveFlags;

typedef struct SbxLookup {
	const char *path;      /* the virtual path as the child gave it */
	int dirfd;	       /* host fd of the start directory for relative paths (borrowed),
				* or -1: start at dir_vpath, walked from the root */
	const char *dir_vpath; /* its canonical virtual path (sbx_view_vpath_of_fd/_host()) */
	pid_t tid, tgid;       /* the caller, for /proc/self and /proc/thread-self; tgid 0:
				* looked up from tid where a walk needs it; tid 0: none */
	unsigned flags;	       /* SbxResolveFlags */
} SbxLookup;

typedef struct SbxResolved {
	/* The pair that names the object for *at() calls: parent_fd is the pinned host
	 * directory, name a single component (never a symlink that was to be followed). For a
	 * mount root, a skeleton directory or a path ending in "."/"..", parent_fd is the object
	 * itself and name is ".". Owned: sbx_resolved_done() closes. */
	int parent_fd;
	bool parent_borrowed; /* parent_fd is the view's (a mount fd): not closed by _done() */
	char name[NAME_MAX + 1];
	int fd; /* O_PATH|O_NOFOLLOW fd of the object, -1 when it does not exist; owned */
	bool exists;
	mode_t type; /* S_IFMT bits when exists */
	bool fixed;  /* a mount root, skeleton directory or /dev node: not removable,
		      * renamable nor writable as a directory entry */
	bool dot;    /* the path ended in "." or "..": rmdir EINVAL, mkdir EEXIST */
	bool trailing_slash;
	bool fast; /* answered by the openat2() fast path (for bench/tests) */
	/* The kernel's own walk of the caller's string, from the caller's root (an absolute
	 * path) or start directory (a relative one), ends at parent_fd/name as this walk did:
	 * the fast path's walk (no symlink followed, one mount), no ".." in the string, a
	 * mount with none beneath it, host_same for an absolute path, the start directory in
	 * the mount for a relative one. It says nothing of what may change afterwards. */
	bool kernel_same;
	const SbxMount *mount; /* NULL: the skeleton */
	SbxAccess access;
	Sensitivity level;
	/* A [[rule]] access = "ask" / "ask-write" applies (access is then SBX_ACCESS_RO, for
	 * every call but an open, which the open handler holds for a decision): which opens,
	 * whether an allowed write may write (the mount is rw), and the rule */
	SbxAsk ask;
	bool ask_writable;
	const PolicyRule *ask_rule;
	/* The fast path's stat of parent_fd/name (without following it), when st_valid: the
	 * stat handler's answer without a second fstatat (issue 20) */
	bool st_valid;
	struct stat st;
	char vpath[PATH_MAX];	  /* canonical virtual path */
	char host_path[PATH_MAX]; /* best-effort host path, for audit */
	/* /proc/self or /proc/thread-self of a proc mount, not followed: its text (the caller's
	 * pid), which the host's entry of that name (the supervisor's) must not answer; fd -1 */
	char synthetic_link[64];
} SbxResolved;

/**
 * Resolves l->path in the view. Returns 0 and fills *ret (the caller calls
 * sbx_resolved_done()), or a negative errno the child should see: -ENOENT (absent, hidden, or
 * outside every mount), -ENOTDIR, -ELOOP (40 symlinks, or NO_SYMLINKS), -ENAMETOOLONG, -EXDEV
 * (BENEATH), -EACCES (a denied directory on the way), -EAGAIN (the tree kept changing under a
 * ".." walk). The access of the object is returned, not enforced: callers decide per syscall.
 */
int sbx_view_resolve(const SbxView *v, const SbxLookup *l, SbxResolved *ret);

void sbx_resolved_done(SbxResolved *r);

/**
 * Maps a host directory or file fd (e.g. the child's cwd from get_fd) to its virtual path:
 * the mount with the longest source prefix of its /proc/self/fd target whose virtual path is
 * not shadowed by a nested mount. Returns 0, -ENOENT (deleted) or -EXDEV (outside the view).
 */
/** The host's /dev/pts the view opened for process.pty (O_PATH), or -1. */
int sbx_view_pts_fd(const SbxView *v);
int sbx_view_vpath_of_fd(const SbxView *v, int fd, char *ret_vpath, size_t size,
			 const SbxMount **ret_mount);

/** Same for a host path string (no check that it exists). */
int sbx_view_vpath_of_host(const SbxView *v, const char *host, char *ret_vpath, size_t size,
			   const SbxMount **ret_mount);

/**
 * The view is in the kernel (a mount namespace that holds it, tracer/kview.c): the program's
 * /proc/PID/{cwd,fd/N} links, read from outside its namespace, are paths of the view
 * already. Set once, before the first notification.
 */
void sbx_view_set_kernel_paths(SbxView *v);
/** Whether sbx_view_set_kernel_paths() was called: the kernel holds the view (its mounts,
 * read-only ones included, are the files' own). */
bool sbx_view_kernel_paths(const SbxView *v);
/** A path read from the child's /proc/PID/{cwd,fd/N}: its virtual path (0), -EXDEV outside
 * the view. sbx_view_vpath_of_host() unless the view is in the kernel. */
int sbx_view_vpath_of_child(const SbxView *v, const char *path, char *ret_vpath, size_t size);

/**
 * Removes, in place, the entries of a getdents64 buffer (struct linux_dirent64 records) of
 * the directory dir_vpath that the view hides: hidden by a rule, or, in the root of a proc
 * mount, the pids that are neither the caller's thread group nor in the tree (EmuHost.in_tree
 * of the view's host). The caller is tid and tgid as in SbxLookup (tgid 0: looked up from
 * tid, only for a proc mount's root; tid 0: none). Returns the new length.
 */
size_t sbx_view_filter_dirents(const SbxView *v, const char *dir_vpath, pid_t tid, pid_t tgid,
			       void *buf, size_t len);

/** Whether any rule can hide something. */
bool sbx_view_has_hide_rules(const SbxView *v);
/** Whether a rule that changes access or sets a level (hide, deny, ro, ask, level) may
 * match a path outside the procfs mounts (the presets' rules hide /proc/net only): judged by
 * the glob's part before its first wildcard, so a glob that starts with a wildcard counts as
 * outside. */
bool sbx_view_rules_outside_proc(const SbxView *v);
/** Whether listings need filtering at all (hide rules or a proc mount): route getdents64. */
bool sbx_view_filters_listings(const SbxView *v);

/**
 * Rewrites a leading /proc/self or /proc/thread-self (under the proc mount at proc_vpath) to
 * the caller's pid: "/proc/self/fd" → "/proc/42/fd", "/proc/thread-self" → "/proc/42/task/43".
 * Copies other paths unchanged. Returns 0 or -ENAMETOOLONG.
 */
int sbx_proc_translate(const char *proc_vpath, const char *path, pid_t tid, pid_t tgid, char *ret,
		       size_t size);

/**
 * Whether vpath names /proc/PID/fd/N or /proc/PID/task/TID/fd/N under the proc mount m: sets
 * the pid owning the fd table and the fd number.
 */
bool sbx_proc_fd_path(const SbxMount *m, const char *vpath, pid_t *ret_pid, int *ret_fd);

/** Lexical normalization of an absolute path: "//" and "/./" collapse, ".." pops. */
int sbx_path_normalize(const char *path, char *ret, size_t size);

struct sockaddr_un;

/**
 * For AF_UNIX bind/connect/sendto with a path address (net/ does the socket call on a dup of
 * the child's socket): resolves l->path in the view and builds the address the supervisor
 * uses instead, which names exactly the object that was checked and fits in sun_path
 * whatever the host path's length:
 *  - connect (bind false): the socket file itself, "/proc/self/fd/<ret->fd>" (the kernel
 *    follows that magic link to the inode, so a swapped name cannot redirect the connect);
 *  - bind: "/proc/self/fd/<ret->parent_fd>/<name>" (bind never follows the last component).
 * *ret pins what the address refers to: keep it until the socket call is done, then
 * sbx_resolved_done(). Errors for the child: ENOENT (absent, hidden), EACCES (denied),
 * EROFS (bind in a ro part), EADDRINUSE (bind on an existing name), ECONNREFUSED (connect to
 * something that is not a socket), ENAMETOOLONG (name too long for the bind address).
 */
int sbx_view_unix_address(const SbxView *v, const SbxLookup *l, bool bind, SbxResolved *ret,
			  struct sockaddr_un *ret_addr, unsigned *ret_len);

/**
 * Whether a bind() of the child's own path may use the child's bytes: path is relative and
 * names an entry of the directory it starts from ("name", "./name"), which is r->name in
 * r->parent_fd. The kernel records the sun_path a bind() gave as the socket's name
 * (getsockname(), the peer's accept() and getpeername()); "/proc/self/fd/N/name" would be
 * what the program reads back, and it cannot connect to that. net/ then binds the child's
 * address from a thread whose working directory is r->parent_fd.
 */
bool sbx_view_unix_name_in_parent(const char *path, const SbxResolved *r);

/**
 * COMPAT (no user namespace, so no helper can bind the child's absolute name "/a/b/name" as
 * given, as in a default container): an address for the bind of r->name in r->parent_fd
 * (what "/a/b" resolved to) that sbx_view_unix_unalias() turns back into the child's name:
 * "<run directory>/u/<n>/a/b/name", where "<n>/a" are directories of the run's private
 * directory and "<n>/a/b" a symbolic link to /proc/self/fd/<parent_fd> (the kernel follows
 * it to the directory that was checked). name must be absolute with no "." or ".."
 * components; n must be unique among the binds in progress. Call sbx_view_unix_alias_done()
 * once the bind is done, bound or not. Returns 0, -ENAMETOOLONG (does not fit in sun_path),
 * -EPERM (the run directory is below a mount of the view: the program could swap the link),
 * -errno.
 */
int sbx_view_unix_alias(const SbxView *v, const char *name, const SbxResolved *r, unsigned n,
			struct sockaddr_un *ret_addr, unsigned *ret_len);
/** Removes the link and directories of sbx_view_unix_alias() for (name, n). */
void sbx_view_unix_alias_done(const SbxView *v, const char *name, unsigned n);
/**
 * Whether addr (of length *len) is an address of sbx_view_unix_alias(): then rewrites it in
 * place to the name the program bound, and *len with it (for getsockname(), getpeername(),
 * accept()). v may be NULL (false).
 */
bool sbx_view_unix_unalias(const SbxView *v, struct sockaddr_un *addr, unsigned *len);

/**
 * After a bind done by the supervisor (umask 0): gives the new socket file the mode the child
 * would have got, 0777 & ~umask. Returns 0 or -errno.
 */
int sbx_view_unix_bound(const SbxResolved *r, mode_t umask);

/**
 * The operations above as the socket handlers of net/ reach them: through their request's
 * host (EmuHost.unix_names, common/handler.h; tracer/ sets it to this), in the request's
 * view, so that net/ includes nothing of emulation/.
 */
extern const EmuUnixNames sbx_view_unix_names;
