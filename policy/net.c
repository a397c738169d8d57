/* SPDX-License-Identifier: MIT */
/*
 * [network] allow entries and dns servers.
 *   CIDR[:ports]     "10.0.0.0/8:443", "192.0.2.1:80-90", "[2001:db8::]/32:443",
 *                    "2001:db8::/32" (an IPv6 address without brackets takes no port)
 *   host[:ports]     "example.com:443"  (exact name, any case; stored lower-case)
 *   *.domain[:ports] "*.pypi.org:443"   (any name below pypi.org, not pypi.org itself)
 * ports: "N" or "N-M" with 1 <= N <= M <= 65535; no ports means all of them.
 */
#include "policy/policy.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/macros.h"
#include "policy/internal.h"

static const char *parse_port(const char *s, const char *e, uint16_t *ret)
{
	unsigned long v = 0;

	if (s == e)
		return "empty port";
	for (const char *p = s; p < e; p++) {
		if (!isdigit((unsigned char) *p))
			return "port must be a number or a range N-M";
		v = v * 10 + (unsigned long) (*p - '0');
		if (v > 65535)
			return "port out of range (1-65535)";
	}
	if (v == 0)
		return "port out of range (1-65535)";
	*ret = (uint16_t) v;
	return NULL;
}

static const char *parse_ports(const char *s, uint16_t *ret_lo, uint16_t *ret_hi)
{
	const char *dash = strchr(s, '-'), *why;
	const char *e = s + strlen(s);
	uint16_t lo, hi;

	why = parse_port(s, dash ? dash : e, &lo);
	if (why)
		return why;
	hi = lo;
	if (dash) {
		why = parse_port(dash + 1, e, &hi);
		if (why)
			return why;
		if (hi < lo)
			return "port range must be low-high";
	}
	*ret_lo = lo;
	*ret_hi = hi;
	return NULL;
}

static bool valid_hostname(const char *s)
{
	size_t label = 0, total = 0;

	if (!*s)
		return false;
	for (const char *p = s; *p; p++, total++) {
		if (*p == '.') {
			if (label == 0)
				return false;
			label = 0;
			continue;
		}
		if (!isalnum((unsigned char) *p) && *p != '-' && *p != '_')
			return false;
		if (++label > 63)
			return false;
	}
	return label > 0 && total <= 253;
}

static const char *parse_cidr(char *addr, PolicyNetAllow *a, char *errbuf, size_t size)
{
	char *slash = strchr(addr, '/');
	unsigned long prefix;
	unsigned max;

	if (slash)
		*slash = '\0';
	if (inet_pton(AF_INET, addr, a->addr) == 1) {
		a->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, addr, a->addr) == 1) {
		a->family = AF_INET6;
		max = 128;
	} else {
		snprintf(errbuf, size, "'%.64s' is not an IPv4 or IPv6 address", addr);
		return errbuf;
	}
	prefix = max;
	if (slash) {
		char *end;

		if (!isdigit((unsigned char) slash[1]))
			return "bad CIDR prefix length";
		prefix = strtoul(slash + 1, &end, 10);
		if (*end || prefix > max) {
			snprintf(errbuf, size, "bad CIDR prefix length (0-%u)", max);
			return errbuf;
		}
		/* host bits beyond the prefix are a typo, not a wish */
		for (unsigned bit = (unsigned) prefix; bit < max; bit++)
			if (a->addr[bit / 8] & (0x80 >> (bit % 8))) {
				snprintf(errbuf, size, "bad CIDR: address has bits set beyond /%lu",
					 prefix);
				return errbuf;
			}
	}
	a->prefix = (unsigned) prefix;
	a->kind = NET_ALLOW_CIDR;
	return NULL;
}

const char *policy_parse_net_allow(const char *s, PolicyNetAllow *ret, char *errbuf, size_t size)
{
	_cleanup_free_ char *copy = NULL;
	PolicyNetAllow a = {.port_lo = 0, .port_hi = 65535};
	char *host, *ports = NULL;
	const char *why;

	if (!*s)
		return "empty entry";
	copy = strdup(s);
	if (!copy)
		return "out of memory";
	host = copy;

	if (host[0] == '[') {
		char *close = strchr(host, ']');
		if (!close)
			return "'[' without ']' around the IPv6 address";
		*close = '\0';
		host++;
		if (close[1] == '/') {
			/* "[v6]/prefix:ports": move the prefix next to the address */
			char *colon = strchr(close + 2, ':');
			if (colon) {
				*colon = '\0';
				ports = colon + 1;
			}
			memmove(close, close + 1, strlen(close + 1) + 1);
		} else if (close[1] == ':')
			ports = close + 2;
		else if (close[1])
			return "expected ':' or '/' after ']'";
		why = parse_cidr(host, &a, errbuf, size);
		if (why)
			return why;
		if (a.family != AF_INET6)
			return "only IPv6 addresses go in brackets";
	} else {
		char *first = strchr(host, ':'), *last = strrchr(host, ':');

		if (first && first != last) {
			/* bare IPv6: no port possible */
			why = parse_cidr(host, &a, errbuf, size);
			if (why)
				return why;
		} else {
			if (first) {
				*first = '\0';
				ports = first + 1;
			}
			if (strspn(host, "0123456789./") != strlen(host)) {
				/* a fully qualified "example.com." is example.com */
				size_t n = strlen(host);
				if (n > 1 && host[n - 1] == '.' && host[n - 2] != '.')
					host[n - 1] = '\0';
			}
			if (strspn(host, "0123456789./") == strlen(host)) {
				why = parse_cidr(host, &a, errbuf, size);
				if (why)
					return why;
			} else if (strncmp(host, "*.", 2) == 0) {
				if (!valid_hostname(host + 2))
					return "bad domain after '*.'";
				a.kind = NET_ALLOW_DOMAIN;
				a.name = strdup(host + 2);
			} else {
				if (strchr(host, '/'))
					return "bad CIDR: not an address";
				if (!valid_hostname(host)) {
					snprintf(errbuf, size,
						 "'%.64s' is not an address or host name", host);
					return errbuf;
				}
				a.kind = NET_ALLOW_HOST;
				a.name = strdup(host);
			}
			if (a.kind != NET_ALLOW_CIDR) {
				if (!a.name)
					return "out of memory";
				for (char *p = a.name; *p; p++)
					*p = (char) tolower((unsigned char) *p);
			}
		}
	}
	if (ports) {
		why = parse_ports(ports, &a.port_lo, &a.port_hi);
		if (why) {
			free(a.name);
			return why;
		}
	}
	a.text = strdup(s);
	if (!a.text) {
		free(a.name);
		return "out of memory";
	}
	*ret = a;
	return NULL;
}

void policy_net_allow_done(PolicyNetAllow *a)
{
	free(a->text);
	free(a->name);
	a->text = a->name = NULL;
}

const char *policy_check_dns(const char *s, char *errbuf, size_t size)
{
	PolicyNetAllow a;
	const char *why;

	why = policy_parse_net_allow(s, &a, errbuf, size);
	if (why)
		return why;
	if (a.kind != NET_ALLOW_CIDR || (a.family == AF_INET ? a.prefix != 32 : a.prefix != 128))
		why = "a DNS server is an IP address, optionally with :port ([v6]:port)";
	else if (a.port_lo != a.port_hi && !(a.port_lo == 0 && a.port_hi == 65535))
		why = "a DNS server takes one port, not a range";
	policy_net_allow_done(&a);
	return why;
}
