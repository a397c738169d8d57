/* SPDX-License-Identifier: MIT */
/* The approval board and its socket (common/approval-board.c): list, decide, timeout,
 * cancellation, stop, an unknown id, a second decision; and the socket's peer checks, with
 * this process (refused: it started the board) and a process that is not ours (answered);
 * and a peer whose pid number was handed to a stranger after it exited (refused). */
#include "tests/unit/tap.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/approval-board.h"
#include "common/util.h"

#define MS 1000000ull

static json_t *info_of(const char *id)
{
	return json_pack("{s:s, s:s}", "id", id, "tool", "connect");
}

static struct ucred me(void)
{
	return (struct ucred){.pid = 4242, .uid = geteuid(), .gid = getegid()};
}

static json_t *ask(ApprovalBoard *b, const char *fmt, ...)
{
	struct ucred cred = me();
	json_error_t err;
	json_t *req, *rep;
	va_list ap;

	va_start(ap, fmt);
	req = json_vpack_ex(&err, 0, fmt, ap);
	va_end(ap);
	if (!req)
		return NULL;
	rep = approval_board_handle(b, req, &cred);
	json_decref(req);
	return rep;
}

static bool ok_of(const json_t *rep)
{
	return json_is_true(json_object_get(rep, "ok"));
}

static const char *error_of(const json_t *rep)
{
	return json_string_value(json_object_get(rep, "error")) ?: "";
}

/* The pending list's ids, space-separated, in `out`. */
static const char *pending(ApprovalBoard *b, char *out, size_t size)
{
	json_t *rep = json_pack("{s:s}", "op", "list"), *list, *x;
	struct ucred cred = me();
	size_t i, n = 0;

	out[0] = 0;
	list = approval_board_handle(b, rep, &cred);
	json_decref(rep);
	json_array_foreach(json_object_get(list, "pending"), i, x) n +=
		(size_t) snprintf(out + n, size - n, "%s%s", n ? " " : "",
				  json_string_value(json_object_get(x, "id")) ?: "?");
	json_decref(list);
	return out;
}

TEST(list_shows_what_waits)
{
	ApprovalBoard *b = approval_board_new();
	ApprovalWaiter w1, w2;
	json_t *rep, *x;
	char ids[256];

	ASSERT_TRUE(b);
	EXPECT_EQ(strcmp(pending(b, ids, sizeof(ids)), ""), 0);
	ASSERT_EQ(approval_board_post(b, &w1, "apr_one", info_of("apr_one")), 0);
	ASSERT_EQ(approval_board_post(b, &w2, "apr_two", info_of("apr_two")), 0);
	rep = ask(b, "{s:s}", "op", "list");
	ASSERT_TRUE(rep);
	EXPECT_TRUE(ok_of(rep));
	EXPECT_EQ(json_array_size(json_object_get(rep, "pending")), 2);
	x = json_array_get(json_object_get(rep, "pending"), 0);
	/* the caller's info, and how long it has waited */
	EXPECT_TRUE(json_is_string(json_object_get(x, "tool")));
	EXPECT_TRUE(json_is_integer(json_object_get(x, "waited_s")));
	json_decref(rep);
	/* a deadline in the past: the wait ends at once and takes the waiter off */
	EXPECT_EQ(approval_board_wait(b, &w1, 0, NULL), APPROVAL_WAIT_TIMEOUT);
	EXPECT_EQ(strcmp(pending(b, ids, sizeof(ids)), "apr_two"), 0);
	EXPECT_EQ(approval_board_wait(b, &w2, 0, NULL), APPROVAL_WAIT_TIMEOUT);
	EXPECT_EQ(strcmp(pending(b, ids, sizeof(ids)), ""), 0);
	EXPECT_TRUE(w1.info == NULL && w2.info == NULL);
	approval_board_free(b);
}

TEST(decide_then_wait)
{
	ApprovalBoard *b = approval_board_new();
	ApprovalWaiter w;
	json_t *rep;
	char ids[256], want[160];

	ASSERT_TRUE(b);
	ASSERT_EQ(approval_board_post(b, &w, "apr_x", info_of("apr_x")), 0);
	rep = ask(b, "{s:s, s:s, s:s, s:s}", "op", "decide", "id", "apr_x", "decision",
		  "allow_session", "note", "fine by me");
	ASSERT_TRUE(rep);
	EXPECT_TRUE(ok_of(rep));
	EXPECT_EQ(strcmp(json_string_value(json_object_get(rep, "id")) ?: "", "apr_x"), 0);
	EXPECT_EQ(
		strcmp(json_string_value(json_object_get(rep, "decision")) ?: "", "allow_session"),
		0);
	json_decref(rep);
	/* decided: no longer pending, though not yet collected */
	EXPECT_EQ(strcmp(pending(b, ids, sizeof(ids)), ""), 0);
	/* a decision wins over a deadline that has passed too */
	EXPECT_EQ(approval_board_wait(b, &w, 0, NULL), APPROVAL_WAIT_DECIDED);
	EXPECT_EQ(w.decision, APPROVAL_ALLOW_SESSION);
	EXPECT_EQ(strcmp(w.note ?: "", "fine by me"), 0);
	snprintf(want, sizeof(want), "approval socket (uid %u ", (unsigned) geteuid());
	EXPECT_EQ(strncmp(w.decider, want, strlen(want)), 0);
	EXPECT_TRUE(strstr(w.decider, ", pid 4242)") != NULL);
	free(w.note);
	approval_board_free(b);
}

TEST(decide_twice_and_unknown_id)
{
	ApprovalBoard *b = approval_board_new();
	ApprovalWaiter w;
	json_t *rep;

	ASSERT_TRUE(b);
	ASSERT_EQ(approval_board_post(b, &w, "apr_y", info_of("apr_y")), 0);
	rep = ask(b, "{s:s, s:s, s:s}", "op", "decide", "id", "apr_nope", "decision", "deny");
	EXPECT_FALSE(ok_of(rep));
	EXPECT_TRUE(strstr(error_of(rep), "no pending approval request with that id"));
	json_decref(rep);
	rep = ask(b, "{s:s, s:s, s:s}", "op", "decide", "id", "apr_y", "decision", "deny");
	EXPECT_TRUE(ok_of(rep));
	json_decref(rep);
	/* the second decision is refused and changes nothing */
	rep = ask(b, "{s:s, s:s, s:s, s:s}", "op", "decide", "id", "apr_y", "decision",
		  "allow_once", "note", "too late");
	EXPECT_FALSE(ok_of(rep));
	EXPECT_TRUE(strstr(error_of(rep), "no pending approval request with that id"));
	json_decref(rep);
	EXPECT_EQ(approval_board_wait(b, &w, 0, NULL), APPROVAL_WAIT_DECIDED);
	EXPECT_EQ(w.decision, APPROVAL_DENY);
	EXPECT_TRUE(w.note == NULL);
	/* gone from the board: deciding it now is an unknown id */
	rep = ask(b, "{s:s, s:s, s:s}", "op", "decide", "id", "apr_y", "decision", "deny");
	EXPECT_FALSE(ok_of(rep));
	json_decref(rep);
	approval_board_free(b);
}

TEST(bad_requests)
{
	ApprovalBoard *b = approval_board_new();
	json_t *rep;

	ASSERT_TRUE(b);
	rep = ask(b, "{s:s, s:s}", "op", "decide", "id", "apr_z");
	EXPECT_FALSE(ok_of(rep));
	EXPECT_TRUE(strstr(error_of(rep), "decide needs id and decision"));
	json_decref(rep);
	rep = ask(b, "{s:s, s:s, s:s}", "op", "decide", "id", "apr_z", "decision", "maybe");
	EXPECT_FALSE(ok_of(rep));
	EXPECT_TRUE(strstr(error_of(rep), "decide needs id and decision"));
	json_decref(rep);
	rep = ask(b, "{s:s}", "op", "remove");
	EXPECT_FALSE(ok_of(rep));
	EXPECT_EQ(strcmp(error_of(rep), "unknown op (list, decide)"), 0);
	json_decref(rep);
	approval_board_free(b);
}

TEST(timeout)
{
	ApprovalBoard *b = approval_board_new();
	ApprovalWaiter w;
	uint64_t t0 = now_monotonic_ns();

	ASSERT_TRUE(b);
	ASSERT_EQ(approval_board_post(b, &w, "apr_t", info_of("apr_t")), 0);
	EXPECT_EQ(approval_board_wait(b, &w, t0 + 50 * MS, NULL), APPROVAL_WAIT_TIMEOUT);
	EXPECT_GE(now_monotonic_ns(), t0 + 50 * MS); /* not before the deadline */
	EXPECT_EQ(w.decision, APPROVAL_NONE);
	approval_board_free(b);
}

/* ---- a waiter on a thread of its own, as a tool call or a tracer worker is ---- */

typedef struct Waiting {
	ApprovalBoard *b;
	ApprovalWaiter w;
	ApprovalWaitHooks hooks;
	bool use_hooks;
	ApprovalWait end;
	atomic_bool abort_now;
	atomic_int beats;
} Waiting;

static void *waiting_thread(void *userdata)
{
	Waiting *x = userdata;

	x->end = approval_board_wait(x->b, &x->w, now_monotonic_ns() + 30000 * MS,
				     x->use_hooks ? &x->hooks : NULL);
	return NULL;
}

static bool aborted(void *userdata)
{
	Waiting *x = userdata;

	return atomic_load(&x->abort_now);
}

static void beat(void *userdata, uint64_t waited_ns)
{
	Waiting *x = userdata;

	(void) waited_ns;
	atomic_fetch_add(&x->beats, 1);
}

static int start_waiting(Waiting *x, const char *id, pthread_t *ret)
{
	int r = approval_board_post(x->b, &x->w, id, info_of(id));

	return r < 0 ? r : -pthread_create(ret, NULL, waiting_thread, x);
}

TEST(decide_wakes_the_waiter)
{
	Waiting x = {.b = approval_board_new()};
	pthread_t th;
	json_t *rep;

	ASSERT_TRUE(x.b);
	ASSERT_EQ(start_waiting(&x, "apr_w", &th), 0);
	rep = ask(x.b, "{s:s, s:s, s:s}", "op", "decide", "id", "apr_w", "decision", "allow_once");
	EXPECT_TRUE(ok_of(rep));
	json_decref(rep);
	pthread_join(th, NULL);
	EXPECT_EQ(x.end, APPROVAL_WAIT_DECIDED);
	EXPECT_EQ(x.w.decision, APPROVAL_ALLOW_ONCE);
	approval_board_free(x.b);
}

TEST(cancel)
{
	Waiting x = {.b = approval_board_new()};
	pthread_t th;
	char ids[256];

	ASSERT_TRUE(x.b);
	ASSERT_EQ(start_waiting(&x, "apr_c", &th), 0);
	approval_board_cancel(x.b, &x.w);
	pthread_join(th, NULL);
	EXPECT_EQ(x.end, APPROVAL_WAIT_CANCELLED);
	EXPECT_EQ(strcmp(pending(x.b, ids, sizeof(ids)), ""), 0);
	/* a cancel after the wait ended (the MCP call's, racing the decision) is harmless */
	approval_board_cancel(x.b, &x.w);
	approval_board_free(x.b);
}

TEST(aborted_hook_and_wake)
{
	Waiting x = {.b = approval_board_new(), .use_hooks = true};
	pthread_t th;

	ASSERT_TRUE(x.b);
	x.hooks = (ApprovalWaitHooks){
		.aborted = aborted, .beat = beat, .beat_ns = 1 * MS, .userdata = &x};
	ASSERT_EQ(start_waiting(&x, "apr_a", &th), 0);
	/* let it beat at least once: the beat runs without the lock, the wait goes on */
	while (atomic_load(&x.beats) < 2)
		usleep(1000);
	atomic_store(&x.abort_now, true);
	approval_board_wake(x.b);
	pthread_join(th, NULL);
	EXPECT_EQ(x.end, APPROVAL_WAIT_CANCELLED);
	approval_board_free(x.b);
}

TEST(stop)
{
	Waiting x = {.b = approval_board_new()};
	ApprovalWaiter late;
	pthread_t th;

	ASSERT_TRUE(x.b);
	ASSERT_EQ(start_waiting(&x, "apr_s", &th), 0);
	approval_board_stop(x.b);
	pthread_join(th, NULL);
	EXPECT_EQ(x.end, APPROVAL_WAIT_STOPPING);
	/* nothing is posted once the board stops; the info is freed all the same */
	EXPECT_EQ(approval_board_post(x.b, &late, "apr_late", info_of("apr_late")), -ESHUTDOWN);
	EXPECT_TRUE(late.info == NULL);
	approval_board_free(x.b);
}

/* ---- the socket ---- */

static int connect_to(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd >= 0 && connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static json_t *request(const char *path, const char *line)
{
	int fd = connect_to(path);
	json_t *rep;

	if (fd < 0)
		return NULL;
	(void) write_all(fd, line, strlen(line));
	rep = approval_read_json(fd, 64 * 1024, 5000);
	close(fd);
	return rep;
}

TEST(server)
{
	char dir[] = "/tmp/test-approval-board-XXXXXX", path[128], ids[256];
	ApprovalServerOptions so = {.refusal = "refused: ours", .refuse_live = true};
	ApprovalServer *s = NULL, *s2 = NULL;
	ApprovalBoard *b = approval_board_new();
	ApprovalWaiter w;
	struct stat st;
	char err[400];
	int pipefd[2];
	pid_t mid;
	json_t *rep;

	ASSERT_TRUE(b);
	ASSERT_TRUE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/approval.sock", dir);
	so.path = path;
	ASSERT_EQ(approval_server_start(b, &so, &s, err, sizeof(err)), 0);
	ASSERT_EQ(lstat(path, &st), 0);
	EXPECT_EQ(st.st_mode & 0777, 0600);
	/* a second server on the same path: someone listens there */
	EXPECT_EQ(approval_server_start(b, &so, &s2, err, sizeof(err)), -EADDRINUSE);
	EXPECT_TRUE(strstr(err, "another server listens on"));

	/* this process started the board: refused whatever it asks, with these very bytes */
	ASSERT_EQ(approval_board_post(b, &w, "apr_sock", info_of("apr_sock")), 0);
	{
		static const char want[] = "{\"ok\":false,\"error\":\"refused: ours\"}\n";
		static const char line[] = "{\"op\":\"decide\",\"id\":\"apr_sock\",\"decision\":"
					   "\"allow_once\"}\n";
		char got[256] = "";
		size_t n = 0;
		ssize_t k;
		int fd = connect_to(path);

		ASSERT_GE(fd, 0);
		(void) write_all(fd, line, sizeof(line) - 1);
		while (n < sizeof(got) - 1 && (k = read(fd, got + n, sizeof(got) - 1 - n)) > 0)
			n += (size_t) k;
		got[n] = 0;
		close(fd);
		EXPECT_EQ(strcmp(got, want), 0);
	}
	EXPECT_EQ(strcmp(pending(b, ids, sizeof(ids)), "apr_sock"), 0);

	/* a process that is not ours: a grandchild whose parent has exited (it is reparented
	 * away from us), and it decides */
	ASSERT_EQ(pipe(pipefd), 0);
	mid = fork();
	ASSERT_GE(mid, 0);
	if (mid == 0) {
		pid_t parent = getpid(), g = fork();

		if (g == 0) {
			char *text = NULL;

			while (getppid() == parent) /* until the reparenting */
				usleep(1000);
			rep = request(path, "{\"op\":\"decide\",\"id\":\"apr_sock\","
					    "\"decision\":\"deny\",\"note\":\"n\"}\n");
			text = rep ? json_dumps(rep, JSON_COMPACT) : NULL;
			/* one line, as approval_read_json() reads */
			(void) write_all(pipefd[1], text ?: "null", strlen(text ?: "null"));
			(void) write_all(pipefd[1], "\n", 1);
			_exit(0);
		}
		_exit(g > 0 ? 0 : 1);
	}
	close(pipefd[1]);
	(void) waitpid(mid, NULL, 0);
	rep = approval_read_json(pipefd[0], 64 * 1024, 10000);
	close(pipefd[0]);
	ASSERT_TRUE(rep);
	EXPECT_TRUE(ok_of(rep));
	json_decref(rep);
	EXPECT_EQ(approval_board_wait(b, &w, 0, NULL), APPROVAL_WAIT_DECIDED);
	EXPECT_EQ(w.decision, APPROVAL_DENY);
	EXPECT_TRUE(strstr(w.decider, "approval socket (uid ") == w.decider);
	free(w.note);

	s = approval_server_stop(s);
	EXPECT_TRUE(lstat(path, &st) < 0 && errno == ENOENT); /* removed */
	/* not a socket at the path: refused, and left alone */
	ASSERT_EQ(mkdir(path, 0700), 0);
	EXPECT_EQ(approval_server_start(b, &so, &s, err, sizeof(err)), -EEXIST);
	EXPECT_TRUE(s == NULL);
	(void) rmdir(path);
	(void) rmdir(dir);
	approval_board_free(b);
}

/* ---- a peer whose pid is handed to a stranger ---- */

/* In a user, pid and mount namespace of our own (pid 1 = I), S stands for the server: A, S's
 * child, connects to S and exits; S reaps it. I then sets ns_last_pid so that its next child,
 * B, gets A's pid: B is not S's descendant. The plain walk from the pid number now says "not
 * ours" (the window the board's header describes); the walk anchored to the peer's pidfd must
 * refuse. Prints one line to out: "ok", "skip: why" or "fail: why". */
static void reuse_in_namespace(int out)
{
	char line[160] = "fail: setup";
	int to_i[2], to_s[2];
	pid_t s, b = -1;
	FILE *f;

	if (pipe(to_i) < 0 || pipe(to_s) < 0)
		goto done;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		snprintf(line, sizeof(line), "skip: cannot mount /proc in a pid namespace: %m");
		goto done;
	}
	s = fork();
	if (s == 0) {
		int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), c, fd;
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		struct ucred cred;
		socklen_t len = sizeof(cred);
		pid_t a, bpid = -1;

		/* abstract: the socket lives in our own network namespace only while we run */
		snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "approval-reuse-%d",
			 (int) getpid());
		if (l < 0 || bind(l, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(l, 1) < 0)
			_exit(2);
		a = fork();
		if (a == 0) {
			c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			_exit(c >= 0 && connect(c, (struct sockaddr *) &sa, sizeof(sa)) == 0 ? 0
											     : 1);
		}
		fd = accept4(l, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
		    waitpid(a, NULL, 0) != a || cred.pid != a)
			_exit(3);
		/* A is reaped: its number is free; I makes B take it */
		if (write(to_i[1], &a, sizeof(a)) != sizeof(a) ||
		    read(to_s[0], &bpid, sizeof(bpid)) != sizeof(bpid))
			_exit(4);
		if (bpid != a)
			_exit(5); /* I could not make B take A's pid */
		if (approval_pid_descends_from(cred.pid, getpid()))
			_exit(6); /* the plain walk saw through it: the scenario did not happen */
		_exit(approval_peer_descends_from(fd, cred.pid, getpid()) ? 0 : 7);
	}
	if (s < 0)
		goto done;
	{
		pid_t a = -1;
		int st = 0;

		if (read(to_i[0], &a, sizeof(a)) == sizeof(a)) {
			f = fopen("/proc/sys/kernel/ns_last_pid", "w");
			if (f && fprintf(f, "%d", (int) a - 1) > 0 && fclose(f) == 0) {
				b = fork();
				if (b == 0) {
					pause();
					_exit(0);
				}
			} else if (f) {
				(void) fclose(f);
			}
			(void) write_all(to_s[1], &b, sizeof(b));
		}
		(void) waitpid(s, &st, 0);
		if (b > 0) {
			kill(b, SIGKILL);
			(void) waitpid(b, NULL, 0);
		}
		if (!WIFEXITED(st))
			snprintf(line, sizeof(line), "fail: S died, status %d", st);
		else if (WEXITSTATUS(st) == 0)
			snprintf(line, sizeof(line), "ok");
		else if (WEXITSTATUS(st) == 5)
			snprintf(line, sizeof(line),
				 "skip: could not hand A's pid to B (ns_last_pid)");
		else if (WEXITSTATUS(st) == 7)
			snprintf(line, sizeof(line),
				 "fail: the anchored walk accepted a stranger with the"
				 " peer's old pid");
		else
			snprintf(line, sizeof(line), "fail: S exit %d", WEXITSTATUS(st));
	}
done:
	(void) write_all(out, line, strlen(line));
}

TEST(peer_pid_handed_to_a_stranger)
{
	int p[2], st = 0, one = 1;
	char line[160] = "";
	ssize_t n;
	pid_t x;

	{
		int a[2];
		socklen_t len = sizeof(one);

		ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a), 0);
		if (getsockopt(a[0], SOL_SOCKET, 77 /* SO_PEERPIDFD */, &one, &len) < 0 &&
		    errno == ENOPROTOOPT) {
			close(a[0]);
			close(a[1]);
			SKIP("no SO_PEERPIDFD (Linux < 6.5): the plain walk is all there is");
		}
		close(one);
		close(a[0]);
		close(a[1]);
	}
	ASSERT_EQ(pipe(p), 0);
	x = fork();
	ASSERT_GE(x, 0);
	if (x == 0) {
		pid_t i;

		close(p[0]);
		if (unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS) < 0) {
			dprintf(p[1], "skip: no user and pid namespaces here: %m");
			_exit(0);
		}
		i = fork(); /* pid 1 of the new namespace */
		if (i == 0) {
			reuse_in_namespace(p[1]);
			_exit(0);
		}
		_exit(i > 0 && waitpid(i, NULL, 0) == i ? 0 : 1);
	}
	close(p[1]);
	n = read(p[0], line, sizeof(line) - 1);
	close(p[0]);
	(void) waitpid(x, &st, 0);
	line[n > 0 ? n : 0] = 0;
	if (strncmp(line, "skip: ", 6) == 0)
		SKIP("%s", line + 6);
	EXPECT_STREQ(line, "ok");
}

int main(void)
{
	/* the grandchild's reply must not kill us should it come after we closed the pipe */
	(void) signal(SIGPIPE, SIG_IGN);
	return tap_run();
}
