// SPDX-License-Identifier: GPL-2.0
/*
 * kbench memcg counters by BPF cgroup iterator. See memcg_bpf.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "memcg_bpf.h"
#include "bpf_iter.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>

#include "memcg_iter.h"
#ifdef KBENCH_HAVE_BPF
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "memcg_iter.skel.h"
#endif

struct kb_memcg_bpf {
#ifdef KBENCH_HAVE_BPF
	struct memcg_iter *skel;
	struct bpf_program *prog;	/* the one program loaded */
	struct bpf_link *link;
#endif
	struct kb_bpf_iter_buf buf;
	uint32_t flags;
};

#ifdef KBENCH_HAVE_BPF

int kb_memcg_bpf_select(struct kb_memcg_bpf *b, const int *slots, int n,
			char *why, size_t whylen)
{
	int i;

	if (n < 1 || n > KB_MEMCG_ITER_MAX_FIELDS) {
		snprintf(why, whylen, "%d counters: 1 to %d", n, KB_MEMCG_ITER_MAX_FIELDS);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (slots[i] < 0 || slots[i] >= KB_MEMCG_ITER_MAX_STATE) {
			snprintf(why, whylen, "counter slot %d out of 0..%d",
				 slots[i], KB_MEMCG_ITER_MAX_STATE - 1);
			return -EINVAL;
		}
		b->skel->bss->fields[i] = slots[i];
	}
	b->skel->bss->nr_fields = n;
	return 0;
}

/* The iterator pinned to one cgroup: BPF_CGROUP_ITER_SELF_ONLY. */
static int attach(struct kb_memcg_bpf *b, const char *cgdir, char *why,
		  size_t whylen)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo;
	int fd = open(cgdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;

	if (fd < 0) {
		err = -errno;
		snprintf(why, whylen, "cannot open %s: %s", cgdir, strerror(-err));
		return err;
	}
	memset(&linfo, 0, sizeof(linfo));
	linfo.cgroup.cgroup_fd = fd;
	linfo.cgroup.order = BPF_CGROUP_ITER_SELF_ONLY;
	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	b->link = bpf_program__attach_iter(b->prog, &opts);
	err = b->link ? 0 : -errno;
	close(fd);
	if (err == -EBADF || err == -EOPNOTSUPP) {
		snprintf(why, whylen, "the cgroup iterator cannot walk %s (a cgroup v1 hierarchy before 6.6?): %s",
			 cgdir, strerror(-err));
		/* The fd is ours and open: EBADF is the kernel's "not v2". */
		err = -EOPNOTSUPP;
	} else if (err)
		kb_bpf_iter_load_reason(err, "attaching the cgroup iterator", why,
					whylen);
	return err;
}

/* How a read flushes: by the memcg kfuncs, by cgroup_rstat_flush, or not. */
enum flush_way { FLUSH_KFUNCS, FLUSH_RSTAT, FLUSH_NONE };

static bool has_func(const struct btf *btf, const char *name)
{
	return btf && btf__find_by_name_kind(btf, name, BTF_KIND_FUNC) >= 0;
}

/* The best way the running kernel's BTF offers. */
static enum flush_way best_flush(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	enum flush_way way = FLUSH_NONE;

	if (has_func(btf, "bpf_get_mem_cgroup") &&
	    has_func(btf, "bpf_put_mem_cgroup") &&
	    has_func(btf, "bpf_mem_cgroup_flush_stats"))
		way = FLUSH_KFUNCS;
	else if (has_func(btf, "cgroup_rstat_flush"))
		way = FLUSH_RSTAT;
	btf__free(btf);
	return way;
}

/* Load only the program of @way: the others may call absent kfuncs. */
static int load(struct kb_memcg_bpf *b, enum flush_way way, char *why,
		size_t whylen)
{
	struct bpf_program *progs[] = {
		[FLUSH_KFUNCS] = NULL, [FLUSH_RSTAT] = NULL, [FLUSH_NONE] = NULL,
	};
	int err, w;

	b->skel = memcg_iter__open();
	if (!b->skel) {
		err = -errno;
		kb_bpf_iter_load_reason(err, "opening the cgroup iterator", why, whylen);
		return err;
	}
	progs[FLUSH_KFUNCS] = b->skel->progs.dump_memcg_kfuncs;
	progs[FLUSH_RSTAT] = b->skel->progs.dump_memcg_rstat;
	progs[FLUSH_NONE] = b->skel->progs.dump_memcg_noflush;
	for (w = FLUSH_KFUNCS; w <= FLUSH_NONE; w++)
		bpf_program__set_autoload(progs[w], w == (int)way);
	b->prog = progs[way];
	err = memcg_iter__load(b->skel);
	if (err)
		kb_bpf_iter_load_reason(err, "loading the cgroup iterator", why, whylen);
	return err;
}

struct kb_memcg_bpf *kb_memcg_bpf_open(const char *cgdir, bool flush,
				       uint64_t *load_ns, int *err, char *why,
				       size_t whylen)
{
	enum flush_way way;
	struct kb_memcg_bpf *b;
	uint64_t t0;

	*err = kb_bpf_iter_usable(why, whylen);
	if (*err)
		return NULL;
	b = calloc(1, sizeof(*b));
	if (!b) {
		*err = -ENOMEM;
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	kb_bpf_iter_quiet_libbpf();
	t0 = kb_clock_ns();
	way = flush ? best_flush() : FLUSH_NONE;
	*err = load(b, way, why, whylen);
	if (*err && way == FLUSH_KFUNCS) {
		/* Kfuncs whose prototypes we guessed wrong: no flush. */
		memcg_iter__destroy(b->skel);
		b->skel = NULL;
		*err = load(b, FLUSH_NONE, why, whylen);
	}
	if (!*err)
		*err = attach(b, cgdir, why, whylen);
	if (*err) {
		kb_memcg_bpf_free(b);
		return NULL;
	}
	*load_ns = kb_clock_ns() - t0;
	return b;
}

void kb_memcg_bpf_free(struct kb_memcg_bpf *b)
{
	if (!b)
		return;
	bpf_link__destroy(b->link);
	memcg_iter__destroy(b->skel);
	kb_bpf_iter_buf_free(&b->buf);
	free(b);
}

long kb_memcg_bpf_read(struct kb_memcg_bpf *b, const int64_t **vals)
{
	long got = kb_bpf_iter_read(bpf_link__fd(b->link), &b->buf);
	struct kb_memcg_iter_header h;

	if (got < 0)
		return got;
	if ((size_t)got < sizeof(h))
		return -EBADMSG;
	memcpy(&h, b->buf.data, sizeof(h));
	b->flags = h.flags;
	if (h.flags & KB_MEMCG_ITER_NO_MEMCG)
		return -ENODATA;
	/* The program writes every KB_MEMCG_ITER_MAX_FIELDS slot, h.nr set. */
	if (h.nr > KB_MEMCG_ITER_MAX_FIELDS ||
	    (size_t)got != sizeof(h) +
			   KB_MEMCG_ITER_MAX_FIELDS * sizeof(int64_t))
		return -EBADMSG;
	*vals = (const int64_t *)(b->buf.data + sizeof(h));
	return h.nr;
}

#else /* !KBENCH_HAVE_BPF */

struct kb_memcg_bpf *kb_memcg_bpf_open(const char *cgdir, bool flush,
				       uint64_t *load_ns, int *err, char *why,
				       size_t whylen)
{
	(void)cgdir;
	(void)flush;
	*load_ns = 0;
	*err = kb_bpf_iter_usable(why, whylen);
	return NULL;
}

void kb_memcg_bpf_free(struct kb_memcg_bpf *b)
{
	free(b);
}

int kb_memcg_bpf_select(struct kb_memcg_bpf *b, const int *slots, int n,
			char *why, size_t whylen)
{
	(void)b;
	(void)slots;
	(void)n;
	snprintf(why, whylen, "built without BPF support");
	return -EOPNOTSUPP;
}

long kb_memcg_bpf_read(struct kb_memcg_bpf *b, const int64_t **vals)
{
	(void)b;
	(void)vals;
	return -EOPNOTSUPP;
}

#endif

const char *kb_memcg_bpf_flush_name(const struct kb_memcg_bpf *b)
{
	if (b->flags & KB_MEMCG_ITER_FLUSHED_MEMCG)
		return "bpf_mem_cgroup_flush_stats";
	if (b->flags & KB_MEMCG_ITER_FLUSHED_CGROUP)
		return "cgroup_rstat_flush";
	return "none";
}

static long read_batch(struct kb_memcg_bpf *b, long batch)
{
	const int64_t *vals;
	long i, got = 0;

	for (i = 0; i < batch && got >= 0; i++)
		got = kb_memcg_bpf_read(b, &vals);
	return got;
}

int kb_memcg_bpf_time(struct kb_memcg_bpf *b, long count, long batch,
		      double budget_s, struct kb_stats *st, double *total_s)
{
	long nsamples = count / batch, i;
	uint64_t start, t0;
	double *samples;
	long got;

	if (nsamples < 2)
		nsamples = 2;
	samples = calloc(nsamples, sizeof(*samples));
	if (!samples)
		return -ENOMEM;
	got = read_batch(b, nsamples / 10 + 1);	/* warm-up */
	start = kb_clock_ns();
	for (i = 0; i < nsamples && got >= 0; i++) {
		t0 = kb_clock_ns();
		got = read_batch(b, batch);
		samples[i] = (double)(kb_clock_ns() - t0) / batch / 1000.0;
		if (budget_s > 0 && i >= 20 &&
		    (double)(kb_clock_ns() - start) / 1e9 > budget_s) {
			nsamples = i + 1;
			break;
		}
	}
	*total_s = (double)(kb_clock_ns() - start) / 1e9;
	if (got >= 0)
		kb_stats_compute(samples, nsamples, st);
	free(samples);
	return got < 0 ? (int)got : 0;
}
