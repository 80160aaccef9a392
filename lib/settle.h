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

/* Whether the run asked for settling (exact mode and KBENCH_ICOUNT_SETTLE=1). */
bool kb_settle_wanted(void);

/* Settle the kernel when the run asked for it; a no-op otherwise. */
void kb_settle(void);

#endif /* KBENCH_SETTLE_H */
