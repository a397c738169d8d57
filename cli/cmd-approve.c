/* SPDX-License-Identifier: MIT */
/*
 * sbxtrace approvals [--socket PATH] [--json]
 * sbxtrace approve ID (--allow|--allow-session|--deny) [--note TEXT] [--socket PATH]
 *
 * The human side of `sbxtrace mcp`'s approval socket (docs/agents.md, "Human approval"): list
 * the tool calls waiting for a decision, and decide one. The protocol is one JSON line each
 * way per connection: {"op":"list"} and {"op":"decide","id","decision","note"}.
 *
 * Without --socket (or $SBXTRACE_APPROVAL_SOCKET), every approval-*.sock in the default
 * directory is asked: approvals lists them all, approve goes to the one that knows ID.
 */
#include "cli/cli.h"

#include <dirent.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent/agent.h"
#include "common/log.h"
#include "common/macros.h"
#include "common/util.h"

static void help_approve(FILE *f)
{
	fputs("Usage: sbxtrace approve ID (--allow|--allow-session|--deny) [--note TEXT]\n"
	      "                        [--socket PATH]\n"
	      "       sbxtrace approvals [--socket PATH] [--json]\n"
	      "\n"
	      "Decide a tool call that `sbxtrace mcp` holds for a human's approval (its\n"
	      "config's [approval] require), or list those waiting.\n"
	      "\n"
	      "Options:\n"
	      "      --allow           allow this call once\n"
	      "      --allow-session   allow it, and later calls of the same rule in its session\n"
	      "      --deny            refuse it (the agent gets an error)\n"
	      "      --note TEXT       a note for the audit log and the agent\n"
	      "      --socket PATH     the server's approval socket (what it printed on stderr;\n"
	      "                        default: $SBXTRACE_APPROVAL_SOCKET, else every\n"
	      "                        approval-*.sock in $XDG_RUNTIME_DIR/sbxtrace)\n"
	      "      --json            approvals: the list as JSON\n"
	      "  -h, --help            show this help\n"
	      "\n"
	      "Exit status: 0 done; 1 no such request (decided, timed out, unknown); 125 no\n"
	      "server reachable.\n",
	      f);
}

/* One request, one reply; NULL (with a message logged) when the socket cannot be used. */
static json_t *exchange(const char *path, json_t *req, bool quiet)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	_cleanup_free_ char *text = json_dumps(req, JSON_COMPACT);
	_cleanup_close_ int fd = -1;
	char buf[1 << 16];
	size_t n = 0;
	json_t *reply;

	if (!text || strlen(path) >= sizeof(sa.sun_path))
		return NULL;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
		if (!quiet)
			log_error("approve: cannot reach the approval socket '%s': %m", path);
		return NULL;
	}
	if (write_all(fd, text, strlen(text)) < 0 || write_all(fd, "\n", 1) < 0)
		return NULL;
	(void) shutdown(fd, SHUT_WR);
	while (n < sizeof(buf) - 1) {
		ssize_t k = read(fd, buf + n, sizeof(buf) - 1 - n);

		if (k <= 0)
			break;
		n += (size_t) k;
	}
	buf[n] = 0;
	reply = json_loads(buf, 0, NULL);
	if (!json_is_object(reply) && !quiet)
		log_error("approve: '%s' did not answer as an approval socket does", path);
	return reply;
}

/* The sockets to ask: the one named, or every approval-*.sock of the default directory. */
static char **sockets(const char *given)
{
	const char *env = getenv("SBXTRACE_APPROVAL_SOCKET");
	_cleanup_free_ char *dir = NULL;
	char **v = calloc(1, sizeof(char *));
	struct dirent *de;
	DIR *d;

	if (!v)
		return NULL;
	if (given || (env && *env)) {
		if (strv_push(&v, given ? given : env) < 0)
			return strv_free(v);
		return v;
	}
	dir = agent_approval_socket_dir();
	d = dir ? opendir(dir) : NULL;
	while (d && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		_cleanup_free_ char *p = NULL;

		if (strncmp(de->d_name, "approval-", 9) != 0 || n < 5 ||
		    strcmp(de->d_name + n - 5, ".sock") != 0)
			continue;
		p = strdup_printf("%s/%s", dir, de->d_name);
		if (!p || strv_push(&v, p) < 0)
			break;
	}
	if (d)
		closedir(d);
	return v;
}

static int cmd_common(int argc, char *argv[], bool approve)
{
	enum { ARG_ALLOW = 0x100, ARG_ALLOW_SESSION, ARG_DENY, ARG_NOTE, ARG_SOCKET, ARG_JSON };
	static const struct option options[] = {{"allow", no_argument, NULL, ARG_ALLOW},
						{"allow-session", no_argument, NULL, ARG_ALLOW_SESSION},
						{"deny", no_argument, NULL, ARG_DENY},
						{"note", required_argument, NULL, ARG_NOTE},
						{"socket", required_argument, NULL, ARG_SOCKET},
						{"json", no_argument, NULL, ARG_JSON},
						{"help", no_argument, NULL, 'h'},
						{}};
	const char *decision = NULL, *note = NULL, *socket_path = NULL, *id = NULL;
	bool as_json = false, reached = false;
	char **socks;
	json_t *all;
	int c, ret = 1;

	optind = 0;
	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
		switch (c) {
		case ARG_ALLOW:
		case ARG_ALLOW_SESSION:
		case ARG_DENY:
			if (decision) {
				log_error("approve: give one of --allow, --allow-session, --deny");
				return EXIT_SANDBOX_ERROR;
			}
			decision = c == ARG_ALLOW ? "allow_once" : c == ARG_DENY ? "deny" : "allow_session";
			break;
		case ARG_NOTE:
			note = optarg;
			break;
		case ARG_SOCKET:
			socket_path = optarg;
			break;
		case ARG_JSON:
			as_json = true;
			break;
		case 'h':
			help_approve(stdout);
			return 0;
		default:
			help_approve(stderr);
			return EXIT_SANDBOX_ERROR;
		}
	if (approve) {
		if (optind + 1 != argc || !decision) {
			log_error("approve: usage: sbxtrace approve ID --allow|--allow-session|--deny");
			return EXIT_SANDBOX_ERROR;
		}
		id = argv[optind];
	} else if (optind != argc || decision || note) {
		log_error("approvals: usage: sbxtrace approvals [--socket PATH] [--json]");
		return EXIT_SANDBOX_ERROR;
	}
	socks = sockets(socket_path);
	if (!socks)
		return EXIT_SANDBOX_ERROR;
	all = json_array();
	for (size_t i = 0; socks[i] && all; i++) {
		/* several servers: the ones that are gone (stale sockets) are skipped quietly */
		bool quiet = !socket_path && !getenv("SBXTRACE_APPROVAL_SOCKET");
		json_t *req = approve ? json_pack("{s:s, s:s, s:s, s:s?}", "op", "decide", "id", id,
						  "decision", decision, "note", note)
				      : json_pack("{s:s}", "op", "list");
		json_t *reply = req ? exchange(socks[i], req, quiet) : NULL, *x;
		size_t k;

		json_decref(req);
		if (!json_is_object(reply)) {
			json_decref(reply);
			continue;
		}
		reached = true;
		if (approve) {
			if (json_is_true(json_object_get(reply, "ok"))) {
				printf("%s: %s\n", id, decision);
				ret = 0;
				json_decref(reply);
				break;
			}
			if (socket_path || !socks[i + 1])
				log_error("approve: %s: %s", id,
					  json_string_value(json_object_get(reply, "error")) ?: "refused");
		} else
			json_array_foreach(json_object_get(reply, "pending"), k, x) {
				json_object_set_new(x, "socket", json_string(socks[i]));
				json_array_append(all, x);
			}
		json_decref(reply);
	}
	if (!reached) {
		log_error("%s: no approval socket answered (is `sbxtrace mcp` running with an [approval] "
			  "config? give --socket PATH as it printed)",
			  approve ? "approve" : "approvals");
		ret = EXIT_SANDBOX_ERROR;
	} else if (!approve) {
		json_t *x;
		size_t k;

		ret = 0;
		if (as_json) {
			char *t = json_dumps(all, JSON_INDENT(1));

			printf("%s\n", t ? t : "[]");
			free(t);
		} else if (json_array_size(all) == 0)
			printf("no tool call is waiting for approval\n");
		else
			json_array_foreach(all, k, x)
				printf("%s  %-8s %s%s%s  (%s; waited %llds of %llds)\n%s\n",
				       json_string_value(json_object_get(x, "id")),
				       json_string_value(json_object_get(x, "risk")),
				       json_string_value(json_object_get(x, "tool")),
				       json_object_get(x, "session_id") ? " in " : "",
				       json_string_value(json_object_get(x, "session_id")) ?: "",
				       json_string_value(json_object_get(x, "rule")),
				       json_integer_value(json_object_get(x, "waited_s")),
				       json_integer_value(json_object_get(x, "timeout_s")),
				       json_string_value(json_object_get(x, "arguments")) ?: "");
	}
	json_decref(all);
	strv_free(socks);
	return ret;
}

int cmd_approve(int argc, char *argv[])
{
	return cmd_common(argc, argv, true);
}

int cmd_approvals(int argc, char *argv[])
{
	return cmd_common(argc, argv, false);
}
