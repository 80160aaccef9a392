/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one clock every kbench figure is taken with, and what reading it
 * costs.
 */
#ifndef KBENCH_CLOCK_H
#define KBENCH_CLOCK_H

#include <stdint.h>
#include <time.h>

#define KB_CLOCK	CLOCK_MONOTONIC
#define KB_CLOCK_NAME	"CLOCK_MONOTONIC"

static inline uint64_t kb_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(KB_CLOCK, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Median cost of one empty kb_clock_ns() start/stop pair, in ns. */
double kb_clock_overhead_ns(void);

#endif /* KBENCH_CLOCK_H */
