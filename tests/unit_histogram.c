// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/hist.c: bucket layout, exact figures, percentile
 * error bound, merging, the linear display histogram.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ktap.h"
#include "hist.h"

/* Each test's histograms: too large for the stack, shared by none. */
struct hists {
	struct kb_hist a;
};

static int verdict(bool ok, const char *why, char *reason, size_t len)
{
	if (ok)
		return KSFT_PASS;
	snprintf(reason, len, "%s", why);
	return KSFT_FAIL;
}

static int test_index_layout(void *ctx, char *reason, size_t len)
{
	unsigned int i;
	bool ok = true;

	(void)ctx;
	/* Small values are exact; every bucket's bounds map back to it. */
	for (i = 0; i < KB_HIST_SUB * 2; i++)
		ok &= kb_hist_index(i) == i;
	for (i = 0; i < KB_HIST_BUCKETS - 1 && ok; i++) {
		ok &= kb_hist_index(kb_hist_bucket_low(i)) == i;
		ok &= kb_hist_index(kb_hist_bucket_high(i)) == i;
		ok &= kb_hist_bucket_high(i) + 1 == kb_hist_bucket_low(i + 1);
	}
	ok &= kb_hist_index(UINT64_MAX) == KB_HIST_BUCKETS - 1;
	return verdict(ok, "bucket bounds do not tile the range", reason, len);
}

static int test_exact_figures(void *ctx, char *reason, size_t len)
{
	struct hists *hs = ctx;
	struct kb_hist *h = &hs->a;
	uint64_t v;
	bool ok;

	kb_hist_init(h);
	for (v = 1; v <= 1000; v++)
		kb_hist_record(h, v * 1000);
	ok = h->count == 1000 && h->min == 1000 && h->max == 1000000 &&
	     fabs(kb_hist_mean(h) - 500500.0) < 1e-6 &&
	     /* sample stddev of 1..1000 times 1000 */
	     fabs(kb_hist_stddev(h) - 288819.436) < 0.01;
	ksft_print_msg("mean %.3f stddev %.3f\n", kb_hist_mean(h),
		       kb_hist_stddev(h));
	return verdict(ok, "count/min/max/mean/stddev wrong", reason, len);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Percentiles against the exact order statistic of random data. */
static int test_percentile_error(void *ctx, char *reason, size_t len)
{
	struct hists *hs = ctx;
	struct kb_hist *h = &hs->a;
	static const double ps[] = { 1, 10, 50, 90, 99, 99.9 };
	enum { N = 100000 };
	uint64_t *vals = calloc(N, sizeof(*vals));
	double worst = 0;
	size_t i, k;
	bool ok;

	if (!vals)
		return verdict(false, "out of memory", reason, len);
	srand(42);
	kb_hist_init(h);
	for (i = 0; i < N; i++) {
		/* Long-tailed, like latencies: 1 us .. ~10 ms. */
		vals[i] = 1000 + (uint64_t)(exp((double)rand() / RAND_MAX * 9.2) * 1000);
		kb_hist_record(h, vals[i]);
	}
	qsort(vals, N, sizeof(*vals), cmp_u64);
	for (k = 0; k < ARRAY_SIZE(ps); k++) {
		size_t rank = (size_t)ceil(ps[k] / 100.0 * N);
		double exact = (double)vals[rank - 1];
		double got = kb_hist_percentile(h, ps[k]);
		double err = fabs(got - exact) / exact;

		if (err > worst)
			worst = err;
	}
	ksft_print_msg("worst relative percentile error %.5f (bound %.5f)\n",
		       worst, 1.0 / KB_HIST_SUB);
	ok = worst <= 1.0 / KB_HIST_SUB &&
	     kb_hist_percentile(h, 0) == (double)vals[0] &&
	     kb_hist_percentile(h, 100) == (double)vals[N - 1];
	free(vals);
	return verdict(ok, "percentile outside the error bound", reason, len);
}

static int test_empty_and_stats(void *ctx, char *reason, size_t len)
{
	struct hists *hs = ctx;
	struct kb_hist *h = &hs->a;
	struct kb_stats st;
	bool ok;

	kb_hist_init(h);
	ok = isnan(kb_hist_percentile(h, 50)) && kb_hist_stats(h, 1, &st) == -1;
	kb_hist_record(h, 10);
	kb_hist_record(h, 5);
	kb_hist_record(h, 20);
	ok &= h->count == 3 && h->min == 5 && h->max == 20 && h->sum == 35;
	ok &= !kb_hist_stats(h, 0.5, &st) && st.n == 3 && st.min == 2.5 &&
	      st.max == 10 && st.median == 5 && st.min <= st.mean &&
	      st.mean <= st.max;
	return verdict(ok, "empty/stats wrong", reason, len);
}

static int test_linear(void *ctx, char *reason, size_t len)
{
	struct kb_hist_linear lh;
	bool ok;

	(void)ctx;
	ok = kb_hist_linear_init(&lh, 0, 1000) == -EINVAL;
	ok &= kb_hist_linear_init(&lh, 10, 1000) == 0;
	kb_hist_linear_record(&lh, 0);
	kb_hist_linear_record(&lh, 999);
	kb_hist_linear_record(&lh, 1000);
	kb_hist_linear_record(&lh, 9999);
	kb_hist_linear_record(&lh, 10000);
	ok &= lh.counts[0] == 2 && lh.counts[1] == 1 && lh.counts[9] == 1 &&
	      lh.overflow == 1;
	kb_hist_linear_free(&lh);
	return verdict(ok, "linear buckets wrong", reason, len);
}

static const struct kb_test tests[] = {
	KB_TEST("hist_index_layout", test_index_layout, NULL),
	KB_TEST("hist_exact_figures", test_exact_figures, NULL),
	KB_TEST("hist_percentile_error", test_percentile_error, NULL),
	KB_TEST("hist_empty_and_stats", test_empty_and_stats, NULL),
	KB_TEST("hist_linear", test_linear, NULL),
};

int main(void)
{
	struct hists *hs = calloc(1, sizeof(*hs));

	ksft_print_header();
	if (!hs)
		ksft_exit_fail_msg("out of memory\n");
	kb_ktap_run_tests(tests, ARRAY_SIZE(tests), NULL, hs);
	free(hs);
	ksft_finished();
}
