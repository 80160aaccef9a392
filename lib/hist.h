/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Latency histograms for long or endless runs, where keeping every sample
 * is not an option.
 *
 * struct kb_hist records integer values (nanoseconds, typically) in
 * log-linear buckets: values below 2^KB_HIST_SUB_BITS are exact, larger
 * ones land in one of 2^KB_HIST_SUB_BITS buckets per power of two, so a
 * percentile is off by less than 1/2^KB_HIST_SUB_BITS (0.8 %) of its value.
 * Count, sum, sum of squares, min and max are exact. Recording is O(1)
 * with no allocation, cheap enough for a measuring thread.
 *
 * struct kb_hist_linear is the display histogram (one line per bucket, as
 * rt-tests' cyclictest prints it): fixed-width buckets from 0 and an
 * overflow count.
 *
 * Neither is locked: one writer; readers look after the writer finished.
 */
#ifndef KBENCH_HIST_H
#define KBENCH_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats.h"

#define KB_HIST_SUB_BITS	7
#define KB_HIST_SUB		(1u << KB_HIST_SUB_BITS)
/* Exact range of the log-linear part: values up to 2^KB_HIST_MAX_BITS - 1. */
#define KB_HIST_MAX_BITS	44
#define KB_HIST_BUCKETS	((KB_HIST_MAX_BITS - KB_HIST_SUB_BITS + 1) * KB_HIST_SUB)

struct kb_hist {
	uint64_t count;
	uint64_t min;
	uint64_t max;
	double sum;
	double sumsq;
	uint64_t buckets[KB_HIST_BUCKETS];
};

void kb_hist_init(struct kb_hist *h);
void kb_hist_record(struct kb_hist *h, uint64_t value);

double kb_hist_mean(const struct kb_hist *h);
/* Sample standard deviation (n - 1), 0 for fewer than two values. */
double kb_hist_stddev(const struct kb_hist *h);
/*
 * Percentile @p (0..100): the smallest recorded bucket whose cumulative
 * count reaches p % of the values, reported as the bucket's midpoint and
 * clamped to [min, max]. p <= 0 gives min, p >= 100 gives max, an empty
 * histogram gives NaN.
 */
double kb_hist_percentile(const struct kb_hist *h, double p);
/*
 * The figures of struct kb_stats, every value multiplied by @scale
 * (1e-3 turns nanoseconds into microseconds). Returns -1 when empty.
 */
int kb_hist_stats(const struct kb_hist *h, double scale, struct kb_stats *st);

/* Bucket index of @value and the lowest / highest value of a bucket. */
unsigned int kb_hist_index(uint64_t value);
uint64_t kb_hist_bucket_low(unsigned int idx);
uint64_t kb_hist_bucket_high(unsigned int idx);

struct kb_hist_linear {
	uint64_t width;		/* value range of one bucket */
	size_t nbuckets;
	uint64_t overflow;	/* values >= width * nbuckets */
	uint64_t *counts;
};

/* 0, or -ENOMEM / -EINVAL (zero width or buckets). */
int kb_hist_linear_init(struct kb_hist_linear *h, size_t nbuckets,
			uint64_t width);
void kb_hist_linear_free(struct kb_hist_linear *h);

static inline void kb_hist_linear_record(struct kb_hist_linear *h,
					 uint64_t value)
{
	uint64_t idx = value / h->width;

	if (idx < h->nbuckets)
		h->counts[idx]++;
	else
		h->overflow++;
}

#endif /* KBENCH_HIST_H */
