/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kbench taskstats library, the one home of everything taskstats:
 * - struct taskstats decoded by attribute length, for any version from 1
 *   up (fields the reply is too short to hold read as zero). Nothing
 *   depends on the struct taskstats of the installed uapi headers: a 6.1
 *   header says version 13 (416 bytes) while a 6.18 kernel replies
 *   version 16 (560 bytes), and version 15 moved fields;
 * - the TASKSTATS genetlink family (on top of netlink.h): GET, exit
 *   listeners, batched queries, cgroupstats;
 * - collection methods: one pass fetches per-task statistics of a set of
 *   pids by per-pid netlink, batched netlink, procfs (open+read+close or
 *   kept-open fds and pread) or the RFC /proc/taskstats ioctl;
 * - /proc/PID/stat and status parsers, the independent source the
 *   taskstats checks compare against.
 * Every decoder and parser takes a buffer, so it can be tested and fuzzed
 * without a socket or a file. Shared by taskstats/taskstats and
 * taskstats/taskstat.
 */
#ifndef KBENCH_TASKSTATS_H
#define KBENCH_TASKSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/types.h>

#include "kbench.h"
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
int kb_ts_decode(const void *data, size_t len,
			struct kb_ts_stats *ts);

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
 * -EBADMSG when the message holds no aggregate with stats.
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
int kb_ts_open(struct kb_nl *nl, size_t rcvbuf,
		      unsigned int timeout_ms);

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
 * kb_ts_cgroupstats; fields the reply is too short for read as zero).
 * 0, the -errno of an error message, or -EBADMSG.
 */
int kb_ts_cgroupstats_decode(const struct nlmsghdr *nlh, void *out);


/* The never-merged RFC interface ("taskstats: add /proc/taskstats"). */
#define KB_PROC_TASKSTATS	"/proc/taskstats"
#ifndef TASKSTATS_IOC_ATTR_PID
#define TASKSTATS_IOC_ATTR_PID	_IO('T', 1)
#endif
#ifndef TASKSTATS_IOC_ATTR_TGID
#define TASKSTATS_IOC_ATTR_TGID	_IO('T', 2)
#endif

enum kb_ts_method {
	KB_TS_NETLINK_PER_PID,
	KB_TS_NETLINK_BATCHED,
	KB_TS_PROCFS,
	KB_TS_PROCFS_PREAD,
	KB_TS_IOCTL,
	KB_TS_NR_METHODS,
};

#define KB_TS_DEFAULT_BATCH	64
#define KB_TS_MAX_BATCH		1024

/* Stable row name ("netlink_per_pid"). */
const char *kb_ts_method_name(enum kb_ts_method m);

/* One line on what a pass of @m does. */
const char *kb_ts_method_desc(enum kb_ts_method m);

/*
 * A method by row name, or by the seed's numbers ("0" = ioctl,
 * "1" = netlink per pid); also "netlink" and "batched". -1 if unknown.
 */
int kb_ts_method_parse(const char *s);

struct kb_ts_ctx;

/*
 * Prepare passes of @m over @pids[0..@n) (the array must outlive the
 * context). @batch: requests per sendmsg for netlink_batched.
 * Returns NULL with *@err = -errno and a reason in @why when the method
 * cannot run here (no privilege, no /proc/taskstats, ...).
 */
struct kb_ts_ctx *kb_ts_ctx_new(enum kb_ts_method m, unsigned int batch,
				const pid_t *pids, size_t n, int *err,
				char *why, size_t whylen);
void kb_ts_ctx_free(struct kb_ts_ctx *ctx);

/*
 * One pass: fetch the stats of every pid. @ok[i] says whether pid i was
 * answered with its own stats. *@ns is the time the pass took
 * (CLOCK_MONOTONIC); for chunked procfs_pread only the preads are timed,
 * not the opens of the next chunk. Returns the number of pids answered,
 * or -errno when the method broke (socket error, lost replies).
 */
long kb_ts_pass(struct kb_ts_ctx *ctx, bool *ok, uint64_t *ns);

/* Chunks a procfs_pread pass needs (1 = every fd stays open). */
size_t kb_ts_ctx_chunks(const struct kb_ts_ctx *ctx);

/* Receive buffer of a netlink context in bytes (0 for other methods). */
long kb_ts_ctx_rcvbuf(const struct kb_ts_ctx *ctx);

/*
 * Pids whose /proc/PID/comm contains @name (the seed's selection), in
 * ascending order. Returns the count (the array in *@pids, free() it) or
 * -errno.
 */
long kb_ts_find_pids(const char *name, pid_t **pids);

/*
 * Does /proc/PID/stat start with @pid? The check of every procfs pass
 * (we read the right task).
 */
bool kb_ts_stat_is_pid(const char *buf, ssize_t len, pid_t pid);

/* Is @name in the comm text @buf[0..@len) (a /proc/PID/comm read)? */
bool kb_ts_comm_matches(const char *buf, ssize_t len, const char *name);

/* ---- /proc/PID: the independent source ------------------------------- */

/* What /proc/PID/stat and /proc/PID/status say of a task. */
struct kb_ts_proc {
	struct kb_proc_stat stat;	/* kbench.h's one stat parser */
	uint64_t nvcsw;		/* status: voluntary_ctxt_switches */
	uint64_t nivcsw;	/* status: nonvoluntary_ctxt_switches */
};

/*
 * Parse the text of /proc/PID/status (the context switch counts) into
 * @p. 0 or -EBADMSG (a count missing, malformed, or a text longer than
 * any real file).
 */
int kb_ts_proc_status_parse(const char *buf, size_t len,
			    struct kb_ts_proc *p);

/* Read and parse both files of @pid. 0 or -errno. */
int kb_ts_proc_read(pid_t pid, struct kb_ts_proc *p);

#define KB_TS_CMP_IDS	0x1	/* pid, ppid, comm: exact */
#define KB_TS_CMP_CTXT	0x2	/* nvcsw, nivcsw: exact (a task at rest) */
#define KB_TS_CMP_CPU	0x4	/* CPU time: within 40 ms + 25 % */

/*
 * Compare what taskstats says of a task with what /proc says (@what:
 * KB_TS_CMP_* bits). /proc's CPU time is the scheduler's runtime, as is
 * cpu_run_virtual_total (compared both ways when filled); taskstats'
 * tick-sampled utime+stime may only be lower (a guest loses ticks).
 * Tolerance: 40 ms + 25 %. false with the first difference in @why.
 */
bool kb_ts_matches_proc(const struct kb_ts_stats *ts,
			const struct kb_ts_proc *p, unsigned int what,
			long ticks_per_s, char *why, size_t len);

/* ---- judgements of the taskstats checks ------------------------------ */

/*
 * The TGID aggregate @tgid of @n threads at rest (@threads, queried one
 * by one) that burnt @burnt_us of CPU in all: at least the burn, within
 * 1 % (+10 ms) of the threads' sum both ways (the scheduler's
 * cpu_run_virtual_total when filled, else tick-sampled utime+stime with
 * 25 %), and context switches equal to the threads' sum, so that a thread
 * counted twice fails as surely as one left out. No upper bound from the
 * burn: thread start-up costs CPU too (as much again under emulation).
 */
bool kb_ts_tgid_plausible(const struct kb_ts_stats *tgid,
			  const struct kb_ts_stats *threads, size_t n,
			  uint64_t burnt_us, char *why, size_t len);

/* Copy-on-write faults a child may take beyond the pages it writes. */
#define KB_TS_WPCOPY_SLACK	256

/*
 * Delay accounting of a child that wrote @pages pages shared with its
 * parent (one copy-on-write each): @on was forked with
 * kernel.task_delayacct=1, @off with 0. wpcopy_* exist only with the
 * knob on (tsk->delays), so @on must count some copies (not one per
 * page: a copy that took no local_clock() time is not counted) and no
 * more than the pages (+ slack), with a delay, and @off none.
 */
bool kb_ts_wpcopy_plausible(const struct kb_ts_stats *on,
			    const struct kb_ts_stats *off, uint64_t pages,
			    char *why, size_t len);

/* Tasks that may join a cgroup between counting and the query. */
#define KB_TS_CGROUP_SLACK	64

/*
 * A cgroupstats answer for a cgroup holding our @sleepers and at most
 * @tasks tasks: nr_sleeping covers the sleepers, and the states, each
 * task counted once, add up to no more than the tasks (+1/8 +64 for
 * tasks forked by others between the counts and the query: counting
 * our sleepers twice still exceeds it).
 */
bool kb_ts_cgroupstats_plausible(const struct kb_ts_cgroupstats *cs,
				 uint64_t sleepers, uint64_t tasks,
				 char *why, size_t len);

#endif /* KBENCH_TASKSTATS_H */
