/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small (pseudo) files: procfs, sysfs, cgroupfs. kb_file_write_str() is
 * async-signal-safe, for cleanup handlers.
 */
#ifndef KBENCH_FILE_H
#define KBENCH_FILE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Read a whole (pseudo) file into @buf (NUL terminated). Returns the
 * length, or -errno; -EFBIG when it does not fit.
 */
ssize_t kb_file_read_all(const char *path, char *buf, size_t size);

/* Read a small file, trailing newlines removed. 0 or -errno. */
int kb_file_read(const char *path, char *buf, size_t size);

/* Read a file holding one integer. 0 or -errno. */
int kb_file_read_long(const char *path, long *val);

/* Write @text to @path in one write(). 0 or -errno. */
int kb_file_write_str(const char *path, const char *text);

#endif /* KBENCH_FILE_H */
