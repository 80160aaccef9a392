// SPDX-License-Identifier: GPL-2.0
/*
 * What /proc says of a task. See proc.h.
 */
#include "proc.h"
#include "env.h"
#include "file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
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

	t->nvcsw = t->nivcsw = 0;
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

/* Headroom left for the rest of the system (shells, other tests). */
#define PROC_MARGIN	256

long kb_proc_loadavg_threads(const char *text)
{
	const char *slash = strchr(text, '/');
	char *end;
	long n;

	if (!slash)
		return -1;
	n = strtol(slash + 1, &end, 10);
	return end == slash + 1 || n < 0 ? -1 : n;
}

static long threads_now(void)
{
	char buf[128];

	if (kb_file_read("/proc/loadavg", buf, sizeof(buf)))
		return -1;
	return kb_proc_loadavg_threads(buf);
}

/* Processes owned by @uid: RLIMIT_NPROC counts them per real user. */
static long user_processes(uid_t uid)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	struct stat st;
	long count = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (!fstatat(dirfd(d), de->d_name, &st, 0) && st.st_uid == uid)
			count++;
	}
	closedir(d);
	return count;
}

static void bound_by(struct kb_proc_limits *lim, long avail, const char *why)
{
	if (lim->available < 0 || avail < lim->available) {
		lim->available = avail < 0 ? 0 : avail;
		lim->bound = why;
	}
}

int kb_proc_limits(struct kb_proc_limits *lim)
{
	struct rlimit rl;
	int err;

	memset(lim, 0, sizeof(*lim));
	lim->available = -1;
	err = kb_file_read_long("/proc/sys/kernel/pid_max", &lim->pid_max);
	if (!err)
		err = kb_file_read_long("/proc/sys/kernel/threads-max",
					&lim->threads_max);
	if (err)
		return err;
	lim->nr_threads = threads_now();
	if (getrlimit(RLIMIT_NPROC, &rl))
		return -errno;
	lim->nproc_soft = rl.rlim_cur == RLIM_INFINITY ? -1 : (long)rl.rlim_cur;
	/*
	 * fork() does not apply RLIMIT_NPROC to the root user (uid 0 is the
	 * kernel's INIT_USER) nor to CAP_SYS_RESOURCE or CAP_SYS_ADMIN.
	 */
	lim->nproc_exempt = getuid() == 0 ||
			    kb_env_have_cap(CAP_SYS_RESOURCE) ||
			    kb_env_have_cap(CAP_SYS_ADMIN);
	bound_by(lim, lim->pid_max - lim->nr_threads - PROC_MARGIN,
		 "kernel.pid_max");
	bound_by(lim, lim->threads_max - lim->nr_threads - PROC_MARGIN,
		 "kernel.threads-max");
	if (!lim->nproc_exempt && lim->nproc_soft >= 0)
		bound_by(lim, lim->nproc_soft - user_processes(getuid()) -
			 PROC_MARGIN / 4, "RLIMIT_NPROC");
	return 0;
}
