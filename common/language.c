/* SPDX-License-Identifier: MIT */
/* The table of common/language.h. Shell code runs under bash where there is one: agents write
 * bash (arrays, [[ ]], process substitution) far more often than POSIX sh. */
#include <string.h>
#include <unistd.h>

#include "common/language.h"
#include "common/macros.h"

static const Language languages[] = {
	{"python", "py", {"/usr/bin/python3", "/usr/local/bin/python3", NULL}},
	{"javascript", "js", {"/usr/bin/node", "/usr/local/bin/node", "/usr/bin/nodejs"}},
	{"shell", "sh", {"/bin/bash", "/bin/sh", NULL}},
};

const Language *language_find(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(languages); i++)
		if (streq(languages[i].name, name))
			return &languages[i];
	return NULL;
}

const char *language_interp(const Language *l)
{
	for (size_t i = 0; l && i < ARRAY_SIZE(l->interp) && l->interp[i]; i++)
		if (access(l->interp[i], X_OK) == 0)
			return l->interp[i];
	return NULL;
}
