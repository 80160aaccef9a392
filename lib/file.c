// SPDX-License-Identifier: GPL-2.0
/*
 * Small files. See file.h.
 */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ssize_t kb_file_read_all(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while (len + 1 < size) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		len += n;
	}
	/* A full buffer: anything left means the file did not fit. */
	if (len + 1 >= size) {
		char probe;

		if (read(fd, &probe, 1) > 0) {
			close(fd);
			return -EFBIG;
		}
	}
	close(fd);
	buf[len] = '\0';
	return len;
}

int kb_file_read(const char *path, char *buf, size_t size)
{
	ssize_t n = kb_file_read_all(path, buf, size);

	if (n < 0)
		return n;
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return 0;
}

int kb_file_read_long(const char *path, long *val)
{
	char buf[64], *end;
	int err = kb_file_read(path, buf, sizeof(buf));

	if (err)
		return err;
	errno = 0;
	*val = strtol(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	return 0;
}

/* Signal-safe: used by cleanup handlers too. */
int kb_file_write_str(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(text);
	ssize_t n;
	int err = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	close(fd);
	return err;
}
