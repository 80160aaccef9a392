// SPDX-License-Identifier: GPL-2.0
/*
 * Log-linear and linear histograms. See hist.h.
 */
#include "hist.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void kb_hist_init(struct kb_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

/*
 * Group 0 holds 0 .. SUB-1 one value per bucket. Group g >= 1 holds the
 * values whose highest set bit is SUB_BITS + g - 1, in SUB buckets of
 * width 2^(g - 1).
 */
unsigned int kb_hist_index(uint64_t value)
{
	unsigned int msb, shift;

	if (value < KB_HIST_SUB)
		return (unsigned int)value;
	msb = 63 - (unsigned int)__builtin_clzll(value);
	if (msb >= KB_HIST_MAX_BITS)
		return KB_HIST_BUCKETS - 1;
	shift = msb - KB_HIST_SUB_BITS;
	return (shift + 1) * KB_HIST_SUB +
	       (unsigned int)((value >> shift) - KB_HIST_SUB);
}

uint64_t kb_hist_bucket_low(unsigned int idx)
{
	unsigned int group = idx / KB_HIST_SUB, sub = idx % KB_HIST_SUB;

	if (!group)
		return sub;
	return (uint64_t)(KB_HIST_SUB + sub) << (group - 1);
}

uint64_t kb_hist_bucket_high(unsigned int idx)
{
	unsigned int group = idx / KB_HIST_SUB;

	if (!group)
		return kb_hist_bucket_low(idx);
	return kb_hist_bucket_low(idx) + (1ull << (group - 1)) - 1;
}

void kb_hist_record(struct kb_hist *h, uint64_t value)
{
	double v = (double)value;

	h->buckets[kb_hist_index(value)]++;
	h->count++;
	h->sum += v;
	h->sumsq += v * v;
	if (value < h->min)
		h->min = value;
	if (value > h->max)
		h->max = value;
}

double kb_hist_mean(const struct kb_hist *h)
{
	return h->count ? h->sum / (double)h->count : NAN;
}

double kb_hist_stddev(const struct kb_hist *h)
{
	double n = (double)h->count, var;

	if (h->count < 2)
		return 0;
	/* Sums of squares of nanosecond values stay exact enough in double. */
	var = (h->sumsq - h->sum * h->sum / n) / (n - 1);
	return var > 0 ? sqrt(var) : 0;
}

double kb_hist_percentile(const struct kb_hist *h, double p)
{
	uint64_t rank, seen = 0;
	double mid;
	unsigned int i;

	if (!h->count)
		return NAN;
	if (p <= 0)
		return (double)h->min;
	if (p >= 100)
		return (double)h->max;
	rank = (uint64_t)ceil(p / 100.0 * (double)h->count);
	if (rank < 1)
		rank = 1;
	for (i = 0; i < KB_HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank)
			break;
	}
	if (i == KB_HIST_BUCKETS)
		return (double)h->max;
	mid = ((double)kb_hist_bucket_low(i) + (double)kb_hist_bucket_high(i)) / 2;
	if (mid < (double)h->min)
		return (double)h->min;
	if (mid > (double)h->max)
		return (double)h->max;
	return mid;
}

int kb_hist_stats(const struct kb_hist *h, double scale, struct kb_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!h->count)
		return -1;
	st->n = (size_t)h->count;
	st->mean = kb_hist_mean(h) * scale;
	st->min = (double)h->min * scale;
	st->max = (double)h->max * scale;
	st->median = kb_hist_percentile(h, 50) * scale;
	st->stddev = kb_hist_stddev(h) * scale;
	st->rsd_pct = st->mean != 0 ? st->stddev / st->mean * 100.0 : 0;
	st->p90 = kb_hist_percentile(h, 90) * scale;
	st->p99 = kb_hist_percentile(h, 99) * scale;
	st->p999 = kb_hist_percentile(h, 99.9) * scale;
	return 0;
}

int kb_hist_linear_init(struct kb_hist_linear *h, size_t nbuckets,
			uint64_t width)
{
	memset(h, 0, sizeof(*h));
	if (!nbuckets || !width)
		return -EINVAL;
	h->counts = calloc(nbuckets, sizeof(*h->counts));
	if (!h->counts)
		return -ENOMEM;
	h->nbuckets = nbuckets;
	h->width = width;
	return 0;
}

void kb_hist_linear_free(struct kb_hist_linear *h)
{
	free(h->counts);
	h->counts = NULL;
	h->nbuckets = 0;
}
