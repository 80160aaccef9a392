// SPDX-License-Identifier: GPL-2.0
/*
 * kbench memcg_ks: a cgroup iterator that reads selected counters of one
 * memory cgroup, the mainline way to do what the .ks filters do: flush the
 * cgroup's rstat tree with the running kernel's kfunc, then read
 * vmstats.state[] with CO-RE and emit only the selected slots.
 *
 * Attached with BPF_CGROUP_ITER_SELF_ONLY to the test cgroup, so one
 * read() of the iterator visits exactly that cgroup.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "memcg_iter.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * How to flush before a read: one program per way, and user space loads
 * only the one whose kfuncs the running kernel has (an unresolved kfunc
 * call must not reach a verifier older than 6.2, even in dead code).
 * Up to 6.15 cgroup_rstat_flush flushes every controller of a cgroup;
 * 6.16 made the flush per css (css_rstat_flush), which a program cannot
 * call on the memory css without a trusted pointer to it, and only the
 * memcg kfuncs (bpf_get_mem_cgroup, 6.19) give one.
 */
extern void cgroup_rstat_flush(struct cgroup *cgrp) __ksym __weak;
extern struct mem_cgroup *
bpf_get_mem_cgroup(struct cgroup_subsys_state *css) __ksym __weak;
extern void bpf_put_mem_cgroup(struct mem_cgroup *memcg) __ksym __weak;
extern void bpf_mem_cgroup_flush_stats(struct mem_cgroup *memcg) __ksym __weak;

/* Before 6.8 the counters were embedded in struct mem_cgroup. */
struct memcg_vmstats___old {
	long state[1];
} __attribute__((preserve_access_index));

struct mem_cgroup___old {
	struct memcg_vmstats___old vmstats;
} __attribute__((preserve_access_index));

struct mem_cgroup___new {
	struct memcg_vmstats *vmstats;
} __attribute__((preserve_access_index));

/* The selection, set by user space between reads: one load serves all. */
__u32 nr_fields;
__u32 fields[KB_MEMCG_ITER_MAX_FIELDS];

struct {
	struct kb_memcg_iter_header h;
	__s64 v[KB_MEMCG_ITER_MAX_FIELDS];
} out;

__s64 state[KB_MEMCG_ITER_MAX_STATE];

/* Where vmstats.state[0] is for this kernel's struct mem_cgroup. */
static const void *state_base(struct cgroup_subsys_state *css)
{
	struct mem_cgroup___new *m = (void *)css;
	struct mem_cgroup___old *o = (void *)css;

	if (bpf_core_field_exists(m->vmstats))
		return (const char *)BPF_CORE_READ(m, vmstats) +
		       bpf_core_field_offset(struct memcg_vmstats, state);
	return (const char *)o + bpf_core_field_offset(o->vmstats) +
	       bpf_core_field_offset(struct memcg_vmstats___old, state);
}

/* Read the selected slots of the cgroup's memcg and emit them. */
static __always_inline int dump(struct bpf_iter__cgroup *ctx, __u32 flushed)
{
	struct cgroup *cgrp = ctx->cgroup;
	struct cgroup_subsys_state *css;
	__u32 i, n = nr_fields;
	const void *base;

	if (!cgrp)
		return 0;
	out.h.flags = 0;
	out.h.nr = 0;
	css = cgrp->subsys[bpf_core_enum_value(enum cgroup_subsys_id,
					       memory_cgrp_id)];
	if (!css) {
		out.h.flags = KB_MEMCG_ITER_NO_MEMCG;
		bpf_seq_write(ctx->meta->seq, &out.h, sizeof(out.h));
		return 0;
	}
	out.h.flags |= flushed;
	base = state_base(css);
	/*
	 * Constant sizes only: older verifiers (6.1, 6.12) lose the bounds
	 * of sizes computed from map values. The struct holding state[] is
	 * larger than the span read, and user space reads h.nr values.
	 */
	bpf_probe_read_kernel(state, sizeof(state), base);
	for (i = 0; i < KB_MEMCG_ITER_MAX_FIELDS; i++) {
		if (i >= n)
			break;
		out.v[i] = state[fields[i] & (KB_MEMCG_ITER_MAX_STATE - 1)];
	}
	out.h.nr = i;
	bpf_seq_write(ctx->meta->seq, &out, sizeof(out));
	return 0;
}

SEC("iter.s/cgroup")
int dump_memcg_rstat(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cgrp = ctx->cgroup;

	if (!cgrp)
		return 0;
	cgroup_rstat_flush(cgrp);
	return dump(ctx, KB_MEMCG_ITER_FLUSHED_CGROUP);
}

SEC("iter.s/cgroup")
int dump_memcg_kfuncs(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cgrp = ctx->cgroup;
	struct mem_cgroup *memcg;
	__u32 flushed = 0;

	if (!cgrp)
		return 0;
	memcg = bpf_get_mem_cgroup(&cgrp->self);
	if (memcg) {
		bpf_mem_cgroup_flush_stats(memcg);
		bpf_put_mem_cgroup(memcg);
		flushed = KB_MEMCG_ITER_FLUSHED_MEMCG;
	}
	return dump(ctx, flushed);
}

SEC("iter/cgroup")
int dump_memcg_noflush(struct bpf_iter__cgroup *ctx)
{
	return dump(ctx, 0);
}
