/* SPDX-License-Identifier: MIT */
/*
 * `sbxtrace report --html` renders: the page for tests/data/audit-sample.jsonl is loaded in
 * headless Chromium, which must write a screenshot (a PNG). With the argument "corpus", the
 * page of `report --corpus tests/data/corpus --group-by model` (issue 25). Skips (77) when no
 * chromium is installed: Debian's package is large, and CI installs it only where this check is
 * wanted.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/helpers/sbx-scratch.h"

static const char *find_chromium(char *buf, size_t size)
{
	static const char *const names[] = {"chromium", "chromium-browser", "google-chrome"};
	const char *path = getenv("PATH");

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *p = strdup(path ? path : "/usr/bin:/bin"), *save = NULL;

		for (char *d = strtok_r(p, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
			snprintf(buf, size, "%s/%s", d, names[i]);
			if (access(buf, X_OK) == 0) {
				free(p);
				return buf;
			}
		}
		free(p);
	}
	return NULL;
}

static int run(char *const argv[], const char *home, const char *out)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		if (home)
			setenv("HOME", home, 1);
		if (out) {
			int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

			if (fd < 0 || dup2(fd, 1) < 0)
				_exit(126);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char *argv_[])
{
	bool corpus = argc > 1 && strcmp(argv_[1], "corpus") == 0;
	const char *sbxtrace = getenv("SBXTRACE"), *scratch;
	char chromium[512], dir[512], html[600], png[600], shot[700], url[700], dom[600];
	unsigned char sig[8];
	struct stat st;
	FILE *f;
	int r;

	if (!sbxtrace || !*sbxtrace) {
		fprintf(stderr, "skip: SBXTRACE is not set (run through meson test)\n");
		return 77;
	}
	if (!find_chromium(chromium, sizeof(chromium))) {
		fprintf(stderr, "skip: chromium is not installed (apt-get install chromium)\n");
		return 77;
	}
	/* removed at exit, pass or fail, with the profile Chromium writes under HOME (.cache,
	 * .config): SBX_KEEP_TMP=1 keeps it, to look at the screenshot */
	if (!(scratch = sbx_scratch_dir("sbx-html")))
		return 1;
	snprintf(dir, sizeof(dir), "%s", scratch);
	snprintf(html, sizeof(html), "%s/report.html", dir);
	snprintf(png, sizeof(png), "%s/shot.png", dir);
	if (corpus) {
		char *argv[] = {(char *) sbxtrace, "report", "-q",     "--corpus", CORPUS_DIR,
				"--group-by",	   "model",  "--html", html,	   NULL};

		r = run(argv, NULL, NULL);
		if (r != 0) {
			fprintf(stderr, "report --corpus exited %d\n", r);
			return 1;
		}
	} else {
		char *argv[] = {(char *) sbxtrace, "report", "-q", "--html", html,
				SAMPLE_LOG,	   NULL};

		/* 1: the sample has two bad lines, skipped */
		r = run(argv, NULL, NULL);
		if (r != 1) {
			fprintf(stderr, "report exited %d\n", r);
			return 1;
		}
	}
	snprintf(shot, sizeof(shot), "--screenshot=%s", png);
	snprintf(url, sizeof(url), "file://%s", html);
	{
		char *argv[] = {chromium,
				"--headless",
				"--no-sandbox",
				"--disable-gpu",
				"--window-size=1200,1600",
				shot,
				url,
				NULL};

		r = run(argv, dir, NULL);
	}
	if (r != 0 || stat(png, &st) < 0 || st.st_size < 1000) {
		fprintf(stderr, "chromium exited %d, no screenshot\n", r);
		return 1;
	}
	f = fopen(png, "re");
	if (!f || fread(sig, 1, 8, f) != 8 || memcmp(sig, "\x89PNG\r\n\x1a\n", 8) != 0) {
		fprintf(stderr, "the screenshot is not a PNG\n");
		return 1;
	}
	fclose(f);
	printf("screenshot: %s (%lld bytes)\n", png, (long long) st.st_size);

	/* the DOM Chromium built: the timeline's elements must be siblings in the SVG (a lifeline
	 * left open would swallow the dots, which then do not render) */
	snprintf(dom, sizeof(dom), "%s/dom.html", dir);
	{
		char *argv[] = {
			chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
			url,	  NULL};
		char *text = calloc(1, 4 << 20);
		size_t len = 0;

		r = run(argv, dir, dom);
		f = fopen(dom, "re");
		if (f && text)
			len = fread(text, 1, (4 << 20) - 1, f);
		if (f)
			fclose(f);
		if (corpus ? r != 0 || !len || !strstr(text, "class=\"bar\"></rect>") ||
				     !strstr(text, "class=\"bar den\"></rect>") ||
				     !strstr(text, "<h2>By model (2 groups)</h2>") ||
				     !strstr(text, "<h2>Runs</h2>")
			   : r != 0 || !len || !strstr(text, "class=\"life\"></line>") ||
				     !strstr(text, "<circle cx=") ||
				     !strstr(text, "<h2>Denials</h2>")) {
			fprintf(stderr,
				"chromium exited %d; the DOM lacks the timeline's elements\n", r);
			free(text);
			return 1;
		}
		free(text);
		unlink(dom);
	}
	return 0;
}
