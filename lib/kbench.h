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

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/capability.h>
#include <sys/types.h>
#include <time.h>

/* The same spellings as kselftest.h, for files that do not include it. */
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(arr) (sizeof(arr) / sizeof((arr)[0]))
#endif
#ifndef __noreturn
#define __noreturn       __attribute__((__noreturn__))
#endif
#ifndef __aligned
#define __aligned(x)     __attribute__((__aligned__(x)))
#endif
#ifndef __printf
#define __printf(a, b)   __attribute__((format(printf, a, b)))
#endif

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
__printf(2, 3)
void kb_figure(const char *name, const char *fmt, ...);

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

/*
 * The shift of QEMU's -icount when it drives this guest's clocks
 * (KBENCH_ICOUNT=SHIFT, set by run_all.sh --kernel ... --icount), else
 * -1. Figures are then exact counts of guest instructions (2^SHIFT per
 * virtual ns), recorded as machine.clock_mode "icount" in the JSON.
 */
int kb_icount_shift(void);

/*
 * The capabilities that load and attach a BPF tracing program (iterators
 * are tracing programs): CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN. A
 * pseudo-capability for kb_have_cap(), kb_cap_name() and the errno rule.
 */
#define KB_CAP_BPF	(-2)

/* True when @cap (or every capability of KB_CAP_BPF) is in our effective set (libcap). */
bool kb_have_cap(cap_value_t cap);
const char *kb_cap_name(cap_value_t cap);

/*
 * The fields of /proc/PID/stat that tests compare syscalls against: an
 * independent source, formatted by procfs from the task itself.
 */
struct kb_proc_stat {
	int pid;
	char comm[64];
	char state;
	int ppid, pgrp, session;
	unsigned long long utime, stime;	/* clock ticks */
	long num_threads;
	unsigned long long start_time;		/* ticks after boot */
};

/*
 * Parse the text of a /proc/PID/stat file. comm may hold spaces and
 * parentheses: it ends at the last ')'. 0, or -EBADMSG when a field is
 * missing or malformed.
 */
int kb_proc_stat_parse(const char *text, struct kb_proc_stat *st);

/* Read and parse /proc/PID/stat (@pid 0: /proc/self/stat). 0 or -errno. */
int kb_proc_stat_read(pid_t pid, struct kb_proc_stat *st);

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

/* ---- skip or fail: the one errno rule --------------------------------- */

/* No capability would make the call succeed (see kb_errno_is_environment). */
#define KB_NO_CAP	(-1)

/*
 * Whether the error @err (an errno, either sign) says that the environment
 * lacks something, so that the test SKIPs, rather than that the kernel
 * misbehaved, so that it FAILs. The environment lacks it when:
 *  - ENOSYS, EOPNOTSUPP (= ENOTSUP): the kernel has no such call or mode;
 *  - EROFS: the file system was mounted read-only (a container's /sys or
 *    /proc/sys): whoever set the machine up decided, not the kernel;
 *  - EPERM, EACCES: only when @cap (a capability, KB_CAP_BPF or KB_NO_CAP)
 *    is one this process does not have in its effective set, when a
 *    seccomp filter is in force (Seccomp: 2 in /proc/self/status: a
 *    container's profile answers EPERM for calls it blocks), or when the
 *    process runs in a user namespace other than the initial one (the
 *    kernel checks most capabilities against the initial namespace, where
 *    such a process has none).
 * Everything else (EINVAL, ENOSPC, ENOMEM, EAGAIN, ENOENT, ...) is a
 * failure: a kernel that leaks ids until ENOSPC must not turn green.
 *
 * The rule has two named extensions, for the calls whose absence the
 * kernel reports with another errno; nothing else in kbench decides skip
 * or fail from an errno:
 *  - kb_lookup_errno_is_environment(): resolving a kernel interface by
 *    name (a genetlink family, a /proc file only some kernels have);
 *  - kb_bpf_errno_is_environment(): opening, loading or attaching one of
 *    kbench's BPF programs.
 */
bool kb_errno_is_environment(int err, int cap);

/*
 * The rule, extended for looking up a kernel interface by name: ENOENT
 * then means that this kernel has no such interface (CONFIG_TASKSTATS off,
 * no /proc/taskstats), also the environment's.
 */
bool kb_lookup_errno_is_environment(int err, int cap);

/*
 * The rule, extended for a BPF program's open, load or attach (libbpf's
 * -errno), with KB_CAP_BPF as the capability: the lookup extension's
 * ENOENT (no kernel BTF, or a BTF type or iterator target this kernel
 * lacks), and ESRCH (libbpf: a kfunc or ksym the kernel's BTF lacks).
 * A verifier rejection (EINVAL, EACCES with every capability) or a
 * malformed object (EBADMSG...) is a failure of our program.
 */
bool kb_bpf_errno_is_environment(int err);

/*
 * Fill @buf with "WHAT: strerror (ENAME)" and, when the error is the
 * environment's, what it lacks ("needs CAP_X", "not supported by this
 * kernel"). Returns kb_errno_is_environment(err, cap).
 */
bool kb_errno_explain(int err, int cap, const char *what, char *buf,
		      size_t len);

/* ---- command-line parsing -------------------------------------------- */

/*
 * Parsers for option values. Numbers are decimal only, whatever their
 * first digit: "010" is ten, "0x10" is rejected. On bad input they print
 *   PROG: invalid value 'V' for WHAT: REASON
 *   Try 'PROG --help' for more information.
 * to stderr and exit(KB_EXIT_USAGE).
 */
void kb_set_prog(const char *prog);
const char *kb_prog(void);
__printf(1, 2) __noreturn
void kb_usage_error(const char *fmt, ...);
/* "Try 'PROG --help'..." on stderr, exit(KB_EXIT_USAGE): getopt's '?' case. */
__noreturn void kb_usage_hint(void);
long long kb_parse_ll(const char *s, const char *what, long long min,
		      long long max);
/*
 * A decimal number with an optional fraction ("2", "0.25", ".5"; no sign
 * unless @min < 0, no exponent, no hex, no inf/nan), between @min and @max.
 */
double kb_parse_double(const char *s, const char *what, double min,
		       double max);
/*
 * A duration in seconds: a decimal number with an optional unit us, ms,
 * s, m, h or d (default s), between @min and @max seconds.
 */
double kb_parse_seconds(const char *s, const char *what, double min,
			double max);
/* Durations of at least one second, whole seconds (kb_parse_seconds). */
unsigned long long kb_parse_duration(const char *s, const char *what);
/*
 * A size in bytes: a decimal number (a fraction is allowed: "1.5G") with
 * an optional suffix B, K, M or G (powers of 1024; "KB" and "KiB" spell
 * "K"; any case), between @min and @max. Exact for any value up to
 * ULLONG_MAX; a fraction of a byte is dropped.
 */
unsigned long long kb_parse_size(const char *s, const char *what,
				 unsigned long long min,
				 unsigned long long max);
/* A "" or ",," element of a comma list is a usage error, not "nothing". */
void kb_check_list(const char *list, const char *what);
/*
 * Pick items by name from a comma list ("-t fork,getpid"): @select(name)
 * marks the item and returns false for a name it does not know, which is
 * a usage error naming @what. An empty name ("a,,b", "") is an error too.
 */
void kb_select_names(const char *list, const char *what,
		     bool (*select)(const char *name));

/* ---- test tables ------------------------------------------------------ */

/*
 * One test of a program's table, in the shape of the kernel's
 * selftests/cgroup/test_memcontrol.c: @fn returns KSFT_PASS, KSFT_FAIL or
 * KSFT_SKIP and writes why (a FAIL's or SKIP's reason) into @reason.
 * @ctx is the program's context struct: tests share no globals and do not
 * depend on another test having run. @name is the stable KTAP/JSON name;
 * @desc one line for --list.
 */
struct kb_test {
	const char *name;
	int (*fn)(void *ctx, char *reason, size_t len);
	const char *desc;
};

#define KB_MAX_TESTS	2048	/* room for a test per pmqtest pair */

/* Index of the test called @name in tests[0..n-1], or -1. */
int kb_test_index(const struct kb_test *tests, size_t n, const char *name);

/* ---- the options every program shares -------------------------------- */

/*
 * What a program tells kb_parse_args(): its own options, its manual, its
 * table. The shared options are added by the lib and must not appear in
 * @short_opts/@long_opts: -h/--help, -l/--list, -t/--test=NAME[,NAME],
 * --full, --json=FILE, and --no-pin when @placement is set.
 */
struct kb_cli {
	const char *short_opts;		/* the program's own, getopt syntax */
	const struct option *long_opts;	/* the program's own, or NULL */
	/*
	 * Called for each of the program's own options with getopt's
	 * value and optarg; bad values go to kb_usage_error().
	 */
	void (*on_option)(int opt, const char *arg, void *ctx);
	void *ctx;
	/* The manual for -h (to stdout); kb_usage_common() lists ours. */
	void (*usage)(FILE *f, void *ctx);
	const struct kb_test *tests;
	size_t ntests;
	bool placement;			/* accept --no-pin */
};

/* What the shared options asked for. */
struct kb_opts {
	bool full;			/* --full */
	const char *json;		/* --json FILE, or NULL */
	bool no_pin;			/* --no-pin */
	bool any_selected;		/* -t was given */
	bool selected[KB_MAX_TESTS];	/* per test of the table */
	size_t nselected;
};

/*
 * Parse the whole command line. Every program option goes to
 * cli->on_option. Unknown options and stray arguments are rejected with
 * exit status 2 whatever else is given; -h and -l act only once the whole
 * line has been accepted (so "-l x" is an error, not a list). Without -t
 * every test is selected. Unselected tests are left out of the plan.
 */
void kb_parse_args(int argc, char **argv, const struct kb_cli *cli,
		   struct kb_opts *o);

/* The shared options' lines for a program's manual. */
void kb_usage_common(FILE *f, const struct kb_cli *cli);

/*
 * The run size: @full with --full, @slow when KSFT_MACHINE_SLOW=yes,
 * otherwise @def.
 */
long kb_pick_count(const struct kb_opts *o, long def, long full, long slow);

#endif /* KBENCH_H */
