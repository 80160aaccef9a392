// SPDX-License-Identifier: GPL-2.0
/*
 * What /proc says of a task. See proc.h.
 */
#include "proc.h"
#include "file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/*
 * Within @len only: a read that filled the buffer leaves no NUL behind
 * the text, so strtol() could run on past its end.
 */
bool kb_proc_stat_is_pid(const char *buf, ssize_t len, pid_t pid)
{
	long long v = 0;
	ssize_t i;

	for (i = 0; i < len && buf[i] >= '0' && buf[i] <= '9'; i++) {
		v = v * 10 + (buf[i] - '0');
		if (v > INT_MAX)
			return false;
	}
	return i > 0 && i < len && buf[i] == ' ' && v == pid;
}

/* The value of "@key:\t<number>" in /proc/PID/status text, or -ENOENT. */
static int status_field(const char *text, const char *key, uint64_t *val)
{
	size_t klen = strlen(key);
	const char *line = text;
	unsigned long long v;

	while (line && *line) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			if (sscanf(line + klen + 1, " %llu", &v) != 1)
				return -EBADMSG;
			*val = v;
			return 0;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -ENOENT;
}

int kb_proc_status_parse(const char *buf, size_t len, struct kb_proc_task *t)
{
	char text[4096];
	int err;

	if (!len || len >= sizeof(text))
		return -EBADMSG;
	memcpy(text, buf, len);
	text[len] = '\0';
	err = status_field(text, "voluntary_ctxt_switches", &t->nvcsw);
	if (!err)
		err = status_field(text, "nonvoluntary_ctxt_switches",
				   &t->nivcsw);
	return err == -ENOENT ? -EBADMSG : err;
}

int kb_proc_task_read(pid_t pid, struct kb_proc_task *t)
{
	char path[64], buf[4096];
	ssize_t len;
	int err;

	memset(t, 0, sizeof(*t));
	err = kb_proc_stat_read(pid, &t->stat);
	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	len = kb_file_read_all(path, buf, sizeof(buf));
	if (len < 0)
		return len;
	return kb_proc_status_parse(buf, len, t);
}

bool kb_proc_comm_contains(const char *buf, ssize_t len, const char *name)
{
	char comm[64];
	size_t n;

	if (len <= 0)
		return false;
	n = (size_t)len < sizeof(comm) - 1 ? (size_t)len : sizeof(comm) - 1;
	memcpy(comm, buf, n);
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	return strstr(comm, name) != NULL;
}

static bool comm_contains(int procfd, const char *pid, const char *name)
{
	char path[300], comm[64];
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "%s/comm", pid);
	fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	len = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	return kb_proc_comm_contains(comm, len, name);
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

long kb_proc_find_by_comm(const char *name, pid_t **pids)
{
	DIR *d = opendir("/proc");
	size_t n = 0, cap = 0;
	struct dirent *de;
	pid_t *v = NULL, *p;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
		    !comm_contains(dirfd(d), de->d_name, name))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			p = realloc(v, cap * sizeof(*v));
			if (!p) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = p;
		}
		v[n++] = atoi(de->d_name);
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), cmp_pid);
	*pids = v;
	return n;
}
