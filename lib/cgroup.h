/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kbench cgroup helpers: find the memory controller (cgroup v2 or v1) from
 * /proc/self/mountinfo, create and remove a test cgroup (removed by the
 * cleanup stack at exit and on SIGINT/SIGTERM), move a process into it,
 * and parse memory.stat / memory.numa_stat style files.
 *
 * The parsers work on strings and touch no file: tests/unit_cgroup.c
 * feeds them built-in text.
 */
#ifndef KBENCH_CGROUP_H
#define KBENCH_CGROUP_H

#include "kbench.h"

#include <limits.h>
#include <sys/types.h>

enum kb_cgroup_version {
	KB_CGROUP_NONE = 0,
	KB_CGROUP_V1 = 1,
	KB_CGROUP_V2 = 2,
};

/* ---- /proc/self/mountinfo -------------------------------------------- */

/* The fields of one mountinfo line that cgroup code needs. */
struct kb_mount {
	char root[PATH_MAX];		/* field 4: root of the mount in its fs */
	char point[PATH_MAX];		/* field 5: mount point, unescaped */
	char fstype[32];		/* after the " - " separator */
	char super_opts[512];		/* per-superblock options */
};

/*
 * Parse one line of /proc/self/mountinfo (with or without the trailing
 * newline). Octal escapes (\040 for a space) are decoded.
 * Returns 0, or -EINVAL for a line that is not in mountinfo format.
 */
int kb_mountinfo_parse_line(const char *line, struct kb_mount *m);

/* True when the comma separated list @opts holds the word @opt. */
bool kb_opt_list_has(const char *opts, const char *opt);

/*
 * Scan mountinfo text (the whole file) for cgroup mounts: the first
 * cgroup2 mount point goes to @v2 and the first v1 mount carrying the
 * memory controller to @v1_memory (either may be NULL). A path not found
 * is set to "". Returns how many of the two were found.
 */
int kb_mountinfo_find_cgroups(const char *text, char *v2, size_t v2_size,
			      char *v1_memory, size_t v1_size);

/*
 * From /proc/self/cgroup text, the path of our cgroup in the hierarchy of
 * @version (v1: the line naming @controller; v2: the "0::" line) into
 * @path. 0, or -ENOENT when there is no such line.
 */
int kb_proc_cgroup_path(const char *text, enum kb_cgroup_version version,
			const char *controller, char *path, size_t size);

/* ---- the memory controller ------------------------------------------- */

/* Where the memory controller lives. */
struct kb_memcg_mount {
	enum kb_cgroup_version version;
	char path[PATH_MAX];		/* mount point of that hierarchy */
};

/*
 * Find the memory controller: cgroup v2 when its root lists "memory" in
 * cgroup.controllers, else a v1 hierarchy mounted with the memory option.
 * Returns 0, -ENOENT when neither is mounted, or another -errno.
 */
int kb_memcg_find(struct kb_memcg_mount *mnt);

/*
 * The memory cgroup this process runs in (from /proc/self/cgroup), as a
 * directory under the mount. 0 or -errno.
 */
int kb_memcg_self(const struct kb_memcg_mount *mnt, char *dir, size_t size);

/* ---- a test cgroup --------------------------------------------------- */

struct kb_cgroup {
	enum kb_cgroup_version version;
	char path[PATH_MAX];
	/* v2: "+memory" written to the parent's subtree_control by us. */
	char enabled_in[PATH_MAX + 32];
	int cleanup;			/* handle on the cleanup stack */
};

/*
 * Create the memory cgroup @name under @parent (a directory of @mnt's
 * hierarchy, usually its mount point). On cgroup v2 the memory controller
 * is enabled in the parent's cgroup.subtree_control when needed (and
 * disabled again on removal). The cgroup is removed by the cleanup stack,
 * also on SIGINT/SIGTERM; @cg must stay valid until then.
 * Returns 0 or -errno (-EEXIST, -EACCES, ...).
 */
int kb_cgroup_create(const struct kb_memcg_mount *mnt, const char *parent,
		     const char *name, struct kb_cgroup *cg);

/*
 * Remove the cgroup (retrying while the kernel still counts exited tasks
 * in it) and pop its cleanup handler. Safe to call twice.
 */
int kb_cgroup_remove(struct kb_cgroup *cg);

/* Move @pid into the cgroup directory @dir (its cgroup.procs). 0 or -errno. */
int kb_cgroup_move(const char *dir, pid_t pid);

/*
 * Whether we may write @path: write access for our effective ids, or
 * CAP_DAC_OVERRIDE (libcap). When not, a reason naming what is missing
 * goes to @why.
 */
bool kb_cgroup_may_write(const char *path, char *why, size_t size);

/* ---- stat files ------------------------------------------------------ */

#define KB_STAT_MAX_KEYS	256
#define KB_STAT_KEY_LEN		64

struct kb_stat_entry {
	char key[KB_STAT_KEY_LEN];
	unsigned long long value;
};

/* A parsed flat-keyed file ("key value" lines), in file order. */
struct kb_stat {
	size_t n;
	size_t comments;		/* lines starting with '#' (ks files) */
	struct kb_stat_entry e[KB_STAT_MAX_KEYS];
};

/*
 * Parse memory.stat text: every line "key value" with a non-negative
 * decimal value; lines starting with '#' are counted and skipped; empty
 * lines are allowed. On error returns -EINVAL (-E2BIG for too many keys)
 * and describes the first bad line in @why (may be NULL).
 */
int kb_stat_parse(const char *text, struct kb_stat *st, char *why,
		  size_t why_size);

/* Look up @key. True when present. */
bool kb_stat_get(const struct kb_stat *st, const char *key,
		 unsigned long long *value);

#define KB_NUMA_MAX_NODES	64

/*
 * One memory.numa_stat line. v1: "total=T N0=a N1=b" after the key and
 * '=' (values in pages); v2: "anon N0=a N1=b" (values in bytes).
 */
struct kb_numa_line {
	char key[KB_STAT_KEY_LEN];
	bool has_total;
	unsigned long long total;
	int nnodes;
	int node[KB_NUMA_MAX_NODES];
	unsigned long long value[KB_NUMA_MAX_NODES];
};

/* Parse one numa_stat line (no newline needed). 0 or -EINVAL. */
int kb_numa_line_parse(const char *line, struct kb_numa_line *l);

/* Sum of the per-node values of a line. */
unsigned long long kb_numa_line_sum(const struct kb_numa_line *l);

/* The value of node @node on the line; false when the line lacks it. */
bool kb_numa_line_node(const struct kb_numa_line *l, int node,
		       unsigned long long *value);

#endif /* KBENCH_CGROUP_H */
