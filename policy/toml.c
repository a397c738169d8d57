/* SPDX-License-Identifier: MIT */
/* Placeholder until the TOML parser lands (issue 2). */
#include "policy/toml.h"

#include <stdio.h>
#include <stdlib.h>

int toml_parse(const char *text, size_t len, TomlValue **ret_root, TomlError *reterr)
{
	(void) text;
	(void) len;
	(void) ret_root;
	reterr->line = reterr->column = 0;
	snprintf(reterr->message, sizeof(reterr->message), "TOML parser not built yet");
	return -ENOSYS;
}

TomlValue *toml_free(TomlValue *v)
{
	free(v);
	return NULL;
}
