/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Scratch directories of a test, removed when it exits. A test makes its directory with
 * sbx_scratch_dir("prefix") (under $TMPDIR, else /tmp) and need not remove it: an atexit()
 * handler removes every directory this process made, with what is in it, whether the test
 * passed, failed or skipped. Before, each test removed its own on its success path only, and
 * every early return (a skip, a failed setup, an assertion) left one in /tmp on each run.
 *
 * Only on exit() or a return from main(): a test killed by a signal (a meson timeout) keeps
 * its directory. SBX_KEEP_TMP=1 in the environment keeps them all and names them on stderr, to
 * look at what a failing test left.
 *
 * The handler runs only in the process that made the directories: a forked child that calls
 * exit() (not _exit()) must not remove them from under its parent. Directories a test made
 * read-only are made writable first; the walk stays on the file system of the directory
 * (FTW_MOUNT) and does not follow symbolic links (FTW_PHYS), so an attack a security test
 * left behind (a link to /etc) removes the link, not its target.
 *
 * TOCTOU: nftw() works by path, so a process still running could swap a directory of the
 * tree for a link between the walk's lstat() and its unlink(). Accepted: this is test
 * scaffolding, run after the test has waited for the programs it sandboxed; a test whose
 * attack may outlive it must stop it before it exits.
 */

#include <ftw.h> /* FTW_MOUNT, FTW_PHYS: meson defines _GNU_SOURCE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SBX_SCRATCH_MAX 64

typedef struct SbxScratch {
	pid_t owner;
	size_t n;
	char *dirs[SBX_SCRATCH_MAX];
} SbxScratch;

/* One list per translation unit; a test is one. A function, not a file-scope static: a test
 * that includes this header without making a directory gets no unused-variable warning. */
static inline SbxScratch *sbx_scratch(void)
{
	static SbxScratch s;

	return &s;
}

static inline int sbx_scratch_unlock(const char *path, const struct stat *st, int type,
				     struct FTW *ftw)
{
	(void) ftw;
	if (type == FTW_D || type == FTW_DNR)
		(void) chmod(path, (st->st_mode & 07777) | S_IRWXU);
	return 0;
}

static inline int sbx_scratch_remove_one(const char *path, const struct stat *st, int type,
					 struct FTW *ftw)
{
	(void) st;
	(void) ftw;
	(void) (type == FTW_DP ? rmdir(path) : unlink(path));
	return 0;
}

static inline void sbx_scratch_remove(void)
{
	SbxScratch *s = sbx_scratch();
	const char *keep = getenv("SBX_KEEP_TMP");

	if (s->owner != getpid())
		return;
	for (size_t i = 0; i < s->n; i++) {
		if (keep && *keep && strcmp(keep, "0") != 0) {
			fprintf(stderr, "kept (SBX_KEEP_TMP): %s\n", s->dirs[i]);
			continue;
		}
		/* unreadable directories would stop the removal: a first pass opens them up */
		(void) nftw(s->dirs[i], sbx_scratch_unlock, 16, FTW_PHYS | FTW_MOUNT);
		(void) nftw(s->dirs[i], sbx_scratch_remove_one, 16,
			    FTW_PHYS | FTW_MOUNT | FTW_DEPTH);
	}
}

/* Registers path (a directory this process made) for removal at exit. Returns its copy,
 * valid until exit; NULL when it cannot be registered (then it is not removed). */
static inline char *sbx_scratch_add(const char *path)
{
	SbxScratch *s = sbx_scratch();
	char *copy;

	if (s->owner != getpid()) {
		/* the first registration in this process (a fork starts a list of its own) */
		s->owner = getpid();
		s->n = 0;
		atexit(sbx_scratch_remove);
	}
	if (s->n == SBX_SCRATCH_MAX || !(copy = strdup(path))) {
		fprintf(stderr, "sbx-scratch: cannot register %s; it is not removed\n", path);
		return NULL;
	}
	s->dirs[s->n++] = copy;
	return copy;
}

/* A new directory $TMPDIR/PREFIX-XXXXXX (or under /tmp), removed at exit: its path, valid
 * until exit, or NULL with errno set. */
static inline char *sbx_scratch_dir(const char *prefix)
{
	const char *t = getenv("TMPDIR");
	char buf[4096], *dir;

	snprintf(buf, sizeof(buf), "%s/%s-XXXXXX", t && *t ? t : "/tmp", prefix);
	if (!mkdtemp(buf))
		return NULL;
	dir = sbx_scratch_add(buf);
	if (!dir) /* a test that makes more than SBX_SCRATCH_MAX: it still gets its directory */
		dir = strdup(buf);
	return dir;
}
