/* SPDX-License-Identifier: MIT */
/*
 * Globs over virtual paths. A glob is absolute and split at '/': within a component '*'
 * matches any run of characters (also a leading '.'), '?' one character, "[set]" one character
 * of the set ("[!set]" or "[^set]" negates, "a-z" ranges, ']' first is literal), '\' escapes.
 * A component that is exactly "**" matches zero or more whole components, also at the end
 * (so "/a/" followed by "**" matches /a itself and everything below it). Both loops are the
 * classic greedy wildcard match with one back-tracking point, so matching is
 * O(len(glob) * len(path)) whatever the glob: a policy cannot make the supervisor spin.
 */
#include "policy/policy.h"

#include <string.h>

#include "policy/internal.h"

static const char *comp_end(const char *s)
{
	while (*s && *s != '/')
		s++;
	return s;
}

static const char *skip_slashes(const char *s)
{
	while (*s == '/')
		s++;
	return s;
}

/* g points just after '['; returns the closing ']' or NULL. */
static const char *set_end(const char *g, const char *ge)
{
	const char *p = g;

	if (p < ge && (*p == '!' || *p == '^'))
		p++;
	if (p < ge && *p == ']')
		p++;
	while (p < ge && *p != ']') {
		if (*p == '\\' && p + 1 < ge)
			p++;
		p++;
	}
	return p < ge ? p : NULL;
}

static bool set_match(const char *g, const char *close, unsigned char c)
{
	bool neg = false, hit = false;
	const char *p = g;

	if (*p == '!' || *p == '^') {
		neg = true;
		p++;
	}
	for (bool first = true; p < close; first = false) {
		unsigned char lo, hi;

		if (*p == ']' && !first)
			break;
		if (*p == '\\' && p + 1 < close)
			p++;
		lo = hi = (unsigned char) *p++;
		if (p + 1 < close && *p == '-') {
			p++;
			if (*p == '\\' && p + 1 < close)
				p++;
			hi = (unsigned char) *p++;
		}
		if (c >= lo && c <= hi)
			hit = true;
	}
	return hit != neg;
}

/* Matches one glob item at *pg against c; advances *pg past the item. */
static bool item_match(const char **pg, const char *ge, unsigned char c)
{
	const char *g = *pg, *close;

	switch (*g) {
	case '?':
		*pg = g + 1;
		return true;
	case '[':
		close = set_end(g + 1, ge);
		if (close) {
			*pg = close + 1;
			return set_match(g + 1, close, c);
		}
		break; /* unterminated: a literal '[' (policy_glob_check rejects it) */
	case '\\':
		if (g + 1 < ge) {
			*pg = g + 2;
			return (unsigned char) g[1] == c;
		}
		break;
	default:
		break;
	}
	*pg = g + 1;
	return (unsigned char) *g == c;
}

static bool component_match(const char *g, const char *ge, const char *n, const char *ne)
{
	const char *star_g = NULL, *star_n = NULL;

	while (n < ne) {
		const char *next = g;

		if (g < ge && *g == '*') {
			star_g = ++g;
			star_n = n;
			continue;
		}
		if (g < ge && item_match(&next, ge, (unsigned char) *n)) {
			g = next;
			n++;
			continue;
		}
		if (!star_g)
			return false;
		g = star_g;
		n = ++star_n;
	}
	while (g < ge && *g == '*')
		g++;
	return g == ge;
}

static bool is_globstar(const char *g, const char *ge)
{
	return ge - g == 2 && g[0] == '*' && g[1] == '*';
}

bool policy_glob_match(const char *glob, const char *path)
{
	const char *g, *n, *star_g = NULL, *star_n = NULL;

	if (!glob || !path || glob[0] != '/' || path[0] != '/')
		return false;
	g = skip_slashes(glob);
	n = skip_slashes(path);

	while (*n) {
		const char *ge = comp_end(g), *ne = comp_end(n);

		if (*g && is_globstar(g, ge)) {
			star_g = skip_slashes(ge);
			star_n = n;
			g = star_g;
			continue;
		}
		if (*g && component_match(g, ge, n, ne)) {
			g = skip_slashes(ge);
			n = skip_slashes(ne);
			continue;
		}
		if (!star_g)
			return false;
		/* let the last "**" swallow one more component and retry from there */
		g = star_g;
		star_n = skip_slashes(comp_end(star_n));
		n = star_n;
	}
	/* path consumed: what is left of the glob must be "**" components, matching nothing */
	while (*g) {
		const char *ge = comp_end(g);

		if (!is_globstar(g, ge))
			return false;
		g = skip_slashes(ge);
	}
	return true;
}

const char *policy_glob_check(const char *glob)
{
	const char *g;

	if (!glob || glob[0] != '/')
		return "must be an absolute path (start with '/')";
	for (g = glob; *g;) {
		const char *ge;

		g = skip_slashes(g);
		ge = comp_end(g);
		for (const char *p = g; p < ge; p++) {
			if (*p == '\\') {
				if (p + 1 >= ge)
					return "'\\' at the end of a component escapes nothing";
				p++;
			} else if (*p == '[') {
				const char *close = set_end(p + 1, ge);
				if (!close)
					return "'[' without a closing ']' in the same component";
				p = close;
			} else if (*p == '*' && p + 1 < ge && p[1] == '*' && !is_globstar(g, ge))
				return "'**' must be a whole path component ('/**/')";
		}
		g = ge;
	}
	return NULL;
}
