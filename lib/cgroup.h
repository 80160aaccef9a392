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

/* ---- lines of a buffer ------------------------------------------------ */

/*
 * Every parser here takes a buffer and its length (the buffer need not be
 * NUL terminated) and touches no file, so tests/unit_cgroup.c and fuzzers
 * feed them any bytes. A line that does not fit what the format allows is
 * rejected, never truncated.
 */
struct kb_text {
	const char *p;
	const char *end;
};

static inline void kb_text_init(struct kb_text *t, const char *buf, size_t len)
{
	t->p = buf;
	t->end = buf + len;
}

/* The next line (without its '\n') into @line/@len; false at the end. */
bool kb_text_next_line(struct kb_text *t, const char **line, size_t *len);

/* True when the @sep separated list @list (@len bytes) holds @word. */
bool kb_list_has(const char *list, size_t len, char sep, const char *word);

/* True when the comma separated list @opts holds the word @opt. */
bool kb_opt_list_has(const char *opts, const char *opt);

/* ---- /proc/self/mountinfo -------------------------------------------- */

/* The fields of one mountinfo line that cgroup code needs. */
struct kb_mount {
	char root[PATH_MAX];		/* field 4: root of the mount in its fs */
	char point[PATH_MAX];		/* field 5: mount point, unescaped */
	char fstype[32];		/* after the " - " separator */
	char super_opts[512];		/* per-superblock options */
};

/*
 * Parse one line of /proc/self/mountinfo (@len bytes, with or without the
 * trailing newline). Octal escapes (\040 for a space) are decoded.
 * Returns 0; -EINVAL for a line that is not in mountinfo format; -E2BIG
 * when a field does not fit its member of @m (that member is left empty,
 * the others are filled: fstype tells whether the line matters).
 */
int kb_mountinfo_parse_line(const char *line, size_t len, struct kb_mount *m);

/*
 * Scan mountinfo text (the whole file, @len bytes) for cgroup mounts: the
 * first cgroup2 mount point goes to @v2 and the first v1 mount carrying
 * the memory controller to @v1_memory (either may be NULL). A path not
 * found is set to "". Lines that are not mountinfo are skipped. Returns
 * how many of the two were found, or -E2BIG when a cgroup mount's line
 * has a field too long to hold (a path of that length cannot be used).
 */
int kb_mountinfo_find_cgroups(const char *text, size_t len, char *v2,
			      size_t v2_size, char *v1_memory, size_t v1_size);

/*
 * From /proc/self/cgroup text (@len bytes), the path of our cgroup in the
 * hierarchy of @version (v1: the line naming @controller; v2: the "0::"
 * line) into @path. 0, -ENOENT when there is no such line, -ENAMETOOLONG
 * when the path does not fit @size.
 */
int kb_proc_cgroup_path(const char *text, size_t len,
			enum kb_cgroup_version version, const char *controller,
			char *path, size_t size);

/* One cgroup directory this process belongs to. */
struct kb_cgroup_dir {
	enum kb_cgroup_version version;
	char path[PATH_MAX];		/* mount point + path in the hierarchy */
};

/*
 * Every cgroup directory of this process, from mountinfo text (@mi, @mlen)
 * and /proc/self/cgroup text (@pc, @plen): the cgroup2 one first, then one
 * per v1 hierarchy in /proc/self/cgroup's order. A hierarchy counts only
 * when it is mounted at its root ("/" as the mount's root) and, for v1,
 * the mount carries every controller of the line; paths outside our
 * cgroup namespace ("/..") are left out. At most @max go to @dirs.
 * Returns how many, or -E2BIG / -ENAMETOOLONG when a line or path that
 * matters does not fit.
 */
int kb_cgroup_own_dirs(const char *mi, size_t mlen, const char *pc,
		       size_t plen, struct kb_cgroup_dir *dirs, int max);

/* The same from /proc/self/mountinfo and /proc/self/cgroup. */
int kb_cgroup_own_dirs_read(struct kb_cgroup_dir *dirs, int max);

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
 * Whether we may write @path: false only when the errno rule says that
 * the environment refuses it (no write access for our effective ids and
 * no CAP_DAC_OVERRIDE, a read-only mount, ...), with the reason in @why;
 * any other failure of the check leaves the write itself to fail.
 */
bool kb_cgroup_may_write(const char *path, char *why, size_t size);

/* ---- stat files ------------------------------------------------------ */

#define KB_STAT_MAX_KEYS	256
#define KB_STAT_KEY_LEN		64
/* Longest memory.stat line accepted: real ones are under 64 bytes. */
#define KB_STAT_LINE_MAX	511

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
 * Parse memory.stat text (@len bytes): every line "key value" with a
 * non-negative decimal value; lines starting with '#' are counted and
 * skipped; empty lines are allowed. On error returns -EINVAL (-E2BIG for
 * too many keys) and describes the first bad line in @why (may be NULL).
 * A line longer than KB_STAT_LINE_MAX is an error.
 */
int kb_stat_parse(const char *text, size_t len, struct kb_stat *st, char *why,
		  size_t why_size);

/* Look up @key. True when present. */
bool kb_stat_get(const struct kb_stat *st, const char *key,
		 unsigned long long *value);

#define KB_NUMA_MAX_NODES	64
/* Longest memory.numa_stat line accepted (64 nodes of 20 digits fit). */
#define KB_NUMA_LINE_MAX	2047

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

/*
 * Parse one numa_stat line of @len bytes (no newline needed). 0, -EINVAL
 * (also for a line longer than KB_NUMA_LINE_MAX) or -E2BIG (more than
 * KB_NUMA_MAX_NODES nodes).
 */
int kb_numa_line_parse(const char *line, size_t len, struct kb_numa_line *l);

/*
 * Find the line of @key in numa_stat text (@len bytes). 0; -ENOENT when
 * no line has that key; the error of the first line that does not parse.
 */
int kb_numa_stat_find(const char *text, size_t len, const char *key,
		      struct kb_numa_line *l);

/* Sum of the per-node values of a line. */
unsigned long long kb_numa_line_sum(const struct kb_numa_line *l);

/* The value of node @node on the line; false when the line lacks it. */
bool kb_numa_line_node(const struct kb_numa_line *l, int node,
		       unsigned long long *value);

/* ---- comparisons of the memcg files ------------------------------------ */

/*
 * The checks of memcg_ks, on parsed text, so that tests/unit_cgroup.c can
 * show each one failing on a corrupted input. Each returns 0, or -1 with
 * the first difference described in @why.
 */

/* Same keys in the same order (values may differ). */
bool kb_stat_same_keys(const struct kb_stat *a, const struct kb_stat *b);

/*
 * A .ks output against the filter written ("flush,anon,file"): exactly
 * the filter's keys, in its order, nothing else ("flush" is no key).
 */
int kb_ks_keys_match(const struct kb_stat *ks, const char *filter, char *why,
		     size_t size);

/*
 * @v lies between @a and @b (two reads of the same counter around the
 * read of @v), widened on each side by @tol_ppm millionths of the larger.
 */
bool kb_value_bracketed(unsigned long long v, unsigned long long a,
			unsigned long long b, unsigned int tol_ppm);

/*
 * Every key of @got is a key of memory.stat whose value, in the same unit
 * (no scaling), is bracketed by its values in @before and @after.
 */
int kb_stat_values_bracketed(const struct kb_stat *got,
			     const struct kb_stat *before,
			     const struct kb_stat *after, unsigned int tol_ppm,
			     char *why, size_t size);

/*
 * memory.numa_stat text: on each v1 line the nodes add up to the line's
 * total (one read: @tol_ppm of it); on each v2 line they add up to the
 * key's value in memory.stat read @before and @after the numa_stat (lines
 * of keys memory.stat lacks are not counted; pass NULL on v1). @lines
 * gets the lines checked, at least one is required.
 */
int kb_numa_check_sums(const char *text, size_t len,
		       const struct kb_stat *before,
		       const struct kb_stat *after, unsigned int tol_ppm,
		       int *lines, char *why, size_t size);

#endif /* KBENCH_CGROUP_H */
