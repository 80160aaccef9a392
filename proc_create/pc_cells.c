// SPDX-License-Identifier: GPL-2.0
/*
 * proc_create: the parent's sizes (the book's, grown with malloc, and
 * touched ones) and the cells: one method at one size, timed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "mark.h"
#include "proc_create.h"

static const double book_sizes_mb[NR_BOOK_SIZES] = { 1.70, 2.70, 11.70 };

/* ---- parent sizes ---------------------------------------------------- */

/* One "key: value kB" field of /proc/self/status, without using malloc. */
static long status_kib(const char *key)
{
	char buf[4096], pattern[32], *p;

	if (kb_file_read_all("/proc/self/status", buf, sizeof(buf)) <= 0)
		return -1;
	/* The Vm* lines come early, never first ("Name:" is). */
	snprintf(pattern, sizeof(pattern), "\n%s:", key);
	p = strstr(buf, pattern);
	return p ? strtol(p + strlen(pattern), NULL, 10) : -1;
}

/* MemAvailable in bytes (0 when unknown). */
unsigned long long mem_available(void)
{
	char buf[8192], *p;

	if (kb_file_read_all("/proc/meminfo", buf, sizeof(buf)) <= 0)
		return 0;
	p = strstr(buf, "MemAvailable:");
	return p ? strtoull(p + 13, NULL, 10) * KIB : 0;
}

static void size_label(unsigned long long bytes, char *buf, size_t len)
{
	if (bytes % GIB == 0)
		snprintf(buf, len, "%lluGiB", bytes / GIB);
	else if (bytes % MIB == 0)
		snprintf(buf, len, "%lluMiB", bytes / MIB);
	else if (bytes % KIB == 0)
		snprintf(buf, len, "%lluKiB", bytes / KIB);
	else
		snprintf(buf, len, "%lluB", bytes);
}

static void touch_pages(char *p, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), off;

	for (off = 0; off < len; off += page)
		p[off] = 1;
}

/*
 * Grow the heap with malloc() (the book's way) until VmSize reaches
 * @target_kib. mallopt() in main() makes these blocks come from brk and
 * lets the heap end where the block ends.
 */
static int grow_heap_to(struct pc_ctx *c, long target_kib)
{
	while (c->nheap_blocks < ARRAY_SIZE(c->heap_blocks)) {
		long cur = status_kib("VmSize");
		size_t len;
		void *p;

		if (cur < 0)
			return -EIO;
		if (target_kib - cur < 4)	/* within a page */
			return 0;
		len = (size_t)(target_kib - cur) * KIB - 64;
		p = malloc(len);
		if (!p)
			return -ENOMEM;
		if (!c->o.no_touch)
			touch_pages(p, len);
		c->heap_blocks[c->nheap_blocks++] = p;
	}
	return 0;
}

void release_heap(struct pc_ctx *c)
{
	while (c->nheap_blocks)
		free(c->heap_blocks[--c->nheap_blocks]);
	malloc_trim(0);
}

void release_touched(struct pc_ctx *c)
{
	if (c->touched_map)
		munmap(c->touched_map, c->touched_len);
	c->touched_map = NULL;
	c->touched_len = 0;
}

static int map_touched(struct pc_ctx *c, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	touch_pages(p, len);
	c->touched_map = p;
	c->touched_len = len;
	return 0;
}

/* Make the parent the size @s asks for; record what was reached. */
static void set_parent_size(struct pc_ctx *c, struct psize *s)
{
	char what[64];
	int err = 0;

	if (s->kind == SIZE_BOOK) {
		err = grow_heap_to(c, s->target_kib);
	} else {
		release_heap(c);
		release_touched(c);
		s->target_kib = status_kib("VmSize") + (long)(s->bytes / KIB);
		if (s->bytes + MEM_RESERVE > mem_available())
			err = -ENOMEM;
		else
			err = map_touched(c, s->bytes);
	}
	if (err) {
		/* Not straight from s->label into s->skip: -Wrestrict. */
		snprintf(what, sizeof(what), "cannot make the parent %s",
			 s->label);
		snprintf(s->skip, sizeof(s->skip), "%s: %s", what,
			 strerror(-err));
	}
	s->vmsize_kib = status_kib("VmSize");
	s->vmrss_kib = status_kib("VmRSS");
}

void plan_book_sizes(struct pc_ctx *c)
{
	unsigned int i;

	c->baseline_kib = status_kib("VmSize");
	c->book_from_baseline = c->baseline_kib >
				(long)(book_sizes_mb[0] * 1024 + 4);
	for (i = 0; i < NR_BOOK_SIZES; i++) {
		struct psize *s = &c->sizes[i];
		double mb = book_sizes_mb[i];

		s->kind = SIZE_BOOK;
		s->book_mb = mb;
		snprintf(s->label, sizeof(s->label), "%.2fMB", mb);
		if (c->book_from_baseline)
			s->target_kib = c->baseline_kib +
				(long)((mb - book_sizes_mb[0]) * 1024 + 0.5);
		else
			s->target_kib = (long)(mb * 1024 + 0.5);
	}
}

void plan_touched_sizes(struct pc_ctx *c)
{
	unsigned int i;

	c->nsizes = NR_BOOK_SIZES;
	for (i = 0; i < c->o.ntouched; i++) {
		struct psize *s = &c->sizes[c->nsizes++];

		s->kind = SIZE_TOUCHED;
		s->bytes = c->o.touched[i];
		size_label(s->bytes, s->label, sizeof(s->label));
		s->target_kib = (long)(s->bytes / KIB) + c->baseline_kib;
	}
}

/* ---- measuring a cell ------------------------------------------------ */

static double tv_s(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

static double rusage_cpu_s(const struct rusage *ru)
{
	return tv_s(&ru->ru_utime) + tv_s(&ru->ru_stime);
}

double cap_for(const struct options *o,
	       const struct kb_cli_common *common, const struct psize *s)
{
	if (o->cell_time >= 0)
		return o->cell_time;
	if (!common->full && !o->count_set)
		return DEFAULT_CELL_TIME;
	/* Long runs: the book's sizes run N; a big parent's fork takes ms. */
	return s->kind == SIZE_BOOK ? 0 : FULL_EXTRA_CELL_TIME;
}

/*
 * Untimed creations first: the first ones after a size change fault in
 * the parent's page tables and the allocator's caches. 5% of the cell,
 * between 1 and MAX_WARMUP, and with a cell time at most a fifth of it
 * (a 1 GiB parent's fork takes tens of ms).
 */
static int warm_up(struct pc_ctx *c, const struct method *m, long count,
		   uint64_t cap_ns)
{
	long i, n = count / 20 < 1 ? 1 : count / 20;
	uint64_t start = kb_clock_ns();
	int err = 0;

	if (n > MAX_WARMUP)
		n = MAX_WARMUP;
	for (i = 0; i < n && !err; i++) {
		err = create_and_reap(c, m);
		if (cap_ns && kb_clock_ns() - start >= cap_ns / 5)
			break;
	}
	return err;
}

static void run_cell(struct pc_ctx *c, const struct method *m,
		     struct cell *cell, long count, double cap_s)
{
	long stride = (count + MAX_SAMPLES - 1) / MAX_SAMPLES;
	uint64_t cap_ns = (uint64_t)(cap_s * 1e9);
	struct rusage self0, self1, kids0, kids1;
	uint64_t start, end, t0, t1;
	size_t kept = 0;
	long i;
	char why[160];
	int err;

	cell->fifo = kb_settle_fifo_begin(why, sizeof(why));
	err = warm_up(c, m, count, cap_ns);
	getrusage(RUSAGE_SELF, &self0);
	getrusage(RUSAGE_CHILDREN, &kids0);
	start = kb_clock_ns();
	for (i = 0; i < count && !err; i++) {
		/* Outside t0..t1: the figures do not count the marks. */
		kb_mark_open();
		t0 = kb_clock_ns();
		err = create_and_reap(c, m);
		t1 = kb_clock_ns();
		kb_mark_close();
		if (i % stride == 0 && kept < MAX_SAMPLES)
			c->samples[kept++] = (double)(t1 - t0) / 1000.0;
		if (cap_ns && t1 - start >= cap_ns) {
			i++;
			break;
		}
	}
	end = kb_clock_ns();
	getrusage(RUSAGE_SELF, &self1);
	getrusage(RUSAGE_CHILDREN, &kids1);
	kb_settle_fifo_end(cell->fifo);
	if (err) {
		cell->state = describe_error(c, m, err, cell->why,
					     sizeof(cell->why)) == KSFT_SKIP ?
			      CELL_SKIP : CELL_FAIL;
		return;
	}
	cell->creations = i;
	cell->elapsed_s = (double)(end - start) / 1e9;
	cell->parent_cpu_s = rusage_cpu_s(&self1) - rusage_cpu_s(&self0);
	cell->children_cpu_s = rusage_cpu_s(&kids1) - rusage_cpu_s(&kids0);
	kb_stats_compute(c->samples, kept, &cell->st);	/* sorts samples[] */
	cell->p10 = kb_stats_percentile(c->samples, kept, 10);
	cell->state = CELL_OK;
}

void run_size(struct pc_ctx *c, unsigned int s)
{
	struct psize *sz = &c->sizes[s];
	unsigned int m;

	set_parent_size(c, sz);
	ksft_print_msg("parent %s: VmSize %ld kB (target %ld kB), VmRSS %ld kB%s%s\n",
		       sz->label, sz->vmsize_kib, sz->target_kib, sz->vmrss_kib,
		       sz->skip[0] ? ": SKIP " : "", sz->skip);
	for (m = 0; m < NR_METHODS; m++) {
		struct cell *cell = &c->cells[m][s];

		if (!c->measure[m] || c->unsupported[m])
			continue;
		if (sz->skip[0]) {
			cell->state = CELL_SKIP;
			snprintf(cell->why, sizeof(cell->why), "%s", sz->skip);
			continue;
		}
		run_cell(c, &methods[m], cell, c->o.count,
			 cap_for(&c->o, &c->common, sz));
		/* Long runs: say how far we are. */
		if (c->o.count >= PROGRESS_COUNT && cell->state == CELL_OK)
			ksft_print_msg("measured %s@%s: %ld creations in %.1f s\n",
				       methods[m].name, sz->label,
				       cell->creations, cell->elapsed_s);
	}
}
