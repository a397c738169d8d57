/* SPDX-License-Identifier: MIT */
/*
 * The unwind session (unwind/unwind.h): the modules of a stopped process, their ELF facts,
 * its memory, and the choice of backend. Both backends (unwind/libunwind.c,
 * unwind/frame-pointer.c) read through here.
 *
 * Modules: the executable mappings of /proc/PID/maps (unwind/maps.c), read afresh for every
 * unwind (the tracer sees no mmap, and an exec changes them all), each with the ELF facts of
 * its file (unwind/elf-info.c), cached for the session by device and inode.
 *
 * libunwind-ptrace's own lookups open the file that /proc/PID/maps names and mmap it, again
 * for every frame. The program controls that name: it can swap a FIFO in at the path (the
 * open would block the tracer thread for good) or truncate the file while it is mapped (a
 * SIGBUS in the supervisor). So the lookups are ours: a file is opened with O_NONBLOCK, used
 * only if it is a regular file with the device and inode the mapping has, and read with
 * pread.
 *
 * Memory: read a page at a time with process_vm_readv and kept for the unwind: an unwind
 * reads a few hundred words from a handful of pages (stack, .eh_frame), and PTRACE_PEEKDATA
 * would take one syscall per word. Where process_vm_readv is refused (EPERM: the default
 * seccomp profiles of containerd and of Docker before 23 without CAP_SYS_PTRACE; ENOSYS: a
 * kernel without CONFIG_CROSS_MEMORY_ATTACH) the pages come from /proc/PID/mem instead,
 * opened once per unwind, as tracer/child-mem.c falls back. The same access check
 * (PTRACE_MODE_ATTACH) guards both, and the pid cannot be another process's meanwhile: it is
 * the caller's tracee, in a ptrace stop or a zombie not reaped.
 */
#include "unwind/unwind.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/util.h"
#include "unwind/internal.h"

UnwindSession *unwind_session_new(const UnwindHost *host)
{
	UnwindSession *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (host)
		s->host = *host;
	s->proc_mem = -1;
	s->primary = unwinder_libunwind.open() ? &unwinder_libunwind : &unwinder_frame_pointer;
	return s;
}

void unwind_session_invalidate(UnwindSession *s)
{
	for (size_t i = 0; i < UNWIND_ELF_CACHE; i++) {
		elf_info_free(s->elf_cache[i].elf);
		memset(&s->elf_cache[i], 0, sizeof(s->elf_cache[i]));
	}
}

UnwindSession *unwind_session_free(UnwindSession *s)
{
	if (!s)
		return NULL;
	unwind_session_invalidate(s);
	free(s);
	return NULL;
}

const Unwinder *unwind_session_primary(const UnwindSession *s)
{
	return s->primary;
}

size_t unwind_backtrace(UnwindSession *s, pid_t pid, AuditFrame *frames, size_t max,
			const char **ret_err, const Unwinder **ret_used)
{
	const Unwinder *u = s->primary;
	size_t n;

	n = u->unwind(s, pid, frames, max, ret_err);
	if (n == 0 && u != &unwinder_frame_pointer) {
		/* COMPAT: libunwind found no frame at all (it could not read the registers or
		 * make its address space): the RBP chain is better than nothing. If that fails
		 * too, the record says why libunwind did. */
		const char *first = *ret_err;

		u = &unwinder_frame_pointer;
		n = u->unwind(s, pid, frames, max, ret_err);
		if (n == 0)
			*ret_err = first;
	}
	if (ret_used)
		*ret_used = u;
	return n;
}

/* ---- modules ---- */

/* Opens host for reading only if it is still the mapped file: the path is walked without
 * following any symlink (the program can swap one in at the path: the supervisor must not
 * open what it points to), as O_PATH (which opens nothing: no FIFO waits for a writer, no
 * device runs its open), and only a regular file with the mapping's device and inode is
 * then opened for real, through the O_PATH descriptor. -1 otherwise. */
static int open_mapped(const char *host, dev_t dev, ino_t ino, struct stat *ret_st)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	char proc[64];
	long pfd;
	int fd;

	pfd = syscall(SYS_openat2, AT_FDCWD, host, &how, sizeof(how));
	if (pfd < 0)
		return -1;
	if (fstat((int) pfd, ret_st) < 0 || !S_ISREG(ret_st->st_mode) || ret_st->st_dev != dev ||
	    ret_st->st_ino != ino) {
		(void) close((int) pfd);
		return -1; /* not the file the process has mapped (any more) */
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", (int) pfd);
	fd = open(proc, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	(void) close((int) pfd);
	return fd;
}

/* Bytes the cache may keep: symbol and string tables of every module seen. */
#define ELF_CACHE_BYTES_MAX (64u << 20)

/*
 * The cache outlives an unwind; a module's elf pointer (UnwindModule.elf) lives for one, from
 * unwind_begin() to unwind_end(). An entry handed out during the unwind under way (its pass is
 * the session's) is therefore never reused nor trimmed before that unwind ends: the program
 * decides which modules its stack names, and a stack through more modules than the cache
 * holds, or whose tables pass the memory cap, must cost symbols, never a pointer freed under
 * an earlier frame. A module met when every entry is in use gets no ELF (no symbols, no
 * unwind table) for this unwind.
 */
static bool in_use(const UnwindSession *s, const UnwindElfEntry *c)
{
	return c->valid && c->pass == s->pass;
}

/* Over the memory cap: the least recently used entries not in use go. False if those in use
 * alone are over it. */
static bool elf_cache_trim(UnwindSession *s)
{
	size_t total;

	for (;;) {
		UnwindElfEntry *old = NULL;

		total = 0;
		for (size_t i = 0; i < UNWIND_ELF_CACHE; i++) {
			UnwindElfEntry *c = &s->elf_cache[i];

			if (!c->valid || !c->elf)
				continue;
			total += elf_info_bytes(c->elf);
			if (!in_use(s, c) && (!old || c->used < old->used))
				old = c;
		}
		if (total <= ELF_CACHE_BYTES_MAX || !old)
			break;
		elf_info_free(old->elf);
		memset(old, 0, sizeof(*old));
	}
	return total <= ELF_CACHE_BYTES_MAX;
}

static const ElfInfo *elf_for(UnwindSession *s, const char *host, dev_t dev, ino_t ino)
{
	UnwindElfEntry *victim = NULL;
	struct stat st;
	int fd;

	fd = open_mapped(host, dev, ino, &st);
	if (fd < 0)
		return NULL;
	for (size_t i = 0; i < UNWIND_ELF_CACHE; i++) {
		UnwindElfEntry *c = &s->elf_cache[i];

		if (c->valid && c->dev == dev && c->ino == ino && c->size == st.st_size &&
		    c->mtime.tv_sec == st.st_mtim.tv_sec &&
		    c->mtime.tv_nsec == st.st_mtim.tv_nsec) {
			c->used = ++s->elf_clock;
			c->pass = s->pass;
			(void) close(fd);
			return c->elf;
		}
		if (!in_use(s, c) &&
		    (!victim || !c->valid || (victim->valid && c->used < victim->used)))
			victim = c;
	}
	if (!victim) {
		(void) close(fd); /* every entry is in use by this unwind */
		return NULL;
	}
	elf_info_free(victim->elf);
	victim->elf = elf_info_load(fd);
	(void) close(fd);
	victim->valid = true;
	victim->dev = dev;
	victim->ino = ino;
	victim->size = st.st_size;
	victim->mtime = st.st_mtim;
	victim->used = ++s->elf_clock;
	victim->pass = s->pass;
	if (!elf_cache_trim(s)) {
		/* what this unwind uses is over the cap with this one: not kept, not used (no
		 * module holds it yet) */
		elf_info_free(victim->elf);
		memset(victim, 0, sizeof(*victim));
		return NULL;
	}
	return victim->elf;
}

static void add_module(UnwindSession *s, const UnwindMapping *m)
{
	UnwindModule *mod = &s->mods[s->n_mods];

	if (m->perms[2] != 'x')
		return;
	memset(mod, 0, sizeof(*mod));
	mod->start = m->start;
	mod->end = m->end;
	mod->offset = m->offset;
	mod->dev = makedev(m->dev_major, m->dev_minor);
	mod->ino = (ino_t) m->ino;
	mod->host = m->name_len ? strndup(m->name, m->name_len) : NULL;
	s->n_mods++;
}

/* /proc/PID/maps, read in chunks and parsed line by line: a process may have tens of
 * thousands of mappings, and only UNWIND_MODULES executable ones are kept. */
static void read_modules(UnwindSession *s)
{
	char path[64], buf[16384];
	size_t len = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int) s->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	while (s->n_mods < UNWIND_MODULES) {
		UnwindMapping m;
		size_t pos = 0;
		ssize_t r;

		r = read(fd, buf + len, sizeof(buf) - len);
		if (r <= 0)
			break; /* a cut last line is dropped */
		len += (size_t) r;
		while (s->n_mods < UNWIND_MODULES && unwind_maps_next(buf, len, &pos, &m) > 0)
			add_module(s, &m);
		if (pos == 0 && len == sizeof(buf))
			break; /* a line longer than the buffer: not the kernel's */
		memmove(buf, buf + pos, len - pos);
		len -= pos;
	}
	(void) close(fd);
}

const UnwindModule *unwind_module_at(UnwindSession *s, uint64_t ip)
{
	UnwindModule *m = NULL;

	for (size_t i = 0; i < s->n_mods; i++)
		if (ip >= s->mods[i].start && ip < s->mods[i].end) {
			m = &s->mods[i];
			break;
		}
	if (!m || m->resolved)
		return m;
	m->resolved = true;
	if (m->host && m->host[0] == '/' && m->ino) {
		m->elf = elf_for(s, m->host, m->dev, m->ino);
		if (m->elf && !elf_info_bias(m->elf, m->start, m->offset, &m->bias))
			m->elf = NULL;
	}
	/* the file as the sandbox sees it; the host path for what the view does not show
	 * ("[vdso]", a file outside every mount) */
	if (!m->host || m->host[0] != '/' || !s->host.module_path ||
	    s->host.module_path(s->host.userdata, m->host, m->path, sizeof(m->path)) < 0)
		snprintf(m->path, sizeof(m->path), "%s", m->host ? m->host : "");
	return m;
}

void unwind_symbolize(UnwindSession *s, AuditFrame *f, bool return_address)
{
	const UnwindModule *m = unwind_module_at(s, f->ip);
	const char *name;
	uint64_t start;

	if (!m)
		return;
	snprintf(f->module, sizeof(f->module), "%s", m->path);
	if (!m->elf)
		return;
	name = elf_info_symbol(m->elf, f->ip - m->bias - (return_address ? 1 : 0), &start);
	if (!name)
		return;
	snprintf(f->function, sizeof(f->function), "%s", name);
	f->offset = f->ip - m->bias - start;
}

/* ---- memory ---- */

static bool read_page(UnwindSession *s, uint64_t page, uint8_t *buf)
{
	struct iovec local = {buf, UNWIND_PAGE}, remote = {(void *) (uintptr_t) page, UNWIND_PAGE};
	char path[64];
	ssize_t n;

	if (!s->no_vm_readv) {
		n = process_vm_readv(s->pid, &local, 1, &remote, 1, 0);
		if (n >= 0 || (errno != EPERM && errno != ENOSYS))
			return n == (ssize_t) UNWIND_PAGE;
		s->no_vm_readv = true; /* for this unwind and every later one */
	}
	if (s->proc_mem < 0) {
		snprintf(path, sizeof(path), "/proc/%d/mem", (int) s->pid);
		s->proc_mem = open(path, O_RDONLY | O_CLOEXEC);
		if (s->proc_mem < 0)
			return false;
	}
	return pread(s->proc_mem, buf, UNWIND_PAGE, (off_t) page) == (ssize_t) UNWIND_PAGE;
}

static const uint8_t *mem_page(UnwindSession *s, uint64_t page)
{
	size_t slot;

	for (size_t i = 0; i < s->n_pages; i++)
		if (s->page_addr[i] == page)
			return s->page_data[i];
	slot = s->n_pages < UNWIND_MEM_PAGES ? s->n_pages++ : s->next_page++ % UNWIND_MEM_PAGES;
	if (!read_page(s, page, s->page_data[slot])) {
		s->page_addr[slot] = UINT64_MAX;
		return NULL;
	}
	s->page_addr[slot] = page;
	return s->page_data[slot];
}

bool unwind_budget_ok(UnwindSession *s)
{
	if (s->exhausted)
		return false;
	if (++s->reads > UNWIND_READS_MAX ||
	    ((s->reads & 255) == 0 && now_monotonic_ns() > s->deadline_ns))
		s->exhausted = true;
	return !s->exhausted;
}

bool unwind_read(UnwindSession *s, uint64_t addr, void *buf, size_t len)
{
	uint8_t *out = buf;

	if (!unwind_budget_ok(s))
		return false;
	for (size_t i = 0; i < len; i++) {
		uint64_t a = addr + i;
		const uint8_t *p = mem_page(s, a & ~(uint64_t) (UNWIND_PAGE - 1));

		if (!p)
			return false;
		out[i] = p[a & (UNWIND_PAGE - 1)];
	}
	return true;
}

/* ---- one unwind ---- */

int unwind_begin(UnwindSession *s, pid_t pid)
{
	s->mods = calloc(UNWIND_MODULES, sizeof(*s->mods));
	if (!s->mods)
		return -ENOMEM;
	s->pid = pid;
	s->n_mods = 0;
	s->pass++;
	read_modules(s);
	s->n_pages = s->next_page = 0;
	s->reads = 0;
	s->exhausted = false;
	s->deadline_ns = now_monotonic_ns() + UNWIND_TIME_MAX_NS;
	return 0;
}

void unwind_end(UnwindSession *s)
{
	if (s->proc_mem >= 0) {
		(void) close(s->proc_mem);
		s->proc_mem = -1;
	}
	for (size_t i = 0; i < s->n_mods; i++)
		free(s->mods[i].host);
	free(s->mods);
	s->mods = NULL;
	s->n_mods = 0;
}
