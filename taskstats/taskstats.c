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
#include <linux/taskstats.h>
#include <string.h>
#include <unistd.h>

#include "ktap.h"
#include "ts_test.h"

/* The sleepers, spawned by the first test that needs them. */
struct kb_children *get_sleepers(struct ctx *c)
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
			  lim.pid_max, lim.threads_max, lim.nr_threads,
			  lim.nproc_soft, lim.nproc_exempt, lim.available,
			  lim.bound);
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
	c->per_unit = kb_env_icount_shift() >= 0;
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
