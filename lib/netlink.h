/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kbench generic netlink and taskstats helpers: a NETLINK_GENERIC socket,
 * family lookup, request building, attribute walking, and decoding of
 * taskstats / cgroupstats replies by attribute length, for any struct
 * taskstats version from 1 up (fields the reply is too short to hold read
 * as zero).
 *
 * Nothing here depends on the struct taskstats of the installed uapi
 * headers: a 6.1 header says version 13 (416 bytes) while a 6.18 kernel
 * replies version 16 (560 bytes), and version 15 moved fields.
 */
#ifndef KBENCH_NETLINK_H
#define KBENCH_NETLINK_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/netlink.h>
#include <linux/genetlink.h>

/* ---- socket ---------------------------------------------------------- */

struct kb_nl {
	int fd;
	uint32_t portid;	/* our netlink address, from getsockname() */
	uint32_t seq;		/* next sequence number */
	uint16_t family;	/* resolved generic netlink family id, 0 = none */
};

/*
 * Open and bind a NETLINK_GENERIC socket. @rcvbuf (bytes, 0 = default) is
 * forced with SO_RCVBUFFORCE when privileged, else SO_RCVBUF (capped by
 * net.core.rmem_max). Receives time out after @timeout_ms (0 = never) so
 * a lost reply cannot hang the caller. Returns 0 or -errno.
 */
int kb_nl_open(struct kb_nl *nl, size_t rcvbuf, unsigned int timeout_ms);
void kb_nl_close(struct kb_nl *nl);

/* The receive buffer size the kernel granted (bytes), or -errno. */
long kb_nl_rcvbuf(const struct kb_nl *nl);

/* ---- messages -------------------------------------------------------- */

#define KB_NL_REQ_MAX	256

/* One request: nlmsghdr + genlmsghdr + attributes. */
struct kb_nl_req {
	union {
		struct nlmsghdr nlh;
		char buf[KB_NL_REQ_MAX];
	};
};

/* Start a generic netlink request (NLM_F_REQUEST). */
void kb_genl_req_init(struct kb_nl_req *req, uint16_t family, uint8_t cmd,
		      uint8_t version, uint32_t seq);

/* Append one attribute. Returns 0 or -EMSGSIZE. */
int kb_nla_append(struct kb_nl_req *req, uint16_t type, const void *data,
		  size_t len);
int kb_nla_append_u32(struct kb_nl_req *req, uint16_t type, uint32_t val);
int kb_nla_append_str(struct kb_nl_req *req, uint16_t type, const char *s);

/* Send one request whole. Returns 0 or -errno. */
int kb_nl_send(struct kb_nl *nl, const void *buf, size_t len);

/*
 * Receive one datagram into @buf. Returns its length, or -errno
 * (-EAGAIN after the socket's timeout, -ENOBUFS when the kernel dropped
 * messages for us, -EMSGSIZE when @size was too small).
 */
ssize_t kb_nl_recv(struct kb_nl *nl, void *buf, size_t size);

/* Take the next sequence number for a request. */
uint32_t kb_nl_next_seq(struct kb_nl *nl);

/*
 * Wait for the message answering @seq (other messages are skipped).
 * Returns 0 for an ack, the -errno of an error message, 1 when the answer
 * is a data message, or -errno of the receive (-EAGAIN: timed out).
 */
int kb_nl_wait_ack(struct kb_nl *nl, uint32_t seq);

/*
 * Walk the netlink messages of one datagram: returns the message at
 * *@off and advances *@off, or NULL at the end or on a truncated or
 * malformed header.
 */
const struct nlmsghdr *kb_nlmsg_next(const void *buf, size_t len,
				     size_t *off);

/*
 * The error of an NLMSG_ERROR message (0 for an ack, -errno otherwise;
 * -EBADMSG when it is too short), or 1 when @nlh is not an error message.
 */
int kb_nlmsg_error(const struct nlmsghdr *nlh);

/* The genetlink payload (attributes) of a message; NULL if too short. */
const void *kb_genl_attrs(const struct nlmsghdr *nlh, size_t *len);

/* ---- attributes ------------------------------------------------------ */

/*
 * Iterate over the attributes in @data[0..@len): first/next return NULL
 * when no complete attribute is left (a length field that is too small or
 * runs past the end stops the walk).
 */
const struct nlattr *kb_nla_first(const void *data, size_t len,
				  size_t *rem);
const struct nlattr *kb_nla_next(const struct nlattr *nla, size_t *rem);

#define kb_nla_for_each(nla, data, len, rem)				\
	for ((nla) = kb_nla_first((data), (len), &(rem)); (nla);	\
	     (nla) = kb_nla_next((nla), &(rem)))

/* Type without the NLA_F_NESTED / NLA_F_NET_BYTEORDER flags. */
uint16_t kb_nla_type(const struct nlattr *nla);
const void *kb_nla_data(const struct nlattr *nla);
size_t kb_nla_len(const struct nlattr *nla);

/* First attribute of @type, or NULL. */
const struct nlattr *kb_nla_find(const void *data, size_t len,
				 uint16_t type);

/* A u32 attribute; -EINVAL when it is shorter than 4 bytes. */
int kb_nla_get_u32(const struct nlattr *nla, uint32_t *val);

/* ---- generic netlink control ----------------------------------------- */

/*
 * Resolve a generic netlink family by name (CTRL_CMD_GETFAMILY). Returns
 * the id (> 0), -ENOENT when the kernel has no such family, or -errno.
 * Needs no privilege.
 */
int kb_genl_family_id(struct kb_nl *nl, const char *name);

/* ---- taskstats ------------------------------------------------------- */

#define KB_TS_COMM_LEN	32

/* The fields of struct taskstats kbench reads, decoded by offset. */
struct kb_taskstats {
	uint16_t version;
	size_t len;		/* payload bytes the kernel sent */
	uint32_t exitcode;	/* wait status of an exited task */
	uint8_t flag;
	int8_t nice;
	uint64_t cpu_count;		/* delay accounting */
	uint64_t cpu_delay_total;	/* ns */
	uint64_t blkio_count;
	uint64_t blkio_delay_total;
	uint64_t swapin_count;
	uint64_t swapin_delay_total;
	uint64_t cpu_run_real_total;	/* ns */
	uint64_t cpu_run_virtual_total;
	char comm[KB_TS_COMM_LEN + 1];
	uint32_t uid;
	uint32_t gid;
	uint32_t pid;
	uint32_t ppid;
	uint32_t btime;
	uint64_t etime;		/* us */
	uint64_t utime;		/* us */
	uint64_t stime;		/* us */
	uint64_t minflt;
	uint64_t majflt;
	uint64_t read_char;
	uint64_t write_char;
	uint64_t read_bytes;
	uint64_t write_bytes;
	uint64_t nvcsw;
	uint64_t nivcsw;
	uint64_t tgid;		/* version 12 and later */
};

/*
 * Decode a struct taskstats payload of @len bytes. Fields beyond @len
 * stay zero. Version 15 (6.14/6.15), which inserted delay max/min fields
 * in the middle of the struct, is decoded with its own offsets.
 * Returns 0, or -EBADMSG when not even the version fits.
 */
int kb_taskstats_decode(const void *data, size_t len,
			struct kb_taskstats *ts);

/* The ac_pid offset the RFC /proc/taskstats ioctl reads its argument at. */
#define KB_TS_AC_PID_OFFSET	128

/* One TASKSTATS_TYPE_AGGR_PID/TGID block of a reply. */
struct kb_ts_aggr {
	bool present;
	uint32_t id;		/* TASKSTATS_TYPE_PID / _TGID value */
	bool has_stats;
	struct kb_taskstats stats;
};

struct kb_ts_reply {
	struct kb_ts_aggr pid;	/* TASKSTATS_TYPE_AGGR_PID */
	struct kb_ts_aggr tgid;	/* TASKSTATS_TYPE_AGGR_TGID */
};

/*
 * Parse one TASKSTATS_CMD_NEW message (a GET reply or an exit
 * notification). Returns 0, the -errno of an NLMSG_ERROR message, or
 * -EBADMSG when the message holds no aggregate with stats.
 */
int kb_taskstats_parse(const struct nlmsghdr *nlh, struct kb_ts_reply *r);

/* Resolve the TASKSTATS family into @nl->family. 0 or -errno. */
int kb_taskstats_open(struct kb_nl *nl, size_t rcvbuf,
		      unsigned int timeout_ms);

/*
 * Build a TASKSTATS_CMD_GET request for @id: @attr is
 * TASKSTATS_CMD_ATTR_PID or TASKSTATS_CMD_ATTR_TGID.
 */
void kb_taskstats_req(struct kb_nl_req *req, uint16_t family, uint16_t attr,
		      uint32_t id, uint32_t seq);

/*
 * One round trip: GET @id (pid or tgid attribute), wait for its reply.
 * Returns 0 with @r filled, or -errno (-ESRCH for a task that does not
 * exist, -EPERM without CAP_NET_ADMIN).
 */
int kb_taskstats_get(struct kb_nl *nl, uint16_t attr, uint32_t id,
		     struct kb_ts_reply *r);

/*
 * Register (@reg) or deregister the exit listener for the CPUs in
 * @cpulist ("0-3"). Waits for the kernel's ack. 0 or -errno.
 */
int kb_taskstats_listener(struct kb_nl *nl, bool reg, const char *cpulist);

/* ---- batched queries ------------------------------------------------- */

/*
 * Query every pid in @pids[0..@n) with up to @batch requests per
 * sendmsg(); replies are drained with recvmmsg() and matched to their
 * request by sequence number. @ok[i] is set for each pid answered with
 * its own stats (the reply's pid must equal the request's).
 * Returns the number answered, or -errno for a socket failure (-ENOBUFS:
 * the receive buffer overflowed and replies were lost).
 * @batch == 1 is the per-pid send-then-receive loop.
 */
struct kb_ts_batch;
struct kb_ts_batch *kb_ts_batch_new(unsigned int batch);
void kb_ts_batch_free(struct kb_ts_batch *b);
long kb_ts_batch_query(struct kb_nl *nl, struct kb_ts_batch *b,
		       const pid_t *pids, size_t n, bool *ok);

/* Receive buffer that holds @batch replies with room to spare (bytes). */
size_t kb_ts_batch_rcvbuf(unsigned int batch);

/* ---- cgroupstats ----------------------------------------------------- */

struct kb_cgroupstats {
	uint64_t nr_sleeping;
	uint64_t nr_running;
	uint64_t nr_stopped;
	uint64_t nr_uninterruptible;
	uint64_t nr_io_wait;
};

/*
 * CGROUPSTATS_CMD_GET for the cgroup directory open at @dirfd (same
 * TASKSTATS family). Returns 0 or -errno.
 */
int kb_cgroupstats_get(struct kb_nl *nl, int dirfd,
		       struct kb_cgroupstats *cs);

#endif /* KBENCH_NETLINK_H */
