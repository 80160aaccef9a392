// SPDX-License-Identifier: GPL-2.0
/*
 * What /proc says of a task. See proc.h.
 */
#include "proc.h"
#include "file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kb_proc_stat_parse(const char *text, struct kb_proc_stat *st)
{
	const char *open = strchr(text, '('), *close = strrchr(text, ')');
	size_t len;
	char *end;
	int n;

	memset(st, 0, sizeof(*st));
	if (!open || !close || close < open)
		return -EBADMSG;
	errno = 0;
	st->pid = (int)strtol(text, &end, 10);
	if (end == text || end + 1 != open || *end != ' ' || errno)
		return -EBADMSG;
	len = (size_t)(close - open - 1);
	if (len >= sizeof(st->comm))
		len = sizeof(st->comm) - 1;
	memcpy(st->comm, open + 1, len);
	/*
	 * state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	 * cmajflt utime stime cutime cstime priority nice num_threads
	 * itrealvalue starttime
	 */
	n = sscanf(close + 1,
		   " %c %d %d %d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %ld %*d %llu",
		   &st->state, &st->ppid, &st->pgrp, &st->session, &st->utime,
		   &st->stime, &st->num_threads, &st->start_time);
	return n == 8 ? 0 : -EBADMSG;
}

int kb_proc_stat_read(pid_t pid, struct kb_proc_stat *st)
{
	char path[64], buf[1024];
	ssize_t n;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/stat");
	n = kb_file_read_all(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	return kb_proc_stat_parse(buf, st);
}
