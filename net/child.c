/* SPDX-License-Identifier: MIT */
/*
 * TOCTOU: everything here is a copy. Another thread may change the child's memory after it,
 * and nothing the supervisor does afterwards reads the child's buffer again.
 */
#include "net/child.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

int net_copy_sockaddr(const ChildMem *mem, uint64_t addr, uint64_t addrlen, uint8_t *buf,
		      size_t *ret_len)
{
	int len = (int) (uint32_t) addrlen; /* socklen_t in a register: the low 32 bits */
	int k;

	if (!mem || !buf || !ret_len)
		return -EINVAL;
	if (len < 0 || len > NET_SOCKADDR_MAX)
		return -EINVAL;
	if (len == 0) {
		*ret_len = 0;
		return 0;
	}
	if (addr == 0)
		return -EFAULT;
	k = mem->read(mem, addr, buf, (size_t) len);
	if (k < 0)
		return -EFAULT;
	*ret_len = (size_t) len;
	return 0;
}

int net_copy_msghdr_name(const ChildMem *mem, uint64_t msghdr_addr, uint8_t *buf, size_t *ret_len)
{
	/* struct msghdr { void *msg_name; socklen_t msg_namelen; … } on x86_64 */
	uint8_t head[12];
	uint64_t name;
	uint32_t namelen;

	if (!mem || !buf || !ret_len)
		return -EINVAL;
	if (msghdr_addr == 0 || mem->read(mem, msghdr_addr, head, sizeof(head)) < 0)
		return -EFAULT;
	memcpy(&name, head, 8);
	memcpy(&namelen, head + 8, 4);
	/* __copy_msghdr(): no msg_name means no address whatever msg_namelen says; a negative
	 * length is EINVAL; a longer one is clamped to sizeof(struct sockaddr_storage) (unlike
	 * sendto(), where it is EINVAL). */
	if (name == 0) {
		*ret_len = 0;
		return 0;
	}
	if ((int) namelen < 0)
		return -EINVAL;
	if (namelen > NET_SOCKADDR_MAX)
		namelen = NET_SOCKADDR_MAX;
	return net_copy_sockaddr(mem, name, namelen, buf, ret_len);
}

int net_copy_mmsghdr_name(const ChildMem *mem, uint64_t vec_addr, unsigned index, uint8_t *buf,
			  size_t *ret_len)
{
	uint64_t off = (uint64_t) index * NET_MMSGHDR_SIZE;

	if (vec_addr == 0 || vec_addr > UINT64_MAX - off)
		return -EFAULT;
	return net_copy_msghdr_name(mem, vec_addr + off, buf, ret_len);
}
