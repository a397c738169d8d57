/* SPDX-License-Identifier: MIT */
/*
 * The unwinder (unwind/unwind.h) on a real stopped child, tests/helpers/bt-fp-child (main →
 * bt_outer → bt_middle → bt_inner → syscall(), built with frame pointers): the
 * frame-pointer backend names the chain in order, libunwind agrees with it frame for frame,
 * the session picks libunwind when it loads and gives the same frames after invalidate, and a
 * chain the program forged (a loop, a downward link, an endless chain, bad pointers) ends
 * within max. And the /proc/PID/maps parser on made-up text.
 */
#include "tests/unit/tap.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit/audit.h"
#include "unwind/internal.h"
#include "unwind/unwind.h"

#define MAX_FRAMES 16

/* The helper, stopped by its own SIGSTOP right after the syscall instruction; -1 if it could
 * not be started or traced. */
static pid_t start_child(void)
{
	const char *helper = getenv("BT_FP_CHILD");
	pid_t pid;
	int status;

	if (!helper)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(127);
		execl(helper, helper, (char *) NULL);
		_exit(127);
	}
	/* the exec's SIGTRAP, then the helper's SIGSTOP */
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP ||
	    ptrace(PTRACE_CONT, pid, NULL, NULL) < 0 || waitpid(pid, &status, 0) != pid ||
	    !WIFSTOPPED(status) || WSTOPSIG(status) != SIGSTOP) {
		(void) kill(pid, SIGKILL);
		(void) waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

/* cp src dst */
static int copy_file(const char *src, const char *dst)
{
	char buf[65536];
	int in = open(src, O_RDONLY | O_CLOEXEC), out;
	ssize_t n = -1;

	if (in < 0)
		return -1;
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	if (out >= 0)
		while ((n = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, (size_t) n) != n) {
				n = -1;
				break;
			}
	close(in);
	if (out >= 0)
		close(out);
	return out >= 0 && n == 0 ? 0 : -1;
}

static void end_child(pid_t pid)
{
	(void) kill(pid, SIGKILL);
	(void) waitpid(pid, NULL, 0);
}

/* The index of the frame named name, or -1. */
static int frame_named(const AuditFrame *f, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(f[i].function, name) == 0)
			return (int) i;
	return -1;
}

static void print_frames(const char *who, const AuditFrame *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("# %s #%zu %#llx %s+%llu (%s)\n", who, i, (unsigned long long) f[i].ip,
		       f[i].function, (unsigned long long) f[i].offset, f[i].module);
}

TEST(frame_pointer_names_the_chain_in_order)
{
	AuditFrame f[MAX_FRAMES];
	const char *err = NULL;
	UnwindSession *s;
	pid_t pid;
	size_t n;

	ASSERT_TRUE(unwinder_frame_pointer.open());
	pid = start_child();
	ASSERT_TRUE(pid > 0);
	s = unwind_session_new(NULL);
	ASSERT_TRUE(s != NULL);
	n = unwinder_frame_pointer.unwind(s, pid, f, MAX_FRAMES, &err);
	print_frames("fp", f, n);
	end_child(pid);
	ASSERT_GE(n, (size_t) 5);
	/* libc's syscall() is a leaf without a frame: its caller comes from [rsp] */
	EXPECT_STREQ(f[0].function, "syscall");
	EXPECT_STREQ(f[1].function, "bt_inner");
	EXPECT_STREQ(f[2].function, "bt_middle");
	EXPECT_STREQ(f[3].function, "bt_outer");
	EXPECT_STREQ(f[4].function, "main");
	EXPECT_TRUE(strstr(f[1].module, "bt-fp-child") != NULL);
	/* return addresses: each one past the start of its function */
	for (size_t i = 1; i < 5; i++)
		EXPECT_TRUE(f[i].offset > 0);
	unwind_session_free(s);
}

TEST(frame_pointer_respects_max)
{
	AuditFrame f[2];
	const char *err = NULL;
	UnwindSession *s;
	pid_t pid;

	pid = start_child();
	ASSERT_TRUE(pid > 0);
	s = unwind_session_new(NULL);
	ASSERT_TRUE(s != NULL);
	EXPECT_EQ(unwinder_frame_pointer.unwind(s, pid, f, 2, &err), (size_t) 2);
	EXPECT_STREQ(f[1].function, "bt_inner");
	EXPECT_EQ(unwinder_frame_pointer.unwind(s, pid, f, 0, &err), (size_t) 0);
	end_child(pid);
	/* a pid that is not our tracee: no registers, an error, no frame */
	EXPECT_EQ(unwinder_frame_pointer.unwind(s, getpid(), f, 2, &err), (size_t) 0);
	EXPECT_TRUE(err != NULL);
	unwind_session_free(s);
}

TEST(libunwind_and_frame_pointer_agree)
{
	AuditFrame fp[MAX_FRAMES], lu[MAX_FRAMES];
	const char *err = NULL;
	UnwindSession *s;
	size_t n_fp, n_lu;
	int main_fp;
	pid_t pid;

	if (!unwinder_libunwind.open())
		SKIP("libunwind-ptrace cannot be loaded here: nothing to compare with");
	pid = start_child();
	ASSERT_TRUE(pid > 0);
	s = unwind_session_new(NULL);
	ASSERT_TRUE(s != NULL);
	n_fp = unwinder_frame_pointer.unwind(s, pid, fp, MAX_FRAMES, &err);
	n_lu = unwinder_libunwind.unwind(s, pid, lu, MAX_FRAMES, &err);
	print_frames("fp", fp, n_fp);
	print_frames("libunwind", lu, n_lu);
	end_child(pid);
	unwind_session_free(s);
	main_fp = frame_named(fp, n_fp, "main");
	ASSERT_TRUE(main_fp >= 4);
	ASSERT_GE(n_lu, (size_t) main_fp + 1);
	/* the caller chain, from the syscall site to main: the same addresses, the same names */
	for (int i = 0; i <= main_fp; i++) {
		EXPECT_EQ(fp[i].ip, lu[i].ip);
		EXPECT_STREQ(fp[i].function, lu[i].function);
		EXPECT_STREQ(fp[i].module, lu[i].module);
	}
}

TEST(session_picks_libunwind_and_survives_invalidate)
{
	AuditFrame a[MAX_FRAMES], b[MAX_FRAMES];
	const Unwinder *used = NULL;
	const char *err = NULL;
	UnwindSession *s;
	size_t na, nb;
	pid_t pid;

	s = unwind_session_new(NULL);
	ASSERT_TRUE(s != NULL);
	EXPECT_TRUE(unwind_session_primary(s) ==
		    (unwinder_libunwind.open() ? &unwinder_libunwind : &unwinder_frame_pointer));
	pid = start_child();
	ASSERT_TRUE(pid > 0);
	na = unwind_backtrace(s, pid, a, MAX_FRAMES, &err, &used);
	EXPECT_TRUE(used == unwind_session_primary(s));
	unwind_session_invalidate(s); /* the ELF facts are read again: the same frames */
	nb = unwind_backtrace(s, pid, b, MAX_FRAMES, &err, NULL);
	end_child(pid);
	ASSERT_GE(na, (size_t) 5);
	ASSERT_EQ(na, nb);
	for (size_t i = 0; i < na; i++) {
		EXPECT_EQ(a[i].ip, b[i].ip);
		EXPECT_STREQ(a[i].function, b[i].function);
	}
	EXPECT_EQ(frame_named(a, na, "bt_inner"), 1);
	/* not our tracee: both backends fail, and the error is the primary's */
	err = NULL;
	EXPECT_EQ(unwind_backtrace(s, getpid(), a, MAX_FRAMES, &err, &used), (size_t) 0);
	ASSERT_TRUE(err != NULL);
	EXPECT_TRUE(used == &unwinder_frame_pointer);
	EXPECT_EQ(strncmp(err, "libunwind", 9) == 0,
		  unwind_session_primary(s) == &unwinder_libunwind);
	unwind_session_free(s);
}

/* A primary backend that never finds a frame: what libunwind does when it cannot read the
 * registers or make its address space. */
static size_t no_frame_unwind(UnwindSession *s, pid_t pid, AuditFrame *frames, size_t max,
			      const char **ret_err)
{
	(void) s;
	(void) pid;
	(void) frames;
	(void) max;
	*ret_err = "fake: no frame";
	return 0;
}

/* unwind_backtrace()'s fallback: the primary finds nothing, the frame pointers give the
 * chain, and the backend used is said; when both fail, the error is the primary's. */
TEST(fallback_to_frame_pointers_when_the_primary_finds_nothing)
{
	const Unwinder fake = {
		.name = "fake", .open = unwinder_frame_pointer.open, .unwind = no_frame_unwind};
	AuditFrame f[MAX_FRAMES];
	const Unwinder *used = NULL;
	const char *err = NULL;
	UnwindSession *s;
	size_t n;
	pid_t pid;

	s = unwind_session_new(NULL);
	ASSERT_TRUE(s != NULL);
	s->primary = &fake;
	pid = start_child();
	ASSERT_TRUE(pid > 0);
	n = unwind_backtrace(s, pid, f, MAX_FRAMES, &err, &used);
	end_child(pid);
	EXPECT_TRUE(used == &unwinder_frame_pointer);
	ASSERT_GE(n, (size_t) 5);
	EXPECT_EQ(frame_named(f, n, "bt_inner"), 1);
	EXPECT_EQ(frame_named(f, n, "main"), 4);
	err = NULL;
	EXPECT_EQ(unwind_backtrace(s, getpid(), f, MAX_FRAMES, &err, &used), (size_t) 0);
	EXPECT_STREQ(err, "fake: no frame");
	unwind_session_free(s);
}

static int module_path(void *userdata, const char *host, char *ret, size_t size)
{
	(void) userdata;
	if (!strstr(host, "bt-fp-child"))
		return -1;
	snprintf(ret, size, "/view/bt-fp-child");
	return 0;
}

TEST(module_names_come_from_the_host)
{
	UnwindHost host = {.module_path = module_path};
	AuditFrame f[MAX_FRAMES];
	const char *err = NULL;
	UnwindSession *s;
	pid_t pid;
	size_t n;

	s = unwind_session_new(&host);
	ASSERT_TRUE(s != NULL);
	pid = start_child();
	ASSERT_TRUE(pid > 0);
	n = unwind_backtrace(s, pid, f, MAX_FRAMES, &err, NULL);
	end_child(pid);
	ASSERT_GE(n, (size_t) 2);
	EXPECT_STREQ(f[1].module, "/view/bt-fp-child");
	EXPECT_TRUE(f[0].module[0] == '/' && strcmp(f[0].module, "/view/bt-fp-child") != 0);
	unwind_session_free(s);
}

/* ---- /proc/PID/maps ---- */

static int next(const char *text, size_t *pos, UnwindMapping *m)
{
	return unwind_maps_next(text, strlen(text), pos, m);
}

TEST(maps_lines)
{
	const char *text =
		"55d0c0a00000-55d0c0a21000 r-xp 00002000 fd:01 1311234                    "
		"/usr/bin/my prog (deleted)\n"
		"7ffd1c3f0000-7ffd1c3f2000 r-xp 00000000 00:00 0                          "
		"[vdso]\n"
		"7f0000000000-7f0000001000 rw-p 00000000 00:00 0\n"
		"not a mapping at all\n"
		"1-2 r-xp 0 0:0 18446744073709551616 /ino/overflows\n"
		"12345678901234567-2 r-xp 0 0:0 1 /too/many/digits\n"
		"0x10-0x20 r-xp 0 0:0 1 /prefix\n"
		"10-20 r-x 0 0:0 1 /short/perms\n"
		"a-b r-xp 10 103:1f 18446744073709551615 /last\n"
		"c-d r-xp 0 0:0 7 /cut";
	UnwindMapping m;
	size_t pos = 0;

	ASSERT_EQ(next(text, &pos, &m), 1);
	EXPECT_EQ(m.start, 0x55d0c0a00000ULL);
	EXPECT_EQ(m.end, 0x55d0c0a21000ULL);
	EXPECT_STREQ(m.perms, "r-xp");
	EXPECT_EQ(m.offset, 0x2000ULL);
	EXPECT_EQ(m.dev_major, 0xfdu);
	EXPECT_EQ(m.dev_minor, 1u);
	EXPECT_EQ(m.ino, 1311234ULL);
	EXPECT_EQ(m.name_len, strlen("/usr/bin/my prog (deleted)"));
	EXPECT_TRUE(strncmp(m.name, "/usr/bin/my prog (deleted)", m.name_len) == 0);

	ASSERT_EQ(next(text, &pos, &m), 1);
	EXPECT_TRUE(m.name_len == 6 && strncmp(m.name, "[vdso]", 6) == 0);

	ASSERT_EQ(next(text, &pos, &m), 1);
	EXPECT_STREQ(m.perms, "rw-p");
	EXPECT_EQ(m.name_len, (size_t) 0);

	/* the garbage, the overflows, the prefix and the short perms are skipped */
	ASSERT_EQ(next(text, &pos, &m), 1);
	EXPECT_EQ(m.start, 0xaULL);
	EXPECT_EQ(m.offset, 0x10ULL);
	EXPECT_EQ(m.dev_major, 0x103u);
	EXPECT_EQ(m.dev_minor, 0x1fu);
	EXPECT_EQ(m.ino, 18446744073709551615ULL);
	EXPECT_TRUE(m.name_len == 5 && strncmp(m.name, "/last", 5) == 0);

	/* the cut last line is left where it starts */
	EXPECT_EQ(next(text, &pos, &m), 0);
	EXPECT_STREQ(text + pos, "c-d r-xp 0 0:0 7 /cut");
	EXPECT_EQ(unwind_maps_next("", 0, &pos, &m), 0);
}

TEST(maps_of_this_process)
{
	char buf[1 << 16];
	size_t len = 0, pos = 0, exec = 0;
	UnwindMapping m;
	FILE *f;

	f = fopen("/proc/self/maps", "re");
	ASSERT_TRUE(f != NULL);
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	ASSERT_TRUE(len > 0 && len < sizeof(buf));
	while (unwind_maps_next(buf, len, &pos, &m) > 0) {
		EXPECT_TRUE(m.start < m.end);
		exec += m.perms[2] == 'x';
	}
	EXPECT_EQ(pos, len); /* every line ends with a newline */
	EXPECT_GE(exec, (size_t) 2);
}

/* ---- a chain the program forged: the walker must end, within max, without a crash ---- */

/* Writes the frame record {rbp, ret} at addr in the stopped child. */
static bool poke_link(pid_t pid, uint64_t addr, uint64_t next_fp, uint64_t ret)
{
	return ptrace(PTRACE_POKEDATA, pid, (void *) (uintptr_t) addr,
		      (void *) (uintptr_t) next_fp) == 0 &&
	       ptrace(PTRACE_POKEDATA, pid, (void *) (uintptr_t) (addr + 8),
		      (void *) (uintptr_t) ret) == 0;
}

static size_t fp_walk_with_rbp(pid_t pid, const struct user_regs_struct *regs, uint64_t rbp,
			       AuditFrame *f, size_t max)
{
	struct user_regs_struct r = *regs;
	const char *err = NULL;
	UnwindSession *s = unwind_session_new(NULL);
	size_t n;

	if (!s)
		return (size_t) -1;
	r.rbp = rbp;
	if (ptrace(PTRACE_SETREGS, pid, NULL, &r) < 0) {
		unwind_session_free(s);
		return (size_t) -1;
	}
	n = unwinder_frame_pointer.unwind(s, pid, f, max, &err);
	unwind_session_free(s);
	return n;
}

TEST(frame_pointer_stops_on_forged_chains)
{
	AuditFrame f[MAX_FRAMES];
	struct user_regs_struct regs;
	uint64_t base, ret;
	pid_t pid;
	size_t n;

	pid = start_child();
	ASSERT_TRUE(pid > 0);
	ASSERT_EQ(ptrace(PTRACE_GETREGS, pid, NULL, &regs), 0);
	/* records above the stack pointer (the child is killed afterwards, its stack does not
	 * matter), each with a return address inside a module: the syscall site itself */
	base = (regs.rsp + 256) & ~(uint64_t) 15;
	ret = regs.rip;

	/* a record that links to itself: one frame from it, then the walk ends */
	ASSERT_TRUE(poke_link(pid, base, base, ret));
	n = fp_walk_with_rbp(pid, &regs, base, f, MAX_FRAMES);
	EXPECT_TRUE(n >= 1 && n <= 3);

	/* a link that goes down the stack */
	ASSERT_TRUE(poke_link(pid, base + 64, base, ret));
	ASSERT_TRUE(poke_link(pid, base, base - 64, ret));
	n = fp_walk_with_rbp(pid, &regs, base + 64, f, MAX_FRAMES);
	EXPECT_TRUE(n >= 1 && n <= 4);

	/* a long chain that goes up forever: cut at max */
	for (uint64_t k = 0; k < 3 * MAX_FRAMES; k++)
		ASSERT_TRUE(poke_link(pid, base + 16 * k, base + 16 * (k + 1), ret));
	n = fp_walk_with_rbp(pid, &regs, base, f, MAX_FRAMES);
	EXPECT_EQ(n, (size_t) MAX_FRAMES);

	/* a return address outside every module: the walk ends there */
	ASSERT_TRUE(poke_link(pid, base, base + 16, 0x10));
	n = fp_walk_with_rbp(pid, &regs, base, f, MAX_FRAMES);
	EXPECT_TRUE(n >= 1 && n <= 2);

	/* a frame pointer into unmapped memory, one below the stack, one unaligned */
	n = fp_walk_with_rbp(pid, &regs, regs.rsp + (1ull << 36), f, MAX_FRAMES);
	EXPECT_TRUE(n >= 1 && n <= 2);
	n = fp_walk_with_rbp(pid, &regs, regs.rsp - 4096, f, MAX_FRAMES);
	EXPECT_TRUE(n >= 1 && n <= 2);
	n = fp_walk_with_rbp(pid, &regs, base + 3, f, MAX_FRAMES);
	EXPECT_TRUE(n >= 1 && n <= 2);
	end_child(pid);
}

/* ---- the ELF cache: what one unwind holds is not freed under it ---- */

/* A stack through more modules than the cache holds (the program chooses them): the first
 * module's ELF, handed out at the start of the unwind, must still be the cache's when the
 * last one is met, so that a later frame in it reads live memory (under ASan a freed one
 * would abort here). The last module goes without symbols instead. */
TEST(elf_cache_keeps_what_the_unwind_holds)
{
	const char *helper = getenv("BT_FP_CHILD");
	char dir[] = "/tmp/test-unwind-XXXXXX", path[PATH_MAX];
	enum { N = UNWIND_ELF_CACHE + 1 };
	static void *map[N];
	const UnwindModule *first, *last;
	AuditFrame f = {0};
	UnwindSession *s;
	size_t size = 0;
	bool kept = false;

	ASSERT_TRUE(helper != NULL);
	ASSERT_TRUE(mkdtemp(dir) != NULL);
	for (int k = 0; k < N; k++) {
		struct stat st;
		int fd;

		snprintf(path, sizeof(path), "%s/m%d", dir, k);
		ASSERT_EQ(copy_file(helper, path), 0);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		ASSERT_GE(fd, 0);
		ASSERT_EQ(fstat(fd, &st), 0);
		size = (size_t) st.st_size;
		map[k] = mmap(NULL, size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		close(fd);
		ASSERT_TRUE(map[k] != MAP_FAILED);
	}
	s = unwind_session_new(NULL);
	ASSERT_TRUE(s != NULL);
	ASSERT_EQ(unwind_begin(s, getpid()), 0);
	first = unwind_module_at(s, (uint64_t) (uintptr_t) map[0]);
	ASSERT_TRUE(first != NULL && first->elf != NULL);
	for (int k = 1; k < N; k++)
		(void) unwind_module_at(s, (uint64_t) (uintptr_t) map[k]);
	for (size_t i = 0; i < UNWIND_ELF_CACHE; i++)
		if (s->elf_cache[i].valid && s->elf_cache[i].dev == first->dev &&
		    s->elf_cache[i].ino == first->ino && s->elf_cache[i].elf == first->elf)
			kept = true;
	EXPECT_TRUE(kept);
	last = unwind_module_at(s, (uint64_t) (uintptr_t) map[N - 1]);
	ASSERT_TRUE(last != NULL);
	EXPECT_TRUE(last->elf == NULL);
	f.ip = (uint64_t) (uintptr_t) map[0] + 16;
	unwind_symbolize(s, &f, false); /* reads first->elf */
	unwind_end(s);
	/* the next unwind may use every entry again */
	ASSERT_EQ(unwind_begin(s, getpid()), 0);
	last = unwind_module_at(s, (uint64_t) (uintptr_t) map[N - 1]);
	EXPECT_TRUE(last != NULL && last->elf != NULL);
	unwind_end(s);
	unwind_session_free(s);
	for (int k = 0; k < N; k++) {
		munmap(map[k], size);
		snprintf(path, sizeof(path), "%s/m%d", dir, k);
		unlink(path);
	}
	rmdir(dir);
}

int main(void)
{
	return tap_run();
}
