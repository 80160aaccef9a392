// SPDX-License-Identifier: GPL-2.0
/*
 * The ways to fetch per-task statistics. See taskstats_method.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "taskstats_method.h"
#include "clock.h"
#include "compat.h"
#include "netlink.h"
#include "proc.h"
#include "taskstats.h"
#include "taskstats_bpf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <linux/taskstats.h>

/* A reply that never comes must not hang a pass. */
#define NL_TIMEOUT_MS	5000

/* The files a procfs pass reads per pid. */
static const char *const proc_files[] = { "stat", "schedstat", "io" };
#define NR_PROC_FILES	ARRAY_SIZE(proc_files)

/* fds kept free for everything else while procfs_pread holds its own. */
#define FD_RESERVE	64

/* Big enough for any struct taskstats the RFC ioctl may copy back. */
#define IOCTL_BUF_SIZE	4096

static const struct {
	const char *name;
	const char *desc;
} methods[KB_TS_METHOD_NR] = {
	[KB_TS_METHOD_NETLINK_PER_PID] = { "netlink_per_pid",
		"one TASKSTATS_CMD_GET per pid: send, then receive its reply" },
	[KB_TS_METHOD_NETLINK_BATCHED] = { "netlink_batched",
		"K TASKSTATS_CMD_GET per sendmsg, replies drained with recvmmsg and matched by sequence number" },
	[KB_TS_METHOD_PROCFS] = { "procfs",
		"open+read+close of /proc/PID/stat, schedstat and io" },
	[KB_TS_METHOD_PROCFS_PREAD] = { "procfs_pread",
		"pread at offset 0 of /proc/PID/stat, schedstat and io kept open" },
	[KB_TS_METHOD_IOCTL] = { "ioctl",
		"one TASKSTATS_IOC_ATTR_PID ioctl per pid on /proc/taskstats (RFC, not in mainline)" },
	[KB_TS_METHOD_BPF_ITER] = { "bpf_iter",
		"one read() loop on a BPF task iterator that keeps the tasks by comm in the kernel (mainline)" },
};

struct kb_ts_method_ctx {
	enum kb_ts_method method;
	const pid_t *pids;
	size_t n;
	struct kb_nl nl;
	struct kb_ts_batch *batch;
	unsigned int per_send;	/* netlink: requests per sendmsg */
	int ioctl_fd;
	unsigned char *ioctl_buf;
	int *fds;		/* procfs_pread: NR_PROC_FILES per pid of a chunk */
	size_t chunk;		/* pids per chunk */
	bool fds_open;		/* the single chunk stays open across passes */
	struct kb_ts_bpf *bpf;	/* bpf_iter */
	struct pid_slot *slots;	/* bpf_iter: pids sorted, with their index */
	uint64_t load_ns;
	double clock_ns;	/* a clock read, for kb_ts_method_pass_units() */
	char readbuf[4096];
};

const char *kb_ts_method_name(enum kb_ts_method m)
{
	return m < KB_TS_METHOD_NR ? methods[m].name : "unknown";
}

const char *kb_ts_method_desc(enum kb_ts_method m)
{
	return m < KB_TS_METHOD_NR ? methods[m].desc : "";
}

int kb_ts_method_parse(const char *s)
{
	int m;

	if (!strcmp(s, "0"))
		return KB_TS_METHOD_IOCTL;
	if (!strcmp(s, "1") || !strcmp(s, "netlink"))
		return KB_TS_METHOD_NETLINK_PER_PID;
	if (!strcmp(s, "batched"))
		return KB_TS_METHOD_NETLINK_BATCHED;
	for (m = 0; m < KB_TS_METHOD_NR; m++)
		if (!strcmp(s, methods[m].name))
			return m;
	return -1;
}

/* ---- netlink --------------------------------------------------------- */

static int netlink_setup(struct kb_ts_method_ctx *ctx, unsigned int batch,
			 char *why, size_t whylen)
{
	struct kb_ts_reply r;
	int err;

	ctx->per_send = batch;
	ctx->batch = kb_ts_batch_new(batch);
	if (!ctx->batch)
		return -ENOMEM;
	err = kb_ts_open(&ctx->nl, kb_ts_batch_rcvbuf(batch), NL_TIMEOUT_MS);
	if (err == -ENOENT) {
		snprintf(why, whylen, "kernel has no TASKSTATS genetlink family (CONFIG_TASKSTATS off)");
		return err;
	}
	if (err) {
		snprintf(why, whylen, "cannot open a TASKSTATS netlink socket: %s",
			 strerror(-err));
		return err;
	}
	/* Probe once, so that a missing privilege is a reason, not N misses. */
	err = kb_ts_get(&ctx->nl, TASKSTATS_CMD_ATTR_PID, getpid(), &r);
	if (err == -EPERM)
		snprintf(why, whylen, "TASKSTATS_CMD_GET needs CAP_NET_ADMIN (EPERM)");
	else if (err)
		snprintf(why, whylen, "TASKSTATS_CMD_GET of our own pid failed: %s",
			 strerror(-err));
	return err;
}

/* ---- procfs ---------------------------------------------------------- */

/*
 * Whether the text a procfs pass read from proc_files[@f] answers for
 * @pid: stat must start with the pid, the others must not be empty.
 */
static bool proc_answer_ok(size_t f, const char *buf, ssize_t len, pid_t pid)
{
	return f == 0 ? kb_proc_stat_is_pid(buf, len, pid) : len > 0;
}

static int open_proc_file(pid_t pid, const char *file)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* Read into ctx->readbuf, NUL-terminated; the length or -1. */
static ssize_t read_into(struct kb_ts_method_ctx *ctx, int fd, bool positioned)
{
	size_t room = sizeof(ctx->readbuf) - 1;
	ssize_t len = positioned ? pread(fd, ctx->readbuf, room, 0) :
				   read(fd, ctx->readbuf, room);

	ctx->readbuf[len > 0 ? len : 0] = '\0';
	return len;
}

/* open+read+close of every file of one pid. */
static bool procfs_read_pid(struct kb_ts_method_ctx *ctx, pid_t pid)
{
	bool good = true;
	size_t f;

	for (f = 0; f < NR_PROC_FILES; f++) {
		int fd = open_proc_file(pid, proc_files[f]);
		ssize_t len;

		if (fd < 0)
			return false;
		len = read_into(ctx, fd, false);
		close(fd);
		good &= proc_answer_ok(f, ctx->readbuf, len, pid);
	}
	return good;
}

static void close_fds(struct kb_ts_method_ctx *ctx, size_t count)
{
	size_t i;

	for (i = 0; i < count * NR_PROC_FILES; i++) {
		if (ctx->fds[i] >= 0)
			close(ctx->fds[i]);
		ctx->fds[i] = -1;
	}
}

/* Open the files of pids[first..first+count). 0 or -errno. */
static int open_chunk(struct kb_ts_method_ctx *ctx, size_t first, size_t count)
{
	size_t i, f;

	for (i = 0; i < count; i++) {
		for (f = 0; f < NR_PROC_FILES; f++) {
			int fd = open_proc_file(ctx->pids[first + i],
						proc_files[f]);

			if (fd < 0 && errno != ENOENT && errno != ESRCH) {
				int err = -errno;

				close_fds(ctx, i + 1);
				return err;
			}
			ctx->fds[i * NR_PROC_FILES + f] = fd;
		}
	}
	return 0;
}

static bool pread_pid(struct kb_ts_method_ctx *ctx, size_t slot, pid_t pid)
{
	bool good = true;
	size_t f;

	for (f = 0; f < NR_PROC_FILES; f++) {
		int fd = ctx->fds[slot * NR_PROC_FILES + f];

		if (fd < 0)
			return false;
		good &= proc_answer_ok(f, ctx->readbuf,
				       read_into(ctx, fd, true), pid);
	}
	return good;
}

/* As many fds as the hard limit allows: raise the soft limit to it. */
static long fd_budget(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1 << 24))
		rl.rlim_cur = 1 << 24;
	return (long)rl.rlim_cur - FD_RESERVE;
}

static int pread_setup(struct kb_ts_method_ctx *ctx, char *why, size_t whylen)
{
	long budget = fd_budget();
	int err;

	if (budget < (long)NR_PROC_FILES) {
		snprintf(why, whylen, "RLIMIT_NOFILE leaves no room for %zu fds per pid",
			 NR_PROC_FILES);
		return -EMFILE;
	}
	ctx->chunk = budget / NR_PROC_FILES;
	if (ctx->chunk > ctx->n)
		ctx->chunk = ctx->n ? ctx->n : 1;
	ctx->fds = malloc(ctx->chunk * NR_PROC_FILES * sizeof(*ctx->fds));
	if (!ctx->fds)
		return -ENOMEM;
	memset(ctx->fds, -1, ctx->chunk * NR_PROC_FILES * sizeof(*ctx->fds));
	if (ctx->chunk < ctx->n)
		return 0;
	err = open_chunk(ctx, 0, ctx->n);
	if (err)
		snprintf(why, whylen, "cannot open /proc/PID files: %s",
			 strerror(-err));
	ctx->fds_open = !err;
	return err;
}

static long pass_pread(struct kb_ts_method_ctx *ctx, bool *ok, uint64_t *ns)
{
	size_t first, i, count;
	long answered = 0;
	uint64_t t0;
	int err;

	*ns = 0;
	for (first = 0; first < ctx->n; first += ctx->chunk) {
		count = ctx->n - first < ctx->chunk ? ctx->n - first : ctx->chunk;
		if (!ctx->fds_open) {
			err = open_chunk(ctx, first, count);
			if (err)
				return err;
		}
		t0 = kb_clock_ns();
		for (i = 0; i < count; i++)
			ok[first + i] = pread_pid(ctx, i, ctx->pids[first + i]);
		*ns += kb_clock_ns() - t0;
		if (!ctx->fds_open)
			close_fds(ctx, count);
		for (i = 0; i < count; i++)
			answered += ok[first + i];
	}
	return answered;
}

/* ---- RFC ioctl ------------------------------------------------------- */

static bool ioctl_pid(struct kb_ts_method_ctx *ctx, pid_t pid);

static int ioctl_setup(struct kb_ts_method_ctx *ctx, char *why, size_t whylen)
{
	ctx->ioctl_fd = open(KB_TS_PROC_FILE, O_RDONLY | O_CLOEXEC);
	if (ctx->ioctl_fd < 0) {
		int err = -errno;

		if (err == -ENOENT)
			snprintf(why, whylen, "kernel has no %s", KB_TS_PROC_FILE);
		else
			snprintf(why, whylen, "cannot open %s: %s",
				 KB_TS_PROC_FILE, strerror(-err));
		return err;
	}
	ctx->ioctl_buf = calloc(1, IOCTL_BUF_SIZE);
	if (!ctx->ioctl_buf)
		return -ENOMEM;
	/* Probe once, so that a missing privilege is a reason, not N misses. */
	errno = 0;
	if (!ioctl_pid(ctx, getpid())) {
		int err = errno ? -errno : -EIO;

		if (err == -EPERM)
			snprintf(why, whylen, "the %s ioctl needs CAP_NET_ADMIN (EPERM)",
				 KB_TS_PROC_FILE);
		else
			snprintf(why, whylen, "%s ioctl of our own pid failed: %s",
				 KB_TS_PROC_FILE, strerror(-err));
		return err;
	}
	return 0;
}

/*
 * The RFC's kernel reads the pid at the ac_pid offset of the user's
 * struct taskstats, fills the struct and copies it back.
 */
static bool ioctl_pid(struct kb_ts_method_ctx *ctx, pid_t pid)
{
	struct kb_ts_stats ts;
	uint32_t id = pid;

	memcpy(ctx->ioctl_buf + KB_TS_AC_PID_OFFSET, &id, sizeof(id));
	if (ioctl(ctx->ioctl_fd, TASKSTATS_IOC_ATTR_PID, ctx->ioctl_buf))
		return false;
	kb_ts_decode(ctx->ioctl_buf, IOCTL_BUF_SIZE, &ts);
	return ts.pid == id;
}

/* ---- BPF task iterator ---------------------------------------------- */

struct pid_slot {
	pid_t pid;
	size_t index;
};

static int cmp_slot(const void *a, const void *b)
{
	pid_t x = ((const struct pid_slot *)a)->pid;
	pid_t y = ((const struct pid_slot *)b)->pid;

	return (x > y) - (x < y);
}

static bool read_comm(pid_t pid, char *comm, size_t len)
{
	char path[64];
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	got = read(fd, comm, len - 1);
	close(fd);
	if (got <= 0)
		return false;
	comm[got] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	return true;
}

/*
 * The kernel-side filter: the longest comm prefix all pids share (their
 * common comm when they were selected by it). Records of other tasks
 * that pass it are dropped by pid in user space.
 */
static void common_comm(const pid_t *pids, size_t n, char *filter, size_t len)
{
	char comm[64];
	size_t i, k;

	filter[0] = '\0';
	for (i = 0; i < n; i++) {
		if (!read_comm(pids[i], comm, sizeof(comm)))
			continue;
		if (!filter[0] && i == 0) {
			comm[len - 1] = '\0';
			memcpy(filter, comm, len);
			continue;
		}
		for (k = 0; filter[k] && filter[k] == comm[k]; k++)
			;
		filter[k] = '\0';
	}
}

static int bpf_setup(struct kb_ts_method_ctx *ctx, char *why, size_t whylen)
{
	char filter[16];
	size_t i;
	int err;

	ctx->slots = malloc((ctx->n ? ctx->n : 1) * sizeof(*ctx->slots));
	if (!ctx->slots)
		return -ENOMEM;
	for (i = 0; i < ctx->n; i++) {
		ctx->slots[i].pid = ctx->pids[i];
		ctx->slots[i].index = i;
	}
	qsort(ctx->slots, ctx->n, sizeof(*ctx->slots), cmp_slot);
	common_comm(ctx->pids, ctx->n, filter, sizeof(filter));
	ctx->bpf = kb_ts_bpf_open(filter, &ctx->load_ns, &err, why, whylen);
	return ctx->bpf ? 0 : err;
}

static long pass_bpf(struct kb_ts_method_ctx *ctx, bool *ok)
{
	struct pid_slot key, *hit;
	struct kb_ts_stats ts;
	long got, i, answered = 0;

	memset(ok, 0, ctx->n * sizeof(*ok));
	got = kb_ts_bpf_pass(ctx->bpf);
	for (i = 0; i < got; i++) {
		kb_ts_bpf_get(ctx->bpf, i, &ts);
		key.pid = ts.pid;
		hit = bsearch(&key, ctx->slots, ctx->n, sizeof(*ctx->slots),
			      cmp_slot);
		if (hit && !ok[hit->index]) {
			ok[hit->index] = true;
			answered++;
		}
	}
	return got < 0 ? got : answered;
}

/* ---- contexts and passes --------------------------------------------- */

struct kb_ts_method_ctx *kb_ts_method_open(enum kb_ts_method m,
					   unsigned int batch,
					   const pid_t *pids, size_t n,
					   int *err, char *why, size_t whylen)
{
	struct kb_ts_method_ctx *ctx = calloc(1, sizeof(*ctx));

	snprintf(why, whylen, "out of memory");
	*err = -ENOMEM;
	if (!ctx)
		return NULL;
	ctx->method = m;
	ctx->pids = pids;
	ctx->n = n;
	ctx->nl.fd = -1;
	ctx->ioctl_fd = -1;
	ctx->clock_ns = -1;
	switch (m) {
	case KB_TS_METHOD_NETLINK_PER_PID:
		*err = netlink_setup(ctx, 1, why, whylen);
		break;
	case KB_TS_METHOD_NETLINK_BATCHED:
		*err = netlink_setup(ctx,
				     batch ? batch : KB_TS_METHOD_DEFAULT_BATCH,
				     why, whylen);
		break;
	case KB_TS_METHOD_PROCFS:
		*err = 0;
		break;
	case KB_TS_METHOD_PROCFS_PREAD:
		*err = pread_setup(ctx, why, whylen);
		break;
	case KB_TS_METHOD_IOCTL:
		*err = ioctl_setup(ctx, why, whylen);
		break;
	case KB_TS_METHOD_BPF_ITER:
		*err = bpf_setup(ctx, why, whylen);
		break;
	default:
		*err = -EINVAL;
		snprintf(why, whylen, "unknown method");
	}
	if (*err) {
		kb_ts_method_close(ctx);
		return NULL;
	}
	return ctx;
}

void kb_ts_method_close(struct kb_ts_method_ctx *ctx)
{
	if (!ctx)
		return;
	kb_nl_close(&ctx->nl);
	kb_ts_batch_free(ctx->batch);
	if (ctx->ioctl_fd >= 0)
		close(ctx->ioctl_fd);
	free(ctx->ioctl_buf);
	if (ctx->fds && ctx->fds_open)
		close_fds(ctx, ctx->n);
	free(ctx->fds);
	kb_ts_bpf_free(ctx->bpf);
	free(ctx->slots);
	free(ctx);
}

size_t kb_ts_method_chunks(const struct kb_ts_method_ctx *ctx)
{
	if (ctx->method != KB_TS_METHOD_PROCFS_PREAD || !ctx->chunk)
		return 1;
	return (ctx->n + ctx->chunk - 1) / ctx->chunk;
}

uint64_t kb_ts_method_load_ns(const struct kb_ts_method_ctx *ctx)
{
	return ctx->load_ns;
}

long kb_ts_method_rcvbuf(const struct kb_ts_method_ctx *ctx)
{
	return ctx->nl.fd >= 0 ? kb_nl_rcvbuf(&ctx->nl) : 0;
}

size_t kb_ts_method_unit_pids(enum kb_ts_method m, unsigned int batch,
			      size_t n)
{
	if (m == KB_TS_METHOD_NETLINK_BATCHED)
		return batch ? batch : KB_TS_METHOD_DEFAULT_BATCH;
	if (m == KB_TS_METHOD_BPF_ITER)
		return n ? n : 1;
	return 1;
}

size_t kb_ts_method_units(const struct kb_ts_method_ctx *ctx)
{
	size_t k = kb_ts_method_unit_pids(ctx->method, ctx->per_send, ctx->n);

	return (ctx->n + k - 1) / k;
}

/*
 * Query pids[first..first+count) of the chunk that starts at pid @chunk
 * (procfs_pread: the chunk's fds are open; 0 for the other methods).
 * The pids answered, or -errno.
 */
static long query_range(struct kb_ts_method_ctx *ctx, size_t first,
			size_t count, size_t chunk, bool *ok)
{
	long answered = 0;
	size_t i;

	switch (ctx->method) {
	case KB_TS_METHOD_NETLINK_PER_PID:
	case KB_TS_METHOD_NETLINK_BATCHED:
		return kb_ts_batch_query(&ctx->nl, ctx->batch, ctx->pids + first,
					 count, ok + first);
	case KB_TS_METHOD_PROCFS:
		for (i = first; i < first + count; i++)
			answered += ok[i] = procfs_read_pid(ctx, ctx->pids[i]);
		return answered;
	case KB_TS_METHOD_PROCFS_PREAD:
		for (i = first; i < first + count; i++)
			answered += ok[i] = pread_pid(ctx, i - chunk,
						      ctx->pids[i]);
		return answered;
	case KB_TS_METHOD_IOCTL:
		for (i = first; i < first + count; i++)
			answered += ok[i] = ioctl_pid(ctx, ctx->pids[i]);
		return answered;
	default:
		return -EINVAL;
	}
}

/*
 * A unit of several pids (a batch: 64 requests are 400,000 instructions,
 * nearly half of the test kernel's tick period) starts right after a
 * tick, so that no tick lands in it: each unit is then as clean as a
 * pid's query, which a tick hits once in tens.
 */
#define TICK_GAP_NS	500		/* a tick is ~1,400 instructions */
#define TICK_WAIT_NS	20000000	/* 20 ms: HZ=100 and more */

static uint64_t unit_start(size_t k)
{
	return k > 1 ? kb_clock_after_interrupt(TICK_GAP_NS, TICK_WAIT_NS) :
		       kb_clock_ns();
}

/*
 * The units of the pids [chunk, chunk + count), each timed, less the
 * one clock read (@clock_ns) each unit holds.
 */
static long time_units(struct kb_ts_method_ctx *ctx, size_t chunk,
		       size_t count, bool *ok, uint64_t *ns, double *unit_ns,
		       double clock_ns)
{
	size_t k = kb_ts_method_unit_pids(ctx->method, ctx->per_send, ctx->n);
	size_t first, u = chunk / k, end = chunk + count, in;
	uint64_t t0 = unit_start(k), t1;
	long answered = 0, got;

	for (first = chunk; first < end; first += in, u++) {
		if (first > chunk && k > 1)
			t0 = unit_start(k);
		in = end - first < k ? end - first : k;
		got = query_range(ctx, first, in, chunk, ok);
		t1 = kb_clock_ns();
		if (got < 0)
			return got;
		unit_ns[u] = ((double)(t1 - t0) - clock_ns) / (double)in;
		*ns += t1 - t0;
		answered += got;
		t0 = t1;
	}
	return answered;
}

long kb_ts_method_pass_units(struct kb_ts_method_ctx *ctx, bool *ok,
			     uint64_t *ns, double *unit_ns)
{
	size_t chunk, count, step = ctx->n;
	long answered = 0, got;
	int err;

	if (ctx->clock_ns < 0)
		ctx->clock_ns = kb_clock_overhead_ns();
	if (ctx->method == KB_TS_METHOD_BPF_ITER) {
		unit_start(ctx->n);
		got = kb_ts_method_pass(ctx, ok, ns);
		if (ctx->n)
			unit_ns[0] = (double)*ns / (double)ctx->n;
		return got;
	}
	if (ctx->method == KB_TS_METHOD_PROCFS_PREAD)
		step = ctx->chunk;
	*ns = 0;
	for (chunk = 0; chunk < ctx->n; chunk += step) {
		count = ctx->n - chunk < step ? ctx->n - chunk : step;
		if (ctx->method == KB_TS_METHOD_PROCFS_PREAD && !ctx->fds_open) {
			err = open_chunk(ctx, chunk, count);
			if (err)
				return err;
		}
		got = time_units(ctx, chunk, count, ok, ns, unit_ns,
				 ctx->clock_ns);
		if (ctx->method == KB_TS_METHOD_PROCFS_PREAD && !ctx->fds_open)
			close_fds(ctx, count);
		if (got < 0)
			return got;
		answered += got;
	}
	return answered;
}

long kb_ts_method_pass(struct kb_ts_method_ctx *ctx, bool *ok, uint64_t *ns)
{
	uint64_t t0 = kb_clock_ns();
	long answered = 0;
	size_t i;

	switch (ctx->method) {
	case KB_TS_METHOD_NETLINK_PER_PID:
	case KB_TS_METHOD_NETLINK_BATCHED:
		answered = kb_ts_batch_query(&ctx->nl, ctx->batch, ctx->pids,
					     ctx->n, ok);
		break;
	case KB_TS_METHOD_PROCFS:
		for (i = 0; i < ctx->n; i++)
			answered += ok[i] = procfs_read_pid(ctx, ctx->pids[i]);
		break;
	case KB_TS_METHOD_PROCFS_PREAD:
		return pass_pread(ctx, ok, ns);
	case KB_TS_METHOD_IOCTL:
		for (i = 0; i < ctx->n; i++)
			answered += ok[i] = ioctl_pid(ctx, ctx->pids[i]);
		break;
	case KB_TS_METHOD_BPF_ITER:
		answered = pass_bpf(ctx, ok);
		break;
	default:
		return -EINVAL;
	}
	*ns = kb_clock_ns() - t0;
	return answered;
}
