/* SPDX-License-Identifier: MIT */
/*
 * Reading and writing the memory of the process that made a notified call.
 *
 * process_vm_readv(2) first; /proc/PID/mem (pread) when it is unavailable (COMPAT: kernels
 * built without CONFIG_CROSS_MEMORY_ATTACH). A bad pointer is -EFAULT for the child, never a
 * crash or a hang of the supervisor: neither call faults in our address space. After every
 * read, SECCOMP_IOCTL_NOTIF_ID_VALID confirms that the thread is still blocked in the same
 * call, so the pid was not reused by another process while we read (seccomp_unotify(2)).
 */
#include "tracer/internal.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#define PAGE 4096UL

static ssize_t proc_mem_io(pid_t pid, uint64_t addr, void *buf, size_t len, bool write_)
{
	char path[64];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int) pid);
	fd = open(path, (write_ ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write_ ? pwrite(fd, buf, len, (off_t) addr) : pread(fd, buf, len, (off_t) addr);
	if (n < 0)
		return errno == EIO ? -EFAULT : -errno;
	return n;
}

/* Reads up to len bytes; returns how many were read (short at an unmapped page), or -errno. */
static ssize_t raw_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len}, remote = {(void *) (uintptr_t) addr, len};
	ssize_t n;

	if (len == 0)
		return 0;
	if (addr + len < addr)
		return -EFAULT;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n >= 0)
		return n;
	if (errno == ENOSYS || errno == EPERM)
		return proc_mem_io(pid, addr, buf, len, false);
	return -errno;
}

static int id_valid(const ChildMemCtx *c)
{
	uint64_t id = c->id;

	if (c->notify_fd < 0 || c->id == 0)
		return 0; /* id 0: a ptrace stop (tracer/ptrace.c): the thread stays stopped */
	if (ioctl(c->notify_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0)
		return -ESRCH;
	return 0;
}

static int mem_read(const ChildMem *m, uint64_t addr, void *buf, size_t len)
{
	const ChildMemCtx *c = m->userdata;
	ssize_t n = raw_read(c->pid, addr, buf, len);

	if (n < 0)
		return n == -ESRCH ? -ESRCH : -EFAULT;
	if ((size_t) n != len)
		return -EFAULT;
	return id_valid(c);
}

static void remember_string(ChildMemCtx *c, uint64_t addr, const char *buf, size_t len,
			    size_t size, int result)
{
	if (c->n_strings >= CHILD_MEM_CACHED_STRINGS || len >= sizeof(c->strings[0].copy))
		return;
	c->strings[c->n_strings].addr = addr;
	c->strings[c->n_strings].size = size;
	c->strings[c->n_strings].result = result;
	memcpy(c->strings[c->n_strings].copy, buf, len);
	c->strings[c->n_strings].copy[len] = 0;
	c->n_strings++;
}

int child_mem_cached_string(const ChildMemCtx *c, uint64_t addr, char *buf, size_t size)
{
	for (unsigned i = 0; i < c->n_strings; i++) {
		size_t len;

		if (c->strings[i].addr != addr || size == 0)
			continue;
		len = strlen(c->strings[i].copy);
		if (c->strings[i].result == 0 && len < size) {
			memcpy(buf, c->strings[i].copy, len + 1);
			return 0;
		}
		if (len >= size - 1) {
			/* cut as read_string would */
			memcpy(buf, c->strings[i].copy, size - 1);
			buf[size - 1] = 0;
			return -ENAMETOOLONG;
		}
		return -ENOENT; /* longer than what was read: only the child has the rest */
	}
	return -ENOENT;
}

static int mem_read_string(const ChildMem *m, uint64_t addr, char *buf, size_t size)
{
	ChildMemCtx *c = m->userdata;
	size_t got = 0;
	int r;

	if (size == 0)
		return -ENAMETOOLONG;
	/* Page by page, so a string that ends just before an unmapped page is still read. */
	while (got < size) {
		uint64_t a = addr + got;
		size_t chunk = MIN(size - got, PAGE - (size_t) (a % PAGE));
		ssize_t n;
		char *nul;

		if (a < addr)
			return -EFAULT;
		n = raw_read(c->pid, a, buf + got, chunk);
		if (n <= 0)
			return n == -ESRCH ? -ESRCH : -EFAULT;
		nul = memchr(buf + got, 0, (size_t) n);
		if (nul) {
			r = id_valid(c);
			if (r == 0)
				remember_string(c, addr, buf, (size_t) (nul - buf), size, 0);
			return r;
		}
		got += (size_t) n;
		if ((size_t) n < chunk)
			return -EFAULT;
	}
	buf[size - 1] = 0;
	r = id_valid(c);
	if (r < 0)
		return r;
	remember_string(c, addr, buf, size - 1, size, -ENAMETOOLONG);
	return -ENAMETOOLONG;
}

void child_mem_init(ChildMemCtx *ctx, pid_t pid, int notify_fd, uint64_t id)
{
	ctx->mem.read = mem_read;
	ctx->mem.read_string = mem_read_string;
	ctx->mem.userdata = ctx;
	ctx->pid = pid;
	ctx->notify_fd = notify_fd;
	ctx->id = id;
	ctx->n_strings = 0;
}

int child_mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = {(void *) buf, len}, remote = {(void *) (uintptr_t) addr, len};
	ssize_t n;

	if (len == 0)
		return 0;
	if (addr + len < addr)
		return -EFAULT;
	n = process_vm_writev(pid, &local, 1, &remote, 1, 0);
	if (n < 0 && (errno == ENOSYS || errno == EPERM))
		n = proc_mem_io(pid, addr, (void *) buf, len, true);
	else if (n < 0)
		n = -errno;
	if (n < 0)
		return n == -ESRCH ? -ESRCH : -EFAULT;
	return (size_t) n == len ? 0 : -EFAULT;
}
