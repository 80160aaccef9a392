// SPDX-License-Identifier: GPL-2.0
/*
 * taskstats: the checks of the never-merged RFC /proc/taskstats ioctl,
 * against /proc and against TASKSTATS_CMD_GET.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/taskstats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ts_test.h"

/* ---- the RFC ioctl on /proc/taskstats -------------------------------- */

/* Room for any struct taskstats a kernel may copy back. */
#define IOCTL_BUF_SIZE		4096
/* Next number of the RFC's range: no such command. */
#define TASKSTATS_IOC_UNKNOWN	_IO('T', 3)

/* KSFT_PASS when the kernel has the RFC's file, else KSFT_SKIP. */
static int ioctl_ready(char *why, size_t len)
{
	if (!access(KB_TS_PROC_FILE, F_OK))
		return KSFT_PASS;
	snprintf(why, len, "kernel has no " KB_TS_PROC_FILE " (RFC ioctl interface, not in mainline)");
	return KSFT_SKIP;
}

/* Open the RFC's file: KSFT_PASS with *@fd, or the verdict. */
static int open_proc_taskstats(int *fd, char *why, size_t len)
{
	int rc = ioctl_ready(why, len);

	if (rc != KSFT_PASS)
		return rc;
	*fd = open(KB_TS_PROC_FILE, O_RDONLY | O_CLOEXEC);
	if (*fd >= 0)
		return KSFT_PASS;
	return kb_errno_result(errno, KB_ENV_NO_CAP, "opening " KB_TS_PROC_FILE,
			       why, len);
}

/* One ioctl query of @id into @buf; 0 or -errno. */
static int ioctl_query(int fd, unsigned long cmd, uint32_t id, void *buf,
		       struct kb_ts_stats *ts)
{
	memset(buf, 0, IOCTL_BUF_SIZE);
	memcpy((char *)buf + KB_TS_AC_PID_OFFSET, &id, sizeof(id));
	if (ioctl(fd, cmd, buf))
		return -errno;
	if (ts)
		kb_ts_decode(buf, IOCTL_BUF_SIZE, ts);
	return 0;
}

/* Fields that cannot change between two queries of a task at rest. */
static bool same_stats(const struct kb_ts_stats *a,
		       const struct kb_ts_stats *b, bool per_pid,
		       char *why, size_t len)
{
#define DIFFERS(f) (a->f != b->f && \
	snprintf(why, len, #f ": ioctl %llu, netlink %llu", \
		 (unsigned long long)a->f, (unsigned long long)b->f))
	if (DIFFERS(version) || DIFFERS(nvcsw) || DIFFERS(nivcsw))
		return false;
	if (per_pid && (DIFFERS(pid) || DIFFERS(ppid) || DIFFERS(uid) ||
			DIFFERS(gid) || DIFFERS(btime)))
		return false;
#undef DIFFERS
	if (per_pid && strcmp(a->comm, b->comm)) {
		snprintf(why, len, "comm: ioctl '%s', netlink '%s'", a->comm,
			 b->comm);
		return false;
	}
	return true;
}

/* Both interfaces' answers for @pid (pid and tgid), and /proc's. */
struct three_answers {
	struct kb_ts_stats ioctl_pid, ioctl_tgid;
	struct kb_ts_reply nl_pid, nl_tgid;
	struct kb_proc_task proc;
};

static int ask_three(int fd, struct kb_nl *nl, pid_t pid,
		     struct three_answers *a)
{
	char *buf = calloc(1, IOCTL_BUF_SIZE);
	int err;

	if (!buf)
		return -ENOMEM;
	err = wait_at_rest(pid, &a->proc);
	if (!err)
		err = ioctl_query(fd, TASKSTATS_IOC_ATTR_PID, pid, buf,
				  &a->ioctl_pid);
	if (!err)
		err = ioctl_query(fd, TASKSTATS_IOC_ATTR_TGID, pid, buf,
				  &a->ioctl_tgid);
	if (!err)
		err = kb_ts_get(nl, TASKSTATS_CMD_ATTR_PID, pid, &a->nl_pid);
	if (!err)
		err = kb_ts_get(nl, TASKSTATS_CMD_ATTR_TGID, pid, &a->nl_tgid);
	free(buf);
	return err;
}

/*
 * The ioctl answers what /proc says (an independent source, so a layout
 * bug shared by both taskstats interfaces cannot cancel out) and what
 * TASKSTATS_CMD_GET answers, for pid and tgid.
 */
int test_ioctl_matches_netlink(void *arg, char *why, size_t len)
{
	struct ctx *c = arg;
	struct three_answers a;
	pid_t child = -1;
	struct kb_nl nl;
	int fd, err, rc;

	rc = ioctl_ready(why, len);
	if (rc == KSFT_PASS)
		rc = netlink_ready(c, true, why, len);
	if (rc == KSFT_PASS)
		rc = open_proc_taskstats(&fd, why, len);
	if (rc != KSFT_PASS)
		return rc;
	rc = open_ts(&nl, 0, NL_TIMEOUT_MS, why, len);
	if (rc == KSFT_PASS) {
		child = kb_children_fork(&c->helpers, rest_child, NULL);
		err = child < 0 ? child : ask_three(fd, &nl, child, &a);
		kb_nl_close(&nl);
		end_helper(c, child);
		if (err)
			rc = get_failed(err, "ioctl and netlink queries", why,
					len);
	}
	close(fd);
	if (rc != KSFT_PASS)
		return rc;
	kb_results_figure("ioctl_matches_netlink", "pid=%d version=%u nvcsw=%llu tgid_nvcsw=%llu proc_nvcsw=%llu",
			  (int)child, a.ioctl_pid.version,
			  (unsigned long long)a.ioctl_pid.nvcsw,
			  (unsigned long long)a.ioctl_tgid.nvcsw,
			  (unsigned long long)a.proc.nvcsw);
	rc = against_proc(c, &a.ioctl_pid, &a.proc,
			  KB_TS_JUDGE_IDS | KB_TS_JUDGE_CTXT | KB_TS_JUDGE_CPU,
			  "ioctl against /proc", why, len);
	if (rc != KSFT_PASS)
		return rc;
	if (!same_stats(&a.ioctl_pid, &a.nl_pid.pid.stats, true, why, len) ||
	    !same_stats(&a.ioctl_tgid, &a.nl_tgid.tgid.stats, false, why, len))
		return KSFT_FAIL;
	return KSFT_PASS;
}

struct ioctl_errors {
	int gone_pid, gone_tgid, null_ptr, ro_ptr, unknown, after;
};

/* A buffer the kernel can read (so the pid is read) but not write back. */
static int ioctl_read_only(int fd, uint32_t pid)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t size = IOCTL_BUF_SIZE + page;
	char *ro = mmap(NULL, size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int err;

	if (ro == MAP_FAILED)
		return -ENOMEM;
	memcpy(ro + KB_TS_AC_PID_OFFSET, &pid, sizeof(pid));
	mprotect(ro, size, PROT_READ);
	err = ioctl(fd, TASKSTATS_IOC_ATTR_PID, ro) ? -errno : 0;
	munmap(ro, size);
	return err;
}

static void ask_errors(struct ctx *c, int fd, char *buf,
		       struct ioctl_errors *e)
{
	uint32_t me = getpid();
	int tries;
	pid_t pid;

	/* Retry when the pid was taken again between reap and query. */
	for (tries = 0; tries < 5; tries++) {
		pid = dead_pid(c);
		if (pid < 0)
			break;
		e->gone_pid = ioctl_query(fd, TASKSTATS_IOC_ATTR_PID, pid,
					  buf, NULL);
		e->gone_tgid = ioctl_query(fd, TASKSTATS_IOC_ATTR_TGID, pid,
					   buf, NULL);
		if (e->gone_pid && e->gone_tgid)
			break;
	}
	e->null_ptr = ioctl(fd, TASKSTATS_IOC_ATTR_PID, NULL) ? -errno : 0;
	e->ro_ptr = ioctl_read_only(fd, me);
	e->unknown = ioctl_query(fd, TASKSTATS_IOC_UNKNOWN, me, buf, NULL);
	e->after = ioctl_query(fd, TASKSTATS_IOC_ATTR_PID, me, buf, NULL);
}

static int judge_ioctl_errors(const struct ioctl_errors *e, char *why,
			      size_t len)
{
	kb_results_figure("ioctl_errors", "gone_pid=%s gone_tgid=%s null_pointer=%s read_only_buffer=%s unknown_cmd=%s query_after=%s",
			  answer_name(e->gone_pid), answer_name(e->gone_tgid),
			  answer_name(e->null_ptr), answer_name(e->ro_ptr),
			  answer_name(e->unknown), answer_name(e->after));
	if (e->gone_pid != -ESRCH || e->gone_tgid != -ESRCH)
		snprintf(why, len, "query of a pid that does not exist: pid %s, tgid %s (want ESRCH)",
			 answer_name(e->gone_pid), answer_name(e->gone_tgid));
	else if (e->null_ptr != -EFAULT || e->ro_ptr != -EFAULT)
		snprintf(why, len, "bad buffer: NULL %s, read-only %s (want EFAULT)",
			 answer_name(e->null_ptr), answer_name(e->ro_ptr));
	else if (e->unknown != -EINVAL)
		snprintf(why, len, "unknown command: %s (want EINVAL)",
			 answer_name(e->unknown));
	else if (e->after)
		snprintf(why, len, "a valid query after the errors failed: %s",
			 answer_name(e->after));
	else
		return KSFT_PASS;
	return KSFT_FAIL;
}

/*
 * The documented errors: ESRCH for a pid nobody has, EFAULT for a
 * pointer the kernel cannot read or cannot write back to, EINVAL for an
 * unknown command; EPERM without CAP_NET_ADMIN. A valid query must still
 * work afterwards.
 */
int test_ioctl_errors(void *arg, char *why, size_t len)
{
	struct ctx *c = arg;
	struct ioctl_errors e = { 0 };
	int fd, rc, unpriv;
	char *buf;

	rc = open_proc_taskstats(&fd, why, len);
	if (rc != KSFT_PASS)
		return rc;
	buf = calloc(1, IOCTL_BUF_SIZE);
	if (!buf) {
		close(fd);
		snprintf(why, len, "out of memory");
		return KSFT_FAIL;
	}
	if (!c->have_admin) {
		unpriv = ioctl_query(fd, TASKSTATS_IOC_ATTR_PID, getpid(), buf,
				     NULL);
		kb_results_figure("ioctl_errors", "unprivileged_query=%s",
				  answer_name(unpriv));
		if (unpriv != -EPERM) {
			snprintf(why, len, "a query without CAP_NET_ADMIN answered %s, not EPERM",
				 answer_name(unpriv));
			rc = KSFT_FAIL;
		}
	} else {
		ask_errors(c, fd, buf, &e);
		rc = judge_ioctl_errors(&e, why, len);
	}
	free(buf);
	close(fd);
	return rc;
}
