// SPDX-License-Identifier: GPL-2.0
/*
 * Statistics of samples. See stats.h.
 */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double kb_stats_percentile(const double *sorted, size_t n, double p)
{
	double pos, frac;
	size_t lo;

	if (!n)
		return NAN;
	if (p <= 0)
		return sorted[0];
	if (p >= 100)
		return sorted[n - 1];
	pos = p / 100.0 * (double)(n - 1);
	lo = (size_t)pos;
	frac = pos - (double)lo;
	if (lo + 1 >= n)
		return sorted[n - 1];
	return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

/* The longest run of equal values in sorted[0..n-1] (n > 0). */
static void mode_of(const double *sorted, size_t n, struct kb_stats *st)
{
	size_t i, start = 0, best = 0, best_len = 0;

	for (i = 1; i <= n; i++) {
		if (i < n && sorted[i] == sorted[start])
			continue;
		if (i - start > best_len) {
			best = start;
			best_len = i - start;
		}
		start = i;
	}
	st->mode = sorted[best];
	st->mode_share = (double)best_len / (double)n;
}

int kb_stats_compute(double *samples, size_t n, struct kb_stats *st)
{
	double sum = 0, sq = 0;
	size_t i;

	memset(st, 0, sizeof(*st));
	if (!n)
		return -1;
	qsort(samples, n, sizeof(*samples), cmp_double);
	for (i = 0; i < n; i++)
		sum += samples[i];
	st->n = n;
	st->mean = sum / (double)n;
	for (i = 0; i < n; i++)
		sq += (samples[i] - st->mean) * (samples[i] - st->mean);
	st->stddev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
	st->rsd_pct = st->mean != 0 ? st->stddev / st->mean * 100.0 : 0;
	st->min = samples[0];
	st->max = samples[n - 1];
	st->median = kb_stats_percentile(samples, n, 50);
	st->p90 = kb_stats_percentile(samples, n, 90);
	st->p99 = kb_stats_percentile(samples, n, 99);
	st->p999 = kb_stats_percentile(samples, n, 99.9);
	mode_of(samples, n, st);
	return 0;
}
