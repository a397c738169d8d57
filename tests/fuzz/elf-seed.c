/* SPDX-License-Identifier: MIT */
/*
 * Not run: built, without libc, into a small executable and a small shared library that
 * seed fuzz-elf's corpus with real ELF files of this compiler and linker (segments,
 * .eh_frame_hdr, .symtab and .dynsym), a few KiB each.
 */
int elf_seed_twice(int x);
int elf_seed_entry(void);

static int __attribute__((noinline)) elf_seed_local(int x)
{
	return x * 3 + 1;
}

int elf_seed_twice(int x)
{
	return elf_seed_local(x) + elf_seed_local(x + 1);
}

int elf_seed_entry(void)
{
	return elf_seed_twice(2);
}
