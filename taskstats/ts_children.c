// SPDX-License-Identifier: GPL-2.0
/*
 * taskstats: the children it makes: the N sleepers the passes query and
 * the helpers of the checks (at rest, exited, reaped), each dying with us.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ts_test.h"

/* ---- small helpers --------------------------------------------------- */

void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

void burn_cpu_ms(long ms)
{
	uint64_t end = thread_cpu_ns() + (uint64_t)ms * 1000000ull;

	while (thread_cpu_ns() < end)
		;
}

/* Kill and reap one helper child. */
void end_helper(struct ctx *c, pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	kb_children_forget(&c->helpers, pid);
}

/* Read one byte a child sends when it is ready, within 30 s. 0 or -errno. */
int wait_ready(int fd, void *buf, size_t size)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	if (poll(&pfd, 1, 30000) <= 0)
		return -ETIMEDOUT;
	return read(fd, buf, size) == (ssize_t)size ? 0 : -EIO;
}

/*
 * Wait until task @tid sleeps ('S' in /proc/TID/stat), so that its
 * counters hold still while two sources read them. 0 or -errno.
 */
int wait_at_rest(pid_t tid, struct kb_proc_task *p)
{
	int tries, err = 0;

	for (tries = 0; tries < 200; tries++) {
		err = kb_proc_task_read(tid, p);
		if (err || p->stat.state == 'S')
			return err;
		sleep_ms(10);
	}
	return -ETIMEDOUT;
}

int rest_child(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

static int reaped_child(void *arg)
{
	(void)arg;
	return 0;
}

/* A pid that belonged to a child we reaped: nobody has it now. */
pid_t dead_pid(struct ctx *c)
{
	pid_t pid = kb_children_fork(&c->helpers, reaped_child, NULL);

	if (pid > 0) {
		waitpid(pid, NULL, 0);
		kb_children_forget(&c->helpers, pid);
	}
	return pid;
}

/* Last: every child we made is gone once we kill and reap them. */
int test_children_reaped(void *arg, char *why, size_t len)
{
	struct ctx *c = arg;

	kb_children_release(&c->sleepers);
	kb_children_release(&c->helpers);
	if (kb_children_none_left())
		return KSFT_PASS;
	snprintf(why, len, "a child is left after killing and reaping all of them");
	return KSFT_FAIL;
}
