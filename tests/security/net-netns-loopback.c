/* SPDX-License-Identifier: MIT */
/*
 * Issue 20 (connect): with network.unshare = true and mode "loopback" the tree runs in a
 * network namespace of its own with lo up, and with the view in the kernel its connect,
 * bind, listen and sends run in the kernel unnotified (tracer/filter.c, net_runs_in_kernel;
 * docs/network.md "Loopback in a namespace of its own"). The namespace is then the only
 * thing between the tree and the host's loopback services, so this tries to reach them:
 *
 *   host_listener      connect to a TCP listener the test runs on the host's 127.0.0.1
 *                      (and on its first non-loopback IPv4 address, when it has one)
 *   rewrite_race       a thread flips the sockaddr of 300 connects between the tree's own
 *                      listener and the host's (127.0.0.1 and the host address): the host's
 *                      listener must accept nothing; some connects reach the tree's own
 *   udp_to_host        sendto and sendmsg to a UDP socket of the host on 127.0.0.1
 *   host_abstract      connect to an abstract unix socket of the host; the same name bound
 *                      inside is the tree's own and works (abstract names are per namespace)
 *   own_listener       the positive control: connect to the tree's own listeners (127.0.0.1,
 *                      ::1) works
 *
 * Each is checked from outside by counters of the host's sockets. Then the conditions: the
 * run reports network_calls "kernel" in `run --json`; with a sensitivity level in the policy
 * (a possible ratchet), with the view emulated, and with an audit log, it reports
 * "supervisor", and the calls are notified: a connect to 192.0.2.1 (TEST-NET, off the
 * namespace) fails with the policy's connect_errno (EACCES here) from the supervisor, where
 * the kernel says ENETUNREACH. Runs as root and as a plain user; a TAP skip, with the
 * reason, where namespaces are refused.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/helpers/sbx-namespaces.h"
#include "tests/helpers/sbx-selftest.h"

#define ROUNDS 300

static int failures;

static void bad(const char *what)
{
	fprintf(stderr, "ESCAPE: %s\n", what);
	failures++;
}

/* ---- inside the sandbox ---- */

/* A listener of the tree's own; non-blocking, for drain() */
static int tcp_listener(int family, struct sockaddr_storage *ss, socklen_t *len)
{
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	sbx_loopback_addr(family, ss, len);
	if (fd < 0 || bind(fd, (struct sockaddr *) ss, *len) < 0 || listen(fd, 512) < 0 ||
	    getsockname(fd, (struct sockaddr *) ss, len) < 0)
		return -1;
	return fd;
}

static int connect_to(const struct sockaddr *a, socklen_t len)
{
	int fd = socket(a->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return -errno;
	r = connect(fd, a, len) < 0 ? -errno : 0;
	close(fd);
	return r;
}

static void drain(int lfd)
{
	int c;

	while ((c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
		close(c);
}

static struct sockaddr_in race_addr;
static struct sockaddr_in race_values[3];
static int n_race_values;
static atomic_bool race_stop;

static void *flipper(void *arg)
{
	volatile uint32_t *ip = (volatile uint32_t *) &race_addr.sin_addr.s_addr;
	volatile uint16_t *port = (volatile uint16_t *) &race_addr.sin_port;

	(void) arg;
	for (unsigned i = 0; !atomic_load(&race_stop); i++) {
		const struct sockaddr_in *v = &race_values[i % (unsigned) n_race_values];

		*ip = v->sin_addr.s_addr;
		*port = v->sin_port;
	}
	return NULL;
}

static int inside(int argc, char *argv[])
{
	uint16_t host_port = (uint16_t) atoi(argv[2]), udp_port = (uint16_t) atoi(argv[3]);
	const char *abstract = argv[4], *host_ip = argc > 5 ? argv[5] : "";
	struct sockaddr_storage own4, own6;
	socklen_t l4, l6;
	struct sockaddr_in host = {.sin_family = AF_INET}, far = {.sin_family = AF_INET};
	int lfd4, lfd6, r, own_ok = 0;
	pthread_t th;
	char m[160];

	/* the far probe first: what the conditions part of the test reads */
	far.sin_port = htons(9);
	inet_pton(AF_INET, "192.0.2.1", &far.sin_addr);
	r = connect_to((struct sockaddr *) &far, sizeof(far));
	printf("far=%d\n", -r);

	/* own_listener: the positive control */
	lfd4 = tcp_listener(AF_INET, &own4, &l4);
	lfd6 = tcp_listener(AF_INET6, &own6, &l6);
	if (lfd4 < 0 || connect_to((struct sockaddr *) &own4, l4) < 0) {
		fprintf(stderr, "own listener on 127.0.0.1 unreachable: %s\n", strerror(errno));
		return 2;
	}
	if (lfd6 >= 0 && connect_to((struct sockaddr *) &own6, l6) < 0) {
		fprintf(stderr, "own listener on ::1 unreachable: %s\n", strerror(errno));
		return 2;
	}
	drain(lfd4);
	printf("own=ok\n");

	/* host_listener */
	host.sin_port = htons(host_port);
	host.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect_to((struct sockaddr *) &host, sizeof(host)) == 0)
		bad("connect to the host's 127.0.0.1 listener succeeded");
	if (*host_ip) {
		struct sockaddr_in h2 = host;

		inet_pton(AF_INET, host_ip, &h2.sin_addr);
		if (connect_to((struct sockaddr *) &h2, sizeof(h2)) == 0)
			bad("connect to the host's own address succeeded");
	}

	/* rewrite_race */
	race_values[0] = *(struct sockaddr_in *) &own4;
	race_values[1] = host;
	n_race_values = 2;
	if (*host_ip) {
		race_values[2] = host;
		inet_pton(AF_INET, host_ip, &race_values[2].sin_addr);
		n_race_values = 3;
	}
	race_addr = race_values[0];
	if (pthread_create(&th, NULL, flipper, NULL) != 0)
		return 2;
	/* at least ROUNDS, and on until both sides were hit (a loaded machine may leave the
	 * flipper off the CPU for a whole batch) */
	for (int i = 0; i < ROUNDS || ((own_ok == 0 || own_ok == i) && i < 20 * ROUNDS); i++) {
		r = connect_to((struct sockaddr *) &race_addr, sizeof(race_addr));
		if (r == 0)
			own_ok++;
		else if (r != -ECONNREFUSED && r != -ENETUNREACH && r != -EACCES)
			fprintf(stderr, "race: connect: %s\n", strerror(-r));
		drain(lfd4);
	}
	atomic_store(&race_stop, true);
	pthread_join(th, NULL);
	/* whether any of these reached the host's listener is counted outside */
	printf("race_own=%d\n", own_ok);

	/* udp_to_host: sendto and sendmsg */
	{
		int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(udp_port)};
		struct iovec iov = {(void *) "x", 1};
		struct msghdr mh = {.msg_name = &to,
				    .msg_namelen = sizeof(to),
				    .msg_iov = &iov,
				    .msg_iovlen = 1};

		to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		for (int i = 0; u >= 0 && i < 5; i++) {
			(void) sendto(u, "x", 1, 0, (struct sockaddr *) &to, sizeof(to));
			(void) sendmsg(u, &mh, 0);
		}
		if (u >= 0)
			close(u);
	}

	/* host_abstract: the host's name is not reachable, and is free to bind here */
	{
		struct sockaddr_un a = {.sun_family = AF_UNIX};
		socklen_t al =
			(socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + strlen(abstract));
		int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), l;

		memcpy(a.sun_path + 1, abstract, strlen(abstract));
		if (c >= 0 && connect(c, (struct sockaddr *) &a, al) == 0)
			bad("connect to the host's abstract unix socket succeeded");
		if (c >= 0)
			close(c);
		l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (l < 0 || bind(l, (struct sockaddr *) &a, al) < 0 || listen(l, 4) < 0) {
			snprintf(m, sizeof(m), "binding the host's abstract name inside: %s",
				 strerror(errno));
			fprintf(stderr, "%s\n", m);
			printf("abstract_own=%d\n", errno);
		} else {
			c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
			printf("abstract_own=%d\n",
			       c >= 0 && connect(c, (struct sockaddr *) &a, al) == 0 ? 0 : errno);
			if (c >= 0)
				close(c);
		}
	}
	fflush(stdout);
	return failures ? 1 : 0;
}

/* ---- outside ---- */

static atomic_int host_accepts, host_datagrams, host_unix_accepts;
static int host_tcp = -1, host_udp = -1, host_unix = -1, stop_pipe[2] = {-1, -1};

static void *host_server(void *arg)
{
	(void) arg;
	for (;;) {
		struct pollfd p[4] = {{host_tcp, POLLIN, 0},
				      {host_udp, POLLIN, 0},
				      {host_unix, POLLIN, 0},
				      {stop_pipe[0], POLLIN, 0}};
		char b[64];
		int c;

		if (poll(p, 4, -1) < 0 && errno != EINTR)
			return NULL;
		if (p[3].revents)
			return NULL;
		if (p[0].revents && (c = accept4(host_tcp, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
			atomic_fetch_add(&host_accepts, 1);
			close(c);
		}
		if (p[1].revents && recv(host_udp, b, sizeof(b), MSG_DONTWAIT) >= 0)
			atomic_fetch_add(&host_datagrams, 1);
		if (p[2].revents && (c = accept4(host_unix, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
			atomic_fetch_add(&host_unix_accepts, 1);
			close(c);
		}
	}
}

/* The first non-loopback IPv4 address that is up, or "". */
static void host_address(char *buf, size_t size)
{
	struct ifaddrs *ifa, *i;

	buf[0] = 0;
	if (getifaddrs(&ifa) < 0)
		return;
	for (i = ifa; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP) &&
		    !(i->ifa_flags & IFF_LOOPBACK)) {
			inet_ntop(AF_INET, &((struct sockaddr_in *) i->ifa_addr)->sin_addr, buf,
				  (socklen_t) size);
			break;
		}
	freeifaddrs(ifa);
}

/* Runs the inside part under sbxtrace run --json with the extra settings; its JSON result
 * (malloc'd) in *ret_json. The exit code of sbxtrace. */
static int run_inside(const char *base, const char *const *sets, const char *audit, char **ret_json,
		      const char *port, const char *uport, const char *name, const char *hip)
{
	const char *sbxtrace = getenv("SBXTRACE"), *policy = getenv("SBX_FS_POLICY_KERNEL");
	char ws[PATH_MAX], *json = NULL;
	size_t len = 0;
	int out[2], status;
	pid_t pid;
	FILE *f;

	snprintf(ws, sizeof(ws), "%s/ws", base);
	if (pipe2(out, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		const char *argv[40];
		int n = 0;

		if (chdir(base) < 0)
			_exit(99);
		dup2(out[1], STDOUT_FILENO);
		argv[n++] = sbxtrace;
		argv[n++] = "run";
		argv[n++] = "--json";
		if (audit) {
			argv[n++] = "--audit";
			argv[n++] = audit;
		}
		argv[n++] = "-w";
		argv[n++] = ws;
		argv[n++] = "-s";
		argv[n++] = "network.mode=\"loopback\"";
		argv[n++] = "-s";
		argv[n++] = "network.connect_errno=\"EACCES\"";
		for (size_t i = 0; sets[i]; i++) {
			argv[n++] = "-s";
			argv[n++] = sets[i];
		}
		argv[n++] = policy;
		argv[n++] = "--";
		argv[n++] = "/workspace/prog";
		argv[n++] = "inside";
		argv[n++] = port;
		argv[n++] = uport;
		argv[n++] = name;
		argv[n++] = hip;
		argv[n] = NULL;
		execv(sbxtrace, (char **) argv);
		_exit(99);
	}
	close(out[1]);
	f = fdopen(out[0], "r");
	if (!f || getdelim(&json, &len, 0, f) < 0) {
		free(json);
		json = strdup("");
	}
	if (f)
		fclose(f);
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	*ret_json = json;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static bool has(const char *json, const char *s)
{
	return json && strstr(json, s) != NULL;
}

static int outside(void)
{
	const char *t = getenv("TMPDIR"), *why;
	char base[PATH_MAX - 64], p[PATH_MAX], port[16], uport[16], name[64], hip[64], far[32];
	char audit[PATH_MAX];
	struct sockaddr_in a = {.sin_family = AF_INET};
	struct sockaddr_un ua = {.sun_family = AF_UNIX};
	socklen_t al = sizeof(a);
	pthread_t th;
	char *json = NULL;
	int code, r;

	if (!getenv("SBXTRACE") || !getenv("SBX_FS_POLICY_KERNEL")) {
		printf("1..0 # SKIP SBXTRACE or SBX_FS_POLICY_KERNEL is not set (run through "
		       "meson)\n");
		return 0;
	}
	why = sbx_namespaces_refused();
	if (why) {
		printf("1..0 # SKIP a network namespace needs namespaces: %s\n", why);
		return 0;
	}
	snprintf(base, sizeof(base), "%s/sbxnetns-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(base))
		return 1;
	/* the policy's /ro mount and the workspace with a copy of us */
	snprintf(p, sizeof(p), "%s/ro", base);
	if (mkdir(p, 0755) < 0)
		return 1;
	snprintf(p, sizeof(p), "%s/ws", base);
	if (mkdir(p, 0755) < 0)
		return 1;
	snprintf(p, sizeof(p), "%s/ws/prog", base);
	if (sbx_copy_self(p) < 0)
		return 1;
	/* let a plain user's sandbox read what root made (the workspace is ours) */
	(void) chmod(base, 0755);

	/* the host's services: TCP on every address (127.0.0.1 and the host's own), UDP on
	 * 127.0.0.1, an abstract unix socket */
	host_tcp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	a.sin_addr.s_addr = htonl(INADDR_ANY);
	if (host_tcp < 0 || bind(host_tcp, (struct sockaddr *) &a, sizeof(a)) < 0 ||
	    listen(host_tcp, 512) < 0 || getsockname(host_tcp, (struct sockaddr *) &a, &al) < 0)
		return 1;
	snprintf(port, sizeof(port), "%u", ntohs(a.sin_port));
	host_udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	a.sin_port = 0;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	al = sizeof(a);
	if (host_udp < 0 || bind(host_udp, (struct sockaddr *) &a, sizeof(a)) < 0 ||
	    getsockname(host_udp, (struct sockaddr *) &a, &al) < 0)
		return 1;
	snprintf(uport, sizeof(uport), "%u", ntohs(a.sin_port));
	snprintf(name, sizeof(name), "sbx-netns-test-%d", (int) getpid());
	memcpy(ua.sun_path + 1, name, strlen(name));
	host_unix = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (host_unix < 0 ||
	    bind(host_unix, (struct sockaddr *) &ua,
		 (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name))) < 0 ||
	    listen(host_unix, 16) < 0)
		return 1;
	host_address(hip, sizeof(hip));
	if (pipe2(stop_pipe, O_CLOEXEC) < 0 || pthread_create(&th, NULL, host_server, NULL) != 0)
		return 1;

	printf("1..5\n");
	/* 1: the namespace with the calls in the kernel, the attacks */
	{
		const char *sets[] = {"network.unshare=true", "tracer.kernel_view=true", NULL};

		code = run_inside(base, sets, NULL, &json, port, uport, name, hip);
		usleep(200 * 1000); /* anything in flight reaches the server thread */
		if (code != 0)
			fprintf(stderr, "# inside: exit code %d; %s\n", code, json);
		if (atomic_load(&host_accepts) || atomic_load(&host_datagrams) ||
		    atomic_load(&host_unix_accepts)) {
			fprintf(stderr,
				"ESCAPE: the host's sockets saw %d connects, %d datagrams, "
				"%d unix connects\n",
				atomic_load(&host_accepts), atomic_load(&host_datagrams),
				atomic_load(&host_unix_accepts));
			code = 1;
		}
		if (!has(json, "own=ok") || has(json, "race_own=0\\n")) {
			fprintf(stderr, "# the tree's own listener was not reached: %s\n", json);
			code = 1;
		}
		if (!has(json, "abstract_own=0\\n")) {
			fprintf(stderr,
				"# the host's abstract name was not the tree's own inside\n");
			code = 1;
		}
		if (!has(json, "\"network_calls\":\"kernel\"")) {
			fprintf(stderr, "# network_calls is not \"kernel\": %s\n", json);
			code = 1;
		}
		/* no route: the kernel answers, not the supervisor's connect_errno */
		snprintf(far, sizeof(far), "far=%d\\n", ENETUNREACH);
		if (!has(json, far)) {
			fprintf(stderr, "# a far connect did not fail with ENETUNREACH: %s\n",
				json);
			code = 1;
		}
		printf("%s 1 - loopback in a namespace: host unreachable, calls in the kernel\n",
		       code == 0 ? "ok" : "not ok");
		failures += code != 0;
		free(json);
	}
	/* 2-4: a condition fails, the calls stay notified (connect_errno from the supervisor),
	 * and the namespace still holds */
	snprintf(audit, sizeof(audit), "%s/audit.jsonl", base);
	{
		static const struct {
			const char *label;
			const char *sets[4];
			bool audit;
			const char *reason;
		} cases[] = {
			{"a sensitivity level (a possible ratchet)",
			 {"network.unshare=true", "tracer.kernel_view=\"auto\"",
			  "rule=[{path = \"/workspace/x.key\", level = \"secret\"}]", NULL},
			 false,
			 "sensitivity level"},
			{"the view emulated",
			 {"network.unshare=true", "tracer.kernel_view=false", NULL},
			 false,
			 "tracer.kernel_view = false"},
			{"an audit log",
			 {"network.unshare=true", "tracer.kernel_view=\"auto\"", NULL},
			 true,
			 "the view is emulated"},
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			int before = atomic_load(&host_accepts) + atomic_load(&host_datagrams) +
				     atomic_load(&host_unix_accepts);

			code = run_inside(base, cases[i].sets, cases[i].audit ? audit : NULL, &json,
					  port, uport, name, hip);
			usleep(200 * 1000);
			if (code != 0)
				fprintf(stderr, "# inside: exit code %d; %s\n", code, json);
			if (atomic_load(&host_accepts) + atomic_load(&host_datagrams) +
				    atomic_load(&host_unix_accepts) !=
			    before) {
				fprintf(stderr, "ESCAPE: the host's sockets were reached\n");
				code = 1;
			}
			snprintf(far, sizeof(far), "far=%d\\n", EACCES);
			if (!has(json, "\"network_calls\":\"supervisor\"") ||
			    !has(json, cases[i].reason) || !has(json, far)) {
				fprintf(stderr,
					"# want network_calls \"supervisor\" (%s) and far=EACCES: "
					"%s\n",
					cases[i].reason, json);
				code = 1;
			}
			printf("%s %zu - %s: the calls are notified\n", code == 0 ? "ok" : "not ok",
			       i + 2, cases[i].label);
			failures += code != 0;
			free(json);
		}
	}
	/* 5: the audit log of the last case has the supervisor's decision on the connect */
	{
		char *log = NULL;
		size_t len = 0;
		FILE *f = fopen(audit, "re");

		r = f && getdelim(&log, &len, 0, f) >= 0 && strstr(log, "192.0.2.1") ? 0 : 1;
		if (f)
			fclose(f);
		if (r)
			fprintf(stderr, "# the audit log has no connect to 192.0.2.1\n");
		printf("%s 5 - the audit log records the notified connect\n",
		       r == 0 ? "ok" : "not ok");
		failures += r;
		free(log);
	}

	(void) !write(stop_pipe[1], "x", 1);
	pthread_join(th, NULL);
	snprintf(p, sizeof(p), "rm -rf '%s'", base);
	(void) !system(p);
	return failures ? 1 : 0;
}

int main(int argc, char *argv[])
{
	if (argc >= 5 && strcmp(argv[1], "inside") == 0) {
		setvbuf(stderr, NULL, _IONBF, 0);
		setvbuf(stdout, NULL, _IONBF, 0);
		return inside(argc, argv);
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	return outside();
}
