/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kbench child processes: spawn N idle children ("sleepers") that die
 * with their parent (PR_SET_PDEATHSIG), and kill and reap them all at
 * exit, on SIGINT/SIGTERM (through the kbench cleanup stack) or on demand.
 */
#ifndef KBENCH_CHILDREN_H
#define KBENCH_CHILDREN_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Zero-initialise before use. */
struct kb_children {
	pid_t *pids;
	size_t n;		/* children alive (spawned, not yet reaped) */
	size_t cap;
	bool registered;	/* on the kbench cleanup stack */
	int cleanup;		/* its kb_cleanup_push() handle */
};

/*
 * Fork @n children that set their comm to @comm (15 characters at most,
 * NULL keeps ours), arm PR_SET_PDEATHSIG(SIGKILL) and pause until killed.
 * They are registered for cleanup on the first call. Returns 0, or -errno
 * of the fork that failed: the children created so far stay in @c.
 */
int kb_children_spawn(struct kb_children *c, size_t n, const char *comm);

/*
 * Fork one child running @fn(@arg) that exits with its return value; it
 * dies with us. It is tracked in @c. Returns its pid or -errno.
 */
pid_t kb_children_fork(struct kb_children *c, int (*fn)(void *arg),
		       void *arg);

/* Forget @pid after the caller reaped it itself. */
void kb_children_forget(struct kb_children *c, pid_t pid);

/* SIGKILL and reap every child (async-signal-safe). */
void kb_children_kill_all(struct kb_children *c);

/* Kill, reap, drop the cleanup handler and free. */
void kb_children_release(struct kb_children *c);

/* True when no child of ours, living or zombie, is left. */
bool kb_children_none_left(void);

#endif /* KBENCH_CHILDREN_H */
