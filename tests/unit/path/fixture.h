/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A temporary host tree and policies built by hand for the view tests:
 *
 *   $TMP/sbx-fs-XXXXXX/
 *     secret                  a file outside every mount (the thing to protect)
 *     ws/                     mounted rw at /workspace
 *       a.txt  dir/sub.txt  .env (hidden)  denied/x (deny)  vendor/v.txt (ro rule)
 *       link_abs -> /etc/shadow    link_passwd -> /etc/passwd   link_rel -> dir/sub.txt
 *       link_up -> ../secret       loop1 -> loop2 -> loop1      link_root -> /
 *     sys/lib/libx.so         mounted ro at /usr
 *     etc/passwd etc/shadow   mounted ro at /etc, /etc/shadow hidden by a rule
 *     rootfs/                 mounted ro at / in the nested variant
 *       workspace/shadowed.txt (must never be seen: /workspace is a nested mount)
 *       usr/lib/libx.so  lnk_ws -> workspace/a.txt  escape -> ../../secret
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emulation/path/view.h"

typedef struct Fixture {
	char base[512];
	char path[1024];
	Policy policy;
	PolicyMount mounts[8];
	PolicyRule rules[8];
	char src[8][1024];
} Fixture;

static inline void fx_write(const char *base, const char *rel, const char *text)
{
	char p[2048];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	f = fopen(p, "we");
	if (!f) {
		perror(p);
		exit(99);
	}
	fputs(text, f);
	fclose(f);
}

static inline void fx_mkdir(const char *base, const char *rel)
{
	char p[2048];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	if (mkdir(p, 0755) < 0 && errno != EEXIST) {
		perror(p);
		exit(99);
	}
}

static inline void fx_symlink(const char *base, const char *rel, const char *target)
{
	char p[2048];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	if (symlink(target, p) < 0) {
		perror(p);
		exit(99);
	}
}

static inline void fx_tree(Fixture *fx)
{
	const char *t = getenv("TMPDIR");

	snprintf(fx->base, sizeof(fx->base), "%s/sbx-fs-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(fx->base)) {
		perror("mkdtemp");
		exit(99);
	}
	fx_write(fx->base, "secret", "TOP SECRET\n");
	fx_mkdir(fx->base, "ws");
	fx_write(fx->base, "ws/a.txt", "a\n");
	fx_mkdir(fx->base, "ws/dir");
	fx_write(fx->base, "ws/dir/sub.txt", "sub\n");
	fx_write(fx->base, "ws/.env", "KEY=1\n");
	fx_mkdir(fx->base, "ws/denied");
	fx_write(fx->base, "ws/denied/x", "x\n");
	fx_mkdir(fx->base, "ws/vendor");
	fx_write(fx->base, "ws/vendor/v.txt", "v\n");
	fx_symlink(fx->base, "ws/link_abs", "/etc/shadow");
	fx_symlink(fx->base, "ws/link_passwd", "/etc/passwd");
	fx_symlink(fx->base, "ws/link_rel", "dir/sub.txt");
	fx_symlink(fx->base, "ws/link_up", "../secret");
	fx_symlink(fx->base, "ws/loop1", "loop2");
	fx_symlink(fx->base, "ws/loop2", "loop1");
	fx_symlink(fx->base, "ws/link_root", "/");
	fx_mkdir(fx->base, "sys");
	fx_mkdir(fx->base, "sys/lib");
	fx_write(fx->base, "sys/lib/libx.so", "ELF\n");
	fx_mkdir(fx->base, "etc");
	fx_write(fx->base, "etc/passwd", "root:x:0:0\n");
	fx_write(fx->base, "etc/shadow", "root:HASH\n");
	fx_mkdir(fx->base, "rootfs");
	fx_mkdir(fx->base, "rootfs/workspace");
	fx_write(fx->base, "rootfs/workspace/shadowed.txt", "hidden by the nested mount\n");
	fx_mkdir(fx->base, "rootfs/usr");
	fx_mkdir(fx->base, "rootfs/usr/lib");
	fx_write(fx->base, "rootfs/usr/lib/libx.so", "ELF\n");
	fx_symlink(fx->base, "rootfs/lnk_ws", "workspace/a.txt");
	fx_symlink(fx->base, "rootfs/escape", "../../secret");
}

static inline void fx_mount(Fixture *fx, const char *vpath, const char *rel, MountMode mode)
{
	size_t i = fx->policy.n_mounts++;

	fx->mounts[i] = (PolicyMount){.path = (char *) vpath, .mode = mode};
	if (rel) {
		size_t bl = strlen(fx->base), rl = strlen(rel);

		if (bl + rl + 2 > sizeof(fx->src[i]))
			exit(99);
		memcpy(fx->src[i], fx->base, bl);
		fx->src[i][bl] = '/';
		memcpy(fx->src[i] + bl + 1, rel, rl + 1);
		fx->mounts[i].source = fx->src[i];
	}
	fx->policy.mounts = fx->mounts;
}

static inline void fx_rule(Fixture *fx, const char *glob, RuleAccess a)
{
	size_t i = fx->policy.n_rules++;

	fx->rules[i] = (PolicyRule){.glob = (char *) glob, .access = a};
	fx->policy.rules = fx->rules;
}

static inline void fx_rules(Fixture *fx)
{
	fx_rule(fx, "/workspace/.env", RULE_ACCESS_HIDE);
	fx_rule(fx, "/etc/shadow", RULE_ACCESS_HIDE);
	fx_rule(fx, "/workspace/denied", RULE_ACCESS_DENY);
	fx_rule(fx, "/workspace/vendor/**", RULE_ACCESS_RO);
	fx_rule(fx, "/workspace/held", RULE_ACCESS_ASK_WRITE); /* issue 17: held writes */
}

/* Flat view: /workspace rw, /usr ro, /etc ro, /tmp tmp; no mount at "/". */
static inline SbxView *fx_view_flat(Fixture *fx, unsigned flags)
{
	SbxView *v = NULL;
	char err[256] = "";
	int r;

	fx_tree(fx);
	fx_mount(fx, "/workspace", "ws", MOUNT_RW);
	fx_mount(fx, "/usr", "sys", MOUNT_RO);
	fx_mount(fx, "/etc", "etc", MOUNT_RO);
	fx_mount(fx, "/tmp", NULL, MOUNT_TMP);
	fx_rules(fx);
	r = sbx_view_new(&fx->policy, NULL, flags, &v, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "sbx_view_new: %s: %s\n", strerror(-r), err);
		exit(99);
	}
	return v;
}

/* Nested view: / ro from rootfs, /workspace rw inside it, /deep/er/mnt (absent in rootfs). */
static inline SbxView *fx_view_nested(Fixture *fx, unsigned flags)
{
	SbxView *v = NULL;
	char err[256] = "";
	int r;

	fx_tree(fx);
	fx_mount(fx, "/", "rootfs", MOUNT_RO);
	fx_mount(fx, "/workspace", "ws", MOUNT_RW);
	fx_mount(fx, "/deep/er/mnt", "sys", MOUNT_RO);
	fx_rules(fx);
	r = sbx_view_new(&fx->policy, NULL, flags, &v, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "sbx_view_new: %s: %s\n", strerror(-r), err);
		exit(99);
	}
	return v;
}

static inline int fx_rm_rf(const char *path)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", path);
	return system(cmd);
}

static inline void fx_done(Fixture *fx, SbxView *v)
{
	sbx_view_free(v);
	(void) fx_rm_rf(fx->base);
}

/* dev/ino of a host path, for "is this the secret?" checks. */
static inline int fx_stat(const Fixture *fx, const char *rel, struct stat *st)
{
	char p[2048];

	snprintf(p, sizeof(p), "%s/%s", fx->base, rel);
	return lstat(p, st);
}

static inline int fx_resolve(const SbxView *v, const char *path, unsigned flags, SbxResolved *r)
{
	SbxLookup l = {
		.path = path, .dirfd = -1, .tid = getpid(), .tgid = getpid(), .flags = flags};

	return sbx_view_resolve(v, &l, r);
}
