/* SPDX-License-Identifier: MIT */
/*
 * /dev/pts/N reaches only the ptys the tree created (policy process.pty): the test opens a
 * pty OUTSIDE (the harness's own, like another session's terminal, same user), then inside
 * `-s process.pty=true` tries every way to open its pts — by number, O_PATH, through
 * "..", a workspace symlink, openat() on /dev/pts — and every other number it did not
 * create, plus the pts of a pty it created and closed again (the number is free for anyone
 * after that). TIOCSTI on its own pty stays denied. Sanity: a pty made inside works (open
 * of its pts by name, data both ways), so the test cannot pass when ptys are simply absent.
 * Outside, the foreign master must have received nothing. Fails under a policy that shows
 * the host's /dev (then the foreign pts opens).
 */
#define FS_OWN_MAIN
#include "tests/security/fs-escape.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>

static unsigned foreign_n;

static bool pts_opens(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Every way to name the foreign pts by its number. */
static void foreign_attempts(unsigned n)
{
	char p[PATH_MAX];
	struct stat st;
	int dir;

	snprintf(p, sizeof(p), "/dev/pts/%u", n);
	if (pts_opens(p, O_RDWR | O_NOCTTY))
		fs_bad("opened the foreign pts");
	if (pts_opens(p, O_WRONLY | O_NOCTTY | O_NONBLOCK))
		fs_bad("opened the foreign pts write-only");
	if (pts_opens(p, O_PATH))
		fs_bad("opened the foreign pts with O_PATH");
	if (stat(p, &st) == 0)
		fs_bad("the foreign pts is visible to stat");
	snprintf(p, sizeof(p), "/dev/pts/../pts/%u", n);
	if (pts_opens(p, O_RDWR | O_NOCTTY))
		fs_bad("opened the foreign pts through ..");
	snprintf(p, sizeof(p), "/dev/pts/%u", n);
	if (symlink(p, "/workspace/pts-link") == 0 &&
	    pts_opens("/workspace/pts-link", O_RDWR | O_NOCTTY))
		fs_bad("opened the foreign pts through a workspace symlink");
	dir = open("/dev/pts", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir >= 0) {
		char name[16];
		int fd;

		snprintf(name, sizeof(name), "%u", n);
		fd = openat(dir, name, O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (fd >= 0) {
			fs_bad("opened the foreign pts with openat(/dev/pts)");
			close(fd);
		}
		close(dir);
	}
}

static int attack(void)
{
	char p[PATH_MAX], buf[64];
	unsigned n_in, closed_n;
	int m, s, m2;
	char c = 'x';

	foreign_n = (unsigned) strtoul(getenv("SBX_FOREIGN_PTS"), NULL, 10);

	/* sanity: a pty of our own, its pts opened by name */
	m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0) {
		perror("inside: open /dev/ptmx");
		return 1;
	}
	if (ioctl(m, TIOCGPTN, &n_in) < 0 || unlockpt(m) < 0) {
		perror("inside: TIOCGPTN/unlockpt");
		return 1;
	}
	snprintf(p, sizeof(p), "/dev/pts/%u", n_in);
	s = open(p, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s < 0 || !isatty(s)) {
		fprintf(stderr, "inside: open %s: %s\n", p, strerror(errno));
		return 1;
	}
	if (write(m, "ping\n", 5) != 5 || read(s, buf, sizeof(buf)) <= 0 ||
	    strncmp(buf, "ping", 4) != 0) {
		fprintf(stderr, "inside: no data through our own pty\n");
		return 1;
	}
	if (n_in == foreign_n && !getenv("SBX_FS_KERNEL_VIEW")) {
		fprintf(stderr, "inside: our pty has the foreign number %u\n", n_in);
		return 1;
	}
	/* With the view in the kernel, /dev/pts is a private devpts instance whose numbers
	 * start at 0: the foreign number may be our own pty's there, and then names it (the
	 * sanity check above); the outside still checks that the foreign master got nothing. */
	if (n_in != foreign_n)
		foreign_attempts(foreign_n);

	/* a pty we created and closed: its number is anyone's now */
	m2 = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m2 < 0 || ioctl(m2, TIOCGPTN, &closed_n) < 0 || unlockpt(m2) < 0) {
		perror("inside: second pty");
		return 1;
	}
	close(m2);
	snprintf(p, sizeof(p), "/dev/pts/%u", closed_n);
	if (pts_opens(p, O_RDWR | O_NOCTTY))
		fs_bad("opened the pts of a pty whose master is closed");

	/* every number we did not create (the host's other sessions) */
	for (unsigned k = 0; k < n_in + 64; k++) {
		if (k == n_in)
			continue;
		snprintf(p, sizeof(p), "/dev/pts/%u", k);
		if (pts_opens(p, O_RDWR | O_NOCTTY | O_NONBLOCK)) {
			char m3[PATH_MAX + 32];

			snprintf(m3, sizeof(m3), "opened %s, not created inside", p);
			fs_bad(m3);
		}
	}

	/* TIOCSTI stays denied, even on our own terminal */
	if (ioctl(s, TIOCSTI, &c) == 0)
		fs_bad("TIOCSTI allowed");
	close(s);
	close(m);
	return 0;
}

/* Outside: a pty of the harness (like another session's terminal), then the usual run. */
int main(int argc, char *argv[])
{
	int m, r;
	unsigned n;
	char num[32];
	struct pollfd pfd;

	if (argc >= 3 && strncmp(argv[1], "inside", 6) == 0) {
		setvbuf(stderr, NULL, _IONBF, 0);
		fs_base = argv[2];
		snprintf(fs_secret, sizeof(fs_secret), "%s/secret/secret.txt", fs_base);
		r = attack();
		return r || fs_failures ? 1 : 0;
	}
	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || ioctl(m, TIOCGPTN, &n) < 0) {
		fprintf(stderr, "skip: no pseudo-terminal outside: %s\n", strerror(errno));
		return 77;
	}
	snprintf(num, sizeof(num), "%u", n);
	setenv("SBX_FOREIGN_PTS", num, 1);
	fs_extra_set = "process.pty=true";
	for (int i = 1; i < argc; i++)
		fs_kernel_view |= strcmp(argv[i], "--kernel-view") == 0;
	r = fs_outside(!(argc > 1 && strcmp(argv[1], "--no-landlock") == 0));
	pfd = (struct pollfd){.fd = m, .events = POLLIN};
	if (poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN)) {
		fprintf(stderr, "ESCAPE: the foreign pty received data from inside\n");
		r = 1;
	}
	close(m);
	return r;
}
