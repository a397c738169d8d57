/* SPDX-License-Identifier: MIT */
/* Placeholder until the supervisor core lands (issue 3). */
int tracer_placeholder(void);
int tracer_placeholder(void)
{
	return 0;
}
