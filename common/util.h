/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdio.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

/**
 * Reads all of fd into a NUL-terminated buffer (the NUL is not counted in *ret_len).
 * Returns -EFBIG past max bytes, -errno on read errors. The caller frees *ret_buf.
 */
int read_full_fd(int fd, size_t max, char **ret_buf, size_t *ret_len);

/** Same for a path (opened O_RDONLY|O_CLOEXEC|O_NOCTTY relative to dirfd). */
int read_full_file(int dirfd, const char *path, size_t max, char **ret_buf, size_t *ret_len);

/**
 * The next line of a /proc/PID/mountinfo stream f, however long (getline into *line, *cap):
 * 1 with *ret_point (the mount point, its octal escapes such as \040 undone) and *ret_fstype
 * pointing into *line; 0 at the end; lines it cannot parse are skipped.
 */
int mountinfo_next(FILE *f, char **line, size_t *cap, char **ret_point, char **ret_fstype);

/**
 * Reads /proc/PID/NAME (a small file: stat, status, syscall, comm) with one read() into buf,
 * NUL-terminated. Returns the length, -errno, or -ESRCH when the file is empty (the process
 * is gone or a zombie without that data).
 */
int proc_read(int pid, const char *name, char *buf, size_t size);

/** The thread group of task tid from /proc/TID/status: 0 or -errno (-ENOENT: no such task). */
int proc_read_tgid(pid_t tid, pid_t *ret_tgid);

/**
 * The thread group of task tid: tid itself when it leads its group (tgkill(tid, tid, 0) is
 * one system call and succeeds exactly for a leader), else from /proc/TID/status; tid when
 * neither answers (the task is gone). A caller blocked in a notified call cannot change
 * group, so a notification's answer stays true until it is answered; callers that act on
 * another process check the notification (ID_VALID) after, as for any pid.
 */
pid_t tid_tgid(pid_t tid);

/**
 * A pidfd (O_CLOEXEC) of the task tid, which may be any thread of a process, for
 * pidfd_getfd() of its descriptors. A thread-group leader gets pidfd_open(tid, 0); another
 * thread PIDFD_THREAD (6.9). pidfd_open(tid, 0) of a thread that is not a leader fails with
 * EINVAL before 6.15 and with ENOENT since: both mean "try PIDFD_THREAD".
 * COMPAT: before 6.9 there is no pidfd of a thread: the pidfd of its thread group's leader
 * (from /proc/TID/status), and *ret_group (may be NULL) is set true: it names the process,
 * not tid, so it must not be kept for tid (a later task with that number could be of another
 * process) and its fds are the thread's only if the thread did not unshare its fd table.
 * Returns the fd or -errno (-ESRCH: no such task).
 */
int pidfd_open_task(pid_t tid, bool *ret_group);

/**
 * Whether pidfd_getfd(2) works here (probed once, on a pidfd of ourselves): false where a
 * container's seccomp profile refuses it (Docker's and containerd's default profiles allow it
 * only with CAP_SYS_PTRACE; issue 19) or the kernel lacks it (before 5.6). Callers then take
 * the child's descriptors through /proc/PID/fd (child_fd_open()).
 */
bool pidfd_getfd_usable(void);

/**
 * The object behind descriptor fd of task tid, reopened through the magic link
 * /proc/TID/fd/FD with flags (O_PATH is enough for a directory to walk from, fstat, fchdir and
 * the *at calls; O_CLOEXEC is added). Not the same open file description: no offset, flags or
 * owner are shared, and a socket cannot be reopened at all (ENXIO). Needs ptrace read access
 * to tid (the supervisor is its ancestor and the command is dumpable). Returns the fd, -EBADF
 * when tid has no such fd, -ESRCH when tid is gone, or -errno.
 */
int child_fd_open(pid_t tid, int fd, int flags);

/**
 * The "pos:", "flags:" and "ino:" lines of /proc/TID/fdinfo/FD (the offset, file status flags
 * and access mode of the child's open file description, and its inode number); each ret_ may
 * be NULL. Returns 0, -EBADF or -errno.
 */
int child_fd_info(pid_t tid, int fd, int64_t *ret_pos, int *ret_flags, uint64_t *ret_ino);

/** The value of one hex digit (either case), -1 for anything else (EOF included). */
static inline int hex_digit_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/**
 * Copies src into dst of size bytes (> 0), cut to size - 1 and NUL-terminated, as
 * snprintf(dst, size, "%s", src) does, without the format machinery (on the notification
 * path a "%s" snprintf costs tens of ns). Returns strlen(src): >= size means it was cut.
 */
static inline size_t str_copy(char *dst, size_t size, const char *src)
{
	size_t len = strlen(src), n = len < size ? len : size - 1;

	memcpy(dst, src, n);
	dst[n] = 0;
	return len;
}

/** Writes all of buf, retrying on EINTR and short writes. */
int write_all(int fd, const void *buf, size_t len);

/** NULL-terminated string vectors. */
char **strv_free(char **v);
static inline void strv_freep(char ***v)
{
	(void) strv_free(*v);
}
size_t strv_length(char *const *v);
int strv_push(char ***v, const char *s); /* copies s */
char **strv_copy(char *const *v);
bool strv_contains(char *const *v, const char *s);

/**
 * A timestamped line (CLOCK_MONOTONIC seconds, pid, tid, the text) appended to the file
 * named by $SBX_WALL_TRACE, when set: the end of a run on a busy machine, step by step
 * (docs/budgets.md, "The wall clock on a busy machine"). The file is opened for each line,
 * so that the keeper can still write after it has closed its descriptors. Nothing when unset.
 */
void wall_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Monotonic and real clocks in nanoseconds. */
uint64_t now_monotonic_ns(void);
uint64_t now_realtime_ns(void);

/** strdup that aborts on OOM is not used: these return NULL on OOM. */
char *strdup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Errno name ("ENOENT") for a positive errno, NULL if unknown; and the reverse (-EINVAL). */
const char *errno_to_name(int e);
int errno_from_name(const char *name);

/** Levenshtein distance, for "did you mean" suggestions. */
unsigned edit_distance(const char *a, const char *b);

/**
 * Closes fd without waiting for its release: a short-lived child process that shares our
 * memory (no page tables copied) holds the last reference and drops it. For files whose
 * release waits for the kernel, such as an inotify instance with watches (an RCU grace
 * period: 8-20 ms measured here, on the run's critical path at exit). The child closes every
 * other fd first, so pipes to our caller see EOF when we exit; it is reaped by whoever
 * inherits it. Falls back to close(fd) where such a child cannot be made. fd is gone in all
 * cases.
 */
void close_detached(int fd);
/* Closes every descriptor but a and b (either may be -1). Makes its calls directly on x86_64:
 * safe in a child that shares our memory (close_detached's). */
void close_all_but(int a, int b);
/* The same for up to CLOSE_KEEP_MAX descriptors (-1 and repeats are skipped). */
#define CLOSE_KEEP_MAX 8
void close_all_except(const int *keep, size_t n);

/* Whether the running kernel's release (uname) is at least major.minor. */
bool kernel_at_least(unsigned major, unsigned minor);
