/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What /proc says of a task: an independent source the tests compare
 * system calls against, formatted by procfs from the task itself.
 * Every parser takes a buffer, so that it can be tested and fuzzed
 * without a file.
 */
#ifndef KBENCH_PROC_H
#define KBENCH_PROC_H

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

#endif /* KBENCH_PROC_H */
