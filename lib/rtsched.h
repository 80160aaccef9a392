/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Real-time scheduling helpers for latency tests: the CPUs we may run on,
 * pinning the calling thread, SCHED_FIFO priorities (checked against
 * CAP_SYS_NICE and RLIMIT_RTPRIO before anything is changed), memory
 * locking and whether the kernel is PREEMPT_RT.
 */
#ifndef KBENCH_RTSCHED_H
#define KBENCH_RTSCHED_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The CPUs in this thread's affinity mask, ascending, at most @max of
 * them. Returns how many (>= 1), or -errno.
 */
int kb_cpus_allowed(int *cpus, int max);

/* Index of @cpu in cpus[0..n-1], or -1. */
int kb_cpu_index(const int *cpus, int n, int cpu);

/* Pin the calling thread to @cpu. 0 or -errno. */
int kb_pin_self(int cpu);

/* The highest SCHED_FIFO priority (99 on Linux). */
int kb_fifo_prio_max(void);

/*
 * Whether this process may use SCHED_FIFO at @prio: it has CAP_SYS_NICE
 * or RLIMIT_RTPRIO allows @prio. prio 0 (SCHED_OTHER) is always allowed.
 * On false, @why says what is missing.
 */
bool kb_fifo_allowed(int prio, char *why, size_t len);

/*
 * Set the calling thread to SCHED_FIFO at @prio, or SCHED_OTHER for 0.
 * 0 or -errno (EPERM also when RT group scheduling gives the cgroup no
 * runtime).
 */
int kb_set_prio_self(int prio);

/*
 * mlockall(MCL_CURRENT | MCL_FUTURE) when it cannot make later
 * allocations fail: with CAP_IPC_LOCK or an unlimited RLIMIT_MEMLOCK.
 * Returns 0 when memory is locked, otherwise -errno with @why filled.
 */
int kb_mlockall(char *why, size_t len);

/*
 * Where a measuring process and the processes it creates or talks to run.
 * A wake-up across CPUs costs an IPI, expensive in a VM, and a child the
 * scheduler puts on another CPU for some samples and not for others
 * spreads a row between runs; so programs pin by default and --no-pin
 * leaves placement to the scheduler. The choice goes into the JSON params
 * ("placement", "parent_cpu", "child_cpu").
 */
struct kb_placement {
	bool pinned;
	int parent_cpu;		/* -1 when not pinned */
	int child_cpu;		/* -1 when not pinned; may equal parent_cpu */
	char why[128];		/* why pinning was not done, or "" */
};

/*
 * Unless @no_pin, pin the calling thread to the last CPU it may run on
 * (CPU 0 usually takes most device interrupts). Children inherit it;
 * with @child_apart and a second allowed CPU, child_cpu is the one before
 * it, for kb_placement_child(). A refused pin falls back to the scheduler
 * and says why in p->why. Records the placement in the JSON params.
 */
void kb_placement_setup(struct kb_placement *p, bool no_pin, bool child_apart);

/* In a child or partner thread: move to p->child_cpu. 0 or -errno. */
int kb_placement_child(const struct kb_placement *p);

/* One line for a diagnostic: "pinned: parent cpu 1, child cpu 1". */
void kb_placement_describe(const struct kb_placement *p, char *buf,
			   size_t len);

/* /sys/kernel/realtime reads 1 (a PREEMPT_RT kernel). */
bool kb_kernel_realtime(void);

#endif /* KBENCH_RTSCHED_H */
