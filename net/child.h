/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Bounded copies of socket arguments out of the child, for the socket handlers: the sockaddr
 * of connect/bind/sendto, and msg_name of sendmsg/sendmmsg (x86_64 layouts; other arches are
 * killed by the filter). The decision and the call the supervisor then makes both use the copy.
 *
 * Errors are what the child must see (the kernel's answer for the same arguments), for an
 * EMU_FAIL decision: -EINVAL for an addrlen over NET_SOCKADDR_MAX, -EFAULT for memory that
 * cannot be read.
 */

#include <stddef.h>
#include <stdint.h>

#include "common/handler.h"
#include "net/sockaddr.h"

/* sizeof(struct msghdr) and sizeof(struct mmsghdr) on x86_64 */
#define NET_MSGHDR_SIZE	 56
#define NET_MMSGHDR_SIZE 64

/**
 * Copies addrlen bytes at addr into buf (NET_SOCKADDR_MAX bytes). addrlen is the raw register
 * (a socklen_t: only the low 32 bits count, and a value that is negative as an int is EINVAL,
 * as in move_addr_to_kernel()). addr 0 with addrlen 0 is "no address": *ret_len = 0.
 */
int net_copy_sockaddr(const ChildMem *mem, uint64_t addr, uint64_t addrlen, uint8_t *buf,
		      size_t *ret_len);

/**
 * Reads the struct msghdr at msghdr_addr and copies its msg_name (*ret_len = 0 when msg_name is
 * NULL: the connected peer is used). As the kernel does for sendmsg, a msg_namelen over
 * NET_SOCKADDR_MAX is clamped to it, a negative one is EINVAL.
 */
int net_copy_msghdr_name(const ChildMem *mem, uint64_t msghdr_addr, uint8_t *buf, size_t *ret_len);

/** The same for entry index of a struct mmsghdr vector (sendmmsg). */
int net_copy_mmsghdr_name(const ChildMem *mem, uint64_t vec_addr, unsigned index, uint8_t *buf,
			  size_t *ret_len);
