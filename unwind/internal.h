/* SPDX-License-Identifier: MIT */
#pragma once

/* What the backends share (unwind/session.c): the modules of the process being unwound, the
 * ELF cache, its memory read a page at a time, the read budget. */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "audit/audit.h"
#include "unwind/elf-info.h"
#include "unwind/unwind.h"

#define UNWIND_PAGE	 4096u
#define UNWIND_MEM_PAGES 32
#define UNWIND_MODULES	 512
#define UNWIND_ELF_CACHE 64

/*
 * The unwind tables are the program's: libunwind interprets them with no bound of its own (a
 * DWARF expression can jump back onto itself, a CFI program can push a saved state per
 * byte). Every opcode it decodes and every word it reads goes through unwind_read(), so a
 * budget there bounds both time and memory: past UNWIND_READS_MAX reads or
 * UNWIND_TIME_MAX_NS, every read fails and the unwind ends with the frames it has. A
 * legitimate 16-frame unwind takes a few thousand reads; the frame-pointer walker two per
 * frame.
 */
#define UNWIND_READS_MAX   100000
#define UNWIND_TIME_MAX_NS (50 * 1000000ULL)

typedef struct UnwindModule {
	uint64_t start, end, offset, bias;
	dev_t dev;
	ino_t ino;
	char *host;	    /* the name /proc/PID/maps gives (malloc'd), NULL for none */
	bool resolved;	    /* elf, bias and path below are set (on first use) */
	const ElfInfo *elf; /* NULL: no unwind table, no symbols */
	char path[AUDIT_MODULE_MAX];
} UnwindModule;

typedef struct UnwindElfEntry {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	ElfInfo *elf; /* NULL: not an ELF file we can use (remembered too) */
	uint64_t used;
	uint64_t pass; /* the unwind that last handed elf out: never freed during that one */
	bool valid;
} UnwindElfEntry;

struct UnwindSession {
	UnwindHost host;
	const Unwinder *primary;

	/* the ELF facts of the modules seen, for the session */
	UnwindElfEntry elf_cache[UNWIND_ELF_CACHE];
	uint64_t elf_clock;
	uint64_t pass; /* counts unwind_begin()s; an entry of this pass is in use */

	/* the unwind under way (unwind_begin() to unwind_end()) */
	pid_t pid;
	UnwindModule *mods;
	size_t n_mods;
	uint64_t reads, deadline_ns;
	bool exhausted;
	int proc_mem; /* /proc/PID/mem once process_vm_readv was refused, else -1 */
	bool no_vm_readv;
	size_t n_pages, next_page;
	uint64_t page_addr[UNWIND_MEM_PAGES];
	uint8_t page_data[UNWIND_MEM_PAGES][UNWIND_PAGE];
};

/* Starts an unwind of pid: its modules from /proc/PID/maps, an empty page cache, a fresh
 * budget. < 0: out of memory. */
int unwind_begin(UnwindSession *s, pid_t pid);
void unwind_end(UnwindSession *s);
/* One more read within the budget? */
bool unwind_budget_ok(UnwindSession *s);
/* len bytes of the process at addr, within the budget; false if any is unreadable. */
bool unwind_read(UnwindSession *s, uint64_t addr, void *buf, size_t len);
/* The executable mapping at ip (its ELF facts read on first use), or NULL. */
const UnwindModule *unwind_module_at(UnwindSession *s, uint64_t ip);
/* Fills f's module, function and offset from f->ip; a return address (not the innermost
 * frame) is looked up one byte back, inside its call instruction. */
void unwind_symbolize(UnwindSession *s, AuditFrame *f, bool return_address);
