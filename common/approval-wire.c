/* SPDX-License-Identifier: MIT */
#include "common/approval-wire.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/util.h"

static const char *const names[_APPROVAL_MAX] = {"allow_once", "allow_session", "deny"};

const char *approval_decision_to_string(ApprovalDecision d)
{
	return d >= 0 && d < _APPROVAL_MAX ? names[d] : NULL;
}

ApprovalDecision approval_decision_from_string(const char *s)
{
	for (int i = 0; s && i < _APPROVAL_MAX; i++)
		if (streq(s, names[i]))
			return (ApprovalDecision) i;
	return APPROVAL_NONE;
}

bool approval_pid_descends_from(pid_t pid, pid_t ancestor)
{
	for (int depth = 0; depth < 256; depth++) {
		char path[64], buf[512], *p;
		_cleanup_close_ int fd = -1;
		ssize_t n;
		long ppid;

		if (pid == ancestor)
			return true;
		if (pid <= 1)
			return false;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return true;
		n = read(fd, buf, sizeof(buf) - 1);
		if (n <= 0)
			return true;
		buf[n] = 0;
		p = strrchr(buf, ')'); /* the name may hold anything; the fields follow the last ')' */
		if (!p || sscanf(p + 1, " %*c %ld", &ppid) != 1)
			return true;
		pid = (pid_t) ppid;
	}
	return true;
}

void approval_new_id(const char *prefix, char out[32])
{
	static const char b62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	uint8_t b[24];
	size_t n = 0, pl = strlen(prefix) < 12 ? strlen(prefix) : 12;

	if (getrandom(b, sizeof(b), 0) != sizeof(b))
		for (size_t i = 0; i < sizeof(b); i++)
			b[i] = (uint8_t) (now_monotonic_ns() >> (i % 8));
	memcpy(out, prefix, pl);
	for (size_t i = 0; i < sizeof(b) && n < 16; i++)
		if (b[i] < 248) /* 248 = 4 * 62: no bias */
			out[pl + n++] = b62[b[i] % 62];
	while (n < 16)
		out[pl + n++] = '0';
	out[pl + n] = 0;
}

json_t *approval_read_json(int fd, size_t max, int timeout_ms)
{
	uint64_t deadline = timeout_ms < 0 ? UINT64_MAX : now_monotonic_ns() / 1000000 + (uint64_t) timeout_ms;
	char *buf = malloc(max + 1);
	size_t n = 0;
	json_t *j = NULL;

	if (!buf)
		return NULL;
	/* byte by byte up to the newline: what follows belongs to the next message */
	while (n < max) {
		uint64_t now = now_monotonic_ns() / 1000000;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t k;
		int r;

		if (now >= deadline)
			goto out;
		r = poll(&p, 1, deadline == UINT64_MAX ? -1 : (int) MIN(deadline - now, 60000u));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto out;
		if (r == 0)
			continue;
		k = read(fd, buf + n, 1);
		if (k < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			goto out;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = 0;
	j = json_loadb(buf, n, 0, NULL);
	if (!json_is_object(j)) {
		json_decref(j);
		j = NULL;
	}
out:
	free(buf);
	return j;
}

int approval_write_json(int fd, const json_t *j)
{
	char *text = json_dumps(j, JSON_COMPACT);
	int r;

	if (!text)
		return -ENOMEM;
	r = write_all(fd, text, strlen(text));
	if (r >= 0)
		r = write_all(fd, "\n", 1);
	free(text);
	return r < 0 ? r : 0;
}
