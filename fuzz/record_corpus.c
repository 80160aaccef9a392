// SPDX-License-Identifier: GPL-2.0
/*
 * Record, as raw bytes, what the running kernel hands kbench's decoders,
 * as seeds for the fuzz harnesses (fuzz/record_corpus.sh files them into
 * fuzz/corpus/ by decoder family):
 *
 *   taskstats-*, cgroupstats-*   generic netlink datagrams: the family
 *       lookup of TASKSTATS and of a family that does not exist, taskstats
 *       of our pid and tgid, the error for a pid that does not exist, the
 *       acks of a listener registration and deregistration, cgroupstats
 *       of a memory cgroup, a burst of pipelined replies (one per file)
 *   proc-*     /proc/self/stat, status and comm, /proc/1/stat, the stat of
 *       a task whose comm holds ") (", /proc/loadavg
 *   mountinfo  /proc/self/mountinfo, the kernel's own file systems only
 *   cgroup-*   /proc/self/cgroup, and that of a task in a memory cgroup
 *   memory.stat-V-WHERE, memory.numa_stat-V-WHERE   of the root and of a
 *       memory cgroup this program creates (with a child task that
 *       touches some memory in it) and removes, V being v1 or v2
 *   release    uname -r
 *
 * What the kernel does not offer (no CONFIG_TASKSTATS, no memory
 * controller, no privilege) is left out with a note on stderr.
 *
 * Usage: record_corpus DIR      (root for taskstats and the cgroup)
 * Exit: 0 recorded (what the kernel offers), 1 a file could not be
 * written or nothing was recorded, 2 bad usage or DIR not writable.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/cgroupstats.h>
#include <linux/taskstats.h>

#include "cgroup.h"
#include "memstat.h"
#include "text.h"
#include "kbench.h"
#include "netlink.h"

#define TEXT_MAX	(256 * 1024)
#define NO_SUCH_PID	0x7ffffff0u
#define BURST		4

struct recorder {
	const char *dir;
	unsigned int saved;
	unsigned int failed;
};

static void save(struct recorder *rec, const char *name, const void *buf,
		 size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", rec->dir, name);
	f = fopen(path, "w");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "record_corpus: %s: %s\n", path, strerror(errno));
		rec->failed++;
		return;
	}
	rec->saved++;
}

static void note(const char *what, int err)
{
	fprintf(stderr, "record_corpus: no %s: %s\n", what, strerror(-err));
}

/* Copy the file @path as @name; a missing file is a note. */
static void save_file(struct recorder *rec, const char *name,
		      const char *path)
{
	char *buf = malloc(TEXT_MAX);
	ssize_t n;

	if (!buf)
		return;
	n = kb_file_read_all(path, buf, TEXT_MAX);
	if (n < 0)
		note(path, (int)n);
	else
		save(rec, name, buf, (size_t)n);
	free(buf);
}

/* ---- netlink ----------------------------------------------------------- */

/* Send @req and save the next datagram the kernel sends back. */
static void record_reply(struct recorder *rec, struct kb_nl *nl,
			 struct kb_nl_req *req, const char *name)
{
	static char buf[KB_NL_RECV_MAX];
	ssize_t n;
	int err;

	err = kb_nl_send(nl, req, req->nlh.nlmsg_len);
	n = err ? err : kb_nl_recv(nl, buf, sizeof(buf));
	if (n < 0) {
		note(name, (int)n);
		return;
	}
	save(rec, name, buf, (size_t)n);
}

static void family_req(struct kb_nl *nl, struct kb_nl_req *req,
		       const char *family)
{
	kb_nl_genl_req_init(req, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1,
			    kb_nl_next_seq(nl));
	kb_nl_attr_append_str(req, CTRL_ATTR_FAMILY_NAME, family);
}

static void ts_req(struct kb_nl *nl, struct kb_nl_req *req, uint8_t cmd,
		   uint16_t attr, uint32_t val)
{
	kb_nl_genl_req_init(req, nl->family, cmd, TASKSTATS_GENL_VERSION,
			    kb_nl_next_seq(nl));
	kb_nl_attr_append_u32(req, attr, val);
}

/* A listener (de)registration for CPU 0, with NLM_F_ACK: an ack back. */
static void listener_req(struct kb_nl *nl, struct kb_nl_req *req,
			 uint16_t attr)
{
	kb_nl_genl_req_init(req, nl->family, TASKSTATS_CMD_GET,
			    TASKSTATS_GENL_VERSION, kb_nl_next_seq(nl));
	req->nlh.nlmsg_flags |= NLM_F_ACK;
	kb_nl_attr_append_str(req, attr, "0");
}

/* Several requests in flight, then each reply datagram as it comes. */
static void record_burst(struct recorder *rec, struct kb_nl *nl)
{
	static char buf[KB_NL_RECV_MAX];
	struct kb_nl_req req;
	char name[32];
	ssize_t n;
	int i;

	for (i = 0; i < BURST; i++) {
		ts_req(nl, &req, TASKSTATS_CMD_GET, TASKSTATS_CMD_ATTR_PID,
		       i == 2 ? NO_SUCH_PID : (uint32_t)getpid());
		if (kb_nl_send(nl, &req, req.nlh.nlmsg_len))
			return;
	}
	for (i = 0; i < BURST; i++) {
		n = kb_nl_recv(nl, buf, sizeof(buf));
		if (n < 0) {
			note("burst reply", (int)n);
			return;
		}
		snprintf(name, sizeof(name), "taskstats-burst-%d", i);
		save(rec, name, buf, (size_t)n);
	}
}

static void record_cgroupstats(struct recorder *rec, struct kb_nl *nl,
			       const char *dir, const char *name)
{
	struct kb_nl_req req;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return;
	ts_req(nl, &req, CGROUPSTATS_CMD_GET, CGROUPSTATS_CMD_ATTR_FD,
	       (uint32_t)fd);
	record_reply(rec, nl, &req, name);
	close(fd);
}

/* The TASKSTATS replies; an open socket in @nl for cgroupstats later. */
static int record_taskstats(struct recorder *rec, struct kb_nl *nl)
{
	struct kb_nl_req req;
	int id, err;

	err = kb_nl_open(nl, 0, 2000);
	if (err) {
		note("generic netlink socket", err);
		return err;
	}
	family_req(nl, &req, TASKSTATS_GENL_NAME);
	record_reply(rec, nl, &req, "taskstats-family");
	family_req(nl, &req, "KBENCH_NO_SUCH");
	record_reply(rec, nl, &req, "taskstats-family-enoent");
	id = kb_nl_genl_family_id(nl, TASKSTATS_GENL_NAME);
	if (id <= 0) {
		note("TASKSTATS family", id ? id : -ENOENT);
		kb_nl_close(nl);
		return id ? id : -ENOENT;
	}
	nl->family = (uint16_t)id;
	ts_req(nl, &req, TASKSTATS_CMD_GET, TASKSTATS_CMD_ATTR_PID, getpid());
	record_reply(rec, nl, &req, "taskstats-get-pid");
	ts_req(nl, &req, TASKSTATS_CMD_GET, TASKSTATS_CMD_ATTR_TGID, getpid());
	record_reply(rec, nl, &req, "taskstats-get-tgid");
	ts_req(nl, &req, TASKSTATS_CMD_GET, TASKSTATS_CMD_ATTR_PID, NO_SUCH_PID);
	record_reply(rec, nl, &req, "taskstats-get-esrch");
	listener_req(nl, &req, TASKSTATS_CMD_ATTR_REGISTER_CPUMASK);
	record_reply(rec, nl, &req, "taskstats-register-ack");
	listener_req(nl, &req, TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK);
	record_reply(rec, nl, &req, "taskstats-deregister-ack");
	record_burst(rec, nl);
	return 0;
}

/* ---- /proc ------------------------------------------------------------- */

/* A child whose comm holds what a naive "%d (%s)" parse trips on. */
static void record_odd_comm(struct recorder *rec)
{
	static const char odd[] = "a) (b c";
	struct kb_proc_stat st;
	char path[64], c;
	int p[2], i;
	pid_t pid;

	if (pipe(p))
		return;
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_NAME, odd, 0, 0, 0);
		close(p[1]);
		/* Until the parent closes its end. */
		_exit(read(p[0], &c, 1) < 0);
	}
	close(p[0]);
	if (pid > 0) {
		/* The child names itself after fork: wait until it shows. */
		for (i = 0; i < 100; i++) {
			if (!kb_proc_stat_read(pid, &st) && !strcmp(st.comm, odd))
				break;
			usleep(10000);
		}
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		save_file(rec, "proc-odd-comm-stat", path);
	}
	close(p[1]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void record_proc(struct recorder *rec)
{
	save_file(rec, "proc-self-stat", "/proc/self/stat");
	save_file(rec, "proc-self-status", "/proc/self/status");
	save_file(rec, "proc-self-comm", "/proc/self/comm");
	save_file(rec, "proc-init-stat", "/proc/1/stat");
	save_file(rec, "proc-loadavg", "/proc/loadavg");
	record_odd_comm(rec);
}

/*
 * mountinfo, the kernel's own file systems only: other mounts (a
 * container's, the host's disks) name local paths and teach the parser
 * nothing new.
 */
static void record_mountinfo(struct recorder *rec)
{
	static const char *const kinds[] = {
		"cgroup", "cgroup2", "proc", "sysfs", "devtmpfs", "devpts",
		"mqueue", "9p", "overlay", "debugfs", "tracefs", "ext4", "xfs",
		"btrfs",
	};
	static struct kb_cgroup_mount m;
	char *text = malloc(TEXT_MAX), *out = malloc(TEXT_MAX);
	const char *line;
	struct kb_text t;
	size_t n, len = 0, i;
	ssize_t got;

	got = text && out ? kb_file_read_all("/proc/self/mountinfo", text, TEXT_MAX) : -ENOMEM;
	if (got < 0) {
		note("mountinfo", (int)got);
		goto out;
	}
	kb_text_init(&t, text, (size_t)got);
	while (kb_text_next_line(&t, &line, &n)) {
		if (kb_cgroup_mountinfo_parse(line, n, &m))
			continue;
		for (i = 0; i < ARRAY_SIZE(kinds); i++) {
			if (strcmp(m.fstype, kinds[i]) || len + n + 1 > TEXT_MAX)
				continue;
			memcpy(out + len, line, n);
			len += n;
			out[len++] = '\n';
			break;
		}
	}
	save(rec, "mountinfo", out, len);
out:
	free(text);
	free(out);
}

/* ---- the memory controller ---------------------------------------------- */

static const char *vname(enum kb_cgroup_version v)
{
	return v == KB_CGROUP_V2 ? "v2" : "v1";
}

/* memory.stat and memory.numa_stat of @dir, named -V-@where. */
static void record_memcg_files(struct recorder *rec, enum kb_cgroup_version v,
			       const char *dir, const char *where)
{
	static const char *const files[] = { "memory.stat", "memory.numa_stat" };
	char path[PATH_MAX + 32], name[64];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		if (access(path, R_OK))
			continue;
		snprintf(name, sizeof(name), "%s-%s-%s", files[i], vname(v),
			 where);
		save_file(rec, name, path);
	}
}

/*
 * A child that moves into @dir, touches some memory there and says so
 * on @ready, then waits until @done is closed.
 */
static pid_t memcg_child(const char *dir, int ready[2], int done[2])
{
	pid_t pid = fork();

	if (pid == 0) {
		char c = 'x';

		close(ready[0]);
		close(done[1]);
		if (kb_cgroup_move(dir, getpid()))
			_exit(1);
		/* Faulted in (and charged) now, not on a first touch. */
		mmap(NULL, 8 << 20, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		_exit(read(done[0], &c, 1) < 0);
	}
	return pid;
}

/*
 * The kernel flushes memcg statistics every few seconds: wait (up to 5 s)
 * until memory.stat of @dir shows the child's anonymous memory, so that
 * the seeds hold figures, not zeros.
 */
static void wait_for_anon(const char *dir)
{
	static struct kb_memstat st;
	char path[PATH_MAX + 32], *buf = malloc(TEXT_MAX);
	unsigned long long v = 0;
	ssize_t n;
	int i;

	snprintf(path, sizeof(path), "%s/memory.stat", dir);
	for (i = 0; buf && i < 50; i++) {
		n = kb_file_read_all(path, buf, TEXT_MAX);
		if (n > 0 && !kb_memstat_parse(buf, (size_t)n, &st, NULL, 0) &&
		    ((kb_memstat_get(&st, "anon", &v) && v) ||
		     (kb_memstat_get(&st, "rss", &v) && v)))
			break;
		usleep(100000);
	}
	free(buf);
}

/* A memory cgroup of our own, with a task and some memory in it. */
static void record_memcg_child(struct recorder *rec, struct kb_nl *nl,
			       const struct kb_cgroup_memcg_mount *mnt)
{
	char name[64], path[64], c;
	int ready[2], done[2] = { -1, -1 }, err;
	struct kb_cgroup cg;
	pid_t pid = -1;

	snprintf(name, sizeof(name), "kbench-seed-%d", (int)getpid());
	err = kb_cgroup_create(mnt, mnt->path, name, &cg);
	if (err) {
		note("memory cgroup of our own", err);
		return;
	}
	if (pipe(ready)) {
		kb_cgroup_remove(&cg);
		return;
	}
	if (!pipe(done)) {
		pid = memcg_child(cg.path, ready, done);
		close(done[0]);
	}
	close(ready[1]);
	if (pid > 0 && read(ready[0], &c, 1) == 1) {
		wait_for_anon(cg.path);
		snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
		save_file(rec, "cgroup-child", path);
		record_memcg_files(rec, mnt->version, cg.path, "child");
		snprintf(name, sizeof(name), "cgroupstats-%s-child",
			 vname(mnt->version));
		if (nl->fd >= 0)
			record_cgroupstats(rec, nl, cg.path, name);
	} else {
		note("task in our memory cgroup", -ECHILD);
	}
	if (done[1] >= 0)
		close(done[1]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	close(ready[0]);
	err = kb_cgroup_remove(&cg);
	if (err)
		note("removal of our memory cgroup", err);
}

static void record_memcg(struct recorder *rec, struct kb_nl *nl)
{
	struct kb_cgroup_memcg_mount mnt;
	char name[64];
	int err;

	save_file(rec, "cgroup-self", "/proc/self/cgroup");
	err = kb_cgroup_memcg_find(&mnt);
	if (err) {
		note("memory controller", err);
		return;
	}
	record_memcg_files(rec, mnt.version, mnt.path, "root");
	snprintf(name, sizeof(name), "cgroupstats-%s-root", vname(mnt.version));
	if (nl->fd >= 0)
		record_cgroupstats(rec, nl, mnt.path, name);
	record_memcg_child(rec, nl, &mnt);
}

int main(int argc, char **argv)
{
	struct recorder rec = { 0 };
	struct kb_nl nl = { .fd = -1 };
	struct utsname u;

	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "Usage: record_corpus DIR\n");
		return 2;
	}
	rec.dir = argv[1];
	if (access(rec.dir, W_OK | X_OK)) {
		fprintf(stderr, "record_corpus: %s: %s\n", rec.dir, strerror(errno));
		return 2;
	}
	kb_init("record_corpus", argc, argv);
	if (uname(&u) == 0)
		save(&rec, "release", u.release, strlen(u.release));
	record_proc(&rec);
	record_mountinfo(&rec);
	if (record_taskstats(&rec, &nl))
		nl.fd = -1;
	record_memcg(&rec, &nl);
	if (nl.fd >= 0)
		kb_nl_close(&nl);
	fprintf(stderr, "record_corpus: %u files in %s\n", rec.saved, rec.dir);
	return rec.saved > 1 && !rec.failed ? 0 : 1;
}
