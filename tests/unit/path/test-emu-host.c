/* SPDX-License-Identifier: MIT */
/*
 * The handlers' one door to the supervisor, EmuHost (common/handler.h), driven with a fake
 * (the view's walk asks the same fake: it is given at sbx_view_new()):
 * each test gives a handler a host that records what it was asked and answers as the test
 * wants, and checks both the decision and the calls. This is what the interface is for:
 * a handler is tested without a tracer, a process tree or a network runtime behind it, and
 * nothing it needs from the supervisor can arrive by another way without this test (or the
 * layer check) noticing.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/macros.h"
#include "emulation/fs.h"
#include "emulation/path/view.h"
#include "emulation/process.h"
#include "net/handlers.h"
#include "net/internal.h" /* NetRuntime's alias flag and redirects, set as a run would */
#include "tests/unit/path/fixture.h"
#include "tests/unit/path/self-mem.h"
#include "tests/unit/tap.h"

/* ---- the fake host ---- */

typedef struct FakeHost {
	EmuHost host;
	/* sensitive_open */
	int ratchet_answer;
	unsigned ratchet_calls;
	Sensitivity ratchet_level;
	char ratchet_path[256];
	pid_t ratchet_tgid;
	/* the process family */
	int signal_answer;
	unsigned signal_calls;
	EmuSignal signal;
	unsigned target_calls;
	/* budgets */
	bool disk_full;
	unsigned disk_calls;
	/* the network state */
	NetRuntime *net;
	unsigned net_calls;
	/* AF_UNIX names */
	EmuUnixNames unix_names;
	unsigned unix_calls;
	char unix_path[108];
	bool unix_bind;
	/* the caller's files: FAKE_FD, a descriptor this process does not have, names the
	 * directory fd_dir; the others are this process's own (the view's defaults) */
	char fd_dir[1024];
	unsigned fd_calls, path_calls, umask_calls, tree_calls;
	int last_fd;
	int umask;
	pid_t tree_pid; /* the one pid the fake's tree has (0: none) */
} FakeHost;

#define FAKE_FD 1000

static int fake_sensitive_open(void *userdata, const EmuRequest *req, Sensitivity level,
			       const char *vpath)
{
	FakeHost *f = userdata;

	f->ratchet_calls++;
	f->ratchet_level = level;
	f->ratchet_tgid = emu_req_tgid(req);
	(void) snprintf(f->ratchet_path, sizeof(f->ratchet_path), "%s", vpath);
	return f->ratchet_answer;
}

static int fake_send_signal(void *userdata, const EmuRequest *req, const EmuSignal *s)
{
	FakeHost *f = userdata;

	(void) req;
	f->signal_calls++;
	f->signal = *s;
	return f->signal_answer;
}

static int fake_check_target(void *userdata, const EmuRequest *req, pid_t pid, bool is_pgid)
{
	FakeHost *f = userdata;

	(void) req;
	(void) pid;
	(void) is_pgid;
	f->target_calls++;
	return EPERM;
}

static int fake_fcntl_dup(void *userdata, const EmuRequest *req, int fd, int cmd, void *arg)
{
	(void) userdata;
	(void) req;
	(void) fd;
	(void) cmd;
	(void) arg;
	return -ENOSYS; /* no test gets this far */
}

static bool fake_disk_full(void *userdata)
{
	FakeHost *f = userdata;

	f->disk_calls++;
	return f->disk_full;
}

static NetRuntime *fake_net_runtime(void *userdata)
{
	FakeHost *f = userdata;

	f->net_calls++;
	return f->net;
}

/* A resolver that refuses every name as absent, and says what it was asked */
static int fake_unix_resolve(const EmuRequest *req, const char *path, bool bind, EmuUnixName *ret,
			     struct sockaddr_un *ret_addr, unsigned *ret_len)
{
	FakeHost *f = req->host->userdata;

	(void) ret_addr;
	(void) ret_len;
	*ret = (EmuUnixName){.parent_fd = -1};
	f->unix_calls++;
	f->unix_bind = bind;
	(void) snprintf(f->unix_path, sizeof(f->unix_path), "%s", path);
	return -ENOENT;
}

static int fake_get_fd(void *userdata, pid_t pid, int fd)
{
	FakeHost *f = userdata;
	int r;

	f->fd_calls++;
	f->last_fd = fd;
	if (fd != FAKE_FD)
		return sbx_default_get_fd(NULL, pid, fd);
	r = open(f->fd_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return r < 0 ? -errno : r;
}

static int fake_get_path(void *userdata, pid_t pid, int fd, char *buf, size_t size)
{
	FakeHost *f = userdata;

	f->path_calls++;
	f->last_fd = fd;
	if (fd != FAKE_FD)
		return sbx_default_get_path(NULL, pid, fd, buf, size);
	return snprintf(buf, size, "%s", f->fd_dir) < (int) size ? 0 : -ENAMETOOLONG;
}

static int fake_get_umask(void *userdata, pid_t pid)
{
	FakeHost *f = userdata;

	(void) pid;
	f->umask_calls++;
	return f->umask;
}

static bool fake_in_tree(void *userdata, pid_t pid)
{
	FakeHost *f = userdata;

	f->tree_calls++;
	return f->tree_pid > 0 && pid == f->tree_pid;
}

static void fake_init(FakeHost *f)
{
	*f = (FakeHost){
		.host = {.sensitive_open = fake_sensitive_open,
			 .send_signal = fake_send_signal,
			 .check_target = fake_check_target,
			 .fcntl_dup = fake_fcntl_dup,
			 .disk_full = fake_disk_full,
			 .net_runtime = fake_net_runtime,
			 .get_fd = fake_get_fd,
			 .get_umask = fake_get_umask,
			 .in_tree = fake_in_tree,
			 .get_path = fake_get_path},
		.umask = 022,
	};
	f->unix_names = (EmuUnixNames){.resolve = fake_unix_resolve};
	f->host.unix_names = &f->unix_names;
	f->host.userdata = f;
}

/* ---- the fs view: /workspace with one secret directory, and the host's /proc ---- */

typedef struct Env {
	Fixture fx;
	SbxView *v;
	EmuDecision d;
	FakeHost fake;
} Env;

static Env *env_new(void)
{
	Env *e = calloc(1, sizeof(*e));
	char err[256];

	if (!e)
		exit(99);
	e->d.inject_fd = -1;
	fx_tree(&e->fx);
	fx_mount(&e->fx, "/workspace", "ws", MOUNT_RW);
	fx_rules(&e->fx);
	/* a rule that only sets a level: what the ratchet is about */
	e->fx.rules[e->fx.policy.n_rules++] = (PolicyRule){
		.glob = (char *) "/workspace/dir/**",
		.access = RULE_ACCESS_UNSET,
		.level = SENSITIVITY_SECRET,
	};
	fx_mount(&e->fx, "/proc", NULL, MOUNT_RO);
	e->fx.mounts[1].source = (char *) "/proc";
	/* the view asks the same host as the requests (tracer/ gives both the run's) */
	fake_init(&e->fake);
	(void) snprintf(e->fake.fd_dir, sizeof(e->fake.fd_dir), "%s/ws/dir", e->fx.base);
	if (sbx_view_new(&e->fx.policy, &e->fake.host, 0, &e->v, err, sizeof(err)) < 0) {
		fprintf(stderr, "view: %s\n", err);
		exit(99);
	}
	return e;
}

static void env_free(Env *e)
{
	if (e->d.inject_fd >= 0)
		(void) close(e->d.inject_fd);
	emu_decision_release(&e->d);
	fx_done(&e->fx, e->v);
	free(e);
}

/* Runs h for nr on behalf of this process, with the fake host (or none); returns h's value. */
/* The handler h on a request of this process with all six arguments, into e->d. */
static int run_args(Env *e, EmuHandler h, int nr, bool with_host, const uint64_t args[6])
{
	EmuRequest req = {
		.policy = &e->fx.policy,
		.view = e->v,
		.mem = &self_mem,
		.pid = getpid(),
		.known_tgid = getpid(),
		.nr = nr,
		.host = with_host ? &e->fake.host : NULL,
	};

	memcpy(req.args, args, sizeof(req.args));
	if (e->d.inject_fd >= 0)
		(void) close(e->d.inject_fd);
	emu_decision_release(&e->d);
	emu_decision_init(&e->d);
	return h(&req, &e->d);
}

static int run(Env *e, EmuHandler h, int nr, bool with_host, uint64_t a0, uint64_t a1, uint64_t a2)
{
	return run_args(e, h, nr, with_host, (const uint64_t[6]){a0, a1, a2});
}

#define A(x) ((uint64_t) (uintptr_t) (x))

TEST(open_of_a_sensitive_file_asks_the_host_ratchet)
{
	Env *e = env_new();

	ASSERT_EQ(run(e, emu_handle_open, SYS_open, true, A("/workspace/dir/sub.txt"), O_RDONLY, 0),
		  0);
	EXPECT_EQ(e->d.verdict, EMU_RETURN);
	EXPECT_GE(e->d.inject_fd, 0);
	EXPECT_EQ(e->fake.ratchet_calls, 1);
	EXPECT_EQ(e->fake.ratchet_level, SENSITIVITY_SECRET);
	EXPECT_STREQ(e->fake.ratchet_path, "/workspace/dir/sub.txt");
	EXPECT_EQ(e->fake.ratchet_tgid, getpid());

	/* a file with no level never reaches the ratchet */
	ASSERT_EQ(run(e, emu_handle_open, SYS_open, true, A("/workspace/a.txt"), O_RDONLY, 0), 0);
	EXPECT_EQ(e->d.verdict, EMU_RETURN);
	EXPECT_EQ(e->fake.ratchet_calls, 1);
	env_free(e);
}

TEST(ratchet_that_cannot_reach_every_socket_kills)
{
	Env *e = env_new();

	/* fail closed: the child must not get the file while a socket may still be open */
	e->fake.ratchet_answer = -EPERM;
	ASSERT_EQ(run(e, emu_handle_open, SYS_open, true, A("/workspace/dir/sub.txt"), O_RDONLY, 0),
		  0);
	EXPECT_EQ(e->d.verdict, EMU_KILL);
	EXPECT_EQ(e->d.inject_fd, -1);
	EXPECT_EQ(e->fake.ratchet_calls, 1);
	env_free(e);
}

TEST(no_host_no_ratchet)
{
	Env *e = env_new();

	/* unit tests and the kernel view's probes run handlers with no host: the open works */
	ASSERT_EQ(
		run(e, emu_handle_open, SYS_open, false, A("/workspace/dir/sub.txt"), O_RDONLY, 0),
		0);
	EXPECT_EQ(e->d.verdict, EMU_RETURN);
	EXPECT_EQ(e->fake.ratchet_calls, 0);
	env_free(e);
}

TEST(kill_is_sent_by_the_host)
{
	Env *e = env_new();
	pid_t other = getpid() + 1;

	/* kill(other, SIGTERM): the handler decides the scope, the host delivers (or not) */
	e->fake.signal_answer = EPERM;
	ASSERT_EQ(run(e, emu_handle_signal, SYS_kill, true, (uint64_t) other, SIGTERM, 0), 0);
	EXPECT_EQ(e->fake.signal_calls, 1);
	EXPECT_EQ(e->fake.signal.scope, EMU_SIGNAL_PROCESS);
	EXPECT_EQ(e->fake.signal.pid, other);
	EXPECT_EQ(e->fake.signal.sig, SIGTERM);
	EXPECT_EQ(e->d.verdict, EMU_FAIL);
	EXPECT_EQ(e->d.error, EPERM);
	EXPECT_TRUE(e->d.denied);

	e->fake.signal_answer = 0;
	ASSERT_EQ(run(e, emu_handle_signal, SYS_kill, true, (uint64_t) other, SIGTERM, 0), 0);
	EXPECT_EQ(e->d.verdict, EMU_RETURN);
	EXPECT_EQ(e->d.val, 0);

	/* kill(self) needs no host: the kernel runs it */
	ASSERT_EQ(run(e, emu_handle_signal, SYS_kill, true, (uint64_t) getpid(), 0, 0), 0);
	EXPECT_EQ(e->d.verdict, EMU_CONTINUE);
	EXPECT_EQ(e->fake.signal_calls, 2);

	/* prlimit64(pid, …) of a process the host says is outside the tree */
	ASSERT_EQ(run(e, emu_handle_pid_target, SYS_prlimit64, true, (uint64_t) other, 0, 0), 0);
	EXPECT_EQ(e->fake.target_calls, 1);
	EXPECT_EQ(e->d.verdict, EMU_FAIL);
	EXPECT_EQ(e->d.error, EPERM);
	env_free(e);
}

TEST(no_process_family_without_a_host)
{
	Env *e = env_new();

	/* a supervisor failure, so the dispatcher fails the call closed */
	EXPECT_EQ(run(e, emu_handle_signal, SYS_kill, false, (uint64_t) getpid() + 1, SIGTERM, 0),
		  -EINVAL);
	e->fake.host.send_signal = NULL;
	EXPECT_EQ(run(e, emu_handle_signal, SYS_kill, true, (uint64_t) getpid() + 1, SIGTERM, 0),
		  -EINVAL);
	EXPECT_EQ(e->fake.signal_calls, 0);
	env_free(e);
}

TEST(disk_budget_is_the_hosts)
{
	Env *e = env_new();

	e->fake.disk_full = true;
	ASSERT_EQ(run(e, emu_handle_mkdir, SYS_mkdir, true, A("/workspace/d1"), 0755, 0), 0);
	EXPECT_EQ(e->d.verdict, EMU_FAIL);
	EXPECT_EQ(e->d.error, EDQUOT);
	EXPECT_TRUE(e->d.denied);
	EXPECT_GE(e->fake.disk_calls, 1);

	e->fake.disk_full = false;
	ASSERT_EQ(run(e, emu_handle_mkdir, SYS_mkdir, true, A("/workspace/d1"), 0755, 0), 0);
	EXPECT_EQ(e->d.verdict, EMU_RETURN);
	env_free(e);
}

TEST(socket_handler_takes_the_run_network_state_from_the_host)
{
	Env *e = env_new();
	Policy full;
	EmuRequest req;
	NetRuntime *rt = NULL;

	/* The run's state is started in mode none (the fixture's policy); the request's policy
	 * says full. The run's mode is the ratchet's, which is why the handler must take the
	 * state from the host and not only read the policy: with the host, socket(AF_INET) is
	 * refused as in mode none; without one, the policy's full mode lets the kernel run it. */
	ASSERT_EQ(net_runtime_start(&e->fx.policy, getpid(), NULL, &rt), 0);
	ASSERT_TRUE(rt != NULL);
	e->fake.net = rt;
	full = e->fx.policy;
	full.network.mode = NET_MODE_FULL;
	req = (EmuRequest){
		.policy = &full,
		.view = e->v,
		.mem = &self_mem,
		.pid = getpid(),
		.known_tgid = getpid(),
		.nr = SYS_socket,
		.args = {AF_INET, SOCK_STREAM, 0},
		.host = &e->fake.host,
	};

	emu_decision_init(&e->d);
	EXPECT_EQ(net_handle_socket(&req, &e->d), 0);
	EXPECT_GE(e->fake.net_calls, 1);
	EXPECT_EQ(e->d.verdict, EMU_FAIL);
	EXPECT_EQ(e->d.error, EACCES);

	req.host = NULL;
	emu_decision_init(&e->d);
	EXPECT_EQ(net_handle_socket(&req, &e->d), 0);
	EXPECT_EQ(e->d.verdict, EMU_CONTINUE);

	net_runtime_stop(rt);
	env_free(e);
}

TEST(two_runs_in_one_process_have_their_own_network_state)
{
	Env *e = env_new();
	Policy full = e->fx.policy;
	NetRuntime *a = NULL, *b = NULL;

	/* The state is handed out, not kept in a process-global: a second start is not refused
	 * (it was -EBUSY), and each answers with its own policy's mode. */
	full.network.mode = NET_MODE_FULL;
	ASSERT_EQ(net_runtime_start(&e->fx.policy, getpid(), NULL, &a), 0);
	ASSERT_EQ(net_runtime_start(&full, getpid(), NULL, &b), 0);
	EXPECT_TRUE(a != b);
	EXPECT_EQ(net_runtime_mode(a), NET_MODE_NONE);
	EXPECT_EQ(net_runtime_mode(b), NET_MODE_FULL);
	/* no socket of the tree was made by the supervisor: nothing to duplicate */
	EXPECT_EQ(net_child_object_dup(a, getpid(), 0), -ENOENT);
	EXPECT_EQ(net_child_object_dup(NULL, getpid(), 0), -ENOENT);
	net_runtime_stop(a);
	EXPECT_EQ(net_runtime_mode(b), NET_MODE_FULL);
	net_runtime_stop(b);
	net_runtime_stop(NULL);
	env_free(e);
}

/* connect(fd, {AF_UNIX, path}) of this process, with the fake host (or none) */
static int connect_unix(Env *e, int fd, const char *path, bool with_host)
{
	struct sockaddr_un u = {.sun_family = AF_UNIX};

	(void) snprintf(u.sun_path, sizeof(u.sun_path), "%s", path);
	return run(e, net_handle_connect, SYS_connect, with_host, (uint64_t) fd, A(&u), sizeof(u));
}

TEST(unix_names_resolve_through_the_host)
{
	Env *e = env_new();
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ASSERT_GE(fd, 0);
	/* the host's resolver answers for the view: net/ has no other way to it */
	ASSERT_EQ(connect_unix(e, fd, "/workspace/s.sock", true), 0);
	EXPECT_EQ(e->fake.unix_calls, 1);
	EXPECT_STREQ(e->fake.unix_path, "/workspace/s.sock");
	EXPECT_FALSE(e->fake.unix_bind);
	EXPECT_EQ(e->d.verdict, EMU_FAIL);
	EXPECT_EQ(e->d.error, ENOENT);

	/* a view but no resolver: refused, never decided around the view */
	e->fake.host.unix_names = NULL;
	ASSERT_EQ(connect_unix(e, fd, "/workspace/s.sock", true), 0);
	EXPECT_EQ(e->fake.unix_calls, 1);
	EXPECT_EQ(e->d.verdict, EMU_FAIL);
	EXPECT_EQ(e->d.error, EACCES);

	/* the view's own table, as tracer/ gives it: a hidden name is absent, a file that is
	 * not a socket refuses the connection */
	e->fake.host.unix_names = &sbx_view_unix_names;
	ASSERT_EQ(connect_unix(e, fd, "/workspace/.env", true), 0);
	EXPECT_EQ(e->d.verdict, EMU_FAIL);
	EXPECT_EQ(e->d.error, ENOENT);
	ASSERT_EQ(connect_unix(e, fd, "/workspace/a.txt", true), 0);
	EXPECT_EQ(e->d.verdict, EMU_FAIL);
	EXPECT_EQ(e->d.error, ECONNREFUSED);
	env_free(e);
}

TEST(relative_open_starts_where_the_host_says)
{
	Env *e = env_new();

	/* openat(FAKE_FD, "sub.txt"): this process has no such fd, so only an answer of the
	 * fake can make the open work, and it names /workspace/dir */
	ASSERT_EQ(fcntl(FAKE_FD, F_GETFD), -1);
	ASSERT_EQ(run(e, emu_handle_open, SYS_openat, true, FAKE_FD, A("sub.txt"), O_RDONLY), 0);
	EXPECT_EQ(e->d.verdict, EMU_RETURN);
	EXPECT_GE(e->d.inject_fd, 0);
	EXPECT_EQ(e->fake.path_calls, 1);
	EXPECT_EQ(e->fake.fd_calls, 0);
	EXPECT_EQ(e->fake.last_fd, FAKE_FD);
	EXPECT_STREQ(e->fake.ratchet_path, "/workspace/dir/sub.txt");

	/* a host without get_path: the start is a dup of the caller's fd, from get_fd */
	e->fake.host.get_path = NULL;
	ASSERT_EQ(run(e, emu_handle_open, SYS_openat, true, FAKE_FD, A("sub.txt"), O_RDONLY), 0);
	EXPECT_EQ(e->d.verdict, EMU_RETURN);
	EXPECT_GE(e->d.inject_fd, 0);
	EXPECT_EQ(e->fake.fd_calls, 1);
	EXPECT_EQ(e->fake.path_calls, 1);
	EXPECT_EQ(e->fake.last_fd, FAKE_FD);
	EXPECT_EQ(e->fake.ratchet_calls, 2);

	/* no host: the view's default host asks this process, which has no fd FAKE_FD */
	ASSERT_EQ(run(e, emu_handle_open, SYS_openat, false, FAKE_FD, A("sub.txt"), O_RDONLY), 0);
	EXPECT_EQ(e->d.verdict, EMU_FAIL);
	EXPECT_EQ(e->d.error, EBADF);
	EXPECT_EQ(e->fake.fd_calls + e->fake.path_calls, 2);
	env_free(e);
}

TEST(creations_take_the_umask_the_host_says)
{
	Env *e = env_new();
	struct stat st;

	e->fake.umask = 077;
	ASSERT_EQ(run(e, emu_handle_mkdir, SYS_mkdir, true, A("/workspace/d077"), 0777, 0), 0);
	EXPECT_EQ(e->d.verdict, EMU_RETURN);
	EXPECT_GE(e->fake.umask_calls, 1);
	ASSERT_EQ(fx_stat(&e->fx, "ws/d077", &st), 0);
	EXPECT_EQ(st.st_mode & 07777, 0700);

	e->fake.umask = 002;
	ASSERT_EQ(run(e, emu_handle_open, SYS_open, true, A("/workspace/f002"),
		      O_CREAT | O_WRONLY | O_CLOEXEC, 0666),
		  0);
	EXPECT_EQ(e->d.verdict, EMU_RETURN);
	ASSERT_EQ(fx_stat(&e->fx, "ws/f002", &st), 0);
	EXPECT_EQ(st.st_mode & 07777, 0664);
	env_free(e);
}

TEST(proc_shows_the_pids_the_host_says_are_in_the_tree)
{
	Env *e = env_new();
	SbxResolved r;
	pid_t other = getppid();
	char p[64];

	/* the walk of the view asks the host it was made with (no request in reach) */
	ASSERT_TRUE(other > 1 && other != getpid());
	(void) snprintf(p, sizeof(p), "/proc/%d", (int) other);
	EXPECT_EQ(fx_resolve(e->v, p, 0, &r), -ENOENT);
	EXPECT_GE(e->fake.tree_calls, 1);
	e->fake.tree_pid = other;
	ASSERT_EQ(fx_resolve(e->v, p, 0, &r), 0);
	EXPECT_TRUE(r.exists);
	sbx_resolved_done(&r);
	/* the caller's own entry needs no answer */
	e->fake.tree_pid = 0;
	e->fake.tree_calls = 0;
	(void) snprintf(p, sizeof(p), "/proc/%d", (int) getpid());
	ASSERT_EQ(fx_resolve(e->v, p, 0, &r), 0);
	sbx_resolved_done(&r);
	EXPECT_EQ(e->fake.tree_calls, 0);
	env_free(e);
}

/* ---- results through the decision: net/ writes nothing into the child itself ---- */

/* What tracer/dispatch.c does with the write-backs (here the child is this process). */
static void apply_writebacks(const EmuDecision *d)
{
	for (size_t i = 0; i < d->n_writeback; i++)
		memcpy((void *) (uintptr_t) d->writeback[i].addr, d->writeback[i].data,
		       d->writeback[i].len);
}

static bool all_bytes(const void *p, size_t len, unsigned char c)
{
	for (size_t i = 0; i < len; i++)
		if (((const unsigned char *) p)[i] != c)
			return false;
	return true;
}

#define ALIAS_NAME "/workspace/named.sock"

/* An unalias that knows one alias: the abstract name "\0sbx-alias-PID" stands for ALIAS_NAME */
static int unalias_calls;
static bool fake_unalias(const EmuRequest *req, struct sockaddr_un *addr, unsigned *len)
{
	char want[64];
	size_t n;

	(void) req;
	unalias_calls++;
	n = (size_t) snprintf(want, sizeof(want), "sbx-alias-%d", (int) getpid());
	if (*len != offsetof(struct sockaddr_un, sun_path) + 1 + n || addr->sun_path[0] ||
	    memcmp(addr->sun_path + 1, want, n) != 0)
		return false;
	memset(addr->sun_path, 0, sizeof(addr->sun_path));
	memcpy(addr->sun_path, ALIAS_NAME, sizeof(ALIAS_NAME));
	*len = (unsigned) (offsetof(struct sockaddr_un, sun_path) + sizeof(ALIAS_NAME));
	return true;
}

TEST(alias_state_is_the_runs_and_getsockname_answers_through_the_decision)
{
	Env *e = env_new();
	NetRuntime *a = NULL, *b = NULL;
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un u = {.sun_family = AF_UNIX}, out;
	socklen_t ul, out_len;
	int n;

	ASSERT_GE(fd, 0);
	n = snprintf(u.sun_path + 1, sizeof(u.sun_path) - 1, "sbx-alias-%d", (int) getpid());
	ul = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + (size_t) n);
	ASSERT_EQ(bind(fd, (struct sockaddr *) &u, ul), 0);
	ASSERT_EQ(net_runtime_start(&e->fx.policy, getpid(), NULL, &a), 0);
	ASSERT_EQ(net_runtime_start(&e->fx.policy, getpid(), NULL, &b), 0);
	if (a->own_sockets) {
		net_runtime_stop(a);
		net_runtime_stop(b);
		env_free(e);
		SKIP("pidfd_getfd refused: the handler cannot reach this process's socket");
	}
	e->fake.unix_names.unalias = fake_unalias;
	/* run a bound a socket under an alias (bind_alias() sets this), run b did not */
	atomic_store(&a->any_unix_alias, true);
	unalias_calls = 0;

	/* b: its own state says no alias, so the kernel answers; a's flag is not b's */
	e->fake.net = b;
	memset(&out, 0xAA, sizeof(out));
	out_len = sizeof(out);
	ASSERT_EQ(run(e, net_handle_sockname, SYS_getsockname, true, (uint64_t) fd, A(&out),
		      A(&out_len)),
		  0);
	EXPECT_EQ(e->d.verdict, EMU_CONTINUE);
	EXPECT_EQ(e->d.n_writeback, 0);
	EXPECT_EQ(unalias_calls, 0);
	EXPECT_FALSE(atomic_load(&b->any_unix_alias));

	/* a: the alias becomes the bound name, in the decision only */
	e->fake.net = a;
	ASSERT_EQ(run(e, net_handle_sockname, SYS_getsockname, true, (uint64_t) fd, A(&out),
		      A(&out_len)),
		  0);
	EXPECT_EQ(unalias_calls, 1);
	EXPECT_EQ(e->d.verdict, EMU_RETURN);
	EXPECT_EQ(e->d.val, 0);
	/* the handler wrote nothing into the "child" (this process): its buffers are as they
	 * were, and the answer is in the write-backs tracer/dispatch.c makes */
	EXPECT_TRUE(all_bytes(&out, sizeof(out), 0xAA));
	EXPECT_EQ(out_len, sizeof(out));
	ASSERT_EQ(e->d.n_writeback, 2);
	EXPECT_EQ(e->d.writeback[0].addr, A(&out));
	EXPECT_EQ(e->d.writeback[0].len,
		  offsetof(struct sockaddr_un, sun_path) + sizeof(ALIAS_NAME));
	EXPECT_EQ(e->d.writeback[1].addr, A(&out_len));
	EXPECT_EQ(e->d.writeback[1].len, sizeof(socklen_t));
	apply_writebacks(&e->d);
	EXPECT_EQ(out.sun_family, AF_UNIX);
	EXPECT_STREQ(out.sun_path, ALIAS_NAME);
	EXPECT_EQ(out_len, offsetof(struct sockaddr_un, sun_path) + sizeof(ALIAS_NAME));

	/* a caller's buffer shorter than the name: cut to it, the full length answered */
	memset(&out, 0xAA, sizeof(out));
	out_len = 6;
	ASSERT_EQ(run(e, net_handle_sockname, SYS_getpeername, true, (uint64_t) fd, A(&out),
		      A(&out_len)),
		  0);
	/* getpeername of an unconnected datagram socket: the kernel's ENOTCONN, left to it */
	EXPECT_EQ(e->d.verdict, EMU_CONTINUE);
	EXPECT_EQ(e->d.n_writeback, 0);
	ASSERT_EQ(run(e, net_handle_sockname, SYS_getsockname, true, (uint64_t) fd, A(&out),
		      A(&out_len)),
		  0);
	ASSERT_EQ(e->d.n_writeback, 2);
	EXPECT_EQ(e->d.writeback[0].len, 6);
	apply_writebacks(&e->d);
	EXPECT_EQ(out_len, offsetof(struct sockaddr_un, sun_path) + sizeof(ALIAS_NAME));
	EXPECT_TRUE(all_bytes((const char *) &out + 6, sizeof(out) - 6, 0xAA));

	net_runtime_stop(a);
	net_runtime_stop(b);
	env_free(e);
}

TEST(recvfrom_of_a_redirected_socket_answers_through_the_decision)
{
	Env *e = env_new();
	NetRuntime *rt = NULL;
	_cleanup_close_ int rfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	_cleanup_close_ int sfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in lo = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_in resolver = {.sin_family = AF_INET, .sin_port = htons(53)};
	struct sockaddr_in rfd_addr, sfd_addr, from;
	socklen_t l = sizeof(rfd_addr), from_len;
	/* larger than the decision's scratch: the datagram goes into a buffer it owns */
	static unsigned char msg[10000], got[20000];
	struct stat st;
	const uint64_t args[6] = {(uint64_t) rfd, A(got), sizeof(got), 0, A(&from), A(&from_len)};

	ASSERT_GE(rfd, 0);
	ASSERT_GE(sfd, 0);
	ASSERT_EQ(bind(rfd, (struct sockaddr *) &lo, sizeof(lo)), 0);
	ASSERT_EQ(getsockname(rfd, (struct sockaddr *) &rfd_addr, &l), 0);
	ASSERT_EQ(bind(sfd, (struct sockaddr *) &lo, sizeof(lo)), 0);
	l = sizeof(sfd_addr);
	ASSERT_EQ(getsockname(sfd, (struct sockaddr *) &sfd_addr, &l), 0);
	ASSERT_EQ(net_runtime_start(&e->fx.policy, getpid(), NULL, &rt), 0);
	if (rt->own_sockets) {
		net_runtime_stop(rt);
		env_free(e);
		SKIP("pidfd_getfd refused: the handler cannot reach this process's socket");
	}
	/* the socket was redirected to the stub when it sent to 192.0.2.53:53 */
	resolver.sin_addr.s_addr = htonl(0xC0000235);
	ASSERT_EQ(fstat(rfd, &st), 0);
	net_redirect_add(rt, st.st_dev, st.st_ino, &resolver, sizeof(resolver));
	e->fake.net = rt;
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (unsigned char) (i * 7);
	ASSERT_EQ(sendto(sfd, msg, sizeof(msg), 0, (struct sockaddr *) &rfd_addr, sizeof(rfd_addr)),
		  (ssize_t) sizeof(msg));

	memset(got, 0xAA, sizeof(got));
	memset(&from, 0xAA, sizeof(from));
	from_len = sizeof(from);
	ASSERT_EQ(run_args(e, net_handle_recvfrom, SYS_recvfrom, true, args), 0);
	EXPECT_EQ(e->d.verdict, EMU_RETURN);
	EXPECT_EQ(e->d.val, (int64_t) sizeof(msg));
	/* received by the supervisor, and nothing of it in the "child" yet */
	EXPECT_TRUE(all_bytes(got, sizeof(got), 0xAA));
	EXPECT_TRUE(all_bytes(&from, sizeof(from), 0xAA));
	EXPECT_EQ(from_len, sizeof(from));
	ASSERT_EQ(e->d.n_writeback, 3);
	EXPECT_EQ(e->d.writeback[0].addr, A(got));
	EXPECT_EQ(e->d.writeback[0].len, sizeof(msg));
	EXPECT_TRUE(e->d.heap != NULL && e->d.writeback[0].data == e->d.heap);
	EXPECT_EQ(e->d.writeback[1].addr, A(&from));
	EXPECT_EQ(e->d.writeback[2].addr, A(&from_len));
	apply_writebacks(&e->d);
	EXPECT_EQ(memcmp(got, msg, sizeof(msg)), 0);
	EXPECT_TRUE(all_bytes(got + sizeof(msg), sizeof(got) - sizeof(msg), 0xAA));
	/* the sender (not the stub here: its address would become the resolver's) */
	EXPECT_EQ(from_len, sizeof(struct sockaddr_in));
	EXPECT_EQ(from.sin_port, sfd_addr.sin_port);
	EXPECT_EQ(from.sin_addr.s_addr, sfd_addr.sin_addr.s_addr);
	emu_decision_release(&e->d);
	EXPECT_TRUE(e->d.heap == NULL);
	EXPECT_EQ(e->d.n_writeback, 0);

	/* the same socket in another run: not redirected there, so the kernel receives */
	{
		NetRuntime *other = NULL;

		ASSERT_EQ(net_runtime_start(&e->fx.policy, getpid(), NULL, &other), 0);
		e->fake.net = other;
		ASSERT_EQ(run_args(e, net_handle_recvfrom, SYS_recvfrom, true, args), 0);
		EXPECT_EQ(e->d.verdict, EMU_CONTINUE);
		EXPECT_EQ(e->d.n_writeback, 0);
		net_runtime_stop(other);
	}
	net_runtime_stop(rt);
	env_free(e);
}

/* sendmmsg whose second entry's msg_len lies on an unmapped page: the kernel sends both
 * messages and answers 1 (the count it could report); the handler must answer the same,
 * with the first msg_len as its one write-back, not EFAULT. */
static struct mmsghdr *mmsg_with_unmapped_second_len(struct iovec *iov)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *p = mmap(NULL, (size_t) page * 2, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct mmsghdr *v;

	if (p == MAP_FAILED || munmap(p + page, (size_t) page) < 0)
		return NULL;
	/* entry 1's msghdr ends where the page ends: its msg_len is beyond */
	v = (struct mmsghdr *) (p + page - offsetof(struct mmsghdr, msg_len) - sizeof(*v));
	memset(v, 0, sizeof(*v) + offsetof(struct mmsghdr, msg_len));
	for (int i = 0; i < 2; i++) {
		v[i].msg_hdr.msg_iov = &iov[i];
		v[i].msg_hdr.msg_iovlen = 1;
	}
	return v;
}

TEST(sendmmsg_counts_what_it_can_report)
{
	Env *e = env_new();
	NetRuntime *rt = NULL;
	_cleanup_close_ int rfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	_cleanup_close_ int sfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in lo = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct iovec iov[2] = {{(void *) "one", 3}, {(void *) "two", 3}};
	socklen_t l = sizeof(lo);
	struct mmsghdr *v;

	ASSERT_GE(rfd, 0);
	ASSERT_GE(sfd, 0);
	ASSERT_EQ(bind(rfd, (struct sockaddr *) &lo, sizeof(lo)), 0);
	ASSERT_EQ(getsockname(rfd, (struct sockaddr *) &lo, &l), 0);
	ASSERT_EQ(connect(sfd, (struct sockaddr *) &lo, sizeof(lo)), 0);
	v = mmsg_with_unmapped_second_len(iov);
	ASSERT_TRUE(v != NULL);
	/* natively */
	EXPECT_EQ(sendmmsg(sfd, v, 2, 0), 1);
	EXPECT_EQ(v[0].msg_len, 3u);
	ASSERT_EQ(net_runtime_start(&e->fx.policy, getpid(), NULL, &rt), 0);
	if (rt->own_sockets) {
		net_runtime_stop(rt);
		env_free(e);
		SKIP("pidfd_getfd refused: the handler cannot reach this process's socket");
	}
	e->fake.net = rt;
	v[0].msg_len = 0;
	ASSERT_EQ(run(e, net_handle_sendmmsg, SYS_sendmmsg, true, (uint64_t) sfd, A(v), 2), 0);
	EXPECT_EQ(e->d.verdict, EMU_RETURN);
	EXPECT_EQ(e->d.val, 1);
	ASSERT_EQ(e->d.n_writeback, 1);
	EXPECT_EQ(e->d.writeback[0].addr, A(&v[0].msg_len));
	apply_writebacks(&e->d);
	EXPECT_EQ(v[0].msg_len, 3u);
	emu_decision_release(&e->d);
	net_runtime_stop(rt);
	env_free(e);
}

/* The DNS stub has no sockets until a query is redirected to it: then the handler makes
 * them and starts its thread before the child's call goes on (else the query would wait
 * for a thread nobody started), the socket is connected to the stub, and from then on the
 * stub's address is its own (a later connect that names it directly is recognized). */
TEST(a_redirected_query_makes_the_stub_and_its_thread_first)
{
	Env *e = env_new();
	NetRuntime *rt = NULL;
	_cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in resolver = {
		.sin_family = AF_INET, .sin_port = htons(53), .sin_addr.s_addr = htonl(0xC0000235)};
	struct sockaddr_in peer;
	socklen_t l = sizeof(peer);

	ASSERT_GE(fd, 0);
	e->fx.policy.network.mode = NET_MODE_LOOPBACK;
	ASSERT_EQ(net_runtime_start(&e->fx.policy, getpid(), NULL, &rt), 0);
	if (rt->own_sockets || !rt->stub_running) {
		net_runtime_stop(rt);
		env_free(e);
		SKIP("no stub, or pidfd_getfd refused: the handler cannot reach this socket");
	}
	/* the child believes in 192.0.2.53:53 */
	ASSERT_EQ(net_sockaddr_decode((struct sockaddr_storage *) &resolver, sizeof(resolver),
				      &rt->resolvers[0]),
		  0);
	rt->n_resolvers = 1;
	e->fake.net = rt;
	EXPECT_FALSE(atomic_load(&rt->stub_ready));
	EXPECT_TRUE(rt->stub_udp < 0 && rt->stub_tcp < 0);
	EXPECT_FALSE(rt->stub_thread_started);

	ASSERT_EQ(run(e, net_handle_connect, SYS_connect, true, (uint64_t) fd, A(&resolver),
		      sizeof(resolver)),
		  0);
	EXPECT_EQ(e->d.verdict, EMU_RETURN);
	EXPECT_EQ(e->d.val, 0);
	EXPECT_TRUE(atomic_load(&rt->stub_ready));
	EXPECT_TRUE(rt->stub_thread_started);
	ASSERT_EQ(getpeername(fd, (struct sockaddr *) &peer, &l), 0);
	EXPECT_EQ(peer.sin_port, rt->stub_udp_addr.sin_port);
	EXPECT_EQ(peer.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	EXPECT_TRUE(net_is_stub_addr(rt, (struct sockaddr *) &rt->stub_tcp_addr,
				     sizeof(rt->stub_tcp_addr)));
	EXPECT_FALSE(net_is_stub_addr(rt, (struct sockaddr *) &resolver, sizeof(resolver)));
	emu_decision_release(&e->d);
	net_runtime_stop(rt);
	env_free(e);
}

int main(void)
{
	return tap_run();
}
