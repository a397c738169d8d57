/* SPDX-License-Identifier: MIT */
/* close_all_except() (common/util.c): every descriptor goes but the ones named. Each case runs
 * in a child of its own, with descriptors open at known numbers; the child writes which of
 * 0..FDS-1 are still open, as a bit mask, to a pipe it keeps for that. */
#include "tests/unit/tap.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"

#define FDS 40

/* The open descriptors below FDS after close_all_except(keep, n), in a child whose 3..FDS-1
 * were all open; bit i is descriptor i. The report pipe is kept by number 39, so every
 * case keeps 39 (the last in keep). */
static uint64_t open_after(const int *keep, size_t n)
{
	int p[2];
	pid_t c;
	uint64_t mask = 0;
	int status;

	if (pipe(p) < 0)
		return ~0ULL;
	c = fork();
	if (c == 0) {
		int fd = open("/dev/null", O_RDONLY);

		if (fd < 0 || dup2(p[1], FDS - 1) < 0)
			_exit(2);
		for (int i = 3; i < FDS - 1; i++)
			if (i != fd && dup2(fd, i) < 0)
				_exit(3);
		close_all_except(keep, n);
		for (int i = 0; i < FDS; i++)
			if (fcntl(i, F_GETFD) >= 0)
				mask |= 1ULL << i;
		_exit(write(FDS - 1, &mask, sizeof(mask)) == sizeof(mask) ? 0 : 4);
	}
	(void) close(p[1]);
	if (c < 0 || read(p[0], &mask, sizeof(mask)) != sizeof(mask))
		mask = ~0ULL;
	(void) close(p[0]);
	if (c > 0 && (waitpid(c, &status, 0) != c || !WIFEXITED(status) || WEXITSTATUS(status)))
		mask = ~0ULL;
	return mask;
}

#define BIT(i) (1ULL << (i))

TEST(only_the_named_stay)
{
	int none[] = {FDS - 1};
	int three[] = {7, 20, 5, FDS - 1}; /* out of order */
	int low[] = {0, 1, 2, FDS - 1};

	EXPECT_EQ(open_after(none, 1), BIT(FDS - 1));
	EXPECT_EQ(open_after(three, 4), BIT(5) | BIT(7) | BIT(20) | BIT(FDS - 1));
	EXPECT_EQ(open_after(low, 4), BIT(0) | BIT(1) | BIT(2) | BIT(FDS - 1));
}

TEST(minus_one_and_repeats_are_skipped)
{
	int keep[] = {-1, 9, 9, -1, 8, 10, FDS - 1, 9};

	EXPECT_EQ(open_after(keep, 8), BIT(8) | BIT(9) | BIT(10) | BIT(FDS - 1));
}

TEST(neighbours_and_the_ends)
{
	/* adjacent kept ones leave no range between them; 0 and FDS-1 at the very ends */
	int keep[] = {0, 3, 4, 5, FDS - 2, FDS - 1};

	EXPECT_EQ(open_after(keep, 6),
		  BIT(0) | BIT(3) | BIT(4) | BIT(5) | BIT(FDS - 2) | BIT(FDS - 1));
}

int main(void)
{
	return tap_run();
}
