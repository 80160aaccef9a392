// SPDX-License-Identifier: GPL-2.0
/*
 * pmqtest: latency of POSIX message queues between pairs of threads,
 * compatible with rt-tests' pmqtest(8) and a kselftest.
 *
 * A pair is a sender and a receiver thread and two queues. Every cycle the
 * receiver stamps the time and releases the sender with a message on the
 * sync queue; the sender stamps CLOCK_MONOTONIC and sends the stamp on the
 * test queue; the receiver takes the time as soon as mq_receive() returns:
 * the difference is one latency sample (ns). The receiver then sleeps the
 * pair's interval and starts the next cycle.
 *
 * With rt-tests options (-a -b -d -D -f -i -l -p -q -S -t -T) it runs like
 * rt-tests' pmqtest and prints its lines; with none (what the kselftest
 * runner does) it runs a short bounded check and prints KTAP.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <mqueue.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "kbench_ktap.h"
#include "histogram.h"
#include "rtsched.h"

#define MAX_PAIRS		1024
#define MAX_CPUS		4096
#define THREAD_STACK		(128 * 1024)	/* locked by mlockall */
#define REFRESH_NS		100000000ull	/* status refresh, 100 ms */
#define KICK_NS			5000000ull	/* re-wake stuck threads, 5 ms */
#define NSEC_PER_SEC		1000000000ull
#define NSEC_PER_USEC		1000ull
#define RT_TESTS_LAYOUT		"2.40"	/* the rt-tests JSON layout we write */

/* The kselftest entry: a short -S style run and two -T scenarios. */
#define KS_INTERVAL_US		200
#define KS_LOOPS		5000
#define KS_LOOPS_FULL		100000
#define KS_INTERVAL_US_FULL	100
#define KS_LOOPS_SLOW		500
#define KS_TIMED_LOOPS		200
#define KS_TIMED_TIMEOUT_S	1.0
#define KS_FORCE_LOOPS		3
#define KS_FORCE_TIMEOUT_S	0.2
#define KS_FORCE_DELAY_S	0.5

enum affinity { AFF_NONE, AFF_SPREAD, AFF_CPU };

enum stop_reason {
	STOP_NONE, STOP_DONE, STOP_DURATION, STOP_SIGNAL, STOP_BREAK,
	STOP_ERROR,
};

static const char *const stop_names[] = {
	"running", "loops", "duration", "signal", "breaktrace", "error",
};

struct options {
	bool rt_mode;		/* an rt-tests option was given */
	bool ktap;
	bool full;
	bool quiet;
	bool smp;
	enum affinity affinity;
	int affinity_cpu;
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

/* The message on both queues: the sender's or the receiver's stamp. */
struct pmq_msg {
	uint64_t t_ns;
	uint64_t cycle;
};

struct run;

/*
 * One sender/receiver pair. Fields the display reads while the threads
 * run are accessed with relaxed atomics; the histograms are read after
 * the threads were joined.
 */
struct pair {
	int index;
	int cpu;		/* pinned CPU, -1 when not pinned */
	int prio;
	uint64_t interval_ns;
	uint64_t loops;		/* 0: endless */
	struct run *run;
	mqd_t testq, syncq;
	char testname[64], syncname[64];
	pthread_t sender, receiver;
	bool sender_started, receiver_started;

	int sender_tid, receiver_tid;
	int sender_cpu, receiver_cpu;
	uint64_t samples;	/* messages sent */
	uint64_t received;
	uint64_t timeouts;
	uint64_t cur_ns, min_ns, max_ns, sum_ns;
	int sender_done, receiver_done;
	int err;
	const char *err_what;

	struct kb_hist hist;
	struct kb_hist_linear lhist;
} __attribute__((aligned(64)));	/* no false sharing between pairs */

struct run {
	const char *label;
	struct pair *pairs;
	int npairs;
	uint64_t timeout_ns;	/* -T: timed receive, 0: blocking */
	uint64_t force_ns;	/* -f: the sender's delay */
	uint64_t duration_ns;
	uint64_t break_ns;
	bool quiet;
	bool prefix;		/* status lines as KTAP diagnostics */
	bool stop_at_first;	/* stop all pairs when one has its loops */
	int stop;		/* enum stop_reason */
	int signal;
	int break_pair;
	uint64_t break_lat_ns;
	pthread_mutex_t gate_lock;
	pthread_cond_t gate;
	int go;			/* 1: start, -1: abort */
	uint64_t start_ns, end_ns;
};

static struct options opt = {
	.interval_us = 1000,
	.distance_us = 500,
	.affinity_cpu = -1,
};

static int allowed_cpus[MAX_CPUS];
static int nr_allowed;
static int start_cpu;
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
static int wake_signal;
static pthread_t main_thread;

/*
 * Wake the main thread, which waits in sigtimedwait() with the wake signal
 * blocked: a pair finished or the run must stop.
 */
static void notify_main(void)
{
	pthread_kill(main_thread, wake_signal);
}

/* Files of the latency tracer for -b. */
static int tracing_on_fd = -1, trace_marker_fd = -1;
static const char *tracefs_dir;

static bool mlocked;
static char mlock_note[160];
static char start_time[64];
static char **saved_argv;
static int saved_argc;
static int queue_serial;
/* Figure lines: stdout with KTAP, nowhere in plain rt-tests output. */
static FILE *figures_out;
static int failures;

/* Names of every queue we created, to prove they are gone at the end. */
static char (*used_names)[64];
static int nr_used_names;

static uint64_t load64(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void store64(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static int load_int(const int *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void store_int(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static uint64_t us_round(uint64_t ns)
{
	return (ns + NSEC_PER_USEC / 2) / NSEC_PER_USEC;
}

static struct timespec ns_to_ts(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / NSEC_PER_SEC),
		.tv_nsec = (long)(ns % NSEC_PER_SEC),
	};

	return ts;
}

/* ---- stopping -------------------------------------------------------- */

static bool stopping(const struct run *r)
{
	return load_int(&r->stop) != STOP_NONE;
}

/* The first reason wins. */
static void request_stop(struct run *r, enum stop_reason why)
{
	int none = STOP_NONE;

	if (__atomic_compare_exchange_n(&r->stop, &none, why, false,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) &&
	    !pthread_equal(pthread_self(), main_thread))
		notify_main();
}

static void pair_error(struct pair *p, const char *what, int err)
{
	if (!p->err) {
		p->err = err;
		p->err_what = what;
	}
	request_stop(p->run, STOP_ERROR);
}

/* Threads are woken from blocking calls by this signal (EINTR). */
static void wake_handler(int sig)
{
	(void)sig;
}

/* ---- latency tracer (-b) --------------------------------------------- */

static void open_tracer(void)
{
	static const char *const dirs[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	char path[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(path, sizeof(path), "%s/tracing_on", dirs[i]);
		tracing_on_fd = open(path, O_WRONLY | O_CLOEXEC);
		if (tracing_on_fd >= 0 || errno == EACCES || errno == EPERM) {
			tracefs_dir = dirs[i];
			break;
		}
	}
	if (tracing_on_fd < 0) {
		fprintf(stderr, "%s: -b: %s; the run stops at the threshold but no tracer is stopped\n",
			kb_prog(), tracefs_dir ?
			"cannot open tracefs tracing_on (not permitted)" :
			"tracefs not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
		return;
	}
	snprintf(path, sizeof(path), "%s/trace_marker", tracefs_dir);
	trace_marker_fd = open(path, O_WRONLY | O_CLOEXEC);
}

/* Called once, from the receiver that saw the latency. */
static void break_trace(struct pair *p, uint64_t lat_ns)
{
	char msg[128];
	int len;

	if (trace_marker_fd >= 0) {
		len = snprintf(msg, sizeof(msg),
			       "pmqtest: pair %d latency %llu ns > breaktrace %llu us\n",
			       p->index, (unsigned long long)lat_ns,
			       (unsigned long long)opt.breaktrace_us);
		if (write(trace_marker_fd, msg, len) < 0)
			(void)0;
	}
	/* Stopping the tracer is the point: it is not restored. */
	if (tracing_on_fd >= 0 && write(tracing_on_fd, "0", 1) < 0)
		(void)0;
	p->run->break_pair = p->index;
	p->run->break_lat_ns = lat_ns;
	request_stop(p->run, STOP_BREAK);
}

/* ---- the pair threads ------------------------------------------------ */

static int wait_gate(struct run *r)
{
	int go;

	pthread_mutex_lock(&r->gate_lock);
	while (!r->go)
		pthread_cond_wait(&r->gate, &r->gate_lock);
	go = r->go;
	pthread_mutex_unlock(&r->gate_lock);
	return go;
}

static void open_gate(struct run *r, int go)
{
	pthread_mutex_lock(&r->gate_lock);
	r->go = go;
	pthread_cond_broadcast(&r->gate);
	pthread_mutex_unlock(&r->gate_lock);
}

/* mq_send() that survives EINTR unless the run stops. 0, 1 (stop), -1. */
static int send_msg(struct pair *p, mqd_t q, const struct pmq_msg *m,
		    const char *what)
{
	while (mq_send(q, (const char *)m, sizeof(*m), 0)) {
		if (errno != EINTR) {
			pair_error(p, what, errno);
			return -1;
		}
		if (stopping(p->run))
			return 1;
	}
	return 0;
}

static int recv_msg(struct pair *p, mqd_t q, struct pmq_msg *m,
		    const char *what)
{
	ssize_t n;

	for (;;) {
		n = mq_receive(q, (char *)m, sizeof(*m), NULL);
		if (n == (ssize_t)sizeof(*m))
			return 0;
		if (n >= 0) {
			pair_error(p, what, EBADMSG);
			return -1;
		}
		if (errno != EINTR) {
			pair_error(p, what, errno);
			return -1;
		}
		if (stopping(p->run))
			return 1;
	}
}

/*
 * -T: each wait lasts the timeout (CLOCK_REALTIME deadline, what
 * mq_timedreceive takes); an expiry is counted and the wait re-armed.
 */
static int timed_recv_msg(struct pair *p, struct pmq_msg *m)
{
	uint64_t timeout = p->run->timeout_ns;
	struct timespec now, deadline;
	ssize_t n;

	clock_gettime(CLOCK_REALTIME, &now);
	deadline = ns_to_ts((uint64_t)now.tv_sec * NSEC_PER_SEC + now.tv_nsec +
			    timeout);
	for (;;) {
		n = mq_timedreceive(p->testq, (char *)m, sizeof(*m), NULL,
				    &deadline);
		if (n == (ssize_t)sizeof(*m))
			return 0;
		if (n >= 0) {
			pair_error(p, "mq_timedreceive(test)", EBADMSG);
			return -1;
		}
		if (errno == ETIMEDOUT) {
			store64(&p->timeouts, p->timeouts + 1);
			clock_gettime(CLOCK_REALTIME, &now);
			deadline = ns_to_ts((uint64_t)now.tv_sec * NSEC_PER_SEC +
					    now.tv_nsec + timeout);
		} else if (errno != EINTR) {
			pair_error(p, "mq_timedreceive(test)", errno);
			return -1;
		}
		if (stopping(p->run))
			return 1;
	}
}

/* clock_nanosleep() until @abs_ns; 1 when the run stops meanwhile. */
static int sleep_until(struct run *r, uint64_t abs_ns)
{
	struct timespec ts = ns_to_ts(abs_ns);

	while (clock_nanosleep(KB_CLOCK, TIMER_ABSTIME, &ts, NULL) == EINTR)
		if (stopping(r))
			return 1;
	return stopping(r);
}

static void thread_identity(struct pair *p, int *tid, int *cpu)
{
	sigset_t wake;

	sigemptyset(&wake);
	sigaddset(&wake, wake_signal);
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
	store_int(tid, gettid());
	store_int(cpu, p->cpu >= 0 ? p->cpu : sched_getcpu());
}

static void record_latency(struct pair *p, uint64_t lat)
{
	if (!p->received || lat < p->min_ns)
		store64(&p->min_ns, lat);
	if (lat > p->max_ns)
		store64(&p->max_ns, lat);
	store64(&p->cur_ns, lat);
	store64(&p->sum_ns, p->sum_ns + lat);
	kb_hist_record(&p->hist, lat);
	if (p->lhist.counts)
		kb_hist_linear_record(&p->lhist, lat);
	store64(&p->received, p->received + 1);
}

static void *receiver_main(void *arg)
{
	struct pair *p = arg;
	struct run *r = p->run;
	struct pmq_msg m;
	uint64_t c, t_recv;
	int ret;

	thread_identity(p, &p->receiver_tid, &p->receiver_cpu);
	if (wait_gate(r) < 0)
		goto out;
	for (c = 0; !p->loops || c < p->loops; c++) {
		if (c && sleep_until(r, kb_now_ns() + p->interval_ns))
			break;
		m.cycle = c;
		m.t_ns = kb_now_ns();
		if (send_msg(p, p->syncq, &m, "mq_send(sync)"))
			break;
		ret = r->timeout_ns ? timed_recv_msg(p, &m) :
				      recv_msg(p, p->testq, &m, "mq_receive(test)");
		t_recv = kb_now_ns();
		if (ret)
			break;
		if (m.cycle != c || t_recv < m.t_ns) {
			pair_error(p, m.cycle != c ? "message out of sequence" :
				   "receive stamp before send stamp", EPROTO);
			break;
		}
		record_latency(p, t_recv - m.t_ns);
		if (r->break_ns && t_recv - m.t_ns > r->break_ns &&
		    !stopping(r)) {
			break_trace(p, t_recv - m.t_ns);
			break;
		}
		if (p->cpu < 0)
			store_int(&p->receiver_cpu, sched_getcpu());
	}
	/* rt-tests stops every pair when the first one has its loops. */
	if (r->stop_at_first && p->loops && p->received == p->loops)
		request_stop(r, STOP_DONE);
out:
	store_int(&p->receiver_done, 1);
	notify_main();
	return NULL;
}

/*
 * -f: the sender sends TO seconds after the receiver started waiting, so
 * the receiver's waits of -T seconds expire ceil(TO / T) - 1 times per
 * cycle. A guard of 1 % of TO (at most 10 ms) keeps an exact multiple
 * (-T 1 -f 2) from racing the receiver's last deadline.
 */
static uint64_t force_send_delay(const struct run *r)
{
	uint64_t guard = r->force_ns / 100;

	if (guard > 10000000ull)
		guard = 10000000ull;
	return r->force_ns - guard;
}

static void *sender_main(void *arg)
{
	struct pair *p = arg;
	struct run *r = p->run;
	struct pmq_msg m;
	uint64_t c;

	thread_identity(p, &p->sender_tid, &p->sender_cpu);
	if (wait_gate(r) < 0)
		goto out;
	for (c = 0; !p->loops || c < p->loops; c++) {
		if (recv_msg(p, p->syncq, &m, "mq_receive(sync)"))
			break;
		if (r->force_ns && sleep_until(r, m.t_ns + force_send_delay(r)))
			break;
		m.cycle = c;
		m.t_ns = kb_now_ns();
		if (send_msg(p, p->testq, &m, "mq_send(test)"))
			break;
		store64(&p->samples, p->samples + 1);
		if (p->cpu < 0)
			store_int(&p->sender_cpu, sched_getcpu());
	}
out:
	store_int(&p->sender_done, 1);
	notify_main();
	return NULL;
}

/* ---- queues ---------------------------------------------------------- */

static void remember_name(const char *name)
{
	char (*names)[64] = realloc(used_names,
				    sizeof(*names) * (nr_used_names + 1));

	if (!names)
		return;
	used_names = names;
	snprintf(used_names[nr_used_names++], sizeof(used_names[0]), "%s", name);
}

/*
 * Create a private queue: the name (with our pid, so parallel runs never
 * meet) is unlinked as soon as the queue is open, with the cleanup
 * signals blocked in between, so no queue outlives the process however it
 * ends. 0 or -errno.
 */
static int create_queue(mqd_t *q, char *name, size_t len, const char *role,
			int index)
{
	struct mq_attr attr = { .mq_maxmsg = 1, .mq_msgsize = sizeof(struct pmq_msg) };
	int tries, err = 0;

	for (tries = 0; tries < 100; tries++) {
		snprintf(name, len, "/kbench-pmqtest-%d-%d-%s%d", getpid(),
			 queue_serial++, role, index);
		kb_signals_block();
		*q = mq_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600,
			     &attr);
		err = *q == (mqd_t)-1 ? -errno : 0;
		if (!err)
			mq_unlink(name);
		kb_signals_unblock();
		if (err != -EEXIST)
			break;
	}
	if (!err)
		remember_name(name);
	return err;
}

static const char *mq_error_text(int err)
{
	static char buf[256];

	switch (-err) {
	case ENOSYS:
		return "POSIX message queues not supported by this kernel (CONFIG_POSIX_MQUEUE=n)";
	case ENOSPC:
		return "mq_open: ENOSPC: too many queues (fs.mqueue.queues_max)";
	case EMFILE:
		return "mq_open: EMFILE: RLIMIT_MSGQUEUE or the open file limit reached";
	default:
		snprintf(buf, sizeof(buf), "mq_open: %s", strerror(-err));
		return buf;
	}
}

/* Can we create a queue at all? 0 or -errno. */
static int probe_mqueue(void)
{
	char name[64];
	mqd_t q;
	int err = create_queue(&q, name, sizeof(name), "probe", 0);

	if (!err)
		mq_close(q);
	return err;
}

/* ---- running pairs --------------------------------------------------- */

static int pair_cpu(int i)
{
	int idx;

	switch (opt.affinity) {
	case AFF_CPU:
		return opt.affinity_cpu;
	case AFF_SPREAD:
		/* -S: pair i on the i-th CPU; -a: from the current CPU on. */
		idx = opt.smp ? 0 : kb_cpu_index(allowed_cpus, nr_allowed,
						 start_cpu);
		if (idx < 0)
			idx = 0;
		return allowed_cpus[(idx + i) % nr_allowed];
	default:
		return -1;
	}
}

static int pair_prio(int i)
{
	int prio = opt.prio;

	if (prio > 0 && !opt.smp)
		prio = prio - i > 1 ? prio - i : 1;
	return prio;
}

static int init_pair(struct run *r, struct pair *p, int i)
{
	int err;

	p->index = i;
	p->run = r;
	p->testq = p->syncq = (mqd_t)-1;
	kb_hist_init(&p->hist);
	if (opt.histogram_us > 0 &&
	    kb_hist_linear_init(&p->lhist, opt.histogram_us, NSEC_PER_USEC))
		return -ENOMEM;
	err = create_queue(&p->testq, p->testname, sizeof(p->testname),
			   "test", i);
	if (!err)
		err = create_queue(&p->syncq, p->syncname, sizeof(p->syncname),
				   "sync", i);
	return err;
}

static struct run *run_new(const char *label, int npairs)
{
	struct run *r = calloc(1, sizeof(*r));
	size_t size = sizeof(struct pair) * npairs;

	if (!r)
		return NULL;
	r->label = label;
	r->npairs = npairs;
	r->break_pair = -1;
	r->pairs = aligned_alloc(64, (size + 63) / 64 * 64);
	if (!r->pairs) {
		free(r);
		return NULL;
	}
	memset(r->pairs, 0, size);
	pthread_mutex_init(&r->gate_lock, NULL);
	pthread_cond_init(&r->gate, NULL);
	return r;
}

static void run_free(struct run *r)
{
	int i;

	for (i = 0; i < r->npairs; i++) {
		struct pair *p = &r->pairs[i];

		if (p->testq != (mqd_t)-1)
			mq_close(p->testq);
		if (p->syncq != (mqd_t)-1)
			mq_close(p->syncq);
		kb_hist_linear_free(&p->lhist);
	}
	free(r->pairs);
	free(r);
}

static int start_thread(struct pair *p, pthread_t *t, void *(*fn)(void *))
{
	struct sched_param sp = { .sched_priority = p->prio };
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, THREAD_STACK);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, p->prio > 0 ? SCHED_FIFO : SCHED_OTHER);
	pthread_attr_setschedparam(&attr, &sp);
	if (p->cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(p->cpu, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	err = pthread_create(t, &attr, fn, p);
	pthread_attr_destroy(&attr);
	return -err;
}

/* Block the stop signals and the wake signal; they are taken synchronously. */
static void block_stop_signals(sigset_t *set)
{
	size_t i;

	sigemptyset(set);
	for (i = 0; i < ARRAY_SIZE(stop_signals); i++)
		sigaddset(set, stop_signals[i]);
	sigaddset(set, wake_signal);
	pthread_sigmask(SIG_BLOCK, set, NULL);
}

static bool all_done(struct run *r)
{
	int i;

	for (i = 0; i < r->npairs; i++)
		if (!load_int(&r->pairs[i].sender_done) ||
		    !load_int(&r->pairs[i].receiver_done))
			return false;
	return true;
}

/* A second stop signal while the threads wind down: leave at once. */
static void die_by_signal(int sig, const sigset_t *set)
{
	kb_cleanup_run_all();
	signal(sig, SIG_DFL);
	pthread_sigmask(SIG_UNBLOCK, set, NULL);
	raise(sig);
	_exit(128 + sig);
}

static int wait_signal(const sigset_t *set, uint64_t ns)
{
	struct timespec ts = ns_to_ts(ns);

	return sigtimedwait(set, NULL, &ts);
}

static void stop_and_join(struct run *r, const sigset_t *set)
{
	int i, sig;

	while (!all_done(r)) {
		for (i = 0; i < r->npairs; i++) {
			struct pair *p = &r->pairs[i];

			if (p->sender_started && !load_int(&p->sender_done))
				pthread_kill(p->sender, wake_signal);
			if (p->receiver_started && !load_int(&p->receiver_done))
				pthread_kill(p->receiver, wake_signal);
		}
		sig = wait_signal(set, KICK_NS);
		if (sig > 0 && sig != wake_signal)
			die_by_signal(sig, set);
	}
	for (i = 0; i < r->npairs; i++) {
		if (r->pairs[i].sender_started)
			pthread_join(r->pairs[i].sender, NULL);
		if (r->pairs[i].receiver_started)
			pthread_join(r->pairs[i].receiver, NULL);
	}
}

static void print_status(struct run *r, bool refresh);

/*
 * Start every pair, show the status unless quiet, and stop on the loop
 * count, -D, a signal, -b or an error. 0, or -errno when a thread could
 * not be started (EPERM: SCHED_FIFO refused).
 */
static int run_pairs(struct run *r)
{
	uint64_t now, deadline, wait;
	sigset_t set;
	int i, sig, err = 0;

	block_stop_signals(&set);
	for (i = 0; i < r->npairs && !err; i++) {
		struct pair *p = &r->pairs[i];

		p->receiver_done = p->sender_done = 1;
		err = start_thread(p, &p->receiver, receiver_main);
		if (err)
			break;
		p->receiver_started = true;
		p->receiver_done = 0;
		err = start_thread(p, &p->sender, sender_main);
		if (err)
			break;
		p->sender_started = true;
		p->sender_done = 0;
	}
	for (; i < r->npairs; i++)
		r->pairs[i].receiver_done = r->pairs[i].sender_done = 1;
	if (err) {
		request_stop(r, STOP_ERROR);
		open_gate(r, -1);
		stop_and_join(r, &set);
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
		return err;
	}
	r->start_ns = kb_now_ns();
	deadline = r->duration_ns ? r->start_ns + r->duration_ns : 0;
	open_gate(r, 1);
	while (!stopping(r) && !all_done(r)) {
		now = kb_now_ns();
		if (deadline && now >= deadline) {
			request_stop(r, STOP_DURATION);
			break;
		}
		wait = REFRESH_NS;
		if (deadline && deadline - now < wait)
			wait = deadline - now;
		sig = wait_signal(&set, wait);
		if (sig > 0 && sig != wake_signal) {
			r->signal = sig;
			request_stop(r, STOP_SIGNAL);
		}
		if (!r->quiet)
			print_status(r, true);
	}
	request_stop(r, STOP_DONE);
	stop_and_join(r, &set);
	r->end_ns = kb_now_ns();
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	return 0;
}

/* ---- rt-tests output ------------------------------------------------- */

static void print_status(struct run *r, bool refresh)
{
	const char *pre = r->prefix ? "# " : "";
	int i;

	for (i = 0; i < r->npairs; i++) {
		struct pair *p = &r->pairs[i];

		printf("%s#%d: ID%d, P%d, CPU%d, I%llu; #%d: ID%d, P%d, CPU%d, TO %llu, Cycles %llu\n",
		       pre, 2 * i, load_int(&p->receiver_tid), p->prio,
		       load_int(&p->receiver_cpu),
		       (unsigned long long)(p->interval_ns / NSEC_PER_USEC),
		       2 * i + 1, load_int(&p->sender_tid), p->prio,
		       load_int(&p->sender_cpu),
		       (unsigned long long)load64(&p->timeouts),
		       (unsigned long long)load64(&p->samples));
	}
	for (i = 0; i < r->npairs; i++) {
		struct pair *p = &r->pairs[i];
		uint64_t n = load64(&p->received);
		double avg = n ? (double)load64(&p->sum_ns) / n / NSEC_PER_USEC : 0;

		printf("%s#%d -> #%d, Min %4llu, Cur %4llu, Avg %4.0f, Max %4llu\n",
		       pre, 2 * i + 1, 2 * i,
		       (unsigned long long)us_round(load64(&p->min_ns)),
		       (unsigned long long)us_round(load64(&p->cur_ns)), avg,
		       (unsigned long long)us_round(load64(&p->max_ns)));
	}
	if (refresh)
		printf("\033[%dA", 2 * r->npairs);
	fflush(stdout);
}

/* cyclictest's histogram layout: one line per bucket, then totals. */
static void print_histogram(struct run *r, const char *pre)
{
	size_t b;
	int i;

	printf("%s# Histogram (bucket %llu us, one column per pair)\n", pre,
	       1ull);
	for (b = 0; b < (size_t)opt.histogram_us; b++) {
		printf("%s%06zu", pre, b);
		for (i = 0; i < r->npairs; i++)
			printf(" %06llu", (unsigned long long)r->pairs[i].lhist.counts[b]);
		putchar('\n');
	}
	printf("%s# Total:", pre);
	for (i = 0; i < r->npairs; i++)
		printf(" %09llu", (unsigned long long)r->pairs[i].hist.count);
	printf("\n%s# Histogram Overflows:", pre);
	for (i = 0; i < r->npairs; i++)
		printf(" %05llu", (unsigned long long)r->pairs[i].lhist.overflow);
	putchar('\n');
}

static void print_percentiles(struct run *r, const char *pre)
{
	static const struct { const char *label; double p; } pcts[] = {
		{ "p50", 50 }, { "p99", 99 }, { "p99.9", 99.9 }, { "Max", 100 },
	};
	size_t k;
	int i;

	for (k = 0; k < ARRAY_SIZE(pcts); k++) {
		printf("%s# %s Latencies (us):", pre, pcts[k].label);
		for (i = 0; i < r->npairs; i++)
			printf(" %.3f", kb_hist_percentile(&r->pairs[i].hist,
							   pcts[k].p) / NSEC_PER_USEC);
		putchar('\n');
	}
}

/* ---- JSON: the rt-tests 2.4 layout next to the kbench rows ----------- */

static void rfc2822_now(char *buf, size_t size)
{
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(buf, size, "%a, %d %b %Y %H:%M:%S %z", &tm);
}

static struct run *json_run;
static int json_return_code;

static void json_num_us(FILE *f, const char *key, double ns)
{
	fprintf(f, ", \"%s\": ", key);
	if (isfinite(ns))
		fprintf(f, "%.3f", ns / NSEC_PER_USEC);
	else
		fputs("null", f);
}

static void json_pair(FILE *f, const struct pair *p)
{
	const struct kb_hist *h = &p->hist;
	size_t b;

	fprintf(f, "    \"%d\": {\n      \"sender\": {\"cpu\": %d, \"priority\": %d, \"samples\": %llu, \"interval\": %llu, \"tid\": %d},\n",
		p->index, p->sender_cpu, p->prio,
		(unsigned long long)p->samples,
		(unsigned long long)(p->interval_ns / NSEC_PER_USEC),
		p->sender_tid);
	fprintf(f, "      \"receiver\": {\"cpu\": %d, \"priority\": %d, \"timeoutcount\": %llu, \"min\": %llu, \"avg\": %.2f, \"max\": %llu",
		p->receiver_cpu, p->prio, (unsigned long long)p->timeouts,
		(unsigned long long)us_round(h->count ? h->min : 0),
		h->count ? kb_hist_mean(h) / NSEC_PER_USEC : 0.0,
		(unsigned long long)us_round(h->max));
	fprintf(f, ", \"tid\": %d, \"cycles\": %llu", p->receiver_tid,
		(unsigned long long)h->count);
	json_num_us(f, "min_us", h->count ? (double)h->min : NAN);
	json_num_us(f, "avg_us", kb_hist_mean(h));
	json_num_us(f, "max_us", h->count ? (double)h->max : NAN);
	json_num_us(f, "stddev_us", kb_hist_stddev(h));
	json_num_us(f, "p50_us", kb_hist_percentile(h, 50));
	json_num_us(f, "p99_us", kb_hist_percentile(h, 99));
	json_num_us(f, "p999_us", kb_hist_percentile(h, 99.9));
	if (p->lhist.counts) {
		fputs(", \"histogram\": {\"bucket_us\": 1, \"counts\": [", f);
		for (b = 0; b < p->lhist.nbuckets; b++)
			fprintf(f, "%s%llu", b ? ", " : "",
				(unsigned long long)p->lhist.counts[b]);
		fprintf(f, "], \"overflow\": %llu}",
			(unsigned long long)p->lhist.overflow);
	}
	fputs("}\n    }", f);
}

static void json_rt_tests(FILE *f, void *arg)
{
	struct run *r = json_run;
	char end[64], *cmd = NULL;
	struct utsname u;
	size_t len = 1;
	int i;

	(void)arg;
	for (i = 0; i < saved_argc; i++)
		len += strlen(saved_argv[i]) + 1;
	cmd = calloc(1, len);
	for (i = 0; cmd && i < saved_argc; i++) {
		if (i)
			strcat(cmd, " ");
		strcat(cmd, saved_argv[i]);
	}
	uname(&u);
	rfc2822_now(end, sizeof(end));
	fputs("  \"file_version\": 1,\n  \"cmdline:\": ", f);
	kb_json_string(f, cmd ? cmd : "");
	free(cmd);
	fputs(",\n  \"rt_test_version:\": \"" RT_TESTS_LAYOUT "\",\n  \"start_time\": ", f);
	kb_json_string(f, start_time);
	fputs(",\n  \"end_time\": ", f);
	kb_json_string(f, end);
	fprintf(f, ",\n  \"return_code\": %d,\n  \"sysinfo\": {\"sysname\": ",
		json_return_code);
	kb_json_string(f, u.sysname);
	fputs(", \"nodename\": ", f);
	kb_json_string(f, u.nodename);
	fputs(", \"release\": ", f);
	kb_json_string(f, u.release);
	fputs(", \"version\": ", f);
	kb_json_string(f, u.version);
	fputs(", \"machine\": ", f);
	kb_json_string(f, u.machine);
	fprintf(f, ", \"realtime\": %d},\n", kb_kernel_realtime());
	fprintf(f, "  \"num_threads\": %d,\n  \"thread\": {\n", r ? r->npairs : 0);
	for (i = 0; r && i < r->npairs; i++) {
		json_pair(f, &r->pairs[i]);
		fputs(i + 1 < r->npairs ? ",\n" : "\n", f);
	}
	fputs("  },\n  \"pmqtest\": {\"clock\": \"" KB_CLOCK_NAME "\", \"resolution_ns\": 1", f);
	fprintf(f, ", \"mode\": \"%s\", \"stopped_by\": \"%s\", \"mlocked\": %s",
		opt.rt_mode ? "rt-tests" : "kselftest",
		r ? stop_names[r->stop] : "error", mlocked ? "true" : "false");
	if (r)
		fprintf(f, ", \"timeout_s\": %.6g, \"forcetimeout_s\": %.6g, \"duration_s\": %.3f",
			(double)r->timeout_ns / NSEC_PER_SEC,
			(double)r->force_ns / NSEC_PER_SEC,
			(double)(r->end_ns - r->start_ns) / NSEC_PER_SEC);
	fputs("}", f);
}

static void write_json(struct run *r, int return_code)
{
	int err;

	if (!opt.json)
		return;
	json_run = r;
	json_return_code = return_code;
	kb_json_extra(json_rt_tests, NULL);
	err = kb_json_write(opt.json);
	if (err) {
		fprintf(stderr, "%s: cannot write %s: %s\n", kb_prog(),
			opt.json, strerror(-err));
		exit(1);
	}
}

/* ---- kbench rows and KTAP verdicts ----------------------------------- */

/* Add the pair's kbench row; prints its figure lines unless silenced. */
static void pair_row(const char *name, struct pair *p)
{
	struct kb_stats st;

	if (kb_hist_stats(&p->hist, 1.0 / NSEC_PER_USEC, &st))
		return;
	kb_row_add(name, "us", &st);
	kb_figure(name, "cpu=%d prio=%d interval_us=%llu cycles=%llu timeouts=%llu p50=%.3f p99=%.3f p999=%.3f max=%.3f",
		  p->receiver_cpu, p->prio,
		  (unsigned long long)(p->interval_ns / NSEC_PER_USEC),
		  (unsigned long long)p->hist.count,
		  (unsigned long long)p->timeouts, st.median, st.p99, st.p999,
		  st.max);
	/* The same figures again in the JSON row, without more lines. */
	kb_figures_to(NULL);
	kb_row_extra("cpu", p->receiver_cpu);
	kb_row_extra("prio", p->prio);
	kb_row_extra("interval_us", (double)(p->interval_ns / NSEC_PER_USEC));
	kb_row_extra("cycles", (double)p->hist.count);
	kb_row_extra("timeouts", (double)p->timeouts);
	kb_figures_to(figures_out);
}

/*
 * The verdict of one pair: an error, missing cycles (unless the run was
 * stopped on purpose), inconsistent figures, --max-latency exceeded, or
 * an unexpected number of timeouts (@want_timeouts >= 0). NULL when ok.
 */
static const char *pair_problem(struct pair *p, long long want_timeouts)
{
	static char why[256];
	const struct kb_hist *h = &p->hist;
	int stop = p->run->stop;
	double mean = kb_hist_mean(h);

	if (p->err) {
		snprintf(why, sizeof(why), "%s: %s", p->err_what,
			 strerror(p->err));
		return why;
	}
	if (p->loops && stop == STOP_DONE && !p->run->stop_at_first &&
	    (h->count != p->loops || p->samples != p->loops)) {
		snprintf(why, sizeof(why), "completed %llu of %llu cycles",
			 (unsigned long long)h->count,
			 (unsigned long long)p->loops);
		return why;
	}
	if (!h->count)
		return stop == STOP_DONE && !p->run->stop_at_first ?
		       "no latency sample" : NULL;
	if (!(h->min > 0 && (double)h->min <= mean && mean <= (double)h->max)) {
		snprintf(why, sizeof(why),
			 "inconsistent figures: min %llu ns, mean %.1f ns, max %llu ns",
			 (unsigned long long)h->min, mean,
			 (unsigned long long)h->max);
		return why;
	}
	if (opt.max_latency_us > 0 &&
	    (double)h->max / NSEC_PER_USEC > opt.max_latency_us) {
		snprintf(why, sizeof(why), "max latency %.3f us exceeds --max-latency=%g us",
			 (double)h->max / NSEC_PER_USEC, opt.max_latency_us);
		return why;
	}
	if (want_timeouts >= 0 && p->timeouts != (uint64_t)want_timeouts) {
		snprintf(why, sizeof(why), "counted %llu timeouts, expected %lld",
			 (unsigned long long)p->timeouts, want_timeouts);
		return why;
	}
	return NULL;
}

static void pair_verdict(const char *name, struct pair *p,
			 long long want_timeouts)
{
	const char *why;

	pair_row(name, p);
	why = pair_problem(p, want_timeouts);
	if (why)
		failures++;
	kb_result(!why, name, why);
}

/* ---- building runs from the options ---------------------------------- */

static int npairs_wanted(void)
{
	if (opt.threads_set)
		return opt.threads ? opt.threads : nr_allowed;
	return opt.smp ? nr_allowed : 1;
}

/* 0, or -errno from queue creation / memory. */
static int setup_run(struct run *r, long long loops)
{
	int i, err;

	r->timeout_ns = (uint64_t)llround(opt.timeout_s * NSEC_PER_SEC);
	r->force_ns = (uint64_t)llround(opt.force_s * NSEC_PER_SEC);
	r->duration_ns = opt.duration_s * NSEC_PER_SEC;
	r->break_ns = (uint64_t)opt.breaktrace_us * NSEC_PER_USEC;
	for (i = 0; i < r->npairs; i++) {
		struct pair *p = &r->pairs[i];

		p->cpu = pair_cpu(i);
		p->prio = pair_prio(i);
		p->loops = (uint64_t)loops;
		p->interval_ns = (uint64_t)(opt.interval_us + i * opt.distance_us) *
				 NSEC_PER_USEC;
		p->receiver_cpu = p->sender_cpu = p->cpu;
		err = init_pair(r, p, i);
		if (err)
			return err;
	}
	return 0;
}

static void lock_memory(void)
{
	mlocked = !kb_mlockall(mlock_note, sizeof(mlock_note));
	if (mlocked)
		snprintf(mlock_note, sizeof(mlock_note), "memory locked (mlockall)");
}

static const char *thread_error_text(int err)
{
	static char buf[256];

	if (err == -EPERM)
		snprintf(buf, sizeof(buf),
			 "cannot start SCHED_FIFO threads at priority %d: %s (RT throttling or a cgroup without RT runtime?)",
			 opt.prio, strerror(-err));
	else
		snprintf(buf, sizeof(buf), "cannot start threads: %s",
			 strerror(-err));
	return buf;
}

/* ---- rt-tests mode --------------------------------------------------- */

/* Missing privilege or kernel support: exit 4, in KTAP too with --ktap. */
static void __attribute__((noreturn)) rt_skip(const char *why)
{
	if (opt.ktap)
		ksft_exit_skip("%s\n", why);
	exit(KSFT_SKIP);
}

static int rt_tests_main(void)
{
	struct run *r;
	int i, err, rc = 0;
	char why[256];

	if (opt.ktap)
		ksft_print_header();
	if (opt.prio > 0 && !kb_fifo_allowed(opt.prio, why, sizeof(why))) {
		fprintf(stderr, "%s: -p %d: %s\n", kb_prog(), opt.prio, why);
		rt_skip(why);
	}
	if (opt.breaktrace_us)
		open_tracer();
	lock_memory();
	r = run_new("rt-tests", npairs_wanted());
	if (!r) {
		fprintf(stderr, "%s: out of memory\n", kb_prog());
		exit(1);
	}
	r->quiet = opt.quiet || opt.ktap;
	r->prefix = opt.ktap;
	r->stop_at_first = true;
	err = setup_run(r, opt.loops);
	if (err) {
		fprintf(stderr, "%s: %s\n", kb_prog(), err == -ENOMEM ?
			"out of memory" : mq_error_text(err));
		if (err == -ENOMEM)
			exit(1);
		rt_skip(mq_error_text(err));
	}
	if (opt.ktap) {
		ksft_set_plan(r->npairs);
		ksft_print_msg("rt-tests mode, clock %s (ns), %s\n",
			       KB_CLOCK_NAME, mlock_note);
	} else if (!mlocked && opt.prio > 0) {
		fprintf(stderr, "%s: %s\n", kb_prog(), mlock_note);
	}
	err = run_pairs(r);
	if (err) {
		fprintf(stderr, "%s: %s\n", kb_prog(), thread_error_text(err));
		if (err == -EPERM)
			rt_skip(thread_error_text(err));
		exit(1);
	}
	print_status(r, false);
	if (opt.histogram_us > 0) {
		print_histogram(r, opt.ktap ? "# " : "");
		print_percentiles(r, opt.ktap ? "# " : "");
	}
	if (r->stop == STOP_BREAK)
		printf("%s# Break: #%d -> #%d latency %.3f us > %lld us%s\n",
		       opt.ktap ? "# " : "", 2 * r->break_pair + 1,
		       2 * r->break_pair, (double)r->break_lat_ns / NSEC_PER_USEC,
		       opt.breaktrace_us,
		       tracing_on_fd >= 0 ? ", tracing stopped" : "");
	for (i = 0; i < r->npairs; i++) {
		char name[32];
		const char *why_pair;

		snprintf(name, sizeof(name), "latency_pair%d", i);
		if (opt.ktap) {
			pair_verdict(name, &r->pairs[i], -1);
			continue;
		}
		pair_row(name, &r->pairs[i]);
		why_pair = pair_problem(&r->pairs[i], -1);
		if (why_pair) {
			fprintf(stderr, "%s: pair %d: %s\n", kb_prog(), i, why_pair);
			kb_row_status(name, "fail", why_pair);
			rc = 1;
		}
	}
	if (opt.ktap)
		rc = failures ? 1 : 0;
	write_json(r, rc);
	run_free(r);
	if (opt.ktap)
		ksft_finished();
	return rc;
}

/* ---- kselftest mode -------------------------------------------------- */

static void print_run_summary(struct run *r)
{
	ksft_print_msg("%s: rt-tests summary (us):\n", r->label);
	r->prefix = true;
	print_status(r, false);
}

/* Run @r, skipping or failing @names when it cannot start. false: not run. */
static bool ks_run(struct run *r, long long loops, const char *names[], int n)
{
	int err = setup_run(r, loops), i;

	if (!err)
		err = run_pairs(r);
	if (err) {
		const char *why = err == -ENOMEM ? "out of memory" :
				  err == -EAGAIN || err == -EPERM ?
				  thread_error_text(err) : mq_error_text(err);

		for (i = 0; i < n; i++)
			kb_skip(names[i], why);
		return false;
	}
	if (r->stop == STOP_SIGNAL) {
		sigset_t set;

		ksft_print_msg("interrupted by signal %d, stopping\n", r->signal);
		block_stop_signals(&set);
		die_by_signal(r->signal, &set);
	}
	return true;
}

static void ks_smp(long long loops)
{
	int n = npairs_wanted(), i;
	struct run *r = run_new("smp", n);
	const char *names[MAX_PAIRS];
	char (*buf)[32] = calloc(n, sizeof(*buf));

	if (!r || !buf)
		ksft_exit_fail_msg("out of memory\n");
	for (i = 0; i < n; i++) {
		snprintf(buf[i], sizeof(buf[i]), "latency_pair%d", i);
		names[i] = buf[i];
	}
	r->quiet = true;
	ksft_print_msg("smp: %d pair(s), one per CPU, SCHED_OTHER, interval %lld us, %lld cycles each\n",
		       n, opt.interval_us, loops);
	if (ks_run(r, loops, names, n)) {
		print_run_summary(r);
		if (opt.histogram_us > 0) {
			print_histogram(r, "# ");
			print_percentiles(r, "# ");
		}
		for (i = 0; i < n; i++)
			pair_verdict(names[i], &r->pairs[i], -1);
		json_run = r;
		/* The rt-tests part of the JSON shows this run. */
		return;
	}
	run_free(r);
}

/* One pair with -T (and -f): the cases where rt-tests' pmqtest fails. */
static void ks_timeout(const char *name, double timeout_s, double force_s,
		       long long loops, long long want_timeouts)
{
	struct options saved = opt;
	struct run *r = run_new(name, 1);
	const char *names[] = { name };

	if (!r)
		ksft_exit_fail_msg("out of memory\n");
	opt.threads = 1;
	opt.threads_set = true;
	opt.smp = false;
	opt.affinity = AFF_NONE;
	opt.timeout_s = timeout_s;
	opt.force_s = force_s;
	opt.interval_us = 1000;
	r->quiet = true;
	if (force_s > 0)
		ksft_print_msg("%s: -T %g -f %g, %lld cycles: expect %lld timeouts\n",
			       name, timeout_s, force_s, loops, want_timeouts);
	else
		ksft_print_msg("%s: -T %g, %lld cycles: expect %lld timeouts\n",
			       name, timeout_s, loops, want_timeouts);
	if (ks_run(r, loops, names, 1)) {
		print_run_summary(r);
		pair_verdict(name, &r->pairs[0], want_timeouts);
	}
	opt = saved;
	run_free(r);
}

/* Every queue name we used must be gone (unlinked right after mq_open). */
static void ks_queues_unlinked(void)
{
	const char *name = "queues_unlinked";
	int i, left = 0;
	mqd_t q;

	for (i = 0; i < nr_used_names; i++) {
		q = mq_open(used_names[i], O_RDONLY | O_CLOEXEC);
		if (q != (mqd_t)-1) {
			mq_close(q);
			mq_unlink(used_names[i]);
			left++;
		} else if (errno != ENOENT) {
			left++;
		}
	}
	kb_figure(name, "queues=%d left=%d", nr_used_names, left);
	if (left)
		failures++;
	kb_result(!left, name, left ? "a queue name is still linked" : NULL);
}

static int kselftest_main(void)
{
	long long loops = opt.full ? KS_LOOPS_FULL :
			  kb_machine_slow() ? KS_LOOPS_SLOW : KS_LOOPS;
	int err;

	opt.smp = true;
	opt.affinity = AFF_SPREAD;
	opt.distance_us = 0;
	opt.interval_us = opt.full ? KS_INTERVAL_US_FULL : KS_INTERVAL_US;

	ksft_print_header();
	err = probe_mqueue();
	if (err)
		ksft_exit_skip("%s\n", mq_error_text(err));
	ksft_set_plan(npairs_wanted() + 3);
	lock_memory();
	ksft_print_msg("clock %s, ns resolution; %s\n", KB_CLOCK_NAME, mlock_note);
	kb_param_str("mode", "kselftest");
	kb_param_num("loops", (double)loops);
	kb_param_num("interval_us", (double)opt.interval_us);

	ks_smp(loops);
	ks_timeout("timed_receive", KS_TIMED_TIMEOUT_S, 0, KS_TIMED_LOOPS, 0);
	ks_timeout("forced_timeouts", KS_FORCE_TIMEOUT_S, KS_FORCE_DELAY_S,
		   KS_FORCE_LOOPS, 2 * KS_FORCE_LOOPS);
	ks_queues_unlinked();

	write_json(json_run, failures ? 1 : 0);
	ksft_finished();
	return 0;
}

/* ---- command line ---------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s [OPTION]...\n"
"Measure the latency of POSIX message queues between pairs of threads.\n"
"Compatible with rt-tests' pmqtest(8); a kselftest when run without options.\n"
"\n"
"rt-tests options (any of them selects rt-tests mode):\n"
"  -a, --affinity[=PROC]   pin the threads: to CPU PROC, or without PROC\n"
"                          pair N on the N-th CPU counted from the current\n"
"                          one (a single pair: the current CPU)\n"
"  -b, --breaktrace=USEC   when a latency exceeds USEC: write 0 to tracefs\n"
"                          tracing_on (not restored) and stop\n"
"  -d, --distance=DIST     interval step per pair in us (default 500):\n"
"                          interval(pair N) = INTV + N * DIST\n"
"  -D, --duration=TIME     stop after TIME seconds; suffix m, h or d\n"
"  -f, --forcetimeout=TO   the sender waits TO seconds before sending, to\n"
"                          force receiver timeouts; needs -T\n"
"  -i, --interval=INTV     interval of the first pair in us (default 1000)\n"
"  -l, --loops=LOOPS       cycles per pair (default 0: endless)\n"
"  -p, --prio=PRIO         SCHED_FIFO priority (needs CAP_SYS_NICE or\n"
"                          RLIMIT_RTPRIO); one lower per pair unless -S\n"
"  -q, --quiet             print the summary only at exit\n"
"  -S, --smp               one pair per CPU, pair N on CPU N, same\n"
"                          priority: implies -a and -t\n"
"  -t, --threads[=NUM]     NUM pairs (default 1; without NUM one per CPU)\n"
"  -T, --timeout=TO        receive with mq_timedreceive(), timeout TO\n"
"                          seconds (fractions allowed); timeouts are counted\n"
"      --json=FILE         write the results as JSON: rt-tests' layout and\n"
"                          the kbench \"rows\" in one document\n"
"  -h, --help              this help\n"
"\n"
"kbench options (in both modes):\n"
"      --histogram=MAX_US  latency histogram, 1 us buckets up to MAX_US, plus\n"
"                          percentiles (p50, p99, p99.9, max) per pair\n"
"      --max-latency=US    a pair whose maximum exceeds US fails\n"
"      --ktap              rt-tests mode: print KTAP, one result per pair\n"
"      --full              kselftest mode: the longer run (-i %d, %d cycles)\n"
"\n"
"Without rt-tests options: the kselftest, one pair per CPU (-S style,\n"
"interval %d us, %d cycles, %d with KSFT_MACHINE_SLOW=yes), a -T run and\n"
"a -T/-f run that must count its timeouts; KTAP output.\n"
"Latencies are %s differences in ns, shown in us.\n"
"Exit status: 0 ok, 1 failure, 2 bad usage, 4 skipped (no mqueue support,\n"
"no privilege for -p).\n",
		kb_prog(), KS_INTERVAL_US_FULL, KS_LOOPS_FULL, KS_INTERVAL_US,
		KS_LOOPS, KS_LOOPS_SLOW, KB_CLOCK_NAME);
}

static bool all_digits(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* Seconds with fractions, for -T and -f. */
static double parse_seconds(const char *s, const char *what)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v))
		kb_usage_error("invalid value '%s' for %s: not a number of seconds",
			       s, what);
	if (v <= 0 || v > 1e6)
		kb_usage_error("invalid value '%s' for %s: must be > 0 and <= 1000000 seconds",
			       s, what);
	return v;
}

static double parse_positive(const char *s, const char *what)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v) || v <= 0)
		kb_usage_error("invalid value '%s' for %s: must be a positive number",
			       s, what);
	return v;
}

/* "-a 3" / "-t 4": the optional argument as the next word, like rt-tests. */
static const char *optional_arg(int argc, char **argv)
{
	if (optarg)
		return optarg;
	if (optind < argc && all_digits(argv[optind]))
		return argv[optind++];
	return NULL;
}

static void parse_options(int argc, char **argv)
{
	enum { OPT_JSON = 256, OPT_HIST, OPT_MAXLAT, OPT_KTAP, OPT_FULL };
	static const struct option longopts[] = {
		{ "affinity", optional_argument, NULL, 'a' },
		{ "breaktrace", required_argument, NULL, 'b' },
		{ "distance", required_argument, NULL, 'd' },
		{ "duration", required_argument, NULL, 'D' },
		{ "forcetimeout", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "interval", required_argument, NULL, 'i' },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "loops", required_argument, NULL, 'l' },
		{ "prio", required_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "smp", no_argument, NULL, 'S' },
		{ "threads", optional_argument, NULL, 't' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "histogram", required_argument, NULL, OPT_HIST },
		{ "max-latency", required_argument, NULL, OPT_MAXLAT },
		{ "ktap", no_argument, NULL, OPT_KTAP },
		{ "full", no_argument, NULL, OPT_FULL },
		{ NULL, 0, NULL, 0 },
	};
	const char *arg;
	int c;

	while ((c = getopt_long(argc, argv, "a::b:d:D:f:hi:l:p:qSt::T:",
				longopts, NULL)) != -1) {
		if (c > 0 && c < 256 && strchr("abdDfilpqStT", c))
			opt.rt_mode = true;
		switch (c) {
		case 'a':
			arg = optional_arg(argc, argv);
			if (arg) {
				opt.affinity_cpu = kb_parse_ll(arg, "--affinity", 0, MAX_CPUS - 1);
				if (kb_cpu_index(allowed_cpus, nr_allowed, opt.affinity_cpu) < 0)
					kb_usage_error("invalid value '%s' for --affinity: CPU %d is not available to this process",
						       arg, opt.affinity_cpu);
				opt.affinity = AFF_CPU;
			} else if (opt.affinity != AFF_CPU) {
				opt.affinity = AFF_SPREAD;
			}
			break;
		case 'b':
			opt.breaktrace_us = kb_parse_ll(optarg, "--breaktrace", 1, INT_MAX);
			break;
		case 'd':
			opt.distance_us = kb_parse_ll(optarg, "--distance", 0, 1000000000);
			break;
		case 'D':
			opt.duration_s = kb_parse_duration(optarg, "--duration");
			break;
		case 'f':
			opt.force_s = parse_seconds(optarg, "--forcetimeout");
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'i':
			opt.interval_us = kb_parse_ll(optarg, "--interval", 0, 1000000000);
			break;
		case 'l':
			opt.loops = kb_parse_ll(optarg, "--loops", 0, LLONG_MAX);
			break;
		case 'p':
			opt.prio = kb_parse_ll(optarg, "--prio", 0, kb_fifo_prio_max());
			break;
		case 'q':
			opt.quiet = true;
			break;
		case 'S':
			opt.smp = true;
			break;
		case 't':
			arg = optional_arg(argc, argv);
			opt.threads = arg ? kb_parse_ll(arg, "--threads", 1, MAX_PAIRS) : 0;
			opt.threads_set = true;
			break;
		case 'T':
			opt.timeout_s = parse_seconds(optarg, "--timeout");
			break;
		case OPT_JSON:
			opt.json = optarg;
			break;
		case OPT_HIST:
			opt.histogram_us = kb_parse_ll(optarg, "--histogram", 1, 1000000);
			break;
		case OPT_MAXLAT:
			opt.max_latency_us = parse_positive(optarg, "--max-latency");
			break;
		case OPT_KTAP:
			opt.ktap = true;
			break;
		case OPT_FULL:
			opt.full = true;
			break;
		default:
			kb_usage_hint();
		}
	}
	if (optind < argc)
		kb_usage_error("unexpected argument '%s'", argv[optind]);
	if (opt.force_s > 0 && opt.timeout_s <= 0)
		kb_usage_error("--forcetimeout (-f) requires --timeout (-T)");
	if (opt.smp && opt.affinity == AFF_CPU)
		kb_usage_error("-S pins pair N to CPU N: it cannot be combined with -a PROC");
	if (opt.smp && opt.affinity == AFF_NONE)
		opt.affinity = AFF_SPREAD;
	if (opt.full && opt.rt_mode)
		kb_usage_error("--full selects the longer kselftest run: use it without rt-tests options");
}

static void setup_signals(void)
{
	struct sigaction sa;

	/* No SA_RESTART: blocked mq and sleep calls must return EINTR. */
	wake_signal = SIGRTMIN;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wake_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(wake_signal, &sa, NULL);
}

int main(int argc, char **argv)
{
	int n;

	kb_init("pmqtest", argc, argv);
	saved_argc = argc;
	saved_argv = argv;
	rfc2822_now(start_time, sizeof(start_time));
	n = kb_cpus_allowed(allowed_cpus, MAX_CPUS);
	if (n < 1) {
		fprintf(stderr, "%s: sched_getaffinity: %s\n", kb_prog(), strerror(-n));
		return 1;
	}
	nr_allowed = n;
	start_cpu = sched_getcpu();
	parse_options(argc, argv);
	main_thread = pthread_self();
	setup_signals();
	figures_out = opt.rt_mode && !opt.ktap ? NULL : stdout;
	kb_figures_to(figures_out);
	if (opt.rt_mode)
		return rt_tests_main();
	return kselftest_main();
}
