// SPDX-License-Identifier: GPL-2.0
/*
 * Text of a buffer. See text.h.
 */
#include "text.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

bool kb_text_next_line(struct kb_text *t, const char **line, size_t *len)
{
	const char *nl;

	if (!t->p || t->p >= t->end)
		return false;
	nl = memchr(t->p, '\n', (size_t)(t->end - t->p));
	*line = t->p;
	*len = (size_t)((nl ? nl : t->end) - t->p);
	t->p = nl ? nl + 1 : t->end;
	return true;
}

bool kb_text_list_has(const char *list, size_t len, char sep,
		      const char *word)
{
	size_t wlen = strlen(word);
	const char *p = list, *end = list + len;

	while (p < end) {
		const char *next = memchr(p, sep, (size_t)(end - p));
		size_t n = (size_t)((next ? next : end) - p);

		if (n == wlen && !memcmp(p, word, wlen))
			return true;
		if (!next)
			break;
		p = next + 1;
	}
	return false;
}

bool kb_text_opts_have(const char *opts, const char *opt)
{
	return kb_text_list_has(opts, strlen(opts), ',', opt);
}

int kb_text_parse_u64(const char *s, size_t n, unsigned long long *v)
{
	unsigned long long x = 0;
	size_t i;

	if (!n)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		unsigned int d = (unsigned char)s[i] - '0';

		if (d > 9 || x > (ULLONG_MAX - d) / 10)
			return -EINVAL;
		x = x * 10 + d;
	}
	*v = x;
	return 0;
}

void kb_text_reason(char *why, size_t size, const char *what,
		    const char *line, size_t len)
{
	if (why && size)
		snprintf(why, size, "%s: '%.*s%s'", what,
			 (int)(len > 80 ? 80 : len), line, len > 80 ? "..." : "");
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

bool kb_text_next_token(const char **s, const char *end, const char **tok,
			size_t *n)
{
	const char *p = *s;

	while (p < end && is_blank(*p))
		p++;
	if (p == end)
		return false;
	*tok = p;
	while (p < end && !is_blank(*p))
		p++;
	*n = (size_t)(p - *tok);
	*s = p;
	return true;
}
