/* SPDX-License-Identifier: MIT */
/*
 * deny-syscalls NAME[,NAME…] -- CMD ARGS…
 *
 * Runs CMD under a seccomp filter that refuses the named syscalls with EPERM, as a container
 * runtime's default profile does (issue 19), so that the tests can run sbxtrace the way it runs
 * in `docker run` without Docker. Everything else is allowed. Two pseudo-names:
 *   docker      pidfd_getfd, kcmp, process_madvise and the namespace calls: Docker's default
 *               profile without CAP_SYS_PTRACE and CAP_SYS_ADMIN (moby/profiles
 *               seccomp/default.json);
 *   containerd  the same plus process_vm_readv and process_vm_writev (containerd's
 *               RuntimeDefault, which Kubernetes uses; and Docker's profile before 23.0,
 *               Debian 12's docker.io 20.10 included, which allowed them only with
 *               CAP_SYS_PTRACE: moby/moby#42083 came later);
 *   namespaces  unshare, setns, clone with any CLONE_NEW* flag (EPERM), clone3 (ENOSYS, as
 *               both profiles answer it without CAP_SYS_ADMIN).
 * The filter is inherited by CMD and everything it starts, sbxtrace's supervisor included.
 */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

/* the CLONE_NEW* bits Docker's profile checks (0x7e020000) */
static const unsigned long clone_ns_bits[] = {
	0x00020000, /* CLONE_NEWNS */
	0x02000000, /* CLONE_NEWCGROUP */
	0x04000000, /* CLONE_NEWUTS */
	0x08000000, /* CLONE_NEWIPC */
	0x10000000, /* CLONE_NEWUSER */
	0x20000000, /* CLONE_NEWPID */
	0x40000000, /* CLONE_NEWNET */
};

static int deny_name(scmp_filter_ctx ctx, const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);

	if (nr == __NR_SCMP_ERROR) {
		fprintf(stderr, "deny-syscalls: unknown syscall '%s'\n", name);
		return -EINVAL;
	}
	return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
}

static int deny_namespaces(scmp_filter_ctx ctx)
{
	int r;

	r = deny_name(ctx, "unshare");
	if (r >= 0)
		r = deny_name(ctx, "setns");
	for (size_t i = 0; r >= 0 && i < sizeof(clone_ns_bits) / sizeof(clone_ns_bits[0]); i++)
		r = seccomp_rule_add(
			ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
			SCMP_A0(SCMP_CMP_MASKED_EQ, clone_ns_bits[i], clone_ns_bits[i]));
	if (r >= 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	return r;
}

static int deny_list(scmp_filter_ctx ctx, const char *list)
{
	static const char *const docker[] = {"pidfd_getfd", "kcmp", "process_madvise", NULL};
	char *copy = strdup(list), *save = NULL;
	int r = 0;

	if (!copy)
		return -ENOMEM;
	for (char *n = strtok_r(copy, ",", &save); n && r >= 0; n = strtok_r(NULL, ",", &save)) {
		if (strcmp(n, "namespaces") == 0)
			r = deny_namespaces(ctx);
		else if (strcmp(n, "docker") == 0 || strcmp(n, "containerd") == 0) {
			for (size_t i = 0; docker[i] && r >= 0; i++)
				r = deny_name(ctx, docker[i]);
			if (r >= 0)
				r = deny_namespaces(ctx);
			if (r >= 0 && strcmp(n, "containerd") == 0) {
				r = deny_name(ctx, "process_vm_readv");
				if (r >= 0)
					r = deny_name(ctx, "process_vm_writev");
			}
		} else
			r = deny_name(ctx, n);
	}
	free(copy);
	return r;
}

int main(int argc, char *argv[])
{
	scmp_filter_ctx ctx;
	int r;

	if (argc < 4 || strcmp(argv[2], "--") != 0) {
		fprintf(stderr, "usage: deny-syscalls NAME[,NAME...] -- CMD [ARGS...]\n"
				"names: syscalls, or docker, containerd, namespaces\n");
		return 2;
	}
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return 125;
	/* duplicate rules for one syscall (docker,namespaces) are fine */
	r = deny_list(ctx, argv[1]);
	if (r < 0 && r != -EEXIST) {
		fprintf(stderr, "deny-syscalls: %s\n", strerror(-r));
		return 125;
	}
	/* a container runtime loads its filter with privileges; without them no_new_privs is
	 * needed, which sbxtrace sets for its command anyway */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		perror("deny-syscalls: PR_SET_NO_NEW_PRIVS");
		return 125;
	}
	r = seccomp_load(ctx);
	seccomp_release(ctx);
	if (r < 0) {
		fprintf(stderr, "deny-syscalls: seccomp_load: %s\n", strerror(-r));
		return 125;
	}
	execvp(argv[3], argv + 3);
	fprintf(stderr, "deny-syscalls: %s: %s\n", argv[3], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
