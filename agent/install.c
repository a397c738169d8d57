/* SPDX-License-Identifier: MIT */
/*
 * code_install_package (docs/agents.md, "Package installs"): pip or npm, run inside the
 * session's sandbox as one `sbxtrace run` (exec_run, with argv: never a shell), whose network
 * is opened for that run alone to the registry the operator configured:
 *
 *   -s network.mode=allowlist -s 'network.allow=["HOST:PORT", …]'
 *
 * so the engine's allowlist and DNS stub hold the package manager to it: a packument or an
 * index page that points elsewhere is refused at connect(). Every other run of the session
 * (code_execute, contexts, commands) keeps the session's own mode.
 *
 * The package manager runs where the session's code cannot steer it:
 *   - pip: `python3 -I` (no PYTHONPATH, no user site, no cwd on sys.path) in cwd /tmp (private
 *     to the run), `pip --isolated` (no PIP_* variables, no user config — HOME would be the
 *     workspace), wheels only unless the operator allows builds (a build runs the package's
 *     own setup code with the registry's network);
 *   - npm: HOME=/tmp (no ~/.npmrc, ~/.node_modules from the workspace), NODE_PATH empty,
 *     --registry, --ignore-scripts and --git on the command line, which outrank a .npmrc the
 *     code may have planted in /workspace (that file can still name other registries for
 *     scopes, or a proxy: the allowlist refuses them).
 * Packages land in the workspace: pip into /workspace/.packages/python (`--target`; every run
 * of the session has it in PYTHONPATH, and the Python context driver on sys.path), npm into
 * /workspace/node_modules (NODE_PATH of every run; a JavaScript context requires from the
 * cwd).
 */
#include "agent/internal.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/macros.h"
#include "common/util.h"

#define PIP_TARGET   "/workspace/.packages/python"
#define PIP_REPORT   "/workspace/.packages/pip-report.json"
#define NPM_PREFIX   "/workspace"
#define NPM_LOCK     "/workspace/node_modules/.package-lock.json"
#define MAX_PACKAGES 64
#define NO_PIP_EXIT  3 /* the wrapper's exit status when the sandbox's python3 has no pip */

extern char **environ;

static const char *const manager_names[_PACKAGE_MANAGER_MAX] = {"pip", "npm"};

/* ---- URLs and allowlist entries ---- */

static bool host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '-';
}

/* "[v6]" or a name/IPv4 of host_chars, then ":PORT" (one port, or N-M when ranges is set). */
static int parse_host_port(const char *s, size_t len, bool ranges, char *host, size_t hostsize,
			   unsigned *port)
{
	size_t h = 0;

	if (len && s[0] == '[') {
		const char *end = memchr(s, ']', len);

		if (!end || end == s + 1)
			return -EINVAL;
		for (const char *p = s + 1; p < end; p++)
			if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') ||
			      (*p >= 'A' && *p <= 'F') || *p == ':' || *p == '.'))
				return -EINVAL;
		h = (size_t) (end - s) + 1;
	} else {
		size_t start = len > 2 && s[0] == '*' && s[1] == '.' ? 2 : 0;

		if (start && !ranges)
			return -EINVAL; /* a URL names one host */
		for (h = start; h < len && host_char(s[h]); h++)
			;
		if (h == start || s[start] == '.' || s[start] == '-' || s[h - 1] == '.' ||
		    s[h - 1] == '-')
			return -EINVAL;
	}
	if (h >= hostsize || h > 255)
		return -EINVAL;
	memcpy(host, s, h);
	host[h] = 0;
	*port = 0;
	if (h == len)
		return 0;
	if (s[h] != ':' || h + 1 == len)
		return -EINVAL;
	{
		unsigned v = 0, v2 = 0;
		size_t i = h + 1;
		bool dash = false;

		for (; i < len; i++) {
			if (s[i] == '-' && ranges && !dash && i > h + 1) {
				dash = true;
				continue;
			}
			if (s[i] < '0' || s[i] > '9')
				return -EINVAL;
			if (dash)
				v2 = v2 * 10 + (unsigned) (s[i] - '0');
			else
				v = v * 10 + (unsigned) (s[i] - '0');
			if (v > 65535 || v2 > 65535)
				return -EINVAL;
		}
		if (v == 0 || (dash && (v2 < v || s[len - 1] == '-')))
			return -EINVAL;
		*port = v;
	}
	return 0;
}

int install_url_allow_entry(const char *url, char *ret, size_t size)
{
	char host[260];
	const char *a, *end;
	unsigned port, def;

	if (!url || strlen(url) > 1024)
		return -EINVAL;
	if (strncmp(url, "https://", 8) == 0)
		a = url + 8, def = 443;
	else if (strncmp(url, "http://", 7) == 0)
		a = url + 7, def = 80;
	else
		return -EINVAL;
	end = a + strcspn(a, "/");
	if (memchr(a, '@', (size_t) (end - a))) /* credentials: not in argv nor in results */
		return -EINVAL;
	if (parse_host_port(a, (size_t) (end - a), false, host, sizeof(host), &port) < 0)
		return -EINVAL;
	for (const char *p = end; *p; p++)
		if (*p <= ' ' || *p > '~' || *p == '"' || *p == '\\' || *p == '\'' || *p == '`')
			return -EINVAL;
	if (ret && snprintf(ret, size, "%s:%u", host, port ? port : def) >= (int) size)
		return -ENAMETOOLONG;
	return 0;
}

bool install_allow_entry_ok(const char *entry)
{
	char host[260];
	unsigned port;

	return entry &&
	       parse_host_port(entry, strlen(entry), true, host, sizeof(host), &port) == 0 &&
	       port != 0;
}

/* The host of an entry from install_url_allow_entry ("a.b:443" → "a.b"). */
static void entry_host(const char *entry, char *out, size_t size)
{
	const char *colon = strrchr(entry, ':');
	size_t n = colon ? (size_t) (colon - entry) : strlen(entry);

	snprintf(out, size, "%.*s", (int) n, entry);
}

static bool entry_is_loopback(const char *entry)
{
	return strncmp(entry, "127.", 4) == 0 || strncmp(entry, "[::1]:", 6) == 0 ||
	       strncmp(entry, "localhost:", 10) == 0;
}

/* ---- package specifications: a strict pattern, never shell words nor options ---- */

static bool pypi_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

static bool alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* PEP 508 name, [extras], then specifiers "OP VERSION[,OP VERSION…]" without spaces:
 * "numpy", "requests[socks]==2.31.0", "pandas>=2,<3", "foo~=1.4". The name goes to name. */
static bool pip_spec_ok(const char *s, char *name, size_t namesize)
{
	static const char *const ops[] = {"===", "==", "!=", "<=", ">=", "~=", "<", ">"};
	size_t i = 0, n;

	if (!alnum(s[0]))
		return false;
	while (pypi_name_char(s[i]))
		i++;
	if (!alnum(s[i - 1]) || i >= namesize)
		return false;
	snprintf(name, namesize, "%.*s", (int) i, s);
	if (s[i] == '[') {
		i++;
		for (;;) {
			size_t st = i;

			while (pypi_name_char(s[i]))
				i++;
			if (i == st || !alnum(s[st]) || !alnum(s[i - 1]))
				return false;
			if (s[i] == ',') {
				i++;
				continue;
			}
			if (s[i] != ']')
				return false;
			i++;
			break;
		}
	}
	while (s[i]) {
		bool found = false;

		for (size_t k = 0; k < ARRAY_SIZE(ops); k++) {
			n = strlen(ops[k]);
			if (strncmp(s + i, ops[k], n) == 0) {
				i += n;
				found = true;
				break;
			}
		}
		if (!found)
			return false;
		n = i;
		while (alnum(s[i]) || s[i] == '.' || s[i] == '*' || s[i] == '+' || s[i] == '!' ||
		       s[i] == '_' || s[i] == '-')
			i++;
		if (i == n || !alnum(s[n]))
			return false;
		if (s[i] == ',' && s[i + 1])
			i++;
		else if (s[i])
			return false;
	}
	return true;
}

/* npm: [@scope/]name[@spec], spec a version, a range or a tag, never a URL, a path, a git
 * spec or an alias (no ':' nor '/'): "lodash", "@types/node@20", "left-pad@^1.3.0",
 * "react@>=18 <19", "next@canary". */
static bool npm_name_part_ok(const char *s, size_t n)
{
	if (n == 0 || s[0] == '.' || s[0] == '_')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!alnum(s[i]) && s[i] != '-' && s[i] != '.' && s[i] != '_' && s[i] != '~')
			return false;
	return true;
}

static bool npm_spec_ok(const char *s, char *name, size_t namesize)
{
	const char *at, *slash = NULL, *p = s;
	size_t n;

	if (s[0] == '@') {
		slash = strchr(s, '/');
		if (!slash || !npm_name_part_ok(s + 1, (size_t) (slash - s - 1)))
			return false;
		p = slash + 1;
	}
	at = strchr(p, '@');
	n = at ? (size_t) (at - p) : strlen(p);
	if (!npm_name_part_ok(p, n) || (size_t) (p + n - s) >= namesize || p + n - s > 214)
		return false;
	snprintf(name, namesize, "%.*s", (int) (p + n - s), s);
	if (!at)
		return true;
	at++;
	if (!*at || strlen(at) > 64 || at[0] == ' ' || at[strlen(at) - 1] == ' ' || at[0] == '-')
		return false;
	for (const char *c = at; *c; c++)
		if (!alnum(*c) && !strchr(".*+^~<>=|_- ", *c))
			return false;
	return true;
}

/* ---- the host's own configuration, asked once ---- */

/* Runs argv (a fixed host command) and returns its stdout, trimmed; NULL on failure. */
static char *capture(char *const *argv)
{
	posix_spawn_file_actions_t fa;
	int pfd[2];
	pid_t pid;
	char buf[8192];
	size_t len = 0;
	uint64_t deadline = now_monotonic_ns() + 20ull * 1000000000ull;
	int status;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addchdir_np(&fa, "/");
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		close(pfd[0]), close(pfd[1]);
		return NULL;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	for (;;) {
		struct pollfd pf = {.fd = pfd[0], .events = POLLIN};
		uint64_t now = now_monotonic_ns();
		ssize_t got;

		if (now >= deadline) {
			(void) kill(pid, SIGKILL);
			break;
		}
		if (poll(&pf, 1, (int) ((deadline - now) / 1000000) + 1) <= 0)
			continue;
		got = read(pfd[0], buf + len, sizeof(buf) - 1 - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0 || (len += (size_t) got) >= sizeof(buf) - 1)
			break;
	}
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	buf[len] = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return NULL;
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' ' || buf[len - 1] == '\r'))
		buf[--len] = 0;
	return strdup(buf);
}

static const char *find_exe(const char *const *candidates)
{
	for (size_t i = 0; candidates[i]; i++)
		if (access(candidates[i], X_OK) == 0)
			return candidates[i];
	return NULL;
}

static const char *const python_paths[] = {"/usr/bin/python3", "/usr/local/bin/python3", NULL};
static const char *const npm_paths[] = {"/usr/bin/npm", "/usr/local/bin/npm", NULL};

static pthread_mutex_t host_lock = PTHREAD_MUTEX_INITIALIZER;
static char *host_url[_PACKAGE_MANAGER_MAX];
static const char *host_source[_PACKAGE_MANAGER_MAX];

/* pip's index: PIP_INDEX_URL, else `pip config list` (env, install., global. keys), else
 * pip's default. */
static char *host_pip_index(const char **source)
{
	const char *env = getenv("PIP_INDEX_URL");
	const char *py = find_exe(python_paths);
	_cleanup_free_ char *out = NULL;
	static const char *const keys[] = {":env:.index-url='", "install.index-url='",
					   "global.index-url='"};

	if (env && *env) {
		*source = "PIP_INDEX_URL";
		return strdup(env);
	}
	if (py) {
		char *argv[] = {(char *) py,	   (char *) "-I",   (char *) "-m", (char *) "pip",
				(char *) "config", (char *) "list", NULL};

		out = capture(argv);
	}
	for (size_t k = 0; out && k < ARRAY_SIZE(keys); k++)
		for (char *line = out; line && *line;) {
			char *nl = strchr(line, '\n');
			size_t kl = strlen(keys[k]);

			if (nl)
				*nl = 0;
			if (strncmp(line, keys[k], kl) == 0 && strlen(line) > kl + 1 &&
			    line[strlen(line) - 1] == '\'') {
				*source = "pip config";
				line[strlen(line) - 1] = 0;
				return strdup(line + kl);
			}
			if (nl)
				*nl = '\n';
			line = nl ? nl + 1 : NULL;
		}
	*source = "pip's default";
	return strdup("https://pypi.org/simple");
}

static char *host_npm_registry(const char **source)
{
	const char *npm = find_exe(npm_paths);
	char *out = NULL;

	if (npm) {
		char *argv[] = {(char *) npm, (char *) "config", (char *) "get",
				(char *) "registry", NULL};

		out = capture(argv);
	}
	if (out && *out && !strchr(out, '\n')) {
		*source = "npm config";
		return out;
	}
	free(out);
	*source = "npm's default";
	return strdup("https://registry.npmjs.org/");
}

/* The registry a manager uses when the agent names none: the operator's, else the host's. */
static const char *default_registry(const AgentPackages *c, PackageManager m, const char **source)
{
	const char *configured = m == PACKAGE_MANAGER_PIP ? c->pip_index : c->npm_registry;
	const char *r;

	if (configured) {
		*source = m == PACKAGE_MANAGER_PIP ? "packages.pip_index" : "packages.npm_registry";
		return configured;
	}
	pthread_mutex_lock(&host_lock);
	if (!host_url[m])
		host_url[m] = m == PACKAGE_MANAGER_PIP ? host_pip_index(&host_source[m])
						       : host_npm_registry(&host_source[m]);
	r = host_url[m];
	*source = host_source[m];
	pthread_mutex_unlock(&host_lock);
	return r;
}

/* ---- one install per session at a time ---- */

static pthread_mutex_t busy_lock = PTHREAD_MUTEX_INITIALIZER;
static Session **busy;

static bool busy_enter(Session *s)
{
	bool ok = true;

	pthread_mutex_lock(&busy_lock);
	for (size_t i = 0; busy && busy[i]; i++)
		if (busy[i] == s)
			ok = false;
	if (ok) {
		size_t n = 0;
		Session **nb;

		while (busy && busy[n])
			n++;
		nb = realloc(busy, (n + 2) * sizeof(*nb));
		if (nb) {
			nb[n] = s;
			nb[n + 1] = NULL;
			busy = nb;
		} else
			ok = false;
	}
	pthread_mutex_unlock(&busy_lock);
	return ok;
}

static void busy_leave(Session *s)
{
	pthread_mutex_lock(&busy_lock);
	for (size_t i = 0; busy && busy[i]; i++)
		if (busy[i] == s) {
			for (; busy[i]; i++)
				busy[i] = busy[i + 1];
			break;
		}
	pthread_mutex_unlock(&busy_lock);
}

/* ---- reading what was installed (through the view, as the file tools do) ---- */

static json_t *read_json(Session *s, const char *vpath)
{
	char err[256];
	void *data = NULL;
	size_t len = 0;
	uint64_t size = 0;
	json_t *j;

	if (files_read(s, vpath, 16u << 20, &data, &len, &size, err, sizeof(err)) < 0)
		return NULL;
	j = json_loadb(data, len, 0, NULL);
	free(data);
	return j;
}

static json_t *pip_installed(json_t *report)
{
	json_t *out = json_array(), *it;
	size_t i;

	/* requested packages first, then what they needed */
	for (int pass = 0; pass < 2; pass++)
		json_array_foreach(json_object_get(report, "install"), i, it)
		{
			json_t *md = json_object_get(it, "metadata");
			bool req = json_is_true(json_object_get(it, "requested"));
			const char *n = json_string_value(json_object_get(md, "name"));
			const char *v = json_string_value(json_object_get(md, "version"));

			if (n && v && req == (pass == 0))
				json_array_append_new(out,
						      json_pack("{s:s, s:s, s:b}", "name", n,
								"version", v, "requested", req));
		}
	return out;
}

/* npm: each requested package as node_modules has it now, then every other entry of
 * npm's hidden lockfile that is new or changed since before. */
static json_t *npm_installed(json_t *before, json_t *after, char **names)
{
	json_t *out = json_array(), *pb = json_object_get(before, "packages"),
	       *pa = json_object_get(after, "packages"), *v;
	const char *key;

	for (size_t i = 0; names[i]; i++) {
		_cleanup_free_ char *k = strdup_printf("node_modules/%s", names[i]);
		const char *ver =
			k ? json_string_value(json_object_get(json_object_get(pa, k), "version"))
			  : NULL;

		if (ver)
			json_array_append_new(out, json_pack("{s:s, s:s, s:b}", "name", names[i],
							     "version", ver, "requested", 1));
	}
	json_object_foreach(pa, key, v)
	{
		const char *ver = json_string_value(json_object_get(v, "version"));
		const char *old =
			json_string_value(json_object_get(json_object_get(pb, key), "version"));
		const char *name = json_string_value(json_object_get(v, "name"));
		const char *nm = strstr(key, "node_modules/"), *last = nm;
		bool requested = false;

		if (!ver || !nm || (old && streq(old, ver)))
			continue;
		while ((nm = strstr(last + 1, "node_modules/")))
			last = nm;
		if (!name)
			name = last + strlen("node_modules/");
		for (size_t i = 0; names[i]; i++)
			if (streq(key + strlen("node_modules/"), names[i]) &&
			    strncmp(key, "node_modules/", 13) == 0)
				requested = true;
		if (!requested)
			json_array_append_new(out, json_pack("{s:s, s:s, s:b}", "name", name,
							     "version", ver, "requested", 0));
	}
	return out;
}

/* ---- the tool ---- */

/* A TOML array of basic strings: network.allow=["a:1", "b:2"]. */
static char *allow_override(char *const *entries)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		return NULL;
	fputs("network.allow=[", f);
	for (size_t i = 0; entries[i]; i++) {
		fprintf(f, "%s\"", i ? ", " : "");
		for (const char *c = entries[i]; *c; c++)
			fprintf(f, (*c == '"' || *c == '\\') ? "\\%c" : "%c", *c);
		fputc('"', f);
	}
	fputc(']', f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static char *render(const json_t *o, const char *manager)
{
	const char *out = json_string_value(json_object_get(o, "stdout"));
	const char *err = json_string_value(json_object_get(o, "stderr"));
	const json_t *inst = json_object_get(o, "installed"), *x;
	char *buf = NULL;
	size_t size = 0, i;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		return NULL;
	fprintf(f, "%s install from %s: exit_code %lld in %lld ms%s\n", manager,
		json_string_value(json_object_get(o, "registry")),
		json_integer_value(json_object_get(o, "exit_code")),
		json_integer_value(json_object_get(o, "duration_ms")),
		json_is_true(json_object_get(o, "timed_out")) ? " (timed out)" : "");
	if (json_array_size(inst)) {
		fputs("installed:", f);
		json_array_foreach(inst, i, x)
			fprintf(f, " %s %s%s", json_string_value(json_object_get(x, "name")),
				json_string_value(json_object_get(x, "version")),
				i + 1 < json_array_size(inst) ? "," : "");
		fprintf(f, " (in %s)\n", json_string_value(json_object_get(o, "target")));
	}
	if (out && *out)
		fprintf(f, "--- stdout ---\n%.8192s%s\n", out, strlen(out) > 8192 ? "\n[…]" : "");
	if (err && *err)
		fprintf(f, "--- stderr ---\n%.8192s%s\n", err, strlen(err) > 8192 ? "\n[…]" : "");
	fclose(f);
	return buf;
}

/* The Python wrapper: fails with NO_PIP_EXIT when the sandbox's python3 has no pip, makes
 * the report's directory, then runs pip's main with the arguments as given (argv, no shell). */
#define PIP_WRAPPER                                                                                \
	"import importlib.util, os, runpy, sys\n"                                                  \
	"if importlib.util.find_spec('pip') is None:\n"                                            \
	"    sys.stderr.write('sbxtrace: %s has no pip module inside the sandbox\\n' % "           \
	"sys.executable)\n"                                                                        \
	"    sys.exit(3)\n"                                                                        \
	"os.makedirs('" PIP_TARGET "', exist_ok=True)\n"                                           \
	"sys.argv[0] = 'pip'\n"                                                                    \
	"runpy.run_module('pip', run_name='__main__', alter_sys=True)\n"

typedef struct Install {
	PackageManager manager;
	const char *registry, *source;
	char **specs, **names, **allow, **argv, **overrides;
	json_t *env;
} Install;

static void install_done(Install *in)
{
	strv_free(in->specs);
	strv_free(in->names);
	strv_free(in->allow);
	strv_free(in->argv);
	strv_free(in->overrides);
	json_decref(in->env);
}

static int build_argv(const AgentPackages *c, Install *in, const char *exe, char *err,
		      size_t errsize)
{
	char entry[300], host[270];
	int r = 0;

	if (install_url_allow_entry(in->registry, entry, sizeof(entry)) < 0) {
		snprintf(
			err, errsize,
			"the %s registry '%.200s' (%s) is not an http(s) URL sbxtrace can open the "
			"network to (no credentials in it); set packages.%s in the server's config",
			manager_names[in->manager], in->registry, in->source,
			in->manager == PACKAGE_MANAGER_PIP ? "pip_index" : "npm_registry");
		return -EINVAL;
	}
	entry_host(entry, host, sizeof(host));
	if (strv_push(&in->allow, entry) < 0)
		return -ENOMEM;
	/* PyPI serves its files from another host */
	if (in->manager == PACKAGE_MANAGER_PIP && streq(host, "pypi.org") &&
	    !strv_contains(in->allow, "files.pythonhosted.org:443"))
		r = strv_push(&in->allow, "files.pythonhosted.org:443");
	for (size_t i = 0; r >= 0 && c->allow && c->allow[i]; i++)
		if (!strv_contains(in->allow, c->allow[i]))
			r = strv_push(&in->allow, c->allow[i]);
	if (r < 0)
		return -ENOMEM;

	if (in->manager == PACKAGE_MANAGER_PIP) {
		const char *a[] = {exe,
				   "-I",
				   "-c",
				   PIP_WRAPPER,
				   "--isolated",
				   "--disable-pip-version-check",
				   "--no-input",
				   "install",
				   "--root-user-action=ignore",
				   "--no-cache-dir",
				   "--upgrade",
				   "--target",
				   PIP_TARGET,
				   "--report",
				   PIP_REPORT,
				   "--retries",
				   "2",
				   "--timeout",
				   "30",
				   "--index-url",
				   in->registry,
				   NULL};

		in->argv = strv_copy((char *const *) a);
		if (in->argv && !c->install_scripts) {
			r = strv_push(&in->argv, "--only-binary");
			r = r < 0 ? r : strv_push(&in->argv, ":all:");
		}
		/* pip ignores a plain-http index that is not loopback unless told it is trusted */
		if (in->argv && r >= 0 && strncmp(in->registry, "http://", 7) == 0 &&
		    !entry_is_loopback(entry)) {
			r = strv_push(&in->argv, "--trusted-host");
			r = r < 0 ? r : strv_push(&in->argv, host);
		}
		in->env = json_pack("{s:s, s:s, s:s}", "HOME", "/tmp", "PYTHONPATH", "",
				    "NODE_PATH", "");
	} else {
		const char *a[] = {exe, "install", "--prefix", NPM_PREFIX, "--registry",
				   in->registry, "--no-audit", "--no-fund", "--no-update-notifier",
				   "--fetch-retries=2", "--fetch-retry-mintimeout=1000",
				   "--fetch-retry-maxtimeout=5000",
				   /* a .npmrc in /workspace cannot name the git program either */
				   "--git=git", NULL};

		in->argv = strv_copy((char *const *) a);
		if (in->argv && !c->install_scripts)
			r = strv_push(&in->argv, "--ignore-scripts");
		in->env = json_pack("{s:s, s:s, s:s, s:s, s:s}", "HOME", "/tmp", "NODE_PATH", "",
				    "PYTHONPATH", "", "npm_config_cache", "/tmp/.npm",
				    "npm_config_update_notifier", "false");
	}
	if (!in->argv || !in->env || r < 0 || strv_push(&in->argv, "--") < 0)
		return -ENOMEM;
	for (size_t i = 0; in->specs[i]; i++)
		if (strv_push(&in->argv, in->specs[i]) < 0)
			return -ENOMEM;
	{
		_cleanup_free_ char *allow = allow_override(in->allow);
		_cleanup_free_ char *wall =
			strdup_printf("limits.wall_time=%llus", (unsigned long long) c->timeout_s);
		_cleanup_free_ char *cpu =
			strdup_printf("limits.cpu_time=%llus", (unsigned long long) c->timeout_s);

		if (!allow || !wall || !cpu ||
		    strv_push(&in->overrides, "network.mode=allowlist") < 0 ||
		    strv_push(&in->overrides, allow) < 0 || strv_push(&in->overrides, wall) < 0 ||
		    strv_push(&in->overrides, cpu) < 0)
			return -ENOMEM;
	}
	return 0;
}

static void audit(Session *s, json_t *args, json_t *summary, uint64_t start)
{
	char dig[65];
	_cleanup_free_ char *text = json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS);
	json_t *f;

	record_sha256(text ? text : "", text ? strlen(text) : 0, dig);
	f = json_pack("{s:s, s:s, s:I, s:o}", "tool", "code_install_package", "args_sha256", dig,
		      "duration_ms", (json_int_t) ((now_monotonic_ns() - start) / 1000000),
		      "result", summary ? summary : json_null());
	if (f)
		record_event(s, "tool_call", f);
}

int install_tool(McpCall *call, json_t *args, void *userdata, json_t **ret)
{
	Agent *a = userdata;
	const AgentPackages *c = &a->config->packages;
	const char *sid = json_string_value(json_object_get(args, "session_id"));
	const char *mname = json_string_value(json_object_get(args, "manager"));
	const char *asked = json_string_value(json_object_get(args, "registry"));
	json_t *pkgs = json_object_get(args, "packages"), *x, *res = NULL, *o, *installed = NULL;
	json_t *lock_before = NULL;
	Install in = {.manager = _PACKAGE_MANAGER_MAX};
	uint64_t start = now_monotonic_ns();
	const char *exe;
	char err[768];
	Session *s;
	size_t i;
	int r;

	for (int m = 0; m < _PACKAGE_MANAGER_MAX; m++)
		if (mname && streq(mname, manager_names[m]))
			in.manager = m;
	if (in.manager == _PACKAGE_MANAGER_MAX) {
		*ret = mcp_result_error("manager must be pip or npm");
		return 0;
	}
	if (!c->managers[in.manager]) {
		*ret = mcp_result_error("%s installs are not enabled on this server "
					"(packages.managers in its config)",
					mname);
		return 0;
	}
	if (!json_is_array(pkgs) || json_array_size(pkgs) == 0 ||
	    json_array_size(pkgs) > MAX_PACKAGES) {
		*ret = mcp_result_error("packages must list 1 to %d package names", MAX_PACKAGES);
		return 0;
	}
	json_array_foreach(pkgs, i, x)
	{
		const char *spec = json_string_value(x);
		char name[256];
		bool good =
			spec && strlen(spec) <= 256 &&
			(in.manager == PACKAGE_MANAGER_PIP ? pip_spec_ok(spec, name, sizeof(name))
							   : npm_spec_ok(spec, name, sizeof(name)));

		if (!good) {
			install_done(&in);
			*ret = mcp_result_error(
				"packages[%zu]: '%.100s' is not a %s package name with an optional "
				"version (%s); URLs, paths, options and markers are refused",
				i, spec ? spec : "", mname,
				in.manager == PACKAGE_MANAGER_PIP
					? "name, name[extra], name==1.2, name>=1,<2, name~=1.4"
					: "name, @scope/name, name@1.2.3, name@^1.2, name@tag");
			return 0;
		}
		if (strv_push(&in.specs, spec) < 0 || strv_push(&in.names, name) < 0) {
			install_done(&in);
			return -ENOMEM;
		}
	}
	in.registry = default_registry(c, in.manager, &in.source);
	if (asked && !(in.registry && streq(asked, in.registry)) &&
	    !strv_contains(c->registries, asked)) {
		install_done(&in);
		*ret = mcp_result_error(
			"registry '%.200s' is not one this server offers: leave it out "
			"for %s, or name one of packages.registries in its config",
			asked, in.registry ? in.registry : "the default");
		return 0;
	}
	if (asked) {
		in.registry = asked;
		in.source = "the registry argument";
	}
	if (!in.registry) {
		install_done(&in);
		return -ENOMEM;
	}
	exe = find_exe(in.manager == PACKAGE_MANAGER_PIP ? python_paths : npm_paths);
	if (!exe) {
		install_done(&in);
		*ret = mcp_result_error(
			"%s is not installed on this host, so not inside the sandbox either "
			"(looked for %s): install %s on the host",
			mname, in.manager == PACKAGE_MANAGER_PIP ? python_paths[0] : npm_paths[0],
			in.manager == PACKAGE_MANAGER_PIP ? "python3 and python3-pip" : "npm");
		return 0;
	}
	r = build_argv(c, &in, exe, err, sizeof(err));
	if (r < 0) {
		install_done(&in);
		if (r == -ENOMEM)
			return r;
		*ret = mcp_result_error("%s", err);
		return 0;
	}

	s = session_get(a, mcp_call_conn(call)->tenant, sid);
	if (!s) {
		install_done(&in);
		*ret = mcp_result_error(
			"unknown session '%.64s': it does not exist, expired after "
			"being idle, or was destroyed. Call code_create_sandbox for a "
			"new one.",
			sid ? sid : "");
		return 0;
	}
	/* the private-data ratchet: once secret data entered, no network opens again; after
	 * confidential, only to the operator's trusted destinations */
	pthread_mutex_lock(&s->lock);
	{
		Sensitivity level = s->level;
		bool trusted = true;

		for (i = 0; in.allow[i]; i++)
			if (!strv_contains(a->config->trusted, in.allow[i]))
				trusted = false;
		pthread_mutex_unlock(&s->lock);
		if (level >= SENSITIVITY_SECRET ||
		    (level >= SENSITIVITY_CONFIDENTIAL && !trusted)) {
			audit(s, args, json_pack("{s:s}", "refused", "level"), start);
			*ret = mcp_result_error(
				"this session holds %s data: its network stays closed%s, so "
				"packages "
				"cannot be installed in it",
				sensitivity_to_string(level),
				level >= SENSITIVITY_SECRET
					? ""
					: " except to the server's trusted "
					  "destinations, and the registry is not one");
			session_put(s);
			install_done(&in);
			return 0;
		}
	}
	if (!busy_enter(s)) {
		session_put(s);
		install_done(&in);
		*ret = mcp_result_error("another install is running in this session; wait for it");
		return 0;
	}
	if (in.manager == PACKAGE_MANAGER_NPM)
		lock_before = read_json(s, NPM_LOCK);
	{
		ExecParams p = {
			.language = "install",
			.code = "",
			.env = in.env,
			.argv = in.argv,
			.cwd = in.manager == PACKAGE_MANAGER_PIP ? "/tmp" : NPM_PREFIX,
			.overrides = in.overrides,
		};

		r = exec_run(s, &p, call, &res, err, sizeof(err));
	}
	if (r >= 0) {
		int code = (int) json_integer_value(json_object_get(res, "exit_code"));
		const char *serr = json_string_value(json_object_get(res, "stderr"));

		if ((in.manager == PACKAGE_MANAGER_PIP && code == NO_PIP_EXIT && serr &&
		     strstr(serr, "sbxtrace: ") && strstr(serr, "has no pip module")) ||
		    (in.manager == PACKAGE_MANAGER_NPM && code == 127)) {
			snprintf(err, sizeof(err),
				 "%s is missing inside the sandbox (%s): install %s on the host "
				 "(the sandbox sees its /usr read-only)",
				 mname, in.manager == PACKAGE_MANAGER_PIP ? exe : "npm not found",
				 in.manager == PACKAGE_MANAGER_PIP ? "python3-pip" : "npm");
			r = -ENOENT;
		}
	}
	if (r >= 0) {
		if (in.manager == PACKAGE_MANAGER_PIP) {
			json_t *report = json_integer_value(json_object_get(res, "exit_code")) == 0
						 ? read_json(s, PIP_REPORT)
						 : NULL;

			installed = report ? pip_installed(report) : json_array();
			json_decref(report);
		} else {
			json_t *after = read_json(s, NPM_LOCK);

			installed = npm_installed(lock_before, after, in.names);
			json_decref(after);
		}
	}
	busy_leave(s);
	json_decref(lock_before);
	if (r < 0) {
		audit(s, args, json_pack("{s:s}", "refused", err), start);
		session_put(s);
		install_done(&in);
		json_decref(res);
		if (r == -ENOMEM)
			return r;
		*ret = mcp_result_error("cannot install: %s", err);
		return 0;
	}
	o = json_pack(
		"{s:s, s:s, s:s, s:s, s:O, s:o, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:s, s:O}",
		"session_id", s->id, "manager", mname, "registry", in.registry, "registry_source",
		in.source, "packages", pkgs, "installed", installed ? installed : json_array(),
		"exit_code", json_object_get(res, "exit_code"), "stdout",
		json_object_get(res, "stdout"), "stderr", json_object_get(res, "stderr"),
		"timed_out", json_object_get(res, "timed_out"), "killed_by",
		json_object_get(res, "killed_by") ?: json_null(), "truncated",
		json_object_get(res, "truncated") ?: json_false(), "duration_ms",
		json_object_get(res, "duration_ms"), "network_mode",
		json_object_get(res, "network_mode"), "target",
		in.manager == PACKAGE_MANAGER_PIP ? PIP_TARGET : NPM_PREFIX "/node_modules",
		"notices", json_object_get(res, "notices") ?: json_array());
	if (o) {
		json_t *al = json_array();

		for (i = 0; al && in.allow[i]; i++)
			json_array_append_new(al, json_string(in.allow[i]));
		json_object_set_new(o, "network_allow", al ? al : json_array());
		if (json_object_get(res, "sandbox_error"))
			json_object_set(o, "sandbox_error", json_object_get(res, "sandbox_error"));
	}
	json_decref(res);
	install_done(&in);
	if (!o) {
		session_put(s);
		return -ENOMEM;
	}
	{
		bool failed = json_integer_value(json_object_get(o, "exit_code")) != 0 ||
			      json_is_true(json_object_get(o, "timed_out"));
		_cleanup_free_ char *text = render(o, mname);

		audit(s, args,
		      json_pack("{s:O, s:O, s:O}", "exit_code", json_object_get(o, "exit_code"),
				"installed", json_object_get(o, "installed"), "registry",
				json_object_get(o, "registry")),
		      start);
		session_put(s);
		*ret = mcp_result_structured(o, text ? text : "", failed);
	}
	return *ret ? 0 : -ENOMEM;
}
