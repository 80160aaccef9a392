// SPDX-License-Identifier: GPL-2.0
/*
 * The command line. See cli.h.
 */
#include "cli.h"
#include "env.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *prog_name = "kbench";

void kb_cli_set_prog(const char *prog)
{
	prog_name = prog;
}

const char *kb_cli_prog(void)
{
	return prog_name;
}

void kb_cli_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	kb_cli_hint();
}

void kb_cli_hint(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", prog_name);
	exit(KB_CLI_EXIT_USAGE);
}

void kb_cli_check_list(const char *list, const char *what)
{
	size_t len = strlen(list);

	if (!len || list[0] == ',' || list[len - 1] == ',' ||
	    strstr(list, ",,"))
		kb_cli_error("invalid value '%s' for %s: an empty item in the list",
			       list, what);
}

void kb_cli_select_names(const char *list, const char *what,
		     bool (*select)(const char *name))
{
	char *copy, *save, *tok;

	kb_cli_check_list(list, what);
	copy = strdup(list);
	if (!copy) {
		perror("kbench: strdup");
		exit(1);
	}
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		if (!select(tok))
			kb_cli_error("unknown %s '%s' (see --list)", what, tok);
	free(copy);
}

/*
 * Length of the decimal number at the start of @s: digits with at most
 * one '.', at least one digit. 0 when there is none. No sign, exponent,
 * hex or inf/nan: what a user means by a number on a command line.
 */
static size_t decimal_prefix(const char *s)
{
	size_t i = 0, digits = 0;

	while (isdigit((unsigned char)s[i]))
		i++, digits++;
	if (s[i] == '.') {
		i++;
		while (isdigit((unsigned char)s[i]))
			i++, digits++;
	}
	return digits ? i : 0;
}

/* Split "12.5M" into a decimal number and a suffix; -1 on garbage. */
static int split_number(const char *s, double *num, const char **suffix)
{
	size_t len = decimal_prefix(s);
	char buf[64];

	if (!len || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	*num = strtod(buf, NULL);
	if (!isfinite(*num))
		return -1;
	*suffix = s + len;
	return 0;
}

long long kb_cli_parse_ll(const char *s, const char *what, long long min,
		      long long max)
{
	const char *digits = *s == '-' ? s + 1 : s;
	long long v;

	errno = 0;
	if (!*digits || strspn(digits, "0123456789") != strlen(digits))
		kb_cli_error("invalid value '%s' for %s: not a decimal integer",
			       s, what);
	v = strtoll(s, NULL, 10);
	if (errno == ERANGE || v < min || v > max)
		kb_cli_error("invalid value '%s' for %s: must be between %lld and %lld",
			       s, what, min, max);
	return v;
}

double kb_cli_parse_double(const char *s, const char *what, double min,
		       double max)
{
	bool neg = *s == '-' && min < 0;
	const char *suf;
	double v;

	if (split_number(s + neg, &v, &suf) || *suf)
		kb_cli_error("invalid value '%s' for %s: not a decimal number",
			       s, what);
	if (neg)
		v = -v;
	if (!(v >= min && v <= max))
		kb_cli_error("invalid value '%s' for %s: must be between %g and %g",
			       s, what, min, max);
	return v;
}

static const struct {
	const char *suffix;
	double seconds;
} time_units[] = {
	{ "", 1 }, { "s", 1 }, { "ms", 1e-3 }, { "us", 1e-6 },
	{ "m", 60 }, { "h", 3600 }, { "d", 86400 },
};

double kb_cli_parse_seconds(const char *s, const char *what, double min,
			double max)
{
	const char *suf;
	double num;
	size_t i;

	if (split_number(s, &num, &suf))
		kb_cli_error("invalid value '%s' for %s: not a duration", s, what);
	for (i = 0; i < ARRAY_SIZE(time_units); i++)
		if (!strcmp(suf, time_units[i].suffix))
			break;
	if (i == ARRAY_SIZE(time_units))
		kb_cli_error("invalid value '%s' for %s: unknown unit '%s' (use us, ms, s, m, h or d)",
			       s, what, suf);
	num *= time_units[i].seconds;
	if (!(num >= min && num <= max))
		kb_cli_error("invalid value '%s' for %s: must be between %g and %g seconds",
			       s, what, min, max);
	return num;
}

unsigned long long kb_cli_parse_duration(const char *s, const char *what)
{
	return (unsigned long long)kb_cli_parse_seconds(s, what, 1,
						    100.0 * 365 * 86400);
}

static const struct {
	const char *suffix;
	unsigned long long bytes;
} size_units[] = {
	{ "", 1 }, { "B", 1 },
	{ "K", 1ull << 10 }, { "KB", 1ull << 10 }, { "KiB", 1ull << 10 },
	{ "M", 1ull << 20 }, { "MB", 1ull << 20 }, { "MiB", 1ull << 20 },
	{ "G", 1ull << 30 }, { "GB", 1ull << 30 }, { "GiB", 1ull << 30 },
};

/*
 * @s (digits, an optional '.' and digits: decimal_prefix()) times @mult
 * in whole bytes, without going through a double for the integer part so
 * that every value up to ULLONG_MAX is exact. -1 on overflow.
 */
static int decimal_times(const char *s, unsigned long long mult,
			 unsigned long long *bytes)
{
	unsigned long long v = 0;
	double frac = 0, scale = 1;

	for (; isdigit((unsigned char)*s); s++)
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (unsigned int)(*s - '0'), &v))
			return -1;
	if (__builtin_mul_overflow(v, mult, &v))
		return -1;
	if (*s == '.')
		for (s++; isdigit((unsigned char)*s); s++) {
			scale /= 10;
			frac += (*s - '0') * scale;
		}
	/* frac * mult < mult <= 1 GiB: exact enough in a double. */
	if (__builtin_add_overflow(v, (unsigned long long)(frac * mult), &v))
		return -1;
	*bytes = v;
	return 0;
}

unsigned long long kb_cli_parse_size(const char *s, const char *what,
				 unsigned long long min,
				 unsigned long long max)
{
	size_t len = decimal_prefix(s), i;
	unsigned long long bytes;

	if (!len)
		kb_cli_error("invalid value '%s' for %s: not a size", s, what);
	for (i = 0; i < ARRAY_SIZE(size_units); i++)
		if (!strcasecmp(s + len, size_units[i].suffix))
			break;
	if (i == ARRAY_SIZE(size_units))
		kb_cli_error("invalid value '%s' for %s: unknown suffix '%s' (use B, K, M or G)",
			       s, what, s + len);
	if (decimal_times(s, size_units[i].bytes, &bytes) ||
	    bytes < min || bytes > max)
		kb_cli_error("invalid value '%s' for %s: must be between %llu and %llu bytes",
			       s, what, min, max);
	return bytes;
}


long kb_cli_pick_count(const struct kb_cli_common *o, long def, long full,
		       long slow)
{
	if (o->full)
		return full;
	return kb_env_machine_slow() ? slow : def;
}

enum {
	OPT_HELP = 'h',
	OPT_LIST = 'l',
	OPT_TEST = 't',
	/* Long-only shared options: above any char a program may use. */
	OPT_FULL = 0x10000,
	OPT_JSON,
	OPT_NO_PIN,
};

static const struct option common_longopts[] = {
	{ "help", no_argument, NULL, OPT_HELP },
	{ "list", no_argument, NULL, OPT_LIST },
	{ "test", required_argument, NULL, OPT_TEST },
	{ "full", no_argument, NULL, OPT_FULL },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "no-pin", no_argument, NULL, OPT_NO_PIN },
};

static void select_tests(const struct kb_cli *cli, struct kb_cli_common *o,
			 const char *list)
{
	char *copy, *save, *tok;
	int i;

	kb_cli_check_list(list, "--test");
	copy = strdup(list);
	if (!copy) {
		perror("kbench: strdup");
		exit(1);
	}
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		i = kb_test_index(cli->tests, cli->ntests, tok);
		if (i < 0)
			kb_cli_error("unknown test '%s' (see --list)", tok);
		o->selected[i] = true;
	}
	free(copy);
	o->any_selected = true;
}

static size_t count_longopts(const struct option *opts)
{
	size_t n = 0;

	while (opts && opts[n].name)
		n++;
	return n;
}

/* The program's options and ours in one getopt_long() table. */
static struct option *merge_longopts(const struct kb_cli *cli)
{
	size_t own = count_longopts(cli->long_opts), n = 0, i;
	struct option *all;

	all = calloc(own + ARRAY_SIZE(common_longopts) + 1, sizeof(*all));
	if (!all) {
		perror("kbench: calloc");
		exit(1);
	}
	for (i = 0; i < own; i++)
		all[n++] = cli->long_opts[i];
	for (i = 0; i < ARRAY_SIZE(common_longopts); i++)
		if (common_longopts[i].val != OPT_NO_PIN || cli->placement)
			all[n++] = common_longopts[i];
	return all;
}

static void list_tests(const struct kb_cli *cli)
{
	int width = 0, len;
	size_t i;

	for (i = 0; i < cli->ntests; i++) {
		len = (int)strlen(cli->tests[i].name);
		if (len > width)
			width = len;
	}
	for (i = 0; i < cli->ntests; i++)
		printf("%-*s  %s\n", width, cli->tests[i].name,
		       cli->tests[i].desc ? cli->tests[i].desc : "");
}

void kb_cli_usage_common(FILE *f, const struct kb_cli *cli)
{
	size_t i;

	fputs("\nCommon options:\n"
	      "  -t, --test=NAME[,NAME]  run only these tests (repeatable); the\n"
	      "                          others are left out of the plan\n"
	      "  -l, --list              list the tests and exit\n"
	      "      --full              the long run (larger sample counts)\n"
	      "      --json=FILE         write the results as kbench JSON to FILE\n"
	      "                          ('-' for stdout)\n", f);
	if (cli->placement)
		fputs("      --no-pin            leave CPU placement to the scheduler\n"
		      "                          (default: pinned, see the JSON params)\n",
		      f);
	fputs("  -h, --help              this help\n"
	      "\nNumbers are decimal: 010 is ten. KSFT_MACHINE_SLOW=yes scales the\n"
	      "default run down.\n"
	      "Exit status: 0 pass, 1 a test failed, 2 bad usage, 4 everything skipped.\n",
	      f);
	fputs("\nTests:", f);
	for (i = 0; i < cli->ntests; i++)
		fprintf(f, " %s", cli->tests[i].name);
	fputc('\n', f);
}

static void usage_full(const struct kb_cli *cli)
{
	if (cli->usage)
		cli->usage(stdout, cli->ctx);
	kb_cli_usage_common(stdout, cli);
}

static void check_cli(const struct kb_cli *cli)
{
	/* A program's bug, not the user's: say so loudly. */
	if (cli->ntests > KB_TEST_MAX ||
	    (cli->short_opts && strpbrk(cli->short_opts, "hlt"))) {
		fprintf(stderr, "kbench: %s: bad option table (-h, -l, -t are shared; at most %d tests)\n",
			kb_cli_prog(), KB_TEST_MAX);
		exit(1);
	}
}

void kb_cli_parse(int argc, char **argv, const struct kb_cli *cli,
		   struct kb_cli_common *o)
{
	bool help = false, list = false;
	struct option *longopts;
	char shortopts[128];
	size_t i;
	int c;

	check_cli(cli);
	memset(o, 0, sizeof(*o));
	snprintf(shortopts, sizeof(shortopts), "hlt:%s",
		 cli->short_opts ? cli->short_opts : "");
	longopts = merge_longopts(cli);
	optind = 0;	/* glibc: a full reset, also for a second call */
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case OPT_HELP:
			help = true;
			break;
		case OPT_LIST:
			list = true;
			break;
		case OPT_TEST:
			select_tests(cli, o, optarg);
			break;
		case OPT_FULL:
			o->full = true;
			break;
		case OPT_JSON:
			if (!*optarg)
				kb_cli_error("invalid value '' for --json: empty file name");
			o->json = optarg;
			break;
		case OPT_NO_PIN:
			o->no_pin = true;
			break;
		case '?':
		case ':':
			kb_cli_hint();
		default:
			if (!cli->on_option)
				kb_cli_hint();
			cli->on_option(c, optarg, cli->ctx);
		}
	}
	free(longopts);
	if (optind < argc)
		kb_cli_error("unexpected argument '%s'", argv[optind]);
	if (help) {
		usage_full(cli);
		exit(0);
	}
	if (list) {
		list_tests(cli);
		exit(0);
	}
	for (i = 0; i < cli->ntests; i++) {
		if (!o->any_selected)
			o->selected[i] = true;
		o->nselected += o->selected[i];
	}
}
