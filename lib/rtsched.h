/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Real-time scheduling helpers for latency tests: the CPUs we may run on,
 * pinning the calling thread, SCHED_FIFO priorities (checked against
 * CAP_SYS_NICE and RLIMIT_RTPRIO before anything is changed), memory
 * locking and whether the kernel is PREEMPT_RT. Where a program and its
 * children run by default is placement.h's.
 */
#ifndef KBENCH_RTSCHED_H
#define KBENCH_RTSCHED_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The CPUs in this thread's affinity mask, ascending, at most @max of
 * them. Returns how many (>= 1), or -errno.
 */
int kb_rtsched_cpus_allowed(int *cpus, int max);

/* Index of @cpu in cpus[0..n-1], or -1. */
int kb_rtsched_cpu_index(const int *cpus, int n, int cpu);

/* Pin the calling thread to @cpu. 0 or -errno. */
int kb_rtsched_pin_self(int cpu);

/* The highest SCHED_FIFO priority (99 on Linux). */
int kb_rtsched_fifo_prio_max(void);

/*
 * Whether this process may use SCHED_FIFO at @prio: it has CAP_SYS_NICE
 * or RLIMIT_RTPRIO allows @prio. prio 0 (SCHED_OTHER) is always allowed.
 * On false, @why says what is missing.
 */
bool kb_rtsched_fifo_allowed(int prio, char *why, size_t len);

/*
 * Set the calling thread to SCHED_FIFO at @prio, or SCHED_OTHER for 0.
 * 0 or -errno (EPERM also when RT group scheduling gives the cgroup no
 * runtime).
 */
int kb_rtsched_set_prio_self(int prio);

/*
 * mlockall(MCL_CURRENT | MCL_FUTURE) when it cannot make later
 * allocations fail: with CAP_IPC_LOCK or an unlimited RLIMIT_MEMLOCK.
 * Returns 0 when memory is locked, otherwise -errno with @why filled.
 */
int kb_rtsched_mlockall(char *why, size_t len);

/* /sys/kernel/realtime reads 1 (a PREEMPT_RT kernel). */
bool kb_rtsched_kernel_realtime(void);

#endif /* KBENCH_RTSCHED_H */
