/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a measuring process and the processes it creates or talks to run.
 * A wake-up across CPUs costs an IPI, expensive in a VM, and a child the
 * scheduler puts on another CPU for some samples and not for others
 * spreads a row between runs; so programs pin by default and --no-pin
 * leaves placement to the scheduler. The choice goes into the JSON params
 * ("placement", "parent_cpu", "child_cpu").
 */
#ifndef KBENCH_PLACEMENT_H
#define KBENCH_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>

struct kb_placement {
	bool pinned;
	int parent_cpu;		/* -1 when not pinned */
	int child_cpu;		/* -1 when not pinned; else parent_cpu */
	char why[128];		/* why pinning was not done, or "" */
};

/*
 * Unless @no_pin, pin the calling thread to the last CPU it may run on
 * (CPU 0 usually takes most device interrupts). Children inherit it
 * (child_cpu). A refused pin falls back to the scheduler and says why in
 * p->why. Records the placement in the JSON params.
 */
void kb_placement_setup(struct kb_placement *p, bool no_pin);

/* One line for a diagnostic: "pinned: parent cpu 1, child cpu 1". */
void kb_placement_describe(const struct kb_placement *p, char *buf,
			   size_t len);

#endif /* KBENCH_PLACEMENT_H */
