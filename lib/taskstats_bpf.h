/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kbench taskstats by BPF task iterator (taskstats/taskstats_iter.bpf.c):
 * one read() loop walks every task, the kernel keeps those whose comm
 * contains a string and emits their figures, decoded as struct
 * kb_ts_stats (taskstats.h). Used by the bpf_iter method
 * (taskstats_method.c) and by taskstats' bpf_iter_matches_netlink check.
 */
#ifndef KBENCH_TASKSTATS_BPF_H
#define KBENCH_TASKSTATS_BPF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "taskstats.h"

struct kb_ts_bpf;

/*
 * Open, load and attach the iterator for tasks whose comm contains
 * @comm ("" for every task). *@load_ns: what that took (the first-load
 * cost, apart from any pass). NULL with *@err = -errno and a reason in
 * @why when it cannot run here.
 */
struct kb_ts_bpf *kb_ts_bpf_open(const char *comm, uint64_t *load_ns, int *err,
				 char *why, size_t whylen);
void kb_ts_bpf_free(struct kb_ts_bpf *b);

/* One pass. Returns the number of tasks emitted, or -errno. */
long kb_ts_bpf_pass(struct kb_ts_bpf *b);

/*
 * Task @i of the last pass as taskstats would report it (units of
 * struct taskstats: us, KiB, MiB-us).
 */
void kb_ts_bpf_get(const struct kb_ts_bpf *b, long i, struct kb_ts_stats *ts);

#endif /* KBENCH_TASKSTATS_BPF_H */
