// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of kbench.h's topics (lib/stats.c, results.c, json.c, cli.c,
 * errno_rule.c, knob.c, cleanup.c) and ktap.h: statistics, percentiles,
 * JSON writer, option value parsers, the shared option parser and test
 * table runner, the errno rule, knob save/restore and the cleanup stack.
 * Each parser check feeds bad values too and expects them rejected with
 * exit status 2.
 * Prints KTAP; run by tests/run.sh (make check). Itself a kb_test table.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ktap.h"

struct unit_ctx {
	const char *json_path;
};

static bool close_to(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b) + 1);
}

/* KSFT_PASS when @ok, else KSFT_FAIL with @why. */
static int verdict(bool ok, char *reason, size_t len, const char *why)
{
	if (ok)
		return KSFT_PASS;
	snprintf(reason, len, "%s", why);
	return KSFT_FAIL;
}

static int stats_known_values(void *ctx, char *reason, size_t len)
{
	double s[] = { 4, 1, 3, 2, 5 };
	struct kb_stats st;

	(void)ctx;
	kb_stats_compute(s, 5, &st);
	return verdict(st.n == 5 && close_to(st.mean, 3) &&
		       close_to(st.median, 3) && close_to(st.min, 1) &&
		       close_to(st.max, 5) && close_to(st.stddev, sqrt(2.5)) &&
		       close_to(st.rsd_pct, sqrt(2.5) / 3 * 100),
		       reason, len, "mean/median/min/max/stddev/rsd wrong");
}

static int stats_even_count_median(void *ctx, char *reason, size_t len)
{
	double s[] = { 10, 40, 20, 30 };
	struct kb_stats st;

	(void)ctx;
	kb_stats_compute(s, 4, &st);
	return verdict(close_to(st.median, 25) && close_to(st.mean, 25),
		       reason, len, "median of 4 values is not 25");
}

static int stats_single_and_empty(void *ctx, char *reason, size_t len)
{
	double one = 7;
	struct kb_stats st;
	int empty;

	(void)ctx;
	empty = kb_stats_compute(&one, 0, &st);
	kb_stats_compute(&one, 1, &st);
	return verdict(empty == -1 && st.n == 1 && st.stddev == 0 &&
		       close_to(st.p99, 7), reason, len,
		       "n=0 must fail, n=1 has stddev 0");
}

/*
 * The most common value and its share: the longest run after sorting,
 * the smallest value of a tie, and a median that falls between two
 * values where the mode does not.
 */
static int stats_mode(void *ctx, char *reason, size_t len)
{
	double s[] = { 18, 0, 18, 130, 0, 0, 18, 0, 130, 0 };
	double tie[] = { 5, 3, 5, 3 };
	double one = 2;
	struct kb_stats st, st_tie, st_one;

	(void)ctx;
	kb_stats_compute(s, ARRAY_SIZE(s), &st);
	kb_stats_compute(tie, ARRAY_SIZE(tie), &st_tie);
	kb_stats_compute(&one, 1, &st_one);
	return verdict(close_to(st.mode, 0) && close_to(st.mode_share, 0.5) &&
		       close_to(st.median, 9) && close_to(st_tie.mode, 3) &&
		       close_to(st_tie.mode_share, 0.5) &&
		       close_to(st_one.mode, 2) &&
		       close_to(st_one.mode_share, 1),
		       reason, len, "mode or its share wrong");
}

static int percentiles_interpolate(void *ctx, char *reason, size_t len)
{
	double s[101];
	int i;

	(void)ctx;
	for (i = 0; i <= 100; i++)
		s[i] = i;
	return verdict(close_to(kb_stats_percentile(s, 101, 50), 50) &&
		       close_to(kb_stats_percentile(s, 101, 99), 99) &&
		       close_to(kb_stats_percentile(s, 101, 99.9), 99.9) &&
		       close_to(kb_stats_percentile(s, 101, 0), 0) &&
		       close_to(kb_stats_percentile(s, 101, 100), 100) &&
		       close_to(kb_stats_percentile(s, 2, 50), 0.5),
		       reason, len, "linear interpolation is off");
}

/* Writes a document with awkward strings; tests/run.sh parses it. */
static int json_write(void *ctx, char *reason, size_t len)
{
	struct unit_ctx *u = ctx;
	struct kb_stats st;
	double s[] = { 1.5, 2.5 };

	kb_stats_compute(s, 2, &st);
	kb_results_param_str("quote\"and\\slash", "tab\there\nnewline");
	kb_results_param_num("nan_param", NAN);
	kb_results_row("row_one", "us", &st);
	kb_results_extra("batch", 1000);
	kb_results_note("two syscalls");
	kb_results_row("row_mode", "us", &st);
	kb_results_mode();
	kb_results_status("row_skipped", "skip", "no \"privilege\"");
	return verdict(!kb_results_write_json(u->json_path), reason, len,
		       "kb_results_write_json failed");
}

/*
 * Runs @fn(@arg) in a child with stdout and stderr to /dev/null; returns
 * its exit status, or -1 for a crash. Usage errors exit from the child.
 */
static int child_exit_code(void (*fn)(const void *arg), const void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -2;
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stderr) ||
		    !freopen("/dev/null", "w", stdout))
			_exit(99);
		fn(arg);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ---- value parsers ----------------------------------------------------- */

static void parse_ll_1_100(const void *s) { kb_cli_parse_ll(s, "-i", 1, 100); }
static void parse_size_pos(const void *s) { kb_cli_parse_size(s, "-m", 1, 1ull << 40); }
static void parse_size_all(const void *s) { kb_cli_parse_size(s, "-m", 0, ~0ull); }
static void parse_dbl_0_10(const void *s) { kb_cli_parse_double(s, "-T", 0, 10); }
static void parse_secs_1m(const void *s) { kb_cli_parse_seconds(s, "-T", 0, 60); }
static void parse_duration(const void *s) { kb_cli_parse_duration(s, "-D"); }

struct bad_value {
	void (*parse)(const void *s);
	const char *value;
};

static const struct bad_value bad_values[] = {
	{ parse_size_pos, "10X" }, { parse_size_pos, "0" },
	{ parse_size_pos, "-5M" }, { parse_size_pos, "0x10" },
	{ parse_size_pos, "1e3" }, { parse_size_pos, "" },
	{ parse_size_pos, "1BB" }, { parse_size_pos, "1Bib" },
	{ parse_size_pos, "1iB" }, { parse_size_pos, "1KBB" },
	{ parse_size_all, "17179869184G" }, { parse_size_all, "18446744073709551616" },
	{ parse_ll_1_100, "12abc" }, { parse_ll_1_100, "0" },
	{ parse_ll_1_100, "0x10" }, { parse_ll_1_100, " 5" },
	{ parse_ll_1_100, "+5" }, { parse_ll_1_100, "5 " },
	{ parse_ll_1_100, "" }, { parse_ll_1_100, "-" },
	{ parse_ll_1_100, "1.5" }, { parse_ll_1_100, "101" },
	{ parse_ll_1_100, "99999999999999999999999" },
	{ parse_dbl_0_10, "inf" }, { parse_dbl_0_10, "nan" },
	{ parse_dbl_0_10, "0x1p3" }, { parse_dbl_0_10, "1e0" },
	{ parse_dbl_0_10, "-1" }, { parse_dbl_0_10, "" },
	{ parse_dbl_0_10, "." }, { parse_dbl_0_10, "1.2.3" },
	{ parse_dbl_0_10, "10.5" }, { parse_dbl_0_10, "abc" },
	{ parse_secs_1m, "5x" }, { parse_secs_1m, "ms" },
	{ parse_secs_1m, "-1" }, { parse_secs_1m, "1 s" },
	{ parse_secs_1m, "2m" }, { parse_secs_1m, "1S" },
	{ parse_duration, "5x" }, { parse_duration, "0.5" },
	{ parse_duration, "0" },
};

static int parsers_reject_invalid(void *ctx, char *reason, size_t len)
{
	size_t i;
	int code;

	(void)ctx;
	for (i = 0; i < ARRAY_SIZE(bad_values); i++) {
		code = child_exit_code(bad_values[i].parse, bad_values[i].value);
		if (code != KB_CLI_EXIT_USAGE) {
			snprintf(reason, len, "bad value #%zu '%s' gave exit status %d, not 2",
				 i, bad_values[i].value, code);
			return KSFT_FAIL;
		}
	}
	return KSFT_PASS;
}

static int parsers_accept_valid(void *ctx, char *reason, size_t len)
{
	(void)ctx;
	return verdict(kb_cli_parse_size("1K", "x", 1, ~0ull) == 1024 &&
		       kb_cli_parse_size("1.5M", "x", 1, ~0ull) == 1572864 &&
		       kb_cli_parse_size("2G", "x", 1, ~0ull) == 2147483648ull &&
		       kb_cli_parse_size("100MiB", "x", 1, ~0ull) == 104857600 &&
		       kb_cli_parse_size("4096", "x", 1, ~0ull) == 4096 &&
		       kb_cli_parse_size("18446744073709551615", "x", 0, ~0ull) == ~0ull &&
		       kb_cli_parse_size("17179869183G", "x", 0, ~0ull) == 17179869183ull << 30 &&
		       kb_cli_parse_size("2kb", "x", 1, ~0ull) == 2048 &&
		       kb_cli_parse_ll("010", "x", 0, 100) == 10 &&
		       kb_cli_parse_ll("-7", "x", -10, 100) == -7 &&
		       close_to(kb_cli_parse_double("0.25", "x", 0, 1), 0.25) &&
		       close_to(kb_cli_parse_double(".5", "x", 0, 1), 0.5) &&
		       close_to(kb_cli_parse_double("-2", "x", -5, 1), -2) &&
		       close_to(kb_cli_parse_seconds("500ms", "x", 0, 10), 0.5) &&
		       close_to(kb_cli_parse_seconds("10us", "x", 0, 10), 1e-5) &&
		       close_to(kb_cli_parse_seconds("1.5", "x", 0, 10), 1.5) &&
		       kb_cli_parse_duration("90", "x") == 90 &&
		       kb_cli_parse_duration("2m", "x") == 120 &&
		       kb_cli_parse_duration("1h", "x") == 3600 &&
		       kb_cli_parse_duration("1d", "x") == 86400,
		       reason, len, "a valid value was misread");
}

/* ---- the shared option parser ---------------------------------------- */

static int noop_test(void *ctx, char *reason, size_t len)
{
	(void)ctx, (void)reason, (void)len;
	return KSFT_PASS;
}

static const struct kb_test fake_tests[] = {
	KB_TEST("alpha", noop_test, "first"),
	KB_TEST("beta", noop_test, "second"),
	KB_TEST("gamma", noop_test, "third"),
};

struct fake_prog {
	long iterations;
	int calls;
};

static void fake_option(const char *arg, void *ctx)
{
	struct fake_prog *p = ctx;

	p->calls++;
	p->iterations = kb_cli_parse_ll(arg, "--iterations", 1, 1000);
}

static const struct kb_cli_opt fake_opts[] = {
	KB_OPT_CALLBACK('i', "iterations", fake_option, "N", "a number"),
	KB_OPT_END(),
};

/* The shared options of a program that takes --no-pin or not. */
static unsigned int fake_common(bool placement)
{
	return placement ? KB_CLI_ALL : KB_CLI_ALL & ~KB_CLI_NO_PIN;
}

/* A command line, NULL-terminated, for kb_cli_parse() in a child. */
struct argv_case {
	const char *argv[8];
	bool placement;
	int want;		/* exit status */
};

static const struct argv_case argv_cases[] = {
	{ { "p", "-l", "x" }, false, KB_CLI_EXIT_USAGE },
	{ { "p", "x" }, false, KB_CLI_EXIT_USAGE },
	{ { "p", "-h", "x" }, false, KB_CLI_EXIT_USAGE },
	{ { "p", "--bogus" }, false, KB_CLI_EXIT_USAGE },
	{ { "p", "-z" }, false, KB_CLI_EXIT_USAGE },
	{ { "p", "-t", "nosuch" }, false, KB_CLI_EXIT_USAGE },
	{ { "p", "-t", "alpha,,beta" }, false, KB_CLI_EXIT_USAGE },
	{ { "p", "-t", "alpha," }, false, KB_CLI_EXIT_USAGE },
	{ { "p", "-t", "" }, false, KB_CLI_EXIT_USAGE },
	{ { "p", "-t" }, false, KB_CLI_EXIT_USAGE },
	{ { "p", "--json" }, false, KB_CLI_EXIT_USAGE },
	{ { "p", "--json=" }, false, KB_CLI_EXIT_USAGE },
	{ { "p", "-i", "0" }, false, KB_CLI_EXIT_USAGE },
	{ { "p", "-i", "010x" }, false, KB_CLI_EXIT_USAGE },
	{ { "p", "--no-pin" }, false, KB_CLI_EXIT_USAGE },
	{ { "p", "--full=yes" }, false, KB_CLI_EXIT_USAGE },
	{ { "p", "-l", "--", "x" }, false, KB_CLI_EXIT_USAGE },
	{ { "p", "-l" }, false, 0 },
	{ { "p", "-h" }, true, 0 },
	{ { "p", "--no-pin", "-l" }, true, 0 },
};

static void parse_case(const void *arg)
{
	const struct argv_case *c = arg;
	struct fake_prog prog = { 0 };
	struct kb_cli cli = {
		.opts = fake_opts, .ctx = &prog,
		.common = fake_common(c->placement),
		.tests = fake_tests, .ntests = ARRAY_SIZE(fake_tests),
	};
	struct kb_cli_common o;
	int argc = 0;

	while (c->argv[argc])
		argc++;
	kb_cli_parse(argc, (char **)c->argv, &cli, &o);
	/* Accepted where it should not have been: not 0, not 2. */
	_exit(3);
}

static int options_reject_bad_lines(void *ctx, char *reason, size_t len)
{
	size_t i, j;
	int code;

	(void)ctx;
	for (i = 0; i < ARRAY_SIZE(argv_cases); i++) {
		code = child_exit_code(parse_case, &argv_cases[i]);
		if (code == argv_cases[i].want)
			continue;
		j = snprintf(reason, len, "exit status %d, want %d, for:", code,
			     argv_cases[i].want);
		for (const char *const *a = argv_cases[i].argv + 1; *a && j < len; a++)
			j += snprintf(reason + j, len - j, " '%s'", *a);
		return KSFT_FAIL;
	}
	return KSFT_PASS;
}

static int options_accept_valid(void *ctx, char *reason, size_t len)
{
	static const char *const words[] = {
		"p", "-i", "010", "--full", "-t", "gamma,alpha", "--json",
		"out.json", "--no-pin", NULL,
	};
	struct fake_prog prog = { 0 };
	struct kb_cli cli = {
		.opts = fake_opts, .ctx = &prog, .common = fake_common(true),
		.tests = fake_tests, .ntests = ARRAY_SIZE(fake_tests),
	};
	struct kb_cli_common o, all;
	/* getopt permutes the pointers (not the strings): copies of them. */
	char *argv[ARRAY_SIZE(words)], *plain[2] = { NULL };

	(void)ctx;
	memcpy(argv, words, sizeof(words));
	memcpy(plain, words, sizeof(*words));
	kb_cli_parse(ARRAY_SIZE(argv) - 1, argv, &cli, &o);
	kb_cli_parse(1, plain, &cli, &all);
	return verdict(prog.iterations == 10 && prog.calls == 1 && o.full &&
		       o.no_pin && o.json && !strcmp(o.json, "out.json") &&
		       o.any_selected && o.nselected == 2 && o.selected[0] &&
		       !o.selected[1] && o.selected[2] &&
		       kb_cli_pick_count(&o, 1, 2, 3) == 2 &&
		       !all.full && !all.json && !all.no_pin &&
		       all.nselected == 3 && all.selected[1] &&
		       kb_test_index(fake_tests, 3, "beta") == 1 &&
		       kb_test_index(fake_tests, 3, "delta") == -1,
		       reason, len, "an accepted command line was misread");
}

/* ---- the table runner --------------------------------------------------- */

static int code_skip(void *ctx, char *reason, size_t len)
{
	(void)ctx;
	snprintf(reason, len, "no widget");
	return KSFT_SKIP;
}

static int code_fail(void *ctx, char *reason, size_t len)
{
	(void)ctx;
	snprintf(reason, len, "widget broke");
	return KSFT_FAIL;
}

static int code_bogus(void *ctx, char *reason, size_t len)
{
	(void)ctx, (void)reason, (void)len;
	return 42;
}

static const struct kb_test runner_tests[] = {
	KB_TEST("t_pass", noop_test, NULL),
	KB_TEST("t_unselected", noop_test, NULL),
	KB_TEST("t_skip", code_skip, NULL),
	KB_TEST("t_fail", code_fail, NULL),
	KB_TEST("t_bogus", code_bogus, NULL),
};

static void run_runner_tests(const void *path)
{
	struct kb_cli_common o = { .nselected = 4 };

	if (!freopen(path, "w", stdout))
		_exit(99);
	/* Number from 1, not from where the parent had got to. */
	memset(&ksft_cnt, 0, sizeof(ksft_cnt));
	o.selected[0] = o.selected[2] = o.selected[3] = o.selected[4] = true;
	kb_ktap_run_tests(runner_tests, ARRAY_SIZE(runner_tests), o.selected,
			  NULL);
	fflush(stdout);
	_exit(0);
}

static int runner_reports_by_name(void *ctx, char *reason, size_t len)
{
	static const char *const want[] = {
		"1..4\n", "ok 1 t_pass\n", "ok 2 t_skip # SKIP no widget\n",
		"# t_fail: widget broke\n", "not ok 3 t_fail\n",
		"not ok 4 t_bogus\n",
	};
	char path[] = "/tmp/kbench-runner-XXXXXX", buf[2048];
	int fd = mkstemp(path);
	size_t i;

	(void)ctx;
	if (fd < 0)
		return verdict(false, reason, len, "cannot create a temporary file");
	close(fd);
	child_exit_code(run_runner_tests, path);
	if (kb_file_read_all(path, buf, sizeof(buf)) < 0)
		buf[0] = '\0';
	unlink(path);
	for (i = 0; i < ARRAY_SIZE(want); i++)
		if (!strstr(buf, want[i])) {
			snprintf(reason, len, "runner output lacks '%.*s'",
				 (int)strlen(want[i]) - 1, want[i]);
			return KSFT_FAIL;
		}
	return verdict(!strstr(buf, "t_unselected"), reason, len,
		       "an unselected test was reported");
}

static void run_all_skipped(const void *arg)
{
	static const struct kb_test skipped[] = {
		KB_TEST("s1", code_skip, NULL), KB_TEST("s2", code_skip, NULL),
	};
	struct kb_cli_common o = { .selected = { true, true }, .nselected = 2 };

	(void)arg;
	memset(&ksft_cnt, 0, sizeof(ksft_cnt));
	kb_ktap_run_tests(skipped, ARRAY_SIZE(skipped), o.selected, NULL);
	kb_ktap_finish(NULL);
}

static void run_one_failed(const void *arg)
{
	static const struct kb_test mixed[] = {
		KB_TEST("s1", code_skip, NULL), KB_TEST("f1", code_fail, NULL),
	};
	struct kb_cli_common o = { .selected = { true, true }, .nselected = 2 };

	(void)arg;
	memset(&ksft_cnt, 0, sizeof(ksft_cnt));
	kb_ktap_run_tests(mixed, ARRAY_SIZE(mixed), o.selected, NULL);
	kb_ktap_finish(NULL);
}

/* Exit status: 4 when every test skipped, 1 when one failed. */
static int finish_exit_status(void *ctx, char *reason, size_t len)
{
	int skipped = child_exit_code(run_all_skipped, NULL);
	int failed = child_exit_code(run_one_failed, NULL);

	(void)ctx;
	if (skipped == KSFT_SKIP && failed == KSFT_FAIL)
		return KSFT_PASS;
	snprintf(reason, len, "all skipped: exit %d (want 4); one failed: exit %d (want 1)",
		 skipped, failed);
	return KSFT_FAIL;
}

/* ---- the errno rule ---------------------------------------------------- */

static bool seccomp_filtered(void)
{
	char buf[4096], *p;

	if (kb_file_read_all("/proc/self/status", buf, sizeof(buf)) < 0)
		return false;
	p = strstr(buf, "\nSeccomp:");
	return p && atoi(p + 9) == 2;
}

/* Whether a user namespace other than the initial one holds us. */
static bool in_child_user_ns(void)
{
	char buf[256];

	if (kb_file_read_all("/proc/self/uid_map", buf, sizeof(buf)) < 0)
		return false;
	return !strstr(buf, "0 4294967295");
}

/* Drop CAP_SYS_ADMIN from the effective set (always allowed). */
static bool drop_sys_admin(void)
{
	cap_value_t admin = CAP_SYS_ADMIN;
	cap_t caps = cap_get_proc();
	bool ok;

	ok = caps && !cap_set_flag(caps, CAP_EFFECTIVE, 1, &admin, CAP_CLEAR) &&
	     !cap_set_proc(caps);
	cap_free(caps);
	return ok && !kb_env_have_cap(CAP_SYS_ADMIN);
}

/*
 * In a child without CAP_SYS_ADMIN, so that "the capability is missing"
 * holds as root too: only EPERM/EACCES may become a SKIP through it.
 */
static void errno_rule_without_cap(const void *arg)
{
	static const int never[] = { ENOSPC, ENOMEM, EAGAIN, EINVAL, EFAULT,
				     EBUSY, ENOENT, EEXIST, 0 };
	bool ok;
	size_t i;

	(void)arg;
	ok = drop_sys_admin() &&
	     kb_errno_is_environment(EPERM, CAP_SYS_ADMIN) &&
	     kb_errno_is_environment(-EACCES, CAP_SYS_ADMIN);
	for (i = 0; i < ARRAY_SIZE(never); i++)
		ok &= !kb_errno_is_environment(never[i], CAP_SYS_ADMIN) &&
		      !kb_errno_is_environment(-never[i], KB_ENV_NO_CAP);
	_exit(ok ? 0 : 1);
}

static int errno_rule(void *ctx, char *reason, size_t len)
{
	bool filtered = seccomp_filtered() || in_child_user_ns();
	char why[160];
	bool ok;

	(void)ctx;
	ok = kb_errno_is_environment(ENOSYS, KB_ENV_NO_CAP) &&
	     kb_errno_is_environment(-ENOSYS, KB_ENV_NO_CAP) &&
	     kb_errno_is_environment(EOPNOTSUPP, KB_ENV_NO_CAP) &&
	     kb_errno_is_environment(ENOTSUP, KB_ENV_NO_CAP) &&
	     kb_errno_is_environment(-EROFS, KB_ENV_NO_CAP);
	/* EPERM/EACCES with no capability to blame: only under a filter. */
	ok &= kb_errno_is_environment(EPERM, KB_ENV_NO_CAP) == filtered &&
	      kb_errno_is_environment(-EACCES, KB_ENV_NO_CAP) == filtered;
	ok &= kb_errno_explain(-ENOSYS, KB_ENV_NO_CAP, "clone3", why, sizeof(why)) &&
	      !strcmp(why, "clone3: Function not implemented (ENOSYS): not supported by this kernel");
	ok &= !kb_errno_explain(ENOSPC, KB_ENV_NO_CAP, "msgget", why, sizeof(why)) &&
	      !strcmp(why, "msgget: No space left on device (ENOSPC)");
	ok &= kb_errno_result(EINVAL, KB_ENV_NO_CAP, "x", why, sizeof(why)) == KSFT_FAIL &&
	      kb_errno_result(ENOSYS, KB_ENV_NO_CAP, "x", why, sizeof(why)) == KSFT_SKIP;
	/* The named extensions add their errnos and nothing else. */
	ok &= kb_errno_lookup_is_environment(-ENOENT, KB_ENV_NO_CAP) &&
	      !kb_errno_lookup_is_environment(ESRCH, KB_ENV_NO_CAP) &&
	      !kb_errno_lookup_is_environment(-EINVAL, KB_ENV_NO_CAP) &&
	      kb_errno_bpf_is_environment(-ESRCH) &&
	      !kb_errno_bpf_is_environment(EBADF);
	if (!ok)
		return verdict(false, reason, len, "an errno was classified wrongly");
	return verdict(!child_exit_code(errno_rule_without_cap, NULL), reason,
		       len, "without CAP_SYS_ADMIN, an errno other than EPERM/EACCES became a SKIP, or EPERM did not");
}

/* ---- /proc/PID/stat ----------------------------------------------------- */

static int proc_stat_parse(void *ctx, char *reason, size_t len)
{
	static const char *const bad[] = {
		"",
		"123",
		"123 (comm",
		"x (comm) S 1 2 3 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 99",
		"123(comm) S 1 2 3 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 99",
		"123 (comm) S 1 2 3 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0",
		"123 (comm) S one 2 3 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 99",
		")( 123 (comm) S 1 2 3",
	};
	const char *good =
		"4242 (a) b (c)) R 17 4242 4200 34816 4242 4194560 100 0 0 0 7 8 0 0 20 0 3 0 12345 9000 500";
	struct kb_proc_stat st, self;
	size_t i;
	bool ok;

	(void)ctx;
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		if (kb_proc_stat_parse(bad[i], &st) != -EBADMSG) {
			snprintf(reason, len, "accepted malformed stat #%zu '%s'",
				 i, bad[i]);
			return KSFT_FAIL;
		}
	ok = !kb_proc_stat_parse(good, &st) && st.pid == 4242 &&
	     !strcmp(st.comm, "a) b (c)") && st.state == 'R' &&
	     st.ppid == 17 && st.pgrp == 4242 && st.session == 4200 &&
	     st.utime == 7 && st.stime == 8 && st.num_threads == 3 &&
	     st.start_time == 12345;
	ok &= !kb_proc_stat_read(0, &self) && self.pid == getpid() &&
	      self.ppid == getppid() && self.pgrp == getpgrp() &&
	      self.session == getsid(0) && self.num_threads == 1;
	return verdict(ok, reason, len, "a valid stat line was misread");
}

/* ---- knobs and cleanup -------------------------------------------------- */

static int knob_set_and_restore(void *ctx, char *reason, size_t len)
{
	char path[] = "/tmp/kbench-knob-XXXXXX", buf[64];
	int fd = mkstemp(path);
	bool ok;

	(void)ctx;
	if (fd < 0 || write(fd, "17\n", 3) != 3)
		return verdict(false, reason, len, "cannot create a temporary file");
	close(fd);
	ok = !kb_knob_set(path, "42");
	ok &= !kb_file_read(path, buf, sizeof(buf)) && !strcmp(buf, "42");
	kb_cleanup_run_all();
	ok &= !kb_file_read(path, buf, sizeof(buf)) && !strcmp(buf, "17");
	ok &= kb_knob_set("/nonexistent/knob", "1") == -ENOENT;
	unlink(path);
	return verdict(ok, reason, len, "the old value was not restored");
}

struct order_log {
	int order[4];
	int n;
};

static struct order_log order_log;

static void record(void *arg)
{
	order_log.order[order_log.n++] = (int)(long)arg;
}

static int cleanup_stack_order(void *ctx, char *reason, size_t len)
{
	int a, b;

	(void)ctx;
	order_log.n = 0;
	a = kb_cleanup_push(record, (void *)1L);
	b = kb_cleanup_push(record, (void *)2L);
	kb_cleanup_push(record, (void *)3L);
	kb_cleanup_pop(b, false);		/* dropped: never runs */
	kb_cleanup_pop(a, true);		/* runs now, once */
	kb_cleanup_run_all();
	kb_cleanup_run_all();
	return verdict(order_log.n == 2 && order_log.order[0] == 1 &&
		       order_log.order[1] == 3, reason, len,
		       "handlers ran in the wrong order or twice");
}

static int cleanup_signal_reraised(void *ctx, char *reason, size_t len)
{
	int status;
	pid_t pid = fork();

	(void)ctx;
	if (pid == 0) {
		kb_cleanup_push(record, (void *)9L);
		kill(getpid(), SIGTERM);
		_exit(1);	/* not reached: re-raised after cleanup */
	}
	waitpid(pid, &status, 0);
	return verdict(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM,
		       reason, len, "the process did not die of SIGTERM");
}

static int clock_overhead_positive(void *ctx, char *reason, size_t len)
{
	(void)ctx;
	return verdict(kb_clock_overhead_ns() > 0, reason, len,
		       "reading the clock took no time");
}

/* KBENCH_ICOUNT: a shift of 0-10, anything else is no icount. */
static int icount_shift_parse(void *ctx, char *reason, size_t len)
{
	static const struct { const char *v; int want; } cases[] = {
		{ "0", 0 }, { "3", 3 }, { "10", 10 }, { "", -1 }, { "11", -1 },
		{ "-1", -1 }, { "1x", -1 }, { "x", -1 },
	};
	size_t i;
	int got;

	(void)ctx;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		setenv("KBENCH_ICOUNT", cases[i].v, 1);
		got = kb_env_icount_shift();
		if (got != cases[i].want) {
			snprintf(reason, len, "KBENCH_ICOUNT='%s' gave %d, want %d",
				 cases[i].v, got, cases[i].want);
			unsetenv("KBENCH_ICOUNT");
			return KSFT_FAIL;
		}
	}
	unsetenv("KBENCH_ICOUNT");
	return verdict(kb_env_icount_shift() == -1, reason, len,
		       "no KBENCH_ICOUNT is not 'real'");
}

#define T(x) KB_TEST(#x, x, NULL)
static const struct kb_test tests[] = {
	T(stats_known_values),
	T(stats_even_count_median),
	T(stats_single_and_empty),
	T(stats_mode),
	T(percentiles_interpolate),
	T(json_write),
	T(parsers_accept_valid),
	T(parsers_reject_invalid),
	T(options_reject_bad_lines),
	T(options_accept_valid),
	T(runner_reports_by_name),
	T(finish_exit_status),
	T(errno_rule),
	T(proc_stat_parse),
	T(knob_set_and_restore),
	T(cleanup_stack_order),
	T(cleanup_signal_reraised),
	T(clock_overhead_positive),
	T(icount_shift_parse),
};
#undef T

int main(int argc, char **argv)
{
	struct unit_ctx u;

	kb_init("unit_kbench", argc, argv);
	if (argc != 2) {
		fprintf(stderr, "usage: %s JSON_OUTPUT_FILE\n", argv[0]);
		return KB_CLI_EXIT_USAGE;
	}
	u.json_path = argv[1];
	ksft_print_header();
	kb_ktap_run_tests(tests, ARRAY_SIZE(tests), NULL, &u);
	kb_ktap_finish(NULL);
}
