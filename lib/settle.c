// SPDX-License-Identifier: GPL-2.0
/*
 * The exact guest's settling between tests (settle.h).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "env.h"
#include "file.h"
#include "settle.h"

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
