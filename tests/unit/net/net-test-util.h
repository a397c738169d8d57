/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Test helpers: PolicyNetwork allow entries from strings, as a policy writes them
 * ("10.0.0.0/8", "127.0.0.2/32:8000-8010", "[::1/128]:443", "api.example.com:443",
 * "*.example.com"), parsed by policy/'s own parser (so the tests see what a loaded policy
 * holds), and sockaddrs from text. A string the parser refuses is a bug in the test: abort.
 */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "net/sockaddr.h"
#include "policy/internal.h"
#include "policy/policy.h"

static inline PolicyNetAllow test_allow(const char *text)
{
	PolicyNetAllow e;
	char err[256];
	const char *why = policy_parse_net_allow(text, &e, err, sizeof(err));

	if (why) {
		fprintf(stderr, "test_allow('%s'): %s\n", text, why);
		abort();
	}
	return e;
}

/* A PolicyNetwork with the given mode and entries (NULL-terminated list). */
static inline void test_network(PolicyNetwork *pn, NetMode mode, const char *const *entries)
{
	size_t n = 0;

	memset(pn, 0, sizeof(*pn));
	pn->mode = mode;
	while (entries && entries[n])
		n++;
	pn->allow = calloc(n ? n : 1, sizeof(PolicyNetAllow));
	for (size_t i = 0; i < n; i++)
		pn->allow[i] = test_allow(entries[i]);
	pn->n_allow = n;
}

static inline void test_network_done(PolicyNetwork *pn)
{
	for (size_t i = 0; i < pn->n_allow; i++)
		policy_net_allow_done(&pn->allow[i]);
	free(pn->allow);
	pn->allow = NULL;
	pn->n_allow = 0;
}

/* "1.2.3.4:80", "[::1]:53" → NetAddr through the real decoder. */
static inline NetAddr test_ip(const char *text)
{
	struct sockaddr_storage ss = {};
	char buf[128], *colon;
	socklen_t len;
	NetAddr a;

	snprintf(buf, sizeof(buf), "%s", text);
	if (buf[0] == '[') {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) &ss;
		char *close = strchr(buf, ']');

		*close = '\0';
		in6->sin6_family = AF_INET6;
		if (inet_pton(AF_INET6, buf + 1, &in6->sin6_addr) != 1)
			abort();
		in6->sin6_port = htons((uint16_t) atoi(close + 2));
		len = sizeof(*in6);
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *) &ss;

		colon = strchr(buf, ':');
		*colon = '\0';
		in->sin_family = AF_INET;
		if (inet_pton(AF_INET, buf, &in->sin_addr) != 1)
			abort();
		in->sin_port = htons((uint16_t) atoi(colon + 1));
		len = sizeof(*in);
	}
	if (net_sockaddr_decode(&ss, len, &a) < 0)
		abort();
	return a;
}
