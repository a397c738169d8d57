/* SPDX-License-Identifier: MIT */
/*
 * Building and tearing down the view: mount source fds, the per-run skeleton root, tmp
 * directories, the /dev allowlist; host → virtual path mapping; rules; listing filters.
 */
#include "emulation/path/view.h"

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/util.h"
#include "emulation/path/internal.h"

#define ERR(...)                                                                                   \
	do {                                                                                       \
		if (reterr && reterr_size)                                                         \
			(void) snprintf(reterr, reterr_size, __VA_ARGS__);                         \
	} while (0)

static const char *const dev_names[] = {"null", "zero", "full", "random", "urandom"};

const char *sbx_access_to_string(SbxAccess a)
{
	static const char *const names[_SBX_ACCESS_MAX] = {
		[SBX_ACCESS_HIDDEN] = "hidden",
		[SBX_ACCESS_DENIED] = "denied",
		[SBX_ACCESS_RO] = "ro",
		[SBX_ACCESS_RW] = "rw",
	};
	return a >= 0 && a < _SBX_ACCESS_MAX ? names[a] : NULL;
}

int sbx_path_normalize(const char *path, char *ret, size_t size)
{
	size_t n = 0;
	const char *p = path;

	if (size < 2 || path[0] != '/')
		return -EINVAL;
	ret[n++] = '/';
	while (*p) {
		const char *c;
		size_t len;

		while (*p == '/')
			p++;
		c = p;
		while (*p && *p != '/')
			p++;
		len = (size_t) (p - c);
		if (len == 0 || (len == 1 && c[0] == '.'))
			continue;
		if (len == 2 && c[0] == '.' && c[1] == '.') {
			while (n > 1 && ret[n - 1] != '/')
				n--;
			if (n > 1)
				n--;
			continue;
		}
		if (n > 1)
			ret[n++] = '/';
		if (n + len + 1 > size)
			return -ENAMETOOLONG;
		memcpy(ret + n, c, len);
		n += len;
		if (n >= size)
			return -ENAMETOOLONG;
	}
	ret[n] = 0;
	return 0;
}

static int fd_host_path(int fd, char *buf, size_t size)
{
	char link[64];
	ssize_t n;

	(void) snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, size - 1);
	if (n < 0)
		return -errno;
	if ((size_t) n >= size - 1)
		return -ENAMETOOLONG;
	buf[n] = 0;
	if (buf[0] != '/')
		return -EXDEV; /* "pipe:[…]", "anon_inode:…" */
	if (n > 10 && streq(buf + n - 10, " (deleted)"))
		return -ENOENT;
	return 0;
}

static int mkdir_p_at(int dirfd, const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (char *p = buf; *p; p++) {
		if (*p != '/' || p == buf)
			continue;
		*p = 0;
		if (mkdirat(dirfd, buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdirat(dirfd, buf, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* A name for the passwd/group entry of id: the host's (the user's own, not a list of the
 * host's users) if it is a plain name, else fallback. */
static void own_name(bool group, unsigned id, const char *fallback, char *buf, size_t size)
{
	char tmp[4096];
	const char *name = NULL;

	if (group) {
		struct group gr, *res = NULL;

		if (getgrgid_r((gid_t) id, &gr, tmp, sizeof(tmp), &res) == 0 && res)
			name = res->gr_name;
	} else {
		struct passwd pw, *res = NULL;

		if (getpwuid_r((uid_t) id, &pw, tmp, sizeof(tmp), &res) == 0 && res)
			name = res->pw_name;
	}
	if (!name || !name[0] || strlen(name) >= size || strpbrk(name, ":\n,"))
		name = fallback;
	(void) snprintf(buf, size, "%s", name);
}

static int write_skeleton_file(int dirfd, const char *name, const void *data, size_t len)
{
	_cleanup_close_ int fd = -1;
	int r;

	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	r = write_all(fd, data, len);
	if (r < 0)
		return r;
	if (fchmod(fd, 0644) < 0) /* whatever the supervisor's umask */
		return -errno;
	return 0;
}

/* An O_PATH fd of the skeleton's /etc, made if needed; -errno. */
static int skeleton_etc(SbxView *v)
{
	int r = mkdir_p_at(v->root_fd, "etc"), fd;

	if (r < 0)
		return r;
	fd = openat(v->root_fd, "etc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * /etc/passwd and /etc/group when the policy shows none of the host's /etc there (no mount
 * at / or /etc): root, the running user with the home directory home (a virtual path of the
 * view), nobody/nogroup. Read-only skeleton files, so getpwuid(getuid()), id, whoami and
 * ~ expansion work without the host's user list. A hide rule on the path still hides them.
 */
static int synth_passwd(SbxView *v, const char *home)
{
	_cleanup_close_ int etc = -1;
	char user[64], group[64], text[1024];
	uid_t uid = getuid();
	gid_t gid = getgid();
	int r;

	if (v->root_mount || view_mount_of(v, "/etc/passwd") || view_mount_of(v, "/etc/group"))
		return 0;
	if (strpbrk(home, ":\n"))
		home = "/";
	etc = skeleton_etc(v);
	if (etc < 0)
		return etc;

	if (uid == 0)
		(void) snprintf(text, sizeof(text), "root:x:0:0:root:%s:/bin/sh\n", home);
	else {
		own_name(false, uid, "user", user, sizeof(user));
		(void) snprintf(text, sizeof(text),
				"root:x:0:0:root:/:/bin/sh\n%s:x:%u:%u:%s:%s:/bin/sh\n", user,
				(unsigned) uid, (unsigned) gid, user, home);
	}
	if (uid != 65534)
		(void) snprintf(text + strlen(text), sizeof(text) - strlen(text),
				"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
	r = write_skeleton_file(etc, "passwd", text, strlen(text));
	if (r < 0)
		return r;

	(void) snprintf(text, sizeof(text), "root:x:0:\n");
	if (gid != 0) {
		own_name(true, gid, "user", group, sizeof(group));
		(void) snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s:x:%u:\n",
				group, (unsigned) gid);
	}
	if (gid != 65534)
		(void) snprintf(text + strlen(text), sizeof(text) - strlen(text),
				"nogroup:x:65534:\n");
	return write_skeleton_file(etc, "group", text, strlen(text));
}

/* The whole of a host file of at most 1 MiB into *ret (malloc'd): its length, or -errno. */
static ssize_t read_small_file(const char *path, char **ret)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	size_t len;
	int r;

	if (fd < 0)
		return -errno;
	r = read_full_fd(fd, (1 << 20) - 1, ret, &len);
	return r < 0 ? r : (ssize_t) len;
}

/*
 * /etc/hosts and /etc/nsswitch.conf under the same condition: "localhost" resolves to the
 * loopback addresses (socket_helper.HOST of Python's tests, servers on localhost in loopback
 * mode); without them glibc asks DNS first for every name, then gives up on "localhost".
 * Nothing of the host's network is shown; /etc/services and /etc/protocols are copied.
 */
static int synth_hosts(SbxView *v)
{
	static const char hosts[] = "127.0.0.1\tlocalhost\n"
				    "::1\tlocalhost ip6-localhost ip6-loopback\n";
	static const char nss[] = "passwd: files\ngroup: files\nshadow: files\n"
				  "hosts: files dns\nnetworks: files\n";
	_cleanup_close_ int etc = -1;
	int r;

	if (v->root_mount || view_mount_of(v, "/etc/hosts"))
		return 0;
	etc = skeleton_etc(v);
	if (etc < 0)
		return etc;
	r = write_skeleton_file(etc, "hosts", hosts, sizeof(hosts) - 1);
	if (r < 0)
		return r;
	/* the IANA lists (getservbyname(), getprotobyname(), getaddrinfo() with a service
	 * name): public data, copied from the host when it has them */
	for (size_t i = 0; i < 2; i++) {
		static const char *const names[] = {"services", "protocols"};
		char path[32], *buf = NULL;
		ssize_t n;

		snprintf(path, sizeof(path), "/etc/%s", names[i]);
		if (view_mount_of(v, path) || (n = read_small_file(path, &buf)) < 0)
			continue;
		r = write_skeleton_file(etc, names[i], buf, (size_t) n);
		free(buf);
		if (r < 0)
			return r;
	}
	if (view_mount_of(v, "/etc/nsswitch.conf"))
		return 0;
	return write_skeleton_file(etc, "nsswitch.conf", nss, sizeof(nss) - 1);
}

/* Whether vpath, if shown at all, shows the host's own directory of that name: the covering
 * mount's (canonical) source, extended by the rest of vpath, is where vpath leads on the host
 * (/lib is /usr/lib on a merged-/usr system, in the view as on the host). */
static bool identity_mapped(const SbxView *v, const char *vpath)
{
	const SbxMount *m = view_mount_of(v, vpath);
	char host[PATH_MAX], real[PATH_MAX];

	if (!m)
		return true;
	if (m->kind != SBX_MOUNT_DIR || !realpath(vpath, real))
		return false;
	if (snprintf(host, sizeof(host), "%s%s", m->source,
		     streq(m->vpath, "/") ? vpath : vpath + m->vlen) >= (int) sizeof(host))
		return false;
	return streq(host, real);
}

/*
 * The loader's cache (glibc's format 1.1, the only one glibc 2.32+ writes): a 48-byte header
 * ("glibc-ld.so.cache1.1", nlibs, the string table's length, …), nlibs entries of 24 bytes
 * (flags, key and value as offsets from the start of the file, …), then the strings.
 * Entries keep their order (the loader searches them by binary search), so dropping some
 * leaves a valid cache.
 */
#define LDC_MAGIC  "glibc-ld.so.cache1.1"
#define LDC_HEADER 48
#define LDC_ENTRY  24

static uint32_t ldc_u32(const char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The string at off, or NULL when it does not end inside the file. */
static const char *ldc_str(const char *buf, size_t len, uint32_t off)
{
	if (off >= len || !memchr(buf + off, 0, len - off))
		return NULL;
	return buf + off;
}

/* A library path of the cache that the view shows as the host has it. */
static bool ldc_visible(const SbxView *v, const char *path)
{
	const SbxMount *m = path[0] == '/' ? view_mount_of(v, path) : NULL;

	if (!m || m->kind != SBX_MOUNT_DIR)
		return false;
	/* the mounts that may hold libraries were checked to be the host's own (below) */
	return streq(m->vpath, "/usr") || streq(m->vpath, "/lib") || streq(m->vpath, "/lib64");
}

/* Keeps the entries whose library the view shows at the host's path (ldc_visible()), drops
 * the others and blanks their strings, so the copy names nothing the view hides. -EINVAL for
 * a cache not in the format above. */
static int ldc_filter(const SbxView *v, char *buf, size_t len)
{
	_cleanup_free_ uint8_t *show = NULL, *kept_byte = NULL;
	const char *last_dir = NULL;
	size_t last_len = 0, strings;
	bool last_show = false;
	uint32_t n, kept = 0;
	char *ent = buf + LDC_HEADER;

	if (len < LDC_HEADER || memcmp(buf, LDC_MAGIC, strlen(LDC_MAGIC)) != 0)
		return -EINVAL;
	n = ldc_u32(buf + 20);
	if (n > (len - LDC_HEADER) / LDC_ENTRY)
		return -EINVAL;
	strings = LDC_HEADER + (size_t) n * LDC_ENTRY;
	show = calloc(n ? n : 1, 1);
	if (!show)
		return -ENOMEM;
	/* which entries stay; they come grouped by directory: ask the view once per
	 * directory */
	for (uint32_t i = 0; i < n; i++) {
		const char *e = ent + (size_t) i * LDC_ENTRY;
		const char *key = ldc_str(buf, len, ldc_u32(e + 4));
		const char *val = ldc_str(buf, len, ldc_u32(e + 8));
		const char *slash;

		if (!key || !val || (size_t) (key - buf) < strings ||
		    (size_t) (val - buf) < strings)
			return -EINVAL;
		slash = strrchr(val, '/');
		if (!last_dir || !slash || (size_t) (slash - val) != last_len ||
		    memcmp(val, last_dir, last_len) != 0) {
			last_show = ldc_visible(v, val);
			last_dir = val;
			last_len = slash ? (size_t) (slash - val) : 0;
		}
		show[i] = last_show;
		kept += last_show;
	}
	if (kept == n)
		return 0; /* the view shows every library: the host's cache as it is */

	/* ldconfig shares string tails ("libc.so.6" inside ".../libc.so.6"): a byte that a
	 * kept entry uses stays, the other bytes of dropped entries' strings are blanked */
	kept_byte = calloc(len, 1);
	if (!kept_byte)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		for (int k = 4; show[i] && k <= 8; k += 4) {
			uint32_t off = ldc_u32(ent + (size_t) i * LDC_ENTRY + k);

			memset(kept_byte + off, 1, strlen(buf + off) + 1);
		}
	for (uint32_t i = 0; i < n; i++)
		for (int k = 4; !show[i] && k <= 8; k += 4)
			for (char *c = buf + ldc_u32(ent + (size_t) i * LDC_ENTRY + k); *c; c++)
				if (!kept_byte[c - buf])
					*c = 0;
	/* the kept entries to the front, the slots after them zeroed */
	kept = 0;
	for (uint32_t i = 0; i < n; i++)
		if (show[i])
			memmove(ent + (size_t) kept++ * LDC_ENTRY, ent + (size_t) i * LDC_ENTRY,
				LDC_ENTRY);
	memset(ent + (size_t) kept * LDC_ENTRY, 0, (size_t) (n - kept) * LDC_ENTRY);
	memcpy(buf + 20, &kept, sizeof(kept));
	return 0;
}

/*
 * /etc/ld.so.cache when the policy shows none of the host's /etc there: a read-only copy of
 * the host's, made per run, with only the libraries the view shows; made when /usr, /lib and
 * /lib64 are shown where the host has them (or not at all) and the policy has no hide rules
 * (which could hide a library the copy would name). Without it the dynamic loader of every
 * program searches the glibc-hwcaps, tls and x86_64 subdirectories of each default directory
 * for each library: 25 notified calls instead of 8 to start a program linked with libc alone,
 * every one a round trip to the supervisor (docs/performance.md).
 */
static int copy_ld_cache(SbxView *v)
{
	_cleanup_close_ int etc = -1, in = -1;
	_cleanup_free_ char *buf = NULL;
	size_t len;

	if (v->root_mount || v->has_hide_rules || view_mount_of(v, "/etc/ld.so.cache"))
		return 0;
	if (!identity_mapped(v, "/usr") || !identity_mapped(v, "/lib") ||
	    !identity_mapped(v, "/lib64"))
		return 0;
	in = open("/etc/ld.so.cache", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return 0; /* none: the loader searches, as without the copy */
	if (read_full_fd(in, 16 << 20, &buf, &len) < 0 || ldc_filter(v, buf, len) < 0)
		return 0; /* too large, unreadable, or a format we do not know: likewise */
	etc = skeleton_etc(v);
	if (etc < 0)
		return etc;
	return write_skeleton_file(etc, "ld.so.cache", buf, len);
}

/* The home of the synthesized passwd entry: the HOME the policy sets (if absolute), else
 * process.cwd, else the first rw or tmp mount, else "/" (docs/filesystem.md). */
static const char *home_vpath(const Policy *p)
{
	for (char **e = p->process.env_set; e && *e; e++)
		if (strncmp(*e, "HOME=/", 6) == 0)
			return *e + 5;
	if (p->process.cwd)
		return p->process.cwd;
	for (size_t i = 0; i < p->n_mounts; i++)
		if (p->mounts[i].mode == MOUNT_RW || p->mounts[i].mode == MOUNT_TMP)
			return p->mounts[i].path;
	return "/";
}

static int cmp_mount(const void *a, const void *b)
{
	return strcmp(((const SbxMount *) a)->vpath, ((const SbxMount *) b)->vpath);
}

/* SbxMount.host_same: a directory mount whose virtual path the host resolves to its source.
 * The source is canonical (readlink of its fd), so a vpath spelled the same needs no call;
 * another (/bin of /usr/bin on a merged-/usr host) costs one stat, once per run. */
static bool mount_host_same(const SbxMount *m)
{
	struct stat a, b;

	if (m->kind != SBX_MOUNT_DIR || m->fd < 0 || m->tmp)
		return false;
	if (streq(m->vpath, m->source))
		return true;
	return stat(m->vpath, &a) == 0 && fstat(m->fd, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

static const char *scratch_base(void)
{
	const char *e = getenv("XDG_RUNTIME_DIR");
	struct stat st;

	if (e && e[0] == '/' && stat(e, &st) >= 0 && S_ISDIR(st.st_mode) && access(e, W_OK) == 0)
		return e;
	e = getenv("TMPDIR");
	if (e && e[0] == '/' && stat(e, &st) >= 0 && S_ISDIR(st.st_mode) && access(e, W_OK) == 0)
		return e;
	return "/tmp";
}

/* Whether dir, a host directory, is visible through a mount of the view (it is, or is below,
 * a mount's source). */
static bool host_dir_in_view(const SbxView *v, const char *dir)
{
	char real[PATH_MAX];

	if (!realpath(dir, real))
		return false;
	for (size_t i = 0; i < v->n_mounts; i++) {
		const SbxMount *m = &v->mounts[i];

		if (m->kind != SBX_MOUNT_PROC &&
		    (streq(m->source, "/") || (strncmp(real, m->source, m->slen) == 0 &&
					       (real[m->slen] == '/' || real[m->slen] == 0))))
			return true;
	}
	return false;
}

static bool usable_dir(const char *d)
{
	struct stat st;

	return d && d[0] == '/' && stat(d, &st) >= 0 && S_ISDIR(st.st_mode) && access(d, W_OK) == 0;
}

/* Where the skeleton goes: a tmpfs when one is ours to use, and a directory the view does not
 * show ($XDG_RUNTIME_DIR, /dev/shm, $TMPDIR, /tmp, /var/tmp: the first of those), so that the
 * program cannot reach its own skeleton through a mount (a policy that mounts /tmp or /dev/shm
 * read-write could otherwise add to it). The skeleton is a dozen empty directories made and removed
 * per run; on this VM's ext4 /tmp that took 2.9 ms a run (the allocator searches past recently
 * deleted inodes), on tmpfs 0.15 ms. When every candidate is in the view (a mount at /), the first
 * usable one: the skeleton then only holds the ancestors of nested mount points. tmp mounts hold
 * the program's data and stay on scratch_base(). */
size_t scratch_candidate_bases(const char *ret[static SCRATCH_BASES_MAX])
{
	struct statfs sfs;
	struct stat st;
	const char *cand[SCRATCH_BASES_MAX] = {getenv("XDG_RUNTIME_DIR"), NULL, getenv("TMPDIR"),
					       "/tmp", "/var/tmp"};
	size_t n = 0;

	if (statfs("/dev/shm", &sfs) >= 0 && sfs.f_type == TMPFS_MAGIC &&
	    stat("/dev/shm", &st) >= 0 && (st.st_mode & S_ISVTX))
		cand[1] = "/dev/shm";
	for (size_t i = 0; i < ARRAY_SIZE(cand); i++) {
		bool dup = false;

		if (!usable_dir(cand[i]))
			continue;
		for (size_t j = 0; j < n; j++)
			dup = dup || streq(ret[j], cand[i]);
		if (!dup)
			ret[n++] = cand[i];
	}
	return n;
}

static const char *skeleton_base(const SbxView *v)
{
	const char *cand[SCRATCH_BASES_MAX];
	size_t n = scratch_candidate_bases(cand);

	for (size_t i = 0; i < n; i++)
		if (!host_dir_in_view(v, cand[i]))
			return cand[i];
	return n > 0 ? cand[0] : "/tmp";
}

/* A tmp directory the view removes: made and locked (scratch.c), its path and lock kept. */
static int view_add_scratch(SbxView *v, const char *base, const char *prefix, char *path,
			    size_t size)
{
	int *locks, fd, r;

	locks = realloc(v->tmp_locks, (v->n_tmp_locks + 1) * sizeof(*locks));
	if (!locks)
		return -ENOMEM;
	v->tmp_locks = locks;
	r = scratch_make(base, prefix, path, size, &fd);
	if (r < 0)
		return r;
	if (strv_push(&v->tmp_paths, path) < 0) {
		(void) rmdir(path);
		if (fd >= 0)
			(void) close(fd);
		return -ENOMEM;
	}
	v->tmp_locks[v->n_tmp_locks++] = fd;
	return 0;
}

static int add_mount(SbxView *v, const char *vpath, const char *source, int fd, MountMode mode,
		     SbxMountKind kind, bool owned, bool keep)
{
	char norm[PATH_MAX], host[PATH_MAX];
	SbxMount *m;
	struct statfs sfs;
	int r;

	r = sbx_path_normalize(vpath, norm, sizeof(norm));
	if (r < 0)
		return r;
	if (source)
		snprintf(host, sizeof(host), "%s", source);
	else {
		r = fd_host_path(fd, host, sizeof(host));
		if (r < 0)
			return r;
	}
	if (kind == SBX_MOUNT_DIR && fstatfs(fd, &sfs) >= 0 && sfs.f_type == PROC_SUPER_MAGIC)
		kind = SBX_MOUNT_PROC;
	m = realloc(v->mounts, (v->n_mounts + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	v->mounts = m;
	m = &v->mounts[v->n_mounts];
	*m = (SbxMount){
		.vpath = strdup(norm),
		.vlen = strlen(norm),
		.source = strdup(host),
		.slen = strlen(host),
		.fd = fd,
		.mode = mode,
		.kind = kind,
		.owned = owned,
		.keep = keep,
	};
	if (!m->vpath || !m->source) {
		free(m->vpath);
		free(m->source);
		return -ENOMEM;
	}
	v->n_mounts++;
	return 0;
}

/*
 * A mount whose source has a procfs mounted below it (a "/" mount shows the host's /proc):
 * walked as a plain directory, its "self" would be the supervisor and every host process
 * would be listed. Each such procfs becomes a proc mount of its own at the matching virtual
 * path (self is the caller, other processes hidden, fd/N reopen rules), unless the policy
 * mounts something there or a deeper mount covers the place. procfs mounted inside another
 * procfs (/proc/sys bind mounts in containers) are part of the outer one.
 */
static int add_nested_procs(SbxView *v)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, *mp, *fstype;
	size_t n_dir = v->n_mounts, cap = 0;
	int r = 0;

	if (!f) {
		v->procfs_below_sources = true; /* unknown: assume one */
		return 0;			/* no procfs to find: nothing shows one either */
	}
	while (r >= 0 && mountinfo_next(f, &line, &cap, &mp, &fstype) > 0) {
		char vpath[PATH_MAX];
		bool covered = false;

		if (!streq(fstype, "proc"))
			continue;
		for (size_t i = 0; i < n_dir && !covered; i++) {
			const SbxMount *m = &v->mounts[i];
			size_t slen = streq(m->source, "/") ? 0 : m->slen;

			if (m->kind != SBX_MOUNT_DIR || strncmp(mp, m->source, slen) != 0 ||
			    (mp[slen] != '/' && mp[slen] != 0))
				continue;
			/* at or below the source: no kernel view (its bind would bring it in) */
			v->procfs_below_sources = true;
			if (!mp[slen] || !mp[slen + 1])
				continue; /* at the source itself: nothing below it to add */
			if ((size_t) snprintf(vpath, sizeof(vpath), "%s%s",
					      streq(m->vpath, "/") ? "" : m->vpath,
					      mp + slen) >= sizeof(vpath))
				continue;
			for (size_t k = 0; k < v->n_mounts && !covered; k++) {
				const SbxMount *o = &v->mounts[k];

				/* the policy's own mount there, a proc already added, or a deeper
				 * mount that hides the place */
				if (streq(o->vpath, vpath) ||
				    (o->kind == SBX_MOUNT_PROC &&
				     vpath_has_prefix(vpath, o->vpath, o->vlen)) ||
				    (o->vlen > m->vlen &&
				     vpath_has_prefix(vpath, o->vpath, o->vlen) &&
				     (m->vlen == 1 ||
				      vpath_has_prefix(o->vpath, m->vpath, m->vlen))))
					covered = true;
			}
			if (!covered) {
				int fd = open(mp, O_PATH | O_DIRECTORY | O_CLOEXEC);
				struct statfs sfs;

				if (fd < 0)
					break;
				if (fstatfs(fd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC) {
					(void) close(fd);
					break;
				}
				r = add_mount(v, vpath, NULL, fd, MOUNT_RO, SBX_MOUNT_PROC, false,
					      false);
				if (r < 0) {
					(void) close(fd);
					break;
				}
				covered = true;
			}
		}
	}
	free(line);
	fclose(f);
	return r;
}

int sbx_default_get_fd(void *userdata, pid_t pid, int fd)
{
	_cleanup_close_ int pidfd = -1;
	char path[64];
	int r;

	(void) userdata;
	if (fd == AT_FDCWD) {
		(void) snprintf(path, sizeof(path), "/proc/%d/cwd", (int) pid);
		r = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		return r < 0 ? -errno : r;
	}
	if (fd < 0)
		return -EBADF;
	/* COMPAT: pidfd_getfd refused (a container's profile): tracer/pidfd-cache.c says why
	 * an O_PATH reopen serves */
	if (!pidfd_getfd_usable())
		return child_fd_open(pid, fd, O_PATH);
	/* pid is the calling thread, often not a leader (common/util.h) */
	pidfd = pidfd_open_task(pid, NULL);
	if (pidfd < 0)
		return pidfd;
	r = (int) syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	return r < 0 ? -errno : r; /* pidfd_getfd sets O_CLOEXEC on the new fd */
}

int sbx_default_get_path(void *userdata, pid_t pid, int fd, char *buf, size_t size)
{
	char link[64];
	ssize_t n;

	(void) userdata;
	if (fd == AT_FDCWD)
		(void) snprintf(link, sizeof(link), "/proc/%d/cwd", (int) pid);
	else if (fd >= 0)
		(void) snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int) pid, fd);
	else
		return -EBADF;
	n = readlink(link, buf, size - 1);
	if (n < 0)
		return errno == ENOENT && fd != AT_FDCWD ? -EBADF : -errno;
	if ((size_t) n >= size - 1)
		return -ENAMETOOLONG;
	buf[n] = 0;
	return 0;
}

int sbx_default_get_umask(void *userdata, pid_t pid)
{
	char path[64], buf[2048], *p;
	_cleanup_close_ int fd = -1;
	ssize_t n;

	(void) userdata;
	(void) snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	p = strstr(buf, "\nUmask:");
	if (!p)
		return -ENODATA;
	return (int) (strtoul(p + 7, NULL, 8) & 0777);
}

static const EmuHost default_host = {
	.get_fd = sbx_default_get_fd,
	.get_umask = sbx_default_get_umask,
	.get_path = sbx_default_get_path,
};

const EmuHost *sbx_view_default_host(void)
{
	return &default_host;
}

int sbx_host_get_fd(const EmuHost *h, pid_t pid, int fd)
{
	if (!h || !h->get_fd)
		return sbx_default_get_fd(NULL, pid, fd);
	return h->get_fd(h->userdata, pid, fd);
}

int sbx_host_get_umask(const EmuHost *h, pid_t pid)
{
	if (!h || !h->get_umask)
		return sbx_default_get_umask(NULL, pid);
	return h->get_umask(h->userdata, pid);
}

int sbx_view_new(const Policy *policy, const EmuHost *host, unsigned flags, SbxView **ret_view,
		 char *reterr, size_t reterr_size)
{
	_cleanup_(sbx_view_freep) SbxView *v = NULL;
	char path[PATH_MAX];
	bool dev_mounted = false;
	size_t n_dev = 0;
	const char *base;
	int r;

	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->policy = policy;
	v->flags = flags;
	r = sbx_default_get_umask(NULL, getpid());
	v->supervisor_umask = r >= 0 ? (mode_t) r : 0777; /* unknown: always fix modes up */
	v->run_fd = v->run_lock_fd = v->root_fd = v->dev_fd = v->pts_fd = -1;
	v->host = host ? host : &default_host;

	for (size_t i = 0; i < policy->n_mounts; i++) {
		const PolicyMount *pm = &policy->mounts[i];
		_cleanup_close_ int fd = -1;
		bool owned = false;
		char norm[PATH_MAX];

		if (!pm->path || pm->path[0] != '/') {
			ERR("mount path '%s' is not absolute", pm->path ? pm->path : "");
			return -EINVAL;
		}
		r = sbx_path_normalize(pm->path, norm, sizeof(norm));
		if (r < 0)
			return r;
		if (streq(norm, "/dev"))
			dev_mounted = true;
		if (pm->mode == MOUNT_TMP) {
			bool removed = (!pm->keep || (flags & SBX_VIEW_PROBE)) &&
				       !(flags & SBX_VIEW_KEEP_TMP);

			/* one the run removes is locked while it lives (scratch.c) */
			if (removed) {
				r = view_add_scratch(v, scratch_base(), "sbxtrace-tmp-", path,
						     sizeof(path));
				if (r < 0)
					return r;
				owned = true;
			} else {
				/* kept: a name no run's list can name (scratch.c) */
				(void) snprintf(path, sizeof(path), "%s/sbxtrace-keep-XXXXXX",
						scratch_base());
				if (!mkdtemp(path))
					return -errno;
			}
			fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				return -errno;
		} else {
			const char *src = pm->source ? pm->source : pm->path;

			fd = open(src, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0) {
				r = -errno;
				ERR("mount %s: source '%s': %s", norm, src, strerror(-r));
				return r;
			}
		}
		r = add_mount(v, norm, NULL, fd, pm->mode == MOUNT_TMP ? MOUNT_RW : pm->mode,
			      SBX_MOUNT_DIR, owned, pm->keep);
		if (r < 0)
			return r;
		v->mounts[v->n_mounts - 1].tmp = pm->mode == MOUNT_TMP;
		fd = -1; /* owned by the mount now */
	}

	/* One private directory per run for the skeleton root */
	base = skeleton_base(v);
	r = scratch_make(base, "sbxtrace-", path, sizeof(path), &v->run_lock_fd);
	if (r < 0) {
		ERR("cannot create a run directory under %s: %s", base, strerror(-r));
		return r;
	}
	v->run_path = strdup(path);
	if (!v->run_path)
		return -ENOMEM;
	v->run_hidden = !host_dir_in_view(v, base);
	v->run_fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (v->run_fd < 0)
		return -errno;
	/* after every lock: a run directory with its list is a live run's or a dead one's */
	if (!(flags & SBX_VIEW_KEEP_TMP)) {
		r = scratch_write_list(v->run_lock_fd, v->tmp_paths, v->tmp_locks);
		if (r < 0)
			return r;
	}
	if (mkdirat(v->run_fd, "root", 0755) < 0)
		return -errno;
	v->root_path = strdup_printf("%s/root", path);
	if (!v->root_path)
		return -ENOMEM;
	v->root_fd = openat(v->run_fd, "root", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (v->root_fd < 0)
		return -errno;

	r = add_nested_procs(v);
	if (r < 0)
		return r;

	if (!dev_mounted) {
		_cleanup_close_ int fd = -1;

		v->dev_fd = open("/dev", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (v->dev_fd < 0)
			return -errno;
		for (size_t i = 0; i < ARRAY_SIZE(dev_names); i++)
			v->dev_allow[n_dev++] = dev_names[i];
		if (policy->process.tty)
			v->dev_allow[n_dev++] = "tty";
		if (policy->process.pty) {
			/* ptmx is a node of the allowlist; pts/ a directory whose entries are
			 * only the ptys the tree created (resolve.c, EmuHost.open_pts) */
			v->pts_fd = open("/dev/pts", O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (v->pts_fd < 0) {
				r = -errno;
				ERR("process.pty: /dev/pts: %s", strerror(-r));
				return r;
			}
			v->dev_allow[n_dev++] = "ptmx";
		}
		r = mkdirat(v->root_fd, "dev", 0755);
		if (r < 0 && errno != EEXIST)
			return -errno;
		fd = openat(v->root_fd, "dev", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		/* Placeholders, so that a listing of /dev shows the allowlist; lookups answer
		 * the host device instead (resolve.c). */
		for (size_t i = 0; i < n_dev; i++) {
			char p[PATH_MAX];
			int k;

			(void) snprintf(p, sizeof(p), "%s/dev/%s", v->root_path, v->dev_allow[i]);
			k = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
			if (k < 0)
				return -errno;
			(void) close(k);
		}
		if (v->pts_fd >= 0 && mkdirat(fd, "pts", 0755) < 0)
			return -errno;
		/* /dev/fd and /dev/std*: what bash's process substitution and "cat /dev/stdin"
		 * use; they lead into the proc mount, whose fd/N reopen rules apply. */
		for (size_t i = 0; i < v->n_mounts; i++) {
			static const char *const links[][2] = {
				{"fd", "self/fd"},
				{"stdin", "self/fd/0"},
				{"stdout", "self/fd/1"},
				{"stderr", "self/fd/2"},
			};

			if (v->mounts[i].kind != SBX_MOUNT_PROC)
				continue;
			for (size_t j = 0; j < ARRAY_SIZE(links); j++) {
				char target[PATH_MAX];

				(void) snprintf(target, sizeof(target), "%s/%s", v->mounts[i].vpath,
						links[j][1]);
				if (symlinkat(target, fd, links[j][0]) < 0)
					return -errno;
			}
			v->dev_links = true;
			break;
		}
		(void) snprintf(path, sizeof(path), "%s/dev", v->root_path);
		r = add_mount(v, "/dev", path, fd, MOUNT_RO, SBX_MOUNT_DEV, false, false);
		if (r < 0)
			return r;
		fd = -1;
	}

	qsort(v->mounts, v->n_mounts, sizeof(*v->mounts), cmp_mount);
	for (size_t i = 0; i < v->n_mounts; i++) {
		SbxMount *m = &v->mounts[i];

		if (i > 0 && streq(m->vpath, v->mounts[i - 1].vpath)) {
			ERR("two mounts at %s", m->vpath);
			return -EINVAL;
		}
		if (streq(m->vpath, "/"))
			v->root_mount = m;
		else {
			r = mkdir_p_at(v->root_fd, m->vpath + 1);
			if (r < 0) {
				ERR("skeleton directory for %s: %s", m->vpath, strerror(-r));
				return r;
			}
		}
		for (size_t j = 0; j < v->n_mounts; j++)
			if (j != i && v->mounts[j].vlen > m->vlen &&
			    vpath_has_prefix(v->mounts[j].vpath, m->vpath, m->vlen))
				m->nested = true;
		m->host_same = mount_host_same(m);
	}

	for (size_t i = 0; i < policy->n_rules; i++) {
		if (policy->rules[i].access == RULE_ACCESS_UNSET && !policy->rules[i].level)
			continue;
		v->has_rules = true;
		if (policy->rules[i].access == RULE_ACCESS_HIDE)
			v->has_hide_rules = true;
	}
	if (!(flags & SBX_VIEW_FILES_LATER)) {
		r = sbx_view_write_files(v, reterr, reterr_size);
		if (r < 0)
			return r;
	}

	*ret_view = TAKE_PTR(v);
	return 0;
}

int sbx_view_write_files(SbxView *v, char *reterr, size_t reterr_size)
{
	int r;

	r = synth_passwd(v, home_vpath(v->policy));
	if (r < 0) {
		ERR("skeleton /etc/passwd: %s", strerror(-r));
		return r;
	}
	r = synth_hosts(v);
	if (r < 0) {
		ERR("skeleton /etc/hosts: %s", strerror(-r));
		return r;
	}
	r = copy_ld_cache(v);
	if (r < 0) {
		ERR("skeleton /etc/ld.so.cache: %s", strerror(-r));
		return r;
	}
	return 0;
}

void sbx_view_remove_scratch(const SbxView *v)
{
	if (v->run_path && !(v->flags & SBX_VIEW_KEEP_TMP))
		(void) scratch_rm_rf_at(AT_FDCWD, v->run_path, DT_DIR, 0);
	for (char **t = v->tmp_paths; t && *t; t++)
		(void) scratch_rm_rf_at(AT_FDCWD, *t, DT_DIR, 0);
}

void sbx_view_disown_scratch(SbxView *v)
{
	v->scratch_disowned = true;
}

SbxView *sbx_view_free(SbxView *v)
{
	if (!v)
		return NULL;
	for (size_t i = 0; i < v->n_mounts; i++) {
		SbxMount *m = &v->mounts[i];

		if (m->fd >= 0)
			(void) close(m->fd);
		free(m->vpath);
		free(m->source);
	}
	free(v->mounts);
	if (v->root_fd >= 0)
		(void) close(v->root_fd);
	if (v->dev_fd >= 0)
		(void) close(v->dev_fd);
	if (v->pts_fd >= 0)
		(void) close(v->pts_fd);
	if (!v->scratch_disowned)
		sbx_view_remove_scratch(v);
	free(v->run_path);
	strv_free(v->tmp_paths);
	if (v->run_fd >= 0)
		(void) close(v->run_fd);
	/* the locks last: until here the scratch is ours, as a sweep sees it */
	if (v->run_lock_fd >= 0)
		(void) close(v->run_lock_fd);
	for (size_t i = 0; i < v->n_tmp_locks; i++)
		if (v->tmp_locks[i] >= 0)
			(void) close(v->tmp_locks[i]);
	free(v->tmp_locks);
	free(v->root_path);
	free(v);
	return NULL;
}

const Policy *sbx_view_policy(const SbxView *v)
{
	return v->policy;
}

mode_t sbx_view_supervisor_umask(const SbxView *v)
{
	return v->supervisor_umask;
}

bool sbx_view_procfs_below_sources(const SbxView *v)
{
	return v->procfs_below_sources;
}

const char *sbx_view_root_path(const SbxView *v)
{
	return v->root_path;
}

const char *const *sbx_view_dev_names(const SbxView *v)
{
	return v->dev_allow;
}

size_t sbx_view_n_mounts(const SbxView *v)
{
	return v->n_mounts;
}

const SbxMount *sbx_view_mount(const SbxView *v, size_t i)
{
	return i < v->n_mounts ? &v->mounts[i] : NULL;
}

const SbxMount *sbx_view_mount_at(const SbxView *v, const char *vpath)
{
	return view_mount_exact(v, vpath, strlen(vpath));
}

const SbxMount *view_mount_exact(const SbxView *v, const char *vpath, size_t len)
{
	for (size_t i = 0; i < v->n_mounts; i++)
		if (v->mounts[i].vlen == len && memcmp(v->mounts[i].vpath, vpath, len) == 0)
			return &v->mounts[i];
	return NULL;
}

const SbxMount *view_mount_of(const SbxView *v, const char *vpath)
{
	const SbxMount *best = NULL;

	for (size_t i = 0; i < v->n_mounts; i++) {
		const SbxMount *m = &v->mounts[i];

		if (vpath_has_prefix(vpath, m->vpath, m->vlen) && (!best || m->vlen > best->vlen))
			best = m;
	}
	return best;
}

bool view_is_mount_ancestor(const SbxView *v, const char *vpath, size_t len)
{
	for (size_t i = 0; i < v->n_mounts; i++) {
		const SbxMount *m = &v->mounts[i];

		if (m->vlen > len && memcmp(m->vpath, vpath, len) == 0 &&
		    (m->vpath[len] == '/' || (len == 1 && vpath[0] == '/')))
			return true;
	}
	return false;
}

bool view_dev_link(const SbxView *v, const char *name)
{
	return v->dev_links && (streq(name, "fd") || streq(name, "stdin") ||
				streq(name, "stdout") || streq(name, "stderr"));
}

bool view_dev_allowed(const SbxView *v, const char *name)
{
	for (size_t i = 0; v->dev_allow[i]; i++)
		if (streq(v->dev_allow[i], name))
			return true;
	return false;
}

SbxAccess view_rule_restriction(const SbxView *v, const char *vpath)
{
	SbxAccess a = SBX_ACCESS_RW;

	if (!v->has_rules)
		return a;
	for (size_t i = 0; i < v->policy->n_rules; i++) {
		const PolicyRule *rule = &v->policy->rules[i];

		if (rule->access != RULE_ACCESS_HIDE && rule->access != RULE_ACCESS_DENY)
			continue;
		if (!policy_glob_match(rule->glob, vpath))
			continue;
		if (rule->access == RULE_ACCESS_HIDE)
			return SBX_ACCESS_HIDDEN;
		a = SBX_ACCESS_DENIED;
	}
	return a;
}

SbxAccess view_access_rule(const SbxView *v, const char *vpath, Sensitivity *ret_level,
			   const PolicyRule **ret_ask_rule)
{
	const SbxMount *m = view_mount_of(v, vpath);
	SbxAccess base = m && m->mode != MOUNT_RO ? SBX_ACCESS_RW : SBX_ACCESS_RO;
	RuleAccess ra = RULE_ACCESS_UNSET;
	Sensitivity level = SENSITIVITY_NONE;
	const PolicyRule *rule = NULL;

	/* no mount: a skeleton directory, read-only */
	if (v->has_rules)
		policy_rule_lookup_rule(v->policy, vpath, &ra, &level, &rule);
	if (ret_level)
		*ret_level = level;
	if (ret_ask_rule)
		*ret_ask_rule = ra == RULE_ACCESS_ASK || ra == RULE_ACCESS_ASK_WRITE ? rule : NULL;
	switch (ra) {
	case RULE_ACCESS_HIDE:
		return SBX_ACCESS_HIDDEN;
	case RULE_ACCESS_DENY:
		return SBX_ACCESS_DENIED;
	case RULE_ACCESS_RO:
	case RULE_ACCESS_ASK: /* read-only but for the opens the open handler holds */
	case RULE_ACCESS_ASK_WRITE:
		return SBX_ACCESS_RO;
	default:
		return base; /* "rw" never lifts a ro mount */
	}
}

SbxAccess sbx_view_access(const SbxView *v, const char *vpath, Sensitivity *ret_level)
{
	return view_access_rule(v, vpath, ret_level, NULL);
}

const char *sbx_out_of_view_to_string(SbxOutOfView k)
{
	switch (k) {
	case SBX_OOV_HIDDEN:
		return "hidden";
	case SBX_OOV_OUTSIDE:
		return "outside";
	case SBX_OOV_SHADOWED:
		return "shadowed";
	default:
		return NULL;
	}
}

/* Whether the host has an object at path (symlinks in the last component are objects). */
static bool host_exists(const char *path)
{
	struct stat st;

	/* AT_NO_AUTOMOUNT: a name under an autofs mount point must not mount anything */
	return fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) == 0;
}

SbxOutOfView sbx_view_out_of_view(const SbxView *v, const char *vpath, char *ret_host, size_t size)
{
	const SbxMount *m;
	SbxOutOfView k = SBX_OOV_NONE;
	int n;

	if (size)
		ret_host[0] = 0;
	if (!v || !vpath || vpath[0] != '/' || size == 0)
		return SBX_OOV_NONE;
	m = view_mount_of(v, vpath);
	if (!m) {
		/* the skeleton: nothing below it but the ways to mount points */
		n = snprintf(ret_host, size, "%s", vpath);
		k = SBX_OOV_OUTSIDE;
	} else if (sbx_view_access(v, vpath, NULL) == SBX_ACCESS_HIDDEN ||
		   m->kind == SBX_MOUNT_PROC) {
		/* where the mount maps it: a hidden name exists in the mount's source */
		if (m->kind == SBX_MOUNT_DEV)
			n = snprintf(ret_host, size, "%s", vpath);
		else
			n = snprintf(ret_host, size, "%s%s", m->slen == 1 ? "" : m->source,
				     vpath + (m->vlen == 1 ? 0 : m->vlen));
		k = SBX_OOV_HIDDEN;
	} else if (m->kind == SBX_MOUNT_DEV) {
		/* not in the /dev allowlist */
		n = snprintf(ret_host, size, "%s", vpath);
		k = SBX_OOV_HIDDEN;
	} else if (m->owned || m->slen != m->vlen || memcmp(m->source, m->vpath, m->vlen) != 0) {
		/* a mount of another directory (or a private tmp one) stands in the host's */
		n = snprintf(ret_host, size, "%s", vpath);
		k = SBX_OOV_SHADOWED;
	} else
		return SBX_OOV_NONE; /* the source is that very path: the view looked already */
	if (n < 0 || (size_t) n >= size || !host_exists(ret_host)) {
		ret_host[0] = 0;
		return SBX_OOV_NONE;
	}
	return k;
}

void sbx_view_set_kernel_paths(SbxView *v)
{
	v->kernel_paths = true;
}

bool sbx_view_kernel_paths(const SbxView *v)
{
	return v && v->kernel_paths;
}

int sbx_view_vpath_of_child(const SbxView *v, const char *path, char *ret_vpath, size_t size)
{
	if (!v->kernel_paths)
		return sbx_view_vpath_of_host(v, path, ret_vpath, size, NULL);
	if (path[0] != '/')
		return -EXDEV;
	return sbx_path_normalize(path, ret_vpath, size);
}

int sbx_view_vpath_of_host(const SbxView *v, const char *host, char *ret_vpath, size_t size,
			   const SbxMount **ret_mount)
{
	const SbxMount *tried = NULL;
	size_t rlen = strlen(v->root_path);

	/* The built-in /dev answers host devices at their own paths (/dev/null, /dev/pts/3): an
	 * fd of the child on one of them reads back as that path (ttyname()). */
	if (v->dev_fd >= 0 && strncmp(host, "/dev/", 5) == 0) {
		const char *name = host + 5;
		bool pts = v->pts_fd >= 0 && strncmp(name, "pts/", 4) == 0 && name[4] &&
			   strspn(name + 4, "0123456789") == strlen(name + 4);

		if (pts || view_dev_allowed(v, name)) {
			if (strlen(host) >= size)
				return -ENAMETOOLONG;
			strcpy(ret_vpath, host);
			if (ret_mount)
				*ret_mount = view_mount_of(v, "/dev");
			return 0;
		}
	}

	/* Longest source prefix first; a mapping shadowed by a nested mount is no mapping. */
	for (size_t round = 0; round <= v->n_mounts; round++) {
		const SbxMount *best = NULL;
		const SbxMount *owner;
		const char *rest;
		int n;

		for (size_t i = 0; i < v->n_mounts; i++) {
			const SbxMount *m = &v->mounts[i];

			if (!vpath_has_prefix(host, m->source, m->slen))
				continue;
			if (tried &&
			    (m->slen > tried->slen || (m->slen == tried->slen && m <= tried)))
				continue;
			if (!best || m->slen > best->slen)
				best = m;
		}
		if (!best)
			break;
		tried = best;
		rest = host + (best->slen == 1 ? 0 : best->slen);
		if (best->vlen == 1)
			n = snprintf(ret_vpath, size, "%s", *rest ? rest : "/");
		else
			n = snprintf(ret_vpath, size, "%s%s", best->vpath, rest);
		if (n < 0 || (size_t) n >= size)
			return -ENAMETOOLONG;
		owner = view_mount_of(v, ret_vpath);
		if (owner != best)
			continue;
		if (ret_mount)
			*ret_mount = best;
		return 0;
	}
	/* The skeleton: directories that are in no mount. */
	if (vpath_has_prefix(host, v->root_path, rlen)) {
		const char *rest = host + rlen;
		int n = snprintf(ret_vpath, size, "%s", *rest ? rest : "/");

		if (n < 0 || (size_t) n >= size)
			return -ENAMETOOLONG;
		/* inside a mount, only the skeleton's ancestors of nested mount points are
		 * served (where the host source lacks them); anything else is shadowed */
		if (view_mount_of(v, ret_vpath) &&
		    !view_is_mount_ancestor(v, ret_vpath, strlen(ret_vpath)))
			return -EXDEV;
		if (ret_mount)
			*ret_mount = NULL;
		return 0;
	}
	return -EXDEV;
}

int sbx_view_vpath_of_fd(const SbxView *v, int fd, char *ret_vpath, size_t size,
			 const SbxMount **ret_mount)
{
	char host[PATH_MAX];
	int r;

	r = fd_host_path(fd, host, sizeof(host));
	if (r < 0)
		return r;
	return sbx_view_vpath_of_host(v, host, ret_vpath, size, ret_mount);
}

bool sbx_view_has_hide_rules(const SbxView *v)
{
	return v->has_hide_rules;
}

bool sbx_view_rules_outside_proc(const SbxView *v)
{
	for (size_t i = 0; v->has_rules && i < v->policy->n_rules; i++) {
		const PolicyRule *r = &v->policy->rules[i];
		char dir[PATH_MAX];
		size_t n = strcspn(r->glob, "*?[");
		const SbxMount *m;

		if (r->access == RULE_ACCESS_UNSET && !r->level)
			continue;
		/* the directory that holds every path the glob can match */
		if (n >= sizeof(dir))
			return true;
		memcpy(dir, r->glob, n);
		dir[n] = 0;
		if (r->glob[n] && strrchr(dir, '/'))
			*strrchr(dir, '/') = 0; /* "/proc/X" matches beneath "/proc" */
		m = view_mount_of(v, dir[0] ? dir : "/");
		if (!m || m->kind != SBX_MOUNT_PROC)
			return true;
	}
	return false;
}

struct dirent64_hdr {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

bool sbx_view_filters_listings(const SbxView *v)
{
	if (v->has_hide_rules)
		return true;
	for (size_t i = 0; i < v->n_mounts; i++)
		if (v->mounts[i].kind == SBX_MOUNT_PROC)
			return true;
	return false;
}

static bool pid_hidden(const SbxView *v, const char *name, size_t nl, pid_t tgid)
{
	long pid = 0;

	if (nl == 0 || nl > 10)
		return false;
	for (size_t i = 0; i < nl; i++) {
		if (name[i] < '0' || name[i] > '9')
			return false;
		pid = pid * 10 + (name[i] - '0');
	}
	if (pid == tgid)
		return false;
	return !(v->host->in_tree && v->host->in_tree(v->host->userdata, (pid_t) pid));
}

size_t sbx_view_filter_dirents(const SbxView *v, const char *dir_vpath, pid_t tid, pid_t tgid,
			       void *buf, size_t len)
{
	char *base = buf;
	size_t in = 0, out = 0, dlen = strlen(dir_vpath);
	char path[PATH_MAX];
	const SbxMount *pm = view_mount_exact(v, dir_vpath, dlen);
	bool proc_root = pm && pm->kind == SBX_MOUNT_PROC;

	if ((!v->has_hide_rules && !proc_root) || dlen >= sizeof(path) - 2)
		return len;
	if (proc_root)
		tgid = view_caller_tgid(tid, tgid);
	memcpy(path, dir_vpath, dlen);
	if (dlen > 1)
		path[dlen++] = '/';
	while (in + offsetof(struct dirent64_hdr, d_name) < len) {
		struct dirent64_hdr *d = (struct dirent64_hdr *) (base + in);
		size_t rl = d->d_reclen, nl;
		bool hide = false;

		if (rl == 0 || in + rl > len)
			break;
		nl = strnlen(d->d_name, rl - offsetof(struct dirent64_hdr, d_name));
		if (!(nl == 1 && d->d_name[0] == '.') &&
		    !(nl == 2 && d->d_name[0] == '.' && d->d_name[1] == '.') &&
		    dlen + nl < sizeof(path)) {
			memcpy(path + dlen, d->d_name, nl);
			path[dlen + nl] = 0;
			hide = (proc_root && pid_hidden(v, d->d_name, nl, tgid)) ||
			       (v->has_hide_rules &&
				sbx_view_access(v, path, NULL) == SBX_ACCESS_HIDDEN);
		}
		if (!hide) {
			if (out != in)
				memmove(base + out, base + in, rl);
			out += rl;
		}
		in += rl;
	}
	return out;
}

static bool parse_uint(const char **p, long *ret)
{
	char *end;

	if (**p < '0' || **p > '9')
		return false;
	errno = 0;
	*ret = strtol(*p, &end, 10);
	if (errno || *ret > INT_MAX)
		return false;
	*p = end;
	return true;
}

bool sbx_proc_fd_path(const SbxMount *m, const char *vpath, pid_t *ret_pid, int *ret_fd)
{
	const char *p;
	long pid, fd;

	if (!m || m->kind != SBX_MOUNT_PROC || !vpath_has_prefix(vpath, m->vpath, m->vlen))
		return false;
	p = vpath + (m->vlen == 1 ? 0 : m->vlen);
	if (*p++ != '/' || !parse_uint(&p, &pid))
		return false;
	if (strncmp(p, "/task/", 6) == 0) {
		p += 6;
		if (!parse_uint(&p, &pid))
			return false;
	}
	if (strncmp(p, "/fd/", 4) != 0)
		return false;
	p += 4;
	if (!parse_uint(&p, &fd) || *p)
		return false;
	*ret_pid = (pid_t) pid;
	*ret_fd = (int) fd;
	return true;
}

int sbx_proc_translate(const char *proc_vpath, const char *path, pid_t tid, pid_t tgid, char *ret,
		       size_t size)
{
	size_t plen = strlen(proc_vpath);
	const char *rest;
	int n;

	if (strncmp(path, proc_vpath, plen) != 0 || path[plen] != '/')
		goto copy;
	rest = path + plen + 1;
	if (strncmp(rest, "self", 4) == 0 && (rest[4] == '/' || !rest[4]))
		n = snprintf(ret, size, "%.*s/%d%s", (int) plen, path, (int) tgid, rest + 4);
	else if (strncmp(rest, "thread-self", 11) == 0 && (rest[11] == '/' || !rest[11]))
		n = snprintf(ret, size, "%.*s/%d/task/%d%s", (int) plen, path, (int) tgid,
			     (int) tid, rest + 11);
	else
		goto copy;
	return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
copy:
	n = snprintf(ret, size, "%s", path);
	return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

int sbx_view_pts_fd(const SbxView *v)
{
	return v ? v->pts_fd : -1;
}
