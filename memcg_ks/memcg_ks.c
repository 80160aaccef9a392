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
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <numa.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "bpf_iter.h"
#include "memcg_bpf.h"
#include "kbench_ktap.h"

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

/* ---- options ----------------------------------------------------------- */

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
	bool root;		/* the root of the memory hierarchy */
	unsigned long long alloc;
	double row_budget_s;	/* stop a row after this long; 0 = never */
	const char *json;
	bool full;
};

static struct options opt;

/* ---- where we read ----------------------------------------------------- */

static struct kb_memcg_mount mnt;
static struct kb_cgroup test_cg;
static char cgdir[PATH_MAX];
static enum kb_cgroup_version cgver;
static bool own_cgroup;
static long page_size;
/* Why the allocation checks cannot run (child not in cgdir); "" if they can. */
static char child_skip[1024];
static char create_note[320];
static const char *cgpath_from = "--cgroup";

static void cg_file(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", cgdir, name);
}

static bool cg_has(const char *name)
{
	char path[PATH_MAX + 64];

	cg_file(path, sizeof(path), name);
	return !access(path, F_OK);
}

/* Read and parse memory.stat (or a .ks file in stat format). */
static int read_stat(const char *name, struct kb_stat *st, char *why,
		     size_t size)
{
	static char buf[READ_BUF_SIZE];
	char path[PATH_MAX + 64];
	ssize_t n;

	cg_file(path, sizeof(path), name);
	n = kb_read_all(path, buf, sizeof(buf));
	if (n < 0) {
		snprintf(why, size, "cannot read %.300s: %s", path, strerror(-n));
		return (int)n;
	}
	return kb_stat_parse(buf, st, why, size);
}

static int read_stat_key(const char *key, unsigned long long *v)
{
	static struct kb_stat st;
	char why[256];
	int err = read_stat("memory.stat", &st, why, sizeof(why));

	if (err)
		return err;
	return kb_stat_get(&st, key, v) ? 0 : -ENOENT;
}

/* ---- the helper child: allocates and frees memory on request ----------- */

enum child_cmd { CHILD_ALLOC = 'A', CHILD_FREE = 'F', CHILD_ALLOC_NODE = 'N' };

struct child_req {
	char cmd;
	int node;
	unsigned long long size;
};

static pid_t child_pid = -1;
static int child_req_fd = -1, child_ack_fd = -1;

static void *touch_new(size_t size, int node)
{
	char *p;
	size_t i;

	if (node >= 0) {
		p = numa_alloc_onnode(size, node);
		if (!p)
			return NULL;
	} else {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
	}
	/* Base pages only: v1 "rss" and v2 "anon" then move by exactly this. */
	madvise(p, size, MADV_NOHUGEPAGE);
	for (i = 0; i < size; i += 4096)
		p[i] = 1;
	return p;
}

static void child_loop(int req_fd, int ack_fd)
{
	struct { void *p; size_t size; bool numa; } stack[8];
	struct child_req req;
	int depth = 0, ret;

	while (read(req_fd, &req, sizeof(req)) == sizeof(req)) {
		ret = 0;
		if (req.cmd == CHILD_FREE) {
			if (depth > 0) {
				depth--;
				if (stack[depth].numa)
					numa_free(stack[depth].p, stack[depth].size);
				else
					munmap(stack[depth].p, stack[depth].size);
			}
		} else if (depth == 8) {
			ret = ENOSPC;
		} else {
			int node = req.cmd == CHILD_ALLOC_NODE ? req.node : -1;
			void *p = touch_new(req.size, node);

			if (!p)
				ret = errno ? errno : ENOMEM;
			else
				stack[depth].p = p, stack[depth].size = req.size,
				stack[depth].numa = node >= 0, depth++;
		}
		if (write(ack_fd, &ret, sizeof(ret)) != sizeof(ret))
			break;
	}
	_exit(0);
}

static void kill_child(void *arg)
{
	(void)arg;
	if (child_pid > 0) {
		kill(child_pid, SIGKILL);
		waitpid(child_pid, NULL, 0);
		child_pid = -1;
	}
}

static int child_start(void)
{
	int req[2], ack[2];
	pid_t parent = getpid();

	if (pipe2(req, O_CLOEXEC) || pipe2(ack, O_CLOEXEC))
		return -errno;
	kb_signals_block();
	child_pid = fork();
	if (child_pid == 0) {
		kb_signals_unblock();
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		close(req[1]);
		close(ack[0]);
		child_loop(req[0], ack[1]);
	}
	if (child_pid > 0)
		kb_cleanup_push(kill_child, NULL);
	kb_signals_unblock();
	close(req[0]);
	close(ack[1]);
	if (child_pid < 0)
		return -errno;
	child_req_fd = req[1];
	child_ack_fd = ack[0];
	return 0;
}

/* Send one request; returns the child's 0 or -errno. */
static int child_do(char cmd, unsigned long long size, int node)
{
	struct child_req req = { .cmd = cmd, .node = node, .size = size };
	int ret;

	if (child_req_fd < 0)
		return -ECHILD;
	if (write(child_req_fd, &req, sizeof(req)) != sizeof(req))
		return -EPIPE;
	if (read(child_ack_fd, &ret, sizeof(ret)) != sizeof(ret))
		return -EPIPE;
	return -ret;
}

/* ---- picking the cgroup ------------------------------------------------ */

static bool is_dir(const char *path)
{
	struct stat sb;

	return !stat(path, &sb) && S_ISDIR(sb.st_mode);
}

/* A user-given directory must be a memory cgroup: otherwise exit 2. */
static void check_user_cgroup(const char *path, bool need_stat)
{
	char file[PATH_MAX + 64];

	if (!is_dir(path))
		kb_usage_error("cgroup '%s' (%s): not a directory", path,
			       cgpath_from);
	snprintf(file, sizeof(file), "%s/cgroup.procs", path);
	if (access(file, F_OK))
		kb_usage_error("cgroup '%s' (%s): not a cgroup directory (no cgroup.procs)",
			       path, cgpath_from);
	snprintf(file, sizeof(file), "%s/memory.stat", path);
	if (need_stat && access(file, R_OK))
		kb_usage_error("cgroup '%s' (%s): no readable memory.stat (%s): not a memory cgroup%s",
			       path, cgpath_from, strerror(errno),
			       errno == ENOENT ? " (memory controller not enabled here?)" : "");
	snprintf(file, sizeof(file), "%s/cgroup.controllers", path);
	cgver = access(file, F_OK) ? KB_CGROUP_V1 : KB_CGROUP_V2;
}

/*
 * Default: a cgroup of our own under the mount point of the memory
 * hierarchy. Without the right to create one, read the memory cgroup we
 * run in (the child inherits it) and say why.
 */
static void pick_default_cgroup(void)
{
	char name[64], why[256], stat_path[PATH_MAX + 64];
	int err;

	err = kb_memcg_find(&mnt);
	if (err == -ENOENT)
		ksft_exit_skip("no memory cgroup controller mounted (cgroup v2 'memory' in cgroup.controllers, or a v1 memory hierarchy): CONFIG_MEMCG?\n");
	if (err)
		ksft_exit_fail_msg("cannot read /proc/self/mountinfo: %s\n",
				   strerror(-err));
	cgver = mnt.version;
	snprintf(name, sizeof(name), "kbench_memcg_ks.%d", (int)getpid());
	if (kb_cgroup_may_write(mnt.path, why, sizeof(why))) {
		err = kb_cgroup_create(&mnt, mnt.path, name, &test_cg);
		if (!err) {
			own_cgroup = true;
			snprintf(cgdir, sizeof(cgdir), "%s", test_cg.path);
			return;
		}
		snprintf(why, sizeof(why), "cannot create %.150s/%s: %s", mnt.path,
			 name, strerror(-err));
	}
	snprintf(create_note, sizeof(create_note), "%s", why);
	err = kb_memcg_self(&mnt, cgdir, sizeof(cgdir));
	snprintf(stat_path, sizeof(stat_path), "%s/memory.stat", cgdir);
	if (err || access(stat_path, R_OK)) {
		snprintf(cgdir, sizeof(cgdir), "%s", mnt.path);
		snprintf(stat_path, sizeof(stat_path), "%s/memory.stat", cgdir);
		if (access(stat_path, R_OK))
			ksft_exit_skip("%s, and no readable memory.stat in our own memory cgroup\n",
				       why);
	}
}

static void pick_cgroup(bool need_stat)
{
	if (opt.cgpath) {
		check_user_cgroup(opt.cgpath, need_stat);
		snprintf(cgdir, sizeof(cgdir), "%s", opt.cgpath);
		return;
	}
	if (opt.root) {
		int err = kb_memcg_find(&mnt);

		if (err == -ENOENT)
			ksft_exit_skip("no memory cgroup controller mounted\n");
		if (err)
			ksft_exit_fail_msg("cannot read /proc/self/mountinfo: %s\n",
					   strerror(-err));
		cgpath_from = "--root";
		check_user_cgroup(mnt.path, need_stat);
		snprintf(cgdir, sizeof(cgdir), "%s", mnt.path);
		return;
	}
	pick_default_cgroup();
}

/* Start the allocating child and put it where we read. */
static void place_child(void)
{
	char procs[PATH_MAX + 64], why[256];
	int err = child_start();

	if (err) {
		snprintf(child_skip, sizeof(child_skip), "cannot fork the allocating child: %s",
			 strerror(-err));
		return;
	}
	if (!own_cgroup && !opt.cgpath && !opt.root) {
		/* Reading our own memory cgroup: the child is in it already. */
		return;
	}
	cg_file(procs, sizeof(procs), "cgroup.procs");
	if (!own_cgroup && !kb_cgroup_may_write(procs, why, sizeof(why))) {
		snprintf(child_skip, sizeof(child_skip),
			 "cannot move the allocating child into %.300s: %.400s", cgdir, why);
		return;
	}
	err = kb_cgroup_move(cgdir, child_pid);
	if (err)
		snprintf(child_skip, sizeof(child_skip),
			 "cannot move the allocating child into %.300s: %s", cgdir,
			 strerror(-err));
}

/* ---- timing ------------------------------------------------------------ */

enum mode { MODE_READ, MODE_CAT, MODE_PROC, NR_MODES };

static const char *const mode_name[NR_MODES] = {
	"per_read", "per_cat", "cat_process",
};

static const char *const mode_note[NR_MODES] = {
	"lseek(0) + read on one open fd",
	"open + read + close",
	"fork + exec of 'cat FILE' (stdout to /dev/null) + waitpid",
};

static char read_buf[READ_BUF_SIZE];
static bool row_cut_short;	/* the last row hit --max-row-time */

/* Read the whole file from the current offset; bytes or -errno. */
static ssize_t read_rest(int fd)
{
	size_t len = 0;
	ssize_t n;

	do {
		n = read(fd, read_buf + len, sizeof(read_buf) - len);
		if (n < 0)
			return -errno;
		len += n;
		/* A short read is the whole (single record) file. */
	} while (n > 0 && len == sizeof(read_buf));
	return len;
}

static ssize_t op_per_read(int fd, const char *path, long batch)
{
	ssize_t n = 0;

	(void)path;
	while (batch--) {
		if (lseek(fd, 0, SEEK_SET) < 0)
			return -errno;
		n = read_rest(fd);
		if (n < 0)
			return n;
	}
	return n;
}

static ssize_t op_per_cat(int fd, const char *path, long batch)
{
	ssize_t n = 0;

	(void)fd;
	while (batch--) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		n = read_rest(fd);
		close(fd);
		if (n < 0)
			return n;
	}
	return n;
}

static int devnull_fd = -1;

/* One external cat process; its output goes to /dev/null. */
static ssize_t op_cat_process(int fd, const char *path, long batch)
{
	int status;
	pid_t pid;

	(void)fd;
	while (batch--) {
		/* No signal between fork and wait: the cat is always reaped. */
		kb_signals_block();
		pid = fork();
		if (pid == 0) {
			kb_signals_unblock();
			dup2(devnull_fd, STDOUT_FILENO);
			execlp("cat", "cat", path, (char *)NULL);
			_exit(127);
		}
		if (pid > 0 && waitpid(pid, &status, 0) != pid)
			pid = -1;
		kb_signals_unblock();
		if (pid < 0)
			return -errno;
		if (!WIFEXITED(status) || WEXITSTATUS(status) == 127)
			return -ENOEXEC;
		if (WEXITSTATUS(status))
			return -EIO;
	}
	return 1;
}

typedef ssize_t (*op_fn)(int fd, const char *path, long batch);

static const op_fn mode_op[NR_MODES] = {
	op_per_read, op_per_cat, op_cat_process,
};

/*
 * Time @mode on @path: samples of @batch operations, microseconds per
 * operation. @bytes gets the size of one read. 0 or -errno.
 */
static int time_reads(const char *path, enum mode mode, struct kb_stats *st,
		      ssize_t *bytes, double *total_s)
{
	long count = mode == MODE_PROC ? opt.cat_count : opt.count;
	long batch = mode == MODE_PROC ? 1 : opt.batch;
	long nsamples = count / batch, warm = nsamples / 10, i;
	double *samples;
	uint64_t start;
	ssize_t n = 0;
	int fd = -1, err = 0;

	if (nsamples < 2)
		nsamples = 2;
	row_cut_short = false;
	if (warm < 1)
		warm = 1;
	/* A time-bounded run warms a process row up with a few only. */
	if (opt.row_budget_s > 0 && mode == MODE_PROC && warm > 3)
		warm = 3;
	samples = calloc(nsamples, sizeof(*samples));
	if (!samples)
		return -ENOMEM;
	if (mode == MODE_READ) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			free(samples);
			return -errno;
		}
	}
	for (i = -warm; i < 0 && n >= 0; i++)
		n = mode_op[mode](fd, path, batch);
	start = kb_now_ns();
	for (i = 0; i < nsamples && n >= 0; i++) {
		uint64_t t0 = kb_now_ns();

		n = mode_op[mode](fd, path, batch);
		samples[i] = (double)(kb_now_ns() - t0) / batch / 1000.0;
		/* A slow machine: stop at the row's time budget. */
		if (opt.row_budget_s > 0 && i >= 20 &&
		    (double)(kb_now_ns() - start) / 1e9 > opt.row_budget_s) {
			nsamples = i + 1;
			row_cut_short = true;
			break;
		}
	}
	*total_s = (double)(kb_now_ns() - start) / 1e9;
	if (fd >= 0)
		close(fd);
	if (n < 0)
		err = (int)n;
	else
		kb_stats_compute(samples, nsamples, st);
	if (mode != MODE_PROC)
		*bytes = n;
	else
		*bytes = -1;
	free(samples);
	return err;
}

/* ---- result table ------------------------------------------------------ */

enum file_id { F_STAT, F_NUMA, NR_FILES };

static const char *const file_name[NR_FILES] = {
	"memory.stat", "memory.numa_stat",
};
static const char *const file_tag[NR_FILES] = { "stat", "numa_stat" };

#define NR_VARIANTS	(1 + MAX_FILTERS + 1)	/* legacy, N fields, keys */

struct cell {
	bool done;
	double median;
	double mean;
};

/* cells[variant][file][mode]; variant 0 = legacy. */
static struct cell cells[NR_VARIANTS][NR_FILES][NR_MODES];
static char variant_tag[NR_VARIANTS][24];
static int nvariants;
static double devnull_cat_median = -1;

static const char *errstr(int err)
{
	return err == -ENOEXEC ? "no 'cat' in PATH, or it failed" : strerror(-err);
}

static void time_row(int variant, enum file_id f, enum mode m,
		     const char *ks_fields_note)
{
	char name[96], path[PATH_MAX + 64], why[PATH_MAX + 128];
	struct kb_stats st;
	ssize_t bytes;
	double total_s;
	int err;

	snprintf(name, sizeof(name), "%s_%s_%s", file_tag[f],
		 variant_tag[variant], mode_name[m]);
	snprintf(path, sizeof(path), "%s/%s%s", cgdir, file_name[f],
		 variant ? ".ks" : "");
	err = time_reads(path, m, &st, &bytes, &total_s);
	if (err) {
		snprintf(why, sizeof(why), "%s: %s", path, errstr(err));
		if (m == MODE_PROC && err == -ENOEXEC)
			kb_skip(name, why);
		else
			kb_fail(name, why);
		return;
	}
	kb_row_add(name, "us", &st);
	kb_row_extra("batch", m == MODE_PROC ? 1 : opt.batch);
	kb_row_extra("total_s", total_s);
	if (row_cut_short)
		kb_row_extra("cut_at_max_row_time", 1);
	if (bytes >= 0)
		kb_row_extra("bytes", (double)bytes);
	if (variant && cells[0][f][m].done && cells[0][f][m].median > 0)
		kb_row_extra("ratio_vs_legacy", st.median / cells[0][f][m].median);
	if (ks_fields_note) {
		char note[160];

		snprintf(note, sizeof(note), "%s; filter: %s", mode_note[m],
			 ks_fields_note);
		kb_row_note(note);
	} else {
		kb_row_note(mode_note[m]);
	}
	cells[variant][f][m] = (struct cell){ true, st.median, st.mean };
	if (!(st.min > 0))
		kb_fail(name, "non-positive sample: the clock or the loop is broken");
	else if (bytes == 0)
		kb_fail(name, "read returned no data");
	else
		kb_pass(name);
}

static void time_devnull_cat(void)
{
	struct kb_stats st;
	ssize_t bytes;
	double total_s;
	int err = time_reads("/dev/null", MODE_PROC, &st, &bytes, &total_s);

	if (err) {
		kb_skip("cat_devnull_process", errstr(err));
		return;
	}
	kb_row_add("cat_devnull_process", "us", &st);
	kb_row_extra("total_s", total_s);
	kb_row_note("fork + exec of 'cat /dev/null' + waitpid: the process alone");
	devnull_cat_median = st.median;
	kb_pass("cat_devnull_process");
}

static void skip_file_rows(const char *tag, enum file_id f, const char *why,
			   bool bench)
{
	char name[96];
	int m;

	for (m = 0; m < (bench ? 1 : NR_MODES); m++) {
		snprintf(name, sizeof(name), "%s_%s_%s", file_tag[f], tag,
			 mode_name[m]);
		kb_skip(name, why);
	}
}

static void print_table(void)
{
	int v, f;

	ksft_print_msg("median microseconds per read (%s); ratio = ks / legacy, same file and way\n",
		       KB_CLOCK_NAME);
	ksft_print_msg("%-30s %12s %12s %14s\n", "file", "per_read",
		       "per_cat", "cat_process");
	for (v = 0; v < nvariants; v++) {
		for (f = 0; f < NR_FILES; f++) {
			char label[64], col[NR_MODES][32];
			int m;

			if (!cells[v][f][MODE_READ].done)
				continue;
			snprintf(label, sizeof(label), "%s%s%s%s", file_name[f],
				 v ? ".ks [" : "", v ? variant_tag[v] : "",
				 v ? "]" : "");
			for (m = 0; m < NR_MODES; m++) {
				const struct cell *c = &cells[v][f][m];
				const struct cell *l = &cells[0][f][m];

				if (!c->done)
					snprintf(col[m], sizeof(col[m]), "-");
				else if (v && l->done)
					snprintf(col[m], sizeof(col[m]), "%.3f (x%.2f)",
						 c->median, c->median / l->median);
				else
					snprintf(col[m], sizeof(col[m]), "%.3f",
						 c->median);
			}
			ksft_print_msg("%-30s %12s %12s %14s\n", label,
				       col[0], col[1], col[2]);
		}
	}
	if (devnull_cat_median > 0)
		ksft_print_msg("%-30s %12s %12s %14.3f\n", "cat /dev/null",
			       "-", "-", devnull_cat_median);
}

/* ---- correctness checks ------------------------------------------------ */

/* Keys every memory.stat of that cgroup version has had since 4.x. */
static const char *const v1_keys[] = {
	"cache", "rss", "mapped_file", "pgpgin", "pgpgout", "pgfault",
	"pgmajfault", "inactive_anon", "active_anon", "inactive_file",
	"active_file", "unevictable", "hierarchical_memory_limit",
	"total_cache", "total_rss", NULL,
};
static const char *const v2_keys[] = {
	"anon", "file", "kernel_stack", "sock", "shmem", "file_mapped",
	"file_dirty", "file_writeback", "inactive_anon", "active_anon",
	"inactive_file", "active_file", "unevictable", "slab_reclaimable",
	"slab_unreclaimable", "pgfault", "pgmajfault", NULL,
};

static void check_stat_parse(void)
{
	static struct kb_stat st;
	const char *const *k;
	char why[512];

	if (read_stat("memory.stat", &st, why, sizeof(why))) {
		kb_fail("stat_parse", why);
		return;
	}
	for (k = cgver == KB_CGROUP_V2 ? v2_keys : v1_keys; *k; k++) {
		if (!kb_stat_get(&st, *k, NULL)) {
			snprintf(why, sizeof(why), "cgroup v%d memory.stat lacks '%s'",
				 cgver, *k);
			kb_fail("stat_parse", why);
			return;
		}
	}
	if (st.comments) {
		kb_fail("stat_parse", "memory.stat has '#' lines");
		return;
	}
	kb_figure("stat_parse", "keys=%zu cgroup_version=%d", st.n, cgver);
	kb_pass("stat_parse");
}

/* Concurrent updates between two counters: 2 MiB + 2 %. */
static bool close_enough(unsigned long long a, unsigned long long b)
{
	unsigned long long diff = a > b ? a - b : b - a;
	unsigned long long big = a > b ? a : b;

	return diff <= 2 * MIB + big / 50;
}

/*
 * v1: every line "key=total N0=.. N1=.." must add up (pages).
 * v2: "key N0=.. N1=.." has no total: the sum must match the same key in
 * memory.stat (both bytes).
 * Returns 0 (lines checked in @lines), or -1 with @why set.
 */
static int numa_sums_once(int *lines, char *why, size_t size)
{
	static char buf[READ_BUF_SIZE];
	static struct kb_stat st;
	char path[PATH_MAX + 64], line[4096];
	const char *p;
	ssize_t n;

	*lines = 0;
	cg_file(path, sizeof(path), "memory.numa_stat");
	n = kb_read_all(path, buf, sizeof(buf));
	if (n < 0) {
		snprintf(why, size, "cannot read %.300s: %s", path, strerror(-n));
		return -1;
	}
	if (cgver == KB_CGROUP_V2 && read_stat("memory.stat", &st, why, size))
		return -1;
	for (p = buf; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		struct kb_numa_line l;
		unsigned long long sum, want, scale = 1;

		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		p = nl ? nl + 1 : p + len;
		if (!line[0])
			continue;
		if (kb_numa_line_parse(line, &l)) {
			snprintf(why, size, "unparsable line '%.100s'", line);
			return -1;
		}
		sum = kb_numa_line_sum(&l);
		if (l.has_total) {
			want = l.total;
			scale = page_size;
		} else if (!kb_stat_get(&st, l.key, &want)) {
			continue;	/* numa_stat only: nothing to compare */
		}
		if (!close_enough(sum * scale, want * scale)) {
			snprintf(why, size, "%s: per-node sum %llu != %s %llu%s",
				 l.key, sum, l.has_total ? "total" : "memory.stat",
				 want, l.has_total ? " (pages)" : " (bytes)");
			return -1;
		}
		(*lines)++;
	}
	if (!*lines) {
		snprintf(why, size, "no line to check in %.300s", path);
		return -1;
	}
	return 0;
}

static void check_numa_sums(void)
{
	char why[512];
	int tries, lines = 0, err = -1;

	if (!cg_has("memory.numa_stat")) {
		kb_skip("numa_stat_sums", "no memory.numa_stat (kernel without CONFIG_NUMA)");
		return;
	}
	/* Two files read one after the other: retry a moving counter. */
	for (tries = 0; tries < 3 && err; tries++)
		err = numa_sums_once(&lines, why, sizeof(why));
	if (err) {
		kb_fail("numa_stat_sums", why);
		return;
	}
	kb_figure("numa_stat_sums", "lines=%d nodes=%d", lines,
		  numa_available() < 0 ? 1 : numa_num_configured_nodes());
	kb_pass("numa_stat_sums");
}

static double wait_limit_s(void)
{
	return kb_machine_slow() ? 30.0 : 6.0;
}

/*
 * Re-read until get() - @base passes @min_delta (growing, @sign +1) or
 * @base - get() does (falling, @sign -1), bounded by wait_limit_s():
 * stats may be flushed only every 2 s. Returns the last value read.
 */
static int wait_for_delta(int (*get)(unsigned long long *v),
			  unsigned long long base, long long min_delta, int sign,
			  unsigned long long *last, double *waited_s)
{
	uint64_t t0 = kb_now_ns();
	int err;

	for (;;) {
		long long delta;

		err = get(last);
		if (err)
			return err;
		delta = sign > 0 ? (long long)(*last - base) :
			(long long)(base - *last);
		*waited_s = (double)(kb_now_ns() - t0) / 1e9;
		if (delta >= min_delta || *waited_s > wait_limit_s())
			return 0;
		usleep(20000);
	}
}

static int get_anon(unsigned long long *v)
{
	return read_stat_key(cgver == KB_CGROUP_V2 ? "anon" : "rss", v);
}

static int numa_anon_node = -1;

static int get_numa_anon(unsigned long long *v)
{
	static char buf[READ_BUF_SIZE];
	char path[PATH_MAX + 64], line[4096];
	const char *p;

	cg_file(path, sizeof(path), "memory.numa_stat");
	if (kb_read_all(path, buf, sizeof(buf)) < 0)
		return -errno;
	for (p = buf; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		struct kb_numa_line l;

		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		p = nl ? nl + 1 : p + len;
		if (kb_numa_line_parse(line, &l) || strcmp(l.key, "anon"))
			continue;
		if (!kb_numa_line_node(&l, numa_anon_node, v))
			return -ENOENT;
		if (l.has_total)	/* v1 counts pages */
			*v *= page_size;
		return 0;
	}
	return -ENOENT;
}

/* Most of the allocation must show: 3/4 of it. */
static long long min_visible(void)
{
	return (long long)(opt.alloc / 4 * 3);
}

static void check_anon_growth(void)
{
	const char *key = cgver == KB_CGROUP_V2 ? "anon" : "rss";
	unsigned long long before, grown = 0, after = 0;
	double up_s = 0, down_s = 0;
	int attempt, attempts = own_cgroup ? 1 : 3, err = 0;
	char why[256];
	bool up = false, down = false;

	if (child_skip[0]) {
		kb_skip("stat_anon_grows", child_skip);
		kb_skip("stat_anon_falls", child_skip);
		return;
	}
	/* A shared cgroup moves on its own: a few tries. */
	for (attempt = 0; attempt < attempts && !(up && down); attempt++) {
		err = get_anon(&before);
		if (!err)
			err = child_do(CHILD_ALLOC, opt.alloc, -1);
		if (!err)
			err = wait_for_delta(get_anon, before, min_visible(), 1,
					     &grown, &up_s);
		if (!err)
			err = child_do(CHILD_FREE, 0, -1);
		if (!err)
			err = wait_for_delta(get_anon, grown, min_visible(), -1,
					     &after, &down_s);
		if (err)
			break;
		up = (long long)(grown - before) >= min_visible();
		down = (long long)(grown - after) >= min_visible();
	}
	if (err) {
		snprintf(why, sizeof(why), "%s: %s", key, strerror(-err));
		kb_fail("stat_anon_grows", why);
		kb_fail("stat_anon_falls", why);
		return;
	}
	kb_figure("stat_anon_grows", "key=%s alloc_mib=%.1f before_mib=%.1f after_alloc_mib=%.1f delta_mib=%.1f wait_s=%.3f attempts=%d",
		  key, opt.alloc / (double)MIB, before / (double)MIB,
		  grown / (double)MIB,
		  ((double)grown - (double)before) / MIB, up_s, attempt);
	snprintf(why, sizeof(why), "%s grew by %.1f MiB after touching %.1f MiB (want >= %.1f)",
		 key, ((double)grown - (double)before) / MIB,
		 opt.alloc / (double)MIB, min_visible() / (double)MIB);
	kb_result(up, "stat_anon_grows", why);
	kb_figure("stat_anon_falls", "key=%s after_free_mib=%.1f drop_mib=%.1f wait_s=%.3f",
		  key, after / (double)MIB,
		  ((double)grown - (double)after) / MIB, down_s);
	snprintf(why, sizeof(why), "%s fell by %.1f MiB after freeing %.1f MiB (want >= %.1f)",
		 key, ((double)grown - (double)after) / MIB,
		 opt.alloc / (double)MIB, min_visible() / (double)MIB);
	kb_result(down, "stat_anon_falls", why);
}

/* With 2+ memory nodes, memory bound to the last one shows up there. */
static void check_numa_node(void)
{
	const char *name = "numa_stat_node_local";
	unsigned long long before, after = 0;
	struct bitmask *mems;
	double waited = 0;
	int node, nodes = 0, err;
	char why[256];

	if (!cg_has("memory.numa_stat")) {
		kb_skip(name, "no memory.numa_stat (kernel without CONFIG_NUMA)");
		return;
	}
	if (numa_available() < 0) {
		kb_skip(name, "libnuma: NUMA not available on this system");
		return;
	}
	mems = numa_get_mems_allowed();
	for (node = 0; node <= numa_max_node(); node++)
		if (numa_bitmask_isbitset(mems, node))
			nodes++, numa_anon_node = node;
	numa_bitmask_free(mems);
	if (nodes < 2) {
		kb_skip(name, "only one NUMA node with memory (libnuma)");
		return;
	}
	if (child_skip[0]) {
		kb_skip(name, child_skip);
		return;
	}
	err = get_numa_anon(&before);
	if (!err)
		err = child_do(CHILD_ALLOC_NODE, opt.alloc, numa_anon_node);
	if (!err)
		err = wait_for_delta(get_numa_anon, before, min_visible(), 1,
				     &after, &waited);
	child_do(CHILD_FREE, 0, -1);
	if (err) {
		snprintf(why, sizeof(why), "anon on node %d: %s", numa_anon_node,
			 strerror(-err));
		kb_fail(name, why);
		return;
	}
	kb_figure(name, "node=%d nodes=%d delta_mib=%.1f wait_s=%.3f",
		  numa_anon_node, nodes, ((double)after - (double)before) / MIB,
		  waited);
	snprintf(why, sizeof(why), "anon on node %d grew by %.1f MiB (want >= %.1f)",
		 numa_anon_node, ((double)after - (double)before) / MIB,
		 min_visible() / (double)MIB);
	kb_result((long long)(after - before) >= min_visible(), name, why);
}

/* ---- the .ks files ----------------------------------------------------- */

static bool have_ks[NR_FILES];
static char ks_skip[NR_FILES][320];	/* why the ks part cannot run */
static bool ks_written[NR_FILES];

static void ks_path(enum file_id f, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s.ks", cgdir, file_name[f]);
}

/* Back to legacy output: an empty line. Signal-safe. */
static void ks_reset(void *arg)
{
	char path[PATH_MAX + 64];
	int f;

	(void)arg;
	for (f = 0; f < NR_FILES; f++) {
		if (!ks_written[f])
			continue;
		ks_path(f, path, sizeof(path));
		kb_write_str(path, "\n");
	}
}

static int ks_write(enum file_id f, const char *filter)
{
	static bool reset_pushed;
	char path[PATH_MAX + 64];

	if (!reset_pushed && !opt.set_filter) {
		kb_cleanup_push(ks_reset, NULL);
		reset_pushed = true;
	}
	ks_written[f] = true;
	ks_path(f, path, sizeof(path));
	return kb_write_str(path, filter);
}

static void ks_probe(void)
{
	char path[PATH_MAX + 64], why[256];
	int f;

	for (f = 0; f < NR_FILES; f++) {
		ks_path(f, path, sizeof(path));
		have_ks[f] = !access(path, F_OK);
		if (!have_ks[f])
			snprintf(ks_skip[f], sizeof(ks_skip[f]),
				 "kernel has no %s.ks", file_name[f]);
		else if (!kb_cgroup_may_write(path, why, sizeof(why)))
			snprintf(ks_skip[f], sizeof(ks_skip[f]),
				 "writing a filter needs privilege: %s", why);
	}
	/* numa_stat.ks without stat.ks would be odd; say the first reason. */
	if (ks_skip[F_STAT][0] && !ks_skip[F_NUMA][0] && !have_ks[F_STAT])
		snprintf(ks_skip[F_NUMA], sizeof(ks_skip[F_NUMA]), "%s",
			 ks_skip[F_STAT]);
}

/* Entries of vmstats.state[] every kernel with the .ks files has. */
#define STATE_SPAN	32

/*
 * The seed's selections: N slots of vmstats.state[], 3 = its own pick.
 * The array is shorter than 128 on current kernels (6.12: ~40 counters;
 * a bounds-checking kernel rejects state[40]): N > 3 cycles through its
 * first STATE_SPAN entries, N fields all the same.
 */
static void field_slots(int n, int *slots)
{
	static const int seed3[] = { 14, 16, 5 };
	int i;

	for (i = 0; i < n; i++)
		slots[i] = n == 3 ? seed3[i] : i % STATE_SPAN;
}

/* The .ks filter reading the slots of field_slots(). */
static void build_field_filter(int n, char *buf, size_t size)
{
	int slots[MAX_FIELDS], i;
	size_t len = 0;

	buf[0] = '\0';
	if (!opt.no_flush)
		len += snprintf(buf + len, size - len, "flush");
	field_slots(n, slots);
	for (i = 0; i < n && len < size; i++)
		len += snprintf(buf + len, size - len, "%svmstats.state[%d]",
				len ? "," : "", slots[i]);
}

/* Default key filter: the first 8 keys of the legacy memory.stat. */
static void default_keys(char *buf, size_t size)
{
	static struct kb_stat st;
	char why[256];
	size_t len = 0, i;

	buf[0] = '\0';
	if (read_stat("memory.stat", &st, why, sizeof(why)))
		return;
	for (i = 0; i < st.n && i < 8; i++)
		len += snprintf(buf + len, size - len, "%s%s", i ? "," : "",
				st.e[i].key);
}

static void build_key_filter(char *buf, size_t size)
{
	snprintf(buf, size, "%s%s", opt.no_flush ? "" : "flush,", opt.keys);
}

/* Keys of a stat-format text, '#' lines left out. */
static int ks_read(enum file_id f, struct kb_stat *st, char *why, size_t size)
{
	char name[64];

	snprintf(name, sizeof(name), "%s.ks", file_name[f]);
	return read_stat(name, st, why, size);
}

/* The ks value must be the legacy one in bytes, pages or KiB. */
static bool ks_value_matches(unsigned long long ks, unsigned long long legacy)
{
	return close_enough(ks, legacy) ||
	       close_enough(ks * (unsigned long long)page_size, legacy) ||
	       close_enough(ks * 1024ull, legacy);
}

static int ks_compare_once(char *why, size_t size, int *nkeys)
{
	static struct kb_stat ks, legacy;
	char want[FILTER_LEN], *tok, *save;
	size_t i;

	if (ks_read(F_STAT, &ks, why, size) ||
	    read_stat("memory.stat", &legacy, why, size))
		return -1;
	snprintf(want, sizeof(want), "%s", opt.keys);
	for (tok = strtok_r(want, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!kb_stat_get(&ks, tok, NULL)) {
			snprintf(why, size, "filtered key '%s' missing from memory.stat.ks",
				 tok);
			return -1;
		}
	}
	for (i = 0; i < ks.n; i++) {
		unsigned long long lv;

		if (!kb_stat_get(&legacy, ks.e[i].key, &lv)) {
			snprintf(why, size, "memory.stat.ks key '%s' not in memory.stat",
				 ks.e[i].key);
			return -1;
		}
		if (!ks_value_matches(ks.e[i].value, lv)) {
			snprintf(why, size, "%s: ks %llu vs legacy %llu (bytes, pages, KiB all differ)",
				 ks.e[i].key, ks.e[i].value, lv);
			return -1;
		}
	}
	*nkeys = (int)ks.n;
	return 0;
}

static void check_ks_matches(void)
{
	char filter[FILTER_LEN], why[512];
	int tries, err = -1, nkeys = 0;

	build_key_filter(filter, sizeof(filter));
	err = ks_write(F_STAT, filter);
	if (err) {
		snprintf(why, sizeof(why), "writing '%.200s': %s", filter,
			 strerror(-err));
		kb_fail("ks_matches_legacy", why);
		return;
	}
	for (tries = 0, err = -1; tries < 3 && err; tries++)
		err = ks_compare_once(why, sizeof(why), &nkeys);
	if (err) {
		kb_fail("ks_matches_legacy", why);
		return;
	}
	kb_figure("ks_matches_legacy", "keys=%d filter=%s", nkeys, filter);
	kb_pass("ks_matches_legacy");
}

/* Same keys in the same order (values move). */
static bool same_keys(const struct kb_stat *a, const struct kb_stat *b)
{
	size_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->e[i].key, b->e[i].key))
			return false;
	return true;
}

static void check_ks_invalid(void)
{
	static const char *const bad[] = {
		"flush,kbench_no_such_field",
		"flush,vmstats.state[",
		NULL,	/* 129 fields: over the limit */
	};
	static struct kb_stat before, after;
	char filter[FILTER_LEN], why[512];
	const char *name = "ks_invalid_filter_rejected";
	int i, err;

	build_key_filter(filter, sizeof(filter));
	err = ks_write(F_STAT, filter);
	if (err) {
		snprintf(why, sizeof(why), "setting the key filter: %s",
			 strerror(-err));
		kb_fail(name, why);
		return;
	}
	if (ks_read(F_STAT, &before, why, sizeof(why))) {
		kb_fail(name, why);
		return;
	}
	for (i = 0; i < 3; i++) {
		char big[FILTER_LEN * 2];
		const char *text = bad[i];

		if (!text) {
			size_t len = 0;
			int k;

			for (k = 0; k <= MAX_FIELDS; k++)
				len += snprintf(big + len, sizeof(big) - len,
						"%svmstats.state[%d]", k ? "," : "",
						k % 8);
			text = big;
		}
		err = ks_write(F_STAT, text);
		if (err != -EINVAL) {
			snprintf(why, sizeof(why), "filter '%.60s%s' %s%s (want EINVAL)",
				 text, strlen(text) > 60 ? "..." : "",
				 err ? "rejected with " : "accepted",
				 err ? strerror(-err) : "");
			kb_fail(name, why);
			return;
		}
		if (ks_read(F_STAT, &after, why, sizeof(why)))
			break;
		if (!same_keys(&before, &after)) {
			snprintf(why, sizeof(why), "after the rejected filter '%.60s' the output changed (%zu keys, was %zu)",
				 text, after.n, before.n);
			kb_fail(name, why);
			return;
		}
		ksft_print_msg("%s: '%.50s%s' rejected: %s\n", name, text,
			       strlen(text) > 50 ? "..." : "", strerror(-err));
	}
	if (i < 3) {
		kb_fail(name, why);
		return;
	}
	kb_pass(name);
}

static void check_ks_reset(void)
{
	static struct kb_stat ks, legacy;
	const char *name = "ks_empty_write_resets";
	char why[512];
	int err;

	err = ks_write(F_STAT, "\n");
	if (err) {
		snprintf(why, sizeof(why), "writing an empty line: %s",
			 strerror(-err));
		kb_fail(name, why);
		return;
	}
	if (ks_read(F_STAT, &ks, why, sizeof(why)) ||
	    read_stat("memory.stat", &legacy, why, sizeof(why))) {
		kb_fail(name, why);
		return;
	}
	if (!same_keys(&ks, &legacy)) {
		snprintf(why, sizeof(why), "after reset memory.stat.ks has %zu keys, memory.stat %zu (or another order)",
			 ks.n, legacy.n);
		kb_fail(name, why);
		return;
	}
	kb_figure(name, "keys=%zu", ks.n);
	kb_pass(name);
}

/* Time one filter on both .ks files. */
static void time_filter(int variant, const char *filter, const char *note)
{
	char why[320];
	int f, m, err;

	for (f = 0; f < NR_FILES; f++) {
		int modes = opt.bench ? 1 : NR_MODES;
		char name[96];

		if (ks_skip[f][0]) {
			skip_file_rows(variant_tag[variant], f, ks_skip[f],
				       opt.bench);
			continue;
		}
		err = ks_write(f, filter);
		if (err) {
			snprintf(why, sizeof(why), "writing the filter (%s) to %s.ks: %s",
				 note, file_name[f], strerror(-err));
			for (m = 0; m < modes; m++) {
				snprintf(name, sizeof(name), "%s_%s_%s",
					 file_tag[f], variant_tag[variant],
					 mode_name[m]);
				kb_fail(name, why);
			}
			continue;
		}
		for (m = 0; m < modes; m++)
			time_row(variant, f, m, note);
	}
}

/* ---- the whole run ----------------------------------------------------- */

static int planned_tests(void)
{
	int filters = opt.nfields + (opt.bench ? 0 : 1);
	int modes = opt.bench ? 1 : NR_MODES;
	int n = NR_FILES * modes * (1 + filters);

	n += opt.nfields;	/* bpf_iter rows */
	if (!opt.bench)
		n += 5 + 1 + 3 + 1;	/* checks, cat /dev/null, ks checks, bpf_iter check */
	return n;
}

static void run_legacy(void)
{
	int f, m;

	for (f = 0; f < NR_FILES; f++) {
		for (m = 0; m < (opt.bench ? 1 : NR_MODES); m++) {
			if (f == F_NUMA && !cg_has("memory.numa_stat")) {
				char name[96];

				snprintf(name, sizeof(name), "numa_stat_legacy_%s",
					 mode_name[m]);
				kb_skip(name, "no memory.numa_stat (kernel without CONFIG_NUMA)");
				continue;
			}
			time_row(0, f, m, NULL);
		}
	}
}

static void run_ks(void)
{
	char filter[FILTER_LEN], note[64];
	int i;

	if (!opt.bench) {
		if (ks_skip[F_STAT][0]) {
			kb_skip("ks_matches_legacy", ks_skip[F_STAT]);
			kb_skip("ks_invalid_filter_rejected", ks_skip[F_STAT]);
			kb_skip("ks_empty_write_resets", ks_skip[F_STAT]);
		} else {
			check_ks_matches();
			check_ks_invalid();
			check_ks_reset();
		}
	}
	for (i = 0; i < opt.nfields; i++) {
		nvariants++;
		snprintf(variant_tag[nvariants - 1], sizeof(variant_tag[0]),
			 "ks%d", opt.fields[i]);
		build_field_filter(opt.fields[i], filter, sizeof(filter));
		snprintf(note, sizeof(note), "%d fields%s", opt.fields[i],
			 opt.no_flush ? "" : " + flush");
		time_filter(nvariants - 1, filter, note);
	}
	if (!opt.bench) {
		nvariants++;
		snprintf(variant_tag[nvariants - 1], sizeof(variant_tag[0]),
			 "ks_keys");
		build_key_filter(filter, sizeof(filter));
		time_filter(nvariants - 1, filter, "memory.stat keys");
	}
	ks_reset(NULL);
}

/* ---- BPF cgroup iterator: the mainline answer ------------------------ */

/* A program that cannot run here SKIPs; one that broke FAILs. */
static void bpf_result_or_skip(int err, const char *name, const char *why)
{
	if (kb_bpf_err_is_environment(err))
		kb_skip(name, why);
	else
		kb_fail(name, why);
}

/* A counter the iterator read must be a memory.stat value, unit aside. */
static bool bpf_value_in_stat(long long v, const struct kb_stat *st)
{
	unsigned long long u = v < 0 ? 0 : (unsigned long long)v;
	size_t i;

	for (i = 0; i < st->n; i++) {
		unsigned long long s = st->e[i].value;

		if (s == u || s == u * (unsigned long long)page_size ||
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
static int bpf_compare_once(struct kb_mcb *b, char *why, size_t size,
			    int *nonzero)
{
	static struct kb_stat st;
	unsigned long long anon = 0;
	const int64_t *vals;
	long n, i;
	bool anon_seen = false;

	n = kb_mcb_read(b, &vals);
	if (n < 0) {
		snprintf(why, size, "iterator read: %s", strerror((int)-n));
		return -1;
	}
	if (read_stat("memory.stat", &st, why, size))
		return -1;
	kb_stat_get(&st, cgver == KB_CGROUP_V2 ? "anon" : "rss", &anon);
	*nonzero = 0;
	for (i = 0; i < n; i++) {
		if (vals[i] == 0)
			continue;
		(*nonzero)++;
		if ((unsigned long long)vals[i] * page_size == anon)
			anon_seen = true;
		/* v1's memory.stat shows a subset (no slab, no kernel). */
		if (cgver == KB_CGROUP_V2 && !bpf_value_in_stat(vals[i], &st)) {
			snprintf(why, size, "vmstats.state[%ld] = %lld is no memory.stat value (x1, x%ld or x1024)",
				 i, (long long)vals[i], page_size);
			return -1;
		}
	}
	if (anon && !anon_seen) {
		snprintf(why, size, "memory.stat %s = %llu is none of the %d non-zero counters x%ld",
			 cgver == KB_CGROUP_V2 ? "anon" : "rss", anon, *nonzero,
			 page_size);
		return -1;
	}
	return 0;
}

static void check_bpf_matches_stat(struct kb_mcb *b)
{
	const char *name = "bpf_iter_matches_stat";
	int slots[STATE_SPAN], try, nonzero = 0;
	char why[PATH_MAX + 256];

	field_slots(STATE_SPAN, slots);
	if (kb_mcb_select(b, slots, STATE_SPAN, why, sizeof(why))) {
		kb_fail(name, why);
		return;
	}
	/* Counters move between the two reads now and then: try again. */
	for (try = 0; try < 5; try++)
		if (!bpf_compare_once(b, why, sizeof(why), &nonzero))
			break;
	kb_figure(name, "slots=%d nonzero=%d tries=%d flush=%s", STATE_SPAN,
		  nonzero, try < 5 ? try + 1 : 5, kb_mcb_flush_name(b));
	if (try == 5)
		kb_fail(name, why);
	else if (!nonzero)
		kb_fail(name, "every counter the iterator read is 0");
	else
		kb_pass(name);
}

static void time_bpf_row(struct kb_mcb *b, int n, uint64_t load_ns)
{
	char name[32], why[PATH_MAX + 256], note[200];
	int slots[MAX_FIELDS], err, v;
	struct kb_stats st;
	double total_s;

	snprintf(name, sizeof(name), "bpf_iter%d", n);
	field_slots(n, slots);
	err = kb_mcb_select(b, slots, n, why, sizeof(why));
	if (!err)
		err = kb_mcb_time(b, opt.count, opt.batch, opt.row_budget_s,
				  &st, &total_s);
	if (err) {
		snprintf(why, sizeof(why), "iterator read: %s", strerror(-err));
		kb_fail(name, why);
		return;
	}
	kb_row_add(name, "us", &st);
	kb_row_extra("batch", opt.batch);
	kb_row_extra("total_s", total_s);
	kb_row_extra("load_ms", load_ns / 1e6);
	if (cells[0][F_STAT][MODE_READ].done)
		kb_row_extra("ratio_vs_legacy",
			     st.median / cells[0][F_STAT][MODE_READ].median);
	for (v = 1; v < nvariants; v++)
		if (!strcmp(variant_tag[v] + 2, name + 8) &&
		    cells[v][F_STAT][MODE_READ].done)
			kb_row_extra("ratio_vs_ks",
				     st.median / cells[v][F_STAT][MODE_READ].median);
	snprintf(note, sizeof(note), "create + read + close of a cgroup iterator fd: %s, then %d vmstats.state[] counters by CO-RE; load_ms: the program's load, once for all rows",
		 kb_mcb_flush_name(b), n);
	kb_row_note(note);
	if (st.min > 0)
		kb_pass(name);
	else
		kb_fail(name, "non-positive sample: the clock or the loop is broken");
}

/* One program load serves the check and every row. */
static void run_bpf_iter(void)
{
	char why[PATH_MAX + 256], name[32];
	struct kb_mcb *b;
	uint64_t load_ns;
	int i, err;

	b = kb_mcb_open(cgdir, !opt.no_flush, &load_ns, &err, why, sizeof(why));
	if (b && !opt.bench)
		check_bpf_matches_stat(b);
	else if (!opt.bench)
		bpf_result_or_skip(err, "bpf_iter_matches_stat", why);
	for (i = 0; i < opt.nfields; i++) {
		if (b) {
			time_bpf_row(b, opt.fields[i], load_ns);
			continue;
		}
		snprintf(name, sizeof(name), "bpf_iter%d", opt.fields[i]);
		bpf_result_or_skip(err, name, why);
	}
	if (b)
		ksft_print_msg("bpf_iter: program open+load+attach %.3f ms, once for the rows above\n",
			       load_ns / 1e6);
	kb_mcb_free(b);
}

static void record_params(void)
{
	char path[PATH_MAX + 64];
	struct stat sb;

	kb_param_str("cgroup", cgdir);
	kb_param_num("cgroup_version", cgver);
	kb_param_str("cgroup_origin", own_cgroup ? "created" :
		     opt.cgpath ? "CGPATH" : opt.root ? "root" : "own (inherited)");
	kb_param_num("count", opt.count);
	kb_param_num("batch", opt.batch);
	kb_param_num("cat_count", opt.cat_count);
	kb_param_num("alloc_bytes", (double)opt.alloc);
	kb_param_num("page_size", page_size);
	kb_param_num("ks_stat", have_ks[F_STAT]);
	kb_param_num("ks_numa_stat", have_ks[F_NUMA]);
	kb_param_num("flush", !opt.no_flush);
	kb_param_num("max_row_time_s", opt.row_budget_s);
	kb_param_num("clock_overhead_ns", kb_clock_overhead_ns());
	cg_file(path, sizeof(path), "memory.stat");
	if (!stat(path, &sb))
		kb_param_num("stat_bytes", (double)kb_read_all(path, read_buf,
							       sizeof(read_buf)));
}

static void run_tests(void)
{
	uint64_t t0 = kb_now_ns();

	ksft_print_header();
	ksft_set_plan(planned_tests());
	ksft_print_msg("cgroup v%d %s (%s)\n", cgver, cgdir,
		       own_cgroup ? "created for this run" :
		       opt.cgpath ? cgpath_from : opt.root ? "root of the hierarchy" :
		       "the one we run in");
	if (create_note[0])
		ksft_print_msg("not creating a cgroup: %s\n", create_note);
	ksft_print_msg("reads per row %ld (batches of %ld), cat processes %ld, clock %s\n",
		       opt.count, opt.batch, opt.cat_count, KB_CLOCK_NAME);
	if (!have_ks[F_STAT])
		ksft_print_msg("kernel has no memory.stat.ks in %s: the ks rows skip, the legacy rows run\n",
			       cgdir);
	if (!opt.bench) {
		check_stat_parse();
		check_numa_sums();
		check_anon_growth();
		check_numa_node();
		time_devnull_cat();
	}
	run_legacy();
	run_ks();
	run_bpf_iter();
	print_table();
	ksft_print_msg("wall time %.1f s\n", (double)(kb_now_ns() - t0) / 1e9);
}

/* --set-filter: write the filter to both .ks files and leave it there. */
static int set_filter_mode(void)
{
	char filter[FILTER_LEN];
	int f, err, written = 0;

	if (!strcmp(opt.set_filter, "reset")) {
		snprintf(filter, sizeof(filter), "\n");
	} else if (isdigit((unsigned char)opt.set_filter[0])) {
		int n = (int)kb_parse_ll(opt.set_filter, "--set-filter", 1,
					 MAX_FIELDS);

		build_field_filter(n, filter, sizeof(filter));
	} else {
		build_key_filter(filter, sizeof(filter));
	}
	ks_probe();
	for (f = 0; f < NR_FILES; f++) {
		if (!have_ks[f]) {
			printf("%s: kernel has no %s.ks in %s: no filter set\n",
			       kb_prog(), file_name[f], cgdir);
			continue;
		}
		err = ks_write(f, filter);
		if (err) {
			fprintf(stderr, "%s: writing '%s' to %s/%s.ks: %s\n",
				kb_prog(), filter, cgdir, file_name[f],
				strerror(-err));
			return 1;
		}
		printf("%s: %s/%s.ks: filter set to '%s'\n", kb_prog(), cgdir,
		       file_name[f], filter[0] == '\n' ? "" : filter);
		written++;
	}
	return written ? 0 : KSFT_SKIP;
}

/* ---- command line ------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s [OPTION]...\n"
"Time reads of a memory cgroup's memory.stat and memory.numa_stat, legacy\n"
"and, when the kernel has them, the filtered memory.stat.ks and\n"
"memory.numa_stat.ks; check that the files are consistent. Prints KTAP.\n"
"\n"
"Each file is read three ways: per_read (lseek(0) + read on one open fd),\n"
"per_cat (open + read + close), cat_process (an external 'cat FILE').\n"
"\n"
"Where:\n"
"  -c, --cgroup=DIR    read the memory cgroup DIR (default: $CGPATH; if\n"
"                      unset, create a cgroup of our own and remove it at\n"
"                      the end, or read the one we run in without the\n"
"                      right to create one)\n"
"      --root          read the root of the memory hierarchy (found in\n"
"                      /proc/self/mountinfo)\n"
"How much:\n"
"  -n, --count=N       reads per per_read / per_cat row (default %d, %d\n"
"                      with --full or --bench, %d if KSFT_MACHINE_SLOW=yes)\n"
"  -b, --batch=N       reads per timed sample (default: count / 200,\n"
"                      between 1 and 1000)\n"
"      --cat-count=N   cat processes per cat_process row (default %d,\n"
"                      %d with --full)\n"
"      --max-row-time=SEC\n"
"                      end a timed row after SEC seconds (at least 21\n"
"                      samples); default: 2 s (1 s if KSFT_MACHINE_SLOW=yes)\n"
"                      in the quick run when neither count is given, no\n"
"                      limit otherwise\n"
"  -m, --alloc=SIZE    anonymous memory the child touches for the growth\n"
"                      checks (default 64M; K, M, G suffixes)\n"
"Filters (.ks files):\n"
"  -f, --fields=LIST   filter sizes, comma separated, each 1..%d (default\n"
"                      3,16,32,64,128; 3 is the seed's pick\n"
"                      vmstats.state[14],[16],[5]; N is N fields cycling\n"
"                      through vmstats.state[0..31])\n"
"  -k, --keys=LIST     key-name filter, e.g. anon,file,shmem (default: the\n"
"                      first 8 keys of memory.stat)\n"
"      --no-flush      leave out the leading 'flush' token\n"
"Modes:\n"
"      --bench         the seed's sequence only: per_read rows of the\n"
"                      legacy files, then of the .ks files with each filter\n"
"                      of --fields (default count %d)\n"
"      --set-filter=N|KEYS|reset\n"
"                      write a filter of N fields, of the key names KEYS,\n"
"                      or reset to legacy, to both .ks files and exit\n"
"                      (the filter stays)\n"
"      --full          the seed-sized run (--count %d --cat-count %d)\n"
"      --json=FILE     write every figure as kbench JSON to FILE\n"
"  -h, --help          this help\n"
"\n"
"Figures are microseconds per read (%s). Writing a filter or creating a\n"
"cgroup needs write access (ownership or CAP_DAC_OVERRIDE): without it\n"
"those parts skip. A filter we write is reset to legacy at the end.\n"
"Exit status: 0 pass, 1 a test failed, 2 bad usage, 4 everything skipped.\n",
		kb_prog(), DEFAULT_COUNT, FULL_COUNT, SLOW_COUNT,
		DEFAULT_CAT_COUNT, FULL_CAT_COUNT, MAX_FIELDS, FULL_COUNT,
		FULL_COUNT, FULL_CAT_COUNT, KB_CLOCK_NAME);
}

static void parse_fields(const char *arg)
{
	char buf[256], *tok, *save;

	if (strlen(arg) >= sizeof(buf))
		kb_usage_error("--fields: list too long");
	snprintf(buf, sizeof(buf), "%s", arg);
	opt.nfields = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (opt.nfields == MAX_FILTERS)
			kb_usage_error("--fields: at most %d sizes", MAX_FILTERS);
		opt.fields[opt.nfields++] =
			(int)kb_parse_ll(tok, "--fields", 1, MAX_FIELDS);
	}
	if (!opt.nfields)
		kb_usage_error("--fields: empty list");
}

/* Key names and BTF paths: letters, digits, '_', '.', '[', ']'. */
static void parse_keys(const char *arg)
{
	const char *p;
	int n = 1;

	if (!*arg || strlen(arg) >= sizeof(opt.keys) - 8)
		kb_usage_error("invalid value '%s' for --keys: empty or too long",
			       arg);
	for (p = arg; *p; p++) {
		if (*p == ',') {
			if (p == arg || p[1] == ',' || !p[1])
				kb_usage_error("invalid value '%s' for --keys: empty key",
					       arg);
			n++;
		} else if (!isalnum((unsigned char)*p) && !strchr("_.[]", *p)) {
			kb_usage_error("invalid value '%s' for --keys: bad character '%c'",
				       arg, *p);
		}
	}
	if (n > MAX_FIELDS)
		kb_usage_error("invalid value '%s' for --keys: more than %d keys",
			       arg, MAX_FIELDS);
	snprintf(opt.keys, sizeof(opt.keys), "%s", arg);
	opt.keys_set = true;
}

static void parse_options(int argc, char **argv)
{
	enum { OPT_FULL = 256, OPT_JSON, OPT_ROOT, OPT_CATS, OPT_NOFLUSH,
	       OPT_BENCH, OPT_SET, OPT_BUDGET };
	static const struct option longopts[] = {
		{ "cgroup", required_argument, NULL, 'c' },
		{ "root", no_argument, NULL, OPT_ROOT },
		{ "count", required_argument, NULL, 'n' },
		{ "batch", required_argument, NULL, 'b' },
		{ "cat-count", required_argument, NULL, OPT_CATS },
		{ "alloc", required_argument, NULL, 'm' },
		{ "fields", required_argument, NULL, 'f' },
		{ "keys", required_argument, NULL, 'k' },
		{ "no-flush", no_argument, NULL, OPT_NOFLUSH },
		{ "bench", no_argument, NULL, OPT_BENCH },
		{ "set-filter", required_argument, NULL, OPT_SET },
		{ "max-row-time", required_argument, NULL, OPT_BUDGET },
		{ "full", no_argument, NULL, OPT_FULL },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *env = getenv("CGPATH");
	bool big;
	int c;

	opt.alloc = DEFAULT_ALLOC;
	opt.row_budget_s = -1;
	while ((c = getopt_long(argc, argv, "c:n:b:m:f:k:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (!*optarg)
				kb_usage_error("--cgroup: empty path");
			opt.cgpath = optarg;
			break;
		case OPT_ROOT:
			opt.root = true;
			break;
		case 'n':
			opt.count = kb_parse_ll(optarg, "--count", 2, 100000000);
			break;
		case 'b':
			opt.batch = kb_parse_ll(optarg, "--batch", 1, 100000);
			break;
		case OPT_CATS:
			opt.cat_count = kb_parse_ll(optarg, "--cat-count", 2, 1000000);
			break;
		case 'm':
			opt.alloc = kb_parse_size(optarg, "--alloc", 4 * MIB,
						  4096 * MIB);
			break;
		case 'f':
			parse_fields(optarg);
			break;
		case 'k':
			parse_keys(optarg);
			break;
		case OPT_NOFLUSH:
			opt.no_flush = true;
			break;
		case OPT_BENCH:
			opt.bench = true;
			break;
		case OPT_SET:
			opt.set_filter = optarg;
			break;
		case OPT_BUDGET:
			opt.row_budget_s = (double)kb_parse_duration(optarg,
								      "--max-row-time");
			break;
		case OPT_FULL:
			opt.full = true;
			break;
		case OPT_JSON:
			opt.json = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			kb_usage_hint();
		}
	}
	if (optind < argc)
		kb_usage_error("unexpected argument '%s'", argv[optind]);
	if (opt.root && opt.cgpath)
		kb_usage_error("--root and --cgroup exclude each other");
	if (opt.bench && opt.set_filter)
		kb_usage_error("--bench and --set-filter exclude each other");
	if (!opt.cgpath && !opt.root && env && *env) {
		opt.cgpath = env;
		cgpath_from = "CGPATH";
	}
	if (opt.set_filter && strcmp(opt.set_filter, "reset") &&
	    !isdigit((unsigned char)opt.set_filter[0]))
		parse_keys(opt.set_filter);
	big = opt.full || opt.bench;
	/*
	 * The quick default run bounds each row in time, so that an emulated
	 * guest (cat processes there take ~100 ms) still ends in time.
	 */
	if (!opt.count && !opt.cat_count && !big && opt.row_budget_s < 0)
		opt.row_budget_s = kb_machine_slow() ? 1.0 : DEFAULT_ROW_BUDGET_S;
	if (opt.row_budget_s < 0)
		opt.row_budget_s = 0;
	if (!opt.count)
		opt.count = big ? FULL_COUNT :
			    kb_machine_slow() ? SLOW_COUNT : DEFAULT_COUNT;
	if (!opt.cat_count)
		opt.cat_count = opt.full ? FULL_CAT_COUNT :
				kb_machine_slow() ? SLOW_CAT_COUNT :
				DEFAULT_CAT_COUNT;
	if (!opt.batch) {
		opt.batch = opt.count / 200;
		opt.batch = opt.batch < 1 ? 1 : opt.batch > 1000 ? 1000 : opt.batch;
	}
	if (opt.batch > opt.count / 2)
		kb_usage_error("--batch %ld: at most half of --count (%ld)",
			       opt.batch, opt.count);
	if (!opt.nfields) {
		static const int seed_sizes[] = { 3, 16, 32, 64, 128 };

		for (c = 0; c < 5; c++)
			opt.fields[opt.nfields++] = seed_sizes[c];
	}
}

int main(int argc, char **argv)
{
	kb_init("memcg_ks", argc, argv);
	parse_options(argc, argv);
	page_size = sysconf(_SC_PAGESIZE);
	devnull_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	snprintf(variant_tag[0], sizeof(variant_tag[0]), "legacy");
	nvariants = 1;

	if (opt.set_filter) {
		if (!opt.cgpath)
			opt.root = true;
		pick_cgroup(false);
		return set_filter_mode();
	}
	pick_cgroup(true);
	if (!opt.keys_set)
		default_keys(opt.keys, sizeof(opt.keys));
	if (!opt.bench)
		place_child();
	if (!child_skip[0] && child_pid > 0) {
		int err = child_do(CHILD_ALLOC, BASE_ALLOC, -1);

		if (err)
			snprintf(child_skip, sizeof(child_skip),
				 "the child cannot allocate: %s", strerror(-err));
	}
	ks_probe();
	record_params();
	run_tests();
	kill_child(NULL);
	ks_reset(NULL);
	if (own_cgroup && kb_cgroup_remove(&test_cg))
		ksft_print_msg("cgroup %s still there after removal\n", test_cg.path);
	kb_finish(opt.json);
}
