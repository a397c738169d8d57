/* SPDX-License-Identifier: MIT */
/*
 * The run's network state (net/internal.h): the ratchet and the lock that orders it against
 * emulated connects and sends, the learned set, the resolvers the child believes in, the
 * sockets redirected to the stub, and the DNS stub itself — one thread polling a UDP socket
 * and a TCP listener on 127.0.0.1 (ephemeral ports), answering each query with
 * net_dns_stub_answer(); a TCP client gets a thread of its own (at most STUB_TCP_CLIENTS).
 * docs/network.md has the reasons.
 *
 * The stub's sockets and thread are made when the first query is redirected to it
 * (net_stub_wake(), from the connect/sendto handler, before the child's call goes on): most
 * runs ask no DNS, and the thread cost every run its creation and, at the end, a cross-CPU
 * wake-up and a join, 0.3-1.5 ms on the 2-core VM (docs/performance.md, "Startup against
 * bubblewrap"); the two sockets (a bind each to an ephemeral loopback port) cost the start
 * 18 µs more ("Less work after the fork"). Only a redirect names the stub to the child: the
 * handler asks net_stub_wake() for the address it redirects to, and the sockets exist, their
 * thread started, before the child's call goes on. A query that reaches the sockets before
 * the thread runs waits in their queues (a datagram, a pending connection), as one does while
 * the thread is busy: nothing is answered without the thread, nothing is lost.
 */
#include "net/handlers.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/log.h"
#include "common/macros.h"
#include "common/util.h"
#include "net/dns.h"
#include "net/internal.h"
#include "net/shutdown.h"
#include "net/stub.h"

#define STUB_TIMEOUT_MS	      2000 /* per upstream */
#define STUB_TCP_CLIENTS      16
#define STUB_TCP_IDLE_MS      10000
#define RESOLV_CONF_MAX_BYTES (64 * 1024)

/*
 * No process-global: net_runtime_start() hands the state to the supervisor, which passes it
 * to everything that needs it — the handlers through their request's host (net_runtime_of(),
 * EmuHost.net_runtime), tracer/ as an argument (Tracer.net). Two runs in one process (the unit
 * tests) therefore cannot see each other's state.
 */

NetMode net_runtime_mode(NetRuntime *rt)
{
	return rt ? net_ratchet_mode(&rt->ratchet) : NET_MODE_NONE;
}

Sensitivity net_runtime_level(NetRuntime *rt)
{
	return rt ? net_ratchet_max(&rt->ratchet) : SENSITIVITY_NONE;
}

void net_runtime_set_event(NetRuntime *rt, NetRatchetEvent fn, void *userdata)
{
	if (!rt)
		return;
	rt->event = fn;
	rt->event_userdata = userdata;
}

void net_runtime_set_netns_private(NetRuntime *rt, bool maybe)
{
	if (rt)
		atomic_store(&rt->netns_differs, maybe ? 0 : 1);
}

void net_runtime_set_asker(NetRuntime *rt, NetAskFn fn, void *userdata)
{
	if (!rt)
		return;
	rt->ask = fn;
	rt->ask_userdata = userdata;
}

void net_redirect_add(NetRuntime *rt, dev_t dev, ino_t ino, const void *orig, socklen_t len)
{
	NetRedirect *e = NULL;

	if (len > NET_SOCKADDR_MAX)
		len = NET_SOCKADDR_MAX;
	pthread_mutex_lock(&rt->redirect_lock);
	if (!rt->redirects) {
		/* 38 KB that most runs never touch: not at start (docs/performance.md) */
		rt->redirects = calloc(NET_MAX_REDIRECTS, sizeof(*rt->redirects));
		if (!rt->redirects) {
			/* the socket then sees the stub's address as its peer */
			pthread_mutex_unlock(&rt->redirect_lock);
			return;
		}
	}
	for (size_t i = 0; i < rt->n_redirects; i++)
		if (rt->redirects[i].dev == dev && rt->redirects[i].ino == ino)
			e = &rt->redirects[i];
	if (!e) {
		/* bounded: the oldest entry goes (its socket then sees the stub's address) */
		if (rt->n_redirects < NET_MAX_REDIRECTS)
			e = &rt->redirects[rt->n_redirects++];
		else {
			e = &rt->redirects[rt->next_redirect];
			rt->next_redirect = (rt->next_redirect + 1) % NET_MAX_REDIRECTS;
		}
	}
	e->dev = dev;
	e->ino = ino;
	memcpy(e->orig, orig, len);
	e->orig_len = len;
	atomic_store(&rt->any_redirect, true);
	pthread_mutex_unlock(&rt->redirect_lock);
}

bool net_redirect_find(NetRuntime *rt, dev_t dev, ino_t ino, uint8_t *ret_orig, socklen_t *ret_len)
{
	bool found = false;

	pthread_mutex_lock(&rt->redirect_lock);
	for (size_t i = 0; i < rt->n_redirects; i++)
		if (rt->redirects[i].dev == dev && rt->redirects[i].ino == ino) {
			memcpy(ret_orig, rt->redirects[i].orig, rt->redirects[i].orig_len);
			*ret_len = rt->redirects[i].orig_len;
			found = true;
			break;
		}
	pthread_mutex_unlock(&rt->redirect_lock);
	return found;
}

bool net_is_stub_addr(NetRuntime *rt, const struct sockaddr *sa, socklen_t len)
{
	NetAddr a, s;

	/* before the stub is made no address is its own */
	if (!atomic_load(&rt->stub_ready) || net_sockaddr_decode(sa, len, &a) < 0 ||
	    (a.family != AF_INET && a.family != AF_INET6))
		return false;
	for (int i = 0; i < 2; i++) {
		const struct sockaddr_in *sin = i ? &rt->stub_tcp_addr : &rt->stub_udp_addr;

		net_addr_from_ip(AF_INET, &sin->sin_addr, ntohs(sin->sin_port), &s);
		if (a.port == s.port && net_addr_ip_equal(&a, &s))
			return true;
	}
	return false;
}

/* ---- the stub ---- */

static void stub_config(NetRuntime *rt, NetDnsStubConfig *cfg)
{
	*cfg = (NetDnsStubConfig){
		.policy = &rt->policy->network,
		.mode = net_ratchet_mode(&rt->ratchet),
		.learned = rt->learned,
		.upstreams = rt->upstreams,
		.upstream_lens = rt->upstream_lens,
		.n_upstreams = rt->n_upstreams,
		.timeout_ms = STUB_TIMEOUT_MS,
	};
}

static void stub_udp_one(NetRuntime *rt)
{
	_cleanup_free_ uint8_t *q = malloc(NET_DNS_MAX_MESSAGE),
			       *reply = malloc(NET_DNS_MAX_MESSAGE);
	struct sockaddr_storage from;
	socklen_t fl = sizeof(from);
	NetDnsStubConfig cfg;
	NetDnsOutcome o;
	size_t rl = 0;
	ssize_t n;

	if (!q || !reply)
		return;
	n = recvfrom(rt->stub_udp, q, NET_DNS_MAX_MESSAGE, MSG_DONTWAIT, (struct sockaddr *) &from,
		     &fl);
	if (n <= 0)
		return;
	stub_config(rt, &cfg);
	if (net_dns_stub_answer(&cfg, q, (size_t) n, false, reply, NET_DNS_MAX_MESSAGE, &rl, &o) <
		    0 ||
	    rl == 0)
		return;
	log_debug("dns stub: udp '%s' type %u rcode %d learned %zu", o.name, o.qtype, o.rcode,
		  o.n_learned);
	(void) sendto(rt->stub_udp, reply, rl, MSG_DONTWAIT | MSG_NOSIGNAL,
		      (struct sockaddr *) &from, fl);
}

typedef struct TcpClient {
	NetRuntime *rt;
	int fd;
} TcpClient;

static void *stub_tcp_client(void *userdata)
{
	TcpClient *c = userdata;
	NetRuntime *rt = c->rt;
	_cleanup_close_ int fd = c->fd;
	_cleanup_free_ uint8_t *in = malloc(NET_DNS_MAX_MESSAGE + 2),
			       *reply = malloc(NET_DNS_MAX_MESSAGE),
			       *framed = malloc(NET_DNS_MAX_MESSAGE + 2);
	size_t have = 0;

	free(c);
	while (in && reply && framed) {
		struct pollfd p[2] = {{fd, POLLIN, 0}, {rt->stub_stop, POLLIN, 0}};
		size_t mlen = 0, rl = 0, fl = 0;
		NetDnsStubConfig cfg;
		NetDnsOutcome o;
		ssize_t n;
		int r;

		r = net_dns_tcp_next(in, have, &mlen);
		if (r < 0)
			break;
		if (r == 0) {
			if (have >= NET_DNS_MAX_MESSAGE + 2)
				break;
			if (poll(p, 2, STUB_TCP_IDLE_MS) <= 0 || p[1].revents)
				break;
			n = read(fd, in + have, NET_DNS_MAX_MESSAGE + 2 - have);
			if (n <= 0)
				break;
			have += (size_t) n;
			continue;
		}
		stub_config(rt, &cfg);
		if (net_dns_stub_answer(&cfg, in + 2, mlen, true, reply, NET_DNS_MAX_MESSAGE, &rl,
					&o) < 0)
			break;
		log_debug("dns stub: tcp '%s' type %u rcode %d learned %zu", o.name, o.qtype,
			  o.rcode, o.n_learned);
		memmove(in, in + 2 + mlen, have - 2 - mlen);
		have -= 2 + mlen;
		if (rl == 0)
			continue;
		if (net_dns_tcp_frame(reply, rl, framed, NET_DNS_MAX_MESSAGE + 2, &fl) < 0 ||
		    write_all(fd, framed, fl) < 0)
			break;
	}
	atomic_fetch_sub(&rt->stub_tcp_clients, 1);
	return NULL;
}

static void stub_tcp_accept(NetRuntime *rt)
{
	int fd = accept4(rt->stub_tcp, NULL, NULL, SOCK_CLOEXEC);
	pthread_attr_t attr;
	pthread_t th;
	TcpClient *c;

	if (fd < 0)
		return;
	if (atomic_fetch_add(&rt->stub_tcp_clients, 1) >= STUB_TCP_CLIENTS)
		goto fail;
	c = malloc(sizeof(*c));
	if (!c)
		goto fail;
	*c = (TcpClient){rt, fd};
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, stub_tcp_client, c) != 0) {
		pthread_attr_destroy(&attr);
		free(c);
		goto fail;
	}
	pthread_attr_destroy(&attr);
	return;
fail:
	atomic_fetch_sub(&rt->stub_tcp_clients, 1);
	(void) close(fd);
}

static void *stub_main(void *userdata)
{
	NetRuntime *rt = userdata;

	for (;;) {
		struct pollfd p[3] = {{rt->stub_stop, POLLIN, 0},
				      {rt->stub_udp, POLLIN, 0},
				      {rt->stub_tcp, POLLIN, 0}};

		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents)
			break;
		if (p[1].revents & POLLIN)
			stub_udp_one(rt);
		if (p[2].revents & POLLIN)
			stub_tcp_accept(rt);
	}
	return NULL;
}

static int stub_socket(int type, struct sockaddr_in *ret_addr)
{
	_cleanup_close_ int fd = -1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(a);

	fd = socket(AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *) &a, sizeof(a)) < 0)
		return -errno;
	if (type == SOCK_STREAM && listen(fd, 64) < 0)
		return -errno;
	if (getsockname(fd, (struct sockaddr *) &a, &l) < 0)
		return -errno;
	*ret_addr = a;
	return TAKE_FD(fd);
}

/* The stub's sockets and its stop eventfd, under stub_lock; a failure leaves none of them,
 * and the next query tries again. */
static int stub_make(NetRuntime *rt)
{
	_cleanup_close_ int udp = -1, tcp = -1, stop = -1;

	udp = stub_socket(SOCK_DGRAM, &rt->stub_udp_addr);
	if (udp < 0)
		return udp;
	tcp = stub_socket(SOCK_STREAM, &rt->stub_tcp_addr);
	if (tcp < 0)
		return tcp;
	stop = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (stop < 0)
		return -errno;
	rt->stub_udp = TAKE_FD(udp);
	rt->stub_tcp = TAKE_FD(tcp);
	rt->stub_stop = TAKE_FD(stop);
	atomic_store(&rt->stub_ready, true);
	return 0;
}

int net_stub_wake(NetRuntime *rt)
{
	int r = 0;

	if (!rt->stub_running)
		return -ENOENT;
	pthread_mutex_lock(&rt->stub_lock);
	if (!atomic_load(&rt->stub_ready))
		r = stub_make(rt);
	if (r == 0 && !rt->stub_thread_started) {
		r = -pthread_create(&rt->stub_thread, NULL, stub_main, rt);
		rt->stub_thread_started = r == 0;
	}
	pthread_mutex_unlock(&rt->stub_lock);
	return r;
}

/* ---- start and stop ---- */

static void load_resolvers(NetRuntime *rt)
{
	_cleanup_free_ char *text = NULL;
	struct sockaddr_storage ss[NET_MAX_RESOLVERS];
	socklen_t lens[NET_MAX_RESOLVERS];
	size_t n = 0, len = 0;

	/* COMPAT: until the file-system view serves its own /etc/resolv.conf, the child sees
	 * the host's */
	if (read_full_file(AT_FDCWD, "/etc/resolv.conf", RESOLV_CONF_MAX_BYTES, &text, &len) >= 0)
		(void) net_dns_parse_resolv_conf(text, ss, lens, NET_MAX_RESOLVERS, &n);
	for (size_t i = 0; i < n; i++)
		if (net_sockaddr_decode(&ss[i], lens[i], &rt->resolvers[rt->n_resolvers]) >= 0)
			rt->n_resolvers++;
	if (!rt->policy->network.dns) {
		for (size_t i = 0; i < n; i++) {
			rt->upstreams[i] = ss[i];
			rt->upstream_lens[i] = lens[i];
		}
		rt->n_upstreams = n;
		return;
	}
	for (char **s = rt->policy->network.dns; *s && rt->n_upstreams < NET_MAX_RESOLVERS; s++)
		if (net_dns_parse_server(*s, &rt->upstreams[rt->n_upstreams],
					 &rt->upstream_lens[rt->n_upstreams]) >= 0)
			rt->n_upstreams++;
}

static void runtime_free(NetRuntime *rt)
{
	if (rt->stub_thread_started) {
		(void) eventfd_write(rt->stub_stop, 1);
		(void) pthread_join(rt->stub_thread, NULL);
		/* TCP clients see the eventfd too and leave within one poll */
		while (atomic_load(&rt->stub_tcp_clients) > 0)
			(void) poll(NULL, 0, 5);
	}
	if (rt->stub_udp >= 0)
		(void) close(rt->stub_udp);
	if (rt->stub_tcp >= 0)
		(void) close(rt->stub_tcp);
	if (rt->stub_stop >= 0)
		(void) close(rt->stub_stop);
	net_socks_done(rt);
	net_learned_free(rt->learned);
	free(rt->redirects);
	free(rt->ask_allowed);
	pthread_mutex_destroy(&rt->ask_lock);
	net_ratchet_done(&rt->ratchet);
	pthread_rwlock_destroy(&rt->mode_lock);
	pthread_mutex_destroy(&rt->redirect_lock);
	pthread_mutex_destroy(&rt->stub_lock);
	free(rt);
}

void net_runtime_stop(NetRuntime *rt)
{
	if (rt)
		runtime_free(rt);
}

int net_runtime_start(const Policy *p, pid_t root, NetTreeWalk walk, NetRuntime **ret_rt)
{
	NetRuntime *rt;
	int r;

	rt = calloc(1, sizeof(*rt));
	if (!rt)
		return -ENOMEM;
	/* The stub writes to TCP clients and the ratchet to the child's stderr (a pipe): a
	 * reader that went away must not kill the supervisor with SIGPIPE (the command resets
	 * its own disposition before exec) */
	(void) signal(SIGPIPE, SIG_IGN);
	rt->policy = p;
	rt->root = root;
	rt->walk = walk;
	rt->stub_udp = rt->stub_tcp = rt->stub_stop = -1;
	pthread_rwlock_init(&rt->mode_lock, NULL);
	pthread_mutex_init(&rt->redirect_lock, NULL);
	pthread_mutex_init(&rt->stub_lock, NULL);
	net_socks_init(rt, !pidfd_getfd_usable());
	pthread_mutex_init(&rt->ask_lock, NULL);
	r = net_ratchet_init(&rt->ratchet, p->network.mode);
	if (r < 0) {
		net_socks_done(rt);
		free(rt);
		return r;
	}
	/* Only a level some rule sets can be opened: every policy has a map (the defaults of
	 * docs/policy.md), and a full-mode policy without levels keeps its calls in the
	 * kernel. */
	rt->lowest = p->network.mode;
	for (size_t i = 0; i < p->n_rules; i++) {
		int t = p->rules[i].level > SENSITIVITY_NONE
				? net_ratchet_target(&p->network, p->rules[i].level)
				: -ENOENT;

		if (t >= 0 && t < (int) p->network.mode)
			rt->may_drop_below_full = true;
		if (t >= 0 && t < (int) rt->lowest)
			rt->lowest = (NetMode) t;
	}
	/* Addresses learned from DNS answers: only the stub adds them, and there is no stub
	 * when the run starts in none (the ratchet only ever lowers the mode). */
	if (p->network.mode != NET_MODE_NONE) {
		rt->learned = net_learned_new(0, NULL, NULL);
		if (!rt->learned) {
			r = -ENOMEM;
			goto fail;
		}
	}
	load_resolvers(rt);
	/* The stub answers in every mode but none (where no inet socket exists to ask it);
	 * a ratchet drop to none makes it refuse (net_dns_decide) */
	rt->stub_running = p->network.mode != NET_MODE_NONE;
	*ret_rt = rt;
	return 0;
fail:
	runtime_free(rt);
	return r;
}

/* ---- the ratchet ---- */

typedef struct ShutCtx {
	unsigned count;
	int error;
} ShutCtx;

static int shut_visit(pid_t pid, void *userdata)
{
	ShutCtx *c = userdata;
	_cleanup_close_ int pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
	unsigned n = 0;
	int r;

	if (pidfd < 0)
		return 0; /* gone */
	r = net_shutdown_inet_sockets(pidfd, pid, &n);
	if (r < 0 && r != -ESRCH && !c->error)
		c->error = r;
	c->count += n;
	return 0;
}

static void tell_child(pid_t tgid, const char *line)
{
	_cleanup_close_ int pidfd = (int) syscall(SYS_pidfd_open, tgid, 0), fd = -1;

	if (pidfd < 0)
		return;
	fd = (int) syscall(SYS_pidfd_getfd, pidfd, STDERR_FILENO, 0);
	if (fd < 0 && (errno == EPERM || errno == ENOSYS))
		/* COMPAT (pidfd_getfd refused): a reopen, as a pipe, a terminal or a file allow
		 * (a socket does not: no notice then) */
		fd = child_fd_open(tgid, STDERR_FILENO, O_WRONLY | O_APPEND | O_NONBLOCK);
	if (fd >= 0)
		(void) write_all(fd, line, strlen(line));
}

int net_on_sensitive_open(NetRuntime *rt, const EmuRequest *req, Sensitivity level,
			  const char *path)
{
	ShutCtx c = {};
	NetMode old = NET_MODE_NONE, new = NET_MODE_NONE;
	char line[160];
	pid_t tgid;
	int r;

	if (!rt || level <= SENSITIVITY_NONE || level >= _SENSITIVITY_MAX)
		return 0;
	/* writer: no emulated connect or send is between its decision and its call now */
	pthread_rwlock_wrlock(&rt->mode_lock);
	r = net_ratchet_open(&rt->ratchet, &rt->policy->network, level, &old, &new);
	if (r == 1) {
		atomic_fetch_add(&rt->gen, 1);
		if (rt->own_sockets) {
			/* the supervisor holds every socket the tree made (net/socktab.c) */
			int w = net_socks_shutdown_inet(rt, &c.count);

			if (w < 0)
				c.error = w;
		} else if (rt->walk) {
			int w = rt->walk(rt->root, shut_visit, &c);

			if (w < 0 && !c.error)
				c.error = w; /* a part of the tree unvisited */
		}
	}
	pthread_rwlock_unlock(&rt->mode_lock);
	if (r != 1)
		return r;
	log_debug("ratchet: %s -> %s after '%.200s' (%s); %u socket(s) shut down",
		  net_mode_name(old), net_mode_name(new), path ? path : "",
		  sensitivity_to_string(level), c.count);
	tgid = req ? emu_req_tgid(req) : 0;
	if (rt->event)
		rt->event(rt->event_userdata, tgid, path, level, old, new, c.count);
	if (req)
		tell_child(tgid, net_ratchet_notice(new, level, line, sizeof(line)));
	if (c.error < 0) {
		/* Completeness not established (a non-dumpable process whose fds we may not
		 * read, a thread pidfd the kernel refuses, a walk that failed): fail closed,
		 * the caller kills the tree. */
		log_debug_errno(c.error, "ratchet: cannot reach every socket of the tree");
		return c.error;
	}
	return 1;
}
