/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of memcg_ks share: its options, the run's context and
 * the functions one file offers the others. One file per part:
 *  - memcg_ks.c: main(), the options, the table, the run;
 *  - memcg_cgroup.c: the cgroup read (picked, its files, its .ks files);
 *  - memcg_child.c: the helper child that allocates memory in it;
 *  - memcg_rows.c: the timed rows, legacy, .ks and BPF iterator;
 *  - memcg_checks.c: the checks of the legacy files, the .ks files and
 *    the BPF iterator.
 * KTAP results are printed by memcg_ks.c only (kselftest.h's counters
 * are per file).
 */
#ifndef MEMCG_KS_H
#define MEMCG_KS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cgroup.h"
#include "kbench.h"
#include "memcg_bpf.h"
#include "memstat.h"
#include "placement.h"

#define MIB			(1024ull * 1024)
#define DEFAULT_COUNT		20000
#define FULL_COUNT		1000000
#define SLOW_COUNT		2000
#define DEFAULT_CAT_COUNT	100
#define FULL_CAT_COUNT		1000
#define SLOW_CAT_COUNT		20
#define DEFAULT_ALLOC		(64 * MIB)
#define DEFAULT_ROW_BUDGET_S	2.0
#define BASE_ALLOC		(8 * MIB)
#define MAX_FIELDS		128
#define MAX_FILTERS		8
#define READ_BUF_SIZE		(256 * 1024)
#define FILTER_LEN		4096
#define CHILD_DEPTH		8

/*
 * Two reads of a counter of our own cgroup, whose only task is the idle
 * child, differ only by what the kernel itself changes in between (per-cpu
 * updates folded in by a flush): a value read between two reads of the
 * same counter must lie between them, widened by 0.1 % of the larger.
 * A cgroup shared with other tasks moves more: it gets more tries, never
 * a wider bound.
 */
#define MATCH_TOL_PPM		1000
#define TRIES_OWN		3
#define TRIES_SHARED		10

/* ---- options ----------------------------------------------------------- */

/*
 * The process rows (cat_devnull_process, *_cat_process) fork, exec and
 * wait: on a busy machine the cat waits behind other tasks for a tick
 * (4 ms at HZ=250) in a varying share of the samples, and a fork placed
 * on another CPU costs a cross-CPU wake-up. The program runs pinned to
 * one CPU (the lib's placement, --no-pin to leave it to the scheduler)
 * and the process rows at SCHED_FIFO priority 1 when permitted, the cats
 * inheriting both.
 */
#define PROC_FIFO_PRIO		1

struct options {
	long count;		/* reads per per_read / per_cat row */
	long batch;		/* reads per timed sample */
	long cat_count;		/* cat processes per cat_process row */
	int fields[MAX_FILTERS];
	int nfields;
	char keys[FILTER_LEN - 16];	/* key-name filter; "" = from memory.stat */
	bool keys_set;
	bool no_flush;
	bool bench;		/* the seed's sequence: per_read rows only */
	const char *set_filter;	/* write a filter and exit */
	const char *cgpath;	/* --cgroup or $CGPATH */
	const char *cgpath_from;	/* "--cgroup", "CGPATH" or "--root" */
	bool root;		/* the root of the memory hierarchy */
	unsigned long long alloc;
	double row_budget_s;	/* stop a row after this long; 0 = never */
};

/* ---- the run's context ------------------------------------------------- */

enum file_id { F_STAT, F_NUMA, NR_FILES };
enum mode { MODE_READ, MODE_CAT, MODE_PROC, NR_MODES };

/* Where a timed row reads from. A new source adds a kind and a reader. */
enum source { SRC_LEGACY, SRC_KS };

struct variant {
	char tag[24];			/* "legacy", "ks3", "ks_keys" */
	enum source src;
	char filter[FILTER_LEN];	/* SRC_KS: written before each row */
	char note[64];			/* SRC_KS: what the filter is */
};

#define NR_VARIANTS	(1 + MAX_FILTERS + 1)	/* legacy, N fields, keys */
/* The checks, a file row per variant, file and way, a bpf row per size. */
#define MAX_TESTS	(16 + NR_VARIANTS * NR_FILES * NR_MODES + MAX_FILTERS)

struct cell {
	bool done;
	double median;
	double mean;
};

/* The allocating child: one request pipe, one answer pipe. */
struct child {
	pid_t pid;
	int req_fd;
	int ack_fd;
	char skip[1024];	/* why it cannot serve the checks; "" if it can */
	int verdict;		/* KSFT_SKIP (privilege) or KSFT_FAIL then */
};

struct memcg_ctx {
	struct options opt;
	struct kb_cli_common common;		/* the options every program shares */
	struct kb_placement place;
	struct kb_cgroup_memcg_mount mnt;
	struct kb_cgroup test_cg;
	char dir[PATH_MAX];		/* the memory cgroup we read */
	enum kb_cgroup_version ver;
	bool own_cgroup;		/* created by us, holding only the child */
	char create_note[320];		/* why we did not create one */
	long page_size;
	struct child child;
	int devnull_fd;
	bool have_ks[NR_FILES];
	char ks_skip[NR_FILES][320];	/* why the ks part cannot run */
	bool ks_written[NR_FILES];	/* reset to legacy at the end */
	bool ks_reset_pushed;
	struct variant variant[NR_VARIANTS];
	int nvariants;
	struct cell cells[NR_VARIANTS][NR_FILES][NR_MODES];
	double devnull_cat_median;
	int numa_node;			/* numa_stat_node_local's node */
	bool row_cut_short;		/* the last row hit --max-row-time */
	int proc_prio;			/* process rows: SCHED_FIFO prio or 0 */
	char sched_note[256];		/* why they run at normal priority */
	char text[READ_BUF_SIZE];	/* read_text(): the last file read */
	char stat_text[READ_BUF_SIZE];	/* read_stat()'s, apart from it */
	char read_buf[READ_BUF_SIZE];	/* the timed reads land here */
	/* The run's table: checks, then the timed rows (their names here). */
	struct kb_test table[MAX_TESTS];
	char names[MAX_TESTS][32];
	bool selected[MAX_TESTS];
	int ntable;
	struct bpf_state {		/* the cgroup iterator, loaded once */
		bool tried;
		struct kb_memcg_bpf *b;
		uint64_t load_ns;
		int err;
		char why[PATH_MAX + 256];
	} bpf;
};

enum child_cmd { CHILD_ALLOC = 'A', CHILD_FREE = 'F', CHILD_ALLOC_NODE = 'N' };

/* Entries of vmstats.state[] every kernel with the .ks files has. */
#define STATE_SPAN	32

extern const char *const file_name[NR_FILES];	/* "memory.stat" */
extern const char *const file_tag[NR_FILES];	/* "stat" */
extern const char *const mode_name[NR_MODES];	/* "per_read" */
extern const char *const mode_note[NR_MODES];

/* ---- memcg_cgroup.c: the cgroup read ----------------------------------- */

/* Pick the cgroup (--cgroup, $CGPATH, --root, or our own); may exit. */
void pick_cgroup(struct memcg_ctx *c, bool need_stat);
/* Reading the memory cgroup we run in, which the child inherits. */
bool reads_inherited_cgroup(const struct memcg_ctx *c);
/* How often a comparison of two reads is tried before it fails. */
int match_tries(const struct memcg_ctx *c);
void cg_file(const struct memcg_ctx *c, char *buf, size_t size,
	     const char *name);
bool cg_has(const struct memcg_ctx *c, const char *name);
/* A file of the cgroup into c->text; its length or -errno (with @why). */
ssize_t read_text(struct memcg_ctx *c, const char *name, char *why,
		  size_t size);
/* memory.stat (or a .ks file) parsed, in a buffer of its own. */
int read_stat(struct memcg_ctx *c, const char *name, struct kb_memstat *st,
	      char *why, size_t size);
int read_stat_key(struct memcg_ctx *c, const char *key,
		  unsigned long long *v);
/* Which .ks files exist and may be written; the reasons in c->ks_skip. */
void ks_probe(struct memcg_ctx *c);
/* Write a filter (reset to legacy at exit); back to legacy now. */
int ks_write(struct memcg_ctx *c, enum file_id f, const char *filter);
void ks_reset(void *arg);
int ks_read(struct memcg_ctx *c, enum file_id f, struct kb_memstat *st,
	    char *why, size_t size);
/* The seed's slots of vmstats.state[] for a filter of @n fields. */
void field_slots(int n, int *slots);
void build_field_filter(int n, bool flush, char *buf, size_t size);
void build_key_filter(const char *keys, bool flush, char *buf, size_t size);
/* The first 8 keys of memory.stat, the default key filter. */
void default_keys(struct memcg_ctx *c, char *buf, size_t size);

/* ---- memcg_child.c: the helper child ----------------------------------- */

/* Start the child and put it into the cgroup read (or say why not). */
void place_child(struct memcg_ctx *c);
/* One request (CHILD_*); the child's answer: 0 or -errno. */
int child_do(struct child *ch, char cmd, unsigned long long size, int node);
/* The cleanup handler: kill and reap it. */
void child_kill(void *arg);
/* The checks that need the child: SKIP or FAIL with its reason, or 0. */
int child_unusable(const struct memcg_ctx *c, char *why, size_t size);

/* ---- memcg_rows.c: the timed rows -------------------------------------- */

void build_variants(struct memcg_ctx *c);
int nr_modes(const struct memcg_ctx *c);
void row_name(const struct memcg_ctx *c, int v, enum file_id f, enum mode m,
	      char *name, size_t size);
/* A file row's table entry: its argument, and the row. */
int file_row_arg(int v, enum file_id f, enum mode m);
int file_row(void *ctx, int arg, char *why, size_t size);
/* bpf_iterN, @n counters. */
int bpf_row(void *ctx, int n, char *why, size_t size);
/* The cgroup iterator, loaded at first use, and why it cannot be. */
struct kb_memcg_bpf *bpf_iter_get(struct memcg_ctx *c);
int bpf_iter_unusable(struct memcg_ctx *c, char *why, size_t size);
/* How the process rows run (SCHED_FIFO when permitted). */
void plan_priority(struct memcg_ctx *c);
/* Time @mode on @path: microseconds per operation. 0 or -errno. */
int time_reads(struct memcg_ctx *c, const char *path, enum mode mode,
	       struct kb_stats *st, ssize_t *bytes, double *total_s);
const char *errstr(int err);
void print_table(const struct memcg_ctx *c);

/* ---- memcg_checks.c: the checks (the table's functions) ---------------- */

int check_stat_parse(void *ctx, char *why, size_t size);
int check_numa_sums(void *ctx, char *why, size_t size);
int check_anon_grows(void *ctx, char *why, size_t size);
int check_anon_falls(void *ctx, char *why, size_t size);
int check_numa_node(void *ctx, char *why, size_t size);
int time_devnull_cat(void *ctx, char *why, size_t size);
int check_ks_matches(void *ctx, char *why, size_t size);
int check_ks_invalid(void *ctx, char *why, size_t size);
int check_ks_reset(void *ctx, char *why, size_t size);
int check_bpf_matches_stat(void *ctx, char *why, size_t size);

#endif /* MEMCG_KS_H */
