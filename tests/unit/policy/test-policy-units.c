/* SPDX-License-Identifier: MIT */
/* Sizes and durations of [limits]: units, fractions, errors, and the writer's formatting. */
#include <stdint.h>

#include "policy/internal.h"
#include "policy/policy.h"
#include "tests/unit/tap.h"

static uint64_t size_of(const char *s)
{
	uint64_t v = 12345;
	return policy_parse_size(s, &v) < 0 ? UINT64_MAX : v;
}

static uint64_t ms_of(const char *s)
{
	uint64_t v = 12345;
	return policy_parse_duration_ms(s, &v) < 0 ? UINT64_MAX : v;
}

TEST(size_units)
{
	EXPECT_EQ(size_of("4096"), 4096);
	EXPECT_EQ(size_of("10B"), 10);
	EXPECT_EQ(size_of("1K"), 1024);
	EXPECT_EQ(size_of("1k"), 1024);
	EXPECT_EQ(size_of("1KiB"), 1024);
	EXPECT_EQ(size_of("1KB"), 1000);
	EXPECT_EQ(size_of("512MiB"), 512ull << 20);
	EXPECT_EQ(size_of("512 MiB"), 512ull << 20);
	EXPECT_EQ(size_of("3MB"), 3000000);
	EXPECT_EQ(size_of("2G"), 2ull << 30);
	EXPECT_EQ(size_of("2GB"), 2000000000ull);
	EXPECT_EQ(size_of("1TiB"), 1ull << 40);
	EXPECT_EQ(size_of("1.5GiB"), 3ull << 29);
	EXPECT_EQ(size_of("0.5K"), 512);
}

TEST(size_errors)
{
	uint64_t v;

	EXPECT_EQ(size_of("12XB"), UINT64_MAX);
	EXPECT_EQ(size_of("MiB"), UINT64_MAX);
	EXPECT_EQ(size_of(""), UINT64_MAX);
	EXPECT_EQ(size_of("-1M"), UINT64_MAX);
	EXPECT_EQ(size_of("1.M"), UINT64_MAX);
	EXPECT_EQ(size_of("99999999999999999999"), UINT64_MAX);
	EXPECT_EQ(size_of("20000000TiB"), UINT64_MAX);
	ASSERT_TRUE(policy_size_reason("-1M", &v) != NULL);
	EXPECT_TRUE(strstr(policy_size_reason("-1M", &v), "negative") != NULL);
	EXPECT_TRUE(strstr(policy_size_reason("5parsecs", &v), "unknown size unit") != NULL);
}

TEST(durations)
{
	EXPECT_EQ(ms_of("250ms"), 250);
	EXPECT_EQ(ms_of("30s"), 30000);
	EXPECT_EQ(ms_of("30"), 30000);
	EXPECT_EQ(ms_of("1.5s"), 1500);
	EXPECT_EQ(ms_of("5m"), 300000);
	EXPECT_EQ(ms_of("2min"), 120000);
	EXPECT_EQ(ms_of("1h"), 3600000);
	EXPECT_EQ(ms_of("1d"), 86400000);
	EXPECT_EQ(ms_of("0.25h"), 900000);
	EXPECT_EQ(ms_of("30 s"), 30000);
	EXPECT_EQ(ms_of("3y"), UINT64_MAX);
	EXPECT_EQ(ms_of("s"), UINT64_MAX);
	EXPECT_EQ(ms_of("-2s"), UINT64_MAX);
	EXPECT_EQ(ms_of("1us"), UINT64_MAX);
}

TEST(format_round_trip)
{
	static const uint64_t sizes[] = {1,	     1000,	 1024,	   1536, 512ull << 20,
					 3ull << 29, 1ull << 40, 123456789};
	static const uint64_t durations[] = {1,	    250,     1000,     1500,   60000,
					     90000, 3600000, 86400000, 7200001};
	char buf[64];

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		policy_format_size(sizes[i], buf, sizeof(buf));
		EXPECT_EQ(size_of(buf), sizes[i]);
	}
	for (size_t i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
		policy_format_duration_ms(durations[i], buf, sizeof(buf));
		EXPECT_EQ(ms_of(buf), durations[i]);
	}
	policy_format_size(512ull << 20, buf, sizeof(buf));
	EXPECT_STREQ(buf, "512MiB");
	policy_format_duration_ms(90000, buf, sizeof(buf));
	EXPECT_STREQ(buf, "90s");
	policy_format_duration_ms(250, buf, sizeof(buf));
	EXPECT_STREQ(buf, "250ms");
}

int main(void)
{
	return tap_run();
}
