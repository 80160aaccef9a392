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
 */
struct kb_test {
	const char *name;
	int (*fn)(void *ctx, char *reason, size_t len);
	const char *desc;
};

#define KB_TEST_MAX	2048	/* room for a test per pmqtest pair */

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
