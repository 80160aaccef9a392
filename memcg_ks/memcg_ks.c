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
#include <errno.h>
#include <fcntl.h>
#include <numa.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf_iter.h"
#include "cgroup.h"
#include "memstat.h"
#include "numastat.h"
#include "memcg_bpf.h"
#include "ktap.h"
#include "placement.h"
#include "rtsched.h"

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

static const char *const file_name[NR_FILES] = {
	"memory.stat", "memory.numa_stat",
};
static const char *const file_tag[NR_FILES] = { "stat", "numa_stat" };

static const char *const mode_name[NR_MODES] = {
	"per_read", "per_cat", "cat_process",
};

static const char *const mode_note[NR_MODES] = {
	"lseek(0) + read on one open fd",
	"open + read + close",
	"fork + exec of 'cat FILE' (stdout to /dev/null) + waitpid",
};

/* ---- reading the cgroup's files ---------------------------------------- */

static void cg_file(const struct memcg_ctx *c, char *buf, size_t size,
		    const char *name)
{
	snprintf(buf, size, "%s/%s", c->dir, name);
}

static bool cg_has(const struct memcg_ctx *c, const char *name)
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
static ssize_t read_text(struct memcg_ctx *c, const char *name, char *why,
			 size_t size)
{
	return read_into(c, name, c->text, sizeof(c->text), why, size);
}

/*
 * Read and parse memory.stat (or a .ks file in stat format), in a buffer
 * of its own: c->text read before stays valid.
 */
static int read_stat(struct memcg_ctx *c, const char *name,
		     struct kb_memstat *st, char *why, size_t size)
{
	ssize_t n = read_into(c, name, c->stat_text, sizeof(c->stat_text),
			      why, size);

	if (n < 0)
		return (int)n;
	return kb_memstat_parse(c->stat_text, (size_t)n, st, why, size);
}

static int read_stat_key(struct memcg_ctx *c, const char *key,
			 unsigned long long *v)
{
	struct kb_memstat st;
	char why[256];
	int err = read_stat(c, "memory.stat", &st, why, sizeof(why));

	if (err)
		return err;
	return kb_memstat_get(&st, key, v) ? 0 : -ENOENT;
}

/* ---- the helper child: allocates and frees memory on request ----------- */

enum child_cmd { CHILD_ALLOC = 'A', CHILD_FREE = 'F', CHILD_ALLOC_NODE = 'N' };

struct child_req {
	char cmd;
	int node;
	unsigned long long size;
};

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

struct child_block {
	void *p;
	size_t size;
	bool numa;
};

static int child_serve(struct child_block *stack, int *depth,
		       const struct child_req *req)
{
	struct child_block *b;
	int node;

	if (req->cmd == CHILD_FREE) {
		if (*depth > 0) {
			b = &stack[--*depth];
			if (b->numa)
				numa_free(b->p, b->size);
			else
				munmap(b->p, b->size);
		}
		return 0;
	}
	if (*depth == CHILD_DEPTH)
		return -ENOSPC;
	node = req->cmd == CHILD_ALLOC_NODE ? req->node : -1;
	b = &stack[*depth];
	b->p = touch_new(req->size, node);
	if (!b->p)
		return errno ? -errno : -ENOMEM;
	b->size = req->size;
	b->numa = node >= 0;
	++*depth;
	return 0;
}

static void child_loop(int req_fd, int ack_fd)
{
	struct child_block stack[CHILD_DEPTH];
	struct child_req req;
	int depth = 0, ret;

	while (read(req_fd, &req, sizeof(req)) == sizeof(req)) {
		ret = child_serve(stack, &depth, &req);
		if (write(ack_fd, &ret, sizeof(ret)) != sizeof(ret))
			break;
	}
	_exit(0);
}

/* Cleanup handler: signal-safe. */
static void child_kill(void *arg)
{
	struct child *ch = arg;

	if (ch->pid > 0) {
		kill(ch->pid, SIGKILL);
		waitpid(ch->pid, NULL, 0);
		ch->pid = -1;
	}
}

static int child_start(struct child *ch)
{
	int req[2], ack[2];
	pid_t parent = getpid();

	if (pipe2(req, O_CLOEXEC))
		return -errno;
	if (pipe2(ack, O_CLOEXEC)) {
		close(req[0]);
		close(req[1]);
		return -errno;
	}
	kb_cleanup_block_signals();
	ch->pid = fork();
	if (ch->pid == 0) {
		kb_cleanup_unblock_signals();
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		close(req[1]);
		close(ack[0]);
		child_loop(req[0], ack[1]);
	}
	if (ch->pid > 0)
		kb_cleanup_push(child_kill, ch);
	kb_cleanup_unblock_signals();
	close(req[0]);
	close(ack[1]);
	if (ch->pid < 0) {
		close(req[1]);
		close(ack[0]);
		return -errno;
	}
	ch->req_fd = req[1];
	ch->ack_fd = ack[0];
	return 0;
}

/* Send one request; returns the child's answer: 0 or -errno. */
static int child_do(struct child *ch, char cmd, unsigned long long size,
		    int node)
{
	struct child_req req = { .cmd = cmd, .node = node, .size = size };
	int ret;

	if (ch->req_fd < 0)
		return -ECHILD;
	if (write(ch->req_fd, &req, sizeof(req)) != sizeof(req))
		return -EPIPE;
	if (read(ch->ack_fd, &ret, sizeof(ret)) != sizeof(ret))
		return -EPIPE;
	return ret;
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

static void pick_cgroup(struct memcg_ctx *c, bool need_stat)
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

static bool reads_inherited_cgroup(const struct memcg_ctx *c)
{
	return !c->own_cgroup && !c->opt.cgpath && !c->opt.root;
}

/* Start the allocating child and put it where we read. */
static void place_child(struct memcg_ctx *c)
{
	struct child *ch = &c->child;
	char procs[PATH_MAX + 64], why[256];
	int err = child_start(ch);

	ch->verdict = KSFT_SKIP;
	if (err) {
		ch->verdict = kb_errno_result(err, KB_ENV_NO_CAP,
					      "cannot fork the allocating child",
					      ch->skip, sizeof(ch->skip));
		return;
	}
	/* Reading our own memory cgroup: the child is in it already. */
	if (reads_inherited_cgroup(c))
		return;
	cg_file(c, procs, sizeof(procs), "cgroup.procs");
	if (!c->own_cgroup && !kb_cgroup_may_write(procs, why, sizeof(why))) {
		snprintf(ch->skip, sizeof(ch->skip),
			 "cannot move the allocating child into %.300s: %.400s",
			 c->dir, why);
		return;
	}
	err = kb_cgroup_move(c->dir, ch->pid);
	if (err) {
		snprintf(why, sizeof(why), "cannot move the allocating child into %.200s",
			 c->dir);
		ch->verdict = kb_errno_result(err, CAP_DAC_OVERRIDE, why,
					      ch->skip, sizeof(ch->skip));
	}
}

/* The checks that need the child: SKIP or FAIL with its reason, or 0. */
static int child_unusable(const struct memcg_ctx *c, char *why, size_t size)
{
	if (!c->child.skip[0])
		return 0;
	snprintf(why, size, "%s", c->child.skip);
	return c->child.verdict;
}

/* How often a comparison of two reads is tried before it fails. */
static int match_tries(const struct memcg_ctx *c)
{
	return c->own_cgroup ? TRIES_OWN : TRIES_SHARED;
}

/* ---- timing ------------------------------------------------------------ */

/* Read the whole file from the current offset; bytes or -errno. */
static ssize_t read_rest(struct memcg_ctx *c, int fd)
{
	size_t len = 0;
	ssize_t n;

	do {
		n = read(fd, c->read_buf + len, sizeof(c->read_buf) - len);
		if (n < 0)
			return -errno;
		len += n;
		/* A short read is the whole (single record) file. */
	} while (n > 0 && len == sizeof(c->read_buf));
	return len;
}

static ssize_t op_per_read(struct memcg_ctx *c, int fd, const char *path,
			   long batch)
{
	ssize_t n = 0;

	(void)path;
	while (batch--) {
		if (lseek(fd, 0, SEEK_SET) < 0)
			return -errno;
		n = read_rest(c, fd);
		if (n < 0)
			return n;
	}
	return n;
}

static ssize_t op_per_cat(struct memcg_ctx *c, int fd, const char *path,
			  long batch)
{
	ssize_t n = 0;

	(void)fd;
	while (batch--) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		n = read_rest(c, fd);
		close(fd);
		if (n < 0)
			return n;
	}
	return n;
}

/* One external cat process; its output goes to /dev/null. */
static ssize_t op_cat_process(struct memcg_ctx *c, int fd, const char *path,
			      long batch)
{
	int status;
	pid_t pid;

	(void)fd;
	while (batch--) {
		/* No signal between fork and wait: the cat is always reaped. */
		kb_cleanup_block_signals();
		pid = fork();
		if (pid == 0) {
			kb_cleanup_unblock_signals();
			dup2(c->devnull_fd, STDOUT_FILENO);
			execlp("cat", "cat", path, (char *)NULL);
			_exit(127);
		}
		if (pid > 0 && waitpid(pid, &status, 0) != pid)
			pid = -1;
		kb_cleanup_unblock_signals();
		if (pid < 0)
			return -errno;
		if (!WIFEXITED(status) || WEXITSTATUS(status) == 127)
			return -ENOEXEC;
		if (WEXITSTATUS(status))
			return -EIO;
	}
	return 1;
}

typedef ssize_t (*op_fn)(struct memcg_ctx *c, int fd, const char *path,
			 long batch);

static const op_fn mode_op[NR_MODES] = {
	op_per_read, op_per_cat, op_cat_process,
};

/* Untimed operations before a row: a tenth, at least 1 (3 for processes). */
static long warm_up_count(enum mode mode, long nsamples)
{
	long warm = nsamples / 10;

	if (mode == MODE_PROC)
		return warm < 3 ? 3 : warm;
	return warm < 1 ? 1 : warm;
}

/* Decide once how the process rows run; say why when less than asked. */
static void plan_priority(struct memcg_ctx *c)
{
	char why[200];

	c->proc_prio = 0;
	if (!c->place.pinned)
		return;
	if (kb_rtsched_fifo_allowed(PROC_FIFO_PRIO, why, sizeof(why)))
		c->proc_prio = PROC_FIFO_PRIO;
	else
		snprintf(c->sched_note, sizeof(c->sched_note),
			 "process rows at normal priority: %s", why);
}

/* Around a process row: SCHED_FIFO (the cats inherit it), then back. */
static void priority_enter(struct memcg_ctx *c)
{
	if (c->proc_prio && kb_rtsched_set_prio_self(c->proc_prio)) {
		/* e.g. RT group scheduling gives our cgroup no runtime */
		snprintf(c->sched_note, sizeof(c->sched_note),
			 "process rows at normal priority: SCHED_FIFO refused");
		c->proc_prio = 0;
	}
}

static void priority_leave(struct memcg_ctx *c)
{
	if (c->proc_prio)
		kb_rtsched_set_prio_self(0);
}

/*
 * Time @mode on @path: samples of @batch operations, microseconds per
 * operation. @bytes gets the size of one read. 0 or -errno.
 */
static int time_reads(struct memcg_ctx *c, const char *path, enum mode mode,
		      struct kb_stats *st, ssize_t *bytes, double *total_s)
{
	const struct options *o = &c->opt;
	long count = mode == MODE_PROC ? o->cat_count : o->count;
	long batch = mode == MODE_PROC ? 1 : o->batch;
	long nsamples = count / batch < 2 ? 2 : count / batch, i;
	double *samples;
	uint64_t start;
	ssize_t n = 0;
	int fd = -1, err = 0;

	c->row_cut_short = false;
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
	if (mode == MODE_PROC)
		priority_enter(c);
	for (i = -warm_up_count(mode, nsamples); i < 0 && n >= 0; i++)
		n = mode_op[mode](c, fd, path, batch);
	start = kb_clock_ns();
	for (i = 0; i < nsamples && n >= 0; i++) {
		uint64_t t0 = kb_clock_ns();

		n = mode_op[mode](c, fd, path, batch);
		samples[i] = (double)(kb_clock_ns() - t0) / batch / 1000.0;
		/* A slow machine: stop at the row's time budget. */
		if (o->row_budget_s > 0 && i >= 20 &&
		    (double)(kb_clock_ns() - start) / 1e9 > o->row_budget_s) {
			nsamples = i + 1;
			c->row_cut_short = true;
			break;
		}
	}
	*total_s = (double)(kb_clock_ns() - start) / 1e9;
	if (mode == MODE_PROC)
		priority_leave(c);
	if (fd >= 0)
		close(fd);
	if (n < 0)
		err = (int)n;
	else
		kb_stats_compute(samples, nsamples, st);
	*bytes = mode != MODE_PROC ? n : -1;
	free(samples);
	return err;
}

static const char *errstr(int err)
{
	return err == -ENOEXEC ? "no 'cat' in PATH, or it failed" : strerror(-err);
}

/* ---- the .ks files ----------------------------------------------------- */

static void ks_path(const struct memcg_ctx *c, enum file_id f, char *buf,
		    size_t size)
{
	snprintf(buf, size, "%s/%s.ks", c->dir, file_name[f]);
}

/* Back to legacy output: an empty line. Signal-safe. */
static void ks_reset(void *arg)
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

static int ks_write(struct memcg_ctx *c, enum file_id f, const char *filter)
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

static void ks_probe(struct memcg_ctx *c)
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
static void build_field_filter(int n, bool flush, char *buf, size_t size)
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
static void default_keys(struct memcg_ctx *c, char *buf, size_t size)
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

static void build_key_filter(const char *keys, bool flush, char *buf,
			     size_t size)
{
	snprintf(buf, size, "%s%s", flush ? "flush," : "", keys);
}

static int ks_read(struct memcg_ctx *c, enum file_id f, struct kb_memstat *st,
		   char *why, size_t size)
{
	char name[64];

	snprintf(name, sizeof(name), "%s.ks", file_name[f]);
	return read_stat(c, name, st, why, size);
}

/* ---- timed rows -------------------------------------------------------- */

static void row_name(const struct memcg_ctx *c, int v, enum file_id f,
		     enum mode m, char *name, size_t size)
{
	snprintf(name, size, "%s_%s_%s", file_tag[f], c->variant[v].tag,
		 mode_name[m]);
}

/* Why a row of variant @v on file @f cannot run; NULL when it can. */
static const char *row_skip(const struct memcg_ctx *c, int v, enum file_id f)
{
	if (f == F_NUMA && !cg_has(c, "memory.numa_stat"))
		return "no memory.numa_stat (kernel without CONFIG_NUMA)";
	if (c->variant[v].src == SRC_KS && c->ks_skip[f][0])
		return c->ks_skip[f];
	return NULL;
}

static void row_figures(struct memcg_ctx *c, int v, enum file_id f,
			enum mode m, const struct kb_stats *st, ssize_t bytes,
			double total_s, const char *name)
{
	const struct cell *legacy = &c->cells[0][f][m];

	kb_results_row(name, "us", st);
	kb_results_extra("batch", m == MODE_PROC ? 1 : c->opt.batch);
	kb_results_extra("total_s", total_s);
	if (c->row_cut_short)
		kb_results_extra("cut_at_max_row_time", 1);
	if (bytes >= 0)
		kb_results_extra("bytes", (double)bytes);
	if (v && legacy->done && legacy->median > 0)
		kb_results_extra("ratio_vs_legacy", st->median / legacy->median);
	if (c->variant[v].src == SRC_KS) {
		char note[160];

		snprintf(note, sizeof(note), "%s; filter: %s", mode_note[m],
			 c->variant[v].note);
		kb_results_note(note);
	} else {
		kb_results_note(mode_note[m]);
	}
	c->cells[v][f][m] = (struct cell){ true, st->median, st->mean };
}

/*
 * One timed row. A .ks row writes its filter first, so that it depends on
 * no other row. What it checks: the reads succeed and return data; the
 * timing itself is a figure, not a verdict.
 */
static int time_file_row(struct memcg_ctx *c, int v, enum file_id f,
			 enum mode m, const char *name, char *why, size_t size)
{
	const struct variant *var = &c->variant[v];
	char path[PATH_MAX + 64];
	struct kb_stats st;
	ssize_t bytes;
	double total_s;
	int err;

	if (var->src == SRC_KS) {
		err = ks_write(c, f, var->filter);
		if (err) {
			snprintf(why, size, "writing the filter (%s) to %s.ks: %s",
				 var->note, file_name[f], strerror(-err));
			return KSFT_FAIL;
		}
	}
	snprintf(path, sizeof(path), "%s/%s%s", c->dir, file_name[f],
		 var->src == SRC_KS ? ".ks" : "");
	err = time_reads(c, path, m, &st, &bytes, &total_s);
	if (err) {
		snprintf(why, size, "%s: %s", path, errstr(err));
		return m == MODE_PROC && err == -ENOEXEC ? KSFT_SKIP : KSFT_FAIL;
	}
	row_figures(c, v, f, m, &st, bytes, total_s, name);
	if (bytes == 0) {
		snprintf(why, size, "read returned no data");
		return KSFT_FAIL;
	}
	return KSFT_PASS;
}

static int nr_modes(const struct memcg_ctx *c)
{
	return c->opt.bench ? 1 : NR_MODES;
}

/* A file row's table argument: its variant, file and mode. */
static int file_row_arg(int v, enum file_id f, enum mode m)
{
	return (v * NR_FILES + f) * NR_MODES + m;
}

/* One file row of the table: SKIP when its file or filter is missing. */
static int file_row(void *ctx, int arg, char *why, size_t size)
{
	struct memcg_ctx *c = ctx;
	int m = arg % NR_MODES, f = arg / NR_MODES % NR_FILES;
	int v = arg / NR_MODES / NR_FILES;
	const char *skip = row_skip(c, v, f);
	char name[96];

	if (skip) {
		snprintf(why, size, "%s", skip);
		return KSFT_SKIP;
	}
	row_name(c, v, f, m, name, sizeof(name));
	return time_file_row(c, v, f, m, name, why, size);
}

/* The variants of this run: legacy, one per --fields size, the key filter. */
static void build_variants(struct memcg_ctx *c)
{
	const struct options *o = &c->opt;
	struct variant *var;
	int i;

	c->nvariants = 0;
	var = &c->variant[c->nvariants++];
	snprintf(var->tag, sizeof(var->tag), "legacy");
	var->src = SRC_LEGACY;
	for (i = 0; i < o->nfields; i++) {
		var = &c->variant[c->nvariants++];
		var->src = SRC_KS;
		snprintf(var->tag, sizeof(var->tag), "ks%d", o->fields[i]);
		build_field_filter(o->fields[i], !o->no_flush, var->filter,
				   sizeof(var->filter));
		snprintf(var->note, sizeof(var->note), "%d fields%s",
			 o->fields[i], o->no_flush ? "" : " + flush");
	}
	if (o->bench)
		return;
	var = &c->variant[c->nvariants++];
	var->src = SRC_KS;
	snprintf(var->tag, sizeof(var->tag), "ks_keys");
	build_key_filter(o->keys, !o->no_flush, var->filter,
			 sizeof(var->filter));
	snprintf(var->note, sizeof(var->note), "memory.stat keys");
}

static void print_table(const struct memcg_ctx *c)
{
	int v, f, m;

	ksft_print_msg("median microseconds per read (%s); ratio = ks / legacy, same file and way\n",
		       KB_CLOCK_NAME);
	ksft_print_msg("%-30s %12s %12s %14s\n", "file", "per_read",
		       "per_cat", "cat_process");
	for (v = 0; v < c->nvariants; v++) {
		for (f = 0; f < NR_FILES; f++) {
			char label[64], col[NR_MODES][32];

			if (!c->cells[v][f][MODE_READ].done)
				continue;
			snprintf(label, sizeof(label), "%s%s%s%s", file_name[f],
				 v ? ".ks [" : "", v ? c->variant[v].tag : "",
				 v ? "]" : "");
			for (m = 0; m < NR_MODES; m++) {
				const struct cell *x = &c->cells[v][f][m];
				const struct cell *l = &c->cells[0][f][m];

				if (!x->done)
					snprintf(col[m], sizeof(col[m]), "-");
				else if (v && l->done)
					snprintf(col[m], sizeof(col[m]), "%.3f (x%.2f)",
						 x->median, x->median / l->median);
				else
					snprintf(col[m], sizeof(col[m]), "%.3f",
						 x->median);
			}
			ksft_print_msg("%-30s %12s %12s %14s\n", label,
				       col[0], col[1], col[2]);
		}
	}
	if (c->devnull_cat_median > 0)
		ksft_print_msg("%-30s %12s %12s %14.3f\n", "cat /dev/null",
			       "-", "-", c->devnull_cat_median);
}

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

static int check_stat_parse(void *ctx, char *why, size_t size)
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

static int check_numa_sums(void *ctx, char *why, size_t size)
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

static int check_anon_grows(void *ctx, char *why, size_t size)
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
			  anon_key(c), c->opt.alloc / (double)MIB, before / (double)MIB,
			  grown / (double)MIB,
			  ((double)grown - (double)before) / MIB, waited, attempt);
	snprintf(why, size, "%s grew by %.1f MiB after touching %.1f MiB (want >= %.1f)",
		 anon_key(c), ((double)grown - (double)before) / MIB,
		 c->opt.alloc / (double)MIB, min_visible(c) / (double)MIB);
	return up ? KSFT_PASS : KSFT_FAIL;
}

static int check_anon_falls(void *ctx, char *why, size_t size)
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
			  ((double)grown - (double)after) / MIB, down_s, attempt);
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
static int check_numa_node(void *ctx, char *why, size_t size)
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
			  node, nodes, ((double)after - (double)before) / MIB, waited);
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
static int time_devnull_cat(void *ctx, char *why, size_t size)
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

static int check_ks_matches(void *ctx, char *why, size_t size)
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
			  ks.n, ks.comments, tries, MATCH_TOL_PPM / 1e4, filter);
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

static int check_ks_invalid(void *ctx, char *why, size_t size)
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
static int check_ks_reset(void *ctx, char *why, size_t size)
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

/* ---- BPF cgroup iterator: the mainline answer ------------------------ */

/* The iterator, loaded at first use; one load serves the check and rows. */
static struct kb_memcg_bpf *bpf_iter_get(struct memcg_ctx *c)
{
	struct bpf_state *bs = &c->bpf;

	if (!bs->tried) {
		bs->tried = true;
		bs->b = kb_memcg_bpf_open(c->dir, !c->opt.no_flush, &bs->load_ns,
					  &bs->err, bs->why, sizeof(bs->why));
	}
	return bs->b;
}

/* Why the iterator cannot run: SKIP when the kernel or caller cannot. */
static int bpf_iter_unusable(struct memcg_ctx *c, char *why, size_t size)
{
	snprintf(why, size, "%s", c->bpf.why);
	return kb_errno_bpf_is_environment(c->bpf.err) ? KSFT_SKIP : KSFT_FAIL;
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

static int check_bpf_matches_stat(void *ctx, char *why, size_t size)
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

/* bpf_iterN: the iterator reading N counters (the table's @n). */
static int bpf_row(void *ctx, int n, char *why, size_t size)
{
	struct memcg_ctx *c = ctx;
	const struct options *o = &c->opt;
	const struct cell *legacy = &c->cells[0][F_STAT][MODE_READ];
	int slots[MAX_FIELDS], err, v;
	struct kb_stats st;
	double total_s;
	char note[200], name[32];

	snprintf(name, sizeof(name), "bpf_iter%d", n);
	if (!bpf_iter_get(c))
		return bpf_iter_unusable(c, why, size);
	field_slots(n, slots);
	err = kb_memcg_bpf_select(c->bpf.b, slots, n, why, size);
	if (!err)
		err = kb_memcg_bpf_time(c->bpf.b, o->count, o->batch, o->row_budget_s,
					&st, &total_s);
	if (err) {
		snprintf(why, size, "iterator read: %s", strerror(-err));
		return KSFT_FAIL;
	}
	kb_results_row(name, "us", &st);
	kb_results_extra("batch", o->batch);
	kb_results_extra("total_s", total_s);
	kb_results_extra("load_ms", c->bpf.load_ns / 1e6);
	if (legacy->done && legacy->median > 0)
		kb_results_extra("ratio_vs_legacy", st.median / legacy->median);
	for (v = 1; v < c->nvariants; v++) {
		const struct cell *ks = &c->cells[v][F_STAT][MODE_READ];

		if (!strcmp(c->variant[v].tag + 2, name + 8) && ks->done &&
		    ks->median > 0)
			kb_results_extra("ratio_vs_ks", st.median / ks->median);
	}
	snprintf(note, sizeof(note), "create + read + close of a cgroup iterator fd: %s, then %d vmstats.state[] counters by CO-RE; load_ms: the program's load, once for all rows",
		 kb_memcg_bpf_flush_name(c->bpf.b), n);
	kb_results_note(note);
	if (st.min > 0)
		return KSFT_PASS;
	snprintf(why, size, "non-positive sample: the clock or the loop is broken");
	return KSFT_FAIL;
}

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
						   FULL_CAT_COUNT, SLOW_CAT_COUNT);
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
			    "between 1 and 1000)"),
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
	kb_placement_setup(&c->place, c->common.no_pin, false);
	plan_priority(c);
	record_params(c);
	run_tests(c);
	child_kill(&c->child);
	if (c->own_cgroup && kb_cgroup_remove(&c->test_cg))
		ksft_print_msg("cgroup %s still there after removal\n",
			       c->test_cg.path);
	kb_ktap_finish(c->common.json);
}
