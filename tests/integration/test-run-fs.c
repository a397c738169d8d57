/* SPDX-License-Identifier: MIT */
/*
 * Real programs in the file-system view (issue 4): `sbxtrace run -w WS standard -- sh -c
 * SCRIPT` with the workspace mapped at /workspace, compared with the same script run
 * natively in another scratch directory (gVisor's native-vs-sandbox habit). One workload per
 * invocation (the argument): view, shell (also a FIFO opened by the shell and a background
 * writer: the blocking open runs on a worker), git, python, tar, make. A workload whose tools are
 * missing is skipped (77). A second argument "emulated" or "kernel" sets tracer.kernel_view
 * (false, true; without it: the default, "auto"); "kernel-view" checks what only the view in
 * the kernel has to get right (docs/filesystem.md "The view in the kernel").
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
#include <unistd.h>

#include "tests/helpers/sbx-namespaces.h"
#include "tests/helpers/sbx-test.h"

#define OUT_MAX 65536

static const char *const workloads[][3] = {
	/* name, required tool, script (relative paths only: runs inside and natively) */
	{"shell", "/usr/bin/sort",
	 "printf 'b\\na\\nc\\na\\n' > in.txt && sort in.txt | uniq | tr a-z A-Z > out.txt && "
	 "cat out.txt && wc -l < out.txt && mkdir -p d/e && cp out.txt d/e/ && ls -R d && "
	 "cd d && cat e/out.txt | head -1 && cd .. && mv d dd && find dd | sort && rm -r dd && "
	 "ln -s out.txt l && readlink l && cat l | wc -c && mkfifo p && "
	 "{ echo via-fifo > p & } && cat p && wait && rm p && ls"},
	{"git", "/usr/bin/git",
	 "git init -q . && git config user.email t@example.com && git config user.name t && "
	 "echo hi > f && mkdir sub && echo x > sub/g && git add f sub && git commit -qm first && "
	 "git log --format=%s && echo more >> f && git status --short && git commit -qam second "
	 "&& git log --format=%s && cd sub && git rev-parse --show-prefix && git status --short"},
	{"python", "/usr/bin/python3",
	 "python3 -c \"import os, json, shutil, tempfile\n"
	 "os.makedirs('a/b', exist_ok=True)\n"
	 "open('a/b/f.json', 'w').write(json.dumps({'k': [1, 2]}))\n"
	 "print(json.load(open('a/b/f.json')))\n"
	 "os.rename('a/b/f.json', 'a/g.json')\n"
	 "print(sorted(os.listdir('a')), os.path.exists('a/g.json'))\n"
	 "with tempfile.TemporaryDirectory(dir='.') as t: open(os.path.join(t, 'x'), "
	 "'w').write('x')\n"
	 "shutil.copytree('a', 'c'); print(sorted(os.walk('c'))[0][1:])\n"
	 "shutil.rmtree('c'); print(os.path.exists('c'), os.getcwd() == os.path.realpath('.'))\" "
	 "&& python3 -m venv --without-pip v && v/bin/python -c 'import sys, os; "
	 "print(os.path.basename(sys.prefix), sys.prefix != sys.base_prefix)' && "
	 "\"$PWD/v/bin/python\" -c 'import sys; print(sys.prefix == sys.base_prefix)'"},
	{"tar", "/usr/bin/tar",
	 "mkdir -p src/x && echo 1 > src/a && echo 2 > src/x/b && ln -s a src/l && "
	 "tar cf t.tar src && mkdir out && tar xf t.tar -C out && diff -r src out/src && "
	 "echo same && tar tf t.tar | sort && gzip -k t.tar && gunzip -c t.tar.gz | tar tf - | wc "
	 "-l"},
	{"make", "/usr/bin/gcc",
	 "printf 'int f(void);\\nint main(void) { return f() - 42; }\\n' > main.c && "
	 "printf 'int f(void) { return 42; }\\n' > f.c && "
	 "printf 'prog: main.o f.o\\n\\tgcc -o prog main.o f.o\\n%%.o: %%.c\\n\\tgcc -c -o $@ "
	 "$<\\n' "
	 "> Makefile && make -s -j2 && ./prog && echo built && ls *.o | sort && make -s && echo "
	 "up-to-date"},
};

/* A workspace, removed at exit if a check returns before its rm_rf(); the caller frees the
 * copy it gets (the list of sbx-scratch.h keeps its own). */
static char *mktmp(void)
{
	char *d = sbx_scratch_dir("sbxfsint");

	return d ? strdup(d) : NULL;
}

/* Runs argv with cwd and env; stdout+stderr into out. Returns the exit code. */
static int run(const char *cwd, char *const argv[], char *const envp[], char *out)
{
	int p[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		if (chdir(cwd) < 0)
			_exit(99);
		execve(argv[0], argv, envp);
		_exit(99);
	}
	close(p[1]);
	while (len + 1 < OUT_MAX && (n = read(p[0], out + len, OUT_MAX - 1 - len)) > 0)
		len += (size_t) n;
	out[len] = 0;
	close(p[0]);
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void rm_rf(const char *p)
{
	char cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", p);
	(void) !system(cmd);
}

/* `sbxtrace run -s set -w ws standard -- /bin/sh -c script` in ws with envp: the exit code;
 * stdout+stderr into out. */
static int run_standard(const char *sbxtrace, const char *set, char *ws, const char *script,
			char *const envp[], char *out)
{
	char *argv[] = {(char *) sbxtrace,
			"run",
			"-s",
			(char *) set,
			"-w",
			ws,
			"standard",
			"--",
			"/bin/sh",
			"-c",
			(char *) script,
			NULL};

	return run(ws, argv, envp, out);
}

/* ls / shows the mounts only, the workspace reads, /etc/shadow does not exist, and the
 * loader's cache is the host's (the view shows /usr and /lib as the host has them) less the
 * libraries the view does not show. */
static const char *view_mode = "tracer.kernel_view=auto";

static int view(const char *sbxtrace)
{
	char *ws = mktmp(), *out = malloc(OUT_MAX), p[PATH_MAX + 16];
	static const char script[] =
		"ls /; cat /workspace/x; cat /etc/shadow 2>&1 || echo no-shadow; "
		"ls /etc; cat /workspace/../workspace/x; "
		"echo ld-cache $(wc -c < /etc/ld.so.cache); "
		"if (echo x >> /etc/ld.so.cache) 2>/dev/null; then echo ld-cache-writable; fi; "
		/* every library the copy names is in the view (the host's cache also
		 * names /lib32, which standard does not show) */
		"/usr/sbin/ldconfig -p -C /etc/ld.so.cache | sed -n 's/.* => //p' | "
		"while read p; do [ -e \"$p\" ] || [ -L \"$p\" ] || echo hidden-in-cache "
		"$p; done";
	char *envp[] = {"PATH=/usr/bin:/bin", NULL};
	const char *allowed = " bin dev etc lib lib64 tmp usr workspace ";
	int code, bad = 0;
	char *line, *save = NULL, *copy;

	snprintf(p, sizeof(p), "%s/x", ws);
	FILE *f = fopen(p, "w");
	fputs("content-of-x\n", f);
	fclose(f);
	code = run_standard(sbxtrace, view_mode, ws, script, envp, out);
	if (code != 0) {
		fprintf(stderr, "exit code %d\n%s", code, out);
		bad = 1;
	}
	if (!strstr(out, "content-of-x\ncat: /etc/shadow: No such file or directory\nno-shadow")) {
		fprintf(stderr, "the workspace or /etc/shadow are not as expected:\n%s", out);
		bad = 1;
	}
	copy = strdup(out); /* strtok_r below cuts out */
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char w[64];

		if (strcmp(line, "content-of-x") == 0)
			break;
		snprintf(w, sizeof(w), " %s ", line);
		if (!strstr(allowed, w)) {
			fprintf(stderr, "ls / shows '%s'\n", line);
			bad = 1;
		}
	}
	if (strstr(copy, "ld-cache-writable")) {
		fprintf(stderr, "the program could write the skeleton's /etc/ld.so.cache\n");
		bad = 1;
	}
	if (strstr(copy, "hidden-in-cache")) {
		fprintf(stderr, "the loader's cache names what the view hides:\n%s", copy);
		bad = 1;
	}
	{
		struct stat st;
		char want[64];

		/* the copy has the host's size (none on a host without one) */
		if (stat("/etc/ld.so.cache", &st) == 0 && S_ISREG(st.st_mode)) {
			snprintf(want, sizeof(want), "ld-cache %lld\n", (long long) st.st_size);
			if (!strstr(copy, want)) {
				fprintf(stderr, "no '%s' in:\n%s", want, copy);
				bad = 1;
			}
		}
	}
	free(copy);
	rm_rf(ws);
	return bad;
}

/*
 * The view in the kernel: standard with tracer.kernel_view = true (the run fails when the
 * namespaces cannot be made, rather than emulating). No /proc; the runtime read-only; the
 * workspace writes reach the host; the program keeps its uid; /dev/null works; and a relative
 * AF_UNIX address (notified: the supervisor reads the caller's cwd from outside its mount
 * namespace) names the socket in the program's working directory.
 */
static int kernel_view(const char *sbxtrace)
{
	static const char script[] =
		"test -e /proc || echo no-proc; "
		"touch /usr/kv-probe 2>/dev/null || echo usr-read-only; "
		"echo written > /workspace/kv-file; "
		"echo uid=$(id -u); "
		"echo null > /dev/null && echo dev-null; "
		"mkdir -p /workspace/sub && cd /workspace/sub && "
		"python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.bind(\"sock\"); "
		"s.listen(); c = socket.socket(socket.AF_UNIX); c.connect(\"sock\"); "
		"print(\"unix-relative\")'";
	char *ws = mktmp(), *out = malloc(OUT_MAX), p[PATH_MAX + 16], want[64];
	char *envp[] = {"PATH=/usr/bin:/bin", NULL};
	const char *expect[] = {"no-proc\n", "usr-read-only\n", want, "dev-null\n",
				"unix-relative\n"};
	struct stat st;
	int code, bad = 0;

	if (access("/usr/bin/python3", X_OK) < 0) {
		fprintf(stderr, "skip: python3 is not installed\n");
		return 77;
	}
	if (sbx_namespaces_refused()) {
		fprintf(stderr, "skip: the view in the kernel needs namespaces: %s\n",
			sbx_namespaces_refused());
		return 77;
	}
	snprintf(want, sizeof(want), "uid=%u\n", (unsigned) getuid());
	code = run_standard(sbxtrace, "tracer.kernel_view=true", ws, script, envp, out);
	if (code != 0) {
		fprintf(stderr, "exit code %d\n%s", code, out);
		bad = 1;
	}
	for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++)
		if (!strstr(out, expect[i])) {
			fprintf(stderr, "no '%.*s' in:\n%s", (int) strcspn(expect[i], "\n"),
				expect[i], out);
			bad = 1;
		}
	snprintf(p, sizeof(p), "%s/kv-file", ws);
	if (stat(p, &st) < 0 || st.st_size != 8 || st.st_uid != getuid()) {
		fprintf(stderr, "the workspace file did not reach the host as the user's\n");
		bad = 1;
	}
	snprintf(p, sizeof(p), "%s/sub/sock", ws);
	if (stat(p, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		fprintf(stderr, "the relative AF_UNIX bind did not make %s\n", p);
		bad = 1;
	}
	if (access("/usr/kv-probe", F_OK) == 0) {
		fprintf(stderr, "the program wrote /usr/kv-probe on the host\n");
		(void) unlink("/usr/kv-probe");
		bad = 1;
	}
	/* A mount whose source holds the host's /proc: the bind would bring in its magic
	 * links, so kernel_view = true refuses the policy, and auto falls back to the emulated
	 * view, which makes that procfs a proc mount of its own (no pid 1: it is not ours). */
	{
		char pol[PATH_MAX + 16];
		FILE *f;

		snprintf(pol, sizeof(pol), "%s/host.toml", ws);
		f = fopen(pol, "we");
		if (!f)
			return 1;
		fputs("[sandbox]\nname = \"host\"\n", f);
		for (const char *const *m = (const char *const[]){"/usr", "/lib", "/bin", NULL}; *m;
		     m++)
			fprintf(f, "[[mount]]\npath = \"%s\"\nmode = \"ro\"\n", *m);
		fputs("[[mount]]\npath = \"/lib64\"\nmode = \"ro\"\noptional = true\n"
		      "[[mount]]\npath = \"/host\"\nsource = \"/\"\nmode = \"ro\"\n",
		      f);
		fclose(f);
		char mode[] = "tracer.kernel_view=true";
		char *hv[] = {(char *) sbxtrace,
			      "run",
			      "-s",
			      mode,
			      pol,
			      "--",
			      "/bin/sh",
			      "-c",
			      "if test -e /host/proc/1/exe; then echo host-proc-seen; fi",
			      NULL};

		code = run(ws, hv, envp, out);
		if (code != 125 || !strstr(out, "procfs lies below")) {
			fprintf(stderr, "a source holding /proc: exit %d, output:\n%s", code, out);
			bad = 1;
		}
		snprintf(mode, sizeof(mode), "tracer.kernel_view=auto");
		code = run(ws, hv, envp, out);
		if (code != 0 || strstr(out, "host-proc-seen")) {
			fprintf(stderr, "auto with a source holding /proc: exit %d, output:\n%s",
				code, out);
			bad = 1;
		}
	}
	free(out);
	rm_rf(ws);
	free(ws);
	return bad;
}

/*
 * A kernel view planned but not entered ("auto", stdin a directory: C refuses before its
 * namespaces) runs emulated, and shows a mount nested in the tmp mount as the emulated view
 * does: its missing ancestor /tmp/nest is a read-only skeleton directory. S makes the mount
 * points in the tmp directory early for the kernel view (tracer_kview_make_points()) and
 * must take them back here, or /tmp/nest would be a real, writable directory.
 */
static int kernel_view_fallback(const char *sbxtrace)
{
	char *ws = mktmp(), *out = malloc(OUT_MAX);
	char *envp[] = {"PATH=/usr/bin:/bin", NULL};
	char *argv[] = {
		(char *) sbxtrace,
		"run",
		"-s",
		"tracer.kernel_view=auto",
		"-s",
		"mount=[{path = \"/tmp/nest/ws\", source = \"${WORKSPACE}\", mode = \"rw\"}]",
		"--json",
		"-w",
		ws,
		"standard",
		"--",
		"/bin/sh",
		"-c",
		"test -d /tmp/nest/ws && echo nest-there; "
		"mkdir /tmp/nest/other 2>/dev/null && echo nest-writable; ls /tmp/nest",
		NULL};
	int code, bad = 0, saved, dir;

	if (!ws || !out)
		return 1;
	if (sbx_namespaces_refused()) {
		fprintf(stderr, "skip: the view in the kernel needs namespaces: %s\n",
			sbx_namespaces_refused());
		return 77;
	}
	saved = dup(0);
	dir = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (saved < 0 || dir < 0 || dup2(dir, 0) < 0)
		return 1;
	code = run(ws, argv, envp, out);
	(void) dup2(saved, 0);
	close(saved);
	close(dir);
	if (code != 0 || !strstr(out, "nest-there") || !strstr(out, "could not be made here")) {
		fprintf(stderr, "the fallback run: exit %d, output:\n%s", code, out);
		bad = 1;
	}
	if (strstr(out, "nest-writable")) {
		fprintf(stderr, "/tmp/nest was writable in the emulated fallback:\n%s", out);
		bad = 1;
	}
	free(out);
	rm_rf(ws);
	free(ws);
	return bad;
}

/*
 * The run's scratch directories: the skeleton and the tmp mount's directory (standard mounts
 * /tmp as tmp), made in $XDG_RUNTIME_DIR, are gone once sbxtrace has exited, in the view of
 * view_mode; the keeper removes them after S exits, so this waits up to 10 s for it.
 */
static int scratch(const char *sbxtrace)
{
	char *ws = mktmp(), *rt = mktmp(), *out = malloc(OUT_MAX), env_rt[PATH_MAX + 32];
	char *envp[] = {"PATH=/usr/bin:/bin", env_rt, NULL};
	int code, bad = 0;

	snprintf(env_rt, sizeof(env_rt), "XDG_RUNTIME_DIR=%s", rt);
	code = run_standard(sbxtrace, view_mode, ws,
			    "mkdir -p /tmp/a/b && echo data > /tmp/a/b/f && ls /tmp/a/b && exit 3",
			    envp, out);
	if (code != 3 || !strstr(out, "f\n")) {
		fprintf(stderr, "exit code %d, output:\n%s", code, out);
		bad = 1;
	}
	if (!sbx_dir_empties(rt, 10000)) {
		fprintf(stderr, "the run's scratch directories were not removed\n");
		bad = 1;
	}
	free(out);
	rm_rf(ws);
	rm_rf(rt);
	free(ws);
	free(rt);
	return bad;
}

int main(int argc, char *argv[])
{
	const char *sbxtrace = getenv("SBXTRACE"), *name = argc > 1 ? argv[1] : "";
	char *in_ws, *nat_ws, *in_out, *nat_out, home[PATH_MAX + 8];
	int in_code, nat_code, bad = 0;

	if (!sbxtrace || !*sbxtrace) {
		fprintf(stderr, "skip: SBXTRACE is not set (run through meson test)\n");
		return 77;
	}
	if (argc > 2)
		view_mode = strcmp(argv[2], "kernel") == 0 ? "tracer.kernel_view=true"
			    : strcmp(argv[2], "auto") == 0 ? "tracer.kernel_view=auto"
							   : "tracer.kernel_view=false";
	if (strcmp(name, "view") == 0)
		return view(sbxtrace);
	if (strcmp(name, "kernel-view") == 0)
		return kernel_view(sbxtrace);
	if (strcmp(name, "kernel-view-fallback") == 0)
		return kernel_view_fallback(sbxtrace);
	if (strcmp(name, "scratch") == 0)
		return scratch(sbxtrace);
	for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++) {
		char script[4096];

		if (strcmp(workloads[i][0], name) != 0)
			continue;
		if (access(workloads[i][1], X_OK) < 0 ||
		    (strcmp(name, "make") == 0 && access("/usr/bin/make", X_OK) < 0)) {
			fprintf(stderr, "skip: %s is not installed\n", workloads[i][1]);
			return 77;
		}
		snprintf(script, sizeof(script), "export LC_ALL=C; %s", workloads[i][2]);
		in_ws = mktmp();
		nat_ws = mktmp();
		in_out = malloc(OUT_MAX);
		nat_out = malloc(OUT_MAX);
		{
			char *e[] = {"PATH=/usr/bin:/bin", NULL};

			in_code = run_standard(sbxtrace, view_mode, in_ws, script, e, in_out);
		}
		{
			char *a[] = {"/bin/sh", "-c", script, NULL};
			char tmp[PATH_MAX + 8];

			snprintf(home, sizeof(home), "HOME=%s", nat_ws);
			snprintf(tmp, sizeof(tmp), "TMPDIR=%s", nat_ws);
			char *e[] = {"PATH=/usr/local/bin:/usr/bin:/bin", home, tmp, NULL};

			nat_code = run(nat_ws, a, e, nat_out);
		}
		if (in_code != nat_code || strcmp(in_out, nat_out) != 0) {
			fprintf(stderr, "inside (exit %d):\n%s\nnative (exit %d):\n%s\n", in_code,
				in_out, nat_code, nat_out);
			bad = 1;
		}
		if (nat_code != 0) {
			fprintf(stderr, "the workload fails natively\n");
			bad = 1;
		}
		rm_rf(in_ws);
		rm_rf(nat_ws);
		return bad;
	}
	fprintf(stderr, "unknown workload '%s'\n", name);
	return 1;
}
