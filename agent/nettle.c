/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 and base64 from libnettle, opened with dlopen() on first use.
 *
 * Why not linked: only the agent layer (the MCP server's records, file tools and contexts)
 * uses them, and every `sbxtrace run` paid for the library at its start: mapping it,
 * resolving its symbols (the binary is linked with -z now) and its constructor, which runs
 * CPUID for its per-CPU code (a VM exit on a virtual machine). Issue 20, docs/performance.md
 * ("The supervisor's own start"). The headers are still used at build time (the context
 * structs and the length macros); the SONAME comes from agent/meson.build, and
 * debian/control depends on the package that ships it.
 *
 * agent_new() calls agent_nettle_load(), so a server that cannot load the library refuses to
 * start and says why; the functions below load it too (once, under pthread_once), for
 * callers outside a server, and then report -ELIBACC instead of a wrong result.
 */
#include "agent/internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <nettle/base64.h>
#include <nettle/sha2.h>
#include <pthread.h>
#include <stdlib.h>

#include "common/log.h"

static struct {
	__typeof__(nettle_sha256_init) *sha256_init;
	__typeof__(nettle_sha256_update) *sha256_update;
	__typeof__(nettle_sha256_digest) *sha256_digest;
	__typeof__(nettle_base64_encode_raw) *base64_encode_raw;
	__typeof__(nettle_base64_decode_init) *base64_decode_init;
	__typeof__(nettle_base64_decode_update) *base64_decode_update;
	__typeof__(nettle_base64_decode_final) *base64_decode_final;
} nt;
static int nt_error;
static pthread_once_t nt_once = PTHREAD_ONCE_INIT;

static void nt_open(void)
{
	void *lib = dlopen(NETTLE_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		log_error("cannot load %s (the agent layer needs it): %s", NETTLE_SONAME,
			  dlerror());
		nt_error = -ELIBACC;
		return;
	}
#define NT_SYM(name)                                                                               \
	do {                                                                                       \
		*(void **) &nt.name = dlsym(lib, "nettle_" #name);                                 \
		if (!nt.name) {                                                                    \
			log_error("%s lacks nettle_%s", NETTLE_SONAME, #name);                     \
			nt_error = -ELIBBAD;                                                       \
			return;                                                                    \
		}                                                                                  \
	} while (0)
	NT_SYM(sha256_init);
	NT_SYM(sha256_update);
	NT_SYM(sha256_digest);
	NT_SYM(base64_encode_raw);
	NT_SYM(base64_decode_init);
	NT_SYM(base64_decode_update);
	NT_SYM(base64_decode_final);
#undef NT_SYM
	/* the library stays loaded for the life of the process */
}

int agent_nettle_load(void)
{
	(void) pthread_once(&nt_once, nt_open);
	return nt_error;
}

int agent_sha256(const void *data, size_t len, uint8_t ret[static AGENT_SHA256_SIZE])
{
	struct sha256_ctx ctx;
	int r = agent_nettle_load();

	if (r < 0)
		return r;
	nt.sha256_init(&ctx);
	nt.sha256_update(&ctx, len, data);
	nt.sha256_digest(&ctx, AGENT_SHA256_SIZE, ret);
	return 0;
}

char *agent_base64_encode(const void *data, size_t len)
{
	char *out;

	if (agent_nettle_load() < 0)
		return NULL;
	out = malloc(BASE64_ENCODE_RAW_LENGTH(len) + 1);
	if (!out)
		return NULL;
	nt.base64_encode_raw(out, len, data);
	out[BASE64_ENCODE_RAW_LENGTH(len)] = 0;
	return out;
}

int agent_base64_decode(const char *in, size_t len, uint8_t **ret, size_t *ret_len)
{
	struct base64_decode_ctx ctx;
	size_t n = BASE64_DECODE_LENGTH(len) + 1;
	uint8_t *out;
	int r = agent_nettle_load();

	if (r < 0)
		return r;
	out = malloc(n);
	if (!out)
		return -ENOMEM;
	nt.base64_decode_init(&ctx);
	if (!nt.base64_decode_update(&ctx, &n, out, len, in) || !nt.base64_decode_final(&ctx)) {
		free(out);
		return -EINVAL;
	}
	*ret = out;
	*ret_len = n;
	return 0;
}
