/* SPDX-License-Identifier: MIT */
/*
 * Standalone driver for builds without libFuzzer: replays each file named on the command
 * line, or every regular file in a named directory, through LLVMFuzzerTestOneInput(). A
 * crash, sanitizer report or failed assert fails the test; so corpus files and past crash
 * inputs become regression tests (as systemd's fuzz-main.c does).
 *
 * With -m N it then runs N random mutations of those inputs (bit flips, interesting
 * values, inserted, deleted, repeated and spliced bytes; -s SEED repeats a run): a blind
 * fuzzer, without libFuzzer's coverage guidance, for a gcc build with the sanitizers. The
 * input that crashes is written to crash-SEED-ITERATION in the current directory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/macros.h"
#include "tests/fuzz/fuzz.h"

/* The inputs, kept for mutation (with -m only). */
typedef struct Input {
	uint8_t *data;
	size_t len;
} Input;

static Input *inputs;
static size_t n_inputs;
static bool keep_inputs;

/* The input being run and where a crash saves it: read by the handlers below. */
static const uint8_t *volatile cur_data;
static volatile size_t cur_len;
static char crash_path[96];

/* Set by a sanitizer runtime, when there is one: called before it exits on a report. */
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static void save_current(void)
{
	const uint8_t *data = cur_data;
	int fd;

	if (!data || !crash_path[0])
		return;
	fd = open(crash_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	for (size_t done = 0; done < cur_len;) {
		ssize_t n = write(fd, data + done, cur_len - done);

		if (n <= 0)
			break;
		done += (size_t) n;
	}
	(void) close(fd);
	(void) !write(STDERR_FILENO, "fuzz-main: the input is saved as ", 33);
	(void) !write(STDERR_FILENO, crash_path, strlen(crash_path));
	(void) !write(STDERR_FILENO, "\n", 1);
	cur_data = NULL;
}

static void on_fatal_signal(int sig)
{
	save_current();
	(void) signal(sig, SIG_DFL);
	(void) raise(sig);
}

static int read_file_at(int dirfd, const char *name, char **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t len = 0;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EISDIR;
	/* one spare byte: malloc(0) may return NULL */
	buf = malloc((size_t) st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	while (len < (size_t) st.st_size) {
		ssize_t n = read(fd, buf + len, (size_t) st.st_size - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t) n;
	}
	*ret = TAKE_PTR(buf);
	*ret_len = len;
	return 0;
}

static int run_one(int dirfd, const char *name, const char *shown)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int r;

	r = read_file_at(dirfd, name, &buf, &len);
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", shown, strerror(-r));
		return r;
	}
	printf("%s (%zu bytes)\n", shown, len);
	fflush(stdout);
	/* copy into an exact-size allocation so ASan catches reads past the end */
	_cleanup_free_ uint8_t *exact = malloc(len ? len : 1);
	if (!exact)
		return -ENOMEM;
	memcpy(exact, buf, len);
	(void) LLVMFuzzerTestOneInput(exact, len);
	if (keep_inputs) {
		Input *n = reallocarray(inputs, n_inputs + 1, sizeof(*inputs));

		if (!n)
			return -ENOMEM;
		inputs = n;
		inputs[n_inputs++] = (Input){.data = TAKE_PTR(exact), .len = len};
	}
	return 0;
}

static uint64_t rnd(uint64_t *state)
{
	/* xorshift64*: enough for choosing mutations */
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 2685821657736338717ULL;
}

/* Values that parsers treat specially: bounds, separators, escapes. */
static const uint8_t interesting[] = {0,    1,	  2,	7,    8,    '\n', '\t', ' ', '/',
				      '.',  '\\', '#',	'!',  '-',  '0',  '7',	'9', '@',
				      0x7f, 0x80, 0xff, 0x40, 0x20, 0x10, 0xfe};

/* Changes buf[0..len) in place, within max bytes; returns the new length. */
static size_t mutate(uint8_t *buf, size_t len, size_t max, uint64_t *rng)
{
	unsigned steps = 1 + (unsigned) (rnd(rng) % 4);

	for (unsigned k = 0; k < steps; k++) {
		size_t at = len ? rnd(rng) % len : 0, n;
		const Input *other;

		switch (rnd(rng) % 7) {
		case 0: /* flip a bit */
			if (len)
				buf[at] ^= (uint8_t) (1u << (rnd(rng) % 8));
			break;
		case 1: /* an interesting or random byte */
			if (len)
				buf[at] = rnd(rng) % 2 ? interesting[rnd(rng) % sizeof(interesting)]
						       : (uint8_t) rnd(rng);
			break;
		case 2: /* insert a byte */
			if (len < max) {
				at = rnd(rng) % (len + 1);
				memmove(buf + at + 1, buf + at, len - at);
				buf[at] = interesting[rnd(rng) % sizeof(interesting)];
				len++;
			}
			break;
		case 3: /* delete a few bytes */
			if (len) {
				n = 1 + rnd(rng) % (len - at < 16 ? len - at : 16);
				memmove(buf + at, buf + at + n, len - at - n);
				len -= n;
			}
			break;
		case 4: /* repeat a few bytes */
			if (len && len < max) {
				n = 1 + rnd(rng) % (len - at < 16 ? len - at : 16);
				if (n > max - len)
					n = max - len;
				memmove(buf + at + n, buf + at, len - at);
				len += n;
			}
			break;
		case 5: /* the tail from another input */
			other = &inputs[rnd(rng) % n_inputs];
			if (other->len) {
				size_t from = rnd(rng) % other->len;

				n = other->len - from;
				if (n > max - at)
					n = max - at;
				memcpy(buf + at, other->data + from, n);
				len = at + n;
			}
			break;
		default: /* a little-endian integer near a bound */
			if (len >= 4) {
				static const uint32_t values[] = {
					0,	1,	    0x7f,	0x80,	   0xff,
					0xffff, 0x7fffffff, 0x80000000, 0xffffffff};
				uint32_t v = values[rnd(rng) % ARRAY_SIZE(values)];

				at = rnd(rng) % (len - 3);
				memcpy(buf + at, &v, sizeof(v));
			}
			break;
		}
	}
	return len;
}

static int run_mutations(uint64_t iterations, uint64_t seed)
{
	_cleanup_free_ uint8_t *buf = NULL;
	uint64_t rng = seed ? seed : 1;
	size_t max = 64;

	for (size_t i = 0; i < n_inputs; i++)
		if (inputs[i].len * 2 > max)
			max = inputs[i].len * 2;
	if (max > FUZZ_MAX_INPUT)
		max = FUZZ_MAX_INPUT;
	buf = malloc(max);
	if (!buf)
		return -ENOMEM;
	for (uint64_t it = 0; it < iterations; it++) {
		const Input *in = &inputs[rnd(&rng) % n_inputs];
		size_t len = in->len < max ? in->len : max;
		uint8_t *exact;

		memcpy(buf, in->data, len);
		len = mutate(buf, len, max, &rng);
		/* an exact-size copy, so that ASan catches reads past the end */
		exact = malloc(len ? len : 1);
		if (!exact)
			return -ENOMEM;
		memcpy(exact, buf, len);
		(void) snprintf(crash_path, sizeof(crash_path), "crash-%" PRIu64 "-%" PRIu64, seed,
				it);
		cur_len = len;
		cur_data = exact;
		(void) LLVMFuzzerTestOneInput(exact, len);
		cur_data = NULL;
		free(exact);
	}
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

static int run_dir(const char *path, unsigned *count)
{
	_cleanup_close_ int dfd = -1;
	DIR *d;
	char **names = NULL;
	size_t n = 0;
	int r = 0;

	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	d = fdopendir(dup(dfd));
	if (!d)
		return -errno;
	for (struct dirent *de; (de = readdir(d));) {
		if (de->d_name[0] == '.')
			continue;
		char **nn = reallocarray(names, n + 1, sizeof(char *));
		if (!nn || !(nn[n] = strdup(de->d_name))) {
			names = nn ?: names;
			r = -ENOMEM;
			break;
		}
		names = nn;
		n++;
	}
	(void) closedir(d);
	qsort(names, n, sizeof(char *), cmp_names);
	for (size_t i = 0; i < n && r >= 0; i++) {
		_cleanup_free_ char *shown = NULL;
		if (asprintf(&shown, "%s/%s", path, names[i]) < 0)
			r = -ENOMEM;
		else if ((r = run_one(dfd, names[i], shown)) >= 0)
			(*count)++;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r;
}

int main(int argc, char *argv[])
{
	uint64_t iterations = 0, seed = 0;
	unsigned count = 0;
	int c, r;

	while ((c = getopt(argc, argv, "m:s:")) >= 0) {
		if (c == 'm')
			iterations = strtoull(optarg, NULL, 0);
		else if (c == 's')
			seed = strtoull(optarg, NULL, 0);
		else
			optind = argc + 1;
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: %s [-m MUTATIONS] [-s SEED] FILE|DIR...\n", argv[0]);
		return 2;
	}
	keep_inputs = iterations > 0;
	for (int i = optind; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "%s: %m\n", argv[i]);
			return 1;
		}
		if (S_ISDIR(st.st_mode))
			r = run_dir(argv[i], &count);
		else if ((r = run_one(AT_FDCWD, argv[i], argv[i])) >= 0)
			count++;
		if (r < 0) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(-r));
			return 1;
		}
	}
	if (count == 0) {
		fprintf(stderr, "no inputs found\n");
		return 1;
	}
	printf("%u inputs replayed\n", count);
	if (iterations == 0)
		return 0;
	if (seed == 0)
		seed = (uint64_t) time(NULL) ^ ((uint64_t) getpid() << 32);
	printf("%" PRIu64 " mutations, seed %" PRIu64 "\n", iterations, seed);
	fflush(stdout);
	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(save_current);
	(void) signal(SIGSEGV, on_fatal_signal);
	(void) signal(SIGABRT, on_fatal_signal);
	(void) signal(SIGBUS, on_fatal_signal);
	(void) signal(SIGFPE, on_fatal_signal);
	r = run_mutations(iterations, seed);
	if (r < 0) {
		fprintf(stderr, "%s\n", strerror(-r));
		return 1;
	}
	printf("no crash\n");
	return 0;
}
