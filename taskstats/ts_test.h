/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of taskstats share: the run's context and the functions
 * one file offers the others. One file per part:
 *  - taskstats.c: main(), the options, the table;
 *  - ts_children.c: the sleepers and the checks' helper children;
 *  - ts_checks.c: the checks of the genetlink family;
 *  - ts_ioctl.c: the checks of the RFC's /proc/taskstats ioctl;
 *  - ts_rows.c: the method rows and the BPF iterator check.
 * KTAP results are printed by taskstats.c only (kselftest.h's counters
 * are per file).
 */
#ifndef TS_TEST_H
#define TS_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kbench.h"
#include "cgroup.h"
#include "children.h"
#include "netlink.h"
#include "proc.h"
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
	double *units;		/* exact mode: us per process, one per unit */
	size_t nunits;		/* units per pass */
	struct kb_stats st;	/* the row: of the units in exact mode */
	struct kb_stats pass_st;	/* of the passes (pass_s_*) */
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
	/*
	 * Exact mode (QEMU's instruction counter): the row's samples are the
	 * units of the passes (a pid's query, a batch), not whole passes.
	 */
	bool per_unit;
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

/* ---- taskstats.c ------------------------------------------------------ */

/*
 * The sleepers, spawned by the first test that needs them (a pass over
 * their pids). Bails out when the process limits cannot be read.
 */
struct kb_children *get_sleepers(struct ctx *c);

/* ---- ts_children.c: the children we make --------------------------------- */

void sleep_ms(long ms);
/* Burn @ms of this thread's CPU time. */
void burn_cpu_ms(long ms);
/* Kill and reap one helper child. */
void end_helper(struct ctx *c, pid_t pid);
/* Read what a child sends when it is ready, within 30 s. 0 or -errno. */
int wait_ready(int fd, void *buf, size_t size);
/* Wait until task @tid sleeps, its counters still. 0 or -errno. */
int wait_at_rest(pid_t tid, struct kb_proc_task *p);
/* A helper child that pauses until killed. */
int rest_child(void *arg);
/* A pid that belonged to a child we reaped: nobody has it now. */
pid_t dead_pid(struct ctx *c);

/* ---- ts_checks.c: what every netlink check needs, and the checks -------- */

/*
 * KSFT_PASS when the netlink tests can run, else KSFT_SKIP (no TASKSTATS
 * family: CONFIG_TASKSTATS off; no CAP_NET_ADMIN for @needs_admin) or
 * KSFT_FAIL (the lookup broke) with the reason in @why.
 */
int netlink_ready(const struct ctx *c, bool needs_admin, char *why,
		  size_t len);
/* A socket on the TASKSTATS family. KSFT_PASS, or the verdict on error. */
int open_ts(struct kb_nl *nl, size_t rcvbuf, unsigned int timeout_ms,
	    char *why, size_t len);
/* A failed TASKSTATS_CMD_GET: the verdict, "WHAT: error" in @why. */
int get_failed(int err, const char *what, char *why, size_t len);
/* KSFT_PASS when taskstats' @ts agrees with /proc's @p on @what. */
int against_proc(const struct ctx *c, const struct kb_ts_stats *ts,
		 const struct kb_proc_task *p, unsigned int what,
		 const char *label, char *why, size_t len);
/* A request's answer by name: "ack", "ESRCH", "no-reply". */
const char *answer_name(int ans);

/* The table's checks, one per file of the genetlink family's topic. */
int test_family_resolves(void *arg, char *why, size_t len);
int test_get_self(void *arg, char *why, size_t len);
int test_tgid_aggregate(void *arg, char *why, size_t len);
int test_delay_accounting(void *arg, char *why, size_t len);
int test_exit_notification(void *arg, char *why, size_t len);
int test_cgroupstats(void *arg, char *why, size_t len);
int test_error_esrch(void *arg, char *why, size_t len);
int test_error_malformed(void *arg, char *why, size_t len);

/* ---- ts_ioctl.c: the RFC ioctl ------------------------------------------ */

int test_ioctl_matches_netlink(void *arg, char *why, size_t len);
int test_ioctl_errors(void *arg, char *why, size_t len);

/* ---- ts_rows.c: the method rows and the BPF iterator -------------------- */

/* The row of method @m (every selected method timed once, interleaved). */
int method_row(void *ctx, int m, char *why, size_t len);
/* The seed's table, plus the spread and the ratio to per-pid netlink. */
void print_table(const struct ctx *c);
int test_bpf_iter_matches_netlink(void *arg, char *why, size_t len);

/* ---- ts_children.c: last ------------------------------------------------ */

/* Every child we made is gone once we kill and reap them. */
int test_children_reaped(void *arg, char *why, size_t len);

#endif /* TS_TEST_H */
