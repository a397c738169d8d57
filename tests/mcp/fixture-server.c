/* SPDX-License-Identifier: MIT */
/*
 * A test-only MCP server for the official conformance suite (tests/mcp/FIXTURES.md): the
 * suite's scenarios call fixed fixture tools, resources and prompts, which `sbxtrace mcp`
 * has no reason to offer. This server links the very MCP code of sbxtrace (agent/mcp*.c:
 * protocol, argument checking, the Streamable HTTP transport) and adds the fixtures, so the
 * suite exercises our protocol and transport; the fixture-free scenarios also run against
 * the real `sbxtrace mcp` (conformance-against.sh).
 *
 *   fixture-server HOST:PORT     prints "listening on URL" on stderr, serves until SIGTERM
 *   fixture-server --stdio       serves stdio until end of input (tools.test.mjs)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent/mcp.h"
#include "common/macros.h"

/* 1×1 PNG and a tiny WAV header, base64 */
#define PNG_1X1                                                                                    \
	"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="
#define WAV_TINY "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA="

static int simple_text(McpCall *c, json_t *a, void *u, json_t **ret)
{
	(void) c, (void) a, (void) u;
	*ret = json_pack("{s:[{s:s, s:s}]}", "content", "type", "text", "text",
			 "This is a simple text response for testing.");
	return 0;
}

static int image(McpCall *c, json_t *a, void *u, json_t **ret)
{
	(void) c, (void) a, (void) u;
	*ret = json_pack("{s:[{s:s, s:s, s:s}]}", "content", "type", "image", "data", PNG_1X1,
			 "mimeType", "image/png");
	return 0;
}

static int audio(McpCall *c, json_t *a, void *u, json_t **ret)
{
	(void) c, (void) a, (void) u;
	*ret = json_pack("{s:[{s:s, s:s, s:s}]}", "content", "type", "audio", "data", WAV_TINY,
			 "mimeType", "audio/wav");
	return 0;
}

static int embedded(McpCall *c, json_t *a, void *u, json_t **ret)
{
	(void) c, (void) a, (void) u;
	*ret = json_pack("{s:[{s:s, s:{s:s, s:s, s:s}}]}", "content", "type", "resource", "resource",
			 "uri", "test://embedded-resource", "mimeType", "text/plain", "text",
			 "This is an embedded resource content.");
	return 0;
}

static int mixed(McpCall *c, json_t *a, void *u, json_t **ret)
{
	(void) c, (void) a, (void) u;
	*ret = json_pack("{s:[{s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:{s:s, s:s, s:s}}]}", "content",
			 "type", "text", "text", "Multiple content types test:", "type", "image",
			 "data", PNG_1X1, "mimeType", "image/png", "type", "resource", "resource",
			 "uri", "test://mixed-content-resource", "mimeType", "application/json",
			 "text", "{\"test\":\"data\",\"value\":123}");
	return 0;
}

static int error_tool(McpCall *c, json_t *a, void *u, json_t **ret)
{
	(void) c, (void) a, (void) u;
	*ret = mcp_result_error("This tool intentionally returns an error for testing");
	return 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static json_t *text_result(const char *text)
{
	return json_pack("{s:[{s:s, s:s}]}", "content", "type", "text", "text", text);
}

/* Over HTTP these travel on the call's SSE stream (the client accepts it), over stdio as lines. */
static int progress(McpCall *c, json_t *a, void *u, json_t **ret)
{
	(void) a, (void) u;
	mcp_call_progress(c, 0, 100, "started");
	sleep_ms(50);
	mcp_call_progress(c, 50, 100, "halfway");
	sleep_ms(50);
	mcp_call_progress(c, 100, 100, "done");
	*ret = text_result("Progress complete");
	return 0;
}

static int logging(McpCall *c, json_t *a, void *u, json_t **ret)
{
	(void) a, (void) u;
	mcp_call_log(c, MCP_LOG_INFO, "Tool execution started");
	sleep_ms(50);
	mcp_call_log(c, MCP_LOG_INFO, "Tool processing data");
	sleep_ms(50);
	mcp_call_log(c, MCP_LOG_INFO, "Tool execution completed");
	*ret = text_result("Logging complete");
	return 0;
}

/* A request to the client; a tool error the caller can read when it cannot be made. */
static int ask_client(McpCall *c, const char *method, json_t *params, json_t **ret_result,
		      json_t **ret)
{
	int r = mcp_call_request(c, method, params, 60000, ret_result);

	json_decref(params);
	if (r == 0)
		return 0;
	if (r == -EREMOTEIO) {
		*ret = mcp_result_error("%s failed: %s", method,
					json_string_value(json_object_get(*ret_result, "message")) ?: "?");
		json_decref(*ret_result);
	} else
		*ret = mcp_result_error("%s failed: %s", method, strerror(-r));
	*ret_result = NULL;
	return 1;
}

static int sampling(McpCall *c, json_t *a, void *u, json_t **ret)
{
	const char *prompt = json_string_value(json_object_get(a, "prompt")) ?: "";
	json_t *res, *content;
	char text[1024];

	(void) u;
	if (ask_client(c, "sampling/createMessage",
		       json_pack("{s:[{s:s, s:{s:s, s:s}}], s:i}", "messages", "role", "user",
				 "content", "type", "text", "text", prompt, "maxTokens", 100),
		       &res, ret))
		return 0;
	content = json_object_get(res, "content");
	snprintf(text, sizeof(text), "LLM response: %.900s",
		 json_string_value(json_object_get(content, "text")) ?: "(no text)");
	json_decref(res);
	*ret = text_result(text);
	return 0;
}

/* Asks with that schema; the result says what the user did. */
static int elicit(McpCall *c, const char *message, json_t *schema, json_t **ret)
{
	_cleanup_free_ char *content = NULL;
	json_t *res;
	char text[2048];

	if (ask_client(c, "elicitation/create",
		       json_pack("{s:s, s:o}", "message", message, "requestedSchema", schema), &res,
		       ret))
		return 0;
	content = json_dumps(json_object_get(res, "content") ?: json_null(), JSON_COMPACT);
	snprintf(text, sizeof(text), "User response: action=%s, content=%.1900s",
		 json_string_value(json_object_get(res, "action")) ?: "?", content ?: "null");
	json_decref(res);
	*ret = text_result(text);
	return 0;
}

static int elicitation(McpCall *c, json_t *a, void *u, json_t **ret)
{
	(void) u;
	return elicit(c, json_string_value(json_object_get(a, "message")) ?: "Please provide your information",
		      json_pack("{s:s, s:{s:{s:s, s:s}, s:{s:s, s:s}}, s:[s, s]}", "type", "object",
				"properties", "username", "type", "string", "description",
				"Your username", "email", "type", "string", "description",
				"Your email address", "required", "username", "email"),
		      ret);
}

static int elicitation_defaults(McpCall *c, json_t *a, void *u, json_t **ret)
{
	(void) a, (void) u;
	return elicit(c, "Please review and update the form fields with defaults",
		      json_pack("{s:s, s:{s:{s:s, s:s}, s:{s:s, s:i}, s:{s:s, s:f}, s:{s:s, s:[s, s, s], s:s},"
				" s:{s:s, s:b}}}",
				"type", "object", "properties",
				"name", "type", "string", "default", "John Doe",
				"age", "type", "integer", "default", 30,
				"score", "type", "number", "default", 95.5,
				"status", "type", "string", "enum", "active", "inactive", "pending",
				"default", "active",
				"verified", "type", "boolean", "default", 1),
		      ret);
}

static int elicitation_enums(McpCall *c, json_t *a, void *u, json_t **ret)
{
	(void) a, (void) u;
	return elicit(c, "Please select options from the enum fields",
		      json_pack("{s:s, s:{"
				"s:{s:s, s:[s, s, s]},"
				"s:{s:s, s:[{s:s, s:s}, {s:s, s:s}, {s:s, s:s}]},"
				"s:{s:s, s:[s, s, s], s:[s, s, s]},"
				"s:{s:s, s:{s:s, s:[s, s, s]}},"
				"s:{s:s, s:{s:[{s:s, s:s}, {s:s, s:s}, {s:s, s:s}]}}}}",
				"type", "object", "properties",
				"untitledSingle", "type", "string", "enum", "option1", "option2", "option3",
				"titledSingle", "type", "string", "oneOf",
				"const", "value1", "title", "First Option",
				"const", "value2", "title", "Second Option",
				"const", "value3", "title", "Third Option",
				"legacyEnum", "type", "string", "enum", "opt1", "opt2", "opt3",
				"enumNames", "Option One", "Option Two", "Option Three",
				"untitledMulti", "type", "array", "items", "type", "string", "enum",
				"option1", "option2", "option3",
				"titledMulti", "type", "array", "items", "anyOf",
				"const", "value1", "title", "First Choice",
				"const", "value2", "title", "Second Choice",
				"const", "value3", "title", "Third Choice"),
		      ret);
}

#define EMPTY_SCHEMA "{\"type\":\"object\"}"
#define PROMPT_SCHEMA                                                                              \
	"{\"type\":\"object\",\"properties\":{\"prompt\":{\"type\":\"string\"}},\"required\":[\"prompt\"]}"
#define MESSAGE_SCHEMA "{\"type\":\"object\",\"properties\":{\"message\":{\"type\":\"string\"}}}"

static const McpTool fixture_tools[] = {
	{.name = "test_simple_text", .description = "returns simple text", .input_schema = EMPTY_SCHEMA, .handler = simple_text},
	{.name = "test_image_content", .description = "returns an image", .input_schema = EMPTY_SCHEMA, .handler = image},
	{.name = "test_audio_content", .description = "returns audio", .input_schema = EMPTY_SCHEMA, .handler = audio},
	{.name = "test_embedded_resource", .description = "returns an embedded resource", .input_schema = EMPTY_SCHEMA, .handler = embedded},
	{.name = "test_multiple_content_types", .description = "returns mixed content", .input_schema = EMPTY_SCHEMA, .handler = mixed},
	{.name = "test_error_handling", .description = "returns a tool error", .input_schema = EMPTY_SCHEMA, .handler = error_tool},
	{.name = "test_tool_with_progress", .description = "reports progress", .input_schema = EMPTY_SCHEMA, .handler = progress},
	{.name = "test_tool_with_logging", .description = "sends log messages", .input_schema = EMPTY_SCHEMA, .handler = logging},
	{.name = "test_sampling", .description = "asks the client's model", .input_schema = PROMPT_SCHEMA, .handler = sampling},
	{.name = "test_elicitation", .description = "asks the user", .input_schema = MESSAGE_SCHEMA, .handler = elicitation},
	{.name = "test_elicitation_sep1034_defaults", .description = "asks the user, with defaults", .input_schema = EMPTY_SCHEMA, .handler = elicitation_defaults},
	{.name = "test_elicitation_sep1330_enums", .description = "asks the user, with enums", .input_schema = EMPTY_SCHEMA, .handler = elicitation_enums},
};

static json_t *text_message(const char *text)
{
	return json_pack("{s:s, s:{s:s, s:s}}", "role", "user", "content", "type", "text", "text",
			 text);
}

static json_t *fallback(void *userdata, McpConn *c, const char *method, const json_t *params,
			int *reterr_code)
{
	const char *uri = json_string_value(json_object_get(params, "uri"));
	const char *name = json_string_value(json_object_get(params, "name"));
	const json_t *args = json_object_get(params, "arguments");

	(void) userdata, (void) c;
	if (streq(method, "resources/list"))
		return json_pack("{s:[{s:s, s:s, s:s}, {s:s, s:s, s:s}]}", "resources", "uri",
				 "test://static-text", "name", "static-text", "mimeType", "text/plain",
				 "uri", "test://static-binary", "name", "static-binary", "mimeType",
				 "image/png");
	if (streq(method, "resources/templates/list"))
		return json_pack("{s:[{s:s, s:s, s:s}]}", "resourceTemplates", "uriTemplate",
				 "test://template/{id}/data", "name", "template", "mimeType",
				 "application/json");
	if (streq(method, "resources/subscribe") || streq(method, "resources/unsubscribe"))
		return json_object();
	if (streq(method, "resources/read") && uri) {
		if (streq(uri, "test://static-text"))
			return json_pack("{s:[{s:s, s:s, s:s}]}", "contents", "uri", uri, "mimeType",
					 "text/plain", "text",
					 "This is the content of the static text resource.");
		if (streq(uri, "test://static-binary"))
			return json_pack("{s:[{s:s, s:s, s:s}]}", "contents", "uri", uri, "mimeType",
					 "image/png", "blob", PNG_1X1);
		if (strncmp(uri, "test://template/", 16) == 0) {
			char id[64], text[256];

			if (sscanf(uri + 16, "%63[^/]/data", id) == 1) {
				snprintf(text, sizeof(text),
					 "{\"id\":\"%s\",\"templateTest\":true,\"data\":\"Data for ID: %s\"}",
					 id, id);
				return json_pack("{s:[{s:s, s:s, s:s}]}", "contents", "uri", uri,
						 "mimeType", "application/json", "text", text);
			}
		}
		*reterr_code = -32002;
		return NULL;
	}
	if (streq(method, "prompts/list"))
		return json_pack(
			"{s:[{s:s, s:s}, {s:s, s:s, s:[{s:s, s:b}, {s:s, s:b}]}, {s:s, s:s, s:[{s:s, "
			"s:b}]}, {s:s, s:s}]}",
			"prompts", "name", "test_simple_prompt", "description", "a simple prompt",
			"name", "test_prompt_with_arguments", "description", "a prompt with arguments",
			"arguments", "name", "arg1", "required", 1, "name", "arg2", "required", 1,
			"name", "test_prompt_with_embedded_resource", "description",
			"a prompt with a resource", "arguments", "name", "resourceUri", "required", 1,
			"name", "test_prompt_with_image", "description", "a prompt with an image");
	if (streq(method, "prompts/get") && name) {
		if (streq(name, "test_simple_prompt"))
			return json_pack("{s:[o]}", "messages",
					 text_message("This is a simple prompt for testing."));
		if (streq(name, "test_prompt_with_arguments")) {
			char text[512];

			snprintf(text, sizeof(text), "Prompt with arguments: arg1='%.200s', arg2='%.200s'",
				 json_string_value(json_object_get(args, "arg1")) ?: "",
				 json_string_value(json_object_get(args, "arg2")) ?: "");
			return json_pack("{s:[o]}", "messages", text_message(text));
		}
		if (streq(name, "test_prompt_with_embedded_resource"))
			return json_pack("{s:[{s:s, s:{s:s, s:{s:s, s:s, s:s}}}, o]}", "messages", "role",
					 "user", "content", "type", "resource", "resource", "uri",
					 json_string_value(json_object_get(args, "resourceUri"))
						 ?: "test://example-resource",
					 "mimeType", "text/plain", "text",
					 "Embedded resource content for testing.",
					 text_message("Please process the embedded resource above."));
		if (streq(name, "test_prompt_with_image"))
			return json_pack("{s:[{s:s, s:{s:s, s:s, s:s}}, o]}", "messages", "role", "user",
					 "content", "type", "image", "data", PNG_1X1, "mimeType",
					 "image/png", text_message("Please analyze the image above."));
		*reterr_code = MCP_INVALID_PARAMS;
		return NULL;
	}
	if (streq(method, "completion/complete"))
		return json_pack("{s:{s:[s], s:i, s:b}}", "completion", "values", "test", "total", 1,
				 "hasMore", 0);
	return NULL;
}

static void listening(void *userdata, const char *url)
{
	(void) userdata;
	fprintf(stderr, "listening on %s\n", url);
	fflush(stderr);
}

int main(int argc, char *argv[])
{
	McpHttpOptions o = {.listen = argc > 1 ? argv[1] : "127.0.0.1:0",
			    .default_tenant = "local",
			    .listening = listening};
	json_t *caps = json_pack("{s:{s:b, s:b}, s:{s:b}, s:{}}", "resources", "subscribe", 1,
				 "listChanged", 0, "prompts", "listChanged", 0, "completions");
	McpServer *s = mcp_server_new("sbxtrace-conformance-fixtures", "0");
	int r;

	if (!s || !caps)
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(fixture_tools); i++)
		if (mcp_server_add_tool(s, &fixture_tools[i]) < 0)
			return 1;
	mcp_server_set_fallback(s, fallback, NULL);
	mcp_server_set_capabilities(s, caps);
	if (argc > 1 && streq(argv[1], "--stdio"))
		r = mcp_serve_stdio(s, "local", 0, 1);
	else
		r = mcp_serve_http(s, &o);
	mcp_server_free(s);
	json_decref(caps);
	return r < 0 ? 1 : 0;
}
