// SPDX-License-Identifier: GPL-2.0
/*
 * kbench shared helpers. See kbench.h for the interface.
 */
#include "kbench.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* ---- timing ---------------------------------------------------------- */

double kb_clock_overhead_ns(void)
{
	enum { ROUNDS = 101, CALLS = 1000 };
	double samples[ROUNDS];
	struct kb_stats st;
	int r, i;

	for (r = 0; r < ROUNDS; r++) {
		uint64_t t0 = kb_now_ns();

		for (i = 0; i < CALLS; i++)
			(void)kb_now_ns();
		samples[r] = (double)(kb_now_ns() - t0) / CALLS;
	}
	kb_stats_compute(samples, ROUNDS, &st);
	return st.median;
}

/* ---- statistics ------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double kb_percentile(const double *sorted, size_t n, double p)
{
	double pos, frac;
	size_t lo;

	if (!n)
		return NAN;
	if (p <= 0)
		return sorted[0];
	if (p >= 100)
		return sorted[n - 1];
	pos = p / 100.0 * (double)(n - 1);
	lo = (size_t)pos;
	frac = pos - (double)lo;
	if (lo + 1 >= n)
		return sorted[n - 1];
	return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

int kb_stats_compute(double *samples, size_t n, struct kb_stats *st)
{
	double sum = 0, sq = 0;
	size_t i;

	memset(st, 0, sizeof(*st));
	if (!n)
		return -1;
	qsort(samples, n, sizeof(*samples), cmp_double);
	for (i = 0; i < n; i++)
		sum += samples[i];
	st->n = n;
	st->mean = sum / (double)n;
	for (i = 0; i < n; i++)
		sq += (samples[i] - st->mean) * (samples[i] - st->mean);
	st->stddev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
	st->rsd_pct = st->mean != 0 ? st->stddev / st->mean * 100.0 : 0;
	st->min = samples[0];
	st->max = samples[n - 1];
	st->median = kb_percentile(samples, n, 50);
	st->p90 = kb_percentile(samples, n, 90);
	st->p99 = kb_percentile(samples, n, 99);
	st->p999 = kb_percentile(samples, n, 99.9);
	return 0;
}

/* ---- result rows ----------------------------------------------------- */

#define KB_MAX_EXTRA	24
#define KB_MAX_PARAMS	48

struct kb_kv {
	char key[48];
	char *str;		/* NULL for a number */
	double num;
};

struct kb_row {
	char name[64];
	char unit[16];
	char status[8];
	char *reason;
	char *note;
	bool has_stats;
	struct kb_stats st;
	int nextra;
	struct kb_kv extra[KB_MAX_EXTRA];
};

static struct {
	const char *test;
	char *cmdline;
	char start[32];
	struct kb_row *rows;
	int nrows;
	int nparams;
	struct kb_kv params[KB_MAX_PARAMS];
} doc;

static const char *prog_name = "kbench";
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

static void install_cleanup_signals(void);

void kb_init(const char *test, int argc, char **argv)
{
	const char *slash = argc > 0 ? strrchr(argv[0], '/') : NULL;

	setvbuf(stdout, NULL, _IOLBF, 0);
	doc.test = test;
	doc.cmdline = join_args(argc, argv);
	iso_time_now(doc.start, sizeof(doc.start));
	kb_set_prog(slash ? slash + 1 : (argc > 0 ? argv[0] : test));
	install_cleanup_signals();
}

static struct kb_kv *param_slot(const char *key)
{
	int i;

	for (i = 0; i < doc.nparams; i++)
		if (!strcmp(doc.params[i].key, key))
			return &doc.params[i];
	if (doc.nparams == KB_MAX_PARAMS)
		return NULL;
	snprintf(doc.params[doc.nparams].key, sizeof(doc.params[0].key),
		 "%s", key);
	return &doc.params[doc.nparams++];
}

void kb_param_num(const char *key, double value)
{
	struct kb_kv *kv = param_slot(key);

	if (kv) {
		free(kv->str);
		kv->str = NULL;
		kv->num = value;
	}
}

void kb_param_str(const char *key, const char *value)
{
	struct kb_kv *kv = param_slot(key);

	if (kv) {
		free(kv->str);
		kv->str = strdup(value ? value : "");
	}
}

static struct kb_row *row_new(const char *name)
{
	struct kb_row *rows, *row;

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

static struct kb_row *row_find(const char *name)
{
	int i;

	for (i = doc.nrows - 1; i >= 0; i--)
		if (!strcmp(doc.rows[i].name, name))
			return &doc.rows[i];
	return NULL;
}

void kb_figures_to(FILE *f)
{
	figure_stream = f;
	figure_stream_set = true;
}

void kb_figure(const char *name, const char *fmt, ...)
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

int kb_row_add(const char *name, const char *unit, const struct kb_stats *st)
{
	struct kb_row *row = row_new(name);

	snprintf(row->unit, sizeof(row->unit), "%s", unit);
	row->has_stats = true;
	row->st = *st;
	kb_figure(name,
		  "unit=%s n=%zu mean=%.4f median=%.4f min=%.4f max=%.4f stddev=%.4f rsd_pct=%.3f p99=%.4f",
		  unit, st->n, st->mean, st->median, st->min, st->max,
		  st->stddev, st->rsd_pct, st->p99);
	return doc.nrows - 1;
}

void kb_row_extra_quiet(const char *key, double value)
{
	struct kb_row *row;
	struct kb_kv *kv;

	if (!doc.nrows)
		return;
	row = &doc.rows[doc.nrows - 1];
	if (row->nextra == KB_MAX_EXTRA)
		return;
	kv = &row->extra[row->nextra++];
	snprintf(kv->key, sizeof(kv->key), "%s", key);
	kv->num = value;
}

void kb_row_extra(const char *key, double value)
{
	if (!doc.nrows)
		return;
	kb_row_extra_quiet(key, value);
	kb_figure(doc.rows[doc.nrows - 1].name, "%s=%.6g", key, value);
}

void kb_row_note(const char *note)
{
	if (doc.nrows) {
		free(doc.rows[doc.nrows - 1].note);
		doc.rows[doc.nrows - 1].note = strdup(note);
	}
}

void kb_row_status(const char *name, const char *status, const char *reason)
{
	struct kb_row *row = row_find(name);

	if (!row)
		row = row_new(name);
	snprintf(row->status, sizeof(row->status), "%s", status);
	free(row->reason);
	row->reason = reason ? strdup(reason) : NULL;
}

void kb_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* JSON has no NaN or infinity: write null for them. */
const char *kb_cmdline(void)
{
	return doc.cmdline ? doc.cmdline : "";
}

void kb_json_uname(FILE *f)
{
	struct utsname u;

	uname(&u);
	fputs("\"sysname\": ", f);
	kb_json_string(f, u.sysname);
	fputs(", \"nodename\": ", f);
	kb_json_string(f, u.nodename);
	fputs(", \"release\": ", f);
	kb_json_string(f, u.release);
	fputs(", \"version\": ", f);
	kb_json_string(f, u.version);
	fputs(", \"machine\": ", f);
	kb_json_string(f, u.machine);
}

static void json_number(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.9g", v);
	else
		fputs("null", f);
}

static void json_kv(FILE *f, const struct kb_kv *kv)
{
	kb_json_string(f, kv->key);
	fputs(": ", f);
	if (kv->str)
		kb_json_string(f, kv->str);
	else
		json_number(f, kv->num);
}

static void json_stats(FILE *f, const struct kb_stats *st)
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
		json_number(f, vals[i]);
	}
}

static void json_row(FILE *f, const struct kb_row *row)
{
	int i;

	fputs("    {\"name\": ", f);
	kb_json_string(f, row->name);
	fputs(", \"status\": ", f);
	kb_json_string(f, row->status);
	if (row->reason) {
		fputs(", \"reason\": ", f);
		kb_json_string(f, row->reason);
	}
	if (row->has_stats) {
		fputs(", \"unit\": ", f);
		kb_json_string(f, row->unit);
		json_stats(f, &row->st);
	}
	if (row->note) {
		fputs(", \"note\": ", f);
		kb_json_string(f, row->note);
	}
	if (row->nextra) {
		fputs(", \"extra\": {", f);
		for (i = 0; i < row->nextra; i++) {
			if (i)
				fputs(", ", f);
			json_kv(f, &row->extra[i]);
		}
		fputc('}', f);
	}
	fputc('}', f);
}

/*
 * "real", or "icount" with its shift when QEMU's instruction counter
 * drives the guest's clocks (KBENCH_ICOUNT=SHIFT, set by the VM runner):
 * then one virtual ns is 2^SHIFT guest instructions' worth of time.
 */
static void json_clock_mode(FILE *f)
{
	int shift = kb_icount_shift();

	if (shift < 0)
		fputs(", \"clock_mode\": \"real\"", f);
	else
		fprintf(f, ", \"clock_mode\": \"icount\", \"icount_shift\": %d", shift);
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
	if (kb_read_file("/proc/sys/kernel/random/boot_id", id, sizeof(id)))
		fputs("null", f);
	else
		kb_json_string(f, id);
}

static void json_header(FILE *f)
{
	const char *guest = getenv("KBENCH_GUEST");
	struct utsname u;
	char end[32];

	uname(&u);
	iso_time_now(end, sizeof(end));
	fputs("{\n  \"schema\": \"kbench-results/1\",\n  \"test\": ", f);
	kb_json_string(f, doc.test);
	fputs(",\n  \"kernel\": {\"sysname\": ", f);
	kb_json_string(f, u.sysname);
	fputs(", \"release\": ", f);
	kb_json_string(f, u.release);
	fputs(", \"version\": ", f);
	kb_json_string(f, u.version);
	fputs("},\n  \"machine\": {\"arch\": ", f);
	kb_json_string(f, u.machine);
	fputs(", \"hostname\": ", f);
	kb_json_string(f, u.nodename);
	/* 32 for an i386 program on an x86_64 kernel: "arch" is the kernel's. */
	fprintf(f, ", \"user_bits\": %zu", sizeof(void *) * 8);
	fprintf(f, ", \"cpus\": %ld, \"guest\": ", sysconf(_SC_NPROCESSORS_ONLN));
	if (guest && *guest)
		kb_json_string(f, guest);
	else
		fputs("null", f);
	fprintf(f, ", \"machine_slow\": %s", kb_machine_slow() ? "true" : "false");
	json_clock_mode(f);
	fputs("},\n", f);
	fputs("  \"date\": ", f);
	kb_json_string(f, doc.start);
	fputs(",\n  \"end_date\": ", f);
	kb_json_string(f, end);
	fputs(",\n  \"cmdline\": ", f);
	kb_json_string(f, doc.cmdline);
	fputs(",\n  \"clock\": ", f);
	kb_json_string(f, KB_CLOCK_NAME);
	json_boot_id(f);
}

int kb_json_write(const char *path)
{
	bool to_stdout = !strcmp(path, "-");
	FILE *f = to_stdout ? stdout : fopen(path, "w");
	int i, err = 0;

	if (!f)
		return -errno;
	json_header(f);
	fputs(",\n  \"params\": {", f);
	for (i = 0; i < doc.nparams; i++) {
		if (i)
			fputs(", ", f);
		json_kv(f, &doc.params[i]);
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
	if (fflush(f) || ferror(f))
		err = -errno;
	if (!to_stdout && fclose(f) && !err)
		err = -errno;
	return err;
}

void kb_json_extra(void (*fn)(FILE *f, void *arg), void *arg)
{
	json_extra_fn = fn;
	json_extra_arg = arg;
}

/* ---- environment ----------------------------------------------------- */

bool kb_machine_slow(void)
{
	const char *v = getenv("KSFT_MACHINE_SLOW");

	return v && (!strcmp(v, "yes") || !strcmp(v, "1"));
}

int kb_icount_shift(void)
{
	const char *v = getenv("KBENCH_ICOUNT");
	char *end;
	long shift;

	if (!v || !*v)
		return -1;
	errno = 0;
	shift = strtol(v, &end, 10);
	if (errno || *end || shift < 0 || shift > 10)
		return -1;
	return shift;
}

bool kb_emulated_guest(void)
{
	const char *v = getenv("KBENCH_GUEST");

	return v && !strcmp(v, "tcg");
}

static bool have_one_cap(cap_value_t cap)
{
	cap_flag_value_t val = CAP_CLEAR;
	cap_t caps = cap_get_proc();

	if (!caps)
		return false;
	if (cap_get_flag(caps, cap, CAP_EFFECTIVE, &val))
		val = CAP_CLEAR;
	cap_free(caps);
	return val == CAP_SET;
}

bool kb_have_cap(cap_value_t cap)
{
	if (cap != KB_CAP_BPF)
		return have_one_cap(cap);
	if (have_one_cap(CAP_SYS_ADMIN))
		return true;
#ifdef CAP_BPF
	return have_one_cap(CAP_BPF) && have_one_cap(CAP_PERFMON);
#else
	return false;
#endif
}

const char *kb_cap_name(cap_value_t cap)
{
	static char buf[64];
	char *name;

	if (cap == KB_CAP_BPF)
		return "CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN";
	name = cap_to_name(cap);
	snprintf(buf, sizeof(buf), "%s", name ? name : "unknown capability");
	for (char *p = buf; *p; p++)
		*p = toupper((unsigned char)*p);
	cap_free(name);
	return buf;
}

/* ---- /proc/PID/stat ---------------------------------------------------- */

int kb_proc_stat_parse(const char *text, struct kb_proc_stat *st)
{
	const char *open = strchr(text, '('), *close = strrchr(text, ')');
	size_t len;
	char *end;
	int n;

	memset(st, 0, sizeof(*st));
	if (!open || !close || close < open)
		return -EBADMSG;
	errno = 0;
	st->pid = (int)strtol(text, &end, 10);
	if (end == text || end + 1 != open || *end != ' ' || errno)
		return -EBADMSG;
	len = (size_t)(close - open - 1);
	if (len >= sizeof(st->comm))
		len = sizeof(st->comm) - 1;
	memcpy(st->comm, open + 1, len);
	/*
	 * state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	 * cmajflt utime stime cutime cstime priority nice num_threads
	 * itrealvalue starttime
	 */
	n = sscanf(close + 1,
		   " %c %d %d %d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %ld %*d %llu",
		   &st->state, &st->ppid, &st->pgrp, &st->session, &st->utime,
		   &st->stime, &st->num_threads, &st->start_time);
	return n == 8 ? 0 : -EBADMSG;
}

int kb_proc_stat_read(pid_t pid, struct kb_proc_stat *st)
{
	char path[64], buf[1024];
	ssize_t n;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/stat");
	n = kb_read_all(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	return kb_proc_stat_parse(buf, st);
}

/* ---- cleanup --------------------------------------------------------- */

#define KB_MAX_CLEANUPS 64

static struct {
	void (*fn)(void *arg);
	void *arg;
	pid_t owner;
	volatile sig_atomic_t active;
} cleanups[KB_MAX_CLEANUPS];
static int ncleanups;

static const int cleanup_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static void run_one(int i)
{
	/* A forked child inherits the table but owns none of it. */
	if (!cleanups[i].active || cleanups[i].owner != getpid())
		return;
	cleanups[i].active = 0;
	cleanups[i].fn(cleanups[i].arg);
}

void kb_cleanup_run_all(void)
{
	int i;

	for (i = ncleanups - 1; i >= 0; i--)
		run_one(i);
}

static void cleanup_signal_handler(int sig)
{
	kb_cleanup_run_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_cleanup_signals(void)
{
	static bool installed;
	struct sigaction sa;
	size_t i;

	if (installed)
		return;
	installed = true;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = cleanup_signal_handler;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ARRAY_SIZE(cleanup_signals); i++)
		sigaddset(&sa.sa_mask, cleanup_signals[i]);
	for (i = 0; i < ARRAY_SIZE(cleanup_signals); i++)
		sigaction(cleanup_signals[i], &sa, NULL);
	atexit(kb_cleanup_run_all);
}

int kb_cleanup_push(void (*fn)(void *arg), void *arg)
{
	int i;

	install_cleanup_signals();
	/* Reuse a slot freed by kb_cleanup_pop() at the top of the stack. */
	while (ncleanups > 0 && !cleanups[ncleanups - 1].active)
		ncleanups--;
	if (ncleanups == KB_MAX_CLEANUPS)
		return -1;
	i = ncleanups;
	cleanups[i].fn = fn;
	cleanups[i].arg = arg;
	cleanups[i].owner = getpid();
	cleanups[i].active = 1;
	ncleanups++;
	return i;
}

void kb_cleanup_pop(int handle, bool run)
{
	if (handle < 0 || handle >= ncleanups)
		return;
	if (run)
		run_one(handle);
	else
		cleanups[handle].active = 0;
}

static void change_cleanup_signals(int how)
{
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < ARRAY_SIZE(cleanup_signals); i++)
		sigaddset(&set, cleanup_signals[i]);
	sigprocmask(how, &set, NULL);
}

void kb_signals_block(void)
{
	change_cleanup_signals(SIG_BLOCK);
}

void kb_signals_unblock(void)
{
	change_cleanup_signals(SIG_UNBLOCK);
}

/* ---- small files ------------------------------------------------------ */

ssize_t kb_read_all(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while (len + 1 < size) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		len += n;
	}
	/* A full buffer: anything left means the file did not fit. */
	if (len + 1 >= size) {
		char probe;

		if (read(fd, &probe, 1) > 0) {
			close(fd);
			return -EFBIG;
		}
	}
	close(fd);
	buf[len] = '\0';
	return len;
}

/* Signal-safe: used by cleanup handlers too. */
int kb_write_str(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(text);
	ssize_t n;
	int err = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	close(fd);
	return err;
}

/* ---- sysctl / procfs knobs ------------------------------------------- */

struct saved_knob {
	char path[PATH_MAX];
	char value[256];
};

static void restore_knob(void *arg)
{
	struct saved_knob *k = arg;

	kb_write_str(k->path, k->value);
}

int kb_read_file(const char *path, char *buf, size_t size)
{
	ssize_t n = kb_read_all(path, buf, size);

	if (n < 0)
		return n;
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return 0;
}

int kb_read_long(const char *path, long *val)
{
	char buf[64], *end;
	int err = kb_read_file(path, buf, sizeof(buf));

	if (err)
		return err;
	errno = 0;
	*val = strtol(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	return 0;
}

int kb_knob_set(const char *path, const char *value)
{
	struct saved_knob *k = calloc(1, sizeof(*k));
	int err;

	if (!k)
		return -ENOMEM;
	snprintf(k->path, sizeof(k->path), "%s", path);
	err = kb_read_file(path, k->value, sizeof(k->value));
	if (!err)
		err = kb_write_str(path, value);
	if (err) {
		free(k);
		return err;
	}
	if (kb_cleanup_push(restore_knob, k) < 0) {
		restore_knob(k);
		free(k);
		return -ENOSPC;
	}
	return 0;
}

/* ---- command-line parsing -------------------------------------------- */

void kb_set_prog(const char *prog)
{
	prog_name = prog;
}

const char *kb_prog(void)
{
	return prog_name;
}

void kb_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	kb_usage_hint();
}

void kb_usage_hint(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", prog_name);
	exit(KB_EXIT_USAGE);
}

void kb_check_list(const char *list, const char *what)
{
	size_t len = strlen(list);

	if (!len || list[0] == ',' || list[len - 1] == ',' ||
	    strstr(list, ",,"))
		kb_usage_error("invalid value '%s' for %s: an empty item in the list",
			       list, what);
}

void kb_select_names(const char *list, const char *what,
		     bool (*select)(const char *name))
{
	char *copy, *save, *tok;

	kb_check_list(list, what);
	copy = strdup(list);
	if (!copy) {
		perror("kbench: strdup");
		exit(1);
	}
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		if (!select(tok))
			kb_usage_error("unknown %s '%s' (see --list)", what, tok);
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

long long kb_parse_ll(const char *s, const char *what, long long min,
		      long long max)
{
	const char *digits = *s == '-' ? s + 1 : s;
	long long v;

	errno = 0;
	if (!*digits || strspn(digits, "0123456789") != strlen(digits))
		kb_usage_error("invalid value '%s' for %s: not a decimal integer",
			       s, what);
	v = strtoll(s, NULL, 10);
	if (errno == ERANGE || v < min || v > max)
		kb_usage_error("invalid value '%s' for %s: must be between %lld and %lld",
			       s, what, min, max);
	return v;
}

double kb_parse_double(const char *s, const char *what, double min,
		       double max)
{
	bool neg = *s == '-' && min < 0;
	const char *suf;
	double v;

	if (split_number(s + neg, &v, &suf) || *suf)
		kb_usage_error("invalid value '%s' for %s: not a decimal number",
			       s, what);
	if (neg)
		v = -v;
	if (!(v >= min && v <= max))
		kb_usage_error("invalid value '%s' for %s: must be between %g and %g",
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

double kb_parse_seconds(const char *s, const char *what, double min,
			double max)
{
	const char *suf;
	double num;
	size_t i;

	if (split_number(s, &num, &suf))
		kb_usage_error("invalid value '%s' for %s: not a duration", s, what);
	for (i = 0; i < ARRAY_SIZE(time_units); i++)
		if (!strcmp(suf, time_units[i].suffix))
			break;
	if (i == ARRAY_SIZE(time_units))
		kb_usage_error("invalid value '%s' for %s: unknown unit '%s' (use us, ms, s, m, h or d)",
			       s, what, suf);
	num *= time_units[i].seconds;
	if (!(num >= min && num <= max))
		kb_usage_error("invalid value '%s' for %s: must be between %g and %g seconds",
			       s, what, min, max);
	return num;
}

unsigned long long kb_parse_duration(const char *s, const char *what)
{
	return (unsigned long long)kb_parse_seconds(s, what, 1,
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

unsigned long long kb_parse_size(const char *s, const char *what,
				 unsigned long long min,
				 unsigned long long max)
{
	size_t len = decimal_prefix(s), i;
	unsigned long long bytes;

	if (!len)
		kb_usage_error("invalid value '%s' for %s: not a size", s, what);
	for (i = 0; i < ARRAY_SIZE(size_units); i++)
		if (!strcasecmp(s + len, size_units[i].suffix))
			break;
	if (i == ARRAY_SIZE(size_units))
		kb_usage_error("invalid value '%s' for %s: unknown suffix '%s' (use B, K, M or G)",
			       s, what, s + len);
	if (decimal_times(s, size_units[i].bytes, &bytes) ||
	    bytes < min || bytes > max)
		kb_usage_error("invalid value '%s' for %s: must be between %llu and %llu bytes",
			       s, what, min, max);
	return bytes;
}

/* ---- skip or fail ------------------------------------------------------ */

/* A seccomp filter (a container's profile) may answer EPERM or ENOSYS. */
static bool under_seccomp_filter(void)
{
	static int cached = -1;
	char buf[4096], *p;

	if (cached < 0) {
		cached = 0;
		if (kb_read_all("/proc/self/status", buf, sizeof(buf)) > 0) {
			p = strstr(buf, "\nSeccomp:");
			cached = p && strtol(p + 9, NULL, 10) == 2;
		}
	}
	return cached;
}

/* The initial user namespace maps every uid onto itself. */
static bool in_child_user_ns(void)
{
	static int cached = -1;
	unsigned long inside, outside, count;
	char buf[256];

	if (cached < 0) {
		cached = kb_read_all("/proc/self/uid_map", buf, sizeof(buf)) > 0 &&
			 (sscanf(buf, "%lu %lu %lu", &inside, &outside, &count) != 3 ||
			  inside || outside || count != 4294967295UL);
	}
	return cached;
}

static bool lacks_cap(int cap)
{
	return cap != KB_NO_CAP && !kb_have_cap((cap_value_t)cap);
}

bool kb_errno_is_environment(int err, int cap)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case ENOSYS:
	case EOPNOTSUPP:
	case EROFS:
		return true;
	case EPERM:
	case EACCES:
		return lacks_cap(cap) || under_seccomp_filter() ||
		       in_child_user_ns();
	default:
		return false;
	}
}

bool kb_lookup_errno_is_environment(int err, int cap)
{
	return err == ENOENT || err == -ENOENT ||
	       kb_errno_is_environment(err, cap);
}

bool kb_bpf_errno_is_environment(int err)
{
	return err == ESRCH || err == -ESRCH ||
	       kb_lookup_errno_is_environment(err, KB_CAP_BPF);
}

bool kb_errno_explain(int err, int cap, const char *what, char *buf,
		      size_t len)
{
	bool env = kb_errno_is_environment(err, cap);
	const char *ename, *lacks = "";
	char need[96] = "";

	if (err < 0)
		err = -err;
	ename = strerrorname_np(err);
	if (env && (err == ENOSYS || err == EOPNOTSUPP)) {
		lacks = ": not supported by this kernel";
	} else if (env && err == EROFS) {
		lacks = ": mounted read-only here";
	} else if (env && lacks_cap(cap)) {
		snprintf(need, sizeof(need), ": needs %s", kb_cap_name(cap));
		lacks = need;
	} else if (env && under_seccomp_filter()) {
		lacks = ": refused by a seccomp filter";
	} else if (env) {
		lacks = ": refused in a user namespace (capabilities there do not count)";
	}
	snprintf(buf, len, "%s: %s (%s)%s", what, strerror(err),
		 ename ? ename : "?", lacks);
	return env;
}

/* ---- test tables and the shared options ------------------------------- */

int kb_test_index(const struct kb_test *tests, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(tests[i].name, name))
			return (int)i;
	return -1;
}

long kb_pick_count(const struct kb_opts *o, long def, long full, long slow)
{
	if (o->full)
		return full;
	return kb_machine_slow() ? slow : def;
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

static void select_tests(const struct kb_cli *cli, struct kb_opts *o,
			 const char *list)
{
	char *copy, *save, *tok;
	int i;

	kb_check_list(list, "--test");
	copy = strdup(list);
	if (!copy) {
		perror("kbench: strdup");
		exit(1);
	}
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		i = kb_test_index(cli->tests, cli->ntests, tok);
		if (i < 0)
			kb_usage_error("unknown test '%s' (see --list)", tok);
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

void kb_usage_common(FILE *f, const struct kb_cli *cli)
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
	kb_usage_common(stdout, cli);
}

static void check_cli(const struct kb_cli *cli)
{
	/* A program's bug, not the user's: say so loudly. */
	if (cli->ntests > KB_MAX_TESTS ||
	    (cli->short_opts && strpbrk(cli->short_opts, "hlt"))) {
		fprintf(stderr, "kbench: %s: bad option table (-h, -l, -t are shared; at most %d tests)\n",
			kb_prog(), KB_MAX_TESTS);
		exit(1);
	}
}

void kb_parse_args(int argc, char **argv, const struct kb_cli *cli,
		   struct kb_opts *o)
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
				kb_usage_error("invalid value '' for --json: empty file name");
			o->json = optarg;
			break;
		case OPT_NO_PIN:
			o->no_pin = true;
			break;
		case '?':
		case ':':
			kb_usage_hint();
		default:
			if (!cli->on_option)
				kb_usage_hint();
			cli->on_option(c, optarg, cli->ctx);
		}
	}
	free(longopts);
	if (optind < argc)
		kb_usage_error("unexpected argument '%s'", argv[optind]);
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
