/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* DWARF pointer encodings of .eh_frame_hdr (the LSB standard's names, with a _ so that they
 * do not clash with a header that has them) */
#define DW_EH_PE_udata4_  0x03
#define DW_EH_PE_sdata4_  0x0b
#define DW_EH_PE_datarel_ 0x30

/** A module's ELF facts for backtraces (unwind/elf-info.c). */
typedef struct ElfInfo ElfInfo;

/** Reads them from fd (a regular file the caller checked); NULL if it is not an x86-64 ELF
 * file or memory runs out. Without symbols or .eh_frame_hdr the info is still returned. */
ElfInfo *elf_info_load(int fd);
/** The same from the whole file held in data[0..size) (borrowed for the call only): the
 * parser elf_info_load() runs, for the fuzzer and tests. */
ElfInfo *elf_info_parse(const void *data, size_t size);
void elf_info_free(ElfInfo *e);
/** The load bias of a mapping of this file at map_start with file offset map_offset. */
bool elf_info_bias(const ElfInfo *e, uint64_t map_start, uint64_t map_offset, uint64_t *ret_bias);
/** Link-time address of .eh_frame_hdr and its FDE count, if usable by libunwind. */
bool elf_info_eh_frame_hdr(const ElfInfo *e, uint64_t *ret_vaddr, uint64_t *ret_fde_count);
/** The function symbol covering link-time address vaddr (its start in ret_start), or NULL. */
const char *elf_info_symbol(const ElfInfo *e, uint64_t vaddr, uint64_t *ret_start);
/** Memory the info keeps (for the cache's cap). */
size_t elf_info_bytes(const ElfInfo *e);
