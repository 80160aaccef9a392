// SPDX-License-Identifier: GPL-2.0
/*
 * memory.stat text. See memstat.h.
 */
#include "memstat.h"
#include "text.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

/* One "key value" line into @e; the reason of a rejection in @what. */
static int stat_line_parse(const char *line, size_t len,
			   struct kb_memstat_entry *e, const char **what)
{
	const char *s = line, *end = line + len, *key, *val, *extra;
	size_t klen, vlen, xlen;

	if (len > KB_MEMSTAT_LINE_MAX) {
		*what = "line too long";
		return -EINVAL;
	}
	if (!kb_text_next_token(&s, end, &key, &klen) ||
	    !kb_text_next_token(&s, end, &val, &vlen) ||
	    kb_text_next_token(&s, end, &extra, &xlen)) {
		*what = "not a 'key value' line";
		return -EINVAL;
	}
	if (klen >= KB_MEMSTAT_KEY_LEN || memchr(key, '\0', klen)) {
		*what = "key too long or not text";
		return -EINVAL;
	}
	if (kb_text_parse_u64(val, vlen, &e->value)) {
		*what = "value is not a non-negative integer";
		return -EINVAL;
	}
	memcpy(e->key, key, klen);
	e->key[klen] = '\0';
	return 0;
}

int kb_memstat_parse(const char *text, size_t len, struct kb_memstat *st,
		     char *why, size_t why_size)
{
	struct kb_text t;
	const char *line, *what = NULL;
	size_t n;

	st->n = 0;
	st->comments = 0;
	kb_text_init(&t, text, len);
	while (kb_text_next_line(&t, &line, &n)) {
		if (!n)
			continue;
		if (line[0] == '#') {
			st->comments++;
			continue;
		}
		if (st->n == KB_MEMSTAT_MAX_KEYS) {
			kb_text_reason(why, why_size, "too many keys", line, n);
			return -E2BIG;
		}
		if (stat_line_parse(line, n, &st->e[st->n], &what)) {
			kb_text_reason(why, why_size, what, line, n);
			return -EINVAL;
		}
		st->n++;
	}
	return 0;
}

bool kb_memstat_get(const struct kb_memstat *st, const char *key,
		    unsigned long long *value)
{
	size_t i;

	for (i = 0; i < st->n; i++) {
		if (!strcmp(st->e[i].key, key)) {
			if (value)
				*value = st->e[i].value;
			return true;
		}
	}
	return false;
}

bool kb_memstat_same_keys(const struct kb_memstat *a,
			  const struct kb_memstat *b)
{
	size_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->e[i].key, b->e[i].key))
			return false;
	return true;
}

int kb_memstat_ks_keys_match(const struct kb_memstat *ks, const char *filter,
			     char *why, size_t size)
{
	const char *p = filter;
	size_t i = 0;

	while (*p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);

		if (n && !(n == 5 && !strncmp(p, "flush", 5))) {
			if (i == ks->n) {
				snprintf(why, size, "key %zu '%.*s' of the filter missing (output has %zu keys)",
					 i + 1, (int)(n > 64 ? 64 : n), p,
					 ks->n);
				return -1;
			}
			if (strlen(ks->e[i].key) != n ||
			    strncmp(ks->e[i].key, p, n)) {
				snprintf(why, size, "key %zu is '%s', the filter says '%.*s'",
					 i + 1, ks->e[i].key,
					 (int)(n > 64 ? 64 : n), p);
				return -1;
			}
			i++;
		}
		p += n + (comma ? 1 : 0);
	}
	if (i != ks->n) {
		snprintf(why, size, "%zu keys, the filter has %zu: extra key '%s'",
			 ks->n, i, ks->e[i].key);
		return -1;
	}
	return 0;
}

bool kb_memstat_bracketed(unsigned long long v, unsigned long long a,
			  unsigned long long b, unsigned int tol_ppm)
{
	unsigned long long lo = a < b ? a : b, hi = a < b ? b : a;
	unsigned long long slack = hi / 1000000 * tol_ppm +
				   hi % 1000000 * tol_ppm / 1000000;

	return v >= (lo > slack ? lo - slack : 0) &&
	       v <= (hi > ULLONG_MAX - slack ? ULLONG_MAX : hi + slack);
}

int kb_memstat_values_bracketed(const struct kb_memstat *got,
				const struct kb_memstat *before,
				const struct kb_memstat *after,
				unsigned int tol_ppm, char *why, size_t size)
{
	size_t i;

	for (i = 0; i < got->n; i++) {
		const char *key = got->e[i].key;
		unsigned long long b, a;

		if (!kb_memstat_get(before, key, &b) ||
		    !kb_memstat_get(after, key, &a)) {
			snprintf(why, size, "'%s' is not a key of memory.stat",
				 key);
			return -1;
		}
		if (!kb_memstat_bracketed(got->e[i].value, b, a, tol_ppm)) {
			snprintf(why, size, "%s: %llu, memory.stat read before and after: %llu and %llu (tolerance %.3f %%)",
				 key, got->e[i].value, b, a, tol_ppm / 1e4);
			return -1;
		}
	}
	return 0;
}
