/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A run's results: the figure lines printed before each KTAP result and
 * the kbench JSON document (kernel, machine, params, rows) written at the
 * end.
 */
#ifndef KBENCH_RESULTS_H
#define KBENCH_RESULTS_H

#include <stdio.h>

#include "compat.h"
#include "stats.h"

/*
 * Start the document of the program @test (the collection's stable name,
 * "syscall_overhead"): the command line and the start time.
 */
void kb_results_start(const char *test, int argc, char **argv);

/* A free-form figure of the whole run, kept in the JSON "params" object. */
void kb_results_param_num(const char *key, double value);
void kb_results_param_str(const char *key, const char *value);

/*
 * Add one result row. Prints the figure line that goes before the row's
 * KTAP result:
 *   # NAME: unit=us n=1000 mean=0.085 median=... min=... max=... stddev=... rsd_pct=...
 * and keeps the row for the JSON document. Returns the row index.
 */
int kb_results_row(const char *name, const char *unit,
		   const struct kb_stats *st);

/*
 * The last row was timed one operation at a time: its figure line and
 * JSON also give the most common value and its share of the samples
 * ("mode", "mode_share"), which exact mode judges by where the share is
 * high enough.
 */
void kb_results_mode(void);

/* Extra numeric figure of the last row (printed and kept). */
void kb_results_extra(const char *key, double value);

/*
 * Extra numeric figure of the last row, kept for the JSON but not printed:
 * for callers that print several figures on one kb_results_figure() line.
 */
void kb_results_extra_quiet(const char *key, double value);

/* Free-form note of the last row, kept in the JSON ("two syscalls"). */
void kb_results_note(const char *note);

/* Mark the row @name skipped / failed in the JSON, with a reason. */
void kb_results_status(const char *name, const char *status,
		       const char *reason);

/* Print one "# NAME: key=value ..." line (printf format after "NAME: "). */
__printf(2, 3)
void kb_results_figure(const char *name, const char *fmt, ...);

/*
 * Where figure lines are printed: stdout by default, NULL to keep rows for
 * the JSON document only (a program whose stdout has another tool's
 * format).
 */
void kb_results_figures_to(FILE *f);

/* Write the document to @path ("-" = stdout). Returns 0 or -errno. */
int kb_results_write_json(const char *path);

/*
 * Extra top-level members of the JSON document (a test that must also
 * write another tool's layout into the same file): called after "rows",
 * @fn writes one or more "key": value members separated by ",\n", with no
 * comma before the first or after the last.
 */
void kb_results_json_extra(void (*fn)(FILE *f, void *arg), void *arg);

/* The command line kb_results_start() recorded, arguments joined by spaces. */
const char *kb_results_cmdline(void);

#endif /* KBENCH_RESULTS_H */
