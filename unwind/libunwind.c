/* SPDX-License-Identifier: MIT */
/*
 * The libunwind backend: DWARF CFI from each module's .eh_frame, so it unwinds code built
 * without frame pointers (most of a distribution's libraries).
 *
 * libunwind is opened with dlopen() the first time a session is made, like capstone: a run
 * without backtraces does not pay for loading it, and a host without it still gets the
 * frame-pointer walker. Of libunwind-ptrace only the register accessors are used (they read
 * the stopped thread's registers with ptrace, hence "the caller is the tracer"): memory is
 * read by the session, a page at a time and within its budget, and the modules' unwind
 * tables and symbols are found by the session, which does not trust the file names the
 * program controls (unwind/session.c).
 */
#include "unwind/unwind.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#if HAVE_LIBUNWIND
#define UNW_REMOTE_ONLY
#include <libunwind-ptrace.h>
#endif

#include "common/log.h"
#include "unwind/internal.h"

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
static unw_accessors_t accessors; /* set in uw_load(), read-only after */

/* libunwind's accessors get the UPT handle as their argument, which its register accessors
 * need: the session of the unwind under way is found here instead (one per thread). */
static _Thread_local UnwindSession *cur;

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg);
static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg);
static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *ret, void *arg);

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
	if (!uw.ok)
		return;
	/* registers through ptrace (the caller is the tracer); memory and modules ours */
	accessors = *uw.upt_accessors;
	accessors.find_proc_info = find_proc_info;
	accessors.access_mem = access_mem;
	accessors.get_dyn_info_list_addr = get_dyn_info_list_addr;
	accessors.get_proc_name = NULL;
}

/* libunwind asks for the FDE of ip: the module's .eh_frame_hdr, read in the process. */
static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	const UnwindModule *m;
	uint64_t hdr, count;
	unw_dyn_info_t di;

	if (!unwind_budget_ok(cur))
		return -UNW_EINVAL;
	m = unwind_module_at(cur, ip);
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

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
	(void) as;
	(void) arg;
	if (write)
		return -UNW_EINVAL; /* unwinding only reads */
	return unwind_read(cur, addr, val, sizeof(*val)) ? 0 : -UNW_EINVAL;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *ret, void *arg)
{
	(void) as;
	(void) ret;
	(void) arg;
	return -UNW_ENOINFO; /* no dynamically registered unwind info */
}

static size_t walk(UnwindSession *s, AuditFrame *frames, size_t max, const char **ret_err)
{
	unw_addr_space_t as;
	unw_cursor_t c;
	void *upt = NULL;
	size_t n = 0;

	/* one address space per unwind: the next may be another process at the same addresses */
	as = uw.create_addr_space(&accessors, 0);
	upt = as ? uw.upt_create(s->pid) : NULL;
	if (!as || !upt) {
		*ret_err = "libunwind: cannot create the address space";
		goto out;
	}
	(void) uw.set_caching_policy(as, UNW_CACHE_NONE);
	if (uw.init_remote(&c, as, upt) < 0) {
		*ret_err = "libunwind: cannot read the registers";
		goto out;
	}
	do {
		AuditFrame *f = &frames[n];
		unw_word_t ip = 0;

		if (uw.get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		memset(f, 0, sizeof(*f));
		f->ip = ip;
		unwind_symbolize(s, f, n > 0);
		n++;
	} while (n < max && !s->exhausted && uw.step(&c) > 0);
	if (n == 0)
		*ret_err = "libunwind: no frame";
	if (s->exhausted)
		log_debug("backtrace of %d cut after %llu reads (its unwind tables)", (int) s->pid,
			  (unsigned long long) s->reads);
out:
	if (upt)
		uw.upt_destroy(upt);
	if (as)
		uw.destroy_addr_space(as);
	return n;
}
#endif

static bool lu_open(void)
{
#if HAVE_LIBUNWIND
	pthread_once(&uw_once, uw_load);
	return uw.ok;
#else
	return false;
#endif
}

static size_t lu_unwind(UnwindSession *s, pid_t pid, AuditFrame *frames, size_t max,
			const char **ret_err)
{
#if HAVE_LIBUNWIND
	size_t n;

	if (max == 0) {
		*ret_err = "no frame asked for";
		return 0;
	}
	if (!lu_open()) {
		*ret_err = "libunwind-ptrace cannot be loaded";
		return 0;
	}
	if (unwind_begin(s, pid) < 0) {
		*ret_err = "out of memory";
		return 0;
	}
	cur = s;
	n = walk(s, frames, max, ret_err);
	cur = NULL;
	unwind_end(s);
	return n;
#else
	(void) s;
	(void) pid;
	(void) frames;
	(void) max;
	*ret_err = "built without libunwind";
	return 0;
#endif
}

const Unwinder unwinder_libunwind = {
	.name = "libunwind",
	.open = lu_open,
	.unwind = lu_unwind,
};
