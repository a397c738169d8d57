/* SPDX-License-Identifier: MIT */
/*
 * sbxtrace learn [OPTIONS] -- CMD [ARGS…]
 *
 * Runs CMD under a base policy with exec unrestricted while recording an audit log, then
 * writes a least-privilege policy from what it did (audit/learn.c, docs/learn.md). The
 * output is checked by loading it before it is put in place, and written atomically.
 */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/learn.h"
#include "common/log.h"
#include "common/util.h"
#include "tracer/tracer.h"

static void help(FILE *f)
{
	fputs("Usage: sbxtrace learn [OPTIONS] -- CMD [ARGS…]\n"
	      "\n"
	      "Run CMD once while recording what it does, then write a least-privilege policy\n"
	      "that allows that and nothing else (docs/learn.md).\n"
	      "\n"
	      "CMD runs under the --from policy with [exec] lifted (any visible program may run);\n"
	      "the learned policy keeps the mounts of that policy CMD used (read-only unless it\n"
	      "wrote there), lists the programs it ran, the inet destinations it reached, and\n"
	      "limits with headroom. CMD is not sandboxed more than --from says: learn with a\n"
	      "policy you would run it under anyway.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output FILE    write the policy to FILE (atomically); '-' or none: stdout\n"
	      "      --from POLICY    the policy to run under while recording (a preset name or\n"
	      "                       a .toml file; default: permissive)\n"
	      "  -w, --workspace DIR  directory that ${WORKSPACE} names (written back as such;\n"
	      "                       default: the current directory)\n"
	      "      --workspace-anywhere  allow /, the home directory or a system directory\n"
	      "                       as the workspace\n"
	      "  -s, --set KEY=VALUE  override one setting of the --from policy (repeatable),\n"
	      "                       e.g. -s network.mode=full to learn where CMD connects\n"
	      "  -q, --quiet          print only errors of our own\n"
	      "  -h, --help           show this help\n"
	      "\n"
	      "Examples:\n"
	      "  sbxtrace learn -o tests.toml --from standard -- make test\n"
	      "  sbxtrace learn -o fetch.toml -s network.mode=full -- ./fetch-data.sh\n"
	      "  sbxtrace run tests.toml -- make test      # then run under what was learned\n"
	      "\n"
	      "Exit status: 0 when a policy was written (also when CMD failed: a warning says\n"
	      "so, and the policy covers what it did until then); 125 on an error of our own.\n",
	      f);
}

DEFINE_FREEP(Audit, audit_free)

/* A new empty file from the mkostemp() template (which ends in XXXXXX): its fd, its name in
 * *ret_path. */
static int temp_file(char *template_, char **ret_path)
{
	int fd;

	if (!template_)
		return -ENOMEM;
	fd = mkostemp(template_, O_CLOEXEC);
	if (fd < 0) {
		fd = -errno;
		free(template_);
		return fd;
	}
	*ret_path = template_;
	return fd;
}

/* TMPDIR/PREFIX-XXXXXX */
static int temp_in_tmpdir(const char *prefix, char **ret_path)
{
	const char *t = getenv("TMPDIR");

	return temp_file(strdup_printf("%s/%s-XXXXXX", t && t[0] == '/' ? t : "/tmp", prefix),
			 ret_path);
}

/* Beside path (same file system: rename() is atomic) */
static int temp_beside(const char *path, char **ret_tmp)
{
	return temp_file(strdup_printf("%s.XXXXXX", path), ret_tmp);
}

int cmd_learn(int argc, char *argv[])
{
	enum { ARG_FROM = 0x100 };
	static const struct option options[] = {
		{"output", required_argument, NULL, 'o'},
		{"from", required_argument, NULL, ARG_FROM},
		{"workspace", required_argument, NULL, 'w'},
		{"set", required_argument, NULL, 's'},
		{"workspace-anywhere", no_argument, NULL, ARG_WORKSPACE_ANYWHERE},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{}};
	_cleanup_(policy_freep) Policy *policy = NULL, *check = NULL;
	_cleanup_(audit_freep) Audit *audit = NULL;
	_cleanup_free_ char *out_tmp = NULL, *log_path = NULL;
	const char *from = "permissive", *output = NULL;
	PolicyArgs pa = {}, pa_check = {};
	TracerOptions o = {};
	TracerResult res = {};
	AuditOptions ao = {.log_fd = -1, .events = AUDIT_EVENT_ALL};
	LearnRun run = {};
	FILE *out = NULL;
	int c, r, out_fd = -1, log_fd;
	int ret = EXIT_SANDBOX_ERROR;

	optind = 0;
	while ((c = getopt_long(argc, argv, "+o:w:s:qh", options, NULL)) >= 0) {
		r = policy_args_parse_opt(&pa, c, optarg);
		if (r < 0)
			goto out;
		if (r > 0)
			continue;
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case ARG_FROM:
			from = optarg;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'h':
			help(stdout);
			ret = 0;
			goto out;
		default:
			help(stderr);
			goto out;
		}
	}
	if (optind < argc && streq(argv[optind], "--"))
		optind++;
	if (optind >= argc) {
		log_error("learn: missing the command to run after '--'; try 'sbxtrace learn "
			  "--help'");
		goto out;
	}
	o.argv = argv + optind;
	if (output && streq(output, "-"))
		output = NULL;

	/* an unwritable output is an error before anything runs */
	if (output) {
		out_fd = temp_beside(output, &out_tmp);
		if (out_fd < 0) {
			log_error_errno(out_fd, "cannot write beside '%.200s'", output);
			goto out;
		}
	}

	pa.quiet = o.quiet;
	r = policy_args_load(&pa, from, &policy);
	if (r < 0)
		goto out;
	/* recording: any visible program may run, so that the list of what ran is complete */
	policy->exec_allow = strv_free(policy->exec_allow);
	policy->exec_deny = strv_free(policy->exec_deny);

	log_fd = temp_in_tmpdir("sbxtrace-learn", &log_path);
	if (log_fd < 0) {
		log_error_errno(log_fd, "cannot create a temporary audit log");
		goto out;
	}
	(void) close(log_fd);
	ao.log_path = log_path;
	r = audit_open(&ao, &audit);
	if (r < 0) {
		log_error_errno(r, "cannot open the audit log '%s'", log_path);
		goto out;
	}
	r = cli_run_recorded(policy, &o, TAKE_PTR(audit), &res);
	if (r < 0)
		goto out;
	if (res.exit_code != 0)
		log_warn("the command exited with status %d: the policy allows what it did until "
			 "then",
			 res.exit_code);

	run = (LearnRun){
		.base = policy,
		.from = from,
		.workspace = pa.workspace_path,
		.argv = o.argv,
		.exit_code = res.exit_code,
		.duration_ms = res.duration_ms,
		.usage_known = res.usage_known,
		.cpu_time_ms = res.cpu_time_ms,
		.memory_peak = res.memory_peak,
		.tasks_peak = res.tasks_peak,
	};

	/* the policy goes to a file first (the temporary beside -o, or one of our own for
	 * stdout), is loaded back as `check` would, and only then put in place */
	if (!output) {
		out_fd = temp_in_tmpdir("sbxtrace-learned", &out_tmp);
		if (out_fd < 0) {
			log_error_errno(out_fd, "cannot create a temporary file");
			goto out;
		}
	}
	out = fdopen(out_fd, "w");
	if (!out) {
		log_error_errno(-errno, "fdopen");
		goto out;
	}
	out_fd = -1;
	r = learn_write_policy(log_path, &run, out);
	if (r < 0) {
		log_error_errno(r, "cannot read the audit log of the run");
		goto out;
	}
	if (fflush(out) != 0 || ferror(out)) {
		log_error_errno(-errno, "writing the learned policy");
		goto out;
	}
	/* the workspace of the run, already judged: no second note or refusal */
	pa_check.workspace = pa.workspace_path;
	pa_check.workspace_anywhere = true;
	pa_check.quiet = true;
	r = policy_args_load(&pa_check, out_tmp, &check);
	if (r < 0) {
		/* a bug of ours: keep the file for the report */
		log_error("the learned policy does not load (kept in %s); please report this",
			  out_tmp);
		free(out_tmp);
		out_tmp = NULL;
		goto out;
	}
	if (output) {
		if (rename(out_tmp, output) < 0) {
			log_error_errno(-errno, "cannot move the policy to '%.200s'", output);
			goto out;
		}
		free(out_tmp);
		out_tmp = NULL;
		if (!o.quiet)
			log_info("learned policy written to %s", output);
	} else {
		char buf[8192];
		size_t n;
		FILE *in = fopen(out_tmp, "re");

		if (!in) {
			log_error_errno(-errno, "reading back the learned policy");
			goto out;
		}
		while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
			(void) fwrite(buf, 1, n, stdout);
		fclose(in);
	}
	ret = 0;
out:
	if (out)
		fclose(out);
	if (out_fd >= 0)
		(void) close(out_fd);
	if (out_tmp)
		(void) unlink(out_tmp);
	if (log_path)
		(void) unlink(log_path);
	tracer_result_done(&res);
	policy_args_done(&pa_check);
	policy_args_done(&pa);
	return ret;
}
