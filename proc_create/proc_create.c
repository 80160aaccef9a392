// SPDX-License-Identifier: GPL-2.0
/*
 * proc_create: how fast the kernel creates processes, by method and by the
 * size of the parent, in the layout of Table 28-3 of The Linux Programming
 * Interface (100,000 creations per cell, parent of 1.70, 2.70 and 11.70 MB
 * of total virtual memory), plus posix_spawn(), clone3(CLONE_VFORK) and
 * parents with hundreds of megabytes touched.
 *
 * A cell is one method at one parent size: a loop that creates a child,
 * lets it exit at once (or exec a helper that exits at once) and waits for
 * it, checking its exit status. Every creation is timed; the cell reports
 * the elapsed time, the parent's and the children's CPU time and the rate.
 *
 * main() measures every cell the selected tests need (sizes outside,
 * methods inside: the parent grows once), then the kb_test table reports:
 * one test per method, then the shape checks.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "ktap.h"
#include "proc_create.h"

/* The kb_test table: the methods, then the shapes (the KTAP order). */
static struct kb_test tests[NR_TESTS];

static void build_tests(void)
{
	static char desc[NR_METHODS][128];
	size_t i;

	for (i = 0; i < NR_METHODS; i++) {
		snprintf(desc[i], sizeof(desc[i]), "%-22s %s", methods[i].label,
			 methods[i].note);
		tests[i] = (struct kb_test)KB_TEST_ARG(methods[i].name,
						       report_method, (int)i,
						       desc[i]);
	}
	for (i = 0; i < NR_SHAPES; i++)
		tests[NR_METHODS + i] = (struct kb_test)KB_TEST_ARG(
			shapes[i].name, report_shape, (int)i,
			shapes[i].grows ? "shape check: fork's cost grows with the parent"
					: "shape check: cost stays flat with the parent's size");
}

/* ---- options ------------------------------------------------------------ */

/* One size of -m: a touched parent beyond the book's sizes. */
static void add_size(const char *item, void *arg)
{
	unsigned long long avail = mem_available(), b;
	struct options *o = arg;

	b = kb_cli_parse_size(item, "--size", 4096, 1ULL << 50);
	if (o->ntouched + NR_BOOK_SIZES == MAX_SIZES)
		kb_cli_error("too many sizes (at most %d)",
			     MAX_SIZES - (int)NR_BOOK_SIZES);
	if (avail && b + MEM_RESERVE > avail)
		kb_cli_error("invalid value '%s' for --size: beyond the memory available (MemAvailable %llu MiB, %llu MiB kept free)",
			     item, avail / MIB, MEM_RESERVE / MIB);
	o->touched[o->ntouched++] = b;
}

static void parse_sizes(const char *arg, void *ctx)
{
	struct options *o = ctx;

	o->touched_set = true;
	o->ntouched = 0;
	if (strcmp(arg, "none"))
		kb_cli_each_item(arg, "--size", add_size, o);
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return (x > y) - (x < y);
}

static void parse_options(int argc, char **argv, struct pc_ctx *c)
{
	struct options *o = &c->o;
	const struct kb_cli_opt opts[] = {
		KB_OPT_LONG('n', "count", &o->count, 1, MAX_COUNT, "N",
			    "creations per cell (default " KB_CLI_STR(DEFAULT_COUNT)
			    ", " KB_CLI_STR(BOOK_COUNT) " with --full,\n"
			    KB_CLI_STR(SLOW_COUNT) " when KSFT_MACHINE_SLOW=yes)"),
		KB_OPT_CALLBACK('m', "size", parse_sizes, "LIST",
				"parent sizes beyond the book's: memory mapped and\n"
				"touched, comma list with K/M/G suffix (default 1G,\n"
				"256M when KSFT_MACHINE_SLOW=yes); 'none' for none"),
		KB_OPT_SECONDS('T', "cell-time", &o->cell_time, 0, 86400, "S",
			       "stop a cell after S seconds (fractions and the\n"
			       "units us, ms, s allowed) even if N is not reached;\n"
			       "0 = never (default: " KB_CLI_STR(DEFAULT_CELL_TIME)
			       " s when neither -n nor\n"
			       "--full is given; otherwise none for the book's\n"
			       "sizes and " KB_CLI_STR(FULL_EXTRA_CELL_TIME)
			       " s for the -m sizes)"),
		KB_OPT_STRING('x', "helper", &o->helper, "WHAT",
			      "program the *_exec methods run: libc (default,\n"
			      HELPER_LIBC ", dynamically linked),\n"
			      "nolibc (" HELPER_NOLIBC ", static, no C library\n"
			      "start-up) or a path"),
		KB_OPT_FLAG(0, "no-touch", &o->no_touch,
			    "do not touch the book sizes' heap"),
		KB_OPT_FLAG(0, "thp", &o->thp,
			    "leave transparent huge pages on (default: off for\n"
			    "this process, PR_SET_THP_DISABLE)"),
		KB_OPT_END(),
	};
	const struct kb_cli cli = {
		.opts = opts, .ctx = o, .common = KB_CLI_ALL,
		.about = "Measure process creation by method and parent size (TLPI Table 28-3):\n"
			 "create a child, let it exit (or exec a helper that exits), wait, N times\n"
			 "per cell; print KTAP (one result per method, then shape checks), the\n"
			 "book's table as diagnostics, and optionally kbench JSON.\n"
			 "\n"
			 "Parent sizes: the book's 1.70, 2.70 and 11.70 MB of total VmSize (heap\n"
			 "grown with malloc and touched), then the touched sizes of -m.",
		.notes = "--full is the book's run: " KB_CLI_STR(BOOK_COUNT) " creations per cell. -t selects methods and\n"
			 "shape checks; a shape check measures its method.\n"
			 "\n"
			 "Times: CLOCK_MONOTONIC elapsed, getrusage() CPU of the parent (user+sys)\n"
			 "and of the reaped children. Rate = creations / elapsed second. The table\n"
			 "scales every cell to the book's " KB_CLI_STR(BOOK_COUNT) " creations.\n"
			 "Shape checks: first the child's effect on the parent's memory (vfork and\n"
			 "clone children share it, posix_spawn returns after the child's exec,\n"
			 "fork's child writes to a copy), judged everywhere; then the fastest\n"
			 "creation at the smallest size against the largest: vfork, clone and\n"
			 "posix_spawn grow by at most " KB_CLI_STR(FLAT_BOUND) "x (judged when the largest is a\n"
			 "touched parent of >= " KB_CLI_STR(SPAN_MIN_MIB) " MiB or fork grew " KB_CLI_STR(GROW_BOUND)
			 "x over the same span),\n"
			 "fork by at least " KB_CLI_STR(GROW_BOUND) "x (judged from a touched parent of >= "
			 KB_CLI_STR(SPAN_MIN_MIB) " MiB).\n"
			 "Otherwise the timing is not judged (SKIP).\n"
			 "The process and its children run pinned to one CPU unless --no-pin.",
		.tests = tests, .ntests = NR_TESTS,
	};

	o->cell_time = -1.0;
	o->helper = "libc";
	kb_cli_parse(argc, argv, &cli, &c->common);
	o->count_set = o->count > 0;
	if (!o->count_set)
		o->count = kb_cli_pick_count(&c->common, DEFAULT_COUNT, BOOK_COUNT,
					     SLOW_COUNT);
	if (!o->touched_set) {
		o->touched[0] = kb_env_machine_slow() ? SLOW_LARGE : DEFAULT_LARGE;
		o->ntouched = 1;
	}
	qsort(o->touched, o->ntouched, sizeof(o->touched[0]), cmp_ull);
}

/* ---- the run ------------------------------------------------------------ */

static void mark_unsupported(struct pc_ctx *c, unsigned int m)
{
	unsigned int s;

	for (s = 0; s < c->nsizes; s++) {
		c->cells[m][s].state = CELL_SKIP;
		snprintf(c->cells[m][s].why, sizeof(c->cells[m][s].why),
			 "%.230s", c->unsupported_why[m]);
	}
}

/* The methods the selected tests need: their own, and the shapes'. */
static void choose_methods(struct pc_ctx *c)
{
	unsigned int i;

	for (i = 0; i < NR_METHODS; i++)
		c->measure[i] = c->common.selected[i];
	for (i = 0; i < NR_SHAPES; i++)
		if (c->common.selected[NR_METHODS + i])
			c->measure[shapes[i].method] = true;
}

static void record_params(struct pc_ctx *c)
{
	char where[160];

	kb_placement_describe(&c->place, where, sizeof(where));
	kb_results_param_num("count", c->o.count);
	kb_results_param_num("cell_time_s", cap_for(&c->o, &c->common, &c->sizes[0]));
	kb_results_param_num("baseline_vmsize_kib", c->baseline_kib);
	kb_results_param_str("exec_helper", c->exec_path);
	kb_results_param_str("touch_book_heap", c->o.no_touch ? "no" : "yes");
	kb_results_param_str("thp", c->o.thp ? "on" : "disabled (PR_SET_THP_DISABLE)");
	ksft_print_msg("%ld creations per cell; exec helper %s; clock %s; placement: %s\n",
		       c->o.count, c->exec_path, KB_CLOCK_NAME, where);
	ksft_print_msg("baseline VmSize %ld kB%s\n", c->baseline_kib,
		       c->book_from_baseline ?
		       ": above 1.70 MB, book sizes are baseline + 0, 1 and 10 MB" : "");
}

int main(int argc, char **argv)
{
	static struct pc_ctx c;
	unsigned int m, s;

	kb_init("proc_create", argc, argv);
	build_tests();
	parse_options(argc, argv, &c);
	locate_helpers(&c);
	kb_cleanup_push(reap_children, &c);

	/* Big malloc()s from the brk heap, the heap ends where they end. */
	mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
	mallopt(M_TOP_PAD, 0);
	if (!c.o.thp)
		prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	/* Children inherit the CPU: no cross-CPU wake-up per creation. */
	kb_placement_setup(&c.place, c.common.no_pin);
	/* Before the parent grows: its children would share its pages. */
	kb_settle_fifo_prepare();

	ksft_print_header();
	choose_methods(&c);
	for (m = 0; m < NR_METHODS; m++)
		if (c.measure[m])
			probe_method(&c, m);
	for (s = 0; s < NR_SHAPES; s++)
		if (c.measure[shapes[s].method])
			probe_sharing(&c, shapes[s].method);
	plan_book_sizes(&c);
	plan_touched_sizes(&c);
	for (m = 0; m < NR_METHODS; m++)
		if (c.measure[m] && c.unsupported[m])
			mark_unsupported(&c, m);
	record_params(&c);

	for (s = 0; s < c.nsizes; s++)
		run_size(&c, s);
	release_heap(&c);
	release_touched(&c);

	kb_ktap_run_tests(tests, NR_TESTS, c.common.selected, &c);
	print_table(&c);
	kb_ktap_finish(c.common.json);
}
