/* SPDX-License-Identifier: MIT */
/*
 * The view in the kernel binds each mount's source by path in C, after S opened it (a bind of
 * an fd S opened is refused in C's new namespace): the path can be swapped in between, by any
 * process of the user that can write its parent (another sandbox whose workspace holds it).
 * C must then fail the run rather than bind what is there now (tracer/kview.c: the bound
 * tree's dev/ino must be what S opened, else ESTALE).
 *
 * The attack: a policy mounts BASE/data read-only at /data; BASE/evil holds a secret. The
 * test runs `sbxtrace run` with SBX_WALL_TRACE naming a FIFO it reads, and the moment S says
 * it has set up its view (its sources opened; "S setup: the budgets"), and before S has
 * forked C ("S forking the keeper" not yet written), it exchanges BASE/data and BASE/evil
 * (renameat2 RENAME_EXCHANGE). The command prints /data/marker. The secret must never show:
 * a run whose swap landed before C's bind must fail, one whose swap came after it shows the
 * data. A positive control first: without the swap the run shows the data. A swap that came
 * too late (S forked already) makes the round inconclusive; 77 with the reason when no round
 * of ten was refused for the swap, or when namespaces cannot be made here.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/helpers/sbx-namespaces.h"
#include "tests/helpers/sbx-scratch.h"

#define ROUNDS	 10
#define SECRET	 "EVIL-SECRET-2718"
#define DATA	 "plain data"
#define AT_TRACE "S setup: the budgets" /* after S opened the sources */
#define TOO_LATE "S forking the keeper" /* C comes next */
#define REFUSAL	 "Stale file handle"	/* strerror(ESTALE), in the run's error */

static const char *base;
static char policy[4200], fifo[4200], data[4200], evil[4200];

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* The run's stdout (at most size - 1 bytes) and its exit status; swap: exchange data and evil
 * once S has opened its sources. *conclusive: the swap landed before S wrote TOO_LATE (or no
 * swap was asked). */
static int run(bool swap, char *out, size_t size, bool *conclusive, bool *marks)
{
	const char *sbxtrace = getenv("SBXTRACE");
	int po[2], status = -1;
	char text[8192] = "";
	size_t tlen = 0, olen = 0;
	bool swapped = false, seen_at = false, seen_late = false;
	pid_t pid;

	*conclusive = !swap;
	*marks = false;
	out[0] = 0;
	if (pipe2(po, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(po[1], STDOUT_FILENO);
		dup2(po[1], STDERR_FILENO);
		setenv("SBX_WALL_TRACE", fifo, 1);
		execl(sbxtrace, sbxtrace, "run", "-q", policy, "--", "/bin/cat", "/data/marker",
		      (char *) NULL);
		_exit(127);
	}
	close(po[1]);
	/* Each wall_trace() of S, W and the threads opens the FIFO, writes a line and closes
	 * it: read them as they come, until the run is over. */
	for (;;) {
		int fd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		bool over = false;

		if (fd < 0)
			break;
		for (;;) {
			struct pollfd p = {.fd = fd, .events = POLLIN};
			ssize_t n;

			if (poll(&p, 1, 50) == 0) {
				if (waitpid(pid, &status, WNOHANG) == pid) {
					over = true;
					break;
				}
				continue;
			}
			n = read(fd, text + tlen, sizeof(text) - 1 - tlen);
			if (n > 0) {
				tlen += (size_t) n;
				text[tlen] = 0;
				if (strstr(text, AT_TRACE))
					seen_at = true;
				if (strstr(text, TOO_LATE))
					seen_late = true;
				if (swap && !swapped && strstr(text, AT_TRACE)) {
					/* S has opened the sources: swap now, and see whether S
					 * had already gone on to fork C */
					*conclusive = !strstr(text, TOO_LATE);
					if (syscall(SYS_renameat2, AT_FDCWD, data, AT_FDCWD, evil,
						    RENAME_EXCHANGE) < 0) {
						perror("renameat2");
						*conclusive = false;
					}
					swapped = true;
				}
				if (tlen == sizeof(text) - 1)
					tlen = 0; /* only the lines around the swap matter */
				continue;
			}
			if (n == 0 || (n < 0 && errno != EAGAIN))
				break; /* the writers closed: open again for the next line */
		}
		close(fd);
		if (over)
			break;
	}
	for (ssize_t n; olen < size - 1 && (n = read(po[0], out + olen, size - 1 - olen)) > 0;)
		olen += (size_t) n;
	out[olen] = 0;
	close(po[0]);
	if (status == -1)
		(void) waitpid(pid, &status, 0);
	*marks = seen_at && seen_late;
	if (swapped) /* back, for the next round */
		(void) syscall(SYS_renameat2, AT_FDCWD, data, AT_FDCWD, evil, RENAME_EXCHANGE);
	return status;
}

int main(void)
{
	const char *why = sbx_namespaces_refused();
	char out[256];
	int status, escapes = 0, refused = 0, others = 0, conclusive_rounds = 0;
	bool conclusive, marks;

	if (why) {
		printf("skip: the view in the kernel needs namespaces: %s\n", why);
		return 77;
	}
	if (!getenv("SBXTRACE")) {
		fprintf(stderr, "SBXTRACE is not set\n");
		return 1;
	}
	base = sbx_scratch_dir("sbx-kview-bind-swap");
	if (!base)
		return perror("mkdtemp"), 1;
	snprintf(data, sizeof(data), "%s/data", base);
	snprintf(evil, sizeof(evil), "%s/evil", base);
	snprintf(fifo, sizeof(fifo), "%s/trace", base);
	snprintf(policy, sizeof(policy), "%s/policy.toml", base);
	if (mkdir(data, 0755) < 0 || mkdir(evil, 0755) < 0 || mkfifo(fifo, 0600) < 0)
		return perror("setup"), 1;
	{
		char p[4300], text[8192];

		snprintf(p, sizeof(p), "%s/marker", data);
		if (write_file(p, DATA "\n") < 0)
			return perror(p), 1;
		snprintf(p, sizeof(p), "%s/marker", evil);
		if (write_file(p, SECRET "\n") < 0)
			return perror(p), 1;
		snprintf(text, sizeof(text),
			 "[sandbox]\nname = \"kview-bind-swap\"\n"
			 "[[mount]]\npath = \"/usr\"\n[[mount]]\npath = \"/bin\"\n"
			 "[[mount]]\npath = \"/lib\"\n[[mount]]\npath = \"/lib64\"\noptional = "
			 "true\n"
			 "[[mount]]\npath = \"/data\"\nsource = \"%s\"\nmode = \"ro\"\n"
			 "[tracer]\nkernel_view = true\n",
			 data);
		if (write_file(policy, text) < 0)
			return perror(policy), 1;
	}

	/* the positive control: the run works, and shows the data */
	status = run(false, out, sizeof(out), &conclusive, &marks);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !strstr(out, DATA)) {
		fprintf(stderr, "control: the run without a swap failed (status %#x, out '%s')\n",
			status, out);
		return 1;
	}
	if (!marks) {
		/* the attack is timed by these lines (tracer/run.c): without them it would
		 * never swap, and the test would only skip */
		fprintf(stderr, "control: S's wall trace lacks '%s' or '%s'\n", AT_TRACE, TOO_LATE);
		return 1;
	}

	for (int i = 0; i < ROUNDS; i++) {
		status = run(true, out, sizeof(out), &conclusive, &marks);
		if (strstr(out, SECRET)) {
			fprintf(stderr,
				"ESCAPE: round %d: the swapped-in directory was bound "
				"(status %#x)\n",
				i, status);
			escapes++;
		}
		if (!conclusive)
			continue;
		conclusive_rounds++;
		if (WIFEXITED(status) && WEXITSTATUS(status) != 0 && strstr(out, REFUSAL))
			refused++;
		else if (!strstr(out, DATA))
			/* neither refused for the swap nor the data: something else broke */
			fprintf(stderr, "round %d: status %#x, output '%s'\n", i, status, out),
				others++;
		/* else the data: the swap came after C's bind (this process was slow) */
	}
	printf("%d of %d rounds swapped before S forked C; %d refused for it; %d escapes\n",
	       conclusive_rounds, ROUNDS, refused, escapes);
	if (escapes || others)
		return 1;
	if (refused == 0) {
		printf("skip: no swap landed between S's open and C's bind (a loaded machine?)\n");
		return 77;
	}
	return 0;
}
