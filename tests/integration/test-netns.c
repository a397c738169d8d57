/* SPDX-License-Identifier: MIT */
/*
 * network.unshare (docs/network.md "Network namespace"): with mode none and unshare = true
 * the command runs in a private, empty network namespace, as root and as a plain user.
 * The test runs itself inside twice, with Landlock off so that only the namespace differs:
 *   - unshare = true: the only interface is lo (/proc/net/dev), and an
 *     abstract unix socket the test listens on outside (listed in network.unix, so the
 *     supervisor lets the connect through) is out of reach: abstract names are per network
 *     namespace. The uid is unchanged and no capability is left.
 *   - unshare = false (control): the same socket is reached, the host's interfaces are seen.
 * Skipped (77) where this host cannot make a network namespace.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;

static void check(bool ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	if (!ok)
		failures++;
}

static socklen_t abstract_addr(struct sockaddr_un *a, const char *name)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "%s", name);
	return (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
}

/* Interfaces of the current network namespace (/proc/net/dev); *ret_lo: lo among them. */
static int interfaces(bool *ret_lo)
{
	char line[512];
	FILE *f = fopen("/proc/net/dev", "r");
	int n = 0;

	*ret_lo = false;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strchr(line, ':')) {
			n++;
			*ret_lo |= strstr(line, "lo:") != NULL;
		}
	fclose(f);
	return n;
}

static int inside(bool private, const char *name, unsigned long host_ifs, uid_t host_uid)
{
	struct sockaddr_un a;
	socklen_t len = abstract_addr(&a, name);
	int fd, r;
	bool eff0 = false, prm0 = false;
	FILE *f;

	bool lo;
	int n = interfaces(&lo);

	if (private)
		check(n == 1 && lo, "the only interface is lo");
	else
		check(n == (int) host_ifs, "control: the host's interfaces");
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		perror("socket(AF_UNIX)");
		return 1;
	}
	r = connect(fd, (struct sockaddr *) &a, len);
	if (private)
		check(r < 0, "the host's abstract socket is out of reach");
	else
		check(r == 0, "control: the host's abstract socket is reached");
	if (r < 0 && !private)
		perror("connect");
	close(fd);
	check(getuid() == host_uid, "the uid is unchanged");
	f = fopen("/proc/self/status", "r");
	if (f) {
		char line[256];

		while (fgets(line, sizeof(line), f)) {
			eff0 |= strcmp(line, "CapEff:\t0000000000000000\n") == 0;
			prm0 |= strcmp(line, "CapPrm:\t0000000000000000\n") == 0;
		}
		fclose(f);
	}
	check(eff0 && prm0, "no capability is left");
	return failures ? 1 : 0;
}

static int run_inside(const char *self, bool private, const char *name, unsigned long ino)
{
	const char *sbxtrace = getenv("SBXTRACE"), *policy = getenv("SBX_POLICY");
	char unshare[64], unix_[128], inos[32], uids[32];
	int status;
	pid_t pid;

	snprintf(unshare, sizeof(unshare), "network.unshare=%s", private ? "true" : "false");
	snprintf(unix_, sizeof(unix_), "network.unix=[\"@%s\"]", name);
	snprintf(inos, sizeof(inos), "%lu", ino);
	snprintf(uids, sizeof(uids), "%u", (unsigned) getuid());
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execl(sbxtrace, sbxtrace, "run", "-s", unshare, "-s", unix_, "-s",
		      "tracer.landlock=false", policy, "--", self, private ? "private" : "shared",
		      name, inos, uids, (char *) NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char *argv[])
{
	char self[4096], name[64];
	struct sockaddr_un a;
	unsigned long host_ifs;
	socklen_t len;
	ssize_t k;
	int lfd, code;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 5)
		return inside(strcmp(argv[1], "private") == 0, argv[2], strtoul(argv[3], NULL, 10),
			      (uid_t) strtoul(argv[4], NULL, 10));
	if (!getenv("SBXTRACE") || !getenv("SBX_POLICY")) {
		fprintf(stderr, "skip: SBXTRACE or SBX_POLICY not set (run through meson)\n");
		return 77;
	}
	k = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (k < 0)
		return 1;
	self[k] = 0;
	{
		bool lo;
		int n = interfaces(&lo);

		if (n < 1)
			return 1;
		host_ifs = (unsigned long) n;
	}

	snprintf(name, sizeof(name), "sbx-netns-test-%d", (int) getpid());
	len = abstract_addr(&a, name);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *) &a, len) < 0 || listen(lfd, 8) < 0) {
		perror("abstract listener");
		return 1;
	}

	code = run_inside(self, false, name, host_ifs);
	check(code == 0, "control run (unshare = false)");
	code = run_inside(self, true, name, host_ifs);
	if (code == 125) {
		/* could the host make one at all? the same probe as `sbxtrace doctor` */
		fprintf(stderr, "skip: sbxtrace could not make a network namespace here (exit 125)\n");
		return failures ? 1 : 77;
	}
	check(code == 0, "run with unshare = true");
	close(lfd);
	return failures ? 1 : 0;
}
