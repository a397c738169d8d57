/* SPDX-License-Identifier: MIT */
/*
 * A process of the same user plants a symlink where a mount point nested in a tmp mount is
 * to be made (issue 20). The tmp mount's directory is made by the supervisor under
 * $XDG_RUNTIME_DIR, which this test points at a directory it watches with inotify: as soon
 * as a sbxtrace-tmp-* directory appears, "nest" in it becomes a symlink to the host's secret
 * directory, before C makes /tmp/nest/ws for the workspace (fs-tmp-nested-mounts' policy).
 * In the kernel view C makes mount points a component at a time without following symlinks,
 * so the run fails closed (125) rather than make a directory in, or bind the workspace
 * over, the secret directory; in the emulated view the mount table wins over the planted
 * name. Outside: the secret directory holds only the secret, and the symlink was planted.
 */
#define FS_HAVE_PREPARE
#define FS_HAVE_CHECK
#define FS_OWN_MAIN
#include "tests/security/fs-escape.h"

#include <signal.h>
#include <sys/inotify.h>

static char runtime_dir[PATH_MAX - 64];
static char planted_flag[PATH_MAX];
static pid_t planter = -1;

static __attribute__((noreturn)) void plant(const char *secret_dir, int ready)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int in = inotify_init1(IN_CLOEXEC);

	if (in < 0 || inotify_add_watch(in, runtime_dir, IN_CREATE | IN_ONLYDIR) < 0)
		_exit(1);
	/* watching: the run may start */
	(void) !write(ready, "1", 1);
	close(ready);
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));

		for (ssize_t off = 0; n > 0 && off < n;) {
			const struct inotify_event *e = (const void *) (buf + off);
			char p[PATH_MAX * 2];

			off += (ssize_t) (sizeof(*e) + e->len);
			if (!e->len || strncmp(e->name, "sbxtrace-tmp-", 13) != 0)
				continue;
			snprintf(p, sizeof(p), "%s/%s/nest", runtime_dir, e->name);
			/* on a loaded machine C may make "nest" first (EEXIST): that round tested
			 * nothing, and main() runs another */
			if (symlink(secret_dir, p) == 0)
				(void) fs_write_file(planted_flag, "1");
		}
	}
}

static void fs_prepare(const char *ws)
{
	char secret_dir[PATH_MAX], c;
	int ready[2];

	fs_extra_sets[0] = "mount=[{path = \"/tmp/nest/ws\", source = \"${WORKSPACE}\", mode = "
			   "\"rw\"}]";
	/* BASE/ws -> BASE/secret */
	snprintf(secret_dir, sizeof(secret_dir), "%.*s/secret", (int) (strrchr(ws, '/') - ws), ws);
	snprintf(runtime_dir, sizeof(runtime_dir), "%.*s/run", (int) (strrchr(ws, '/') - ws), ws);
	/* outside BASE, which fs_outside() removes */
	snprintf(planted_flag, sizeof(planted_flag), "%s/fs-tmp-mount-point-symlink.%d",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int) getpid());
	(void) unlink(planted_flag);
	if (mkdir(runtime_dir, 0700) < 0)
		return;
	(void) setenv("XDG_RUNTIME_DIR", runtime_dir, 1);
	if (pipe2(ready, O_CLOEXEC) < 0)
		return;
	planter = fork();
	if (planter == 0) {
		close(ready[0]);
		plant(secret_dir, ready[1]);
	}
	close(ready[1]);
	/* the run starts once the planter watches (a fixed pause was too short under load) */
	(void) !read(ready[0], &c, 1);
	close(ready[0]);
}

/* also when the run is skipped (77, no kernel view here): the planter holds our stdout */
static void stop_planter(void)
{
	if (planter > 0) {
		(void) kill(planter, SIGKILL);
		(void) waitpid(planter, NULL, 0);
		planter = -1;
	}
}

static int fs_check(void)
{
	char p[PATH_MAX + 16];
	DIR *d;
	struct dirent *de;
	int bad = 0;

	stop_planter();
	snprintf(p, sizeof(p), "%.*s/secret", (int) (strrchr(runtime_dir, '/') - runtime_dir),
		 runtime_dir);
	d = opendir(p);
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strcmp(de->d_name, "secret.txt")) {
			fprintf(stderr, "ESCAPE: '%s' appeared in the secret directory\n",
				de->d_name);
			bad = 1;
		}
	if (d)
		closedir(d);
	return bad;
}

static int attack(void)
{
	struct stat a, b;

	/* whatever /tmp/nest is, it does not lead to the secret */
	fs_try_open("/tmp/nest/secret.txt");
	fs_try_open("/tmp/nest/ws/../secret.txt");
	if (stat("/workspace", &a) < 0 || stat("/tmp/nest/ws", &b) < 0 || a.st_ino != b.st_ino)
		fs_bad("/tmp/nest/ws is not the workspace");
	return 0;
}

int main(int argc, char *argv[])
{
	bool planted;
	int r;

	if (argc >= 3 && strcmp(argv[1], "inside") == 0) {
		setvbuf(stderr, NULL, _IONBF, 0);
		fs_base = argv[2];
		snprintf(fs_secret, sizeof(fs_secret), "%s/secret/secret.txt", fs_base);
		return attack() || fs_failures ? 1 : 0;
	}
	for (int i = 1; i < argc; i++)
		fs_kernel_view |= strcmp(argv[i], "--kernel-view") == 0;
	/* rounds until one where the planter won the race against C (5 at most): a round it
	 * lost tested nothing, but any round's escape counts */
	for (int round = 0; round < 5; round++) {
		r = fs_outside(!(argc > 1 && strcmp(argv[1], "--no-landlock") == 0));
		stop_planter();
		planted = access(planted_flag, F_OK) == 0;
		(void) unlink(planted_flag);
		if (planted || (r != 0 && r != 125))
			break;
		fprintf(stderr, "round %d: C made the mount point before the planter\n", round + 1);
	}
	if (!planted && r != 77) {
		fprintf(stderr, "the symlink was never planted: the test tested nothing\n");
		return 1;
	}
	/* the kernel view refuses to make a mount point through the symlink: failed closed */
	if (fs_kernel_view && r == 125)
		return 0;
	return r;
}
