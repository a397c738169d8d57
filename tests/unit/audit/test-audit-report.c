/* SPDX-License-Identifier: MIT */
/* sbxtrace report on tests/data/audit-sample.jsonl: a corrupt line (11) and a truncated last
 * line (21) are reported and skipped; the summary and the HTML page show what the log holds. */
#include <stdbool.h>
#include <stdlib.h>

#include "audit/report.h"
#include "tests/unit/tap.h"

static unsigned warned[8], n_warned;

static void warn(unsigned line, const char *why, void *userdata)
{
	(void) why;
	(void) userdata;
	if (n_warned < 8)
		warned[n_warned++] = line;
}

static char *render(bool html, AuditReport **ret)
{
	FILE *in = fopen(SAMPLE_LOG, "re");
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	AuditReport *r = NULL;

	if (!in || !out)
		return NULL;
	n_warned = 0;
	if (audit_report_load(in, warn, NULL, &r) < 0)
		return NULL;
	fclose(in);
	if (html)
		(void) audit_report_write_html(r, "sample <log>", out);
	else
		(void) audit_report_write_text(r, out);
	fclose(out);
	*ret = r;
	return text;
}

static bool has(const char *text, const char *needle)
{
	if (strstr(text, needle))
		return true;
	printf("# missing: %s\n", needle);
	return false;
}

TEST(bad_lines_reported_and_skipped)
{
	AuditReport *r = NULL;
	char *text = render(false, &r);

	ASSERT_TRUE(text != NULL);
	EXPECT_EQ(n_warned, 2u);
	EXPECT_EQ(warned[0], 11u);
	EXPECT_EQ(warned[1], 21u);
	EXPECT_EQ(audit_report_records(r), 19u);
	EXPECT_EQ(audit_report_skipped(r), 2u);
	free(text);
	audit_report_free(r);
}

TEST(text_summary)
{
	AuditReport *r = NULL;
	char *text = render(false, &r);

	ASSERT_TRUE(text != NULL);
	EXPECT_TRUE(has(text, "run: sh -c python3 fetch.py\n"));
	EXPECT_TRUE(has(text, "result: exit code 143, 4 ms, 2 denied, killed by cpu_time\n"));
	EXPECT_TRUE(has(text, "process 1001 (python3), parent 1000\n"));
	EXPECT_TRUE(has(text, "process 1000 (sh), parent 999, killed by SIGTERM\n"));
	EXPECT_TRUE(has(text, "  execs (1):\n    /usr/bin/python3 (python3 fetch.py)\n"));
	EXPECT_TRUE(has(text, "  files read (1):\n    /workspace/fetch.py\n"));
	EXPECT_TRUE(has(text, "  files written (2):\n    /workspace/out.txt\n"));
	/* a failed open (ENOENT) is neither read nor written */
	EXPECT_FALSE(strstr(text, "id_rsa"));
	EXPECT_TRUE(has(text, "    connect AF_INET, 93.184.216.34:443  [denied]\n"));
	EXPECT_TRUE(has(text, "    connect(5, AF_INET, 93.184.216.34:443, 16) = -1 ECONNREFUSED "
			      "(denied: network none)\n"));
	EXPECT_TRUE(has(text, "    ptrace(16, 1000, NULL, NULL) = -1 EPERM (denied: denied by "
			      "policy)\n"));
	EXPECT_TRUE(has(text, "top syscalls (9 calls): openat 3, connect 2,"));
	/* the escape character from the program is shown escaped, not sent to the terminal */
	EXPECT_TRUE(has(text, "/workspace/cache\\x1b[31m"));
	EXPECT_FALSE(strchr(text, '\x1b'));
	free(text);
	audit_report_free(r);
}

TEST(html_page)
{
	AuditReport *r = NULL;
	char *html = render(true, &r);

	ASSERT_TRUE(html != NULL);
	EXPECT_TRUE(has(html, "<!DOCTYPE html>"));
	EXPECT_TRUE(has(html, "<title>sbxtrace report: sample &lt;log&gt;</title>"));
	EXPECT_TRUE(has(html, "<h2>Process tree</h2>\n<ul><li><b>1000</b> sh"));
	/* 1001 is drawn inside 1000's list */
	EXPECT_TRUE(has(html, "<ul><li><b>1001</b> python3"));
	EXPECT_TRUE(has(html, "<svg"));
	EXPECT_TRUE(has(html, "class='de'><title>3.300 ms: connect("));
	/* the processes' lifelines are closed elements (an unquoted value before "/>" was not) */
	EXPECT_TRUE(has(html, "class='life'/>"));
	EXPECT_TRUE(has(html, "<tr class=de><td>3.600</td><td>1001</td><td><code>ptrace("));
	EXPECT_TRUE(
		has(html,
		    "ratchet: /workspace/secrets/key.pem (secret), network allowlist -&gt; none"));
	/* self-contained: nothing is loaded from elsewhere */
	EXPECT_FALSE(strstr(html, "src="));
	EXPECT_FALSE(strstr(html, "href="));
	EXPECT_FALSE(strstr(html, "<script"));
	EXPECT_FALSE(strstr(html, "@import"));
	/* control characters from the program are shown escaped in the page too */
	EXPECT_TRUE(has(html, "/workspace/cache\\x1b[31m"));
	EXPECT_FALSE(strchr(html, '\x1b'));
	EXPECT_TRUE(has(html, "</html>\n"));
	free(html);
	audit_report_free(r);
}

TEST(empty_log)
{
	FILE *in = fmemopen((char *) "", 0, "r");
	AuditReport *r = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	ASSERT_TRUE(in && out);
	ASSERT_EQ(audit_report_load(in, NULL, NULL, &r), 0);
	EXPECT_EQ(audit_report_records(r), 0u);
	EXPECT_EQ(audit_report_write_text(r, out), 0);
	EXPECT_EQ(audit_report_write_html(r, "empty", out), 0);
	fclose(out);
	fclose(in);
	EXPECT_TRUE(has(text, "(no run record)"));
	free(text);
	audit_report_free(r);
}

int main(void)
{
	return tap_run();
}
