/* SPDX-License-Identifier: MIT */
/*
 * sbxtrace check [-w DIR] [-s KEY=VALUE]… POLICY: validates a policy and prints the effective
 * policy (presets merged, variables expanded, overrides applied) as TOML that itself passes
 * check. Exit status 0 when valid, 1 otherwise (also for usage errors).
 * sbxtrace check --syscalls: prints the syscall table as docs/syscalls.md.
 */
#include "cli/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/macros.h"
#include "syscalls/syscalls.h"
#include "tracer/tracer.h"

static void help(FILE *f)
{
	fputs("Usage: sbxtrace check [OPTIONS] POLICY\n"
	      "       sbxtrace check --syscalls\n"
	      "\n"
	      "Validate POLICY (a .toml file or a preset name) and print the effective policy\n"
	      "as TOML: presets merged, ${VARIABLES} expanded, overrides applied. With\n"
	      "--syscalls, print what the sandbox does with each syscall instead (Markdown).\n"
	      "\n"
	      "Options:\n"
	      "  -w, --workspace DIR    the directory ${WORKSPACE} stands for (default: the\n"
	      "                         current directory)\n"
	      "      --workspace-anywhere  allow /, the home directory or a system directory\n"
	      "                         as the workspace\n"
	      "  -s, --set KEY=VALUE    override one setting, e.g. -s limits.wall_time=5s\n"
	      "  -q, --quiet            validate only, print nothing on success\n"
	      "      --syscalls         print the syscall table (docs/syscalls.md) and exit\n"
	      "  -h, --help             show this help\n"
	      "\n"
	      "Examples:\n"
	      "  sbxtrace check standard                  # what the preset allows, in full\n"
	      "  sbxtrace check -q ./agent.toml && echo valid\n"
	      "  sbxtrace check -s network.mode=loopback standard > mine.toml  # a start for "
	      "your own\n"
	      "\n"
	      "Exit status: 0 valid, 1 invalid (the error names file:line:column and the key).\n"
	      "See sbxtrace-policy(5).\n",
	      f);
}

/* What the supervisor cannot enforce with this policy, said plainly (DESIGN: ptrace). */
static void notes(const Policy *p, bool quiet)
{
	bool translated = false;
	TracerFeatures f;

	/* Landlock is the second layer under the file-system view (docs/filesystem.md) */
	tracer_probe_features(&f);
	if (p->landlock == TRI_OFF)
		log_warn("tracer.landlock = false: no Landlock layer; the supervisor alone "
			 "enforces the file-system view");
	else if (f.landlock_abi < 1)
		log_warn("this kernel has no Landlock: the supervisor alone enforces the "
			 "file-system view");
	else if (!quiet)
		log_info("Landlock ABI %d: file-system rules from the mounts are in effect%s",
			 f.landlock_abi,
			 f.landlock_abi >= 6 ? ", with signal and abstract-socket scopes" : "");

	/* tracer.kernel_view (docs/filesystem.md "The view in the kernel"): the decision `run`
	 * makes, on the view `run` would build */
	{
		static const char *const views[] = {
			"emulated by the supervisor",
			"in the kernel (a user and mount namespace)",
			"in the kernel (a user, mount and pid namespace)",
		};
		char why[256] = "";
		int k = tracer_kview_verdict(p, why, sizeof(why));

		if (k < 0)
			log_warn("file-system view: %s: `run` will fail", why);
		else if (k == 0 && p->kernel_view == TRI_ON)
			log_warn("tracer.kernel_view = true, but %s: `run` will refuse to start",
				 why);
		else if (k > 0 && !f.userns && p->kernel_view == TRI_ON)
			log_warn("tracer.kernel_view = true, but this host does not let this user "
				 "make user namespaces: `run` will refuse to start");
		else if (k > 0 && !f.userns && !quiet)
			log_info("file-system view: emulated by the supervisor (this host does not "
				 "let this user make user namespaces)");
		else if (!quiet)
			log_info("file-system view: %s", views[k > 1 ? 2 : k]);
		if (k == 0 && !quiet)
			log_info("  (not in the kernel: %s)", why);
		/* the emulated view's opens (emulation/fs-open.c "Opens the kernel makes"), as
		 * `run --json` reports them ("file_opens") */
		if (k >= 0 && (k == 0 || !f.userns) && !quiet) {
			const char *owhy = tracer_opens_verdict(p, f.landlock_abi);

			if (owhy)
				log_info("file opens: by the supervisor (%s)", owhy);
			else
				log_info(
					"file opens: checked by the supervisor, made by the kernel "
					"(Landlock holds exactly the view)");
		}
		if (k > 0 && f.userns && !quiet)
			log_info("  (`run --audit` or `--trace` emulate it: they see file-system "
				 "calls only there)");
		/* the tracer's stop after each exec (tracer_ptrace_exec_why, as `run` asks it:
		 * its --json "layers" "exec_events") */
		if (k >= 0 && tracer_fs_needs_ptrace(p) && !quiet) {
			bool emulated = !(k > 0 && f.userns);
			const char *ewhy = tracer_ptrace_exec_why(p, !emulated);

			/* the emulated view exec by exec (tracer/ptrace.c, exec_event_needed) */
			if (ewhy && emulated && !tracer_ptrace_exec_why(p, true) &&
			    !tracer_opens_verdict(p, f.landlock_abi))
				log_info(
					"ptrace: each exec stops the tracer after it ran where the "
					"tracer rewrote its path (elsewhere Landlock holds exactly "
					"the view)");
			else if (ewhy)
				log_info("ptrace: each exec stops the tracer after it ran (%s)",
					 ewhy);
			else
				log_info("ptrace: execs do not stop the tracer (exec runs in the "
					 "kernel, in the view)");
		}
	}

	/* network.unshare (docs/network.md "Network namespace") */
	if (p->network.mode == NET_MODE_NONE && p->network.unshare_netns != 0) {
		if (f.netns && !quiet)
			log_info("network namespace: the command gets a private, empty one "
				 "(network.unshare = %s)",
				 p->network.unshare_netns > 0 ? "true" : "\"auto\"");
		else if (!f.netns && p->network.unshare_netns > 0)
			log_warn("network.unshare = true, but this host cannot make a network "
				 "namespace (user namespaces off?): `run` will refuse to start");
		else if (!f.netns)
			log_warn(
				"network.unshare = \"auto\": this host cannot make a network "
				"namespace, the command shares the host's (mode none still holds)");
	} else if (p->network.mode == NET_MODE_LOOPBACK && p->network.unshare_netns > 0) {
		if (!f.netns)
			log_warn("network.unshare = true, but this host cannot make a network "
				 "namespace (user namespaces off?): `run` will refuse to start");
		else if (!quiet)
			log_info(
				"network namespace: the command gets one of its own with lo up; it "
				"reaches its own listeners, not the host's loopback "
				"(network.unshare = true)");
	} else if (p->network.unshare_netns < 0 && !quiet) {
		log_info("network.unshare = \"auto\" has no effect with mode \"%s\"",
			 net_mode_to_string(p->network.mode));
	}

	/* where connect, bind and the sends are decided: the choice `run` makes with the
	 * same function (its --json "network_calls"); the kernel view is the other half */
	if (p->network.mode == NET_MODE_LOOPBACK && p->network.unshare_netns > 0 && !quiet) {
		const char *why = tracer_filter_net_why(p);
		char kwhy[256] = "";

		if (!why && tracer_kview_verdict(p, kwhy, sizeof(kwhy)) <= 0)
			log_info("network calls: decided by the supervisor (the view is emulated: "
				 "%.200s)",
				 kwhy);
		else if (!why && !f.userns)
			log_info("network calls: decided by the supervisor (the view is emulated: "
				 "this host does not let this user make user namespaces)");
		else if (!why)
			log_info("network calls: connect, bind, listen and the sends run in the "
				 "kernel, in the namespace (`run --audit` or `--trace` emulate the "
				 "view, and keep them notified)");
		else
			log_info("network calls: decided by the supervisor (%s)", why);
	}

	/* mode full: connect and the sends in the kernel view without a namespace */
	if (p->network.mode == NET_MODE_FULL && !quiet) {
		const char *why = tracer_filter_net_full_why(p, f.landlock_abi);
		char kwhy[256] = "";

		if (!why && (tracer_kview_verdict(p, kwhy, sizeof(kwhy)) <= 0 || !f.userns))
			log_info("network calls: decided by the supervisor (the view is emulated)");
		else if (!why)
			log_info("network calls: connect and the sends run in the kernel, bind and "
				 "listen are decided by the supervisor (abstract unix names)");
		else
			log_info("network calls: decided by the supervisor (%s)", why);
	}

	if (p->audit.backtrace != AUDIT_SELECT_NONE && !p->audit.log && !quiet)
		log_info("audit.backtrace: backtraces go into the audit log; without [audit] log, "
			 "give `run --audit FILE`");

	for (size_t i = 0; i < p->n_mounts; i++)
		if (p->mounts[i].mode == MOUNT_TMP ||
		    (p->mounts[i].source && strcmp(p->mounts[i].source, p->mounts[i].path) != 0))
			translated = true;
	if (p->ptrace != PTRACE_MODE_NEVER)
		return;
	if (p->exec_allow || p->exec_deny)
		log_warn("tracer.ptrace = \"never\": exec checks cannot verify after exec "
			 "that the program checked is the one that runs");
	if (translated)
		log_warn("tracer.ptrace = \"never\": programs and directories under mounts "
			 "whose source differs from their path cannot be executed or entered with "
			 "chdir");
	if (p->audit.backtrace != AUDIT_SELECT_NONE)
		log_warn("tracer.ptrace = \"never\": audit.backtrace needs ptrace and is "
			 "ignored");
	if (p->limits.disk != LIMIT_UNSET)
		log_warn("tracer.ptrace = \"never\": writes past the disk limit fail with EFBIG "
			 "instead of EDQUOT");
	if (p->limits.tasks != LIMIT_UNSET)
		log_warn("tracer.ptrace = \"never\": the tasks budget notifies fork, which then "
			 "fails with EINTR now and then when a signal arrives (docs/budgets.md)");
	if (p->limits.cpu_time_ms != LIMIT_UNSET)
		log_warn(
			"tracer.ptrace = \"never\": cpu_time is not exact: a child that the "
			"kernel reaps by itself (its parent ignores SIGCHLD or set SA_NOCLDWAIT) "
			"and lives less than a sampling interval is not counted (docs/budgets.md)");
}

int cmd_check(int argc, char *argv[])
{
	enum { ARG_SYSCALLS = 0x100 };
	static const struct option options[] = {
		{"workspace", required_argument, NULL, 'w'},
		{"set", required_argument, NULL, 's'},
		{"workspace-anywhere", no_argument, NULL, ARG_WORKSPACE_ANYWHERE},
		{"quiet", no_argument, NULL, 'q'},
		{"syscalls", no_argument, NULL, ARG_SYSCALLS},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	_cleanup_(policy_freep) Policy *p = NULL;
	PolicyArgs args = {};
	bool quiet = false, syscalls = false;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+w:s:qh", options, NULL)) >= 0) {
		r = policy_args_parse_opt(&args, c, optarg);
		if (r < 0) {
			policy_args_done(&args);
			return log_error_errno(r, "parsing options"), 1;
		}
		if (r > 0)
			continue;
		switch (c) {
		case 'q':
			quiet = true;
			break;
		case ARG_SYSCALLS:
			syscalls = true;
			break;
		case 'h':
			help(stdout);
			policy_args_done(&args);
			return 0;
		default:
			policy_args_done(&args);
			log_error("try 'sbxtrace check --help'");
			return 1;
		}
	}
	if (syscalls) {
		policy_args_done(&args);
		if (optind != argc) {
			log_error("check --syscalls takes no POLICY");
			return 1;
		}
		syscalls_write_markdown(stdout);
		return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
	}
	if (optind != argc - 1) {
		policy_args_done(&args);
		log_error(optind >= argc ? "check needs a POLICY (a .toml file or a preset name)"
					 : "check takes one POLICY; try 'sbxtrace check --help'");
		return 1;
	}

	args.quiet = quiet;
	r = policy_args_load(&args, argv[optind], &p);
	policy_args_done(&args);
	if (r < 0)
		return 1;

	notes(p, quiet);
	if (!quiet && policy_write_toml(p, stdout) < 0) {
		log_error("writing the policy failed");
		return 1;
	}
	return 0;
}
