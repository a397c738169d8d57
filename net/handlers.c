/* SPDX-License-Identifier: MIT */
/*
 * Socket handlers: socket(2), socketpair(2), connect(2), bind(2), listen(2), sendto(2),
 * sendmsg(2), sendmmsg(2), recvfrom(2) (only to give redirected DNS sockets their resolver's
 * address back, and AF_UNIX senders bound under an alias their name), getsockname(2) and
 * getpeername(2) (only to give an AF_UNIX name bound under an alias back as bound) and
 * setsockopt(2) (only the options that change routing: routing_option()).
 * docs/network.md explains every decision.
 *
 * The rule (DESIGN.md): a decision that depends on memory the child owns is never CONTINUEd.
 * The supervisor copies the sockaddr (and for sends the data) once, decides on its copy, and
 * performs the call itself on a duplicate of the child's socket taken with pidfd_getfd(2)
 * (Linux 5.6): the duplicate shares the open file description, so the child's own socket is
 * the one that connects, binds or sends. The socket's family and type come from the duplicate
 * (SO_DOMAIN, SO_TYPE), never from what the child says. CONTINUE is used only for decisions on
 * registers alone: socket(2)'s arguments, and every call when the mode is "full" and no
 * ratchet can lower it and no file-system view decides AF_UNIX paths.
 *
 * Results the child gets in its memory (socketpair's fds, accept's and getsockname's
 * address, sendmmsg's msg_len of each message, recvfrom's datagram and sender) are never
 * written here: each is a write-back of the decision (common/handler.h), which tracer/
 * dispatch.c writes after the handler and before the reply, as this file did itself until
 * then; a write that fails is the call's EFAULT there, as it was here. TOCTOU: the handler
 * only reads the destination (to refuse an unmapped one before an irrevocable step: an
 * install, the next message), so another thread can unmap it between that check and the
 * write: then the call fails with EFAULT after the step, as in the kernel when its own
 * copy_to_user() at the end of the call faults.
 *
 * With network.unshare = true in mode "loopback" and the view in the kernel these handlers
 * are mostly not called at all: the tree has a network namespace of its own with only lo,
 * where every inet address reaches the tree's own sockets or nothing, AF_UNIX paths resolve
 * in the mount namespace that is the view, and abstract names are the namespace's own; so
 * the kernel view's filter lets connect, bind, listen, sendto, sendmsg and sendmmsg run in
 * the kernel and decides socket(2) on its registers as net_decide_socket() does (tracer/
 * filter.c, net_runs_in_kernel()). Only when no check here would add anything: no ratchet
 * level, no asking, no audit (tracer_filter_net_why(); docs/network.md "Loopback in a
 * namespace of its own"). Otherwise they are notified as below, and the supervisor's
 * connects on the duplicates happen in the tree's namespace.
 *
 * Deviations from Linux:
 *  - sendto/sendmsg/sendmmsg copy at most NET_SEND_MAX bytes of data per message: a stream
 *    socket sends that much and returns a short count, a datagram socket over it fails with
 *    EMSGSIZE (UDP carries at most 65507 bytes anyway). Control data is limited to
 *    NET_CONTROL_MAX bytes (ENOBUFS beyond); SCM_RIGHTS fds are duplicated from the caller.
 *    SCM_CREDENTIALS naming the caller fail (the supervisor sends them: EPERM).
 *  - sendmmsg sends at most NET_MMSG_MAX messages per call (a short count, as the kernel may).
 *  - AF_UNIX paths: until the file-system view decides them (TODO: its resolver, when it is on
 *    main), a path is allowed when listed in network.unix, or in mode "full"; a relative path
 *    is taken from the caller's cwd (its /proc link). A socket file bind() creates gets
 *    the supervisor's umask.
 *  - A blocking recvfrom on a socket redirected to the DNS stub with nothing queued is
 *    CONTINUEd (the reply then shows the stub's address); glibc, musl and c-ares poll first.
 */
#include "net/handlers.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/missing-seccomp.h"
#include "common/util.h"
#include "net/child.h"
#include "net/internal.h"

#define NET_SEND_MAX	(64 * 1024)
#define NET_CONTROL_MAX 4096
#define NET_MMSG_MAX	8
#define NET_IOV_MAX	1024 /* UIO_MAXIOV */

/* sendmmsg answers each message's msg_len through a write-back of its decision */
_Static_assert(NET_MMSG_MAX <= EMU_MAX_WRITEBACK, "a write-back per message of sendmmsg");

/* ---- helpers ---- */

static int fail(EmuDecision *d, int error, const char *why, bool denied)
{
	d->verdict = EMU_FAIL;
	d->error = error;
	d->why = why;
	d->denied = denied;
	return 0;
}

static int ret_val(EmuDecision *d, int64_t v, const char *why)
{
	d->verdict = EMU_RETURN;
	d->val = v;
	d->why = why;
	return 0;
}

/*
 * Whether every call may run in the kernel: mode "full" that no ratchet can lower, and no
 * file-system view (with a view, an AF_UNIX path must be resolved in it even in "full", and
 * whether the address is AF_UNIX is in child memory, the fd's socket in the child's fd table:
 * neither can be checked before a CONTINUE).
 */
static bool full_for_good(NetRuntime *rt, const EmuRequest *req)
{
	if (req->view)
		return false;
	if (!rt)
		return req->policy && req->policy->network.mode == NET_MODE_FULL;
	return !rt->may_drop_below_full && net_ratchet_mode(&rt->ratchet) == NET_MODE_FULL;
}

static void ctx_init(NetRuntime *rt, const EmuRequest *req, NetContext *ctx)
{
	*ctx = (NetContext){
		.policy = &req->policy->network,
		.mode = rt ? net_ratchet_mode(&rt->ratchet) : req->policy->network.mode,
		.learned = rt ? rt->learned : NULL,
		.resolvers = rt ? rt->resolvers : NULL,
		.n_resolvers = rt ? rt->n_resolvers : 0,
	};
	/* asking only in the policy's own mode: after a ratchet drop (private data entered the
	 * run) an unlisted destination is denied without asking */
	ctx->ask_unlisted =
		rt && req->policy->network.ask_unlisted && ctx->mode == req->policy->network.mode;
}

static int connect_errno(const EmuRequest *req)
{
	return req->policy->network.connect_errno > 0 ? req->policy->network.connect_errno
						      : ECONNREFUSED;
}

/*
 * Duplicates the caller's fd and reads the socket's family and type from the duplicate.
 * Returns 0, a positive errno for the child (EBADF, ENOTSOCK), or -errno when the supervisor
 * cannot reach the caller's fds.
 */
static int caller_socket(const EmuRequest *req, uint64_t fdarg, int *ret_fd, int *ret_domain,
			 int *ret_type)
{
	_cleanup_close_ int pidfd = -1, fd = -1;
	NetRuntime *rt = net_runtime_of(req);
	socklen_t l = sizeof(int);
	int domain = 0, type = 0;

	if ((int) fdarg < 0)
		return EBADF;
	if (rt && rt->own_sockets) {
		/* pidfd_getfd refused: the supervisor's own reference (net/socktab.c) */
		int r = net_socks_get(rt, req, (int) fdarg, false, ret_fd, ret_domain, ret_type);

		if (r == 0 && *ret_domain == NET_KIND_INOTIFY) {
			(void) close(*ret_fd);
			return ENOTSOCK;
		}
		return r;
	}
	if (req->host && req->host->get_fd) {
		/* the host's: its handler threads keep their callers' pidfds
		 * (tracer/pidfd-cache.c), two syscalls less per call than a pidfd opened and closed
		 * here */
		fd = req->host->get_fd(req->host->userdata, req->pid, (int) fdarg);
		if (fd < 0)
			return fd == -EBADF || fd == -ESRCH ? -fd : fd;
	} else {
		pidfd = (int) syscall(SYS_pidfd_open, emu_req_tgid(req), 0);
		if (pidfd < 0)
			return errno == ESRCH ? ESRCH : -errno;
		fd = (int) syscall(SYS_pidfd_getfd, pidfd, (int) fdarg, 0);
		if (fd < 0)
			return errno == EBADF ? EBADF : -errno;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &l) < 0)
		return errno == ENOTSOCK ? ENOTSOCK : -errno;
	l = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) < 0)
		return -errno;
	*ret_fd = TAKE_FD(fd);
	*ret_domain = domain;
	*ret_type = type;
	return 0;
}

/* The caller's socket, or the child's error: "not a socket of the caller" for ENOTSOCK and
 * EBADF, "socket not created through the supervisor" for EPERM (net/socktab.c). */
static int socket_fail(EmuDecision *d, int r)
{
	if (r < 0)
		return r;
	if (r == EPERM)
		return fail(d, EPERM, "socket not created through the supervisor", true);
	return fail(d, r, "not a socket of the caller", false);
}

/* Whether the run bound a socket under an alias (NetRuntime.any_unix_alias): only then are
 * the AF_UNIX names the kernel answers looked at. No run, no alias (bind_alias()). */
static bool unix_aliased(NetRuntime *rt)
{
	return rt && atomic_load(&rt->any_unix_alias);
}

/* The write-back of a socket address the kernel answered (accept, getsockname, recvfrom):
 * MIN(child_len, have) bytes of addr (have: what there is of it) at uaddr, then len, the
 * address's length, at ulen, as move_addr_to_user() writes them; tracer/dispatch.c writes
 * both after the handler (common/handler.h). */
static int writeback_addr(EmuDecision *d, uint64_t uaddr, uint64_t ulen, const void *addr,
			  socklen_t have, socklen_t len, int child_len)
{
	int r = emu_writeback(d, uaddr, addr, MIN((size_t) child_len, (size_t) have));

	return r < 0 ? r : emu_writeback(d, ulen, &len, sizeof(len));
}

/* The stub's address for a socket of (domain, type), in the socket's own family. */
static int stub_target(NetRuntime *rt, int domain, int type, struct sockaddr_storage *ret,
		       socklen_t *ret_len)
{
	const struct sockaddr_in *sin;

	if (!rt || !rt->stub_running)
		return -ENOENT;
	if (type != SOCK_DGRAM && type != SOCK_STREAM)
		return -EPROTOTYPE;
	/* the stub's sockets and thread, before the child can send it anything */
	if (net_stub_wake(rt) < 0)
		return -ENOENT;
	sin = type == SOCK_DGRAM ? &rt->stub_udp_addr : &rt->stub_tcp_addr;
	memset(ret, 0, sizeof(*ret));
	if (domain == AF_INET) {
		memcpy(ret, sin, sizeof(*sin));
		*ret_len = sizeof(*sin);
		return 0;
	}
	if (domain == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *) ret;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = sin->sin_port;
		s6->sin6_addr.s6_addr[10] = 0xff;
		s6->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&s6->sin6_addr.s6_addr[12], &sin->sin_addr, 4);
		*ret_len = sizeof(*s6);
		return 0;
	}
	return -EAFNOSUPPORT;
}

static void record_redirect(NetRuntime *rt, int fd, const void *orig, size_t len)
{
	struct stat st;

	if (fstat(fd, &st) == 0)
		net_redirect_add(rt, st.st_dev, st.st_ino, orig, (socklen_t) len);
}

/*
 * AF_UNIX path sockets, until the file-system view decides them: listed in network.unix, or
 * mode "full". A relative path starts at the caller's cwd, reached through /proc/PID/cwd (a
 * path the supervisor uses, never the child's bytes). Fills buf and len with the path the
 * supervisor uses. Returns 0 when allowed, a positive errno otherwise.
 */
static int unix_path_target(const EmuRequest *req, NetMode mode, const NetAddr *a,
			    struct sockaddr_un *buf, socklen_t *len)
{
	bool listed = net_unix_path_listed(&req->policy->network, a->unix_name);

	if (!listed && mode != NET_MODE_FULL)
		return EACCES;
	memset(buf, 0, sizeof(*buf));
	buf->sun_family = AF_UNIX;
	if (a->unix_name[0] == '/') {
		memcpy(buf->sun_path, a->unix_name, a->unix_len);
	} else {
		int n = snprintf(buf->sun_path, sizeof(buf->sun_path), "/proc/%d/cwd/%s",
				 (int) emu_req_tgid(req), a->unix_name);

		if (n < 0 || (size_t) n >= sizeof(buf->sun_path))
			return ENAMETOOLONG;
	}
	*len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + strlen(buf->sun_path) + 1);
	return 0;
}

/* Where an address-taking call goes after the decision: the child's copy, the stub, or a
 * rewritten unix path. */
typedef struct Target {
	struct sockaddr_storage ss;
	socklen_t len;
	bool redirected;
	bool have_res; /* res pins the AF_UNIX object the address names: keep until the call */
	EmuUnixName res;
	const EmuUnixNames *names; /* the view's operations res came from */
	int bind_dirfd;		   /* >= 0: ss is the child's own name, bound in this directory */
	bool bind_abs;		   /* ... an absolute one, bound by bind_as_named() */
} Target;

static void target_done(Target *t)
{
	if (t->have_res)
		t->names->done(&t->res);
	t->have_res = false;
}

/* The caller's umask, for a socket file bind() creates (the supervisor's is 0). */
static mode_t caller_umask(pid_t tgid)
{
	char buf[2048], *p;

	if (proc_read(tgid, "status", buf, sizeof(buf)) < 0)
		return 022;
	p = strstr(buf, "\nUmask:");
	return p ? (mode_t) strtoul(p + 7, NULL, 8) & 0777 : 022;
}

/*
 * AF_UNIX path through the file-system view, whose operations the host hands on
 * (EmuHost.unix_names; the view's, emulation/path/unix.c): resolves the path as the caller
 * sees it (relative paths from its cwd) and builds the address the supervisor uses, which
 * names exactly the object that was checked. 0, or a positive errno; EACCES when the host
 * offers no resolver for the request's view (never around the view).
 */
static int unix_view_target(const EmuRequest *req, NetOp op, const NetAddr *a, Target *t)
{
	const EmuUnixNames *names = emu_host_unix_names(req);
	unsigned len = 0;
	int r;

	if (!names)
		return EACCES;
	r = names->resolve(req, a->unix_name, op == NET_OP_BIND, &t->res,
			   (struct sockaddr_un *) &t->ss, &len);
	if (r < 0)
		return -r;
	t->names = names;
	t->have_res = true;
	t->len = (socklen_t) len;
	return 0;
}

/* Whether path is "/a/b/name", with no ".", ".." or empty component, naming r->name in the
 * directory r resolved "/a/b" to: bind_as_named() can reproduce it. */
static bool plain_absolute(const char *path, const EmuUnixName *r)
{
	const char *base = strrchr(path, '/');

	if (path[0] != '/' || r->parent_fd < 0 || r->exists || strstr(path, "//") ||
	    strstr(path, "/./") || strstr(path, "/../"))
		return false;
	return base && strcmp(base + 1, r->name) == 0 && strcmp(r->name, ".") != 0 &&
	       strcmp(r->name, "..") != 0 && r->name[0];
}

/*
 * Decides op for the copy (buf, len) on a socket of (domain, type) under the current mode,
 * and fills *t. Called with the mode lock held for reading. Returns 0 when allowed, or fills
 * d with the denial and returns 1.
 */
static int decide_ask(NetRuntime *rt, const EmuRequest *req, NetOp op, int domain, int type,
		      const uint8_t *buf, size_t len, Target *t, EmuDecision *d, NetAddr *ask);

static int decide(NetRuntime *rt, const EmuRequest *req, NetOp op, int domain, int type,
		  const uint8_t *buf, size_t len, Target *t, EmuDecision *d)
{
	return decide_ask(rt, req, op, domain, type, buf, len, t, d, NULL);
}

/* As decide(); with ask, a NET_VERDICT_ASK returns 2 with the address in *ask (d filled with
 * the denial that applies when nobody allows it). */
static int decide_ask(NetRuntime *rt, const EmuRequest *req, NetOp op, int domain, int type,
		      const uint8_t *buf, size_t len, Target *t, EmuDecision *d, NetAddr *ask)
{
	NetContext ctx;
	NetDecision nd;
	NetAddr a;
	int r;

	ctx_init(rt, req, &ctx);
	r = net_decide_sockaddr(&ctx, op, domain, type, buf, len, &a, &nd);
	if (r < 0) {
		fail(d, EINVAL, "bad address", false);
		return 1;
	}
	t->redirected = false;
	t->bind_dirfd = -1;
	t->bind_abs = false;
	switch (nd.verdict) {
	case NET_VERDICT_ALLOW:
		memcpy(&t->ss, buf, len);
		t->len = (socklen_t) len;
		/* the stub's own address, named directly (a loopback address, allowed as such):
		 * its thread starts before the child can send, as for a redirected query */
		if (op != NET_OP_BIND && rt &&
		    net_is_stub_addr(rt, (const struct sockaddr *) buf, (socklen_t) len))
			(void) net_stub_wake(rt);
		return 0;
	case NET_VERDICT_DNS:
		if (stub_target(rt, domain, type, &t->ss, &t->len) < 0) {
			fail(d, connect_errno(req), "no DNS stub for this socket", true);
			return 1;
		}
		t->redirected = true;
		d->why = "resolver: redirected to the DNS stub";
		return 0;
	case NET_VERDICT_UNIX_PATH:
		if (req->view) {
			r = unix_view_target(req, op, &a, t);
			if (r > 0) {
				fail(d, r, "unix socket path refused by the file-system view",
				     r == EACCES || r == EROFS);
				return 1;
			}
			/* the name the program gave, so that getsockname() returns it */
			if (op == NET_OP_BIND &&
			    (t->res.name_in_parent || plain_absolute(a.unix_name, &t->res))) {
				memcpy(&t->ss, buf, len);
				t->len = (socklen_t) len;
				t->bind_dirfd = t->res.parent_fd;
				t->bind_abs = a.unix_name[0] == '/';
			}
			return 0;
		}
		r = unix_path_target(req, ctx.mode, &a, (struct sockaddr_un *) &t->ss, &t->len);
		if (r > 0) {
			fail(d, op == NET_OP_BIND ? r : connect_errno(req),
			     "unix socket path not listed", true);
			return 1;
		}
		return 0;
	case NET_VERDICT_ASK:
		fail(d, nd.error > 0 ? nd.error : connect_errno(req), "not in allowlist", true);
		if (!ask)
			return 1;
		*ask = a;
		return 2;
	case NET_VERDICT_DENY:
	default:
		fail(d, nd.error > 0 ? nd.error : EACCES, nd.why ? nd.why : "denied",
		     nd.error != EINVAL && nd.error != EAFNOSUPPORT);
		return 1;
	}
}

static bool ask_allowed_find(NetRuntime *rt, const NetAddr *a)
{
	bool found = false;

	pthread_mutex_lock(&rt->ask_lock);
	for (size_t i = 0; i < rt->n_ask_allowed && !found; i++)
		found = rt->ask_allowed[i].port == a->port &&
			net_addr_ip_equal(&rt->ask_allowed[i], a);
	pthread_mutex_unlock(&rt->ask_lock);
	return found;
}

static void ask_allowed_add(NetRuntime *rt, const NetAddr *a)
{
	pthread_mutex_lock(&rt->ask_lock);
	if (!rt->ask_allowed)
		rt->ask_allowed = calloc(NET_MAX_ASK_ALLOWED, sizeof(NetAddr));
	if (rt->ask_allowed && rt->n_ask_allowed < NET_MAX_ASK_ALLOWED)
		rt->ask_allowed[rt->n_ask_allowed++] = *a;
	pthread_mutex_unlock(&rt->ask_lock);
}

/*
 * A connect or send outside the allowlist under unlisted = "ask": the child waits in its
 * syscall (the seccomp notification is held) while the asker seeks a decision. Called on a
 * worker without the mode lock (a human may take the whole ask_timeout; a ratchet drop must
 * not wait for that). op names the call in the question ("connect", "sendto", "sendmsg",
 * "sendmmsg"). Returns true when the call may go on; the caller re-checks the ratchet's
 * generation afterwards. An allow_session answer remembers the address and port for both
 * connects and sends: the human allowed the destination, not one syscall.
 */
static bool ask_dest(NetRuntime *rt, const EmuRequest *req, const char *op, const NetAddr *a,
		     EmuDecision *d)
{
	char dest[NET_ADDR_FORMAT_MAX], name[256];
	NetAskRequest rq = {
		.pid = req->pid,
		.tgid = emu_req_tgid(req),
		.op = op,
		.destination = net_addr_format(a, dest, sizeof(dest)),
		.why = "not in allowlist",
		.timeout_ms = req->policy->network.ask_timeout_ms,
	};
	NetAskAnswer ans;

	if (ask_allowed_find(rt, a)) {
		d->why = "allowed for the session by an earlier decision";
		d->error = 0;
		d->denied = false;
		return true;
	}
	if (!rt->ask) {
		d->why = "not in allowlist (nobody to ask)";
		return false;
	}
	if (net_learned_name_of(rt->learned, a->ip_family, a->addr, name, sizeof(name)))
		rq.name = name;
	ans = rt->ask(rt->ask_userdata, &rq);
	if (ans == NET_ASK_ALLOW_SESSION)
		ask_allowed_add(rt, a);
	if (ans == NET_ASK_DENY) {
		d->why = "not in allowlist (denied when asked)";
		return false;
	}
	d->why = ans == NET_ASK_ALLOW_SESSION ? "allowed when asked (for the session)"
					      : "allowed when asked (once)";
	d->error = 0; /* the denial decide_ask() filled in no longer applies */
	d->denied = false;
	return true;
}

/*
 * Socket options and ancillary data that decide where packets go rather than what they
 * carry: an IPv6 routing header (RFC 2292 and RFC 3542 names; type 0, 2 or the segment
 * routing header, type 4, which needs no privilege) sends a packet for ::1 to its first
 * segment, and IPv4 options with a loose or strict source route (LSRR/SSRR) send a packet
 * for 127.0.0.1 to the route's first hop. IPV6_2292PKTOPTIONS takes a routing header as
 * ancillary data and makes it sticky. Outside mode "full" the destination the supervisor
 * checked must be where packets go, so these are refused (EPERM). IP_OPTIONS is refused
 * whole: its value is in child memory, and record-route and timestamp options, the other
 * kinds, are not worth copying it for.
 */
static bool routing_option(int level, int name)
{
	if (level == IPPROTO_IPV6)
		return name == IPV6_RTHDR || name == IPV6_2292RTHDR || name == IPV6_2292PKTOPTIONS;
	if (level == IPPROTO_IP)
		return name == IP_OPTIONS;
	return false;
}

static bool routing_cmsg(struct msghdr *m)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level == IPPROTO_IPV6 &&
		    (c->cmsg_type == IPV6_RTHDR || c->cmsg_type == IPV6_2292RTHDR))
			return true;
		/* ip_cmsg_send(): IP_RETOPTS carries IP options for this packet */
		if (c->cmsg_level == IPPROTO_IP &&
		    (c->cmsg_type == IP_RETOPTS || c->cmsg_type == IP_OPTIONS))
			return true;
	}
	return false;
}

/* ---- sockets the supervisor creates (pidfd_getfd refused: net/socktab.c) ---- */

/*
 * Whether the supervisor creates the caller's sockets: pidfd_getfd is refused, and the
 * caller shares the supervisor's network namespace (a socket lives in its creator's; with
 * network.unshare in effect the sockets stay the child's, and the calls that need the
 * supervisor fail closed).
 */
static bool own_sockets_for(NetRuntime *rt, const EmuRequest *req)
{
	int v;

	if (!rt || !rt->own_sockets || req->listener <= 0)
		return false;
	v = atomic_load(&rt->netns_differs);
	if (v == 0) {
		struct stat a, b;
		char path[64];

		/* network.unshare may be in effect: the caller's namespace. The command cannot
		 * change it (C made it before the filter, which denies unshare and setns), so a
		 * result is kept; a caller whose link we may not read (non-dumpable) is not
		 * judged for the others, and its sockets stay its own */
		snprintf(path, sizeof(path), "/proc/%d/ns/net", (int) emu_req_tgid(req));
		if (stat(path, &a) < 0 || stat("/proc/self/ns/net", &b) < 0)
			return false;
		v = a.st_ino == b.st_ino && a.st_dev == b.st_dev ? 1 : 2;
		atomic_store(&rt->netns_differs, v);
	}
	return v == 1;
}

/* Records fd in the table and installs it in the caller: its number, or -errno. */
static int install_new(NetRuntime *rt, const EmuRequest *req, int fd, int domain, int type,
		       bool cloexec)
{
	uint64_t ino = 0;
	int r = net_socks_add(rt, fd, domain, type, &ino);

	if (r < 0)
		return r;
	r = net_socks_install(req, fd, cloexec);
	net_socks_installed(rt, ino, r >= 0);
	return r;
}

/* An ADDFD failure: EMFILE is the child's (its RLIMIT_NOFILE), the rest the supervisor's. */
static int install_fail(EmuDecision *d, int r)
{
	if (r == -EMFILE)
		return fail(d, EMFILE, NULL, false);
	return r;
}

static int own_socket(NetRuntime *rt, const EmuRequest *req, EmuDecision *d)
{
	int domain = (int) req->args[0], type = (int) req->args[1], r;
	_cleanup_close_ int fd = -1;

	/* the same arguments: the kernel's own checks and errors; the supervisor's threads
	 * hold no capability the command lacks */
	fd = socket(domain, type | SOCK_CLOEXEC, (int) req->args[2]);
	if (fd < 0)
		return fail(d, errno, NULL, false);
	r = install_new(rt, req, fd, domain, type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC),
			type & SOCK_CLOEXEC);
	if (r < 0)
		return install_fail(d, r);
	return ret_val(d, r, NULL);
}

static int own_socketpair(NetRuntime *rt, const EmuRequest *req, EmuDecision *d)
{
	int type = (int) req->args[1], sv[2] = {-1, -1}, num[2] = {-1, -1}, r = 0;

	/* The pointer first, so that nothing is installed for an unmapped one: read, as the
	 * handler writes nothing (common/handler.h). Deviation: a mapping that reads but does
	 * not write gets both fds installed and the call's EFAULT from the write-back (the
	 * kernel installs none); it got the numbers through /proc/PID/mem before. */
	if (req->mem->read(req->mem, req->args[3], num, sizeof(num)) < 0)
		return fail(d, EFAULT, NULL, false);
	if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, (int) req->args[2], sv) < 0)
		return fail(d, errno, NULL, false);
	for (int i = 0; i < 2 && r >= 0; i++) {
		r = install_new(rt, req, sv[i], AF_UNIX, type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC),
				type & SOCK_CLOEXEC);
		num[i] = r;
	}
	(void) close(sv[0]);
	(void) close(sv[1]);
	/* a failure after the first install leaves that fd in the caller (unnamed, harmless) */
	if (r < 0)
		return install_fail(d, r);
	/* tracer/dispatch.c writes the numbers before the reply; a failure there is the
	 * call's EFAULT, the fds staying in the caller, as after a failed install above */
	r = emu_writeback(d, req->args[3], num, sizeof(num));
	if (r < 0)
		return r;
	return ret_val(d, 0, NULL);
}

/* Waits until the listening socket fd has a connection (or an error), checking every 200 ms
 * that the caller still waits. 0, or -ESRCH when it is gone. */
static int wait_acceptable(const EmuRequest *req, int fd)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		uint64_t id = req->id;
		int r = poll(&p, 1, 200);

		if (r > 0 || (r < 0 && errno != EINTR))
			return 0;
		if (req->listener > 0 &&
		    ioctl(req->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0)
			return -ESRCH;
	}
}

/*
 * accept(2), accept4(2), notified only where the supervisor creates the tree's sockets: the
 * connection is accepted on the supervisor's reference to the listening socket, and the new
 * socket recorded and installed like socket(2)'s. A blocking accept waits on a worker
 * (EMU_MAY_BLOCK); deviation: a signal the caller handles runs only once a connection came
 * (the caller is past WAIT_KILLABLE_RECV's killable wait), and when it races another
 * acceptor for the same connection the supervisor may wait for the next one.
 */
int net_handle_accept(const EmuRequest *req, EmuDecision *d)
{
	NetRuntime *rt = net_runtime_of(req);
	int flags = req->nr == SYS_accept4 ? (int) req->args[3] : 0, domain, type, r, fl;
	_cleanup_close_ int lfd = -1, nfd = -1;
	struct sockaddr_storage ss = {};
	socklen_t sl = sizeof(ss);
	int child_len = 0;

	if (!rt || !rt->own_sockets) {
		d->verdict = EMU_CONTINUE; /* not ours to create */
		return 0;
	}
	if (flags & ~(SOCK_CLOEXEC | SOCK_NONBLOCK))
		return fail(d, EINVAL, NULL, false);
	r = caller_socket(req, req->args[0], &lfd, &domain, &type);
	if (r != 0)
		return socket_fail(d, r);
	if (req->args[1]) {
		if (req->mem->read(req->mem, req->args[2], &child_len, sizeof(child_len)) < 0)
			return fail(d, EFAULT, NULL, false);
		if (child_len < 0)
			return fail(d, EINVAL, NULL, false);
	}
	fl = fcntl(lfd, F_GETFL);
	if (fl >= 0 && !(fl & O_NONBLOCK)) {
		int acc = 0;
		socklen_t al = sizeof(acc);

		if (getsockopt(lfd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &al) == 0 && acc &&
		    wait_acceptable(req, lfd) < 0)
			return -ESRCH;
	}
	do
		nfd = accept4(lfd, (struct sockaddr *) &ss, &sl,
			      (flags & SOCK_NONBLOCK) | SOCK_CLOEXEC);
	while (nfd < 0 && errno == EINTR);
	if (nfd < 0)
		return fail(d, errno, NULL, false);
	r = install_new(rt, req, nfd, domain, type, flags & SOCK_CLOEXEC);
	if (r < 0)
		return install_fail(d, r);
	if (domain == AF_UNIX && unix_aliased(rt) && emu_host_unix_names(req) && sl <= sizeof(ss)) {
		unsigned ul = sl;

		if (emu_host_unix_names(req)->unalias(req, (struct sockaddr_un *) &ss, &ul))
			sl = ul;
	}
	/* Written by tracer/dispatch.c after the install: a failure there is the call's EFAULT,
	 * the connection accepted and lost, as in the kernel (the fd stays in the caller). */
	if (req->args[1]) {
		int w = writeback_addr(d, req->args[1], req->args[2], &ss,
				       MIN(sl, (socklen_t) sizeof(ss)), sl, child_len);

		if (w < 0)
			return w;
	}
	return ret_val(d, r, NULL);
}

/*
 * close(2), close_range(2), dup2(2), dup3(2): notified only where the supervisor keeps the
 * tree's sockets, to sweep its references soon after one of them may have been closed
 * (net/socktab.c). Always CONTINUEd: the kernel closes.
 */
int net_handle_close(const EmuRequest *req, EmuDecision *d)
{
	NetRuntime *rt = net_runtime_of(req);
	int fdarg = (int) req->args[0], e = 0;
	uint64_t ino;

	d->verdict = EMU_CONTINUE;
	if (!rt || !rt->own_sockets || !net_socks_any(rt))
		return 0;
	if (req->nr == SYS_close_range) {
		net_socks_request_sweep(rt, true);
		return 0;
	}
	if (req->nr == SYS_dup2 || req->nr == SYS_dup3)
		fdarg = (int) req->args[1]; /* the fd it replaces */
	ino = net_socks_child_ino(req->pid, fdarg, &e);
	if (ino && net_socks_has(rt, ino))
		net_socks_request_sweep(rt, true);
	return 0;
}

/* inotify_init(2), inotify_init1(2), there: an inotify instance is an anonymous inode that
 * cannot be reopened, and inotify_add_watch needs it (net/socktab.c, its marker) */
int net_handle_inotify_init(const EmuRequest *req, EmuDecision *d)
{
	NetRuntime *rt = net_runtime_of(req);
	int flags = req->nr == SYS_inotify_init1 ? (int) req->args[0] : 0, fd = -1, r;
	uint64_t key = 0;

	if (!rt || !rt->own_sockets || req->listener <= 0) {
		d->verdict = EMU_CONTINUE;
		return 0;
	}
	if (flags & ~(IN_CLOEXEC | IN_NONBLOCK))
		return fail(d, EINVAL, NULL, false);
	r = net_inotify_new(rt, flags, &fd, &key);
	if (r < 0)
		return fail(d, -r, NULL, false);
	r = net_socks_install(req, fd, flags & IN_CLOEXEC);
	net_socks_installed(rt, key, r >= 0);
	(void) close(fd);
	if (r < 0)
		return install_fail(d, r);
	return ret_val(d, r, NULL);
}

/* ---- socket, socketpair ---- */

int net_handle_socket(const EmuRequest *req, EmuDecision *d)
{
	NetRuntime *rt = net_runtime_of(req);
	NetContext ctx;
	NetDecision nd;

	/* register-only: family, type and protocol are the call's arguments */
	ctx_init(rt, req, &ctx);
	if (net_decide_socket(&ctx, (int) req->args[0], (int) req->args[1], (int) req->args[2],
			      &nd) < 0)
		return -EINVAL;
	if (nd.verdict == NET_VERDICT_ALLOW) {
		if (own_sockets_for(rt, req))
			return own_socket(rt, req, d);
		d->verdict = EMU_CONTINUE;
		return 0;
	}
	return fail(d, nd.error > 0 ? nd.error : EACCES, nd.why ? nd.why : "socket denied", true);
}

int net_handle_socketpair(const EmuRequest *req, EmuDecision *d)
{
	int e = req->policy->network.socket_errno > 0 ? req->policy->network.socket_errno : EACCES;

	/* register-only. Only AF_UNIX pairs: another family with socketpair (AF_TIPC) would
	 * be a socket that socket(2) never checked */
	if ((int) req->args[0] == AF_UNIX) {
		NetRuntime *rt = net_runtime_of(req);

		if (own_sockets_for(rt, req))
			return own_socketpair(rt, req, d);
		d->verdict = EMU_CONTINUE;
		return 0;
	}
	return fail(d, e, "socketpair of a family other than AF_UNIX", true);
}

/* ---- connect, bind, listen ---- */

int net_handle_connect(const EmuRequest *req, EmuDecision *d)
{
	NetRuntime *rt = net_runtime_of(req);
	_cleanup_close_ int fd = -1;
	uint8_t buf[NET_SOCKADDR_MAX];
	size_t len = 0;
	int domain, type, r, e = 0;
	unsigned gen = 0;
	Target t = {};
	NetAddr asked;

	if (full_for_good(rt, req)) {
		d->verdict = EMU_CONTINUE; /* register-only: every address is allowed */
		return 0;
	}
	/* TOCTOU: the sockaddr is copied once; the decision and the connect below both use the
	 * copy, so rewriting the child's buffer meanwhile changes nothing */
	r = net_copy_sockaddr(req->mem, req->args[1], req->args[2], buf, &len);
	if (r < 0)
		return fail(d, -r, "bad address", false);
	r = caller_socket(req, req->args[0], &fd, &domain, &type);
	if (r != 0)
		return socket_fail(d, r);

	if (rt) {
		pthread_rwlock_rdlock(&rt->mode_lock);
		gen = atomic_load(&rt->gen);
	}
	r = decide_ask(rt, req, NET_OP_CONNECT, domain, type, buf, len, &t, d, &asked);
	if (rt)
		pthread_rwlock_unlock(&rt->mode_lock);
	if (r == 2) {
		/* held: decided without the mode lock; a ratchet drop meanwhile (gen moved)
		 * voids the answer — under the new mode nothing is asked, so it is denied */
		if (!ask_dest(rt, req, "connect", &asked, d))
			return 0;
		pthread_rwlock_rdlock(&rt->mode_lock);
		if (atomic_load(&rt->gen) != gen) {
			pthread_rwlock_unlock(&rt->mode_lock);
			return fail(d, connect_errno(req), "network restricted while asking", true);
		}
		pthread_rwlock_unlock(&rt->mode_lock);
		memcpy(&t.ss, buf, len);
		t.len = (socklen_t) len;
		t.redirected = false;
		r = 0;
	}
	if (r > 0)
		return 0;

	/* a blocking connect may wait: this handler runs on a worker (EMU_MAY_BLOCK) */
	if (connect(fd, (struct sockaddr *) &t.ss, t.len) < 0)
		e = errno;
	target_done(&t);
	if (rt && (e == 0 || e == EINPROGRESS || e == EALREADY)) {
		/* the ratchet dropped while we connected: judge again under the new mode, and
		 * undo a connection it no longer allows (its shutdown walk may have missed it) */
		pthread_rwlock_rdlock(&rt->mode_lock);
		if (atomic_load(&rt->gen) != gen) {
			Target t2 = {};
			EmuDecision *d2 = malloc(sizeof(*d2));

			int denied = !d2 || decide(rt, req, NET_OP_CONNECT, domain, type, buf, len,
						   &t2, d2) > 0;

			target_done(&t2);
			if (denied) {
				(void) shutdown(fd, SHUT_RDWR);
				pthread_rwlock_unlock(&rt->mode_lock);
				free(d2);
				return fail(d, connect_errno(req), "network restricted meanwhile",
					    true);
			}
			free(d2);
		}
		pthread_rwlock_unlock(&rt->mode_lock);
		if (t.redirected)
			record_redirect(rt, fd, buf, len);
	}
	if (e)
		return fail(d, e, d->why, false);
	return ret_val(d, 0, d->why);
}

/* The exit status of a bind helper, an errno: 0, or -1 with errno set (EIO: it died). */
static int helper_wait(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (!WIFEXITED(status)) {
		errno = EIO;
		return -1;
	}
	errno = WEXITSTATUS(status);
	return errno ? -1 : 0;
}

/*
 * COMPAT (unshare() refused: Docker's default seccomp profile allows it only with
 * CAP_SYS_ADMIN): bind_from() in a forked helper, whose working directory is its own to
 * change. Its copy of fd is the same open file description, so its bind binds our socket.
 * Only async-signal-safe calls after fork() of this multi-threaded process; the helper is a
 * child of this thread, which the reaping in the main thread (__WNOTHREAD) leaves alone.
 */
static int bind_forked(int fd, const Target *t)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (fchdir(t->bind_dirfd) < 0)
			_exit(EPERM);
		_exit(bind(fd, (const struct sockaddr *) &t->ss, t->len) < 0 ? errno : 0);
	}
	return helper_wait(pid);
}

/*
 * bind() of the child's relative address "name" from the directory t->bind_dirfd, so the
 * socket's name is the child's (issue 23: test_socketserver connects to getsockname()): in
 * a thread with a file-system context of its own (unshare(CLONE_FS) once per thread), which
 * goes back to its previous working directory afterwards; where unshare() is refused, in a
 * forked helper.
 */
static int bind_from(int fd, const Target *t)
{
	static __thread int own_fs = 0; /* 1: unshared, -1: unshare failed */
	_cleanup_close_ int back = -1;
	const struct sockaddr *a = (const struct sockaddr *) &t->ss;
	int r, e;

	if (own_fs == 0)
		own_fs = unshare(CLONE_FS) == 0 ? 1 : -1;
	if (own_fs < 0)
		return bind_forked(fd, t);
	back = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (back < 0 || fchdir(t->bind_dirfd) < 0)
		return -1;
	r = bind(fd, a, t->len);
	e = errno;
	if (fchdir(back) < 0)
		(void) !chdir("/");
	errno = e;
	return r;
}

/*
 * bind() of the child's absolute name "/a/b/name" in the directory t->bind_dirfd (what the
 * view resolved "/a/b" to), so that the socket's name is the child's (issue 23: socketserver,
 * multiprocessing.connection and asyncio read their address back with getsockname()). A
 * forked helper makes a user and mount namespace of its own, reopens the directory by its
 * host path there (same device and inode as t->bind_dirfd, else it gives up), mounts it at
 * /a/b of an empty tmpfs, chroots into that, drops its capabilities and binds: no name the
 * child can change is on the way. Returns 0, or -1 with errno; ENOSYS: no user namespaces
 * here (the caller binds through /proc/self/fd instead).
 */
static int bind_as_named(int fd, const Target *t)
{
	const struct sockaddr_un *u = (const struct sockaddr_un *) &t->ss;
	char host[PATH_MAX], link[64], dirs[sizeof(u->sun_path) + 8], map[64], gmap[64];
	struct stat want;
	ssize_t n;
	pid_t pid;
	char *slash;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", t->bind_dirfd);
	n = readlink(link, host, sizeof(host) - 1);
	if (n <= 0 || fstat(t->bind_dirfd, &want) < 0) {
		errno = ENOENT;
		return -1;
	}
	host[n] = 0;
	/* "/tmp" + the directory part of the child's name: the mount point */
	snprintf(dirs, sizeof(dirs), "/tmp%s", u->sun_path);
	slash = strrchr(dirs, '/');
	*slash = 0;
	snprintf(map, sizeof(map), "%u %u 1", (unsigned) geteuid(), (unsigned) geteuid());
	snprintf(gmap, sizeof(gmap), "%u %u 1", (unsigned) getegid(), (unsigned) getegid());
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct __user_cap_header_struct hd = {_LINUX_CAPABILITY_VERSION_3, 0};
		struct __user_cap_data_struct cd[2] = {};
		struct stat st;
		int dfd, w, lo, hi;

		/* Run by root, handler threads have no effective capabilities, and mapping uid 0
		 * needs CAP_SETFCAP (the permitted set still has it) */
		if (syscall(SYS_capget, &hd, cd) == 0) {
			cd[0].effective = cd[0].permitted;
			cd[1].effective = cd[1].permitted;
			(void) syscall(SYS_capset, &hd, cd);
		}
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			_exit(ENOSYS);
		/* A plain user's writes to the maps of a non-dumpable process fail (they belong to
		 * root): dumpable for those three writes only, holding no fd of the supervisor
		 * but the socket and the directory (and 0-2) */
		lo = fd < t->bind_dirfd ? fd : t->bind_dirfd;
		hi = fd < t->bind_dirfd ? t->bind_dirfd : fd;
		if ((lo > 3 && close_range(3, (unsigned) lo - 1, 0) < 0) ||
		    (hi > lo + 1 && close_range((unsigned) lo + 1, (unsigned) hi - 1, 0) < 0) ||
		    close_range((unsigned) hi + 1, ~0U, 0) < 0)
			_exit(EPERM);
		if (geteuid() != 0 && prctl(PR_SET_DUMPABLE, 1) < 0)
			_exit(EPERM);
		w = open("/proc/self/setgroups", O_WRONLY);
		if (w >= 0 && (write(w, "deny", 4) < 0 || close(w) < 0))
			_exit(EPERM);
		w = open("/proc/self/uid_map", O_WRONLY);
		if (w < 0 || write(w, map, strlen(map)) < 0 || close(w) < 0)
			_exit(EPERM);
		w = open("/proc/self/gid_map", O_WRONLY);
		if (w < 0 || write(w, gmap, strlen(gmap)) < 0 || close(w) < 0)
			_exit(EPERM);
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			_exit(EPERM);
		dfd = open(host, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0 || fstat(dfd, &st) < 0 || st.st_dev != want.st_dev ||
		    st.st_ino != want.st_ino)
			_exit(ESTALE);
		if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755") <
		    0)
			_exit(EPERM);
		for (char *p = dirs + 5; *p; p++)
			if (*p == '/') {
				*p = 0;
				if (mkdir(dirs, 0755) < 0 && errno != EEXIST)
					_exit(EPERM);
				*p = '/';
			}
		if (dirs[4] && mkdir(dirs, 0755) < 0 && errno != EEXIST)
			_exit(EPERM);
		snprintf(link, sizeof(link), "/proc/self/fd/%d", dfd);
		if (mount(link, dirs, NULL, MS_BIND, NULL) < 0 || chroot("/tmp") < 0 ||
		    chdir("/") < 0)
			_exit(EPERM);
		/* the bind with the command's rights: no capability of the new namespace */
		memset(cd, 0, sizeof(cd));
		if (syscall(SYS_capset, &hd, cd) < 0)
			_exit(EPERM);
		_exit(bind(fd, (const struct sockaddr *) u, t->len) < 0 ? errno : 0);
	}
	return helper_wait(pid);
}

/* The address "/proc/self/fd/<dir>/<name>" for t in *u (the child's name is not kept). */
static int proc_addr(const Target *t, struct sockaddr_un *u, socklen_t *ret_len)
{
	int n;

	memset(u, 0, sizeof(*u));
	u->sun_family = AF_UNIX;
	n = snprintf(u->sun_path, sizeof(u->sun_path), "/proc/self/fd/%d/%s", t->bind_dirfd,
		     t->res.name);
	if (n < 0 || (size_t) n >= sizeof(u->sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	*ret_len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + (size_t) n + 1);
	return 0;
}

/*
 * COMPAT (no user namespace for bind_as_named(), as in a default container): bind() of the
 * child's absolute name through an alias of the run's private directory, which
 * getsockname(), getpeername() and accept() give back as the child's name
 * (net_handle_sockname()). 0, 1 when no alias can be made (the caller falls back), or -1
 * with errno from the bind.
 */
static int bind_alias(const EmuRequest *req, int fd, const Target *t)
{
	const struct sockaddr_un *u = (const struct sockaddr_un *) &t->ss;
	size_t plen =
		MIN((size_t) t->len - offsetof(struct sockaddr_un, sun_path), sizeof(u->sun_path));
	char name[sizeof(u->sun_path) + 1];
	struct sockaddr_un alias;
	NetRuntime *rt = net_runtime_of(req);
	unsigned alen = 0, n;
	int r, e = 0;

	/* the run's alias state: without a run, no alias (the caller falls back) */
	if (!rt)
		return 1;
	n = atomic_fetch_add(&rt->unix_alias_seq, 1);
	memcpy(name, u->sun_path, plen);
	name[plen] = 0;
	if (!t->names || t->names->alias(req, name, &t->res, n, &alias, &alen) < 0) {
		if (t->names)
			t->names->alias_done(req, name, n);
		return 1;
	}
	/* before the bind: a getsockname() that can see the name must translate it */
	atomic_store(&rt->any_unix_alias, true);
	r = bind(fd, (const struct sockaddr *) &alias, alen);
	if (r < 0)
		e = errno;
	t->names->alias_done(req, name, n);
	errno = e;
	return r;
}

/* bind() of t's address on fd: the child's own name where possible (bind_from(),
 * bind_as_named(), else bind_alias()), else through /proc/self/fd. 0, or -1 with errno. */
static int bind_named(const EmuRequest *req, int fd, const Target *t)
{
	struct sockaddr_un u;
	socklen_t len;
	int r;

	if (t->bind_dirfd < 0)
		return bind(fd, (const struct sockaddr *) &t->ss, t->len);
	r = t->bind_abs ? bind_as_named(fd, t) : bind_from(fd, t);
	if (r == 0 || (errno != ENOSYS && errno != EPERM && errno != ESTALE))
		return r;
	if (t->bind_abs) {
		r = bind_alias(req, fd, t);
		if (r <= 0)
			return r;
	}
	if (proc_addr(t, &u, &len) < 0)
		return -1;
	return bind(fd, (const struct sockaddr *) &u, len);
}

/*
 * getsockname(2), getpeername(2): CONTINUEd until a socket was bound under an alias
 * (bind_alias()); then, for an AF_UNIX socket, the call is made on the supervisor's
 * duplicate and an alias in the answer becomes the name the program bound. Nothing is
 * decided on the child's memory; a thread that swaps the fd meanwhile gets the answer for
 * the socket the fd held when we took it, as if its swap had come after the call. Every
 * failure of ours is left to the kernel, which answers the same for the fd.
 */
int net_handle_sockname(const EmuRequest *req, EmuDecision *d)
{
	const EmuUnixNames *names = emu_host_unix_names(req);
	_cleanup_close_ int fd = -1;
	struct sockaddr_un u = {};
	socklen_t sl = sizeof(u);
	unsigned ul;
	int domain, type, r, child_len = 0;

	d->verdict = EMU_CONTINUE;
	if (!unix_aliased(net_runtime_of(req)) || !names)
		return 0;
	if (caller_socket(req, req->args[0], &fd, &domain, &type) != 0 || domain != AF_UNIX)
		return 0;
	r = req->nr == SYS_getpeername ? getpeername(fd, (struct sockaddr *) &u, &sl)
				       : getsockname(fd, (struct sockaddr *) &u, &sl);
	ul = sl;
	if (r < 0 || sl > sizeof(u) || !names->unalias(req, &u, &ul))
		return 0;
	sl = ul;
	if (req->mem->read(req->mem, req->args[2], &child_len, sizeof(child_len)) < 0)
		return fail(d, EFAULT, NULL, false);
	if (child_len < 0)
		return fail(d, EINVAL, NULL, false);
	/* name and length written by tracer/dispatch.c; EFAULT when that fails */
	r = writeback_addr(d, req->args[1], req->args[2], &u, sl, sl, child_len);
	if (r < 0)
		return r;
	return ret_val(d, 0, "the name the program bound");
}

int net_handle_bind(const EmuRequest *req, EmuDecision *d)
{
	NetRuntime *rt = net_runtime_of(req);
	_cleanup_close_ int fd = -1;
	uint8_t buf[NET_SOCKADDR_MAX];
	size_t len = 0;
	int domain, type, r;
	Target t = {};

	if (full_for_good(rt, req)) {
		d->verdict = EMU_CONTINUE;
		return 0;
	}
	/* TOCTOU: decided and bound on the supervisor's copy */
	r = net_copy_sockaddr(req->mem, req->args[1], req->args[2], buf, &len);
	if (r < 0)
		return fail(d, -r, "bad address", false);
	r = caller_socket(req, req->args[0], &fd, &domain, &type);
	if (r != 0)
		return socket_fail(d, r);
	if (rt)
		pthread_rwlock_rdlock(&rt->mode_lock);
	r = decide(rt, req, NET_OP_BIND, domain, type, buf, len, &t, d);
	if (r == 0 && t.redirected) {
		/* bind never goes to a resolver; decide() only redirects connects and sends */
		r = fail(d, EACCES, "bind to a resolver address", true) + 1;
	}
	if (r == 0 && bind_named(req, fd, &t) < 0) {
		int e = errno;

		/* the supervisor may still hold a socket the tree closed on that address:
		 * sweep its references, and try once more */
		if (e == EADDRINUSE && rt && rt->own_sockets && net_socks_sweep(rt) >= 0 &&
		    bind_named(req, fd, &t) == 0)
			e = 0;
		if (e)
			r = fail(d, e, NULL, false) + 1;
	} else if (r == 0 && t.have_res)
		(void) t.names->bound(&t.res, caller_umask(emu_req_tgid(req)));
	target_done(&t);
	if (rt)
		pthread_rwlock_unlock(&rt->mode_lock);
	if (r > 0)
		return 0;
	return ret_val(d, 0, NULL);
}

int net_handle_listen(const EmuRequest *req, EmuDecision *d)
{
	NetRuntime *rt = net_runtime_of(req);
	_cleanup_close_ int fd = -1;
	struct sockaddr_storage ss = {};
	socklen_t sl = sizeof(ss);
	int domain, type, r;
	Target t = {};

	if (full_for_good(rt, req)) {
		d->verdict = EMU_CONTINUE;
		return 0;
	}
	r = caller_socket(req, req->args[0], &fd, &domain, &type);
	if (r != 0)
		return socket_fail(d, r);
	if (rt)
		pthread_rwlock_rdlock(&rt->mode_lock);
	if (domain == AF_INET || domain == AF_INET6) {
		/* the decision is on the socket's bound address and the listen is made on the
		 * same duplicate: no child memory involved */
		if (getsockname(fd, (struct sockaddr *) &ss, &sl) < 0)
			r = fail(d, errno, NULL, false) + 1;
		else
			r = decide(rt, req, NET_OP_LISTEN, domain, type, (const uint8_t *) &ss,
				   MIN((size_t) sl, sizeof(ss)), &t, d);
		if (r == 0)
			target_done(&t);
	}
	if (r == 0 && listen(fd, (int) req->args[1]) < 0)
		r = fail(d, errno, NULL, false) + 1;
	if (rt)
		pthread_rwlock_unlock(&rt->mode_lock);
	if (r > 0)
		return 0;
	return ret_val(d, 0, NULL);
}

/* ---- sends ---- */

static void sigpipe_if_needed(const EmuRequest *req, int e, int flags, int type)
{
	/* the supervisor sends with MSG_NOSIGNAL (a SIGPIPE would be its own); the child
	 * gets the one the kernel would have sent it */
	if (e == EPIPE && !(flags & MSG_NOSIGNAL) && type != SOCK_DGRAM)
		(void) syscall(SYS_tgkill, emu_req_tgid(req), req->pid, SIGPIPE);
}

/* Copies up to NET_SEND_MAX bytes described by the iovecs (already copied out of the child);
 * *ret_len is what was copied, *ret_total what the child asked to send. 0 or a positive
 * errno. */
static int copy_data(const EmuRequest *req, const struct iovec *iov, size_t iovlen, uint8_t *data,
		     size_t *ret_len, uint64_t *ret_total)
{
	uint64_t total = 0;
	size_t have = 0;

	for (size_t i = 0; i < iovlen; i++) {
		size_t take;

		if ((ssize_t) iov[i].iov_len < 0)
			return EINVAL;
		total += iov[i].iov_len;
		take = MIN(iov[i].iov_len, NET_SEND_MAX - have);
		if (take > 0 && req->mem->read(req->mem, (uint64_t) (uintptr_t) iov[i].iov_base,
					       data + have, take) < 0)
			return EFAULT;
		have += take;
	}
	*ret_len = have;
	*ret_total = total;
	return 0;
}

/* Replaces the fds of SCM_RIGHTS messages by duplicates of the caller's (the caller closes
 * them through fds); *ret_inet is set when one is an AF_INET/AF_INET6 socket. 0 or a
 * positive errno. */
/*
 * COMPAT (pidfd_getfd refused): a descriptor that is not a socket, for SCM_RIGHTS, reopened
 * through /proc/TID/fd/N with the access mode and status flags of the caller's (fdinfo).
 * Deviation: the receiver gets a new open file description of the same file, pipe or
 * directory (its own offset and status flags); what cannot be reopened (an eventfd, an epoll
 * instance…) fails with EPERM. The caller holds the fd, so the reopen grants nothing new.
 */
static int reopen_child_fd(const EmuRequest *req, int childfd)
{
	int flags = 0, fd, r;

	r = child_fd_info(req->pid, childfd, NULL, &flags, NULL);
	if (r < 0)
		return r;
	if (flags & O_PATH)
		return child_fd_open(req->pid, childfd, O_PATH);
	/* O_NONBLOCK for the open: a FIFO open for reading must not wait for a writer */
	fd = child_fd_open(req->pid, childfd, (flags & (O_ACCMODE | O_APPEND)) | O_NONBLOCK);
	if (fd >= 0 && !(flags & O_NONBLOCK))
		(void) fcntl(fd, F_SETFL, flags & O_APPEND);
	return fd;
}

static int translate_rights(const EmuRequest *req, struct msghdr *m, int *fds, size_t *n_fds,
			    size_t max_fds, bool *ret_inet)
{
	NetRuntime *rt = net_runtime_of(req);
	_cleanup_close_ int pidfd = -1;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		size_t n;
		int *p;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		if (c->cmsg_len < CMSG_LEN(0))
			return EINVAL;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		p = (int *) CMSG_DATA(c);
		if (pidfd < 0 && !(rt && rt->own_sockets)) {
			pidfd = (int) syscall(SYS_pidfd_open, emu_req_tgid(req), 0);
			if (pidfd < 0)
				return ESRCH;
		}
		for (size_t i = 0; i < n; i++) {
			int fd = -1;

			if (*n_fds >= max_fds)
				return ETOOMANYREFS;
			int domain = 0;
			socklen_t sl = sizeof(domain);

			if (rt && rt->own_sockets) {
				int type, r;

				r = net_socks_get(rt, req, p[i], true, &fd, &domain, &type);

				if (r == ENOTSOCK)
					fd = reopen_child_fd(req, p[i]);
				else if (r != 0)
					return r > 0 ? r : EPERM;
				if (fd < 0)
					return fd == -EBADF ? EBADF : EPERM;
			} else
				fd = (int) syscall(SYS_pidfd_getfd, pidfd, p[i], 0);
			if (fd < 0)
				return EBADF;
			fds[(*n_fds)++] = fd;
			p[i] = fd;
			if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &sl) == 0 &&
			    (domain == AF_INET || domain == AF_INET6))
				*ret_inet = true;
		}
	}
	return 0;
}

/* One message to send, its parts already copied out of the child except data and control. */
typedef struct SendArgs {
	const char *op;	     /* the syscall, named in a held send's question */
	const uint8_t *name; /* the supervisor's copy; NULL: the connected peer */
	size_t name_len;
	const struct iovec *iov; /* copied iovecs, pointing into the child */
	size_t iovlen;
	uint64_t control; /* child address, 0: none */
	size_t controllen;
	int flags;
} SendArgs;

/*
 * Copies data and control of one message, decides its name, sends it on fd. Returns 0 with
 * *ret_n, 1 with the child's error in d, or -errno for a supervisor failure.
 */
static int send_one(NetRuntime *rt, const EmuRequest *req, int fd, int domain, int type,
		    const SendArgs *a, ssize_t *ret_n, EmuDecision *d)
{
	_cleanup_free_ uint8_t *data = malloc(NET_SEND_MAX), *control = NULL;
	size_t data_len = 0, n_fds = 0;
	int fds[253], r, e = 0; /* SCM_MAX_FD */
	bool inet_rights = false;
	uint64_t total = 0;
	struct iovec iov;
	struct msghdr m = {};
	Target t = {};
	ssize_t n = 0;

	if (!data)
		return -ENOMEM;
	/* TOCTOU: data and control are copied once; the decision (on the name copied by the
	 * caller) and the send use the copies only */
	r = copy_data(req, a->iov, a->iovlen, data, &data_len, &total);
	if (r > 0)
		return fail(d, r, NULL, false) + 1;
	if (total > NET_SEND_MAX && type != SOCK_STREAM)
		return fail(d, EMSGSIZE, "message over the supervisor's copy limit", false) + 1;
	if (a->control && a->controllen > 0) {
		if (a->controllen > NET_CONTROL_MAX)
			return fail(d, ENOBUFS, "control data over the supervisor's copy limit",
				    false) +
			       1;
		control = malloc(a->controllen);
		if (!control)
			return -ENOMEM;
		if (req->mem->read(req->mem, a->control, control, a->controllen) < 0)
			return fail(d, EFAULT, NULL, false) + 1;
		m.msg_control = control;
		m.msg_controllen = a->controllen;
		r = translate_rights(req, &m, fds, &n_fds, ARRAY_SIZE(fds), &inet_rights);
		if (r > 0) {
			for (size_t i = 0; i < n_fds; i++)
				(void) close(fds[i]);
			return fail(d, r, NULL, false) + 1;
		}
	}
	iov = (struct iovec){data, data_len};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;

	if (rt)
		pthread_rwlock_rdlock(&rt->mode_lock);
	r = 0;
	if (a->name && a->name_len > 0) {
		unsigned gen = rt ? atomic_load(&rt->gen) : 0;
		NetAddr asked;

		r = decide_ask(rt, req, NET_OP_SENDTO, domain, type, a->name, a->name_len, &t, d,
			       &asked);
		if (r == 2) {
			/* held (unlisted = "ask"; decide_ask asks only with a runtime): asked
			 * without the mode lock, as a connect is; a ratchet drop meanwhile (gen
			 * moved) voids the answer. The send below is made under the lock taken
			 * again here, so no drop can come between this check and the send. */
			bool allowed;

			pthread_rwlock_unlock(&rt->mode_lock);
			allowed = ask_dest(rt, req, a->op, &asked, d);
			pthread_rwlock_rdlock(&rt->mode_lock);
			if (!allowed)
				r = 1;
			else if (atomic_load(&rt->gen) != gen)
				r = fail(d, connect_errno(req), "network restricted while asking",
					 true) +
				    1;
			else {
				/* TOCTOU: the name asked about is the supervisor's copy, sent below
				 */
				memcpy(&t.ss, a->name, a->name_len);
				t.len = (socklen_t) a->name_len;
				t.redirected = false;
				r = 0;
			}
		}
		m.msg_name = &t.ss;
		m.msg_namelen = t.len;
	}
	/* TOCTOU: the control data is the supervisor's copy, the one that is sent */
	if (r == 0 && control && m.msg_controllen > 0 &&
	    (rt ? net_ratchet_mode(&rt->ratchet) : req->policy->network.mode) != NET_MODE_FULL &&
	    routing_cmsg(&m))
		r = fail(d, EPERM, "ancillary data that changes routing", true) + 1;
	/* An inet socket in flight is in no process's fd table: the ratchet's shutdown walk
	 * (net_on_sensitive_open) could not reach it, and the receiver would get it after the
	 * drop still able to send. While a drop can still come (under the read lock: none can
	 * come before this send is done), such a socket is not passed. */
	if (r == 0 && inet_rights && rt && net_ratchet_mode(&rt->ratchet) > rt->lowest)
		r = fail(d, EPERM, "an inet socket in SCM_RIGHTS while the ratchet may drop",
			 true) +
		    1;
	if (r == 0) {
		n = sendmsg(fd, &m, a->flags | MSG_NOSIGNAL);
		if (n < 0)
			e = errno;
		else if (t.redirected && rt)
			record_redirect(rt, fd, a->name, a->name_len);
		target_done(&t);
	}
	if (rt)
		pthread_rwlock_unlock(&rt->mode_lock);
	for (size_t i = 0; i < n_fds; i++)
		(void) close(fds[i]);
	if (r > 0)
		return 1;
	if (e) {
		sigpipe_if_needed(req, e, a->flags, type);
		return fail(d, e, d->why, false) + 1;
	}
	*ret_n = n;
	return 0;
}

int net_handle_sendto(const EmuRequest *req, EmuDecision *d)
{
	NetRuntime *rt = net_runtime_of(req);
	_cleanup_close_ int fd = -1;
	struct iovec iov = {(void *) (uintptr_t) req->args[1], (size_t) req->args[2]};
	uint8_t buf[NET_SOCKADDR_MAX];
	size_t len = 0;
	int domain, type, r;
	ssize_t n = 0;
	SendArgs a;

	/* the filter sends only sendto with an address here: without one the kernel uses the
	 * connected peer, which connect() checked */
	if (full_for_good(rt, req)) {
		d->verdict = EMU_CONTINUE;
		return 0;
	}
	/* TOCTOU: copied once (addrlen is a register: over 128 is EINVAL, as in
	 * move_addr_to_kernel()) */
	r = net_copy_sockaddr(req->mem, req->args[4], req->args[5], buf, &len);
	if (r < 0)
		return fail(d, -r, "bad address", false);
	r = caller_socket(req, req->args[0], &fd, &domain, &type);
	if (r != 0)
		return socket_fail(d, r);
	a = (SendArgs){.op = "sendto",
		       .name = buf,
		       .name_len = len,
		       .iov = &iov,
		       .iovlen = 1,
		       .flags = (int) req->args[3]};
	r = send_one(rt, req, fd, domain, type, &a, &n, d);
	if (r != 0)
		return r > 0 ? 0 : r;
	return ret_val(d, n, d->why);
}

/*
 * setsockopt(2): notified by the filter only for the options routing_option() names (level
 * and name are registers: tracer/filter.c). Outside mode "full" they fail with EPERM. In
 * "full" for good the kernel runs the call (a register-only decision); in "full" that a
 * ratchet may lower, the option is set on the duplicate under the mode lock, with a copy of
 * the value, so that a drop cannot slip between the decision and the call (the drop's
 * shutdown walk then comes after, and reaches this socket too).
 */
int net_handle_setsockopt(const EmuRequest *req, EmuDecision *d)
{
	NetRuntime *rt = net_runtime_of(req);
	int level = (int) req->args[1], name = (int) req->args[2], domain, type, r, e = 0;
	socklen_t len = (socklen_t) req->args[4];
	_cleanup_close_ int fd = -1;
	uint8_t value[2048 + 8];

	if (!routing_option(level, name)) {
		/* not one of ours (the filter is built from the same list): run it */
		d->verdict = EMU_CONTINUE;
		return 0;
	}
	if ((rt ? net_ratchet_mode(&rt->ratchet) : req->policy->network.mode) != NET_MODE_FULL)
		return fail(d, EPERM, "socket option that changes routing", true);
	if (!rt || !rt->may_drop_below_full) {
		d->verdict = EMU_CONTINUE;
		return 0;
	}
	/* the kernel's limits: an IPv6 routing header is at most 8 × 256 bytes, IP options 40 */
	if ((int) len < 0 || len > sizeof(value))
		return fail(d, EINVAL, NULL, false);
	/* TOCTOU: the value is copied once and the call made with the copy */
	if (len > 0 && req->mem->read(req->mem, req->args[3], value, len) < 0)
		return fail(d, EFAULT, NULL, false);
	r = caller_socket(req, req->args[0], &fd, &domain, &type);
	if (r != 0)
		return socket_fail(d, r);
	pthread_rwlock_rdlock(&rt->mode_lock);
	if (net_ratchet_mode(&rt->ratchet) != NET_MODE_FULL)
		e = -EPERM;
	else if (setsockopt(fd, level, name, len > 0 ? value : NULL, len) < 0)
		e = errno;
	pthread_rwlock_unlock(&rt->mode_lock);
	if (e == -EPERM)
		return fail(d, EPERM, "socket option that changes routing", true);
	if (e)
		return fail(d, e, NULL, false);
	return ret_val(d, 0, NULL);
}

/* Reads the child's struct msghdr at addr and its iovecs into *ret (iovecs in *ret_iov, to
 * free). 0 or a positive errno. */
static int read_msghdr(const EmuRequest *req, uint64_t addr, uint8_t *name, SendArgs *ret,
		       struct iovec **ret_iov)
{
	struct msghdr um;
	struct iovec *iov = NULL;

	/* TOCTOU: one copy of the header; every field used below comes from it */
	if (req->mem->read(req->mem, addr, &um, sizeof(um)) < 0)
		return EFAULT;
	*ret = (SendArgs){.control = (uint64_t) (uintptr_t) um.msg_control,
			  .controllen = um.msg_controllen};
	if (um.msg_name && um.msg_namelen) {
		if ((int) um.msg_namelen < 0)
			return EINVAL;
		/* clamped as __copy_msghdr() does */
		ret->name_len = MIN((size_t) um.msg_namelen, (size_t) NET_SOCKADDR_MAX);
		if (req->mem->read(req->mem, (uint64_t) (uintptr_t) um.msg_name, name,
				   ret->name_len) < 0)
			return EFAULT;
		ret->name = name;
	}
	if (um.msg_iovlen > NET_IOV_MAX)
		return EMSGSIZE;
	if (um.msg_iovlen > 0) {
		iov = calloc(um.msg_iovlen, sizeof(*iov));
		if (!iov)
			return ENOMEM;
		if (req->mem->read(req->mem, (uint64_t) (uintptr_t) um.msg_iov, iov,
				   um.msg_iovlen * sizeof(*iov)) < 0) {
			free(iov);
			return EFAULT;
		}
	}
	ret->iov = iov;
	ret->iovlen = um.msg_iovlen;
	*ret_iov = iov;
	return 0;
}

int net_handle_sendmsg(const EmuRequest *req, EmuDecision *d)
{
	NetRuntime *rt = net_runtime_of(req);
	_cleanup_close_ int fd = -1;
	_cleanup_free_ struct iovec *iov = NULL;
	uint8_t name[NET_SOCKADDR_MAX];
	int domain, type, r;
	ssize_t n = 0;
	SendArgs a;

	if (full_for_good(rt, req)) {
		d->verdict = EMU_CONTINUE;
		return 0;
	}
	/* Even with msg_name NULL the call is emulated: the name is in child memory, and a
	 * thread could set it between our read and the kernel's */
	r = read_msghdr(req, req->args[1], name, &a, &iov);
	if (r > 0)
		return fail(d, r, NULL, false);
	a.op = "sendmsg";
	a.flags = (int) req->args[2];
	r = caller_socket(req, req->args[0], &fd, &domain, &type);
	if (r != 0)
		return socket_fail(d, r);
	r = send_one(rt, req, fd, domain, type, &a, &n, d);
	if (r != 0)
		return r > 0 ? 0 : r;
	return ret_val(d, n, d->why);
}

int net_handle_sendmmsg(const EmuRequest *req, EmuDecision *d)
{
	NetRuntime *rt = net_runtime_of(req);
	_cleanup_close_ int fd = -1;
	unsigned vlen = (unsigned) req->args[2], sent = 0;
	int domain, type, r, flags = (int) req->args[3];

	if (full_for_good(rt, req)) {
		d->verdict = EMU_CONTINUE;
		return 0;
	}
	r = caller_socket(req, req->args[0], &fd, &domain, &type);
	if (r != 0)
		return socket_fail(d, r);
	if (vlen > NET_MMSG_MAX)
		vlen = NET_MMSG_MAX;
	for (unsigned i = 0; i < vlen; i++) {
		_cleanup_free_ struct iovec *iov = NULL;
		uint64_t entry = req->args[1] + (uint64_t) i * NET_MMSGHDR_SIZE;
		uint8_t name[NET_SOCKADDR_MAX];
		uint32_t msg_len;
		ssize_t n = 0;
		SendArgs a;

		r = read_msghdr(req, entry, name, &a, &iov);
		if (r > 0) {
			if (sent > 0)
				break;
			return fail(d, r, NULL, false);
		}
		a.op = "sendmmsg";
		a.flags = flags;
		r = send_one(rt, req, fd, domain, type, &a, &n, d);
		if (r < 0)
			return r;
		if (r > 0) {
			if (sent > 0) {
				/* the count of those sent; their msg_len write-backs stay */
				d->verdict = EMU_CONTINUE;
				d->error = 0;
				d->why = NULL;
				d->denied = false;
				break;
			}
			return 0;
		}
		/* The entry's msg_len is written by tracer/dispatch.c with the others before the
		 * reply (common/handler.h). An unmapped one stops the loop after this message,
		 * which was sent and is not counted: the call answers the messages before it, or
		 * EFAULT when there are none, as the kernel's sendmmsg does. One that reads but
		 * does not write fails the call only there, after the later messages went too. */
		if (req->mem->read(req->mem, entry + NET_MSGHDR_SIZE, &msg_len, sizeof(msg_len)) <
		    0) {
			if (sent > 0)
				break;
			return fail(d, EFAULT, NULL, false);
		}
		msg_len = (uint32_t) n;
		r = emu_writeback(d, entry + NET_MSGHDR_SIZE, &msg_len, sizeof(msg_len));
		if (r < 0)
			return r;
		sent++;
	}
	return ret_val(d, sent, d->why);
}

/* ---- recvfrom: the resolver's address for replies of the stub ---- */

/*
 * The answer of a recvfrom() made here: the datagram (len bytes of *buf, which the decision
 * takes over: up to NET_SEND_MAX bytes, or a whole AF_UNIX datagram, more than the scratch),
 * then addr_len bytes of from cut to the caller's child_len, then from_len: written by
 * tracer/dispatch.c in that order before the reply, as the kernel's recvfrom() copies them.
 * A failed write is the call's EFAULT and the datagram is lost, as it was when the handler
 * wrote and as in the kernel (move_addr_to_user() after the data). n is the call's value.
 */
static int recv_result(EmuDecision *d, const EmuRequest *req, uint8_t **buf, size_t len,
		       const void *from, socklen_t addr_len, socklen_t from_len, int child_len,
		       ssize_t n, const char *why)
{
	int r;

	r = emu_writeback_own(d, req->args[1], TAKE_PTR(*buf), len);
	if (r >= 0)
		r = writeback_addr(d, req->args[4], req->args[5], from, addr_len, from_len,
				   child_len);
	if (r < 0)
		return r;
	return ret_val(d, n, why);
}

/*
 * COMPAT (aliases, bind_alias()): a datagram from a socket bound under an alias shows its
 * sender's name as bound (socketserver's Unix datagram servers answer to it). Peeks at the
 * next datagram's sender; only when that is an alias is the datagram received here, whole
 * (its length from MSG_TRUNC) up to the caller's size, else the kernel receives. With
 * nothing queued the kernel waits and answers, alias and all (socketserver polls first).
 */
static int unix_recvfrom(const EmuRequest *req, int fd, EmuDecision *d)
{
	const EmuUnixNames *names = emu_host_unix_names(req); /* not NULL: the caller checked */
	_cleanup_free_ uint8_t *buf = NULL;
	struct sockaddr_un from = {};
	socklen_t from_len = sizeof(from);
	size_t want = (size_t) req->args[2];
	int flags = (int) req->args[3], child_len = 0;
	unsigned ul;
	ssize_t n;

	d->verdict = EMU_CONTINUE;
	n = recvfrom(fd, NULL, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT, (struct sockaddr *) &from,
		     &from_len);
	ul = from_len;
	if (n < 0 || from_len > sizeof(from) || !names->unalias(req, &from, &ul))
		return 0;
	if (req->mem->read(req->mem, req->args[5], &child_len, sizeof(child_len)) < 0)
		return fail(d, EFAULT, NULL, false);
	if (child_len < 0)
		return fail(d, EINVAL, NULL, false);
	want = MIN(want, (size_t) n);
	buf = malloc(MAX(want, (size_t) 1));
	if (!buf)
		return -ENOMEM;
	from_len = sizeof(from);
	n = recvfrom(fd, buf, want, flags | MSG_DONTWAIT, (struct sockaddr *) &from, &from_len);
	if (n < 0)
		return errno == EAGAIN && !(flags & MSG_DONTWAIT) ? 0 : fail(d, errno, NULL, false);
	ul = MIN(from_len, (socklen_t) sizeof(from));
	if (names->unalias(req, &from, &ul))
		from_len = ul;
	return recv_result(d, req, &buf, (size_t) MIN((size_t) n, want), &from,
			   MIN(from_len, (socklen_t) sizeof(from)), from_len, child_len, n,
			   "the name the sender bound");
}

int net_handle_recvfrom(const EmuRequest *req, EmuDecision *d)
{
	NetRuntime *rt = net_runtime_of(req);
	_cleanup_close_ int fd = -1;
	_cleanup_free_ uint8_t *buf = NULL;
	struct sockaddr_storage from = {};
	socklen_t from_len = sizeof(from), orig_len = 0;
	uint8_t orig[NET_SOCKADDR_MAX];
	size_t want = (size_t) req->args[2];
	int flags = (int) req->args[3], domain, type, r, child_len = 0;
	struct stat st;
	ssize_t n;

	/* Not a security decision: receiving does not reach anywhere new. Any socket that was
	 * not redirected runs in the kernel (a thread swapping the fd only makes its own DNS
	 * reply look foreign). */
	bool alias = unix_aliased(rt) && emu_host_unix_names(req);

	if ((!rt || !atomic_load(&rt->any_redirect)) && !alias) {
		d->verdict = EMU_CONTINUE;
		return 0;
	}
	r = caller_socket(req, req->args[0], &fd, &domain, &type);
	if (r == 0 && domain == AF_UNIX && alias && type != SOCK_STREAM)
		return unix_recvfrom(req, fd, d);
	if (r != 0 || !rt || fstat(fd, &st) < 0 ||
	    !net_redirect_find(rt, st.st_dev, st.st_ino, orig, &orig_len)) {
		d->verdict = EMU_CONTINUE;
		return 0;
	}
	if (req->mem->read(req->mem, req->args[5], &child_len, sizeof(child_len)) < 0)
		return fail(d, EFAULT, NULL, false);
	if (child_len < 0)
		return fail(d, EINVAL, NULL, false);
	want = MIN(want, (size_t) NET_SEND_MAX);
	buf = malloc(MAX(want, (size_t) 1));
	if (!buf)
		return -ENOMEM;
	n = recvfrom(fd, buf, want, flags | MSG_DONTWAIT, (struct sockaddr *) &from, &from_len);
	if (n < 0) {
		int e = errno;

		if (e == EAGAIN && !(flags & MSG_DONTWAIT) && !(fcntl(fd, F_GETFL) & O_NONBLOCK)) {
			/* would block: let the kernel wait (see the deviations above) */
			d->verdict = EMU_CONTINUE;
			return 0;
		}
		return fail(d, e, NULL, false);
	}
	if (net_is_stub_addr(rt, (struct sockaddr *) &from, from_len)) {
		memcpy(&from, orig, orig_len);
		from_len = orig_len;
	}
	return recv_result(d, req, &buf, MIN((size_t) n, want), &from,
			   MIN(from_len, (socklen_t) sizeof(from)), from_len, child_len, n,
			   "reply of the DNS stub");
}
