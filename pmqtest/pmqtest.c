// SPDX-License-Identifier: GPL-2.0
/*
 * pmqtest: latency of POSIX message queues between pairs of threads.
 *
 * One program, two faces, one file each:
 *  - with any rt-tests option (-a -b -d -D -f -i -l -p -q -S -t -T) it is
 *    rt-tests' pmqtest(8): rt_tests.c;
 *  - without one (what the kselftest runner does) it is a kselftest:
 *    the checks below, a table of functions returning KSFT_* codes.
 * Both measure with the engine of pmq_run.c (see pmq.h). They stay one
 * binary because both names are an API: `pmqtest` is the rt-tests
 * command, and `kbench/pmqtest: pmqtest` with pmqtest.json is the
 * kselftest CI systems key on.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>

#include "ktap.h"
#include "pmq.h"
#include "rtsched.h"

/* The kselftest: a short -S style run and two -T scenarios. */
#define SELFTEST_INTERVAL_US		200
#define SELFTEST_LOOPS			5000
#define SELFTEST_LOOPS_FULL		100000
#define SELFTEST_INTERVAL_US_FULL	100
#define SELFTEST_LOOPS_SLOW		500
/* Untimed cycles first: cold caches, first faults, the CPU waking up. */
#define SELFTEST_WARMUP			200
#define TIMED_LOOPS			200
#define TIMED_TIMEOUT_S			1.0
#define FORCE_LOOPS			3
#define FORCE_TIMEOUT_S			0.2
#define FORCE_DELAY_S			0.5

/* ---- the kselftest checks -------------------------------------------- */

/* What the checks share; each check makes its own runs. */
struct check_ctx {
	const struct pmq_options *opt;
	struct pmq_host *host;
	long long loops;
	long long interval_us;
	enum pmq_placement placement;
	int npairs;		/* of the -S run: one per CPU, within limits */
	int probe_err;		/* mq_open() failed with this at start */
	struct pmq_run *run;	/* the run of the check being reported */
	struct pmq_run *smp;	/* the -S run, kept for the rt-tests JSON */
	bool smp_ran;		/* by the first latency_pairN */
	int smp_verdict;	/* its KSFT_* code ... */
	char smp_why[256];	/* ... and reason, for every pair */
	/* The table: latency_pair0..N-1, then the other checks. */
	struct kb_test table[PMQ_MAX_CPUS + 3];
	char names[PMQ_MAX_CPUS][24];
};

/*
 * One pair per allowed CPU, unless the system's limits cannot hold their
 * queues (2 per pair, plus those of the other checks): running into
 * fs.mqueue.queues_max or RLIMIT_NOFILE would fail the run for a limit,
 * not for a kernel bug. Without CAP_SYS_RESOURCE queues_max applies.
 */
static int selftest_npairs(const struct pmq_host *h)
{
	int n = h->ncpus, room;
	struct rlimit rl;
	long qmax;

	if (!kb_env_have_cap(CAP_SYS_RESOURCE) &&
	    !kb_file_read_long("/proc/sys/fs/mqueue/queues_max", &qmax)) {
		room = (int)((qmax - 8) / 2);
		if (n > room) {
			ksft_print_msg("smp: %d pairs for %d CPUs: fs.mqueue.queues_max is %ld\n",
				       room, n, qmax);
			n = room;
		}
	}
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    (rlim_t)n * 2 + 64 > rl.rlim_cur) {
		room = (int)((rl.rlim_cur - 64) / 2);
		ksft_print_msg("smp: %d pairs for %d CPUs: RLIMIT_NOFILE is %llu\n",
			       room, n, (unsigned long long)rl.rlim_cur);
		n = room;
	}
	return n < 1 ? 1 : n;
}

/* The base of every check's run. */
static void check_config(const struct check_ctx *c, struct pmq_config *cfg,
			 int npairs)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->npairs = npairs;
	cfg->placement = c->placement;
	/*
	 * Fewer pairs than CPUs: the last CPUs, as kb_placement_setup()
	 * picks them (CPU 0 takes most device interrupts).
	 */
	if (npairs < c->host->ncpus)
		cfg->first_cpu = c->host->ncpus - npairs;
	cfg->interval_us = c->interval_us;
	cfg->histogram_us = c->opt->histogram_us;
	cfg->same_prio = true;
	cfg->quiet = true;
	cfg->prefix = true;
}

/*
 * Run @cfg as c->run. A setup error of the environment (no mqueue, no
 * privilege) SKIPs, any other FAILs.
 */
static int run_check(struct check_ctx *c, const struct pmq_config *cfg,
		     const char *label, char *why, size_t len)
{
	struct pmq_run *r;
	int err = c->probe_err;

	c->run = r = pmq_run_new(c->host, label, cfg);
	if (!r) {
		snprintf(why, len, "out of memory");
		return KSFT_FAIL;
	}
	if (!err)
		err = pmq_run_setup(r);
	if (!err)
		err = pmq_run_pairs(r);
	if (err) {
		pmq_setup_error_text(r, err, why, len);
		return pmq_setup_skips(c->run, err) ? KSFT_SKIP : KSFT_FAIL;
	}
	pmq_die_if_signalled(r);
	ksft_print_msg("%s: rt-tests summary (us):\n", label);
	pmq_print_status(r, false);
	return KSFT_PASS;
}

/* A pair's row and verdict as a KSFT code. */
static int pair_result(const char *name, const struct pmq_pair *p,
		       double max_latency_us, long long want_timeouts,
		       char *why, size_t len)
{
	pmq_pair_row(name, p);
	return pmq_pair_problem(p, max_latency_us, want_timeouts, why, len) ?
	       KSFT_FAIL : KSFT_PASS;
}

/* latency_pairN: one pair per allowed CPU at once, like -S. */
static int prepare_smp(struct check_ctx *c, char *why, size_t len)
{
	struct pmq_config cfg;
	int ret;

	check_config(c, &cfg, c->npairs);
	cfg.loops = c->loops;
	cfg.warmup = SELFTEST_WARMUP;
	ksft_print_msg("smp: %d pair(s) on %d CPU(s), SCHED_OTHER, placement %s, interval %lld us, %lld cycles each after %d warm-up cycles\n",
		       cfg.npairs, c->host->ncpus,
		       pmq_placement_name(cfg.placement),
		       cfg.interval_us, cfg.loops, SELFTEST_WARMUP);
	ret = run_check(c, &cfg, "smp", why, len);
	if (ret == KSFT_PASS && c->opt->histogram_us > 0) {
		pmq_print_histogram(c->run, "# ");
		pmq_print_percentiles(c->run, "# ");
	}
	/* The rt-tests part of the JSON shows this run. */
	c->smp = c->run;
	c->run = NULL;
	return ret;
}

/*
 * latency_pairN: the first makes the -S run (one result per pair of it);
 * its verdict and reason stand for every pair when it could not run.
 */
static int latency_pair(void *ctx, int index, char *why, size_t len)
{
	struct check_ctx *c = ctx;

	if (!c->smp_ran) {
		c->smp_ran = true;
		c->smp_verdict = prepare_smp(c, c->smp_why,
					     sizeof(c->smp_why));
	}
	if (c->smp_verdict != KSFT_PASS) {
		snprintf(why, len, "%s", c->smp_why);
		return c->smp_verdict;
	}
	return pair_result(c->names[index], &c->smp->pairs[index],
			   c->opt->max_latency_us, -1, why, len);
}

/* timed_receive: -T 1 at 1 ms must finish every cycle with no timeout. */
static int prepare_timed(struct check_ctx *c, char *why, size_t len)
{
	struct pmq_config cfg;

	check_config(c, &cfg, 1);
	cfg.interval_us = 1000;
	cfg.loops = TIMED_LOOPS;
	cfg.warmup = SELFTEST_WARMUP / 20;
	cfg.timeout_s = TIMED_TIMEOUT_S;
	ksft_print_msg("timed_receive: -T %g, %d cycles: expect 0 timeouts\n",
		       TIMED_TIMEOUT_S, TIMED_LOOPS);
	return run_check(c, &cfg, "timed_receive", why, len);
}

static int check_timed(struct check_ctx *c, char *why, size_t len)
{
	return pair_result("timed_receive", &c->run->pairs[0],
			   c->opt->max_latency_us, 0, why, len);
}

/*
 * forced_timeouts: -T 0.2 -f 0.5 expects 2 timeouts a cycle (at 0.2 and
 * 0.4 s, the message at 0.5 s). The kernel promises expiry, not
 * punctuality: a receiver or sender woken 0.1 s late (a loaded TCG
 * guest does that) moves one expiry across the send, so the check
 * accepts 1 to 3 a cycle and still catches a wait that never expires
 * (0) or expires at once (a count in the thousands).
 * A check, not a cost: its row has counts, no latency figures (the
 * latency after a 0.5 s sleep measures the sleep, not the queue).
 */
static int prepare_forced(struct check_ctx *c, char *why, size_t len)
{
	struct pmq_config cfg;

	check_config(c, &cfg, 1);
	cfg.interval_us = 1000;
	cfg.loops = FORCE_LOOPS;
	cfg.timeout_s = FORCE_TIMEOUT_S;
	cfg.force_s = FORCE_DELAY_S;
	ksft_print_msg("forced_timeouts: -T %g -f %g, %d cycles: expect %d timeouts\n",
		       FORCE_TIMEOUT_S, FORCE_DELAY_S, FORCE_LOOPS,
		       2 * FORCE_LOOPS);
	return run_check(c, &cfg, "forced_timeouts", why, len);
}

static int check_forced(struct check_ctx *c, char *why, size_t len)
{
	const char *name = "forced_timeouts";
	const struct pmq_pair *p = &c->run->pairs[0];
	const char *problem = pmq_pair_problem(p, 0, -1, why, len);

	if (!problem)
		problem = pmq_timeouts_problem(p, FORCE_LOOPS, 3 * FORCE_LOOPS,
					       why, len);
	kb_results_figure(name, "cycles=%llu timeouts=%llu expected_timeouts=%d accepted=%d-%d timeout_s=%g forcetimeout_s=%g",
			  (unsigned long long)p->hist.count,
			  (unsigned long long)p->timeouts, 2 * FORCE_LOOPS,
			  FORCE_LOOPS, 3 * FORCE_LOOPS, FORCE_TIMEOUT_S,
			  FORCE_DELAY_S);
	kb_results_status(name, "ok", NULL);
	kb_results_extra_quiet("cycles", (double)p->hist.count);
	kb_results_extra_quiet("timeouts", (double)p->timeouts);
	kb_results_extra_quiet("expected_timeouts", 2 * FORCE_LOOPS);
	kb_results_note("a check: counts timeouts, no latency figures");
	return problem ? KSFT_FAIL : KSFT_PASS;
}

/* queues_unlinked: no queue name this process used is still linked. */
static int prepare_queues(struct check_ctx *c, char *why, size_t len)
{
	struct pmq_config cfg;
	int err = c->probe_err;

	/* Queues of its own, so that the check never depends on another. */
	check_config(c, &cfg, 1);
	c->run = pmq_run_new(c->host, "queues_unlinked", &cfg);
	if (!c->run) {
		snprintf(why, len, "out of memory");
		return KSFT_FAIL;
	}
	if (!err)
		err = pmq_run_setup(c->run);
	if (err) {
		pmq_setup_error_text(c->run, err, why, len);
		return pmq_setup_skips(c->run, err) ? KSFT_SKIP : KSFT_FAIL;
	}
	return KSFT_PASS;
}

static int check_queues(struct check_ctx *c, char *why, size_t len)
{
	int left = pmq_linked_names(c->host);

	kb_results_figure("queues_unlinked", "queues=%d left=%d", c->host->nnames, left);
	if (!left)
		return KSFT_PASS;
	snprintf(why, len, "%d of %d queue names are still linked", left,
		 c->host->nnames);
	return KSFT_FAIL;
}

/* The checks after the pairs: a run of their own, then its judgement. */
enum { CHECK_TIMED, CHECK_FORCED, CHECK_QUEUES };

static const struct {
	const char *name;
	int (*prepare)(struct check_ctx *c, char *why, size_t len);
	int (*check)(struct check_ctx *c, char *why, size_t len);
} checks[] = {
	[CHECK_TIMED] = { "timed_receive", prepare_timed, check_timed },
	[CHECK_FORCED] = { "forced_timeouts", prepare_forced, check_forced },
	[CHECK_QUEUES] = { "queues_unlinked", prepare_queues, check_queues },
};

static int run_and_check(void *ctx, int id, char *why, size_t len)
{
	struct check_ctx *c = ctx;
	int ret = checks[id].prepare(c, why, len);

	if (ret == KSFT_PASS) {
		why[0] = '\0';
		ret = checks[id].check(c, why, len);
	}
	pmq_run_free(c->run);
	c->run = NULL;
	return ret;
}

/* One latency_pairN per pair of the -S run, then the checks. */
static size_t build_table(struct check_ctx *c)
{
	size_t n = 0, i;
	int p;

	for (p = 0; p < c->npairs; p++) {
		snprintf(c->names[p], sizeof(c->names[p]), "latency_pair%d", p);
		c->table[n++] = (struct kb_test)KB_TEST_ARG(c->names[p],
							    latency_pair, p,
							    NULL);
	}
	for (i = 0; i < ARRAY_SIZE(checks); i++)
		c->table[n++] = (struct kb_test)KB_TEST_ARG(checks[i].name,
							    run_and_check,
							    (int)i, NULL);
	return n;
}

/* JSON (its rt-tests part shows the -S run), free everything, totals. */
static void finish(struct check_ctx *c)
{
	const char *path = c->opt->json;
	int err = 0;

	if (path) {
		pmq_json_rt_tests(c->smp, "kselftest",
				  ksft_get_fail_cnt() ? 1 : 0);
		err = kb_results_write_json(path);
	}
	pmq_run_free(c->smp);
	pmq_host_free(c->host);
	if (err) {
		ksft_print_msg("cannot write %s: %s\n", path, strerror(-err));
		ksft_exit_fail();
	}
	ksft_finished();
}

static int selftest_main(const struct pmq_options *o, struct pmq_host *h)
{
	static struct check_ctx c;	/* a table entry per pair: not on the stack */

	c = (struct check_ctx){
		.opt = o,
		.host = h,
		.loops = o->full ? SELFTEST_LOOPS_FULL :
			 kb_env_machine_slow() ? SELFTEST_LOOPS_SLOW : SELFTEST_LOOPS,
		.interval_us = o->full ? SELFTEST_INTERVAL_US_FULL :
			       SELFTEST_INTERVAL_US,
		.placement = o->placement_set ? o->placement : PMQ_PLACE_SPREAD,
	};
	char why[256];
	int err;

	ksft_print_header();
	err = pmq_probe(h);
	if (err && pmq_setup_skips(NULL, err))
		ksft_exit_skip("%s\n", pmq_setup_error_text(NULL, err, why,
							    sizeof(why)));
	/* Any other error fails every check, with its reason. */
	c.probe_err = err;
	c.npairs = selftest_npairs(h);
	pmq_lock_memory(h);
	ksft_print_msg("clock %s, ns resolution; %s\n", KB_CLOCK_NAME,
		       h->mlock_note);
	kb_results_param_str("mode", "kselftest");
	kb_results_param_num("loops", (double)c.loops);
	kb_results_param_num("interval_us", (double)c.interval_us);
	kb_results_param_num("warmup_cycles", SELFTEST_WARMUP);
	/* "placement" as the other programs write it, then ours in detail. */
	kb_results_param_str("placement", c.placement == PMQ_PLACE_SCHEDULER ?
		     "scheduler" : "pinned");
	kb_results_param_str("pair_placement", pmq_placement_name(c.placement));
	kb_ktap_run_tests(c.table, build_table(&c), NULL, &c);
	finish(&c);
	return 0;
}

/* ---- command line ---------------------------------------------------- */

/* What the option callbacks fill in and look at. */
struct option_ctx {
	struct pmq_options *o;
	const struct pmq_host *h;
};

static void parse_affinity(const char *arg, void *ctx)
{
	struct option_ctx *oc = ctx;
	struct pmq_options *o = oc->o;

	o->affinity = true;
	if (!arg)
		return;
	o->affinity_cpu = kb_cli_parse_ll(arg, "--affinity", 0,
					  PMQ_MAX_CPUS - 1);
	if (kb_rtsched_cpu_index(oc->h->cpus, oc->h->ncpus,
				 o->affinity_cpu) < 0)
		kb_cli_error("invalid value '%s' for --affinity: CPU %d is not available to this process",
			     arg, o->affinity_cpu);
}

static void parse_threads(const char *arg, void *ctx)
{
	struct pmq_options *o = ((struct option_ctx *)ctx)->o;

	o->threads = arg ? kb_cli_parse_ll(arg, "--threads", 1,
					   PMQ_MAX_PAIRS) : 0;
	o->threads_set = true;
}

static void parse_placement(const char *arg, void *ctx)
{
	static const enum pmq_placement choices[] = {
		PMQ_PLACE_SPREAD, PMQ_PLACE_SPLIT, PMQ_PLACE_SCHEDULER,
	};
	struct pmq_options *o = ((struct option_ctx *)ctx)->o;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(choices); i++) {
		if (!strcmp(arg, pmq_placement_name(choices[i]))) {
			o->placement = choices[i];
			o->placement_set = true;
			return;
		}
	}
	kb_cli_error("invalid value '%s' for --placement: spread, split or scheduler",
		     arg);
}

/* Option combinations that cannot work. */
static void check_options(struct pmq_options *o)
{
	if (o->force_s > 0 && o->timeout_s <= 0)
		kb_cli_error("--forcetimeout (-f) requires --timeout (-T)");
	if (o->smp && o->affinity_cpu >= 0)
		kb_cli_error("-S pins pair N to CPU N: it cannot be combined with -a PROC");
	if (o->placement_set && (o->smp || o->affinity))
		kb_cli_error("--placement and --no-pin cannot be combined with -a or -S, which place the threads themselves");
	if (o->full && o->rt_mode)
		kb_cli_error("--full selects the longer kselftest run: use it without rt-tests options");
}

static void parse_options(int argc, char **argv, struct pmq_options *o,
			  const struct pmq_host *h)
{
	struct option_ctx oc = { .o = o, .h = h };
	const struct kb_cli_opt opts[] = {
		KB_OPT_GROUP_SETS("rt-tests options (any of them selects rt-tests mode):",
				  &o->rt_mode),
		KB_OPT_CALLBACK_OPTIONAL('a', "affinity", parse_affinity, "PROC",
					 "pin the threads: to CPU PROC, or without PROC\n"
					 "pair N on the N-th CPU counted from the current\n"
					 "one (a single pair: the current CPU)"),
		KB_OPT_LLONG('b', "breaktrace", &o->breaktrace_us, 1, INT_MAX,
			     "USEC", "when a latency exceeds USEC: write 0 to tracefs\n"
			     "tracing_on (not restored) and stop"),
		KB_OPT_LLONG('d', "distance", &o->distance_us, 0, 1000000000,
			     "DIST", "interval step per pair in us (default 500):\n"
			     "interval(pair N) = INTV + N * DIST"),
		KB_OPT_DURATION('D', "duration", &o->duration_s, "TIME",
				"stop after TIME seconds; suffix m, h or d"),
		KB_OPT_SECONDS('f', "forcetimeout", &o->force_s, 1e-6, 1e6, "TO",
			       "the sender waits TO seconds before sending, to\n"
			       "force receiver timeouts; needs -T"),
		KB_OPT_LLONG('i', "interval", &o->interval_us, 0, 1000000000,
			     "INTV", "interval of the first pair in us (default 1000)"),
		KB_OPT_LLONG('l', "loops", &o->loops, 0, LLONG_MAX, "LOOPS",
			     "cycles per pair (default 0: endless)"),
		KB_OPT_INT('p', "prio", &o->prio, 0, kb_rtsched_fifo_prio_max(),
			   "PRIO", "SCHED_FIFO priority (needs CAP_SYS_NICE or\n"
			   "RLIMIT_RTPRIO); one lower per pair unless -S"),
		KB_OPT_FLAG('q', "quiet", &o->quiet,
			    "print the summary only at exit"),
		KB_OPT_FLAG('S', "smp", &o->smp,
			    "one pair per CPU, pair N on CPU N, same\n"
			    "priority: implies -a and -t"),
		KB_OPT_CALLBACK_OPTIONAL('t', "threads", parse_threads, "NUM",
					 "NUM pairs (default 1; without NUM one per CPU)"),
		KB_OPT_SECONDS('T', "timeout", &o->timeout_s, 1e-6, 1e6, "TO",
			       "receive with mq_timedreceive(), timeout TO\n"
			       "seconds (fractions allowed); timeouts are counted"),
		KB_OPT_GROUP("kbench options (in both modes):"),
		KB_OPT_LLONG(0, "histogram", &o->histogram_us, 1, 1000000,
			     "MAX_US", "latency histogram, 1 us buckets up to MAX_US, plus\n"
			     "percentiles (p50, p99, p99.9, max) per pair"),
		KB_OPT_DOUBLE(0, "max-latency", &o->max_latency_us, 1e-3, 1e9,
			      "US", "a pair whose maximum exceeds US fails"),
		KB_OPT_CALLBACK(0, "placement", parse_placement, "WHERE",
				"where each pair's two threads run: spread (pair N\n"
				"on CPU N, the kselftest's default), split\n"
				"(receiver on CPU N, sender on N+1: every wake-up\n"
				"crosses CPUs) or scheduler (no affinity); --no-pin\n"
				"is --placement=scheduler, as in the other programs"),
		KB_OPT_FLAG(0, "ktap", &o->ktap,
			    "rt-tests mode: print KTAP, one result per pair"),
		KB_OPT_END(),
	};
	const struct kb_cli cli = {
		.opts = opts, .ctx = &oc,
		.common = KB_CLI_FULL | KB_CLI_JSON | KB_CLI_NO_PIN,
		.about = "Measure the latency of POSIX message queues between pairs of threads.\n"
			 "Compatible with rt-tests' pmqtest(8); a kselftest when run without options.",
		.notes = "Without rt-tests options: the kselftest, one pair per CPU (-S style,\n"
			 "interval " KB_CLI_STR(SELFTEST_INTERVAL_US) " us, " KB_CLI_STR(SELFTEST_LOOPS)
			 " cycles after " KB_CLI_STR(SELFTEST_WARMUP) " warm-up cycles, "
			 KB_CLI_STR(SELFTEST_LOOPS_SLOW) " with\n"
			 "KSFT_MACHINE_SLOW=yes), a -T run and a -T/-f run that must count its\n"
			 "timeouts; KTAP output. --full is its longer run (-i "
			 KB_CLI_STR(SELFTEST_INTERVAL_US_FULL) ", "
			 KB_CLI_STR(SELFTEST_LOOPS_FULL) " cycles).\n"
			 "--json writes rt-tests' layout and the kbench \"rows\" in one document.\n"
			 "Latencies are " KB_CLOCK_NAME " differences in ns, shown in us.",
		.exit_status = "Exit status: 0 ok, 1 failure, 2 bad usage, 4 skipped (no mqueue support,\n"
			       "no privilege for -p).",
	};
	struct kb_cli_common common;

	kb_cli_parse(argc, argv, &cli, &common);
	o->json = common.json;
	o->full = common.full;
	if (common.no_pin) {
		o->placement = PMQ_PLACE_SCHEDULER;
		o->placement_set = true;
	}
	check_options(o);
}

int main(int argc, char **argv)
{
	struct pmq_options opt = {
		.interval_us = 1000,
		.distance_us = 500,
		.affinity_cpu = -1,
	};
	static struct pmq_host host;	/* 16 KiB of CPU list: not on the stack */
	int err, rc;

	kb_init("pmqtest", argc, argv);
	err = pmq_host_init(&host);
	if (err) {
		fprintf(stderr, "%s: sched_getaffinity: %s\n", kb_cli_prog(),
			strerror(-err));
		return 1;
	}
	parse_options(argc, argv, &opt, &host);
	if (opt.rt_mode)
		rc = pmq_rt_tests_main(&opt, &host);
	else
		rc = selftest_main(&opt, &host);
	pmq_host_free(&host);
	return rc;
}
