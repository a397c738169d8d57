/* SPDX-License-Identifier: MIT */
/*
 * Races against the walk (suite 'slow'): a thread keeps swapping a directory of the
 * workspace with symlinks that lead out of it (absolute host path, relative "..") while the
 * main thread resolves and opens through it thousands of times. Whatever interleaving
 * happens, nothing that is opened may be a file outside the view: checked by dev/ino against
 * the secrets. Iterations: $SBX_RACE_ITERS (default 20000 per case).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/macros.h"
#include "emulation/fs.h"
#include "tests/unit/path/fixture.h"
#include "tests/unit/path/self-mem.h"
#include "tests/unit/tap.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

typedef struct Race {
	int wsfd;
	atomic_bool stop;
	atomic_ulong swaps;
	const char *alt;  /* name of the symlink swapped with "race" */
	const char *name; /* NULL: "race" */
} Race;

static void *swapper(void *arg)
{
	Race *r = arg;

	do {
		if (syscall(SYS_renameat2, r->wsfd, r->name ? r->name : "race", r->wsfd, r->alt,
			    RENAME_EXCHANGE) == 0)
			atomic_fetch_add(&r->swaps, 1);
	} while (!atomic_load(&r->stop));
	return NULL;
}

static unsigned iterations(void)
{
	const char *s = getenv("SBX_RACE_ITERS");
	long n = s ? strtol(s, NULL, 10) : 0;

	return n > 0 ? (unsigned) n : 20000;
}

static bool is_secret(int fd, const struct stat *s1, const struct stat *s2)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return false;
	return (st.st_dev == s1->st_dev && st.st_ino == s1->st_ino) ||
	       (st.st_dev == s2->st_dev && st.st_ino == s2->st_ino);
}

/* One case: "race" swapped with a symlink whose target is link_target (NULL: the absolute
 * host path of the fixture, where the secrets are). */
static void run_case(int *_tap_failed, const char *link_target, unsigned rflags)
{
	Fixture fx = {0};
	SbxView *v = fx_view_flat(&fx, 0);
	struct stat s1, s2;
	char p[1200];
	Race race = {.alt = "alt"};
	pthread_t th;
	unsigned n = iterations(), ok = 0, leaks = 0, outside = 0;

	/* the secrets: base/secret, and base/sub/secret for the relative variant */
	fx_mkdir(fx.base, "sub");
	fx_write(fx.base, "sub/secret", "SECRET TOO\n");
	ASSERT_EQ(fx_stat(&fx, "secret", &s1), 0);
	ASSERT_EQ(fx_stat(&fx, "sub/secret", &s2), 0);
	/* decoys inside the workspace with the same names */
	fx_mkdir(fx.base, "ws/race");
	fx_write(fx.base, "ws/race/secret", "decoy\n");
	fx_mkdir(fx.base, "ws/race/sub");
	fx_write(fx.base, "ws/race/sub/secret", "decoy\n");
	fx_symlink(fx.base, "ws/alt", link_target ? link_target : fx.base);
	snprintf(p, sizeof(p), "%s/ws", fx.base);
	race.wsfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ASSERT_GE(race.wsfd, 0);

	ASSERT_EQ(pthread_create(&th, NULL, swapper, &race), 0);
	for (unsigned i = 0; i < n; i++) {
		static const char *const paths[] = {
			"/workspace/race/secret", "/workspace/race/sub/secret",
			"/workspace/race/../race/secret", "race/sub/secret", "race/../race/secret"};
		/* relative ones start from /workspace given by its virtual path only (no fd),
		 * as with the host's get_path */
		SbxLookup l = {.path = paths[i % 5],
			       .dirfd = -1,
			       .dir_vpath = "/workspace",
			       .flags = SBX_RESOLVE_FOLLOW | rflags};
		SbxResolved r;
		int k = sbx_view_resolve(v, &l, &r);

		if (k < 0)
			continue;
		ok++;
		if (r.fd >= 0 && is_secret(r.fd, &s1, &s2))
			leaks++;
		if (strncmp(r.vpath, "/workspace/", 11) != 0)
			outside++;
		/* and what an open does with the pinned parent and name */
		if (r.exists) {
			int fd = openat(r.parent_fd, r.name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

			if (fd >= 0) {
				if (is_secret(fd, &s1, &s2))
					leaks++;
				close(fd);
			}
		}
		sbx_resolved_done(&r);
	}
	atomic_store(&race.stop, true);
	pthread_join(th, NULL);
	printf("# target %s flags %#x: %u lookups, %u resolved, %lu swaps\n",
	       link_target ? link_target : "(host base)", rflags, n, ok,
	       (unsigned long) atomic_load(&race.swaps));
	EXPECT_EQ(leaks, 0);
	EXPECT_EQ(outside, 0);
	EXPECT_GE(atomic_load(&race.swaps), 1);
	close(race.wsfd);
	fx_done(&fx, v);
}

TEST(swap_with_absolute_host_symlink)
{
	run_case(_tap_failed, NULL, 0);
	run_case(_tap_failed, NULL, SBX_RESOLVE_NO_FAST);
}

TEST(swap_with_relative_dotdot_symlink)
{
	/* ws/alt -> ".." is the fixture base on the host, where the secrets are */
	run_case(_tap_failed, "..", 0);
	run_case(_tap_failed, "..", SBX_RESOLVE_NO_FAST);
	run_case(_tap_failed, "../sub/..", 0);
}

static int umask022(void *userdata, pid_t pid)
{
	(void) userdata;
	(void) pid;
	return 022;
}

/* The write-capable handlers under the same race: the host secrets and the host directory
 * around the workspace must come out untouched. */
TEST(handlers_under_swap_never_touch_the_host)
{
	EmuHost host = {.get_umask = umask022, .get_path = sbx_default_get_path};
	Fixture fx = {0};
	SbxView *v;
	char err[256], p[1200];
	struct stat s1, s2, a1, a2;
	Race race = {.alt = "alt"}, race2 = {.alt = "slink", .name = "secret"};
	pthread_t th, th2;
	unsigned n = iterations();

	fx_tree(&fx);
	fx_mount(&fx, "/workspace", "ws", MOUNT_RW);
	ASSERT_EQ(sbx_view_new(&fx.policy, &host, 0, &v, err, sizeof(err)), 0);
	fx_mkdir(fx.base, "ws/race");
	fx_write(fx.base, "ws/race/secret", "decoy\n");
	fx_symlink(fx.base, "ws/alt", fx.base);
	ASSERT_EQ(fx_stat(&fx, "secret", &s1), 0);
	snprintf(p, sizeof(p), "%s/ws", fx.base);
	race.wsfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ASSERT_EQ(pthread_create(&th, NULL, swapper, &race), 0);
	/* and, inside race/, the last component: secret <-> a symlink to the host secret */
	snprintf(p, sizeof(p), "%s/secret", fx.base);
	fx_symlink(fx.base, "ws/race/slink", p);
	snprintf(p, sizeof(p), "%s/ws/race", fx.base);
	race2.wsfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ASSERT_EQ(pthread_create(&th2, NULL, swapper, &race2), 0);
	for (unsigned i = 0; i < n; i++) {
		EmuRequest req = {.view = v,
				  .mem = &self_mem,
				  .pid = getpid(),
				  .known_tgid = getpid(),
				  .host = &host};
		EmuDecision d;

		emu_decision_init(&d);
		switch (i % 6) {
		case 0:
			req.nr = SYS_chmod;
			req.args[0] = (uintptr_t) "/workspace/race/secret";
			req.args[1] = 0777;
			(void) emu_handle_chmod(&req, &d);
			break;
		case 1:
			req.nr = SYS_truncate;
			req.args[0] = (uintptr_t) "/workspace/race/secret";
			req.args[1] = 0;
			(void) emu_handle_truncate(&req, &d);
			break;
		case 2:
			req.nr = SYS_open;
			req.args[0] = (uintptr_t) "/workspace/race/created";
			req.args[1] = O_WRONLY | O_CREAT | O_TRUNC;
			req.args[2] = 0644;
			(void) emu_handle_open(&req, &d);
			break;
		case 3:
			req.nr = SYS_unlink;
			req.args[0] = (uintptr_t) "/workspace/race/created";
			(void) emu_handle_unlink(&req, &d);
			break;
		case 4:
			req.nr = SYS_open;
			req.args[0] = (uintptr_t) "/workspace/race/secret";
			req.args[1] = O_RDWR | O_APPEND;
			(void) emu_handle_open(&req, &d);
			if (d.inject_fd >= 0 && is_secret(d.inject_fd, &s1, &s1))
				EXPECT_TRUE(false);
			break;
		default:
			req.nr = SYS_utimensat;
			req.args[0] = (uint64_t) AT_FDCWD;
			req.args[1] = (uintptr_t) "/workspace/race/secret";
			(void) emu_handle_utimes(&req, &d);
			break;
		}
		if (d.inject_fd >= 0)
			close(d.inject_fd);
	}
	atomic_store(&race.stop, true);
	atomic_store(&race2.stop, true);
	pthread_join(th, NULL);
	pthread_join(th2, NULL);
	close(race2.wsfd);
	/* the secret outside: same content, mode, times; nothing created next to it */
	ASSERT_EQ(fx_stat(&fx, "secret", &s2), 0);
	EXPECT_EQ(s2.st_size, s1.st_size);
	EXPECT_EQ(s2.st_mode, s1.st_mode);
	EXPECT_EQ(s2.st_mtim.tv_sec, s1.st_mtim.tv_sec);
	EXPECT_EQ(s2.st_mtim.tv_nsec, s1.st_mtim.tv_nsec);
	EXPECT_EQ(fx_stat(&fx, "created", &a1), -1);
	(void) a2;
	printf("# %u handler calls, %lu + %lu swaps\n", n, (unsigned long) atomic_load(&race.swaps),
	       (unsigned long) atomic_load(&race2.swaps));
	close(race.wsfd);
	fx_done(&fx, v);
}

int main(void)
{
	return tap_run();
}
