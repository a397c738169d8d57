/* SPDX-License-Identifier: MIT */
/* Pieces of common/util.c the notification path leans on: tid_tgid() and proc_read_tgid()
 * (the caller's thread group, asked only where a handler or walk needs it), str_copy() (a
 * "%s" snprintf without the format machinery). */
#include "tests/unit/tap.h"

#include <errno.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"

TEST(str_copy_cuts_as_snprintf_does)
{
	char a[8];

	memset(a, 'x', sizeof(a));
	EXPECT_EQ(str_copy(a, sizeof(a), "abc"), 3);
	EXPECT_STREQ(a, "abc");
	/* cut to size - 1, NUL-terminated, the full length returned: as snprintf */
	EXPECT_EQ(str_copy(a, sizeof(a), "abcdefghij"), 10);
	EXPECT_STREQ(a, "abcdefg");
	/* exactly size - 1 fits; size does not */
	EXPECT_EQ(str_copy(a, sizeof(a), "1234567"), 7);
	EXPECT_STREQ(a, "1234567");
	EXPECT_EQ(str_copy(a, sizeof(a), "12345678"), 8);
	EXPECT_STREQ(a, "1234567");
	EXPECT_EQ(str_copy(a, 1, "abc"), 3);
	EXPECT_STREQ(a, "");
	EXPECT_EQ(str_copy(a, sizeof(a), ""), 0);
	EXPECT_STREQ(a, "");
}

static pid_t thread_tid, thread_tgid, thread_status_tgid;
static int thread_status_r;

static void *thread_main(void *arg)
{
	(void) arg;
	thread_tid = gettid();
	thread_tgid = tid_tgid(thread_tid);
	thread_status_r = proc_read_tgid(thread_tid, &thread_status_tgid);
	return NULL;
}

TEST(a_leader_is_its_own_group)
{
	pid_t tgid = 0;

	EXPECT_EQ(tid_tgid(getpid()), getpid());
	ASSERT_EQ(proc_read_tgid(getpid(), &tgid), 0);
	EXPECT_EQ(tgid, getpid());
}

TEST(another_thread_names_its_process)
{
	pthread_t th;

	ASSERT_EQ(pthread_create(&th, NULL, thread_main, NULL), 0);
	ASSERT_EQ(pthread_join(th, NULL), 0);
	EXPECT_NE(thread_tid, getpid());
	EXPECT_EQ(thread_tgid, getpid());
	EXPECT_EQ(thread_status_r, 0);
	EXPECT_EQ(thread_status_tgid, getpid());
}

TEST(a_task_that_is_gone_answers_its_own_id)
{
	pid_t child = fork(), tgid = 0;
	int st;

	ASSERT_GE(child, 0);
	if (child == 0)
		_exit(0);
	ASSERT_EQ(waitpid(child, &st, 0), child);
	/* reaped: no group to find, and never another process's (the caller checks its
	 * notification after, as for any pid) */
	EXPECT_EQ(tid_tgid(child), child);
	EXPECT_EQ(proc_read_tgid(child, &tgid), -ENOENT);
}

int main(void)
{
	return tap_run();
}
