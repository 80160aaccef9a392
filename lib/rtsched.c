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

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

int kb_rtsched_cpus_allowed(int *cpus, int max)
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

int kb_rtsched_cpu_index(const int *cpus, int n, int cpu)
{
	int i;

	for (i = 0; i < n; i++)
		if (cpus[i] == cpu)
			return i;
	return -1;
}

int kb_rtsched_pin_self(int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return -EINVAL;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

int kb_rtsched_fifo_prio_max(void)
{
	int max = sched_get_priority_max(SCHED_FIFO);

	return max > 0 ? max : 99;
}

bool kb_rtsched_fifo_allowed(int prio, char *why, size_t len)
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

int kb_rtsched_set_prio_self(int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	int err;

	err = pthread_setschedparam(pthread_self(),
				    prio > 0 ? SCHED_FIFO : SCHED_OTHER, &sp);
	return -err;
}

int kb_rtsched_mlockall(char *why, size_t len)
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

bool kb_rtsched_kernel_realtime(void)
{
	long v;

	return !kb_file_read_long("/sys/kernel/realtime", &v) && v == 1;
}
