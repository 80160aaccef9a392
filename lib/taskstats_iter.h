/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The record taskstats_iter.bpf.c emits per matching task, shared by the
 * BPF program and user space. Raw kernel units: user space converts them
 * the way kernel/tsacct.c and kernel/delayacct.c do for taskstats.
 */
#ifndef KBENCH_TASKSTATS_ITER_H
#define KBENCH_TASKSTATS_ITER_H

#define KB_TS_ITER_COMM_LEN		16

/* Which groups of fields the running kernel has. */
#define KB_TS_ITER_HAVE_DELAYS	(1U << 0)	/* CONFIG_TASK_DELAY_ACCT */
#define KB_TS_ITER_HAVE_IO		(1U << 1)	/* CONFIG_TASK_XACCT */
#define KB_TS_ITER_HAVE_XACCT	(1U << 2)	/* memory integrals */
#define KB_TS_ITER_HAVE_MM		(1U << 3)	/* the task has an mm */

struct kb_ts_iter_record {
	__u32 pid;
	__u32 tgid;
	__u32 flags;
	char comm[KB_TS_ITER_COMM_LEN];
	__u64 utime_ns;
	__u64 stime_ns;
	__u64 sum_exec_runtime_ns;
	__u64 nvcsw;
	__u64 nivcsw;
	__u64 minflt;
	__u64 majflt;
	__u64 cpu_count;
	__u64 cpu_delay_total;
	__u64 blkio_count;
	__u64 blkio_delay_total;
	__u64 swapin_count;
	__u64 swapin_delay_total;
	__u64 freepages_count;
	__u64 freepages_delay_total;
	__u64 thrashing_count;
	__u64 thrashing_delay_total;
	__u64 compact_count;
	__u64 compact_delay_total;
	__u64 wpcopy_count;
	__u64 wpcopy_delay_total;
	__u64 irq_count;
	__u64 irq_delay_total;
	__u64 read_char;
	__u64 write_char;
	__u64 read_syscalls;
	__u64 write_syscalls;
	__u64 read_bytes;
	__u64 write_bytes;
	__u64 cancelled_write_bytes;
	__u64 acct_rss_mem1;
	__u64 acct_vm_mem1;
	__u64 hiwater_rss_pages;
	__u64 hiwater_vm_pages;
	__u64 total_vm_pages;
};

#endif /* KBENCH_TASKSTATS_ITER_H */
