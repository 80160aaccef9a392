// SPDX-License-Identifier: GPL-2.0
/*
 * proc_create: the results: each method's cells as rows, the shape
 * checks (memory shared or copied, cost flat or growing with the
 * parent's size) and the book's table.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdio.h>

#include "proc_create.h"

#define SHAPE(id, m, g) \
	[S_##id] = { .name = #id, .method = m, .grows = g }

const struct shape shapes[NR_SHAPES] = {
	SHAPE(vfork_flat, M_vfork, false),
	SHAPE(clone_flat, M_clone, false),
	SHAPE(posix_spawn_flat, M_posix_spawn, false),
	SHAPE(fork_grows, M_fork, true),
};

/* ---- reporting -------------------------------------------------------- */

static void row_name(const struct pc_ctx *c, char *buf, size_t len,
		     unsigned int m, unsigned int s)
{
	snprintf(buf, len, "%s@%s", methods[m].name, c->sizes[s].label);
}

static void report_cell(struct pc_ctx *c, unsigned int m, unsigned int s)
{
	const struct cell *cell = &c->cells[m][s];
	const struct psize *sz = &c->sizes[s];
	char name[64];

	row_name(c, name, sizeof(name), m, s);
	if (cell->state == CELL_SKIP || cell->state == CELL_FAIL) {
		ksft_print_msg("%s: %s: %s\n", name,
			       cell->state == CELL_SKIP ? "SKIP" : "FAIL",
			       cell->why);
		kb_results_status(name, cell->state == CELL_SKIP ? "skip" : "fail",
				  cell->why);
		return;
	}
	if (cell->state != CELL_OK)
		return;
	kb_results_row(name, "us", &cell->st);
	kb_results_mode();
	kb_results_note(methods[m].note);
	kb_results_figure(name,
			  "creations=%ld p10=%.4f elapsed_s=%.4f parent_cpu_s=%.4f children_cpu_s=%.4f rate_per_s=%.0f vmsize_kib=%ld vmrss_kib=%ld",
			  cell->creations, cell->p10, cell->elapsed_s,
			  cell->parent_cpu_s, cell->children_cpu_s,
			  cell->creations / cell->elapsed_s, sz->vmsize_kib,
			  sz->vmrss_kib);
	kb_results_extra_quiet("creations", cell->creations);
	kb_results_extra_quiet("p10", cell->p10);
	kb_results_extra_quiet("elapsed_s", cell->elapsed_s);
	kb_results_extra_quiet("parent_cpu_s", cell->parent_cpu_s);
	kb_results_extra_quiet("children_cpu_s", cell->children_cpu_s);
	kb_results_extra_quiet("rate_per_s", cell->creations / cell->elapsed_s);
	kb_results_extra_quiet("vmsize_kib", sz->vmsize_kib);
	kb_results_extra_quiet("vmrss_kib", sz->vmrss_kib);
	if (cell->fifo != KB_SETTLE_FIFO_OFF)
		kb_results_extra("sched_fifo", cell->fifo == KB_SETTLE_FIFO_ON);
}

/*
 * A method's result: FAIL when a cell failed (a wrong wait status, an
 * error the environment does not explain), SKIP when no cell could run,
 * PASS otherwise. Its timings are figures, not judged here.
 */
int report_method(void *ctx, int m, char *reason, size_t len)
{
	struct pc_ctx *c = ctx;
	const char *why = NULL;
	unsigned int s, ok = 0;

	if (c->unsupported[m]) {
		snprintf(reason, len, "%s", c->unsupported_why[m]);
		return KSFT_SKIP;
	}
	for (s = 0; s < c->nsizes; s++)
		report_cell(c, m, s);
	for (s = 0; s < c->nsizes; s++) {
		const struct cell *cell = &c->cells[m][s];

		if (cell->state == CELL_FAIL) {
			snprintf(reason, len, "%s", cell->why);
			return KSFT_FAIL;
		}
		ok += cell->state == CELL_OK;
		if (!why && cell->state == CELL_SKIP)
			why = cell->why;
	}
	if (ok)
		return KSFT_PASS;
	snprintf(reason, len, "%s", why && *why ? why : "no cell could run");
	return KSFT_SKIP;
}

/* First and last size where the method's cell was measured. */
static bool shape_span(const struct pc_ctx *c, int m, int *small, int *large)
{
	unsigned int s;

	*small = *large = -1;
	for (s = 0; s < c->nsizes; s++) {
		if (c->cells[m][s].state != CELL_OK)
			continue;
		if (*small < 0)
			*small = (int)s;
		*large = (int)s;
	}
	return *small >= 0 && *large > *small;
}

/* fork's own large/small ratio over the same two sizes, or NAN. */
static double fork_ratio(const struct pc_ctx *c, int small, int large)
{
	const struct cell *a = &c->cells[M_fork][small];
	const struct cell *b = &c->cells[M_fork][large];

	if (a->state != CELL_OK || b->state != CELL_OK)
		return NAN;
	return b->st.min / a->st.min;
}

/*
 * Why the span between the two sizes cannot judge the shape, or NULL.
 * fork_grows needs a touched parent of SPAN_MIN_SIZE or more. A flat
 * check needs that, or fork measured over the same span growing by
 * GROW_BOUND at least: only then would a method that copied the parent's
 * memory stand out.
 */
static const char *span_too_small(const struct pc_ctx *c,
				  const struct shape *sh, int small, int large,
				  char *buf, size_t len)
{
	const struct psize *big = &c->sizes[large];
	const struct psize *last = &c->sizes[c->nsizes - 1];
	double fr = fork_ratio(c, small, large);
	char control[96] = "";

	if (big->kind == SIZE_TOUCHED && big->bytes >= SPAN_MIN_SIZE)
		return NULL;
	if (!sh->grows && fr >= GROW_BOUND)
		return NULL;
	if (!sh->grows)
		snprintf(control, sizeof(control),
			 isnan(fr) ? ", and fork was not measured over it" :
			 ", and fork grew only %.2fx over it", fr);
	snprintf(buf, len,
		 "timing not judged: it would compare %s with %s, below %llu MiB touched%s%s%s",
		 c->sizes[small].label, big->label, SPAN_MIN_SIZE / MIB,
		 control, last->skip[0] ? "; " : " (try -m 1G)", last->skip);
	return buf;
}

/*
 * A shape check. First what the method does to the parent's memory, the
 * reason its cost is flat or grows (judged everywhere, also under TCG);
 * then the fastest creation at the smallest size against the largest, a
 * touched parent of at least SPAN_MIN_SIZE: load on a shared machine only
 * ever adds time, and a short cell can fall wholly into a busy moment,
 * which moves its median and even its 10th percentile.
 */
int report_shape(void *ctx, int id, char *reason, size_t len)
{
	struct pc_ctx *c = ctx;
	const struct shape *sh = &shapes[id];
	enum sharing want = sh->grows ? SHARE_COPIED : SHARE_SHARED;
	double a, b, ratio, bound = sh->grows ? GROW_BOUND : FLAT_BOUND;
	int m = sh->method, small, large;
	char span[320];

	if (c->unsupported[m]) {
		snprintf(reason, len, "%s", c->unsupported_why[m]);
		return KSFT_SKIP;
	}
	if (c->sharing[m] != want) {
		snprintf(reason, len, "%s", c->sharing_why[m]);
		return c->sharing[m] == SHARE_UNKNOWN && !c->sharing_why[m][0] ?
		       KSFT_SKIP : KSFT_FAIL;
	}
	ksft_print_msg("%s: memory: %s\n", sh->name, c->sharing_why[m]);
	if (!shape_span(c, m, &small, &large)) {
		snprintf(reason, len, "%s was measured at fewer than two parent sizes",
			 methods[m].name);
		return KSFT_SKIP;
	}
	a = c->cells[m][small].st.min;
	b = c->cells[m][large].st.min;
	ratio = b / a;
	kb_results_figure(sh->name,
			  "method=%s small=%s large=%s min_us_small=%.2f min_us_large=%.2f ratio=%.3f bound=%s%.2f fork_ratio=%.3f",
			  methods[m].name, c->sizes[small].label,
			  c->sizes[large].label, a, b, ratio,
			  sh->grows ? ">=" : "<=", bound,
			  fork_ratio(c, small, large));
	kb_results_status(sh->name, "ok", NULL);
	kb_results_extra_quiet("min_us_small", a);
	kb_results_extra_quiet("min_us_large", b);
	kb_results_extra_quiet("ratio", ratio);
	kb_results_extra_quiet("bound", bound);
	kb_results_extra_quiet("child_shares_memory", c->sharing[m] == SHARE_SHARED);
	kb_results_extra_quiet("fork_ratio", fork_ratio(c, small, large));
	if (span_too_small(c, sh, small, large, span, sizeof(span))) {
		snprintf(reason, len, "%s; memory check passed", span);
		return KSFT_SKIP;
	}
	if (sh->grows ? ratio >= bound : ratio <= bound)
		return KSFT_PASS;
	if (kb_env_emulated_guest()) {
		snprintf(reason, len,
			 "ratio %.2f outside the bound in an emulated (TCG) guest, whose timings are the emulator's: timing not judged; memory check passed",
			 ratio);
		return KSFT_SKIP;
	}
	snprintf(reason, len,
		 sh->grows ? "%s per creation at %s is only %.2fx its cost at %s (expected >= %.1fx)"
			   : "%s per creation at %s is %.2fx its cost at %s (expected <= %.1fx)",
		 methods[m].name, c->sizes[large].label, ratio,
		 c->sizes[small].label, bound);
	return KSFT_FAIL;
}

/* The book's layout: per size "elapsed (parent CPU) [children CPU] rate". */
void print_table(const struct pc_ctx *c)
{
	const struct options *o = &c->o;
	const struct psize *first = &c->sizes[0], *last = &c->sizes[c->nsizes - 1];
	char line[1024];
	unsigned int m, s;
	int n;

	ksft_print_msg("Time (secs) for %d creations, elapsed (parent CPU) [children CPU], and rate (creations per elapsed second, %s)\n",
		       BOOK_COUNT, KB_CLOCK_NAME);
	if (o->count != BOOK_COUNT || cap_for(o, &c->common, first) ||
	    cap_for(o, &c->common, last))
		ksft_print_msg("times scaled to %d from the creations made per cell (-n %ld%s)\n",
			       BOOK_COUNT, o->count,
			       cap_for(o, &c->common, last) ?
			       ", fewer where the cell time ran out" : "");
	n = snprintf(line, sizeof(line), "%-22s", "Method / VmSize");
	for (s = 0; s < c->nsizes; s++) {
		const struct psize *sz = &c->sizes[s];
		char head[40];

		if (sz->kind == SIZE_BOOK)
			snprintf(head, sizeof(head), "%.2f MB", sz->vmsize_kib / 1024.0);
		else
			snprintf(head, sizeof(head), "%.2f MB (+%s)",
				 sz->vmsize_kib / 1024.0, sz->label);
		n += snprintf(line + n, sizeof(line) - n, "| %-26s", head);
	}
	ksft_print_msg("%s\n", line);
	for (m = 0; m < NR_METHODS; m++) {
		if (!c->measure[m])
			continue;
		n = snprintf(line, sizeof(line), "%-22s", methods[m].label);
		for (s = 0; s < c->nsizes; s++) {
			const struct cell *cell = &c->cells[m][s];
			double k;

			if (cell->state != CELL_OK) {
				n += snprintf(line + n, sizeof(line) - n,
					      "| %-26s", cell->state == CELL_FAIL ?
					      "FAIL" : "skipped");
				continue;
			}
			k = (double)BOOK_COUNT / cell->creations;
			n += snprintf(line + n, sizeof(line) - n,
				      "|%7.2f (%5.2f) [%6.2f] %6.0f",
				      cell->elapsed_s * k, cell->parent_cpu_s * k,
				      cell->children_cpu_s * k,
				      cell->creations / cell->elapsed_s);
		}
		ksft_print_msg("%s\n", line);
	}
}
