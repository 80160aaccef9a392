// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/rtsched.c on the running system: the allowed CPU
 * list, pinning, the SCHED_FIFO permission check against what the kernel
 * really allows, memory locking. Privileged parts skip without privilege.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <sys/resource.h>

#include "ktap.h"
#include "placement.h"
#include "rtsched.h"

static int cpus[4096];
static int ncpus;

static void test_cpus_allowed(void)
{
	cpu_set_t set;
	int i;
	bool ok;

	ncpus = kb_rtsched_cpus_allowed(cpus, 4096);
	sched_getaffinity(0, sizeof(set), &set);
	ok = ncpus == CPU_COUNT(&set);
	for (i = 0; ok && i < ncpus; i++)
		ok = CPU_ISSET(cpus[i], &set) && (!i || cpus[i] > cpus[i - 1]) &&
		     kb_rtsched_cpu_index(cpus, ncpus, cpus[i]) == i;
	ok &= kb_rtsched_cpu_index(cpus, ncpus, -1) == -1;
	ksft_print_msg("allowed CPUs: %d\n", ncpus);
	kb_ktap_result(ok, "cpus_allowed", "list differs from sched_getaffinity");
}

static void *pin_thread(void *arg)
{
	int cpu = *(int *)arg;

	if (kb_rtsched_pin_self(cpu))
		return (void *)1;
	sched_yield();
	return (void *)(long)(sched_getcpu() != cpu);
}

static void test_pin(void)
{
	int cpu = cpus[ncpus - 1];
	pthread_t t;
	void *ret = (void *)1;

	if (!pthread_create(&t, NULL, pin_thread, &cpu))
		pthread_join(t, &ret);
	kb_ktap_result(!ret && kb_rtsched_pin_self(-1) == -EINVAL, "pin_self",
		       "thread not on the CPU it was pinned to");
}

static void *fifo_thread(void *arg)
{
	return (void *)(long)kb_rtsched_set_prio_self(*(int *)arg);
}

/* kb_rtsched_fifo_allowed() must agree with what the kernel does. */
static void test_fifo(void)
{
	int prio = 1;
	char why[256] = "";
	bool allowed = kb_rtsched_fifo_allowed(prio, why, sizeof(why));
	pthread_t t;
	void *ret = (void *)-1;

	if (!kb_rtsched_fifo_allowed(0, why, sizeof(why))) {
		kb_ktap_fail("fifo_allowed", "priority 0 must always be allowed");
		return;
	}
	if (pthread_create(&t, NULL, fifo_thread, &prio)) {
		kb_ktap_fail("fifo_allowed", "pthread_create failed");
		return;
	}
	pthread_join(t, &ret);
	ksft_print_msg("SCHED_FIFO %d allowed: %s, kernel says: %s\n", prio,
		       allowed ? "yes" : why, ret ? strerror(-(long)ret) : "ok");
	if (allowed && ret == (void *)(long)-EPERM)
		kb_ktap_skip("fifo_allowed", "privileged, but RT group scheduling gives no runtime");
	else
		kb_ktap_result(allowed == !ret && kb_rtsched_fifo_prio_max() >= 1,
			       "fifo_allowed", "check disagrees with the kernel");
}

static void test_mlockall(void)
{
	char why[256] = "";
	int err = kb_rtsched_mlockall(why, sizeof(why));

	if (err) {
		kb_ktap_skip("mlockall", why);
		return;
	}
	munlockall();
	kb_ktap_pass("mlockall");
}

/* Pinned by default to the last allowed CPU; --no-pin leaves it alone. */
static void test_placement(void)
{
	struct kb_placement p, free_p;
	cpu_set_t before, after;
	char desc[160];
	bool ok;

	sched_getaffinity(0, sizeof(before), &before);
	kb_placement_setup(&p, false);
	sched_getaffinity(0, sizeof(after), &after);
	ok = p.pinned && p.parent_cpu == cpus[ncpus - 1] &&
	     CPU_COUNT(&after) == 1 && CPU_ISSET(p.parent_cpu, &after) &&
	     p.child_cpu == p.parent_cpu;
	kb_placement_describe(&p, desc, sizeof(desc));
	ksft_print_msg("placement: %s\n", desc);
	sched_setaffinity(0, sizeof(before), &before);
	kb_placement_setup(&free_p, true);
	sched_getaffinity(0, sizeof(after), &after);
	ok &= !free_p.pinned && free_p.parent_cpu == -1 &&
	      free_p.child_cpu == -1 && CPU_EQUAL(&before, &after);
	kb_ktap_result(ok, "placement", "pinning did not match the allowed CPUs or --no-pin moved us");
}

int main(void)
{
	ksft_print_header();
	ksft_set_plan(5);
	test_cpus_allowed();
	test_pin();
	test_fifo();
	test_mlockall();
	test_placement();
	ksft_print_msg("kernel realtime: %d\n", kb_rtsched_kernel_realtime());
	ksft_finished();
}
