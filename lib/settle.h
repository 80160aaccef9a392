/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exact guest's settling between tests: under QEMU's instruction
 * counter a row's instructions depend on what the kernel still has to do
 * from the rows before it (deferred frees, RCU callbacks, dirty pages,
 * caches), and on when that work lands. Before each test, when the VM
 * runner asks for it (KBENCH_ICOUNT_SETTLE=1 beside KBENCH_ICOUNT), the
 * kernel is brought to the same state: dirty data written, clean caches
 * dropped, memory compacted, and an idle second in which the deferred
 * work runs (with QEMU's sleep=off an idle second costs no host time).
 */
#ifndef KBENCH_SETTLE_H
#define KBENCH_SETTLE_H

#include <stdbool.h>
#include <stddef.h>

/* Whether the run asked for settling (exact mode and KBENCH_ICOUNT_SETTLE=1). */
bool kb_settle_wanted(void);

/* Settle the kernel when the run asked for it; a no-op otherwise. */
void kb_settle(void);

/*
 * Before each batch of a row whose operations leave deferred work behind
 * (the RCU callbacks that free what IPC_RMID removed), when the run
 * settles: idle until that work has run, then wake a little after a timer
 * tick. Every batch then starts from the same RCU and slab state, and
 * none of the work of the batch before it runs inside it (settle.c). A
 * no-op otherwise. Outside the timed region: it idles 10 to 30 ms.
 */
void kb_settle_batch(void);

/*
 * The exact guest's scheduling of process-creation loops. At SCHED_OTHER a
 * creation's instructions depend on where the fair class's tree of
 * runnable tasks and its load tracking (PELT) stand, which follow virtual
 * time: each row's creations fall into several exact counts 2 to 130
 * instructions apart, none holding half of them. At SCHED_FIFO 1 (the
 * creating process and, inherited, its children) those paths leave the
 * loop and one count holds most creations. The kernel under test then
 * runs its RT class's enqueue, wake-up and pick paths instead of the
 * fair class's. Two idle SCHED_OTHER children of the program wait
 * runnable beside each loop, so that the RT class's paths do not depend on
 * how many of the kernel's own threads the loop keeps waiting (settle.c).
 * Asked for with KBENCH_ICOUNT_FIFO=1 beside KBENCH_ICOUNT.
 */
enum kb_settle_fifo {
	KB_SETTLE_FIFO_OFF,	/* not asked for: the program's policy */
	KB_SETTLE_FIFO_ON,	/* SCHED_FIFO 1 until kb_settle_fifo_end() */
	KB_SETTLE_FIFO_DENIED,	/* asked for, not allowed: as before */
};

/*
 * Put the calling process at SCHED_FIFO 1 when the run asks for it, after
 * an idle second when it also settles (the deferred work of the loops
 * before, RCU's callbacks, done first). On DENIED, @why says why (the
 * first time it is also printed as a KTAP diagnostic).
 */
enum kb_settle_fifo kb_settle_fifo_begin(char *why, size_t len);

/*
 * When the run asks for SCHED_FIFO 1, fork now the two idle children that
 * kb_settle_fifo_begin() makes runnable beside each loop (settle.c says
 * why); it forks them at its first call otherwise. Early, while the
 * process is small: they share its pages until it writes them.
 */
void kb_settle_fifo_prepare(void);

/* Back to the policy before kb_settle_fifo_begin() returned ON. */
void kb_settle_fifo_end(enum kb_settle_fifo state);

#endif /* KBENCH_SETTLE_H */
