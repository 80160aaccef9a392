// SPDX-License-Identifier: GPL-2.0
/*
 * memory.numa_stat text. See numastat.h.
 */
#include "numastat.h"
#include "text.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

/* "N3=1234" */
static int parse_node_token(const char *tok, size_t n, int *node,
			    unsigned long long *value)
{
	const char *eq = memchr(tok, '=', n);
	unsigned long long id;

	if (n < 4 || tok[0] != 'N' || !eq || eq == tok + 1)
		return -EINVAL;
	if (kb_text_parse_u64(tok + 1, (size_t)(eq - tok - 1), &id) ||
	    id > 1 << 20 ||
	    kb_text_parse_u64(eq + 1, (size_t)(tok + n - eq - 1), value))
		return -EINVAL;
	*node = (int)id;
	return 0;
}

/* The first token: "key" (v2) or "key=total" (v1). */
static int numa_key_parse(const char *tok, size_t n, struct kb_numastat_line *l)
{
	const char *eq = memchr(tok, '=', n);
	size_t klen = eq ? (size_t)(eq - tok) : n;

	if (!klen || klen >= sizeof(l->key) || memchr(tok, '\0', klen))
		return -EINVAL;
	memcpy(l->key, tok, klen);
	l->key[klen] = '\0';
	if (!eq)
		return 0;
	l->has_total = true;
	return kb_text_parse_u64(eq + 1, (size_t)(tok + n - eq - 1), &l->total);
}

int kb_numastat_line_parse(const char *line, size_t len,
			   struct kb_numastat_line *l)
{
	const char *s = line, *end = line + len, *tok;
	size_t n;

	memset(l, 0, sizeof(*l));
	if (len && line[len - 1] == '\n')
		end--;
	if (end - line > KB_NUMASTAT_LINE_MAX)
		return -EINVAL;
	if (!kb_text_next_token(&s, end, &tok, &n) || numa_key_parse(tok, n, l))
		return -EINVAL;
	while (kb_text_next_token(&s, end, &tok, &n)) {
		if (l->nnodes == KB_NUMASTAT_MAX_NODES)
			return -E2BIG;
		if (parse_node_token(tok, n, &l->node[l->nnodes],
				     &l->value[l->nnodes]))
			return -EINVAL;
		l->nnodes++;
	}
	return l->nnodes ? 0 : -EINVAL;
}

/* The next non-empty numa_stat line, parsed: 1, 0 at the end, -errno. */
static int numa_next(struct kb_text *t, struct kb_numastat_line *l,
		     const char **line, size_t *n)
{
	while (kb_text_next_line(t, line, n)) {
		int err;

		if (!*n)
			continue;
		err = kb_numastat_line_parse(*line, *n, l);
		return err ? err : 1;
	}
	return 0;
}

int kb_numastat_find(const char *text, size_t len, const char *key,
		     struct kb_numastat_line *l)
{
	struct kb_text t;
	const char *line;
	size_t n;
	int got;

	memset(l, 0, sizeof(*l));
	kb_text_init(&t, text, len);
	while ((got = numa_next(&t, l, &line, &n)) > 0)
		if (!strcmp(l->key, key))
			return 0;
	return got < 0 ? got : -ENOENT;
}

unsigned long long kb_numastat_line_sum(const struct kb_numastat_line *l)
{
	unsigned long long sum = 0;
	int i;

	/* Saturate: a wrapped sum could equal any total. */
	for (i = 0; i < l->nnodes; i++)
		sum = l->value[i] > ULLONG_MAX - sum ? ULLONG_MAX :
		      sum + l->value[i];
	return sum;
}

bool kb_numastat_line_node(const struct kb_numastat_line *l, int node,
			   unsigned long long *value)
{
	int i;

	for (i = 0; i < l->nnodes; i++) {
		if (l->node[i] == node) {
			*value = l->value[i];
			return true;
		}
	}
	return false;
}

/* One numa_stat line against its total (v1) or memory.stat (v2). */
static int numa_line_check(const struct kb_numastat_line *l,
			   const struct kb_memstat *before,
			   const struct kb_memstat *after, unsigned int tol_ppm,
			   char *why, size_t size)
{
	unsigned long long sum = kb_numastat_line_sum(l), b, a;

	if (l->has_total) {
		if (kb_memstat_bracketed(sum, l->total, l->total, tol_ppm))
			return 0;
		snprintf(why, size, "%s: the nodes add up to %llu, total=%llu (pages, tolerance %.3f %%)",
			 l->key, sum, l->total, tol_ppm / 1e4);
		return -1;
	}
	if (!before || !kb_memstat_get(before, l->key, &b) ||
	    !kb_memstat_get(after, l->key, &a))
		return 1;	/* numa_stat only: nothing to compare with */
	if (kb_memstat_bracketed(sum, b, a, tol_ppm))
		return 0;
	snprintf(why, size, "%s: the nodes add up to %llu, memory.stat read before and after: %llu and %llu (bytes, tolerance %.3f %%)",
		 l->key, sum, b, a, tol_ppm / 1e4);
	return -1;
}

int kb_numastat_check_sums(const char *text, size_t len,
			   const struct kb_memstat *before,
			   const struct kb_memstat *after, unsigned int tol_ppm,
			   int *lines, char *why, size_t size)
{
	struct kb_numastat_line l;
	struct kb_text t;
	const char *line;
	size_t n;
	int err;

	*lines = 0;
	kb_text_init(&t, text, len);
	while ((err = numa_next(&t, &l, &line, &n))) {
		if (err < 0) {
			kb_text_reason(why, size, "unparsable line", line, n);
			return -1;
		}
		err = numa_line_check(&l, before, after, tol_ppm, why, size);
		if (err < 0)
			return -1;
		if (!err)
			(*lines)++;
	}
	if (!*lines) {
		snprintf(why, size, "no line to check");
		return -1;
	}
	return 0;
}
