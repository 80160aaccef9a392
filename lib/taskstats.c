// SPDX-License-Identifier: GPL-2.0
/*
 * kbench taskstats library. See taskstats.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "taskstats.h"
#include "kbench.h"
#include "kselftest.h"	/* ARRAY_SIZE */
#include "netlink.h"
#include "taskstats_bpf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/cgroupstats.h>
#include <linux/taskstats.h>

/* ---- taskstats decoding ---------------------------------------------- */

/*
 * Offsets in the layout every version from 13 up shares for the fields
 * below (the uapi struct is append-only, except version 15).
 */
enum ts_off {
	TS_VERSION = 0,
	TS_EXITCODE = 4,
	TS_FLAG = 8,
	TS_NICE = 9,
	TS_CPU_COUNT = 16,
	TS_CPU_DELAY = 24,
	TS_BLKIO_COUNT = 32,
	TS_BLKIO_DELAY = 40,
	TS_SWAPIN_COUNT = 48,
	TS_SWAPIN_DELAY = 56,
	TS_RUN_REAL = 64,
	TS_RUN_VIRTUAL = 72,
	TS_COMM = 80,
	TS_UID = 120,
	TS_GID = 124,
	TS_PID = KB_TS_AC_PID_OFFSET,
	TS_PPID = 132,
	TS_BTIME = 136,
	TS_ETIME = 144,
	TS_UTIME = 152,
	TS_STIME = 160,
	TS_MINFLT = 168,
	TS_MAJFLT = 176,
	TS_READ_CHAR = 216,
	TS_WRITE_CHAR = 224,
	TS_READ_BYTES = 248,
	TS_WRITE_BYTES = 256,
	TS_NVCSW = 272,
	TS_NIVCSW = 280,
	TS_TGID = 368,
	TS_WPCOPY_COUNT = 400,
	TS_WPCOPY_DELAY = 408,
};

/*
 * Version 15 added a max and a min u64 after each of these delay totals
 * (offsets in the common layout); version 16 moved them to the end.
 */
static const size_t v15_insert_after[] = { 32, 48, 64, 328, 344, 368 };

static size_t field_offset(unsigned int version, size_t off)
{
	size_t i, shift = 0;

	if (version != 15)
		return off;
	for (i = 0; i < ARRAY_SIZE(v15_insert_after); i++)
		if (off >= v15_insert_after[i])
			shift += 16;
	return off + shift;
}

struct ts_src {
	const unsigned char *data;
	size_t len;
	unsigned int version;
};

/* Copy @size bytes of the field at common offset @off, zero if absent. */
static void get_field(const struct ts_src *s, size_t off, void *dst,
		      size_t size)
{
	size_t at = field_offset(s->version, off);

	if (at + size <= s->len)
		memcpy(dst, s->data + at, size);
	else
		memset(dst, 0, size);
}

static uint64_t get_u64(const struct ts_src *s, size_t off)
{
	uint64_t v;

	get_field(s, off, &v, sizeof(v));
	return v;
}

static uint32_t get_u32(const struct ts_src *s, size_t off)
{
	uint32_t v;

	get_field(s, off, &v, sizeof(v));
	return v;
}

static void decode_delays(const struct ts_src *s, struct kb_ts_stats *ts)
{
	ts->cpu_count = get_u64(s, TS_CPU_COUNT);
	ts->cpu_delay_total = get_u64(s, TS_CPU_DELAY);
	ts->blkio_count = get_u64(s, TS_BLKIO_COUNT);
	ts->blkio_delay_total = get_u64(s, TS_BLKIO_DELAY);
	ts->swapin_count = get_u64(s, TS_SWAPIN_COUNT);
	ts->swapin_delay_total = get_u64(s, TS_SWAPIN_DELAY);
	ts->cpu_run_real_total = get_u64(s, TS_RUN_REAL);
	ts->cpu_run_virtual_total = get_u64(s, TS_RUN_VIRTUAL);
	ts->wpcopy_count = get_u64(s, TS_WPCOPY_COUNT);
	ts->wpcopy_delay_total = get_u64(s, TS_WPCOPY_DELAY);
}

static void decode_accounting(const struct ts_src *s, struct kb_ts_stats *ts)
{
	get_field(s, TS_COMM, ts->comm, KB_TS_COMM_LEN);
	ts->comm[KB_TS_COMM_LEN] = '\0';
	ts->uid = get_u32(s, TS_UID);
	ts->gid = get_u32(s, TS_GID);
	ts->pid = get_u32(s, TS_PID);
	ts->ppid = get_u32(s, TS_PPID);
	ts->btime = get_u32(s, TS_BTIME);
	ts->etime = get_u64(s, TS_ETIME);
	ts->utime = get_u64(s, TS_UTIME);
	ts->stime = get_u64(s, TS_STIME);
	ts->minflt = get_u64(s, TS_MINFLT);
	ts->majflt = get_u64(s, TS_MAJFLT);
	ts->read_char = get_u64(s, TS_READ_CHAR);
	ts->write_char = get_u64(s, TS_WRITE_CHAR);
	ts->read_bytes = get_u64(s, TS_READ_BYTES);
	ts->write_bytes = get_u64(s, TS_WRITE_BYTES);
	ts->nvcsw = get_u64(s, TS_NVCSW);
	ts->nivcsw = get_u64(s, TS_NIVCSW);
	ts->tgid = get_u32(s, TS_TGID);
}

int kb_ts_decode(const void *data, size_t len,
			struct kb_ts_stats *ts)
{
	struct ts_src s = { .data = data, .len = len };
	uint16_t version;

	memset(ts, 0, sizeof(*ts));
	if (len < sizeof(version))
		return -EBADMSG;
	memcpy(&version, data, sizeof(version));
	s.version = version;
	ts->version = version;
	ts->len = len;
	ts->exitcode = get_u32(&s, TS_EXITCODE);
	get_field(&s, TS_FLAG, &ts->flag, 1);
	get_field(&s, TS_NICE, &ts->nice, 1);
	decode_delays(&s, ts);
	decode_accounting(&s, ts);
	return 0;
}

/* ---- taskstats replies ----------------------------------------------- */

static int parse_aggr(const struct nlattr *outer, uint16_t id_type,
		      struct kb_ts_aggr *a)
{
	const struct nlattr *nla;
	size_t rem;

	memset(a, 0, sizeof(*a));
	a->present = true;
	kb_nla_for_each(nla, kb_nla_data(outer), kb_nla_len(outer), rem) {
		if (kb_nla_type(nla) == id_type) {
			if (kb_nla_get_u32(nla, &a->id))
				return -EBADMSG;
		} else if (kb_nla_type(nla) == TASKSTATS_TYPE_STATS) {
			if (kb_ts_decode(kb_nla_data(nla),
						kb_nla_len(nla), &a->stats))
				return -EBADMSG;
			a->has_stats = true;
		}
	}
	return 0;
}

int kb_ts_parse(const struct nlmsghdr *nlh, struct kb_ts_reply *r)
{
	const struct nlattr *nla;
	const void *attrs;
	size_t len, rem;
	int err = kb_nlmsg_error(nlh);

	r->pid.present = r->tgid.present = false;
	if (err <= 0)
		return err ? err : -EBADMSG;
	attrs = kb_genl_attrs(nlh, &len);
	if (!attrs)
		return -EBADMSG;
	kb_nla_for_each(nla, attrs, len, rem) {
		if (kb_nla_type(nla) == TASKSTATS_TYPE_AGGR_PID)
			err = parse_aggr(nla, TASKSTATS_TYPE_PID, &r->pid);
		else if (kb_nla_type(nla) == TASKSTATS_TYPE_AGGR_TGID)
			err = parse_aggr(nla, TASKSTATS_TYPE_TGID, &r->tgid);
		else
			err = 0;
		if (err)
			return err;
	}
	if (!(r->pid.present && r->pid.has_stats) &&
	    !(r->tgid.present && r->tgid.has_stats))
		return -EBADMSG;
	return 0;
}

int kb_ts_open(struct kb_nl *nl, size_t rcvbuf,
		      unsigned int timeout_ms)
{
	int id, err = kb_nl_open(nl, rcvbuf, timeout_ms);

	if (err)
		return err;
	id = kb_genl_family_id(nl, TASKSTATS_GENL_NAME);
	if (id < 0) {
		kb_nl_close(nl);
		return id;
	}
	nl->family = id;
	return 0;
}

void kb_ts_req(struct kb_nl_req *req, uint16_t family, uint16_t attr,
		      uint32_t id, uint32_t seq)
{
	kb_genl_req_init(req, family, TASKSTATS_CMD_GET, TASKSTATS_GENL_VERSION,
			 seq);
	kb_nla_append_u32(req, attr, id);
}

int kb_ts_reply_decode(const struct nlmsghdr *nlh, void *out)
{
	return kb_ts_parse(nlh, out);
}

int kb_ts_get(struct kb_nl *nl, uint16_t attr, uint32_t id,
		     struct kb_ts_reply *r)
{
	struct kb_nl_req req;

	kb_ts_req(&req, nl->family, attr, id, kb_nl_next_seq(nl));
	return kb_nl_transact(nl, &req, kb_ts_reply_decode, r);
}

int kb_ts_listener(struct kb_nl *nl, bool reg, const char *cpulist)
{
	uint16_t attr = reg ? TASKSTATS_CMD_ATTR_REGISTER_CPUMASK :
			      TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK;
	struct kb_nl_req req;
	uint32_t seq = kb_nl_next_seq(nl);
	int err;

	kb_genl_req_init(&req, nl->family, TASKSTATS_CMD_GET,
			 TASKSTATS_GENL_VERSION, seq);
	req.nlh.nlmsg_flags |= NLM_F_ACK;
	err = kb_nla_append_str(&req, attr, cpulist);
	if (!err)
		err = kb_nl_send(nl, req.buf, req.nlh.nlmsg_len);
	if (!err)
		err = kb_nl_wait_ack(nl, seq);
	return err > 0 ? -EBADMSG : err;
}

/* ---- batched queries ------------------------------------------------- */

/* One reply is ~600 bytes for version 16; leave room for growth. */
#define KB_TS_REPLY_MAX	4096

struct kb_ts_batch {
	unsigned int batch;
	char *sendbuf;			/* batch requests back to back */
	char *rbufs;			/* batch receive slots */
	struct mmsghdr *msgs;
	struct iovec *iovs;
	bool *answered;
};

size_t kb_ts_batch_rcvbuf(unsigned int batch)
{
	/* An skb's truesize is about twice its payload. */
	return (size_t)batch * 2 * KB_TS_REPLY_MAX + 65536;
}

struct kb_ts_batch *kb_ts_batch_new(unsigned int batch)
{
	struct kb_ts_batch *b = calloc(1, sizeof(*b));
	unsigned int i;

	if (!b || !batch)
		goto fail;
	b->batch = batch;
	b->sendbuf = calloc(batch, KB_NL_REQ_MAX);
	b->rbufs = malloc((size_t)batch * KB_TS_REPLY_MAX);
	b->msgs = calloc(batch, sizeof(*b->msgs));
	b->iovs = calloc(batch, sizeof(*b->iovs));
	b->answered = calloc(batch, sizeof(*b->answered));
	if (!b->sendbuf || !b->rbufs || !b->msgs || !b->iovs || !b->answered)
		goto fail;
	for (i = 0; i < batch; i++) {
		b->iovs[i].iov_base = b->rbufs + (size_t)i * KB_TS_REPLY_MAX;
		b->iovs[i].iov_len = KB_TS_REPLY_MAX;
		b->msgs[i].msg_hdr.msg_iov = &b->iovs[i];
		b->msgs[i].msg_hdr.msg_iovlen = 1;
	}
	return b;
fail:
	kb_ts_batch_free(b);
	return NULL;
}

void kb_ts_batch_free(struct kb_ts_batch *b)
{
	if (!b)
		return;
	free(b->sendbuf);
	free(b->rbufs);
	free(b->msgs);
	free(b->iovs);
	free(b->answered);
	free(b);
}

bool kb_ts_reply_matches(const struct nlmsghdr *nlh, pid_t pid)
{
	struct kb_ts_reply r;

	if (kb_ts_parse(nlh, &r))
		return false;
	return r.pid.present && r.pid.has_stats && r.pid.id == (uint32_t)pid &&
	       r.pid.stats.pid == (uint32_t)pid;
}

/* The seed's netlink mode: send one request, receive its reply. */
static long query_per_pid(struct kb_nl *nl, struct kb_ts_batch *b,
			  const pid_t *pids, size_t n, bool *ok)
{
	struct kb_nl_req *req = (struct kb_nl_req *)b->sendbuf;
	const struct nlmsghdr *nlh;
	long answered = 0;
	size_t i;
	int err;

	for (i = 0; i < n; i++) {
		uint32_t seq = kb_nl_next_seq(nl);

		kb_ts_req(req, nl->family, TASKSTATS_CMD_ATTR_PID,
				 pids[i], seq);
		err = kb_nl_send(nl, req->buf, req->nlh.nlmsg_len);
		if (err)
			return err;
		nlh = kb_nl_recv_seq(nl, seq, b->rbufs, KB_TS_REPLY_MAX, &err);
		if (!nlh)
			return err;
		ok[i] = kb_ts_reply_matches(nlh, pids[i]);
		answered += ok[i];
	}
	return answered;
}

/* Build @k requests for pids[0..k) with sequence numbers base..base+k-1. */
static size_t build_batch(struct kb_ts_batch *b, uint16_t family,
			  const pid_t *pids, unsigned int k, uint32_t base)
{
	struct kb_nl_req req;
	size_t len = 0;
	unsigned int i;

	for (i = 0; i < k; i++) {
		kb_ts_req(&req, family, TASKSTATS_CMD_ATTR_PID, pids[i],
				 base + i);
		memcpy(b->sendbuf + len, req.buf, req.nlh.nlmsg_len);
		len += NLMSG_ALIGN(req.nlh.nlmsg_len);
	}
	return len;
}

unsigned int kb_ts_batch_match(const void *buf, size_t len,
			       const pid_t *pids, unsigned int k,
			       uint32_t base, bool *answered, bool *ok)
{
	const struct nlmsghdr *nlh;
	unsigned int seen = 0;
	size_t off = 0;

	while ((nlh = kb_nlmsg_next(buf, len, &off))) {
		uint32_t idx = nlh->nlmsg_seq - base;

		/* Stray: a late reply from an earlier, failed batch. */
		if (idx >= k || answered[idx])
			continue;
		answered[idx] = true;
		ok[idx] = kb_ts_reply_matches(nlh, pids[idx]);
		seen++;
	}
	return seen;
}

static int drain_batch(struct kb_nl *nl, struct kb_ts_batch *b,
		       const pid_t *pids, unsigned int k, uint32_t base,
		       bool *ok)
{
	unsigned int pending = k;
	int i, got;

	memset(b->answered, 0, k * sizeof(*b->answered));
	while (pending) {
		got = recvmmsg(nl->fd, b->msgs, pending, MSG_WAITFORONE, NULL);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
		for (i = 0; i < got; i++) {
			if (b->msgs[i].msg_hdr.msg_flags & MSG_TRUNC)
				return -EMSGSIZE;
			pending -= kb_ts_batch_match(b->iovs[i].iov_base,
						     b->msgs[i].msg_len, pids,
						     k, base, b->answered, ok);
		}
	}
	return 0;
}

long kb_ts_batch_query(struct kb_nl *nl, struct kb_ts_batch *b,
		       const pid_t *pids, size_t n, bool *ok)
{
	long answered = 0;
	size_t start, i;
	int err;

	if (b->batch == 1)
		return query_per_pid(nl, b, pids, n, ok);
	for (start = 0; start < n; start += b->batch) {
		unsigned int k = n - start < b->batch ? n - start : b->batch;
		uint32_t base = nl->seq;
		size_t len;

		nl->seq += k;
		len = build_batch(b, nl->family, pids + start, k, base);
		err = kb_nl_send(nl, b->sendbuf, len);
		if (!err)
			err = drain_batch(nl, b, pids + start, k, base,
					  ok + start);
		if (err)
			return err;
		for (i = 0; i < k; i++)
			answered += ok[start + i];
	}
	return answered;
}

/* ---- cgroupstats ----------------------------------------------------- */

int kb_ts_cgroupstats_decode(const struct nlmsghdr *nlh, void *out)
{
	struct kb_ts_cgroupstats *cs = out;
	const struct nlattr *nla;
	const void *attrs;
	size_t len;
	int err = kb_nlmsg_error(nlh);

	if (err <= 0)
		return err ? err : -EBADMSG;
	attrs = kb_genl_attrs(nlh, &len);
	nla = attrs ? kb_nla_find(attrs, len, CGROUPSTATS_TYPE_CGROUP_STATS) :
		      NULL;
	if (!nla)
		return -EBADMSG;
	memset(cs, 0, sizeof(*cs));
	len = kb_nla_len(nla) < sizeof(*cs) ? kb_nla_len(nla) : sizeof(*cs);
	memcpy(cs, kb_nla_data(nla), len);
	return 0;
}

int kb_ts_cgroupstats_get(struct kb_nl *nl, int dirfd,
			  struct kb_ts_cgroupstats *cs)
{
	struct kb_nl_req req;

	kb_genl_req_init(&req, nl->family, CGROUPSTATS_CMD_GET,
			 TASKSTATS_GENL_VERSION, kb_nl_next_seq(nl));
	kb_nla_append_u32(&req, CGROUPSTATS_CMD_ATTR_FD, dirfd);
	return kb_nl_transact(nl, &req, kb_ts_cgroupstats_decode, cs);
}

/* A reply that never comes must not hang a pass. */
#define KB_TS_TIMEOUT_MS	5000

/* The files a procfs pass reads per pid. */
static const char *const proc_files[] = { "stat", "schedstat", "io" };
#define NR_PROC_FILES	ARRAY_SIZE(proc_files)

/* fds kept free for everything else while procfs_pread holds its own. */
#define KB_FD_RESERVE	64

/* Big enough for any struct taskstats the RFC ioctl may copy back. */
#define KB_TS_IOCTL_BUF	4096

static const struct {
	const char *name;
	const char *desc;
} methods[KB_TS_NR_METHODS] = {
	[KB_TS_NETLINK_PER_PID] = { "netlink_per_pid",
		"one TASKSTATS_CMD_GET per pid: send, then receive its reply" },
	[KB_TS_NETLINK_BATCHED] = { "netlink_batched",
		"K TASKSTATS_CMD_GET per sendmsg, replies drained with recvmmsg and matched by sequence number" },
	[KB_TS_PROCFS] = { "procfs",
		"open+read+close of /proc/PID/stat, schedstat and io" },
	[KB_TS_PROCFS_PREAD] = { "procfs_pread",
		"pread at offset 0 of /proc/PID/stat, schedstat and io kept open" },
	[KB_TS_IOCTL] = { "ioctl",
		"one TASKSTATS_IOC_ATTR_PID ioctl per pid on /proc/taskstats (RFC, not in mainline)" },
	[KB_TS_BPF_ITER] = { "bpf_iter",
		"one read() loop on a BPF task iterator that keeps the tasks by comm in the kernel (mainline)" },
};

struct kb_ts_ctx {
	enum kb_ts_method method;
	const pid_t *pids;
	size_t n;
	struct kb_nl nl;
	struct kb_ts_batch *batch;
	int ioctl_fd;
	unsigned char *ioctl_buf;
	int *fds;		/* procfs_pread: NR_PROC_FILES per pid of a chunk */
	size_t chunk;		/* pids per chunk */
	bool fds_open;		/* the single chunk stays open across passes */
	struct kb_tsb *tsb;	/* bpf_iter */
	struct kb_ts_slot *slots;	/* bpf_iter: pids sorted, with their index */
	uint64_t load_ns;
	char readbuf[4096];
};

const char *kb_ts_method_name(enum kb_ts_method m)
{
	return m < KB_TS_NR_METHODS ? methods[m].name : "unknown";
}

const char *kb_ts_method_desc(enum kb_ts_method m)
{
	return m < KB_TS_NR_METHODS ? methods[m].desc : "";
}

int kb_ts_method_parse(const char *s)
{
	int m;

	if (!strcmp(s, "0"))
		return KB_TS_IOCTL;
	if (!strcmp(s, "1") || !strcmp(s, "netlink"))
		return KB_TS_NETLINK_PER_PID;
	if (!strcmp(s, "batched"))
		return KB_TS_NETLINK_BATCHED;
	for (m = 0; m < KB_TS_NR_METHODS; m++)
		if (!strcmp(s, methods[m].name))
			return m;
	return -1;
}

/* ---- netlink --------------------------------------------------------- */

static int netlink_setup(struct kb_ts_ctx *ctx, unsigned int batch,
			 char *why, size_t whylen)
{
	struct kb_ts_reply r;
	int err;

	ctx->batch = kb_ts_batch_new(batch);
	if (!ctx->batch)
		return -ENOMEM;
	err = kb_ts_open(&ctx->nl, kb_ts_batch_rcvbuf(batch),
				KB_TS_TIMEOUT_MS);
	if (err == -ENOENT) {
		snprintf(why, whylen, "kernel has no TASKSTATS genetlink family (CONFIG_TASKSTATS off)");
		return err;
	}
	if (err) {
		snprintf(why, whylen, "cannot open a TASKSTATS netlink socket: %s",
			 strerror(-err));
		return err;
	}
	/* Probe once, so that a missing privilege is a reason, not N misses. */
	err = kb_ts_get(&ctx->nl, TASKSTATS_CMD_ATTR_PID, getpid(), &r);
	if (err == -EPERM)
		snprintf(why, whylen, "TASKSTATS_CMD_GET needs CAP_NET_ADMIN (EPERM)");
	else if (err)
		snprintf(why, whylen, "TASKSTATS_CMD_GET of our own pid failed: %s",
			 strerror(-err));
	return err;
}

/* ---- procfs ---------------------------------------------------------- */

/*
 * Within @len only: a read that filled the buffer leaves no NUL behind
 * the text, so strtol() could run on past its end.
 */
bool kb_ts_stat_is_pid(const char *buf, ssize_t len, pid_t pid)
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

/*
 * Whether the text a procfs pass read from proc_files[@f] answers for
 * @pid: stat must start with the pid, the others must not be empty.
 */
static bool proc_answer_ok(size_t f, const char *buf, ssize_t len, pid_t pid)
{
	return f == 0 ? kb_ts_stat_is_pid(buf, len, pid) : len > 0;
}

static int open_proc_file(pid_t pid, const char *file)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* Read into ctx->readbuf, NUL-terminated; the length or -1. */
static ssize_t read_into(struct kb_ts_ctx *ctx, int fd, bool positioned)
{
	size_t room = sizeof(ctx->readbuf) - 1;
	ssize_t len = positioned ? pread(fd, ctx->readbuf, room, 0) :
				   read(fd, ctx->readbuf, room);

	ctx->readbuf[len > 0 ? len : 0] = '\0';
	return len;
}

/* open+read+close of every file of one pid. */
static bool procfs_read_pid(struct kb_ts_ctx *ctx, pid_t pid)
{
	bool good = true;
	size_t f;

	for (f = 0; f < NR_PROC_FILES; f++) {
		int fd = open_proc_file(pid, proc_files[f]);
		ssize_t len;

		if (fd < 0)
			return false;
		len = read_into(ctx, fd, false);
		close(fd);
		good &= proc_answer_ok(f, ctx->readbuf, len, pid);
	}
	return good;
}

static void close_fds(struct kb_ts_ctx *ctx, size_t count)
{
	size_t i;

	for (i = 0; i < count * NR_PROC_FILES; i++) {
		if (ctx->fds[i] >= 0)
			close(ctx->fds[i]);
		ctx->fds[i] = -1;
	}
}

/* Open the files of pids[first..first+count). 0 or -errno. */
static int open_chunk(struct kb_ts_ctx *ctx, size_t first, size_t count)
{
	size_t i, f;

	for (i = 0; i < count; i++) {
		for (f = 0; f < NR_PROC_FILES; f++) {
			int fd = open_proc_file(ctx->pids[first + i],
						proc_files[f]);

			if (fd < 0 && errno != ENOENT && errno != ESRCH) {
				int err = -errno;

				close_fds(ctx, i + 1);
				return err;
			}
			ctx->fds[i * NR_PROC_FILES + f] = fd;
		}
	}
	return 0;
}

static bool pread_pid(struct kb_ts_ctx *ctx, size_t slot, pid_t pid)
{
	bool good = true;
	size_t f;

	for (f = 0; f < NR_PROC_FILES; f++) {
		int fd = ctx->fds[slot * NR_PROC_FILES + f];

		if (fd < 0)
			return false;
		good &= proc_answer_ok(f, ctx->readbuf,
				       read_into(ctx, fd, true), pid);
	}
	return good;
}

/* As many fds as the hard limit allows: raise the soft limit to it. */
static long fd_budget(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1 << 24))
		rl.rlim_cur = 1 << 24;
	return (long)rl.rlim_cur - KB_FD_RESERVE;
}

static int pread_setup(struct kb_ts_ctx *ctx, char *why, size_t whylen)
{
	long budget = fd_budget();
	int err;

	if (budget < (long)NR_PROC_FILES) {
		snprintf(why, whylen, "RLIMIT_NOFILE leaves no room for %zu fds per pid",
			 NR_PROC_FILES);
		return -EMFILE;
	}
	ctx->chunk = budget / NR_PROC_FILES;
	if (ctx->chunk > ctx->n)
		ctx->chunk = ctx->n ? ctx->n : 1;
	ctx->fds = malloc(ctx->chunk * NR_PROC_FILES * sizeof(*ctx->fds));
	if (!ctx->fds)
		return -ENOMEM;
	memset(ctx->fds, -1, ctx->chunk * NR_PROC_FILES * sizeof(*ctx->fds));
	if (ctx->chunk < ctx->n)
		return 0;
	err = open_chunk(ctx, 0, ctx->n);
	if (err)
		snprintf(why, whylen, "cannot open /proc/PID files: %s",
			 strerror(-err));
	ctx->fds_open = !err;
	return err;
}

static long pass_pread(struct kb_ts_ctx *ctx, bool *ok, uint64_t *ns)
{
	size_t first, i, count;
	long answered = 0;
	uint64_t t0;
	int err;

	*ns = 0;
	for (first = 0; first < ctx->n; first += ctx->chunk) {
		count = ctx->n - first < ctx->chunk ? ctx->n - first : ctx->chunk;
		if (!ctx->fds_open) {
			err = open_chunk(ctx, first, count);
			if (err)
				return err;
		}
		t0 = kb_clock_ns();
		for (i = 0; i < count; i++)
			ok[first + i] = pread_pid(ctx, i, ctx->pids[first + i]);
		*ns += kb_clock_ns() - t0;
		if (!ctx->fds_open)
			close_fds(ctx, count);
		for (i = 0; i < count; i++)
			answered += ok[first + i];
	}
	return answered;
}

/* ---- RFC ioctl ------------------------------------------------------- */

static bool ioctl_pid(struct kb_ts_ctx *ctx, pid_t pid);

static int ioctl_setup(struct kb_ts_ctx *ctx, char *why, size_t whylen)
{
	ctx->ioctl_fd = open(KB_PROC_TASKSTATS, O_RDONLY | O_CLOEXEC);
	if (ctx->ioctl_fd < 0) {
		int err = -errno;

		if (err == -ENOENT)
			snprintf(why, whylen, "kernel has no %s", KB_PROC_TASKSTATS);
		else
			snprintf(why, whylen, "cannot open %s: %s",
				 KB_PROC_TASKSTATS, strerror(-err));
		return err;
	}
	ctx->ioctl_buf = calloc(1, KB_TS_IOCTL_BUF);
	if (!ctx->ioctl_buf)
		return -ENOMEM;
	/* Probe once, so that a missing privilege is a reason, not N misses. */
	errno = 0;
	if (!ioctl_pid(ctx, getpid())) {
		int err = errno ? -errno : -EIO;

		if (err == -EPERM)
			snprintf(why, whylen, "the %s ioctl needs CAP_NET_ADMIN (EPERM)",
				 KB_PROC_TASKSTATS);
		else
			snprintf(why, whylen, "%s ioctl of our own pid failed: %s",
				 KB_PROC_TASKSTATS, strerror(-err));
		return err;
	}
	return 0;
}

/*
 * The RFC's kernel reads the pid at the ac_pid offset of the user's
 * struct taskstats, fills the struct and copies it back.
 */
static bool ioctl_pid(struct kb_ts_ctx *ctx, pid_t pid)
{
	struct kb_ts_stats ts;
	uint32_t id = pid;

	memcpy(ctx->ioctl_buf + KB_TS_AC_PID_OFFSET, &id, sizeof(id));
	if (ioctl(ctx->ioctl_fd, TASKSTATS_IOC_ATTR_PID, ctx->ioctl_buf))
		return false;
	kb_ts_decode(ctx->ioctl_buf, KB_TS_IOCTL_BUF, &ts);
	return ts.pid == id;
}

/* ---- BPF task iterator ---------------------------------------------- */

struct kb_ts_slot {
	pid_t pid;
	size_t index;
};

static int cmp_slot(const void *a, const void *b)
{
	pid_t x = ((const struct kb_ts_slot *)a)->pid;
	pid_t y = ((const struct kb_ts_slot *)b)->pid;

	return (x > y) - (x < y);
}

static bool read_comm(pid_t pid, char *comm, size_t len)
{
	char path[64];
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	got = read(fd, comm, len - 1);
	close(fd);
	if (got <= 0)
		return false;
	comm[got] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	return true;
}

/*
 * The kernel-side filter: the longest comm prefix all pids share (their
 * common comm when they were selected by it). Records of other tasks
 * that pass it are dropped by pid in user space.
 */
static void common_comm(const pid_t *pids, size_t n, char *filter, size_t len)
{
	char comm[64];
	size_t i, k;

	filter[0] = '\0';
	for (i = 0; i < n; i++) {
		if (!read_comm(pids[i], comm, sizeof(comm)))
			continue;
		if (!filter[0] && i == 0) {
			comm[len - 1] = '\0';
			memcpy(filter, comm, len);
			continue;
		}
		for (k = 0; filter[k] && filter[k] == comm[k]; k++)
			;
		filter[k] = '\0';
	}
}

static int bpf_setup(struct kb_ts_ctx *ctx, char *why, size_t whylen)
{
	char filter[16];
	size_t i;
	int err;

	ctx->slots = malloc((ctx->n ? ctx->n : 1) * sizeof(*ctx->slots));
	if (!ctx->slots)
		return -ENOMEM;
	for (i = 0; i < ctx->n; i++) {
		ctx->slots[i].pid = ctx->pids[i];
		ctx->slots[i].index = i;
	}
	qsort(ctx->slots, ctx->n, sizeof(*ctx->slots), cmp_slot);
	common_comm(ctx->pids, ctx->n, filter, sizeof(filter));
	ctx->tsb = kb_tsb_open(filter, &ctx->load_ns, &err, why, whylen);
	return ctx->tsb ? 0 : err;
}

static long pass_bpf(struct kb_ts_ctx *ctx, bool *ok)
{
	struct kb_ts_slot key, *hit;
	struct kb_ts_stats ts;
	long got, i, answered = 0;

	memset(ok, 0, ctx->n * sizeof(*ok));
	got = kb_tsb_pass(ctx->tsb);
	for (i = 0; i < got; i++) {
		kb_tsb_get(ctx->tsb, i, &ts);
		key.pid = ts.pid;
		hit = bsearch(&key, ctx->slots, ctx->n, sizeof(*ctx->slots),
			      cmp_slot);
		if (hit && !ok[hit->index]) {
			ok[hit->index] = true;
			answered++;
		}
	}
	return got < 0 ? got : answered;
}

/* ---- contexts and passes --------------------------------------------- */

struct kb_ts_ctx *kb_ts_ctx_new(enum kb_ts_method m, unsigned int batch,
				const pid_t *pids, size_t n, int *err,
				char *why, size_t whylen)
{
	struct kb_ts_ctx *ctx = calloc(1, sizeof(*ctx));

	snprintf(why, whylen, "out of memory");
	*err = -ENOMEM;
	if (!ctx)
		return NULL;
	ctx->method = m;
	ctx->pids = pids;
	ctx->n = n;
	ctx->nl.fd = -1;
	ctx->ioctl_fd = -1;
	switch (m) {
	case KB_TS_NETLINK_PER_PID:
		*err = netlink_setup(ctx, 1, why, whylen);
		break;
	case KB_TS_NETLINK_BATCHED:
		*err = netlink_setup(ctx, batch ? batch : KB_TS_DEFAULT_BATCH,
				     why, whylen);
		break;
	case KB_TS_PROCFS:
		*err = 0;
		break;
	case KB_TS_PROCFS_PREAD:
		*err = pread_setup(ctx, why, whylen);
		break;
	case KB_TS_IOCTL:
		*err = ioctl_setup(ctx, why, whylen);
		break;
	case KB_TS_BPF_ITER:
		*err = bpf_setup(ctx, why, whylen);
		break;
	default:
		*err = -EINVAL;
		snprintf(why, whylen, "unknown method");
	}
	if (*err) {
		kb_ts_ctx_free(ctx);
		return NULL;
	}
	return ctx;
}

void kb_ts_ctx_free(struct kb_ts_ctx *ctx)
{
	if (!ctx)
		return;
	kb_nl_close(&ctx->nl);
	kb_ts_batch_free(ctx->batch);
	if (ctx->ioctl_fd >= 0)
		close(ctx->ioctl_fd);
	free(ctx->ioctl_buf);
	if (ctx->fds && ctx->fds_open)
		close_fds(ctx, ctx->n);
	free(ctx->fds);
	kb_tsb_free(ctx->tsb);
	free(ctx->slots);
	free(ctx);
}

size_t kb_ts_ctx_chunks(const struct kb_ts_ctx *ctx)
{
	if (ctx->method != KB_TS_PROCFS_PREAD || !ctx->chunk)
		return 1;
	return (ctx->n + ctx->chunk - 1) / ctx->chunk;
}

uint64_t kb_ts_ctx_load_ns(const struct kb_ts_ctx *ctx)
{
	return ctx->load_ns;
}

long kb_ts_ctx_rcvbuf(const struct kb_ts_ctx *ctx)
{
	return ctx->nl.fd >= 0 ? kb_nl_rcvbuf(&ctx->nl) : 0;
}

long kb_ts_pass(struct kb_ts_ctx *ctx, bool *ok, uint64_t *ns)
{
	uint64_t t0 = kb_clock_ns();
	long answered = 0;
	size_t i;

	switch (ctx->method) {
	case KB_TS_NETLINK_PER_PID:
	case KB_TS_NETLINK_BATCHED:
		answered = kb_ts_batch_query(&ctx->nl, ctx->batch, ctx->pids,
					     ctx->n, ok);
		break;
	case KB_TS_PROCFS:
		for (i = 0; i < ctx->n; i++)
			answered += ok[i] = procfs_read_pid(ctx, ctx->pids[i]);
		break;
	case KB_TS_PROCFS_PREAD:
		return pass_pread(ctx, ok, ns);
	case KB_TS_IOCTL:
		for (i = 0; i < ctx->n; i++)
			answered += ok[i] = ioctl_pid(ctx, ctx->pids[i]);
		break;
	case KB_TS_BPF_ITER:
		answered = pass_bpf(ctx, ok);
		break;
	default:
		return -EINVAL;
	}
	*ns = kb_clock_ns() - t0;
	return answered;
}

/* ---- selecting pids by comm ------------------------------------------ */

bool kb_ts_comm_matches(const char *buf, ssize_t len, const char *name)
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
	return kb_ts_comm_matches(comm, len, name);
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

long kb_ts_find_pids(const char *name, pid_t **pids)
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

/* ---- /proc/PID: the independent source ------------------------------- */

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

int kb_ts_proc_status_parse(const char *buf, size_t len, struct kb_ts_proc *p)
{
	char text[4096];
	int err;

	if (!len || len >= sizeof(text))
		return -EBADMSG;
	memcpy(text, buf, len);
	text[len] = '\0';
	err = status_field(text, "voluntary_ctxt_switches", &p->nvcsw);
	if (!err)
		err = status_field(text, "nonvoluntary_ctxt_switches",
				   &p->nivcsw);
	return err == -ENOENT ? -EBADMSG : err;
}

/* Read /proc/@pid/@file into @buf (NUL-terminated). Its length or -errno. */
static ssize_t read_proc(pid_t pid, const char *file, char *buf, size_t size)
{
	int fd = open_proc_file(pid, file);
	ssize_t len;

	if (fd < 0)
		return -errno;
	len = read(fd, buf, size - 1);
	if (len < 0)
		len = -errno;
	close(fd);
	if (len >= 0)
		buf[len] = '\0';
	return len;
}

int kb_ts_proc_read(pid_t pid, struct kb_ts_proc *p)
{
	char buf[4096];
	ssize_t len;
	int err;

	memset(p, 0, sizeof(*p));
	err = kb_proc_stat_read(pid, &p->stat);
	if (err)
		return err;
	len = read_proc(pid, "status", buf, sizeof(buf));
	if (len < 0)
		return len;
	return kb_ts_proc_status_parse(buf, len, p);
}

/* CPU times in us of two sources: 4 ticks of 10 ms and 25 % apart at most. */
static bool cpu_close(uint64_t a_us, uint64_t b_us)
{
	uint64_t hi = a_us > b_us ? a_us : b_us, lo = a_us + b_us - hi;

	return hi - lo <= 40000 + hi / 4;
}

/*
 * /proc's utime+stime is the scheduler's runtime split by the ticks
 * (cputime_adjust()), so it is compared with cpu_run_virtual_total, the
 * same runtime, when filled. taskstats' own utime+stime are the raw tick
 * samples, which a guest losing ticks undercounts: only an upper bound.
 */
static bool cpu_matches(const struct kb_ts_stats *ts, uint64_t proc_us,
			char *why, size_t len)
{
	uint64_t ticks_us = ts->utime + ts->stime;
	uint64_t run_us = ts->cpu_run_virtual_total / 1000;

	if (run_us && !cpu_close(run_us, proc_us))
		snprintf(why, len, "cpu_run_virtual_total %llu us, /proc utime+stime %llu us: more than 40 ms + 25%% apart",
			 (unsigned long long)run_us,
			 (unsigned long long)proc_us);
	else if (!run_us && !cpu_close(ticks_us, proc_us))
		snprintf(why, len, "ac_utime+ac_stime %llu us, /proc utime+stime %llu us: more than 40 ms + 25%% apart",
			 (unsigned long long)ticks_us,
			 (unsigned long long)proc_us);
	else if (ticks_us > proc_us + 40000 + proc_us / 4)
		snprintf(why, len, "ac_utime+ac_stime %llu us is above /proc utime+stime %llu us + 40 ms + 25%%",
			 (unsigned long long)ticks_us,
			 (unsigned long long)proc_us);
	else
		return true;
	return false;
}

bool kb_ts_matches_proc(const struct kb_ts_stats *ts,
			const struct kb_ts_proc *p, unsigned int what,
			long ticks_per_s, char *why, size_t len)
{
	uint64_t proc_cpu = (p->stat.utime + p->stat.stime) * 1000000ull /
			    (ticks_per_s > 0 ? ticks_per_s : 100);
#define KB_TS_DIFFERS(tf, pf) \
	((unsigned long long)ts->tf != (unsigned long long)p->pf && \
	snprintf(why, len, #tf " %llu, /proc " #pf " %llu", \
		 (unsigned long long)ts->tf, (unsigned long long)p->pf))
	if ((what & KB_TS_CMP_IDS) &&
	    (KB_TS_DIFFERS(pid, stat.pid) || KB_TS_DIFFERS(ppid, stat.ppid)))
		return false;
	if ((what & KB_TS_CMP_CTXT) &&
	    (KB_TS_DIFFERS(nvcsw, nvcsw) || KB_TS_DIFFERS(nivcsw, nivcsw)))
		return false;
#undef KB_TS_DIFFERS
	if ((what & KB_TS_CMP_IDS) && strcmp(ts->comm, p->stat.comm)) {
		snprintf(why, len, "ac_comm '%s', /proc comm '%s'", ts->comm,
			 p->stat.comm);
		return false;
	}
	return !(what & KB_TS_CMP_CPU) || cpu_matches(ts, proc_cpu, why, len);
}

/* ---- judgements of the taskstats checks ------------------------------ */

/*
 * CPU time of a task in us. cpu_run_virtual_total is the scheduler's own
 * runtime in ns (filled when CONFIG_TASK_DELAY_ACCT is built in): exact,
 * unlike utime + stime, which are sampled by the tick and undercounted by
 * an emulated guest that loses ticks.
 */
static uint64_t cpu_us(const struct kb_ts_stats *ts, bool precise)
{
	return precise ? ts->cpu_run_virtual_total / 1000 :
			 ts->utime + ts->stime;
}

bool kb_ts_tgid_plausible(const struct kb_ts_stats *tgid,
			  const struct kb_ts_stats *threads, size_t n,
			  uint64_t burnt_us, char *why, size_t len)
{
	bool precise = tgid->cpu_run_virtual_total != 0;
	/*
	 * The scheduler's runtime is exact (1 % for rounding and thread
	 * start-up); tick-sampled time may miss or gain up to 25 %.
	 */
	unsigned int slack = precise ? 1 : 25;
	uint64_t total = cpu_us(tgid, precise), sum = 0, nvcsw = 0, nivcsw = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		sum += cpu_us(&threads[i], precise);
		nvcsw += threads[i].nvcsw;
		nivcsw += threads[i].nivcsw;
	}
	if (total * 100 < burnt_us * (100 - slack))
		snprintf(why, len, "TGID cpu time %llu us is below the %llu us the threads burnt",
			 (unsigned long long)total,
			 (unsigned long long)burnt_us);
	else if (total * 100 < sum * (100 - slack))
		snprintf(why, len, "TGID cpu time %llu us is below the sum of its threads, %llu us",
			 (unsigned long long)total, (unsigned long long)sum);
	else if (total * 100 > sum * (100 + slack) + 100 * 10000ull)
		snprintf(why, len, "TGID cpu time %llu us is above the sum of its threads, %llu us (counted twice?)",
			 (unsigned long long)total, (unsigned long long)sum);
	else if (tgid->nvcsw != nvcsw || tgid->nivcsw != nivcsw)
		snprintf(why, len, "TGID context switches %llu/%llu are not the sum of its resting threads', %llu/%llu",
			 (unsigned long long)tgid->nvcsw,
			 (unsigned long long)tgid->nivcsw,
			 (unsigned long long)nvcsw, (unsigned long long)nivcsw);
	else
		return true;
	return false;
}

bool kb_ts_wpcopy_plausible(const struct kb_ts_stats *on,
			    const struct kb_ts_stats *off, uint64_t pages,
			    char *why, size_t len)
{
	/*
	 * delayacct_end() counts a copy only when local_clock() moved
	 * during it: with a coarse sched_clock (TCG) some are missed, so
	 * the lower bound is one copy, not one per page.
	 */
	if (!on->wpcopy_count)
		snprintf(why, len, "wpcopy_count is 0 with task_delayacct=1 after the child copied %llu pages on write",
			 (unsigned long long)pages);
	else if (on->wpcopy_count > pages + KB_TS_WPCOPY_SLACK)
		snprintf(why, len, "wpcopy_count %llu is above the %llu pages the child wrote (+%d for its stack and libc)",
			 (unsigned long long)on->wpcopy_count,
			 (unsigned long long)pages, KB_TS_WPCOPY_SLACK);
	else if (!on->wpcopy_delay_total)
		snprintf(why, len, "wpcopy_delay_total is 0 after %llu copies",
			 (unsigned long long)on->wpcopy_count);
	else if (off->wpcopy_count || off->wpcopy_delay_total)
		snprintf(why, len, "wpcopy_count %llu / total %llu ns with task_delayacct=0: not the field the knob gates",
			 (unsigned long long)off->wpcopy_count,
			 (unsigned long long)off->wpcopy_delay_total);
	else
		return true;
	return false;
}

bool kb_ts_cgroupstats_plausible(const struct kb_ts_cgroupstats *cs,
				 uint64_t sleepers, uint64_t tasks,
				 char *why, size_t len)
{
	/* Each task is counted once, in its state; io_wait only outside them. */
	uint64_t sum = cs->nr_sleeping + cs->nr_running + cs->nr_stopped +
		       cs->nr_uninterruptible + cs->nr_io_wait;

	if (cs->nr_sleeping < sleepers)
		snprintf(why, len, "nr_sleeping %llu is below our %llu sleepers",
			 (unsigned long long)cs->nr_sleeping,
			 (unsigned long long)sleepers);
	else if (sum > tasks + tasks / 8 + KB_TS_CGROUP_SLACK)
		snprintf(why, len, "the states add up to %llu tasks, the cgroup holds at most %llu (+1/8 +%d): counted twice?",
			 (unsigned long long)sum, (unsigned long long)tasks,
			 KB_TS_CGROUP_SLACK);
	else
		return true;
	return false;
}
