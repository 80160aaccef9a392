// SPDX-License-Identifier: GPL-2.0
/*
 * kbench taskstats by BPF task iterator. See taskstats_bpf.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "taskstats_bpf.h"
#include "taskstats.h"
#include "bpf_iter.h"
#include "kbench.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include <linux/taskstats.h>
#include "kselftest.h"

#include "taskstats_iter.h"
#ifdef KBENCH_HAVE_BPF
#include <bpf/libbpf.h>
#include "taskstats_iter.skel.h"
#endif

struct kb_tsb {
#ifdef KBENCH_HAVE_BPF
	struct taskstats_iter *skel;
	struct bpf_link *link;
#endif
	struct kb_bpf_buf buf;
	long page_kib;
};

#ifdef KBENCH_HAVE_BPF

struct kb_tsb *kb_tsb_open(const char *comm, uint64_t *load_ns, int *err,
			   char *why, size_t whylen)
{
	struct kb_tsb *b;
	uint64_t t0;
	size_t len = strlen(comm);

	*err = kb_bpf_usable(why, whylen);
	if (*err)
		return NULL;
	if (len >= KB_TSI_COMM_LEN) {
		*err = -EINVAL;
		snprintf(why, whylen, "comm filter '%s' longer than %d bytes",
			 comm, KB_TSI_COMM_LEN - 1);
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		*err = -ENOMEM;
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	b->page_kib = sysconf(_SC_PAGESIZE) / 1024;
	kb_bpf_quiet_libbpf();
	t0 = kb_clock_ns();
	b->skel = taskstats_iter__open();
	if (!b->skel) {
		*err = -errno;
		kb_bpf_load_reason(*err, "opening the task iterator", why, whylen);
		goto fail;
	}
	memcpy((char *)b->skel->rodata->comm_filter, comm, len);
	b->skel->rodata->comm_filter_len = len;
	*err = taskstats_iter__load(b->skel);
	if (*err) {
		kb_bpf_load_reason(*err, "loading the task iterator", why, whylen);
		goto fail;
	}
	b->link = bpf_program__attach_iter(b->skel->progs.dump_task, NULL);
	if (!b->link) {
		*err = -errno;
		kb_bpf_load_reason(*err, "attaching the task iterator", why, whylen);
		goto fail;
	}
	*load_ns = kb_clock_ns() - t0;
	return b;
fail:
	kb_tsb_free(b);
	return NULL;
}

void kb_tsb_free(struct kb_tsb *b)
{
	if (!b)
		return;
	bpf_link__destroy(b->link);
	taskstats_iter__destroy(b->skel);
	kb_bpf_buf_free(&b->buf);
	free(b);
}

long kb_tsb_pass(struct kb_tsb *b)
{
	long got = kb_bpf_iter_read(bpf_link__fd(b->link), &b->buf);

	if (got < 0)
		return got;
	if (got % sizeof(struct kb_tsi_record))
		return -EBADMSG;
	return got / sizeof(struct kb_tsi_record);
}

#else /* !KBENCH_HAVE_BPF */

struct kb_tsb *kb_tsb_open(const char *comm, uint64_t *load_ns, int *err,
			   char *why, size_t whylen)
{
	(void)comm;
	*load_ns = 0;
	*err = kb_bpf_usable(why, whylen);
	return NULL;
}

void kb_tsb_free(struct kb_tsb *b)
{
	free(b);
}

long kb_tsb_pass(struct kb_tsb *b)
{
	(void)b;
	return -EOPNOTSUPP;
}

#endif

static const struct kb_tsi_record *record(const struct kb_tsb *b, long i)
{
	return (const struct kb_tsi_record *)b->buf.data + i;
}

void kb_tsb_get(const struct kb_tsb *b, long i, struct kb_ts_stats *ts)
{
	const struct kb_tsi_record *r = record(b, i);

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

void kb_tsb_get_extra(const struct kb_tsb *b, long i, struct kb_tsb_extra *x)
{
	const struct kb_tsi_record *r = record(b, i);
	uint64_t page = b->page_kib * 1024;

	/* kernel/tsacct.c: pages-ns/1024 integrals to MiB-us. */
	x->coremem = r->acct_rss_mem1 * page / (1000 * 1024);
	x->virtmem = r->acct_vm_mem1 * page / (1000 * 1024);
	x->hiwater_rss = r->hiwater_rss_pages * b->page_kib;
	x->hiwater_vm = r->hiwater_vm_pages * b->page_kib;
	x->read_syscalls = r->read_syscalls;
	x->write_syscalls = r->write_syscalls;
	x->cancelled_write_bytes = r->cancelled_write_bytes;
	x->freepages_delay_total = r->freepages_delay_total;
	x->thrashing_delay_total = r->thrashing_delay_total;
	x->compact_delay_total = r->compact_delay_total;
	x->wpcopy_delay_total = r->wpcopy_delay_total;
	x->irq_delay_total = r->irq_delay_total;
}

/* ---- bpf_iter_matches_netlink ---------------------------------------- */

static const char *differs(const struct kb_ts_stats *a,
			   const struct kb_ts_stats *b, char *why,
			   size_t whylen)
{
#define KB_DIFFERS(f) (a->f != b->f && \
	snprintf(why, whylen, #f ": bpf_iter %llu, netlink %llu", \
		 (unsigned long long)a->f, (unsigned long long)b->f))
	if (KB_DIFFERS(pid) || KB_DIFFERS(tgid) || KB_DIFFERS(utime) ||
	    KB_DIFFERS(stime) || KB_DIFFERS(nvcsw) || KB_DIFFERS(nivcsw) ||
	    KB_DIFFERS(minflt) || KB_DIFFERS(majflt) ||
	    KB_DIFFERS(cpu_count) || KB_DIFFERS(cpu_delay_total) ||
	    KB_DIFFERS(cpu_run_real_total) ||
	    KB_DIFFERS(cpu_run_virtual_total) ||
	    KB_DIFFERS(blkio_count) || KB_DIFFERS(blkio_delay_total) ||
	    KB_DIFFERS(swapin_count) || KB_DIFFERS(swapin_delay_total) ||
	    KB_DIFFERS(wpcopy_count) || KB_DIFFERS(wpcopy_delay_total) ||
	    KB_DIFFERS(read_char) || KB_DIFFERS(write_char) ||
	    KB_DIFFERS(read_bytes) || KB_DIFFERS(write_bytes))
		return why;
#undef KB_DIFFERS
	if (strcmp(a->comm, b->comm)) {
		snprintf(why, whylen, "comm: bpf_iter '%s', netlink '%s'",
			 a->comm, b->comm);
		return why;
	}
	return NULL;
}

/* The iterator's record of @pid (filtered by @comm), or -ESRCH. */
static int iter_stats(struct kb_tsb *b, pid_t pid, struct kb_ts_stats *ts)
{
	long got = kb_tsb_pass(b), i;

	if (got < 0)
		return got;
	for (i = 0; i < got; i++) {
		kb_tsb_get(b, i, ts);
		if (ts->pid == (uint32_t)pid)
			return 0;
	}
	return -ESRCH;
}

int kb_tsb_matches_netlink(pid_t pid, const char *comm, char *why,
			   size_t whylen)
{
	struct kb_ts_stats by_iter;
	struct kb_ts_reply r;
	uint64_t load_ns;
	struct kb_tsb *b;
	struct kb_nl nl;
	int err;

	b = kb_tsb_open(comm, &load_ns, &err, why, whylen);
	if (!b)
		return kb_errno_bpf_is_environment(err) ? KSFT_SKIP : KSFT_FAIL;
	err = kb_ts_open(&nl, 0, 5000);
	if (err) {
		snprintf(why, whylen, "no TASKSTATS netlink socket: %s",
			 strerror(-err));
		kb_tsb_free(b);
		return kb_errno_lookup_is_environment(err, KB_ENV_NO_CAP) ?
		       KSFT_SKIP : KSFT_FAIL;
	}
	err = kb_ts_get(&nl, TASKSTATS_CMD_ATTR_PID, pid, &r);
	kb_nl_close(&nl);
	if (err && kb_errno_is_environment(err, CAP_NET_ADMIN)) {
		kb_errno_explain(err, CAP_NET_ADMIN, "TASKSTATS_CMD_GET", why,
				 whylen);
		kb_tsb_free(b);
		return KSFT_SKIP;
	}
	if (!err && !r.pid.has_stats)
		err = -EBADMSG;
	if (err) {
		snprintf(why, whylen, "TASKSTATS_CMD_GET of pid %d: %s",
			 (int)pid, strerror(-err));
		kb_tsb_free(b);
		return KSFT_FAIL;
	}
	err = iter_stats(b, pid, &by_iter);
	kb_tsb_free(b);
	if (err) {
		snprintf(why, whylen, "the iterator did not emit pid %d: %s",
			 (int)pid, strerror(-err));
		return KSFT_FAIL;
	}
	if (differs(&by_iter, &r.pid.stats, why, whylen))
		return KSFT_FAIL;
	snprintf(why, whylen, "pid=%d utime=%llu nvcsw=%llu cpu_count=%llu read_char=%llu",
		 (int)pid, (unsigned long long)by_iter.utime,
		 (unsigned long long)by_iter.nvcsw,
		 (unsigned long long)by_iter.cpu_count,
		 (unsigned long long)by_iter.read_char);
	return KSFT_PASS;
}
