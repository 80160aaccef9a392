// SPDX-License-Identifier: GPL-2.0
/*
 * memcg_ks: what reading a memory cgroup's memory.stat and memory.numa_stat
 * costs, and whether the filtered ".ks" files (memory.stat.ks,
 * memory.numa_stat.ks, an out-of-tree BTF field-query extension) are
 * cheaper, plus checks that the files say what the kernel holds.
 *
 * A read is timed three ways:
 *   per_read     lseek(0) + read on one kept fd (a monitoring daemon);
 *   per_cat      open + read + close for every query (a script);
 *   cat_process  fork + exec of an external "cat FILE" + wait (a shell).
 *
 * By default the test creates its own memory cgroup (v2 or v1), puts a
 * helper child into it that allocates and touches memory so the counters
 * move, and removes both at the end, also on SIGINT/SIGTERM.
 *
 * Shape: a table of checks and a table of timed sources (legacy file, .ks
 * file with a filter); every test is a function of the run's context that
 * returns a KSFT_* code and fills a reason, and depends on no other test.
 * "ks_" in names means the .ks filter files.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ktap.h"
#include "memcg_ks.h"
#include "rtsched.h"

const char *const file_name[NR_FILES] = {
	"memory.stat", "memory.numa_stat",
};
const char *const file_tag[NR_FILES] = { "stat", "numa_stat" };

const char *const mode_name[NR_MODES] = {
	"per_read", "per_cat", "cat_process",
};

const char *const mode_note[NR_MODES] = {
	"lseek(0) + read on one open fd",
	"open + read + close",
	"fork + exec of 'cat FILE' (stdout to /dev/null) + waitpid",
};

/* ---- the test tables --------------------------------------------------- */

#define T(name, fn, desc)	KB_TEST(name, fn, desc)

/*
 * The checks, then the timed rows (not in this table: their names depend
 * on --fields). -t picks checks and leaves the rows out; --bench runs
 * the rows only.
 */
static const struct kb_test checks[] = {
	T("stat_parse", check_stat_parse,
	  "memory.stat parses and has the keys of its cgroup version"),
	T("numa_stat_sums", check_numa_sums,
	  "with 64 MiB charged, per-node values add up to the totals"),
	T("stat_anon_grows", check_anon_grows,
	  "anon (v2) / rss (v1) grows by a touched allocation"),
	T("stat_anon_falls", check_anon_falls,
	  "... and falls when it is freed"),
	T("numa_stat_node_local", check_numa_node,
	  "memory bound to a node shows on that node (2+ nodes)"),
	T("cat_devnull_process", time_devnull_cat,
	  "timing: fork + exec of 'cat /dev/null' + wait"),
	T("ks_matches_legacy", check_ks_matches,
	  "memory.stat.ks: exactly the filter's keys, memory.stat's values"),
	T("ks_invalid_filter_rejected", check_ks_invalid,
	  "bad filters fail with EINVAL and keep the previous one"),
	T("ks_empty_write_resets", check_ks_reset,
	  "after a filter took effect, an empty write restores memory.stat"),
	T("bpf_iter_matches_stat", check_bpf_matches_stat,
	  "a BPF cgroup iterator's counters are memory.stat's values"),
};

/*
 * The run's table: the checks (unless --bench), then the timed rows
 * (unless -t picked checks): one per variant, file and way to read, then
 * one bpf_iterN per --fields size. Names and selection in @c.
 */
static void build_table(struct memcg_ctx *c)
{
	struct kb_test *t = c->table;
	int v, f, m, i, n = 0;

	for (i = 0; i < (int)ARRAY_SIZE(checks); i++) {
		c->selected[n] = !c->opt.bench && c->common.selected[i];
		t[n++] = checks[i];
	}
	for (v = 0; v < c->nvariants; v++)
		for (f = 0; f < NR_FILES; f++)
			for (m = 0; m < nr_modes(c); m++) {
				row_name(c, v, f, m, c->names[n],
					 sizeof(c->names[n]));
				c->selected[n] = !c->common.any_selected;
				t[n] = (struct kb_test)KB_TEST_ARG(c->names[n],
					file_row, file_row_arg(v, f, m), NULL);
				n++;
			}
	for (i = 0; i < c->opt.nfields; i++) {
		snprintf(c->names[n], sizeof(c->names[n]), "bpf_iter%d",
			 c->opt.fields[i]);
		c->selected[n] = !c->common.any_selected;
		t[n] = (struct kb_test)KB_TEST_ARG(c->names[n], bpf_row,
						   c->opt.fields[i], NULL);
		n++;
	}
	c->ntable = n;
}

/* ---- the whole run ----------------------------------------------------- */

static void record_params(struct memcg_ctx *c)
{
	const struct options *o = &c->opt;
	char path[PATH_MAX + 64];
	ssize_t n;

	kb_results_param_str("cgroup", c->dir);
	kb_results_param_num("cgroup_version", c->ver);
	kb_results_param_str("cgroup_origin", c->own_cgroup ? "created" :
		     o->cgpath ? "CGPATH" : o->root ? "root" : "own (inherited)");
	kb_results_param_num("count", o->count);
	kb_results_param_num("batch", o->batch);
	kb_results_param_num("cat_count", o->cat_count);
	kb_results_param_num("alloc_bytes", (double)o->alloc);
	kb_results_param_num("page_size", c->page_size);
	kb_results_param_num("ks_stat", c->have_ks[F_STAT]);
	kb_results_param_num("ks_numa_stat", c->have_ks[F_NUMA]);
	kb_results_param_num("flush", !o->no_flush);
	kb_results_param_num("max_row_time_s", o->row_budget_s);
	kb_results_param_num("clock_overhead_ns", kb_clock_overhead_ns());
	kb_results_param_num("process_fifo_prio", c->proc_prio);
	cg_file(c, path, sizeof(path), "memory.stat");
	n = kb_file_read_all(path, c->read_buf, sizeof(c->read_buf));
	if (n >= 0)
		kb_results_param_num("stat_bytes", (double)n);
}

static void run_tests(struct memcg_ctx *c)
{
	const struct options *o = &c->opt;
	uint64_t t0 = kb_clock_ns();
	char where[160];

	ksft_print_header();
	ksft_print_msg("cgroup v%d %s (%s)\n", c->ver, c->dir,
		       c->own_cgroup ? "created for this run" :
		       o->cgpath ? o->cgpath_from :
		       o->root ? "root of the hierarchy" : "the one we run in");
	if (c->create_note[0])
		ksft_print_msg("not creating a cgroup: %s\n", c->create_note);
	ksft_print_msg("reads per row %ld (batches of %ld), cat processes %ld, clock %s\n",
		       o->count, o->batch, o->cat_count, KB_CLOCK_NAME);
	kb_placement_describe(&c->place, where, sizeof(where));
	ksft_print_msg("placement: %s%s\n", where,
		       c->proc_prio ? "; process rows at SCHED_FIFO 1" : "");
	if (c->sched_note[0])
		ksft_print_msg("%s\n", c->sched_note);
	if (!c->have_ks[F_STAT])
		ksft_print_msg("kernel has no memory.stat.ks in %s: the ks rows skip, the legacy rows run\n",
			       c->dir);
	build_table(c);
	kb_ktap_run_tests(c->table, c->ntable, c->selected, c);
	if (c->bpf.b && !c->common.any_selected)
		ksft_print_msg("bpf_iter: program open+load+attach %.3f ms, once for the check and the rows\n",
			       c->bpf.load_ns / 1e6);
	kb_memcg_bpf_free(c->bpf.b);
	c->bpf.b = NULL;
	ks_reset(c);
	if (!c->common.any_selected)
		print_table(c);
	ksft_print_msg("wall time %.1f s\n", (double)(kb_clock_ns() - t0) / 1e9);
}

/* --set-filter: write the filter to both .ks files and leave it there. */
static int set_filter_mode(struct memcg_ctx *c)
{
	const struct options *o = &c->opt;
	char filter[FILTER_LEN];
	int f, err, written = 0;

	if (!strcmp(o->set_filter, "reset")) {
		snprintf(filter, sizeof(filter), "\n");
	} else if (isdigit((unsigned char)o->set_filter[0])) {
		int n = (int)kb_cli_parse_ll(o->set_filter, "--set-filter", 1,
					 MAX_FIELDS);

		build_field_filter(n, !o->no_flush, filter, sizeof(filter));
	} else {
		build_key_filter(o->keys, !o->no_flush, filter, sizeof(filter));
	}
	ks_probe(c);
	for (f = 0; f < NR_FILES; f++) {
		if (!c->have_ks[f]) {
			printf("%s: kernel has no %s.ks in %s: no filter set\n",
			       kb_cli_prog(), file_name[f], c->dir);
			continue;
		}
		err = ks_write(c, f, filter);
		if (err) {
			fprintf(stderr, "%s: writing '%s' to %s/%s.ks: %s\n",
				kb_cli_prog(), filter, c->dir, file_name[f],
				strerror(-err));
			return 1;
		}
		printf("%s: %s/%s.ks: filter set to '%s'\n", kb_cli_prog(), c->dir,
		       file_name[f], filter[0] == '\n' ? "" : filter);
		written++;
	}
	return written ? 0 : KSFT_SKIP;
}

/* ---- command line ------------------------------------------------------ */

static void add_field(const char *item, void *arg)
{
	struct options *opt = arg;

	if (opt->nfields == MAX_FILTERS)
		kb_cli_error("--fields: at most %d sizes", MAX_FILTERS);
	opt->fields[opt->nfields++] =
		(int)kb_cli_parse_ll(item, "--fields", 1, MAX_FIELDS);
}

static void parse_fields(const char *arg, void *ctx)
{
	struct options *opt = ctx;

	opt->nfields = 0;
	kb_cli_each_item(arg, "--fields", add_field, opt);
}

static void count_key(const char *item, void *arg)
{
	(void)item;
	++*(int *)arg;
}

/* Key names and BTF paths: letters, digits, '_', '.', '[', ']'. */
static void parse_keys(const char *arg, void *ctx)
{
	struct options *opt = ctx;
	const char *p;
	int n = 0;

	kb_cli_each_item(arg, "--keys", count_key, &n);
	if (strlen(arg) >= sizeof(opt->keys) - 8)
		kb_cli_error("invalid value '%s' for --keys: too long", arg);
	for (p = arg; *p; p++) {
		if (*p != ',' && !isalnum((unsigned char)*p) &&
		    !strchr("_.[]", *p))
			kb_cli_error("invalid value '%s' for --keys: bad character '%c'",
				     arg, *p);
	}
	if (n > MAX_FIELDS)
		kb_cli_error("invalid value '%s' for --keys: more than %d keys",
			     arg, MAX_FIELDS);
	snprintf(opt->keys, sizeof(opt->keys), "%s", arg);
	opt->keys_set = true;
}

/* Defaults that depend on other options, after the whole line. */
static void finish_options(struct options *opt,
			   const struct kb_cli_common *common)
{
	const char *env = getenv("CGPATH");
	bool big = common->full || opt->bench;
	static const int seed_sizes[] = { 3, 16, 32, 64, 128 };

	if (opt->root && opt->cgpath)
		kb_cli_error("--root and --cgroup exclude each other");
	if (opt->bench && opt->set_filter)
		kb_cli_error("--bench and --set-filter exclude each other");
	if (!opt->cgpath && !opt->root && env && *env) {
		opt->cgpath = env;
		opt->cgpath_from = "CGPATH";
	}
	if (opt->set_filter && strcmp(opt->set_filter, "reset") &&
	    !isdigit((unsigned char)opt->set_filter[0]))
		parse_keys(opt->set_filter, opt);
	/*
	 * The quick default run bounds each row in time, so that an emulated
	 * guest (cat processes there take ~100 ms) still ends in time.
	 */
	if (!opt->count && !opt->cat_count && !big && opt->row_budget_s < 0)
		opt->row_budget_s = kb_env_machine_slow() ? 1.0 : DEFAULT_ROW_BUDGET_S;
	if (opt->row_budget_s < 0)
		opt->row_budget_s = 0;
	if (!opt->count)
		opt->count = big ? FULL_COUNT :
			     kb_env_machine_slow() ? SLOW_COUNT : DEFAULT_COUNT;
	if (!opt->cat_count)
		opt->cat_count = kb_cli_pick_count(common, DEFAULT_CAT_COUNT,
						   FULL_CAT_COUNT,
						   SLOW_CAT_COUNT);
	/*
	 * In exact mode one read a sample: a batch of ten of the larger
	 * reads holds a timer tick (2,700 instructions) or a slab refill
	 * (130) in up to half of the samples, and the median then sits on
	 * the edge between those and the clean ones, where the boots'
	 * timing moves it. Alone, the read is clean in most samples.
	 */
	if (!opt->batch && kb_env_icount_shift() >= 0)
		opt->batch = 1;
	if (!opt->batch) {
		opt->batch = opt->count / 200;
		opt->batch = opt->batch < 1 ? 1 :
			     opt->batch > 1000 ? 1000 : opt->batch;
	}
	if (opt->batch > opt->count / 2)
		kb_cli_error("--batch %ld: at most half of --count (%ld)",
			     opt->batch, opt->count);
	if (!opt->nfields) {
		memcpy(opt->fields, seed_sizes, sizeof(seed_sizes));
		opt->nfields = ARRAY_SIZE(seed_sizes);
	}
}

static void parse_options(struct memcg_ctx *c, int argc, char **argv)
{
	struct options *o = &c->opt;
	const struct kb_cli_opt opts[] = {
		KB_OPT_GROUP("Where:"),
		KB_OPT_STRING('c', "cgroup", &o->cgpath, "DIR",
			      "read the memory cgroup DIR (default: $CGPATH; if\n"
			      "unset, create a cgroup of our own and remove it at\n"
			      "the end, or read the one we run in without the\n"
			      "right to create one)"),
		KB_OPT_FLAG(0, "root", &o->root,
			    "read the root of the memory hierarchy (found in\n"
			    "/proc/self/mountinfo)"),
		KB_OPT_GROUP("How much:"),
		KB_OPT_LONG('n', "count", &o->count, 2, 100000000, "N",
			    "reads per per_read / per_cat row (default "
			    KB_CLI_STR(DEFAULT_COUNT) ",\n" KB_CLI_STR(FULL_COUNT)
			    " with --full or --bench, " KB_CLI_STR(SLOW_COUNT)
			    " if KSFT_MACHINE_SLOW=yes)"),
		KB_OPT_LONG('b', "batch", &o->batch, 1, 100000, "N",
			    "reads per timed sample (default: count / 200,\n"
			    "between 1 and 1000; 1 in exact mode)"),
		KB_OPT_LONG(0, "cat-count", &o->cat_count, 2, 1000000, "N",
			    "cat processes per cat_process row (default "
			    KB_CLI_STR(DEFAULT_CAT_COUNT) ",\n"
			    KB_CLI_STR(FULL_CAT_COUNT) " with --full)"),
		KB_OPT_SECONDS(0, "max-row-time", &o->row_budget_s, 0.001, 86400,
			       "SEC",
			       "end a timed row after SEC seconds (at least 21\n"
			       "samples); default: 2 s (1 s if KSFT_MACHINE_SLOW=yes)\n"
			       "in the quick run when neither count is given, no\n"
			       "limit otherwise"),
		KB_OPT_SIZE('m', "alloc", &o->alloc, 4 * MIB, 4096 * MIB, "SIZE",
			    "anonymous memory the child touches for the growth\n"
			    "checks (default 64M; K, M, G suffixes)"),
		KB_OPT_GROUP("Filters (.ks files):"),
		KB_OPT_CALLBACK('f', "fields", parse_fields, "LIST",
				"filter sizes, comma separated, each 1.."
				KB_CLI_STR(MAX_FIELDS) " (default\n"
				"3,16,32,64,128; 3 is the seed's pick\n"
				"vmstats.state[14],[16],[5]; N is N fields cycling\n"
				"through vmstats.state[0..31])"),
		KB_OPT_CALLBACK('k', "keys", parse_keys, "LIST",
				"key-name filter, e.g. anon,file,shmem (default: the\n"
				"first 8 keys of memory.stat)"),
		KB_OPT_FLAG(0, "no-flush", &o->no_flush,
			    "leave out the leading 'flush' token"),
		KB_OPT_GROUP("Modes:"),
		KB_OPT_FLAG(0, "bench", &o->bench,
			    "the seed's sequence only: per_read rows of the\n"
			    "legacy files, then of the .ks files with each filter\n"
			    "of --fields (default count " KB_CLI_STR(FULL_COUNT) ")"),
		KB_OPT_STRING(0, "set-filter", &o->set_filter, "N|KEYS|reset",
			      "write a filter of N fields, of the key names KEYS,\n"
			      "or reset to legacy, to both .ks files and exit\n"
			      "(the filter stays)"),
		KB_OPT_END(),
	};
	const struct kb_cli cli = {
		.opts = opts, .ctx = o, .common = KB_CLI_ALL,
		.about = "Time reads of a memory cgroup's memory.stat and memory.numa_stat, legacy\n"
			 "and, when the kernel has them, the filtered memory.stat.ks and\n"
			 "memory.numa_stat.ks; check that the files are consistent. Prints KTAP.\n"
			 "\n"
			 "Each file is read three ways: per_read (lseek(0) + read on one open fd),\n"
			 "per_cat (open + read + close), cat_process (an external 'cat FILE').",
		.notes = "--full is the seed-sized run (--count " KB_CLI_STR(FULL_COUNT)
			 " --cat-count " KB_CLI_STR(FULL_CAT_COUNT) ").\n"
			 "-t NAME runs the checks named (see -l) and no timing row. The program\n"
			 "runs pinned to one CPU and the process rows at SCHED_FIFO 1 when\n"
			 "permitted (CAP_SYS_NICE or RLIMIT_RTPRIO); --no-pin leaves both to the\n"
			 "scheduler.\n"
			 "Figures are microseconds per read (" KB_CLOCK_NAME ").\n"
			 "Writing a filter or creating a cgroup needs write access (ownership\n"
			 "or CAP_DAC_OVERRIDE): without it those parts skip. A filter we write\n"
			 "is reset to legacy at the end.",
		.tests = checks, .ntests = ARRAY_SIZE(checks),
	};

	o->alloc = DEFAULT_ALLOC;
	o->cgpath_from = "--cgroup";
	o->row_budget_s = -1;
	kb_cli_parse(argc, argv, &cli, &c->common);
	finish_options(o, &c->common);
}

/* Static: the cleanup handlers keep pointers into it until exit. */
static struct memcg_ctx ctx = {
	.child = { .pid = -1, .req_fd = -1, .ack_fd = -1 },
	.devnull_fd = -1,
	.numa_node = -1,
	.devnull_cat_median = -1,
};

int main(int argc, char **argv)
{
	struct memcg_ctx *c = &ctx;
	int err;

	kb_init("memcg_ks", argc, argv);
	parse_options(c, argc, argv);
	c->page_size = sysconf(_SC_PAGESIZE);
	c->devnull_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (c->opt.set_filter) {
		if (!c->opt.cgpath)
			c->opt.root = true;
		pick_cgroup(c, false);
		return set_filter_mode(c);
	}
	pick_cgroup(c, true);
	if (!c->opt.keys_set)
		default_keys(c, c->opt.keys, sizeof(c->opt.keys));
	build_variants(c);
	if (!c->opt.bench)
		place_child(c);
	else
		snprintf(c->child.skip, sizeof(c->child.skip), "--bench");
	/* --bench runs no check: the verdict is never used */
	if (!c->child.skip[0]) {
		err = child_do(&c->child, CHILD_ALLOC, BASE_ALLOC, -1);
		if (err)
			c->child.verdict = kb_errno_result(err, KB_ENV_NO_CAP,
							   "the child cannot allocate",
							   c->child.skip,
							   sizeof(c->child.skip));
	}
	ks_probe(c);
	kb_placement_setup(&c->place, c->common.no_pin);
	plan_priority(c);
	record_params(c);
	run_tests(c);
	child_kill(&c->child);
	if (c->own_cgroup && kb_cgroup_remove(&c->test_cg))
		ksft_print_msg("cgroup %s still there after removal\n",
			       c->test_cg.path);
	kb_ktap_finish(c->common.json);
}
