// SPDX-License-Identifier: GPL-2.0
/*
 * memcg_ks: the timed rows: reads of the legacy and the .ks files three
 * ways, and the BPF cgroup iterator; the table of their medians.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "memcg_ks.h"
#include "rtsched.h"

/* ---- timing ------------------------------------------------------------ */

/* Read the whole file from the current offset; bytes or -errno. */
static ssize_t read_rest(struct memcg_ctx *c, int fd)
{
	size_t len = 0;
	ssize_t n;

	do {
		n = read(fd, c->read_buf + len, sizeof(c->read_buf) - len);
		if (n < 0)
			return -errno;
		len += n;
		/* A short read is the whole (single record) file. */
	} while (n > 0 && len == sizeof(c->read_buf));
	return len;
}

static ssize_t op_per_read(struct memcg_ctx *c, int fd, const char *path,
			   long batch)
{
	ssize_t n = 0;

	(void)path;
	while (batch--) {
		if (lseek(fd, 0, SEEK_SET) < 0)
			return -errno;
		n = read_rest(c, fd);
		if (n < 0)
			return n;
	}
	return n;
}

static ssize_t op_per_cat(struct memcg_ctx *c, int fd, const char *path,
			  long batch)
{
	ssize_t n = 0;

	(void)fd;
	while (batch--) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		n = read_rest(c, fd);
		close(fd);
		if (n < 0)
			return n;
	}
	return n;
}

/* One external cat process; its output goes to /dev/null. */
static ssize_t op_cat_process(struct memcg_ctx *c, int fd, const char *path,
			      long batch)
{
	int status;
	pid_t pid;

	(void)fd;
	while (batch--) {
		/* No signal between fork and wait: the cat is always reaped. */
		kb_cleanup_block_signals();
		pid = fork();
		if (pid == 0) {
			kb_cleanup_unblock_signals();
			dup2(c->devnull_fd, STDOUT_FILENO);
			execlp("cat", "cat", path, (char *)NULL);
			_exit(127);
		}
		if (pid > 0 && waitpid(pid, &status, 0) != pid)
			pid = -1;
		kb_cleanup_unblock_signals();
		if (pid < 0)
			return -errno;
		if (!WIFEXITED(status) || WEXITSTATUS(status) == 127)
			return -ENOEXEC;
		if (WEXITSTATUS(status))
			return -EIO;
	}
	return 1;
}

typedef ssize_t (*op_fn)(struct memcg_ctx *c, int fd, const char *path,
			 long batch);

static const op_fn mode_op[NR_MODES] = {
	op_per_read, op_per_cat, op_cat_process,
};

/* Untimed operations before a row: a tenth, at least 1 (3 for processes). */
static long warm_up_count(enum mode mode, long nsamples)
{
	long warm = nsamples / 10;

	if (mode == MODE_PROC)
		return warm < 3 ? 3 : warm;
	return warm < 1 ? 1 : warm;
}

/*
 * Exact mode, before a per_cat row: the kernel's batch of frees waiting
 * for RCU (kfree_rcu's per-CPU krc) brought to one state. Every close
 * frees the kernfs open node with kfree_rcu(), and kvfree_call_rcu()
 * runs 70 instructions where a page of that batch has room, 76 or 81
 * where none has and it falls back to a list. The settle before each row
 * (lib/settle.c) drops the slab caches, whose shrinker empties krc's
 * cache of pages and defers its next refill by the kernel's
 * rcu_delay_page_cache_fill_msec (5 s): a row reads the fallback until
 * that refill lands, inside the row in some boots and not in others
 * (the row's median then 6 less). One open, read and close asks for the
 * refill (or takes a page), then an idle past it and past krc's drain of
 * its batch (KFREE_DRAIN_JIFFIES, 5 s): the row starts with a cached
 * page and nothing waiting, and reads the page's path. With QEMU's
 * sleep=off the idle costs no host time.
 */
#define KRC_SETTLE_S	6

static ssize_t krc_settle(struct memcg_ctx *c, const char *path)
{
	struct timespec idle = { .tv_sec = KRC_SETTLE_S };
	ssize_t n = op_per_cat(c, -1, path, 1);

	while (n >= 0 && nanosleep(&idle, &idle))
		;
	return n;
}

/* Decide once how the process rows run; say why when less than asked. */
void plan_priority(struct memcg_ctx *c)
{
	char why[200];

	c->proc_prio = 0;
	if (!c->place.pinned)
		return;
	if (kb_rtsched_fifo_allowed(PROC_FIFO_PRIO, why, sizeof(why)))
		c->proc_prio = PROC_FIFO_PRIO;
	else
		snprintf(c->sched_note, sizeof(c->sched_note),
			 "process rows at normal priority: %s", why);
}

/* Around a process row: SCHED_FIFO (the cats inherit it), then back. */
static void priority_enter(struct memcg_ctx *c)
{
	if (c->proc_prio && kb_rtsched_set_prio_self(c->proc_prio)) {
		/* e.g. RT group scheduling gives our cgroup no runtime */
		snprintf(c->sched_note, sizeof(c->sched_note),
			 "process rows at normal priority: SCHED_FIFO refused");
		c->proc_prio = 0;
	}
}

static void priority_leave(struct memcg_ctx *c)
{
	if (c->proc_prio)
		kb_rtsched_set_prio_self(0);
}

/*
 * Time @mode on @path: samples of @batch operations, microseconds per
 * operation. @bytes gets the size of one read. 0 or -errno.
 */
int time_reads(struct memcg_ctx *c, const char *path, enum mode mode,
	       struct kb_stats *st, ssize_t *bytes, double *total_s)
{
	const struct options *o = &c->opt;
	long count = mode == MODE_PROC ? o->cat_count : o->count;
	long batch = mode == MODE_PROC ? 1 : o->batch;
	long nsamples = count / batch < 2 ? 2 : count / batch, i;
	double *samples;
	uint64_t start;
	ssize_t n = 0;
	int fd = -1, err = 0;

	c->row_cut_short = false;
	samples = calloc(nsamples, sizeof(*samples));
	if (!samples)
		return -ENOMEM;
	if (mode == MODE_READ) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			free(samples);
			return -errno;
		}
	}
	if (mode == MODE_PROC)
		priority_enter(c);
	if (mode == MODE_CAT && kb_env_icount_shift() >= 0)
		n = krc_settle(c, path);
	for (i = -warm_up_count(mode, nsamples); i < 0 && n >= 0; i++)
		n = mode_op[mode](c, fd, path, batch);
	start = kb_clock_ns();
	for (i = 0; i < nsamples && n >= 0; i++) {
		uint64_t t0 = kb_clock_ns();

		n = mode_op[mode](c, fd, path, batch);
		samples[i] = (double)(kb_clock_ns() - t0) / batch / 1000.0;
		/* A slow machine: stop at the row's time budget. */
		if (o->row_budget_s > 0 && i >= 20 &&
		    (double)(kb_clock_ns() - start) / 1e9 > o->row_budget_s) {
			nsamples = i + 1;
			c->row_cut_short = true;
			break;
		}
	}
	*total_s = (double)(kb_clock_ns() - start) / 1e9;
	if (mode == MODE_PROC)
		priority_leave(c);
	if (fd >= 0)
		close(fd);
	if (n < 0)
		err = (int)n;
	else
		kb_stats_compute(samples, nsamples, st);
	*bytes = mode != MODE_PROC ? n : -1;
	free(samples);
	return err;
}

const char *errstr(int err)
{
	return err == -ENOEXEC ? "no 'cat' in PATH, or it failed" : strerror(-err);
}

/* ---- timed rows -------------------------------------------------------- */

void row_name(const struct memcg_ctx *c, int v, enum file_id f,
	      enum mode m, char *name, size_t size)
{
	snprintf(name, size, "%s_%s_%s", file_tag[f], c->variant[v].tag,
		 mode_name[m]);
}

/* Why a row of variant @v on file @f cannot run; NULL when it can. */
static const char *row_skip(const struct memcg_ctx *c, int v, enum file_id f)
{
	if (f == F_NUMA && !cg_has(c, "memory.numa_stat"))
		return "no memory.numa_stat (kernel without CONFIG_NUMA)";
	if (c->variant[v].src == SRC_KS && c->ks_skip[f][0])
		return c->ks_skip[f];
	return NULL;
}

static void row_figures(struct memcg_ctx *c, int v, enum file_id f,
			enum mode m, const struct kb_stats *st, ssize_t bytes,
			double total_s, const char *name)
{
	const struct cell *legacy = &c->cells[0][f][m];

	kb_results_row(name, "us", st);
	kb_results_extra("batch", m == MODE_PROC ? 1 : c->opt.batch);
	kb_results_extra("total_s", total_s);
	if (c->row_cut_short)
		kb_results_extra("cut_at_max_row_time", 1);
	if (bytes >= 0)
		kb_results_extra("bytes", (double)bytes);
	if (v && legacy->done && legacy->median > 0)
		kb_results_extra("ratio_vs_legacy", st->median / legacy->median);
	if (c->variant[v].src == SRC_KS) {
		char note[160];

		snprintf(note, sizeof(note), "%s; filter: %s", mode_note[m],
			 c->variant[v].note);
		kb_results_note(note);
	} else {
		kb_results_note(mode_note[m]);
	}
	c->cells[v][f][m] = (struct cell){ true, st->median, st->mean };
}

/*
 * One timed row. A .ks row writes its filter first, so that it depends on
 * no other row. What it checks: the reads succeed and return data; the
 * timing itself is a figure, not a verdict.
 */
static int time_file_row(struct memcg_ctx *c, int v, enum file_id f,
			 enum mode m, const char *name, char *why, size_t size)
{
	const struct variant *var = &c->variant[v];
	char path[PATH_MAX + 64];
	struct kb_stats st;
	ssize_t bytes;
	double total_s;
	int err;

	if (var->src == SRC_KS) {
		err = ks_write(c, f, var->filter);
		if (err) {
			snprintf(why, size, "writing the filter (%s) to %s.ks: %s",
				 var->note, file_name[f], strerror(-err));
			return KSFT_FAIL;
		}
	}
	snprintf(path, sizeof(path), "%s/%s%s", c->dir, file_name[f],
		 var->src == SRC_KS ? ".ks" : "");
	err = time_reads(c, path, m, &st, &bytes, &total_s);
	if (err) {
		snprintf(why, size, "%s: %s", path, errstr(err));
		return m == MODE_PROC && err == -ENOEXEC ? KSFT_SKIP : KSFT_FAIL;
	}
	row_figures(c, v, f, m, &st, bytes, total_s, name);
	if (bytes == 0) {
		snprintf(why, size, "read returned no data");
		return KSFT_FAIL;
	}
	return KSFT_PASS;
}

int nr_modes(const struct memcg_ctx *c)
{
	return c->opt.bench ? 1 : NR_MODES;
}

/* A file row's table argument: its variant, file and mode. */
int file_row_arg(int v, enum file_id f, enum mode m)
{
	return (v * NR_FILES + f) * NR_MODES + m;
}

/* One file row of the table: SKIP when its file or filter is missing. */
int file_row(void *ctx, int arg, char *why, size_t size)
{
	struct memcg_ctx *c = ctx;
	int m = arg % NR_MODES, f = arg / NR_MODES % NR_FILES;
	int v = arg / NR_MODES / NR_FILES;
	const char *skip = row_skip(c, v, f);
	char name[96];

	if (skip) {
		snprintf(why, size, "%s", skip);
		return KSFT_SKIP;
	}
	row_name(c, v, f, m, name, sizeof(name));
	return time_file_row(c, v, f, m, name, why, size);
}

/* The variants of this run: legacy, one per --fields size, the key filter. */
void build_variants(struct memcg_ctx *c)
{
	const struct options *o = &c->opt;
	struct variant *var;
	int i;

	c->nvariants = 0;
	var = &c->variant[c->nvariants++];
	snprintf(var->tag, sizeof(var->tag), "legacy");
	var->src = SRC_LEGACY;
	for (i = 0; i < o->nfields; i++) {
		var = &c->variant[c->nvariants++];
		var->src = SRC_KS;
		snprintf(var->tag, sizeof(var->tag), "ks%d", o->fields[i]);
		build_field_filter(o->fields[i], !o->no_flush, var->filter,
				   sizeof(var->filter));
		snprintf(var->note, sizeof(var->note), "%d fields%s",
			 o->fields[i], o->no_flush ? "" : " + flush");
	}
	if (o->bench)
		return;
	var = &c->variant[c->nvariants++];
	var->src = SRC_KS;
	snprintf(var->tag, sizeof(var->tag), "ks_keys");
	build_key_filter(o->keys, !o->no_flush, var->filter,
			 sizeof(var->filter));
	snprintf(var->note, sizeof(var->note), "memory.stat keys");
}

void print_table(const struct memcg_ctx *c)
{
	int v, f, m;

	ksft_print_msg("median microseconds per read (%s); ratio = ks / legacy, same file and way\n",
		       KB_CLOCK_NAME);
	ksft_print_msg("%-30s %12s %12s %14s\n", "file", "per_read",
		       "per_cat", "cat_process");
	for (v = 0; v < c->nvariants; v++) {
		for (f = 0; f < NR_FILES; f++) {
			char label[64], col[NR_MODES][32];

			if (!c->cells[v][f][MODE_READ].done)
				continue;
			snprintf(label, sizeof(label), "%s%s%s%s", file_name[f],
				 v ? ".ks [" : "", v ? c->variant[v].tag : "",
				 v ? "]" : "");
			for (m = 0; m < NR_MODES; m++) {
				const struct cell *x = &c->cells[v][f][m];
				const struct cell *l = &c->cells[0][f][m];

				if (!x->done)
					snprintf(col[m], sizeof(col[m]), "-");
				else if (v && l->done)
					snprintf(col[m], sizeof(col[m]), "%.3f (x%.2f)",
						 x->median,
						 x->median / l->median);
				else
					snprintf(col[m], sizeof(col[m]), "%.3f",
						 x->median);
			}
			ksft_print_msg("%-30s %12s %12s %14s\n", label,
				       col[0], col[1], col[2]);
		}
	}
	if (c->devnull_cat_median > 0)
		ksft_print_msg("%-30s %12s %12s %14.3f\n", "cat /dev/null",
			       "-", "-", c->devnull_cat_median);
}

/* ---- BPF cgroup iterator: the mainline answer ------------------------ */

/* The iterator, loaded at first use; one load serves the check and rows. */
struct kb_memcg_bpf *bpf_iter_get(struct memcg_ctx *c)
{
	struct bpf_state *bs = &c->bpf;

	if (!bs->tried) {
		bs->tried = true;
		bs->b = kb_memcg_bpf_open(c->dir, !c->opt.no_flush, &bs->load_ns,
					  &bs->err, bs->why, sizeof(bs->why));
	}
	return bs->b;
}

/* Why the iterator cannot run: SKIP when the kernel or caller cannot. */
int bpf_iter_unusable(struct memcg_ctx *c, char *why, size_t size)
{
	snprintf(why, size, "%s", c->bpf.why);
	return kb_errno_bpf_is_environment(c->bpf.err) ? KSFT_SKIP : KSFT_FAIL;
}

/* bpf_iterN: the iterator reading N counters (the table's @n). */
int bpf_row(void *ctx, int n, char *why, size_t size)
{
	struct memcg_ctx *c = ctx;
	const struct options *o = &c->opt;
	const struct cell *legacy = &c->cells[0][F_STAT][MODE_READ];
	int slots[MAX_FIELDS], err, v;
	struct kb_stats st;
	double total_s;
	char note[200], name[32];

	snprintf(name, sizeof(name), "bpf_iter%d", n);
	if (!bpf_iter_get(c))
		return bpf_iter_unusable(c, why, size);
	field_slots(n, slots);
	err = kb_memcg_bpf_select(c->bpf.b, slots, n, why, size);
	if (!err)
		err = kb_memcg_bpf_time(c->bpf.b, o->count, o->batch, o->row_budget_s,
					&st, &total_s);
	if (err) {
		snprintf(why, size, "iterator read: %s", strerror(-err));
		return KSFT_FAIL;
	}
	kb_results_row(name, "us", &st);
	kb_results_extra("batch", o->batch);
	kb_results_extra("total_s", total_s);
	kb_results_extra("load_ms", c->bpf.load_ns / 1e6);
	if (legacy->done && legacy->median > 0)
		kb_results_extra("ratio_vs_legacy", st.median / legacy->median);
	for (v = 1; v < c->nvariants; v++) {
		const struct cell *ks = &c->cells[v][F_STAT][MODE_READ];

		if (!strcmp(c->variant[v].tag + 2, name + 8) && ks->done &&
		    ks->median > 0)
			kb_results_extra("ratio_vs_ks", st.median / ks->median);
	}
	snprintf(note, sizeof(note), "create + read + close of a cgroup iterator fd: %s, then %d vmstats.state[] counters by CO-RE; load_ms: the program's load, once for all rows",
		 kb_memcg_bpf_flush_name(c->bpf.b), n);
	kb_results_note(note);
	if (st.min > 0)
		return KSFT_PASS;
	snprintf(why, size, "non-positive sample: the clock or the loop is broken");
	return KSFT_FAIL;
}
