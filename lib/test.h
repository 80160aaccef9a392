/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A program's table of tests, in the shape of the kernel's
 * selftests/cgroup/test_memcontrol.c: one entry per KTAP result, run by
 * kb_ktap_run_tests() (ktap.h) in table order.
 */
#ifndef KBENCH_TEST_H
#define KBENCH_TEST_H

#include <stddef.h>
#include <string.h>

/*
 * One test: @fn returns KSFT_PASS, KSFT_FAIL or KSFT_SKIP and writes why
 * (a FAIL's or SKIP's reason) into @reason. @ctx is the program's context
 * struct: tests share no globals and do not depend on another test having
 * run. @name is the stable KTAP/JSON name; @desc one line for --list.
 * An entry of a family (one per timed row, per method, per pair) has
 * @fn_arg instead, called with the entry's @arg: one function serves
 * every row, one table line each.
 */
struct kb_test {
	const char *name;
	int (*fn)(void *ctx, char *reason, size_t len);
	const char *desc;
	int (*fn_arg)(void *ctx, int arg, char *reason, size_t len);
	int arg;
};

#define KB_TEST(n, f, d)	{ .name = (n), .fn = (f), .desc = (d) }
#define KB_TEST_ARG(n, f, a, d) \
	{ .name = (n), .fn_arg = (f), .arg = (a), .desc = (d) }

/* Run test @t with @ctx. */
static inline int kb_test_run(const struct kb_test *t, void *ctx,
			      char *reason, size_t len)
{
	return t->fn_arg ? t->fn_arg(ctx, t->arg, reason, len) :
			   t->fn(ctx, reason, len);
}

#define KB_TEST_MAX	2048	/* a -t selection of the largest table */

/* Index of the test called @name in tests[0..n-1], or -1. */
static inline int kb_test_index(const struct kb_test *tests, size_t n,
				const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(tests[i].name, name))
			return (int)i;
	return -1;
}

#endif /* KBENCH_TEST_H */
