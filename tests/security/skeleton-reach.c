/* SPDX-License-Identifier: MIT */
/*
 * The skeleton root (the empty directories of `/` and the made-per-run /etc files) lives in a
 * private directory of the host: $XDG_RUNTIME_DIR, /dev/shm, $TMPDIR, /tmp or /var/tmp. A
 * policy that also mounts one of those read-write would let the program reach its own
 * skeleton through that mount and add to its own root, which the view says is read-only.
 * The view must put the skeleton where no mount shows it. The program runs itself inside
 * `sbxtrace run` with /dev/shm and $TMPDIR (or /tmp) mounted read-write, XDG_RUNTIME_DIR
 * unset, looks for its own skeleton under both (recognised by a mount point named after its
 * pid) and tries to create a file in it.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "tests/helpers/sbx-test.h"

static int probe(const char *marker)
{
	static const char *const bases[] = {"/hostshm", "/hosttmp"};
	char path[4096], inj[64];
	int found = 0, bad = 0;

	snprintf(inj, sizeof(inj), "INJECTED-%d", (int) getpid());
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		DIR *d = opendir(bases[i]);
		struct dirent *e;

		if (!d)
			continue;
		while ((e = readdir(d))) {
			struct stat st;
			int fd;

			if (strncmp(e->d_name, "sbxtrace-", 9) != 0)
				continue;
			/* only our own skeleton: its root has our unique mount point */
			snprintf(path, sizeof(path), "%s/%s/root/%s", bases[i], e->d_name, marker);
			if (stat(path, &st) < 0)
				continue;
			found++;
			printf("FAIL: our skeleton is visible at %s/%s\n", bases[i], e->d_name);
			bad = 1;
			snprintf(path, sizeof(path), "%s/%s/root/%s", bases[i], e->d_name, inj);
			fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
			if (fd >= 0)
				close(fd);
		}
		closedir(d);
	}
	snprintf(path, sizeof(path), "/%s", inj);
	if (access(path, F_OK) == 0) {
		printf("FAIL: the program added %s to its own root\n", path);
		bad = 1;
	}
	printf("%d skeleton(s) of ours seen through the mounts\n", found);
	return bad;
}

int main(int argc, char *argv[])
{
	const char *sbxtrace = sbx_env("SBXTRACE"), *tmp = getenv("TMPDIR");
	char self[4096], selfdir[4096], policy[4200], marker[64], rm[4300], tmpenv[4200];
	struct stat st;
	char *dir, *slash;
	FILE *f;
	int code;

	if (argc == 3 && strcmp(argv[1], "probe") == 0)
		return probe(argv[2]);
	if (!sbx_self_exe(self, sizeof(self)))
		return 1;
	snprintf(selfdir, sizeof(selfdir), "%s", self);
	slash = strrchr(selfdir, '/');
	if (!slash)
		return 1;
	*slash = 0;
	if (!tmp || !*tmp)
		tmp = "/tmp";
	dir = sbx_tmpdir();
	if (!dir)
		return 1;
	snprintf(marker, sizeof(marker), "sbx-skeleton-marker-%d", (int) getpid());
	snprintf(policy, sizeof(policy), "%s.toml", dir);
	f = fopen(policy, "we");
	if (!f)
		return 1;
	fprintf(f, "[process]\nenv = { keep = [\"*\"] }\ncwd = \"/%s\"\n\n", marker);
	for (const char *const *m = (const char *const[]){"/usr", "/bin", "/lib", "/lib64", NULL};
	     *m; m++)
		if (stat(*m, &st) == 0)
			fprintf(f, "[[mount]]\npath = \"%s\"\nmode = \"ro\"\n\n", *m);
	fprintf(f, "[[mount]]\npath = \"%s\"\nmode = \"ro\"\n\n", selfdir);
	fprintf(f, "[[mount]]\npath = \"/%s\"\nsource = \"%s\"\nmode = \"rw\"\n\n", marker, dir);
	fprintf(f, "[[mount]]\npath = \"/hosttmp\"\nsource = \"%s\"\nmode = \"rw\"\n\n", tmp);
	if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode))
		fprintf(f,
			"[[mount]]\npath = \"/hostshm\"\nsource = \"/dev/shm\"\nmode = \"rw\"\n");
	fclose(f);
	/* the candidates in a known order: no XDG_RUNTIME_DIR, TMPDIR as the test has it */
	(void) unsetenv("XDG_RUNTIME_DIR");
	snprintf(tmpenv, sizeof(tmpenv), "%s", tmp);
	(void) setenv("TMPDIR", tmpenv, 1);
	{
		const char *args[] = {sbxtrace, "run", policy, "--", self, "probe", marker, NULL};

		code = sbx_run_argv(args, NULL);
	}
	snprintf(rm, sizeof(rm), "rm -rf '%s' '%s'", dir, policy);
	(void) !system(rm);
	printf("sbxtrace exited %d (want 0)\n", code);
	return code == 0 ? 0 : 1;
}
