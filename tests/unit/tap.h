/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A tiny TAP harness. ASSERT_* stops the current test (return from it), EXPECT_* records a
 * failure and goes on — the split of the kernel's kselftest harness.
 *
 *   TEST(name) { EXPECT_EQ(1 + 1, 2); }
 *   int main(void) { return tap_run(); }
 *
 * TAP_ONLY=WORD in the environment runs only the tests whose name contains WORD (the others
 * are reported as skipped), to rerun one case of a slow binary by hand.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct TapTest {
	const char *name;
	void (*fn)(int *failed);
	struct TapTest *next;
} TapTest;

static TapTest *tap_tests, **tap_tail = &tap_tests;
/* Set by TAP_TODO() inside a test: a failure of that test is a known defect, reported as
 * "not ok … # TODO reason" (TAP's directive: not counted as a failure); a pass stays "ok". */
static const char *tap_todo_reason;
#define TAP_TODO(reason) (tap_todo_reason = (reason))
/* Set by TAP_SKIP() inside a test that could not check anything here (a tool or a kernel
 * feature missing): "ok … # SKIP reason", counted as skipped, not as a pass. A failure
 * recorded before wins. */
static const char *tap_skip_reason;
#define TAP_SKIP(reason) (tap_skip_reason = (reason))
/* TAP_SKIP() with a formatted reason, then leave the test: kselftest's SKIP(). For a test that
 * cannot run here at all; never print "skipping" and return, which reads as a pass. */
static __attribute__((unused)) char tap_skip_buf[256];
#define SKIP(...)                                                                                  \
	do {                                                                                       \
		(void) snprintf(tap_skip_buf, sizeof(tap_skip_buf), __VA_ARGS__);                  \
		TAP_SKIP(tap_skip_buf);                                                            \
		return;                                                                            \
	} while (0)

#define TEST(name)                                                                                 \
	static void test_##name(int *_tap_failed);                                                 \
	__attribute__((constructor)) static void tap_register_##name(void)                         \
	{                                                                                          \
		static TapTest t = { #name, test_##name, NULL };                                   \
		*tap_tail = &t;                                                                    \
		tap_tail = &t.next;                                                                \
	}                                                                                          \
	static void test_##name(int *_tap_failed)

#define TAP_FAIL_(fatal, fmt, ...)                                                                 \
	do {                                                                                       \
		printf("#   %s:%d: " fmt "\n", __FILE__, __LINE__, __VA_ARGS__);                   \
		*_tap_failed = 1;                                                                  \
		if (fatal)                                                                         \
			return;                                                                    \
	} while (0)

#define TAP_CMP_(fatal, a, op, b)                                                                  \
	do {                                                                                       \
		long long _a = (long long) (a), _b = (long long) (b);                              \
		if (!(_a op _b))                                                                   \
			TAP_FAIL_(fatal, "%s %s %s: %lld vs %lld", #a, #op, #b, _a, _b);           \
	} while (0)

#define EXPECT_EQ(a, b) TAP_CMP_(0, a, ==, b)
#define ASSERT_EQ(a, b) TAP_CMP_(1, a, ==, b)
#define EXPECT_NE(a, b) TAP_CMP_(0, a, !=, b)
#define ASSERT_NE(a, b) TAP_CMP_(1, a, !=, b)
#define EXPECT_GE(a, b) TAP_CMP_(0, a, >=, b)
#define ASSERT_GE(a, b) TAP_CMP_(1, a, >=, b)
#define EXPECT_LT(a, b) TAP_CMP_(0, a, <, b)
#define EXPECT_TRUE(c) TAP_CMP_(0, !!(c), ==, 1)
#define ASSERT_TRUE(c) TAP_CMP_(1, !!(c), ==, 1)
#define EXPECT_FALSE(c) TAP_CMP_(0, !!(c), ==, 0)
#define ASSERT_FALSE(c) TAP_CMP_(1, !!(c), ==, 0)

#define TAP_STR_(fatal, a, b)                                                                      \
	do {                                                                                       \
		const char *_a = (a), *_b = (b);                                                   \
		if (!_a || !_b || strcmp(_a, _b) != 0)                                             \
			TAP_FAIL_(fatal, "%s == %s: '%s' vs '%s'", #a, #b, _a ? _a : "(null)",     \
				  _b ? _b : "(null)");                                             \
	} while (0)
#define EXPECT_STREQ(a, b) TAP_STR_(0, a, b)
#define ASSERT_STREQ(a, b) TAP_STR_(1, a, b)

static inline int tap_run(void)
{
	int n = 0, bad = 0, i = 0;

	for (TapTest *t = tap_tests; t; t = t->next)
		n++;
	printf("TAP version 13\n1..%d\n", n);
	for (TapTest *t = tap_tests; t; t = t->next) {
		const char *only = getenv("TAP_ONLY");
		int failed = 0;
		tap_todo_reason = NULL;
		tap_skip_reason = NULL;
		if (only && *only && !strstr(t->name, only))
			tap_skip_reason = "not selected by TAP_ONLY";
		else
			t->fn(&failed);
		if (failed && tap_todo_reason) {
			printf("not ok %d - %s # TODO %s\n", ++i, t->name, tap_todo_reason);
			failed = 0;
		} else if (!failed && tap_skip_reason)
			printf("ok %d - %s # SKIP %s\n", ++i, t->name, tap_skip_reason);
		else
			printf("%s %d - %s\n", failed ? "not ok" : "ok", ++i, t->name);
		fflush(stdout);
		bad += failed;
	}
	return bad ? 1 : 0;
}
