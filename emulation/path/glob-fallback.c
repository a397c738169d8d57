/* SPDX-License-Identifier: MIT */
/*
 * COMPAT: a weak policy_glob_match() so that the view's rules work and are tested before the
 * policy module (issue 2) provides the real one; the strong definition in policy/ replaces
 * this one at link time. Remove this file once policy/policy.c defines it.
 *
 * Syntax as policy.h says: '*' matches within one component, '**' across components
 * (also none: "/a" followed by "/" and "**" matches "/a" itself), '?' one character other than '/',
 * [set] / [!set].
 */
#include <stdbool.h>
#include <string.h>

#include "policy/policy.h"

static bool match_set(const char **gp, char c)
{
	const char *g = *gp + 1;
	bool neg = false, ok = false;

	if (*g == '!' || *g == '^') {
		neg = true;
		g++;
	}
	for (bool first = true; *g && (first || *g != ']'); first = false, g++) {
		if (g[1] == '-' && g[2] && g[2] != ']') {
			if (c >= g[0] && c <= g[2])
				ok = true;
			g += 2;
		} else if (*g == c)
			ok = true;
	}
	if (*g != ']')
		return false; /* unterminated: no match */
	*gp = g + 1;
	return ok != neg && c != '/';
}

static bool match(const char *g, const char *p)
{
	for (;;) {
		if (!*g)
			return !*p;
		if (g[0] == '*' && g[1] == '*') {
			const char *rest = g + 2;
			bool slash = *rest == '/';

			/* a "**" followed by a slash resumes only at the start of a component */
			if (slash)
				rest++;
			for (const char *q = p;; q++) {
				if ((!slash || q == p || q[-1] == '/') && match(rest, q))
					return true;
				if (!*q)
					return false;
			}
		}
		if (*g == '*') {
			for (const char *q = p;; q++) {
				if (match(g + 1, q))
					return true;
				if (!*q || *q == '/')
					return false;
			}
		}
		if (!*p)
			return *g == '/' && g[1] == '*' && g[2] == '*' && !g[3];
		if (*g == '?') {
			if (*p == '/')
				return false;
		} else if (*g == '[') {
			if (!match_set(&g, *p))
				return false;
			p++;
			continue;
		} else if (*g != *p)
			return false;
		g++;
		p++;
	}
}

__attribute__((weak)) bool policy_glob_match(const char *glob, const char *path)
{
	return match(glob, path);
}
