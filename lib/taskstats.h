/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The taskstats interfaces, decoded (kb_ts_):
 * - struct taskstats decoded by attribute length, for any version from 1
 *   up (fields the reply is too short to hold read as zero). Nothing
 *   depends on the struct taskstats of the installed uapi headers: a 6.1
 *   header says version 13 (416 bytes) while a 6.18 kernel replies
 *   version 16 (560 bytes), and version 15 moved fields;
 * - the TASKSTATS genetlink family (on top of netlink.h): GET, exit
 *   listeners, batched queries, cgroupstats;
 * - the never-merged RFC's /proc/taskstats ioctl numbers.
 * Every decoder takes a buffer, so it can be tested and fuzzed without a
 * socket. The query methods built on it are in taskstats_method.h, the
 * judgements of the checks in taskstats_judge.h, the BPF iterator's
 * records in taskstats_bpf.h.
 */
#ifndef KBENCH_TASKSTATS_H
#define KBENCH_TASKSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/types.h>

#include "netlink.h"

/* ---- struct taskstats, decoded by offset ----------------------------- */

#define KB_TS_COMM_LEN	32

/* The fields of struct taskstats kbench reads, decoded by offset. */
struct kb_ts_stats {
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
	uint64_t wpcopy_count;	/* version 13 and later; needs tsk->delays */
	uint64_t wpcopy_delay_total;	/* ns */
};

/*
 * Decode a struct taskstats payload of @len bytes. Fields beyond @len
 * stay zero. Version 15 (6.14/6.15), which inserted delay max/min fields
 * in the middle of the struct, is decoded with its own offsets.
 * Returns 0, or -EBADMSG when not even the version fits.
 */
int kb_ts_decode(const void *data, size_t len, struct kb_ts_stats *ts);

/* The ac_pid offset the RFC /proc/taskstats ioctl reads its argument at. */
#define KB_TS_AC_PID_OFFSET	128

/* One TASKSTATS_TYPE_AGGR_PID/TGID block of a reply. */
struct kb_ts_aggr {
	bool present;
	uint32_t id;		/* TASKSTATS_TYPE_PID / _TGID value */
	bool has_stats;
	struct kb_ts_stats stats;
};

struct kb_ts_reply {
	struct kb_ts_aggr pid;	/* TASKSTATS_TYPE_AGGR_PID */
	struct kb_ts_aggr tgid;	/* TASKSTATS_TYPE_AGGR_TGID */
};

/*
 * Parse one TASKSTATS_CMD_NEW message (a GET reply or an exit
 * notification). Returns 0, the -errno of an NLMSG_ERROR message, or
 * -EBADMSG when the message holds no aggregate with stats. @r is zeroed
 * first, on every path: an aggregate the message lacks reads !present,
 * one without stats !has_stats, and either with zero stats (a success
 * promises only one aggregate with stats).
 */
int kb_ts_parse(const struct nlmsghdr *nlh, struct kb_ts_reply *r);

/* kb_ts_parse() as a kb_nl_reply_fn (@out: struct kb_ts_reply). */
int kb_ts_reply_decode(const struct nlmsghdr *nlh, void *out);

/*
 * Does @nlh answer a GET of @pid with that pid's own stats (AGGR_PID
 * present, TASKSTATS_TYPE_PID and ac_pid both equal to @pid)?
 */
bool kb_ts_reply_matches(const struct nlmsghdr *nlh, pid_t pid);

/* Resolve the TASKSTATS family into @nl->family. 0 or -errno. */
int kb_ts_open(struct kb_nl *nl, size_t rcvbuf, unsigned int timeout_ms);

/*
 * Build a TASKSTATS_CMD_GET request for @id: @attr is
 * TASKSTATS_CMD_ATTR_PID or TASKSTATS_CMD_ATTR_TGID.
 */
void kb_ts_req(struct kb_nl_req *req, uint16_t family, uint16_t attr,
	       uint32_t id, uint32_t seq);

/*
 * One round trip: GET @id (pid or tgid attribute), wait for its reply.
 * Returns 0 with @r filled, or -errno (-ESRCH for a task that does not
 * exist, -EPERM without CAP_NET_ADMIN).
 */
int kb_ts_get(struct kb_nl *nl, uint16_t attr, uint32_t id,
	      struct kb_ts_reply *r);

/*
 * Register (@reg) or deregister the exit listener for the CPUs in
 * @cpulist ("0-3"). Waits for the kernel's ack. 0 or -errno.
 */
int kb_ts_listener(struct kb_nl *nl, bool reg, const char *cpulist);

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

/*
 * The batched reply matcher, on one received datagram @buf[0..@len):
 * the requests for @pids[0..@k) carried sequence numbers @base..@base+k-1.
 * Each message with one of those numbers not yet in @answered[] marks
 * it answered and sets @ok[i] from kb_ts_reply_matches(); stray messages
 * (other numbers, repeats) are ignored. Returns the requests newly
 * answered.
 */
unsigned int kb_ts_batch_match(const void *buf, size_t len,
			       const pid_t *pids, unsigned int k,
			       uint32_t base, bool *answered, bool *ok);

/* ---- cgroupstats ----------------------------------------------------- */

struct kb_ts_cgroupstats {
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
int kb_ts_cgroupstats_get(struct kb_nl *nl, int dirfd,
			  struct kb_ts_cgroupstats *cs);

/*
 * Decode a CGROUPSTATS_CMD_NEW reply into @out (struct
 * kb_ts_cgroupstats, zeroed first on every path; fields the reply is too
 * short for read as zero). 0, the -errno of an error message, or
 * -EBADMSG.
 */
int kb_ts_cgroupstats_decode(const struct nlmsghdr *nlh, void *out);

/* ---- the RFC interface ------------------------------------------------ */

/* The never-merged RFC interface ("taskstats: add /proc/taskstats"). */
#define KB_TS_PROC_FILE		"/proc/taskstats"
#ifndef TASKSTATS_IOC_ATTR_PID
#define TASKSTATS_IOC_ATTR_PID	_IO('T', 1)
#endif
#ifndef TASKSTATS_IOC_ATTR_TGID
#define TASKSTATS_IOC_ATTR_TGID	_IO('T', 2)
#endif

#endif /* KBENCH_TASKSTATS_H */
