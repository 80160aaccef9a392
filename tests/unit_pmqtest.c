// SPDX-License-Identifier: GPL-2.0
/*
 * Negative unit tests of pmqtest's verdicts: each feeds a pair (or an
 * errno, or a queue name) with the bug a check promises to catch and
 * expects the check to say so; and the healthy case, so that a check that
 * always complains is caught too. The kernel-facing cases are proved by
 * pmqtest/inject_faults.sh.
 *
 * The engine is compiled in from pmqtest/: tests/run.sh builds each unit
 * test against the lib's sources only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "ktap.h"
#include "../pmqtest/pmq_run.c"
#include "../pmqtest/pmq_json.c"

#define LOOPS	10

/* A pair that ran LOOPS cycles of 5 us each, in a run that finished. */
static void healthy_pair(struct pmq_run *r, struct pmq_pair *p)
{
	int i;

	memset(r, 0, sizeof(*r));
	memset(p, 0, sizeof(*p));
	r->stop = PMQ_STOP_DONE;
	p->run = r;
	p->loops = LOOPS;
	p->samples = LOOPS;
	kb_hist_init(&p->hist);
	for (i = 0; i < LOOPS; i++)
		kb_hist_record(&p->hist, 5000);
}

/* @p's problem, or NULL; @want_timeouts as the checks pass it. */
static const char *problem(const struct pmq_pair *p, double max_us,
			   long long want_timeouts)
{
	static char why[256];

	return pmq_pair_problem(p, max_us, want_timeouts, why, sizeof(why));
}

static int expect_problem(const char *what, const struct pmq_pair *p,
			  double max_us, long long want_timeouts,
			  char *reason, size_t len)
{
	const char *why = problem(p, max_us, want_timeouts);

	if (!why) {
		snprintf(reason, len, "%s passed", what);
		return KSFT_FAIL;
	}
	ksft_print_msg("%s: %s\n", what, why);
	return KSFT_PASS;
}

static int test_healthy_pair_passes(void *ctx, char *reason, size_t len)
{
	struct pmq_run r;
	struct pmq_pair p;
	const char *why;

	(void)ctx;
	healthy_pair(&r, &p);
	why = problem(&p, 100, 0);
	if (why) {
		snprintf(reason, len, "a healthy pair fails: %s", why);
		return KSFT_FAIL;
	}
	return KSFT_PASS;
}

/* latency_pairN: a pair that lost cycles. */
static int test_missing_cycles_fail(void *ctx, char *reason, size_t len)
{
	struct pmq_run r;
	struct pmq_pair p;

	(void)ctx;
	healthy_pair(&r, &p);
	p.samples = LOOPS - 1;
	return expect_problem("a lost message", &p, 0, -1, reason, len);
}

/* latency_pairN: figures that cannot be (a zero latency). */
static int test_zero_latency_fails(void *ctx, char *reason, size_t len)
{
	struct pmq_run r;
	struct pmq_pair p;

	(void)ctx;
	healthy_pair(&r, &p);
	kb_hist_record(&p.hist, 0);
	p.loops = p.samples = LOOPS + 1;
	return expect_problem("a 0 ns latency", &p, 0, -1, reason, len);
}

/* latency_pairN with --max-latency. */
static int test_max_latency_fails(void *ctx, char *reason, size_t len)
{
	struct pmq_run r;
	struct pmq_pair p;

	(void)ctx;
	healthy_pair(&r, &p);
	return expect_problem("5 us over a 4 us limit", &p, 4, -1, reason, len);
}

/* timed_receive: one timeout where none is due. */
static int test_spurious_timeout_fails(void *ctx, char *reason, size_t len)
{
	struct pmq_run r;
	struct pmq_pair p;

	(void)ctx;
	healthy_pair(&r, &p);
	p.timeouts = 1;
	return expect_problem("a spurious timeout", &p, 0, 0, reason, len);
}

/* forced_timeouts: one short and one too many. */
static int test_timeout_count_fails(void *ctx, char *reason, size_t len)
{
	struct pmq_run r;
	struct pmq_pair p;
	int ret;

	(void)ctx;
	healthy_pair(&r, &p);
	p.timeouts = 5;
	ret = expect_problem("5 timeouts of 6", &p, 0, 6, reason, len);
	p.timeouts = 7;
	if (ret == KSFT_PASS)
		ret = expect_problem("7 timeouts of 6", &p, 0, 6, reason, len);
	p.timeouts = 6;
	if (ret == KSFT_PASS && problem(&p, 0, 6)) {
		snprintf(reason, len, "6 timeouts of 6 fail");
		ret = KSFT_FAIL;
	}
	return ret;
}

/* forced_timeouts' range: 1 to 3 a cycle of 3 pass, 2 and 10 do not. */
static int test_timeout_range(void *ctx, char *reason, size_t len)
{
	static const unsigned long long counts[] = { 2, 3, 6, 9, 10 };
	static const bool passes[] = { false, true, true, true, false };
	struct pmq_run r;
	struct pmq_pair p;
	char why[128];
	size_t i;

	(void)ctx;
	healthy_pair(&r, &p);
	for (i = 0; i < ARRAY_SIZE(counts); i++) {
		p.timeouts = counts[i];
		if (!pmq_timeouts_problem(&p, 3, 9, why, sizeof(why)) !=
		    passes[i]) {
			snprintf(reason, len, "%llu timeouts in 3..9: %s",
				 counts[i], passes[i] ? "failed" : "passed");
			return KSFT_FAIL;
		}
	}
	return KSFT_PASS;
}

/* Any check: an error a thread met. */
static int test_thread_error_fails(void *ctx, char *reason, size_t len)
{
	struct pmq_run r;
	struct pmq_pair p;

	(void)ctx;
	healthy_pair(&r, &p);
	p.err = EBADMSG;
	p.err_what = "mq_receive(test)";
	return expect_problem("a short message", &p, 0, -1, reason, len);
}

/* Setup errors: only a missing feature skips. */
static int test_setup_errno_rule(void *ctx, char *reason, size_t len)
{
	static const int fail[] = { EINVAL, ENOSPC, EMFILE, ENOMEM, EAGAIN };
	size_t i;

	(void)ctx;
	if (!pmq_setup_skips(NULL, -ENOSYS)) {
		snprintf(reason, len, "ENOSYS from mq_open does not skip");
		return KSFT_FAIL;
	}
	for (i = 0; i < ARRAY_SIZE(fail); i++) {
		if (pmq_setup_skips(NULL, -fail[i])) {
			snprintf(reason, len, "%s from mq_open skips",
				 strerrorname_np(fail[i]));
			return KSFT_FAIL;
		}
	}
	return KSFT_PASS;
}

/* queues_unlinked: a name left linked is counted (and then removed). */
static int test_linked_name_counted(void *ctx, char *reason, size_t len)
{
	static struct pmq_host h;
	struct mq_attr attr = { .mq_maxmsg = 1, .mq_msgsize = 16 };
	char name[PMQ_NAME_LEN];
	int before, after, ret = KSFT_PASS;
	mqd_t q;

	(void)ctx;
	snprintf(name, sizeof(name), "/kbench-unit-pmqtest-%d", getpid());
	q = mq_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600, &attr);
	if (q == (mqd_t)-1)
		return kb_errno_result(errno, KB_ENV_NO_CAP, "mq_open", reason, len);
	mq_close(q);
	remember_name(&h, name);
	before = pmq_linked_names(&h);
	after = pmq_linked_names(&h);
	if (before != 1 || after != 0) {
		snprintf(reason, len, "linked names counted %d then %d, expected 1 then 0",
			 before, after);
		ret = KSFT_FAIL;
	}
	mq_unlink(name);
	pmq_host_free(&h);
	return ret;
}

static const struct kb_test tests[] = {
	KB_TEST("pmq_healthy_pair_passes", test_healthy_pair_passes, NULL),
	KB_TEST("pmq_missing_cycles_fail", test_missing_cycles_fail, NULL),
	KB_TEST("pmq_zero_latency_fails", test_zero_latency_fails, NULL),
	KB_TEST("pmq_max_latency_fails", test_max_latency_fails, NULL),
	KB_TEST("pmq_spurious_timeout_fails", test_spurious_timeout_fails, NULL),
	KB_TEST("pmq_timeout_count_fails", test_timeout_count_fails, NULL),
	KB_TEST("pmq_timeout_range", test_timeout_range, NULL),
	KB_TEST("pmq_thread_error_fails", test_thread_error_fails, NULL),
	KB_TEST("pmq_setup_errno_rule", test_setup_errno_rule, NULL),
	KB_TEST("pmq_linked_name_counted", test_linked_name_counted, NULL),
};

int main(void)
{
	ksft_print_header();
	kb_ktap_run_tests(tests, ARRAY_SIZE(tests), NULL, NULL);
	ksft_finished();
}
