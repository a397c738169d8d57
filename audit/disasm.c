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
 */
#include "audit/internal.h"

#include <stdio.h>
#include <string.h>

#if HAVE_CAPSTONE
#include <capstone/capstone.h>
#endif

#include "common/macros.h"

size_t audit_disassemble(const uint8_t *code, size_t len, uint64_t code_addr, uint64_t site,
			 AuditInsn *out, size_t max)
{
#if HAVE_CAPSTONE
	csh h;
	size_t n_out = 0;

	if (!code || len == 0 || max == 0 || site < code_addr || site >= code_addr + len)
		return 0;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return 0;
	for (uint64_t start = code_addr; start <= site && n_out == 0; start++) {
		cs_insn *insn = NULL;
		size_t count = cs_disasm(h, code + (start - code_addr), len - (start - code_addr),
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
			cs_free(insn, count);
	}
	cs_close(&h);
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
