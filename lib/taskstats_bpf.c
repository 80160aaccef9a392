// SPDX-License-Identifier: GPL-2.0
/*
 * kbench taskstats by BPF task iterator. See taskstats_bpf.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "taskstats_bpf.h"
#include "bpf_iter.h"
#include "clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>

#include "taskstats_iter.h"
#ifdef KBENCH_HAVE_BPF
#include <bpf/libbpf.h>
#include "taskstats_iter.skel.h"
#endif

struct kb_ts_bpf {
#ifdef KBENCH_HAVE_BPF
	struct taskstats_iter *skel;
	struct bpf_link *link;
#endif
	struct kb_bpf_iter_buf buf;
	long page_kib;
};

#ifdef KBENCH_HAVE_BPF

struct kb_ts_bpf *kb_ts_bpf_open(const char *comm, uint64_t *load_ns, int *err,
				 char *why, size_t whylen)
{
	struct kb_ts_bpf *b;
	uint64_t t0;
	size_t len = strlen(comm);

	*err = kb_bpf_iter_usable(why, whylen);
	if (*err)
		return NULL;
	if (len >= KB_TS_ITER_COMM_LEN) {
		*err = -EINVAL;
		snprintf(why, whylen, "comm filter '%s' longer than %d bytes",
			 comm, KB_TS_ITER_COMM_LEN - 1);
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		*err = -ENOMEM;
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	b->page_kib = sysconf(_SC_PAGESIZE) / 1024;
	kb_bpf_iter_quiet_libbpf();
	t0 = kb_clock_ns();
	b->skel = taskstats_iter__open();
	if (!b->skel) {
		*err = -errno;
		kb_bpf_iter_load_reason(*err, "opening the task iterator", why, whylen);
		goto fail;
	}
	memcpy((char *)b->skel->rodata->comm_filter, comm, len);
	b->skel->rodata->comm_filter_len = len;
	*err = taskstats_iter__load(b->skel);
	if (*err) {
		kb_bpf_iter_load_reason(*err, "loading the task iterator", why, whylen);
		goto fail;
	}
	b->link = bpf_program__attach_iter(b->skel->progs.dump_task, NULL);
	if (!b->link) {
		*err = -errno;
		kb_bpf_iter_load_reason(*err, "attaching the task iterator", why, whylen);
		goto fail;
	}
	*load_ns = kb_clock_ns() - t0;
	return b;
fail:
	kb_ts_bpf_free(b);
	return NULL;
}

void kb_ts_bpf_free(struct kb_ts_bpf *b)
{
	if (!b)
		return;
	bpf_link__destroy(b->link);
	taskstats_iter__destroy(b->skel);
	kb_bpf_iter_buf_free(&b->buf);
	free(b);
}

long kb_ts_bpf_pass(struct kb_ts_bpf *b)
{
	long got = kb_bpf_iter_read(bpf_link__fd(b->link), &b->buf);

	if (got < 0)
		return got;
	if (got % sizeof(struct kb_ts_iter_record))
		return -EBADMSG;
	return got / sizeof(struct kb_ts_iter_record);
}

#else /* !KBENCH_HAVE_BPF */

struct kb_ts_bpf *kb_ts_bpf_open(const char *comm, uint64_t *load_ns, int *err,
				 char *why, size_t whylen)
{
	(void)comm;
	*load_ns = 0;
	*err = kb_bpf_iter_usable(why, whylen);
	return NULL;
}

void kb_ts_bpf_free(struct kb_ts_bpf *b)
{
	free(b);
}

long kb_ts_bpf_pass(struct kb_ts_bpf *b)
{
	(void)b;
	return -EOPNOTSUPP;
}

#endif

static const struct kb_ts_iter_record *record(const struct kb_ts_bpf *b, long i)
{
	return (const struct kb_ts_iter_record *)b->buf.data + i;
}

void kb_ts_bpf_get(const struct kb_ts_bpf *b, long i, struct kb_ts_stats *ts)
{
	const struct kb_ts_iter_record *r = record(b, i);

	memset(ts, 0, sizeof(*ts));
	ts->pid = r->pid;
	ts->tgid = r->tgid;
	memcpy(ts->comm, r->comm, sizeof(r->comm));
	ts->comm[sizeof(r->comm) < sizeof(ts->comm) ?
		 sizeof(r->comm) : sizeof(ts->comm) - 1] = '\0';
	/* kernel/tsacct.c: ac_utime/ac_stime in us. */
	ts->utime = r->utime_ns / 1000;
	ts->stime = r->stime_ns / 1000;
	ts->nvcsw = r->nvcsw;
	ts->nivcsw = r->nivcsw;
	ts->minflt = r->minflt;
	ts->majflt = r->majflt;
	/* kernel/delayacct.c: run totals in ns. */
	ts->cpu_count = r->cpu_count;
	ts->cpu_delay_total = r->cpu_delay_total;
	ts->cpu_run_real_total = r->utime_ns + r->stime_ns;
	ts->cpu_run_virtual_total = r->sum_exec_runtime_ns;
	ts->blkio_count = r->blkio_count;
	ts->blkio_delay_total = r->blkio_delay_total;
	ts->swapin_count = r->swapin_count;
	ts->swapin_delay_total = r->swapin_delay_total;
	ts->wpcopy_count = r->wpcopy_count;
	ts->wpcopy_delay_total = r->wpcopy_delay_total;
	ts->read_char = r->read_char;
	ts->write_char = r->write_char;
	ts->read_bytes = r->read_bytes;
	ts->write_bytes = r->write_bytes;
}
