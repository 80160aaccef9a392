// SPDX-License-Identifier: GPL-2.0
/*
 * kbench taskstats: a task iterator that emits, for every task whose comm
 * contains a given string, the per-task figures a monitoring agent reads
 * from taskstats. One read() loop on the iterator fd walks every task of
 * the system; the filter runs in the kernel, so only the matching tasks
 * cost a copy to user space.
 *
 * Field reads are CO-RE: the record layout is ours (taskstats_iter.h), the
 * kernel's struct layouts come from its BTF at load time, and the fields a
 * kernel lacks (delay accounting, I/O accounting) are flagged absent.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "taskstats_iter.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load: the comm substring, NUL padded. */
const volatile char comm_filter[KB_TS_ITER_COMM_LEN] = {};
const volatile unsigned int comm_filter_len;

/* 6.2 made the mm counters percpu_counters; older kernels had atomics. */
struct mm_rss_stat___old {
	atomic_long_t count[4];
} __attribute__((preserve_access_index));

struct mm_struct___old {
	struct mm_rss_stat___old rss_stat;
} __attribute__((preserve_access_index));

static bool comm_matches(const char *comm)
{
	unsigned int len = comm_filter_len, start, i;

	if (!len)
		return true;
	for (start = 0; start + len <= KB_TS_ITER_COMM_LEN - 1; start++) {
		for (i = 0; i < len && i < KB_TS_ITER_COMM_LEN; i++)
			if (comm[start + i] != comm_filter[i])
				break;
		if (i == len)
			return true;
	}
	return false;
}

static void read_delays(struct task_struct *t, struct kb_ts_iter_record *r)
{
	struct task_delay_info *d;

	r->cpu_count = BPF_CORE_READ(t, sched_info.pcount);
	r->cpu_delay_total = BPF_CORE_READ(t, sched_info.run_delay);
	if (!bpf_core_field_exists(t->delays))
		return;
	d = BPF_CORE_READ(t, delays);
	if (!d)
		return;
	r->flags |= KB_TS_ITER_HAVE_DELAYS;
	r->blkio_count = BPF_CORE_READ(d, blkio_count);
	r->blkio_delay_total = BPF_CORE_READ(d, blkio_delay);
	r->swapin_count = BPF_CORE_READ(d, swapin_count);
	r->swapin_delay_total = BPF_CORE_READ(d, swapin_delay);
	r->freepages_count = BPF_CORE_READ(d, freepages_count);
	r->freepages_delay_total = BPF_CORE_READ(d, freepages_delay);
	r->thrashing_count = BPF_CORE_READ(d, thrashing_count);
	r->thrashing_delay_total = BPF_CORE_READ(d, thrashing_delay);
	r->compact_count = BPF_CORE_READ(d, compact_count);
	r->compact_delay_total = BPF_CORE_READ(d, compact_delay);
	if (bpf_core_field_exists(d->wpcopy_delay)) {
		r->wpcopy_count = BPF_CORE_READ(d, wpcopy_count);
		r->wpcopy_delay_total = BPF_CORE_READ(d, wpcopy_delay);
	}
	if (bpf_core_field_exists(d->irq_delay)) {
		r->irq_count = BPF_CORE_READ(d, irq_count);
		r->irq_delay_total = BPF_CORE_READ(d, irq_delay);
	}
}

static void read_io(struct task_struct *t, struct kb_ts_iter_record *r)
{
	if (!bpf_core_field_exists(t->ioac))
		return;
	r->flags |= KB_TS_ITER_HAVE_IO;
	r->read_char = BPF_CORE_READ(t, ioac.rchar);
	r->write_char = BPF_CORE_READ(t, ioac.wchar);
	r->read_syscalls = BPF_CORE_READ(t, ioac.syscr);
	r->write_syscalls = BPF_CORE_READ(t, ioac.syscw);
	if (bpf_core_field_exists(t->ioac.read_bytes)) {
		r->read_bytes = BPF_CORE_READ(t, ioac.read_bytes);
		r->write_bytes = BPF_CORE_READ(t, ioac.write_bytes);
		r->cancelled_write_bytes =
			BPF_CORE_READ(t, ioac.cancelled_write_bytes);
	}
}

/*
 * The RSS taskstats reports: file + anon + shmem pages, as get_mm_rss()
 * (MM_SWAPENTS, counter 2, is not resident). Each branch's relocations
 * resolve only on the kernels that take it; the other is dead code.
 */
static long mm_rss_pages(struct mm_struct *mm)
{
	struct mm_struct___old *old = (void *)mm;

	if (bpf_core_field_exists(old->rss_stat.count))
		return BPF_CORE_READ(old, rss_stat.count[0].counter) +
		       BPF_CORE_READ(old, rss_stat.count[1].counter) +
		       BPF_CORE_READ(old, rss_stat.count[3].counter);
	return BPF_CORE_READ(mm, rss_stat[0].count) +
	       BPF_CORE_READ(mm, rss_stat[1].count) +
	       BPF_CORE_READ(mm, rss_stat[3].count);
}

static void read_mem(struct task_struct *t, struct kb_ts_iter_record *r)
{
	struct mm_struct *mm = BPF_CORE_READ(t, mm);
	unsigned long hw;
	long rss;

	r->minflt = BPF_CORE_READ(t, min_flt);
	r->majflt = BPF_CORE_READ(t, maj_flt);
	if (bpf_core_field_exists(t->acct_rss_mem1)) {
		r->flags |= KB_TS_ITER_HAVE_XACCT;
		r->acct_rss_mem1 = BPF_CORE_READ(t, acct_rss_mem1);
		r->acct_vm_mem1 = BPF_CORE_READ(t, acct_vm_mem1);
	}
	if (!mm)
		return;
	r->flags |= KB_TS_ITER_HAVE_MM;
	rss = mm_rss_pages(mm);
	hw = BPF_CORE_READ(mm, hiwater_rss);
	r->hiwater_rss_pages = rss > 0 && (unsigned long)rss > hw ? rss : hw;
	hw = BPF_CORE_READ(mm, hiwater_vm);
	r->total_vm_pages = BPF_CORE_READ(mm, total_vm);
	r->hiwater_vm_pages = r->total_vm_pages > hw ? r->total_vm_pages : hw;
}

SEC("iter/task")
int dump_task(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct kb_ts_iter_record r = {};

	if (!t)
		return 0;
	BPF_CORE_READ_STR_INTO(&r.comm, t, comm);
	if (!comm_matches(r.comm))
		return 0;
	r.pid = BPF_CORE_READ(t, pid);
	r.tgid = BPF_CORE_READ(t, tgid);
	r.utime_ns = BPF_CORE_READ(t, utime);
	r.stime_ns = BPF_CORE_READ(t, stime);
	r.sum_exec_runtime_ns = BPF_CORE_READ(t, se.sum_exec_runtime);
	r.nvcsw = BPF_CORE_READ(t, nvcsw);
	r.nivcsw = BPF_CORE_READ(t, nivcsw);
	read_delays(t, &r);
	read_io(t, &r);
	read_mem(t, &r);
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}
