// SPDX-License-Identifier: GPL-2.0
/*
 * pmqtest's rt-tests face: what `pmqtest -S -l 1000 -i 100` does, with
 * rt-tests' output and JSON layout (plus KTAP with --ktap). Selected by
 * any rt-tests option; the kselftest is in pmqtest.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ktap.h"
#include "pmq.h"
#include "rtsched.h"

static int rt_npairs(const struct pmq_options *o, const struct pmq_host *h)
{
	if (o->threads_set)
		return o->threads ? o->threads : h->ncpus;
	return o->smp ? h->ncpus : 1;
}

/* rt-tests' options as one run's configuration. */
static void rt_config(const struct pmq_options *o, const struct pmq_host *h,
		      struct pmq_config *cfg)
{
	int start = kb_rtsched_cpu_index(h->cpus, h->ncpus, h->start_cpu);

	memset(cfg, 0, sizeof(*cfg));
	cfg->npairs = rt_npairs(o, h);
	if (o->affinity_cpu >= 0) {
		cfg->placement = PMQ_PLACE_CPU;
		cfg->cpu = o->affinity_cpu;
	} else if (o->placement_set) {
		cfg->placement = o->placement;
	} else if (o->smp || o->affinity) {
		/* -S: pair N on CPU N; -a: from the current CPU on. */
		cfg->placement = PMQ_PLACE_SPREAD;
		cfg->first_cpu = o->smp || start < 0 ? 0 : start;
	}
	cfg->prio = o->prio;
	cfg->same_prio = o->smp;
	cfg->interval_us = o->interval_us;
	cfg->distance_us = o->distance_us;
	cfg->loops = o->loops;
	cfg->timeout_s = o->timeout_s;
	cfg->force_s = o->force_s;
	cfg->duration_s = o->duration_s;
	cfg->breaktrace_us = o->breaktrace_us;
	cfg->histogram_us = o->histogram_us;
	cfg->stop_at_first = true;
	cfg->quiet = o->quiet || o->ktap;
	cfg->prefix = o->ktap;
}

/* Missing privilege or kernel support: exit 4, in KTAP too with --ktap. */
static _Noreturn void rt_skip(const struct pmq_options *o, const char *why)
{
	fprintf(stderr, "%s: %s\n", kb_cli_prog(), why);
	if (o->ktap)
		ksft_exit_skip("%s\n", why);
	exit(KSFT_SKIP);
}

/* Anything else that stops the run before it started: exit 1. */
static _Noreturn void rt_fail(const struct pmq_options *o, const char *why)
{
	fprintf(stderr, "%s: %s\n", kb_cli_prog(), why);
	if (o->ktap)
		ksft_exit_fail_msg("%s\n", why);
	exit(1);
}

static void print_break(const struct pmq_options *o, const struct pmq_run *r)
{
	printf("%s# Break: #%d -> #%d latency %.3f us > %lld us%s\n",
	       o->ktap ? "# " : "", 2 * r->break_pair + 1, 2 * r->break_pair,
	       (double)r->break_lat_ns / NSEC_PER_USEC, o->breaktrace_us,
	       r->host->tracing_on_fd >= 0 ? ", tracing stopped" : "");
}

/* One result per pair: KTAP with --ktap, else rows and stderr. 0 or 1. */
static int report_pairs(const struct pmq_options *o, struct pmq_run *r)
{
	char name[32], why[256];
	const char *problem;
	int i, rc = 0;

	for (i = 0; i < r->npairs; i++) {
		snprintf(name, sizeof(name), "latency_pair%d", i);
		pmq_pair_row(name, &r->pairs[i]);
		problem = pmq_pair_problem(&r->pairs[i], o->max_latency_us, -1,
					   why, sizeof(why));
		if (problem)
			rc = 1;
		if (o->ktap) {
			kb_ktap_result(!problem, name, problem);
		} else if (problem) {
			fprintf(stderr, "%s: pair %d: %s\n", kb_cli_prog(), i, problem);
			kb_results_status(name, "fail", problem);
		}
	}
	return rc;
}

static void write_json(const struct pmq_options *o, const struct pmq_run *r,
		       int rc)
{
	int err;

	if (!o->json)
		return;
	pmq_json_rt_tests(r, "rt-tests", rc);
	err = kb_results_write_json(o->json);
	if (err) {
		fprintf(stderr, "%s: cannot write %s: %s\n", kb_cli_prog(),
			o->json, strerror(-err));
		exit(1);
	}
}

int pmq_rt_tests_main(const struct pmq_options *o, struct pmq_host *h)
{
	struct pmq_config cfg;
	struct pmq_run *r;
	char why[256];
	int err, rc;

	kb_results_figures_to(o->ktap ? stdout : NULL);
	if (o->ktap)
		ksft_print_header();
	if (o->prio > 0 && !kb_rtsched_fifo_allowed(o->prio, why, sizeof(why)))
		rt_skip(o, why);
	if (o->breaktrace_us)
		pmq_open_tracer(h);
	pmq_lock_memory(h);
	rt_config(o, h, &cfg);
	r = pmq_run_new(h, "rt-tests", &cfg);
	if (!r)
		rt_fail(o, "out of memory");
	err = pmq_run_setup(r);
	if (!err) {
		if (o->ktap) {
			ksft_set_plan(r->npairs);
			ksft_print_msg("rt-tests mode, clock %s (ns), %s\n",
				       KB_CLOCK_NAME, h->mlock_note);
		} else if (!h->mlocked && o->prio > 0) {
			fprintf(stderr, "%s: %s\n", kb_cli_prog(), h->mlock_note);
		}
		err = pmq_run_pairs(r);
	}
	if (err) {
		pmq_setup_error_text(r, err, why, sizeof(why));
		if (pmq_setup_skips(r, err))
			rt_skip(o, why);
		rt_fail(o, why);
	}
	pmq_print_status(r, false);
	if (o->histogram_us > 0) {
		pmq_print_histogram(r, o->ktap ? "# " : "");
		pmq_print_percentiles(r, o->ktap ? "# " : "");
	}
	if (r->stop == PMQ_STOP_BREAK)
		print_break(o, r);
	rc = report_pairs(o, r);
	write_json(o, r, rc);
	pmq_run_free(r);
	if (o->ktap)
		ksft_finished();
	return rc;
}
