/* SPDX-License-Identifier: MIT */
/*
 * tracer_run() in the supervisor (S), as a run state and its phases. The state is one Run
 * (tracer/run.h): what each phase leaves for the next. The phases, in order:
 *   prepare      the filter, the audit sink, backtraces, the view, the budgets, the
 *                command's environment and working directory, the sockets and pipes to W
 *                and C, and the kernel-view plan: all before anything forks;
 *   fork         the keeper (W), which forks the command (C, tracer/launch.c);
 *   start        the network runtime, the approval channel, our ends of the sockets and
 *                pipes, the receiver threads (which start while C sets itself up);
 *   handshake    C's pid once its view is made, the seize by the tracer thread, the
 *                listener, the kernel's essentials, and C's "go";
 *   the loop     tracer/loop.c, one function per event source, until the command has ended;
 *   finish       nothing of the tree survives, our threads stop, the exit code and the
 *                result.
 * A phase that fails returns < 0: before the fork, tracer_run() returns the error; after it,
 * the run goes straight to finish (exit code 125). Whatever phase the run stopped at,
 * run_done() undoes what was made, in one place, as tracer_run()'s cleanup.
 * The loop is a file of its own (tracer/loop.c) because it is the part that runs for the
 * whole life of the command, and the part each new event source changes.
 */
#include "tracer/run.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "audit/audit.h"
#include "common/log.h"
#include "common/missing-seccomp.h"
#include "common/util.h"
#include "emulation/path/view.h"
#include "net/handlers.h"
#include "net/shutdown.h"
#include "policy/policy.h"
#include "tracer/budget.h"

extern char **environ;

void tracer_result_done(TracerResult *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

static bool env_kept(const Policy *p, const char *entry)
{
	char name[256];
	const char *eq = strchr(entry, '=');
	size_t len = eq ? (size_t) (eq - entry) : strlen(entry);

	if (!p->process.env_keep || len >= sizeof(name))
		return false;
	memcpy(name, entry, len);
	name[len] = 0;
	for (char **k = p->process.env_keep; *k; k++)
		if (fnmatch(*k, name, 0) == 0)
			return true;
	return false;
}

static int build_env(const Policy *p, char ***ret_env)
{
	_cleanup_(strv_freep) char **env = NULL;

	for (char **e = environ; e && *e; e++)
		if (env_kept(p, *e) && strv_push(&env, *e) < 0)
			return -ENOMEM;
	for (char **s = p->process.env_set; s && *s; s++) {
		const char *eq = strchr(*s, '=');
		size_t len = eq ? (size_t) (eq - *s) + 1 : strlen(*s);

		/* replace an earlier entry of the same name */
		for (size_t i = 0; env && env[i]; i++)
			if (strncmp(env[i], *s, len) == 0) {
				free(env[i]);
				env[i] = env[strv_length(env) - 1];
				env[strv_length(env) - 1] = NULL;
				break;
			}
		if (strv_push(&env, *s) < 0)
			return -ENOMEM;
	}
	if (!env && strv_push(&env, "PATH=/usr/local/bin:/usr/bin:/bin") < 0)
		return -ENOMEM;
	*ret_env = TAKE_PTR(env);
	return 0;
}

/* The network ratchet dropped (net/runtime.c): its audit record. */
static void ratchet_event(void *userdata, pid_t pid, const char *path, Sensitivity level,
			  NetMode from, NetMode to, unsigned sockets_shut)
{
	Tracer *t = userdata;

	log_debug("network restricted from %s to %s: pid %d opened a %s path", net_mode_name(from),
		  net_mode_name(to), (int) pid, sensitivity_to_string(level));
	if (t->audit)
		audit_ratchet_event(t->audit, pid, path ? path : "", sensitivity_to_string(level),
				    net_mode_name(from), net_mode_name(to), sockets_shut);
}

/* Whether vpath names, in the view, a visible regular file we may execute. */
static bool view_executable(const SbxView *v, const char *vpath)
{
	_cleanup_(sbx_resolved_done) SbxResolved res = {.fd = -1, .parent_fd = -1};
	SbxLookup l = {.path = vpath, .dirfd = -1, .dir_vpath = "/", .flags = SBX_RESOLVE_FOLLOW};

	if (sbx_view_resolve(v, &l, &res) < 0 || !res.exists || res.type != S_IFREG ||
	    res.access == SBX_ACCESS_HIDDEN || res.access == SBX_ACCESS_DENIED)
		return false;
	if (faccessat(res.parent_fd, res.name, X_OK, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	return policy_exec_allowed(sbx_view_policy(v), res.vpath);
}

/*
 * A command name without '/': execvp() in C would try each directory of PATH in turn, and
 * each try is a notified execve (100-300 µs on this VM; `python3` is the fourth try of a
 * usual PATH). S looks it up in the view once instead, as execvp would: the first absolute
 * PATH entry where the name is a visible, executable regular file that [exec] allows. C then
 * execs that virtual path, checked as every execve is. Anything unusual (a relative or empty
 * PATH entry, nothing found) is left to execvp, for its exact search and errors.
 */
static char *lookup_command(const SbxView *v, char *const *envp, const char *name)
{
	const char *path = "/bin:/usr/bin"; /* execvp's default (confstr _CS_PATH) */
	char cand[PATH_MAX];

	if (!v || !name[0] || strchr(name, '/') || strlen(name) > NAME_MAX)
		return NULL;
	for (char *const *e = envp; e && *e; e++)
		if (strncmp(*e, "PATH=", 5) == 0)
			path = *e + 5;
	while (*path) {
		const char *end = strchrnul(path, ':');
		size_t len = (size_t) (end - path);

		if (len == 0 || path[0] != '/' || len + 1 + strlen(name) >= sizeof(cand))
			return NULL;
		snprintf(cand, sizeof(cand), "%.*s/%s", (int) len, path, name);
		if (view_executable(v, cand))
			return strdup(cand);
		path = *end ? end + 1 : end;
	}
	return NULL;
}

/* Waits for the keeper, then kills whatever of the tree came to us as orphans (if the keeper
 * died first, or a descendant escaped its last sweep). */
static void reap_keeper(pid_t keeper)
{
	while (waitpid(keeper, NULL, __WALL) < 0 && errno == EINTR)
		;
	tree_kill_all(getpid(), true);
}

/* ---- the run state ---- */

static void run_init(Run *run, const Policy *p, const TracerOptions *opts)
{
	*run = (Run){
		.p = p,
		.opts = opts,
		.t = {.policy = p, .opts = opts, .notify_fd = -1, .kill_eventfd = -1},
		.res = {.exit_code = EXIT_SANDBOX_ERROR_CODE, .net_mode_end = p->network.mode},
		.l = {.policy = p, .opts = opts, .out_w = -1, .err_w = -1, .sock_c = -1},
		.sp_c = {-1, -1},
		.sp_w = {-1, -1},
		.po = {-1, -1},
		.pe = {-1, -1},
		.old_umask = (mode_t) -1,
		.sock_c = -1,
		.sock_w = -1,
		.notify_fd = -1,
		.epfd = -1,
		.sfd = -1,
		.wall_tfd = -1,
		.grace_tfd = -1,
		.budget_tfd = -1,
		.disk_quiet_tfd = -1,
		.out = {.fd = -1, .relay_fd = -1},
		.err = {.fd = -1, .relay_fd = -1},
	};
	tracer_host_init(&run->t);
}

static void close_pair(int fds[2])
{
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0) {
			(void) close(fds[i]);
			fds[i] = -1;
		}
}

/* tracer_run()'s one unwind path (its cleanup), whatever phase the run stopped at: what was
 * made for the launch, then the supervisor's parts, and the loop's descriptors last, among
 * them the keeper's socket. */
static void run_done(Run *run)
{
	Tracer *t = &run->t;

	if (!t->filter)
		return; /* the first step failed: nothing else was made */
	/* before the fork, or a fork that failed: both ends (after it they are taken) */
	close_pair(run->sp_c);
	close_pair(run->sp_w);
	close_pair(run->po);
	close_pair(run->pe);
	if (t->kill_eventfd >= 0)
		(void) close(t->kill_eventfd);
	strv_free(run->envp);
	free(run->cwd);
	free(run->exec_path);
	tracer_kview_free(run->kview);
	if (run->old_umask != (mode_t) -1)
		(void) umask(run->old_umask);
	/* ended before C was ready: the view was never known */
	if (!run->start_recorded)
		audit_run_start(run->opts->audit, run->p->path, run->opts->argv, NULL,
				run->res.view_reason);
	tracer_audit_done(t);
	tracer_bt_done(t);
	tracer_fs_done(t);
	if (t->budget)
		budget_done(t->budget);
	tracer_filter_free(t->filter);
	/* After a status we have read, the keeper removes the scratch directories when its
	 * socket closes: here, at our return, so that the removal does not compete with our
	 * last work (run_stop()). */
	for (int *fd = (int[]){run->disk_quiet_tfd, run->budget_tfd, run->epfd, run->grace_tfd,
			       run->wall_tfd, run->sfd, run->sock_w, run->sock_c, -2};
	     *fd != -2; fd++)
		closep(fd);
}

/* ---- prepare: everything that is made before anything forks ---- */

static int prepare_supervisor(Run *run)
{
	struct seccomp_notif_sizes sizes = {};
	const Policy *p = run->p;
	Tracer *t = &run->t;
	int r;

	/* C runs with S's credentials (it is our fork) */
	r = tracer_filter_prepare(p, geteuid(), getegid(), &t->filter);
	if (r < 0)
		return log_error_errno(r, "building the seccomp filter");
	r = tracer_audit_setup(t);
	if (r < 0)
		return log_error_errno(r, "starting the audit trace");
	r = tracer_bt_setup(t);
	if (r < 0)
		return log_error_errno(r, "preparing backtraces");
	wall_trace("S setup: the view");
	r = tracer_fs_setup(t, p);
	if (r < 0)
		return r;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
		return log_error_errno(-errno,
				       "seccomp user notification is unavailable (Linux 5.0)");
	t->notif_size = MAX((size_t) sizes.seccomp_notif, sizeof(struct seccomp_notif));
	t->resp_size = MAX((size_t) sizes.seccomp_notif_resp, sizeof(struct seccomp_notif_resp));

	/* this line and "S forking the keeper" time tests/security/kview-bind-swap.c's attack */
	wall_trace("S setup: the budgets");
	r = budget_init(&run->budget, p, t->view, true);
	if (r < 0) {
		budget_done(&run->budget);
		return r;
	}
	t->budget = &run->budget;
	run->l.budget = &run->budget;
	return 0;
}

/* The command's environment and working directory, and the sockets and pipes to W and C. */
static int prepare_channels(Run *run)
{
	const Policy *p = run->p;
	int r;

	/* Without --json the output goes straight to our stdout and stderr; an output limit
	 * needs it to pass through us. */
	run->relay_output = !run->opts->capture && p->limits.output != LIMIT_UNSET;

	r = build_env(p, &run->envp);
	if (r < 0)
		return r;
	run->cwd = tracer_fs_host_cwd(&run->t, p);
	if (!run->cwd)
		return log_error_errno(-ENOMEM, "out of memory");

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, run->sp_c) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, run->sp_w) < 0)
		return log_error_errno(-errno, "socketpair");
	if (run->opts->capture || run->relay_output) {
		if (pipe2(run->po, O_CLOEXEC) < 0 || pipe2(run->pe, O_CLOEXEC) < 0)
			return log_error_errno(-errno, "pipe");
		run->l.out_w = run->po[1];
		run->l.err_w = run->pe[1];
	}
	run->t.kill_eventfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (run->t.kill_eventfd < 0)
		return log_error_errno(-errno, "eventfd");
	return 0;
}

/*
 * The filter programs C may install, and no other: a build is about 50 µs of the start's
 * path with a cold cache, and a run with the view in the kernel used one program of the
 * six it built (docs/performance.md, "A new VM", "Fewer programs"). The emulated view's
 * when the view is emulated, and for "auto"'s way back to it when C can make no user
 * namespace (child_enter_kview() in tracer/launch.c); `true` fails there instead. The
 * kernel view's when it is planned, those for a pid namespace when it has one. C picks
 * among these by what it could make (tracer_filter_install()), and a program it would pick
 * that was not built is NULL there: C fails with ENOEXEC ("seccomp filter") rather than
 * run unfiltered.
 */
static unsigned launch_programs(const Policy *p, const KView *kview)
{
	unsigned which = 0;

	if (!kview || p->kernel_view != TRI_ON)
		which |= TRACER_PROGS_EMULATED;
	if (kview)
		which |= TRACER_PROGS_KVIEW | (kview->n_procs ? TRACER_PROGS_PIDNS : 0);
	return which;
}

/* Whether the view goes in the kernel, and the rest of C's plan. */
static int prepare_launch(Run *run)
{
	const Policy *p = run->p;
	TracerResult *res = &run->res;
	Tracer *t = &run->t;
	Launch *l = &run->l;
	int r;

	wall_trace("S setup: the kernel-view plan");
	/* the decision `sbxtrace check` reports too (tracer_kview_verdict) */
	r = tracer_kview_qualify(p, t->view, t->audit != NULL, &run->kview, res->view_reason,
				 sizeof(res->view_reason));
	if (r < 0) {
		log_error("%s", res->view_reason);
		return r;
	}
	if (r == 0 && p->kernel_view == TRI_ON) {
		log_error("tracer.kernel_view = true, but %s", res->view_reason);
		return -EINVAL;
	}
	if (r == 0)
		log_debug("the view is emulated: %s", res->view_reason);
	r = tracer_filter_programs(t->filter, p, launch_programs(p, run->kview));
	if (r < 0)
		return log_error_errno(r, "building the seccomp filter");
	l->kview = run->kview;
	l->filter = t->filter;
	l->view = t->view;
	l->envp = run->envp;
	l->cwd = run->cwd;
	run->exec_path = lookup_command(t->view, run->envp, run->opts->argv[0]);
	l->exec_path = run->exec_path;
	/* network.unshare: with mode none ("auto" too), or true with mode loopback, where lo
	 * comes up (policy validation refuses true with the other modes) */
	l->netns = p->network.mode == NET_MODE_NONE ? p->network.unshare_netns : 0;
	if (p->network.mode == NET_MODE_LOOPBACK && p->network.unshare_netns > 0)
		l->netns = 1;
	l->netns_lo = p->network.mode == NET_MODE_LOOPBACK && l->netns > 0;
	l->tty = isatty(STDIN_FILENO) == 1;
	l->wait_killable = true;
	l->courier = !pidfd_getfd_usable();
	l->landlock_abi = tracer_landlock_abi();
	/* the emulated view's opens made by the kernel after the checks, where Landlock holds
	 * exactly the view (emulation/fs-open.c); set before the receiver starts */
	run->opens_why = run->kview ? "the view was planned in the kernel: the emulated view it "
				      "fell back to keeps every open in the supervisor"
				    : tracer_landlock_exact_why(p, t->view, l->landlock_abi);
	t->host.landlock_exact = !run->opens_why;
	l->sock_c = run->sp_c[1];
	return 0;
}

static int run_prepare(Run *run)
{
	int r;

	r = prepare_supervisor(run);
	if (r < 0)
		return r;
	r = prepare_channels(run);
	if (r < 0)
		return r;
	return prepare_launch(run);
}

/* ---- fork: the keeper, which forks the command ---- */

/*
 * W's CPU. A new process is queued where the kernel's fork balancing puts it, and on the
 * 2-core VM that was S's own CPU in about half the starts: W then waited for S to block,
 * 0.38 ms (median), while S did its work after the fork (the skeleton's files, the disk
 * budget's baseline), against 0.04 ms when it was put on the other CPU; and W, then C, is
 * the start's longer path (docs/performance.md, "The keeper's CPU"). So S moves W, still
 * queued, to the CPUs it may use but the one S runs on. Both take the caller's CPUs back
 * (keeper_cpus_restore() in tracer/launch.c): C first thing, whichever mask it inherited
 * from W, and W once C has exec'd, which is after S's "go" and so after this move. Affinity
 * only: nothing decided depends on it. With a single CPU allowed there is nowhere to move W.
 */
static void plan_keeper_cpu(Launch *l)
{
	int cpu = sched_getcpu();

	l->keeper_moved = false;
	if (cpu < 0 || cpu >= CPU_SETSIZE ||
	    sched_getaffinity(0, sizeof(l->caller_cpus), &l->caller_cpus) < 0 ||
	    !CPU_ISSET(cpu, &l->caller_cpus) || CPU_COUNT(&l->caller_cpus) < 2)
		return;
	l->keeper_moved = true; /* before the fork: W and C read their copy */
}

static void move_keeper(const Launch *l, pid_t keeper)
{
	cpu_set_t other;
	int cpu = sched_getcpu();

	if (!l->keeper_moved || cpu < 0 || cpu >= CPU_SETSIZE)
		return;
	other = l->caller_cpus;
	CPU_CLR(cpu, &other);
	if (CPU_COUNT(&other) > 0)
		(void) sched_setaffinity(keeper, sizeof(other), &other);
}

static int run_fork_keeper(Run *run)
{
	pid_t keeper;
	int r;

	/* Orphans come to us if the keeper dies; then we kill them. */
	(void) prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* Not dumpable: the sandboxed processes run as our user, and /proc/PID/mem, fd/ and
	 * ptrace of a dumpable process of the same user would hand them the supervisor (its
	 * memory, its listener). W inherits this; C's exec makes the command dumpable again,
	 * which our process_vm_readv of it needs. */
	(void) prctl(PR_SET_DUMPABLE, 0);

	/* Signals are read from a signalfd; the mask is inherited by W, which resets it. */
	sigemptyset(&run->ss);
	sigaddset(&run->ss, SIGINT);
	sigaddset(&run->ss, SIGTERM);
	sigaddset(&run->ss, SIGHUP);
	sigaddset(&run->ss, SIGQUIT);
	sigaddset(&run->ss, SIGUSR1);
	sigaddset(&run->ss, SIGUSR2);
	sigaddset(&run->ss, SIGWINCH);
	sigaddset(&run->ss, SIGCHLD);
	sigaddset(&run->ss, SIGTTOU);
	sigprocmask(SIG_BLOCK, &run->ss, &run->old_mask);

	plan_keeper_cpu(&run->l);
	wall_trace("S forking the keeper");
	keeper = fork();
	if (keeper < 0) {
		r = log_error_errno(-errno, "fork");
		sigprocmask(SIG_SETMASK, &run->old_mask, NULL);
		return r;
	}
	if (keeper == 0) {
		(void) close(run->sp_c[0]);
		(void) close(run->sp_w[0]);
		if (run->po[0] >= 0) {
			(void) close(run->po[0]);
			(void) close(run->pe[0]);
		}
		tracer_keeper_main(&run->l, run->sp_w[1], getppid());
	}
	move_keeper(&run->l, keeper);
	run->t.keeper = keeper;
	/* first: C needs them after its user namespace and the binds above them (a mkdir in
	 * /tmp cost C 30 µs each on the 2-core VM, whose ext4 has no journal) */
	tracer_kview_make_points(run->kview);
	return 0;
}

/* ---- start: what S needs before C can ask anything ---- */

/* Our ends of the sockets and the capture pipes; W and C have theirs. */
static void take_our_ends(Run *run)
{
	run->sock_c = TAKE_FD(run->sp_c[0]);
	run->sock_w = TAKE_FD(run->sp_w[0]);
	close_pair(run->sp_c);
	close_pair(run->sp_w);
	if (run->po[0] >= 0) {
		run->out.fd = TAKE_FD(run->po[0]);
		run->err.fd = TAKE_FD(run->pe[0]);
		close_pair(run->po);
		close_pair(run->pe);
		(void) fcntl(run->out.fd, F_SETFL, O_NONBLOCK);
		(void) fcntl(run->err.fd, F_SETFL, O_NONBLOCK);
		if (run->relay_output) {
			run->out.relay_fd = STDOUT_FILENO;
			run->err.relay_fd = STDERR_FILENO;
			/* a closed stdout of ours must not kill the supervisor */
			(void) signal(SIGPIPE, SIG_IGN);
		}
	}
}

static int run_start(Run *run)
{
	Tracer *t = &run->t;
	int r;

	/* the network state (DNS stub, ratchet) before anything of the command can ask */
	r = net_runtime_start(run->p, t->keeper, tree_walk, &t->net);
	if (r < 0)
		log_error_errno(r, "starting the network supervision");
	else {
		net_runtime_set_event(t->net, ratchet_event, t);
		/* without network.unshare the tree is in our network namespace for good (the
		 * filter denies unshare and setns) */
		net_runtime_set_netns_private(t->net, run->l.netns != 0);
		r = tracer_ask_start(t);
		if (r < 0)
			log_error_errno(r, "starting the approval channel of held calls");
	}
	/*
	 * What neither W nor C needs, moved after the fork so that it runs while C sets itself
	 * up (C's namespaces, Landlock, filter: 0.4-1 ms on the 2-core VM, during which S only
	 * waited; docs/performance.md, "Startup against bubblewrap"): the skeleton's files (the
	 * directories are made, and the kernel view binds and Landlock rules are on those) and
	 * the disk budget's baseline walk (the keeper already shares its inotify instance).
	 * Both are done before "go", and nothing of the tree runs code of its own before it.
	 * The mount points of mounts nested in a tmp mount are made before the walk
	 * (tracer_kview_make_points()); one C has to make itself (ours failed) is counted in
	 * the baseline or not, and is watched either way (IN_CREATE): a few blocks of slack.
	 * Before the umask below, as they were made before.
	 */
	if (r >= 0 && (r = tracer_fs_write_files(t)) >= 0)
		budget_disk_baseline(&run->budget);
	/* The handlers that create files apply the child's umask themselves (emulation/fs.h). */
	run->old_umask = umask(0);
	take_our_ends(run);
	run->tty_taken = run->l.tty;

	if (r < 0) {
		run->setup_errno = -r;
		return r;
	}
	return 0;
}

/* ---- handshake: C prepared, seized, its listener, "go" ---- */

/* C could not set itself up, or we could not take its listener: why, for the end. */
static int setup_failed(Run *run, int r, const Msg *m)
{
	if (m->kind == MSG_SETUP_FAILED) {
		run->setup_errno = m->value;
		snprintf(run->setup_what, sizeof(run->setup_what), "%s", m->what);
	} else
		run->setup_errno = -r;
	log_error("cannot set up the sandbox: %s: %s",
		  run->setup_what[0] ? run->setup_what : "listener", strerror(run->setup_errno));
	return r;
}

/* C's MSG_PREPARED: its pid, and whether it made the view in the kernel. */
static void command_prepared(Run *run, const Msg *m)
{
	const TracerOptions *opts = run->opts;
	TracerResult *res = &run->res;
	Tracer *t = &run->t;

	t->child = m->value;
	t->kview = m->what[0] != 0;
	t->pidns = t->kview && run->kview->n_procs > 0;
	res->pidns = t->pidns;
	if (run->kview && !t->kview) {
		/* planned, but C could not enter it ("auto"): a host that refuses this
		 * user a user namespace, a directory on stdin… */
		snprintf(res->view_reason, sizeof(res->view_reason),
			 "the kernel view could not be made here (%.46s: %s)", m->what + 2,
			 strerror((unsigned char) m->what[1]));
		/* there the mount points' ancestors in a tmp mount are read-only skeleton
		 * directories, not the ones made for the binds */
		tracer_kview_unmake_points(run->kview);
	}
	if (t->kview)
		/* relative AF_UNIX addresses: /proc/PID/cwd reads as the program's path */
		sbx_view_set_kernel_paths(t->view);
	res->file_opens = t->kview ? "kernel" : t->host.landlock_exact ? "checked" : "supervisor";
	if (!t->kview && run->opens_why)
		snprintf(res->file_opens_reason, sizeof(res->file_opens_reason), "%s",
			 run->opens_why);
	/* which program C loaded: the kernel view's carries the network's choice */
	bool net_kernel = t->filter->net_in_kernel || t->filter->net_full_in_kernel;

	res->net_in_kernel = t->kview && net_kernel;
	if (!net_kernel)
		snprintf(res->net_reason, sizeof(res->net_reason), "%s",
			 tracer_filter_net_calls_why(run->p, run->l.landlock_abi));
	else if (!t->kview)
		/* an AF_UNIX path must then be resolved by the supervisor, and the filter cannot
		 * tell it from an inet address; the same words as `check` */
		snprintf(res->net_reason, sizeof(res->net_reason), "the view is emulated: %.200s",
			 res->view_reason);
	log_debug("the view is %s", t->kview ? "in the kernel" : "emulated");
	/* the log's first record, now that the view is known */
	audit_run_start(opts->audit, run->p->path, opts->argv, t->kview ? "kernel" : "emulated",
			t->kview ? NULL : res->view_reason);
	run->start_recorded = true;
	audit_set_main_pid(t->audit, t->child);
	audit_process_start(t->audit, t->child, t->keeper, opts->argv);
}

/* The tracer thread could not seize C (r). C may have failed its setup meanwhile, unless
 * it has sent its listener already. */
static int seize_failed(Run *run, int r, bool listener_taken)
{
	Msg m2 = {};
	struct pollfd pf = {.fd = run->sock_c, .events = POLLIN};

	/* C may have failed its setup (a namespace the host refuses, issue 19):
	 * gone before the seize (ESRCH) or not yet dumpable (EPERM). Its
	 * reason, not ptrace's */
	if (!listener_taken && (r == -ESRCH || r == -EPERM) && poll(&pf, 1, 1000) > 0 &&
	    tracer_recv_msg(run->sock_c, MSG_CHILD_PID, &m2) < 0 && m2.kind == MSG_SETUP_FAILED)
		return setup_failed(run, -EPROTO, &m2);
	log_error("cannot trace the command (ptrace serves chdir into "
		  "translated mounts, the cpu_time, disk and tasks "
		  "budgets and backtraces; [tracer] ptrace = \"never\" "
		  "turns it off): %s",
		  strerror(-r));
	run->setup_errno = -r;
	return r;
}

/* C's listener, and the tracer thread's seize of C when the policy needs ptrace. < 0: the
 * run cannot go on, and setup_errno says why. */
static int take_listener(Run *run)
{
	Tracer *t = &run->t;
	Msg m = {};
	int r;

	/* the tracer thread seizes C while C goes on with its setup and we take its listener
	 * (the thread's start and our wait for it, mostly wake-ups across CPUs, were on the
	 * start's path: docs/performance.md); "go" waits for both. With a cpu_time budget it
	 * reports the end of every process of the tree (tracer/budget-cpu.c). */
	if (t->filter->ptrace)
		(void) budget_count_ends(&run->budget);
	if (t->filter->ptrace && (r = tracer_ptrace_start(t, t->child)) < 0)
		return seize_failed(run, r, false);
	r = tracer_recv_fd(run->sock_c, &run->notify_fd, &m);
	wall_trace("S listener received");
	if (r < 0)
		return setup_failed(run, r, &m);
	if (t->filter->ptrace && (r = tracer_ptrace_seized(t)) < 0)
		return seize_failed(run, r, true);
	/* read by the tracer thread at stops, all after C's exec, which follows "go" */
	atomic_store(&t->wait_killable, m.what[sizeof(int)] != 0);
	run->res.userns = m.what[sizeof(int) + 1] != 0;
	run->res.ipcns = m.what[sizeof(int) + 2] != 0;
	/* the memory budget counts SysV shared memory there (tracer/budget-shm.c);
	 * C is dumpable and has not exec'd yet */
	run->budget.ipc_private = run->res.ipcns;
	budget_shm_start(&run->budget, t->child);
	return 0;
}

/* Essentials the filter cannot prove by loading: ADDFD with SEND (5.14) and pidfds
 * (5.6). Flags are checked before the id, so ENOENT for a bogus id means "known". */
static int check_essentials(Run *run)
{
	struct seccomp_notif_addfd probe = {.id = 0, .flags = SECCOMP_ADDFD_FLAG_SEND};
	long pfd = syscall(SYS_pidfd_open, getpid(), 0);

	if (pfd >= 0)
		(void) close((int) pfd);
	if ((ioctl(run->notify_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &probe) < 0 && errno == EINVAL) ||
	    pfd < 0) {
		log_error("this kernel lacks %s; see 'sbxtrace doctor'",
			  pfd < 0 ? "pidfd_open (Linux 5.3)"
				  : "SECCOMP_ADDFD_FLAG_SEND (Linux 5.14)");
		run->setup_errno = ENOSYS;
		return -ENOSYS;
	}
	return 0;
}

static int run_handshake(Run *run)
{
	Tracer *t = &run->t;
	Msg m = {};
	int r;

	/* C's pid once its view is made, then the listener, or why it failed (W reports C's
	 * pid again once C has exec'd; the event loop ignores that) */
	r = tracer_recv_msg(run->sock_c, MSG_PREPARED, &m);
	wall_trace("S C prepared");
	if (r < 0)
		return setup_failed(run, r, &m);
	command_prepared(run, &m);
	r = take_listener(run);
	if (r < 0)
		return r;
	r = check_essentials(run);
	if (r < 0)
		return r;

	/* COMPAT: synchronous wake-up needs 6.6 */
	uint64_t fl = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
	t->sync_wakeup = ioctl(run->notify_fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, fl) == 0;

	if (send(run->sock_c, "g", 1, MSG_NOSIGNAL) != 1) {
		log_error("the command went away before it could start");
		return -EPIPE;
	}
	/* The receiver starts now: nothing of C is notified before "go" (its listener comes
	 * by number with a send() that runs in the kernel, or by its courier: tracer/launch.c),
	 * and the first notification (the emulated view's loader, after C's exec) waits in the
	 * listener's queue until the receiver is there. Its start (the thread, its arena, its
	 * warm stack: 0.1 ms on the 2-core VM) then overlaps C's exec; made before the
	 * handshake, it ran on our CPU while we waited for C's messages and put itself on the
	 * start's path (docs/performance.md). */
	r = tracer_dispatch_start(t);
	if (r < 0)
		return log_error_errno(r, "starting the receiver threads");
	run->started_dispatch = true;
	/* after the start, which initializes the lock this takes */
	tracer_dispatch_set_fd(t, run->notify_fd);
	return 0;
}

/* ---- finish ---- */

/* The tree first, then our threads, in this order. */
static void run_stop(Run *run)
{
	Tracer *t = &run->t;

	if (run->keeper_cleans)
		/* before the socket closes: the keeper's reference is then the last one */
		budget_disk_hand_over(&run->budget);
	/* Whatever happened, nothing of the tree survives us. */
	if (run->sock_w >= 0) {
		/* after the command's end the keeper has done it (tracer_keeper_main) */
		if (!run->keeper_gone && !run->child_done)
			tree_kill_all(t->keeper, false);
		/* After a status we have read, the keeper removes the scratch directories when
		 * this closes: at our return (its cleanup), so that the removal does not compete
		 * with our last work. Otherwise now: we may wait for the keeper below, and it
		 * for this. */
		if (!run->keeper_cleans) {
			(void) close(run->sock_w);
			run->sock_w = -1;
		}
	}
	/* C may still wait for a message of ours on its socket: a run that failed before the
	 * handshake (the approval socket refused, say) may have asked tree_kill_all() above
	 * before the keeper had made C. EOF ends C, and with it the keeper's vfork that
	 * reap_keeper() waits for; S waited for W, W for C and C for S, for good. */
	if (run->sock_c >= 0) {
		(void) close(run->sock_c);
		run->sock_c = -1;
	}
	if (run->keeper_gone) {
		/* orphans that came to us when the keeper died: tracees the tracer thread waits
		 * for below */
		reap_keeper(t->keeper);
	}
	/* the tracer thread ends when no tracee is left */
	wall_trace("S joining the tracer thread");
	tracer_ptrace_stop(t);
	wall_trace("S tracer thread joined");
	if (!run->res.duration_ms)
		run->res.duration_ms = (now_monotonic_ns() - run->start) / 1000000;

	tracer_ask_cancel(t);
	if (run->started_dispatch)
		tracer_dispatch_stop(t);
	wall_trace("S receivers stopped");
	tracer_ask_stop(t);
	/* a creation refused on a handler thread just before the end found the disk budget
	 * used up: the main loop may not have woken since, and its warning must not be lost */
	run_report_disk_full(t, &run->budget, run->p);
	run->res.net_mode_end = net_runtime_mode(t->net);
	run->res.net_level_max = net_runtime_level(t->net);
	/* the handlers that borrowed it are stopped */
	net_runtime_stop(TAKE_PTR(t->net));
	wall_trace("S network runtime stopped");
}

/* The keeper, the terminal and our signal mask, once our threads are stopped. */
static void run_release(Run *run)
{
	/* The keeper exits (an address space torn down) while we stopped our threads above;
	 * waiting for it only now keeps that off the critical path (docs/performance.md).
	 * After a status it has killed and reaped the tree already and removes the scratch
	 * directories: it is not waited for at all (init or a subreaper reaps it). */
	if (run->keeper_cleans)
		sbx_view_disown_scratch(run->t.view);
	else if (!run->keeper_gone)
		reap_keeper(run->t.keeper);
	if (run->tty_taken) {
		/* take the terminal back for our process group (SIGTTOU is blocked) */
		(void) tcsetpgrp(STDIN_FILENO, getpgrp());
	}
	if (run->sfd >= 0) {
		struct signalfd_siginfo si;

		while (read(run->sfd, &si, sizeof(si)) == sizeof(si))
			;
	}
	sigprocmask(SIG_SETMASK, &run->old_mask, NULL);
}

static void run_exit_code(Run *run)
{
	TracerResult *res = &run->res;
	int status = run->status;
	bool child_done = run->child_done;

	if (run->setup_errno) {
		if (run->exec_known && run->setup_what[0])
			log_error("cannot set up the sandbox: %s: %s", run->setup_what,
				  strerror(run->setup_errno));
		res->exit_code = EXIT_SANDBOX_ERROR_CODE;
	} else if (run->exec_errno) {
		log_error("cannot execute '%.200s': %s", run->opts->argv[0],
			  strerror(run->exec_errno));
		res->exit_code = run->exec_errno == ENOENT ? 127 : 126;
	} else if (res->timed_out) {
		res->exit_code = 124;
		if (child_done && WIFSIGNALED(status))
			res->signal = WTERMSIG(status);
	} else if (res->killed_by) {
		/* a budget (or a syscall the policy kills on): 128+SIGKILL whatever the command
		 * did with the SIGTERM (docs/budgets.md) */
		res->exit_code = 128 + SIGKILL;
		if (child_done && WIFSIGNALED(status))
			res->signal = WTERMSIG(status);
	} else if (child_done && WIFEXITED(status)) {
		res->exit_code = WEXITSTATUS(status);
	} else if (child_done && WIFSIGNALED(status)) {
		res->signal = WTERMSIG(status);
		res->exit_code = 128 + res->signal;
	} else {
		if (run->keeper_gone && !child_done)
			log_error("the keeper process died: the process tree was killed");
		res->exit_code = EXIT_SANDBOX_ERROR_CODE;
	}
}

/* The rest of the result: the layers in effect, the budgets' figures, the output. */
static void run_result(Run *run)
{
	const Policy *p = run->p;
	TracerResult *res = &run->res;
	const Budget *b = &run->budget;
	Tracer *t = &run->t;

	res->kernel_view = t->kview;
	if (t->kview)
		res->view_reason[0] = 0;
	else if (!res->view_reason[0])
		/* planned, but C could not make the user and mount namespace ("auto") */
		snprintf(res->view_reason, sizeof(res->view_reason),
			 "the user and mount namespace could not be made");
	res->landlock_abi =
		p->landlock != TRI_OFF && run->l.landlock_abi >= 1 ? run->l.landlock_abi : 0;
	res->ptrace = t->filter->ptrace;
	res->exec_events = t->filter->ptrace && tracer_ptrace_exec_why(p, t->kview);
	res->denied = atomic_load(&t->denied);
	res->usage_known = b->samples > 0 || p->limits.tasks != LIMIT_UNSET;
	res->cpu_time_ms = b->cpu_ms;
	res->memory_peak = b->memory_peak;
	res->tasks_peak = b->tasks_peak;
	res->disk_written = b->disk_peak;
	res->clones_denied = b->clones_denied;
	res->out = run->out.buf;
	res->out_len = run->out.len;
	res->out_truncated = run->out.truncated;
	res->err = run->err.buf;
	res->err_len = run->err.len;
	res->err_truncated = run->err.truncated;
	if (run->out.fd >= 0)
		(void) close(run->out.fd);
	if (run->err.fd >= 0)
		(void) close(run->err.fd);
	if (run->notify_fd >= 0)
		(void) close(run->notify_fd);
}

static void run_finish(Run *run)
{
	run_stop(run);
	run_release(run);
	run_exit_code(run);
	run_result(run);
}

int tracer_run(const Policy *p, const TracerOptions *opts, TracerResult *ret_result)
{
	_cleanup_(run_done) Run run;
	int r;

	run_init(&run, p, opts);
	run.start = now_monotonic_ns();
	wall_trace("S tracer_run");
	r = run_prepare(&run);
	if (r < 0)
		return r;
	r = run_fork_keeper(&run);
	if (r < 0)
		return r;
	/* from here on the run ends through run_finish(), and tracer_run() returns 0 */
	if (run_start(&run) >= 0 && run_handshake(&run) >= 0 && run_loop_setup(&run) >= 0)
		run_loop(&run);
	run_finish(&run);
	*ret_result = run.res;
	wall_trace("S tracer_run done: exit %d", run.res.exit_code);
	return 0;
}
