/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What /proc says of a task: an independent source the tests compare
 * system calls against, formatted by procfs from the task itself.
 * Every parser takes a buffer, so that it can be tested and fuzzed
 * without a file.
 */
#ifndef KBENCH_PROC_H
#define KBENCH_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The fields of /proc/PID/stat that tests compare syscalls against. */
struct kb_proc_stat {
	int pid;
	char comm[64];
	char state;
	int ppid, pgrp, session;
	unsigned long long utime, stime;	/* clock ticks */
	long num_threads;
	unsigned long long start_time;		/* ticks after boot */
};

/*
 * Parse the text of a /proc/PID/stat file. comm may hold spaces and
 * parentheses: it ends at the last ')'. 0, or -EBADMSG when a field is
 * missing or malformed.
 */
int kb_proc_stat_parse(const char *text, struct kb_proc_stat *st);

/* Read and parse /proc/PID/stat (@pid 0: /proc/self/stat). 0 or -errno. */
int kb_proc_stat_read(pid_t pid, struct kb_proc_stat *st);

/*
 * Does /proc/PID/stat text @buf[0..@len) start with @pid? The check of
 * every procfs read that it read the right task.
 */
bool kb_proc_stat_is_pid(const char *buf, ssize_t len, pid_t pid);

/* What /proc/PID/stat and /proc/PID/status say of a task. */
struct kb_proc_task {
	struct kb_proc_stat stat;
	uint64_t nvcsw;		/* status: voluntary_ctxt_switches */
	uint64_t nivcsw;	/* status: nonvoluntary_ctxt_switches */
};

/*
 * Parse the text of /proc/PID/status (the context switch counts, zeroed
 * first) into @t. 0 or -EBADMSG (a count missing, malformed, or a text
 * longer than any real file).
 */
int kb_proc_status_parse(const char *buf, size_t len, struct kb_proc_task *t);

/* Read and parse both files of @pid. 0 or -errno. */
int kb_proc_task_read(pid_t pid, struct kb_proc_task *t);

/* Is @name in the comm text @buf[0..@len) (a /proc/PID/comm read)? */
bool kb_proc_comm_contains(const char *buf, ssize_t len, const char *name);

/*
 * Pids whose /proc/PID/comm contains @name (the seed's selection), in
 * ascending order. Returns the count (the array in *@pids, free() it) or
 * -errno.
 */
long kb_proc_find_by_comm(const char *name, pid_t **pids);

/* What bounds the number of processes we may create, and why. */
struct kb_proc_limits {
	long pid_max;		/* kernel.pid_max */
	long threads_max;	/* kernel.threads-max */
	long nr_threads;	/* threads in the system now (/proc/loadavg) */
	long nproc_soft;	/* RLIMIT_NPROC soft, -1 = unlimited */
	bool nproc_exempt;	/* root user or CAP_SYS_RESOURCE/ADMIN */
	long available;		/* children we can expect to create */
	const char *bound;	/* "pid_max", "threads-max", "RLIMIT_NPROC" */
};

/* Read the limits. Returns 0 or -errno. */
int kb_proc_limits(struct kb_proc_limits *lim);

/*
 * Threads in the system from the text of /proc/loadavg
 * ("0.00 0.01 0.05 RUNNABLE/TOTAL LASTPID"): TOTAL, or -1 if malformed.
 */
long kb_proc_loadavg_threads(const char *text);

#endif /* KBENCH_PROC_H */
