/* SPDX-License-Identifier: MIT */
/*
 * sbxtrace mcp [--http HOST:PORT] [--config FILE] [--data-dir DIR] [--shard NAME]
 *              [--http-stateless]
 *
 * Serves the agent layer's tools over MCP (docs/agents.md): stdio by default, Streamable HTTP
 * with --http. Everything on stdout belongs to the protocol; our messages go to stderr.
 */
#include "cli/cli.h"

#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/mcp.h"
#include "common/log.h"
#include "common/macros.h"

static void help(FILE *f)
{
	fputs("Usage: sbxtrace mcp [OPTIONS]\n"
	      "\n"
	      "Serve sandbox sessions to AI agents over the Model Context Protocol: tools to\n"
	      "create a session, execute python/javascript/shell code in it, write, read and\n"
	      "list its files, mark private data (the network ratchet) and destroy it.\n"
	      "\n"
	      "Options:\n"
	      "      --http HOST:PORT  serve Streamable HTTP at http://HOST:PORT/mcp instead of\n"
	      "                        stdio (port 0: any free port; the first line on stderr\n"
	      "                        says 'listening on URL')\n"
	      "      --config FILE     the operator's config (TOML, docs/agents.md): data\n"
	      "                        directory, presets, limits, network, tenants and tokens\n"
	      "      --data-dir DIR    where sessions live (overrides the config's data_dir;\n"
	      "                        default ~/.local/state/sbxtrace/sessions)\n"
	      "      --approval-socket PATH\n"
	      "                        where `sbxtrace approve` reaches this server when the\n"
	      "                        config's [approval] requires approval (default:\n"
	      "                        $XDG_RUNTIME_DIR/sbxtrace/approval-PID.sock; \"none\":\n"
	      "                        only the client's elicitation)\n"
	      "      --shard NAME      session ids become sbx_NAME_… (1-16 of a-z, 0-9): what\n"
	      "                        a router in front of many servers routes on\n"
	      "                        (overrides the config's shard; docs/deploy.md)\n"
	      "      --http-stateless  answer requests of an unknown or missing MCP session\n"
	      "                        as if initialized, so that any server behind a load\n"
	      "                        balancer can take any request (docs/deploy.md)\n"
	      "  -h, --help            show this help\n"
	      "\n"
	      "Examples:\n"
	      "  sbxtrace mcp                                # for an MCP host that spawns it\n"
	      "  sbxtrace mcp --http 127.0.0.1:8765          # one local server, many clients\n"
	      "  sbxtrace mcp --http 0.0.0.0:8765 --config /etc/sbxtrace/mcp.toml\n"
	      "\n"
	      "MCP host config (Claude Desktop, VS Code, Cursor …):\n"
	      "  {\"mcpServers\": {\"sbxtrace\": {\"command\": \"sbxtrace\", \"args\": [\"mcp\"]}}}\n",
	      f);
}

static const char *tenant_for_token(void *userdata, const char *token)
{
	return agent_config_tenant_for_token(userdata, token);
}

static const char *approval_socket;

static void say_approval_socket(void)
{
	if (approval_socket)
		fprintf(stderr, "approval socket %s\n", approval_socket);
	fflush(stderr);
}

static void listening(void *userdata, const char *url)
{
	(void) userdata;
	fprintf(stderr, "listening on %s\n", url); /* the first line: tests and scripts read it */
	say_approval_socket();
}

DEFINE_FREEP(AgentConfig, agent_config_free)

int cmd_mcp(int argc, char *argv[])
{
	enum { ARG_HTTP = 0x100, ARG_CONFIG, ARG_DATA_DIR, ARG_APPROVAL_SOCKET, ARG_SHARD,
	       ARG_STATELESS };
	static const struct option options[] = {{"http", required_argument, NULL, ARG_HTTP},
						{"config", required_argument, NULL, ARG_CONFIG},
						{"data-dir", required_argument, NULL, ARG_DATA_DIR},
						{"approval-socket", required_argument, NULL,
						 ARG_APPROVAL_SOCKET},
						{"shard", required_argument, NULL, ARG_SHARD},
						{"http-stateless", no_argument, NULL, ARG_STATELESS},
						{"help", no_argument, NULL, 'h'},
						{}};
	_cleanup_(agent_config_freep) AgentConfig *config = NULL;
	const char *http = NULL, *config_path = NULL, *data_dir = NULL, *socket_path = NULL;
	const char *shard = NULL;
	bool stateless = false;
	char self[PATH_MAX], err[2048] = "";
	McpServer *server;
	Agent *agent = NULL;
	ssize_t n;
	int c, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0)
		switch (c) {
		case ARG_HTTP:
			http = optarg;
			break;
		case ARG_CONFIG:
			config_path = optarg;
			break;
		case ARG_DATA_DIR:
			data_dir = optarg;
			break;
		case ARG_APPROVAL_SOCKET:
			socket_path = optarg;
			break;
		case ARG_SHARD:
			shard = optarg;
			break;
		case ARG_STATELESS:
			stateless = true;
			break;
		case 'h':
			help(stdout);
			return 0;
		default:
			help(stderr);
			return EXIT_SANDBOX_ERROR;
		}
	if (optind < argc) {
		log_error("mcp: unexpected argument '%.64s'; try 'sbxtrace mcp --help'", argv[optind]);
		return EXIT_SANDBOX_ERROR;
	}

	r = agent_config_load(config_path, data_dir, &config, err, sizeof(err));
	if (r < 0) {
		log_error("mcp: %s", err);
		return EXIT_SANDBOX_ERROR;
	}
	if (shard && agent_config_set_shard(config, shard) < 0) {
		log_error("mcp: --shard '%.64s': must be 1 to 16 lowercase letters and digits, "
			  "like 's0'",
			  shard);
		return EXIT_SANDBOX_ERROR;
	}
	if (stateless && !http) {
		log_error("mcp: --http-stateless needs --http");
		return EXIT_SANDBOX_ERROR;
	}
	if (stateless)
		config->http_stateless = true;
	if (http && config->n_tenants == 0 && !strncmp(http, "0.0.0.0", 7)) {
		log_error("mcp: --http %s listens beyond this machine without tenants; add "
			  "[[tenant]] entries with tokens to the config, or listen on 127.0.0.1",
			  http);
		return EXIT_SANDBOX_ERROR;
	}
	/* executions run this very binary: the path it was started from, as the kernel saw it */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		log_error("mcp: cannot find our own binary in /proc/self/exe");
		return EXIT_SANDBOX_ERROR;
	}
	self[n] = 0;
	(void) signal(SIGPIPE, SIG_IGN);

	r = agent_new(config, self, &agent, err, sizeof(err));
	if (r < 0) {
		log_error("mcp: %s", err);
		return EXIT_SANDBOX_ERROR;
	}
	r = agent_approval_start(agent, socket_path, &approval_socket, err, sizeof(err));
	if (r < 0) {
		log_error("mcp: %s", *err ? err : strerror(-r));
		agent_approval_stop(agent);
		agent_free(agent);
		return EXIT_SANDBOX_ERROR;
	}
	server = mcp_server_new("sbxtrace", SBX_VERSION);
	if (!server || agent_register_tools(agent, server) < 0) {
		log_error("mcp: out of memory");
		agent_approval_stop(agent);
		agent_free(agent);
		mcp_server_free(server);
		return EXIT_SANDBOX_ERROR;
	}
	mcp_server_set_instructions(
		server, "Run code you write in a local sandbox. Create a session with "
			"code_create_sandbox and pass its session_id to the other tools; files "
			"in /workspace persist between calls. The network is off unless the "
			"session asked for it; private data restricts it for good.");

	if (http) {
		McpHttpOptions o = {
			.listen = http,
			.tenant_for_token = config->n_tenants ? tenant_for_token : NULL,
			.userdata = config,
			.default_tenant = "local",
			.allowed_hosts = config->allowed_hosts,
			.allowed_origins = config->allowed_origins,
			.stateless = config->http_stateless,
			.listening = listening,
		};

		r = mcp_serve_http(server, &o);
		if (r < 0)
			log_error_errno(r, "mcp: cannot listen on '%.64s' (HOST:PORT)", http);
	} else {
		say_approval_socket();
		r = mcp_serve_stdio(server, "local", STDIN_FILENO, STDOUT_FILENO);
	}
	agent_approval_stop(agent);
	agent_free(agent);
	mcp_server_free(server);
	return r < 0 ? EXIT_SANDBOX_ERROR : 0;
}
