/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kbench shared helpers: timing, statistics, result rows (KTAP figure lines
 * and JSON), capabilities, sysctl save/restore, cleanup on exit and on
 * signals, option parsing.
 *
 * This header does not depend on kselftest.h; the KTAP result wrappers that
 * must share kselftest.h's per-file counters live in kbench_ktap.h.
 */
#ifndef KBENCH_H
#define KBENCH_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/capability.h>
#include <sys/types.h>
#include <time.h>

/* Exit code for bad command-line input: not 0, not KSFT_SKIP (4). */
#define KB_EXIT_USAGE	2

/* ---- timing ---------------------------------------------------------- */

/* The one clock every kbench figure is taken with. */
#define KB_CLOCK	CLOCK_MONOTONIC
#define KB_CLOCK_NAME	"CLOCK_MONOTONIC"

static inline uint64_t kb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(KB_CLOCK, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Median cost of one empty kb_now_ns() start/stop pair, in ns. */
double kb_clock_overhead_ns(void);

/* ---- statistics ------------------------------------------------------ */

struct kb_stats {
	size_t n;
	double mean;
	double min;
	double max;
	double median;
	double stddev;		/* sample standard deviation (n - 1) */
	double rsd_pct;		/* stddev / mean * 100 */
	double p90;
	double p99;
	double p999;
};

/* Percentile p (0..100) of sorted[0..n-1], linear interpolation. */
double kb_percentile(const double *sorted, size_t n, double p);

/*
 * Statistics of samples[0..n-1]. The samples are sorted in place.
 * Returns -1 when n == 0.
 */
int kb_stats_compute(double *samples, size_t n, struct kb_stats *st);

/* ---- result rows: KTAP figure lines and the JSON document ------------ */

/*
 * Start a program's result document. @test is the collection's stable
 * program name ("syscall_overhead"). Records the command line, the kernel
 * and the start time, sets stdout line buffered (output is read through
 * pipes and children are forked) and installs the cleanup signal handlers.
 */
void kb_init(const char *test, int argc, char **argv);

/* A free-form figure of the whole run, kept in the JSON "params" object. */
void kb_param_num(const char *key, double value);
void kb_param_str(const char *key, const char *value);

/*
 * Add one result row. Prints the figure line that goes before the row's
 * KTAP result:
 *   # NAME: unit=us n=1000 mean=0.085 median=... min=... max=... stddev=... rsd_pct=...
 * and keeps the row for kb_json_write(). Returns the row index.
 */
int kb_row_add(const char *name, const char *unit, const struct kb_stats *st);

/* Extra numeric figure of the last row (printed and kept). */
void kb_row_extra(const char *key, double value);

/*
 * Extra numeric figure of the last row, kept for the JSON but not printed:
 * for callers that print several figures on one kb_figure() line.
 */
void kb_row_extra_quiet(const char *key, double value);

/* Free-form note of the last row, kept in the JSON ("two syscalls"). */
void kb_row_note(const char *note);

/* Mark the row as skipped / failed in the JSON with a reason. */
void kb_row_status(const char *name, const char *status, const char *reason);

/* Print one "# NAME: key=value ..." line (printf format after "NAME: "). */
void kb_figure(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Write the document to @path ("-" = stdout). Returns 0 or -errno. */
int kb_json_write(const char *path);

/*
 * Extra top-level members of the JSON document (a test that must also
 * write another tool's layout into the same file). kb_json_write() calls
 * @fn after "rows"; @fn writes one or more "key": value members separated
 * by ",\n", with no comma before the first or after the last.
 */
void kb_json_extra(void (*fn)(FILE *f, void *arg), void *arg);

/*
 * Where figure lines (kb_figure, kb_row_add, kb_row_extra) are printed:
 * stdout by default, NULL to keep rows for the JSON document only (a
 * program whose stdout has another tool's format).
 */
void kb_figures_to(FILE *f);

/* Write a JSON string literal with escaping. */
void kb_json_string(FILE *f, const char *s);

/* The command line kb_init() recorded, arguments joined by spaces. */
const char *kb_cmdline(void);

/*
 * uname(2) as JSON members, for a test that writes another tool's layout:
 *   "sysname": "Linux", "nodename": ..., "release": ..., "version": ...,
 *   "machine": ...
 * (no braces, no comma before the first or after the last).
 */
void kb_json_uname(FILE *f);

/* ---- environment ----------------------------------------------------- */

/* KSFT_MACHINE_SLOW=yes (netdev CI, emulated guests): scale work down. */
bool kb_machine_slow(void);

/*
 * Running in a guest under software emulation (KBENCH_GUEST=tcg, set by
 * run_all.sh --kernel): timings there are the emulator's, so judgements
 * of timing shape are not made; figures are still reported.
 */
bool kb_emulated_guest(void);

/* True when @cap is in our effective set (libcap). */
bool kb_have_cap(cap_value_t cap);
const char *kb_cap_name(cap_value_t cap);

/* ---- cleanup --------------------------------------------------------- */

/*
 * Register @fn(@arg) to run at exit and on SIGINT/SIGTERM/SIGHUP/SIGQUIT,
 * newest first, each at most once. Handlers run in signal context: keep
 * them to syscalls (kill, waitpid, unlink, rmdir, msgctl, write).
 * Returns a handle for kb_cleanup_pop() or -1 when the table is full.
 */
int kb_cleanup_push(void (*fn)(void *arg), void *arg);

/* Run (@run) or drop the handler @handle now. */
void kb_cleanup_pop(int handle, bool run);

/* Run every pending handler (also called at exit). */
void kb_cleanup_run_all(void);

/* Block / unblock the cleanup signals around a create-then-remove window. */
void kb_signals_block(void);
void kb_signals_unblock(void);

/* ---- sysctl / procfs knobs ------------------------------------------- */

/*
 * Write @value to the procfs/sysfs file @path after saving its old
 * contents; the old value is written back by the cleanup handlers.
 * Returns 0 or -errno (the file is left untouched on failure).
 */
int kb_knob_set(const char *path, const char *value);

/*
 * Read a whole (pseudo) file into @buf (NUL terminated). Returns the
 * length, or -errno; -EFBIG when it does not fit.
 */
ssize_t kb_read_all(const char *path, char *buf, size_t size);

/* Write @text to @path in one write(). 0 or -errno. */
int kb_write_str(const char *path, const char *text);

/* Read a small procfs/sysfs file, trailing newline removed. 0 or -errno. */
int kb_read_file(const char *path, char *buf, size_t size);

/* Read a file holding one integer. 0 or -errno. */
int kb_read_long(const char *path, long *val);

/* ---- command-line parsing -------------------------------------------- */

/*
 * Parsers for option values. On bad input they print
 *   PROG: invalid value 'V' for WHAT: REASON
 *   Try 'PROG --help' for more information.
 * to stderr and exit(KB_EXIT_USAGE).
 */
void kb_set_prog(const char *prog);
const char *kb_prog(void);
void kb_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
/* "Try 'PROG --help'..." on stderr, exit(KB_EXIT_USAGE): getopt's '?' case. */
void kb_usage_hint(void) __attribute__((noreturn));
long long kb_parse_ll(const char *s, const char *what, long long min,
		      long long max);
/* Sizes with an optional K, M, G suffix (powers of 1024) or B. */
unsigned long long kb_parse_size(const char *s, const char *what,
				 unsigned long long min,
				 unsigned long long max);
/*
 * Pick items by name from a comma list ("-t fork,getpid"): @select(name)
 * marks the item and returns false for a name it does not know, which is
 * a usage error naming @what.
 */
void kb_select_names(const char *list, const char *what,
		     bool (*select)(const char *name));
/* Durations: plain seconds, or s, m, h, d suffix. Returns seconds. */
unsigned long long kb_parse_duration(const char *s, const char *what);

#endif /* KBENCH_H */
