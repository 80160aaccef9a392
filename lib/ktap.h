/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KTAP results by stable name, on top of the kernel's kselftest.h, and
 * the table runner.
 *
 * kselftest.h keeps its counters in static variables, one copy per
 * translation unit, so these wrappers are static inline and must be used
 * from the file that calls ksft_finished() (the test's main file).
 * They use only what the 6.1 header already has.
 */
#ifndef KBENCH_KTAP_H
#define KBENCH_KTAP_H

#include <stdio.h>
#include <string.h>

#include "kbench.h"

static inline void kb_ktap_pass(const char *name)
{
	ksft_test_result_pass("%s\n", name);
}

/* A failed result; @why (may be NULL) is printed as a diagnostic first. */
static inline void kb_ktap_fail(const char *name, const char *why)
{
	if (why)
		ksft_print_msg("%s: %s\n", name, why);
	kb_results_status(name, "fail", why);
	ksft_test_result_fail("%s\n", name);
}

/* "ok N NAME # SKIP REASON": the name stays where parsers look for it. */
static inline void kb_ktap_skip(const char *name, const char *reason)
{
	ksft_inc_xskip_cnt();
	kb_results_status(name, "skip", reason);
	printf("ok %u %s # SKIP %s\n", ksft_test_num(), name, reason);
}

static inline void kb_ktap_result(bool ok, const char *name, const char *why)
{
	if (ok)
		kb_ktap_pass(name);
	else
		kb_ktap_fail(name, why);
}

/* Report one test's KSFT_* code by its stable name, with its reason. */
static inline void kb_ktap_report(const char *name, int code,
				  const char *reason)
{
	char why[64];

	switch (code) {
	case KSFT_PASS:
		kb_ktap_pass(name);
		break;
	case KSFT_SKIP:
		kb_ktap_skip(name, reason && *reason ? reason : "skipped");
		break;
	case KSFT_FAIL:
		kb_ktap_fail(name, reason && *reason ? reason : NULL);
		break;
	default:
		snprintf(why, sizeof(why), "test returned %d, not a KSFT_* code",
			 code);
		kb_ktap_fail(name, why);
	}
}

/*
 * The table runner: print the plan (the tests @selected: NULL for all; the
 * others are left out of it), run each with @ctx and report it by name.
 * Call ksft_print_header() before, kb_ktap_finish() after.
 */
static inline void kb_ktap_run_tests(const struct kb_test *tests, size_t n,
				     const bool *selected, void *ctx)
{
	unsigned int plan = 0;
	char reason[1024];
	size_t i;
	int code;

	for (i = 0; i < n; i++)
		plan += !selected || selected[i];
	ksft_set_plan(plan);
	for (i = 0; i < n; i++) {
		if (selected && !selected[i])
			continue;
		reason[0] = '\0';
		kb_settle();
		code = kb_test_run(&tests[i], ctx, reason, sizeof(reason));
		kb_ktap_report(tests[i].name, code, reason);
	}
}

/*
 * Write the JSON document when @json_path is set, print the totals and
 * exit: 0 when every planned test passed or skipped, 1 otherwise, and
 * KSFT_SKIP (4) when every planned test skipped (nothing ran).
 * A JSON file that cannot be written is a failure of the run.
 */
static inline void kb_ktap_finish(const char *json_path)
{
	int err;

	if (json_path) {
		err = kb_results_write_json(json_path);
		if (err) {
			ksft_print_msg("cannot write %s: %s\n", json_path,
				       strerror(-err));
			ksft_exit_fail();
		}
	}
	if (ksft_plan && ksft_cnt.ksft_xskip == ksft_plan) {
		ksft_print_cnts();
		exit(KSFT_SKIP);
	}
	ksft_finished();
}

#endif /* KBENCH_KTAP_H */
