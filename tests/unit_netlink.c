// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of the buffer-level code of lib/netlink.c, lib/taskstats.c,
 * lib/proc.c and lib/taskstats_judge.c: request building, attribute and
 * message walking, the family-id, ack, taskstats and cgroupstats
 * decoders, the batched reply matcher, the /proc/PID/status parser and
 * the judgements of the taskstats checks, on hand-built buffers; and
 * lib/taskstats_method.c's units of a pass, on our own /proc files. Each
 * check has negative cases: a corrupted input must make it fail, which
 * is how a kernel bug we cannot inject would show. No socket is opened
 * here; the real kernel interface is exercised by taskstats/taskstats.
 *
 * Built and run by tests/run.sh unit_c, linked with every lib/ source.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/cgroupstats.h>
#include <linux/taskstats.h>

#include "ktap.h"
#include "children.h"
#include "netlink.h"
#include "taskstats.h"
#include "taskstats_judge.h"
#include "taskstats_method.h"

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

/* Whether @len bytes at @p are all zero. */
static bool is_zero(const void *p, size_t len)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i])
			return false;
	return true;
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
	if (len >= 416 + (version == 15 ? 96 : 0)) {
		put_u64(p, 400 + (version == 15 ? 96 : 0), 64); /* wpcopy_count */
		put_u64(p, 408 + (version == 15 ? 96 : 0), 99); /* wpcopy_delay */
	}
}

static void test_request_building(void)
{
	struct kb_nl_req req;
	const struct nlattr *nla;
	const void *attrs;
	uint32_t v = 0;
	size_t len;
	bool ok;

	kb_nl_genl_req_init(&req, 31, 1, 1, 77);
	ok = req.nlh.nlmsg_len == NLMSG_HDRLEN + GENL_HDRLEN &&
	     req.nlh.nlmsg_type == 31 && req.nlh.nlmsg_seq == 77 &&
	     (req.nlh.nlmsg_flags & NLM_F_REQUEST);
	ok = ok && !kb_nl_attr_append_str(&req, 2, "abc");	/* 4+4 bytes */
	ok = ok && !kb_nl_attr_append_u32(&req, 1, 4242);
	ok = ok && req.nlh.nlmsg_len == NLMSG_HDRLEN + GENL_HDRLEN + 8 + 8;
	attrs = kb_nl_genl_attrs(&req.nlh, &len);
	nla = attrs ? kb_nl_attr_find(attrs, len, 1) : NULL;
	ok = ok && nla && !kb_nl_attr_get_u32(nla, &v) && v == 4242;
	nla = attrs ? kb_nl_attr_find(attrs, len, 2) : NULL;
	ok = ok && nla && kb_nl_attr_len(nla) == 4 &&
	     !strcmp(kb_nl_attr_data(nla), "abc");
	kb_ktap_result(ok, "request_building", "header or attribute layout wrong");

	kb_nl_genl_req_init(&req, 31, 1, 1, 1);
	kb_ktap_result(kb_nl_attr_append(&req, 1, buf.b, KB_NL_REQ_MAX) == -EMSGSIZE,
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
	kb_nl_attr_for_each(nla, buf.b, off, rem)
		if (n < 8)
			types[n++] = kb_nl_attr_type(nla);
	kb_ktap_result(n == 3 && types[0] == 1 && types[1] == 2 && types[2] == 3,
		       "attr_walk", "wrong attributes, order or flag masking");

	/* An attribute claiming more bytes than remain ends the walk. */
	n = 0;
	off = put_attr(buf.b, 0, 1, &u, 4);
	put_attr(buf.b, off, 2, &u, 4);
	buf.b[off] = 200;
	kb_nl_attr_for_each(nla, buf.b, off + 8, rem)
		n++;
	kb_ktap_result(n == 1, "attr_overrun", "walked into an attribute running past the end");

	/* A length below the header size must not loop forever. */
	n = 0;
	put_attr(buf.b, 0, 1, &u, 4);
	buf.b[0] = 2;
	kb_nl_attr_for_each(nla, buf.b, 8, rem)
		n++;
	kb_ktap_result(n == 0 && kb_nl_attr_find(buf.b, 3, 1) == NULL, "attr_short",
		       "accepted an attribute shorter than its header");

	put_attr(buf.b, 0, 1, &u, 2);
	nla = kb_nl_attr_first(buf.b, 8, &rem);
	kb_ktap_result(nla && kb_nl_attr_get_u32(nla, &u) == -EINVAL, "attr_u32_short",
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
		     ts.wpcopy_count == 64 && ts.wpcopy_delay_total == 99 &&
		     !strcmp(ts.comm, "kb_sleeper");
		snprintf(name, sizeof(name), "decode_v%u", cases[i].version);
		snprintf(why, sizeof(why), "version %u, %zu bytes decoded wrongly",
			 cases[i].version, cases[i].len);
		kb_ktap_result(ok, name, why);
	}

	/* A payload that ends after ac_pid: later fields read as zero. */
	fill_stats(p, 416, 13, 99);
	kb_ktap_result(!kb_ts_decode(p, 132, &ts) && ts.pid == 99 &&
		       ts.utime == 0 && ts.tgid == 0, "decode_short",
		       "fields beyond the payload were not zero");
	kb_ktap_result(kb_ts_decode(p, 1, &ts) == -EBADMSG, "decode_tiny",
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
	while ((nlh = kb_nl_msg_next(buf.b, len, &off)))
		n++;
	kb_ktap_result(n == 2, "msg_walk", "two messages in one datagram not both seen");

	off = 0;
	nlh = kb_nl_msg_next(buf.b, len, &off);
	/* What a parse leaves must not depend on what @r held before. */
	memset(&r, 0xa5, sizeof(r));
	err = nlh ? kb_ts_parse(nlh, &r) : -1;
	kb_ktap_result(!err && r.pid.present && r.pid.id == 1000 && r.pid.has_stats &&
		       r.pid.stats.pid == 1000 && !r.tgid.present, "parse_aggr_pid",
		       "AGGR_PID reply parsed wrongly");
	kb_ktap_result(!err && !r.tgid.has_stats && !r.tgid.id &&
		       is_zero(&r.tgid.stats, sizeof(r.tgid.stats)),
		       "parse_absent_aggr_zero",
		       "the AGGR_TGID a reply lacks kept what the caller's struct held");
	nlh = kb_nl_msg_next(buf.b, len, &off);
	err = nlh ? kb_ts_parse(nlh, &r) : -1;
	kb_ktap_result(!err && r.pid.id == 1001 && r.tgid.present &&
		       r.tgid.id == 1001 && r.tgid.has_stats, "parse_aggr_tgid",
		       "exit record with AGGR_PID and AGGR_TGID parsed wrongly");

	/* A header longer than the datagram stops the walk. */
	off = 0;
	kb_ktap_result(kb_nl_msg_next(buf.b, 12, &off) == NULL, "msg_truncated",
		       "a truncated header was returned");

	memset(buf.b, 0, 64);
	buf.nlh.nlmsg_len = NLMSG_LENGTH(sizeof(*e));
	buf.nlh.nlmsg_type = NLMSG_ERROR;
	e = NLMSG_DATA(&buf.nlh);
	e->error = -ESRCH;
	memset(&r, 0xa5, sizeof(r));
	kb_ktap_result(kb_nl_msg_error(&buf.nlh) == -ESRCH &&
		       kb_ts_parse(&buf.nlh, &r) == -ESRCH, "msg_error",
		       "NLMSG_ERROR not reported as its errno");
	kb_ktap_result(is_zero(&r, sizeof(r)), "parse_error_zero",
		       "a failed parse left the caller's struct as it was");

	/* A reply without any stats attribute is malformed. */
	memset(buf.b, 0, 64);
	len = put_attr(buf.b, NLMSG_HDRLEN + GENL_HDRLEN, TASKSTATS_TYPE_NULL,
		       NULL, 0);
	buf.nlh.nlmsg_len = len;
	buf.nlh.nlmsg_type = 31;
	kb_ktap_result(kb_ts_parse(&buf.nlh, &r) == -EBADMSG, "parse_no_stats",
		       "a reply without stats was accepted");
}

/* A generic netlink message of @type with one attribute; returns its length. */
static size_t build_genl(unsigned char *at, uint16_t type, uint32_t seq,
			 uint16_t attr, const void *data, uint16_t len)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)at;
	size_t off;

	memset(at, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	off = put_attr(at, NLMSG_HDRLEN + GENL_HDRLEN, attr, data, len);
	nlh->nlmsg_len = off;
	nlh->nlmsg_type = type;
	nlh->nlmsg_seq = seq;
	return off;
}

/* An NLMSG_ERROR message carrying @err (0: an ack). */
static void build_error(unsigned char *at, uint32_t seq, int err)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)at;
	struct nlmsgerr *e = NLMSG_DATA(nlh);

	memset(at, 0, NLMSG_LENGTH(sizeof(*e)));
	nlh->nlmsg_len = NLMSG_LENGTH(sizeof(*e));
	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_seq = seq;
	e->error = err;
}

static void test_family_and_ack(void)
{
	uint16_t id = 31, zero = 0;
	uint8_t one = 7;

	build_genl(buf.b, GENL_ID_CTRL, 1, CTRL_ATTR_FAMILY_ID, &id, 2);
	kb_ktap_result(kb_nl_genl_family_id_decode(&buf.nlh, NULL) == 31,
		       "family_id_decode", "the family id was not read");
	build_genl(buf.b, GENL_ID_CTRL, 1, CTRL_ATTR_FAMILY_ID, &zero, 2);
	kb_ktap_result(kb_nl_genl_family_id_decode(&buf.nlh, NULL) == -EBADMSG,
		       "family_id_zero", "a zero family id was accepted");
	build_genl(buf.b, GENL_ID_CTRL, 1, CTRL_ATTR_FAMILY_ID, &one, 1);
	kb_ktap_result(kb_nl_genl_family_id_decode(&buf.nlh, NULL) == -EBADMSG,
		       "family_id_short", "a 1-byte family id was accepted");
	build_genl(buf.b, GENL_ID_CTRL, 1, CTRL_ATTR_FAMILY_NAME, "x", 2);
	kb_ktap_result(kb_nl_genl_family_id_decode(&buf.nlh, NULL) == -EBADMSG,
		       "family_id_missing", "a reply without CTRL_ATTR_FAMILY_ID was accepted");
	build_error(buf.b, 1, -ENOENT);
	kb_ktap_result(kb_nl_genl_family_id_decode(&buf.nlh, NULL) == -ENOENT,
		       "family_id_enoent", "the kernel's ENOENT was not passed on");

	build_error(buf.b, 1, 0);
	kb_ktap_result(kb_nl_ack_decode(&buf.nlh, NULL) == 0, "ack_decode",
		       "an ack was not 0");
	build_error(buf.b, 1, -ERANGE);
	kb_ktap_result(kb_nl_ack_decode(&buf.nlh, NULL) == -ERANGE, "ack_error",
		       "an error message was not its -errno");
	build_genl(buf.b, 31, 1, 1, &id, 2);
	kb_ktap_result(kb_nl_ack_decode(&buf.nlh, NULL) == 1, "ack_data",
		       "a data message was taken for an ack");
	buf.nlh.nlmsg_type = NLMSG_ERROR;
	buf.nlh.nlmsg_len = NLMSG_HDRLEN + 2;
	kb_ktap_result(kb_nl_ack_decode(&buf.nlh, NULL) == -EBADMSG, "ack_short",
		       "an error message too short for its errno was accepted");
}

static void test_cgroupstats_decode(void)
{
	struct kb_ts_cgroupstats cs;
	uint64_t v[5] = { 5, 4, 3, 2, 1 };

	build_genl(buf.b, 31, 1, CGROUPSTATS_TYPE_CGROUP_STATS, v, sizeof(v));
	kb_ktap_result(!kb_ts_cgroupstats_decode(&buf.nlh, &cs) &&
		       cs.nr_sleeping == 5 && cs.nr_running == 4 &&
		       cs.nr_stopped == 3 && cs.nr_uninterruptible == 2 &&
		       cs.nr_io_wait == 1, "cgroupstats_decode",
		       "the fields were not read in uapi order");
	build_genl(buf.b, 31, 1, CGROUPSTATS_TYPE_CGROUP_STATS, v, 16);
	kb_ktap_result(!kb_ts_cgroupstats_decode(&buf.nlh, &cs) &&
		       cs.nr_running == 4 && !cs.nr_stopped && !cs.nr_io_wait,
		       "cgroupstats_short", "fields beyond a short reply were not zero");
	build_genl(buf.b, 31, 1, CGROUPSTATS_TYPE_UNSPEC, v, sizeof(v));
	kb_ktap_result(kb_ts_cgroupstats_decode(&buf.nlh, &cs) == -EBADMSG,
		       "cgroupstats_missing", "a reply without the stats was accepted");
	build_error(buf.b, 1, -EINVAL);
	memset(&cs, 0xa5, sizeof(cs));
	kb_ktap_result(kb_ts_cgroupstats_decode(&buf.nlh, &cs) == -EINVAL,
		       "cgroupstats_einval", "the kernel's EINVAL was not passed on");
	kb_ktap_result(is_zero(&cs, sizeof(cs)), "cgroupstats_error_zero",
		       "a failed decode left the caller's struct as it was");
}

static void test_batch_match(void)
{
	const pid_t pids[3] = { 100, 101, 102 };
	bool answered[3] = { false }, ok[3] = { false };
	size_t len = 0;
	unsigned int seen;

	/* seq 10..12; the reply to 11 carries another pid; 99 is stray. */
	len += NLMSG_ALIGN(build_reply(buf.b + len, 10, 100, 560, 16, false));
	len += NLMSG_ALIGN(build_reply(buf.b + len, 11, 555, 560, 16, false));
	len += NLMSG_ALIGN(build_reply(buf.b + len, 99, 102, 560, 16, false));
	len += NLMSG_ALIGN(build_reply(buf.b + len, 10, 100, 560, 16, false));
	seen = kb_ts_batch_match(buf.b, len, pids, 3, 10, answered, ok);
	kb_ktap_result(seen == 2 && answered[0] && answered[1] && !answered[2] &&
		       ok[0] && !ok[1], "batch_match",
		       "wrong pid, stray or repeated replies were miscounted");
	build_error(buf.b, 12, -ESRCH);
	seen = kb_ts_batch_match(buf.b, NLMSG_LENGTH(sizeof(struct nlmsgerr)),
				 pids, 3, 10, answered, ok);
	kb_ktap_result(seen == 1 && answered[2] && !ok[2], "batch_match_error",
		       "an error reply was taken for an answer with stats");

	/* ac_pid must match too, not only TASKSTATS_TYPE_PID. */
	len = build_reply(buf.b, 1, 100, 560, 16, false);
	put_u32(buf.b, len - 560 + 128, 101);
	kb_ktap_result(!kb_ts_reply_matches(&buf.nlh, 100), "reply_ac_pid",
		       "a reply whose ac_pid is another task's matched");
	kb_ktap_result(kb_nl_msg_find_seq(buf.b, len, 1) == &buf.nlh &&
		       !kb_nl_msg_find_seq(buf.b, len, 2), "find_seq",
		       "the message of a sequence number was not found");
}

static const char stat_text[] =
	"4242 (a) (b)) S 4241 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 123 0 0\n";
static const char status_text[] =
	"Name:\ta) (b)\nState:\tS (sleeping)\n"
	"voluntary_ctxt_switches:\t17\nnonvoluntary_ctxt_switches:\t3\n";

static void test_proc_parsers(void)
{
	struct kb_proc_task p;

	memset(&p, 0, sizeof(p));
	kb_ktap_result(!kb_proc_status_parse(status_text, strlen(status_text),
					     &p) && p.nvcsw == 17 && p.nivcsw == 3,
		       "proc_status_parse", "context switch counts misread");
	kb_ktap_result(kb_proc_status_parse(status_text, 40, &p) == -EBADMSG,
		       "proc_status_missing", "status without the counts was accepted");

	kb_ktap_result(kb_proc_stat_is_pid("42 (x) S", 8, 42) &&
		       !kb_proc_stat_is_pid("42 (x) S", 8, 4) &&
		       !kb_proc_stat_is_pid("421 (x)", 7, 42) &&
		       !kb_proc_stat_is_pid("42", 0, 42) &&
		       !kb_proc_stat_is_pid("42 (x)", 2, 42) &&
		       !kb_proc_stat_is_pid("-42 (x)", 7, -42), "stat_is_pid",
		       "another task's or an empty stat was taken for ours");
	kb_ktap_result(kb_proc_comm_contains("kb_sleeper\n", 11, "sleep") &&
		       !kb_proc_comm_contains("kb_sleeper\n", 11, "sleeper\n") &&
		       !kb_proc_comm_contains("kb_sleeper", -1, "kb"), "comm_matches",
		       "comm matching is wrong");
	kb_ktap_result(kb_proc_loadavg_threads("0.00 0.01 0.05 1/234 5678\n") == 234 &&
		       kb_proc_loadavg_threads("0.00 0.01 0.05") == -1 &&
		       kb_proc_loadavg_threads("1/x") == -1, "loadavg_threads",
		       "/proc/loadavg thread count misread");
}

/* What taskstats would say of the task of stat_text/status_text. */
static void stats_of_text(struct kb_ts_stats *ts)
{
	memset(ts, 0, sizeof(*ts));
	ts->pid = 4242;
	ts->ppid = 4241;
	snprintf(ts->comm, sizeof(ts->comm), "a) (b)");
	ts->nvcsw = 17;
	ts->nivcsw = 3;
	ts->utime = 2400000;
	ts->stime = 500000;
	ts->cpu_run_virtual_total = 3000000000ull;
}

static void test_matches_proc(void)
{
	const unsigned int all = KB_TS_JUDGE_IDS | KB_TS_JUDGE_CTXT | KB_TS_JUDGE_CPU;
	struct kb_ts_stats ts;
	struct kb_proc_task p;
	char why[200];
	bool ok;

	memset(&p, 0, sizeof(p));
	kb_proc_stat_parse(stat_text, &p.stat);
	kb_proc_status_parse(status_text, strlen(status_text), &p);
	stats_of_text(&ts);
	kb_ktap_result(kb_ts_judge_proc(&ts, &p, all, 100, why, sizeof(why)),
		       "matches_proc", "a faithful record did not match");
#define CORRUPT(field, value, name) do {				\
	stats_of_text(&ts);						\
	ts.field = value;						\
	kb_ktap_result(!kb_ts_judge_proc(&ts, &p, all, 100, why, sizeof(why)), \
		  name, "a corrupted " #field " matched /proc");	\
} while (0)
	CORRUPT(pid, 4243, "matches_proc_pid");
	CORRUPT(ppid, 1, "matches_proc_ppid");
	CORRUPT(nvcsw, 18, "matches_proc_nvcsw");
	CORRUPT(nivcsw, 17, "matches_proc_nivcsw");
	/* etime (us since start) read in place of the runtime */
	CORRUPT(cpu_run_virtual_total, 9000000000ull, "matches_proc_runtime");
	CORRUPT(utime, 9000000, "matches_proc_utime");
#undef CORRUPT
	stats_of_text(&ts);
	ts.comm[0] = 'b';
	kb_ktap_result(!kb_ts_judge_proc(&ts, &p, all, 100, why, sizeof(why)),
		       "matches_proc_comm", "a corrupted comm matched /proc");
	/* Tick-sampled time may be lower (lost ticks); only gross excess fails. */
	stats_of_text(&ts);
	ts.utime = 100000;
	ts.stime = 0;
	ok = kb_ts_judge_proc(&ts, &p, all, 100, why, sizeof(why));
	ts.cpu_run_virtual_total = 0;
	kb_ktap_result(ok && !kb_ts_judge_proc(&ts, &p, all, 100, why,
					       sizeof(why)),
		       "matches_proc_lost_ticks",
		       "lost ticks judged wrongly with and without the runtime");
}

static void test_plausible(void)
{
	struct kb_ts_stats t[3], g, on, off;
	struct kb_ts_cgroupstats cs = { 1000, 20, 0, 1, 0 };
	char why[200];
	int i;

	memset(t, 0, sizeof(t));
	for (i = 0; i < 3; i++) {
		t[i].cpu_run_virtual_total = 100000000;	/* 100 ms */
		t[i].nvcsw = 2;
	}
	memset(&g, 0, sizeof(g));
	g.cpu_run_virtual_total = 300500000;
	g.nvcsw = 6;
	kb_ktap_result(kb_ts_judge_tgid(&g, t, 3, 300000, why, sizeof(why)),
		       "tgid_plausible", "a faithful aggregate was rejected");
	g.cpu_run_virtual_total = 600000000;
	kb_ktap_result(!kb_ts_judge_tgid(&g, t, 3, 300000, why, sizeof(why)),
		       "tgid_double_counted", "an aggregate counted twice passed");
	g.cpu_run_virtual_total = 200000000;
	kb_ktap_result(!kb_ts_judge_tgid(&g, t, 3, 300000, why, sizeof(why)),
		       "tgid_thread_missing", "an aggregate missing a thread passed");
	g.cpu_run_virtual_total = 300000000;
	g.nvcsw = 8;
	kb_ktap_result(!kb_ts_judge_tgid(&g, t, 3, 300000, why, sizeof(why)),
		       "tgid_nvcsw_sum", "context switches not the threads' sum passed");

	memset(&on, 0, sizeof(on));
	memset(&off, 0, sizeof(off));
	on.wpcopy_count = 70;
	on.wpcopy_delay_total = 200000;
	kb_ktap_result(kb_ts_judge_wpcopy(&on, &off, 64, why, sizeof(why)),
		       "wpcopy_plausible", "a faithful wpcopy count was rejected");
	off.wpcopy_count = 64;
	off.wpcopy_delay_total = 1000;
	kb_ktap_result(!kb_ts_judge_wpcopy(&on, &off, 64, why, sizeof(why)),
		       "wpcopy_knob_off", "a count with the knob off passed");
	memset(&off, 0, sizeof(off));
	on.wpcopy_count = 0;
	kb_ktap_result(!kb_ts_judge_wpcopy(&on, &off, 64, why, sizeof(why)),
		       "wpcopy_too_few", "no copy counted with the knob on passed");
	on.wpcopy_count = 64 * 3;
	on.wpcopy_count += KB_TS_JUDGE_WPCOPY_SLACK;
	kb_ktap_result(!kb_ts_judge_wpcopy(&on, &off, 64, why, sizeof(why)),
		       "wpcopy_too_many", "a count far above the pages written passed");
	on.wpcopy_count = 64;
	on.wpcopy_delay_total = 0;
	kb_ktap_result(!kb_ts_judge_wpcopy(&on, &off, 64, why, sizeof(why)),
		       "wpcopy_no_delay", "copies without any delay passed");

	kb_ktap_result(kb_ts_judge_cgroupstats(&cs, 1000, 1030, why, sizeof(why)),
		       "cgroupstats_plausible", "a faithful answer was rejected");
	kb_ktap_result(!kb_ts_judge_cgroupstats(&cs, 1001, 1030, why, sizeof(why)),
		       "cgroupstats_sleepers", "fewer sleeping than our sleepers passed");
	cs.nr_sleeping = 2000;
	kb_ktap_result(!kb_ts_judge_cgroupstats(&cs, 1000, 1030, why, sizeof(why)),
		       "cgroupstats_double", "tasks counted twice passed");
}

/*
 * Exact mode's samples: the units of a pass (a pid, a batch, the whole
 * iterator) and a pass timed unit by unit, on our own pid's /proc files
 * (no socket, no privilege).
 */
static void test_method_units(void)
{
	pid_t pids[3] = { getpid(), getpid(), getpid() };
	enum kb_ts_method procfs[2] = { KB_TS_METHOD_PROCFS,
					KB_TS_METHOD_PROCFS_PREAD };
	double unit_ns[3], sum;
	struct kb_ts_method_ctx *ctx;
	bool ok[3], good;
	char why[200];
	uint64_t ns;
	long got;
	int err, i, u;

	kb_ktap_result(kb_ts_method_unit_pids(KB_TS_METHOD_NETLINK_PER_PID, 64, 200) == 1 &&
		       kb_ts_method_unit_pids(KB_TS_METHOD_PROCFS, 64, 200) == 1 &&
		       kb_ts_method_unit_pids(KB_TS_METHOD_PROCFS_PREAD, 64, 200) == 1 &&
		       kb_ts_method_unit_pids(KB_TS_METHOD_IOCTL, 64, 200) == 1,
		       "units_per_pid", "a per-pid method's unit is not one pid");
	kb_ktap_result(kb_ts_method_unit_pids(KB_TS_METHOD_NETLINK_BATCHED, 16, 200) == 16 &&
		       kb_ts_method_unit_pids(KB_TS_METHOD_NETLINK_BATCHED, 0, 200) ==
		       KB_TS_METHOD_DEFAULT_BATCH,
		       "units_batched", "a batched unit is not one sendmsg's requests");
	kb_ktap_result(kb_ts_method_unit_pids(KB_TS_METHOD_BPF_ITER, 64, 200) == 200 &&
		       kb_ts_method_unit_pids(KB_TS_METHOD_BPF_ITER, 64, 0) == 1,
		       "units_bpf_iter", "the iterator's unit is not its whole pass");
	for (i = 0; i < 2; i++) {
		ctx = kb_ts_method_open(procfs[i], 0, pids, 3, &err, why,
					sizeof(why));
		good = ctx && kb_ts_method_units(ctx) == 3;
		got = good ? kb_ts_method_pass_units(ctx, ok, &ns, unit_ns) : -1;
		good = got == 3 && ok[0] && ok[1] && ok[2];
		for (u = 0, sum = 0; good && u < 3; u++) {
			good = unit_ns[u] > 0;
			sum += unit_ns[u];
		}
		kb_ktap_result(good && sum < (double)ns, i ? "units_procfs_pread" :
			       "units_procfs",
			       "a pass timed unit by unit: not 3 units answered, within the pass");
		kb_ts_method_close(ctx);
	}
}

int main(int argc, char **argv)
{
	kb_init("unit_netlink", argc, argv);
	ksft_print_header();
	ksft_set_plan(70);
	test_request_building();
	test_attribute_walk();
	test_decode_versions();
	test_messages();
	test_family_and_ack();
	test_cgroupstats_decode();
	test_batch_match();
	test_proc_parsers();
	test_matches_proc();
	test_plausible();
	test_method_units();
	kb_ktap_finish(NULL);
}
