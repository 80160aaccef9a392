/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Statistics of a row's samples: mean, spread, percentiles and mode.
 */
#ifndef KBENCH_STATS_H
#define KBENCH_STATS_H

#include <stddef.h>

struct kb_stats {
	size_t n;
	double mean;
	double min;
	double max;
	double median;
	double stddev;		/* sample standard deviation (n - 1) */
	double rsd_pct;		/* stddev / mean * 100 */
	double p90;
	double p99;
	double p999;
	/*
	 * The most common value and the share of the samples (0..1) that
	 * hold it (ties: the smallest value). Meaningful where each sample
	 * is one operation counted exactly (under QEMU's instruction
	 * counter, an instruction count): a row whose samples fall into a
	 * few exact values has its median on the edge between two of them.
	 */
	double mode;
	double mode_share;
};

/* Percentile p (0..100) of sorted[0..n-1], linear interpolation. */
double kb_stats_percentile(const double *sorted, size_t n, double p);

/*
 * Statistics of samples[0..n-1]. The samples are sorted in place.
 * Returns -1 when n == 0.
 */
int kb_stats_compute(double *samples, size_t n, struct kb_stats *st);

#endif /* KBENCH_STATS_H */
