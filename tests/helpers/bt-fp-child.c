/* SPDX-License-Identifier: MIT */
/*
 * A program with a known call chain for the unwinder tests (tests/unit/unwind/test-unwind.c):
 * main → bt_outer → bt_middle → bt_inner → libc's syscall(), which sends the program a
 * SIGSTOP. Its tracer (the test) finds it stopped right after the `syscall` instruction, as
 * tracer/backtrace.c finds a caller, and unwinds it with each backend.
 *
 * Built with frame pointers and without sibling calls (tests/helpers/meson.build), its
 * functions not inlined: each one of the chain has a frame of its own. Not under sbxtrace.
 */
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int bt_inner(int x);
int bt_middle(int x);
int bt_outer(int x);

/* noipa: no clone (bt_inner.constprop.0) whose name the test would not find; clang has no
 * such attribute (and no such clones of an exported function) */
#if defined(__clang__)
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noinline, noipa))
#endif

KEEP int bt_inner(int x)
{
	long r = syscall(SYS_kill, getpid(), SIGSTOP);

	return (int) r + x + 1;
}

KEEP int bt_middle(int x)
{
	return bt_inner(x + 1) * 3 + 1;
}

KEEP int bt_outer(int x)
{
	return bt_middle(x + 1) * 5 + 1;
}

int main(void)
{
	return bt_outer(0) == 0 ? 1 : 0;
}
