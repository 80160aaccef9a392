// SPDX-License-Identifier: GPL-2.0
/*
 * taskstats: the method rows (every selected method timed once,
 * interleaved), the seed's table, and the BPF task iterator against
 * TASKSTATS_CMD_GET.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/taskstats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ts_test.h"

/* ---- the benchmark --------------------------------------------------- */

static void run_fail(struct method_run *run, const char *fmt, ...)
	__printf(2, 3);

static void run_fail(struct method_run *run, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(run->why, sizeof(run->why), fmt, ap);
	va_end(ap);
	run->state = RUN_FAIL;
}

static bool method_needs_admin(enum kb_ts_method m)
{
	return m == KB_TS_METHOD_NETLINK_PER_PID || m == KB_TS_METHOD_NETLINK_BATCHED;
}

static void prepare_method(struct ctx *c, enum kb_ts_method m)
{
	struct method_run *run = &c->runs[m];
	struct kb_children *s = get_sleepers(c);
	int err, ready;

	run->state = RUN_SKIP;
	ready = method_needs_admin(m) ?
		netlink_ready(c, true, run->why, sizeof(run->why)) : KSFT_PASS;
	if (ready != KSFT_PASS) {
		if (ready == KSFT_FAIL)
			run->state = RUN_FAIL;
		return;
	}
	if (!s->n) {
		run_fail(run, "no sleepers could be spawned");
		return;
	}
	run->ts = kb_ts_method_open(m, c->batch, s->pids, s->n, &err, run->why,
				    sizeof(run->why));
	if (!run->ts) {
		/* ENOENT: no /proc/taskstats, the RFC's kernel only. */
		if (m == KB_TS_METHOD_BPF_ITER ? !kb_errno_bpf_is_environment(err) :
		    !kb_errno_lookup_is_environment(err, CAP_NET_ADMIN))
			run->state = RUN_FAIL;
		return;
	}
	run->samples = calloc(c->passes, sizeof(*run->samples));
	if (!run->samples)
		ksft_exit_fail_msg("out of memory\n");
	if (c->per_unit) {
		/* A pass's units; one pass more for the warm-up's. */
		run->nunits = kb_ts_method_units(run->ts);
		run->units = calloc((c->passes + 1) * run->nunits,
				    sizeof(*run->units));
		if (!run->units)
			ksft_exit_fail_msg("out of memory\n");
	}
	run->state = RUN_ACTIVE;
}

/*
 * One pass of method @m; a broken pass or a missing pid fails it. In
 * exact mode each unit of the pass (a pid's query, a batch) is timed on
 * its own and is a sample of the row: a pass of every pid takes millions
 * of instructions, so the timer ticks land in every pass or in some, and
 * the median of a few passes sits on whichever boot's ticks put it, where
 * a unit's median is a unit that no tick hit.
 */
static void one_pass(struct ctx *c, enum kb_ts_method m, long pass, bool *ok)
{
	struct method_run *run = &c->runs[m];
	size_t n = c->sleepers.n, i;
	double *units;
	uint64_t ns;
	long got;

	if (run->units) {
		units = run->units + (pass >= 0 ? pass : c->passes) * run->nunits;
		got = kb_ts_method_pass_units(run->ts, ok, &ns, units);
	} else {
		got = kb_ts_method_pass(run->ts, ok, &ns);
	}
	if (got == -ENOBUFS) {
		run_fail(run, "replies lost: ENOBUFS (receive buffer too small for -K %u)",
			 c->batch);
	} else if (got < 0) {
		run_fail(run, "pass failed: %s", strerror(-got));
	} else if ((size_t)got != n) {
		for (i = 0; i < n && ok[i]; i++)
			;
		run_fail(run, "pass %ld: %zu of %zu live pids unanswered (first: %d)",
			 pass, n - (size_t)got, n,
			 i < n ? c->sleepers.pids[i] : -1);
	} else if (pass >= 0) {
		run->samples[pass] = (double)ns / 1000.0 / (double)n;
	}
}

/*
 * Passes go round-robin over the methods, so that noise from the rest of
 * the machine (other tests, other tenants) hits every method alike and
 * the ratios stay meaningful.
 */
static void run_interleaved(struct ctx *c)
{
	bool *ok = calloc(c->sleepers.n ? c->sleepers.n : 1, sizeof(*ok));
	long p;
	int m;

	if (!ok)
		ksft_exit_fail_msg("out of memory\n");
	for (p = -c->warmup; p < c->passes; p++)
		for (m = 0; m < KB_TS_METHOD_NR; m++)
			if (c->runs[m].state == RUN_ACTIVE)
				one_pass(c, m, p, ok);
	free(ok);
}

/* Time every selected method once, whichever method row asks first. */
static void bench_once(struct ctx *c)
{
	size_t i;
	int m;

	if (c->bench_done)
		return;
	c->bench_done = true;
	for (m = 0; m < KB_TS_METHOD_NR; m++)
		if (c->runs[m].selected)
			prepare_method(c, m);
	run_interleaved(c);
	for (m = 0; m < KB_TS_METHOD_NR; m++) {
		struct method_run *run = &c->runs[m];

		if (run->state == RUN_ACTIVE) {
			kb_stats_compute(run->samples, c->passes, &run->pass_st);
			run->st = run->pass_st;
			if (run->units) {
				for (i = 0; i < c->passes * run->nunits; i++)
					run->units[i] /= 1000.0;
				kb_stats_compute(run->units,
						 c->passes * run->nunits,
						 &run->st);
			}
			run->rcvbuf = kb_ts_method_rcvbuf(run->ts);
			run->chunks = kb_ts_method_chunks(run->ts);
			run->load_ms = kb_ts_method_load_ns(run->ts) / 1e6;
		}
		kb_ts_method_close(run->ts);
		run->ts = NULL;
	}
}

static void add_row(struct ctx *c, enum kb_ts_method m)
{
	const struct method_run *base = &c->runs[KB_TS_METHOD_NETLINK_PER_PID];
	struct method_run *run = &c->runs[m];
	double scale = (double)c->sleepers.n / 1e6;	/* us/process -> s/pass */

	run->done = true;
	kb_results_row(kb_ts_method_name(m), "us", &run->st);
	kb_results_extra("nr_process", c->sleepers.n);
	kb_results_extra("pass_s_median", run->pass_st.median * scale);
	kb_results_extra("pass_s_min", run->pass_st.min * scale);
	kb_results_extra("pass_s_max", run->pass_st.max * scale);
	if (base->done)
		kb_results_extra("speedup_vs_per_pid",
				 base->st.median / run->st.median);
	if (m == KB_TS_METHOD_NETLINK_BATCHED) {
		kb_results_extra("batch", c->batch);
		kb_results_extra("rcvbuf_bytes", run->rcvbuf);
	}
	if (m == KB_TS_METHOD_PROCFS_PREAD)
		kb_results_extra("chunks", run->chunks);
	if (m == KB_TS_METHOD_BPF_ITER)	/* paid once, before the passes */
		kb_results_extra("load_ms", run->load_ms);
	kb_results_note(kb_ts_method_desc(m));
}

/*
 * A method row: every pass answered every live pid with its own record
 * (the pid in the reply, /proc/PID/stat's first field, ac_pid); the
 * figures are the time per process.
 */
int method_row(void *ctx, int m, char *why, size_t len)
{
	struct ctx *c = ctx;
	struct method_run *run = &c->runs[m];

	bench_once(c);
	snprintf(why, len, "%s", run->why);
	if (run->state == RUN_SKIP)
		return KSFT_SKIP;
	if (run->state == RUN_FAIL)
		return KSFT_FAIL;
	add_row(c, m);
	return KSFT_PASS;
}

/* The seed's table, plus the spread and the ratio to per-pid netlink. */
void print_table(const struct ctx *c)
{
	const struct method_run *base = &c->runs[KB_TS_METHOD_NETLINK_PER_PID];
	double scale = (double)c->nr_process / 1e6;
	char speedup[16];
	int m;

	if (!c->bench_done)
		return;
	ksft_print_msg("%d passes after %ld warm-up, methods interleaved, %s; seconds per pass\n",
		       (int)c->passes, c->warmup, KB_CLOCK_NAME);
	ksft_print_msg("%-16s %10s %12s %12s %12s %11s %8s\n", "method",
		       "nr_process", "median_s", "min_s", "max_s", "us/process",
		       "speedup");
	for (m = 0; m < KB_TS_METHOD_NR; m++) {
		const struct method_run *r = &c->runs[m];

		if (!r->done)
			continue;
		snprintf(speedup, sizeof(speedup), "-");
		if (base->done)
			snprintf(speedup, sizeof(speedup), "%.2fx",
				 base->st.median / r->st.median);
		ksft_print_msg("%-16s %10zu %12.9f %12.9f %12.9f %11.3f %8s\n",
			       kb_ts_method_name(m), c->nr_process,
			       r->pass_st.median * scale, r->pass_st.min * scale,
			       r->pass_st.max * scale, r->st.median, speedup);
	}
	if (c->runs[KB_TS_METHOD_BPF_ITER].done)
		ksft_print_msg("bpf_iter: program open+load+attach %.3f ms once, before the passes (%.1f median passes)\n",
			       c->runs[KB_TS_METHOD_BPF_ITER].load_ms,
			       c->runs[KB_TS_METHOD_BPF_ITER].load_ms /
			       (c->runs[KB_TS_METHOD_BPF_ITER].st.median * scale * 1e3));
}

static const char *iter_differs(const struct kb_ts_stats *a,
				const struct kb_ts_stats *b, char *why,
				size_t whylen)
{
#define KB_DIFFERS(f) (a->f != b->f && \
	snprintf(why, whylen, #f ": bpf_iter %llu, netlink %llu", \
		 (unsigned long long)a->f, (unsigned long long)b->f))
	if (KB_DIFFERS(pid) || KB_DIFFERS(tgid) || KB_DIFFERS(utime) ||
	    KB_DIFFERS(stime) || KB_DIFFERS(nvcsw) || KB_DIFFERS(nivcsw) ||
	    KB_DIFFERS(minflt) || KB_DIFFERS(majflt) ||
	    KB_DIFFERS(cpu_count) || KB_DIFFERS(cpu_delay_total) ||
	    KB_DIFFERS(cpu_run_real_total) ||
	    KB_DIFFERS(cpu_run_virtual_total) ||
	    KB_DIFFERS(blkio_count) || KB_DIFFERS(blkio_delay_total) ||
	    KB_DIFFERS(swapin_count) || KB_DIFFERS(swapin_delay_total) ||
	    KB_DIFFERS(wpcopy_count) || KB_DIFFERS(wpcopy_delay_total) ||
	    KB_DIFFERS(read_char) || KB_DIFFERS(write_char) ||
	    KB_DIFFERS(read_bytes) || KB_DIFFERS(write_bytes))
		return why;
#undef KB_DIFFERS
	if (strcmp(a->comm, b->comm)) {
		snprintf(why, whylen, "comm: bpf_iter '%s', netlink '%s'",
			 a->comm, b->comm);
		return why;
	}
	return NULL;
}

/* The iterator's record of @pid (filtered by @comm), or -ESRCH. */
static int iter_stats(struct kb_ts_bpf *b, pid_t pid, struct kb_ts_stats *ts)
{
	long got = kb_ts_bpf_pass(b), i;

	if (got < 0)
		return got;
	for (i = 0; i < got; i++) {
		kb_ts_bpf_get(b, i, ts);
		if (ts->pid == (uint32_t)pid)
			return 0;
	}
	return -ESRCH;
}

/*
 * For the sleeping task @pid (comm containing @comm) the iterator's
 * figures equal TASKSTATS_CMD_GET's. KSFT_PASS (figures in @why),
 * KSFT_FAIL or KSFT_SKIP (reason in @why).
 */
static int bpf_matches_netlink(pid_t pid, const char *comm, char *why,
			       size_t whylen)
{
	struct kb_ts_stats by_iter;
	struct kb_ts_reply r;
	uint64_t load_ns;
	struct kb_ts_bpf *b;
	struct kb_nl nl;
	int err;

	b = kb_ts_bpf_open(comm, &load_ns, &err, why, whylen);
	if (!b)
		return kb_errno_bpf_is_environment(err) ? KSFT_SKIP : KSFT_FAIL;
	err = kb_ts_open(&nl, 0, 5000);
	if (err) {
		snprintf(why, whylen, "no TASKSTATS netlink socket: %s",
			 strerror(-err));
		kb_ts_bpf_free(b);
		return kb_errno_lookup_is_environment(err, KB_ENV_NO_CAP) ?
		       KSFT_SKIP : KSFT_FAIL;
	}
	err = kb_ts_get(&nl, TASKSTATS_CMD_ATTR_PID, pid, &r);
	kb_nl_close(&nl);
	if (err && kb_errno_is_environment(err, CAP_NET_ADMIN)) {
		kb_errno_explain(err, CAP_NET_ADMIN, "TASKSTATS_CMD_GET", why,
				 whylen);
		kb_ts_bpf_free(b);
		return KSFT_SKIP;
	}
	if (!err && !r.pid.has_stats)
		err = -EBADMSG;
	if (err) {
		snprintf(why, whylen, "TASKSTATS_CMD_GET of pid %d: %s",
			 (int)pid, strerror(-err));
		kb_ts_bpf_free(b);
		return KSFT_FAIL;
	}
	err = iter_stats(b, pid, &by_iter);
	kb_ts_bpf_free(b);
	if (err) {
		snprintf(why, whylen, "the iterator did not emit pid %d: %s",
			 (int)pid, strerror(-err));
		return KSFT_FAIL;
	}
	if (iter_differs(&by_iter, &r.pid.stats, why, whylen))
		return KSFT_FAIL;
	snprintf(why, whylen, "pid=%d utime=%llu nvcsw=%llu cpu_count=%llu read_char=%llu",
		 (int)pid, (unsigned long long)by_iter.utime,
		 (unsigned long long)by_iter.nvcsw,
		 (unsigned long long)by_iter.cpu_count,
		 (unsigned long long)by_iter.read_char);
	return KSFT_PASS;
}

/*
 * The BPF task iterator reads what TASKSTATS_CMD_GET answers for a
 * sleeper.
 */
int test_bpf_iter_matches_netlink(void *arg, char *why, size_t len)
{
	struct ctx *c = arg;
	int rc = netlink_ready(c, true, why, len);

	if (rc != KSFT_PASS)
		return rc;
	if (!c->sleepers.n) {
		snprintf(why, len, "no sleepers could be spawned");
		return KSFT_SKIP;
	}
	rc = bpf_matches_netlink(c->sleepers.pids[0], SLEEPER_COMM, why, len);
	if (rc == KSFT_PASS)
		kb_results_figure("bpf_iter_matches_netlink", "%s", why);
	return rc;
}
