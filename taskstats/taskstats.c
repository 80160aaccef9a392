// SPDX-License-Identifier: GPL-2.0
/*
 * taskstats: what fetching per-task statistics for N processes costs by
 * each method (per-pid netlink, batched netlink, procfs, procfs with
 * pread, the RFC /proc/taskstats ioctl), and whether the taskstats
 * interface answers correctly (family, own pid, TGID aggregation, delay
 * accounting, exit notifications, cgroupstats, errors), checked against
 * /proc where it can be.
 *
 * The checks and the method rows are one table (test_memcontrol.c's
 * shape): each test returns a KSFT_* code with its reason, reads what
 * main probed once from the context, and depends on no other test.
 *
 * The program spawns its own N sleeping children; every one is killed and
 * reaped at the end, on SIGINT/SIGTERM, and dies with us on SIGKILL.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/taskstats.h>

#include "ktap.h"
#include "cgroup.h"
#include "children.h"
#include "netlink.h"
#include "taskstats.h"
#include "taskstats_bpf.h"
#include "taskstats_judge.h"
#include "taskstats_method.h"

#define DEFAULT_PROCS		1000
#define FULL_PROCS		10000
#define SLOW_PROCS		200
#define DEFAULT_PASSES		20
#define SLOW_PASSES		10
#define DEFAULT_WARMUP		2
#define SLEEPER_COMM		"kb_sleeper"
#define NL_TIMEOUT_MS		5000
#define DELAYACCT_KNOB		"/proc/sys/kernel/task_delayacct"

enum run_state { RUN_UNSELECTED, RUN_ACTIVE, RUN_SKIP, RUN_FAIL };

/* One method's context, samples and verdict during the interleaved run. */
struct method_run {
	bool selected;
	enum run_state state;
	struct kb_ts_method_ctx *ts;
	double *samples;	/* us per process, one per timed pass */
	struct kb_stats st;
	long rcvbuf;		/* netlink: the receive buffer granted */
	size_t chunks;		/* procfs_pread: chunks of open fds */
	double load_ms;		/* bpf_iter: the program's load, once */
	bool done;		/* st and the row are filled */
	char why[200];
};

/* Everything the tests share: options, what main probed, children. */
struct ctx {
	struct kb_cli_common common;
	long procs;		/* -1: the default for the run size */
	long passes;
	long warmup;
	unsigned int batch;
	double burn_scale;	/* shorter CPU burns on slow machines */
	long ticks_per_s;	/* /proc/PID/stat's clock ticks */
	/* Probed once in main. */
	bool have_admin;	/* CAP_NET_ADMIN: TASKSTATS_CMD_GET */
	int family_err;		/* 0, or -errno of the family lookup */
	int family_id;
	bool sleepers_spawned;
	size_t nr_process;	/* sleepers spawned, for the table */
	struct kb_children sleepers, helpers;
	bool bench_done;
	struct method_run runs[KB_TS_METHOD_NR];
};

/* ---- small helpers --------------------------------------------------- */

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void burn_cpu_ms(long ms)
{
	uint64_t end = thread_cpu_ns() + (uint64_t)ms * 1000000ull;

	while (thread_cpu_ns() < end)
		;
}

/* Kill and reap one helper child. */
static void end_helper(struct ctx *c, pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	kb_children_forget(&c->helpers, pid);
}

/* Read one byte a child sends when it is ready, within 30 s. 0 or -errno. */
static int wait_ready(int fd, void *buf, size_t size)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	if (poll(&pfd, 1, 30000) <= 0)
		return -ETIMEDOUT;
	return read(fd, buf, size) == (ssize_t)size ? 0 : -EIO;
}

/*
 * Wait until task @tid sleeps ('S' in /proc/TID/stat), so that its
 * counters hold still while two sources read them. 0 or -errno.
 */
static int wait_at_rest(pid_t tid, struct kb_proc_task *p)
{
	int tries, err = 0;

	for (tries = 0; tries < 200; tries++) {
		err = kb_proc_task_read(tid, p);
		if (err || p->stat.state == 'S')
			return err;
		sleep_ms(10);
	}
	return -ETIMEDOUT;
}

/* The sleepers, spawned by the first test that needs them. */
static struct kb_children *get_sleepers(struct ctx *c)
{
	struct kb_proc_limits lim;
	long want = c->procs;
	int err;

	if (c->sleepers_spawned)
		return &c->sleepers;
	c->sleepers_spawned = true;
	err = kb_proc_limits(&lim);
	if (err)
		ksft_exit_fail_msg("cannot read process limits: %s\n", strerror(-err));
	kb_results_figure("limits", "pid_max=%ld threads_max=%ld threads_now=%ld rlimit_nproc=%ld nproc_exempt=%d available=%ld bound=%s",
			  lim.pid_max, lim.threads_max, lim.nr_threads, lim.nproc_soft,
			  lim.nproc_exempt, lim.available, lim.bound);
	if (want > lim.available) {
		ksft_print_msg("asked for %ld processes, %s leaves room for %ld: using %ld\n",
			       want, lim.bound, lim.available, lim.available);
		want = lim.available;
	}
	err = kb_children_spawn(&c->sleepers, want, SLEEPER_COMM);
	if (err)
		ksft_print_msg("fork failed after %zu sleepers: %s\n",
			       c->sleepers.n, strerror(-err));
	c->nr_process = c->sleepers.n;
	kb_results_param_num("nr_process", c->sleepers.n);
	kb_results_param_num("nr_process_requested", c->procs);
	kb_results_param_str("process_limit", lim.bound);
	ksft_print_msg("%zu sleeping children (comm '%s')\n", c->sleepers.n,
		       SLEEPER_COMM);
	return &c->sleepers;
}

/* ---- what every netlink test needs ----------------------------------- */

/* Resolve the TASKSTATS family once, for every test to read. */
static void probe_family(struct ctx *c)
{
	struct kb_nl nl;
	int id;

	c->family_err = kb_nl_open(&nl, 0, NL_TIMEOUT_MS);
	if (c->family_err)
		return;
	id = kb_nl_genl_family_id(&nl, TASKSTATS_GENL_NAME);
	kb_nl_close(&nl);
	c->family_err = id < 0 ? id : 0;
	c->family_id = id > 0 ? id : 0;
}

/*
 * KSFT_PASS when the netlink tests can run, else KSFT_SKIP (no TASKSTATS
 * family: CONFIG_TASKSTATS off; no CAP_NET_ADMIN for @needs_admin) or
 * KSFT_FAIL (the lookup broke) with the reason in @why.
 */
static int netlink_ready(const struct ctx *c, bool needs_admin, char *why,
			 size_t len)
{
	if (c->family_err == -ENOENT) {
		snprintf(why, len, "kernel has no TASKSTATS genetlink family (CONFIG_TASKSTATS off)");
		return KSFT_SKIP;
	}
	if (c->family_err)
		return kb_errno_result(c->family_err, KB_ENV_NO_CAP,
				       "resolving the TASKSTATS family", why,
				       len);
	if (needs_admin && !c->have_admin) {
		snprintf(why, len, "needs CAP_NET_ADMIN (TASKSTATS_CMD_GET is admin-only)");
		return KSFT_SKIP;
	}
	return KSFT_PASS;
}

/* A socket on the TASKSTATS family. KSFT_PASS, or the verdict on error. */
static int open_ts(struct kb_nl *nl, size_t rcvbuf, unsigned int timeout_ms,
		   char *why, size_t len)
{
	int err = kb_ts_open(nl, rcvbuf, timeout_ms);

	if (!err)
		return KSFT_PASS;
	return kb_errno_result(err, KB_ENV_NO_CAP, "opening a TASKSTATS socket",
			       why, len);
}

/* A failed TASKSTATS_CMD_GET: the verdict, "WHAT: error" in @why. */
static int get_failed(int err, const char *what, char *why, size_t len)
{
	return kb_errno_result(err, CAP_NET_ADMIN, what, why, len);
}

/* KSFT_PASS when taskstats' @ts agrees with /proc's @p on @what. */
static int against_proc(const struct ctx *c, const struct kb_ts_stats *ts,
			const struct kb_proc_task *p, unsigned int what,
			const char *label, char *why, size_t len)
{
	char diff[200];

	if (kb_ts_judge_proc(ts, p, what, c->ticks_per_s, diff,
			     sizeof(diff)))
		return KSFT_PASS;
	snprintf(why, len, "%s: %s", label, diff);
	return KSFT_FAIL;
}

/* ---- family and own pid ---------------------------------------------- */

static int test_family_resolves(void *arg, char *why, size_t len)
{
	struct ctx *c = arg;
	int rc = netlink_ready(c, false, why, len);

	if (rc != KSFT_PASS)
		return rc;
	kb_results_figure("family_resolves", "family_id=%d", c->family_id);
	return KSFT_PASS;
}

static int check_self_reply(const struct kb_ts_reply *r, char *why,
			    size_t len)
{
	const struct kb_ts_stats *ts = &r->pid.stats;
	uint32_t me = getpid();

	if (!r->pid.present || !r->pid.has_stats)
		snprintf(why, len, "reply has no TASKSTATS_TYPE_AGGR_PID with stats");
	else if (r->pid.id != me || ts->pid != me)
		snprintf(why, len, "asked for pid %u, reply says pid %u, ac_pid %u",
			 me, r->pid.id, ts->pid);
	else if (ts->version == 0)
		snprintf(why, len, "version is 0");
	else if (ts->len < KB_TS_AC_PID_OFFSET + sizeof(uint32_t))
		snprintf(why, len, "payload of %zu bytes is too short for ac_pid",
			 ts->len);
	else
		return KSFT_PASS;
	return KSFT_FAIL;
}

static int rest_child(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

/*
 * A child at rest, queried by netlink, against /proc/PID/stat and status:
 * pid, ppid, comm, context switches exact, CPU time within bounds.
 */
static int check_rest_child(struct ctx *c, struct kb_nl *nl, char *why,
			    size_t len)
{
	pid_t child = kb_children_fork(&c->helpers, rest_child, NULL);
	struct kb_proc_task before, after;
	struct kb_ts_reply r;
	int err;

	if (child < 0)
		return kb_errno_result(child, KB_ENV_NO_CAP, "fork", why, len);
	err = wait_at_rest(child, &before);
	if (!err)
		err = kb_ts_get(nl, TASKSTATS_CMD_ATTR_PID, child, &r);
	if (!err)
		err = kb_proc_task_read(child, &after);
	end_helper(c, child);
	if (err)
		return get_failed(err, "GET of a child at rest", why, len);
	kb_results_figure("get_self", "rest_child=%d ppid=%u comm=%s nvcsw=%llu nivcsw=%llu cpu_us=%llu proc_cpu_ticks=%llu",
			  child, r.pid.stats.ppid, r.pid.stats.comm,
			  (unsigned long long)r.pid.stats.nvcsw,
			  (unsigned long long)r.pid.stats.nivcsw,
			  (unsigned long long)(r.pid.stats.utime + r.pid.stats.stime),
			  (unsigned long long)(after.stat.utime + after.stat.stime));
	if (before.nvcsw != after.nvcsw || before.nivcsw != after.nivcsw) {
		snprintf(why, len, "the child at rest switched context during the query");
		return KSFT_FAIL;
	}
	return against_proc(c, &r.pid.stats, &after,
			    KB_TS_JUDGE_IDS | KB_TS_JUDGE_CTXT | KB_TS_JUDGE_CPU,
			    "a child at rest against /proc", why, len);
}

static int test_get_self(void *arg, char *why, size_t len)
{
	struct ctx *c = arg;
	struct kb_ts_reply r, rt;
	struct kb_proc_task self;
	struct kb_nl nl;
	int err, rc;

	rc = netlink_ready(c, true, why, len);
	if (rc == KSFT_PASS)
		rc = open_ts(&nl, 0, NL_TIMEOUT_MS, why, len);
	if (rc != KSFT_PASS)
		return rc;
	err = kb_ts_get(&nl, TASKSTATS_CMD_ATTR_PID, getpid(), &r);
	if (!err)
		err = kb_ts_get(&nl, TASKSTATS_CMD_ATTR_TGID, getpid(), &rt);
	if (!err)
		err = kb_proc_task_read(getpid(), &self);
	if (err) {
		kb_nl_close(&nl);
		return get_failed(err, "TASKSTATS_CMD_GET of our own pid/tgid",
				  why, len);
	}
	kb_results_figure("get_self", "version=%u payload_bytes=%zu header_version=%d header_bytes=%zu",
			  r.pid.stats.version, r.pid.stats.len, TASKSTATS_VERSION,
			  sizeof(struct taskstats));
	kb_results_param_num("taskstats_version", r.pid.stats.version);
	kb_results_param_num("taskstats_bytes", r.pid.stats.len);
	rc = check_self_reply(&r, why, len);
	if (rc == KSFT_PASS)
		rc = against_proc(c, &r.pid.stats, &self, KB_TS_JUDGE_IDS,
				  "our own pid against /proc", why, len);
	if (rc == KSFT_PASS &&
	    (!rt.tgid.present || rt.tgid.id != (uint32_t)getpid())) {
		snprintf(why, len, "TGID query of our own tgid has no matching TASKSTATS_TYPE_AGGR_TGID");
		rc = KSFT_FAIL;
	}
	if (rc == KSFT_PASS)
		rc = check_rest_child(c, &nl, why, len);
	kb_nl_close(&nl);
	return rc;
}

/* ---- TGID aggregation ------------------------------------------------ */

#define TGID_THREADS	3	/* the main thread and two more */

struct burner {
	int fd;			/* pipe: each thread reports its tid */
	long burn_ms;
};

static void *burn_thread(void *arg)
{
	struct burner *b = arg;
	pid_t tid = syscall(SYS_gettid);

	burn_cpu_ms(b->burn_ms);
	if (write(b->fd, &tid, sizeof(tid)) != sizeof(tid))
		_exit(1);
	for (;;)
		pause();
	return NULL;
}

static int tgid_child(void *arg)
{
	pthread_t th[TGID_THREADS - 1];
	int i;

	for (i = 0; i < TGID_THREADS - 1; i++)
		if (pthread_create(&th[i], NULL, burn_thread, arg))
			return 1;
	burn_thread(arg);
	return 0;
}

/* Read the @n tids of the burners once each has burnt. 0 or -errno. */
static int read_tids(int fd, pid_t *tids, int n)
{
	int i, err = 0;

	for (i = 0; i < n && !err; i++)
		err = wait_ready(fd, &tids[i], sizeof(tids[i]));
	return err;
}

/* Compare the TGID aggregate with its threads and with /proc. */
static int judge_tgid(struct ctx *c, struct kb_nl *nl, pid_t child,
		      const pid_t *tids, long burn_ms, char *why, size_t len)
{
	struct kb_ts_stats threads[TGID_THREADS];
	struct kb_ts_reply r;
	struct kb_proc_task p;
	int i, err;

	for (i = 0, err = 0; i < TGID_THREADS && !err; i++)
		err = wait_at_rest(tids[i], &p);
	for (i = 0; i < TGID_THREADS && !err; i++) {
		err = kb_ts_get(nl, TASKSTATS_CMD_ATTR_PID, tids[i], &r);
		threads[i] = r.pid.stats;
	}
	if (!err)
		err = kb_ts_get(nl, TASKSTATS_CMD_ATTR_TGID, child, &r);
	if (!err)
		err = kb_proc_task_read(child, &p);
	if (err)
		return get_failed(err, "GET of the threads and their group",
				  why, len);
	if (!r.tgid.present || !r.tgid.has_stats ||
	    r.tgid.id != (uint32_t)child) {
		snprintf(why, len, "TGID query: no matching AGGR_TGID");
		return KSFT_FAIL;
	}
	kb_results_figure("tgid_aggregate", "threads=%d burn_ms_each=%ld source=%s tgid_cpu_us=%llu tgid_utime_stime_us=%llu proc_cpu_ticks=%llu tgid_nvcsw=%llu",
			  TGID_THREADS, burn_ms,
			  r.tgid.stats.cpu_run_virtual_total ? "cpu_run_virtual_total" :
			  "utime+stime",
			  (unsigned long long)r.tgid.stats.cpu_run_virtual_total / 1000,
			  (unsigned long long)(r.tgid.stats.utime + r.tgid.stats.stime),
			  (unsigned long long)(p.stat.utime + p.stat.stime),
			  (unsigned long long)r.tgid.stats.nvcsw);
	if (!kb_ts_judge_tgid(&r.tgid.stats, threads, TGID_THREADS,
			      TGID_THREADS * burn_ms * 1000, why, len))
		return KSFT_FAIL;
	return against_proc(c, &r.tgid.stats, &p, KB_TS_JUDGE_CPU,
			    "TGID against /proc/PID/stat", why, len);
}

static int test_tgid_aggregate(void *arg, char *why, size_t len)
{
	struct ctx *c = arg;
	struct burner b = { .burn_ms = (long)(100 * c->burn_scale) };
	pid_t tids[TGID_THREADS], child;
	int fds[2], err, rc;
	struct kb_nl nl;

	rc = netlink_ready(c, true, why, len);
	if (rc != KSFT_PASS)
		return rc;
	if (pipe2(fds, O_CLOEXEC))
		return kb_errno_result(errno, KB_ENV_NO_CAP, "pipe2", why, len);
	b.fd = fds[1];
	child = kb_children_fork(&c->helpers, tgid_child, &b);
	close(fds[1]);
	err = child < 0 ? child : read_tids(fds[0], tids, TGID_THREADS);
	close(fds[0]);
	if (err)
		rc = kb_errno_result(err, KB_ENV_NO_CAP, "multi-threaded child",
				     why, len);
	else
		rc = open_ts(&nl, 0, NL_TIMEOUT_MS, why, len);
	if (!err && rc == KSFT_PASS) {
		rc = judge_tgid(c, &nl, child, tids, b.burn_ms, why, len);
		kb_nl_close(&nl);
	}
	end_helper(c, child);
	return rc;
}

/* ---- delay accounting ------------------------------------------------ */

#define WPCOPY_PAGES	64

struct cow_area {
	char *buf;		/* WPCOPY_PAGES pages the parent touched */
	long page;
	int fd;			/* pipe: one byte once every page is copied */
};

/* Write every page shared with the parent: one copy-on-write each. */
static int cow_child(void *arg)
{
	struct cow_area *a = arg;
	char done = 1;
	int i;

	for (i = 0; i < WPCOPY_PAGES; i++)
		a->buf[(size_t)i * a->page] = 2;
	if (write(a->fd, &done, 1) != 1)
		return 1;
	for (;;)
		pause();
	return 0;
}

/*
 * Fork a cow_child with kernel.task_delayacct at @knob (delays are
 * allocated at fork) and fetch its stats once it has written its pages.
 */
static int cow_stats(struct ctx *c, struct kb_nl *nl, struct cow_area *a,
		     const char *knob, struct kb_ts_stats *ts)
{
	struct kb_ts_reply r;
	int fds[2], err;
	pid_t child;
	char done;

	err = kb_file_write_str(DELAYACCT_KNOB, knob);
	if (err)
		return err;
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	a->fd = fds[1];
	child = kb_children_fork(&c->helpers, cow_child, a);
	close(fds[1]);
	err = child < 0 ? child : wait_ready(fds[0], &done, 1);
	close(fds[0]);
	if (!err)
		err = kb_ts_get(nl, TASKSTATS_CMD_ATTR_PID, child, &r);
	if (!err)
		*ts = r.pid.stats;
	end_helper(c, child);
	return err;
}

/* Both children's stats over a fresh, touched, non-huge area. */
static int cow_both(struct ctx *c, struct kb_nl *nl, struct kb_ts_stats *on,
		    struct kb_ts_stats *off)
{
	struct cow_area a = { .page = sysconf(_SC_PAGESIZE) };
	size_t size = (size_t)a.page * WPCOPY_PAGES;
	int err;

	a.buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a.buf == MAP_FAILED)
		return -errno;
	/* One huge page would be one copy, not WPCOPY_PAGES. */
	madvise(a.buf, size, MADV_NOHUGEPAGE);
	memset(a.buf, 1, size);
	err = cow_stats(c, nl, &a, "1", on);
	if (!err)
		err = cow_stats(c, nl, &a, "0", off);
	munmap(a.buf, size);
	return err;
}

static int test_delay_accounting(void *arg, char *why, size_t len)
{
	struct ctx *c = arg;
	struct kb_ts_stats on, off;
	struct kb_nl nl;
	char old[32];
	int err, rc;

	rc = netlink_ready(c, true, why, len);
	if (rc != KSFT_PASS)
		return rc;
	if (access(DELAYACCT_KNOB, F_OK)) {
		snprintf(why, len, "no kernel.task_delayacct (CONFIG_TASK_DELAY_ACCT off)");
		return KSFT_SKIP;
	}
	/* kb_knob_set() saves the value for the cleanup stack to restore. */
	err = kb_file_read(DELAYACCT_KNOB, old, sizeof(old));
	if (!err)
		err = kb_knob_set(DELAYACCT_KNOB, old);
	if (err)
		return kb_errno_result(err, CAP_SYS_ADMIN,
				       "writing kernel.task_delayacct", why, len);
	rc = open_ts(&nl, 0, NL_TIMEOUT_MS, why, len);
	if (rc != KSFT_PASS)
		return rc;
	err = cow_both(c, &nl, &on, &off);
	kb_nl_close(&nl);
	/* Restore now; the cleanup stack writes the same value again at exit. */
	kb_file_write_str(DELAYACCT_KNOB, old);
	if (err)
		return get_failed(err, "copy-on-write children", why, len);
	kb_results_figure("delay_accounting", "pages=%d wpcopy_count=%llu wpcopy_delay_total_ns=%llu knob_off_wpcopy_count=%llu knob_off_wpcopy_delay_total_ns=%llu cpu_delay_count=%llu version=%u",
			  WPCOPY_PAGES, (unsigned long long)on.wpcopy_count,
			  (unsigned long long)on.wpcopy_delay_total,
			  (unsigned long long)off.wpcopy_count,
			  (unsigned long long)off.wpcopy_delay_total,
			  (unsigned long long)on.cpu_count, on.version);
	if (on.version < 13) {
		snprintf(why, len, "struct taskstats version %u has no wpcopy_* (version 13, Linux 6.0)",
			 on.version);
		return KSFT_SKIP;
	}
	if (!kb_ts_judge_wpcopy(&on, &off, WPCOPY_PAGES, why, len))
		return KSFT_FAIL;
	return KSFT_PASS;
}

/* ---- exit notification ----------------------------------------------- */

#define EXIT_CODE	7

static int exit_child(void *arg)
{
	(void)arg;
	return EXIT_CODE;
}

/*
 * Wait up to 5 s for the exit record of @pid among everything the
 * listener receives (other tasks exit too). 0 or -errno.
 */
/* Is our record in the datagram @buf[0..@n)? Leaves it in @r. */
static bool has_exit_record(const char *buf, size_t n, pid_t pid,
			    struct kb_ts_reply *r)
{
	const struct nlmsghdr *nlh;
	size_t off = 0;

	while ((nlh = kb_nl_msg_next(buf, n, &off)))
		if (!kb_ts_parse(nlh, r) && r->pid.present &&
		    r->pid.id == (uint32_t)pid)
			return true;
	return false;
}

static int wait_exit_record(struct kb_nl *nl, pid_t pid, struct kb_ts_reply *r,
			    int *drops)
{
	uint64_t end = kb_clock_ns() + 5000000000ull;
	const size_t size = 65536;
	char *buf = malloc(size);
	int err = -ETIMEDOUT;
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	while (err == -ETIMEDOUT && kb_clock_ns() < end) {
		n = kb_nl_recv(nl, buf, size);
		if (n == -ENOBUFS)
			(*drops)++;
		else if (n < 0 && n != -EAGAIN)
			err = n;
		else if (n > 0 && has_exit_record(buf, n, pid, r))
			err = 0;
	}
	free(buf);
	return err;
}

static int judge_exit(const struct kb_ts_reply *r, pid_t pid, char *why,
		      size_t len)
{
	const struct kb_ts_stats *ts = &r->pid.stats;
	int status = ts->exitcode;

	kb_results_figure("exit_notification", "ac_pid=%u ac_exitcode=0x%x aggr_tgid=%d version=%u",
			  ts->pid, ts->exitcode, r->tgid.present, ts->version);
	if (!r->pid.has_stats || ts->pid != (uint32_t)pid)
		snprintf(why, len, "exit record of pid %d carries ac_pid %u",
			 pid, ts->pid);
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != EXIT_CODE)
		snprintf(why, len, "ac_exitcode 0x%x is not exit(%d)",
			 ts->exitcode, EXIT_CODE);
	else
		return KSFT_PASS;
	return KSFT_FAIL;
}

/*
 * One attempt: fork a child that exits and wait for its record. Other
 * tasks exiting meanwhile may overrun the socket (ENOBUFS, counted in
 * *@drops) and take our record with them.
 */
static int exit_attempt(struct ctx *c, struct kb_nl *nl,
			struct kb_ts_reply *r, pid_t *pid, int *drops)
{
	pid_t child = kb_children_fork(&c->helpers, exit_child, NULL);
	int err;

	*pid = child;
	if (child < 0)
		return child;
	err = wait_exit_record(nl, child, r, drops);
	waitpid(child, NULL, 0);
	kb_children_forget(&c->helpers, child);
	return err;
}

static int test_exit_notification(void *arg, char *why, size_t len)
{
	struct ctx *c = arg;
	int err, drops = 0, tries, rc;
	struct kb_ts_reply r;
	pid_t child = -1;
	struct kb_nl nl;
	char cpus[256];

	rc = netlink_ready(c, true, why, len);
	if (rc != KSFT_PASS)
		return rc;
	if (kb_file_read("/sys/devices/system/cpu/online", cpus, sizeof(cpus)))
		snprintf(cpus, sizeof(cpus), "0-%ld",
			 sysconf(_SC_NPROCESSORS_CONF) - 1);
	rc = open_ts(&nl, 4 << 20, 500, why, len);
	if (rc != KSFT_PASS)
		return rc;
	err = kb_ts_listener(&nl, true, cpus);
	if (err) {
		kb_nl_close(&nl);
		return get_failed(err, "TASKSTATS_CMD_ATTR_REGISTER_CPUMASK",
				  why, len);
	}
	for (tries = 0; tries < 3; tries++) {
		err = exit_attempt(c, &nl, &r, &child, &drops);
		if (err != -ETIMEDOUT || !drops)
			break;
	}
	kb_ts_listener(&nl, false, cpus);
	kb_nl_close(&nl);
	if (err == -ETIMEDOUT && drops) {
		/* Not the kernel's fault: the machine is too busy to tell. */
		snprintf(why, len, "exit records of other tasks overran the socket (%d ENOBUFS) in %d attempts",
			 drops, tries);
		return KSFT_SKIP;
	}
	if (err) {
		snprintf(why, len, "no exit record for pid %d: %s", child,
			 strerror(-err));
		return KSFT_FAIL;
	}
	return judge_exit(&r, child, why, len);
}

/* ---- cgroupstats ----------------------------------------------------- */

#define MAX_CGROUP_DIRS	16
#define CGROUP_TEXT_MAX	65536

struct cgroup_dir {
	char path[PATH_MAX];
	bool v2;
};

/* Our cgroup in the v1 hierarchy mounted at @m, from /proc/self/cgroup. */
static int v1_own_path(const struct kb_cgroup_mount *m, const char *proc_cgroup,
		       char *path, size_t size)
{
	char opts[sizeof(m->super_opts)], *tok, *save;

	snprintf(opts, sizeof(opts), "%s", m->super_opts);
	/* Any controller (or name=) of the mount names its line. */
	for (tok = strtok_r(opts, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		if (strcmp(tok, "rw") && strcmp(tok, "ro") &&
		    !kb_cgroup_proc_path(proc_cgroup, strlen(proc_cgroup),
					 KB_CGROUP_V1, tok, path,
					 size))
			return 0;
	return -ENOENT;
}

/*
 * Our own cgroup directories, from the texts of /proc/self/mountinfo and
 * /proc/self/cgroup: one per hierarchy mounted at its root. Returns how
 * many were found.
 */
static int cgroup_dirs_parse(const char *mountinfo, const char *proc_cgroup,
			     struct cgroup_dir *dirs, int max)
{
	char line[PATH_MAX * 2 + 1024], path[PATH_MAX];
	const char *at = mountinfo, *nl;
	struct kb_cgroup_mount *m = malloc(sizeof(*m));
	int n = 0, err;

	while (m && at && *at && n < max) {
		nl = strchr(at, '\n');
		snprintf(line, sizeof(line), "%.*s",
			 (int)(nl ? nl - at : (ptrdiff_t)strlen(at)), at);
		at = nl ? nl + 1 : NULL;
		if (kb_cgroup_mountinfo_parse(line, strlen(line), m) ||
		    strcmp(m->root, "/"))
			continue;
		if (!strcmp(m->fstype, "cgroup2"))
			err = kb_cgroup_proc_path(proc_cgroup,
						  strlen(proc_cgroup),
						  KB_CGROUP_V2, NULL, path,
						  sizeof(path));
		else if (!strcmp(m->fstype, "cgroup"))
			err = v1_own_path(m, proc_cgroup, path, sizeof(path));
		else
			continue;
		if (err)
			continue;
		dirs[n].v2 = !strcmp(m->fstype, "cgroup2");
		snprintf(dirs[n].path, sizeof(dirs[n].path), "%.2000s%.2000s",
			 m->point, strcmp(path, "/") ? path : "");
		n++;
	}
	free(m);
	return n;
}

static int own_cgroup_dirs(struct cgroup_dir *dirs, int max)
{
	char *mountinfo = malloc(CGROUP_TEXT_MAX);
	char proc_cgroup[4096];
	int n = -ENOMEM;

	if (mountinfo) {
		n = kb_file_read("/proc/self/mountinfo", mountinfo,
				 CGROUP_TEXT_MAX);
		if (n >= 0)
			n = kb_file_read("/proc/self/cgroup", proc_cgroup,
					 sizeof(proc_cgroup));
		if (n >= 0)
			n = cgroup_dirs_parse(mountinfo, proc_cgroup, dirs,
					      max);
	}
	free(mountinfo);
	return n;
}

/* Lines of @dir/tasks (the threads in a v1 cgroup), or -errno. */
static long cgroup_tasks(int dirfd)
{
	int fd = openat(dirfd, "tasks", O_RDONLY | O_CLOEXEC);
	long lines = 0;
	FILE *f;
	int ch;

	if (fd < 0)
		return -errno;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	while ((ch = getc(f)) != EOF)
		lines += ch == '\n';
	fclose(f);
	return lines;
}

/*
 * CGROUPSTATS_CMD_GET on @dirfd, retried until the @sleepers all sleep;
 * *@tasks: the most tasks the cgroup held around the query.
 */
static int query_cgroup(struct kb_nl *nl, int dirfd, size_t sleepers,
			struct kb_ts_cgroupstats *cs, long *tasks)
{
	long before, after;
	int err, tries;

	/* A sleeper just forked may not have reached pause() yet. */
	for (tries = 0; tries < 100; tries++) {
		before = cgroup_tasks(dirfd);
		err = kb_ts_cgroupstats_get(nl, dirfd, cs);
		after = cgroup_tasks(dirfd);
		*tasks = before > after ? before : after;
		if (err || cs->nr_sleeping >= sleepers)
			break;
		sleep_ms(100);
	}
	return err;
}

/* The answer for a directory outside any cgroup fs (EINVAL expected). */
static int query_not_cgroup(struct kb_nl *nl)
{
	struct kb_ts_cgroupstats cs;
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = kb_ts_cgroupstats_get(nl, fd, &cs);
	close(fd);
	return err;
}

/* One of our cgroup directories: v1 must answer, v2 must say EINVAL. */
static int judge_cgroup_dir(struct kb_nl *nl, const struct cgroup_dir *d,
			    size_t nsleepers, char *why, size_t len)
{
	int fd = open(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;
	struct kb_ts_cgroupstats cs = { 0 };
	char what[PATH_MAX + 64];
	long tasks = 0;

	snprintf(what, sizeof(what), "opening %.2000s", d->path);
	if (fd < 0)
		return kb_errno_result(errno, KB_ENV_NO_CAP, what, why, len);
	if (d->v2) {
		err = kb_ts_cgroupstats_get(nl, fd, &cs);
		close(fd);
		kb_results_figure("cgroupstats", "cgroup=%s v2=1 answer=%s", d->path,
				  err ? strerrorname_np(-err) : "stats");
		if (err == -EINVAL)
			return KSFT_PASS;
		snprintf(why, len, "cgroup v2 directory %.200s: %s, not EINVAL (cgroupstats_build() takes v1 only)",
			 d->path, err ? strerror(-err) : "answered");
		return KSFT_FAIL;
	}
	err = query_cgroup(nl, fd, nsleepers, &cs, &tasks);
	close(fd);
	snprintf(what, sizeof(what), "CGROUPSTATS_CMD_GET on v1 %.2000s",
		 d->path);
	if (err)
		return kb_errno_result(err, KB_ENV_NO_CAP, what, why, len);
	kb_results_figure("cgroupstats", "cgroup=%s nr_sleeping=%llu nr_running=%llu nr_stopped=%llu nr_uninterruptible=%llu nr_io_wait=%llu sleepers=%zu tasks=%ld",
			  d->path, (unsigned long long)cs.nr_sleeping,
			  (unsigned long long)cs.nr_running,
			  (unsigned long long)cs.nr_stopped,
			  (unsigned long long)cs.nr_uninterruptible,
			  (unsigned long long)cs.nr_io_wait, nsleepers, tasks);
	if (tasks < 0)
		return kb_errno_result(tasks, KB_ENV_NO_CAP, "reading tasks", why,
				       len);
	if (!kb_ts_judge_cgroupstats(&cs, nsleepers, tasks, why, len))
		return KSFT_FAIL;
	return KSFT_PASS;
}

static int test_cgroupstats(void *arg, char *why, size_t len)
{
	struct ctx *c = arg;
	struct cgroup_dir dirs[MAX_CGROUP_DIRS];
	int ndirs, i, nv1 = 0, rc, not_cg;
	size_t nsleepers;
	struct kb_nl nl;

	rc = netlink_ready(c, false, why, len);
	if (rc != KSFT_PASS)
		return rc;
	nsleepers = get_sleepers(c)->n;
	ndirs = own_cgroup_dirs(dirs, MAX_CGROUP_DIRS);
	if (ndirs < 0)
		return kb_errno_result(ndirs, KB_ENV_NO_CAP,
				       "reading /proc/self/mountinfo and cgroup",
				       why, len);
	rc = open_ts(&nl, 0, NL_TIMEOUT_MS, why, len);
	if (rc != KSFT_PASS)
		return rc;
	not_cg = query_not_cgroup(&nl);
	kb_results_figure("cgroupstats", "not_a_cgroup=%s",
			  not_cg ? strerrorname_np(-not_cg) : "stats");
	if (not_cg != -EINVAL) {
		snprintf(why, len, "a directory outside cgroupfs: %s, not EINVAL",
			 not_cg ? strerror(-not_cg) : "answered");
		rc = KSFT_FAIL;
	}
	for (i = 0; i < ndirs && rc == KSFT_PASS; i++) {
		nv1 += !dirs[i].v2;
		rc = judge_cgroup_dir(&nl, &dirs[i], nsleepers, why, len);
	}
	kb_nl_close(&nl);
	if (rc == KSFT_PASS && !nv1) {
		snprintf(why, len, "no cgroup v1 hierarchy mounted: CGROUPSTATS_CMD_GET takes v1 directories only (%d v2 answered EINVAL)",
			 ndirs);
		rc = KSFT_SKIP;
	}
	return rc;
}

/* ---- errors ---------------------------------------------------------- */

static int reaped_child(void *arg)
{
	(void)arg;
	return 0;
}

/* A pid that belonged to a child we reaped: nobody has it now. */
static pid_t dead_pid(struct ctx *c)
{
	pid_t pid = kb_children_fork(&c->helpers, reaped_child, NULL);

	if (pid > 0) {
		waitpid(pid, NULL, 0);
		kb_children_forget(&c->helpers, pid);
	}
	return pid;
}

/* A request's answer by name: "ack", "ESRCH", "no-reply". */
static const char *answer_name(int ans)
{
	const char *name;

	if (ans == 1)
		return "accepted";
	if (ans == 0)
		return "ack";
	if (ans == -EAGAIN)
		return "no-reply";
	name = strerrorname_np(-ans);
	return name ? name : "unknown-errno";
}

static int test_error_esrch(void *arg, char *why, size_t len)
{
	struct ctx *c = arg;
	int err_pid = 0, err_tgid = 0, tries, rc;
	struct kb_ts_reply r;
	struct kb_nl nl;
	pid_t pid;

	rc = netlink_ready(c, true, why, len);
	if (rc == KSFT_PASS)
		rc = open_ts(&nl, 0, NL_TIMEOUT_MS, why, len);
	if (rc != KSFT_PASS)
		return rc;
	/* Retry when the pid was taken again between reap and query. */
	for (tries = 0; tries < 5; tries++) {
		pid = dead_pid(c);
		if (pid < 0)
			break;
		err_pid = kb_ts_get(&nl, TASKSTATS_CMD_ATTR_PID, pid, &r);
		err_tgid = kb_ts_get(&nl, TASKSTATS_CMD_ATTR_TGID, pid, &r);
		if (err_pid && err_tgid)
			break;
	}
	kb_nl_close(&nl);
	kb_results_figure("error_esrch", "pid=%s tgid=%s", answer_name(err_pid),
			  answer_name(err_tgid));
	if (err_pid == -ESRCH && err_tgid == -ESRCH)
		return KSFT_PASS;
	snprintf(why, len, "GET of a pid that does not exist: pid %s, tgid %s (want ESRCH)",
		 answer_name(err_pid), answer_name(err_tgid));
	return KSFT_FAIL;
}

/* Send a crafted request with NLM_F_ACK; returns the kernel's answer. */
static int send_crafted(struct kb_nl *nl, struct kb_nl_req *req, size_t len)
{
	int err;

	req->nlh.nlmsg_flags |= NLM_F_ACK;
	err = kb_nl_send(nl, req->buf, len);
	return err ? err : kb_nl_wait_ack(nl, req->nlh.nlmsg_seq);
}

/* One malformed request and the answer the kernel documents for it. */
struct malformed {
	const char *name;
	int want;		/* -errno; -EAGAIN: no reply at all */
	int got;
};

/*
 * The requests of the kernel's taskstats error paths: no command
 * attribute (taskstats_user_cmd: EINVAL), a 2-byte pid (the NLA_U32
 * policy: ERANGE), an unknown command (genetlink: EOPNOTSUPP), and a
 * header claiming more bytes than were sent (netlink_rcv_skb() drops it
 * without a reply).
 */
static void send_malformed(struct kb_nl *nl, struct malformed *m)
{
	struct kb_nl_req req;
	uint16_t short_pid = 1;

	kb_nl_genl_req_init(&req, nl->family, TASKSTATS_CMD_GET,
			    TASKSTATS_GENL_VERSION, kb_nl_next_seq(nl));
	m[0].got = send_crafted(nl, &req, req.nlh.nlmsg_len);

	kb_nl_genl_req_init(&req, nl->family, TASKSTATS_CMD_GET,
			    TASKSTATS_GENL_VERSION, kb_nl_next_seq(nl));
	kb_nl_attr_append(&req, TASKSTATS_CMD_ATTR_PID, &short_pid,
			  sizeof(short_pid));
	m[1].got = send_crafted(nl, &req, req.nlh.nlmsg_len);

	kb_nl_genl_req_init(&req, nl->family, 0x7f, TASKSTATS_GENL_VERSION,
			    kb_nl_next_seq(nl));
	m[2].got = send_crafted(nl, &req, req.nlh.nlmsg_len);

	kb_ts_req(&req, nl->family, TASKSTATS_CMD_ATTR_PID, getpid(),
		  kb_nl_next_seq(nl));
	req.nlh.nlmsg_len += 64;
	m[3].got = send_crafted(nl, &req, req.nlh.nlmsg_len - 64);
}

static int test_error_malformed(void *arg, char *why, size_t len)
{
	struct malformed m[] = {
		{ "no_attr", -EINVAL, 0 }, { "short_attr", -ERANGE, 0 },
		{ "unknown_cmd", -EOPNOTSUPP, 0 }, { "truncated", -EAGAIN, 0 },
	};
	struct ctx *c = arg;
	struct kb_ts_reply r;
	struct kb_nl nl;
	int after, rc;
	size_t i;

	rc = netlink_ready(c, true, why, len);
	if (rc == KSFT_PASS)
		rc = open_ts(&nl, 0, 1000, why, len);
	if (rc != KSFT_PASS)
		return rc;
	send_malformed(&nl, m);
	after = kb_ts_get(&nl, TASKSTATS_CMD_ATTR_PID, getpid(), &r);
	kb_nl_close(&nl);
	kb_results_figure("error_malformed", "%s=%s %s=%s %s=%s %s=%s get_after=%s",
			  m[0].name, answer_name(m[0].got), m[1].name,
			  answer_name(m[1].got), m[2].name, answer_name(m[2].got),
			  m[3].name, answer_name(m[3].got), answer_name(after));
	for (i = 0; i < ARRAY_SIZE(m); i++) {
		if (m[i].got == m[i].want)
			continue;
		snprintf(why, len, "%s: answered %s, want %s", m[i].name,
			 answer_name(m[i].got), answer_name(m[i].want));
		return KSFT_FAIL;
	}
	if (after) {
		snprintf(why, len, "the socket no longer answers a valid GET: %s",
			 strerror(-after));
		return KSFT_FAIL;
	}
	return KSFT_PASS;
}

/* ---- the RFC ioctl on /proc/taskstats -------------------------------- */

/* Room for any struct taskstats a kernel may copy back. */
#define IOCTL_BUF_SIZE		4096
/* Next number of the RFC's range: no such command. */
#define TASKSTATS_IOC_UNKNOWN	_IO('T', 3)

/* KSFT_PASS when the kernel has the RFC's file, else KSFT_SKIP. */
static int ioctl_ready(char *why, size_t len)
{
	if (!access(KB_TS_PROC_FILE, F_OK))
		return KSFT_PASS;
	snprintf(why, len, "kernel has no " KB_TS_PROC_FILE " (RFC ioctl interface, not in mainline)");
	return KSFT_SKIP;
}

/* Open the RFC's file: KSFT_PASS with *@fd, or the verdict. */
static int open_proc_taskstats(int *fd, char *why, size_t len)
{
	int rc = ioctl_ready(why, len);

	if (rc != KSFT_PASS)
		return rc;
	*fd = open(KB_TS_PROC_FILE, O_RDONLY | O_CLOEXEC);
	if (*fd >= 0)
		return KSFT_PASS;
	return kb_errno_result(errno, KB_ENV_NO_CAP, "opening " KB_TS_PROC_FILE,
			       why, len);
}

/* One ioctl query of @id into @buf; 0 or -errno. */
static int ioctl_query(int fd, unsigned long cmd, uint32_t id, void *buf,
		       struct kb_ts_stats *ts)
{
	memset(buf, 0, IOCTL_BUF_SIZE);
	memcpy((char *)buf + KB_TS_AC_PID_OFFSET, &id, sizeof(id));
	if (ioctl(fd, cmd, buf))
		return -errno;
	if (ts)
		kb_ts_decode(buf, IOCTL_BUF_SIZE, ts);
	return 0;
}

/* Fields that cannot change between two queries of a task at rest. */
static bool same_stats(const struct kb_ts_stats *a,
		       const struct kb_ts_stats *b, bool per_pid,
		       char *why, size_t len)
{
#define DIFFERS(f) (a->f != b->f && \
	snprintf(why, len, #f ": ioctl %llu, netlink %llu", \
		 (unsigned long long)a->f, (unsigned long long)b->f))
	if (DIFFERS(version) || DIFFERS(nvcsw) || DIFFERS(nivcsw))
		return false;
	if (per_pid && (DIFFERS(pid) || DIFFERS(ppid) || DIFFERS(uid) ||
			DIFFERS(gid) || DIFFERS(btime)))
		return false;
#undef DIFFERS
	if (per_pid && strcmp(a->comm, b->comm)) {
		snprintf(why, len, "comm: ioctl '%s', netlink '%s'", a->comm,
			 b->comm);
		return false;
	}
	return true;
}

/* Both interfaces' answers for @pid (pid and tgid), and /proc's. */
struct three_answers {
	struct kb_ts_stats ioctl_pid, ioctl_tgid;
	struct kb_ts_reply nl_pid, nl_tgid;
	struct kb_proc_task proc;
};

static int ask_three(int fd, struct kb_nl *nl, pid_t pid,
		     struct three_answers *a)
{
	char *buf = calloc(1, IOCTL_BUF_SIZE);
	int err;

	if (!buf)
		return -ENOMEM;
	err = wait_at_rest(pid, &a->proc);
	if (!err)
		err = ioctl_query(fd, TASKSTATS_IOC_ATTR_PID, pid, buf,
				  &a->ioctl_pid);
	if (!err)
		err = ioctl_query(fd, TASKSTATS_IOC_ATTR_TGID, pid, buf,
				  &a->ioctl_tgid);
	if (!err)
		err = kb_ts_get(nl, TASKSTATS_CMD_ATTR_PID, pid, &a->nl_pid);
	if (!err)
		err = kb_ts_get(nl, TASKSTATS_CMD_ATTR_TGID, pid, &a->nl_tgid);
	free(buf);
	return err;
}

/*
 * The ioctl answers what /proc says (an independent source, so a layout
 * bug shared by both taskstats interfaces cannot cancel out) and what
 * TASKSTATS_CMD_GET answers, for pid and tgid.
 */
static int test_ioctl_matches_netlink(void *arg, char *why, size_t len)
{
	struct ctx *c = arg;
	struct three_answers a;
	pid_t child = -1;
	struct kb_nl nl;
	int fd, err, rc;

	rc = ioctl_ready(why, len);
	if (rc == KSFT_PASS)
		rc = netlink_ready(c, true, why, len);
	if (rc == KSFT_PASS)
		rc = open_proc_taskstats(&fd, why, len);
	if (rc != KSFT_PASS)
		return rc;
	rc = open_ts(&nl, 0, NL_TIMEOUT_MS, why, len);
	if (rc == KSFT_PASS) {
		child = kb_children_fork(&c->helpers, rest_child, NULL);
		err = child < 0 ? child : ask_three(fd, &nl, child, &a);
		kb_nl_close(&nl);
		end_helper(c, child);
		if (err)
			rc = get_failed(err, "ioctl and netlink queries", why,
					len);
	}
	close(fd);
	if (rc != KSFT_PASS)
		return rc;
	kb_results_figure("ioctl_matches_netlink", "pid=%d version=%u nvcsw=%llu tgid_nvcsw=%llu proc_nvcsw=%llu",
			  (int)child, a.ioctl_pid.version,
			  (unsigned long long)a.ioctl_pid.nvcsw,
			  (unsigned long long)a.ioctl_tgid.nvcsw,
			  (unsigned long long)a.proc.nvcsw);
	rc = against_proc(c, &a.ioctl_pid, &a.proc,
			  KB_TS_JUDGE_IDS | KB_TS_JUDGE_CTXT | KB_TS_JUDGE_CPU,
			  "ioctl against /proc", why, len);
	if (rc != KSFT_PASS)
		return rc;
	if (!same_stats(&a.ioctl_pid, &a.nl_pid.pid.stats, true, why, len) ||
	    !same_stats(&a.ioctl_tgid, &a.nl_tgid.tgid.stats, false, why, len))
		return KSFT_FAIL;
	return KSFT_PASS;
}

struct ioctl_errors {
	int gone_pid, gone_tgid, null_ptr, ro_ptr, unknown, after;
};

/* A buffer the kernel can read (so the pid is read) but not write back. */
static int ioctl_read_only(int fd, uint32_t pid)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t size = IOCTL_BUF_SIZE + page;
	char *ro = mmap(NULL, size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int err;

	if (ro == MAP_FAILED)
		return -ENOMEM;
	memcpy(ro + KB_TS_AC_PID_OFFSET, &pid, sizeof(pid));
	mprotect(ro, size, PROT_READ);
	err = ioctl(fd, TASKSTATS_IOC_ATTR_PID, ro) ? -errno : 0;
	munmap(ro, size);
	return err;
}

static void ask_errors(struct ctx *c, int fd, char *buf,
		       struct ioctl_errors *e)
{
	uint32_t me = getpid();
	int tries;
	pid_t pid;

	/* Retry when the pid was taken again between reap and query. */
	for (tries = 0; tries < 5; tries++) {
		pid = dead_pid(c);
		if (pid < 0)
			break;
		e->gone_pid = ioctl_query(fd, TASKSTATS_IOC_ATTR_PID, pid,
					  buf, NULL);
		e->gone_tgid = ioctl_query(fd, TASKSTATS_IOC_ATTR_TGID, pid,
					   buf, NULL);
		if (e->gone_pid && e->gone_tgid)
			break;
	}
	e->null_ptr = ioctl(fd, TASKSTATS_IOC_ATTR_PID, NULL) ? -errno : 0;
	e->ro_ptr = ioctl_read_only(fd, me);
	e->unknown = ioctl_query(fd, TASKSTATS_IOC_UNKNOWN, me, buf, NULL);
	e->after = ioctl_query(fd, TASKSTATS_IOC_ATTR_PID, me, buf, NULL);
}

static int judge_ioctl_errors(const struct ioctl_errors *e, char *why,
			      size_t len)
{
	kb_results_figure("ioctl_errors", "gone_pid=%s gone_tgid=%s null_pointer=%s read_only_buffer=%s unknown_cmd=%s query_after=%s",
			  answer_name(e->gone_pid), answer_name(e->gone_tgid),
			  answer_name(e->null_ptr), answer_name(e->ro_ptr),
			  answer_name(e->unknown), answer_name(e->after));
	if (e->gone_pid != -ESRCH || e->gone_tgid != -ESRCH)
		snprintf(why, len, "query of a pid that does not exist: pid %s, tgid %s (want ESRCH)",
			 answer_name(e->gone_pid), answer_name(e->gone_tgid));
	else if (e->null_ptr != -EFAULT || e->ro_ptr != -EFAULT)
		snprintf(why, len, "bad buffer: NULL %s, read-only %s (want EFAULT)",
			 answer_name(e->null_ptr), answer_name(e->ro_ptr));
	else if (e->unknown != -EINVAL)
		snprintf(why, len, "unknown command: %s (want EINVAL)",
			 answer_name(e->unknown));
	else if (e->after)
		snprintf(why, len, "a valid query after the errors failed: %s",
			 answer_name(e->after));
	else
		return KSFT_PASS;
	return KSFT_FAIL;
}

/*
 * The documented errors: ESRCH for a pid nobody has, EFAULT for a
 * pointer the kernel cannot read or cannot write back to, EINVAL for an
 * unknown command; EPERM without CAP_NET_ADMIN. A valid query must still
 * work afterwards.
 */
static int test_ioctl_errors(void *arg, char *why, size_t len)
{
	struct ctx *c = arg;
	struct ioctl_errors e = { 0 };
	int fd, rc, unpriv;
	char *buf;

	rc = open_proc_taskstats(&fd, why, len);
	if (rc != KSFT_PASS)
		return rc;
	buf = calloc(1, IOCTL_BUF_SIZE);
	if (!buf) {
		close(fd);
		snprintf(why, len, "out of memory");
		return KSFT_FAIL;
	}
	if (!c->have_admin) {
		unpriv = ioctl_query(fd, TASKSTATS_IOC_ATTR_PID, getpid(), buf,
				     NULL);
		kb_results_figure("ioctl_errors", "unprivileged_query=%s",
				  answer_name(unpriv));
		if (unpriv != -EPERM) {
			snprintf(why, len, "a query without CAP_NET_ADMIN answered %s, not EPERM",
				 answer_name(unpriv));
			rc = KSFT_FAIL;
		}
	} else {
		ask_errors(c, fd, buf, &e);
		rc = judge_ioctl_errors(&e, why, len);
	}
	free(buf);
	close(fd);
	return rc;
}

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
	run->state = RUN_ACTIVE;
}

/* One pass of method @m; a broken pass or a missing pid fails it. */
static void one_pass(struct ctx *c, enum kb_ts_method m, long pass, bool *ok)
{
	struct method_run *run = &c->runs[m];
	size_t n = c->sleepers.n, i;
	uint64_t ns;
	long got;

	got = kb_ts_method_pass(run->ts, ok, &ns);
	if (got == -ENOBUFS) {
		run_fail(run, "replies lost: ENOBUFS (receive buffer too small for -K %u)",
			 c->batch);
	} else if (got < 0) {
		run_fail(run, "pass failed: %s", strerror(-got));
	} else if ((size_t)got != n) {
		for (i = 0; i < n && ok[i]; i++)
			;
		run_fail(run, "pass %ld: %zu of %zu live pids unanswered (first: %d)",
			 pass, n - (size_t)got, n, i < n ? c->sleepers.pids[i] : -1);
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
			kb_stats_compute(run->samples, c->passes, &run->st);
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
	kb_results_extra("pass_s_median", run->st.median * scale);
	kb_results_extra("pass_s_min", run->st.min * scale);
	kb_results_extra("pass_s_max", run->st.max * scale);
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
static int method_row(void *ctx, int m, char *why, size_t len)
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
static void print_table(const struct ctx *c)
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
			       r->st.median * scale, r->st.min * scale,
			       r->st.max * scale, r->st.median, speedup);
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
static int test_bpf_iter_matches_netlink(void *arg, char *why, size_t len)
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

/* Last: every child we made is gone once we kill and reap them. */
static int test_children_reaped(void *arg, char *why, size_t len)
{
	struct ctx *c = arg;

	kb_children_release(&c->sleepers);
	kb_children_release(&c->helpers);
	if (kb_children_none_left())
		return KSFT_PASS;
	snprintf(why, len, "a child is left after killing and reaping all of them");
	return KSFT_FAIL;
}

/* ---- the table ------------------------------------------------------- */

#define T(name, desc)	KB_TEST(#name, test_##name, desc)
#define M(name, id)	KB_TEST_ARG(#name, method_row, KB_TS_METHOD_##id, NULL)

/*
 * KTAP order and names are an API: checks, one row per method (named by
 * kb_ts_method_name(), desc from kb_ts_method_desc()), children_reaped.
 * A new method is an enum value and a methods[] entry in the library and
 * an M() line here; build_tests() stops the program when a method has no
 * row or a row another method's name.
 */
static struct kb_test tests[] = {
	T(family_resolves, "the TASKSTATS genetlink family resolves"),
	T(get_self, "GET of our pid/tgid and of a child at rest, against /proc"),
	T(tgid_aggregate, "TGID aggregate of 3 burning threads: sum, bounds, /proc"),
	T(delay_accounting, "wpcopy_* count COW faults only with task_delayacct=1"),
	T(exit_notification, "an exit record with ac_exitcode reaches a listener"),
	T(cgroupstats, "CGROUPSTATS_CMD_GET counts our sleepers, v2 answers EINVAL"),
	T(error_esrch, "GET of a gone pid/tgid answers ESRCH"),
	T(error_malformed, "malformed requests get their documented errno"),
	T(ioctl_matches_netlink, "RFC ioctl agrees with /proc and netlink"),
	T(ioctl_errors, "RFC ioctl's ESRCH/EFAULT/EINVAL/EPERM"),
	T(bpf_iter_matches_netlink, "BPF task iterator agrees with netlink"),
	M(netlink_per_pid, NETLINK_PER_PID),
	M(netlink_batched, NETLINK_BATCHED),
	M(procfs, PROCFS),
	M(procfs_pread, PROCFS_PREAD),
	M(ioctl, IOCTL),
	M(bpf_iter, BPF_ITER),
	T(children_reaped, "no child is left after the run"),
};

/* The table row of method @m; every method has one. */
static int method_row_index(enum kb_ts_method m)
{
	int i = kb_test_index(tests, ARRAY_SIZE(tests), kb_ts_method_name(m));

	if (i < 0 || tests[i].fn_arg != method_row || tests[i].arg != (int)m)
		ksft_exit_fail_msg("test table: no row for method %s\n",
				   kb_ts_method_name(m));
	return i;
}

/* Method rows take their descriptions from the library. */
static void build_tests(void)
{
	int m;

	for (m = 0; m < KB_TS_METHOD_NR; m++)
		tests[method_row_index(m)].desc = kb_ts_method_desc(m);
}

/* ---- command line ---------------------------------------------------- */

static void parse_options(int argc, char **argv, struct ctx *c)
{
	const struct kb_cli_opt opts[] = {
		KB_OPT_LONG('N', "processes", &c->procs, 1, 4194304, "N",
			    "sleeping processes (default " KB_CLI_STR(DEFAULT_PROCS)
			    ", " KB_CLI_STR(FULL_PROCS) " with --full,\n"
			    KB_CLI_STR(SLOW_PROCS) " when KSFT_MACHINE_SLOW=yes); capped by pid_max,\n"
			    "threads-max and RLIMIT_NPROC"),
		KB_OPT_UINT('K', "batch", &c->batch, 1, KB_TS_METHOD_MAX_BATCH,
			    "K", "requests per sendmsg for netlink_batched (default "
			    KB_CLI_STR(KB_TS_METHOD_DEFAULT_BATCH) ")"),
		KB_OPT_LONG('p', "passes", &c->passes, 1, 1000000, "P",
			    "timed passes per method (default " KB_CLI_STR(DEFAULT_PASSES)
			    "; " KB_CLI_STR(SLOW_PASSES) " when slow)"),
		KB_OPT_LONG('w', "warmup", &c->warmup, 0, 1000000, "W",
			    "untimed passes first (default " KB_CLI_STR(DEFAULT_WARMUP) ")"),
		KB_OPT_END(),
	};
	const struct kb_cli cli = {
		.opts = opts, .common = KB_CLI_TESTS | KB_CLI_FULL | KB_CLI_JSON,
		.about = "Spawn N sleeping processes and measure what one pass fetching the\n"
			 "statistics of all of them costs by each method; check that the taskstats\n"
			 "interface answers correctly, against /proc where it can. Prints KTAP: one\n"
			 "result per check and per method, figures on '# NAME: key=value' lines,\n"
			 "then the seed's table.",
		.notes = "Row figures are microseconds per process (median of the passes) with\n"
			 "pass_s_* in seconds per pass and speedup_vs_per_pid. Netlink rows and\n"
			 "checks need CAP_NET_ADMIN and skip without it; ioctl skips unless the\n"
			 "kernel has the RFC's /proc/taskstats. 'taskstats -l' lists the tests.",
		.tests = tests, .ntests = ARRAY_SIZE(tests),
	};
	int m;

	c->procs = -1;
	c->passes = -1;
	c->batch = KB_TS_METHOD_DEFAULT_BATCH;
	c->warmup = DEFAULT_WARMUP;
	kb_cli_parse(argc, argv, &cli, &c->common);
	if (c->procs < 0)
		c->procs = kb_cli_pick_count(&c->common, DEFAULT_PROCS, FULL_PROCS,
					     SLOW_PROCS);
	if (c->passes < 0)
		c->passes = kb_cli_pick_count(&c->common, DEFAULT_PASSES,
					      DEFAULT_PASSES, SLOW_PASSES);
	c->burn_scale = kb_env_machine_slow() ? 0.5 : 1.0;
	for (m = 0; m < KB_TS_METHOD_NR; m++)
		c->runs[m].selected = c->common.selected[method_row_index(m)];
}

int main(int argc, char **argv)
{
	static struct ctx c;

	kb_init("taskstats", argc, argv);
	build_tests();
	parse_options(argc, argv, &c);
	c.have_admin = kb_env_have_cap(CAP_NET_ADMIN);
	c.ticks_per_s = sysconf(_SC_CLK_TCK);
	probe_family(&c);
	kb_results_param_num("passes", c.passes);
	kb_results_param_num("warmup", c.warmup);
	kb_results_param_num("batch", c.batch);
	kb_results_param_num("cap_net_admin", c.have_admin);

	ksft_print_header();
	if (!c.have_admin)
		ksft_print_msg("no CAP_NET_ADMIN: TASKSTATS_CMD_GET checks and netlink rows skip\n");
	kb_ktap_run_tests(tests, ARRAY_SIZE(tests), c.common.selected, &c);
	print_table(&c);
	kb_ktap_finish(c.common.json);
}
