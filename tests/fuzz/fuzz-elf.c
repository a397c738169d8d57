/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes the ELF reader of backtraces (unwind/elf-info.c): the file is the sandboxed
 * program's own, so every header, table size and offset in it is hostile. Input: the whole
 * file. elf_info_parse() is the parser elf_info_load() runs on a descriptor; only where the
 * bytes come from differs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "unwind/elf-info.h"

static uint64_t u64_at(const uint8_t *data, size_t size, size_t off)
{
	uint64_t v = 0;

	if (off < size)
		memcpy(&v, data + off, size - off < sizeof(v) ? size - off : sizeof(v));
	return v;
}

static void check_symbol(const ElfInfo *e, uint64_t vaddr)
{
	uint64_t start = UINT64_MAX;
	const char *name = elf_info_symbol(e, vaddr, &start);

	if (!name)
		return;
	/* a name, in the table the info keeps, that starts at or below the address */
	if (!name[0] || strlen(name) >= elf_info_bytes(e) || start > vaddr)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t bias, hdr, count;
	ElfInfo *e;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	e = elf_info_parse(data, size);
	if (!e)
		return 0;
	/* (the FDE table itself is read from the process's memory, by libunwind) */
	if (elf_info_eh_frame_hdr(e, &hdr, &count) && hdr == 0)
		abort();
	/* addresses the file itself suggests (the entry point, the section table's offset), and
	 * the ends of the range */
	for (size_t off = 0; off < 64; off += 8) {
		check_symbol(e, u64_at(data, size, off));
		check_symbol(e, u64_at(data, size, off) - 1);
	}
	check_symbol(e, 0);
	check_symbol(e, UINT64_MAX);
	for (uint64_t a = 0; a < 0x3000; a += 0x10)
		check_symbol(e, a);
	(void) elf_info_bias(e, 0x7f0000000000, 0, &bias);
	(void) elf_info_bias(e, 0x7f0000001000, 0x1000, &bias);
	elf_info_free(e);
	return 0;
}
