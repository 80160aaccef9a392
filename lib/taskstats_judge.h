/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The judgements of the taskstats checks (kb_ts_judge_), on decoded
 * answers, so that tests/unit_netlink.c can show each one failing on a
 * wrong input: taskstats against /proc, a TGID aggregate against its
 * threads, delay accounting against the knob, cgroupstats against the
 * tasks in the cgroup. Each returns true, or false with the first
 * difference in @why.
 */
#ifndef KBENCH_TASKSTATS_JUDGE_H
#define KBENCH_TASKSTATS_JUDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proc.h"
#include "taskstats.h"

#define KB_TS_JUDGE_IDS	0x1	/* pid, ppid, comm: exact */
#define KB_TS_JUDGE_CTXT	0x2	/* nvcsw, nivcsw: exact (task at rest) */
#define KB_TS_JUDGE_CPU	0x4	/* CPU time: within 40 ms + 25 % */

/*
 * Compare what taskstats says of a task with what /proc says (@what:
 * KB_TS_JUDGE_* bits). /proc's CPU time is the scheduler's runtime, as is
 * cpu_run_virtual_total (compared both ways when filled); taskstats'
 * tick-sampled utime+stime may only be lower (a guest loses ticks).
 * Tolerance: 40 ms + 25 %. false with the first difference in @why.
 */
bool kb_ts_judge_proc(const struct kb_ts_stats *ts,
		      const struct kb_proc_task *p, unsigned int what,
		      long ticks_per_s, char *why, size_t len);


/*
 * The TGID aggregate @tgid of @n threads at rest (@threads, queried one
 * by one) that burnt @burnt_us of CPU in all: at least the burn, within
 * 1 % (+10 ms) of the threads' sum both ways (the scheduler's
 * cpu_run_virtual_total when filled, else tick-sampled utime+stime with
 * 25 %), and context switches equal to the threads' sum, so that a thread
 * counted twice fails as surely as one left out. No upper bound from the
 * burn: thread start-up costs CPU too (as much again under emulation).
 */
bool kb_ts_judge_tgid(const struct kb_ts_stats *tgid,
		      const struct kb_ts_stats *threads, size_t n,
		      uint64_t burnt_us, char *why, size_t len);

/* Copy-on-write faults a child may take beyond the pages it writes. */
#define KB_TS_JUDGE_WPCOPY_SLACK	256

/*
 * Delay accounting of a child that wrote @pages pages shared with its
 * parent (one copy-on-write each): @on was forked with
 * kernel.task_delayacct=1, @off with 0. wpcopy_* exist only with the
 * knob on (tsk->delays), so @on must count some copies (not one per
 * page: a copy that took no local_clock() time is not counted) and no
 * more than the pages (+ slack), with a delay, and @off none.
 */
bool kb_ts_judge_wpcopy(const struct kb_ts_stats *on,
			const struct kb_ts_stats *off, uint64_t pages,
			char *why, size_t len);

/* Tasks that may join a cgroup between counting and the query. */
#define KB_TS_JUDGE_CGROUP_SLACK	64

/*
 * A cgroupstats answer for a cgroup holding our @sleepers and at most
 * @tasks tasks: nr_sleeping covers the sleepers, and the states, each
 * task counted once, add up to no more than the tasks (+1/8 +64 for
 * tasks forked by others between the counts and the query: counting
 * our sleepers twice still exceeds it).
 */
bool kb_ts_judge_cgroupstats(const struct kb_ts_cgroupstats *cs,
			     uint64_t sleepers, uint64_t tasks,
			     char *why, size_t len);

#endif /* KBENCH_TASKSTATS_JUDGE_H */
