/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memory.numa_stat: per-node lines parsed from a buffer, and the check
 * that the nodes add up (against the line's total on cgroup v1, against
 * memory.stat on v2).
 */
#ifndef KBENCH_NUMASTAT_H
#define KBENCH_NUMASTAT_H

#include <stdbool.h>
#include <stddef.h>

#include "memstat.h"

#define KB_NUMASTAT_MAX_NODES	64
/* Longest memory.numa_stat line accepted (64 nodes of 20 digits fit). */
#define KB_NUMASTAT_LINE_MAX	2047

/*
 * One memory.numa_stat line. v1: "total=T N0=a N1=b" after the key and
 * '=' (values in pages); v2: "anon N0=a N1=b" (values in bytes).
 */
struct kb_numastat_line {
	char key[KB_MEMSTAT_KEY_LEN];
	bool has_total;
	unsigned long long total;
	int nnodes;
	int node[KB_NUMASTAT_MAX_NODES];
	unsigned long long value[KB_NUMASTAT_MAX_NODES];
};

/*
 * Parse one numa_stat line of @len bytes (no newline needed). 0, -EINVAL
 * (also for a line longer than KB_NUMASTAT_LINE_MAX) or -E2BIG (more than
 * KB_NUMASTAT_MAX_NODES nodes).
 */
int kb_numastat_line_parse(const char *line, size_t len,
			   struct kb_numastat_line *l);

/*
 * Find the line of @key in numa_stat text (@len bytes) into @l (zeroed
 * first). 0; -ENOENT when no line has that key; the error of the first
 * line that does not parse.
 */
int kb_numastat_find(const char *text, size_t len, const char *key,
		     struct kb_numastat_line *l);

/* Sum of the per-node values of a line. */
unsigned long long kb_numastat_line_sum(const struct kb_numastat_line *l);

/* The value of node @node on the line; false when the line lacks it. */
bool kb_numastat_line_node(const struct kb_numastat_line *l, int node,
			   unsigned long long *value);

/*
 * memory.numa_stat text: on each v1 line the nodes add up to the line's
 * total (one read: @tol_ppm of it); on each v2 line they add up to the
 * key's value in memory.stat read @before and @after the numa_stat (lines
 * of keys memory.stat lacks are not counted; pass NULL on v1). @lines
 * gets the lines checked, at least one is required.
 */
int kb_numastat_check_sums(const char *text, size_t len,
			   const struct kb_memstat *before,
			   const struct kb_memstat *after, unsigned int tol_ppm,
			   int *lines, char *why, size_t size);

#endif /* KBENCH_NUMASTAT_H */
