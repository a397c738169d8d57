/* SPDX-License-Identifier: MIT */
/*
 * Issue 24, item 4: loopback and allowlist modes judge a send by its destination, but a
 * socket can carry its own route. An IPv6 routing header (IPV6_RTHDR with a segment routing
 * header, type 4, which needs no privilege; IPV6_2292RTHDR; sticky IPV6_2292PKTOPTIONS) makes
 * the kernel send a packet for ::1 to the header's first segment, and IPv4 options with a
 * loose source route (IP_OPTIONS, LSRR) send a packet for 127.0.0.1 to the route's first hop;
 * both also come as ancillary data of one sendmsg (IPV6_RTHDR, IP_RETOPTS). Some of these the
 * kernel refuses by itself in some configurations (IPv4 source routes need CAP_NET_RAW, type 2
 * headers CONFIG_IPV6_MIP6); the sandbox must refuse all, whatever the kernel. The first hop here
 * is 2001:db8::1 / 192.0.2.1 (documentation addresses). Every such setsockopt and sendmsg must
 * fail with EPERM, in loopback mode and in allowlist mode; plain options and plain sends to
 * loopback still work (the positive controls).
 */
#define FS_OWN_MAIN
#include "tests/security/fs-escape.h"
#include "tests/helpers/sbx-selftest.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <sys/socket.h>

/* A segment routing header (RFC 8754) with two segments: 2001:db8::1 first, then ::1. */
static size_t srh(uint8_t *p)
{
	static const uint8_t first[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1};
	static const uint8_t last[16] = {[15] = 1};

	memset(p, 0, 8);
	p[0] = IPPROTO_UDP;	 /* next header; the kernel sets it */
	p[1] = 4;		 /* length in 8-byte units after the first 8: two addresses */
	p[2] = 4;		 /* type 4: segment routing */
	p[3] = 1;		 /* segments left */
	p[4] = 1;		 /* last entry */
	memcpy(p + 8, last, 16); /* segments in reverse order: [0] is the last */
	memcpy(p + 24, first, 16);
	return 40;
}

/* A type 2 routing header (RFC 6275) through 2001:db8::1: the only type ancillary data takes
 * (ip6_datagram_send_ctl(), with CONFIG_IPV6_MIP6; EINVAL without it). */
static size_t rthdr2(uint8_t *p)
{
	memset(p, 0, 24);
	p[0] = IPPROTO_UDP;
	p[1] = 2; /* one address */
	p[2] = 2; /* type 2 */
	p[3] = 1; /* segments left */
	p[8] = 0x20, p[9] = 0x01, p[10] = 0x0d, p[11] = 0xb8, p[23] = 1;
	return 24;
}

/* IPv4 options: a loose source route through 192.0.2.1, padded to 8 bytes. */
static const uint8_t lsrr[8] = {IPOPT_LSRR, 7, 4, 192, 0, 2, 1, IPOPT_END};

static void expect_eperm(int r, const char *what)
{
	char m[160];

	if (r == 0 || errno != EPERM) {
		snprintf(m, sizeof(m), "%s: %s (want EPERM)", what,
			 r == 0 ? "accepted" : strerror(errno));
		fs_bad(m);
	}
}

static int udp_to_self(int family, struct sockaddr_storage *ss, socklen_t *len)
{
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	sbx_loopback_addr(family, ss, len);
	/* bind to loopback port 0 and send to ourselves: a destination every mode here allows */
	if (fd < 0 || bind(fd, (struct sockaddr *) ss, *len) < 0 ||
	    getsockname(fd, (struct sockaddr *) ss, len) < 0)
		return -1;
	return fd;
}

static int send_with_cmsg(int fd, const struct sockaddr_storage *to, socklen_t tolen, int level,
			  int type, const void *data, size_t len)
{
	union {
		char buf[CMSG_SPACE(64)];
		struct cmsghdr align;
	} u = {};
	struct iovec iov = {(void *) "x", 1};
	struct msghdr m = {.msg_name = (void *) to,
			   .msg_namelen = tolen,
			   .msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = u.buf,
			   .msg_controllen = CMSG_SPACE(len)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = level;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(len);
	memcpy(CMSG_DATA(c), data, len);
	return sendmsg(fd, &m, 0) < 0 ? -1 : 0;
}

static int attack(void)
{
	struct sockaddr_storage self6, self4;
	socklen_t l6, l4;
	uint8_t hdr[64], hdr2[24];
	size_t n = srh(hdr), n2 = rthdr2(hdr2);
	int hops = 5, fd6 = udp_to_self(AF_INET6, &self6, &l6),
	    fd4 = udp_to_self(AF_INET, &self4, &l4), tcp6;
	char c;

	if (fd4 < 0) {
		perror("control: UDP socket on 127.0.0.1");
		return 1;
	}
	/* positive controls: a plain option, a plain send to loopback arrives */
	if (setsockopt(fd4, IPPROTO_IP, IP_TTL, &hops, sizeof(hops)) < 0 ||
	    sendto(fd4, "x", 1, 0, (struct sockaddr *) &self4, l4) != 1 ||
	    recv(fd4, &c, 1, 0) != 1) {
		perror("control: IPv4 option or send to loopback");
		return 1;
	}
	if (fd6 >= 0 &&
	    (setsockopt(fd6, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &hops, sizeof(hops)) < 0 ||
	     sendto(fd6, "x", 1, 0, (struct sockaddr *) &self6, l6) != 1 ||
	     recv(fd6, &c, 1, 0) != 1)) {
		perror("control: IPv6 option or send to ::1");
		return 1;
	}

	/* IPv4: a source route as a socket option, and as ancillary data of one send */
	expect_eperm(setsockopt(fd4, IPPROTO_IP, IP_OPTIONS, lsrr, sizeof(lsrr)),
		     "IP_OPTIONS LSRR");
	expect_eperm(send_with_cmsg(fd4, &self4, l4, IPPROTO_IP, IP_RETOPTS, lsrr, sizeof(lsrr)),
		     "sendmsg with IP_RETOPTS LSRR");
	if (fd6 < 0) {
		fprintf(stderr, "note: no IPv6 here, IPv4 only\n");
		return 0;
	}
	/* IPv6: the routing header as each socket option, and as ancillary data */
	expect_eperm(setsockopt(fd6, IPPROTO_IPV6, IPV6_RTHDR, hdr, (socklen_t) n),
		     "IPV6_RTHDR (segment routing header)");
	expect_eperm(setsockopt(fd6, IPPROTO_IPV6, IPV6_2292RTHDR, hdr, (socklen_t) n),
		     "IPV6_2292RTHDR");
	expect_eperm(setsockopt(fd6, IPPROTO_IPV6, IPV6_RTHDR, hdr2, (socklen_t) n2),
		     "IPV6_RTHDR (type 2)");
	expect_eperm(send_with_cmsg(fd6, &self6, l6, IPPROTO_IPV6, IPV6_RTHDR, hdr2, n2),
		     "sendmsg with IPV6_RTHDR");
	expect_eperm(send_with_cmsg(fd6, &self6, l6, IPPROTO_IPV6, IPV6_2292RTHDR, hdr2, n2),
		     "sendmsg with IPV6_2292RTHDR");
	/* IPv4 options through an IPv6 socket (SOL_IP reaches ip_setsockopt for v4-mapped) */
	expect_eperm(setsockopt(fd6, IPPROTO_IP, IP_OPTIONS, lsrr, sizeof(lsrr)),
		     "IP_OPTIONS on an IPv6 socket");
	/* sticky options of a TCP socket, RFC 2292 style, holding a routing header */
	tcp6 = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (tcp6 >= 0) {
		union {
			char buf[CMSG_SPACE(64)];
			struct cmsghdr align;
		} u = {};
		struct cmsghdr *cm = (struct cmsghdr *) u.buf;

		cm->cmsg_level = IPPROTO_IPV6;
		cm->cmsg_type = IPV6_2292RTHDR;
		cm->cmsg_len = CMSG_LEN(n2);
		memcpy(CMSG_DATA(cm), hdr2, n2);
		expect_eperm(setsockopt(tcp6, IPPROTO_IPV6, IPV6_2292PKTOPTIONS, u.buf,
					(socklen_t) CMSG_SPACE(n2)),
			     "IPV6_2292PKTOPTIONS with a routing header");
		close(tcp6);
	}
	return 0;
}

int main(int argc, char *argv[])
{
	bool landlock = !(argc > 1 && strcmp(argv[1], "--no-landlock") == 0);
	int r;

	if (argc >= 3 && strcmp(argv[1], "inside") == 0) {
		setvbuf(stderr, NULL, _IONBF, 0);
		fs_base = argv[2];
		snprintf(fs_secret, sizeof(fs_secret), "%s/secret/secret.txt", fs_base);
		r = attack();
		return r || fs_failures ? 1 : 0;
	}
	for (int i = 1; i < argc; i++)
		fs_kernel_view |= strcmp(argv[i], "--kernel-view") == 0;
	fs_extra_sets[0] = "network.mode=loopback";
	r = fs_outside(landlock);
	if (r != 0) {
		fprintf(stderr, "in loopback mode: %d\n", r);
		return r;
	}
	fs_extra_sets[0] = "network.mode=allowlist";
	fs_extra_sets[1] = "network.allow=[\"127.0.0.0/8\", \"::1/128\"]";
	r = fs_outside(landlock);
	if (r != 0)
		fprintf(stderr, "in allowlist mode: %d\n", r);
	return r;
}
