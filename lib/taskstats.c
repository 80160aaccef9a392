// SPDX-License-Identifier: GPL-2.0
/*
 * The taskstats interfaces, decoded. See taskstats.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "taskstats.h"
#include "compat.h"
#include "netlink.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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
	kb_nl_attr_for_each(nla, kb_nl_attr_data(outer), kb_nl_attr_len(outer),
			    rem) {
		if (kb_nl_attr_type(nla) == id_type) {
			if (kb_nl_attr_get_u32(nla, &a->id))
				return -EBADMSG;
		} else if (kb_nl_attr_type(nla) == TASKSTATS_TYPE_STATS) {
			if (kb_ts_decode(kb_nl_attr_data(nla),
					 kb_nl_attr_len(nla), &a->stats))
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
	int err = kb_nl_msg_error(nlh);

	/* An aggregate the message lacks reads as absent, with zero stats. */
	memset(r, 0, sizeof(*r));
	if (err <= 0)
		return err ? err : -EBADMSG;
	attrs = kb_nl_genl_attrs(nlh, &len);
	if (!attrs)
		return -EBADMSG;
	kb_nl_attr_for_each(nla, attrs, len, rem) {
		if (kb_nl_attr_type(nla) == TASKSTATS_TYPE_AGGR_PID)
			err = parse_aggr(nla, TASKSTATS_TYPE_PID, &r->pid);
		else if (kb_nl_attr_type(nla) == TASKSTATS_TYPE_AGGR_TGID)
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
	id = kb_nl_genl_family_id(nl, TASKSTATS_GENL_NAME);
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
	kb_nl_genl_req_init(req, family, TASKSTATS_CMD_GET,
			    TASKSTATS_GENL_VERSION, seq);
	kb_nl_attr_append_u32(req, attr, id);
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

	kb_nl_genl_req_init(&req, nl->family, TASKSTATS_CMD_GET,
			    TASKSTATS_GENL_VERSION, seq);
	req.nlh.nlmsg_flags |= NLM_F_ACK;
	err = kb_nl_attr_append_str(&req, attr, cpulist);
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

	while ((nlh = kb_nl_msg_next(buf, len, &off))) {
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
	int err = kb_nl_msg_error(nlh);

	memset(cs, 0, sizeof(*cs));
	if (err <= 0)
		return err ? err : -EBADMSG;
	attrs = kb_nl_genl_attrs(nlh, &len);
	nla = attrs ? kb_nl_attr_find(attrs, len,
				      CGROUPSTATS_TYPE_CGROUP_STATS) : NULL;
	if (!nla)
		return -EBADMSG;
	len = kb_nl_attr_len(nla);
	if (len > sizeof(*cs))
		len = sizeof(*cs);
	memcpy(cs, kb_nl_attr_data(nla), len);
	return 0;
}

int kb_ts_cgroupstats_get(struct kb_nl *nl, int dirfd,
			  struct kb_ts_cgroupstats *cs)
{
	struct kb_nl_req req;

	kb_nl_genl_req_init(&req, nl->family, CGROUPSTATS_CMD_GET,
			    TASKSTATS_GENL_VERSION, kb_nl_next_seq(nl));
	kb_nl_attr_append_u32(&req, CGROUPSTATS_CMD_ATTR_FD, dirfd);
	return kb_nl_transact(nl, &req, kb_ts_cgroupstats_decode, cs);
}
