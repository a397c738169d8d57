/* SPDX-License-Identifier: MIT */
/*
 * sockaddr decoding, following what the kernel accepts (net/socket.c move_addr_to_kernel(),
 * net/ipv4/af_inet.c, net/ipv6/af_inet6.c, net/unix/af_unix.c unix_validate_addr(),
 * net/netlink/af_netlink.c, net/packet/af_packet.c). Fields are read with memcpy from fixed
 * offsets, never through a cast of the child's buffer, and only after the length check.
 */
#include "net/sockaddr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "common/macros.h"

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t) (p[0] << 8 | p[1]);
}

static uint32_t get_ne32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static const uint8_t v4mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
static const uint8_t zero16[16];

static void set_ip6(NetAddr *a, const uint8_t ip[16])
{
	memcpy(a->raw6, ip, 16);
	if (memcmp(ip, v4mapped_prefix, 12) == 0) {
		/* The kernel sends to a.b.c.d over IPv4 from a dual-stack socket: treat it so. */
		a->v4mapped = true;
		a->ip_family = AF_INET;
		memcpy(a->addr, ip + 12, 4);
		return;
	}
	/* ::a.b.c.d (RFC 4291 deprecated); :: and ::1 are not v4-compatible addresses. */
	if (memcmp(ip, zero16, 12) == 0 &&
	    (get_ne32(ip + 12) != 0 && get_ne32(ip + 12) != htonl(1)))
		a->v4compat = true;
	a->ip_family = AF_INET6;
	memcpy(a->addr, ip, 16);
}

void net_addr_from_ip(int family, const void *ip, uint16_t port, NetAddr *ret)
{
	NetAddr a = {.family = family, .port = port};

	if (family == AF_INET) {
		a.ip_family = AF_INET;
		memcpy(a.addr, ip, 4);
	} else
		set_ip6(&a, ip);
	*ret = a;
}

int net_sockaddr_decode(const void *buf, size_t len, NetAddr *ret)
{
	const uint8_t *p = buf;
	NetAddr a = {};
	sa_family_t family;

	if (len > NET_SOCKADDR_MAX || len < sizeof(sa_family_t))
		return -EINVAL;
	memcpy(&family, p, sizeof(family));
	a.family = family;

	switch (family) {
	case AF_INET:
		if (len < sizeof(struct sockaddr_in))
			return -EINVAL;
		a.ip_family = AF_INET;
		a.port = get_be16(p + offsetof(struct sockaddr_in, sin_port));
		memcpy(a.addr, p + offsetof(struct sockaddr_in, sin_addr), 4);
		break;

	case AF_INET6: {
		uint8_t ip[16];

		/* SIN6_LEN_RFC2133: the kernel accepts the old form without sin6_scope_id. */
		if (len < offsetof(struct sockaddr_in6, sin6_scope_id))
			return -EINVAL;
		a.port = get_be16(p + offsetof(struct sockaddr_in6, sin6_port));
		memcpy(&a.flowinfo, p + offsetof(struct sockaddr_in6, sin6_flowinfo), 4);
		a.flowinfo = ntohl(a.flowinfo);
		memcpy(ip, p + offsetof(struct sockaddr_in6, sin6_addr), 16);
		if (len >= sizeof(struct sockaddr_in6))
			memcpy(&a.scope_id, p + offsetof(struct sockaddr_in6, sin6_scope_id), 4);
		set_ip6(&a, ip);
		break;
	}

	case AF_UNIX: {
		size_t off = offsetof(struct sockaddr_un, sun_path), n;

		if (len > sizeof(struct sockaddr_un))
			return -EINVAL;
		if (len == off) {
			a.unix_kind = NET_UNIX_UNNAMED;
			break;
		}
		n = len - off;
		if (p[off] == '\0') {
			/* Abstract: the name is every byte after the NUL, NULs included. */
			a.unix_kind = NET_UNIX_ABSTRACT;
			a.unix_len = n - 1;
			memcpy(a.unix_name, p + off + 1, a.unix_len);
		} else {
			/* Path: the kernel stops at the first NUL or at addrlen. */
			const uint8_t *nul = memchr(p + off, '\0', n);

			a.unix_kind = NET_UNIX_PATH;
			a.unix_len = nul ? (size_t) (nul - (p + off)) : n;
			memcpy(a.unix_name, p + off, a.unix_len);
		}
		a.unix_name[a.unix_len] = '\0';
		break;
	}

	case AF_NETLINK:
		if (len < sizeof(struct sockaddr_nl))
			return -EINVAL;
		memcpy(&a.nl_pid, p + offsetof(struct sockaddr_nl, nl_pid), 4);
		memcpy(&a.nl_groups, p + offsetof(struct sockaddr_nl, nl_groups), 4);
		break;

	case AF_PACKET:
		/* sockaddr_ll up to sll_addr, the least packet_snd() takes (packet_bind() wants
		 * all of it). */
		if (len < offsetof(struct sockaddr_ll, sll_addr))
			return -EINVAL;
		a.pkt_protocol = get_be16(p + offsetof(struct sockaddr_ll, sll_protocol));
		memcpy(&a.pkt_ifindex, p + offsetof(struct sockaddr_ll, sll_ifindex), 4);
		break;

	default:
		break;
	}

	*ret = a;
	return 0;
}

bool net_addr_is_loopback(const NetAddr *a)
{
	static const uint8_t one6[16] = {[15] = 1};

	if (a->family != AF_INET && a->family != AF_INET6)
		return false;
	if (a->ip_family == AF_INET)
		return a->addr[0] == 127;
	return memcmp(a->addr, one6, 16) == 0;
}

bool net_addr_is_unspecified(const NetAddr *a)
{
	if (a->family != AF_INET && a->family != AF_INET6)
		return false;
	return memcmp(a->addr, zero16, a->ip_family == AF_INET ? 4 : 16) == 0;
}

bool net_addr_ip_equal(const NetAddr *a, const NetAddr *b)
{
	if (a->ip_family != b->ip_family || (a->ip_family != AF_INET && a->ip_family != AF_INET6))
		return false;
	return memcmp(a->addr, b->addr, a->ip_family == AF_INET ? 4 : 16) == 0;
}

const char *net_family_to_string(int family)
{
	switch (family) {
	case AF_UNSPEC:
		return "AF_UNSPEC";
	case AF_UNIX:
		return "AF_UNIX";
	case AF_INET:
		return "AF_INET";
	case AF_INET6:
		return "AF_INET6";
	case AF_NETLINK:
		return "AF_NETLINK";
	case AF_PACKET:
		return "AF_PACKET";
	case AF_VSOCK:
		return "AF_VSOCK";
	case AF_BLUETOOTH:
		return "AF_BLUETOOTH";
	case AF_ALG:
		return "AF_ALG";
	case AF_XDP:
		return "AF_XDP";
	default:
		return NULL;
	}
}

/* Appends with snprintf semantics, keeping *pos at most size - 1. */
_printf_(4, 5) static void append(char *buf, size_t size, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*pos + 1 >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *pos, size - *pos, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	*pos = MIN(*pos + (size_t) n, size - 1);
}

static void append_escaped(char *buf, size_t size, size_t *pos, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char) s[i];

		if (c == '"' || c == '\\')
			append(buf, size, pos, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			append(buf, size, pos, "\\x%02x", c);
		else
			append(buf, size, pos, "%c", c);
	}
}

const char *net_addr_format(const NetAddr *a, char *buf, size_t size)
{
	const char *fam = net_family_to_string(a->family);
	char ip[INET6_ADDRSTRLEN];
	size_t pos = 0;

	if (size == 0)
		return buf;
	buf[0] = '\0';

	switch (a->family) {
	case AF_INET:
		inet_ntop(AF_INET, a->addr, ip, sizeof(ip));
		append(buf, size, &pos, "AF_INET, %s:%u", ip, a->port);
		break;
	case AF_INET6:
		inet_ntop(AF_INET6, a->raw6, ip, sizeof(ip));
		append(buf, size, &pos, "AF_INET6, [%s", ip);
		if (a->scope_id)
			append(buf, size, &pos, "%%%u", a->scope_id);
		append(buf, size, &pos, "]:%u", a->port);
		break;
	case AF_UNIX:
		if (a->unix_kind == NET_UNIX_UNNAMED) {
			append(buf, size, &pos, "AF_UNIX, unnamed");
			break;
		}
		append(buf, size, &pos, "AF_UNIX, \"%s",
		       a->unix_kind == NET_UNIX_ABSTRACT ? "@" : "");
		append_escaped(buf, size, &pos, a->unix_name, a->unix_len);
		append(buf, size, &pos, "\"");
		break;
	case AF_NETLINK:
		append(buf, size, &pos, "AF_NETLINK, pid=%u, groups=0x%x", a->nl_pid, a->nl_groups);
		break;
	case AF_PACKET:
		append(buf, size, &pos, "AF_PACKET, protocol=0x%04x, ifindex=%d", a->pkt_protocol,
		       a->pkt_ifindex);
		break;
	default:
		if (fam)
			append(buf, size, &pos, "%s", fam);
		else
			append(buf, size, &pos, "family %d", a->family);
		break;
	}
	return buf;
}
