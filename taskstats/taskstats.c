// SPDX-License-Identifier: GPL-2.0
/*
 * taskstats: what fetching per-task statistics for N processes costs by
 * each method (per-pid netlink, batched netlink, procfs, procfs with
 * pread, the RFC /proc/taskstats ioctl), and whether the taskstats
 * interface answers correctly (family, own pid, TGID aggregation, delay
 * accounting, exit notifications, cgroupstats, errors).
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
#include <sched.h>
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

#include "kbench_ktap.h"
#include "children.h"
#include "netlink.h"
#include "taskstats.h"

#define DEFAULT_PROCS		1000
#define FULL_PROCS		10000
#define SLOW_PROCS		200
#define DEFAULT_PASSES		20
#define SLOW_PASSES		10
#define DEFAULT_WARMUP		2
#define SLEEPER_COMM		"kb_sleeper"
#define NL_TIMEOUT_MS		5000
#define DELAYACCT_KNOB		"/proc/sys/kernel/task_delayacct"

struct options {
	long procs;
	long passes;
	long warmup;
	unsigned int batch;
	const char *json;
	bool full;
	bool procs_set;
	bool passes_set;
};

static struct options opt;
static struct kb_children sleepers, helpers;
static bool have_admin;		/* CAP_NET_ADMIN: TASKSTATS_CMD_GET */
static int family_err;		/* 0 when the TASKSTATS family resolved */
static double burn_scale = 1.0;	/* shorter CPU burns on slow machines */

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
static void end_helper(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	kb_children_forget(&helpers, pid);
}

/*
 * The common skip reasons of the netlink tests. Returns NULL when the
 * test can run.
 */
static const char *netlink_skip_reason(bool needs_admin)
{
	static char why[128];

	if (family_err == -ENOENT)
		return "kernel has no TASKSTATS genetlink family (CONFIG_TASKSTATS off)";
	if (family_err) {
		snprintf(why, sizeof(why), "cannot resolve the TASKSTATS family: %s",
			 strerror(-family_err));
		return why;
	}
	if (needs_admin && !have_admin)
		return "needs CAP_NET_ADMIN (TASKSTATS_CMD_GET is admin-only)";
	return NULL;
}

static bool skip_netlink_test(const char *name, bool needs_admin)
{
	const char *why = netlink_skip_reason(needs_admin);

	if (why)
		kb_skip(name, why);
	return why != NULL;
}

/* A socket on the TASKSTATS family; fails the test @name on error. */
static bool open_ts(const char *name, struct kb_nl *nl, size_t rcvbuf,
		    unsigned int timeout_ms)
{
	char why[128];
	int err = kb_taskstats_open(nl, rcvbuf, timeout_ms);

	if (!err)
		return true;
	snprintf(why, sizeof(why), "cannot open a TASKSTATS socket: %s",
		 strerror(-err));
	kb_fail(name, why);
	return false;
}

/* ---- correctness: family and own pid --------------------------------- */

static void test_family(void)
{
	const char *name = "family_resolves";
	struct kb_nl nl;
	char why[128];
	int id;

	family_err = kb_nl_open(&nl, 0, NL_TIMEOUT_MS);
	if (family_err) {
		snprintf(why, sizeof(why), "cannot open a NETLINK_GENERIC socket: %s",
			 strerror(-family_err));
		kb_fail(name, why);
		return;
	}
	id = kb_genl_family_id(&nl, TASKSTATS_GENL_NAME);
	kb_nl_close(&nl);
	family_err = id < 0 ? id : 0;
	if (id == -ENOENT) {
		kb_skip(name, netlink_skip_reason(false));
		return;
	}
	if (id < 0) {
		snprintf(why, sizeof(why), "CTRL_CMD_GETFAMILY failed: %s",
			 strerror(-id));
		kb_fail(name, why);
		return;
	}
	kb_figure(name, "family_id=%d", id);
	kb_pass(name);
}

static bool check_self_reply(const struct kb_ts_reply *r, char *why,
			     size_t whylen)
{
	const struct kb_taskstats *ts = &r->pid.stats;
	uint32_t me = getpid();
	char comm[64] = "";

	kb_read_file("/proc/self/comm", comm, sizeof(comm));
	if (!r->pid.present || !r->pid.has_stats)
		snprintf(why, whylen, "reply has no TASKSTATS_TYPE_AGGR_PID with stats");
	else if (r->pid.id != me || ts->pid != me)
		snprintf(why, whylen, "asked for pid %u, reply says pid %u, ac_pid %u",
			 me, r->pid.id, ts->pid);
	else if (strcmp(ts->comm, comm))
		snprintf(why, whylen, "ac_comm '%s' is not our comm '%s'",
			 ts->comm, comm);
	else if (ts->version == 0)
		snprintf(why, whylen, "version is 0");
	else if (ts->len < KB_TS_AC_PID_OFFSET + sizeof(uint32_t))
		snprintf(why, whylen, "payload of %zu bytes is too short for ac_pid",
			 ts->len);
	else
		return true;
	return false;
}

static void test_get_self(void)
{
	const char *name = "get_self";
	struct kb_ts_reply r, rt;
	struct kb_nl nl;
	char why[160];
	int err;

	if (skip_netlink_test(name, true) ||
	    !open_ts(name, &nl, 0, NL_TIMEOUT_MS))
		return;
	err = kb_taskstats_get(&nl, TASKSTATS_CMD_ATTR_PID, getpid(), &r);
	if (!err)
		err = kb_taskstats_get(&nl, TASKSTATS_CMD_ATTR_TGID, getpid(), &rt);
	kb_nl_close(&nl);
	if (err) {
		snprintf(why, sizeof(why), "TASKSTATS_CMD_GET of our own pid/tgid: %s",
			 strerror(-err));
		kb_fail(name, why);
		return;
	}
	kb_figure(name, "version=%u payload_bytes=%zu header_version=%d header_bytes=%zu",
		  r.pid.stats.version, r.pid.stats.len, TASKSTATS_VERSION,
		  sizeof(struct taskstats));
	kb_param_num("taskstats_version", r.pid.stats.version);
	kb_param_num("taskstats_bytes", r.pid.stats.len);
	if (!check_self_reply(&r, why, sizeof(why))) {
		kb_fail(name, why);
		return;
	}
	if (!rt.tgid.present || rt.tgid.id != (uint32_t)getpid()) {
		kb_fail(name, "TGID query of our own tgid has no matching TASKSTATS_TYPE_AGGR_TGID");
		return;
	}
	kb_pass(name);
}

/* ---- correctness: TGID aggregation ----------------------------------- */

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

/* Read @n tids from @fd within 30 s. 0 or -errno. */
static int read_tids(int fd, pid_t *tids, int n)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int got = 0;

	while (got < n) {
		if (poll(&pfd, 1, 30000) <= 0)
			return -ETIMEDOUT;
		if (read(fd, &tids[got], sizeof(*tids)) != sizeof(*tids))
			return -EIO;
		got++;
	}
	return 0;
}

/*
 * CPU time of a task in us. cpu_run_virtual_total is the scheduler's own
 * runtime in ns (filled when CONFIG_TASK_DELAY_ACCT is built in): exact,
 * unlike utime + stime, which are sampled by the tick and undercounted by
 * an emulated guest that loses ticks.
 */
static uint64_t cpu_us(const struct kb_taskstats *ts, bool precise)
{
	return precise ? ts->cpu_run_virtual_total / 1000 : ts->utime + ts->stime;
}

/* Compare the TGID aggregate with the sum of the threads. */
static void judge_tgid(const char *name, struct kb_nl *nl, pid_t child,
		       const pid_t *tids, long burn_ms)
{
	struct kb_taskstats threads[TGID_THREADS];
	uint64_t sum = 0, total, expect = TGID_THREADS * burn_ms * 1000;
	struct kb_ts_reply r;
	bool precise;
	char why[200];
	int i, err;

	for (i = 0; i < TGID_THREADS; i++) {
		err = kb_taskstats_get(nl, TASKSTATS_CMD_ATTR_PID, tids[i], &r);
		if (err) {
			snprintf(why, sizeof(why), "GET of thread %d: %s",
				 tids[i], strerror(-err));
			kb_fail(name, why);
			return;
		}
		threads[i] = r.pid.stats;
	}
	err = kb_taskstats_get(nl, TASKSTATS_CMD_ATTR_TGID, child, &r);
	if (err || !r.tgid.present || !r.tgid.has_stats ||
	    r.tgid.id != (uint32_t)child) {
		snprintf(why, sizeof(why), "TGID query: %s",
			 err ? strerror(-err) : "no matching AGGR_TGID");
		kb_fail(name, why);
		return;
	}
	precise = r.tgid.stats.cpu_run_virtual_total != 0;
	for (i = 0; i < TGID_THREADS; i++)
		sum += cpu_us(&threads[i], precise);
	total = cpu_us(&r.tgid.stats, precise);
	kb_figure(name, "threads=%d burn_ms_each=%ld source=%s tgid_cpu_us=%llu sum_of_threads_us=%llu",
		  TGID_THREADS, burn_ms,
		  precise ? "cpu_run_virtual_total" : "utime+stime",
		  (unsigned long long)total, (unsigned long long)sum);
	/*
	 * The scheduler's runtime holds all the threads burnt (1 % for
	 * rounding); tick-sampled time may miss up to 25 %.
	 */
	if (precise ? total * 100 < expect * 99 : total * 4 < expect * 3)
		snprintf(why, sizeof(why), "TGID cpu time %llu us is below the %llu us the threads burnt",
			 (unsigned long long)total, (unsigned long long)expect);
	else if (total * 100 < sum * (precise ? 99 : 90))
		snprintf(why, sizeof(why), "TGID cpu time %llu us is below the sum of its threads, %llu us",
			 (unsigned long long)total, (unsigned long long)sum);
	else {
		kb_pass(name);
		return;
	}
	kb_fail(name, why);
}

static void test_tgid_aggregate(void)
{
	const char *name = "tgid_aggregate";
	struct burner b = { .burn_ms = (long)(100 * burn_scale) };
	pid_t tids[TGID_THREADS], child;
	int fds[2], err;
	struct kb_nl nl;
	char why[128];

	if (skip_netlink_test(name, true))
		return;
	if (pipe2(fds, O_CLOEXEC)) {
		kb_fail(name, "pipe2 failed");
		return;
	}
	b.fd = fds[1];
	child = kb_children_fork(&helpers, tgid_child, &b);
	close(fds[1]);
	err = child < 0 ? child : read_tids(fds[0], tids, TGID_THREADS);
	close(fds[0]);
	if (err) {
		snprintf(why, sizeof(why), "multi-threaded child: %s",
			 strerror(-err));
		kb_fail(name, why);
	} else if (open_ts(name, &nl, 0, NL_TIMEOUT_MS)) {
		judge_tgid(name, &nl, child, tids, b.burn_ms);
		kb_nl_close(&nl);
	}
	end_helper(child);
}

/* ---- correctness: delay accounting ----------------------------------- */

/* The first CPU we may run on: both spinners share it. */
static int first_allowed_cpu(void)
{
	cpu_set_t set;
	int cpu;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			return cpu;
	return 0;
}

static int spin_child(void *arg)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(*(int *)arg, &set);
	sched_setaffinity(0, sizeof(set), &set);
	for (;;)
		;
	return 0;
}

static void judge_delays(const char *name, struct kb_nl *nl, pid_t pid,
			 long wait_ms)
{
	struct kb_ts_reply r1, r2;
	char why[200];
	int err;

	sleep_ms(wait_ms);
	err = kb_taskstats_get(nl, TASKSTATS_CMD_ATTR_PID, pid, &r1);
	sleep_ms(wait_ms);
	if (!err)
		err = kb_taskstats_get(nl, TASKSTATS_CMD_ATTR_PID, pid, &r2);
	if (err) {
		snprintf(why, sizeof(why), "GET of the spinner: %s", strerror(-err));
		kb_fail(name, why);
		return;
	}
	kb_figure(name, "cpu_delay_count=%llu->%llu cpu_delay_total_ns=%llu->%llu",
		  (unsigned long long)r1.pid.stats.cpu_count,
		  (unsigned long long)r2.pid.stats.cpu_count,
		  (unsigned long long)r1.pid.stats.cpu_delay_total,
		  (unsigned long long)r2.pid.stats.cpu_delay_total);
	if (r2.pid.stats.cpu_count > r1.pid.stats.cpu_count &&
	    r2.pid.stats.cpu_delay_total > r1.pid.stats.cpu_delay_total &&
	    r1.pid.stats.cpu_delay_total > 0) {
		kb_pass(name);
		return;
	}
	kb_fail(name, "cpu_delay_count / cpu_delay_total of a task competing for its CPU did not grow");
}

static void test_delay_accounting(void)
{
	const char *name = "delay_accounting";
	char old[32], why[160];
	pid_t spin[2] = { -1, -1 };
	int cpu = first_allowed_cpu(), err, i;
	struct kb_nl nl;

	if (skip_netlink_test(name, true))
		return;
	if (access(DELAYACCT_KNOB, F_OK)) {
		kb_skip(name, "no kernel.task_delayacct (CONFIG_TASK_DELAY_ACCT off)");
		return;
	}
	err = kb_read_file(DELAYACCT_KNOB, old, sizeof(old));
	if (!err)
		err = kb_knob_set(DELAYACCT_KNOB, "1");
	if (err) {
		snprintf(why, sizeof(why), "cannot turn on kernel.task_delayacct: %s",
			 strerror(-err));
		kb_skip(name, why);
		return;
	}
	for (i = 0; i < 2; i++)
		spin[i] = kb_children_fork(&helpers, spin_child, &cpu);
	if (spin[0] < 0 || spin[1] < 0)
		kb_fail(name, "cannot fork the spinners");
	else if (open_ts(name, &nl, 0, NL_TIMEOUT_MS)) {
		judge_delays(name, &nl, spin[0], (long)(100 * burn_scale));
		kb_nl_close(&nl);
	}
	for (i = 0; i < 2; i++)
		end_helper(spin[i]);
	/* Restore now; the cleanup stack writes the same value again at exit. */
	kb_write_str(DELAYACCT_KNOB, old);
}

/* ---- correctness: exit notification ---------------------------------- */

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
static int wait_exit_record(struct kb_nl *nl, pid_t pid, struct kb_ts_reply *r,
			    int *drops)
{
	uint64_t end = kb_now_ns() + 5000000000ull;
	const struct nlmsghdr *nlh;
	static char buf[65536];
	size_t off;
	ssize_t n;

	while (kb_now_ns() < end) {
		n = kb_nl_recv(nl, buf, sizeof(buf));
		if (n == -ENOBUFS) {
			(*drops)++;
			continue;
		}
		if (n == -EAGAIN)
			continue;
		if (n < 0)
			return n;
		off = 0;
		while ((nlh = kb_nlmsg_next(buf, n, &off)))
			if (!kb_taskstats_parse(nlh, r) && r->pid.present &&
			    r->pid.id == (uint32_t)pid)
				return 0;
	}
	return -ETIMEDOUT;
}

static void judge_exit(const char *name, const struct kb_ts_reply *r,
		       pid_t pid)
{
	const struct kb_taskstats *ts = &r->pid.stats;
	int status = ts->exitcode;
	char why[160];

	kb_figure(name, "ac_pid=%u ac_exitcode=0x%x aggr_tgid=%d version=%u",
		  ts->pid, ts->exitcode, r->tgid.present, ts->version);
	if (!r->pid.has_stats || ts->pid != (uint32_t)pid)
		snprintf(why, sizeof(why), "exit record of pid %d carries ac_pid %u",
			 pid, ts->pid);
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != EXIT_CODE)
		snprintf(why, sizeof(why), "ac_exitcode 0x%x is not exit(%d)",
			 ts->exitcode, EXIT_CODE);
	else {
		kb_pass(name);
		return;
	}
	kb_fail(name, why);
}

/*
 * One attempt: fork a child that exits and wait for its record. Other
 * tasks exiting meanwhile may overrun the socket (ENOBUFS, counted in
 * *@drops) and take our record with them.
 */
static int exit_attempt(struct kb_nl *nl, struct kb_ts_reply *r, pid_t *pid,
			int *drops)
{
	pid_t child = kb_children_fork(&helpers, exit_child, NULL);
	int err;

	*pid = child;
	if (child < 0)
		return child;
	err = wait_exit_record(nl, child, r, drops);
	waitpid(child, NULL, 0);
	kb_children_forget(&helpers, child);
	return err;
}

static void test_exit_notification(void)
{
	const char *name = "exit_notification";
	char cpus[256], why[160];
	int err, drops = 0, tries;
	struct kb_ts_reply r;
	struct kb_nl nl;
	pid_t child = -1;

	if (skip_netlink_test(name, true))
		return;
	if (kb_read_file("/sys/devices/system/cpu/online", cpus, sizeof(cpus)))
		snprintf(cpus, sizeof(cpus), "0-%ld", sysconf(_SC_NPROCESSORS_CONF) - 1);
	if (!open_ts(name, &nl, 4 << 20, 500))
		return;
	err = kb_taskstats_listener(&nl, true, cpus);
	if (err) {
		snprintf(why, sizeof(why), "TASKSTATS_CMD_ATTR_REGISTER_CPUMASK %.64s: %s",
			 cpus, strerror(-err));
		kb_fail(name, why);
		kb_nl_close(&nl);
		return;
	}
	for (tries = 0; tries < 3; tries++) {
		err = exit_attempt(&nl, &r, &child, &drops);
		if (err != -ETIMEDOUT || !drops)
			break;
	}
	kb_taskstats_listener(&nl, false, cpus);
	kb_nl_close(&nl);
	if (err == -ETIMEDOUT && drops) {
		snprintf(why, sizeof(why), "exit records of other tasks overran the socket (%d ENOBUFS) in %d attempts",
			 drops, tries);
		kb_skip(name, why);
	} else if (err) {
		snprintf(why, sizeof(why), "no exit record for pid %d: %s",
			 child, strerror(-err));
		kb_fail(name, why);
	} else {
		judge_exit(name, &r, child);
	}
}

/* ---- correctness: cgroupstats ---------------------------------------- */

#define MAX_CGROUP_DIRS	16
#define CGROUP_PATH_MAX	600

struct cgroup_mount {
	char dir[256];
	char opts[260];		/* ",super,options," */
	bool v2;
};

/* Every cgroup mount at the hierarchy root ("/" as mount root). */
static int cgroup_mounts(struct cgroup_mount *mnts, int max)
{
	char line[1024], root[256], dir[256], type[32], opts[256];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int n = 0;

	while (f && n < max && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*s %*s %*s %255s %255s", root, dir) != 2 ||
		    sscanf(sep, " - %31s %*s %255s", type, opts) != 2 ||
		    strcmp(root, "/"))
			continue;
		if (strcmp(type, "cgroup2") && strcmp(type, "cgroup"))
			continue;
		snprintf(mnts[n].dir, sizeof(mnts[n].dir), "%s", dir);
		snprintf(mnts[n].opts, sizeof(mnts[n].opts), ",%s,", opts);
		mnts[n].v2 = !strcmp(type, "cgroup2");
		n++;
	}
	if (f)
		fclose(f);
	return n;
}

/* Does a v1 mount carry every controller of "cpu,cpuacct"? */
static bool mount_has(const struct cgroup_mount *m, const char *ctrls)
{
	char list[256], tok[260], *save, *t;

	snprintf(list, sizeof(list), "%s", ctrls);
	for (t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		snprintf(tok, sizeof(tok), ",%s,", t);
		if (!strstr(m->opts, tok))
			return false;
	}
	return !m->v2;
}

/*
 * Our own cgroup directories, cgroup2 first, then each v1 hierarchy.
 * The kernel's cgroupstats_build() accepts only directories of a v1
 * ("cgroup") mount and answers EINVAL for cgroup2, so on a pure cgroup2
 * system the check skips. Returns how many were found.
 */
static int own_cgroup_dirs(char dirs[][CGROUP_PATH_MAX], int max)
{
	struct cgroup_mount mnts[MAX_CGROUP_DIRS];
	char line[1024], ctrls[256], path[300];
	int nm = cgroup_mounts(mnts, MAX_CGROUP_DIRS), n = 0, i, pass;
	FILE *f;

	for (pass = 0; pass < 2; pass++) {
		f = fopen("/proc/self/cgroup", "re");
		while (f && n < max && fgets(line, sizeof(line), f)) {
			ctrls[0] = '\0';
			if (sscanf(line, "%*[0-9]:%255[^:]:%299s", ctrls, path) != 2 &&
			    sscanf(line, "%*[0-9]::%299s", path) != 1)
				continue;
			for (i = 0; i < nm && n < max; i++) {
				bool v2 = !ctrls[0];

				if (pass != !v2 || (v2 ? !mnts[i].v2 : !mount_has(&mnts[i], ctrls)))
					continue;
				snprintf(dirs[n++], CGROUP_PATH_MAX, "%s%s", mnts[i].dir,
					 strcmp(path, "/") ? path : "");
				break;
			}
		}
		if (f)
			fclose(f);
	}
	return n;
}

/* CGROUPSTATS_CMD_GET on @dir, retried until the sleepers all sleep. */
static int query_cgroup(struct kb_nl *nl, const char *dir,
			struct kb_cgroupstats *cs)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err, tries;

	if (fd < 0)
		return -errno;
	/* A sleeper just forked may not have reached pause() yet. */
	for (tries = 0; tries < 100; tries++) {
		err = kb_cgroupstats_get(nl, fd, cs);
		if (err || cs->nr_sleeping >= sleepers.n)
			break;
		sleep_ms(100);
	}
	close(fd);
	return err;
}

static void test_cgroupstats(void)
{
	const char *name = "cgroupstats";
	char dirs[MAX_CGROUP_DIRS][CGROUP_PATH_MAX], why[200];
	struct kb_cgroupstats cs;
	int ndirs, i, err = -ENOENT;
	struct kb_nl nl;

	if (skip_netlink_test(name, false))
		return;
	if (!sleepers.n) {
		kb_skip(name, "no sleepers could be spawned");
		return;
	}
	ndirs = own_cgroup_dirs(dirs, MAX_CGROUP_DIRS);
	if (!ndirs) {
		kb_skip(name, "no cgroup hierarchy mounted to query");
		return;
	}
	if (!open_ts(name, &nl, 0, NL_TIMEOUT_MS))
		return;
	/* EINVAL: this kernel does not take that kind of directory. */
	for (i = 0; i < ndirs; i++) {
		err = query_cgroup(&nl, dirs[i], &cs);
		if (err != -EINVAL && err != -EACCES && err != -ENOENT)
			break;
	}
	kb_nl_close(&nl);
	if (err == -EINVAL || err == -EACCES || err == -ENOENT || err == -EPERM) {
		snprintf(why, sizeof(why), "no cgroup directory of ours accepted by CGROUPSTATS_CMD_GET (%s; it takes cgroup v1 directories only)",
			 strerror(-err));
		kb_skip(name, why);
		return;
	}
	if (err) {
		snprintf(why, sizeof(why), "CGROUPSTATS_CMD_GET on %.100s: %s",
			 dirs[i], strerror(-err));
		kb_fail(name, why);
		return;
	}
	kb_figure(name, "cgroup=%s nr_sleeping=%llu nr_running=%llu nr_stopped=%llu nr_uninterruptible=%llu nr_io_wait=%llu sleepers=%zu",
		  dirs[i], (unsigned long long)cs.nr_sleeping,
		  (unsigned long long)cs.nr_running,
		  (unsigned long long)cs.nr_stopped,
		  (unsigned long long)cs.nr_uninterruptible,
		  (unsigned long long)cs.nr_io_wait, sleepers.n);
	if (cs.nr_sleeping >= sleepers.n)
		kb_pass(name);
	else
		kb_fail(name, "nr_sleeping is below the number of our sleepers");
}

/* ---- correctness: errors --------------------------------------------- */

static int reaped_child(void *arg)
{
	(void)arg;
	return 0;
}

/* A pid that belonged to a child we reaped: nobody has it now. */
static pid_t dead_pid(void)
{
	pid_t pid = kb_children_fork(&helpers, reaped_child, NULL);

	if (pid > 0) {
		waitpid(pid, NULL, 0);
		kb_children_forget(&helpers, pid);
	}
	return pid;
}

static void test_error_esrch(void)
{
	const char *name = "error_esrch";
	int err_pid = 0, err_tgid = 0, tries;
	struct kb_ts_reply r;
	struct kb_nl nl;
	char why[160];
	pid_t pid;

	if (skip_netlink_test(name, true) ||
	    !open_ts(name, &nl, 0, NL_TIMEOUT_MS))
		return;
	/* Retry when the pid was taken again between reap and query. */
	for (tries = 0; tries < 5; tries++) {
		pid = dead_pid();
		if (pid < 0)
			break;
		err_pid = kb_taskstats_get(&nl, TASKSTATS_CMD_ATTR_PID, pid, &r);
		err_tgid = kb_taskstats_get(&nl, TASKSTATS_CMD_ATTR_TGID, pid, &r);
		if (err_pid && err_tgid)
			break;
	}
	kb_nl_close(&nl);
	kb_figure(name, "pid=%s tgid=%s", strerror(-err_pid), strerror(-err_tgid));
	if (err_pid == -ESRCH && err_tgid == -ESRCH) {
		kb_pass(name);
		return;
	}
	snprintf(why, sizeof(why), "GET of a pid that does not exist: pid %s, tgid %s (want ESRCH)",
		 strerror(-err_pid), strerror(-err_tgid));
	kb_fail(name, why);
}

/* Send a crafted request with NLM_F_ACK; returns the kernel's answer. */
static int send_crafted(struct kb_nl *nl, struct kb_nl_req *req, size_t len)
{
	int err;

	req->nlh.nlmsg_flags |= NLM_F_ACK;
	err = kb_nl_send(nl, req->buf, len);
	return err ? err : kb_nl_wait_ack(nl, req->nlh.nlmsg_seq);
}

static const char *answer_name(int ans)
{
	static char buf[4][48];
	static int i;

	i = (i + 1) % 4;
	if (ans == 1)
		return "accepted";
	if (ans == 0)
		return "ack";
	if (ans == -EAGAIN)
		return "no-reply";
	snprintf(buf[i], sizeof(buf[i]), "%s", strerror(-ans));
	return buf[i];
}

static void test_error_malformed(void)
{
	const char *name = "error_malformed";
	int no_attr, short_attr, bad_cmd, truncated, after;
	struct kb_nl_req req;
	struct kb_ts_reply r;
	uint16_t short_pid = 1;
	struct kb_nl nl;
	char why[200];

	if (skip_netlink_test(name, true) || !open_ts(name, &nl, 0, 1000))
		return;
	kb_genl_req_init(&req, nl.family, TASKSTATS_CMD_GET,
			 TASKSTATS_GENL_VERSION, kb_nl_next_seq(&nl));
	no_attr = send_crafted(&nl, &req, req.nlh.nlmsg_len);

	kb_genl_req_init(&req, nl.family, TASKSTATS_CMD_GET,
			 TASKSTATS_GENL_VERSION, kb_nl_next_seq(&nl));
	kb_nla_append(&req, TASKSTATS_CMD_ATTR_PID, &short_pid, sizeof(short_pid));
	short_attr = send_crafted(&nl, &req, req.nlh.nlmsg_len);

	kb_genl_req_init(&req, nl.family, 0x7f, TASKSTATS_GENL_VERSION,
			 kb_nl_next_seq(&nl));
	bad_cmd = send_crafted(&nl, &req, req.nlh.nlmsg_len);

	/* A header claiming more bytes than were sent: dropped, not parsed. */
	kb_taskstats_req(&req, nl.family, TASKSTATS_CMD_ATTR_PID, getpid(),
			 kb_nl_next_seq(&nl));
	req.nlh.nlmsg_len += 64;
	truncated = send_crafted(&nl, &req, req.nlh.nlmsg_len - 64);

	after = kb_taskstats_get(&nl, TASKSTATS_CMD_ATTR_PID, getpid(), &r);
	kb_nl_close(&nl);
	kb_figure(name, "no_attr=%s short_attr=%s unknown_cmd=%s truncated=%s get_after=%s",
		  answer_name(no_attr), answer_name(short_attr),
		  answer_name(bad_cmd), answer_name(truncated),
		  answer_name(after));
	if (no_attr >= 0 || short_attr >= 0 || bad_cmd >= 0 ||
	    no_attr == -EAGAIN || short_attr == -EAGAIN || bad_cmd == -EAGAIN)
		snprintf(why, sizeof(why), "a malformed request was not answered with an error");
	else if (truncated >= 0)
		snprintf(why, sizeof(why), "a truncated message was processed");
	else if (after)
		snprintf(why, sizeof(why), "the socket no longer answers a valid GET: %s",
			 strerror(-after));
	else {
		kb_pass(name);
		return;
	}
	kb_fail(name, why);
}

/* ---- correctness: the RFC ioctl on /proc/taskstats -------------------- */

/* Room for any struct taskstats a kernel may copy back. */
#define IOCTL_BUF_SIZE		4096
/* Next number of the RFC's range: no such command. */
#define TASKSTATS_IOC_UNKNOWN	_IO('T', 3)

static bool skip_ioctl_test(const char *name)
{
	if (!access(KB_PROC_TASKSTATS, F_OK))
		return false;
	kb_skip(name, "kernel has no " KB_PROC_TASKSTATS " (RFC ioctl interface, not in mainline)");
	return true;
}

static const char *ioctl_answer(int err)
{
	return err ? strerror(-err) : "ok";
}

/* One ioctl query of @id into @buf; 0 or -errno. */
static int ioctl_query(int fd, unsigned long cmd, uint32_t id, void *buf,
		       struct kb_taskstats *ts)
{
	memset(buf, 0, IOCTL_BUF_SIZE);
	memcpy((char *)buf + KB_TS_AC_PID_OFFSET, &id, sizeof(id));
	if (ioctl(fd, cmd, buf))
		return -errno;
	if (ts)
		kb_taskstats_decode(buf, IOCTL_BUF_SIZE, ts);
	return 0;
}

static int open_proc_taskstats(const char *name)
{
	int fd = open(KB_PROC_TASKSTATS, O_RDONLY | O_CLOEXEC);
	char why[160];

	if (fd < 0) {
		snprintf(why, sizeof(why), "cannot open %s: %s",
			 KB_PROC_TASKSTATS, strerror(errno));
		kb_fail(name, why);
	}
	return fd;
}

/* Fields that cannot change between two queries of a sleeping task. */
static bool same_stats(const struct kb_taskstats *a,
		       const struct kb_taskstats *b, bool per_pid,
		       char *why, size_t whylen)
{
#define DIFFERS(f) (a->f != b->f && \
	snprintf(why, whylen, #f ": ioctl %llu, netlink %llu", \
		 (unsigned long long)a->f, (unsigned long long)b->f))
	if (DIFFERS(version) || DIFFERS(nvcsw) || DIFFERS(nivcsw))
		return false;
	if (per_pid && (DIFFERS(pid) || DIFFERS(ppid) || DIFFERS(uid) ||
			DIFFERS(gid) || DIFFERS(btime)))
		return false;
#undef DIFFERS
	if (per_pid && strcmp(a->comm, b->comm)) {
		snprintf(why, whylen, "comm: ioctl '%s', netlink '%s'",
			 a->comm, b->comm);
		return false;
	}
	return true;
}

/* The ioctl answers what TASKSTATS_CMD_GET answers, for pid and tgid. */
static void test_ioctl_matches_netlink(void)
{
	const char *name = "ioctl_matches_netlink";
	pid_t pid = sleepers.n ? sleepers.pids[0] : getpid();
	struct kb_taskstats by_ioctl, by_ioctl_tgid;
	struct kb_ts_reply r, rt;
	char why[200], *buf;
	struct kb_nl nl;
	int fd, err;

	if (skip_ioctl_test(name) || skip_netlink_test(name, true))
		return;
	fd = open_proc_taskstats(name);
	if (fd < 0)
		return;
	buf = calloc(1, IOCTL_BUF_SIZE);
	if (!buf || !open_ts(name, &nl, 0, NL_TIMEOUT_MS)) {
		if (!buf)
			kb_fail(name, "out of memory");
		free(buf);
		close(fd);
		return;
	}
	err = ioctl_query(fd, TASKSTATS_IOC_ATTR_PID, pid, buf, &by_ioctl);
	if (!err)
		err = ioctl_query(fd, TASKSTATS_IOC_ATTR_TGID, pid, buf,
				  &by_ioctl_tgid);
	if (err)
		snprintf(why, sizeof(why), "ioctl query of pid %d: %s",
			 (int)pid, strerror(-err));
	if (!err) {
		err = kb_taskstats_get(&nl, TASKSTATS_CMD_ATTR_PID, pid, &r);
		if (!err)
			err = kb_taskstats_get(&nl, TASKSTATS_CMD_ATTR_TGID,
					       pid, &rt);
		if (err)
			snprintf(why, sizeof(why), "TASKSTATS_CMD_GET of pid %d: %s",
				 (int)pid, strerror(-err));
	}
	kb_nl_close(&nl);
	free(buf);
	close(fd);
	if (err) {
		kb_fail(name, why);
		return;
	}
	kb_figure(name, "pid=%d version=%u nvcsw=%llu tgid_nvcsw=%llu",
		  (int)pid, by_ioctl.version,
		  (unsigned long long)by_ioctl.nvcsw,
		  (unsigned long long)by_ioctl_tgid.nvcsw);
	if (!same_stats(&by_ioctl, &r.pid.stats, true, why, sizeof(why)) ||
	    !same_stats(&by_ioctl_tgid, &rt.tgid.stats, false, why,
			sizeof(why))) {
		kb_fail(name, why);
		return;
	}
	kb_pass(name);
}

/*
 * The documented errors: ESRCH for a pid nobody has, EFAULT for a
 * pointer the kernel cannot read or cannot write back to, EINVAL for an
 * unknown command; EPERM without CAP_NET_ADMIN. A valid query must still
 * work afterwards.
 */
static void test_ioctl_errors(void)
{
	const char *name = "ioctl_errors";
	int fd, esrch_pid = 0, esrch_tgid = 0, null_ptr, ro_ptr, unknown, after;
	long page = sysconf(_SC_PAGESIZE);
	char why[240], *buf, *ro;
	uint32_t me = getpid();
	int tries;
	pid_t pid;

	if (skip_ioctl_test(name))
		return;
	fd = open_proc_taskstats(name);
	if (fd < 0)
		return;
	buf = calloc(1, IOCTL_BUF_SIZE);
	if (!buf) {
		kb_fail(name, "out of memory");
		close(fd);
		return;
	}
	if (!have_admin) {
		after = ioctl_query(fd, TASKSTATS_IOC_ATTR_PID, me, buf, NULL);
		free(buf);
		close(fd);
		kb_figure(name, "unprivileged_query=%s", ioctl_answer(after));
		if (after == -EPERM)
			kb_pass(name);
		else
			kb_fail(name, "a query without CAP_NET_ADMIN did not fail with EPERM");
		return;
	}
	/* Retry when the pid was taken again between reap and query. */
	for (tries = 0; tries < 5; tries++) {
		pid = dead_pid();
		if (pid < 0)
			break;
		esrch_pid = ioctl_query(fd, TASKSTATS_IOC_ATTR_PID, pid, buf, NULL);
		esrch_tgid = ioctl_query(fd, TASKSTATS_IOC_ATTR_TGID, pid, buf, NULL);
		if (esrch_pid && esrch_tgid)
			break;
	}
	null_ptr = ioctl(fd, TASKSTATS_IOC_ATTR_PID, NULL) ? -errno : 0;
	/* Readable, so the pid is read; not writable, so the copy back fails. */
	ro = mmap(NULL, IOCTL_BUF_SIZE + page, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED) {
		ro_ptr = -ENOMEM;
	} else {
		memcpy(ro + KB_TS_AC_PID_OFFSET, &me, sizeof(me));
		mprotect(ro, IOCTL_BUF_SIZE + page, PROT_READ);
		ro_ptr = ioctl(fd, TASKSTATS_IOC_ATTR_PID, ro) ? -errno : 0;
		munmap(ro, IOCTL_BUF_SIZE + page);
	}
	unknown = ioctl_query(fd, TASKSTATS_IOC_UNKNOWN, me, buf, NULL);
	after = ioctl_query(fd, TASKSTATS_IOC_ATTR_PID, me, buf, NULL);
	free(buf);
	close(fd);
	kb_figure(name, "gone_pid=%s gone_tgid=%s null_pointer=%s read_only_buffer=%s unknown_cmd=%s query_after=%s",
		  ioctl_answer(esrch_pid), ioctl_answer(esrch_tgid),
		  ioctl_answer(null_ptr), ioctl_answer(ro_ptr),
		  ioctl_answer(unknown), ioctl_answer(after));
	if (esrch_pid != -ESRCH || esrch_tgid != -ESRCH)
		snprintf(why, sizeof(why), "query of a pid that does not exist: pid %s, tgid %s (want ESRCH)",
			 ioctl_answer(esrch_pid), ioctl_answer(esrch_tgid));
	else if (null_ptr != -EFAULT || ro_ptr != -EFAULT)
		snprintf(why, sizeof(why), "bad buffer: NULL %s, read-only %s (want EFAULT)",
			 ioctl_answer(null_ptr), ioctl_answer(ro_ptr));
	else if (unknown != -EINVAL)
		snprintf(why, sizeof(why), "unknown command: %s (want EINVAL)",
			 ioctl_answer(unknown));
	else if (after)
		snprintf(why, sizeof(why), "a valid query after the errors failed: %s",
			 ioctl_answer(after));
	else {
		kb_pass(name);
		return;
	}
	kb_fail(name, why);
}

/* ---- the benchmark --------------------------------------------------- */

struct method_result {
	bool done;
	struct kb_stats st;	/* us per process */
	double pass_min_s, pass_med_s, pass_max_s;
};

static struct method_result results[KB_TS_NR_METHODS];

static bool method_needs_admin(enum kb_ts_method m)
{
	return m == KB_TS_NETLINK_PER_PID || m == KB_TS_NETLINK_BATCHED;
}

/* Errors that mean "this kernel or user cannot", not "broken". */
static bool err_is_environment(int err)
{
	return err == -ENOENT || err == -EPERM || err == -EACCES ||
	       err == -ENOTTY || err == -EMFILE || err == -ENFILE ||
	       err == -EPROTONOSUPPORT || err == -EAFNOSUPPORT;
}

enum run_state { RUN_ACTIVE, RUN_SKIP, RUN_FAIL };

/* One method's context, samples and verdict during the interleaved run. */
struct method_run {
	enum run_state state;
	struct kb_ts_ctx *ctx;
	double *samples;	/* us per process, one per timed pass */
	char why[200];
};

static struct method_run runs[KB_TS_NR_METHODS];

static void run_fail(struct method_run *run, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void run_fail(struct method_run *run, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(run->why, sizeof(run->why), fmt, ap);
	va_end(ap);
	run->state = RUN_FAIL;
}

static void prepare_method(enum kb_ts_method m)
{
	struct method_run *run = &runs[m];
	const char *why = method_needs_admin(m) ?
			  netlink_skip_reason(true) : NULL;
	int err;

	run->state = RUN_SKIP;
	if (why) {
		snprintf(run->why, sizeof(run->why), "%s", why);
		return;
	}
	if (!sleepers.n) {
		snprintf(run->why, sizeof(run->why), "no sleepers could be spawned");
		return;
	}
	run->ctx = kb_ts_ctx_new(m, opt.batch, sleepers.pids, sleepers.n, &err,
				 run->why, sizeof(run->why));
	if (!run->ctx) {
		if (!err_is_environment(err))
			run->state = RUN_FAIL;
		return;
	}
	run->samples = calloc(opt.passes, sizeof(*run->samples));
	if (!run->samples)
		ksft_exit_fail_msg("out of memory\n");
	run->state = RUN_ACTIVE;
}

/* One pass of method @m; a broken pass or a missing pid fails it. */
static void one_pass(enum kb_ts_method m, long pass, bool *ok)
{
	struct method_run *run = &runs[m];
	size_t n = sleepers.n, i;
	uint64_t ns;
	long got;

	got = kb_ts_pass(run->ctx, ok, &ns);
	if (got == -ENOBUFS) {
		run_fail(run, "replies lost: ENOBUFS (receive buffer too small for -K %u)",
			 opt.batch);
	} else if (got < 0) {
		run_fail(run, "pass failed: %s", strerror(-got));
	} else if ((size_t)got != n) {
		for (i = 0; i < n && ok[i]; i++)
			;
		run_fail(run, "pass %ld: %zu of %zu live pids unanswered (first: %d)",
			 pass, n - (size_t)got, n, i < n ? sleepers.pids[i] : -1);
	} else if (pass >= 0) {
		run->samples[pass] = (double)ns / 1000.0 / (double)n;
	}
}

/*
 * Passes go round-robin over the methods, so that noise from the rest of
 * the machine (other tests, other tenants) hits every method alike and
 * the ratios stay meaningful.
 */
static void run_interleaved(void)
{
	bool *ok = calloc(sleepers.n ? sleepers.n : 1, sizeof(*ok));
	long p;
	int m;

	if (!ok)
		ksft_exit_fail_msg("out of memory\n");
	for (p = -opt.warmup; p < opt.passes; p++)
		for (m = 0; m < KB_TS_NR_METHODS; m++)
			if (runs[m].state == RUN_ACTIVE)
				one_pass(m, p, ok);
	free(ok);
}

static void add_row(enum kb_ts_method m)
{
	struct method_result *res = &results[m];
	const char *name = kb_ts_method_name(m);
	double scale = (double)sleepers.n / 1e6;	/* us/process -> s/pass */

	res->done = true;
	res->pass_min_s = res->st.min * scale;
	res->pass_med_s = res->st.median * scale;
	res->pass_max_s = res->st.max * scale;
	kb_row_add(name, "us", &res->st);
	kb_row_extra("nr_process", sleepers.n);
	kb_row_extra("pass_s_median", res->pass_med_s);
	kb_row_extra("pass_s_min", res->pass_min_s);
	kb_row_extra("pass_s_max", res->pass_max_s);
	if (results[KB_TS_NETLINK_PER_PID].done)
		kb_row_extra("speedup_vs_per_pid",
			     results[KB_TS_NETLINK_PER_PID].st.median / res->st.median);
	if (m == KB_TS_NETLINK_BATCHED) {
		kb_row_extra("batch", opt.batch);
		kb_row_extra("rcvbuf_bytes", kb_ts_ctx_rcvbuf(runs[m].ctx));
	}
	if (m == KB_TS_PROCFS_PREAD)
		kb_row_extra("chunks", kb_ts_ctx_chunks(runs[m].ctx));
	kb_row_note(kb_ts_method_desc(m));
}

static void report_method(enum kb_ts_method m)
{
	struct method_run *run = &runs[m];
	const char *name = kb_ts_method_name(m);

	if (run->state == RUN_SKIP) {
		kb_skip(name, run->why);
	} else if (run->state == RUN_FAIL) {
		kb_fail(name, run->why);
	} else {
		kb_stats_compute(run->samples, opt.passes, &results[m].st);
		add_row(m);
		if (results[m].st.min > 0)
			kb_pass(name);
		else
			kb_fail(name, "non-positive pass time: the clock or the loop is broken");
	}
	kb_ts_ctx_free(run->ctx);
	run->ctx = NULL;
	free(run->samples);
	run->samples = NULL;
}

static void run_methods(void)
{
	int m;

	for (m = 0; m < KB_TS_NR_METHODS; m++)
		prepare_method(m);
	run_interleaved();
	for (m = 0; m < KB_TS_NR_METHODS; m++)
		report_method(m);
}

/* The seed's table, plus the spread and the ratio to per-pid netlink. */
static void print_table(void)
{
	const struct method_result *base = &results[KB_TS_NETLINK_PER_PID];
	int m;

	ksft_print_msg("%d passes after %ld warm-up, methods interleaved, %s; seconds per pass\n",
		       (int)opt.passes, opt.warmup, KB_CLOCK_NAME);
	ksft_print_msg("%-16s %10s %12s %12s %12s %11s %8s\n", "method",
		       "nr_process", "median_s", "min_s", "max_s", "us/process",
		       "speedup");
	for (m = 0; m < KB_TS_NR_METHODS; m++) {
		const struct method_result *r = &results[m];

		if (!r->done)
			continue;
		char speedup[16] = "-";

		if (base->done)
			snprintf(speedup, sizeof(speedup), "%.2fx",
				 base->st.median / r->st.median);
		ksft_print_msg("%-16s %10zu %12.9f %12.9f %12.9f %11.3f %8s\n",
			       kb_ts_method_name(m), sleepers.n, r->pass_med_s,
			       r->pass_min_s, r->pass_max_s, r->st.median,
			       speedup);
	}
}

/* ---- sleepers -------------------------------------------------------- */

static void spawn_sleepers(void)
{
	struct kb_proc_limits lim;
	long want = opt.procs;
	int err;

	err = kb_proc_limits(&lim);
	if (err)
		ksft_exit_fail_msg("cannot read process limits: %s\n", strerror(-err));
	kb_figure("limits", "pid_max=%ld threads_max=%ld threads_now=%ld rlimit_nproc=%ld nproc_exempt=%d available=%ld bound=%s",
		  lim.pid_max, lim.threads_max, lim.nr_threads, lim.nproc_soft,
		  lim.nproc_exempt, lim.available, lim.bound);
	if (want > lim.available) {
		ksft_print_msg("asked for %ld processes, %s leaves room for %ld: using %ld\n",
			       want, lim.bound, lim.available, lim.available);
		want = lim.available;
	}
	err = kb_children_spawn(&sleepers, want, SLEEPER_COMM);
	if (err)
		ksft_print_msg("fork failed after %zu sleepers: %s\n", sleepers.n,
			       strerror(-err));
	kb_param_num("nr_process", sleepers.n);
	kb_param_num("nr_process_requested", opt.procs);
	kb_param_str("process_limit", lim.bound);
	ksft_print_msg("%zu sleeping children (comm '%s')\n", sleepers.n,
		       SLEEPER_COMM);
}

static void test_sleepers_reaped(void)
{
	kb_children_release(&sleepers);
	kb_children_release(&helpers);
	kb_result(kb_children_none_left(), "children_reaped",
		  "a child is left after killing and reaping all of them");
}

/* ---- command line ---------------------------------------------------- */

static void usage(FILE *f)
{
	int m;

	fprintf(f,
"Usage: %s [OPTION]...\n"
"Spawn N sleeping processes and measure what one pass fetching the\n"
"statistics of all of them costs by each method; check that the taskstats\n"
"interface answers correctly. Prints KTAP: one result per check and per\n"
"method, figures on '# NAME: key=value' lines, then the seed's table.\n"
"\n"
"  -N, --processes=N  sleeping processes (default %d, %d with --full,\n"
"                     %d when KSFT_MACHINE_SLOW=yes); capped by pid_max,\n"
"                     threads-max and RLIMIT_NPROC\n"
"  -K, --batch=K      requests per sendmsg for netlink_batched (default %d)\n"
"  -p, --passes=P     timed passes per method (default %d; %d when slow)\n"
"  -w, --warmup=W     untimed passes first (default %d)\n"
"      --full         the seed's larger run (-N %d)\n"
"      --json=FILE    write the results as kbench JSON to FILE\n"
"  -h, --help         this help\n"
"\n"
"Methods (KTAP/JSON row names):\n",
		kb_prog(), DEFAULT_PROCS, FULL_PROCS, SLOW_PROCS,
		KB_TS_DEFAULT_BATCH, DEFAULT_PASSES, SLOW_PASSES,
		DEFAULT_WARMUP, FULL_PROCS);
	for (m = 0; m < KB_TS_NR_METHODS; m++)
		fprintf(f, "  %-16s %s\n", kb_ts_method_name(m),
			kb_ts_method_desc(m));
	fprintf(f,
"\n"
"Checks: family_resolves get_self tgid_aggregate delay_accounting\n"
"exit_notification cgroupstats error_esrch error_malformed\n"
"ioctl_matches_netlink ioctl_errors children_reaped\n"
"\n"
"Row figures are microseconds per process (median of the passes) with\n"
"pass_s_* in seconds per pass and speedup_vs_per_pid. Netlink rows need\n"
"CAP_NET_ADMIN and skip without it; ioctl skips unless the kernel has the\n"
"RFC's /proc/taskstats. Exit status: 0 pass, 1 a check failed, 2 bad\n"
"usage, 4 everything skipped.\n");
}

static void parse_options(int argc, char **argv)
{
	enum { OPT_FULL = 256, OPT_JSON };
	static const struct option longopts[] = {
		{ "processes", required_argument, NULL, 'N' },
		{ "batch", required_argument, NULL, 'K' },
		{ "passes", required_argument, NULL, 'p' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "full", no_argument, NULL, OPT_FULL },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opt.batch = KB_TS_DEFAULT_BATCH;
	opt.warmup = DEFAULT_WARMUP;
	while ((c = getopt_long(argc, argv, "N:K:p:w:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'N':
			opt.procs = kb_parse_ll(optarg, "--processes", 1, 4194304);
			opt.procs_set = true;
			break;
		case 'K':
			opt.batch = kb_parse_ll(optarg, "--batch", 1, KB_TS_MAX_BATCH);
			break;
		case 'p':
			opt.passes = kb_parse_ll(optarg, "--passes", 1, 1000000);
			opt.passes_set = true;
			break;
		case 'w':
			opt.warmup = kb_parse_ll(optarg, "--warmup", 0, 1000000);
			break;
		case OPT_FULL:
			opt.full = true;
			break;
		case OPT_JSON:
			opt.json = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			kb_usage_hint();
		}
	}
	if (optind < argc)
		kb_usage_error("unexpected argument '%s'", argv[optind]);
	if (!opt.procs_set)
		opt.procs = opt.full ? FULL_PROCS :
			    kb_machine_slow() ? SLOW_PROCS : DEFAULT_PROCS;
	if (!opt.passes_set)
		opt.passes = kb_machine_slow() ? SLOW_PASSES : DEFAULT_PASSES;
	if (kb_machine_slow())
		burn_scale = 0.5;
}

#define NR_CHECKS	11	/* the correctness tests, children_reaped included */

int main(int argc, char **argv)
{
	kb_init("taskstats", argc, argv);
	parse_options(argc, argv);
	have_admin = kb_have_cap(CAP_NET_ADMIN);
	kb_param_num("passes", opt.passes);
	kb_param_num("warmup", opt.warmup);
	kb_param_num("batch", opt.batch);
	kb_param_num("cap_net_admin", have_admin);

	ksft_print_header();
	ksft_set_plan(NR_CHECKS + KB_TS_NR_METHODS);
	if (!have_admin)
		ksft_print_msg("no CAP_NET_ADMIN: TASKSTATS_CMD_GET checks and netlink rows skip\n");
	spawn_sleepers();

	test_family();
	test_get_self();
	test_tgid_aggregate();
	test_delay_accounting();
	test_exit_notification();
	test_cgroupstats();
	test_error_esrch();
	test_error_malformed();
	test_ioctl_matches_netlink();
	test_ioctl_errors();

	run_methods();
	print_table();
	test_sleepers_reaped();
	kb_finish(opt.json);
}
