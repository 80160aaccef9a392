// SPDX-License-Identifier: GPL-2.0
/*
 * The command line. See cli.h.
 */
#include "cli.h"
#include "env.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
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

long kb_cli_pick_count(const struct kb_cli_common *o, long def, long full,
		       long slow)
{
	if (o->full)
		return full;
	return kb_env_machine_slow() ? slow : def;
}

void kb_cli_each_item(const char *list, const char *what,
		      void (*fn)(const char *item, void *arg), void *arg)
{
	size_t len = strlen(list);
	char *copy, *save, *tok;

	if (!len || list[0] == ',' || list[len - 1] == ',' ||
	    strstr(list, ",,"))
		kb_cli_error("invalid value '%s' for %s: an empty item in the list",
			     list, what);
	copy = strdup(list);
	if (!copy) {
		perror("kbench: strdup");
		exit(1);
	}
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		fn(tok, arg);
	free(copy);
}

/* ---- values ------------------------------------------------------------ */

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

/* ---- the shared options ------------------------------------------------- */

/* Filled in by kb_cli_parse(), read by the shared options' callbacks. */
static struct {
	const struct kb_cli *cli;
	struct kb_cli_common *o;
	bool help, list;
} parse;

static void select_test(const char *name, void *arg)
{
	int i = kb_test_index(parse.cli->tests, parse.cli->ntests, name);

	(void)arg;
	if (i < 0)
		kb_cli_error("unknown test '%s' (see --list)", name);
	parse.o->selected[i] = true;
}

static void on_test(const char *list, void *ctx)
{
	(void)ctx;
	kb_cli_each_item(list, "--test", select_test, NULL);
	parse.o->any_selected = true;
}

static void on_json(const char *path, void *ctx)
{
	(void)ctx;
	if (!*path)
		kb_cli_error("invalid value '' for --json: empty file name");
	parse.o->json = path;
}

static void on_full(const char *value, void *ctx)
{
	(void)value;
	(void)ctx;
	parse.o->full = true;
}

static void on_no_pin(const char *value, void *ctx)
{
	(void)value;
	(void)ctx;
	parse.o->no_pin = true;
}

/* The shared options and the KB_CLI_* bit each needs (0: always there). */
static const struct {
	unsigned int bit;
	struct kb_cli_opt opt;
} common_opts[] = {
	{ KB_CLI_TESTS, KB_OPT_CALLBACK('t', "test", on_test, "NAME[,NAME]",
		"run only these tests (repeatable); the\nothers are left out of the plan") },
	{ KB_CLI_TESTS, KB_OPT_FLAG('l', "list", &parse.list,
		"list the tests and exit") },
	{ KB_CLI_FULL, KB_OPT_CALLBACK(0, "full", on_full, NULL,
		"the long run (larger sample counts)") },
	{ KB_CLI_JSON, KB_OPT_CALLBACK(0, "json", on_json, "FILE",
		"write the results as kbench JSON to FILE\n('-' for stdout)") },
	{ KB_CLI_NO_PIN, KB_OPT_CALLBACK(0, "no-pin", on_no_pin, NULL,
		"leave CPU placement to the scheduler\n(default: pinned, see the JSON params)") },
	{ 0, KB_OPT_FLAG('h', "help", &parse.help, "this help") },
};

/* ---- one table of the program's options and ours ------------------------ */

#define MAX_OPTS	64
/* getopt values of the options without a short name: above any char. */
#define LONG_ONLY	0x10000

struct table {
	const struct kb_cli_opt *opt[MAX_OPTS];
	bool *given[MAX_OPTS];	/* the option's own, or its group's */
	size_t n;
	int width;		/* the column the help texts start at */
};

static bool takes_value(const struct kb_cli_opt *o)
{
	return o->kind != KB_CLI_FLAG &&
	       !(o->kind == KB_CLI_CALLBACK && !o->arg);
}

/* "  -i, --iterations=N", "      --affinity[=PROC]" */
static void spec(const struct kb_cli_opt *o, char *buf, size_t size)
{
	int n = snprintf(buf, size, o->short_name ? "  -%c, " : "  %c   ",
			 o->short_name ? o->short_name : ' ');

	n += snprintf(buf + n, size - n, "--%s", o->long_name);
	if (takes_value(o))
		snprintf(buf + n, size - n, o->optional ? "[=%s]" : "=%s",
			 o->arg ? o->arg : "VALUE");
}

/* A program's bug, not the user's: say so loudly. */
static _Noreturn void bad_table(const char *why)
{
	fprintf(stderr, "kbench: %s: bad option table: %s\n", kb_cli_prog(),
		why);
	exit(1);
}

static void add(struct table *t, const struct kb_cli_opt *o, bool *group)
{
	char buf[96];
	int len;

	if (t->n == MAX_OPTS)
		bad_table("too many options");
	t->opt[t->n] = o;
	t->given[t->n++] = o->given ? o->given : group;
	spec(o, buf, sizeof(buf));
	len = (int)strlen(buf) + 2;
	if (len <= 30 && len > t->width)
		t->width = len;
}

static bool common_on(const struct kb_cli *cli, unsigned int bit)
{
	return !bit || (cli->common & bit);
}

static void build_table(const struct kb_cli *cli, struct table *t)
{
	const struct kb_cli_opt *o;
	bool *group = NULL;
	size_t i, j;

	memset(t, 0, sizeof(*t));
	t->width = 20;
	for (o = cli->opts; o && o->kind != KB_CLI_END; o++) {
		if (o->kind == KB_CLI_GROUP)
			group = o->given;
		else
			add(t, o, group);
	}
	for (i = 0; i < ARRAY_SIZE(common_opts); i++)
		if (common_on(cli, common_opts[i].bit))
			add(t, &common_opts[i].opt, NULL);
	for (i = 0; i < t->n; i++)
		for (j = 0; j < i; j++)
			if ((t->opt[i]->short_name &&
			     t->opt[i]->short_name == t->opt[j]->short_name) ||
			    !strcmp(t->opt[i]->long_name, t->opt[j]->long_name))
				bad_table(t->opt[i]->long_name);
	if (cli->ntests > KB_TEST_MAX)
		bad_table("too many tests");
}

/* The getopt_long() view of the table. */
static struct option *getopt_table(const struct table *t, char *shorts,
				   size_t size)
{
	struct option *lo = calloc(t->n + 1, sizeof(*lo));
	size_t i, n = 0;

	if (!lo) {
		perror("kbench: calloc");
		exit(1);
	}
	for (i = 0; i < t->n; i++) {
		const struct kb_cli_opt *o = t->opt[i];
		int has = !takes_value(o) ? no_argument :
			  o->optional ? optional_argument : required_argument;

		lo[i] = (struct option){ o->long_name, has, NULL,
					 o->short_name ? o->short_name :
							 LONG_ONLY + (int)i };
		if (o->short_name && n + 4 < size)
			n += snprintf(shorts + n, size - n, "%c%s", o->short_name,
				      has == no_argument ? "" :
				      has == required_argument ? ":" : "::");
	}
	return lo;
}

static size_t find(const struct table *t, int c)
{
	size_t i;

	if (c >= LONG_ONLY)
		return (size_t)(c - LONG_ONLY);
	for (i = 0; i < t->n && t->opt[i]->short_name != c; i++)
		;
	return i;
}

static bool all_digits(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

/* Store @value by the option's kind; bad values end in kb_cli_error(). */
static void take(const struct kb_cli_opt *o, const char *value, void *ctx)
{
	char what[64];

	snprintf(what, sizeof(what), "--%s", o->long_name);
	switch (o->kind) {
	case KB_CLI_FLAG:
		*(bool *)o->target = true;
		break;
	case KB_CLI_INT:
		*(int *)o->target = (int)kb_cli_parse_ll(value, what, o->min,
							  o->max);
		break;
	case KB_CLI_UINT:
		*(unsigned int *)o->target =
			(unsigned int)kb_cli_parse_ll(value, what, o->min,
						      o->max);
		break;
	case KB_CLI_LONG:
		*(long *)o->target = (long)kb_cli_parse_ll(value, what, o->min,
							    o->max);
		break;
	case KB_CLI_LLONG:
		*(long long *)o->target = kb_cli_parse_ll(value, what, o->min,
							  o->max);
		break;
	case KB_CLI_SIZE:
		*(unsigned long long *)o->target =
			kb_cli_parse_size(value, what, o->min, o->max);
		break;
	case KB_CLI_DOUBLE:
		*(double *)o->target = kb_cli_parse_double(value, what,
							    o->fmin, o->fmax);
		break;
	case KB_CLI_SECONDS:
		*(double *)o->target = kb_cli_parse_seconds(value, what,
							     o->fmin, o->fmax);
		break;
	case KB_CLI_DURATION:
		*(unsigned long long *)o->target =
			kb_cli_parse_duration(value, what);
		break;
	case KB_CLI_STRING:
		if (!*value)
			kb_cli_error("invalid value '' for %s: empty", what);
		*(const char **)o->target = value;
		break;
	case KB_CLI_CALLBACK:
		o->fn(value, ctx);
		break;
	default:
		bad_table(o->long_name);
	}
}

/* ---- the manual ---------------------------------------------------------- */

/* @text's lines, the first after @col - @used blanks, the others at @col. */
static void print_help(const char *text, int col, int used)
{
	const char *nl;

	do {
		nl = strchr(text, '\n');
		printf("%*s%.*s\n", col - used, "",
		       (int)(nl ? nl - text : (long)strlen(text)), text);
		text = nl + 1;
		used = 0;
	} while (nl);
}

static void print_opt(const struct table *t, size_t i)
{
	char buf[96];
	int len;

	spec(t->opt[i], buf, sizeof(buf));
	len = (int)strlen(buf);
	fputs(buf, stdout);
	if (len + 2 > t->width) {
		putchar('\n');
		len = 0;
	}
	print_help(t->opt[i]->help ? t->opt[i]->help : "", t->width, len);
}

static void print_options(const struct kb_cli *cli, const struct table *t)
{
	const struct kb_cli_opt *o;
	size_t i = 0;

	for (o = cli->opts; o && o->kind != KB_CLI_END; o++) {
		if (o->kind == KB_CLI_GROUP)
			printf("%s%s\n", o == cli->opts ? "" : "\n", o->help);
		else
			print_opt(t, i++);
	}
	if (cli->notes)
		printf("%s%s\n", cli->opts && cli->opts->kind != KB_CLI_END ?
		       "\n" : "", cli->notes);
	printf("\nCommon options:\n");
	for (; i < t->n; i++)
		print_opt(t, i);
}

static void usage(const struct kb_cli *cli, const struct table *t)
{
	size_t i;

	printf("Usage: %s %s\n", kb_cli_prog(),
	       cli->synopsis ? cli->synopsis : "[OPTION]...");
	if (cli->about)
		printf("%s\n", cli->about);
	putchar('\n');
	print_options(cli, t);
	printf("\nNumbers are decimal: 010 is ten. KSFT_MACHINE_SLOW=yes scales the\n"
	       "default run down.\n%s\n",
	       cli->exit_status ? cli->exit_status :
	       "Exit status: 0 pass, 1 a test failed, 2 bad usage, 4 everything skipped.");
	if (!cli->ntests)
		return;
	printf("\nTests:");
	for (i = 0; i < cli->ntests; i++)
		printf(" %s", cli->tests[i].name);
	putchar('\n');
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

/* ---- the parser ---------------------------------------------------------- */

/* The value of the option getopt just returned, rt-tests' way if optional. */
static const char *value_of(const struct kb_cli_opt *o, int argc,
			    char **argv)
{
	if (!o->optional || optarg)
		return optarg;
	if (optind < argc && all_digits(argv[optind]))
		return argv[optind++];
	return NULL;
}

int kb_cli_parse(int argc, char **argv, const struct kb_cli *cli,
		 struct kb_cli_common *o)
{
	struct option *longopts;
	char shorts[160] = "";
	struct table t;
	size_t i;
	int c;

	memset(o, 0, sizeof(*o));
	memset(&parse, 0, sizeof(parse));
	parse.cli = cli;
	parse.o = o;
	build_table(cli, &t);
	longopts = getopt_table(&t, shorts, sizeof(shorts));
	optind = 0;	/* glibc: a full reset, also for a second call */
	while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
		i = find(&t, c);
		if (i >= t.n)	/* getopt's '?' or ':': it said what */
			kb_cli_hint();
		if (t.given[i])
			*t.given[i] = true;
		take(t.opt[i], value_of(t.opt[i], argc, argv), cli->ctx);
	}
	free(longopts);
	if (optind < argc && !cli->args)
		kb_cli_error("unexpected argument '%s'", argv[optind]);
	if (parse.help) {
		usage(cli, &t);
		exit(0);
	}
	if (parse.list) {
		list_tests(cli);
		exit(0);
	}
	for (i = 0; i < cli->ntests; i++) {
		if (!o->any_selected)
			o->selected[i] = true;
		o->nselected += o->selected[i];
	}
	return optind;
}
