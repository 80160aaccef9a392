// SPDX-License-Identifier: GPL-2.0
/*
 * taskstats: the checks of the TASKSTATS genetlink family: own pid, TGID
 * aggregation, delay accounting, exit notification, cgroupstats, errors,
 * each against /proc where it can be.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/taskstats.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ts_test.h"

/* ---- what every netlink test needs ----------------------------------- */

/*
 * KSFT_PASS when the netlink tests can run, else KSFT_SKIP (no TASKSTATS
 * family: CONFIG_TASKSTATS off; no CAP_NET_ADMIN for @needs_admin) or
 * KSFT_FAIL (the lookup broke) with the reason in @why.
 */
int netlink_ready(const struct ctx *c, bool needs_admin, char *why,
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
int open_ts(struct kb_nl *nl, size_t rcvbuf, unsigned int timeout_ms,
	    char *why, size_t len)
{
	int err = kb_ts_open(nl, rcvbuf, timeout_ms);

	if (!err)
		return KSFT_PASS;
	return kb_errno_result(err, KB_ENV_NO_CAP, "opening a TASKSTATS socket",
			       why, len);
}

/* A failed TASKSTATS_CMD_GET: the verdict, "WHAT: error" in @why. */
int get_failed(int err, const char *what, char *why, size_t len)
{
	return kb_errno_result(err, CAP_NET_ADMIN, what, why, len);
}

/* KSFT_PASS when taskstats' @ts agrees with /proc's @p on @what. */
int against_proc(const struct ctx *c, const struct kb_ts_stats *ts,
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

/* A request's answer by name: "ack", "ESRCH", "no-reply". */
const char *answer_name(int ans)
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

/* ---- family and own pid ---------------------------------------------- */

int test_family_resolves(void *arg, char *why, size_t len)
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

int test_get_self(void *arg, char *why, size_t len)
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
			  r.pid.stats.version, r.pid.stats.len,
			  TASKSTATS_VERSION, sizeof(struct taskstats));
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

int test_tgid_aggregate(void *arg, char *why, size_t len)
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

int test_delay_accounting(void *arg, char *why, size_t len)
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

int test_exit_notification(void *arg, char *why, size_t len)
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
static int judge_cgroup_dir(struct kb_nl *nl, const struct kb_cgroup_dir *d,
			    size_t nsleepers, char *why, size_t len)
{
	int fd = open(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;
	struct kb_ts_cgroupstats cs = { 0 };
	char what[PATH_MAX + 64];
	long tasks = 0;

	snprintf(what, sizeof(what), "opening %.2000s", d->path);
	if (fd < 0)
		return kb_errno_result(errno, KB_ENV_NO_CAP, what, why, len);
	if (d->version == KB_CGROUP_V2) {
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

int test_cgroupstats(void *arg, char *why, size_t len)
{
	struct ctx *c = arg;
	struct kb_cgroup_dir dirs[MAX_CGROUP_DIRS];
	int ndirs, i, nv1 = 0, rc, not_cg;
	size_t nsleepers;
	struct kb_nl nl;

	rc = netlink_ready(c, false, why, len);
	if (rc != KSFT_PASS)
		return rc;
	nsleepers = get_sleepers(c)->n;
	ndirs = kb_cgroup_own_dirs_read(dirs, MAX_CGROUP_DIRS);
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
		nv1 += dirs[i].version == KB_CGROUP_V1;
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

int test_error_esrch(void *arg, char *why, size_t len)
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

int test_error_malformed(void *arg, char *why, size_t len)
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
			  answer_name(m[1].got), m[2].name,
			  answer_name(m[2].got), m[3].name,
			  answer_name(m[3].got), answer_name(after));
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
