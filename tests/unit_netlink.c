// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of lib/netlink.c's pure parsing code: request building,
 * attribute and message walking, and taskstats decoding by length and
 * version, on hand-built buffers. No socket is opened here; the real
 * kernel interface is exercised by taskstats/taskstats.
 *
 * Build: gcc -I<ksft> -Ilib tests/unit_netlink.c lib/kbench.c lib/netlink.c -lcap -lm
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/taskstats.h>

#include "kbench_ktap.h"
#include "netlink.h"
#include "taskstats.h"

/* Hand-built buffers, written independently of the code under test. */
static union {
	struct nlmsghdr nlh;
	unsigned char b[8192];
} buf;

/* Append an attribute at @off; returns the aligned end. */
static size_t put_attr(unsigned char *at, size_t off, uint16_t type,
		       const void *data, uint16_t len)
{
	uint16_t total = 4 + len;

	memcpy(at + off, &total, 2);
	memcpy(at + off + 2, &type, 2);
	if (len)
		memcpy(at + off + 4, data, len);
	return off + ((total + 3) & ~3u);
}

static void put_u64(unsigned char *p, size_t off, uint64_t v)
{
	memcpy(p + off, &v, sizeof(v));
}

static void put_u32(unsigned char *p, size_t off, uint32_t v)
{
	memcpy(p + off, &v, sizeof(v));
}

/* A struct taskstats payload with marker values at the common offsets. */
static void fill_stats(unsigned char *p, size_t len, uint16_t version,
		       uint32_t pid)
{
	size_t shift15 = version == 15 ? 48 : 0;	/* three max/min pairs */

	memset(p, 0, len);
	memcpy(p, &version, 2);
	put_u32(p, 4, 0x700);				/* ac_exitcode */
	put_u64(p, 16, 11);				/* cpu_count */
	put_u64(p, 24, 22);				/* cpu_delay_total */
	memcpy(p + 80 + shift15, "kb_sleeper", 11);	/* ac_comm */
	put_u32(p, 128 + shift15, pid);			/* ac_pid */
	put_u64(p, 152 + shift15, 1234);		/* ac_utime */
	put_u64(p, 160 + shift15, 5678);		/* ac_stime */
	if (len >= 372 + (version == 15 ? 96 : 0))
		put_u32(p, 368 + (version == 15 ? 96 : 0), pid); /* ac_tgid */
}

static void test_request_building(void)
{
	struct kb_nl_req req;
	const struct nlattr *nla;
	const void *attrs;
	uint32_t v = 0;
	size_t len;
	bool ok;

	kb_genl_req_init(&req, 31, 1, 1, 77);
	ok = req.nlh.nlmsg_len == NLMSG_HDRLEN + GENL_HDRLEN &&
	     req.nlh.nlmsg_type == 31 && req.nlh.nlmsg_seq == 77 &&
	     (req.nlh.nlmsg_flags & NLM_F_REQUEST);
	ok = ok && !kb_nla_append_str(&req, 2, "abc");	/* 4+4 bytes */
	ok = ok && !kb_nla_append_u32(&req, 1, 4242);
	ok = ok && req.nlh.nlmsg_len == NLMSG_HDRLEN + GENL_HDRLEN + 8 + 8;
	attrs = kb_genl_attrs(&req.nlh, &len);
	nla = attrs ? kb_nla_find(attrs, len, 1) : NULL;
	ok = ok && nla && !kb_nla_get_u32(nla, &v) && v == 4242;
	nla = attrs ? kb_nla_find(attrs, len, 2) : NULL;
	ok = ok && nla && kb_nla_len(nla) == 4 &&
	     !strcmp(kb_nla_data(nla), "abc");
	kb_result(ok, "request_building", "header or attribute layout wrong");

	kb_genl_req_init(&req, 31, 1, 1, 1);
	kb_result(kb_nla_append(&req, 1, buf.b, KB_NL_REQ_MAX) == -EMSGSIZE,
		  "request_overflow", "an oversized attribute was accepted");
}

static void test_attribute_walk(void)
{
	const struct nlattr *nla;
	uint16_t types[8];
	size_t off = 0, rem;
	uint32_t u = 5;
	int n = 0;

	off = put_attr(buf.b, off, 1, &u, 4);
	off = put_attr(buf.b, off, 2 | NLA_F_NESTED, "xyz", 3);	/* padded */
	off = put_attr(buf.b, off, 3, NULL, 0);
	kb_nla_for_each(nla, buf.b, off, rem)
		if (n < 8)
			types[n++] = kb_nla_type(nla);
	kb_result(n == 3 && types[0] == 1 && types[1] == 2 && types[2] == 3,
		  "attr_walk", "wrong attributes, order or flag masking");

	/* An attribute claiming more bytes than remain ends the walk. */
	n = 0;
	off = put_attr(buf.b, 0, 1, &u, 4);
	put_attr(buf.b, off, 2, &u, 4);
	buf.b[off] = 200;
	kb_nla_for_each(nla, buf.b, off + 8, rem)
		n++;
	kb_result(n == 1, "attr_overrun", "walked into an attribute running past the end");

	/* A length below the header size must not loop forever. */
	n = 0;
	put_attr(buf.b, 0, 1, &u, 4);
	buf.b[0] = 2;
	kb_nla_for_each(nla, buf.b, 8, rem)
		n++;
	kb_result(n == 0 && kb_nla_find(buf.b, 3, 1) == NULL, "attr_short",
		  "accepted an attribute shorter than its header");

	put_attr(buf.b, 0, 1, &u, 2);
	nla = kb_nla_first(buf.b, 8, &rem);
	kb_result(nla && kb_nla_get_u32(nla, &u) == -EINVAL, "attr_u32_short",
		  "read a u32 out of a 2-byte attribute");
}

/* Build one TASKSTATS_CMD_NEW message at @at; returns its length. */
static size_t build_reply(unsigned char *at, uint32_t seq, uint32_t pid,
			  size_t stats_len, uint16_t version, bool with_tgid)
{
	static unsigned char stats[1024], nest[1200];
	struct nlmsghdr *nlh = (struct nlmsghdr *)at;
	size_t off = NLMSG_HDRLEN + GENL_HDRLEN, nl;

	memset(at, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	fill_stats(stats, stats_len, version, pid);
	nl = put_attr(nest, 0, TASKSTATS_TYPE_PID, &pid, 4);
	nl = put_attr(nest, nl, TASKSTATS_TYPE_STATS, stats, stats_len);
	off = put_attr(at, off, TASKSTATS_TYPE_AGGR_PID | NLA_F_NESTED, nest, nl);
	if (with_tgid) {
		nl = put_attr(nest, 0, TASKSTATS_TYPE_TGID, &pid, 4);
		nl = put_attr(nest, nl, TASKSTATS_TYPE_STATS, stats, stats_len);
		off = put_attr(at, off, TASKSTATS_TYPE_AGGR_TGID, nest, nl);
	}
	nlh->nlmsg_len = off;
	nlh->nlmsg_type = 31;
	nlh->nlmsg_seq = seq;
	at[NLMSG_HDRLEN] = TASKSTATS_CMD_NEW;
	return off;
}

static void test_decode_versions(void)
{
	static unsigned char p[1024];
	struct kb_ts_stats ts;
	static const struct { uint16_t version; size_t len; } cases[] = {
		{ 13, 416 }, { 14, 432 }, { 15, 560 }, { 16, 560 }, { 17, 700 },
	};
	char name[32], why[96];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		bool ok;

		fill_stats(p, cases[i].len, cases[i].version, 4321);
		ok = !kb_ts_decode(p, cases[i].len, &ts) &&
		     ts.version == cases[i].version && ts.len == cases[i].len &&
		     ts.pid == 4321 && ts.tgid == 4321 && ts.utime == 1234 &&
		     ts.stime == 5678 && ts.cpu_count == 11 &&
		     ts.cpu_delay_total == 22 && ts.exitcode == 0x700 &&
		     !strcmp(ts.comm, "kb_sleeper");
		snprintf(name, sizeof(name), "decode_v%u", cases[i].version);
		snprintf(why, sizeof(why), "version %u, %zu bytes decoded wrongly",
			 cases[i].version, cases[i].len);
		kb_result(ok, name, why);
	}

	/* A payload that ends after ac_pid: later fields read as zero. */
	fill_stats(p, 416, 13, 99);
	kb_result(!kb_ts_decode(p, 132, &ts) && ts.pid == 99 &&
		  ts.utime == 0 && ts.tgid == 0, "decode_short",
		  "fields beyond the payload were not zero");
	kb_result(kb_ts_decode(p, 1, &ts) == -EBADMSG, "decode_tiny",
		  "a 1-byte payload was accepted");
}

static void test_messages(void)
{
	const struct nlmsghdr *nlh;
	struct kb_ts_reply r;
	struct nlmsgerr *e;
	size_t len, off = 0;
	int n = 0, err;

	len = build_reply(buf.b, 5, 1000, 560, 16, false);
	len = NLMSG_ALIGN(len);
	len += build_reply(buf.b + len, 6, 1001, 560, 16, true);
	while ((nlh = kb_nlmsg_next(buf.b, len, &off)))
		n++;
	kb_result(n == 2, "msg_walk", "two messages in one datagram not both seen");

	off = 0;
	nlh = kb_nlmsg_next(buf.b, len, &off);
	err = nlh ? kb_ts_parse(nlh, &r) : -1;
	kb_result(!err && r.pid.present && r.pid.id == 1000 && r.pid.has_stats &&
		  r.pid.stats.pid == 1000 && !r.tgid.present, "parse_aggr_pid",
		  "AGGR_PID reply parsed wrongly");
	nlh = kb_nlmsg_next(buf.b, len, &off);
	err = nlh ? kb_ts_parse(nlh, &r) : -1;
	kb_result(!err && r.pid.id == 1001 && r.tgid.present &&
		  r.tgid.id == 1001 && r.tgid.has_stats, "parse_aggr_tgid",
		  "exit record with AGGR_PID and AGGR_TGID parsed wrongly");

	/* A header longer than the datagram stops the walk. */
	off = 0;
	kb_result(kb_nlmsg_next(buf.b, 12, &off) == NULL, "msg_truncated",
		  "a truncated header was returned");

	memset(buf.b, 0, 64);
	buf.nlh.nlmsg_len = NLMSG_LENGTH(sizeof(*e));
	buf.nlh.nlmsg_type = NLMSG_ERROR;
	e = NLMSG_DATA(&buf.nlh);
	e->error = -ESRCH;
	kb_result(kb_nlmsg_error(&buf.nlh) == -ESRCH &&
		  kb_ts_parse(&buf.nlh, &r) == -ESRCH, "msg_error",
		  "NLMSG_ERROR not reported as its errno");

	/* A reply without any stats attribute is malformed. */
	memset(buf.b, 0, 64);
	len = put_attr(buf.b, NLMSG_HDRLEN + GENL_HDRLEN, TASKSTATS_TYPE_NULL,
		       NULL, 0);
	buf.nlh.nlmsg_len = len;
	buf.nlh.nlmsg_type = 31;
	kb_result(kb_ts_parse(&buf.nlh, &r) == -EBADMSG, "parse_no_stats",
		  "a reply without stats was accepted");
}

int main(int argc, char **argv)
{
	kb_init("unit_netlink", argc, argv);
	ksft_print_header();
	ksft_set_plan(19);
	test_request_building();
	test_attribute_walk();
	test_decode_versions();
	test_messages();
	kb_finish(NULL);
}
