// SPDX-License-Identifier: GPL-2.0
/*
 * A run's results: figure lines and the JSON document. See results.h.
 */
#include "results.h"
#include "clock.h"
#include "env.h"
#include "file.h"
#include "json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define MAX_EXTRA	24
#define MAX_PARAMS	48

struct key_value {
	char key[48];
	char *str;		/* NULL for a number */
	double num;
};

struct row {
	char name[64];
	char unit[16];
	char status[8];
	char *reason;
	char *note;
	bool has_stats;
	bool has_mode;		/* one operation a sample: mode figures */
	struct kb_stats st;
	int nextra;
	struct key_value extra[MAX_EXTRA];
};

static struct {
	const char *test;
	char *cmdline;
	char start[32];
	struct row *rows;
	int nrows;
	int nparams;
	struct key_value params[MAX_PARAMS];
} doc;

static FILE *figure_stream;
static bool figure_stream_set;
static void (*json_extra_fn)(FILE *f, void *arg);
static void *json_extra_arg;

static void iso_time_now(char *buf, size_t size)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static char *join_args(int argc, char **argv)
{
	size_t len = 1, off = 0;
	char *s;
	int i;

	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (i = 0; i < argc; i++)
		off += snprintf(s + off, len - off, "%s%s", i ? " " : "",
				argv[i]);
	return s;
}

void kb_results_start(const char *test, int argc, char **argv)
{
	doc.test = test;
	doc.cmdline = join_args(argc, argv);
	iso_time_now(doc.start, sizeof(doc.start));
}

const char *kb_results_cmdline(void)
{
	return doc.cmdline ? doc.cmdline : "";
}

static struct key_value *param_slot(const char *key)
{
	int i;

	for (i = 0; i < doc.nparams; i++)
		if (!strcmp(doc.params[i].key, key))
			return &doc.params[i];
	if (doc.nparams == MAX_PARAMS)
		return NULL;
	snprintf(doc.params[doc.nparams].key, sizeof(doc.params[0].key),
		 "%s", key);
	return &doc.params[doc.nparams++];
}

void kb_results_param_num(const char *key, double value)
{
	struct key_value *kv = param_slot(key);

	if (kv) {
		free(kv->str);
		kv->str = NULL;
		kv->num = value;
	}
}

void kb_results_param_str(const char *key, const char *value)
{
	struct key_value *kv = param_slot(key);

	if (kv) {
		free(kv->str);
		kv->str = strdup(value ? value : "");
	}
}

static struct row *row_new(const char *name)
{
	struct row *rows, *row;

	rows = realloc(doc.rows, sizeof(*rows) * (doc.nrows + 1));
	if (!rows) {
		perror("kbench: realloc");
		exit(1);
	}
	doc.rows = rows;
	row = &doc.rows[doc.nrows++];
	memset(row, 0, sizeof(*row));
	snprintf(row->name, sizeof(row->name), "%s", name);
	snprintf(row->status, sizeof(row->status), "ok");
	return row;
}

static struct row *row_find(const char *name)
{
	int i;

	for (i = doc.nrows - 1; i >= 0; i--)
		if (!strcmp(doc.rows[i].name, name))
			return &doc.rows[i];
	return NULL;
}

static struct row *last_row(void)
{
	return doc.nrows ? &doc.rows[doc.nrows - 1] : NULL;
}

void kb_results_figures_to(FILE *f)
{
	figure_stream = f;
	figure_stream_set = true;
}

void kb_results_figure(const char *name, const char *fmt, ...)
{
	FILE *f = figure_stream_set ? figure_stream : stdout;
	va_list ap;

	if (!f)
		return;
	fprintf(f, "# %s: ", name);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}

int kb_results_row(const char *name, const char *unit,
		   const struct kb_stats *st)
{
	struct row *row = row_new(name);

	snprintf(row->unit, sizeof(row->unit), "%s", unit);
	row->has_stats = true;
	row->st = *st;
	kb_results_figure(name,
			  "unit=%s n=%zu mean=%.4f median=%.4f min=%.4f max=%.4f stddev=%.4f rsd_pct=%.3f p99=%.4f",
			  unit, st->n, st->mean, st->median, st->min, st->max,
			  st->stddev, st->rsd_pct, st->p99);
	return doc.nrows - 1;
}

void kb_results_mode(void)
{
	struct row *row = last_row();

	if (!row || !row->has_stats)
		return;
	row->has_mode = true;
	kb_results_figure(row->name, "mode=%.4f mode_share=%.3f",
			  row->st.mode, row->st.mode_share);
}

void kb_results_extra_quiet(const char *key, double value)
{
	struct row *row = last_row();
	struct key_value *kv;

	if (!row || row->nextra == MAX_EXTRA)
		return;
	kv = &row->extra[row->nextra++];
	snprintf(kv->key, sizeof(kv->key), "%s", key);
	kv->num = value;
}

void kb_results_extra(const char *key, double value)
{
	struct row *row = last_row();

	if (!row)
		return;
	kb_results_extra_quiet(key, value);
	kb_results_figure(row->name, "%s=%.6g", key, value);
}

void kb_results_note(const char *note)
{
	struct row *row = last_row();

	if (row) {
		free(row->note);
		row->note = strdup(note);
	}
}

void kb_results_status(const char *name, const char *status,
		       const char *reason)
{
	struct row *row = row_find(name);

	if (!row)
		row = row_new(name);
	snprintf(row->status, sizeof(row->status), "%s", status);
	free(row->reason);
	row->reason = reason ? strdup(reason) : NULL;
}

void kb_results_json_extra(void (*fn)(FILE *f, void *arg), void *arg)
{
	json_extra_fn = fn;
	json_extra_arg = arg;
}

/* ---- the JSON document ------------------------------------------------- */

static void json_key_value(FILE *f, const struct key_value *kv)
{
	kb_json_string(f, kv->key);
	fputs(": ", f);
	if (kv->str)
		kb_json_string(f, kv->str);
	else
		kb_json_number(f, kv->num);
}

static void json_stats(FILE *f, const struct kb_stats *st, bool has_mode)
{
	static const char *const keys[] = {
		"mean", "min", "max", "median", "stddev", "rsd_pct",
		"p90", "p99", "p999",
	};
	const double vals[] = {
		st->mean, st->min, st->max, st->median, st->stddev,
		st->rsd_pct, st->p90, st->p99, st->p999,
	};
	size_t i;

	fprintf(f, ", \"n\": %zu", st->n);
	for (i = 0; i < ARRAY_SIZE(vals); i++) {
		fprintf(f, ", \"%s\": ", keys[i]);
		kb_json_number(f, vals[i]);
	}
	if (!has_mode)
		return;
	fputs(", \"mode\": ", f);
	kb_json_number(f, st->mode);
	fputs(", \"mode_share\": ", f);
	kb_json_number(f, st->mode_share);
}

/* ", \"KEY\": \"TEXT\"" when @text is set. */
static void json_member(FILE *f, const char *key, const char *text)
{
	if (!text)
		return;
	fprintf(f, ", \"%s\": ", key);
	kb_json_string(f, text);
}

static void json_row(FILE *f, const struct row *row)
{
	int i;

	fputs("    {\"name\": ", f);
	kb_json_string(f, row->name);
	json_member(f, "status", row->status);
	json_member(f, "reason", row->reason);
	if (row->has_stats) {
		json_member(f, "unit", row->unit);
		json_stats(f, &row->st, row->has_mode);
	}
	json_member(f, "note", row->note);
	if (row->nextra) {
		fputs(", \"extra\": {", f);
		for (i = 0; i < row->nextra; i++) {
			if (i)
				fputs(", ", f);
			json_key_value(f, &row->extra[i]);
		}
		fputc('}', f);
	}
	fputc('}', f);
}

/*
 * "real", or "icount" with its shift when QEMU's instruction counter
 * drives the guest's clocks (KBENCH_ICOUNT=SHIFT, set by the VM runner):
 * then one virtual ns is 2^SHIFT guest instructions' worth of time. With
 * it, how the exact guest was made deterministic (KBENCH_ICOUNT_SETTINGS,
 * the VM runner's words), so that a comparison can tell two setups apart.
 */
static void json_clock_mode(FILE *f)
{
	int shift = kb_env_icount_shift();
	const char *settings = getenv("KBENCH_ICOUNT_SETTINGS");

	if (shift < 0) {
		fputs(", \"clock_mode\": \"real\"", f);
		return;
	}
	fprintf(f, ", \"clock_mode\": \"icount\", \"icount_shift\": %d", shift);
	if (settings && *settings)
		json_member(f, "icount_settings", settings);
}

/*
 * The kernel's boot_id: repetitions of one boot share it, so that a
 * reader tells the boots of a kernel A/B (its replicates) from the
 * repetitions within a boot. null where procfs does not give it.
 */
static void json_boot_id(FILE *f)
{
	char id[64];

	fputs(",\n  \"boot_id\": ", f);
	if (kb_file_read("/proc/sys/kernel/random/boot_id", id, sizeof(id)))
		fputs("null", f);
	else
		kb_json_string(f, id);
}

static void json_machine(FILE *f, const struct utsname *u)
{
	const char *guest = getenv("KBENCH_GUEST");

	const struct kb_json_member kv[] = {
		{ "arch", u->machine }, { "hostname", u->nodename },
	};

	fputc('{', f);
	kb_json_members(f, kv, ARRAY_SIZE(kv));
	/* 32 for an i386 program on an x86_64 kernel: "arch" is the kernel's. */
	fprintf(f, ", \"user_bits\": %zu", sizeof(void *) * 8);
	fprintf(f, ", \"cpus\": %ld, \"guest\": ", sysconf(_SC_NPROCESSORS_ONLN));
	if (guest && *guest)
		kb_json_string(f, guest);
	else
		fputs("null", f);
	fprintf(f, ", \"machine_slow\": %s",
		kb_env_machine_slow() ? "true" : "false");
	json_clock_mode(f);
	fputs("}", f);
}

static void json_header(FILE *f)
{
	struct utsname u;
	const struct kb_json_member kernel[] = {
		{ "sysname", u.sysname }, { "release", u.release },
		{ "version", u.version },
	};
	char end[32];

	uname(&u);
	iso_time_now(end, sizeof(end));
	fputs("{\n  \"schema\": \"kbench-results/1\",\n  \"test\": ", f);
	kb_json_string(f, doc.test);
	fputs(",\n  \"kernel\": {", f);
	kb_json_members(f, kernel, ARRAY_SIZE(kernel));
	fputs("},\n  \"machine\": ", f);
	json_machine(f, &u);
	fputs(",\n  \"date\": ", f);
	kb_json_string(f, doc.start);
	fputs(",\n  \"end_date\": ", f);
	kb_json_string(f, end);
	fputs(",\n  \"cmdline\": ", f);
	kb_json_string(f, doc.cmdline);
	fputs(",\n  \"clock\": ", f);
	kb_json_string(f, KB_CLOCK_NAME);
	json_boot_id(f);
}

static void json_body(FILE *f)
{
	int i;

	fputs(",\n  \"params\": {", f);
	for (i = 0; i < doc.nparams; i++) {
		if (i)
			fputs(", ", f);
		json_key_value(f, &doc.params[i]);
	}
	fputs("},\n  \"rows\": [\n", f);
	for (i = 0; i < doc.nrows; i++) {
		json_row(f, &doc.rows[i]);
		fputs(i + 1 < doc.nrows ? ",\n" : "\n", f);
	}
	fputs("  ]", f);
	if (json_extra_fn) {
		fputs(",\n", f);
		json_extra_fn(f, json_extra_arg);
	}
	fputs("\n}\n", f);
}

int kb_results_write_json(const char *path)
{
	bool to_stdout = !strcmp(path, "-");
	FILE *f = to_stdout ? stdout : fopen(path, "w");
	int err = 0;

	if (!f)
		return -errno;
	json_header(f);
	json_body(f);
	if (fflush(f) || ferror(f))
		err = -errno;
	if (!to_stdout && fclose(f) && !err)
		err = -errno;
	return err;
}
