/* SPDX-License-Identifier: MIT */
/*
 * The frame-pointer backend: the RBP chain, for hosts without libunwind and for the unwinds
 * libunwind gives up on at once. It needs no unwind tables, only that the code keeps frame
 * pointers (-fno-omit-frame-pointer: Fedora and Ubuntu build their packages so since 2023
 * and 24.04; Debian 12 does not, so its libraries end the chain, see below).
 *
 * x86-64 code built with frame pointers starts each function with `push %rbp; mov %rsp,%rbp`:
 * [rbp] holds the caller's rbp and [rbp + 8] the return address into the caller. From the
 * registers of the ptrace stop (PTRACE_GETREGS: the caller is the tracer) the walk follows
 * that chain, reading the stack through the session (process_vm_readv, within its budget).
 * It stops at the first link that cannot be right: rbp zero, unaligned, below rsp or not
 * above the previous one (the stack grows down, so a caller's frame is always higher: this
 * also makes a loop in a forged chain impossible), a return address outside every
 * executable mapping, an unreadable word, or max frames.
 *
 * The innermost function is often a libc syscall wrapper, a leaf that sets up no frame: rbp
 * is still its caller's, and the chain alone would skip that caller, the frame that matters
 * most. At a stop right after the `syscall` instruction such a leaf has pushed nothing, so
 * its return address is at [rsp]; that word is taken as a frame only when rsp != rbp (the
 * function has no frame of its own there) and the bytes before it are a call instruction
 * into an executable mapping (e8 rel32, ff 15 disp32, ff /2 on a register), the check
 * perf's and gdb's heuristics make too. A word on the stack that passes it by chance adds one
 * wrong frame at the top; the chain below is unaffected.
 *
 * The stack is the program's: every value read is untrusted, bounded and only used as an
 * address to read from again (never written, never followed outside the process).
 */
#include "unwind/unwind.h"

#include <errno.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include "unwind/internal.h"

static bool fp_open(void)
{
#if defined(__x86_64__)
	return true;
#else
	return false; /* the register layout below is x86-64's */
#endif
}

/* Whether the instruction before ret is a call (so ret is a return address). */
static bool after_call(UnwindSession *s, uint64_t ret)
{
	uint8_t b[7];

	if (ret < sizeof(b) || !unwind_module_at(s, ret) || !unwind_module_at(s, ret - 1) ||
	    !unwind_read(s, ret - sizeof(b), b, sizeof(b)))
		return false;
	if (b[2] == 0xe8) /* call rel32 */
		return true;
	if (b[1] == 0xff && b[2] == 0x15) /* call *disp32(%rip) (-fno-plt) */
		return true;
	if (b[5] == 0xff && (b[6] & 0xf8) == 0xd0) /* call *%reg */
		return true;
	return false;
}

static void add_frame(UnwindSession *s, AuditFrame *frames, size_t *n, uint64_t ip)
{
	AuditFrame *f = &frames[*n];

	memset(f, 0, sizeof(*f));
	f->ip = ip;
	unwind_symbolize(s, f, *n > 0);
	(*n)++;
}

static size_t walk(UnwindSession *s, const struct user_regs_struct *regs, AuditFrame *frames,
		   size_t max)
{
	uint64_t fp = regs->rbp, sp = regs->rsp, ret;
	size_t n = 0;

	if (regs->rip == 0)
		return 0;
	add_frame(s, frames, &n, regs->rip);
	/* the leaf without a frame (above) */
	if (n < max && sp != fp && unwind_read(s, sp, &ret, sizeof(ret)) && after_call(s, ret))
		add_frame(s, frames, &n, ret);
	while (n < max) {
		uint64_t link[2]; /* the caller's rbp, the return address */

		if (fp == 0 || fp % 8 != 0 || fp < sp || fp > UINT64_MAX - 16)
			break;
		if (!unwind_read(s, fp, link, sizeof(link)) || link[1] == 0 ||
		    !unwind_module_at(s, link[1]))
			break;
		add_frame(s, frames, &n, link[1]);
		if (link[0] <= fp)
			break; /* the outermost frame (rbp 0), or a chain that does not go up */
		fp = link[0];
	}
	return n;
}

static size_t fp_unwind(UnwindSession *s, pid_t pid, AuditFrame *frames, size_t max,
			const char **ret_err)
{
#if defined(__x86_64__)
	struct user_regs_struct regs;
	size_t n;

	if (max == 0) {
		*ret_err = "no frame asked for";
		return 0;
	}
	if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) < 0) {
		*ret_err = "frame pointers: cannot read the registers";
		return 0;
	}
	if (unwind_begin(s, pid) < 0) {
		*ret_err = "out of memory";
		return 0;
	}
	n = walk(s, &regs, frames, max);
	unwind_end(s);
	if (n == 0)
		*ret_err = "frame pointers: no frame";
	return n;
#else
	(void) s;
	(void) pid;
	(void) frames;
	(void) max;
	*ret_err = "frame pointers: not on this architecture";
	return 0;
#endif
}

const Unwinder unwinder_frame_pointer = {
	.name = "frame-pointer",
	.open = fp_open,
	.unwind = fp_unwind,
};
