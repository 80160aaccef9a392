/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cleanup stack: what a program created (children, IPC objects,
 * cgroups, sysctl values) is undone at exit and on SIGINT, SIGTERM,
 * SIGHUP and SIGQUIT.
 */
#ifndef KBENCH_CLEANUP_H
#define KBENCH_CLEANUP_H

#include <stdbool.h>

/*
 * Run the pending handlers at exit and on the cleanup signals (each
 * handler then dies by its signal). Once per process; kb_init() and
 * kb_cleanup_push() call it.
 */
void kb_cleanup_install(void);

/*
 * Register @fn(@arg) to run at exit and on the cleanup signals, newest
 * first, each at most once. Handlers run in signal context: keep them to
 * syscalls (kill, waitpid, unlink, rmdir, msgctl, write).
 * Returns a handle for kb_cleanup_pop() or -1 when the table is full.
 */
int kb_cleanup_push(void (*fn)(void *arg), void *arg);

/* Run (@run) or drop the handler @handle now. */
void kb_cleanup_pop(int handle, bool run);

/* Run every pending handler (also called at exit). */
void kb_cleanup_run_all(void);

/* Block / unblock the cleanup signals around a create-then-remove window. */
void kb_cleanup_block_signals(void);
void kb_cleanup_unblock_signals(void);

#endif /* KBENCH_CLEANUP_H */
