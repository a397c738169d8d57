/* SPDX-License-Identifier: MIT */
/*
 * sbxtrace report [--html FILE] AUDIT.jsonl
 * sbxtrace report --corpus DIR [--group-by FIELD] [--html FILE]
 * sbxtrace report --diff A B
 *
 * Summarizes an audit log (docs/audit.md): per process, execs, files read and written,
 * network destinations, denials and top syscalls; --html writes one self-contained page
 * with the process tree, a timeline and the denials instead, and says only where it went.
 * Bad lines are reported with their number on stderr and skipped.
 */
#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "audit/corpus.h"
#include "audit/digest.h"
#include "audit/report.h"
#include "common/log.h"
#include "common/macros.h"
#include "common/util.h"

static void help(FILE *f)
{
	fputs("Usage: sbxtrace report [OPTIONS] AUDIT.jsonl\n"
	      "       sbxtrace report --corpus DIR [--group-by FIELD] [--html FILE]\n"
	      "       sbxtrace report --diff A B\n"
	      "\n"
	      "Summarize an audit log written by 'sbxtrace run --audit FILE' ('-' reads stdin),\n"
	      "every log under a directory (a batch's OUTDIR), or what one run did that another\n"
	      "did not (A and B: logs, or a batch's task directories).\n"
	      "\n"
	      "Options:\n"
	      "      --html FILE      write a self-contained HTML page (process tree, timeline,\n"
	      "                       denials; for --corpus: charts and a row per run) to FILE\n"
	      "                       instead of the text summary, and say where\n"
	      "      --corpus DIR     aggregate every audit log under DIR (docs/research.md)\n"
	      "      --group-by FIELD compare the groups of a task field (model, prompt, …)\n"
	      "      --diff           compare two runs: files, execs, destinations, denials\n"
	      "  -q, --quiet          print nothing on stdout\n"
	      "  -h, --help           show this help\n"
	      "\n"
	      "Examples:\n"
	      "  sbxtrace report --html report.html log.jsonl # one page to open in a browser\n"
	      "  sbxtrace report --corpus out --group-by model --html out/corpus.html\n"
	      "  sbxtrace report --diff out/tasks/before out/tasks/after\n"
	      "\n"
	      "Exit status: 0; 1 if some lines could not be read (they are skipped), and for\n"
	      "--diff if the runs differ; 125 if a log or the HTML file cannot be opened.\n",
	      f);
}

static void warn_line(unsigned line, const char *why, void *userdata)
{
	const char *path = userdata;

	log_warn("%.200s:%u: %s, skipping the line", path, line, why);
}

DEFINE_FREEP(AuditReport, audit_report_free)

static void fclosep(FILE **f)
{
	if (*f && *f != stdin)
		(void) fclose(*f);
}

DEFINE_FREEP(AuditDigest, audit_digest_free)
DEFINE_FREEP(AuditCorpus, audit_corpus_free)

static void warn_file(const char *path, const char *why, void *userdata)
{
	(void) userdata;
	log_warn("%.200s: %s, skipping it", path, why);
}

static void count_bad(unsigned line, const char *why, void *userdata)
{
	(void) line;
	(void) why;
	(*(unsigned *) userdata)++;
}

/* A run for --diff: a log, or a directory holding audit.jsonl (a batch's task). */
static int diff_load(const char *arg, AuditDigest **ret)
{
	_cleanup_free_ char *p = NULL;
	struct stat st;
	unsigned bad = 0;
	int r;

	if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode))
		p = strdup_printf("%s/audit.jsonl", arg);
	else
		p = strdup(arg);
	if (!p)
		return log_error_errno(-ENOMEM, "report");
	r = audit_digest_load_path(p, count_bad, &bad, ret);
	if (r < 0)
		return log_error_errno(r, "cannot read '%.200s'", p);
	if (bad)
		log_warn("%.200s: %u lines could not be read, skipping them", p, bad);
	return 0;
}

static int report_diff(const char *a_name, const char *b_name, bool quiet)
{
	_cleanup_(audit_digest_freep) AuditDigest *a = NULL, *b = NULL;
	_cleanup_(fclosep) FILE *null = NULL;
	int r;

	if (diff_load(a_name, &a) < 0 || diff_load(b_name, &b) < 0)
		return EXIT_SANDBOX_ERROR;
	/* -q: only the exit status says whether they differ */
	if (quiet && !(null = fopen("/dev/null", "we")))
		return EXIT_SANDBOX_ERROR;
	r = audit_digest_write_diff(a, a_name, b, b_name, quiet ? null : stdout);
	if (r < 0) {
		log_error("writing the diff failed");
		return EXIT_SANDBOX_ERROR;
	}
	return r > 0 ? 1 : 0;
}

static int report_corpus(const char *dir, const char *group_by, const char *html, bool quiet)
{
	_cleanup_(audit_corpus_freep) AuditCorpus *c = NULL;
	int r;

	r = audit_corpus_load(dir, warn_file, NULL, &c);
	if (r < 0) {
		log_error_errno(r, "cannot read the corpus '%.200s'", dir);
		return EXIT_SANDBOX_ERROR;
	}
	if (audit_corpus_runs(c) == 0)
		log_warn("no audit logs under '%.200s'", dir);
	if (html) {
		_cleanup_(fclosep) FILE *out = fopen(html, "we");
		_cleanup_free_ char *copy = strdup(html);
		char real[PATH_MAX];

		if (!out || !copy) {
			log_error_errno(-errno, "cannot create '%.200s'", html);
			return EXIT_SANDBOX_ERROR;
		}
		/* links to each run's report are relative to where the page is */
		if (!realpath(dirname(copy), real)) {
			log_error_errno(-errno, "'%.200s'", html);
			return EXIT_SANDBOX_ERROR;
		}
		if (audit_corpus_write_html(c, group_by, dir, real, out) < 0 || fflush(out) != 0) {
			log_error("writing '%.200s' failed", html);
			return EXIT_SANDBOX_ERROR;
		}
		if (!quiet)
			printf("HTML report written to %s\n", html);
		return 0;
	}
	if (!quiet && audit_corpus_write_text(c, group_by, stdout) < 0) {
		log_error("writing the summary failed");
		return EXIT_SANDBOX_ERROR;
	}
	return 0;
}

int cmd_report(int argc, char *argv[])
{
	enum { ARG_HTML = 0x100, ARG_CORPUS, ARG_GROUP_BY, ARG_DIFF };
	static const struct option options[] = {{"html", required_argument, NULL, ARG_HTML},
						{"corpus", required_argument, NULL, ARG_CORPUS},
						{"group-by", required_argument, NULL, ARG_GROUP_BY},
						{"diff", no_argument, NULL, ARG_DIFF},
						{"quiet", no_argument, NULL, 'q'},
						{"help", no_argument, NULL, 'h'},
						{}};
	const char *corpus = NULL, *group_by = NULL;
	bool diff = false;
	_cleanup_(audit_report_freep) AuditReport *rep = NULL;
	_cleanup_(fclosep) FILE *in = NULL;
	const char *html = NULL, *path;
	bool quiet = false;
	int c, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, "qh", options, NULL)) >= 0) {
		switch (c) {
		case ARG_HTML:
			html = optarg;
			break;
		case ARG_CORPUS:
			corpus = optarg;
			break;
		case ARG_GROUP_BY:
			group_by = optarg;
			break;
		case ARG_DIFF:
			diff = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			help(stdout);
			return 0;
		default:
			help(stderr);
			return EXIT_SANDBOX_ERROR;
		}
	}
	if (diff) {
		if (corpus || html || group_by || optind + 2 != argc) {
			log_error("report: --diff takes two runs (logs or task directories) and no "
				  "other option; try 'sbxtrace report --help'");
			return EXIT_SANDBOX_ERROR;
		}
		return report_diff(argv[optind], argv[optind + 1], quiet);
	}
	if (corpus) {
		if (optind != argc) {
			log_error("report: --corpus DIR takes no log besides; try 'sbxtrace report "
				  "--help'");
			return EXIT_SANDBOX_ERROR;
		}
		return report_corpus(corpus, group_by, html, quiet);
	}
	if (group_by) {
		log_error("report: --group-by goes with --corpus DIR");
		return EXIT_SANDBOX_ERROR;
	}
	if (optind + 1 != argc) {
		log_error("report: expected one audit log; try 'sbxtrace report --help'");
		return EXIT_SANDBOX_ERROR;
	}
	path = argv[optind];
	in = streq(path, "-") ? stdin : fopen(path, "re");
	if (!in) {
		log_error_errno(-errno, "cannot open '%.200s'", path);
		return EXIT_SANDBOX_ERROR;
	}
	r = audit_report_load(in, warn_line, (void *) path, &rep);
	if (r < 0) {
		log_error_errno(r, "reading '%.200s'", path);
		return EXIT_SANDBOX_ERROR;
	}
	if (html) {
		_cleanup_(fclosep) FILE *out = fopen(html, "we");

		if (!out) {
			log_error_errno(-errno, "cannot create '%.200s'", html);
			return EXIT_SANDBOX_ERROR;
		}
		if (audit_report_write_html(rep, path, out) < 0 || fflush(out) != 0) {
			log_error("writing '%.200s' failed", html);
			return EXIT_SANDBOX_ERROR;
		}
		/* the page is what was asked for: the text would bury where it went */
		if (!quiet)
			printf("HTML report written to %s\n", html);
		return audit_report_skipped(rep) ? 1 : 0;
	}
	if (!quiet && audit_report_write_text(rep, stdout) < 0) {
		log_error("writing the summary failed");
		return EXIT_SANDBOX_ERROR;
	}
	return audit_report_skipped(rep) ? 1 : 0;
}
