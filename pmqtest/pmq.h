/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The measuring engine both faces of pmqtest share: pairs of threads that
 * ping a stamp through POSIX message queues, the runs that start and stop
 * them, their rt-tests display and their JSON.
 *
 * Two programs' worth of front end sit on top of it, one per file:
 *  - rt_tests.c: the rt-tests compatible command (rt-tests' options,
 *    output and JSON layout), selected by any rt-tests option;
 *  - pmqtest.c: main(), the option parser and the kselftest: a table of
 *    checks, each a function returning a KSFT_* code and a reason.
 * Nothing here prints KTAP results: kselftest.h keeps its counters per
 * translation unit, so each front end reports its own.
 */
#ifndef PMQ_H
#define PMQ_H

#include <mqueue.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hist.h"
#include "kbench.h"

#define PMQ_MAX_PAIRS		1024
#define PMQ_MAX_CPUS		4096
#define PMQ_NAME_LEN		64
#define NSEC_PER_SEC		1000000000ull
#define NSEC_PER_USEC		1000ull


/* ns to whole us, rounded: rt-tests' integer columns. */
static inline uint64_t pmq_us_round(uint64_t ns)
{
	return (ns + NSEC_PER_USEC / 2) / NSEC_PER_USEC;
}

/* Where the two threads of pair N run. */
enum pmq_placement {
	PMQ_PLACE_SCHEDULER,	/* no affinity: the scheduler decides */
	PMQ_PLACE_CPU,		/* every thread on one CPU */
	PMQ_PLACE_SPREAD,	/* pair N on the N-th CPU from first_cpu */
	PMQ_PLACE_SPLIT,	/* pair N's receiver on CPU N, sender on N+1 */
};

enum pmq_stop {
	PMQ_STOP_NONE, PMQ_STOP_DONE, PMQ_STOP_DURATION, PMQ_STOP_SIGNAL,
	PMQ_STOP_BREAK, PMQ_STOP_ERROR,
};

/* What one run does: rt-tests' options, or a kselftest check's settings. */
struct pmq_config {
	int npairs;
	enum pmq_placement placement;
	int cpu;		/* PMQ_PLACE_CPU */
	int first_cpu;		/* PMQ_PLACE_SPREAD/SPLIT: index in the CPU list */
	int prio;		/* SCHED_FIFO priority, 0: SCHED_OTHER */
	bool same_prio;		/* -S: every pair at prio, else one lower each */
	long long interval_us;
	long long distance_us;
	long long loops;	/* 0: endless */
	long long warmup;	/* cycles run first and not recorded */
	double timeout_s;	/* -T, 0: blocking receive */
	double force_s;		/* -f */
	unsigned long long duration_s;
	long long breaktrace_us;
	long long histogram_us;
	bool stop_at_first;	/* rt-tests: all stop when one has its loops */
	bool quiet;		/* no live status */
	bool prefix;		/* status lines as KTAP diagnostics */
};

/* The process: the CPUs we may use, memory locking, queues and tracer. */
struct pmq_host {
	int cpus[PMQ_MAX_CPUS];
	int ncpus;
	int start_cpu;
	bool mlocked;
	char mlock_note[160];
	char start_time[64];	/* rt-tests' RFC 2822 start time */
	int queue_serial;
	/* Every queue name used, to prove none is still linked. */
	char (*names)[PMQ_NAME_LEN];
	int nnames;
	/* -b: tracefs files, -1 when not open. */
	int tracing_on_fd;
	int trace_marker_fd;
	const char *tracefs_dir;
};

/* The message on both queues: the sender's or the receiver's stamp. */
struct pmq_msg {
	uint64_t t_ns;
	uint64_t cycle;
};

struct pmq_run;

/*
 * One sender/receiver pair. Fields the display reads while the threads
 * run are accessed with relaxed atomics; the histograms are read after
 * the threads were joined.
 */
struct pmq_pair {
	_Alignas(64) int index;	/* a cache line each: no false sharing */
	int cpu;		/* receiver's pinned CPU, -1 when not pinned */
	int sender_pin;		/* sender's pinned CPU, -1 when not pinned */
	int prio;
	uint64_t interval_ns;
	uint64_t loops;		/* 0: endless */
	struct pmq_run *run;
	mqd_t testq, syncq;
	char testname[PMQ_NAME_LEN], syncname[PMQ_NAME_LEN];
	pthread_t sender, receiver;
	bool sender_started, receiver_started;

	int sender_tid, receiver_tid;
	int sender_cpu, receiver_cpu;
	uint64_t samples;	/* messages sent */
	uint64_t received;
	uint64_t timeouts;
	uint64_t cur_ns, min_ns, max_ns, sum_ns;
	/* Cycles the sender and receiver spent on different CPUs. */
	uint64_t cross_cpu;
	int sender_done, receiver_done;
	int err;
	const char *err_what;

	struct kb_hist hist;
	struct kb_hist_linear lhist;
};

struct pmq_run {
	const char *label;
	struct pmq_config cfg;
	struct pmq_host *host;
	struct pmq_pair *pairs;
	int npairs;
	uint64_t timeout_ns;
	uint64_t force_ns;
	uint64_t duration_ns;
	uint64_t break_ns;
	int stop;		/* enum pmq_stop */
	int signal;
	int break_pair;
	uint64_t break_lat_ns;
	pthread_t main_thread;
	pthread_mutex_t gate_lock;
	pthread_cond_t gate;
	int go;			/* 1: start, -1: abort */
	uint64_t start_ns, end_ns;
};

/* The command line, as main() parsed it. */
struct pmq_options {
	bool rt_mode;		/* an rt-tests option was given */
	bool ktap;		/* rt-tests mode with KTAP output */
	bool full;
	bool list;		/* kselftest: list the checks */
	const char *only;	/* kselftest: run only these checks */
	bool quiet;
	bool smp;
	bool affinity;		/* -a */
	int affinity_cpu;	/* -a PROC, else -1 */
	bool placement_set;	/* --placement given */
	enum pmq_placement placement;
	long long breaktrace_us;
	long long distance_us;
	long long interval_us;
	unsigned long long duration_s;
	double timeout_s;
	double force_s;
	long long loops;
	int prio;
	int threads;		/* 0: one per allowed CPU */
	bool threads_set;
	const char *json;
	long long histogram_us;
	double max_latency_us;
};

/* ---- the host -------------------------------------------------------- */

/* CPUs, start CPU and the wake signal. 0 or -errno. */
int pmq_host_init(struct pmq_host *h);
void pmq_host_free(struct pmq_host *h);
/* mlockall() where it is safe; the outcome is in h->mlock_note. */
void pmq_lock_memory(struct pmq_host *h);
/* -b: open tracefs; says on stderr what cannot be stopped. */
void pmq_open_tracer(struct pmq_host *h);
/* Can we create a queue at all? 0 or -errno. */
int pmq_probe(struct pmq_host *h);
/* How many of the queue names used are still linked (should be 0). */
int pmq_linked_names(struct pmq_host *h);

/* ---- runs ------------------------------------------------------------ */

struct pmq_run *pmq_run_new(struct pmq_host *h, const char *label,
			    const struct pmq_config *cfg);
/* Create the pairs' queues. 0 or -errno (queue creation, memory). */
int pmq_run_setup(struct pmq_run *r);
/*
 * Start every pair, show the status unless quiet, and stop on the loop
 * count, -D, a signal, -b or an error. 0, or -errno when a thread could
 * not be started (EPERM: SCHED_FIFO refused).
 */
int pmq_run_pairs(struct pmq_run *r);
/* A run stopped by a signal: clean up and die by that signal. */
void pmq_die_if_signalled(struct pmq_run *r);
void pmq_run_free(struct pmq_run *r);

/*
 * Whether a pmq_run_setup() / pmq_run_pairs() error (or pmq_probe()'s,
 * with @r NULL) SKIPs: the lib's one rule (kb_errno_is_environment), so
 * only a kernel without POSIX message queues (ENOSYS) or a SCHED_FIFO
 * thread refused for want of CAP_SYS_NICE skips; EINVAL, ENOSPC, EMFILE,
 * ENOMEM... fail.
 */
bool pmq_setup_skips(const struct pmq_run *r, int err);
/* Text of a pmq_run_setup() / pmq_run_pairs() error. */
const char *pmq_setup_error_text(const struct pmq_run *r, int err,
				 char *buf, size_t len);

/* ---- what a run shows ------------------------------------------------ */

/* rt-tests' two status lines per pair; @refresh moves the cursor back. */
void pmq_print_status(struct pmq_run *r, bool refresh);
/* cyclictest's histogram layout and the percentile lines. */
void pmq_print_histogram(const struct pmq_run *r, const char *pre);
void pmq_print_percentiles(const struct pmq_run *r, const char *pre);

/* "spread", "split", "scheduler" or "cpu": the JSON's and --placement's. */
const char *pmq_placement_name(enum pmq_placement where);

/* Add the pair's kbench row (unit us) with its placement in "extra". */
void pmq_pair_row(const char *name, const struct pmq_pair *p);

/*
 * What is wrong with a pair: an error, missing cycles, inconsistent
 * figures, @max_latency_us exceeded (when > 0), or a count of timeouts
 * other than @want_timeouts (when >= 0). NULL when nothing is.
 */
const char *pmq_pair_problem(const struct pmq_pair *p, double max_latency_us,
			     long long want_timeouts, char *why, size_t len);

/* Why @p's count of timeouts is outside [@least, @most], or NULL. */
const char *pmq_timeouts_problem(const struct pmq_pair *p, long long least,
				 long long most, char *why, size_t len);

/*
 * The rt-tests 2.4 JSON layout of @r next to the kbench rows, written by
 * kb_results_write_json(). @mode is "rt-tests" or "kselftest".
 */
void pmq_json_rt_tests(const struct pmq_run *r, const char *mode,
		       int return_code);

/* The rt-tests compatible command (rt_tests.c); returns the exit status. */
int pmq_rt_tests_main(const struct pmq_options *o, struct pmq_host *h);

#endif /* PMQ_H */
