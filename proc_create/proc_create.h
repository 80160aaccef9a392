/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of proc_create share: the parent sizes, the cells, the
 * options, the run's context, the methods and the shape checks. One file
 * per part:
 *  - proc_create.c: main(), the options, the table, the run;
 *  - pc_child.c: creating, reaping and probing one child per method;
 *  - pc_cells.c: the parent's sizes and the timed cells;
 *  - pc_report.c: the methods' and shape checks' results, the book's
 *    table.
 * KTAP results are printed by proc_create.c only (kselftest.h's counters
 * are per file).
 */
#ifndef PROC_CREATE_H
#define PROC_CREATE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "kbench.h"
#include "placement.h"

#define BOOK_COUNT		100000	/* the book's creations per cell */
#define DEFAULT_COUNT		1000
#define SLOW_COUNT		100
#define DEFAULT_CELL_TIME	0.5	/* s, quick run */
#define FULL_EXTRA_CELL_TIME	10.0	/* s, -n/--full, sizes beyond the book's */
#define MAX_SAMPLES		20000	/* timed creations kept per cell */
#define MAX_SIZES		16
#define MAX_COUNT		10000000L
#define PROGRESS_COUNT		10000	/* cells this long print progress */
#define MAX_WARMUP		50	/* untimed creations per cell, at most */

#define KIB			1024ULL
#define MIB			(1024ULL * KIB)
#define GIB			(1024ULL * MIB)
#define DEFAULT_LARGE		GIB
#define SLOW_LARGE		(256 * MIB)
/* Leave this much memory to the rest of the system when touching. */
#define MEM_RESERVE		(256 * MIB)

/* Shape checks: generous bounds for a noisy shared machine. */
#define FLAT_BOUND		1.5	/* large / small minimum, at most */
#define GROW_BOUND		2.0	/* large / small minimum, at least */
/*
 * A touched parent this large makes fork's copying dominate whatever the
 * machine; between smaller parents a flat check relies on fork's own
 * growth over the same span (see span_too_small()).
 */
#define SPAN_MIN_MIB		256
#define SPAN_MIN_SIZE		(SPAN_MIN_MIB * MIB)

/* What children that run no helper exit with: a lost status fails. */
#define CHILD_STATUS		42

#ifndef PR_SET_THP_DISABLE
#define PR_SET_THP_DISABLE	41
#endif
#ifndef __NR_clone3
#define __NR_clone3		435
#endif
#ifndef CLONE_VFORK
#define CLONE_VFORK		0x00004000
#endif

/* ---- the helper programs the exec methods run ------------------------ */

#define HELPER_NOLIBC		"proc_create_true"
#define HELPER_LIBC		"proc_create_true_libc"

enum method_id {
	M_fork, M_vfork, M_clone, M_fork_exec, M_vfork_exec, M_posix_spawn,
	M_posix_spawn_exec, M_clone3_vfork, NR_METHODS
};

enum shape_id {
	S_vfork_flat, S_clone_flat, S_posix_spawn_flat, S_fork_grows,
	NR_SHAPES
};

#define NR_TESTS	(NR_METHODS + NR_SHAPES)

/* ---- parent sizes, cells, options, the context ------------------------ */

enum size_kind { SIZE_BOOK, SIZE_TOUCHED };

struct psize {
	enum size_kind kind;
	double book_mb;			/* SIZE_BOOK: total VmSize, MiB */
	unsigned long long bytes;	/* SIZE_TOUCHED: memory added */
	char label[24];			/* "1.70MB", "1GiB" */
	long target_kib;
	long vmsize_kib, vmrss_kib;	/* reached */
	char skip[200];			/* why this size could not be set up */
};

#define NR_BOOK_SIZES	3	/* the book's parent sizes: book_sizes_mb[] */

struct cell {
	enum { CELL_NONE, CELL_OK, CELL_SKIP, CELL_FAIL } state;
	char why[240];
	long creations;
	double elapsed_s;
	double parent_cpu_s;
	double children_cpu_s;
	struct kb_stats st;		/* per creation, us */
	double p10;			/* 10th percentile per creation, us */
	enum kb_settle_fifo fifo;	/* the exact guest's SCHED_FIFO 1 */
};

struct options {
	long count;
	bool count_set;
	bool thp;
	bool no_touch;		/* --no-touch: the book sizes' heap untouched */
	double cell_time;	/* s, < 0: default */
	const char *helper;	/* "libc", "nolibc" or a path */
	unsigned long long touched[MAX_SIZES];
	unsigned int ntouched;
	bool touched_set;
};

/* What a method's child does to the parent's memory, probed once. */
enum sharing { SHARE_UNKNOWN, SHARE_SHARED, SHARE_COPIED };

struct pc_ctx {
	struct options o;
	struct kb_cli_common common;
	struct kb_placement place;
	char nolibc_path[PATH_MAX];	/* posix_spawn */
	char exec_path[PATH_MAX];	/* the *_exec methods */
	char helper_why[PATH_MAX + 64];	/* why a helper is missing, or "" */
	struct psize sizes[MAX_SIZES];
	unsigned int nsizes;
	long baseline_kib;
	bool book_from_baseline;	/* baseline above 1.70 MB: offsets */
	void *heap_blocks[16];		/* the book sizes' malloc()s */
	unsigned int nheap_blocks;
	void *touched_map;
	size_t touched_len;
	bool measure[NR_METHODS];	/* needed by a selected test */
	int unsupported[NR_METHODS];	/* -errno found by the probe, or 0 */
	char unsupported_why[NR_METHODS][PATH_MAX + 64];
	enum sharing sharing[NR_METHODS];
	char sharing_why[NR_METHODS][200];
	struct cell cells[NR_METHODS][MAX_SIZES];
	double samples[MAX_SAMPLES];
	int bad_status;			/* the wrong wait status seen */
	/* The child being waited for, for the cleanup handler. */
	volatile pid_t live_child;
	/* Written by children that share our memory (probe). */
	volatile int child_wrote;
};

/* ---- methods and shape checks -------------------------------------------- */

enum helper_use { NO_HELPER, NOLIBC_HELPER, EXEC_HELPER };

struct method {
	const char *name;	/* stable KTAP / JSON name */
	const char *label;	/* the book's row label */
	const char *note;
	int (*create)(struct pc_ctx *c, pid_t *pid);
	enum helper_use helper;
};

/* The methods in KTAP order (pc_child.c). */
extern const struct method methods[NR_METHODS];

/* The shape checks: stable KTAP names, the method they look at. */
struct shape {
	const char *name;
	enum method_id method;
	bool grows;		/* fork: must grow; others: must stay flat */
};

/* The shape checks in KTAP order (pc_report.c). */
extern const struct shape shapes[NR_SHAPES];

/* ---- pc_child.c: one child --------------------------------------------- */

/* The helpers next to our own executable (where make install puts them). */
void locate_helpers(struct pc_ctx *c);
/* One child of method @m created and reaped: 0, -errno, 1: wrong status. */
int create_and_reap(struct pc_ctx *c, const struct method *m);
/* Fill @buf with what went wrong; KSFT_SKIP or KSFT_FAIL. */
int describe_error(struct pc_ctx *c, const struct method *m, int err,
		   char *buf, size_t len);
/* The cleanup handler: no child of ours outlives the run. */
void reap_children(void *arg);
/* A method the environment cannot run: c->unsupported[] with the reason. */
void probe_method(struct pc_ctx *c, enum method_id id);
/* What the child of @id does to the parent's memory: c->sharing[]. */
void probe_sharing(struct pc_ctx *c, enum method_id id);

/* ---- pc_cells.c: parent sizes and cells --------------------------------- */

/* MemAvailable in bytes (0 when unknown). */
unsigned long long mem_available(void);
void plan_book_sizes(struct pc_ctx *c);
void plan_touched_sizes(struct pc_ctx *c);
/* Make the parent size @s and measure every method's cell at it. */
void run_size(struct pc_ctx *c, unsigned int s);
void release_heap(struct pc_ctx *c);
void release_touched(struct pc_ctx *c);
/* A cell's time limit in seconds (0: none). */
double cap_for(const struct options *o, const struct kb_cli_common *common,
	       const struct psize *s);

/* ---- pc_report.c: results ---------------------------------------------- */

/* The table's functions: a method's result, a shape check. */
int report_method(void *ctx, int m, char *reason, size_t len);
int report_shape(void *ctx, int id, char *reason, size_t len);
/* The book's layout: per size "elapsed (parent CPU) [children CPU] rate". */
void print_table(const struct pc_ctx *c);

#endif /* PROC_CREATE_H */
