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

static int mem_read_string(const ChildMem *m, uint64_t addr, char *buf, size_t size)
{
	const ChildMemCtx *c = m->userdata;
	size_t got = 0;

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
		if (nul)
			return id_valid(c);
		got += (size_t) n;
		if ((size_t) n < chunk)
			return -EFAULT;
	}
	buf[size - 1] = 0;
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
