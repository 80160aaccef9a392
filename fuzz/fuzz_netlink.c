// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: the netlink and taskstats decoders, on one datagram
 * as the kernel would hand it to recv() (a copy of exactly the input's
 * length, so that ASan sees any read past the end). Every decoder sees
 * every message: the message walk (kb_nl_msg_next), errors and acks,
 * the family-id reply, taskstats replies (kb_ts_parse, _reply_matches,
 * kb_ts_decode of any attribute), cgroupstats replies, the attribute
 * walk, the sequence lookup and the batched reply matcher.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/taskstats.h>

#include "netlink.h"
#include "taskstats.h"

#define BATCH	8

static void check(int ok)
{
	if (!ok)
		abort();
}

static bool all_zero(const void *p, size_t len)
{
	const unsigned char *b = p;

	return !len || (!b[0] && !memcmp(b, b + 1, len - 1));
}

/*
 * What kb_ts_parse() promises of one aggregate: stats only where
 * present, a comm that ends inside its buffer, zero stats where none.
 */
static void check_aggr(const struct kb_ts_aggr *a)
{
	check(a->present || (!a->has_stats && !a->id));
	if (a->has_stats)
		check(memchr(a->stats.comm, '\0', sizeof(a->stats.comm)) != NULL);
	else
		check(all_zero(&a->stats, sizeof(a->stats)));
}

static void attributes(const char *buf, size_t len,
		       const struct nlmsghdr *nlh)
{
	const struct nlattr *nla, *inner;
	const char *attrs;
	struct kb_ts_stats ts;
	size_t alen, rem, irem;
	uint32_t v;

	attrs = kb_nl_genl_attrs(nlh, &alen);
	if (!attrs)
		return;
	check(attrs >= buf && attrs + alen <= buf + len);
	kb_nl_attr_for_each(nla, attrs, alen, rem) {
		const char *data = kb_nl_attr_data(nla);

		check(data >= attrs && data + kb_nl_attr_len(nla) <= attrs + alen);
		kb_nl_attr_get_u32(nla, &v);
		if (kb_ts_decode(data, kb_nl_attr_len(nla), &ts) == 0)
			check(memchr(ts.comm, '\0', sizeof(ts.comm)) != NULL);
		kb_nl_attr_for_each(inner, data, kb_nl_attr_len(nla), irem)
			check((const char *)kb_nl_attr_data(inner) +
			      kb_nl_attr_len(inner) <= data + kb_nl_attr_len(nla));
	}
	kb_nl_attr_find(attrs, alen, TASKSTATS_TYPE_AGGR_PID);
}

/* Each decoder on @nlh; returns the pid a reply carries (or 1). */
static pid_t message(const char *buf, size_t len, const struct nlmsghdr *nlh)
{
	struct kb_ts_cgroupstats cs;
	struct kb_ts_reply r;
	pid_t pid = 1;
	int id;

	check((const char *)nlh >= buf &&
	      (const char *)nlh + nlh->nlmsg_len <= buf + len);
	kb_nl_msg_error(nlh);
	kb_nl_ack_decode(nlh, NULL);
	id = kb_nl_genl_family_id_decode(nlh, NULL);
	check(id < 0x10000);
	/* A failed parse leaves @r defined too: check both outcomes. */
	if (kb_ts_parse(nlh, &r) == 0) {
		check(r.pid.has_stats || r.tgid.has_stats);
		if (r.pid.present)
			pid = (pid_t)r.pid.id;
	}
	check_aggr(&r.pid);
	check_aggr(&r.tgid);
	kb_ts_reply_decode(nlh, &r);
	kb_ts_reply_matches(nlh, pid);
	kb_ts_cgroupstats_decode(nlh, &cs);
	attributes(buf, len, nlh);
	return pid;
}

static void datagram(const char *buf, size_t len)
{
	bool answered[BATCH] = { false }, ok[BATCH] = { false };
	const struct nlmsghdr *nlh;
	pid_t pids[BATCH], pid;
	unsigned int k = 0, i, n;
	uint32_t base = 0;
	size_t off = 0;

	while ((nlh = kb_nl_msg_next(buf, len, &off))) {
		if (!k)
			base = nlh->nlmsg_seq;
		pid = message(buf, len, nlh);
		if (k < BATCH)
			pids[k++] = pid;
	}
	for (i = 0; i < k; i++)
		kb_nl_msg_find_seq(buf, len, base + i);
	n = kb_ts_batch_match(buf, len, pids, k, base, answered, ok);
	check(n <= k);
	for (i = 0; i < k; i++)
		check(answered[i] || !ok[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	datagram(buf, size);
	free(buf);
	return 0;
}
