/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroups: the mounts of /proc/self/mountinfo, our own cgroup directories
 * (/proc/self/cgroup), the memory controller (cgroup v2 or v1), a test
 * cgroup created and removed (by the cleanup stack at exit and on
 * SIGINT/SIGTERM), a process moved into it.
 *
 * The parsers work on strings and touch no file: tests/unit_cgroup.c
 * feeds them built-in text. The memory cgroup's files are parsed by
 * memstat.h and numastat.h.
 */
#ifndef KBENCH_CGROUP_H
#define KBENCH_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum kb_cgroup_version {
	KB_CGROUP_NONE = 0,
	KB_CGROUP_V1 = 1,
	KB_CGROUP_V2 = 2,
};

/* ---- /proc/self/mountinfo -------------------------------------------- */

/* The fields of one mountinfo line that cgroup code needs. */
struct kb_cgroup_mount {
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
int kb_cgroup_mountinfo_parse(const char *line, size_t len,
			      struct kb_cgroup_mount *m);

/*
 * Scan mountinfo text (the whole file, @len bytes) for cgroup mounts: the
 * first cgroup2 mount point goes to @v2 and the first v1 mount carrying
 * the memory controller to @v1_memory (either may be NULL). A path not
 * found is set to "". Lines that are not mountinfo are skipped. Returns
 * how many of the two were found, or -E2BIG when a cgroup mount's line
 * has a field too long to hold (a path of that length cannot be used).
 */
int kb_cgroup_mountinfo_find(const char *text, size_t len, char *v2,
			     size_t v2_size, char *v1_memory, size_t v1_size);

/*
 * From /proc/self/cgroup text (@len bytes), the path of our cgroup in the
 * hierarchy of @version (v1: the line naming @controller; v2: the "0::"
 * line) into @path. 0, -ENOENT when there is no such line, -ENAMETOOLONG
 * when the path does not fit @size (@path "" on either).
 */
int kb_cgroup_proc_path(const char *text, size_t len,
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
struct kb_cgroup_memcg_mount {
	enum kb_cgroup_version version;
	char path[PATH_MAX];		/* mount point of that hierarchy */
};

/*
 * Find the memory controller: cgroup v2 when its root lists "memory" in
 * cgroup.controllers, else a v1 hierarchy mounted with the memory option.
 * Returns 0, -ENOENT when neither is mounted, or another -errno.
 */
int kb_cgroup_memcg_find(struct kb_cgroup_memcg_mount *mnt);

/*
 * The memory cgroup this process runs in (from /proc/self/cgroup), as a
 * directory under the mount. 0 or -errno.
 */
int kb_cgroup_memcg_self(const struct kb_cgroup_memcg_mount *mnt, char *dir,
			 size_t size);

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
int kb_cgroup_create(const struct kb_cgroup_memcg_mount *mnt,
		     const char *parent, const char *name,
		     struct kb_cgroup *cg);

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

#endif /* KBENCH_CGROUP_H */
