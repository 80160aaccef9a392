// SPDX-License-Identifier: GPL-2.0
/*
 * memcg_ks: the memory cgroup it reads: picked (its own, one given, the
 * root), its files read, its .ks filter files written and reset.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memcg_ks.h"

/* ---- reading the cgroup's files ---------------------------------------- */

void cg_file(const struct memcg_ctx *c, char *buf, size_t size,
	     const char *name)
{
	snprintf(buf, size, "%s/%s", c->dir, name);
}

bool cg_has(const struct memcg_ctx *c, const char *name)
{
	char path[PATH_MAX + 64];

	cg_file(c, path, sizeof(path), name);
	return !access(path, F_OK);
}

/* Read a file of the cgroup into @buf; its length or -errno. */
static ssize_t read_into(struct memcg_ctx *c, const char *name, char *buf,
			 size_t bsize, char *why, size_t size)
{
	char path[PATH_MAX + 64];
	ssize_t n;

	cg_file(c, path, sizeof(path), name);
	n = kb_file_read_all(path, buf, bsize);
	if (n < 0)
		snprintf(why, size, "cannot read %.200s: %s", path,
			 strerror((int)-n));
	return n;
}

/* Read a file of the cgroup into c->text; its length or -errno. */
ssize_t read_text(struct memcg_ctx *c, const char *name, char *why,
		  size_t size)
{
	return read_into(c, name, c->text, sizeof(c->text), why, size);
}

/*
 * Read and parse memory.stat (or a .ks file in stat format), in a buffer
 * of its own: c->text read before stays valid.
 */
int read_stat(struct memcg_ctx *c, const char *name,
	      struct kb_memstat *st, char *why, size_t size)
{
	ssize_t n = read_into(c, name, c->stat_text, sizeof(c->stat_text),
			      why, size);

	if (n < 0)
		return (int)n;
	return kb_memstat_parse(c->stat_text, (size_t)n, st, why, size);
}

int read_stat_key(struct memcg_ctx *c, const char *key,
		  unsigned long long *v)
{
	struct kb_memstat st;
	char why[256];
	int err = read_stat(c, "memory.stat", &st, why, sizeof(why));

	if (err)
		return err;
	return kb_memstat_get(&st, key, v) ? 0 : -ENOENT;
}

/* ---- picking the cgroup ------------------------------------------------ */

static bool is_dir(const char *path)
{
	struct stat sb;

	return !stat(path, &sb) && S_ISDIR(sb.st_mode);
}

/* A user-given directory must be a memory cgroup: otherwise exit 2. */
static void check_user_cgroup(struct memcg_ctx *c, const char *path,
			      bool need_stat)
{
	const char *from = c->opt.cgpath_from;
	char file[PATH_MAX + 64];

	if (!is_dir(path))
		kb_cli_error("cgroup '%s' (%s): not a directory", path, from);
	snprintf(file, sizeof(file), "%s/cgroup.procs", path);
	if (access(file, F_OK))
		kb_cli_error("cgroup '%s' (%s): not a cgroup directory (no cgroup.procs)",
			     path, from);
	snprintf(file, sizeof(file), "%s/memory.stat", path);
	if (need_stat && access(file, R_OK))
		kb_cli_error("cgroup '%s' (%s): no readable memory.stat (%s): not a memory cgroup%s",
			     path, from, strerror(errno),
			     errno == ENOENT ? " (memory controller not enabled here?)" : "");
	snprintf(file, sizeof(file), "%s/cgroup.controllers", path);
	c->ver = access(file, F_OK) ? KB_CGROUP_V1 : KB_CGROUP_V2;
	snprintf(c->dir, sizeof(c->dir), "%s", path);
}

static void find_memcg(struct memcg_ctx *c)
{
	int err = kb_cgroup_memcg_find(&c->mnt);

	if (err == -ENOENT)
		ksft_exit_skip("no memory cgroup controller mounted (cgroup v2 'memory' in cgroup.controllers, or a v1 memory hierarchy): CONFIG_MEMCG?\n");
	if (err)
		ksft_exit_fail_msg("cannot read /proc/self/mountinfo: %s\n",
				   strerror(-err));
}

/*
 * Default: a cgroup of our own under the mount point of the memory
 * hierarchy. Without the right to create one, read the memory cgroup we
 * run in (the child inherits it) and say why.
 */
static void pick_default_cgroup(struct memcg_ctx *c)
{
	char name[64], why[256], stat_path[PATH_MAX + 64];
	int err;

	find_memcg(c);
	c->ver = c->mnt.version;
	snprintf(name, sizeof(name), "kbench_memcg_ks.%d", (int)getpid());
	if (kb_cgroup_may_write(c->mnt.path, why, sizeof(why))) {
		err = kb_cgroup_create(&c->mnt, c->mnt.path, name, &c->test_cg);
		if (!err) {
			c->own_cgroup = true;
			snprintf(c->dir, sizeof(c->dir), "%s", c->test_cg.path);
			return;
		}
		snprintf(why, sizeof(why), "cannot create %.150s/%s: %s",
			 c->mnt.path, name, strerror(-err));
	}
	snprintf(c->create_note, sizeof(c->create_note), "%s", why);
	err = kb_cgroup_memcg_self(&c->mnt, c->dir, sizeof(c->dir));
	snprintf(stat_path, sizeof(stat_path), "%s/memory.stat", c->dir);
	if (err || access(stat_path, R_OK)) {
		snprintf(c->dir, sizeof(c->dir), "%s", c->mnt.path);
		snprintf(stat_path, sizeof(stat_path), "%s/memory.stat", c->dir);
		if (access(stat_path, R_OK))
			ksft_exit_skip("%s, and no readable memory.stat in our own memory cgroup\n",
				       why);
	}
}

void pick_cgroup(struct memcg_ctx *c, bool need_stat)
{
	if (c->opt.cgpath) {
		check_user_cgroup(c, c->opt.cgpath, need_stat);
		return;
	}
	if (c->opt.root) {
		find_memcg(c);
		c->opt.cgpath_from = "--root";
		check_user_cgroup(c, c->mnt.path, need_stat);
		return;
	}
	pick_default_cgroup(c);
}

bool reads_inherited_cgroup(const struct memcg_ctx *c)
{
	return !c->own_cgroup && !c->opt.cgpath && !c->opt.root;
}

/* How often a comparison of two reads is tried before it fails. */
int match_tries(const struct memcg_ctx *c)
{
	return c->own_cgroup ? TRIES_OWN : TRIES_SHARED;
}

/* ---- the .ks files ----------------------------------------------------- */

static void ks_path(const struct memcg_ctx *c, enum file_id f, char *buf,
		    size_t size)
{
	snprintf(buf, size, "%s/%s.ks", c->dir, file_name[f]);
}

/* Back to legacy output: an empty line. Signal-safe. */
void ks_reset(void *arg)
{
	struct memcg_ctx *c = arg;
	char path[PATH_MAX + 64];
	int f;

	for (f = 0; f < NR_FILES; f++) {
		if (!c->ks_written[f])
			continue;
		ks_path(c, f, path, sizeof(path));
		kb_file_write_str(path, "\n");
	}
}

int ks_write(struct memcg_ctx *c, enum file_id f, const char *filter)
{
	char path[PATH_MAX + 64];

	if (!c->ks_reset_pushed && !c->opt.set_filter) {
		kb_cleanup_push(ks_reset, c);
		c->ks_reset_pushed = true;
	}
	c->ks_written[f] = true;
	ks_path(c, f, path, sizeof(path));
	return kb_file_write_str(path, filter);
}

void ks_probe(struct memcg_ctx *c)
{
	char path[PATH_MAX + 64], why[256];
	int f;

	for (f = 0; f < NR_FILES; f++) {
		ks_path(c, f, path, sizeof(path));
		c->have_ks[f] = !access(path, F_OK);
		if (!c->have_ks[f])
			snprintf(c->ks_skip[f], sizeof(c->ks_skip[f]),
				 "kernel has no %s.ks", file_name[f]);
		else if (!kb_cgroup_may_write(path, why, sizeof(why)))
			snprintf(c->ks_skip[f], sizeof(c->ks_skip[f]),
				 "writing a filter needs privilege: %s", why);
	}
	/* numa_stat.ks without stat.ks would be odd; say the first reason. */
	if (c->ks_skip[F_STAT][0] && !c->ks_skip[F_NUMA][0] &&
	    !c->have_ks[F_STAT])
		snprintf(c->ks_skip[F_NUMA], sizeof(c->ks_skip[F_NUMA]), "%s",
			 c->ks_skip[F_STAT]);
}

/*
 * The seed's selections: N slots of vmstats.state[], 3 = its own pick.
 * The array is shorter than 128 on current kernels (6.12: ~40 counters;
 * a bounds-checking kernel rejects state[40]): N > 3 cycles through its
 * first STATE_SPAN entries, N fields all the same.
 */
void field_slots(int n, int *slots)
{
	static const int seed3[] = { 14, 16, 5 };
	int i;

	for (i = 0; i < n; i++)
		slots[i] = n == 3 ? seed3[i] : i % STATE_SPAN;
}

/* The .ks filter reading the slots of field_slots(). */
void build_field_filter(int n, bool flush, char *buf, size_t size)
{
	int slots[MAX_FIELDS], i;
	size_t len = 0;

	buf[0] = '\0';
	if (flush)
		len += snprintf(buf + len, size - len, "flush");
	field_slots(n, slots);
	for (i = 0; i < n && len < size; i++)
		len += snprintf(buf + len, size - len, "%svmstats.state[%d]",
				len ? "," : "", slots[i]);
}

/* Default key filter: the first 8 keys of the legacy memory.stat. */
void default_keys(struct memcg_ctx *c, char *buf, size_t size)
{
	struct kb_memstat st;
	char why[256];
	size_t len = 0, i;

	buf[0] = '\0';
	if (read_stat(c, "memory.stat", &st, why, sizeof(why)))
		return;
	for (i = 0; i < st.n && i < 8; i++)
		len += snprintf(buf + len, size - len, "%s%s", i ? "," : "",
				st.e[i].key);
}

void build_key_filter(const char *keys, bool flush, char *buf,
		      size_t size)
{
	snprintf(buf, size, "%s%s", flush ? "flush," : "", keys);
}

int ks_read(struct memcg_ctx *c, enum file_id f, struct kb_memstat *st,
	    char *why, size_t size)
{
	char name[64];

	snprintf(name, sizeof(name), "%s.ks", file_name[f]);
	return read_stat(c, name, st, why, size);
}
