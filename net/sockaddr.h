/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Socket addresses copied from the child, decoded into one normalized struct. Pure code: the
 * caller copies at most NET_SOCKADDR_MAX bytes from the child (a larger addrlen is EINVAL in the
 * kernel too, see move_addr_to_kernel()) and hands the copy here.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* sizeof(struct sockaddr_storage): the kernel refuses longer addresses with EINVAL. */
#define NET_SOCKADDR_MAX 128
/* sizeof(((struct sockaddr_un *) 0)->sun_path) */
#define NET_UNIX_PATH_MAX 108
/* Longest string net_addr_format() writes, NUL included (108 bytes escaped as \xNN + text). */
#define NET_ADDR_FORMAT_MAX 512

typedef enum NetUnixKind {
	NET_UNIX_PATH,	   /* filesystem socket: unix_name is the path */
	NET_UNIX_ABSTRACT, /* leading NUL: unix_name is the name after it (may hold NULs) */
	NET_UNIX_UNNAMED, /* addrlen == sizeof(sa_family_t): autobind on bind(), EINVAL otherwise */
	_NET_UNIX_KIND_MAX,
	_NET_UNIX_KIND_INVALID = -22,
} NetUnixKind;

typedef struct NetAddr {
	int family; /* sa_family as given (AF_UNSPEC and unknown families are kept) */

	/* AF_INET, AF_INET6 */
	int ip_family;	  /* family for policy: AF_INET for AF_INET and v4-mapped AF_INET6 */
	uint8_t addr[16]; /* for policy: 4 bytes (AF_INET, v4-mapped) or 16 bytes, network order */
	uint8_t raw6[16]; /* AF_INET6: the address as given, for display */
	uint16_t port;	  /* host order */
	uint32_t flowinfo, scope_id; /* AF_INET6; scope_id 0 when the short RFC 2133 form */
	bool v4mapped;		     /* ::ffff:a.b.c.d */
	bool v4compat;		     /* ::a.b.c.d (deprecated, other than :: and ::1) */

	/* AF_UNIX */
	NetUnixKind unix_kind;
	size_t unix_len;		       /* bytes in unix_name, NUL not counted */
	char unix_name[NET_UNIX_PATH_MAX + 1]; /* NUL-terminated for convenience */

	/* AF_NETLINK */
	uint32_t nl_pid, nl_groups;

	/* AF_PACKET (sockaddr_ll; the protocol is in network order in the struct, host here) */
	uint16_t pkt_protocol;
	int pkt_ifindex;
} NetAddr;

/**
 * Decodes len bytes at buf as a sockaddr. Never reads past len. Returns 0, or -EINVAL as the
 * kernel does for a length it would refuse: over NET_SOCKADDR_MAX, shorter than the family's
 * minimum (2 for any, 16 for AF_INET, 24 (RFC 2133, no scope id) for AF_INET6, 12 for
 * AF_NETLINK and AF_PACKET), or an AF_UNIX address over sizeof(struct sockaddr_un). Unknown
 * families decode to the family alone. *ret is not written on failure.
 */
int net_sockaddr_decode(const void *buf, size_t len, NetAddr *ret);

/** Fills a NetAddr for an IP address given in network order (4 or 16 bytes) and a port. */
void net_addr_from_ip(int family, const void *ip, uint16_t port, NetAddr *ret);

/** True for 127.0.0.0/8, ::1, and ::ffff:127.0.0.0/104. */
bool net_addr_is_loopback(const NetAddr *a);

/** True for 0.0.0.0, :: and ::ffff:0.0.0.0. */
bool net_addr_is_unspecified(const NetAddr *a);

/** True when a and b are the same IP address for policy (after v4-mapped normalization). */
bool net_addr_ip_equal(const NetAddr *a, const NetAddr *b);

/**
 * Formats for audit and --trace: "AF_INET, 1.2.3.4:443", "AF_INET6, [::1]:53",
 * "AF_UNIX, \"/run/x.sock\"", "AF_UNIX, \"@name\"", "AF_UNIX, unnamed",
 * "AF_NETLINK, pid=0, groups=0x0", "AF_PACKET, protocol=0x0800, ifindex=2", "family 42".
 * Bytes outside printable ASCII, quotes and backslashes are escaped (\xNN, \", \\), so the
 * result is safe for a terminal and a JSON string. Truncates to size; returns buf.
 */
const char *net_addr_format(const NetAddr *a, char *buf, size_t size);

/** "AF_INET", "AF_UNIX", …, or NULL for a family without a name here. */
const char *net_family_to_string(int family);
