// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: the option-value parsers of lib/cli.c
 * (kb_cli_parse_ll, kb_cli_parse_size, kb_cli_parse_double,
 * kb_cli_parse_seconds, kb_cli_parse_duration). The first byte picks the
 * parser and its bounds, the rest is the value. A rejected value ends in
 * kb_cli_error(), whose exit() is wrapped (-Wl,--wrap=exit) to jump back
 * here; an accepted one must lie within the bounds it was given.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kbench.h"
#include "wrap_exit.h"

static jmp_buf usage_exit;
static int expected_status;

/* libFuzzer's own exit() goes through here too: only a parser's is caught. */
void __wrap_exit(int status)
{
	if (!expected_status)
		__real_exit(status);
	/* A parser ends only in a usage error, with status 2. */
	if (status != KB_CLI_EXIT_USAGE)
		abort();
	longjmp(usage_exit, 1);
}

static const struct {
	long long min, max;
} ll_bounds[] = {
	{ 1, 100 }, { 0, LLONG_MAX }, { LLONG_MIN, LLONG_MAX }, { -10, 10 },
};

static const struct {
	unsigned long long min, max;
} size_bounds[] = {
	{ 0, ULLONG_MAX }, { 1, 1ull << 40 }, { 4096, 4096ull << 20 },
};

static const struct {
	double min, max;
} dbl_bounds[] = {
	{ 0, 10 }, { -5, 5 }, { 0, 1e300 }, { 1e-6, 86400 },
};

static void check(int ok)
{
	if (!ok)
		abort();
}

static void parse(unsigned int pick, const char *s)
{
	unsigned int b = pick >> 3;

	switch (pick & 7) {
	case 0: {
		long long v, lo = ll_bounds[b % ARRAY_SIZE(ll_bounds)].min;
		long long hi = ll_bounds[b % ARRAY_SIZE(ll_bounds)].max;

		v = kb_cli_parse_ll(s, "-i", lo, hi);
		check(v >= lo && v <= hi);
		break;
	}
	case 1: {
		unsigned long long v;
		unsigned long long lo = size_bounds[b % ARRAY_SIZE(size_bounds)].min;
		unsigned long long hi = size_bounds[b % ARRAY_SIZE(size_bounds)].max;

		v = kb_cli_parse_size(s, "-m", lo, hi);
		check(v >= lo && v <= hi);
		break;
	}
	case 2:
	case 3: {
		double v, lo = dbl_bounds[b % ARRAY_SIZE(dbl_bounds)].min;
		double hi = dbl_bounds[b % ARRAY_SIZE(dbl_bounds)].max;

		if (pick & 1)
			v = kb_cli_parse_seconds(s, "-T", lo, hi);
		else
			v = kb_cli_parse_double(s, "-T", lo, hi);
		check(v >= lo && v <= hi);
		break;
	}
	default:
		check(kb_cli_parse_duration(s, "-D") >= 1);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char s[256];

	if (size < 1 || size > sizeof(s))
		return -1;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	expected_status = 1;
	if (!setjmp(usage_exit))
		parse(data[0], s);
	expected_status = 0;
	return 0;
}
