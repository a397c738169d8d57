/* SPDX-License-Identifier: MIT */
/* Issue 25: the digest of a log, the corpus report (text, HTML, groups) and the diff, on
 * tests/data/corpus: four hand-written logs with task.json beside them (models a and b), a
 * results.jsonl and a notes.jsonl that are not logs. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include <jansson.h>

#include "audit/corpus.h"
#include "audit/digest.h"
#include "tests/unit/tap.h"

static bool has(const char *text, const char *needle)
{
	if (text && strstr(text, needle))
		return true;
	printf("# missing: %s\n", needle);
	return false;
}

static char *corpus_text(const char *group_by, bool html, const char *html_dir)
{
	AuditCorpus *c = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	if (!out || audit_corpus_load(CORPUS_DIR, NULL, NULL, &c) < 0)
		return NULL;
	if (html)
		(void) audit_corpus_write_html(c, group_by, "corpus <test>", html_dir, out);
	else
		(void) audit_corpus_write_text(c, group_by, out);
	fclose(out);
	audit_corpus_free(c);
	return text;
}

TEST(digest_of_a_log)
{
	AuditDigest *d = NULL;
	json_t *j;
	char *s;

	ASSERT_EQ(audit_digest_load_path(CORPUS_DIR "/t2/audit.jsonl", NULL, NULL, &d), 0);
	EXPECT_TRUE(audit_digest_finished(d));
	EXPECT_EQ(audit_digest_duration_ms(d), 340);
	j = audit_digest_to_json(d, 10);
	ASSERT_TRUE(j != NULL);
	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	EXPECT_TRUE(has(s, "\"denials_by_kind\":{\"hidden or denied by the policy\":1,"
			   "\"network none\":2}"));
	EXPECT_TRUE(has(s, "\"network\":[\"1.2.3.4:443\"]"));
	EXPECT_TRUE(has(s, "\"out_of_view\":2,"));
	EXPECT_TRUE(has(s, "\"out_of_view_paths\":[\"/workspace/.env (hidden)\","
			   "\"/etc/shadow (outside)\"]"));
	EXPECT_TRUE(has(s, "\"exit_code\":1,"));
	free(s);
	json_decref(j);
	audit_digest_free(d);

	/* not a log: no run records, nothing finished */
	ASSERT_EQ(audit_digest_load_path(CORPUS_DIR "/results.jsonl", NULL, NULL, &d), 0);
	EXPECT_FALSE(audit_digest_finished(d));
	audit_digest_free(d);
	EXPECT_EQ(audit_digest_load_path(CORPUS_DIR "/none.jsonl", NULL, NULL, &d), -ENOENT);
}

TEST(corpus_text)
{
	char *text = corpus_text(NULL, false, NULL);

	ASSERT_TRUE(text != NULL);
	EXPECT_TRUE(has(text, " — 4 runs, 0 unreadable files, 0 bad lines skipped\n"));
	EXPECT_TRUE(has(text, "runs: 4 (4 finished); ok 2, failed 1, killed 1\n"));
	EXPECT_TRUE(has(text, "runtime: median 120 ms, p90 1010 ms, p99 1010 ms, max 1010 ms"));
	EXPECT_TRUE(has(text, "runs with a denial: 1 (25.0%), with an out-of-view attempt: 2 "
			      "(50.0%), reaching for the network: 1 (25.0%), tripping a budget: 1 "
			      "(25.0%)"));
	EXPECT_TRUE(has(text, "  network none  1 run (25.0%), 2 denials\n"));
	EXPECT_TRUE(has(text, "  /etc/shadow (outside)  2 runs (50.0%), 2 attempts\n"));
	EXPECT_TRUE(has(text, "  1.2.3.4:443  1 run (25.0%)  [denied]\n"));
	EXPECT_TRUE(has(text, "  cpu_time  1 run (25.0%)\n"));
	EXPECT_TRUE(has(text, "  t4  killed, exit 137, 1010 ms\n"));
	EXPECT_FALSE(strstr(text, "by model"));
	free(text);
}

TEST(corpus_grouped)
{
	char *text = corpus_text("model", false, NULL);

	ASSERT_TRUE(text != NULL);
	EXPECT_TRUE(has(text, "by model (2 groups):\n"));
	EXPECT_TRUE(has(text, "  a                         2   50.0        120     50.0    100.0 "
			      "    50.0      0.0\n"));
	EXPECT_TRUE(has(text, "  b                         2   50.0         80      0.0      0.0 "
			      "     0.0     50.0\n"));
	EXPECT_TRUE(has(text, "[model = b]\nruns: 2 (2 finished); ok 1, killed 1\n"));
	free(text);
	/* a field some tasks lack: "(none)" */
	text = corpus_text("temperature", false, NULL);
	EXPECT_TRUE(has(text, "  (none)                    4"));
	free(text);
}

TEST(corpus_html)
{
	char *html = corpus_text("model", true, CORPUS_DIR);

	ASSERT_TRUE(html != NULL);
	EXPECT_TRUE(has(html, "<title>sbxtrace corpus: corpus &lt;test&gt;</title>"));
	EXPECT_TRUE(has(html, "<h2>By model (2 groups)</h2>"));
	EXPECT_TRUE(has(html, "<h3>Runtime distribution</h3>"));
	EXPECT_TRUE(has(html, "<h3>Most reached-for names out of view</h3>"));
	EXPECT_TRUE(has(html, "<svg xmlns='http://www.w3.org/2000/svg'"));
	EXPECT_TRUE(has(html, "/etc/shadow (outside): 50.0% (2 of 4 runs), 2 attempts</title>"));
	EXPECT_TRUE(has(html, "class='bar den'")); /* the denied destination */
	/* per-run rows link to the logs, relative to the page's directory */
	EXPECT_TRUE(has(html, "<a href='t1/audit.jsonl'>log</a>"));
	/* self-contained: no script, nothing loaded from elsewhere */
	EXPECT_FALSE(strstr(html, "<script"));
	EXPECT_FALSE(strstr(html, "src="));
	EXPECT_FALSE(strstr(html, "href='http"));
	EXPECT_FALSE(strstr(html, "@import"));
	EXPECT_TRUE(has(html, "</html>\n"));
	free(html);
	/* a page elsewhere: links go up */
	html = corpus_text(NULL, true, CORPUS_DIR "/t1");
	EXPECT_TRUE(has(html, "<a href='../t2/audit.jsonl'>log</a>"));
	free(html);
	html = corpus_text(NULL, true, NULL);
	EXPECT_TRUE(has(html, "<a href='file://"));
	free(html);
}

TEST(diff_of_two_runs)
{
	AuditDigest *a = NULL, *b = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	ASSERT_EQ(audit_digest_load_path(CORPUS_DIR "/t1/audit.jsonl", NULL, NULL, &a), 0);
	ASSERT_EQ(audit_digest_load_path(CORPUS_DIR "/t2/audit.jsonl", NULL, NULL, &b), 0);
	EXPECT_EQ(audit_digest_write_diff(a, "t1", b, "t2", out), 11);
	fclose(out);
	EXPECT_TRUE(has(text, "--- t1\n+++ t2\n"));
	EXPECT_TRUE(has(text, "files written:\n  - /workspace/out.txt\n"));
	EXPECT_TRUE(has(text, "execs:\n  - /usr/bin/python3.11\n"));
	EXPECT_TRUE(has(text, "network destinations:\n  + 1.2.3.4:443  (2×)  [denied]\n"));
	EXPECT_TRUE(has(text, "denials:\n  + connect 1.2.3.4:443: network none  (2×)\n"));
	EXPECT_TRUE(has(text, "out-of-view attempts:\n  - /root/.ssh/id_rsa (outside)\n"
			      "  + /workspace/.env (hidden)\n"));
	/* shared: not listed */
	EXPECT_FALSE(strstr(text, "/etc/shadow"));
	EXPECT_FALSE(strstr(text, "in.txt\n  +"));
	free(text);
	/* a run against itself: no differences */
	text = NULL;
	out = open_memstream(&text, &len);
	EXPECT_EQ(audit_digest_write_diff(a, "t1", a, "t1", out), 0);
	fclose(out);
	EXPECT_TRUE(has(text, "; 0 differences\n"));
	free(text);
	audit_digest_free(a);
	audit_digest_free(b);
}

int main(void)
{
	return tap_run();
}
