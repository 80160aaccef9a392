// SPDX-License-Identifier: GPL-2.0
/*
 * Where a program and its children run. See placement.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "placement.h"
#include "results.h"
#include "rtsched.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>

void kb_placement_describe(const struct kb_placement *p, char *buf,
			   size_t len)
{
	if (p->pinned)
		snprintf(buf, len, "pinned: parent cpu %d, child cpu %d",
			 p->parent_cpu, p->child_cpu);
	else
		snprintf(buf, len, "scheduler%s%s", p->why[0] ? ": " : "",
			 p->why);
}

void kb_placement_setup(struct kb_placement *p, bool no_pin)
{
	int cpus[CPU_SETSIZE], n, err;

	memset(p, 0, sizeof(*p));
	p->parent_cpu = p->child_cpu = -1;
	if (no_pin) {
		snprintf(p->why, sizeof(p->why), "--no-pin");
	} else {
		n = kb_rtsched_cpus_allowed(cpus, CPU_SETSIZE);
		err = n < 0 ? n : kb_rtsched_pin_self(cpus[n - 1]);
		if (err) {
			snprintf(p->why, sizeof(p->why), "cannot pin: %s",
				 strerror(-err));
		} else {
			p->pinned = true;
			p->parent_cpu = p->child_cpu = cpus[n - 1];
		}
	}
	kb_results_param_str("placement", p->pinned ? "pinned" : "scheduler");
	kb_results_param_num("parent_cpu", p->parent_cpu);
	kb_results_param_num("child_cpu", p->child_cpu);
}
