// SPDX-License-Identifier: GPL-2.0
/*
 * memcg_ks: the checks that the files say what the kernel holds: the
 * legacy files against a known charge, the .ks files against memory.stat,
 * the BPF iterator's counters against memory.stat.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <numa.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "memcg_ks.h"
#include "numastat.h"

/* ---- checks of the legacy files ---------------------------------------- */

/* Keys every memory.stat of that cgroup version has had since 4.x. */
static const char *const v1_keys[] = {
	"cache", "rss", "mapped_file", "pgpgin", "pgpgout", "pgfault",
	"pgmajfault", "inactive_anon", "active_anon", "inactive_file",
	"active_file", "unevictable", "hierarchical_memory_limit",
	"total_cache", "total_rss",
};
static const char *const v2_keys[] = {
	"anon", "file", "kernel_stack", "sock", "shmem", "file_mapped",
	"file_dirty", "file_writeback", "inactive_anon", "active_anon",
	"inactive_file", "active_file", "unevictable", "slab_reclaimable",
	"slab_unreclaimable", "pgfault", "pgmajfault",
};

int check_stat_parse(void *ctx, char *why, size_t size)
{
	struct memcg_ctx *c = ctx;
	bool v2 = c->ver == KB_CGROUP_V2;
	const char *const *keys = v2 ? v2_keys : v1_keys;
	size_t i, n = v2 ? ARRAY_SIZE(v2_keys) : ARRAY_SIZE(v1_keys);
	struct kb_memstat st;

	if (read_stat(c, "memory.stat", &st, why, size))
		return KSFT_FAIL;
	for (i = 0; i < n; i++) {
		if (!kb_memstat_get(&st, keys[i], NULL)) {
			snprintf(why, size, "cgroup v%d memory.stat lacks '%s'",
				 c->ver, keys[i]);
			return KSFT_FAIL;
		}
	}
	if (st.comments) {
		snprintf(why, size, "memory.stat has '#' lines");
		return KSFT_FAIL;
	}
	kb_results_figure("stat_parse", "keys=%zu cgroup_version=%d", st.n, c->ver);
	return KSFT_PASS;
}

static double wait_limit_s(void)
{
	return kb_env_machine_slow() ? 30.0 : 6.0;
}

typedef int (*get_fn)(struct memcg_ctx *c, unsigned long long *v);

/*
 * Re-read until get() - @base passes @min_delta (growing, @sign +1) or
 * @base - get() does (falling, @sign -1), bounded by wait_limit_s():
 * stats may be flushed only every 2 s. Returns the last value read.
 */
static int wait_for_delta(struct memcg_ctx *c, get_fn get,
			  unsigned long long base, long long min_delta,
			  int sign, unsigned long long *last, double *waited_s)
{
	uint64_t t0 = kb_clock_ns();
	int err;

	for (;;) {
		long long delta;

		err = get(c, last);
		if (err)
			return err;
		delta = sign > 0 ? (long long)(*last - base) :
			(long long)(base - *last);
		*waited_s = (double)(kb_clock_ns() - t0) / 1e9;
		if (delta >= min_delta || *waited_s > wait_limit_s())
			return 0;
		usleep(20000);
	}
}

static const char *anon_key(const struct memcg_ctx *c)
{
	return c->ver == KB_CGROUP_V2 ? "anon" : "rss";
}

static int get_anon(struct memcg_ctx *c, unsigned long long *v)
{
	return read_stat_key(c, anon_key(c), v);
}

/* Most of an allocation must show: 3/4 of it. */
static long long min_visible(const struct memcg_ctx *c)
{
	return (long long)(c->opt.alloc / 4 * 3);
}

/* Charge --alloc through the child and wait until anon shows it. */
static int charge_and_wait(struct memcg_ctx *c, unsigned long long *before,
			   unsigned long long *grown, double *waited)
{
	int err = get_anon(c, before);

	if (!err)
		err = child_do(&c->child, CHILD_ALLOC, c->opt.alloc, -1);
	if (!err)
		err = wait_for_delta(c, get_anon, *before, min_visible(c), 1,
				     grown, waited);
	return err;
}

/*
 * The numa_stat lines of a cgroup holding a known, large charge: per key,
 * the nodes add up to the total (v1) or to memory.stat (v2, read before
 * and after) within MATCH_TOL_PPM, and the charge shows in the anon line.
 */
static int numa_sums_once(struct memcg_ctx *c, int *lines,
			  unsigned long long *anon, char *why, size_t size)
{
	struct kb_memstat before, after;
	struct kb_numastat_line l;
	bool v2 = c->ver == KB_CGROUP_V2;
	ssize_t n;
	int err;

	if (v2 && read_stat(c, "memory.stat", &before, why, size))
		return -1;
	n = read_text(c, "memory.numa_stat", why, size);
	if (n < 0)
		return -1;
	if (v2 && read_stat(c, "memory.stat", &after, why, size))
		return -1;
	if (kb_numastat_check_sums(c->text, (size_t)n, v2 ? &before : NULL,
				   v2 ? &after : NULL, MATCH_TOL_PPM, lines, why,
				   size))
		return -1;
	err = kb_numastat_find(c->text, (size_t)n, "anon", &l);
	if (err) {
		snprintf(why, size, "no anon line in memory.numa_stat: %s",
			 strerror(-err));
		return -1;
	}
	*anon = kb_numastat_line_sum(&l) * (l.has_total ? c->page_size : 1);
	return 0;
}

int check_numa_sums(void *ctx, char *why, size_t size)
{
	struct memcg_ctx *c = ctx;
	unsigned long long before = 0, grown = 0, anon = 0;
	bool charged = !c->child.skip[0];
	double waited = 0;
	int tries, lines = 0, err = -1;

	if (!cg_has(c, "memory.numa_stat")) {
		snprintf(why, size, "no memory.numa_stat (kernel without CONFIG_NUMA)");
		return KSFT_SKIP;
	}
	/* Without the right to place the child, the sums without a charge. */
	if (c->child.skip[0] && c->child.verdict == KSFT_FAIL)
		return child_unusable(c, why, size);
	if (charged && charge_and_wait(c, &before, &grown, &waited)) {
		child_do(&c->child, CHILD_FREE, 0, -1);
		snprintf(why, size, "charging %llu bytes through the child failed",
			 c->opt.alloc);
		return KSFT_FAIL;
	}
	/* Files read one after the other: retry a moving counter. */
	for (tries = 0; tries < match_tries(c) && err; tries++)
		err = numa_sums_once(c, &lines, &anon, why, size);
	if (charged)
		child_do(&c->child, CHILD_FREE, 0, -1);
	if (err)
		return KSFT_FAIL;
	kb_results_figure("numa_stat_sums", "lines=%d nodes=%d charged_mib=%.1f anon_mib=%.1f tries=%d",
			  lines, numa_available() < 0 ? 1 : numa_num_configured_nodes(),
			  charged ? c->opt.alloc / (double)MIB : 0, anon / (double)MIB,
			  tries);
	if (charged && (long long)anon < min_visible(c)) {
		snprintf(why, size, "the anon line adds up to %.1f MiB with %.1f MiB charged",
			 anon / (double)MIB, c->opt.alloc / (double)MIB);
		return KSFT_FAIL;
	}
	return KSFT_PASS;
}

/* A shared cgroup moves on its own: a few tries there. */
static int anon_attempts(const struct memcg_ctx *c)
{
	return c->own_cgroup ? 1 : 3;
}

int check_anon_grows(void *ctx, char *why, size_t size)
{
	struct memcg_ctx *c = ctx;
	unsigned long long before = 0, grown = 0;
	double waited = 0;
	int attempt, rc, err = 0;
	bool up = false;

	rc = child_unusable(c, why, size);
	if (rc)
		return rc;
	for (attempt = 0; attempt < anon_attempts(c) && !up && !err; attempt++) {
		err = charge_and_wait(c, &before, &grown, &waited);
		child_do(&c->child, CHILD_FREE, 0, -1);
		up = (long long)(grown - before) >= min_visible(c);
	}
	if (err) {
		snprintf(why, size, "%s: %s", anon_key(c), strerror(-err));
		return KSFT_FAIL;
	}
	kb_results_figure("stat_anon_grows", "key=%s alloc_mib=%.1f before_mib=%.1f after_alloc_mib=%.1f delta_mib=%.1f wait_s=%.3f attempts=%d",
			  anon_key(c), c->opt.alloc / (double)MIB,
			  before / (double)MIB, grown / (double)MIB,
			  ((double)grown - (double)before) / MIB, waited,
			  attempt);
	snprintf(why, size, "%s grew by %.1f MiB after touching %.1f MiB (want >= %.1f)",
		 anon_key(c), ((double)grown - (double)before) / MIB,
		 c->opt.alloc / (double)MIB, min_visible(c) / (double)MIB);
	return up ? KSFT_PASS : KSFT_FAIL;
}

int check_anon_falls(void *ctx, char *why, size_t size)
{
	struct memcg_ctx *c = ctx;
	unsigned long long before = 0, grown = 0, after = 0;
	double up_s = 0, down_s = 0;
	int attempt, rc, err = 0;
	bool down = false;

	rc = child_unusable(c, why, size);
	if (rc)
		return rc;
	for (attempt = 0; attempt < anon_attempts(c) && !down && !err;
	     attempt++) {
		err = charge_and_wait(c, &before, &grown, &up_s);
		if (!err)
			err = child_do(&c->child, CHILD_FREE, 0, -1);
		if (!err)
			err = wait_for_delta(c, get_anon, grown, min_visible(c),
					     -1, &after, &down_s);
		down = !err && (long long)(grown - after) >= min_visible(c);
	}
	if (err) {
		snprintf(why, size, "%s: %s", anon_key(c), strerror(-err));
		return KSFT_FAIL;
	}
	kb_results_figure("stat_anon_falls", "key=%s after_free_mib=%.1f drop_mib=%.1f wait_s=%.3f attempts=%d",
			  anon_key(c), after / (double)MIB,
			  ((double)grown - (double)after) / MIB, down_s,
			  attempt);
	snprintf(why, size, "%s fell by %.1f MiB after freeing %.1f MiB (want >= %.1f)",
		 anon_key(c), ((double)grown - (double)after) / MIB,
		 c->opt.alloc / (double)MIB, min_visible(c) / (double)MIB);
	return down ? KSFT_PASS : KSFT_FAIL;
}

/* The node the NUMA check binds memory to: the last with memory. */
static int last_memory_node(int *nodes)
{
	struct bitmask *mems = numa_get_mems_allowed();
	int node, last = -1;

	*nodes = 0;
	for (node = 0; node <= numa_max_node(); node++) {
		if (numa_bitmask_isbitset(mems, node)) {
			++*nodes;
			last = node;
		}
	}
	numa_bitmask_free(mems);
	return last;
}

static int numa_anon_node_value(struct memcg_ctx *c, int node,
				unsigned long long *v)
{
	struct kb_numastat_line l;
	char why[256];
	ssize_t n = read_text(c, "memory.numa_stat", why, sizeof(why));
	int err;

	if (n < 0)
		return (int)n;
	err = kb_numastat_find(c->text, (size_t)n, "anon", &l);
	if (err)
		return err;
	if (!kb_numastat_line_node(&l, node, v))
		return -ENOENT;
	if (l.has_total)	/* v1 counts pages */
		*v *= c->page_size;
	return 0;
}

static int get_numa_anon(struct memcg_ctx *c, unsigned long long *v)
{
	return numa_anon_node_value(c, c->numa_node, v);
}

/* With 2+ memory nodes, memory bound to the last one shows up there. */
int check_numa_node(void *ctx, char *why, size_t size)
{
	struct memcg_ctx *c = ctx;
	unsigned long long before, after = 0;
	double waited = 0;
	int node, nodes, rc, err;

	if (!cg_has(c, "memory.numa_stat")) {
		snprintf(why, size, "no memory.numa_stat (kernel without CONFIG_NUMA)");
		return KSFT_SKIP;
	}
	if (numa_available() < 0) {
		snprintf(why, size, "libnuma: NUMA not available on this system");
		return KSFT_SKIP;
	}
	node = last_memory_node(&nodes);
	if (nodes < 2) {
		snprintf(why, size, "only one NUMA node with memory (libnuma)");
		return KSFT_SKIP;
	}
	rc = child_unusable(c, why, size);
	if (rc)
		return rc;
	c->numa_node = node;
	err = get_numa_anon(c, &before);
	if (!err)
		err = child_do(&c->child, CHILD_ALLOC_NODE, c->opt.alloc, node);
	if (!err)
		err = wait_for_delta(c, get_numa_anon, before, min_visible(c),
				     1, &after, &waited);
	child_do(&c->child, CHILD_FREE, 0, -1);
	if (err) {
		snprintf(why, size, "anon on node %d: %s", node, strerror(-err));
		return KSFT_FAIL;
	}
	kb_results_figure("numa_stat_node_local", "node=%d nodes=%d delta_mib=%.1f wait_s=%.3f",
			  node, nodes, ((double)after - (double)before) / MIB,
			  waited);
	snprintf(why, size, "anon on node %d grew by %.1f MiB (want >= %.1f)",
		 node, ((double)after - (double)before) / MIB,
		 min_visible(c) / (double)MIB);
	return (long long)(after - before) >= min_visible(c) ? KSFT_PASS :
							       KSFT_FAIL;
}

/*
 * The process alone, to subtract from the cat_process rows. Checked: every
 * cat exits 0 (op_cat_process); the timing is a figure.
 */
int time_devnull_cat(void *ctx, char *why, size_t size)
{
	struct memcg_ctx *c = ctx;
	const char *name = "cat_devnull_process";
	struct kb_stats st;
	ssize_t bytes;
	double total_s;
	int err = time_reads(c, "/dev/null", MODE_PROC, &st, &bytes, &total_s);

	if (err) {
		snprintf(why, size, "%s", errstr(err));
		return err == -ENOEXEC ? KSFT_SKIP : KSFT_FAIL;
	}
	kb_results_row(name, "us", &st);
	kb_results_extra("total_s", total_s);
	kb_results_note("fork + exec of 'cat /dev/null' + waitpid: the process alone");
	c->devnull_cat_median = st.median;
	return KSFT_PASS;
}

/* ---- checks of the .ks files ------------------------------------------- */

static int ks_ready(const struct memcg_ctx *c, char *why, size_t size)
{
	if (!c->ks_skip[F_STAT][0])
		return KSFT_PASS;
	snprintf(why, size, "%s", c->ks_skip[F_STAT]);
	return KSFT_SKIP;
}

/* The key filter the checks write: always with flush, as memory.stat. */
static void check_filter(const struct memcg_ctx *c, char *buf, size_t size)
{
	build_key_filter(c->opt.keys, true, buf, size);
}

/* Write the key filter and see it applied: exactly its keys, in order. */
static int ks_set_key_filter(struct memcg_ctx *c, const char *filter,
			     struct kb_memstat *ks, char *why, size_t size)
{
	char reason[256];
	int err = ks_write(c, F_STAT, filter);

	if (err) {
		snprintf(why, size, "writing '%.200s': %s", filter,
			 strerror(-err));
		return -1;
	}
	if (ks_read(c, F_STAT, ks, why, size))
		return -1;
	if (kb_memstat_ks_keys_match(ks, filter, reason, sizeof(reason))) {
		snprintf(why, size, "filter '%.200s' not applied: %s", filter,
			 reason);
		return -1;
	}
	return 0;
}

/*
 * What every .ks check starts with: SKIP without a writable .ks file,
 * FAIL unless the key filter takes effect; KSFT_PASS to go on.
 */
static int ks_check_start(struct memcg_ctx *c, char *filter, size_t fsize,
			  struct kb_memstat *ks, char *why, size_t size)
{
	if (ks_ready(c, why, size))
		return KSFT_SKIP;
	check_filter(c, filter, fsize);
	if (ks_set_key_filter(c, filter, ks, why, size))
		return KSFT_FAIL;
	return KSFT_PASS;
}

/* memory.stat, the .ks file, memory.stat: the .ks values in between. */
static int ks_values_once(struct memcg_ctx *c, struct kb_memstat *ks,
			  char *why, size_t size)
{
	struct kb_memstat before, after;

	if (read_stat(c, "memory.stat", &before, why, size) ||
	    ks_read(c, F_STAT, ks, why, size) ||
	    read_stat(c, "memory.stat", &after, why, size))
		return -1;
	return kb_memstat_values_bracketed(ks, &before, &after, MATCH_TOL_PPM,
					why, size);
}

int check_ks_matches(void *ctx, char *why, size_t size)
{
	struct memcg_ctx *c = ctx;
	char filter[FILTER_LEN];
	struct kb_memstat ks;
	int tries, rc, err = -1;

	rc = ks_check_start(c, filter, sizeof(filter), &ks, why, size);
	if (rc != KSFT_PASS)
		return rc;
	for (tries = 0; tries < match_tries(c) && err; tries++)
		err = ks_values_once(c, &ks, why, size);
	if (err)
		return KSFT_FAIL;
	kb_results_figure("ks_matches_legacy", "keys=%zu comments=%zu tries=%d tolerance_pct=%.3f filter=%s",
			  ks.n, ks.comments, tries, MATCH_TOL_PPM / 1e4,
			  filter);
	return KSFT_PASS;
}

/* A filter of MAX_FIELDS + 1 fields: one over the limit. */
static void too_many_fields(char *buf, size_t size)
{
	size_t len = 0;
	int k;

	for (k = 0; k <= MAX_FIELDS && len < size; k++)
		len += snprintf(buf + len, size - len, "%svmstats.state[%d]",
				k ? "," : "", k % 8);
}

int check_ks_invalid(void *ctx, char *why, size_t size)
{
	struct memcg_ctx *c = ctx;
	static const char *const bad[] = {
		"flush,kbench_no_such_field",
		"flush,vmstats.state[",
		"",	/* too_many_fields() */
	};
	char filter[FILTER_LEN], big[FILTER_LEN * 2], reason[256];
	struct kb_memstat ks;
	size_t i;
	int rc, err;

	rc = ks_check_start(c, filter, sizeof(filter), &ks, why, size);
	if (rc != KSFT_PASS)
		return rc;
	too_many_fields(big, sizeof(big));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		const char *text = bad[i][0] ? bad[i] : big;

		err = ks_write(c, F_STAT, text);
		if (err != -EINVAL) {
			snprintf(why, size, "filter '%.60s%s' %s%s (want EINVAL)",
				 text, strlen(text) > 60 ? "..." : "",
				 err ? "rejected with " : "accepted",
				 err ? strerror(-err) : "");
			return KSFT_FAIL;
		}
		if (ks_read(c, F_STAT, &ks, why, size))
			return KSFT_FAIL;
		if (kb_memstat_ks_keys_match(&ks, filter, reason, sizeof(reason))) {
			snprintf(why, size, "after the rejected filter '%.60s' the previous filter is gone: %s",
				 text, reason);
			return KSFT_FAIL;
		}
		ksft_print_msg("ks_invalid_filter_rejected: '%.50s%s' rejected: %s\n",
			       text, strlen(text) > 50 ? "..." : "",
			       strerror(-err));
	}
	return KSFT_PASS;
}

/*
 * A reset proves something only after a filter took effect: first the
 * key filter must show exactly its keys, then an empty line must bring
 * back exactly the keys of memory.stat.
 */
int check_ks_reset(void *ctx, char *why, size_t size)
{
	struct memcg_ctx *c = ctx;
	struct kb_memstat ks, legacy;
	char filter[FILTER_LEN];
	int rc, err;

	rc = ks_check_start(c, filter, sizeof(filter), &ks, why, size);
	if (rc != KSFT_PASS)
		return rc;
	err = ks_write(c, F_STAT, "\n");
	if (err) {
		snprintf(why, size, "writing an empty line: %s", strerror(-err));
		return KSFT_FAIL;
	}
	if (ks_read(c, F_STAT, &ks, why, size) ||
	    read_stat(c, "memory.stat", &legacy, why, size))
		return KSFT_FAIL;
	if (!kb_memstat_same_keys(&ks, &legacy)) {
		snprintf(why, size, "after reset memory.stat.ks has %zu keys, memory.stat %zu (or another order)",
			 ks.n, legacy.n);
		return KSFT_FAIL;
	}
	kb_results_figure("ks_empty_write_resets", "keys=%zu", ks.n);
	return KSFT_PASS;
}

/* A counter the iterator read must be a memory.stat value, unit aside. */
static bool bpf_value_in_stat(const struct memcg_ctx *c, long long v,
			      const struct kb_memstat *st)
{
	unsigned long long u = v < 0 ? 0 : (unsigned long long)v;
	size_t i;

	for (i = 0; i < st->n; i++) {
		unsigned long long s = st->e[i].value;

		if (s == u || s == u * (unsigned long long)c->page_size ||
		    s == u * 1024ull)
			return true;
	}
	return false;
}

/*
 * Slots 0..STATE_SPAN-1 after the iterator's flush, then memory.stat:
 * memory.stat's anon (v1: rss) is one of the counters, and on v2, which
 * shows them all, every non-zero counter is one of memory.stat's values.
 * 0, or -1 with @why.
 */
static int bpf_compare_once(struct memcg_ctx *c, char *why, size_t size,
			    int *nonzero)
{
	const char *anon_key = c->ver == KB_CGROUP_V2 ? "anon" : "rss";
	unsigned long long anon = 0;
	const int64_t *vals;
	bool anon_seen = false;
	struct kb_memstat st;
	long n, i;

	n = kb_memcg_bpf_read(c->bpf.b, &vals);
	if (n < 0) {
		snprintf(why, size, "iterator read: %s", strerror((int)-n));
		return -1;
	}
	if (read_stat(c, "memory.stat", &st, why, size))
		return -1;
	kb_memstat_get(&st, anon_key, &anon);
	*nonzero = 0;
	for (i = 0; i < n; i++) {
		if (vals[i] == 0)
			continue;
		(*nonzero)++;
		if ((unsigned long long)vals[i] * c->page_size == anon)
			anon_seen = true;
		/* v1's memory.stat shows a subset (no slab, no kernel). */
		if (c->ver == KB_CGROUP_V2 &&
		    !bpf_value_in_stat(c, vals[i], &st)) {
			snprintf(why, size, "vmstats.state[%ld] = %lld is no memory.stat value (x1, x%ld or x1024)",
				 i, (long long)vals[i], c->page_size);
			return -1;
		}
	}
	if (anon && !anon_seen) {
		snprintf(why, size, "memory.stat %s = %llu is none of the %d non-zero counters x%ld",
			 anon_key, anon, *nonzero, c->page_size);
		return -1;
	}
	return 0;
}

int check_bpf_matches_stat(void *ctx, char *why, size_t size)
{
	struct memcg_ctx *c = ctx;
	int slots[STATE_SPAN], try, nonzero = 0;

	if (!bpf_iter_get(c))
		return bpf_iter_unusable(c, why, size);
	field_slots(STATE_SPAN, slots);
	if (kb_memcg_bpf_select(c->bpf.b, slots, STATE_SPAN, why, size))
		return KSFT_FAIL;
	/* Counters move between the two reads now and then: try again. */
	for (try = 0; try < 5; try++)
		if (!bpf_compare_once(c, why, size, &nonzero))
			break;
	kb_results_figure("bpf_iter_matches_stat", "slots=%d nonzero=%d tries=%d flush=%s",
			  STATE_SPAN, nonzero, try < 5 ? try + 1 : 5,
			  kb_memcg_bpf_flush_name(c->bpf.b));
	if (try == 5)
		return KSFT_FAIL;
	if (!nonzero) {
		snprintf(why, size, "every counter the iterator read is 0");
		return KSFT_FAIL;
	}
	return KSFT_PASS;
}
