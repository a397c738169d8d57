/* SPDX-License-Identifier: MIT */
/*
 * Cost of a path resolution in the view, per lookup in µs: the component walk against the
 * openat2() fast path, for several depths, against a plain openat() of the host path, plus
 * the whole open handler (resolve + open) and a relative lookup (cwd mapping included).
 *
 *   fs-resolve [iterations]     (default 100000)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/macros.h"
#include "emulation/fs.h"
#include "emulation/path/view.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static int self_read(const ChildMem *m, uint64_t addr, void *buf, size_t len)
{
	(void) m;
	memcpy(buf, (const void *) (uintptr_t) addr, len);
	return 0;
}

static int self_read_string(const ChildMem *m, uint64_t addr, char *buf, size_t size)
{
	(void) m;
	snprintf(buf, size, "%s", (const char *) (uintptr_t) addr);
	return 0;
}

static int umask0(void *userdata, pid_t pid)
{
	(void) userdata;
	(void) pid;
	return 022;
}

static void mk(const char *p)
{
	if (mkdir(p, 0755) < 0) {
		perror(p);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned) strtoul(argv[1], NULL, 10) : 100000;
	const char *t = getenv("TMPDIR");
	char base[512], p[1024], host[1024], cmd[1100];
	PolicyMount mounts[2];
	Policy pol = {0};
	SbxView *v;
	char err[256];
	static const char *const rel[] = {"f", "a/b/c/f", "a/b/c/d/e/g/h/f"};
	EmuHost emu_host = {.get_umask = umask0};
	static const ChildMem mem = {self_read, self_read_string, NULL};

	snprintf(base, sizeof(base), "%s/sbx-bench-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(base))
		return 1;
	snprintf(p, sizeof(p), "%s/ws", base);
	mk(p);
	snprintf(p, sizeof(p), "%s/ws/a", base);
	mk(p);
	strcat(p, "/b"), mk(p);
	strcat(p, "/c"), mk(p);
	strcat(p, "/d"), mk(p);
	strcat(p, "/e"), mk(p);
	strcat(p, "/g"), mk(p);
	strcat(p, "/h"), mk(p);
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/ws/%s", base, rel[i]);
		close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	}
	snprintf(host, sizeof(host), "%s/ws", base);
	mounts[0] = (PolicyMount){.path = (char *) "/", .source = (char *) "/", .mode = MOUNT_RO};
	mounts[1] = (PolicyMount){.path = (char *) "/workspace", .source = host, .mode = MOUNT_RW};
	pol.mounts = mounts;
	pol.n_mounts = 2;
	if (sbx_view_new(&pol, &emu_host, 0, &v, err, sizeof(err)) < 0) {
		fprintf(stderr, "view: %s\n", err);
		return 1;
	}
	umask(0);

	printf("µs per call, %u calls each; openat = native O_PATH open+close of the host path;\n"
	       "fast/walk = sbx_view_resolve (+done); open-hdlr = emu_handle_open + close;\n"
	       "stat-hdlr = emu_handle_stat (newfstatat)\n",
	       n);
	printf("%-28s %10s %10s %10s %10s %10s\n", "path (depth in mount)", "openat", "fast",
	       "walk", "open-hdlr", "stat-hdlr");
	for (size_t i = 0; i < 3; i++) {
		char vpath[256];
		double t0, native, fast, walk, hdl, sth;
		int fast_hits = 0;

		snprintf(vpath, sizeof(vpath), "/workspace/%s", rel[i]);
		snprintf(p, sizeof(p), "%s/ws/%s", base, rel[i]);
		t0 = now_us();
		for (unsigned k = 0; k < n; k++)
			close(open(p, O_PATH | O_CLOEXEC));
		native = (now_us() - t0) / n;
		for (int mode = 0; mode < 2; mode++) {
			SbxLookup l = {.path = vpath,
				       .dirfd = -1,
				       .flags = SBX_RESOLVE_FOLLOW |
						(mode ? SBX_RESOLVE_NO_FAST : 0)};
			SbxResolved r;

			t0 = now_us();
			for (unsigned k = 0; k < n; k++) {
				if (sbx_view_resolve(v, &l, &r) < 0)
					return 2;
				fast_hits += r.fast;
				sbx_resolved_done(&r);
			}
			if (mode)
				walk = (now_us() - t0) / n;
			else
				fast = (now_us() - t0) / n;
		}
		{
			EmuRequest req = {.view = v,
					  .host = &emu_host,
					  .mem = &mem,
					  .pid = getpid(),
					  .known_tgid = getpid(),
					  .nr = SYS_openat,
					  .args = {(uint64_t) AT_FDCWD,
						   (uint64_t) (uintptr_t) vpath,
						   O_RDONLY | O_CLOEXEC}};
			EmuDecision d;

			t0 = now_us();
			for (unsigned k = 0; k < n; k++) {
				emu_decision_init(&d);
				if (emu_handle_open(&req, &d) < 0 || d.inject_fd < 0)
					return 3;
				close(d.inject_fd);
			}
			hdl = (now_us() - t0) / n;
		}
		{
			struct stat st;
			EmuRequest req = {.view = v,
					  .host = &emu_host,
					  .mem = &mem,
					  .pid = getpid(),
					  .known_tgid = getpid(),
					  .nr = SYS_newfstatat,
					  .args = {(uint64_t) AT_FDCWD,
						   (uint64_t) (uintptr_t) vpath,
						   (uint64_t) (uintptr_t) &st, 0}};
			EmuDecision d;

			t0 = now_us();
			for (unsigned k = 0; k < n; k++) {
				emu_decision_init(&d);
				if (emu_handle_stat(&req, &d) < 0 || d.verdict != EMU_RETURN)
					return 3;
			}
			sth = (now_us() - t0) / n;
		}
		printf("%-28s %10.2f %10.2f %10.2f %10.2f %10.2f%s\n", vpath, native, fast, walk,
		       hdl, sth, fast_hits == (int) n ? "" : "  (fast path not taken!)");
	}

	/* outside the workspace: /usr/bin/sh through the "/" mount (host symlinks possible) */
	{
		static const char *const sys[] = {"/usr/lib/os-release", "/etc/passwd",
						  "/usr/bin/sh", "/workspace/a/b/c/../../b/c/f"};

		for (size_t i = 0; i < ARRAY_SIZE(sys); i++) {
			double t0, fast, walk;
			int fast_hits = 0;

			for (int mode = 0; mode < 2; mode++) {
				SbxLookup l = {.path = sys[i],
					       .dirfd = -1,
					       .flags = SBX_RESOLVE_FOLLOW |
							(mode ? SBX_RESOLVE_NO_FAST : 0)};
				SbxResolved r;

				t0 = now_us();
				for (unsigned k = 0; k < n; k++) {
					if (sbx_view_resolve(v, &l, &r) < 0)
						break;
					fast_hits += r.fast;
					sbx_resolved_done(&r);
				}
				if (mode)
					walk = (now_us() - t0) / n;
				else
					fast = (now_us() - t0) / n;
			}
			printf("%-28s %10s %10.2f %10.2f %10s %10s%s\n", sys[i], "", fast, walk, "",
			       "", fast_hits == (int) n ? "" : "  (answered by the walk)");
		}
	}

	/* relative: cwd inside the workspace; the start found with the host's get_path (one
	 * readlink of /proc/PID/cwd) and with get_fd (open /proc/PID/cwd, readlink, close) */
	for (int mode = 0; mode < 2; mode++) {
		SbxView *v2;
		EmuHost h2 = {.get_umask = umask0,
			      .get_path = mode == 0 ? sbx_default_get_path : NULL};
		EmuRequest req = {.mem = &mem,
				  .host = &h2,
				  .pid = getpid(),
				  .known_tgid = getpid(),
				  .nr = SYS_openat,
				  .args = {(uint64_t) AT_FDCWD, (uint64_t) (uintptr_t) "b/c/f",
					   O_RDONLY | O_CLOEXEC}};
		EmuDecision d;
		double t0;

		if (sbx_view_new(&pol, &h2, 0, &v2, err, sizeof(err)) < 0)
			return 1;
		req.view = v2;
		snprintf(p, sizeof(p), "%s/ws/a", base);
		if (chdir(p) < 0)
			return 4;
		t0 = now_us();
		for (unsigned k = 0; k < n; k++) {
			emu_decision_init(&d);
			if (emu_handle_open(&req, &d) < 0 || d.inject_fd < 0)
				return 5;
			close(d.inject_fd);
		}
		printf("%-28s %10s %10s %10s %10.2f\n",
		       mode == 0 ? "relative b/c/f, get_path" : "relative b/c/f, get_fd", "", "",
		       "", (now_us() - t0) / n);
		if (chdir("/") < 0)
			return 6;
		sbx_view_free(v2);
	}

	sbx_view_free(v);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : 1;
}
