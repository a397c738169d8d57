/* SPDX-License-Identifier: MIT */
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/missing-seccomp.h"

int read_full_fd(int fd, size_t max, char **ret_buf, size_t *ret_len)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;
	struct stat st;

	/* a regular file: its size at once (one allocation, one read), with room to see
	 * the end or growth; anything else grows as it reads */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (size_t) st.st_size <= max) {
		cap = (size_t) st.st_size + 4096;
		buf = malloc(cap + 1);
		if (!buf)
			return -ENOMEM;
	}
	for (;;) {
		if (cap - len < 4096) {
			size_t ncap = cap ? cap * 2 : 8192;
			char *n;

			if (cap > max + 1)
				return -EFBIG;
			n = realloc(buf, ncap + 1);
			if (!n)
				return -ENOMEM;
			buf = n;
			cap = ncap;
		}
		ssize_t k = read(fd, buf + len, cap - len);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			break;
		len += (size_t) k;
		if (len > max)
			return -EFBIG;
	}
	if (!buf) {
		buf = malloc(1);
		if (!buf)
			return -ENOMEM;
	}
	buf[len] = 0;
	*ret_buf = TAKE_PTR(buf);
	*ret_len = len;
	return 0;
}

int read_full_file(int dirfd, const char *path, size_t max, char **ret_buf, size_t *ret_len)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -errno;
	return read_full_fd(fd, max, ret_buf, ret_len);
}

int proc_read(int pid, const char *name, char *buf, size_t size)
{
	char path[64];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	if (size == 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return n == 0 ? -ESRCH : (int) n;
}

int proc_read_tgid(pid_t tid, pid_t *ret_tgid)
{
	char buf[2048], *p;
	long tgid;
	int r = proc_read(tid, "status", buf, sizeof(buf));

	if (r < 0)
		return r;
	p = strstr(buf, "\nTgid:");
	if (!p)
		return -EIO;
	tgid = strtol(p + 6, NULL, 10);
	if (tgid <= 0)
		return -EIO;
	*ret_tgid = (pid_t) tgid;
	return 0;
}

pid_t tid_tgid(pid_t tid)
{
	pid_t tgid = 0;

	if (syscall(SYS_tgkill, tid, tid, 0) == 0)
		return tid;
	if (proc_read_tgid(tid, &tgid) < 0)
		return tid;
	return tgid;
}

int pidfd_open_task(pid_t tid, bool *ret_group)
{
	pid_t tgid;
	long fd;
	int r;

	if (ret_group)
		*ret_group = false;
	if (tid <= 0)
		return -ESRCH;
	fd = syscall(SYS_pidfd_open, tid, 0);
	if (fd >= 0)
		return (int) fd;
	/* not a leader: EINVAL before 6.15, ENOENT since (kernel/fork.c, pidfd_prepare()) */
	if (errno != EINVAL && errno != ENOENT)
		return -errno;
	fd = syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
	if (fd >= 0)
		return (int) fd;
	if (errno != EINVAL)
		return -errno;
	/* COMPAT: no PIDFD_THREAD before 6.9: the thread group's leader */
	r = proc_read_tgid(tid, &tgid);
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	if (tgid == tid)
		return -ESRCH;
	fd = syscall(SYS_pidfd_open, tgid, 0);
	if (fd < 0)
		return errno == EINVAL || errno == ENOENT ? -ESRCH : -errno;
	if (ret_group)
		*ret_group = true;
	return (int) fd;
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t k = write(fd, p, len);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += k;
		len -= (size_t) k;
	}
	return 0;
}

char **strv_free(char **v)
{
	if (!v)
		return NULL;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
	return NULL;
}

size_t strv_length(char *const *v)
{
	size_t n = 0;

	if (v)
		while (v[n])
			n++;
	return n;
}

int strv_push(char ***v, const char *s)
{
	size_t n = strv_length(*v);
	char **nv;
	char *copy = strdup(s);

	if (!copy)
		return -ENOMEM;
	nv = realloc(*v, (n + 2) * sizeof(char *));
	if (!nv) {
		free(copy);
		return -ENOMEM;
	}
	nv[n] = copy;
	nv[n + 1] = NULL;
	*v = nv;
	return 0;
}

char **strv_copy(char *const *v)
{
	char **r = calloc(strv_length(v) + 1, sizeof(char *));

	if (!r)
		return NULL;
	for (size_t i = 0; v && v[i]; i++) {
		r[i] = strdup(v[i]);
		if (!r[i])
			return strv_free(r);
	}
	return r;
}

bool strv_contains(char *const *v, const char *s)
{
	for (size_t i = 0; v && v[i]; i++)
		if (streq(v[i], s))
			return true;
	return false;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	(void) clock_gettime(clk, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

uint64_t now_monotonic_ns(void)
{
	return now_ns(CLOCK_MONOTONIC);
}

uint64_t now_realtime_ns(void)
{
	return now_ns(CLOCK_REALTIME);
}

/* read at start-up: W and the threads inherit it, and C's environ, which W shares until C
 * execs, is the policy's */
static const char *wall_trace_path;

__attribute__((constructor)) static void wall_trace_init(void)
{
	const char *p = getenv("SBX_WALL_TRACE");

	wall_trace_path = p && p[0] ? p : NULL;
}

void wall_trace(const char *fmt, ...)
{
	const char *path = wall_trace_path;
	char buf[512];
	uint64_t ns = now_monotonic_ns();
	va_list ap;
	int n, fd;

	if (!path)
		return;
	n = snprintf(buf, sizeof(buf), "%llu.%06llu %d %d ", (unsigned long long) (ns / 1000000000),
		     (unsigned long long) (ns % 1000000000 / 1000), (int) getpid(), (int) gettid());
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t) n - 1, fmt, ap);
	va_end(ap);
	if (n > (int) sizeof(buf) - 2)
		n = (int) sizeof(buf) - 2;
	buf[n++] = '\n';
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return;
	if (write(fd, buf, (size_t) n) < 0) {
		/* nothing to be done */
	}
	(void) close(fd);
}

char *strdup_printf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	return r < 0 ? NULL : s;
}

static const struct {
	int e;
	const char *name;
} errno_names[] = {
	{ EPERM, "EPERM" },	      { ENOENT, "ENOENT" },	  { ESRCH, "ESRCH" },
	{ EINTR, "EINTR" },	      { EIO, "EIO" },		  { ENXIO, "ENXIO" },
	{ E2BIG, "E2BIG" },	      { ENOEXEC, "ENOEXEC" },	  { EBADF, "EBADF" },
	{ ECHILD, "ECHILD" },	      { EAGAIN, "EAGAIN" },	  { ENOMEM, "ENOMEM" },
	{ EACCES, "EACCES" },	      { EFAULT, "EFAULT" },	  { EBUSY, "EBUSY" },
	{ EEXIST, "EEXIST" },	      { EXDEV, "EXDEV" },	  { ENODEV, "ENODEV" },
	{ ENOTDIR, "ENOTDIR" },	      { EISDIR, "EISDIR" },	  { EINVAL, "EINVAL" },
	{ ENFILE, "ENFILE" },	      { EMFILE, "EMFILE" },	  { ENOTTY, "ENOTTY" },
	{ ETXTBSY, "ETXTBSY" },	      { EFBIG, "EFBIG" },	  { ENOSPC, "ENOSPC" },
	{ ESPIPE, "ESPIPE" },	      { EROFS, "EROFS" },	  { EMLINK, "EMLINK" },
	{ EPIPE, "EPIPE" },	      { ERANGE, "ERANGE" },	  { ENAMETOOLONG, "ENAMETOOLONG" },
	{ ENOSYS, "ENOSYS" },	      { ENOTEMPTY, "ENOTEMPTY" }, { ELOOP, "ELOOP" },
	{ ENODATA, "ENODATA" },	      { ENOTSUP, "ENOTSUP" },	  { EOPNOTSUPP, "EOPNOTSUPP" },
	{ EAFNOSUPPORT, "EAFNOSUPPORT" }, { EADDRINUSE, "EADDRINUSE" },
	{ EADDRNOTAVAIL, "EADDRNOTAVAIL" }, { ENETUNREACH, "ENETUNREACH" },
	{ ECONNREFUSED, "ECONNREFUSED" }, { EHOSTUNREACH, "EHOSTUNREACH" },
	{ ECONNRESET, "ECONNRESET" }, { ETIMEDOUT, "ETIMEDOUT" }, { EDQUOT, "EDQUOT" },
	{ EPROTONOSUPPORT, "EPROTONOSUPPORT" }, { ENOTSOCK, "ENOTSOCK" }, { ENOTCONN, "ENOTCONN" },
	{ EOVERFLOW, "EOVERFLOW" },   { ECANCELED, "ECANCELED" }, { EOWNERDEAD, "EOWNERDEAD" },
};

const char *errno_to_name(int e)
{
	for (size_t i = 0; i < ARRAY_SIZE(errno_names); i++)
		if (errno_names[i].e == e)
			return errno_names[i].name;
	return NULL;
}

int errno_from_name(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(errno_names); i++)
		if (strcasecmp(errno_names[i].name, name) == 0)
			return errno_names[i].e;
	return -EINVAL;
}

unsigned edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[65];

	if (la > 64 || lb > 64)
		return 1000;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned) j;
	for (size_t i = 1; i <= la; i++) {
		unsigned prev = row[0];
		row[0] = (unsigned) i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned cur = row[j];
			unsigned cost = a[i - 1] == b[j - 1] ? 0 : 1;
			row[j] = MIN(MIN(row[j] + 1, row[j - 1] + 1), prev + cost);
			prev = cur;
		}
	}
	return row[lb];
}

#if defined(__x86_64__)
/* The closer shares our memory and thread pointer: it must not touch errno or anything else of
 * libc's, so it makes its calls directly. */
static long raw_syscall3(long nr, long a, long b, long c)
{
	long r;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return r;
}

#define CLOSE_RANGE(lo, hi) raw_syscall3(SYS_close_range, (long) (lo), (long) (hi), 0)
#else
#define CLOSE_RANGE(lo, hi) syscall(SYS_close_range, (unsigned) (lo), (unsigned) (hi), 0U)
#endif

void close_all_except(const int *keep, size_t n)
{
	int k[CLOSE_KEEP_MAX];
	size_t m = 0;
	long lo = 0;

	/* the kept ones in order, without -1 and repeats: a plain insertion (n is tiny, and
	 * nothing here may allocate) */
	for (size_t i = 0; i < n && m < CLOSE_KEEP_MAX; i++) {
		size_t j = m;

		if (keep[i] < 0)
			continue;
		while (j > 0 && k[j - 1] > keep[i])
			j--;
		if (j > 0 && k[j - 1] == keep[i])
			continue;
		for (size_t x = m; x > j; x--)
			k[x] = k[x - 1];
		k[j] = keep[i];
		m++;
	}
	for (size_t i = 0; i < m; i++) {
		if (k[i] > lo)
			(void) CLOSE_RANGE(lo, k[i] - 1);
		lo = (long) k[i] + 1;
	}
	(void) CLOSE_RANGE(lo, ~0U);
}

void close_all_but(int a, int b)
{
	int keep[] = {a, b};

	close_all_except(keep, 2);
}

#if defined(__x86_64__)
static int closer_fds[2]; /* the fd to close, the read end of the go-ahead pipe */

static int closer_main(void *arg)
{
	long fd = closer_fds[0], go = closer_fds[1];
	char c;

	(void) arg;
	/* everything but the two: our caller's pipes must see EOF when the parent exits */
	close_all_but((int) fd, (int) go);
	/* EOF once the parent has dropped its copy of fd: ours is then the last one */
	while (raw_syscall3(SYS_read, go, (long) &c, 1) == -EINTR)
		;
	(void) raw_syscall3(SYS_close, fd, 0, 0);
	(void) raw_syscall3(SYS_exit, 0, 0, 0);
	return 0;
}

void close_detached(int fd)
{
	/* static: the stack must outlive this call, and nothing frees or unmaps it */
	static char stack[8192] __attribute__((aligned(16)));
	sigset_t all, old;
	int go[2];

	if (fd < 0)
		return;
	if (pipe2(go, O_CLOEXEC) < 0) {
		(void) close(fd);
		return;
	}
	closer_fds[0] = fd;
	closer_fds[1] = go[0];
	/* the child starts with every signal blocked and never unblocks them: our handlers,
	 * which it inherits, must not run in it on our memory */
	sigfillset(&all);
	(void) pthread_sigmask(SIG_SETMASK, &all, &old);
	/* SIGCHLD: a plain child, which an init or subreaper that inherits it reaps */
	(void) clone(closer_main, stack + sizeof(stack), CLONE_VM | SIGCHLD, NULL);
	(void) pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* not the last reference when the child exists: returns at once */
	(void) close(fd);
	(void) close(go[0]);
	(void) close(go[1]); /* the go-ahead */
}
#else
void close_detached(int fd)
{
	if (fd >= 0)
		(void) close(fd);
}
#endif

int mountinfo_next(FILE *f, char **line, size_t *cap, char **ret_point, char **ret_fstype)
{
	while (getline(line, cap, f) > 0) {
		char *sep = strstr(*line, " - "), *point = *line, *r, *w;

		if (!sep)
			continue;
		*sep = 0;
		for (int k = 0; k < 4 && point; k++) /* field 5: the mount point */
			point = strchr(point, ' ') ? strchr(point, ' ') + 1 : NULL;
		if (!point)
			continue;
		*strchrnul(point, ' ') = 0;
		for (r = w = point; *r; r++, w++) {
			if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' &&
			    r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
				*w = (char) ((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
				r += 3;
			} else
				*w = *r;
		}
		*w = 0;
		*ret_fstype = sep + 3;
		*strchrnul(*ret_fstype, ' ') = 0;
		*ret_point = point;
		return 1;
	}
	return 0;
}

bool kernel_at_least(unsigned major, unsigned minor)
{
	struct utsname u;
	unsigned ma = 0, mi = 0;

	if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

static int getfd_state; /* 0 unknown, 1 usable, -1 not */

bool pidfd_getfd_usable(void)
{
	int s = __atomic_load_n(&getfd_state, __ATOMIC_RELAXED);
	long pidfd, fd;

	if (s != 0)
		return s > 0;
	pidfd = syscall(SYS_pidfd_open, getpid(), 0);
	fd = pidfd < 0 ? -1 : syscall(SYS_pidfd_getfd, (int) pidfd, (int) pidfd, 0);
	s = fd >= 0 ? 1 : -1;
	if (fd >= 0)
		(void) close((int) fd);
	if (pidfd >= 0)
		(void) close((int) pidfd);
	__atomic_store_n(&getfd_state, s, __ATOMIC_RELAXED);
	return s > 0;
}

int child_fd_open(pid_t tid, int fd, int flags)
{
	char path[64];
	int r;

	if (fd < 0 || tid <= 0)
		return -EBADF;
	/* /proc/PID/task/TID: a thread that is not a leader has no /proc/TID of its own in
	 * listings, but /proc/TID resolves for any task; its fd table is the thread's own */
	(void) snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) tid, fd);
	r = open(path, flags | O_CLOEXEC | O_NOCTTY);
	if (r >= 0)
		return r;
	if (errno == ENOENT) {
		/* no such fd, or no such task */
		(void) snprintf(path, sizeof(path), "/proc/%d", (int) tid);
		return access(path, F_OK) == 0 ? -EBADF : -ESRCH;
	}
	return -errno;
}

int child_fd_info(pid_t tid, int fd, int64_t *ret_pos, int *ret_flags, uint64_t *ret_ino)
{
	char path[64], buf[1024], *p;
	_cleanup_close_ int f = -1;
	ssize_t n;

	(void) snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int) tid, fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return errno == ENOENT ? -EBADF : -errno;
	n = read(f, buf, sizeof(buf) - 1);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	if (ret_pos)
		*ret_pos = strncmp(buf, "pos:", 4) == 0 ? strtoll(buf + 4, NULL, 10) : 0;
	p = strstr(buf, "flags:");
	if (!p)
		return -EIO;
	if (ret_flags)
		*ret_flags = (int) strtol(p + 6, NULL, 8);
	p = strstr(buf, "\nino:");
	if (ret_ino)
		*ret_ino = p ? strtoull(p + 5, NULL, 10) : 0;
	return 0;
}
