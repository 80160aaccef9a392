/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sysctl and other procfs/sysfs knobs a test changes: the old value is
 * written back by the cleanup stack, also after a signal.
 */
#ifndef KBENCH_KNOB_H
#define KBENCH_KNOB_H

/*
 * Write @value to the procfs/sysfs file @path after saving its old
 * contents; the old value is written back by the cleanup handlers.
 * Returns 0 or -errno (the file is left untouched on failure).
 */
int kb_knob_set(const char *path, const char *value);

#endif /* KBENCH_KNOB_H */
