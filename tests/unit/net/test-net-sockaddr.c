/* SPDX-License-Identifier: MIT */
/* sockaddr decoding and formatting (net/sockaddr.c). */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "net/sockaddr.h"
#include "tests/unit/tap.h"

/* Copies len bytes to just before an unmapped page, so any read past len faults. */
static uint8_t *guard_page;
static size_t page_size;

static const void *tail(const void *src, size_t len)
{
	if (!guard_page) {
		page_size = (size_t) sysconf(_SC_PAGESIZE);
		guard_page = mmap(NULL, 2 * page_size, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (guard_page == MAP_FAILED ||
		    mprotect(guard_page + page_size, page_size, PROT_NONE))
			abort();
	}
	memcpy(guard_page + page_size - len, src, len);
	return guard_page + page_size - len;
}

static int decode(const void *sa, size_t len, NetAddr *a)
{
	return net_sockaddr_decode(tail(sa, len), len, a);
}

static const char *fmt(const NetAddr *a)
{
	static char buf[NET_ADDR_FORMAT_MAX];

	return net_addr_format(a, buf, sizeof(buf));
}

TEST(inet)
{
	struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons(443)};
	NetAddr a;

	inet_pton(AF_INET, "1.2.3.4", &in.sin_addr);
	ASSERT_EQ(decode(&in, sizeof(in), &a), 0);
	EXPECT_EQ(a.family, AF_INET);
	EXPECT_EQ(a.ip_family, AF_INET);
	EXPECT_EQ(a.port, 443);
	EXPECT_EQ(memcmp(a.addr, &in.sin_addr, 4), 0);
	EXPECT_FALSE(net_addr_is_loopback(&a));
	EXPECT_STREQ(fmt(&a), "AF_INET, 1.2.3.4:443");

	/* Every length below sizeof(sockaddr_in) is EINVAL, as in tcp_v4_connect(). */
	for (size_t l = 0; l < sizeof(in); l++)
		EXPECT_EQ(decode(&in, l, &a), -EINVAL);
	/* Longer is fine up to sockaddr_storage; beyond, the kernel says EINVAL. */
	{
		uint8_t big[NET_SOCKADDR_MAX + 1] = {};

		memcpy(big, &in, sizeof(in));
		EXPECT_EQ(decode(big, NET_SOCKADDR_MAX, &a), 0);
		EXPECT_EQ(a.port, 443);
		EXPECT_EQ(net_sockaddr_decode(big, NET_SOCKADDR_MAX + 1, &a), -EINVAL);
	}
}

TEST(inet_loopback_and_unspecified)
{
	struct sockaddr_in in = {.sin_family = AF_INET};
	NetAddr a;

	inet_pton(AF_INET, "127.255.0.9", &in.sin_addr);
	ASSERT_EQ(decode(&in, sizeof(in), &a), 0);
	EXPECT_TRUE(net_addr_is_loopback(&a));
	inet_pton(AF_INET, "128.0.0.1", &in.sin_addr);
	ASSERT_EQ(decode(&in, sizeof(in), &a), 0);
	EXPECT_FALSE(net_addr_is_loopback(&a));
	in.sin_addr.s_addr = 0;
	ASSERT_EQ(decode(&in, sizeof(in), &a), 0);
	EXPECT_TRUE(net_addr_is_unspecified(&a));
	EXPECT_FALSE(net_addr_is_loopback(&a));
}

TEST(inet6_plain_and_short_form)
{
	struct sockaddr_in6 in6 = {
		.sin6_family = AF_INET6, .sin6_port = htons(53), .sin6_scope_id = 3};
	NetAddr a;

	inet_pton(AF_INET6, "2001:db8::1", &in6.sin6_addr);
	ASSERT_EQ(decode(&in6, sizeof(in6), &a), 0);
	EXPECT_EQ(a.ip_family, AF_INET6);
	EXPECT_EQ(a.port, 53);
	EXPECT_EQ(a.scope_id, 3);
	EXPECT_FALSE(a.v4mapped);
	EXPECT_FALSE(a.v4compat);
	EXPECT_STREQ(fmt(&a), "AF_INET6, [2001:db8::1%3]:53");

	/* RFC 2133 length (24, no scope id) is accepted; 23 is not. */
	ASSERT_EQ(decode(&in6, 24, &a), 0);
	EXPECT_EQ(a.scope_id, 0);
	EXPECT_EQ(decode(&in6, 23, &a), -EINVAL);
	EXPECT_EQ(decode(&in6, 2, &a), -EINVAL);

	inet_pton(AF_INET6, "::1", &in6.sin6_addr);
	ASSERT_EQ(decode(&in6, sizeof(in6), &a), 0);
	EXPECT_TRUE(net_addr_is_loopback(&a));
	EXPECT_FALSE(a.v4compat);
	inet_pton(AF_INET6, "::", &in6.sin6_addr);
	ASSERT_EQ(decode(&in6, sizeof(in6), &a), 0);
	EXPECT_TRUE(net_addr_is_unspecified(&a));
	EXPECT_FALSE(a.v4compat);
}

TEST(inet6_v4mapped_is_ipv4_for_policy)
{
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6, .sin6_port = htons(80)};
	NetAddr a, b;

	inet_pton(AF_INET6, "::ffff:127.0.0.2", &in6.sin6_addr);
	ASSERT_EQ(decode(&in6, sizeof(in6), &a), 0);
	EXPECT_EQ(a.family, AF_INET6);
	EXPECT_EQ(a.ip_family, AF_INET);
	EXPECT_TRUE(a.v4mapped);
	EXPECT_EQ(a.addr[0], 127);
	EXPECT_EQ(a.addr[3], 2);
	EXPECT_TRUE(net_addr_is_loopback(&a));
	EXPECT_STREQ(fmt(&a), "AF_INET6, [::ffff:127.0.0.2]:80");

	/* Same address for policy as the plain AF_INET one. */
	{
		struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons(80)};

		inet_pton(AF_INET, "127.0.0.2", &in.sin_addr);
		ASSERT_EQ(decode(&in, sizeof(in), &b), 0);
		EXPECT_TRUE(net_addr_ip_equal(&a, &b));
	}

	inet_pton(AF_INET6, "::ffff:0.0.0.0", &in6.sin6_addr);
	ASSERT_EQ(decode(&in6, sizeof(in6), &a), 0);
	EXPECT_TRUE(net_addr_is_unspecified(&a));

	inet_pton(AF_INET6, "::ffff:8.8.8.8", &in6.sin6_addr);
	ASSERT_EQ(decode(&in6, sizeof(in6), &a), 0);
	EXPECT_FALSE(net_addr_is_loopback(&a));
}

TEST(inet6_v4compat_flagged)
{
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
	NetAddr a;

	inet_pton(AF_INET6, "::127.0.0.1", &in6.sin6_addr);
	ASSERT_EQ(decode(&in6, sizeof(in6), &a), 0);
	EXPECT_TRUE(a.v4compat);
	EXPECT_EQ(a.ip_family, AF_INET6);
	/* Not ::1, so not loopback: a v4-compatible address never counts as local. */
	EXPECT_FALSE(net_addr_is_loopback(&a));
}

TEST(unix_path_abstract_unnamed)
{
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	size_t off = offsetof(struct sockaddr_un, sun_path);
	NetAddr a;

	strcpy(un.sun_path, "/run/x.sock");
	ASSERT_EQ(decode(&un, off + strlen(un.sun_path) + 1, &a), 0);
	EXPECT_EQ(a.unix_kind, NET_UNIX_PATH);
	EXPECT_EQ(a.unix_len, strlen("/run/x.sock"));
	EXPECT_STREQ(a.unix_name, "/run/x.sock");
	EXPECT_STREQ(fmt(&a), "AF_UNIX, \"/run/x.sock\"");

	/* Without the NUL, the path ends at addrlen. */
	ASSERT_EQ(decode(&un, off + 4, &a), 0);
	EXPECT_STREQ(a.unix_name, "/run");

	/* A full 108-byte path with no NUL. */
	memset(un.sun_path, 'a', sizeof(un.sun_path));
	ASSERT_EQ(decode(&un, sizeof(un), &a), 0);
	EXPECT_EQ(a.unix_len, 108);
	{
		uint8_t big[sizeof(un) + 1] = {};

		memcpy(big, &un, sizeof(un));
		EXPECT_EQ(decode(big, sizeof(big), &a), -EINVAL);
	}

	/* Abstract: leading NUL; the name keeps inner NULs and its exact length. */
	memcpy(un.sun_path, "\0name\0x\"\\", 9);
	ASSERT_EQ(decode(&un, off + 9, &a), 0);
	EXPECT_EQ(a.unix_kind, NET_UNIX_ABSTRACT);
	EXPECT_EQ(a.unix_len, 8);
	EXPECT_EQ(memcmp(a.unix_name, "name\0x\"\\", 8), 0);
	EXPECT_STREQ(fmt(&a), "AF_UNIX, \"@name\\x00x\\\"\\\\\"");

	/* Just the NUL: the empty abstract name. */
	ASSERT_EQ(decode(&un, off + 1, &a), 0);
	EXPECT_EQ(a.unix_kind, NET_UNIX_ABSTRACT);
	EXPECT_EQ(a.unix_len, 0);

	/* Only the family: unnamed (autobind). */
	ASSERT_EQ(decode(&un, off, &a), 0);
	EXPECT_EQ(a.unix_kind, NET_UNIX_UNNAMED);
	EXPECT_STREQ(fmt(&a), "AF_UNIX, unnamed");
	EXPECT_EQ(decode(&un, 1, &a), -EINVAL);
}

TEST(netlink_packet_other)
{
	struct sockaddr_nl nl = {.nl_family = AF_NETLINK, .nl_pid = 7, .nl_groups = 0x11};
	struct sockaddr_ll ll = {
		.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP), .sll_ifindex = 2};
	struct sockaddr sa = {.sa_family = 40 /* AF_VSOCK */};
	NetAddr a;

	ASSERT_EQ(decode(&nl, sizeof(nl), &a), 0);
	EXPECT_EQ(a.nl_pid, 7);
	EXPECT_STREQ(fmt(&a), "AF_NETLINK, pid=7, groups=0x11");
	EXPECT_EQ(decode(&nl, sizeof(nl) - 1, &a), -EINVAL);

	ASSERT_EQ(decode(&ll, sizeof(ll), &a), 0);
	EXPECT_EQ(a.pkt_protocol, ETH_P_IP);
	EXPECT_EQ(a.pkt_ifindex, 2);
	EXPECT_STREQ(fmt(&a), "AF_PACKET, protocol=0x0800, ifindex=2");
	EXPECT_EQ(decode(&ll, 11, &a), -EINVAL);

	ASSERT_EQ(decode(&sa, 2, &a), 0);
	EXPECT_EQ(a.family, 40);
	EXPECT_STREQ(fmt(&a), "AF_VSOCK");
	sa.sa_family = 200;
	ASSERT_EQ(decode(&sa, 2, &a), 0);
	EXPECT_STREQ(fmt(&a), "family 200");
}

TEST(format_truncates)
{
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	char small[8];
	NetAddr a;

	memset(un.sun_path, 0x01, sizeof(un.sun_path));
	ASSERT_EQ(decode(&un, sizeof(un), &a), 0);
	net_addr_format(&a, small, sizeof(small));
	EXPECT_EQ(strlen(small), sizeof(small) - 1);
	{
		char big[NET_ADDR_FORMAT_MAX];

		/* Worst case: 108 bytes as \xNN each fits. */
		net_addr_format(&a, big, sizeof(big));
		EXPECT_EQ(strlen(big), strlen("AF_UNIX, \"\"") + 108 * 4);
	}
}

int main(void)
{
	return tap_run();
}
