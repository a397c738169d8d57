/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Kernel constants that Debian 12's headers (Linux 6.1 uapi) lack. Each is probed at run time
 * before use; the numbers are the kernel's uapi values.
 */

#include <linux/seccomp.h>
#include <sys/ioctl.h>

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5) /* 5.19 */
#endif

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64) /* 6.6 */
#endif

#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0) /* 6.6 */
#endif

#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1) /* 5.14 */
#endif

/* pidfd flags (<linux/pidfd.h> of 6.9) */
#ifndef PIDFD_THREAD
#define PIDFD_THREAD 0x80 /* O_EXCL; 6.9 */
#endif
#ifndef PIDFD_SIGNAL_THREAD
#define PIDFD_SIGNAL_THREAD	   (1UL << 0) /* 6.9 */
#define PIDFD_SIGNAL_THREAD_GROUP  (1UL << 1)
#define PIDFD_SIGNAL_PROCESS_GROUP (1UL << 2)
#endif

/* Landlock (<linux/landlock.h> of 6.12) */
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LANDLOCK_SCOPE_SIGNAL		    (1ULL << 1) /* ABI 6 */
#endif
