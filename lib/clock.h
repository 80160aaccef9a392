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

/*
 * Under QEMU's instruction counter (exact mode), where the clock counts
 * the guest's instructions: read the clock until two reads in a row are
 * more than @gap_ns further apart than the closest two, that is until an
 * interrupt (the timer tick: about 1,400 instructions on the test kernel)
 * ran between them, or until @max_ns have passed. Returns the last read,
 * the start of a window that the next tick reaches only a tick period
 * later. Meaningless on a real clock, where reads jitter.
 */
uint64_t kb_clock_after_interrupt(uint64_t gap_ns, uint64_t max_ns);

#endif /* KBENCH_CLOCK_H */
