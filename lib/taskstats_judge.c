// SPDX-License-Identifier: GPL-2.0
/*
 * The judgements of the taskstats checks. See taskstats_judge.h.
 */
#include "taskstats_judge.h"

#include <stdio.h>
#include <string.h>

/* CPU times in us of two sources: 4 ticks of 10 ms and 25 % apart at most. */
static bool cpu_close(uint64_t a_us, uint64_t b_us)
{
	uint64_t hi = a_us > b_us ? a_us : b_us, lo = a_us + b_us - hi;

	return hi - lo <= 40000 + hi / 4;
}

/*
 * /proc's utime+stime is the scheduler's runtime split by the ticks
 * (cputime_adjust()), so it is compared with cpu_run_virtual_total, the
 * same runtime, when filled. taskstats' own utime+stime are the raw tick
 * samples: a guest losing ticks undercounts them, and a busy task that
 * shares its CPU is over-sampled (a whole tick goes to whoever runs at
 * the tick: 404 ms of ticks for 300 ms of runtime, three burners beside
 * two background guests on 2 CPUs). Only a bound against a gross error
 * (a unit, another field): at most twice the runtime + 40 ms.
 */
static bool cpu_matches(const struct kb_ts_stats *ts, uint64_t proc_us,
			char *why, size_t len)
{
	uint64_t ticks_us = ts->utime + ts->stime;
	uint64_t run_us = ts->cpu_run_virtual_total / 1000;

	if (run_us && !cpu_close(run_us, proc_us))
		snprintf(why, len, "cpu_run_virtual_total %llu us, /proc utime+stime %llu us: more than 40 ms + 25%% apart",
			 (unsigned long long)run_us,
			 (unsigned long long)proc_us);
	else if (!run_us && !cpu_close(ticks_us, proc_us))
		snprintf(why, len, "ac_utime+ac_stime %llu us, /proc utime+stime %llu us: more than 40 ms + 25%% apart",
			 (unsigned long long)ticks_us,
			 (unsigned long long)proc_us);
	else if (ticks_us > 2 * proc_us + 40000)
		snprintf(why, len, "ac_utime+ac_stime %llu us is above twice /proc utime+stime %llu us + 40 ms",
			 (unsigned long long)ticks_us,
			 (unsigned long long)proc_us);
	else
		return true;
	return false;
}

bool kb_ts_judge_proc(const struct kb_ts_stats *ts,
		      const struct kb_proc_task *p, unsigned int what,
		      long ticks_per_s, char *why, size_t len)
{
	uint64_t proc_cpu = (p->stat.utime + p->stat.stime) * 1000000ull /
			    (ticks_per_s > 0 ? ticks_per_s : 100);
#define DIFFERS(tf, pf) \
	((unsigned long long)ts->tf != (unsigned long long)p->pf && \
	snprintf(why, len, #tf " %llu, /proc " #pf " %llu", \
		 (unsigned long long)ts->tf, (unsigned long long)p->pf))
	if ((what & KB_TS_JUDGE_IDS) &&
	    (DIFFERS(pid, stat.pid) || DIFFERS(ppid, stat.ppid)))
		return false;
	if ((what & KB_TS_JUDGE_CTXT) &&
	    (DIFFERS(nvcsw, nvcsw) || DIFFERS(nivcsw, nivcsw)))
		return false;
#undef DIFFERS
	if ((what & KB_TS_JUDGE_IDS) && strcmp(ts->comm, p->stat.comm)) {
		snprintf(why, len, "ac_comm '%s', /proc comm '%s'", ts->comm,
			 p->stat.comm);
		return false;
	}
	return !(what & KB_TS_JUDGE_CPU) || cpu_matches(ts, proc_cpu, why, len);
}

/* ---- judgements of the taskstats checks ------------------------------ */

/*
 * CPU time of a task in us. cpu_run_virtual_total is the scheduler's own
 * runtime in ns (filled when CONFIG_TASK_DELAY_ACCT is built in): exact,
 * unlike utime + stime, which are sampled by the tick and undercounted by
 * an emulated guest that loses ticks.
 */
static uint64_t cpu_us(const struct kb_ts_stats *ts, bool precise)
{
	return precise ? ts->cpu_run_virtual_total / 1000 :
			 ts->utime + ts->stime;
}

bool kb_ts_judge_tgid(const struct kb_ts_stats *tgid,
		      const struct kb_ts_stats *threads, size_t n,
		      uint64_t burnt_us, char *why, size_t len)
{
	bool precise = tgid->cpu_run_virtual_total != 0;
	/*
	 * The scheduler's runtime is exact (1 % for rounding and thread
	 * start-up); tick-sampled time may miss or gain up to 25 %.
	 */
	unsigned int slack = precise ? 1 : 25;
	uint64_t total = cpu_us(tgid, precise), sum = 0, nvcsw = 0, nivcsw = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		sum += cpu_us(&threads[i], precise);
		nvcsw += threads[i].nvcsw;
		nivcsw += threads[i].nivcsw;
	}
	if (total * 100 < burnt_us * (100 - slack))
		snprintf(why, len, "TGID cpu time %llu us is below the %llu us the threads burnt",
			 (unsigned long long)total,
			 (unsigned long long)burnt_us);
	else if (total * 100 < sum * (100 - slack))
		snprintf(why, len, "TGID cpu time %llu us is below the sum of its threads, %llu us",
			 (unsigned long long)total, (unsigned long long)sum);
	else if (total * 100 > sum * (100 + slack) + 100 * 10000ull)
		snprintf(why, len, "TGID cpu time %llu us is above the sum of its threads, %llu us (counted twice?)",
			 (unsigned long long)total, (unsigned long long)sum);
	else if (tgid->nvcsw != nvcsw || tgid->nivcsw != nivcsw)
		snprintf(why, len, "TGID context switches %llu/%llu are not the sum of its resting threads', %llu/%llu",
			 (unsigned long long)tgid->nvcsw,
			 (unsigned long long)tgid->nivcsw,
			 (unsigned long long)nvcsw, (unsigned long long)nivcsw);
	else
		return true;
	return false;
}

bool kb_ts_judge_wpcopy(const struct kb_ts_stats *on,
			const struct kb_ts_stats *off, uint64_t pages,
			char *why, size_t len)
{
	/*
	 * delayacct_end() counts a copy only when local_clock() moved
	 * during it: with a coarse sched_clock (TCG) some are missed, so
	 * the lower bound is one copy, not one per page.
	 */
	if (!on->wpcopy_count)
		snprintf(why, len, "wpcopy_count is 0 with task_delayacct=1 after the child copied %llu pages on write",
			 (unsigned long long)pages);
	else if (on->wpcopy_count > pages + KB_TS_JUDGE_WPCOPY_SLACK)
		snprintf(why, len, "wpcopy_count %llu is above the %llu pages the child wrote (+%d for its stack and libc)",
			 (unsigned long long)on->wpcopy_count,
			 (unsigned long long)pages, KB_TS_JUDGE_WPCOPY_SLACK);
	else if (!on->wpcopy_delay_total)
		snprintf(why, len, "wpcopy_delay_total is 0 after %llu copies",
			 (unsigned long long)on->wpcopy_count);
	else if (off->wpcopy_count || off->wpcopy_delay_total)
		snprintf(why, len, "wpcopy_count %llu / total %llu ns with task_delayacct=0: not the field the knob gates",
			 (unsigned long long)off->wpcopy_count,
			 (unsigned long long)off->wpcopy_delay_total);
	else
		return true;
	return false;
}

bool kb_ts_judge_cgroupstats(const struct kb_ts_cgroupstats *cs,
			     uint64_t sleepers, uint64_t tasks,
			     char *why, size_t len)
{
	/* Each task is counted once, in its state; io_wait only outside them. */
	uint64_t sum = cs->nr_sleeping + cs->nr_running + cs->nr_stopped +
		       cs->nr_uninterruptible + cs->nr_io_wait;

	if (cs->nr_sleeping < sleepers)
		snprintf(why, len, "nr_sleeping %llu is below our %llu sleepers",
			 (unsigned long long)cs->nr_sleeping,
			 (unsigned long long)sleepers);
	else if (sum > tasks + tasks / 8 + KB_TS_JUDGE_CGROUP_SLACK)
		snprintf(why, len, "the states add up to %llu tasks, the cgroup holds at most %llu (+1/8 +%d): counted twice?",
			 (unsigned long long)sum, (unsigned long long)tasks,
			 KB_TS_JUDGE_CGROUP_SLACK);
	else
		return true;
	return false;
}
