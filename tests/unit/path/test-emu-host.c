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
#include <fcntl.h>
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
	f->ratchet_tgid = req->tgid;
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
	fx_done(&e->fx, e->v);
	free(e);
}

/* Runs h for nr on behalf of this process, with the fake host (or none); returns h's value. */
static int run(Env *e, EmuHandler h, int nr, bool with_host, uint64_t a0, uint64_t a1, uint64_t a2)
{
	EmuRequest req = {
		.policy = &e->fx.policy,
		.view = e->v,
		.mem = &self_mem,
		.pid = getpid(),
		.tgid = getpid(),
		.nr = nr,
		.args = {a0, a1, a2},
		.host = with_host ? &e->fake.host : NULL,
	};

	if (e->d.inject_fd >= 0)
		(void) close(e->d.inject_fd);
	emu_decision_init(&e->d);
	return h(&req, &e->d);
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
		.tgid = getpid(),
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

int main(void)
{
	return tap_run();
}
