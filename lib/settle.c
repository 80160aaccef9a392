// SPDX-License-Identifier: GPL-2.0
/*
 * The exact guest's settling between tests (settle.h).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

void kb_settle(void)
{
	struct timespec idle = { .tv_sec = 1 };

	if (!kb_settle_wanted())
		return;
	sync();
	/* Best effort: a guest without them (or without root) still runs. */
	kb_file_write_str("/proc/sys/vm/drop_caches", "3");
	kb_file_write_str("/proc/sys/vm/compact_memory", "1");
	while (nanosleep(&idle, &idle))
		;
}

static bool fifo_wanted(void)
{
	const char *v = getenv("KBENCH_ICOUNT_FIFO");

	return kb_env_icount_shift() >= 0 && v && !strcmp(v, "1");
}

enum kb_settle_fifo kb_settle_fifo_begin(char *why, size_t len)
{
	static bool told;
	struct sched_param sp = { .sched_priority = 1 };
	int err;

	if (!fifo_wanted())
		return KB_SETTLE_FIFO_OFF;
	fifo_saved_policy = sched_getscheduler(0);
	if (fifo_saved_policy >= 0 && !sched_getparam(0, &fifo_saved_param) &&
	    !sched_setscheduler(0, SCHED_FIFO, &sp))
		return KB_SETTLE_FIFO_ON;
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
