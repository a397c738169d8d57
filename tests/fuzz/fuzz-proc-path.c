/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes the parsers of /proc paths a sandboxed program names (emulation/path/view.c):
 * sbx_proc_fd_path(), which finds the pid and fd of /proc/PID/fd/N and
 * /proc/PID/task/TID/fd/N (reopened through the child's own descriptor), and
 * sbx_proc_translate(), which rewrites /proc/self and /proc/thread-self to the caller.
 * Input: one byte for the size of the output buffer (0: PATH_MAX), one choosing the proc
 * mount's virtual path, then the path (up to its first NUL).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emulation/path/view.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const mounts[] = {"/proc", "/", "/a/proc", "/proc/sys"};
	const char *vpath;
	char *path, *out;
	size_t out_size;
	SbxMount m;
	pid_t pid = -1;
	int fd = -1, r;

	if (size < 2 || size > FUZZ_MAX_INPUT)
		return 0;
	out_size = data[0] ? data[0] : PATH_MAX;
	vpath = mounts[data[1] % (sizeof(mounts) / sizeof(mounts[0]))];
	path = strndup((const char *) data + 2, size - 2);
	out = malloc(out_size);
	if (!path || !out)
		abort();

	m = (SbxMount){.vpath = (char *) vpath, .vlen = strlen(vpath), .kind = SBX_MOUNT_PROC};
	if (sbx_proc_fd_path(&m, path, &pid, &fd)) {
		/* only below the mount, and numbers the kernel could hand out */
		if (strncmp(path, vpath, m.vlen) != 0 || pid < 0 || fd < 0 || !strstr(path, "/fd/"))
			abort();
	}
	/* any other kind of mount holds no /proc paths */
	m.kind = SBX_MOUNT_DIR;
	if (sbx_proc_fd_path(&m, path, &pid, &fd))
		abort();
	if (sbx_proc_fd_path(NULL, path, &pid, &fd))
		abort();

	r = sbx_proc_translate(vpath, path, 43, 42, out, out_size);
	if (r == 0) {
		size_t len = strlen(out);

		if (len >= out_size)
			abort();
		/* changed only where it named self or thread-self, and then only there */
		if (strcmp(out, path) != 0 && (strncmp(out, vpath, m.vlen) != 0 ||
					       (!strstr(path, "self") || !strstr(out, "42"))))
			abort();
	} else if (r != -ENAMETOOLONG) {
		abort();
	}
	free(out);
	free(path);
	return 0;
}
