/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Text of a buffer, as the kernel's files hand it over: lines, blank
 * separated tokens, word lists, unsigned decimals.
 *
 * Every parser built on these takes a buffer and its length (the buffer
 * need not be NUL terminated) and touches no file, so unit tests and
 * fuzzers feed them any bytes. A line that does not fit what the format
 * allows is rejected, never truncated.
 */
#ifndef KBENCH_TEXT_H
#define KBENCH_TEXT_H

#include <stdbool.h>
#include <stddef.h>

struct kb_text {
	const char *p;
	const char *end;
};

static inline void kb_text_init(struct kb_text *t, const char *buf, size_t len)
{
	t->p = buf;
	t->end = buf + len;
}

/* The next line (without its '\n') into @line/@len; false at the end. */
bool kb_text_next_line(struct kb_text *t, const char **line, size_t *len);

/*
 * The next blank (space or tab) separated token of [*@s, @end) into
 * @tok/@n, *@s moved past it; false when none is left.
 */
bool kb_text_next_token(const char **s, const char *end, const char **tok,
			size_t *n);

/* All @n bytes of @s as a decimal without sign; -EINVAL on anything else. */
int kb_text_parse_u64(const char *s, size_t n, unsigned long long *v);

/* "WHAT: 'LINE'" in @why (may be NULL), LINE cut at 80 bytes. */
void kb_text_reason(char *why, size_t size, const char *what,
		    const char *line, size_t len);

/* True when the @sep separated list @list (@len bytes) holds @word. */
bool kb_text_list_has(const char *list, size_t len, char sep,
		      const char *word);

/* True when the comma separated list @opts holds the word @opt. */
bool kb_text_opts_have(const char *opts, const char *opt);

#endif /* KBENCH_TEXT_H */
