/* SPDX-License-Identifier: MIT */
#pragma once

/* A classic-BPF interpreter for the instructions the generated seccomp filter uses (load of
 * a word of seccomp_data, an AND with a constant, jumps, return), for the unit tests that run the
 * filter over hand-made syscalls: test-tracer-filter and filter-golden. An instruction it does not
 * know returns 0xbad, a load outside seccomp_data 0xdead, falling off the end 0xfa11: none of them
 * an action the kernel knows, so a test comparing actions fails on them. */

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t bpf_interp_run(const struct sock_filter *prog, size_t len, uint32_t arch,
				      uint32_t nr, const uint64_t args[6])
{
	struct seccomp_data d = {.nr = (int) nr, .arch = arch};
	uint32_t a = 0;

	if (args)
		memcpy(d.args, args, sizeof(d.args));
	for (size_t pc = 0; pc < len; pc++) {
		const struct sock_filter *i = &prog[pc];

		switch (i->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (i->k + 4 > sizeof(d))
				return 0xdead;
			memcpy(&a, (const char *) &d + i->k, 4);
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			a &= i->k;
			break;
		case BPF_JMP | BPF_JA:
			pc += i->k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			pc += a == i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			pc += a >= i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			pc += (a & i->k) ? i->jt : i->jf;
			break;
		case BPF_RET | BPF_K:
			return i->k;
		default:
			return 0xbad;
		}
	}
	return 0xfa11;
}
