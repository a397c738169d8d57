/* SPDX-License-Identifier: MIT */
/*
 * A directory fd from outside the view: a process of the host (here the harness, standing
 * for a daemon or another sandbox that shares the workspace) listens on a socket in the
 * workspace and passes an O_PATH fd of the scratch directory that holds the secret
 * (SCM_RIGHTS) to whoever connects. Inside, the program receives it and tries openat() of
 * the secret relative to it, creating a file there, and fchdir() into it then a relative
 * open. The emulated view maps every dirfd into the view (outside: EACCES); the view in the
 * kernel relies on Landlock, which refuses opens outside the sources (and is why it does not
 * run without Landlock). Sanity: the fd must arrive, so the test cannot pass by not trying.
 */
#define FS_HAVE_PREPARE
#include "tests/security/fs-escape.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>

static int attack(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX, .sun_path = "/workspace/fd.sock"};
	char cbuf[CMSG_SPACE(sizeof(int))], byte;
	struct iovec iov = {&byte, 1};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c;
	int s, fd = -1, k;

	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *) &a, sizeof(a)) < 0) {
		perror("inside: connect");
		return 1;
	}
	if (recvmsg(s, &mh, 0) <= 0) {
		perror("inside: recvmsg");
		return 1;
	}
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(c), sizeof(fd));
	if (fd < 0) {
		fprintf(stderr, "inside: no fd arrived: the attack was not tried\n");
		return 1;
	}
	k = openat(fd, "secret/secret.txt", O_RDONLY | O_CLOEXEC);
	if (k >= 0 && fs_fd_is_secret(k))
		fs_bad("openat() relative to a received outside directory read the secret");
	if (k >= 0)
		close(k);
	k = openat(fd, "pwned", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (k >= 0) {
		fs_bad("created a file relative to a received outside directory");
		close(k);
	}
	if (fchdir(fd) == 0) {
		k = open("secret/secret.txt", O_RDONLY | O_CLOEXEC);
		if (k >= 0 && fs_fd_is_secret(k))
			fs_bad("fchdir() into a received outside directory, then open, read the "
			       "secret");
		if (k >= 0)
			close(k);
	}
	return 0;
}

/* Outside: a one-shot server in the workspace that hands out an fd of BASE. */
static void fs_prepare(const char *ws)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char base[PATH_MAX + 8];
	int s, dir;
	pid_t pid;

	if (snprintf(base, sizeof(base), "%s/..", ws) >= (int) sizeof(base) ||
	    snprintf(a.sun_path, sizeof(a.sun_path), "%s/fd.sock", ws) >=
		    (int) sizeof(a.sun_path)) {
		fprintf(stderr, "outside: the scratch path is too long for a socket\n");
		return;
	}
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	dir = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (s < 0 || dir < 0 || bind(s, (struct sockaddr *) &a, sizeof(a)) < 0 ||
	    listen(s, 1) < 0) {
		perror("outside: server");
		return;
	}
	pid = fork();
	if (pid == 0) {
		char cbuf[CMSG_SPACE(sizeof(int))] = {0}, byte = 'x';
		struct iovec iov = {&byte, 1};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf)};
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		int conn;

		alarm(60);
		conn = accept(s, NULL, NULL);
		if (conn < 0)
			_exit(1);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &dir, sizeof(int));
		(void) sendmsg(conn, &mh, 0);
		_exit(0);
	}
	close(s);
	close(dir);
}
