/* SPDX-License-Identifier: MIT */
/*
 * What a backtrace needs from a module's ELF file (unwind/session.c): its loadable
 * segments (to compute the load bias of a mapping), where its .eh_frame_hdr is (libunwind
 * then reads the FDE table from the process's memory), and its function symbols (.symtab,
 * else .dynsym) to name frames.
 *
 * The file is read with pread() from a descriptor the caller opened and checked (a regular
 * file, the very inode the process has mapped): never mmap'ed, so a program that truncates
 * the file meanwhile makes a read come back short, not a SIGBUS in the supervisor. Every
 * size and offset read from the file is bounded before it is used.
 *
 * The same code parses a file held in memory (elf_info_parse()): only read_at() knows
 * which, so the fuzzer (tests/fuzz/fuzz-elf.c) runs the parser the supervisor runs.
 */
#include "unwind/elf-info.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_PHDRS 64
#define MAX_SHDRS 4096
#define MAX_TABLE (16u << 20) /* bytes of a symbol or string table */
#define PAGE	  4096ULL

typedef struct ElfSym {
	uint64_t start, size;
	uint32_t name;
} ElfSym;

struct ElfInfo {
	struct {
		uint64_t vaddr, offset, filesz;
	} load[MAX_PHDRS];
	size_t n_load;
	uint64_t eh_hdr_vaddr; /* 0: none usable */
	uint64_t fde_count;
	ElfSym *syms;
	size_t n_syms;
	char *strtab;
	size_t strtab_len;
};

/* Where the file's bytes come from: fd with pread(), or data[0..size) when data is set. */
typedef struct ElfSource {
	int fd;
	const uint8_t *data;
	size_t size;
} ElfSource;

/* All of [off, off + len) or -EIO: a short file is as bad as a failed read. */
static int read_at(const ElfSource *src, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	if (src->data) {
		if (off > src->size || len > src->size - off)
			return -EIO;
		memcpy(buf, src->data + off, len);
		return 0;
	}
	/* an offset past what off_t holds would turn negative */
	if (off > INT64_MAX || len > INT64_MAX - off)
		return -EIO;
	while (done < len) {
		ssize_t n = pread(src->fd, (char *) buf + done, len - done, (off_t) (off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		done += (size_t) n;
	}
	return 0;
}

static int cmp_sym(const void *a, const void *b)
{
	const ElfSym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* .eh_frame_hdr in the form libunwind's remote table lookup takes: version 1, a 4-byte
 * eh_frame pointer, a udata4 FDE count, and a table of (datarel|sdata4) pairs. */
static void load_eh_frame_hdr(ElfInfo *e, const ElfSource *src, const Elf64_Phdr *ph)
{
	uint8_t h[12];
	uint32_t count;

	if (ph->p_filesz < sizeof(h) || read_at(src, h, sizeof(h), ph->p_offset) < 0)
		return;
	/* the eh_frame pointer must take 4 bytes for the count to be at offset 8 */
	if (h[0] != 1 || ((h[1] & 0x0f) != DW_EH_PE_udata4_ && (h[1] & 0x0f) != DW_EH_PE_sdata4_))
		return;
	if (h[2] != DW_EH_PE_udata4_ || h[3] != (DW_EH_PE_datarel_ | DW_EH_PE_sdata4_))
		return;
	memcpy(&count, h + 8, sizeof(count));
	if ((uint64_t) count * 8 > ph->p_filesz - sizeof(h))
		return;
	e->eh_hdr_vaddr = ph->p_vaddr;
	e->fde_count = count;
}

static void load_symbols(ElfInfo *e, const ElfSource *src, const Elf64_Ehdr *eh)
{
	Elf64_Shdr *sh = NULL, *sym = NULL, *str;
	Elf64_Sym *raw = NULL;
	size_t n;

	if (eh->e_shnum == 0 || eh->e_shnum > MAX_SHDRS || eh->e_shentsize != sizeof(Elf64_Shdr))
		return;
	sh = calloc(eh->e_shnum, sizeof(*sh));
	if (!sh || read_at(src, sh, eh->e_shnum * sizeof(*sh), eh->e_shoff) < 0)
		goto out;
	for (size_t i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_SYMTAB)
			sym = &sh[i];
	for (size_t i = 0; !sym && i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_DYNSYM)
			sym = &sh[i];
	if (!sym || sym->sh_link >= eh->e_shnum || sym->sh_entsize != sizeof(Elf64_Sym) ||
	    sym->sh_size > MAX_TABLE)
		goto out;
	str = &sh[sym->sh_link];
	if (str->sh_type != SHT_STRTAB || str->sh_size == 0 || str->sh_size > MAX_TABLE)
		goto out;
	n = sym->sh_size / sizeof(Elf64_Sym);
	raw = malloc(sym->sh_size ? sym->sh_size : 1);
	e->strtab = malloc(str->sh_size);
	e->syms = calloc(n ? n : 1, sizeof(*e->syms));
	if (!raw || !e->strtab || !e->syms || read_at(src, raw, sym->sh_size, sym->sh_offset) < 0 ||
	    read_at(src, e->strtab, str->sh_size, str->sh_offset) < 0) {
		free(e->strtab);
		free(e->syms);
		e->strtab = NULL;
		e->syms = NULL;
		goto out;
	}
	e->strtab_len = str->sh_size;
	e->strtab[e->strtab_len - 1] = 0; /* every name ends inside the table */
	for (size_t i = 0; i < n; i++) {
		unsigned type = ELF64_ST_TYPE(raw[i].st_info);

		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || raw[i].st_shndx == SHN_UNDEF ||
		    raw[i].st_value == 0 || raw[i].st_name >= e->strtab_len ||
		    !e->strtab[raw[i].st_name])
			continue;
		e->syms[e->n_syms].start = raw[i].st_value;
		e->syms[e->n_syms].size = raw[i].st_size;
		e->syms[e->n_syms].name = raw[i].st_name;
		e->n_syms++;
	}
	qsort(e->syms, e->n_syms, sizeof(*e->syms), cmp_sym);
	if (e->n_syms == 0) {
		/* nothing to name: keep nothing */
		free(e->syms);
		free(e->strtab);
		e->syms = NULL;
		e->strtab = NULL;
		e->strtab_len = 0;
	}
out:
	free(raw);
	free(sh);
}

static ElfInfo *load(const ElfSource *src)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[MAX_PHDRS];
	ElfInfo *e;

	if (read_at(src, &eh, sizeof(eh), 0) < 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 ||
	    eh.e_phnum > MAX_PHDRS)
		return NULL;
	if (read_at(src, ph, eh.e_phnum * sizeof(*ph), eh.e_phoff) < 0)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	for (size_t i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD) {
			e->load[e->n_load].vaddr = ph[i].p_vaddr;
			e->load[e->n_load].offset = ph[i].p_offset;
			e->load[e->n_load].filesz = ph[i].p_filesz;
			e->n_load++;
		} else if (ph[i].p_type == PT_GNU_EH_FRAME) {
			load_eh_frame_hdr(e, src, &ph[i]);
		}
	}
	load_symbols(e, src, &eh);
	return e;
}

ElfInfo *elf_info_load(int fd)
{
	return load(&(const ElfSource){.fd = fd});
}

ElfInfo *elf_info_parse(const void *data, size_t size)
{
	/* any non-NULL pointer marks the buffer source, also for an empty buffer */
	ElfSource src = {
		.fd = -1, .data = data ? data : (const uint8_t *) "", .size = data ? size : 0};

	return load(&src);
}

void elf_info_free(ElfInfo *e)
{
	if (!e)
		return;
	free(e->syms);
	free(e->strtab);
	free(e);
}

bool elf_info_bias(const ElfInfo *e, uint64_t map_start, uint64_t map_offset, uint64_t *ret_bias)
{
	/* the PT_LOAD that the kernel mapped at map_start: its page-aligned file offset */
	for (size_t i = 0; i < e->n_load; i++)
		if ((e->load[i].offset & ~(PAGE - 1)) == map_offset) {
			*ret_bias = map_start - (e->load[i].vaddr & ~(PAGE - 1));
			return true;
		}
	return false;
}

bool elf_info_eh_frame_hdr(const ElfInfo *e, uint64_t *ret_vaddr, uint64_t *ret_fde_count)
{
	if (!e->eh_hdr_vaddr)
		return false;
	*ret_vaddr = e->eh_hdr_vaddr;
	*ret_fde_count = e->fde_count;
	return true;
}

const char *elf_info_symbol(const ElfInfo *e, uint64_t vaddr, uint64_t *ret_start)
{
	size_t lo = 0, hi = e->n_syms;

	/* the last symbol that starts at or below vaddr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* several may start there (aliases): any whose size covers vaddr, else one of size 0
	 * (assembly without .size) as the nearest below */
	for (size_t i = lo; i > 0; i--) {
		const ElfSym *s = &e->syms[i - 1];

		if (lo - i > 8 || (i < lo && s->start != e->syms[lo - 1].start))
			break;
		if (vaddr < s->start + s->size || s->size == 0) {
			*ret_start = s->start;
			return e->strtab + s->name;
		}
	}
	return NULL;
}

size_t elf_info_bytes(const ElfInfo *e)
{
	return sizeof(*e) + e->n_syms * sizeof(*e->syms) + e->strtab_len;
}
