/* SPDX-License-Identifier: MIT */
/*
 * Limits above what this host has are policy errors (docs/budgets.md): a memory budget
 * above the host's RAM and swap can never be reached, a tasks budget above pid_max or
 * threads-max promises what the kernel refuses anyway, open_files above fs.nr_open cannot
 * be set as RLIMIT_NOFILE, and cpus above the CPUs present cannot be honoured. The static
 * maxima in internal.h catch typos; these catch policies written for a bigger machine.
 */
#include "policy/internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/util.h"

static uint64_t read_u64_file(const char *path)
{
	char buf[64] = "";
	FILE *f = fopen(path, "re");
	uint64_t v = 0;

	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f))
		v = strtoull(buf, NULL, 10);
	fclose(f);
	return v;
}

/* MemTotal + SwapTotal in bytes, 0 if unknown. */
static uint64_t host_memory(void)
{
	char line[256];
	uint64_t total = 0, kib;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if ((sscanf(line, "MemTotal: %" SCNu64 " kB", &kib) == 1 ||
		     sscanf(line, "SwapTotal: %" SCNu64 " kB", &kib) == 1))
			total += kib * 1024;
	fclose(f);
	return total;
}

const char *policy_host_limit_reason(const char *name, uint64_t val, char *buf, size_t size)
{
	uint64_t host = 0;
	char hb[32];

	if (streq(name, "memory")) {
		host = host_memory();
		if (host && val > host) {
			snprintf(hb, sizeof(hb), "%.1fGiB", (double) host / (1 << 30));
			snprintf(buf, size, "above this host's memory (RAM and swap: %s)", hb);
			return buf;
		}
	} else if (streq(name, "tasks")) {
		uint64_t pid_max = read_u64_file("/proc/sys/kernel/pid_max");
		uint64_t threads_max = read_u64_file("/proc/sys/kernel/threads-max");

		host = pid_max && threads_max ? MIN(pid_max, threads_max)
					      : MAX(pid_max, threads_max);
		if (host && val > host) {
			snprintf(buf, size, "above what this host allows (%s: %llu)",
				 host == pid_max ? "kernel.pid_max" : "kernel.threads-max",
				 (unsigned long long) host);
			return buf;
		}
	} else if (streq(name, "open_files")) {
		host = read_u64_file("/proc/sys/fs/nr_open");
		if (host && val > host) {
			snprintf(buf, size, "above what this host allows (fs.nr_open: %llu)",
				 (unsigned long long) host);
			return buf;
		}
	} else if (streq(name, "cpus")) {
		long n = sysconf(_SC_NPROCESSORS_CONF);

		if (n > 0 && val > (uint64_t) n) {
			snprintf(buf, size, "above this host's %ld CPUs", n);
			return buf;
		}
	}
	return NULL;
}
