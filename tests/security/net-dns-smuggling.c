/* SPDX-License-Identifier: MIT */
/*
 * Issue 24, item 3: data smuggled to the upstream resolver inside a DNS query for an allowed
 * name. In allowlist mode the stub forwards an allowed name upstream; everything else the
 * client wrote into the query (its ID, flags, the name's letter case, a query type of its
 * choosing, additional records, an EDNS0 option, bytes after the message) must stay inside.
 * The upstream is the test's own resolver on 127.0.0.1 (network.dns), which records every
 * query it receives; outside, the test checks each is exactly the query the stub builds from
 * the question: RD, QDCOUNT 1, "ok.test" in lower case, nothing else.
 */
#define FS_HAVE_PREPARE
#define FS_HAVE_CHECK
#include "tests/security/fs-escape.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#define QUERIES_MAX 16

/* ---- inside ---- */

static size_t put_query(uint8_t *p, uint16_t id, uint16_t flags, const char *label0, uint16_t qtype)
{
	size_t o = 12, l = strlen(label0);

	memset(p, 0, 12);
	p[0] = (uint8_t) (id >> 8), p[1] = (uint8_t) id;
	p[2] = (uint8_t) (flags >> 8), p[3] = (uint8_t) flags;
	p[5] = 1; /* QDCOUNT */
	p[o++] = (uint8_t) l;
	memcpy(p + o, label0, l), o += l;
	p[o++] = 4;
	memcpy(p + o, "test", 4), o += 4;
	p[o++] = 0;
	p[o++] = (uint8_t) (qtype >> 8), p[o++] = (uint8_t) qtype;
	p[o++] = 0, p[o++] = 1; /* IN */
	return o;
}

/* Appends an additional TXT record and an OPT record with a local-use option, both holding
 * SMUGGLED, and then trailing bytes. */
static size_t add_smuggled(uint8_t *p, size_t o)
{
	static const uint8_t txt[] = {1, 'x', 0, 0,   16,  0,	1,   0,	  0,   0,   0,
				      0, 9,   8, 'S', 'M', 'U', 'G', 'G', 'L', 'E', 'D'};
	static const uint8_t opt[] = {0,    0, 41, 0x04, 0xd0, 0xde, 0xad, 0,	0,   0,	  12, 0xfd,
				      0xe9, 0, 8,  'S',	 'M',  'U',  'G',  'G', 'L', 'E', 'D'};

	memcpy(p + o, txt, sizeof(txt)), o += sizeof(txt);
	memcpy(p + o, opt, sizeof(opt)), o += sizeof(opt);
	p[11] = 2; /* ARCOUNT */
	memcpy(p + o, "SMUGGLED-TRAILER", 16), o += 16;
	return o;
}

/* Sends one query to the resolver the child believes in (127.0.0.1:53, redirected to the
 * stub) and returns the reply's ID, or -1 when none came. */
static int ask(const uint8_t *q, size_t len)
{
	struct sockaddr_in ns = {.sin_family = AF_INET, .sin_port = htons(53)};
	struct sockaddr_in from;
	socklen_t fl = sizeof(from);
	struct pollfd pfd;
	uint8_t r[1024];
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), id = -1;
	ssize_t n;

	ns.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	if (sendto(fd, q, len, 0, (struct sockaddr *) &ns, sizeof(ns)) == (ssize_t) len) {
		pfd = (struct pollfd){.fd = fd, .events = POLLIN};
		/* not a timing assertion: the bound only ends a lost case */
		if (poll(&pfd, 1, 20000) == 1) {
			n = recvfrom(fd, r, sizeof(r), 0, (struct sockaddr *) &from, &fl);
			if (n >= 12)
				id = r[0] << 8 | r[1];
		}
	}
	close(fd);
	return id;
}

static int attack(void)
{
	uint8_t q[512];
	size_t n;

	/* positive control: a plain query for the allowed name is answered (upstream checks
	 * from outside that it arrived) */
	n = put_query(q, 0x1001, 0x0100, "ok", 1);
	if (ask(q, n) != 0x1001) {
		fprintf(stderr, "control: no answer to a plain query for ok.test\n");
		return 1;
	}
	/* the smuggling query: its own ID, AD|CD|AA flags, 0x20 case, extra records, EDNS0
	 * option, trailing bytes */
	n = put_query(q, 0x5eed, 0x0100 | 0x0400 | 0x0030, "oK", 1);
	n = add_smuggled(q, n);
	if (ask(q, n) != 0x5eed)
		fprintf(stderr, "note: no answer to the smuggling query\n");
	/* a query type of its own choosing (16 bits of data) */
	n = put_query(q, 0x5eee, 0x0100, "ok", 0xbeef);
	(void) ask(q, n);
	return 0;
}

/* ---- outside: the upstream resolver that records ---- */

static int up_fd = -1;
static uint8_t seen[QUERIES_MAX][1024];
static size_t seen_len[QUERIES_MAX];
static int n_seen;
static char dns_set[64];

static void *upstream_main(void *unused)
{
	(void) unused;
	for (;;) {
		uint8_t r[1100];
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(up_fd, r, 1024, 0, (struct sockaddr *) &from, &fl);
		size_t end;
		static const uint8_t ans[] = {0xc0, 12, 0, 1, 0,   1, 0, 0,
					      0,    60, 0, 4, 192, 0, 2, 7};

		if (n < 12)
			continue;
		if (n_seen < QUERIES_MAX) {
			memcpy(seen[n_seen], r, (size_t) n);
			seen_len[n_seen] = (size_t) n;
		}
		__atomic_add_fetch(&n_seen, 1, __ATOMIC_RELEASE);
		/* answer: the question echoed (up to the end of the first question), one A */
		end = 12;
		while (end < (size_t) n && r[end] && r[end] < 64)
			end += 1u + r[end];
		end += 5;
		if (end > (size_t) n)
			continue;
		r[2] = 0x81, r[3] = 0x80;
		r[6] = 0, r[7] = 1, r[8] = r[9] = r[10] = r[11] = 0;
		memcpy(r + end, ans, sizeof(ans));
		(void) sendto(up_fd, r, end + sizeof(ans), 0, (struct sockaddr *) &from, fl);
	}
	return NULL;
}

static void fs_prepare(const char *ws)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t l = sizeof(a);
	pthread_t th;

	(void) ws;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	up_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (up_fd < 0 || bind(up_fd, (struct sockaddr *) &a, sizeof(a)) < 0 ||
	    getsockname(up_fd, (struct sockaddr *) &a, &l) < 0 ||
	    pthread_create(&th, NULL, upstream_main, NULL) != 0) {
		perror("upstream");
		exit(1);
	}
	snprintf(dns_set, sizeof(dns_set), "network.dns=[\"127.0.0.1:%d\"]", ntohs(a.sin_port));
	fs_extra_sets[0] = "network.mode=allowlist";
	fs_extra_sets[1] = "network.allow=[\"ok.test:443\"]";
	fs_extra_sets[2] = dns_set;
}

static int fs_check(void)
{
	int n = __atomic_load_n(&n_seen, __ATOMIC_ACQUIRE), bad = 0;

	/* positive control: the upstream did see the allowed name */
	if (n < 1) {
		fprintf(stderr, "control: the upstream received no query\n");
		return 1;
	}
	for (int i = 0; i < n && i < QUERIES_MAX; i++) {
		/* exactly: ID (any), RD, QD 1, AN/NS/AR 0, 2 ok 4 test 0, type, IN */
		static const uint8_t want[] = {1, 0,   0,   1, 0,   0,	 0,   0,   0, 0,
					       2, 'o', 'k', 4, 't', 'e', 's', 't', 0};
		const uint8_t *s = seen[i];
		uint16_t qtype;

		if (seen_len[i] != 2 + sizeof(want) + 4 || memcmp(s + 2, want, sizeof(want)) != 0 ||
		    s[seen_len[i] - 2] != 0 || s[seen_len[i] - 1] != 1) {
			fprintf(stderr,
				"ESCAPE: the upstream received %zu bytes not built by the stub\n",
				seen_len[i]);
			bad = 1;
			continue;
		}
		qtype = (uint16_t) (s[seen_len[i] - 4] << 8 | s[seen_len[i] - 3]);
		if (qtype != 1) {
			fprintf(stderr, "ESCAPE: the upstream received query type %u\n", qtype);
			bad = 1;
		}
		if ((s[0] == 0x5e && (s[1] == 0xed || s[1] == 0xee)) || (s[0] == 0x10 && s[1] == 1))
			fprintf(stderr, "note: the upstream saw the client's own ID\n");
	}
	return bad;
}
