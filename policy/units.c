/* SPDX-License-Identifier: MIT */
/*
 * Sizes and durations of [limits]. Sizes: a number with an optional unit; B; K, KiB = 1024;
 * KB = 1000; likewise M/MB/MiB, G/GB/GiB, T/TB/TiB (units are case-insensitive, so "k" is
 * 1024 too). Durations: a number with ms, s, m (or min), h or d; no unit means seconds. A
 * fraction is allowed ("1.5GiB", "1.5s"); the result is rounded down to bytes or ms.
 */
#include "policy/policy.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "common/macros.h"
#include "policy/internal.h"

/* Parses "<digits>[.<digits>]" and scales it by mult (>= 1). NULL or a reason. */
static const char *parse_scaled(const char *s, const char **ret_end, uint64_t mult, uint64_t div,
				uint64_t *ret)
{
	uint64_t whole = 0, frac = 0, frac_scale = 1, v;
	const char *p = s;

	while (*p == ' ')
		p++;
	if (*p == '-')
		return "must not be negative";
	if (*p == '+')
		p++;
	if (!isdigit((unsigned char) *p))
		return "expected a number";
	for (; isdigit((unsigned char) *p); p++) {
		if (whole > (UINT64_MAX - 9) / 10)
			return "number too large";
		whole = whole * 10 + (uint64_t) (*p - '0');
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char) *p))
			return "expected digits after '.'";
		for (; isdigit((unsigned char) *p); p++)
			if (frac_scale < UINT64_C(1000000000)) {
				frac = frac * 10 + (uint64_t) (*p - '0');
				frac_scale *= 10;
			}
	}
	*ret_end = p;

	if (mult && whole > UINT64_MAX / mult)
		return "number too large";
	v = whole * mult / div;
	/* frac < frac_scale <= 1e9 and mult <= 2^40: the product fits in 64 bits only if
	 * mult is small enough; split to stay exact for the units we have. */
	if (frac) {
		unsigned __int128 f = (unsigned __int128) frac * mult / frac_scale / div;
		if (v + (uint64_t) f < v)
			return "number too large";
		v += (uint64_t) f;
	}
	*ret = v;
	return NULL;
}

static const struct {
	const char *suffix;
	uint64_t mult;
} size_units[] = {
	{"", 1},
	{"b", 1},
	{"k", UINT64_C(1) << 10},
	{"kib", UINT64_C(1) << 10},
	{"kb", UINT64_C(1000)},
	{"m", UINT64_C(1) << 20},
	{"mib", UINT64_C(1) << 20},
	{"mb", UINT64_C(1000000)},
	{"g", UINT64_C(1) << 30},
	{"gib", UINT64_C(1) << 30},
	{"gb", UINT64_C(1000000000)},
	{"t", UINT64_C(1) << 40},
	{"tib", UINT64_C(1) << 40},
	{"tb", UINT64_C(1000000000000)},
};

static const struct {
	const char *suffix;
	uint64_t mult, div; /* to milliseconds */
} duration_units[] = {
	{"", 1000, 1},	 {"ms", 1, 1},	    {"s", 1000, 1},    {"sec", 1000, 1},
	{"m", 60000, 1}, {"min", 60000, 1}, {"h", 3600000, 1}, {"d", 86400000, 1},
};

static const char *unit_suffix(const char *end, char *buf, size_t size)
{
	size_t n;

	while (*end == ' ')
		end++;
	n = strlen(end);
	if (n >= size)
		return NULL;
	memcpy(buf, end, n + 1);
	return buf;
}

const char *policy_size_reason(const char *s, uint64_t *ret_bytes)
{
	char unit[8];
	const char *end, *why;
	uint64_t v;

	why = parse_scaled(s, &end, 1, 1, &v);
	if (why)
		return why;
	if (unit_suffix(end, unit, sizeof(unit)))
		for (size_t i = 0; i < ARRAY_SIZE(size_units); i++) {
			if (strcasecmp(unit, size_units[i].suffix) != 0)
				continue;
			why = parse_scaled(s, &end, size_units[i].mult, 1, &v);
			if (why)
				return why;
			*ret_bytes = v;
			return NULL;
		}
	return "unknown size unit (use B, KiB, MiB, GiB, TiB, or KB, MB, GB, TB)";
}

const char *policy_duration_reason(const char *s, uint64_t *ret_ms)
{
	char unit[8];
	const char *end, *why;
	uint64_t v;

	why = parse_scaled(s, &end, 1, 1, &v);
	if (why)
		return why;
	if (unit_suffix(end, unit, sizeof(unit)))
		for (size_t i = 0; i < ARRAY_SIZE(duration_units); i++) {
			if (strcasecmp(unit, duration_units[i].suffix) != 0)
				continue;
			why = parse_scaled(s, &end, duration_units[i].mult, duration_units[i].div,
					   &v);
			if (why)
				return why;
			*ret_ms = v;
			return NULL;
		}
	return "unknown duration unit (use ms, s, m, h or d)";
}

int policy_parse_size(const char *s, uint64_t *ret_bytes)
{
	uint64_t v;

	if (policy_size_reason(s, &v))
		return -EINVAL;
	*ret_bytes = v;
	return 0;
}

int policy_parse_duration_ms(const char *s, uint64_t *ret_ms)
{
	uint64_t v;

	if (policy_duration_reason(s, &v))
		return -EINVAL;
	*ret_ms = v;
	return 0;
}

void policy_format_size(uint64_t bytes, char *buf, size_t size)
{
	static const struct {
		const char *unit;
		unsigned shift;
	} units[] = {{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}};

	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (bytes && bytes % (UINT64_C(1) << units[i].shift) == 0) {
			snprintf(buf, size, "%llu%s",
				 (unsigned long long) (bytes >> units[i].shift), units[i].unit);
			return;
		}
	snprintf(buf, size, "%lluB", (unsigned long long) bytes);
}

void policy_format_duration_ms(uint64_t ms, char *buf, size_t size)
{
	static const struct {
		const char *unit;
		uint64_t ms;
	} units[] = {{"d", 86400000}, {"h", 3600000}, {"m", 60000}, {"s", 1000}};

	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (ms && ms % units[i].ms == 0) {
			snprintf(buf, size, "%llu%s", (unsigned long long) (ms / units[i].ms),
				 units[i].unit);
			return;
		}
	snprintf(buf, size, "%llums", (unsigned long long) ms);
}
