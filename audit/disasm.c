/* SPDX-License-Identifier: MIT */
/*
 * Disassembly of the instructions around a syscall site (capstone), for records that
 * [audit] disassembly selects. No ptrace stop is needed: the bytes are copied from the
 * child's memory while it is blocked in the call (tracer/audit.c), and x86 code can be
 * decoded from any start that lands on an instruction boundary.
 *
 * Going backwards from the `syscall` instruction is ambiguous on x86 (variable length), so
 * the decoder tries each start in the window before the site, from the farthest, and keeps
 * the first one whose instruction stream lands exactly on the site; x86 decoding resynchronizes
 * within a few instructions, so the instructions just before the site are right in practice.
 * Without capstone (a build option) nothing is decoded and records carry no "disassembly".
 *
 * libcapstone is opened with dlopen() on first use, not linked: relocating its 1.3 MiB data
 * segment cost about 5 ms at every start of sbxtrace (docs/performance.md), for a feature
 * that is off by default. If the library cannot be loaded, nothing is decoded.
 */
#include "audit/internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#if HAVE_CAPSTONE
#include <capstone/capstone.h>
#endif

#include "common/macros.h"

#if HAVE_CAPSTONE
static struct {
	cs_err (*open)(cs_arch, cs_mode, csh *);
	size_t (*disasm)(csh, const uint8_t *, size_t, uint64_t, size_t, cs_insn **);
	void (*free)(cs_insn *, size_t);
	cs_err (*close)(csh *);
	bool ok;
} cs;
static pthread_once_t cs_once = PTHREAD_ONCE_INIT;

static void cs_load(void)
{
	/* the SONAME of the library we were built against (Debian 12: libcapstone.so.4) */
	char name[32];
	void *lib;

	snprintf(name, sizeof(name), "libcapstone.so.%d", CS_API_MAJOR);
	lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return;
	cs.open = (cs_err(*)(cs_arch, cs_mode, csh *)) dlsym(lib, "cs_open");
	cs.disasm = (size_t(*)(csh, const uint8_t *, size_t, uint64_t, size_t, cs_insn **)) dlsym(
		lib, "cs_disasm");
	cs.free = (void (*)(cs_insn *, size_t)) dlsym(lib, "cs_free");
	cs.close = (cs_err(*)(csh *)) dlsym(lib, "cs_close");
	cs.ok = cs.open && cs.disasm && cs.free && cs.close;
}
#endif

size_t audit_disassemble(const uint8_t *code, size_t len, uint64_t code_addr, uint64_t site,
			 AuditInsn *out, size_t max)
{
#if HAVE_CAPSTONE
	csh h;
	size_t n_out = 0;

	if (!code || len == 0 || max == 0 || site < code_addr || site >= code_addr + len)
		return 0;
	(void) pthread_once(&cs_once, cs_load);
	if (!cs.ok || cs.open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return 0;
	for (uint64_t start = code_addr; start <= site && n_out == 0; start++) {
		cs_insn *insn = NULL;
		size_t count = cs.disasm(h, code + (start - code_addr), len - (start - code_addr),
					 start, 0, &insn);
		size_t at = count;

		for (size_t i = 0; i < count; i++)
			if (insn[i].address == site) {
				at = i;
				break;
			}
		if (at < count) {
			/* up to max instructions, the site in the middle (after as many as fit) */
			size_t after = MIN(count - at - 1, max / 3);
			size_t before = MIN(at, max - 1 - after);

			for (size_t i = at - before; i <= at + after; i++) {
				out[n_out].addr = insn[i].address;
				out[n_out].site = insn[i].address == site;
				/* capstone's op_str may be longer than we keep: cut */
				(void) !snprintf(out[n_out].text, sizeof(out[n_out].text),
						 "%.31s%s%.60s", insn[i].mnemonic,
						 insn[i].op_str[0] ? " " : "", insn[i].op_str);
				n_out++;
			}
		}
		if (insn)
			cs.free(insn, count);
	}
	cs.close(&h);
	return n_out;
#else
	(void) code;
	(void) len;
	(void) code_addr;
	(void) site;
	(void) out;
	(void) max;
	return 0;
#endif
}
