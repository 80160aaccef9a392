/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KTAP results by stable name, on top of the kernel's kselftest.h.
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
#include "kselftest.h"

static inline void kb_pass(const char *name)
{
	ksft_test_result_pass("%s\n", name);
}

/* A failed result; @why (may be NULL) is printed as a diagnostic first. */
static inline void kb_fail(const char *name, const char *why)
{
	if (why)
		ksft_print_msg("%s: %s\n", name, why);
	kb_row_status(name, "fail", why);
	ksft_test_result_fail("%s\n", name);
}

/* "ok N NAME # SKIP REASON": the name stays where parsers look for it. */
static inline void kb_skip(const char *name, const char *reason)
{
	ksft_inc_xskip_cnt();
	kb_row_status(name, "skip", reason);
	printf("ok %u %s # SKIP %s\n", ksft_test_num(), name, reason);
}

static inline void kb_result(bool ok, const char *name, const char *why)
{
	if (ok)
		kb_pass(name);
	else
		kb_fail(name, why);
}

/*
 * Write the JSON document when @json_path is set, print the totals and
 * exit: 0 when every planned test passed or skipped, 1 otherwise.
 * A JSON file that cannot be written is a failure of the run.
 */
static inline void kb_finish(const char *json_path)
{
	int err;

	if (json_path) {
		err = kb_json_write(json_path);
		if (err) {
			ksft_print_msg("cannot write %s: %s\n", json_path,
				       strerror(-err));
			ksft_exit_fail();
		}
	}
	ksft_finished();
}

#endif /* KBENCH_KTAP_H */
