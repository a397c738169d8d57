/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Call stacks of a stopped process, for the backtraces of audit records (docs/audit.md).
 *
 * An unwinder is a backend behind a struct of function pointers (`Unwinder`, as strace's
 * unwinder backends are): the libunwind one (DWARF CFI from .eh_frame, libunwind-ptrace
 * loaded with dlopen) and a frame-pointer walker (the RBP chain) that needs no library.
 * A session (`UnwindSession`) holds what both share and what outlives one unwind: the ELF
 * cache, the modules and memory pages of the unwind under way, the read budget. It picks the
 * backend: libunwind when it loads, the frame-pointer walker when it does not, or when
 * libunwind gives no frame at all.
 *
 * The caller must be the tracer of pid and pid must be in a ptrace stop (the registers come
 * from ptrace); one session is used by one thread at a time.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct AuditFrame AuditFrame;
typedef struct UnwindSession UnwindSession;

/**
 * What the session asks of the layer above it. module_path gives the name a frame's module
 * gets in the record: the file as the program sees it (the sandbox's view). Returns < 0 to
 * keep the host path. NULL: host paths everywhere.
 */
typedef struct UnwindHost {
	int (*module_path)(void *userdata, const char *host_path, char *ret, size_t size);
	void *userdata;
} UnwindHost;

/** An unwinder backend. */
typedef struct Unwinder {
	const char *name; /* "libunwind", "frame-pointer" */
	/** Loads what the backend needs, once per process (libunwind: dlopen); false if it
	 * cannot run here. Thread-safe. */
	bool (*open)(void);
	/** Unwinds the stopped pid into frames[0..max), innermost first, symbolized. Returns
	 * the number of frames; 0 with *ret_err set (a static string) when there is none. */
	size_t (*unwind)(UnwindSession *s, pid_t pid, AuditFrame *frames, size_t max,
			 const char **ret_err);
} Unwinder;

extern const Unwinder unwinder_libunwind;
extern const Unwinder unwinder_frame_pointer;

/** A session for the life of the tracer thread. host is copied. NULL on OOM. */
UnwindSession *unwind_session_new(const UnwindHost *host);
/** Frees the session and its ELF cache; accepts NULL, returns NULL. */
UnwindSession *unwind_session_free(UnwindSession *s);
/**
 * Forgets what the session learned of processes' address spaces: the ELF facts of every
 * module seen. Not needed for correctness after an exec or an mmap: each unwind reads
 * /proc/PID/maps afresh and a cached file is used only while its device, inode, size and
 * mtime match; it frees the cache's memory (up to 64 MiB) between bursts of backtraces.
 */
void unwind_session_invalidate(UnwindSession *s);
/** The backend unwind_backtrace() tries first: libunwind if it loads, else frame pointers. */
const Unwinder *unwind_session_primary(const UnwindSession *s);

/**
 * Unwinds with the primary backend, then with the frame-pointer walker if that gave no
 * frame. Returns the number of frames, 0 with *ret_err set; *ret_used (may be NULL) is the
 * backend that gave them.
 */
size_t unwind_backtrace(UnwindSession *s, pid_t pid, AuditFrame *frames, size_t max,
			const char **ret_err, const Unwinder **ret_used);

/** One line of /proc/PID/maps. */
typedef struct UnwindMapping {
	uint64_t start, end, offset;
	unsigned dev_major, dev_minor;
	uint64_t ino;
	char perms[5];	  /* "r-xp" */
	const char *name; /* inside the buffer, name_len bytes, not NUL-terminated; "" if none */
	size_t name_len;
} UnwindMapping;

/**
 * Parses the next complete line of a /proc/PID/maps text held in buf[*pos..len). Returns 1
 * with *ret filled and *pos past the line, 0 when no complete line is left (*pos stays at
 * the start of a cut last line, whose name cannot be trusted). A malformed line is skipped.
 * Pure: reads only buf.
 */
int unwind_maps_next(const char *buf, size_t len, size_t *pos, UnwindMapping *ret);
