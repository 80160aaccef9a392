/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The command line: the options every program shares, the program's own,
 * the decimal value parsers and the usage error (exit status 2).
 */
#ifndef KBENCH_CLI_H
#define KBENCH_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "compat.h"
#include "test.h"

/* Exit code for bad command-line input: not 0, not KSFT_SKIP (4). */
#define KB_CLI_EXIT_USAGE	2

/*
 * Value parsers. Numbers are decimal only, whatever their first digit:
 * "010" is ten, "0x10" is rejected. On bad input they print
 *   PROG: invalid value 'V' for WHAT: REASON
 *   Try 'PROG --help' for more information.
 * to stderr and exit(KB_CLI_EXIT_USAGE).
 */
void kb_cli_set_prog(const char *prog);
const char *kb_cli_prog(void);
__printf(1, 2) _Noreturn void kb_cli_error(const char *fmt, ...);
/* "Try 'PROG --help'..." on stderr, exit(KB_CLI_EXIT_USAGE). */
_Noreturn void kb_cli_hint(void);
long long kb_cli_parse_ll(const char *s, const char *what, long long min,
			  long long max);
/*
 * A decimal number with an optional fraction ("2", "0.25", ".5"; no sign
 * unless @min < 0, no exponent, no hex, no inf/nan), between @min and @max.
 */
double kb_cli_parse_double(const char *s, const char *what, double min,
			   double max);
/*
 * A duration in seconds: a decimal number with an optional unit us, ms,
 * s, m, h or d (default s), between @min and @max seconds.
 */
double kb_cli_parse_seconds(const char *s, const char *what, double min,
			    double max);
/* Durations of at least one second, whole seconds (kb_cli_parse_seconds). */
unsigned long long kb_cli_parse_duration(const char *s, const char *what);
/*
 * A size in bytes: a decimal number (a fraction is allowed: "1.5G") with
 * an optional suffix B, K, M or G (powers of 1024; "KB" and "KiB" spell
 * "K"; any case), between @min and @max. Exact for any value up to
 * ULLONG_MAX; a fraction of a byte is dropped.
 */
unsigned long long kb_cli_parse_size(const char *s, const char *what,
				     unsigned long long min,
				     unsigned long long max);
/* A "" or ",," element of a comma list is a usage error, not "nothing". */
void kb_cli_check_list(const char *list, const char *what);
/*
 * Pick items by name from a comma list ("-t fork,getpid"): @select(name)
 * marks the item and returns false for a name it does not know, which is
 * a usage error naming @what. An empty name ("a,,b", "") is an error too.
 */
void kb_cli_select_names(const char *list, const char *what,
			 bool (*select)(const char *name));

/*
 * What a program tells kb_cli_parse(): its own options, its manual, its
 * table. The shared options are added by the lib and must not appear in
 * @short_opts/@long_opts: -h/--help, -l/--list, -t/--test=NAME[,NAME],
 * --full, --json=FILE, and --no-pin when @placement is set.
 */
struct kb_cli {
	const char *short_opts;		/* the program's own, getopt syntax */
	const struct option *long_opts;	/* the program's own, or NULL */
	/*
	 * Called for each of the program's own options with getopt's
	 * value and optarg; bad values go to kb_cli_error().
	 */
	void (*on_option)(int opt, const char *arg, void *ctx);
	void *ctx;
	/* The manual for -h (to stdout); kb_cli_usage_common() lists ours. */
	void (*usage)(FILE *f, void *ctx);
	const struct kb_test *tests;
	size_t ntests;
	bool placement;			/* accept --no-pin */
};

/* What the shared options asked for. */
struct kb_cli_common {
	bool full;			/* --full */
	const char *json;		/* --json FILE, or NULL */
	bool no_pin;			/* --no-pin */
	bool any_selected;		/* -t was given */
	bool selected[KB_TEST_MAX];	/* per test of the table */
	size_t nselected;
};

/*
 * Parse the whole command line. Every program option goes to
 * cli->on_option. Unknown options and stray arguments are rejected with
 * exit status 2 whatever else is given; -h and -l act only once the whole
 * line has been accepted (so "-l x" is an error, not a list). Without -t
 * every test is selected. Unselected tests are left out of the plan.
 */
void kb_cli_parse(int argc, char **argv, const struct kb_cli *cli,
		  struct kb_cli_common *o);

/* The shared options' lines for a program's manual. */
void kb_cli_usage_common(FILE *f, const struct kb_cli *cli);

/*
 * The run size: @full with --full, @slow when KSFT_MACHINE_SLOW=yes,
 * otherwise @def.
 */
long kb_cli_pick_count(const struct kb_cli_common *o, long def, long full,
		       long slow);

#endif /* KBENCH_CLI_H */
