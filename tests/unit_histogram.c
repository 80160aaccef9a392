// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/histogram.c: bucket layout, exact figures, percentile
 * error bound, merging, the linear display histogram.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kbench_ktap.h"
#include "histogram.h"

static struct kb_hist h, h2;

static void test_index_layout(void)
{
	unsigned int i;
	bool ok = true;

	/* Small values are exact; every bucket's bounds map back to it. */
	for (i = 0; i < KB_HIST_SUB * 2; i++)
		ok &= kb_hist_index(i) == i;
	for (i = 0; i < KB_HIST_BUCKETS - 1 && ok; i++) {
		ok &= kb_hist_index(kb_hist_bucket_low(i)) == i;
		ok &= kb_hist_index(kb_hist_bucket_high(i)) == i;
		ok &= kb_hist_bucket_high(i) + 1 == kb_hist_bucket_low(i + 1);
	}
	ok &= kb_hist_index(UINT64_MAX) == KB_HIST_BUCKETS - 1;
	kb_result(ok, "hist_index_layout", "bucket bounds do not tile the range");
}

static void test_exact_figures(void)
{
	uint64_t v;
	bool ok;

	kb_hist_init(&h);
	for (v = 1; v <= 1000; v++)
		kb_hist_record(&h, v * 1000);
	ok = h.count == 1000 && h.min == 1000 && h.max == 1000000 &&
	     fabs(kb_hist_mean(&h) - 500500.0) < 1e-6 &&
	     /* sample stddev of 1..1000 times 1000 */
	     fabs(kb_hist_stddev(&h) - 288819.436) < 0.01;
	ksft_print_msg("mean %.3f stddev %.3f\n", kb_hist_mean(&h),
		       kb_hist_stddev(&h));
	kb_result(ok, "hist_exact_figures", "count/min/max/mean/stddev wrong");
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Percentiles against the exact order statistic of random data. */
static void test_percentile_error(void)
{
	static const double ps[] = { 1, 10, 50, 90, 99, 99.9 };
	enum { N = 100000 };
	uint64_t *vals = calloc(N, sizeof(*vals));
	double worst = 0;
	size_t i, k;

	if (!vals)
		ksft_exit_fail_msg("out of memory\n");
	srand(42);
	kb_hist_init(&h);
	for (i = 0; i < N; i++) {
		/* Long-tailed, like latencies: 1 us .. ~10 ms. */
		vals[i] = 1000 + (uint64_t)(exp((double)rand() / RAND_MAX * 9.2) * 1000);
		kb_hist_record(&h, vals[i]);
	}
	qsort(vals, N, sizeof(*vals), cmp_u64);
	for (k = 0; k < ARRAY_SIZE(ps); k++) {
		size_t rank = (size_t)ceil(ps[k] / 100.0 * N);
		double exact = (double)vals[rank - 1];
		double got = kb_hist_percentile(&h, ps[k]);
		double err = fabs(got - exact) / exact;

		if (err > worst)
			worst = err;
	}
	ksft_print_msg("worst relative percentile error %.5f (bound %.5f)\n",
		       worst, 1.0 / KB_HIST_SUB);
	kb_result(worst <= 1.0 / KB_HIST_SUB &&
		  kb_hist_percentile(&h, 0) == (double)vals[0] &&
		  kb_hist_percentile(&h, 100) == (double)vals[N - 1],
		  "hist_percentile_error", "percentile outside the error bound");
	free(vals);
}

static void test_empty_and_merge(void)
{
	struct kb_stats st;
	bool ok;

	kb_hist_init(&h);
	kb_hist_init(&h2);
	ok = isnan(kb_hist_percentile(&h, 50)) && kb_hist_stats(&h, 1, &st) == -1;
	kb_hist_record(&h, 10);
	kb_hist_record(&h2, 5);
	kb_hist_record(&h2, 20);
	kb_hist_merge(&h, &h2);
	ok &= h.count == 3 && h.min == 5 && h.max == 20 && h.sum == 35;
	ok &= !kb_hist_stats(&h, 0.5, &st) && st.n == 3 && st.min == 2.5 &&
	      st.max == 10 && st.median == 5 && st.min <= st.mean &&
	      st.mean <= st.max;
	kb_result(ok, "hist_empty_and_merge", "empty/merge/stats wrong");
}

static void test_linear(void)
{
	struct kb_hist_linear lh;
	bool ok;

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
	kb_result(ok, "hist_linear", "linear buckets wrong");
}

int main(void)
{
	ksft_print_header();
	ksft_set_plan(5);
	test_index_layout();
	test_exact_figures();
	test_percentile_error();
	test_empty_and_merge();
	test_linear();
	ksft_finished();
}
