// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/kbench.c: statistics, percentiles, JSON writer, option
 * value parsers, knob save/restore and the cleanup stack.
 * Prints KTAP; run by tests/run.sh (make check).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kbench_ktap.h"

static bool close_to(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b) + 1);
}

static void test_stats_known_values(void)
{
	double s[] = { 4, 1, 3, 2, 5 };
	struct kb_stats st;

	kb_stats_compute(s, 5, &st);
	kb_result(st.n == 5 && close_to(st.mean, 3) && close_to(st.median, 3) &&
		  close_to(st.min, 1) && close_to(st.max, 5) &&
		  close_to(st.stddev, sqrt(2.5)) &&
		  close_to(st.rsd_pct, sqrt(2.5) / 3 * 100),
		  "stats_known_values", "mean/median/min/max/stddev/rsd wrong");
}

static void test_stats_even_count_median(void)
{
	double s[] = { 10, 40, 20, 30 };
	struct kb_stats st;

	kb_stats_compute(s, 4, &st);
	kb_result(close_to(st.median, 25) && close_to(st.mean, 25),
		  "stats_even_count_median", "median of 4 values is not 25");
}

static void test_stats_single_and_empty(void)
{
	double one = 7;
	struct kb_stats st;
	int empty;

	empty = kb_stats_compute(&one, 0, &st);
	kb_stats_compute(&one, 1, &st);
	kb_result(empty == -1 && st.n == 1 && st.stddev == 0 &&
		  close_to(st.p99, 7), "stats_single_and_empty",
		  "n=0 must fail, n=1 has stddev 0");
}

static void test_percentiles(void)
{
	double s[101];
	int i;

	for (i = 0; i <= 100; i++)
		s[i] = i;
	kb_result(close_to(kb_percentile(s, 101, 50), 50) &&
		  close_to(kb_percentile(s, 101, 99), 99) &&
		  close_to(kb_percentile(s, 101, 99.9), 99.9) &&
		  close_to(kb_percentile(s, 101, 0), 0) &&
		  close_to(kb_percentile(s, 101, 100), 100) &&
		  close_to(kb_percentile(s, 2, 50), 0.5),
		  "percentiles_interpolate", "linear interpolation is off");
}

/* Writes a document with awkward strings; tests/run.sh parses it. */
static void test_json_write(const char *path)
{
	struct kb_stats st;
	double s[] = { 1.5, 2.5 };
	int err;

	kb_stats_compute(s, 2, &st);
	kb_param_str("quote\"and\\slash", "tab\there\nnewline");
	kb_param_num("nan_param", NAN);
	kb_row_add("row_one", "us", &st);
	kb_row_extra("batch", 1000);
	kb_row_note("two syscalls");
	kb_row_status("row_skipped", "skip", "no \"privilege\"");
	err = kb_json_write(path);
	kb_result(!err, "json_write", "kb_json_write failed");
}

/* Runs @fn in a child; returns its exit status, or -1 for a crash. */
static int child_exit_code(void (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		/* Usage errors go to stderr: keep the KTAP clean. */
		if (!freopen("/dev/null", "w", stderr))
			_exit(99);
		fn();
		_exit(0);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void bad_size_unit(void) { kb_parse_size("10X", "-m", 1, 1ull << 40); }
static void bad_size_zero(void) { kb_parse_size("0", "-m", 1, 1ull << 40); }
static void bad_size_neg(void) { kb_parse_size("-5M", "-m", 1, 1ull << 40); }
static void bad_ll_text(void) { kb_parse_ll("12abc", "-i", 1, 100); }
static void bad_ll_range(void) { kb_parse_ll("0", "-i", 1, 100); }
static void bad_duration(void) { kb_parse_duration("5x", "-D"); }

static void test_parsers_accept(void)
{
	kb_result(kb_parse_size("1K", "x", 1, ~0ull) == 1024 &&
		  kb_parse_size("1.5M", "x", 1, ~0ull) == 1572864 &&
		  kb_parse_size("2G", "x", 1, ~0ull) == 2147483648ull &&
		  kb_parse_size("100MiB", "x", 1, ~0ull) == 104857600 &&
		  kb_parse_size("4096", "x", 1, ~0ull) == 4096 &&
		  kb_parse_ll("0x10", "x", 0, 100) == 16 &&
		  kb_parse_duration("90", "x") == 90 &&
		  kb_parse_duration("2m", "x") == 120 &&
		  kb_parse_duration("1h", "x") == 3600 &&
		  kb_parse_duration("1d", "x") == 86400,
		  "parsers_accept_valid", "a valid value was misread");
}

static void test_parsers_reject(void)
{
	void (*bad[])(void) = { bad_size_unit, bad_size_zero, bad_size_neg,
				bad_ll_text, bad_ll_range, bad_duration };
	bool ok = true;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok &= child_exit_code(bad[i]) == KB_EXIT_USAGE;
	kb_result(ok, "parsers_reject_invalid",
		  "an invalid value did not exit with status 2");
}

static void test_knob_restore(void)
{
	char path[] = "/tmp/kbench-knob-XXXXXX", buf[64];
	int fd = mkstemp(path);
	bool ok;

	if (fd < 0 || write(fd, "17\n", 3) != 3) {
		kb_fail("knob_set_and_restore", "cannot create a temporary file");
		return;
	}
	close(fd);
	ok = !kb_knob_set(path, "42");
	ok &= !kb_read_file(path, buf, sizeof(buf)) && !strcmp(buf, "42");
	kb_cleanup_run_all();
	ok &= !kb_read_file(path, buf, sizeof(buf)) && !strcmp(buf, "17");
	ok &= kb_knob_set("/nonexistent/knob", "1") == -ENOENT;
	unlink(path);
	kb_result(ok, "knob_set_and_restore", "the old value was not restored");
}

static int order[4], norder;

static void record(void *arg)
{
	order[norder++] = (int)(long)arg;
}

static void test_cleanup_order(void)
{
	int a, b;

	norder = 0;
	a = kb_cleanup_push(record, (void *)1L);
	b = kb_cleanup_push(record, (void *)2L);
	kb_cleanup_push(record, (void *)3L);
	kb_cleanup_pop(b, false);		/* dropped: never runs */
	kb_cleanup_pop(a, true);		/* runs now, once */
	kb_cleanup_run_all();
	kb_cleanup_run_all();
	kb_result(norder == 2 && order[0] == 1 && order[1] == 3,
		  "cleanup_stack_order", "handlers ran in the wrong order or twice");
}

static void sigterm_child(void)
{
	kb_cleanup_push(record, (void *)9L);
	kill(getpid(), SIGTERM);
	_exit(0);	/* not reached: the signal is re-raised after cleanup */
}

static void test_cleanup_on_signal(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		sigterm_child();
		_exit(1);
	}
	waitpid(pid, &status, 0);
	kb_result(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM,
		  "cleanup_signal_reraised", "the process did not die of SIGTERM");
}

int main(int argc, char **argv)
{
	kb_init("unit_kbench", argc, argv);
	if (argc != 2) {
		fprintf(stderr, "usage: %s JSON_OUTPUT_FILE\n", argv[0]);
		return KB_EXIT_USAGE;
	}
	ksft_print_header();
	ksft_set_plan(11);
	test_stats_known_values();
	test_stats_even_count_median();
	test_stats_single_and_empty();
	test_percentiles();
	test_json_write(argv[1]);
	test_parsers_accept();
	test_parsers_reject();
	test_knob_restore();
	test_cleanup_order();
	test_cleanup_on_signal();
	kb_result(kb_clock_overhead_ns() > 0, "clock_overhead_positive",
		  "reading the clock took no time");
	kb_finish(NULL);
}
