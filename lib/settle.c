// SPDX-License-Identifier: GPL-2.0
/*
 * The exact guest's settling between tests (settle.h).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "children.h"
#include "env.h"
#include "file.h"
#include "settle.h"

/* The policy kb_settle_fifo_begin() found, restored at the end. */
static int fifo_saved_policy;
static struct sched_param fifo_saved_param;

bool kb_settle_wanted(void)
{
	const char *v = getenv("KBENCH_ICOUNT_SETTLE");

	return kb_env_icount_shift() >= 0 && v && !strcmp(v, "1");
}

/* An idle second, in which the kernel's deferred work runs. */
static void idle_second(void)
{
	struct timespec idle = { .tv_sec = 1 };

	while (nanosleep(&idle, &idle))
		;
}

void kb_settle(void)
{
	if (!kb_settle_wanted())
		return;
	sync();
	/* Best effort: a guest without them (or without root) still runs. */
	kb_file_write_str("/proc/sys/vm/drop_caches", "3");
	kb_file_write_str("/proc/sys/vm/compact_memory", "1");
	idle_second();
}

/*
 * kb_settle_batch()'s idle: with one CPU, RCU ends a grace period and runs
 * its callbacks within a few ticks of idle (2026-11-28, the patched test
 * kernel, HZ 1000: after 10 ms and more, no callback of msgget_ctl's
 * batch before ran in any of its batches). The wake-up then falls a little
 * after a multiple of TICK_GRID_NS, which is a tick's place at HZ 100, 250
 * and 1000 (the kernel aligns its ticks to multiples of their period): a
 * batch shorter than the rest of the tick's period holds no tick.
 */
#define BATCH_IDLE_NS	(10 * 1000 * 1000LL)
#define TICK_GRID_NS	(20 * 1000 * 1000LL)
#define TICK_AFTER_NS	(50 * 1000LL)
#define NS_PER_SEC	(1000 * 1000 * 1000LL)

void kb_settle_batch(void)
{
	struct timespec ts;
	long long at;

	if (!kb_settle_wanted() || clock_gettime(CLOCK_MONOTONIC, &ts))
		return;
	at = ts.tv_sec * NS_PER_SEC + ts.tv_nsec + BATCH_IDLE_NS;
	at += TICK_GRID_NS - at % TICK_GRID_NS + TICK_AFTER_NS;
	ts.tv_sec = at / NS_PER_SEC;
	ts.tv_nsec = at % NS_PER_SEC;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

static bool fifo_wanted(void)
{
	const char *v = getenv("KBENCH_ICOUNT_FIFO");

	return kb_env_icount_shift() >= 0 && v && !strcmp(v, "1");
}

/*
 * A loop at SCHED_FIFO keeps every SCHED_OTHER task on its CPU waiting:
 * a kernel thread woken inside it (RCU's, a kworker) waits until it ends.
 * While fewer than two wait, the RT class's enqueue and dequeue take
 * another branch of add_nr_running() (its root domain's overload check),
 * 16 or 24 instructions more a creation, and how many wait depends on
 * the kernel's own wake-ups, which moved from boot to boot. Two idle
 * children of ours, continued at each loop's start (they stop themselves
 * again when they next run), keep at least two waiting throughout.
 */
#define FIFO_WAITERS 2

static struct kb_children fifo_waiters;

static int waiter_main(void *arg)
{
	(void)arg;
	for (;;)
		raise(SIGSTOP);
	return 0;
}

/*
 * Forked at our own policy (they inherit it), once. Best effort: without
 * them the creations still run at SCHED_FIFO 1.
 */
static void fifo_waiters_spawn(void)
{
	while (fifo_waiters.n < FIFO_WAITERS &&
	       kb_children_fork(&fifo_waiters, waiter_main, NULL) > 0)
		;
}

void kb_settle_fifo_prepare(void)
{
	if (fifo_wanted())
		fifo_waiters_spawn();
}

static void fifo_waiters_wake(void)
{
	size_t i;

	for (i = 0; i < fifo_waiters.n; i++)
		kill(fifo_waiters.pids[i], SIGCONT);
}

enum kb_settle_fifo kb_settle_fifo_begin(char *why, size_t len)
{
	static bool told;
	struct sched_param sp = { .sched_priority = 1 };
	int err;

	if (!fifo_wanted())
		return KB_SETTLE_FIFO_OFF;
	fifo_waiters_spawn();
	/*
	 * Each loop from the same state: the RCU callbacks the loops before
	 * left run first (the forks of a large parent queue thousands; past
	 * 10,000 waiting, call_rcu() takes a slower path in every creation).
	 */
	if (kb_settle_wanted())
		idle_second();
	fifo_saved_policy = sched_getscheduler(0);
	if (fifo_saved_policy >= 0 && !sched_getparam(0, &fifo_saved_param) &&
	    !sched_setscheduler(0, SCHED_FIFO, &sp)) {
		fifo_waiters_wake();
		return KB_SETTLE_FIFO_ON;
	}
	err = errno;
	snprintf(why, len, "SCHED_FIFO 1 not applied: %s%s", strerror(err),
		 err == EPERM ? " (needs CAP_SYS_NICE or RLIMIT_RTPRIO >= 1)" : "");
	if (!told)
		printf("# %s: the creations run at the program's policy\n",
		       why);
	told = true;
	return KB_SETTLE_FIFO_DENIED;
}

void kb_settle_fifo_end(enum kb_settle_fifo state)
{
	if (state == KB_SETTLE_FIFO_ON)
		sched_setscheduler(0, fifo_saved_policy, &fifo_saved_param);
}
