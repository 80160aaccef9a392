// SPDX-License-Identifier: GPL-2.0
/*
 * Record the kernel's raw generic netlink replies that kbench decodes, as
 * seeds for fuzz_netlink: the family lookup of TASKSTATS (and of a family
 * that does not exist), taskstats of our pid and tgid, the error for a
 * pid that does not exist, cgroupstats of the memory cgroup's root, the
 * ack of a listener registration, and a burst of replies to pipelined
 * requests received back to back.
 *
 * Usage: record_corpus DIR RELEASE   (writes DIR/NAME-RELEASE per reply)
 * Needs root for taskstats (CAP_NET_ADMIN for the listener).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/cgroupstats.h>
#include <linux/taskstats.h>

#include "netlink.h"

static const char *out_dir, *release;

static int save(const char *name, const void *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s-%s", out_dir, name, release);
	f = fopen(path, "w");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

/* Send @req and save the next datagram the kernel sends back. */
static int record(struct kb_nl *nl, struct kb_nl_req *req, const char *name)
{
	static char buf[65536];
	ssize_t n;
	int err;

	err = kb_nl_send(nl, req, req->nlh.nlmsg_len);
	if (err)
		return err;
	n = kb_nl_recv(nl, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	return save(name, buf, (size_t)n);
}

static void family_req(struct kb_nl *nl, struct kb_nl_req *req,
		       const char *family)
{
	kb_genl_req_init(req, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1,
			 kb_nl_next_seq(nl));
	kb_nla_append_str(req, CTRL_ATTR_FAMILY_NAME, family);
}

static void ts_req(struct kb_nl *nl, struct kb_nl_req *req, uint8_t cmd,
		   uint16_t attr, uint32_t val)
{
	kb_genl_req_init(req, nl->family, cmd, TASKSTATS_GENL_VERSION,
			 kb_nl_next_seq(nl));
	kb_nla_append_u32(req, attr, val);
}

/* Several requests in flight, then each reply datagram as it comes. */
static int record_burst(struct kb_nl *nl)
{
	static char buf[65536];
	struct kb_nl_req req;
	char name[32];
	int i, err;
	ssize_t n;

	for (i = 0; i < 4; i++) {
		ts_req(nl, &req, TASKSTATS_CMD_GET, TASKSTATS_CMD_ATTR_PID,
		       i == 2 ? 0x7ffffff0u : (uint32_t)getpid());
		err = kb_nl_send(nl, &req, req.nlh.nlmsg_len);
		if (err)
			return err;
	}
	for (i = 0; i < 4; i++) {
		n = kb_nl_recv(nl, buf, sizeof(buf));
		if (n < 0)
			return (int)n;
		snprintf(name, sizeof(name), "burst%d", i);
		if (save(name, buf, (size_t)n))
			return -EIO;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct kb_nl_req req;
	struct kb_nl nl;
	int id, fd, bad = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DIR RELEASE\n", argv[0]);
		return 2;
	}
	out_dir = argv[1];
	release = argv[2];
	if (kb_nl_open(&nl, 0, 2000))
		return 1;
	family_req(&nl, &req, TASKSTATS_GENL_NAME);
	bad |= record(&nl, &req, "family") != 0;
	family_req(&nl, &req, "KBENCH_NO_SUCH");
	bad |= record(&nl, &req, "family-enoent") != 0;
	id = kb_genl_family_id(&nl, TASKSTATS_GENL_NAME);
	if (id <= 0) {
		fprintf(stderr, "no TASKSTATS family: %s\n", strerror(-id));
		return 1;
	}
	nl.family = (uint16_t)id;
	ts_req(&nl, &req, TASKSTATS_CMD_GET, TASKSTATS_CMD_ATTR_PID, getpid());
	bad |= record(&nl, &req, "pid") != 0;
	ts_req(&nl, &req, TASKSTATS_CMD_GET, TASKSTATS_CMD_ATTR_TGID, getpid());
	bad |= record(&nl, &req, "tgid") != 0;
	ts_req(&nl, &req, TASKSTATS_CMD_GET, TASKSTATS_CMD_ATTR_PID, 0x7ffffff0u);
	bad |= record(&nl, &req, "pid-esrch") != 0;
	kb_genl_req_init(&req, nl.family, TASKSTATS_CMD_GET,
			 TASKSTATS_GENL_VERSION, kb_nl_next_seq(&nl));
	req.nlh.nlmsg_flags |= NLM_F_ACK;
	kb_nla_append_str(&req, TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, "0");
	bad |= record(&nl, &req, "register-ack") != 0;
	kb_genl_req_init(&req, nl.family, TASKSTATS_CMD_GET,
			 TASKSTATS_GENL_VERSION, kb_nl_next_seq(&nl));
	req.nlh.nlmsg_flags |= NLM_F_ACK;
	kb_nla_append_str(&req, TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK, "0");
	bad |= record(&nl, &req, "deregister-ack") != 0;
	fd = open("/sys/fs/cgroup/memory", O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		fd = open("/sys/fs/cgroup", O_RDONLY | O_DIRECTORY);
	if (fd >= 0) {
		ts_req(&nl, &req, CGROUPSTATS_CMD_GET,
		       CGROUPSTATS_CMD_ATTR_FD, (uint32_t)fd);
		bad |= record(&nl, &req, "cgroupstats") != 0;
		close(fd);
	}
	bad |= record_burst(&nl) != 0;
	kb_nl_close(&nl);
	return bad;
}
