// SPDX-License-Identifier: GPL-2.0
/*
 * What reading the clock costs. See clock.h.
 */
#include "clock.h"
#include "stats.h"

double kb_clock_overhead_ns(void)
{
	enum { ROUNDS = 101, CALLS = 1000 };
	double samples[ROUNDS];
	struct kb_stats st;
	int r, i;

	for (r = 0; r < ROUNDS; r++) {
		uint64_t t0 = kb_clock_ns();

		for (i = 0; i < CALLS; i++)
			(void)kb_clock_ns();
		samples[r] = (double)(kb_clock_ns() - t0) / CALLS;
	}
	kb_stats_compute(samples, ROUNDS, &st);
	return st.median;
}

uint64_t kb_clock_after_interrupt(uint64_t gap_ns, uint64_t max_ns)
{
	uint64_t start = kb_clock_ns(), prev = start, now, d, least = UINT64_MAX;

	for (;;) {
		now = kb_clock_ns();
		d = now - prev;
		if (least != UINT64_MAX && d > least + gap_ns)
			return now;
		if (d < least)
			least = d;
		if (now - start > max_ns)
			return now;
		prev = now;
	}
}
