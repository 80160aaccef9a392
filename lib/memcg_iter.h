/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What memcg_iter.bpf.c emits for the memory cgroup it visits, shared by
 * the BPF program and user space: the selected vmstats.state[] counters,
 * raw (pages for page counters), as the .ks filters select them.
 */
#ifndef KBENCH_MEMCG_ITER_H
#define KBENCH_MEMCG_ITER_H

#define KB_MEMCG_ITER_MAX_FIELDS	128
/* Slots of vmstats.state[] read in one go: the selections stay below. */
#define KB_MEMCG_ITER_MAX_STATE	64

/*
 * How the counters were brought up to date before the read: by
 * bpf_mem_cgroup_flush_stats(), by cgroup_rstat_flush(), or not at all
 * because the cgroup has no memory css.
 */
#define KB_MEMCG_ITER_FLUSHED_MEMCG	(1U << 0)
#define KB_MEMCG_ITER_FLUSHED_CGROUP	(1U << 1)
#define KB_MEMCG_ITER_NO_MEMCG		(1U << 2)

struct kb_memcg_iter_header {
	__u32 nr;	/* counters that follow, __s64 each */
	__u32 flags;
};

#endif /* KBENCH_MEMCG_ITER_H */
