/* SPDX-License-Identifier: MIT */
#pragma once

/* The languages code can be given in (MCP's code_execute and contexts, `sbxtrace batch`),
 * and where each one's interpreter is looked for: one table, so that a task in a batch and
 * the same code through MCP run under the same interpreter. */

typedef struct Language {
	const char *name;	     /* "python", "javascript", "shell" */
	const char *ext;	     /* of the file the code is written to */
	const char *const interp[3]; /* tried in order; NULL ends the list early */
} Language;

/** The language called name, or NULL. */
const Language *language_find(const char *name);

/** The first of l's interpreters that this process may execute, or NULL. */
const char *language_interp(const Language *l);

/** The names, for messages: "python, javascript, shell". */
#define LANGUAGE_NAMES "python, javascript, shell"
