/* SPDX-License-Identifier: MIT */
/*
 * ro rules on fixed paths against a directory fd from another sandbox that shares the
 * workspace. /workspace/prot (a directory) and /workspace/prot.txt (a file) are read-only by
 * rule in the read-write workspace, in both runs. A first run, always in the emulated view
 * (tests/data/fs-security.toml), opens /workspace (an fd the supervisor opened on the host's
 * tree) and hands it over a socket in the workspace to whoever connects. The attack, in the
 * run under test, receives it and writes, creates and removes below the protected paths
 * relative to it. The emulated view maps the dirfd back into the view, where the rules hold.
 * The view in the kernel carries the rules out as read-only binds (tracer/kview.c, ro_rule)
 * in its own mount namespace, which an fd of the host's tree does not cross, and Landlock
 * allows everything beneath the workspace's source. Sanity: the fd must arrive.
 */
#define FS_HAVE_PREPARE
#define FS_HAVE_CHECK
#define FS_OWN_MAIN
#include "tests/security/fs-escape.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#define PROT_TEXT "protected content\n"
#define RULES                                                                                      \
	"rule=[{path = \"/workspace/prot\", access = \"ro\"}, "                                    \
	"{path = \"/workspace/prot.txt\", access = \"ro\"}]"
#define SOCK "/workspace/fd.sock"

static char ws_path[PATH_MAX];
static struct stat st_x, st_txt;
static pid_t server = -1;

static int recv_fd(int s)
{
	char cbuf[CMSG_SPACE(sizeof(int))], byte;
	struct iovec iov = {&byte, 1};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c;
	int fd = -1;

	if (recvmsg(s, &mh, 0) <= 0)
		return -1;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(c), sizeof(fd));
	return fd;
}

/* A write through a name relative to dir: an escape when it lands. */
static void try_write(int dir, const char *rel, int flags)
{
	char m[256];
	int k = openat(dir, rel, O_WRONLY | O_CLOEXEC | flags, 0644);

	if (k < 0)
		return;
	if (write(k, "pwned\n", 6) == 6) {
		snprintf(m, sizeof(m), "wrote %s through a directory fd of the other sandbox", rel);
		fs_bad(m);
	}
	close(k);
}

static int attack(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX, .sun_path = SOCK};
	struct timespec pause = {0, 50 * 1000 * 1000};
	struct stat st;
	int s = -1, fd;

	/* the other sandbox may not have bound its socket yet */
	for (int i = 0; i < 400; i++) {
		s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (s < 0 || connect(s, (struct sockaddr *) &a, sizeof(a)) == 0)
			break;
		close(s);
		s = -1;
		nanosleep(&pause, NULL);
	}
	if (s < 0) {
		perror("inside: connect " SOCK);
		return 1;
	}
	fd = recv_fd(s);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "inside: no directory fd arrived: the attack was not tried\n");
		return 1;
	}
	try_write(fd, "prot.txt", O_APPEND);
	try_write(fd, "prot/inner/x", O_APPEND);
	try_write(fd, "prot/new", O_CREAT | O_EXCL);
	if (unlinkat(fd, "prot/inner/x", 0) == 0)
		fs_bad("removed prot/inner/x through a directory fd of the other sandbox");
	if (renameat(fd, "prot.txt", fd, "moved.txt") == 0)
		fs_bad("renamed prot.txt through a directory fd of the other sandbox");
	close(fd);
	close(s);
	return 0;
}

/* In the other sandbox: a one-shot server that hands out an fd of /workspace. */
static int serve(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX, .sun_path = SOCK};
	char cbuf[CMSG_SPACE(sizeof(int))] = {0}, byte = 'x';
	struct iovec iov = {&byte, 1};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	int s, conn, dir;

	alarm(60);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	dir = open("/workspace", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s < 0 || dir < 0 || bind(s, (struct sockaddr *) &a, sizeof(a)) < 0 ||
	    listen(s, 1) < 0) {
		perror("server: " SOCK);
		return 1;
	}
	conn = accept(s, NULL, NULL);
	if (conn < 0)
		return 1;
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &dir, sizeof(int));
	if (sendmsg(conn, &mh, 0) < 0)
		return 1;
	while (read(conn, &byte, 1) > 0) /* until the peer is done */
		;
	return 0;
}

static void fs_prepare(const char *ws)
{
	const char *sbxtrace = getenv("SBXTRACE"), *policy = getenv("SBX_FS_POLICY");
	char p[PATH_MAX + 32], prog[PATH_MAX + 32];

	snprintf(ws_path, sizeof(ws_path), "%s", ws);
	snprintf(p, sizeof(p), "%s/prot", ws);
	(void) mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/prot/inner", ws);
	(void) mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/prot/inner/x", ws);
	(void) fs_write_file(p, PROT_TEXT);
	(void) stat(p, &st_x);
	snprintf(p, sizeof(p), "%s/prot.txt", ws);
	(void) fs_write_file(p, PROT_TEXT);
	(void) stat(p, &st_txt);
	fs_extra_sets[0] = RULES;

	/* the other sandbox: the same rules, the emulated view */
	snprintf(p, sizeof(p), "%s/..", ws);
	snprintf(prog, sizeof(prog), "%s/..", ws);
	server = fork();
	if (server == 0) {
		if (chdir(p) < 0)
			_exit(99);
		execl(sbxtrace, sbxtrace, "run", "-w", ws, "-s", RULES, policy, "--",
		      "/workspace/prog", "serve", prog, (char *) NULL);
		_exit(99);
	}
}

static int unchanged(const char *rel, const struct stat *before)
{
	char p[PATH_MAX + 32], buf[64];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", ws_path, rel);
	if (fs_read_file(p, buf, sizeof(buf)) < 0 || strcmp(buf, PROT_TEXT) != 0 ||
	    stat(p, &st) < 0 || st.st_ino != before->st_ino ||
	    st.st_mtim.tv_sec != before->st_mtim.tv_sec ||
	    st.st_mtim.tv_nsec != before->st_mtim.tv_nsec) {
		fprintf(stderr, "ESCAPE: %s was changed\n", rel);
		return 1;
	}
	return 0;
}

static int fs_check(void)
{
	char p[PATH_MAX + 32];
	int bad, status;

	if (server > 0) {
		(void) kill(server, SIGTERM);
		(void) waitpid(server, &status, 0);
		server = -1;
	}
	bad = unchanged("prot/inner/x", &st_x) | unchanged("prot.txt", &st_txt);
	snprintf(p, sizeof(p), "%s/prot/new", ws_path);
	if (access(p, F_OK) == 0) {
		fprintf(stderr, "ESCAPE: prot/new was created\n");
		bad = 1;
	}
	return bad;
}

int main(int argc, char *argv[])
{
	int r;

	if (argc >= 3 && strcmp(argv[1], "serve") == 0)
		return serve();
	if (argc >= 3 && strcmp(argv[1], "inside") == 0) {
		setvbuf(stderr, NULL, _IONBF, 0);
		fs_base = argv[2];
		snprintf(fs_secret, sizeof(fs_secret), "%s/secret/secret.txt", fs_base);
		return attack() || fs_failures ? 1 : 0;
	}
	for (int i = 1; i < argc; i++)
		fs_kernel_view |= strcmp(argv[i], "--kernel-view") == 0;
	r = fs_outside(!(argc > 1 && strcmp(argv[1], "--no-landlock") == 0));
	if (server > 0) { /* a skip: the other sandbox waits for nobody */
		(void) kill(server, SIGTERM);
		(void) waitpid(server, NULL, 0);
	}
	return r;
}
