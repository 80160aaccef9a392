// SPDX-License-Identifier: GPL-2.0
/*
 * Real-time scheduling helpers. See rtsched.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rtsched.h"
#include "env.h"
#include "file.h"
#include "results.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

int kb_cpus_allowed(int *cpus, int max)
{
	cpu_set_t set;
	int cpu, n = 0;

	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set))
		return -errno;
	for (cpu = 0; cpu < CPU_SETSIZE && n < max; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[n++] = cpu;
	return n ? n : -ESRCH;
}

int kb_cpu_index(const int *cpus, int n, int cpu)
{
	int i;

	for (i = 0; i < n; i++)
		if (cpus[i] == cpu)
			return i;
	return -1;
}

int kb_pin_self(int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return -EINVAL;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

int kb_fifo_prio_max(void)
{
	int max = sched_get_priority_max(SCHED_FIFO);

	return max > 0 ? max : 99;
}

bool kb_fifo_allowed(int prio, char *why, size_t len)
{
	struct rlimit rl;

	if (prio <= 0 || kb_env_have_cap(CAP_SYS_NICE))
		return true;
	if (!getrlimit(RLIMIT_RTPRIO, &rl) &&
	    (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= (rlim_t)prio))
		return true;
	snprintf(why, len,
		 "SCHED_FIFO priority %d needs CAP_SYS_NICE or RLIMIT_RTPRIO >= %d (this process has neither; RLIMIT_RTPRIO is %ld)",
		 prio, prio,
		 getrlimit(RLIMIT_RTPRIO, &rl) ? -1L : (long)rl.rlim_cur);
	return false;
}

int kb_set_prio_self(int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	int err;

	err = pthread_setschedparam(pthread_self(),
				    prio > 0 ? SCHED_FIFO : SCHED_OTHER, &sp);
	return -err;
}

int kb_mlockall(char *why, size_t len)
{
	struct rlimit rl;

	if (!kb_env_have_cap(CAP_IPC_LOCK) &&
	    (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur != RLIM_INFINITY)) {
		snprintf(why, len,
			 "memory not locked: no CAP_IPC_LOCK and RLIMIT_MEMLOCK is limited (page faults may add latency)");
		return -EPERM;
	}
	if (mlockall(MCL_CURRENT | MCL_FUTURE)) {
		int err = errno;

		snprintf(why, len, "mlockall: %s", strerror(err));
		return -err;
	}
	return 0;
}

void kb_placement_describe(const struct kb_placement *p, char *buf,
			   size_t len)
{
	if (p->pinned)
		snprintf(buf, len, "pinned: parent cpu %d, child cpu %d",
			 p->parent_cpu, p->child_cpu);
	else
		snprintf(buf, len, "scheduler%s%s", p->why[0] ? ": " : "",
			 p->why);
}

void kb_placement_setup(struct kb_placement *p, bool no_pin, bool child_apart)
{
	int cpus[CPU_SETSIZE], n, err;

	memset(p, 0, sizeof(*p));
	p->parent_cpu = p->child_cpu = -1;
	if (no_pin) {
		snprintf(p->why, sizeof(p->why), "--no-pin");
	} else {
		n = kb_cpus_allowed(cpus, CPU_SETSIZE);
		err = n < 0 ? n : kb_pin_self(cpus[n - 1]);
		if (err) {
			snprintf(p->why, sizeof(p->why), "cannot pin: %s",
				 strerror(-err));
		} else {
			p->pinned = true;
			p->parent_cpu = cpus[n - 1];
			p->child_cpu = child_apart && n > 1 ? cpus[n - 2] :
							      p->parent_cpu;
		}
	}
	kb_results_param_str("placement", p->pinned ? "pinned" : "scheduler");
	kb_results_param_num("parent_cpu", p->parent_cpu);
	kb_results_param_num("child_cpu", p->child_cpu);
}

int kb_placement_child(const struct kb_placement *p)
{
	if (!p->pinned || p->child_cpu == p->parent_cpu)
		return 0;
	return kb_pin_self(p->child_cpu);
}

bool kb_kernel_realtime(void)
{
	long v;

	return !kb_file_read_long("/sys/kernel/realtime", &v) && v == 1;
}
