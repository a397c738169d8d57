/* SPDX-License-Identifier: MIT */
/* The view and the path walk against real temporary trees (issue 4). */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/macros.h"
#include "tests/unit/path/fixture.h"
#include "tests/unit/tap.h"

#define F SBX_RESOLVE_FOLLOW

static bool same_file(int fd, const Fixture *fx, const char *rel)
{
	struct stat a, b;

	if (fd < 0 || fstat(fd, &a) < 0 || fx_stat(fx, rel, &b) < 0)
		return false;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Lists a resolved directory into buf as "name name …" (sorted by readdir order) */
static int list_names(const SbxResolved *r, char names[][64], int max)
{
	int fd = openat(r->parent_fd, r->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	DIR *d;
	struct dirent *de;
	int n = 0;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	while ((de = readdir(d)) && n < max) {
		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		snprintf(names[n++], 64, "%.63s", de->d_name);
	}
	closedir(d);
	return n;
}

static bool has_name(char names[][64], int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (streq(names[i], s))
			return true;
	return false;
}

TEST(absolute_path_in_mount)
{
	Fixture fx = {0};
	SbxView *v = fx_view_flat(&fx, 0);
	SbxResolved r;
	char host[1200];

	ASSERT_EQ(fx_resolve(v, "/workspace/a.txt", F, &r), 0);
	EXPECT_TRUE(r.exists);
	EXPECT_EQ(r.type, S_IFREG);
	EXPECT_STREQ(r.vpath, "/workspace/a.txt");
	EXPECT_STREQ(r.name, "a.txt");
	EXPECT_EQ(r.access, SBX_ACCESS_RW);
	EXPECT_TRUE(same_file(r.fd, &fx, "ws/a.txt"));
	snprintf(host, sizeof(host), "%s/ws/a.txt", fx.base);
	EXPECT_STREQ(r.host_path, host);
	sbx_resolved_done(&r);

	ASSERT_EQ(fx_resolve(v, "/usr/lib/libx.so", F, &r), 0);
	EXPECT_EQ(r.access, SBX_ACCESS_RO);
	EXPECT_TRUE(same_file(r.fd, &fx, "sys/lib/libx.so"));
	sbx_resolved_done(&r);

	ASSERT_EQ(fx_resolve(v, "//workspace///dir/./sub.txt", F, &r), 0);
	EXPECT_STREQ(r.vpath, "/workspace/dir/sub.txt");
	sbx_resolved_done(&r);
	fx_done(&fx, v);
}

TEST(outside_every_mount_is_enoent)
{
	Fixture fx = {0};
	SbxView *v = fx_view_flat(&fx, 0);
	SbxResolved r;

	EXPECT_EQ(fx_resolve(v, "/secret", F, &r), -ENOENT);
	EXPECT_EQ(fx_resolve(v, "/home", F, &r), -ENOENT);
	EXPECT_EQ(fx_resolve(v, fx.base, F, &r), -ENOENT);
	EXPECT_EQ(fx_resolve(v, "/workspace/../../../secret", F, &r), -ENOENT);
	EXPECT_EQ(fx_resolve(v, "/workspace/nope", F, &r), -ENOENT);
	EXPECT_EQ(fx_resolve(v, "", F, &r), -ENOENT);
	fx_done(&fx, v);
}

TEST(root_lists_only_mount_points)
{
	Fixture fx = {0};
	SbxView *v = fx_view_flat(&fx, 0);
	SbxResolved r;
	char names[32][64];
	int n;

	ASSERT_EQ(fx_resolve(v, "/", F, &r), 0);
	EXPECT_TRUE(r.fixed);
	EXPECT_EQ(r.access, SBX_ACCESS_RO);
	n = list_names(&r, names, 32);
	EXPECT_EQ(n, 5);
	EXPECT_TRUE(has_name(names, n, "workspace"));
	EXPECT_TRUE(has_name(names, n, "usr"));
	EXPECT_TRUE(has_name(names, n, "etc"));
	EXPECT_TRUE(has_name(names, n, "tmp"));
	EXPECT_TRUE(has_name(names, n, "dev"));
	sbx_resolved_done(&r);
	fx_done(&fx, v);
}

TEST(dotdot_pops_the_virtual_path)
{
	Fixture fx = {0};
	SbxView *v = fx_view_flat(&fx, 0);
	SbxResolved r;

	ASSERT_EQ(fx_resolve(v, "/workspace/dir/../../workspace/a.txt", F, &r), 0);
	EXPECT_STREQ(r.vpath, "/workspace/a.txt");
	EXPECT_TRUE(same_file(r.fd, &fx, "ws/a.txt"));
	sbx_resolved_done(&r);

	/* across mounts: from /usr into /workspace */
	ASSERT_EQ(fx_resolve(v, "/usr/lib/../../workspace/dir/sub.txt", F, &r), 0);
	EXPECT_STREQ(r.vpath, "/workspace/dir/sub.txt");
	sbx_resolved_done(&r);

	/* never above the root */
	ASSERT_EQ(fx_resolve(v, "/../../../../usr/lib/libx.so", F, &r), 0);
	EXPECT_STREQ(r.vpath, "/usr/lib/libx.so");
	sbx_resolved_done(&r);

	ASSERT_EQ(fx_resolve(v, "/workspace/..", F, &r), 0);
	EXPECT_STREQ(r.vpath, "/");
	EXPECT_TRUE(r.dot);
	sbx_resolved_done(&r);
	fx_done(&fx, v);
}

TEST(dotdot_deep_paths)
{
	Fixture fx = {0};
	SbxView *v = fx_view_flat(&fx, 0);
	SbxResolved r;
	char path[4096] = "/workspace", rel[1024];
	size_t n;

	/* 40 levels: more than the walk's stack of directories, so the ".." above it walk
	 * again from the root */
	snprintf(rel, sizeof(rel), "%s/ws", fx.base);
	for (int i = 0; i < 40; i++) {
		strcat(rel, "/d");
		ASSERT_EQ(mkdir(rel, 0755), 0);
		strcat(path, "/d");
	}
	n = strlen(path);
	for (int i = 0; i < 40; i++)
		strcat(path, "/..");
	strcat(path, "/a.txt");
	ASSERT_EQ(fx_resolve(v, path, SBX_RESOLVE_FOLLOW, &r), 0);
	EXPECT_STREQ(r.vpath, "/workspace/a.txt");
	EXPECT_TRUE(same_file(r.fd, &fx, "ws/a.txt"));
	sbx_resolved_done(&r);
	path[n] = 0;
	strcat(path, "/../../../../../../../../../../../../../../../..");
	ASSERT_EQ(fx_resolve(v, path, SBX_RESOLVE_FOLLOW, &r), 0);
	EXPECT_EQ(strlen(r.vpath), strlen("/workspace") + 2 * 24);
	sbx_resolved_done(&r);
	fx_done(&fx, v);
}

TEST(relative_paths_from_a_dirfd)
{
	Fixture fx = {0};
	SbxView *v = fx_view_flat(&fx, 0);
	SbxResolved r;
	char p[1200], vp[4096];
	const SbxMount *m;
	int dfd;
	SbxLookup l = {.tid = getpid(), .tgid = getpid(), .flags = F};

	snprintf(p, sizeof(p), "%s/ws/dir", fx.base);
	dfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ASSERT_GE(dfd, 0);
	ASSERT_EQ(sbx_view_vpath_of_fd(v, dfd, vp, sizeof(vp), &m), 0);
	EXPECT_STREQ(vp, "/workspace/dir");
	EXPECT_STREQ(m->vpath, "/workspace");
	l.dirfd = dfd;
	l.dir_vpath = vp;

	l.path = "sub.txt";
	ASSERT_EQ(sbx_view_resolve(v, &l, &r), 0);
	EXPECT_STREQ(r.vpath, "/workspace/dir/sub.txt");
	sbx_resolved_done(&r);

	l.path = "../a.txt";
	ASSERT_EQ(sbx_view_resolve(v, &l, &r), 0);
	EXPECT_STREQ(r.vpath, "/workspace/a.txt");
	sbx_resolved_done(&r);

	l.path = "../../../secret";
	EXPECT_EQ(sbx_view_resolve(v, &l, &r), -ENOENT);
	l.path = "../../etc/passwd";
	ASSERT_EQ(sbx_view_resolve(v, &l, &r), 0);
	EXPECT_STREQ(r.vpath, "/etc/passwd");
	sbx_resolved_done(&r);

	l.path = "";
	EXPECT_EQ(sbx_view_resolve(v, &l, &r), -ENOENT);
	l.flags |= SBX_RESOLVE_EMPTY_PATH;
	ASSERT_EQ(sbx_view_resolve(v, &l, &r), 0);
	EXPECT_STREQ(r.vpath, "/workspace/dir");
	sbx_resolved_done(&r);
	close(dfd);

	/* a host directory outside the view maps to nothing */
	dfd = open(fx.base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	EXPECT_EQ(sbx_view_vpath_of_fd(v, dfd, vp, sizeof(vp), &m), -EXDEV);
	close(dfd);
	fx_done(&fx, v);
}

TEST(symlinks_resolve_inside_the_view)
{
	Fixture fx = {0};
	SbxView *v = fx_view_flat(&fx, 0);
	SbxResolved r;

	/* /etc/shadow exists in the etc source but is hidden by a rule */
	ASSERT_EQ(fx_resolve(v, "/workspace/link_abs", F, &r), 0);
	EXPECT_STREQ(r.vpath, "/etc/shadow");
	EXPECT_EQ(r.access, SBX_ACCESS_HIDDEN);
	EXPECT_FALSE(r.exists);
	EXPECT_EQ(r.fd, -1);
	sbx_resolved_done(&r);

	ASSERT_EQ(fx_resolve(v, "/workspace/link_passwd", F, &r), 0);
	EXPECT_STREQ(r.vpath, "/etc/passwd");
	EXPECT_TRUE(same_file(r.fd, &fx, "etc/passwd"));
	sbx_resolved_done(&r);

	/* ../secret from /workspace is the virtual /secret: absent */
	EXPECT_EQ(fx_resolve(v, "/workspace/link_up", F, &r), -ENOENT);

	ASSERT_EQ(fx_resolve(v, "/workspace/link_rel", F, &r), 0);
	EXPECT_STREQ(r.vpath, "/workspace/dir/sub.txt");
	sbx_resolved_done(&r);

	/* not following: the link itself */
	ASSERT_EQ(fx_resolve(v, "/workspace/link_up", 0, &r), 0);
	EXPECT_EQ(r.type, S_IFLNK);
	EXPECT_STREQ(r.vpath, "/workspace/link_up");
	sbx_resolved_done(&r);

	/* a symlink to "/" followed by more components */
	ASSERT_EQ(fx_resolve(v, "/workspace/link_root/usr/lib/libx.so", F, &r), 0);
	EXPECT_STREQ(r.vpath, "/usr/lib/libx.so");
	sbx_resolved_done(&r);

	EXPECT_EQ(fx_resolve(v, "/workspace/loop1", F, &r), -ELOOP);
	EXPECT_EQ(fx_resolve(v, "/workspace/loop1/x", 0, &r), -ELOOP);
	EXPECT_EQ(fx_resolve(v, "/workspace/link_rel", F | SBX_RESOLVE_NO_SYMLINKS, &r), -ELOOP);
	fx_done(&fx, v);
}

TEST(nested_mounts_take_precedence)
{
	Fixture fx = {0};
	SbxView *v = fx_view_nested(&fx, 0);
	SbxResolved r;
	char names[32][64];
	int n, dfd;
	char p[1200], vp[4096];

	ASSERT_EQ(fx_resolve(v, "/workspace/a.txt", F, &r), 0);
	EXPECT_TRUE(same_file(r.fd, &fx, "ws/a.txt"));
	EXPECT_EQ(r.access, SBX_ACCESS_RW);
	sbx_resolved_done(&r);

	/* the host directory under the nested mount point is never visible */
	EXPECT_EQ(fx_resolve(v, "/workspace/shadowed.txt", F, &r), -ENOENT);
	EXPECT_EQ(fx_resolve(v, "/usr/../workspace/shadowed.txt", F, &r), -ENOENT);

	/* a relative symlink in / that goes into the nested mount */
	ASSERT_EQ(fx_resolve(v, "/lnk_ws", F, &r), 0);
	EXPECT_STREQ(r.vpath, "/workspace/a.txt");
	EXPECT_TRUE(same_file(r.fd, &fx, "ws/a.txt"));
	sbx_resolved_done(&r);

	EXPECT_EQ(fx_resolve(v, "/escape", F, &r), -ENOENT);

	ASSERT_EQ(fx_resolve(v, "/usr/lib/libx.so", F, &r), 0);
	EXPECT_EQ(r.access, SBX_ACCESS_RO);
	EXPECT_TRUE(same_file(r.fd, &fx, "rootfs/usr/lib/libx.so"));
	sbx_resolved_done(&r);

	/* /deep/er does not exist in rootfs: skeleton directories lead to the mount */
	ASSERT_EQ(fx_resolve(v, "/deep/er/mnt/lib/libx.so", F, &r), 0);
	EXPECT_TRUE(same_file(r.fd, &fx, "sys/lib/libx.so"));
	sbx_resolved_done(&r);
	ASSERT_EQ(fx_resolve(v, "/deep", F, &r), 0);
	EXPECT_TRUE(r.fixed);
	EXPECT_EQ(r.access, SBX_ACCESS_RO);
	n = list_names(&r, names, 32);
	EXPECT_EQ(n, 1);
	EXPECT_TRUE(has_name(names, n, "er"));
	sbx_resolved_done(&r);
	EXPECT_EQ(fx_resolve(v, "/deep/other", F, &r), -ENOENT);

	/* .. out of a nested mount lands in the parent mount */
	ASSERT_EQ(fx_resolve(v, "/deep/er/mnt/../../../usr/lib/libx.so", F, &r), 0);
	EXPECT_TRUE(same_file(r.fd, &fx, "rootfs/usr/lib/libx.so"));
	sbx_resolved_done(&r);

	/* host → virtual: the shadowed host directory maps to nothing */
	snprintf(p, sizeof(p), "%s/rootfs/workspace", fx.base);
	dfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	EXPECT_EQ(sbx_view_vpath_of_fd(v, dfd, vp, sizeof(vp), NULL), -EXDEV);
	close(dfd);
	/* a skeleton directory inside the / mount (the host lacks /deep/er) maps back */
	snprintf(p, sizeof(p), "%s/deep/er", sbx_view_root_path(v));
	dfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ASSERT_GE(dfd, 0);
	EXPECT_EQ(sbx_view_vpath_of_fd(v, dfd, vp, sizeof(vp), NULL), 0);
	EXPECT_STREQ(vp, "/deep/er");
	{
		SbxLookup l = {.path = "mnt/lib/libx.so", .dirfd = dfd, .dir_vpath = vp};

		ASSERT_EQ(sbx_view_resolve(v, &l, &r), 0);
		EXPECT_TRUE(same_file(r.fd, &fx, "sys/lib/libx.so"));
		sbx_resolved_done(&r);
		l.dirfd = -1;
		ASSERT_EQ(sbx_view_resolve(v, &l, &r), 0);
		EXPECT_STREQ(r.vpath, "/deep/er/mnt/lib/libx.so");
		sbx_resolved_done(&r);
	}
	close(dfd);
	snprintf(p, sizeof(p), "%s/rootfs/usr", fx.base);
	dfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	EXPECT_EQ(sbx_view_vpath_of_fd(v, dfd, vp, sizeof(vp), NULL), 0);
	EXPECT_STREQ(vp, "/usr");
	close(dfd);
	fx_done(&fx, v);
}

TEST(fast_path_and_walk_agree)
{
	static const char *const paths[] = {
		"/workspace/a.txt",
		"/workspace/dir/sub.txt",
		"/workspace/link_rel",
		"/workspace/link_abs",
		"/workspace/link_up",
		"/usr/lib/libx.so",
		"/usr/lib",
		"/workspace/dir/",
		"/workspace/a.txt/",
		"/workspace/missing",
		"/lnk_ws",
		"/workspace/shadowed.txt",
		"/deep/er/mnt/lib",
		"/deep/er",
		"/workspace/.env",
		"/workspace/denied/x",
		"/workspace/vendor/v.txt",
		"/escape",
		"/usr/./lib/",
		"/usr",
		"/workspace/",
		"/",
	};
	for (int variant = 0; variant < 2; variant++) {
		Fixture fx = {0};
		SbxView *v = variant ? fx_view_nested(&fx, 0) : fx_view_flat(&fx, 0);
		/* the third: what readlink passes (EMPTY_PATH matters only for "") */
		const unsigned flv[] = {0, F, SBX_RESOLVE_EMPTY_PATH | SBX_RESOLVE_NO_FD};
		int fast_hits = 0, empty_fast_hits = 0, stat_hits = 0;

		for (size_t i = 0; i < ARRAY_SIZE(paths); i++)
			for (unsigned fl = 0; fl < ARRAY_SIZE(flv); fl++) {
				SbxResolved a, b;
				int ra = fx_resolve(v, paths[i], flv[fl], &a);
				int rb = fx_resolve(v, paths[i], flv[fl] | SBX_RESOLVE_NO_FAST, &b);

				EXPECT_EQ(ra, rb);
				if (ra != rb)
					printf("#   %s (follow %u): %d vs %d\n", paths[i], fl, ra,
					       rb);
				if (ra == 0 && rb == 0) {
					EXPECT_STREQ(a.vpath, b.vpath);
					EXPECT_EQ(a.access, b.access);
					EXPECT_EQ(a.exists, b.exists);
					EXPECT_STREQ(a.name, b.name);
					EXPECT_EQ(a.type, b.type);
					EXPECT_EQ(a.fixed, b.fixed);
					EXPECT_EQ(a.dot, b.dot);
					EXPECT_EQ(a.trailing_slash, b.trailing_slash);
					EXPECT_FALSE(b.fast);
					EXPECT_FALSE(b.st_valid);
					fast_hits += a.fast;
					empty_fast_hits += a.fast && fl == 2;
					if (a.st_valid) {
						/* the fast path's stat is that of the pair the
						 * walk found, not followed (the stat handler
						 * answers with it) */
						struct stat w;

						EXPECT_TRUE(a.fast && a.exists);
						ASSERT_EQ(fstatat(b.parent_fd, b.name, &w,
								  AT_SYMLINK_NOFOLLOW),
							  0);
						EXPECT_EQ(a.st.st_dev, w.st_dev);
						EXPECT_EQ(a.st.st_ino, w.st_ino);
						EXPECT_EQ(a.st.st_mode, w.st_mode);
						EXPECT_EQ(a.st.st_size, w.st_size);
						EXPECT_EQ(a.st.st_mode & S_IFMT, a.type);
						stat_hits++;
					}
					sbx_resolved_done(&a);
					sbx_resolved_done(&b);
				}
			}
		/* the fast path must actually be taken for plain paths */
		EXPECT_GE(fast_hits, 4);
		EXPECT_GE(empty_fast_hits, 2);
		EXPECT_GE(stat_hits, 4);
		fx_done(&fx, v);
	}
}

TEST(relative_fast_path_and_walk_agree)
{
	static const char *const paths[] = {
		"sub.txt",
		"../a.txt",
		"../../usr/lib/libx.so",
		"./../dir/sub.txt",
		"../link_rel",
		"../dir/../a.txt",
		"../../../../workspace/.env",
		"../../etc/passwd",
		"..",
		"../",
		"../../",
		"../../../secret",
		"../link_up",
	};
	Fixture fx = {0};
	SbxView *v = fx_view_flat(&fx, 0);
	char p[1200], vp[4096];
	int dfd, fast_hits = 0;

	snprintf(p, sizeof(p), "%s/ws/dir", fx.base);
	dfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ASSERT_GE(dfd, 0);
	ASSERT_EQ(sbx_view_vpath_of_fd(v, dfd, vp, sizeof(vp), NULL), 0);
	for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
		SbxLookup l = {.path = paths[i],
			       .dirfd = dfd,
			       .dir_vpath = vp,
			       .flags = SBX_RESOLVE_FOLLOW};
		SbxResolved a, b;
		int ra = sbx_view_resolve(v, &l, &a), rb;

		l.flags |= SBX_RESOLVE_NO_FAST;
		rb = sbx_view_resolve(v, &l, &b);
		EXPECT_EQ(ra, rb);
		if (ra == 0 && rb == 0) {
			EXPECT_STREQ(a.vpath, b.vpath);
			EXPECT_EQ(a.access, b.access);
			fast_hits += a.fast;
			sbx_resolved_done(&a);
			sbx_resolved_done(&b);
		}
	}
	EXPECT_GE(fast_hits, 3);
	close(dfd);
	fx_done(&fx, v);
}

/* SbxResolved.kernel_same (emulation/fs-open.c, "Opens the kernel makes"): set exactly where
 * the kernel's own walk of the caller's string ends where the view's did. */
TEST(kernel_same_only_where_the_host_walk_agrees)
{
	Fixture fx = {0};
	SbxView *v = NULL;
	char err[256] = "", ws[600], lnk[600], p[1200], vp[4096];
	struct {
		const char *rel; /* after "<base>/" for an absolute path, else as it is */
		bool absolute;
		bool want;
	} cases[] = {
		{"ws/a.txt", true, true}, /* a mount at its own host path */
		{"ws/dir/sub.txt", true, true},
		{"ws/dir/", true, true},
		{"ws", true, true},		  /* the mount's root */
		{"ws/link_rel", true, false},	  /* a symlink followed */
		{"ws/dir/../a.txt", true, false}, /* ".." */
		{"ws/dir/./sub.txt", true, true},
		{"lnk/lib/libx.so", true, true}, /* vpath a host symlink to the source (/bin) */
	};
	struct {
		const char *path;
		bool want;
	} rel[] = {
		{"sub.txt", true},
		{"./sub.txt", true},
		{"../a.txt", false},
		{"../dir/sub.txt", false},
	};
	int dfd;

	fx_tree(&fx);
	fx_symlink(fx.base, "lnk", "sys");
	snprintf(ws, sizeof(ws), "%s/ws", fx.base);
	snprintf(lnk, sizeof(lnk), "%s/lnk", fx.base);
	fx_mount(&fx, ws, "ws", MOUNT_RW);
	fx_mount(&fx, lnk, "sys", MOUNT_RO);
	fx_mount(&fx, "/usr", "sys", MOUNT_RO); /* translated */
	fx_mount(&fx, "/tmp", NULL, MOUNT_TMP);
	ASSERT_EQ(sbx_view_new(&fx.policy, NULL, 0, &v, err, sizeof(err)), 0);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		SbxResolved r;

		snprintf(p, sizeof(p), "%s/%s", fx.base, cases[i].rel);
		ASSERT_EQ(fx_resolve(v, p, F | SBX_RESOLVE_NO_FD, &r), 0);
		EXPECT_EQ(r.kernel_same, cases[i].want);
		if (r.kernel_same != cases[i].want)
			printf("#   %s: kernel_same %d\n", cases[i].rel, r.kernel_same);
		sbx_resolved_done(&r);
	}
	/* translated mounts never: the host has something else (or nothing) at /usr, /tmp */
	{
		SbxResolved r;

		ASSERT_EQ(fx_resolve(v, "/usr/lib/libx.so", F | SBX_RESOLVE_NO_FD, &r), 0);
		EXPECT_FALSE(r.kernel_same);
		sbx_resolved_done(&r);
		ASSERT_EQ(fx_resolve(v, "/tmp/new", F | SBX_RESOLVE_NO_FD | SBX_RESOLVE_CREATE, &r),
			  0);
		EXPECT_FALSE(r.kernel_same);
		sbx_resolved_done(&r);
	}
	/* relative, from a directory in the mount: no ".." (the host's parent of a mount root is
	 * not the view's) */
	snprintf(p, sizeof(p), "%s/ws/dir", fx.base);
	dfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ASSERT_GE(dfd, 0);
	ASSERT_EQ(sbx_view_vpath_of_fd(v, dfd, vp, sizeof(vp), NULL), 0);
	for (size_t i = 0; i < ARRAY_SIZE(rel); i++) {
		SbxLookup l = {.path = rel[i].path,
			       .dirfd = dfd,
			       .dir_vpath = vp,
			       .flags = F | SBX_RESOLVE_NO_FD};
		SbxResolved r;

		ASSERT_EQ(sbx_view_resolve(v, &l, &r), 0);
		EXPECT_EQ(r.kernel_same, rel[i].want);
		if (r.kernel_same != rel[i].want)
			printf("#   %s: kernel_same %d\n", rel[i].path, r.kernel_same);
		sbx_resolved_done(&r);
	}
	close(dfd);
	fx_done(&fx, v);

	/* a mount with another beneath it: the host holds the outer source's own directory */
	{
		Fixture fn = {0};
		SbxView *vn = fx_view_nested(&fn, 0);
		SbxResolved r;

		ASSERT_EQ(fx_resolve(vn, "/usr/lib/libx.so", F | SBX_RESOLVE_NO_FD, &r), 0);
		EXPECT_TRUE(r.fast);
		EXPECT_FALSE(r.kernel_same);
		sbx_resolved_done(&r);
		fx_done(&fn, vn);
	}
}

TEST(rules_hide_deny_and_restrict)
{
	Fixture fx = {0};
	SbxView *v = fx_view_flat(&fx, 0);
	SbxResolved r;
	char names[32][64];
	char buf[8192];
	int fd, n;
	long len;

	ASSERT_EQ(fx_resolve(v, "/workspace/.env", F, &r), 0);
	EXPECT_EQ(r.access, SBX_ACCESS_HIDDEN);
	EXPECT_FALSE(r.exists);
	sbx_resolved_done(&r);

	EXPECT_EQ(fx_resolve(v, "/workspace/denied/x", F, &r), -EACCES);
	ASSERT_EQ(fx_resolve(v, "/workspace/denied", F, &r), 0);
	EXPECT_EQ(r.access, SBX_ACCESS_DENIED);
	sbx_resolved_done(&r);

	ASSERT_EQ(fx_resolve(v, "/workspace/vendor/v.txt", F, &r), 0);
	EXPECT_EQ(r.access, SBX_ACCESS_RO);
	sbx_resolved_done(&r);

	/* a rw rule cannot lift a ro mount */
	EXPECT_EQ(sbx_view_access(v, "/usr/lib/libx.so", NULL), SBX_ACCESS_RO);
	EXPECT_TRUE(sbx_view_has_hide_rules(v));

	/* listings: .env disappears from a getdents64 buffer of /workspace */
	ASSERT_EQ(fx_resolve(v, "/workspace", F, &r), 0);
	fd = openat(r.parent_fd, r.name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	len = syscall(SYS_getdents64, fd, buf, sizeof(buf));
	ASSERT_GE(len, 1);
	len = (long) sbx_view_filter_dirents(v, "/workspace", getpid(), getpid(), buf,
					     (size_t) len);
	n = 0;
	for (long off = 0; off < len;) {
		struct {
			uint64_t ino;
			int64_t off;
			unsigned short reclen;
			unsigned char type;
			char name[];
		} *d = (void *) (buf + off);
		if (n < 32)
			snprintf(names[n++], 64, "%.63s", d->name);
		off += d->reclen;
	}
	EXPECT_FALSE(has_name(names, n, ".env"));
	EXPECT_TRUE(has_name(names, n, "a.txt"));
	EXPECT_TRUE(has_name(names, n, "denied"));
	close(fd);
	sbx_resolved_done(&r);
	fx_done(&fx, v);
}

/* The audit log's out_of_view (issue 25): what a name the view answers ENOENT for is on the
 * host. The view's own answers are not changed (the tests above). */
TEST(out_of_view_kinds)
{
	Fixture fx = {0};
	SbxView *v = fx_view_flat(&fx, 0);
	char host[PATH_MAX], want[PATH_MAX], vp[PATH_MAX];
	SbxResolved r;

	/* hidden by a rule, present in the mount's source */
	EXPECT_EQ(sbx_view_out_of_view(v, "/etc/shadow", host, sizeof(host)), SBX_OOV_HIDDEN);
	snprintf(want, sizeof(want), "%s/etc/shadow", fx.base);
	EXPECT_STREQ(host, want);
	EXPECT_EQ(sbx_view_out_of_view(v, "/workspace/.env", host, sizeof(host)), SBX_OOV_HIDDEN);
	EXPECT_STREQ(sbx_out_of_view_to_string(SBX_OOV_HIDDEN), "hidden");
	/* what the program saw is still plain ENOENT (not EACCES: no oracle) */
	EXPECT_EQ(fx_resolve(v, "/etc/shadow", 0, &r), 0);
	EXPECT_FALSE(r.exists);
	EXPECT_EQ(r.access, SBX_ACCESS_HIDDEN);
	sbx_resolved_done(&r);
	/* absent everywhere */
	EXPECT_EQ(sbx_view_out_of_view(v, "/etc/nope", host, sizeof(host)), SBX_OOV_NONE);
	EXPECT_STREQ(host, "");
	EXPECT_EQ(sbx_view_out_of_view(v, "/workspace/nope", host, sizeof(host)), SBX_OOV_NONE);
	EXPECT_EQ(sbx_view_out_of_view(v, "/sbx-no-such-dir/x", host, sizeof(host)), SBX_OOV_NONE);
	/* the fixture's secret, by its host path: outside every mount, or under the view's
	 * private /tmp (a tmp mount of another directory) when TMPDIR is /tmp */
	snprintf(vp, sizeof(vp), "%s/secret", fx.base);
	EXPECT_EQ(sbx_view_out_of_view(v, vp, host, sizeof(host)),
		  strncmp(vp, "/tmp/", 5) == 0 ? SBX_OOV_SHADOWED : SBX_OOV_OUTSIDE);
	EXPECT_STREQ(host, vp);
	/* only absolute canonical paths */
	EXPECT_EQ(sbx_view_out_of_view(v, "etc/shadow", host, sizeof(host)), SBX_OOV_NONE);
	EXPECT_EQ(sbx_view_out_of_view(v, "/etc/shadow", host, 8), SBX_OOV_NONE);
	fx_done(&fx, v);
}

TEST(create_intent_and_trailing_slash)
{
	Fixture fx = {0};
	SbxView *v = fx_view_flat(&fx, 0);
	SbxResolved r;

	ASSERT_EQ(fx_resolve(v, "/workspace/new.txt", SBX_RESOLVE_CREATE, &r), 0);
	EXPECT_FALSE(r.exists);
	EXPECT_STREQ(r.name, "new.txt");
	EXPECT_EQ(r.access, SBX_ACCESS_RW);
	EXPECT_GE(r.parent_fd, 0);
	sbx_resolved_done(&r);

	EXPECT_EQ(fx_resolve(v, "/workspace/nodir/new.txt", SBX_RESOLVE_CREATE, &r), -ENOENT);
	EXPECT_EQ(fx_resolve(v, "/workspace/a.txt/", F, &r), -ENOTDIR);
	EXPECT_EQ(fx_resolve(v, "/workspace/a.txt/x", F, &r), -ENOTDIR);
	EXPECT_EQ(fx_resolve(v, "/workspace/a.txt", F | SBX_RESOLVE_DIRECTORY, &r), -ENOTDIR);

	/* creating at the root or in a skeleton directory: read-only */
	ASSERT_EQ(fx_resolve(v, "/newdir", SBX_RESOLVE_CREATE, &r), 0);
	EXPECT_EQ(r.access, SBX_ACCESS_RO);
	sbx_resolved_done(&r);
	fx_done(&fx, v);
}

TEST(name_too_long)
{
	Fixture fx = {0};
	SbxView *v = fx_view_flat(&fx, 0);
	SbxResolved r;
	char big[5000];

	memset(big, 'a', sizeof(big) - 1);
	big[0] = '/';
	big[sizeof(big) - 1] = 0;
	EXPECT_EQ(fx_resolve(v, big, F, &r), -ENAMETOOLONG);
	snprintf(big, sizeof(big), "/workspace/%0300d", 1);
	EXPECT_EQ(fx_resolve(v, big, F, &r), -ENAMETOOLONG);
	fx_done(&fx, v);
}

TEST(tmp_mount_is_private_and_removed)
{
	Fixture fx = {0};
	SbxView *v = fx_view_flat(&fx, 0);
	SbxResolved r;
	char host[4096];
	struct stat st;

	ASSERT_EQ(fx_resolve(v, "/tmp", F, &r), 0);
	EXPECT_EQ(r.access, SBX_ACCESS_RW);
	snprintf(host, sizeof(host), "%s", r.host_path);
	ASSERT_EQ(fstat(r.fd, &st), 0);
	EXPECT_EQ(st.st_mode & 07777, 0700);
	/* the pinned O_PATH fd is usable as a dirfd: the handlers create through it */
	ASSERT_EQ(mkdirat(r.parent_fd, "sub", 0700), 0);
	sbx_resolved_done(&r);
	EXPECT_EQ(stat(host, &st), 0);
	ASSERT_EQ(fx_resolve(v, "/tmp/sub", F, &r), 0);
	EXPECT_TRUE(r.exists);
	EXPECT_EQ(r.type, S_IFDIR);
	sbx_resolved_done(&r);
	fx_done(&fx, v);
	EXPECT_EQ(stat(host, &st), -1);
	EXPECT_EQ(errno, ENOENT);
}

/* process.pty: the host says which pty numbers the tree holds; only those exist. */
static int fake_open_pts(void *userdata, pid_t pid, unsigned n, int flags)
{
	(void) pid;
	(void) flags;
	return n == *(unsigned *) userdata ? 0 : -ENOENT;
}

TEST(dev_ptys)
{
	Fixture fx = {0};
	SbxView *v = NULL;
	SbxResolved r;
	EmuHost host = {0};
	unsigned mine, other;
	int m1, m2;
	char p[64], vp[64], err[256];
	struct stat st_host, st_view;

	m1 = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	m2 = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m1 < 0 || m2 < 0) {
		int e = errno;

		if (m1 >= 0)
			close(m1);
		if (m2 >= 0)
			close(m2);
		SKIP("no pseudo-terminals on this host (posix_openpt: %s)", strerror(e));
	}
	ASSERT_EQ(unlockpt(m1), 0);
	ASSERT_EQ(ioctl(m1, TIOCGPTN, &mine), 0);
	ASSERT_EQ(ioctl(m2, TIOCGPTN, &other), 0);
	host.userdata = &mine;
	host.open_pts = fake_open_pts;

	/* without process.pty: neither ptmx nor pts */
	fx_tree(&fx);
	fx_mount(&fx, "/workspace", "ws", MOUNT_RW);
	ASSERT_EQ(sbx_view_new(&fx.policy, &host, 0, &v, err, sizeof(err)), 0);
	EXPECT_EQ(fx_resolve(v, "/dev/ptmx", F, &r), -ENOENT);
	snprintf(p, sizeof(p), "/dev/pts/%u", mine);
	EXPECT_EQ(fx_resolve(v, p, F, &r), -ENOENT);
	sbx_view_free(v);

	fx.policy.process.pty = true;
	ASSERT_EQ(sbx_view_new(&fx.policy, &host, 0, &v, err, sizeof(err)), 0);
	ASSERT_EQ(fx_resolve(v, "/dev/ptmx", F, &r), 0);
	EXPECT_EQ(r.type, S_IFCHR);
	EXPECT_EQ(r.access, SBX_ACCESS_RW);
	sbx_resolved_done(&r);
	ASSERT_EQ(fx_resolve(v, "/dev/pts", F, &r), 0);
	EXPECT_EQ(r.type, S_IFDIR);
	EXPECT_TRUE(r.fixed);
	sbx_resolved_done(&r);
	/* ours: the host's pts N, reached through the host /dev/pts */
	ASSERT_EQ(fx_resolve(v, p, F, &r), 0);
	EXPECT_EQ(r.type, S_IFCHR);
	EXPECT_STREQ(r.host_path, p);
	EXPECT_EQ(fstat(r.fd, &st_view), 0);
	EXPECT_EQ(stat(p, &st_host), 0);
	EXPECT_EQ(st_view.st_rdev, st_host.st_rdev);
	EXPECT_EQ(fstatat(r.parent_fd, r.name, &st_view, AT_SYMLINK_NOFOLLOW), 0);
	EXPECT_EQ(st_view.st_rdev, st_host.st_rdev);
	sbx_resolved_done(&r);
	snprintf(vp, sizeof(vp), "/dev/pts/../pts/%u", mine);
	ASSERT_EQ(fx_resolve(v, vp, F, &r), 0);
	sbx_resolved_done(&r);
	EXPECT_EQ(sbx_view_vpath_of_host(v, p, vp, sizeof(vp), NULL), 0);
	EXPECT_STREQ(vp, p);
	/* not ours: absent, however named */
	snprintf(p, sizeof(p), "/dev/pts/%u", other);
	EXPECT_EQ(fx_resolve(v, p, F, &r), -ENOENT);
	EXPECT_EQ(fx_resolve(v, p, SBX_RESOLVE_NO_FD, &r), -ENOENT);
	EXPECT_EQ(fx_resolve(v, "/dev/pts/ptmx", F, &r), -ENOENT);
	snprintf(p, sizeof(p), "/dev/pts/0%u", mine);
	EXPECT_EQ(fx_resolve(v, p, F, &r), -ENOENT);
	snprintf(p, sizeof(p), "/dev/pts/%u/", mine);
	EXPECT_EQ(fx_resolve(v, p, F, &r), -ENOTDIR);
	fx_done(&fx, v);
	close(m1);
	close(m2);
}

TEST(dev_allowlist)
{
	Fixture fx = {0};
	SbxView *v = fx_view_flat(&fx, 0);
	SbxResolved r;
	char names[32][64];
	int n;

	ASSERT_EQ(fx_resolve(v, "/dev/null", F, &r), 0);
	EXPECT_EQ(r.type, S_IFCHR);
	EXPECT_EQ(r.access, SBX_ACCESS_RW);
	EXPECT_TRUE(r.fixed);
	EXPECT_STREQ(r.host_path, "/dev/null");
	sbx_resolved_done(&r);
	EXPECT_EQ(fx_resolve(v, "/dev/sda", F, &r), -ENOENT);
	EXPECT_EQ(fx_resolve(v, "/dev/tty", F, &r), -ENOENT); /* process.tty is false */
	EXPECT_EQ(fx_resolve(v, "/dev/mem", F, &r), -ENOENT);
	ASSERT_EQ(fx_resolve(v, "/dev", F, &r), 0);
	n = list_names(&r, names, 32);
	EXPECT_EQ(n, 5);
	EXPECT_TRUE(has_name(names, n, "urandom"));
	sbx_resolved_done(&r);
	ASSERT_EQ(fx_resolve(v, "/dev/newfile", SBX_RESOLVE_CREATE, &r), 0);
	EXPECT_EQ(r.access, SBX_ACCESS_RO);
	sbx_resolved_done(&r);
	fx_done(&fx, v);
}

TEST(proc_self_translation)
{
	char out[256];

	ASSERT_EQ(sbx_proc_translate("/proc", "/proc/self/fd/3", 43, 42, out, sizeof(out)), 0);
	EXPECT_STREQ(out, "/proc/42/fd/3");
	ASSERT_EQ(sbx_proc_translate("/proc", "/proc/thread-self", 43, 42, out, sizeof(out)), 0);
	EXPECT_STREQ(out, "/proc/42/task/43");
	ASSERT_EQ(sbx_proc_translate("/proc", "/proc/selfish", 43, 42, out, sizeof(out)), 0);
	EXPECT_STREQ(out, "/proc/selfish");
	EXPECT_EQ(sbx_proc_translate("/proc", "/proc/self", 43, 42, out, 6), -ENAMETOOLONG);
}

TEST(proc_mount_hides_other_pids)
{
	Fixture fx = {0};
	SbxView *v;
	SbxResolved r;
	char p[64], err[256];
	pid_t parent = getppid();

	fx_tree(&fx);
	fx_mount(&fx, "/proc", NULL, MOUNT_RO);
	fx.mounts[0].source = (char *) "/proc";
	ASSERT_EQ(sbx_view_new(&fx.policy, NULL, 0, &v, err, sizeof(err)), 0);
	ASSERT_EQ(sbx_view_mount_at(v, "/proc")->kind, SBX_MOUNT_PROC);

	ASSERT_EQ(fx_resolve(v, "/proc/self/status", F, &r), 0);
	snprintf(p, sizeof(p), "/proc/%d/status", (int) getpid());
	EXPECT_STREQ(r.vpath, p);
	sbx_resolved_done(&r);
	snprintf(p, sizeof(p), "/proc/%d/status", (int) parent);
	EXPECT_EQ(fx_resolve(v, p, F, &r), -ENOENT);
	EXPECT_EQ(fx_resolve(v, "/proc/1/environ", F, &r), -ENOENT);
	ASSERT_EQ(fx_resolve(v, "/proc/meminfo", F, &r), 0);
	sbx_resolved_done(&r);
	/* listings of /proc show our own pid only */
	{
		char buf[32768];
		int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		long len, off;
		int pids = 0, mine = 0, others = 0;

		ASSERT_GE(fd, 0);
		EXPECT_TRUE(sbx_view_filters_listings(v));
		while ((len = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
			long raw = len;

			for (off = 0; off < raw;) {
				struct {
					uint64_t ino;
					int64_t off;
					unsigned short reclen;
					unsigned char type;
					char name[];
				} *d = (void *) (buf + off);
				pids += d->name[0] >= '1' && d->name[0] <= '9';
				off += d->reclen;
			}
			len = (long) sbx_view_filter_dirents(v, "/proc", getpid(), getpid(), buf,
							     (size_t) len);
			for (off = 0; off < len;) {
				struct {
					uint64_t ino;
					int64_t off;
					unsigned short reclen;
					unsigned char type;
					char name[];
				} *d = (void *) (buf + off);
				if (d->name[0] >= '1' && d->name[0] <= '9') {
					if (atoi(d->name) == getpid())
						mine++;
					else
						others++;
				}
				off += d->reclen;
			}
		}
		close(fd);
		EXPECT_GE(pids, 2); /* at least us and pid 1 before filtering */
		EXPECT_EQ(mine, 1);
		EXPECT_EQ(others, 0);
	}
	/* the cwd magic link maps to a virtual path; our cwd is outside the view */
	EXPECT_EQ(fx_resolve(v, "/proc/self/cwd/x", F, &r), -ENOENT);
	fx_done(&fx, v);
}

TEST(bad_policies_are_refused)
{
	Fixture fx = {0};
	SbxView *v = NULL;
	char err[256] = "";

	fx_tree(&fx);
	fx_mount(&fx, "/workspace", "ws", MOUNT_RW);
	fx_mount(&fx, "/workspace/", "sys", MOUNT_RO);
	EXPECT_EQ(sbx_view_new(&fx.policy, NULL, 0, &v, err, sizeof(err)), -EINVAL);
	EXPECT_TRUE(strstr(err, "/workspace") != NULL);
	fx.policy.n_mounts = 0;
	fx_mount(&fx, "/workspace", "nonexistent", MOUNT_RW);
	EXPECT_EQ(sbx_view_new(&fx.policy, NULL, 0, &v, err, sizeof(err)), -ENOENT);
	fx.policy.n_mounts = 0;
	fx_mount(&fx, "relative", "ws", MOUNT_RW);
	EXPECT_EQ(sbx_view_new(&fx.policy, NULL, 0, &v, err, sizeof(err)), -EINVAL);
	(void) fx_rm_rf(fx.base);
}

TEST(unix_socket_addresses)
{
	Fixture fx = {0};
	SbxView *v = fx_view_flat(&fx, 0);
	SbxResolved rb, rc;
	struct sockaddr_un a;
	unsigned alen;
	int srv, cli, acc;
	struct stat st;
	SbxLookup l = {.path = "/workspace/s.sock", .dirfd = -1};

	srv = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cli = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_GE(srv, 0);
	ASSERT_EQ(sbx_view_unix_address(v, &l, true, &rb, &a, &alen), 0);
	ASSERT_EQ(bind(srv, (struct sockaddr *) &a, alen), 0);
	EXPECT_EQ(sbx_view_unix_bound(&rb, 027), 0);
	sbx_resolved_done(&rb);
	ASSERT_EQ(fx_stat(&fx, "ws/s.sock", &st), 0);
	EXPECT_TRUE(S_ISSOCK(st.st_mode));
	EXPECT_EQ(st.st_mode & 0777, 0750);
	ASSERT_EQ(listen(srv, 1), 0);

	ASSERT_EQ(sbx_view_unix_address(v, &l, false, &rc, &a, &alen), 0);
	ASSERT_EQ(connect(cli, (struct sockaddr *) &a, alen), 0);
	sbx_resolved_done(&rc);
	acc = accept4(srv, NULL, NULL, SOCK_CLOEXEC);
	EXPECT_GE(acc, 0);
	close(acc);

	EXPECT_EQ(sbx_view_unix_address(v, &l, true, &rb, &a, &alen), -EADDRINUSE);
	l.path = "/usr/lib/x.sock";
	EXPECT_EQ(sbx_view_unix_address(v, &l, true, &rb, &a, &alen), -EROFS);
	l.path = "/workspace/.env";
	EXPECT_EQ(sbx_view_unix_address(v, &l, false, &rc, &a, &alen), -ENOENT);
	EXPECT_EQ(sbx_view_unix_address(v, &l, true, &rb, &a, &alen), -EACCES);
	l.path = "/workspace/a.txt";
	EXPECT_EQ(sbx_view_unix_address(v, &l, false, &rc, &a, &alen), -ECONNREFUSED);
	l.path = "/workspace/nope.sock";
	EXPECT_EQ(sbx_view_unix_address(v, &l, false, &rc, &a, &alen), -ENOENT);
	close(srv);
	close(cli);
	fx_done(&fx, v);
}

/* COMPAT (no user namespace): a child's absolute name bound through an alias of the run's
 * directory lands in the checked directory, and reads back as the child's name */
TEST(unix_socket_alias)
{
	Fixture fx = {0};
	SbxView *v = fx_view_flat(&fx, 0);
	SbxResolved rb;
	struct sockaddr_un a, got;
	socklen_t gl = sizeof(got);
	unsigned alen, ul;
	struct stat st;
	int srv;
	SbxLookup l = {.path = "/workspace/a.sock", .dirfd = -1};

	srv = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT_GE(srv, 0);
	ASSERT_EQ(sbx_view_unix_address(v, &l, true, &rb, &a, &alen), 0);
	ASSERT_EQ(sbx_view_unix_alias(v, "/workspace/a.sock", &rb, 7, &a, &alen), 0);
	EXPECT_TRUE(strstr(a.sun_path, "/u/7/workspace/a.sock") != NULL);
	EXPECT_EQ(bind(srv, (struct sockaddr *) &a, alen), 0);
	sbx_view_unix_alias_done(v, "/workspace/a.sock", 7);
	sbx_resolved_done(&rb);
	/* in the checked directory; nothing left of the alias */
	ASSERT_EQ(fx_stat(&fx, "ws/a.sock", &st), 0);
	EXPECT_TRUE(S_ISSOCK(st.st_mode));
	*strstr(a.sun_path, "/u/") = 0;
	EXPECT_EQ(strlen(a.sun_path) > 0, 1);
	strcat(a.sun_path, "/u/7");
	EXPECT_EQ(lstat(a.sun_path, &st), -1);

	ASSERT_EQ(getsockname(srv, (struct sockaddr *) &got, &gl), 0);
	ul = gl;
	EXPECT_TRUE(sbx_view_unix_unalias(v, &got, &ul));
	EXPECT_EQ(strcmp(got.sun_path, "/workspace/a.sock"), 0);
	EXPECT_EQ(ul, offsetof(struct sockaddr_un, sun_path) + strlen("/workspace/a.sock") + 1);
	/* anything else is left alone */
	EXPECT_FALSE(sbx_view_unix_unalias(v, &got, &ul));
	EXPECT_FALSE(sbx_view_unix_unalias(NULL, &got, &ul));

	/* only absolute names */
	l.path = "/workspace/c.sock";
	ASSERT_EQ(sbx_view_unix_address(v, &l, true, &rb, &a, &alen), 0);
	EXPECT_EQ(sbx_view_unix_alias(v, "c.sock", &rb, 8, &a, &alen), -EINVAL);
	sbx_resolved_done(&rb);
	close(srv);
	fx_done(&fx, v);
}

TEST(view_of_the_standard_preset)
{
	Fixture fx = {0};
	Policy *p = NULL;
	PolicyError perr;
	SbxView *v = NULL;
	SbxResolved r;
	char ws[1100], err[256];
	PolicyVars vars = {0};

	fx_tree(&fx);
	snprintf(ws, sizeof(ws), "%s/ws", fx.base);
	vars.workspace = ws;
	vars.home = "/nonexistent";
	vars.pwd = ws;
	ASSERT_EQ(policy_load("standard", &vars, NULL, &p, &perr), 0);
	ASSERT_EQ(sbx_view_new(p, NULL, 0, &v, err, sizeof(err)), 0);

	ASSERT_EQ(fx_resolve(v, "/workspace/a.txt", SBX_RESOLVE_FOLLOW, &r), 0);
	EXPECT_EQ(r.access, SBX_ACCESS_RW);
	sbx_resolved_done(&r);
	/* /bin/sh -> dash on Debian: through the /bin mount and the /usr mount alike */
	ASSERT_EQ(fx_resolve(v, "/bin/sh", SBX_RESOLVE_FOLLOW, &r), 0);
	EXPECT_EQ(r.type, S_IFREG);
	EXPECT_EQ(r.access, SBX_ACCESS_RO);
	sbx_resolved_done(&r);
	ASSERT_EQ(fx_resolve(v, "/usr/bin/env", SBX_RESOLVE_FOLLOW, &r), 0);
	sbx_resolved_done(&r);
	/* not the host's: a synthesized read-only file with the running user, home /workspace */
	ASSERT_EQ(fx_resolve(v, "/etc/passwd", SBX_RESOLVE_FOLLOW, &r), 0);
	EXPECT_EQ(r.type, S_IFREG);
	EXPECT_EQ(r.access, SBX_ACCESS_RO);
	EXPECT_TRUE(r.fixed);
	{
		char text[1024] = "", want[64];
		int fd = openat(r.parent_fd, r.name, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
		unsigned lines = 0;

		ASSERT_TRUE(n > 0);
		text[n] = 0;
		(void) close(fd);
		snprintf(want, sizeof(want), ":x:%u:%u:", (unsigned) getuid(), (unsigned) getgid());
		EXPECT_TRUE(strstr(text, want) != NULL);
		EXPECT_TRUE(strstr(text, ":/workspace:/bin/sh\n") != NULL);
		for (const char *c = text; *c; c++)
			lines += *c == '\n';
		EXPECT_TRUE(lines <= 3);
	}
	sbx_resolved_done(&r);
	ASSERT_EQ(fx_resolve(v, "/etc/group", SBX_RESOLVE_FOLLOW, &r), 0);
	EXPECT_EQ(r.access, SBX_ACCESS_RO);
	sbx_resolved_done(&r);
	EXPECT_EQ(fx_resolve(v, "/etc/shadow", SBX_RESOLVE_FOLLOW, &r), -ENOENT);
	EXPECT_EQ(fx_resolve(v, "/home", SBX_RESOLVE_FOLLOW, &r), -ENOENT);
	EXPECT_EQ(fx_resolve(v, "/root", SBX_RESOLVE_FOLLOW, &r), -ENOENT);
	ASSERT_EQ(fx_resolve(v, "/tmp", SBX_RESOLVE_FOLLOW, &r), 0);
	EXPECT_EQ(r.access, SBX_ACCESS_RW);
	sbx_resolved_done(&r);
	sbx_view_free(v);
	policy_free(p);
	(void) fx_rm_rf(fx.base);
}

int main(void)
{
	return tap_run();
}
