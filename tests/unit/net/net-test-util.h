/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Test-only helpers: build PolicyNetwork allow entries from strings, the way a policy would
 * write them ("10.0.0.0/8", "127.0.0.2/32:8000-8010", "[::1/128]:443", "api.example.com:443",
 * "*.example.com"), and sockaddrs from text. The real parser belongs to policy/; this one
 * aborts on input it does not understand, since tests only feed it good strings.
 */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "net/sockaddr.h"
#include "policy/policy.h"

static inline void test_ports(const char *s, PolicyNetAllow *e)
{
	char *end;

	e->port_lo = 0;
	e->port_hi = 65535;
	if (!s || !*s)
		return;
	e->port_lo = e->port_hi = (uint16_t) strtoul(s, &end, 10);
	if (*end == '-')
		e->port_hi = (uint16_t) strtoul(end + 1, &end, 10);
	if (*end != '\0')
		abort();
}

static inline PolicyNetAllow test_allow(const char *text)
{
	PolicyNetAllow e = {.text = strdup(text)};
	char buf[256], *port = NULL, *slash;

	snprintf(buf, sizeof(buf), "%s", text);
	if (buf[0] == '[') {
		char *close = strchr(buf, ']');

		*close = '\0';
		if (close[1] == ':')
			port = close + 2;
		memmove(buf, buf + 1, strlen(buf + 1) + 1);
	} else if (strchr(buf, ':') && !strchr(strchr(buf, ':') + 1, ':')) {
		port = strchr(buf, ':');
		*port++ = '\0';
	}
	test_ports(port, &e);

	slash = strchr(buf, '/');
	if (slash || inet_pton(AF_INET, buf, e.addr) == 1 || strchr(buf, ':')) {
		unsigned max;

		if (slash)
			*slash = '\0';
		if (inet_pton(AF_INET, buf, e.addr) == 1)
			e.family = AF_INET, max = 32;
		else if (inet_pton(AF_INET6, buf, e.addr) == 1)
			e.family = AF_INET6, max = 128;
		else
			abort();
		e.kind = NET_ALLOW_CIDR;
		e.prefix = slash ? (unsigned) strtoul(slash + 1, NULL, 10) : max;
	} else if (strncmp(buf, "*.", 2) == 0) {
		e.kind = NET_ALLOW_DOMAIN;
		e.name = strdup(buf + 2);
	} else {
		e.kind = NET_ALLOW_HOST;
		e.name = strdup(buf);
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
	for (size_t i = 0; i < pn->n_allow; i++) {
		free(pn->allow[i].text);
		free(pn->allow[i].name);
	}
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
