/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kbench memcg counters by BPF cgroup iterator (memcg_ks/memcg_iter.bpf.c):
 * the mainline way to read N selected memory cgroup counters, beside the
 * out-of-tree memory.stat.ks filters. One read = create an iterator fd,
 * read it (flush + CO-RE reads in the kernel), close it.
 */
#ifndef KBENCH_MEMCG_BPF_H
#define KBENCH_MEMCG_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats.h"

struct kb_memcg_bpf;

/*
 * Load the iterator for the memory cgroup directory @cgdir, flushing
 * before every read when @flush. *@load_ns: what open+load+attach took.
 * NULL with *@err = -errno and a reason in @why when it cannot run here
 * (no BTF, privileges, no cgroup iterator, a hierarchy it cannot walk).
 */
struct kb_memcg_bpf *kb_memcg_bpf_open(const char *cgdir, bool flush,
				       uint64_t *load_ns, int *err, char *why,
				       size_t whylen);

/*
 * What the next reads return: vmstats.state[@slots[i]] for i < @n
 * (1..128 slots, each below 64). 0, or -EINVAL with @why.
 */
int kb_memcg_bpf_select(struct kb_memcg_bpf *b, const int *slots, int n,
			char *why, size_t whylen);
void kb_memcg_bpf_free(struct kb_memcg_bpf *b);

/*
 * One read. Returns the number of counters (their values in *@vals, valid
 * until the next read) or -errno; -ENODATA when the cgroup has no memory
 * controller.
 */
long kb_memcg_bpf_read(struct kb_memcg_bpf *b, const int64_t **vals);

/*
 * How the last read flushed: "bpf_mem_cgroup_flush_stats" (6.19+),
 * "cgroup_rstat_flush" (up to 6.15) or "none" (6.16-6.18: no flush a
 * program can call on the memory css; or flushing was not asked for).
 */
const char *kb_memcg_bpf_flush_name(const struct kb_memcg_bpf *b);

/*
 * Time reads: samples of @batch reads until @count reads or @budget_s
 * seconds (0 = no limit, at least 21 samples), microseconds per read.
 * 0 or -errno.
 */
int kb_memcg_bpf_time(struct kb_memcg_bpf *b, long count, long batch,
		      double budget_s, struct kb_stats *st, double *total_s);

#endif /* KBENCH_MEMCG_BPF_H */
