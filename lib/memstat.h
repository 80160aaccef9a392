/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memory.stat and the .ks files in its format: "key value" lines parsed
 * from a buffer, and the comparisons memcg_ks judges them by, on parsed
 * text, so that tests/unit_cgroup.c can show each one failing on a
 * corrupted input (each returns 0, or -1 with the first difference
 * described in @why).
 */
#ifndef KBENCH_MEMSTAT_H
#define KBENCH_MEMSTAT_H

#include <stdbool.h>
#include <stddef.h>

#define KB_MEMSTAT_MAX_KEYS	256
#define KB_MEMSTAT_KEY_LEN		64
/* Longest memory.stat line accepted: real ones are under 64 bytes. */
#define KB_MEMSTAT_LINE_MAX	511

struct kb_memstat_entry {
	char key[KB_MEMSTAT_KEY_LEN];
	unsigned long long value;
};

/* A parsed flat-keyed file ("key value" lines), in file order. */
struct kb_memstat {
	size_t n;
	size_t comments;		/* lines starting with '#' (ks files) */
	struct kb_memstat_entry e[KB_MEMSTAT_MAX_KEYS];
};

/*
 * Parse memory.stat text (@len bytes): every line "key value" with a
 * non-negative decimal value; lines starting with '#' are counted and
 * skipped; empty lines are allowed. On error returns -EINVAL (-E2BIG for
 * too many keys) and describes the first bad line in @why (may be NULL).
 * A line longer than KB_MEMSTAT_LINE_MAX is an error.
 */
int kb_memstat_parse(const char *text, size_t len, struct kb_memstat *st,
		     char *why, size_t why_size);

/* Look up @key. True when present. */
bool kb_memstat_get(const struct kb_memstat *st, const char *key,
		    unsigned long long *value);

/* Same keys in the same order (values may differ). */
bool kb_memstat_same_keys(const struct kb_memstat *a,
			  const struct kb_memstat *b);

/*
 * A .ks output against the filter written ("flush,anon,file"): exactly
 * the filter's keys, in its order, nothing else ("flush" is no key).
 */
int kb_memstat_ks_keys_match(const struct kb_memstat *ks, const char *filter,
			     char *why, size_t size);

/*
 * @v lies between @a and @b (two reads of the same counter around the
 * read of @v), widened on each side by @tol_ppm millionths of the larger.
 */
bool kb_memstat_bracketed(unsigned long long v, unsigned long long a,
			  unsigned long long b, unsigned int tol_ppm);

/*
 * Every key of @got is a key of memory.stat whose value, in the same unit
 * (no scaling), is bracketed by its values in @before and @after.
 */
int kb_memstat_values_bracketed(const struct kb_memstat *got,
				const struct kb_memstat *before,
				const struct kb_memstat *after,
				unsigned int tol_ppm, char *why, size_t size);

#endif /* KBENCH_MEMSTAT_H */
