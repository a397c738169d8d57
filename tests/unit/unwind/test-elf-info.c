/* SPDX-License-Identifier: MIT */
/*
 * unwind/elf-info.c on this test's own executable and on files that are not ELF: the bias of
 * its text mapping, a static function found by address (from .symtab), the .eh_frame_hdr in
 * the form libunwind's remote lookup takes, and garbage refused without a crash; the same
 * file parsed from memory (elf_info_parse(), what the fuzzer calls) gives the same answers.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "tests/unit/tap.h"
#include "unwind/elf-info.h"

__attribute__((noinline, noipa)) static int elf_info_probe_function(int x)
{
	return x * 3 + 1;
}

/* start and file offset of the mapping of our executable that holds addr */
static bool mapping_of(uintptr_t addr, uint64_t *start, uint64_t *off)
{
	char line[1024];
	FILE *f = fopen("/proc/self/maps", "re");
	bool found = false;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long s, e, o;

		if (sscanf(line, "%llx-%llx %*s %llx", &s, &e, &o) == 3 && addr >= s && addr < e) {
			*start = s;
			*off = o;
			found = true;
			break;
		}
	}
	if (f)
		fclose(f);
	return found;
}

TEST(own_static_function_by_address)
{
	uintptr_t fn = (uintptr_t) elf_info_probe_function;
	uint64_t start = 0, off = 0, bias = 0, sym = 0, hdr = 0, count = 0;
	const char *name;
	ElfInfo *e;
	int fd;

	ASSERT_EQ(elf_info_probe_function(1), 4);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	e = elf_info_load(fd);
	close(fd);
	ASSERT_TRUE(e != NULL);
	ASSERT_TRUE(mapping_of(fn, &start, &off));
	ASSERT_TRUE(elf_info_bias(e, start, off, &bias));
	name = elf_info_symbol(e, fn + 1 - bias, &sym);
	ASSERT_TRUE(name != NULL);
	EXPECT_STREQ(name, "elf_info_probe_function");
	EXPECT_EQ(sym + bias, (uint64_t) fn);
	/* the table libunwind reads from memory: present, with one FDE per function at least */
	EXPECT_TRUE(elf_info_eh_frame_hdr(e, &hdr, &count));
	EXPECT_GE(count, 3u);
	/* nothing below the first symbol */
	EXPECT_TRUE(elf_info_symbol(e, 0, &sym) == NULL);
	elf_info_free(e);
}

TEST(parse_from_memory_as_from_fd)
{
	uintptr_t fn = (uintptr_t) elf_info_probe_function;
	uint64_t start = 0, off = 0, bias = 0, sym_fd = 0, sym_mem = 0;
	uint64_t hdr_fd = 0, hdr_mem = 0, count_fd = 0, count_mem = 0;
	char *data = NULL;
	size_t size = 0;
	ElfInfo *from_fd, *from_mem;
	int fd;

	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	from_fd = elf_info_load(fd);
	close(fd);
	ASSERT_GE(read_full_file(AT_FDCWD, "/proc/self/exe", 256u << 20, &data, &size), 0);
	from_mem = elf_info_parse(data, size);
	ASSERT_TRUE(from_fd != NULL);
	ASSERT_TRUE(from_mem != NULL);
	EXPECT_EQ(elf_info_bytes(from_mem), elf_info_bytes(from_fd));
	ASSERT_TRUE(mapping_of(fn, &start, &off));
	ASSERT_TRUE(elf_info_bias(from_mem, start, off, &bias));
	EXPECT_STREQ(elf_info_symbol(from_mem, fn + 1 - bias, &sym_mem),
		     elf_info_symbol(from_fd, fn + 1 - bias, &sym_fd));
	EXPECT_EQ(sym_mem, sym_fd);
	EXPECT_TRUE(elf_info_eh_frame_hdr(from_mem, &hdr_mem, &count_mem));
	EXPECT_TRUE(elf_info_eh_frame_hdr(from_fd, &hdr_fd, &count_fd));
	EXPECT_EQ(hdr_mem, hdr_fd);
	EXPECT_EQ(count_mem, count_fd);
	/* cut anywhere in the header, or empty: refused */
	EXPECT_TRUE(elf_info_parse(data, 63) == NULL);
	EXPECT_TRUE(elf_info_parse(data, 0) == NULL);
	EXPECT_TRUE(elf_info_parse(NULL, 0) == NULL);
	elf_info_free(from_fd);
	elf_info_free(from_mem);
	free(data);
}

TEST(not_elf_is_refused)
{
	char path[] = "/tmp/sbx-elf-info-XXXXXX";
	int fd = mkstemp(path);
	unsigned char junk[4096];

	ASSERT_GE(fd, 0);
	unlink(path);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char) (i * 7 + 1);
	memcpy(junk, "\177ELF\2\1\1", 7); /* an ELF header with garbage after it */
	ASSERT_EQ(write(fd, junk, sizeof(junk)), (ssize_t) sizeof(junk));
	EXPECT_TRUE(elf_info_load(fd) == NULL);
	ASSERT_EQ(ftruncate(fd, 10), 0); /* shorter than a header */
	EXPECT_TRUE(elf_info_load(fd) == NULL);
	close(fd);
}

int main(void)
{
	return tap_run();
}
