/* SPDX-License-Identifier: MIT */
/*
 * Standalone driver for builds without libFuzzer: replays each file named on the command
 * line, or every regular file in a named directory, through LLVMFuzzerTestOneInput(). A
 * crash, sanitizer report or failed assert fails the test; so corpus files and past crash
 * inputs become regression tests (as systemd's fuzz-main.c does).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/macros.h"
#include "tests/fuzz/fuzz.h"

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
	unsigned count = 0;
	int r;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
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
	return 0;
}
