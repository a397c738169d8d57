/* SPDX-License-Identifier: MIT */
/* Bounded copies of sockaddrs and msg_name out of a (fake) child (net/child.c). */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "net/child.h"
#include "tests/unit/tap.h"

/* A fake child address space: [BASE, BASE + sizeof(space)) is readable, nothing else. */
#define BASE 0x10000ULL
static uint8_t space[1024];

static int fake_read(const ChildMem *m, uint64_t addr, void *buf, size_t len)
{
	(void) m;
	if (addr < BASE || len > sizeof(space) || addr - BASE > sizeof(space) - len)
		return -EFAULT;
	memcpy(buf, space + (addr - BASE), len);
	return 0;
}

static const ChildMem mem = {.read = fake_read};

static void put_msghdr(size_t off, uint64_t name, uint32_t namelen)
{
	memset(space + off, 0, NET_MSGHDR_SIZE);
	memcpy(space + off, &name, 8);
	memcpy(space + off + 8, &namelen, 4);
}

TEST(copy_sockaddr)
{
	struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons(443)};
	uint8_t buf[NET_SOCKADDR_MAX];
	size_t n = 99;

	memcpy(space + 100, &in, sizeof(in));
	ASSERT_EQ(net_copy_sockaddr(&mem, BASE + 100, sizeof(in), buf, &n), 0);
	EXPECT_EQ(n, sizeof(in));
	EXPECT_EQ(memcmp(buf, &in, sizeof(in)), 0);

	/* sendto(): over 128 is EINVAL, negative (as socklen_t → int) too; high bits ignored */
	EXPECT_EQ(net_copy_sockaddr(&mem, BASE, NET_SOCKADDR_MAX + 1, buf, &n), -EINVAL);
	EXPECT_EQ(net_copy_sockaddr(&mem, BASE, 0xffffffffULL, buf, &n), -EINVAL);
	ASSERT_EQ(net_copy_sockaddr(&mem, BASE + 100, 0x100000000ULL | sizeof(in), buf, &n), 0);
	EXPECT_EQ(n, sizeof(in));
	ASSERT_EQ(net_copy_sockaddr(&mem, BASE, NET_SOCKADDR_MAX, buf, &n), 0);
	/* no address */
	ASSERT_EQ(net_copy_sockaddr(&mem, 0, 0, buf, &n), 0);
	EXPECT_EQ(n, 0);
	EXPECT_EQ(net_copy_sockaddr(&mem, 0, 16, buf, &n), -EFAULT);
	/* unreadable, or running off the end */
	EXPECT_EQ(net_copy_sockaddr(&mem, 0x20, 16, buf, &n), -EFAULT);
	EXPECT_EQ(net_copy_sockaddr(&mem, BASE + sizeof(space) - 8, 16, buf, &n), -EFAULT);
}

TEST(copy_msghdr_name)
{
	struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons(53)};
	uint8_t buf[NET_SOCKADDR_MAX];
	size_t n = 0;

	memcpy(space + 200, &in, sizeof(in));
	put_msghdr(0, BASE + 200, sizeof(in));
	ASSERT_EQ(net_copy_msghdr_name(&mem, BASE, buf, &n), 0);
	EXPECT_EQ(n, sizeof(in));
	EXPECT_EQ(memcmp(buf, &in, sizeof(in)), 0);

	/* sendmsg() clamps a long msg_namelen to 128 instead of failing */
	put_msghdr(0, BASE + 200, 5000);
	ASSERT_EQ(net_copy_msghdr_name(&mem, BASE, buf, &n), 0);
	EXPECT_EQ(n, NET_SOCKADDR_MAX);
	put_msghdr(0, BASE + 200, 0x80000000u);
	EXPECT_EQ(net_copy_msghdr_name(&mem, BASE, buf, &n), -EINVAL);
	/* NULL msg_name: no address, whatever the length */
	put_msghdr(0, 0, 16);
	ASSERT_EQ(net_copy_msghdr_name(&mem, BASE, buf, &n), 0);
	EXPECT_EQ(n, 0);
	/* an unreadable msghdr or name */
	EXPECT_EQ(net_copy_msghdr_name(&mem, 0, buf, &n), -EFAULT);
	put_msghdr(0, 0x40, 16);
	EXPECT_EQ(net_copy_msghdr_name(&mem, BASE, buf, &n), -EFAULT);
}

TEST(copy_mmsghdr_name)
{
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6, .sin6_port = htons(9)};
	uint8_t buf[NET_SOCKADDR_MAX];
	size_t n = 0;

	memcpy(space + 600, &in6, sizeof(in6));
	put_msghdr(0, 0, 0);
	put_msghdr(NET_MMSGHDR_SIZE, BASE + 600, sizeof(in6));
	ASSERT_EQ(net_copy_mmsghdr_name(&mem, BASE, 0, buf, &n), 0);
	EXPECT_EQ(n, 0);
	ASSERT_EQ(net_copy_mmsghdr_name(&mem, BASE, 1, buf, &n), 0);
	EXPECT_EQ(n, sizeof(in6));
	EXPECT_EQ(memcmp(buf, &in6, sizeof(in6)), 0);
	EXPECT_EQ(net_copy_mmsghdr_name(&mem, BASE, 1000, buf, &n), -EFAULT);
	EXPECT_EQ(net_copy_mmsghdr_name(&mem, UINT64_MAX - 10, 1, buf, &n), -EFAULT);
}

int main(void)
{
	return tap_run();
}
