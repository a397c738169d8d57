/* SPDX-License-Identifier: MIT */
/*
 * Backtraces must not let the program stall the supervisor. libunwind opens the file that
 * /proc/PID/maps names for each frame's address; the program maps a copy of its own code,
 * makes denied calls from it (each one unwound, [audit] backtrace = "denied"), while a second
 * thread swaps that file and a FIFO with RENAME_EXCHANGE in a loop. An open of the FIFO,
 * which has no writer, would block the tracer thread forever: the run would never end (its
 * wall-time limit kills the tree, but the supervisor waits for the tracer thread). The run
 * must finish with the program's own exit code, and every call must get its answer. A third
 * name, a symlink to a file the program never opens, is swapped in too: the supervisor must
 * not follow it (an inotify watch on that file counts its opens).
 *
 * Run: this program runs itself inside `sbxtrace run` (argv[1] == "probe") in a scratch
 * directory of the minimal policy's view.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "tests/helpers/sbx-test.h"

#define CALLS	   300
#define PROBE_EXIT 5

/* Position-independent and without data references: it runs from the copy too. */
__attribute__((noinline, noipa, used)) static long pure_call(void)
{
	long r;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "0"((long) SYS_sysinfo), "D"(0L)
			 : "rcx", "r11", "memory");
	return r;
}

static atomic_bool stop;
static char lib_path[600], fifo_path[600], link_path[600];

static int swap_errno;

static void *swapper(void *arg)
{
	unsigned long *n = arg;

	for (unsigned long i = 0; !atomic_load(&stop); i++) {
		if (syscall(SYS_renameat2, AT_FDCWD, lib_path, AT_FDCWD,
			    i % 2 ? link_path : fifo_path, 2 /* RENAME_EXCHANGE */) == 0)
			(*n)++;
		else
			swap_errno = errno;
	}
	return NULL;
}

/* The file offset of addr in the executable mapping of our own binary. */
static long file_offset_of(uintptr_t addr)
{
	char line[1024], self[512];
	ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
	long off = -1;
	FILE *f = fopen("/proc/self/maps", "re");

	if (k <= 0 || !f)
		return -1;
	self[k] = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, o;
		int pos = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &s, &e, &o, &pos) < 3)
			continue;
		if (addr >= s && addr < e) {
			off = (long) (addr - s + o);
			break;
		}
	}
	fclose(f);
	return off;
}

static int probe(const char *dir)
{
	long (*call)(void);
	unsigned long swaps = 0;
	pthread_t th;
	char buf[65536];
	struct stat st;
	long off;
	ssize_t n;
	void *base;
	int in, out, bad = 0;

	snprintf(lib_path, sizeof(lib_path), "%s/code.bin", dir);
	snprintf(fifo_path, sizeof(fifo_path), "%s/fifo", dir);
	snprintf(link_path, sizeof(link_path), "%s/link", dir);
	in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	out = open(lib_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
	if (in < 0 || out < 0)
		return 10;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t) n) != n)
			return 11;
	close(in);
	close(out);
	if (mkfifo(fifo_path, 0600) < 0)
		return 12;
	{
		char secret[700];

		snprintf(secret, sizeof(secret), "%s/secret", dir);
		if (symlink(secret, link_path) < 0)
			return 18;
	}
	in = open(lib_path, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &st) < 0)
		return 13;
	base = mmap(NULL, (size_t) st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, in, 0);
	close(in);
	off = file_offset_of((uintptr_t) pure_call);
	if (base == MAP_FAILED || off < 0)
		return 14;
	call = (long (*)(void))((char *) base + off);
	if (call() != -EACCES) /* the copy works before the race starts */
		return 15;
	if (pthread_create(&th, NULL, swapper, &swaps) != 0)
		return 16;
	for (int i = 0; i < CALLS; i++)
		if (call() != -EACCES)
			bad++;
	atomic_store(&stop, true);
	pthread_join(th, NULL);
	printf("calls %d, wrong answers %d, swaps %lu (last error: %s)\n", CALLS, bad, swaps,
	       swap_errno ? strerror(swap_errno) : "none");
	return bad ? 17 : PROBE_EXIT;
}

int main(int argc, char *argv[])
{
	const char *sbxtrace = sbx_env("SBXTRACE"), *policy = sbx_env("SBX_POLICY");
	char self[4096], *dir, log_path[700], path[700];
	int code, ino, opens = 0;
	ssize_t n;

	if (argc == 3 && strcmp(argv[1], "probe") == 0)
		return probe(argv[2]);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	dir = sbx_tmpdir();
	if (n <= 0 || !dir)
		return 1;
	self[n] = 0;
	snprintf(log_path, sizeof(log_path), "%s/audit.jsonl", dir);
	snprintf(path, sizeof(path), "%s/secret", dir);
	{
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (fd < 0)
			return 1;
		close(fd);
	}
	ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ino < 0 || inotify_add_watch(ino, path, IN_OPEN) < 0)
		return 1;
	{
		const char *args[] = {sbxtrace,	 "run",
				      "-s",	 "syscalls.deny=[\"sysinfo:EACCES\"]",
				      "-s",	 "audit.backtrace=\"denied\"",
				      "-s",	 "limits.wall_time=\"60s\"",
				      "--audit", log_path,
				      policy,	 "--",
				      self,	 "probe",
				      dir,	 NULL};

		code = sbx_run_argv(args, NULL);
	}
	if (code < 0)
		return 1;
	{
		char ev[4096];
		ssize_t k;

		while ((k = read(ino, ev, sizeof(ev))) > 0)
			for (char *e = ev; e < ev + k;
			     e += sizeof(struct inotify_event) + ((struct inotify_event *) e)->len)
				opens++;
		close(ino);
	}
	printf("sbxtrace exited %d (want %d), opens of the symlink's target: %d (want 0)\n", code,
	       PROBE_EXIT, opens);
	unlink(log_path);
	snprintf(path, sizeof(path), "%s/code.bin", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/link", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/secret", dir);
	unlink(path);
	rmdir(dir);
	return code == PROBE_EXIT && opens == 0 ? 0 : 1;
}
