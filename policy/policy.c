/* SPDX-License-Identifier: MIT */
/* Placeholder until the policy language lands (issue 2). */
#include "policy/policy.h"

#include <stdlib.h>
#include <string.h>

int policy_load(const char *name, const PolicyVars *vars, char *const *overrides,
		Policy **ret_policy, PolicyError *reterr)
{
	(void) name;
	(void) vars;
	(void) overrides;
	(void) ret_policy;
	memset(reterr, 0, sizeof(*reterr));
	snprintf(reterr->message, sizeof(reterr->message), "policy loading not built yet");
	return -ENOSYS;
}

Policy *policy_free(Policy *p)
{
	free(p);
	return NULL;
}

const char *policy_error_format(const PolicyError *e, char *buf, size_t size)
{
	snprintf(buf, size, "%s", e->message);
	return buf;
}
