/* SPDX-License-Identifier: MIT */
/*
 * bench-fs: real file-system workloads natively and under `sbxtrace run` in the same run
 * (issue 4, "Benchmark"; docs/performance.md):
 *   startup  /bin/true, to see what one `sbxtrace run` costs by itself
 *   python   10 starts of python3 importing 30 stdlib modules (python preset)
 *   gcc      make -j2 of 30 generated C files and a link (standard preset)
 *   tar      extract 3000 small files from a tar, archive them again, remove (standard)
 *   git      git init, add and commit 300 files in 30 directories, then status and log
 *            (standard; status and log since issue 20's table)
 *   spawn    a shell starting /bin/true 300 times, one after the other (standard)
 * Each workload runs in its own scratch directory, which is the workspace (-w) inside and the
 * working directory natively; native and sandboxed runs alternate, after one warm-up of each,
 * and the median of --reps runs is printed with the ratio, for the emulated view and for the
 * view in the kernel (tracer.kernel_view = true, docs/filesystem.md). --syscalls runs each workload once
 * more with --trace and prints how many syscalls the supervisor handled, by name. --audit
 * adds a third run per repetition with `--audit FILE` (issue 7: the log's cost) and its
 * ratio to the sandboxed run without it.
 * Not a test: figures only.
 * --preset NAME runs every workload under NAME, and --set KEY=VALUE (up to 8) is passed to
 * every sandboxed run: the same workloads under a policy of one's own (docs/performance.md,
 * "Mounts nested in a tmp mount").
 * --prepare WORKLOAD DIR makes DIR (which must exist) ready for WORKLOAD, prints the workload's
 * shell script on stdout and exits (77 when the workload's tool is missing): how
 * bench/bench-table.py runs these workloads under sandboxes of its choosing.
 * Usage: bench-fs [--sbxtrace PATH] [--reps N] [--syscalls] [--audit] [--preset NAME]
 *                 [--set KEY=VALUE]… [WORKLOAD…]
 *        bench-fs --prepare WORKLOAD DIR
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REPS_MAX 50

static const char *sbxtrace = SBXTRACE_PATH;
/* --preset NAME for every workload, --set KEY=VALUE for every sandboxed run (a policy of the
 * user's: e.g. the workspace mounted below a tmp mount, issue 20) */
static const char *preset_override;
static const char *sets[8];
static size_t n_sets;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static int write_file(const char *dir, const char *name, const char *text)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -1;
}

static int sh(const char *cmd)
{
	int r = system(cmd);

	return r == 0 ? 0 : -1;
}

/* ---- preparation of each workload's directory (outside, once) ---- */

static int prepare_none(const char *dir)
{
	(void) dir;
	return 0;
}

static int prepare_gcc(const char *dir)
{
	char name[64], text[1024], objs[4096] = "";

	for (int i = 0; i < 30; i++) {
		snprintf(name, sizeof(name), "f%02d.c", i);
		/* enough code that the compiler, not only its startup, shows */
		snprintf(text, sizeof(text),
			 "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
			 "struct s%d { int a[16]; char name[32]; };\n"
			 "static int cmp%d(const void *a, const void *b) { return *(const int *) a "
			 "- "
			 "*(const int *) b; }\n"
			 "int f%d(int n) {\n\tstruct s%d s;\n\tmemset(&s, 0, sizeof(s));\n"
			 "\tfor (int i = 0; i < 16; i++) s.a[i] = (n * %d + i * 7) %% 101;\n"
			 "\tqsort(s.a, 16, sizeof(int), cmp%d);\n"
			 "\tsnprintf(s.name, sizeof(s.name), \"f%d-%%d\", s.a[0]);\n"
			 "\treturn (int) strlen(s.name) + s.a[15];\n}\n",
			 i, i, i, i, i + 3, i, i);
		if (write_file(dir, name, text) < 0)
			return -1;
		snprintf(objs + strlen(objs), sizeof(objs) - strlen(objs), " f%02d.o", i);
	}
	{
		char main_c[4096] = "#include <stdio.h>\n";

		for (int i = 0; i < 30; i++)
			snprintf(main_c + strlen(main_c), sizeof(main_c) - strlen(main_c),
				 "int f%d(int);\n", i);
		strcat(main_c, "int main(void) {\n\tint t = 0;\n");
		for (int i = 0; i < 30; i++)
			snprintf(main_c + strlen(main_c), sizeof(main_c) - strlen(main_c),
				 "\tt += f%d(%d);\n", i, i);
		strcat(main_c, "\tprintf(\"%d\\n\", t);\n\treturn 0;\n}\n");
		if (write_file(dir, "main.c", main_c) < 0)
			return -1;
	}
	snprintf(text, sizeof(text),
		 "CFLAGS = -O2\nOBJS = main.o%s\nprog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n"
		 "clean:\n\trm -f *.o prog\n",
		 objs);
	return write_file(dir, "Makefile", text);
}

/* 3000 files of 100-300 bytes in 30 directories, archived once as src.tar. */
static int prepare_tar(const char *dir)
{
	char cmd[PATH_MAX * 2 + 512];

	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && mkdir -p gen && cd gen && for d in $(seq 0 29); do mkdir d$d && "
		 "for f in $(seq 0 99); do head -c $((100 + (d * 100 + f) %% 200)) "
		 "/usr/share/common-licenses/GPL-3 > d$d/f$f.txt; done; done && "
		 "tar cf ../src.tar . && cd .. && rm -rf gen",
		 dir);
	return sh(cmd);
}

static int prepare_git(const char *dir)
{
	char cmd[PATH_MAX * 2 + 512];

	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && for d in $(seq 0 29); do mkdir -p src/d$d && for f in $(seq 0 9); "
		 "do head -c $((200 + (d * 10 + f) * 13 %% 2000)) /usr/share/common-licenses/GPL-3 "
		 "> src/d$d/f$f.txt; done; done",
		 dir);
	return sh(cmd);
}

typedef struct Workload {
	const char *name;
	const char *preset;
	const char *tool; /* skipped when missing */
	const char *script;
	int (*prepare)(const char *dir);
} Workload;

#define PY_IMPORTS                                                                                 \
	"import os, sys, re, json, collections, itertools, functools, pathlib, subprocess, "       \
	"tempfile, shutil, argparse, logging, datetime, decimal, fractions, hashlib, base64, "     \
	"csv, textwrap, typing, dataclasses, enum, unittest, email.parser, http.client, "          \
	"urllib.parse, xml.etree.ElementTree, sqlite3, asyncio"

static const Workload workloads[] = {
	{"startup", "standard", "/bin/true", "true", prepare_none},
	{"python", "python", "/usr/bin/python3",
	 "i=0; while [ $i -lt 10 ]; do python3 -c '" PY_IMPORTS "' || exit 1; i=$((i + 1)); done",
	 prepare_none},
	{"gcc", "standard", "/usr/bin/gcc", "make -s clean && make -s -j2 && ./prog > /dev/null",
	 prepare_gcc},
	{"tar", "standard", "/usr/bin/tar",
	 "rm -rf x && mkdir x && tar xf src.tar -C x && tar cf out.tar -C x . && rm -rf x out.tar",
	 prepare_tar},
	{"git", "standard", "/usr/bin/git",
	 "rm -rf .git && git init -q && git add -A && git -c user.name=b -c "
	 "user.email=b@example.com commit -qm bench && git status --short > /dev/null && "
	 "git log --oneline > /dev/null",
	 prepare_git},
	{"spawn", "standard", "/bin/true",
	 "i=0; while [ $i -lt 300 ]; do /bin/true || exit 1; i=$((i + 1)); done", prepare_none},
};

/* Runs the workload once in dir (natively, or inside with extra args); seconds, < 0 on error.
 * stderr goes to errpath. */
static double run_once(const Workload *w, const char *dir, bool inside, bool trace,
		       const char *errpath, const char *audit, bool kview)
{
	char home[PATH_MAX + 8], tmp[PATH_MAX + 8], cpus_override[48];
	long ncpu;
	char *env[] = {"PATH=/usr/local/bin:/usr/bin:/bin", home, tmp, "LC_ALL=C",
		       "PYTHONDONTWRITEBYTECODE=1",	    NULL};
	const char *argv[48];
	int n = 0, status;
	double t0, t;
	pid_t pid;

	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	snprintf(cpus_override, sizeof(cpus_override), "limits.cpus=%ld", ncpu > 0 ? ncpu : 1L);
	snprintf(home, sizeof(home), "HOME=%s", dir);
	snprintf(tmp, sizeof(tmp), "TMPDIR=%s", dir);
	if (inside) {
		argv[n++] = sbxtrace;
		argv[n++] = "run";
		argv[n++] = "-q";
		if (trace)
			argv[n++] = "--trace";
		if (audit) {
			argv[n++] = "--audit";
			argv[n++] = audit;
		}
		/* dir is also HOME, natively: since issue 21 a workspace that is the home
		 * directory needs saying so */
		argv[n++] = "--workspace-anywhere";
		argv[n++] = "-w";
		argv[n++] = dir;
		argv[n++] = "-s";
		argv[n++] = "limits.wall_time=600";
		argv[n++] = "-s";
		argv[n++] = "limits.cpu_time=600";
		/* the presets that cap CPUs (standard: 1) would compare one CPU inside with all
		 * of them natively; the bench measures interposition, not the cap */
		argv[n++] = "-s";
		argv[n++] = cpus_override;
		argv[n++] = "-s";
		argv[n++] = kview ? "tracer.kernel_view=true" : "tracer.kernel_view=false";
		for (size_t i = 0; i < n_sets; i++) {
			argv[n++] = "-s";
			argv[n++] = sets[i];
		}
		argv[n++] = preset_override ? preset_override : w->preset;
		argv[n++] = "--";
	}
	argv[n++] = "/bin/sh";
	argv[n++] = "-c";
	argv[n++] = w->script;
	argv[n] = NULL;

	t0 = now_s();
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		int err = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (null < 0 || err < 0 || chdir(dir) < 0 || dup2(null, 0) < 0 ||
		    dup2(null, 1) < 0 || dup2(err, 2) < 0)
			_exit(126);
		execve(argv[0], (char **) argv, env);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	t = now_s() - t0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char cmd[PATH_MAX + 32];

		fprintf(stderr, "%s %s failed (status %#x); its stderr:\n", w->name,
			inside ? "inside" : "natively", status);
		snprintf(cmd, sizeof(cmd), "tail -5 '%s' >&2", errpath);
		(void) !system(cmd);
		return -1;
	}
	return t;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;

	return x < y ? -1 : x > y;
}

/* Runs once with --trace and prints the handled syscalls by name, most frequent first. */
static void syscall_counts(const Workload *w, const char *dir, const char *errpath)
{
	struct {
		char name[32];
		long n;
	} tab[128];
	size_t ntab = 0;
	long total = 0;
	char line[8192];
	FILE *f;

	if (run_once(w, dir, true, true, errpath, NULL, false) < 0)
		return;
	f = fopen(errpath, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, name[32];
		size_t k = 0, i;

		if (*p == '#' || strncmp(p, "+++", 3) == 0)
			continue;
		if (*p == '[') { /* "[pid N] " */
			p = strchr(p, ']');
			if (!p)
				continue;
			p += 2;
		}
		while ((p[k] >= 'a' && p[k] <= 'z') || (p[k] >= '0' && p[k] <= '9') || p[k] == '_')
			k++;
		if (k == 0 || k >= sizeof(name) || p[k] != '(')
			continue;
		memcpy(name, p, k);
		name[k] = 0;
		total++;
		for (i = 0; i < ntab; i++)
			if (strcmp(tab[i].name, name) == 0)
				break;
		if (i == ntab) {
			if (ntab == sizeof(tab) / sizeof(tab[0]))
				continue;
			snprintf(tab[ntab].name, sizeof(tab[ntab].name), "%s", name);
			tab[ntab++].n = 0;
		}
		tab[i].n++;
	}
	fclose(f);
	/* selection sort: a handful of names */
	for (size_t i = 0; i < ntab; i++)
		for (size_t j = i + 1; j < ntab; j++)
			if (tab[j].n > tab[i].n) {
				__typeof__(tab[0]) t = tab[i];
				tab[i] = tab[j];
				tab[j] = t;
			}
	printf("  %s: %ld syscalls handled by the supervisor:", w->name, total);
	for (size_t i = 0; i < ntab && i < 10; i++)
		printf(" %s %ld%s", tab[i].name, tab[i].n, i + 1 < ntab && i < 9 ? "," : "");
	printf("\n");
}

/* --prepare WORKLOAD DIR: 0, 77 (tool missing) or 1 */
static int prepare_only(const char *name, const char *dir)
{
	for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++) {
		const Workload *w = &workloads[i];

		if (strcmp(w->name, name) != 0)
			continue;
		if (access(w->tool, X_OK) < 0) {
			fprintf(stderr, "%s: %s is missing\n", w->name, w->tool);
			return 77;
		}
		if (w->prepare(dir) < 0) {
			fprintf(stderr, "%s: preparing %s failed\n", w->name, dir);
			return 1;
		}
		printf("%s\n", w->script);
		return 0;
	}
	fprintf(stderr, "no workload '%s'\n", name);
	return 1;
}

int main(int argc, char *argv[])
{
	const char *t = getenv("TMPDIR");
	const char *only[16];
	size_t n_only = 0;
	bool counts = false, with_audit = false;
	int reps = 5, bad = 0;
	char base[PATH_MAX - 128];

	if (argc == 4 && strcmp(argv[1], "--prepare") == 0)
		return prepare_only(argv[2], argv[3]);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--sbxtrace") == 0 && i + 1 < argc)
			sbxtrace = argv[++i];
		else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (strcmp(argv[i], "--syscalls") == 0)
			counts = true;
		else if (strcmp(argv[i], "--audit") == 0)
			with_audit = true;
		else if (strcmp(argv[i], "--preset") == 0 && i + 1 < argc)
			preset_override = argv[++i];
		else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc && n_sets < 8)
			sets[n_sets++] = argv[++i];
		else if (argv[i][0] != '-' && n_only < 16)
			only[n_only++] = argv[i];
		else {
			fprintf(stderr,
				"usage: %s [--sbxtrace PATH] [--reps N] [--syscalls] [--audit] "
				"[--preset NAME] [--set KEY=VALUE]… [WORKLOAD…]\n",
				argv[0]);
			return 2;
		}
	}
	if (reps < 1 || reps > REPS_MAX)
		reps = 5;
	snprintf(base, sizeof(base), "%s/bench-fs-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 1;
	}
	printf("bench-fs: median of %d runs each (after one warm-up), seconds; \"emulated\": the "
	       "supervisor emulates every path-taking call, \"kernel\": tracer.kernel_view\n",
	       reps);
	printf("%-8s %10s %10s %7s %10s %7s", "workload", "native", "emulated", "ratio", "kernel",
	       "ratio");
	if (with_audit)
		printf(" %10s %7s", "+audit", "ratio");
	putchar('\n');
	for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++) {
		const Workload *w = &workloads[i];
		double nat[REPS_MAX], in[REPS_MAX], kv[REPS_MAX], au[REPS_MAX];
		char dir[PATH_MAX], errpath[PATH_MAX + 16], audit[PATH_MAX + 16];
		bool chosen = n_only == 0;

		for (size_t k = 0; k < n_only; k++)
			chosen |= strcmp(only[k], w->name) == 0;
		if (!chosen)
			continue;
		if (access(w->tool, X_OK) < 0) {
			printf("%-8s skipped: %s is missing\n", w->name, w->tool);
			continue;
		}
		snprintf(dir, sizeof(dir), "%s/%s", base, w->name);
		snprintf(errpath, sizeof(errpath), "%s/%s.err", base, w->name);
		snprintf(audit, sizeof(audit), "%s/%s.jsonl", base, w->name);
		if (mkdir(dir, 0755) < 0 || w->prepare(dir) < 0) {
			fprintf(stderr, "%s: preparing %s failed\n", w->name, dir);
			bad = 1;
			continue;
		}
		if (run_once(w, dir, false, false, errpath, NULL, false) < 0 ||
		    run_once(w, dir, true, false, errpath, NULL, false) < 0 ||
		    run_once(w, dir, true, false, errpath, NULL, true) < 0) {
			bad = 1;
			continue;
		}
		bool failed = false;
		for (int r = 0; r < reps && !failed; r++) {
			nat[r] = run_once(w, dir, false, false, errpath, NULL, false);
			in[r] = run_once(w, dir, true, false, errpath, NULL, false);
			kv[r] = run_once(w, dir, true, false, errpath, NULL, true);
			au[r] = with_audit ? run_once(w, dir, true, false, errpath, audit, false) : 1;
			failed = nat[r] < 0 || in[r] < 0 || kv[r] < 0 || au[r] < 0;
		}
		if (failed) {
			bad = 1;
			continue;
		}
		qsort(nat, (size_t) reps, sizeof(double), cmp_double);
		qsort(in, (size_t) reps, sizeof(double), cmp_double);
		qsort(kv, (size_t) reps, sizeof(double), cmp_double);
		qsort(au, (size_t) reps, sizeof(double), cmp_double);
		printf("%-8s %10.3f %10.3f %7.2f %10.3f %7.2f", w->name, nat[reps / 2], in[reps / 2],
		       in[reps / 2] / nat[reps / 2], kv[reps / 2], kv[reps / 2] / nat[reps / 2]);
		if (with_audit)
			printf(" %10.3f %7.2f", au[reps / 2], au[reps / 2] / in[reps / 2]);
		putchar('\n');
		fflush(stdout);
		if (counts)
			syscall_counts(w, dir, errpath);
	}
	{
		char cmd[PATH_MAX + 32];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
		(void) !system(cmd);
	}
	return bad;
}
