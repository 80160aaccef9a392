/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The command line, declared: each program gives one table of its options
 * (short and long name, kind, target, range, help), kb_cli_parse() reads
 * the line with it, checks every value against its range and prints the
 * usage from it. The options every program shares (-h, -t, -l, --full,
 * --json, --no-pin) come from here. In the manner of perf's
 * parse-options: one line per option,
 *   KB_OPT_LONG('i', "iterations", &c->iterations, 2, 10000000, "N",
 *		 "samples per row"),
 *
 * Bad input ends the program with a message and a hint on stderr and exit
 * status 2 (KB_CLI_EXIT_USAGE):
 *   PROG: invalid value 'V' for --WHAT: REASON
 *   Try 'PROG --help' for more information.
 * Numbers are decimal only, whatever their first digit: "010" is ten,
 * "0x10" is rejected.
 */
#ifndef KBENCH_CLI_H
#define KBENCH_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "compat.h"
#include "test.h"

/* Exit code for bad command-line input: not 0, not KSFT_SKIP (4). */
#define KB_CLI_EXIT_USAGE	2

/* A number's macro as text, for help strings: KB_CLI_STR(DEFAULT_COUNT). */
#define KB_CLI_STR(x)		KB_CLI_STR_(x)
#define KB_CLI_STR_(x)		#x

enum kb_cli_kind {
	KB_CLI_END,		/* the end of a table */
	KB_CLI_GROUP,		/* a heading of the usage text: @help */
	KB_CLI_FLAG,		/* bool, true when given */
	KB_CLI_INT,		/* int, decimal, in [@min, @max] */
	KB_CLI_UINT,		/* unsigned int, decimal, in [@min, @max] */
	KB_CLI_LONG,		/* long, decimal, in [@min, @max] */
	KB_CLI_LLONG,		/* long long, decimal, in [@min, @max] */
	KB_CLI_SIZE,		/* unsigned long long bytes, K/M/G suffix */
	KB_CLI_DOUBLE,		/* double, decimal, in [@fmin, @fmax] */
	KB_CLI_SECONDS,		/* double seconds, unit us..d, [@fmin, @fmax] */
	KB_CLI_DURATION,	/* unsigned long long whole seconds, >= 1 */
	KB_CLI_STRING,		/* const char *, not empty */
	KB_CLI_CALLBACK,	/* @fn(value, the kb_cli's @ctx) */
};

struct kb_cli_opt {
	int short_name;		/* 'i', or 0 for a long option only */
	const char *long_name;	/* "iterations" */
	enum kb_cli_kind kind;
	void *target;		/* where the value goes (not CALLBACK) */
	long long min, max;	/* integers and sizes */
	double fmin, fmax;	/* DOUBLE and SECONDS */
	const char *arg;	/* the value's name in the usage ("N") */
	const char *help;	/* '\n' starts another line */
	/* CALLBACK: bad values go to kb_cli_error(). */
	void (*fn)(const char *value, void *ctx);
	/*
	 * The value may be left out (rt-tests' "-a [PROC]"): it is the
	 * attached one, else the next word when that is a decimal number,
	 * else NULL (for a CALLBACK).
	 */
	bool optional;
	/* GROUP: set when any option of the group (up to the next) is given */
	bool *given;
};

/*
 * One table line per option. The target's type is checked: a KB_OPT_LONG
 * of an int does not compile (pointer type mismatch).
 */
#define KB_CLI_TARGET(var, type)	(1 ? (var) : (type *)0)
#define KB_OPT_NUM(s, l, kind, var, type, lo, hi, a, h) \
	{ s, l, kind, KB_CLI_TARGET(var, type), .min = (lo), .max = (hi), \
	  .arg = (a), .help = (h) }
#define KB_OPT_REAL(s, l, kind, var, lo, hi, a, h) \
	{ s, l, kind, KB_CLI_TARGET(var, double), .fmin = (lo), .fmax = (hi), \
	  .arg = (a), .help = (h) }

#define KB_OPT_GROUP(h)			{ .kind = KB_CLI_GROUP, .help = (h) }
#define KB_OPT_GROUP_SETS(h, flag) \
	{ .kind = KB_CLI_GROUP, .help = (h), .given = (flag) }
#define KB_OPT_FLAG(s, l, var, h) \
	{ s, l, KB_CLI_FLAG, KB_CLI_TARGET(var, bool), .help = (h) }
#define KB_OPT_INT(s, l, var, lo, hi, a, h) \
	KB_OPT_NUM(s, l, KB_CLI_INT, var, int, lo, hi, a, h)
#define KB_OPT_UINT(s, l, var, lo, hi, a, h) \
	KB_OPT_NUM(s, l, KB_CLI_UINT, var, unsigned int, lo, hi, a, h)
#define KB_OPT_LONG(s, l, var, lo, hi, a, h) \
	KB_OPT_NUM(s, l, KB_CLI_LONG, var, long, lo, hi, a, h)
#define KB_OPT_LLONG(s, l, var, lo, hi, a, h) \
	KB_OPT_NUM(s, l, KB_CLI_LLONG, var, long long, lo, hi, a, h)
#define KB_OPT_SIZE(s, l, var, lo, hi, a, h) \
	KB_OPT_NUM(s, l, KB_CLI_SIZE, var, unsigned long long, lo, hi, a, h)
#define KB_OPT_DOUBLE(s, l, var, lo, hi, a, h) \
	KB_OPT_REAL(s, l, KB_CLI_DOUBLE, var, lo, hi, a, h)
#define KB_OPT_SECONDS(s, l, var, lo, hi, a, h) \
	KB_OPT_REAL(s, l, KB_CLI_SECONDS, var, lo, hi, a, h)
#define KB_OPT_DURATION(s, l, var, a, h) \
	{ s, l, KB_CLI_DURATION, KB_CLI_TARGET(var, unsigned long long), \
	  .arg = (a), .help = (h) }
#define KB_OPT_STRING(s, l, var, a, h) \
	{ s, l, KB_CLI_STRING, KB_CLI_TARGET(var, const char *), .arg = (a), \
	  .help = (h) }
#define KB_OPT_CALLBACK(s, l, func, a, h) \
	{ s, l, KB_CLI_CALLBACK, .fn = (func), .arg = (a), .help = (h) }
#define KB_OPT_CALLBACK_OPTIONAL(s, l, func, a, h) \
	{ s, l, KB_CLI_CALLBACK, .fn = (func), .arg = (a), .help = (h), \
	  .optional = true }
#define KB_OPT_END()			{ .kind = KB_CLI_END }

/* The options every program shares, as a kb_cli's @common bits. */
#define KB_CLI_TESTS	0x1	/* -t/--test=NAME[,NAME], -l/--list */
#define KB_CLI_FULL	0x2	/* --full */
#define KB_CLI_JSON	0x4	/* --json=FILE */
#define KB_CLI_NO_PIN	0x8	/* --no-pin */
#define KB_CLI_ALL	\
	(KB_CLI_TESTS | KB_CLI_FULL | KB_CLI_JSON | KB_CLI_NO_PIN)

/* A program's command line: its options, its manual, its table. */
struct kb_cli {
	const struct kb_cli_opt *opts;	/* ends with KB_OPT_END() */
	void *ctx;			/* for the CALLBACK options */
	unsigned int common;		/* KB_CLI_* shared options it takes */
	const char *synopsis;		/* after "Usage: PROG "; "[OPTION]..." */
	const char *about;		/* what it does, before the options */
	const char *notes;		/* after them */
	const char *exit_status;	/* "Exit status: ..."; the kselftest one */
	bool args;			/* takes arguments after the options */
	const struct kb_test *tests;	/* for -t, -l and the manual */
	size_t ntests;
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
 * Parse the whole command line with @cli. Unknown options and stray
 * arguments are rejected with exit status 2 whatever else is given; -h
 * and -l act only once the whole line has been accepted (so "-l x" is an
 * error, not a list). Without -t every test is selected; unselected tests
 * are left out of the plan. Returns the index of the first argument after
 * the options (argc when there is none; only @cli->args allows one).
 */
int kb_cli_parse(int argc, char **argv, const struct kb_cli *cli,
		 struct kb_cli_common *o);

/*
 * The run size: @full with --full, @slow when KSFT_MACHINE_SLOW=yes,
 * otherwise @def.
 */
long kb_cli_pick_count(const struct kb_cli_common *o, long def, long full,
		       long slow);

/* The program's name in messages (kb_init() sets it from argv[0]). */
void kb_cli_set_prog(const char *prog);
const char *kb_cli_prog(void);

/* "PROG: MESSAGE" and the hint on stderr, exit(KB_CLI_EXIT_USAGE). */
__printf(1, 2) _Noreturn void kb_cli_error(const char *fmt, ...);
/* "Try 'PROG --help'..." on stderr, exit(KB_CLI_EXIT_USAGE). */
_Noreturn void kb_cli_hint(void);

/*
 * The value parsers the table's kinds use, for options whose values a
 * CALLBACK splits (a list of sizes). @what names the option: "--size".
 */
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

/*
 * Call @fn(@item, @arg) for each item of the comma list @list, in order.
 * An empty item ("a,,b", "a,", "") is a usage error naming @what, not
 * "nothing"; an item @fn does not take is @fn's to report.
 */
void kb_cli_each_item(const char *list, const char *what,
		      void (*fn)(const char *item, void *arg), void *arg);

#endif /* KBENCH_CLI_H */
