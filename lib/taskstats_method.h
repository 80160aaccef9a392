/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ways to fetch the per-task statistics of a set of pids, one pass at
 * a time (kb_ts_method_): per-pid netlink, batched netlink, procfs
 * (open+read+close, or kept-open fds and pread), the RFC /proc/taskstats
 * ioctl and the BPF task iterator. Shared by taskstats/taskstats (its
 * method rows) and taskstats/taskstat (the seed's tool).
 */
#ifndef KBENCH_TASKSTATS_METHOD_H
#define KBENCH_TASKSTATS_METHOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum kb_ts_method {
	KB_TS_METHOD_NETLINK_PER_PID,
	KB_TS_METHOD_NETLINK_BATCHED,
	KB_TS_METHOD_PROCFS,
	KB_TS_METHOD_PROCFS_PREAD,
	KB_TS_METHOD_IOCTL,
	KB_TS_METHOD_BPF_ITER,
	KB_TS_METHOD_NR,
};

#define KB_TS_METHOD_DEFAULT_BATCH	64
#define KB_TS_METHOD_MAX_BATCH		1024

/* Stable row name ("netlink_per_pid"). */
const char *kb_ts_method_name(enum kb_ts_method m);

/* One line on what a pass of @m does. */
const char *kb_ts_method_desc(enum kb_ts_method m);

/*
 * A method by row name, or by the seed's numbers ("0" = ioctl,
 * "1" = netlink per pid); also "netlink" and "batched". -1 if unknown.
 */
int kb_ts_method_parse(const char *s);

struct kb_ts_method_ctx;

/*
 * Prepare passes of @m over @pids[0..@n) (the array must outlive the
 * context). @batch: requests per sendmsg for netlink_batched.
 * Returns NULL with *@err = -errno and a reason in @why when the method
 * cannot run here (no privilege, no /proc/taskstats, ...).
 */
struct kb_ts_method_ctx *kb_ts_method_open(enum kb_ts_method m,
					   unsigned int batch,
					   const pid_t *pids, size_t n,
					   int *err, char *why, size_t whylen);
void kb_ts_method_close(struct kb_ts_method_ctx *ctx);

/*
 * One pass: fetch the stats of every pid. @ok[i] says whether pid i was
 * answered with its own stats. *@ns is the time the pass took
 * (CLOCK_MONOTONIC); for chunked procfs_pread only the preads are timed,
 * not the opens of the next chunk. Returns the number of pids answered,
 * or -errno when the method broke (socket error, lost replies).
 */
long kb_ts_method_pass(struct kb_ts_method_ctx *ctx, bool *ok, uint64_t *ns);

/*
 * Pids in one unit of a pass of @m over @n pids with @batch requests per
 * sendmsg (kb_ts_method_pass_units): 1 for the methods that query pid by
 * pid (netlink_per_pid, procfs, procfs_pread, ioctl), @batch for
 * netlink_batched (0: the default), all @n for bpf_iter (its one read
 * loop). The last unit of a pass may hold fewer.
 */
size_t kb_ts_method_unit_pids(enum kb_ts_method m, unsigned int batch,
			      size_t n);

/* Units in one pass of @ctx: its pids over kb_ts_method_unit_pids(). */
size_t kb_ts_method_units(const struct kb_ts_method_ctx *ctx);

/*
 * The same pass as kb_ts_method_pass(), each unit of it timed on its own:
 * @unit_ns[u] (kb_ts_method_units() of them) is unit u's time per pid in
 * it (ns), and *@ns the sum of the units' times. A unit's time holds one
 * clock read (the rest of the one that starts it, the start of the one
 * that ends it), which a pass timed whole spreads over its pids: @unit_ns
 * is without it (kb_clock_overhead_ns(), taken at the context's first
 * such pass), *@ns with it.
 *
 * For exact mode (QEMU's instruction counter), where a pass of 200 pids
 * takes 0.5 to 7 million instructions and so holds a timer tick (HZ=1000:
 * one every million, ~1,200-1,400 instructions each) in some passes and
 * not in others: a pid's query is short and a tick lands in few of them;
 * a unit of several pids (a batch, the iterator) starts right after a
 * tick (kb_clock_after_interrupt()), so that none lands in it while it is
 * shorter than a tick period. Returns as kb_ts_method_pass().
 */
long kb_ts_method_pass_units(struct kb_ts_method_ctx *ctx, bool *ok,
			     uint64_t *ns, double *unit_ns);

/* Chunks a procfs_pread pass needs (1 = every fd stays open). */
size_t kb_ts_method_chunks(const struct kb_ts_method_ctx *ctx);

/*
 * What opening, loading and attaching the BPF program of a bpf_iter
 * context took in ns (0 for other methods): paid once, not per pass.
 */
uint64_t kb_ts_method_load_ns(const struct kb_ts_method_ctx *ctx);

/* Receive buffer of a netlink context in bytes (0 for other methods). */
long kb_ts_method_rcvbuf(const struct kb_ts_method_ctx *ctx);

#endif /* KBENCH_TASKSTATS_METHOD_H */
