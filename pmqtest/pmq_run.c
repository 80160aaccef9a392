// SPDX-License-Identifier: GPL-2.0
/*
 * pmqtest's engine: pairs of threads, their queues and the runs.
 *
 * A pair is a sender and a receiver thread and two queues. Every cycle the
 * receiver stamps the time and releases the sender with a message on the
 * sync queue; the sender stamps CLOCK_MONOTONIC and sends the stamp on the
 * test queue; the receiver takes the time as soon as mq_receive() returns:
 * the difference is one latency sample (ns). The receiver then sleeps the
 * pair's interval and starts the next cycle.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pmq.h"
#include "rtsched.h"

#define THREAD_STACK		(128 * 1024)	/* locked by mlockall */
#define REFRESH_NS		100000000ull	/* status refresh, 100 ms */
#define KICK_NS			5000000ull	/* re-wake stuck threads, 5 ms */

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
/* Threads are woken from blocking calls by this signal (EINTR). */
static int wake_signal;

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

static struct timespec ns_to_ts(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / NSEC_PER_SEC),
		.tv_nsec = (long)(ns % NSEC_PER_SEC),
	};

	return ts;
}

static void wake_handler(int sig)
{
	(void)sig;
}

static void rfc2822_now(char *buf, size_t size)
{
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(buf, size, "%a, %d %b %Y %H:%M:%S %z", &tm);
}

/* ---- the host -------------------------------------------------------- */

int pmq_host_init(struct pmq_host *h)
{
	struct sigaction sa;
	int n;

	memset(h, 0, sizeof(*h));
	h->tracing_on_fd = h->trace_marker_fd = -1;
	rfc2822_now(h->start_time, sizeof(h->start_time));
	n = kb_rtsched_cpus_allowed(h->cpus, PMQ_MAX_CPUS);
	if (n < 1)
		return n;
	h->ncpus = n;
	h->start_cpu = sched_getcpu();
	/* No SA_RESTART: blocked mq and sleep calls must return EINTR. */
	wake_signal = SIGRTMIN;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wake_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(wake_signal, &sa, NULL);
	return 0;
}

void pmq_host_free(struct pmq_host *h)
{
	free(h->names);
	h->names = NULL;
	h->nnames = 0;
}

void pmq_lock_memory(struct pmq_host *h)
{
	h->mlocked = !kb_rtsched_mlockall(h->mlock_note, sizeof(h->mlock_note));
	if (h->mlocked)
		snprintf(h->mlock_note, sizeof(h->mlock_note),
			 "memory locked (mlockall)");
}

void pmq_open_tracer(struct pmq_host *h)
{
	static const char *const dirs[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	char path[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		snprintf(path, sizeof(path), "%s/tracing_on", dirs[i]);
		h->tracing_on_fd = open(path, O_WRONLY | O_CLOEXEC);
		if (h->tracing_on_fd >= 0 || errno == EACCES || errno == EPERM) {
			h->tracefs_dir = dirs[i];
			break;
		}
	}
	if (h->tracing_on_fd < 0) {
		fprintf(stderr, "%s: -b: %s; the run stops at the threshold but no tracer is stopped\n",
			kb_cli_prog(), h->tracefs_dir ?
			"cannot open tracefs tracing_on (not permitted)" :
			"tracefs not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
		return;
	}
	snprintf(path, sizeof(path), "%s/trace_marker", h->tracefs_dir);
	h->trace_marker_fd = open(path, O_WRONLY | O_CLOEXEC);
}

/* ---- stopping -------------------------------------------------------- */

static void notify_main(struct pmq_run *r)
{
	pthread_kill(r->main_thread, wake_signal);
}

static bool stopping(const struct pmq_run *r)
{
	return load_int(&r->stop) != PMQ_STOP_NONE;
}

/* The first reason wins; a thread wakes the main thread to see it. */
static void request_stop(struct pmq_run *r, enum pmq_stop why)
{
	int none = PMQ_STOP_NONE;

	if (__atomic_compare_exchange_n(&r->stop, &none, why, false,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) &&
	    !pthread_equal(pthread_self(), r->main_thread))
		notify_main(r);
}

static void pair_error(struct pmq_pair *p, const char *what, int err)
{
	if (!p->err) {
		p->err = err;
		p->err_what = what;
	}
	request_stop(p->run, PMQ_STOP_ERROR);
}

/* Called once, from the receiver that saw the latency. */
static void break_trace(struct pmq_pair *p, uint64_t lat_ns)
{
	struct pmq_host *h = p->run->host;
	char msg[128];
	int len;

	if (h->trace_marker_fd >= 0) {
		len = snprintf(msg, sizeof(msg),
			       "pmqtest: pair %d latency %llu ns > breaktrace %llu us\n",
			       p->index, (unsigned long long)lat_ns,
			       (unsigned long long)p->run->cfg.breaktrace_us);
		if (write(h->trace_marker_fd, msg, len) < 0)
			(void)0;
	}
	/* Stopping the tracer is the point: it is not restored. */
	if (h->tracing_on_fd >= 0 && write(h->tracing_on_fd, "0", 1) < 0)
		(void)0;
	p->run->break_pair = p->index;
	p->run->break_lat_ns = lat_ns;
	request_stop(p->run, PMQ_STOP_BREAK);
}

/* ---- the pair threads ------------------------------------------------ */

static int wait_gate(struct pmq_run *r)
{
	int go;

	pthread_mutex_lock(&r->gate_lock);
	while (!r->go)
		pthread_cond_wait(&r->gate, &r->gate_lock);
	go = r->go;
	pthread_mutex_unlock(&r->gate_lock);
	return go;
}

static void open_gate(struct pmq_run *r, int go)
{
	pthread_mutex_lock(&r->gate_lock);
	r->go = go;
	pthread_cond_broadcast(&r->gate);
	pthread_mutex_unlock(&r->gate_lock);
}

/* mq_send() that survives EINTR unless the run stops. 0, 1 (stop), -1. */
static int send_msg(struct pmq_pair *p, mqd_t q, const struct pmq_msg *m,
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

static int recv_msg(struct pmq_pair *p, mqd_t q, struct pmq_msg *m,
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

static struct timespec realtime_after(uint64_t ns)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return ns_to_ts((uint64_t)now.tv_sec * NSEC_PER_SEC + now.tv_nsec + ns);
}

/*
 * -T: each wait lasts the timeout (CLOCK_REALTIME deadline, what
 * mq_timedreceive takes); an expiry is counted and the wait re-armed.
 */
static int timed_recv_msg(struct pmq_pair *p, struct pmq_msg *m)
{
	uint64_t timeout = p->run->timeout_ns;
	struct timespec deadline = realtime_after(timeout);
	ssize_t n;

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
			deadline = realtime_after(timeout);
		} else if (errno != EINTR) {
			pair_error(p, "mq_timedreceive(test)", errno);
			return -1;
		}
		if (stopping(p->run))
			return 1;
	}
}

/* clock_nanosleep() until @abs_ns; 1 when the run stops meanwhile. */
static int sleep_until(struct pmq_run *r, uint64_t abs_ns)
{
	struct timespec ts = ns_to_ts(abs_ns);

	while (clock_nanosleep(KB_CLOCK, TIMER_ABSTIME, &ts, NULL) == EINTR)
		if (stopping(r))
			return 1;
	return stopping(r);
}

static void thread_identity(int pin, int *tid, int *cpu)
{
	sigset_t wake;

	sigemptyset(&wake);
	sigaddset(&wake, wake_signal);
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
	store_int(tid, gettid());
	store_int(cpu, pin >= 0 ? pin : sched_getcpu());
}

static void record_latency(struct pmq_pair *p, uint64_t lat)
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

/* One cycle of the receiver: 0 with the latency in @lat, 1 stop, -1. */
static int receive_cycle(struct pmq_pair *p, uint64_t c, uint64_t *lat)
{
	struct pmq_run *r = p->run;
	struct pmq_msg m = { .cycle = c, .t_ns = kb_clock_ns() };
	uint64_t t_recv;
	int ret;

	ret = send_msg(p, p->syncq, &m, "mq_send(sync)");
	if (ret)
		return ret;
	ret = r->timeout_ns ? timed_recv_msg(p, &m) :
			      recv_msg(p, p->testq, &m, "mq_receive(test)");
	t_recv = kb_clock_ns();
	if (ret)
		return ret;
	if (m.cycle != c || t_recv < m.t_ns) {
		pair_error(p, m.cycle != c ? "message out of sequence" :
			   "receive stamp before send stamp", EPROTO);
		return -1;
	}
	*lat = t_recv - m.t_ns;
	return 0;
}

static void *receiver_main(void *arg)
{
	struct pmq_pair *p = arg;
	struct pmq_run *r = p->run;
	uint64_t warmup = (uint64_t)r->cfg.warmup, c, lat;
	int cpu;

	thread_identity(p->cpu, &p->receiver_tid, &p->receiver_cpu);
	if (wait_gate(r) < 0)
		goto out;
	for (c = 0; !p->loops || c < p->loops + warmup; c++) {
		if (c && sleep_until(r, kb_clock_ns() + p->interval_ns))
			break;
		if (receive_cycle(p, c, &lat))
			break;
		if (c < warmup)
			continue;
		record_latency(p, lat);
		if (r->break_ns && lat > r->break_ns && !stopping(r)) {
			break_trace(p, lat);
			break;
		}
		cpu = p->cpu < 0 ? sched_getcpu() : p->cpu;
		if (cpu != load_int(&p->sender_cpu))
			store64(&p->cross_cpu, p->cross_cpu + 1);
		if (p->cpu < 0)
			store_int(&p->receiver_cpu, cpu);
	}
	/* rt-tests stops every pair when the first one has its loops. */
	if (r->cfg.stop_at_first && p->loops && p->received == p->loops)
		request_stop(r, PMQ_STOP_DONE);
out:
	store_int(&p->receiver_done, 1);
	notify_main(r);
	return NULL;
}

/*
 * -f: the sender sends TO seconds after the receiver started waiting, so
 * the receiver's waits of -T seconds expire ceil(TO / T) - 1 times per
 * cycle. A guard of 1 % of TO (at most 10 ms) keeps an exact multiple
 * (-T 1 -f 2) from racing the receiver's last deadline.
 */
static uint64_t force_send_delay(const struct pmq_run *r)
{
	uint64_t guard = r->force_ns / 100;

	if (guard > 10000000ull)
		guard = 10000000ull;
	return r->force_ns - guard;
}

static void *sender_main(void *arg)
{
	struct pmq_pair *p = arg;
	struct pmq_run *r = p->run;
	uint64_t warmup = (uint64_t)r->cfg.warmup, c;
	struct pmq_msg m;

	thread_identity(p->sender_pin, &p->sender_tid, &p->sender_cpu);
	if (wait_gate(r) < 0)
		goto out;
	for (c = 0; !p->loops || c < p->loops + warmup; c++) {
		if (recv_msg(p, p->syncq, &m, "mq_receive(sync)"))
			break;
		if (r->force_ns && sleep_until(r, m.t_ns + force_send_delay(r)))
			break;
		m.cycle = c;
		m.t_ns = kb_clock_ns();
		if (send_msg(p, p->testq, &m, "mq_send(test)"))
			break;
		if (c >= warmup)
			store64(&p->samples, p->samples + 1);
		if (p->sender_pin < 0)
			store_int(&p->sender_cpu, sched_getcpu());
	}
out:
	store_int(&p->sender_done, 1);
	notify_main(r);
	return NULL;
}

/* ---- queues ---------------------------------------------------------- */

static void remember_name(struct pmq_host *h, const char *name)
{
	char (*names)[PMQ_NAME_LEN] = realloc(h->names,
					      sizeof(*names) * (h->nnames + 1));

	if (!names)
		return;
	h->names = names;
	snprintf(h->names[h->nnames++], PMQ_NAME_LEN, "%s", name);
}

/*
 * Create a private queue: the name (with our pid, so parallel runs never
 * meet) is unlinked as soon as the queue is open, with the cleanup
 * signals blocked in between, so no queue outlives the process however it
 * ends. 0 or -errno.
 */
static int create_queue(struct pmq_host *h, mqd_t *q, char *name,
			const char *role, int index)
{
	struct mq_attr attr = {
		.mq_maxmsg = 1, .mq_msgsize = sizeof(struct pmq_msg),
	};
	int tries, err = 0;

	for (tries = 0; tries < 100; tries++) {
		snprintf(name, PMQ_NAME_LEN, "/kbench-pmqtest-%d-%d-%s%d",
			 getpid(), h->queue_serial++, role, index);
		kb_cleanup_block_signals();
		*q = mq_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600,
			     &attr);
		err = *q == (mqd_t)-1 ? -errno : 0;
		if (!err)
			mq_unlink(name);
		kb_cleanup_unblock_signals();
		if (err != -EEXIST)
			break;
	}
	if (!err)
		remember_name(h, name);
	return err;
}

int pmq_probe(struct pmq_host *h)
{
	char name[PMQ_NAME_LEN];
	mqd_t q;
	int err = create_queue(h, &q, name, "probe", 0);

	if (!err)
		mq_close(q);
	return err;
}

int pmq_linked_names(struct pmq_host *h)
{
	int i, left = 0;
	mqd_t q;

	for (i = 0; i < h->nnames; i++) {
		q = mq_open(h->names[i], O_RDONLY | O_CLOEXEC);
		if (q != (mqd_t)-1) {
			mq_close(q);
			mq_unlink(h->names[i]);
			left++;
		} else if (errno != ENOENT) {
			left++;
		}
	}
	return left;
}

bool pmq_setup_skips(const struct pmq_run *r, int err)
{
	/* A refused SCHED_FIFO thread lacks CAP_SYS_NICE; nothing else does. */
	int cap = r && r->go && r->cfg.prio > 0 ? CAP_SYS_NICE : KB_ENV_NO_CAP;

	return kb_errno_is_environment(err, cap);
}

const char *pmq_setup_error_text(const struct pmq_run *r, int err,
				 char *buf, size_t len)
{
	/* r->go is set (to -1) once a thread could not be started. */
	bool threads = r && r->go;

	if (threads && err == -EPERM)
		snprintf(buf, len, "cannot start SCHED_FIFO threads at priority %d: %s (RT throttling or a cgroup without RT runtime?)",
			 r->cfg.prio, strerror(-err));
	else if (threads)
		snprintf(buf, len, "cannot start threads: %s", strerror(-err));
	else if (err == -ENOSYS)
		snprintf(buf, len, "POSIX message queues not supported by this kernel (CONFIG_POSIX_MQUEUE=n)");
	else if (err == -ENOSPC)
		snprintf(buf, len, "mq_open: ENOSPC: too many queues (fs.mqueue.queues_max)");
	else if (err == -EMFILE)
		snprintf(buf, len, "mq_open: EMFILE: RLIMIT_MSGQUEUE or the open file limit reached");
	else if (err == -ENOMEM)
		snprintf(buf, len, "out of memory");
	else
		snprintf(buf, len, "mq_open: %s", strerror(-err));
	return buf;
}

/* ---- running pairs --------------------------------------------------- */

static int cpu_from(const struct pmq_run *r, int offset)
{
	const struct pmq_host *h = r->host;

	return h->cpus[(r->cfg.first_cpu + offset) % h->ncpus];
}

static void place_pair(const struct pmq_run *r, struct pmq_pair *p, int i)
{
	switch (r->cfg.placement) {
	case PMQ_PLACE_CPU:
		p->cpu = p->sender_pin = r->cfg.cpu;
		break;
	case PMQ_PLACE_SPREAD:
		p->cpu = p->sender_pin = cpu_from(r, i);
		break;
	case PMQ_PLACE_SPLIT:
		p->cpu = cpu_from(r, i);
		p->sender_pin = cpu_from(r, i + 1);
		break;
	default:
		p->cpu = p->sender_pin = -1;
	}
}

static int pair_prio(const struct pmq_config *cfg, int i)
{
	int prio = cfg->prio;

	if (prio > 0 && !cfg->same_prio)
		prio = prio - i > 1 ? prio - i : 1;
	return prio;
}

struct pmq_run *pmq_run_new(struct pmq_host *h, const char *label,
			    const struct pmq_config *cfg)
{
	struct pmq_run *r = calloc(1, sizeof(*r));
	size_t size = sizeof(struct pmq_pair) * cfg->npairs;

	if (!r)
		return NULL;
	r->label = label;
	r->cfg = *cfg;
	r->host = h;
	r->npairs = cfg->npairs;
	r->break_pair = -1;
	r->main_thread = pthread_self();
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

static int init_pair(struct pmq_run *r, struct pmq_pair *p, int i)
{
	const struct pmq_config *cfg = &r->cfg;
	int err;

	p->index = i;
	p->run = r;
	p->testq = p->syncq = (mqd_t)-1;
	place_pair(r, p, i);
	p->prio = pair_prio(cfg, i);
	p->loops = (uint64_t)cfg->loops;
	p->interval_ns = (uint64_t)(cfg->interval_us + i * cfg->distance_us) *
			 NSEC_PER_USEC;
	p->receiver_cpu = p->cpu;
	p->sender_cpu = p->sender_pin;
	kb_hist_init(&p->hist);
	if (cfg->histogram_us > 0 &&
	    kb_hist_linear_init(&p->lhist, cfg->histogram_us, NSEC_PER_USEC))
		return -ENOMEM;
	err = create_queue(r->host, &p->testq, p->testname, "test", i);
	if (!err)
		err = create_queue(r->host, &p->syncq, p->syncname, "sync", i);
	return err;
}

int pmq_run_setup(struct pmq_run *r)
{
	const struct pmq_config *cfg = &r->cfg;
	int i, err;

	r->timeout_ns = (uint64_t)llround(cfg->timeout_s * NSEC_PER_SEC);
	r->force_ns = (uint64_t)llround(cfg->force_s * NSEC_PER_SEC);
	r->duration_ns = cfg->duration_s * NSEC_PER_SEC;
	r->break_ns = (uint64_t)cfg->breaktrace_us * NSEC_PER_USEC;
	for (i = 0; i < r->npairs; i++) {
		err = init_pair(r, &r->pairs[i], i);
		if (err)
			return err;
	}
	return 0;
}

void pmq_run_free(struct pmq_run *r)
{
	int i;

	if (!r)
		return;
	for (i = 0; i < r->npairs; i++) {
		struct pmq_pair *p = &r->pairs[i];

		if (p->testq != (mqd_t)-1)
			mq_close(p->testq);
		if (p->syncq != (mqd_t)-1)
			mq_close(p->syncq);
		kb_hist_linear_free(&p->lhist);
	}
	pthread_mutex_destroy(&r->gate_lock);
	pthread_cond_destroy(&r->gate);
	free(r->pairs);
	free(r);
}

static int start_thread(struct pmq_pair *p, pthread_t *t, int pin,
			void *(*fn)(void *))
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
	if (pin >= 0) {
		CPU_ZERO(&set);
		CPU_SET(pin, &set);
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

static bool all_done(struct pmq_run *r)
{
	int i;

	for (i = 0; i < r->npairs; i++)
		if (!load_int(&r->pairs[i].sender_done) ||
		    !load_int(&r->pairs[i].receiver_done))
			return false;
	return true;
}

/* A second stop signal while the threads wind down: leave at once. */
static _Noreturn void die_by_signal(int sig, const sigset_t *set)
{
	kb_cleanup_run_all();
	signal(sig, SIG_DFL);
	pthread_sigmask(SIG_UNBLOCK, set, NULL);
	raise(sig);
	_exit(128 + sig);
}

void pmq_die_if_signalled(struct pmq_run *r)
{
	sigset_t set;

	if (r->stop != PMQ_STOP_SIGNAL)
		return;
	block_stop_signals(&set);
	die_by_signal(r->signal, &set);
}

static int wait_signal(const sigset_t *set, uint64_t ns)
{
	struct timespec ts = ns_to_ts(ns);

	return sigtimedwait(set, NULL, &ts);
}

static void stop_and_join(struct pmq_run *r, const sigset_t *set)
{
	int i, sig;

	while (!all_done(r)) {
		for (i = 0; i < r->npairs; i++) {
			struct pmq_pair *p = &r->pairs[i];

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

static int start_pairs(struct pmq_run *r)
{
	int i, err = 0;

	for (i = 0; i < r->npairs; i++)
		r->pairs[i].receiver_done = r->pairs[i].sender_done = 1;
	for (i = 0; i < r->npairs; i++) {
		struct pmq_pair *p = &r->pairs[i];

		err = start_thread(p, &p->receiver, p->cpu, receiver_main);
		if (err)
			break;
		p->receiver_started = true;
		p->receiver_done = 0;
		err = start_thread(p, &p->sender, p->sender_pin, sender_main);
		if (err)
			break;
		p->sender_started = true;
		p->sender_done = 0;
	}
	return err;
}

int pmq_run_pairs(struct pmq_run *r)
{
	uint64_t now, deadline, wait;
	sigset_t set;
	int sig, err;

	block_stop_signals(&set);
	err = start_pairs(r);
	if (err) {
		request_stop(r, PMQ_STOP_ERROR);
		open_gate(r, -1);
		stop_and_join(r, &set);
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
		return err;
	}
	r->start_ns = kb_clock_ns();
	deadline = r->duration_ns ? r->start_ns + r->duration_ns : 0;
	open_gate(r, 1);
	while (!stopping(r) && !all_done(r)) {
		now = kb_clock_ns();
		if (deadline && now >= deadline) {
			request_stop(r, PMQ_STOP_DURATION);
			break;
		}
		wait = REFRESH_NS;
		if (deadline && deadline - now < wait)
			wait = deadline - now;
		sig = wait_signal(&set, wait);
		if (sig > 0 && sig != wake_signal) {
			r->signal = sig;
			request_stop(r, PMQ_STOP_SIGNAL);
		}
		if (!r->cfg.quiet)
			pmq_print_status(r, true);
	}
	request_stop(r, PMQ_STOP_DONE);
	stop_and_join(r, &set);
	r->end_ns = kb_clock_ns();
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	return 0;
}

/* ---- rt-tests display ------------------------------------------------ */

void pmq_print_status(struct pmq_run *r, bool refresh)
{
	const char *pre = r->cfg.prefix ? "# " : "";
	int i;

	for (i = 0; i < r->npairs; i++) {
		struct pmq_pair *p = &r->pairs[i];

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
		struct pmq_pair *p = &r->pairs[i];
		uint64_t n = load64(&p->received);
		double avg = n ? (double)load64(&p->sum_ns) / n / NSEC_PER_USEC : 0;

		printf("%s#%d -> #%d, Min %4llu, Cur %4llu, Avg %4.0f, Max %4llu\n",
		       pre, 2 * i + 1, 2 * i,
		       (unsigned long long)pmq_us_round(load64(&p->min_ns)),
		       (unsigned long long)pmq_us_round(load64(&p->cur_ns)),
		       avg,
		       (unsigned long long)pmq_us_round(load64(&p->max_ns)));
	}
	if (refresh)
		printf("\033[%dA", 2 * r->npairs);
	fflush(stdout);
}

void pmq_print_histogram(const struct pmq_run *r, const char *pre)
{
	size_t b;
	int i;

	printf("%s# Histogram (bucket %llu us, one column per pair)\n", pre,
	       1ull);
	for (b = 0; b < (size_t)r->cfg.histogram_us; b++) {
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

void pmq_print_percentiles(const struct pmq_run *r, const char *pre)
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
