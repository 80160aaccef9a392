/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writing JSON values: strings escaped, numbers that JSON can hold, the
 * kernel's uname(2).
 */
#ifndef KBENCH_JSON_H
#define KBENCH_JSON_H

#include <stddef.h>
#include <stdio.h>

/* A JSON string literal of @s (NULL: ""), escaped. */
void kb_json_string(FILE *f, const char *s);

/* @v as a JSON number: null for NaN and infinity, which JSON lacks. */
void kb_json_number(FILE *f, double v);

/* One "KEY": "VALUE" member. */
struct kb_json_member {
	const char *key;
	const char *value;
};

/*
 * The members @m[0..@n), separated by ", " (no braces, no comma before
 * the first or after the last).
 */
void kb_json_members(FILE *f, const struct kb_json_member *m, size_t n);

/*
 * uname(2) as JSON members, for a test that writes another tool's layout:
 *   "sysname": "Linux", "nodename": ..., "release": ..., "version": ...,
 *   "machine": ...
 * (no braces, no comma before the first or after the last).
 */
void kb_json_uname(FILE *f);

#endif /* KBENCH_JSON_H */
