/* SPDX-License-Identifier: MIT */
/* File handles bypass every path check: name_to_handle_at and open_by_handle_at are denied. */
#include "tests/security/fs-escape.h"

struct handle {
	unsigned int handle_bytes;
	int handle_type;
	unsigned char f_handle[128];
};

static int attack(void)
{
	struct handle h = {.handle_bytes = 128};
	int mount_id, fd, dfd;

	if (syscall(SYS_name_to_handle_at, AT_FDCWD, "/workspace/prog", &h, &mount_id, 0) == 0)
		fs_bad("name_to_handle_at succeeded");
	dfd = open("/workspace", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 1;
	/* a guessed handle: whatever it names, the call itself must be refused */
	h.handle_bytes = 8;
	h.handle_type = 1;
	memset(h.f_handle, 0, sizeof(h.f_handle));
	fd = (int) syscall(SYS_open_by_handle_at, dfd, &h, O_RDONLY);
	if (fd >= 0) {
		fs_bad("open_by_handle_at succeeded");
		close(fd);
	} else if (errno != EPERM && errno != ENOSYS) {
		fprintf(stderr, "open_by_handle_at: unexpected %s\n", strerror(errno));
		return 1;
	}
	close(dfd);
	return 0;
}
