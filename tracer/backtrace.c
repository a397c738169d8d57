/* SPDX-License-Identifier: MIT */
/*
 * Backtraces of the sandboxed program at a syscall ([audit] backtrace; docs/audit.md).
 *
 * A seccomp notification carries only the instruction pointer. Unwinding needs the stack
 * pointer and the callee-saved registers too, and only a ptrace stop gives those. So a
 * notified call that is due a backtrace takes this route:
 *
 *   receiver: handler decided → queue a request → wake the tracer thread (BT_SIGNAL breaks
 *             its waitpid) → it PTRACE_INTERRUPTs the caller → receiver replies →
 *   caller:   the call returns; on its way to user space the pending interrupt traps it in a
 *             PTRACE_EVENT_STOP, before it runs one instruction, with the registers of the
 *             syscall site (RIP just after the `syscall` instruction) →
 *   tracer:   unwinds with libunwind, hands the frames over, PTRACE_CONTs →
 *   receiver: writes the record with the frames.
 *
 * Why the interrupt does not abort the call: after SECCOMP_IOCTL_NOTIF_RECV the caller waits
 * *killable* (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, which C asks for), so the interrupt
 * only leaves TIF_SIGPENDING set and takes effect on the return. Without that flag it would
 * wake the caller, the kernel would withdraw the notification and restart the call, and the
 * call would be handled twice: no backtraces then.
 *
 * ptrace requests must come from the thread that seized the tree (tracer/ptrace.c), hence the
 * queue. Every wait for the tracer thread or the caller has a deadline: a caller killed in
 * between never stops, and its receiver must go on; the unwind itself is bounded (below). Calls
 * routed through SECCOMP_RET_TRACE (chdir, exec) are stopped already when they are decided: the
 * tracer thread unwinds them at once.
 *
 * libunwind is opened with dlopen() when a policy asks for backtraces, like capstone: a run
 * without them does not pay for loading it. Of libunwind-ptrace only the register accessors
 * are used: memory is read a page at a time with process_vm_readv, and the modules' unwind
 * tables and symbols are found by our code (below), which does not trust the file names the
 * program controls.
 */
#include "tracer/internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <sys/sysmacros.h>
#include <sys/user.h>
#include <time.h>
#include <unistd.h>

#if HAVE_LIBUNWIND
#define UNW_REMOTE_ONLY
#include <libunwind-ptrace.h>
#endif

#include "common/log.h"
#include "common/util.h"
#include "emulation/path/view.h"
#include "tracer/elf-info.h"
#include "policy/policy.h"

#define BT_SIGNAL (SIGRTMIN + 3)

/* A caller's interrupt must be acknowledged within this (the tracer thread is busy only
 * with other stops), and its stop must come within BT_STOP_MS after the reply. */
#define BT_ACK_MS      200
#define BT_STOP_MS     2000
#define BT_RESIGNAL_MS 2

enum {
	BT_QUEUED,
	BT_INTERRUPTED,
	BT_UNWINDING,
	BT_DONE,
	BT_FAILED,
};

struct TracerBt {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC */
	TracerBtReq *head;
	atomic_int queued;     /* requests in BT_QUEUED: the tracer thread's cheap test */
	atomic_int ptrace_tid; /* the tracer thread, 0 while it does not run */
	unsigned depth;
	const char *unavailable; /* why no backtrace can be taken, or NULL */
};

#if HAVE_LIBUNWIND
static struct {
	unw_addr_space_t (*create_addr_space)(unw_accessors_t *, int);
	void (*destroy_addr_space)(unw_addr_space_t);
	int (*set_caching_policy)(unw_addr_space_t, unw_caching_policy_t);
	int (*init_remote)(unw_cursor_t *, unw_addr_space_t, void *);
	int (*step)(unw_cursor_t *);
	int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
	int (*search_unwind_table)(unw_addr_space_t, unw_word_t, unw_dyn_info_t *,
				   unw_proc_info_t *, int, void *);
	void *(*upt_create)(pid_t);
	void (*upt_destroy)(void *);
	unw_accessors_t *upt_accessors;
	bool ok;
} uw;
static pthread_once_t uw_once = PTHREAD_ONCE_INIT;

static void uw_load(void)
{
	void *core, *pt;

	/* libunwind-ptrace.so.0 uses the _Ux86_64_* symbols without a NEEDED entry for their
	 * library: that one goes into the global scope first */
	core = dlopen("libunwind-x86_64.so.8", RTLD_NOW | RTLD_GLOBAL);
	if (!core)
		return;
	pt = dlopen("libunwind-ptrace.so.0", RTLD_NOW | RTLD_LOCAL);
	if (!pt)
		return;
	*(void **) &uw.create_addr_space = dlsym(core, "_Ux86_64_create_addr_space");
	*(void **) &uw.destroy_addr_space = dlsym(core, "_Ux86_64_destroy_addr_space");
	*(void **) &uw.set_caching_policy = dlsym(core, "_Ux86_64_set_caching_policy");
	*(void **) &uw.init_remote = dlsym(core, "_Ux86_64_init_remote");
	*(void **) &uw.step = dlsym(core, "_Ux86_64_step");
	*(void **) &uw.get_reg = dlsym(core, "_Ux86_64_get_reg");
	*(void **) &uw.search_unwind_table = dlsym(core, "_Ux86_64_dwarf_search_unwind_table");
	*(void **) &uw.upt_create = dlsym(pt, "_UPT_create");
	*(void **) &uw.upt_destroy = dlsym(pt, "_UPT_destroy");
	uw.upt_accessors = dlsym(pt, "_UPT_accessors");
	uw.ok = uw.create_addr_space && uw.destroy_addr_space && uw.set_caching_policy &&
		uw.init_remote && uw.step && uw.get_reg && uw.search_unwind_table &&
		uw.upt_create && uw.upt_destroy && uw.upt_accessors;
}
#endif

static void elf_cache_clear(void);

bool tracer_backtraces_loadable(void)
{
#if HAVE_LIBUNWIND
	pthread_once(&uw_once, uw_load);
	return uw.ok;
#else
	return false;
#endif
}

static void bt_signal_handler(int sig)
{
	(void) sig; /* only there to make the tracer thread's waitpid() fail with EINTR */
}

int tracer_bt_setup(Tracer *t)
{
	struct sigaction sa = {.sa_handler = bt_signal_handler}; /* no SA_RESTART */
	pthread_condattr_t ca;
	struct TracerBt *b;

	if (t->policy->audit.backtrace == AUDIT_SELECT_NONE || !t->audit)
		return 0;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	pthread_mutex_init(&b->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&b->cond, &ca);
	pthread_condattr_destroy(&ca);
	b->depth = t->policy->audit.backtrace_depth ? t->policy->audit.backtrace_depth : 16;
	if (!t->filter->ptrace)
		b->unavailable = "no ptrace (tracer.ptrace = \"never\")";
	else if (!tracer_backtraces_loadable())
		b->unavailable = "libunwind-ptrace cannot be loaded";
	else {
		/* C asks for WAIT_KILLABLE_RECV and goes on without it on an older kernel; probed
		 * here (a few small children), only in runs that ask for backtraces */
		TracerFeatures f;

		tracer_probe_features(&f);
		if (!f.wait_killable)
			b->unavailable = "the kernel lacks SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV "
					 "(5.19)";
	}
	(void) sigaction(BT_SIGNAL, &sa, NULL);
	t->bt = b;
	if (b->unavailable)
		log_warn("audit.backtrace: no backtraces in this run: %s", b->unavailable);
	return 0;
}

void tracer_bt_done(Tracer *t)
{
	if (!t->bt)
		return;
	elf_cache_clear(); /* the tracer thread has ended */
	pthread_mutex_destroy(&t->bt->lock);
	pthread_cond_destroy(&t->bt->cond);
	free(t->bt);
	t->bt = NULL;
}

unsigned tracer_bt_depth(const Tracer *t)
{
	return t->bt ? t->bt->depth : 0;
}

static void deadline_in(struct timespec *ts, unsigned ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long) (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static bool past(const struct timespec *d)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > d->tv_sec || (now.tv_sec == d->tv_sec && now.tv_nsec >= d->tv_nsec);
}

static void unlink_req(struct TracerBt *b, TracerBtReq *req)
{
	for (TracerBtReq **p = &b->head; *p; p = &(*p)->next)
		if (*p == req) {
			*p = req->next;
			return;
		}
}

/* ---- the tracer thread ---- */

void tracer_bt_thread_ready(Tracer *t, bool running)
{
	sigset_t ss;

	if (!t->bt)
		return;
	if (running) {
		sigemptyset(&ss);
		sigaddset(&ss, BT_SIGNAL);
		pthread_sigmask(SIG_UNBLOCK, &ss, NULL);
		atomic_store(&t->bt->ptrace_tid, (int) syscall(SYS_gettid));
	} else {
		atomic_store(&t->bt->ptrace_tid, 0);
	}
}

void tracer_bt_service(Tracer *t)
{
	struct TracerBt *b = t->bt;

	if (!b || atomic_load(&b->queued) == 0)
		return;
	pthread_mutex_lock(&b->lock);
	for (TracerBtReq *r = b->head; r; r = r->next) {
		if (r->state != BT_QUEUED)
			continue;
		if (ptrace(PTRACE_INTERRUPT, r->tid, NULL, NULL) == 0)
			r->state = BT_INTERRUPTED;
		else {
			r->state = BT_FAILED;
			r->error = "PTRACE_INTERRUPT failed (the thread is not traced)";
		}
		atomic_fetch_sub(&b->queued, 1);
	}
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

/*
 * The modules of a stopped process: its executable file mappings from /proc/PID/maps, each
 * with the ELF facts of its file (tracer/elf-info.c), cached by inode for the whole run.
 *
 * libunwind-ptrace's own lookups open the file that /proc/PID/maps names and mmap it, again
 * for every frame. The program controls that name: it can swap a FIFO in at the path (the
 * open would block the tracer thread for good) or truncate the file while it is mapped (a
 * SIGBUS in the supervisor). So the lookups are ours: a file is opened with O_NONBLOCK, used
 * only if it is a regular file with the device and inode the mapping has, and read with
 * pread. libunwind gets the location of .eh_frame_hdr and reads the FDE table from the
 * process's memory, as it does for any remote process.
 */
typedef struct Module {
	uint64_t start, end, offset, bias;
	dev_t dev;
	ino_t ino;
	char *host;	    /* the name /proc/PID/maps gives (malloc'd), NULL for none */
	bool resolved;	    /* elf, bias and path below are set (on first use) */
	const ElfInfo *elf; /* NULL: no unwind table, no symbols */
	char path[AUDIT_MODULE_MAX];
} Module;

#define MODULES_MAX 512
#define PAGE_SIZE_  4096u
#define ELF_CACHE   64

typedef struct ElfCacheEntry {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	ElfInfo *elf; /* NULL: not an ELF file we can use (remembered too) */
	uint64_t used;
	bool valid;
} ElfCacheEntry;

/* Only the tracer thread unwinds: these need no lock. */
static ElfCacheEntry elf_cache[ELF_CACHE];
static uint64_t elf_cache_clock;
static Module *cur_mods;
static size_t cur_n_mods;

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

static const ElfInfo *elf_for(const char *host, dev_t dev, ino_t ino)
{
	ElfCacheEntry *victim = &elf_cache[0];
	size_t total = 0;
	struct stat st;
	int fd;

	fd = open_mapped(host, dev, ino, &st);
	if (fd < 0)
		return NULL;
	for (size_t i = 0; i < ELF_CACHE; i++) {
		ElfCacheEntry *c = &elf_cache[i];

		if (c->valid && c->dev == dev && c->ino == ino && c->size == st.st_size &&
		    c->mtime.tv_sec == st.st_mtim.tv_sec &&
		    c->mtime.tv_nsec == st.st_mtim.tv_nsec) {
			c->used = ++elf_cache_clock;
			(void) close(fd);
			return c->elf;
		}
		if (!c->valid || c->used < victim->used)
			victim = c;
	}
	elf_info_free(victim->elf);
	victim->elf = elf_info_load(fd);
	(void) close(fd);
	victim->valid = true;
	victim->dev = dev;
	victim->ino = ino;
	victim->size = st.st_size;
	victim->mtime = st.st_mtim;
	victim->used = ++elf_cache_clock;
	/* over the memory cap: the least recently used others go */
	for (;;) {
		ElfCacheEntry *old = NULL;

		total = 0;
		for (size_t i = 0; i < ELF_CACHE; i++) {
			ElfCacheEntry *c = &elf_cache[i];

			if (!c->valid || !c->elf)
				continue;
			total += elf_info_bytes(c->elf);
			if (c != victim && (!old || c->used < old->used))
				old = c;
		}
		if (total <= ELF_CACHE_BYTES_MAX || !old)
			break;
		elf_info_free(old->elf);
		memset(old, 0, sizeof(*old));
	}
	if (total > ELF_CACHE_BYTES_MAX) {
		/* one module alone is over the cap: not kept, not used */
		elf_info_free(victim->elf);
		memset(victim, 0, sizeof(*victim));
		return NULL;
	}
	return victim->elf;
}

static void elf_cache_clear(void)
{
	for (size_t i = 0; i < ELF_CACHE; i++) {
		elf_info_free(elf_cache[i].elf);
		memset(&elf_cache[i], 0, sizeof(elf_cache[i]));
	}
}

static size_t read_modules(pid_t pid, Module *m, size_t max)
{
	char p[64], *line = NULL;
	size_t n = 0, cap = 0;
	ssize_t len;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/maps", (int) pid);
	f = fopen(p, "re");
	if (!f)
		return 0;
	while (n < max && (len = getline(&line, &cap, f)) > 0) {
		unsigned long long s, e, off, ino;
		unsigned maj, mnr;
		char perms[8];
		const char *host;
		int pos = 0;

		if (line[len - 1] != '\n')
			break; /* the last line, cut: its name cannot be trusted */
		line[len - 1] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &s, &e, perms, &off, &maj,
			   &mnr, &ino, &pos) < 7)
			continue;
		if (perms[2] != 'x')
			continue;
		host = pos > 0 ? line + pos : "";
		memset(&m[n], 0, sizeof(m[n]));
		m[n].start = s;
		m[n].end = e;
		m[n].offset = off;
		m[n].dev = makedev(maj, mnr);
		m[n].ino = (ino_t) ino;
		m[n].host = host[0] ? strdup(host) : NULL;
		n++;
	}
	free(line);
	fclose(f);
	return n;
}

static void free_modules(Module *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(m[i].host);
	free(m);
}

static const Tracer *cur_tracer;

/* The module at ip, its file read on first use: only modules that frames land in are. */
static const Module *module_at(uint64_t ip)
{
	Module *m = NULL;

	for (size_t i = 0; i < cur_n_mods; i++)
		if (ip >= cur_mods[i].start && ip < cur_mods[i].end) {
			m = &cur_mods[i];
			break;
		}
	if (!m || m->resolved)
		return m;
	m->resolved = true;
	if (m->host && m->host[0] == '/' && m->ino) {
		m->elf = elf_for(m->host, m->dev, m->ino);
		if (m->elf && !elf_info_bias(m->elf, m->start, m->offset, &m->bias))
			m->elf = NULL;
	}
	/* the file as the sandbox sees it; the host path for what the view does not show
	 * ("[vdso]", a file outside every mount) */
	if (!m->host || m->host[0] != '/' || !cur_tracer->view ||
	    sbx_view_vpath_of_host(cur_tracer->view, m->host, m->path, sizeof(m->path), NULL) < 0)
		snprintf(m->path, sizeof(m->path), "%s", m->host ? m->host : "");
	return m;
}

#if HAVE_LIBUNWIND
static unw_accessors_t accessors;

/*
 * The unwind tables are the program's: libunwind interprets them with no bound of its own (a
 * DWARF expression can jump back onto itself, a CFI program can push a saved state per
 * byte). Every opcode it decodes and every word it reads goes through access_mem(), so a
 * budget there bounds both time and memory: past UNWIND_READS_MAX reads or
 * UNWIND_TIME_MAX_NS, every read fails and the unwind ends with the frames it has. A
 * legitimate 16-frame unwind takes a few thousand reads.
 */
#define UNWIND_READS_MAX   100000
#define UNWIND_TIME_MAX_NS (50 * 1000000ULL)
static uint64_t unwind_reads, unwind_deadline_ns;
static bool unwind_exhausted;

static bool unwind_budget_ok(void)
{
	if (unwind_exhausted)
		return false;
	if (++unwind_reads > UNWIND_READS_MAX ||
	    ((unwind_reads & 255) == 0 && now_monotonic_ns() > unwind_deadline_ns))
		unwind_exhausted = true;
	return !unwind_exhausted;
}

/* libunwind asks for the FDE of ip: the module's .eh_frame_hdr, read in the process. */
static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	const Module *m = module_at(ip);
	uint64_t hdr, count;
	unw_dyn_info_t di;

	if (!unwind_budget_ok())
		return -UNW_EINVAL;
	if (!m || !m->elf || !elf_info_eh_frame_hdr(m->elf, &hdr, &count) || count == 0)
		return -UNW_ENOINFO;
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = m->start;
	di.end_ip = m->end;
	di.u.rti.segbase = m->bias + hdr;
	di.u.rti.table_data = m->bias + hdr + 12; /* after version, encodings and 2 words */
	di.u.rti.table_len = count * 8 / sizeof(unw_word_t);
	return uw.search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
}

/* The process's memory, read a page at a time with process_vm_readv and kept for the
 * unwind: an unwind reads a few hundred words from a handful of pages (stack, .eh_frame),
 * and PTRACE_PEEKDATA would take one syscall per word. Where process_vm_readv is refused
 * (EPERM: the default seccomp profiles of containerd and of Docker before 23 without
 * CAP_SYS_PTRACE; ENOSYS: a kernel without CONFIG_CROSS_MEMORY_ATTACH) the pages come from
 * /proc/PID/mem instead, opened once per unwind, as tracer/child-mem.c falls back. The same
 * access check (PTRACE_MODE_ATTACH) guards both, and the pid cannot be another process's
 * meanwhile: it is our tracee, in a ptrace stop or a zombie we have not reaped. */
#define MEM_PAGES 32

static struct {
	pid_t pid;
	int proc_mem; /* /proc/PID/mem once process_vm_readv was refused, else -1 */
	bool no_vm_readv;
	size_t n, next;
	uint64_t addr[MEM_PAGES];
	uint8_t data[MEM_PAGES][PAGE_SIZE_];
} mem_cache = {.proc_mem = -1};

static bool read_page(uint64_t page, uint8_t *buf)
{
	struct iovec local = {buf, PAGE_SIZE_}, remote = {(void *) (uintptr_t) page, PAGE_SIZE_};
	char path[64];
	ssize_t n;

	if (!mem_cache.no_vm_readv) {
		n = process_vm_readv(mem_cache.pid, &local, 1, &remote, 1, 0);
		if (n >= 0 || (errno != EPERM && errno != ENOSYS))
			return n == (ssize_t) PAGE_SIZE_;
		mem_cache.no_vm_readv = true; /* for this unwind and every later one */
	}
	if (mem_cache.proc_mem < 0) {
		snprintf(path, sizeof(path), "/proc/%d/mem", (int) mem_cache.pid);
		mem_cache.proc_mem = open(path, O_RDONLY | O_CLOEXEC);
		if (mem_cache.proc_mem < 0)
			return false;
	}
	return pread(mem_cache.proc_mem, buf, PAGE_SIZE_, (off_t) page) == (ssize_t) PAGE_SIZE_;
}

static const uint8_t *mem_page(uint64_t page)
{
	size_t slot;

	for (size_t i = 0; i < mem_cache.n; i++)
		if (mem_cache.addr[i] == page)
			return mem_cache.data[i];
	slot = mem_cache.n < MEM_PAGES ? mem_cache.n++ : mem_cache.next++ % MEM_PAGES;
	if (!read_page(page, mem_cache.data[slot])) {
		mem_cache.addr[slot] = UINT64_MAX;
		return NULL;
	}
	mem_cache.addr[slot] = page;
	return mem_cache.data[slot];
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
	uint8_t buf[sizeof(unw_word_t)];

	(void) as;
	(void) arg;
	if (write)
		return -UNW_EINVAL; /* unwinding only reads */
	if (!unwind_budget_ok())
		return -UNW_EINVAL;
	for (size_t i = 0; i < sizeof(buf); i++) {
		uint64_t a = addr + i;
		const uint8_t *p = mem_page(a & ~(uint64_t) (PAGE_SIZE_ - 1));

		if (!p)
			return -UNW_EINVAL;
		buf[i] = p[a & (PAGE_SIZE_ - 1)];
	}
	memcpy(val, buf, sizeof(buf));
	return 0;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *ret, void *arg)
{
	(void) as;
	(void) ret;
	(void) arg;
	return -UNW_ENOINFO; /* no dynamically registered unwind info */
}
#endif

/* The function at ip of a frame: a return address (not the innermost frame) is looked up
 * one byte back, inside the call instruction, as a call may be the last of its function. */
static void symbolize(AuditFrame *f, bool return_address)
{
	const Module *m = module_at(f->ip);
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

/* Unwinds the stopped tracee pid (called on the tracer thread). Returns the number of frames
 * (0 with *err set). */
size_t tracer_bt_unwind(Tracer *t, pid_t pid, AuditFrame *frames, size_t max, const char **err)
{
#if HAVE_LIBUNWIND
	Module *mods;
	size_t n = 0;
	unw_addr_space_t as = NULL;
	unw_cursor_t c;
	void *upt = NULL;

	if (!tracer_backtraces_loadable()) {
		*err = "libunwind-ptrace cannot be loaded";
		return 0;
	}
	mods = calloc(MODULES_MAX, sizeof(*mods));
	if (!mods) {
		*err = "out of memory";
		return 0;
	}
	cur_mods = mods;
	cur_tracer = t;
	cur_n_mods = read_modules(pid, mods, MODULES_MAX);
	mem_cache.pid = pid;
	mem_cache.n = mem_cache.next = 0;
	unwind_reads = 0;
	unwind_exhausted = false;
	unwind_deadline_ns = now_monotonic_ns() + UNWIND_TIME_MAX_NS;
	if (!accessors.access_mem) {
		/* memory and registers through ptrace (this thread is the tracer); modules ours */
		accessors = *uw.upt_accessors;
		accessors.find_proc_info = find_proc_info;
		accessors.access_mem = access_mem;
		accessors.get_dyn_info_list_addr = get_dyn_info_list_addr;
		accessors.get_proc_name = NULL;
	}
	/* one address space per unwind: the next may be another process at the same addresses */
	as = uw.create_addr_space(&accessors, 0);
	upt = as ? uw.upt_create(pid) : NULL;
	if (!as || !upt) {
		*err = "libunwind: cannot create the address space";
		goto out;
	}
	(void) uw.set_caching_policy(as, UNW_CACHE_NONE);
	if (uw.init_remote(&c, as, upt) < 0) {
		*err = "libunwind: cannot read the registers";
		goto out;
	}
	do {
		AuditFrame *f = &frames[n];
		unw_word_t ip = 0;

		if (uw.get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		memset(f, 0, sizeof(*f));
		f->ip = ip;
		symbolize(f, n > 0);
		n++;
	} while (n < max && !unwind_exhausted && uw.step(&c) > 0);
	if (n == 0)
		*err = "libunwind: no frame";
	if (unwind_exhausted)
		log_debug("backtrace of %d cut after %llu reads (its unwind tables)", (int) pid,
			  (unsigned long long) unwind_reads);
out:
	if (mem_cache.proc_mem >= 0) {
		(void) close(mem_cache.proc_mem);
		mem_cache.proc_mem = -1;
	}
	if (upt)
		uw.upt_destroy(upt);
	if (as)
		uw.destroy_addr_space(as);
	free_modules(mods, cur_n_mods);
	cur_mods = NULL;
	cur_n_mods = 0;
	return n;
#else
	(void) t;
	(void) pid;
	(void) frames;
	(void) max;
	*err = "built without libunwind";
	return 0;
#endif
}

/* A call that kills the sandbox, held for its backtrace: the caller (stopped, or about to
 * stop, and not yet reaped: its tid is still its own) dies, then the tree, as respond()
 * does for such a call without a backtrace. */
static void kill_now(Tracer *t, pid_t tid)
{
	(void) syscall(SYS_tkill, tid, SIGKILL);
	atomic_store(&t->kill_requested, true);
	(void) eventfd_write(t->kill_eventfd, 1);
}

int tracer_bt_on_stop(Tracer *t, pid_t pid)
{
	struct TracerBt *b = t->bt;
	TracerBtReq *req = NULL;
	const char *err = NULL;
	bool kill_after;
	size_t n;

	if (!b)
		return 0;
	pthread_mutex_lock(&b->lock);
	for (TracerBtReq *r = b->head; r; r = r->next)
		if (r->tid == pid && r->state == BT_INTERRUPTED) {
			req = r;
			break;
		}
	if (!req) {
		pthread_mutex_unlock(&b->lock);
		return 0;
	}
	/* the receiver waits for BT_UNWINDING to end without a deadline: req stays valid */
	req->state = BT_UNWINDING;
	kill_after = req->kill_after;
	pthread_mutex_unlock(&b->lock);

	n = tracer_bt_unwind(t, pid, req->frames, req->max, &err);
	if (kill_after)
		/* the call was to kill the sandbox: the thread dies here, before it runs on */
		kill_now(t, pid);
	pthread_mutex_lock(&b->lock);
	req->n = n;
	req->error = n ? NULL : err;
	req->state = n ? BT_DONE : BT_FAILED;
	req->killed = kill_after;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
	return kill_after ? 2 : 1;
}

void tracer_bt_on_exit(Tracer *t, pid_t pid)
{
	struct TracerBt *b = t->bt;

	if (!b)
		return;
	pthread_mutex_lock(&b->lock);
	for (TracerBtReq *r = b->head; r; r = r->next)
		if (r->tid == pid && (r->state == BT_QUEUED || r->state == BT_INTERRUPTED)) {
			if (r->state == BT_QUEUED)
				atomic_fetch_sub(&b->queued, 1);
			r->state = BT_FAILED;
			r->error = "the thread ended before it stopped";
			r->killed = r->kill_after; /* nothing left to kill, and the tid is free */
		}
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

/* ---- the receiving thread ---- */

bool tracer_bt_begin(Tracer *t, pid_t tid, bool kill_after, TracerBtReq *req)
{
	struct TracerBt *b = t->bt;
	struct timespec deadline, next;
	pid_t ptid;
	bool ok;

	req->tid = tid;
	req->n = 0;
	req->error = NULL;
	req->kill_after = kill_after;
	req->killed = false;
	req->state = BT_FAILED;
	if (!b) {
		req->error = "backtraces are off";
		return false;
	}
	if (b->unavailable) {
		req->error = b->unavailable;
		return false;
	}
	ptid = (pid_t) atomic_load(&b->ptrace_tid);
	if (!ptid) {
		req->error = "the tracer thread is not running";
		return false;
	}
	deadline_in(&deadline, BT_ACK_MS);
	pthread_mutex_lock(&b->lock);
	req->state = BT_QUEUED;
	req->next = b->head;
	b->head = req;
	atomic_fetch_add(&b->queued, 1);
	while (req->state == BT_QUEUED && !past(&deadline)) {
		/* a signal that lands between the tracer thread's look at the queue and its
		 * waitpid() is lost: send it again until the request is taken */
		ptid = (pid_t) atomic_load(&b->ptrace_tid);
		if (!ptid)
			break; /* the tracer thread has ended: no stop will come */
		(void) syscall(SYS_tgkill, getpid(), ptid, BT_SIGNAL);
		deadline_in(&next, BT_RESIGNAL_MS);
		(void) pthread_cond_timedwait(&b->cond, &b->lock, &next);
	}
	if (req->state == BT_QUEUED) {
		atomic_fetch_sub(&b->queued, 1);
		req->state = BT_FAILED;
		req->error = "the tracer thread did not answer in time";
	}
	ok = req->state == BT_INTERRUPTED;
	if (!ok)
		unlink_req(b, req);
	pthread_mutex_unlock(&b->lock);
	return ok;
}

bool tracer_bt_finish(Tracer *t, TracerBtReq *req)
{
	struct TracerBt *b = t->bt;
	struct timespec deadline;
	bool killed;

	deadline_in(&deadline, BT_STOP_MS);
	pthread_mutex_lock(&b->lock);
	for (;;) {
		if (req->state == BT_UNWINDING) {
			/* the tracer thread uses req until it is done: no deadline here, the
			 * unwind has its own (UNWIND_READS_MAX, UNWIND_TIME_MAX_NS) */
			(void) pthread_cond_wait(&b->cond, &b->lock);
			continue;
		}
		if (req->state != BT_INTERRUPTED)
			break;
		if (past(&deadline)) {
			/* under the lock: the tracer thread has not reported the caller gone, so
			 * its tid is still its own */
			if (req->kill_after) {
				kill_now(t, req->tid);
				req->killed = true;
			}
			req->state = BT_FAILED;
			req->error = "the thread did not stop after the call";
			break;
		}
		(void) pthread_cond_timedwait(&b->cond, &b->lock, &deadline);
	}
	killed = req->killed;
	unlink_req(b, req);
	pthread_mutex_unlock(&b->lock);
	return killed;
}
