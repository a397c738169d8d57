/* SPDX-License-Identifier: MIT */
/*
 * sbxtrace report [--html FILE] AUDIT.jsonl
 *
 * Summarizes an audit log (docs/audit.md): per process, execs, files read and written,
 * network destinations, denials and top syscalls; --html writes one self-contained page
 * with the process tree, a timeline and the denials instead, and says only where it went.
 * Bad lines are reported with their number on stderr and skipped.
 */
#include "cli/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/report.h"
#include "common/log.h"
#include "common/macros.h"

static void help(FILE *f)
{
	fputs("Usage: sbxtrace report [OPTIONS] AUDIT.jsonl\n"
	      "\n"
	      "Summarize an audit log written by 'sbxtrace run --audit FILE' ('-' reads stdin).\n"
	      "\n"
	      "Options:\n"
	      "      --html FILE  write a self-contained HTML page (process tree, timeline,\n"
	      "                   denials) to FILE instead of the text summary, and say where\n"
	      "  -q, --quiet      print nothing on stdout\n"
	      "  -h, --help       show this help\n"
	      "\n"
	      "Examples:\n"
	      "  sbxtrace run --audit log.jsonl standard -- make test\n"
	      "  sbxtrace report log.jsonl                    # the summary as text\n"
	      "  sbxtrace report --html report.html log.jsonl # one page to open in a browser\n"
	      "\n"
	      "Exit status: 0; 1 if some lines could not be read (they are skipped);\n"
	      "125 if the log or the HTML file cannot be opened.\n",
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

int cmd_report(int argc, char *argv[])
{
	enum { ARG_HTML = 0x100 };
	static const struct option options[] = {{"html", required_argument, NULL, ARG_HTML},
						{"quiet", no_argument, NULL, 'q'},
						{"help", no_argument, NULL, 'h'},
						{}};
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
