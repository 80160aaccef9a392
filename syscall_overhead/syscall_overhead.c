// SPDX-License-Identifier: GPL-2.0
/*
 * syscall_overhead: the cost of process creation, null system calls and
 * System V IPC on the running kernel, in the layout of the Scribe
 * micro-benchmark table (average, variance = relative standard deviation
 * in %, minimum, maximum, microseconds).
 *
 * Every row is one KTAP test of a kb_test table. A sample is the mean over
 * a batch of calls for operations far below a microsecond (the clock would
 * dominate a single call), one operation otherwise. Every operation's
 * result is checked against what the kernel must answer: a child's exit
 * status, a null syscall's value against /proc/self/stat, a message's
 * contents, an IPC object really gone after IPC_RMID.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ktap.h"
#include "mark.h"
#include "placement.h"
#include "rtsched.h"
#include "settle.h"

#define DEFAULT_ITERATIONS	1000
#define FULL_ITERATIONS		5000
#define SLOW_ITERATIONS		100
#define EXEC_CHAIN_ARG		"--exec-chain"
/* What every created child exits with: a kernel that loses it fails. */
#define CHILD_STATUS		42
/* A row's operation returns this after writing why into ctx->why. */
#define WRONG_RESULT		1

/* The rows, in the seed's order: rows[] and the test table follow it. */
enum row_id {
	R_fork, R_clone, R_execve, R_getpid, R_getppid, R_getpgid_self,
	R_getpgid_0, R_getsid, R_msgget_ctl, R_msgsnd_rcv, R_shmget_ctl,
	R_shmat_ctl, NR_ROWS
};

/* The values the null syscalls must return, read from procfs. */
struct ids {
	pid_t pid, ppid, pgid, sid;
};

struct exec_sample {
	uint64_t delta_ns;
	int32_t pid;		/* getpid() of the link: execve keeps it */
	int32_t pad;
};

struct ctx {
	long iterations;
	long warmup;
	long batch;		/* 0: the row's own batch size */
	struct kb_cli_common common;
	struct kb_placement place;
	struct ids want;
	int msq_id, shm_id;	/* the rows' long-lived IPC objects */
	int last_id;		/* the last id a *get_ctl batch removed */
	pid_t exec_child;
	double *exec_samples;
	long exec_nsamples;
	char why[160];		/* filled with WRONG_RESULT */
	bool done[NR_ROWS];
	struct kb_stats st[NR_ROWS];
};

/*
 * One measured operation. setup() returns 0 or a negative errno
 * (kb_errno_result() decides skip or fail); op() runs @batch operations,
 * checking each result, and returns 0, a negative errno or WRONG_RESULT;
 * check() looks once at what the batches left behind.
 */
struct row {
	const char *name;	/* stable KTAP / JSON name */
	const char *label;	/* the seed's table label */
	const char *note;	/* what one operation is */
	unsigned int batch;	/* operations per sample, 0: always one */
	int (*setup)(struct ctx *c);
	int (*op)(struct ctx *c, unsigned int batch);
	void (*teardown)(struct ctx *c);
	int (*check)(struct ctx *c);
};

/* ---- process creation ------------------------------------------------ */

/* The child must be @pid and must have exited with CHILD_STATUS. */
static int wait_child(struct ctx *c, pid_t pid)
{
	int status;
	pid_t got = waitpid(pid, &status, __WALL);

	if (got < 0)
		return -errno;
	if (got != pid) {
		snprintf(c->why, sizeof(c->why), "waitpid(%d) returned %d",
			 pid, got);
		return WRONG_RESULT;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != CHILD_STATUS) {
		snprintf(c->why, sizeof(c->why),
			 "child wait status 0x%x, want exit(%d)", status,
			 CHILD_STATUS);
		return WRONG_RESULT;
	}
	return 0;
}

static int op_fork(struct ctx *c, unsigned int batch)
{
	unsigned int i;
	int err;

	for (i = 0; i < batch; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return -errno;
		if (pid == 0)
			_exit(CHILD_STATUS);
		err = wait_child(c, pid);
		if (err)
			return err;
	}
	return 0;
}

static _Alignas(16) char clone_stack[64 * 1024];

static int clone_child(void *arg)
{
	(void)arg;
	return CHILD_STATUS;
}

static int op_clone(struct ctx *c, unsigned int batch)
{
	unsigned int i;
	int err;

	for (i = 0; i < batch; i++) {
		pid_t pid = clone(clone_child, clone_stack + sizeof(clone_stack),
				  CLONE_VM | SIGCHLD, NULL);

		if (pid < 0)
			return -errno;
		err = wait_child(c, pid);
		if (err)
			return err;
	}
	return 0;
}

/*
 * execve() is timed across the exec itself: a chain of processes re-execs
 * this program with the time taken just before execve(); the new image
 * takes the time again at the top of main() and writes the difference and
 * its pid to a pipe. So a sample is execve() plus the dynamic loader and
 * libc start-up up to main(), what any program pays. Every link must have
 * the pid of the first: execve keeps it.
 */
static void exec_chain_step(int fd, long remaining, uint64_t t0)
{
	struct exec_sample s = { .delta_ns = kb_clock_ns() - t0,
				 .pid = getpid() };
	char fdbuf[16], rembuf[24], tbuf[24];
	char *const args[] = { "syscall_overhead", EXEC_CHAIN_ARG, fdbuf,
			       rembuf, tbuf, NULL };

	if (write(fd, &s, sizeof(s)) != sizeof(s))
		_exit(1);
	if (remaining <= 0)
		_exit(CHILD_STATUS);
	snprintf(fdbuf, sizeof(fdbuf), "%d", fd);
	snprintf(rembuf, sizeof(rembuf), "%ld", remaining - 1);
	/* Read the clock last: it is the start of the next sample. */
	snprintf(tbuf, sizeof(tbuf), "%llu", (unsigned long long)kb_clock_ns());
	execv("/proc/self/exe", args);
	_exit(127);
}

static int exec_chain_main(int argc, char **argv)
{
	uint64_t t0;

	if (argc != 5) {
		fprintf(stderr, "%s: %s is internal: it takes FD REMAINING T0\n",
			argv[0], EXEC_CHAIN_ARG);
		return KB_CLI_EXIT_USAGE;
	}
	t0 = strtoull(argv[4], NULL, 10);
	exec_chain_step(atoi(argv[2]), atol(argv[3]), t0);
	return 1;
}

static void kill_exec_child(void *arg)
{
	struct ctx *c = arg;

	if (c->exec_child > 0) {
		kill(c->exec_child, SIGKILL);
		waitpid(c->exec_child, NULL, 0);
		c->exec_child = -1;
	}
}

/* Read @count samples after @skip from the chain, checking each pid. */
static int read_exec_samples(struct ctx *c, int fd, long skip, long count)
{
	struct exec_sample s;
	long got = 0;

	while (got < count && read(fd, &s, sizeof(s)) == sizeof(s)) {
		if (s.pid != c->exec_child) {
			snprintf(c->why, sizeof(c->why),
				 "an exec'd link has pid %d, the chain started as %d",
				 s.pid, c->exec_child);
			return WRONG_RESULT;
		}
		if (skip > 0)
			skip--;
		else
			c->exec_samples[got++] = (double)s.delta_ns / 1000.0;
	}
	c->exec_nsamples = got;
	if (got < count) {
		snprintf(c->why, sizeof(c->why),
			 "the exec chain ended after %ld of %ld samples", got,
			 count);
		return WRONG_RESULT;
	}
	return 0;
}

/* Runs a chain of @skip + @count execs and keeps the last @count. */
static int run_exec_chain(struct ctx *c, long skip, long count)
{
	int pipefd[2], err;

	free(c->exec_samples);
	c->exec_samples = calloc(count, sizeof(*c->exec_samples));
	if (!c->exec_samples || pipe2(pipefd, O_CLOEXEC))
		return -errno;
	skip++;		/* the fork child's own step is not an exec */
	c->exec_child = fork();
	if (c->exec_child < 0) {
		err = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return err;
	}
	if (c->exec_child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pipefd[0]);
		/* The write end must survive the execs. */
		if (fcntl(pipefd[1], F_SETFD, 0))
			_exit(1);
		exec_chain_step(pipefd[1], skip + count - 1, kb_clock_ns());
	}
	close(pipefd[1]);
	err = read_exec_samples(c, pipefd[0], skip, count);
	close(pipefd[0]);
	if (err)
		kill_exec_child(c);
	else
		err = wait_child(c, c->exec_child);
	c->exec_child = -1;
	return err;
}

/* ---- null system calls ----------------------------------------------- */

/*
 * The ids the null syscalls must return, from an independent source:
 * /proc/self/stat, which procfs formats from the task itself.
 */
static int read_ids(struct ids *ids)
{
	struct kb_proc_stat st;
	int err = kb_proc_stat_read(0, &st);

	if (err)
		return err;
	ids->pid = st.pid;
	ids->ppid = st.ppid;
	ids->pgid = st.pgrp;
	ids->sid = st.session;
	return 0;
}

static int wrong_id(struct ctx *c, const char *call, long got, long want)
{
	snprintf(c->why, sizeof(c->why),
		 "%s returned %ld, /proc/self/stat says %ld", call, got, want);
	return WRONG_RESULT;
}

/*
 * @batch calls of syscall(@nr, @arg), each value compared with @want: one
 * well-predicted branch per call. syscall() passes all six argument
 * registers anyway, so calls without arguments cost the same.
 */
static int null_syscalls(struct ctx *c, unsigned int batch, long nr,
			 long arg, long want, const char *call)
{
	long got;

	while (batch--) {
		got = syscall(nr, arg);
		if (got != want)
			return wrong_id(c, call, got, want);
	}
	return 0;
}

static int op_getpid(struct ctx *c, unsigned int batch)
{
	return null_syscalls(c, batch, SYS_getpid, 0, c->want.pid, "getpid()");
}

static int op_getppid(struct ctx *c, unsigned int batch)
{
	return null_syscalls(c, batch, SYS_getppid, 0, c->want.ppid,
			     "getppid()");
}

static int op_getpgid_self(struct ctx *c, unsigned int batch)
{
	return null_syscalls(c, batch, SYS_getpgid, c->want.pid, c->want.pgid,
			     "getpgid(self)");
}

static int op_getpgid_0(struct ctx *c, unsigned int batch)
{
	return null_syscalls(c, batch, SYS_getpgid, 0, c->want.pgid,
			     "getpgid(0)");
}

static int op_getsid(struct ctx *c, unsigned int batch)
{
	return null_syscalls(c, batch, SYS_getsid, 0, c->want.sid,
			     "getsid(0)");
}

/* ---- System V IPC ---------------------------------------------------- */

static void remove_ipc(void *arg)
{
	struct ctx *c = arg;

	if (c->msq_id >= 0)
		msgctl(c->msq_id, IPC_RMID, NULL);
	if (c->shm_id >= 0)
		shmctl(c->shm_id, IPC_RMID, NULL);
	c->msq_id = c->shm_id = -1;
}

/* Probe once: a kernel without SysV IPC returns ENOSYS. */
static int setup_sysv(struct ctx *c)
{
	int id = msgget(IPC_PRIVATE, IPC_CREAT | 0600);

	if (id < 0)
		return -errno;
	msgctl(id, IPC_RMID, NULL);
	c->last_id = -1;
	return 0;
}

static int setup_msq(struct ctx *c)
{
	c->msq_id = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	return c->msq_id < 0 ? -errno : 0;
}

static int setup_shm(struct ctx *c)
{
	c->shm_id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	return c->shm_id < 0 ? -errno : 0;
}

static void teardown_ipc(struct ctx *c)
{
	remove_ipc(c);
}

static int op_msgget_ctl(struct ctx *c, unsigned int batch)
{
	while (batch--) {
		int id = msgget(IPC_PRIVATE, IPC_CREAT | 0600);

		if (id < 0)
			return -errno;
		if (msgctl(id, IPC_RMID, NULL))
			return -errno;
		c->last_id = id;
	}
	return 0;
}

static int op_msgsnd_rcv(struct ctx *c, unsigned int batch)
{
	struct { long mtype; char mtext[8]; } out = { 1, "kbench" }, in;
	ssize_t n;

	while (batch--) {
		if (msgsnd(c->msq_id, &out, sizeof(out.mtext), 0))
			return -errno;
		n = msgrcv(c->msq_id, &in, sizeof(in.mtext), 0, 0);
		if (n < 0)
			return -errno;
		if (n != sizeof(in.mtext) || in.mtype != out.mtype ||
		    memcmp(in.mtext, out.mtext, sizeof(in.mtext))) {
			snprintf(c->why, sizeof(c->why),
				 "msgrcv returned %zd bytes of type %ld, not the 8 bytes of type 1 sent",
				 n, in.mtype);
			return WRONG_RESULT;
		}
	}
	return 0;
}

static int op_shmget_ctl(struct ctx *c, unsigned int batch)
{
	while (batch--) {
		int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);

		if (id < 0)
			return -errno;
		if (shmctl(id, IPC_RMID, NULL))
			return -errno;
		c->last_id = id;
	}
	return 0;
}

static int op_shmat_dt(struct ctx *c, unsigned int batch)
{
	while (batch--) {
		void *p = shmat(c->shm_id, NULL, 0);

		if (p == (void *)-1)
			return -errno;
		if (shmdt(p))
			return -errno;
	}
	return 0;
}

/* After IPC_RMID the id must be gone (EINVAL, or EIDRM while in use). */
static int check_removed(struct ctx *c, int (*stat)(int id), const char *what)
{
	int err;

	if (c->last_id < 0)
		return 0;
	err = stat(c->last_id) ? errno : 0;
	if (err == EINVAL || err == EIDRM)
		return 0;
	snprintf(c->why, sizeof(c->why),
		 "%s id %d still answers IPC_STAT after IPC_RMID (%s)", what,
		 c->last_id, err ? strerror(err) : "no error");
	return WRONG_RESULT;
}

static int msq_stat(int id)
{
	struct msqid_ds ds;

	return msgctl(id, IPC_STAT, &ds);
}

static int shm_stat(int id)
{
	struct shmid_ds ds;

	return shmctl(id, IPC_STAT, &ds);
}

static int check_msq_removed(struct ctx *c)
{
	return check_removed(c, msq_stat, "message queue");
}

static int check_shm_removed(struct ctx *c)
{
	return check_removed(c, shm_stat, "shared memory");
}

/* Every shmat was undone by its shmdt, and the last of them was ours. */
static int check_shm_detached(struct ctx *c)
{
	struct shmid_ds ds;

	if (shmctl(c->shm_id, IPC_STAT, &ds))
		return -errno;
	if (ds.shm_nattch == 0 && ds.shm_lpid == c->want.pid)
		return 0;
	snprintf(c->why, sizeof(c->why),
		 "after the batches: shm_nattch %lu (want 0), shm_lpid %d (want %d)",
		 (unsigned long)ds.shm_nattch, ds.shm_lpid, c->want.pid);
	return WRONG_RESULT;
}

/* The exec row has no op of its own: samples come from the chain. */
static int op_exec_chain(struct ctx *c, unsigned int batch)
{
	(void)c;
	(void)batch;
	return 0;
}

#define ROW(id, l, what, b, su, fn, td, chk) \
	[R_##id] = { .name = #id, .label = l, .note = what, .batch = b, \
		     .setup = su, .op = fn, .teardown = td, .check = chk }

static const struct row rows[NR_ROWS] = {
	ROW(fork, "fork()", "fork + child _exit + waitpid", 0, NULL, op_fork, NULL, NULL),
	ROW(clone, "clone()", "clone(CLONE_VM) + child exit + waitpid", 0, NULL, op_clone, NULL, NULL),
	ROW(execve, "execve()", "execve to main() of the new image", 0, NULL, op_exec_chain, NULL, NULL),
	ROW(getpid, "getpid()", "raw syscall", 1000, NULL, op_getpid, NULL, NULL),
	ROW(getppid, "getppid()", "raw syscall", 1000, NULL, op_getppid, NULL, NULL),
	ROW(getpgid_self, "getpgid(self)", "raw syscall", 1000, NULL, op_getpgid_self, NULL, NULL),
	ROW(getpgid_0, "getpgid(0)", "raw syscall", 1000, NULL, op_getpgid_0, NULL, NULL),
	ROW(getsid, "getsid()", "raw syscall getsid(0)", 1000, NULL, op_getsid, NULL, NULL),
	ROW(msgget_ctl, "msgget/ctl()", "two syscalls: msgget + msgctl(IPC_RMID)", 100, setup_sysv, op_msgget_ctl, NULL, check_msq_removed),
	ROW(msgsnd_rcv, "msgsnd/rcv()", "two syscalls: msgsnd + msgrcv of 8 bytes", 100, setup_msq, op_msgsnd_rcv, teardown_ipc, NULL),
	ROW(shmget_ctl, "shmget/ctl()", "two syscalls: shmget(4 KiB) + shmctl(IPC_RMID)", 100, setup_sysv, op_shmget_ctl, NULL, check_shm_removed),
	ROW(shmat_ctl, "shmat/ctl()", "two syscalls: shmat + shmdt of 4 KiB", 100, setup_shm, op_shmat_dt, teardown_ipc, check_shm_detached),
};

static int run_row(void *ctx, int id, char *reason, size_t len);

/* The kb_test table, one entry per row of rows[]: names in one place. */
static struct kb_test tests[NR_ROWS];

static void build_tests(void)
{
	static char desc[NR_ROWS][96];
	size_t i;

	for (i = 0; i < NR_ROWS; i++) {
		snprintf(desc[i], sizeof(desc[i]), "%-14s %s", rows[i].label,
			 rows[i].note);
		tests[i] = (struct kb_test)KB_TEST_ARG(rows[i].name, run_row,
						       (int)i, desc[i]);
	}
}

/* ---- measurement ----------------------------------------------------- */

/*
 * msgget_ctl in the exact guest: what IPC_RMID removes (the queue, and the
 * IDR node its id took) is freed by RCU callbacks after a grace period.
 * They ran in a third of the batches (at a tick), and the allocations of
 * the others found a slab state that depended on where they had landed:
 * one more new slab of IDR nodes (new_slab, radix_tree_node_ctor) or not,
 * which moved the row's median by up to 91 instructions an operation
 * from boot to boot (kbench where --plugin, the patched test kernel). So
 * each batch starts after the callbacks of the batch before have run, a
 * little after a tick (kb_settle_batch()): every batch then holds
 * msgget + msgctl(IPC_RMID) alone. The shm rows' batches are as long as a
 * tick's period or longer and hold a tick, and their median batch the
 * callbacks with it: settled, they stayed near (shmget_ctl's range 17 ->
 * 1.5-2.3 instructions, its margin the 0.5% floor all the same; shmat_ctl's
 * 15.7 -> 19-30), and their figures would lose the deferred frees they
 * hold now.
 */
static bool settles_each_batch(const struct row *r)
{
	return r->op == op_msgget_ctl;
}

/* Fill samples[] (microseconds per operation). 0, -errno or WRONG_RESULT. */
static int sample_row(struct ctx *c, const struct row *r, unsigned int batch,
		      double *samples)
{
	bool settle = settles_each_batch(r) && kb_settle_wanted();
	long i;
	int err;

	if (r->op == op_exec_chain) {
		err = run_exec_chain(c, c->warmup, c->iterations);
		if (!err)
			memcpy(samples, c->exec_samples,
			       sizeof(*samples) * c->exec_nsamples);
		return err;
	}
	for (i = -c->warmup; i < c->iterations; i++) {
		uint64_t t0, t1;

		/* Outside t0..t1: the batch before's frees done first. */
		if (settle)
			kb_settle_batch();
		/*
		 * Signals wait until the batch is over, so that a SIGTERM
		 * never leaves a half-created IPC object or child behind.
		 */
		kb_cleanup_block_signals();
		/* Outside t0..t1: the figures do not count the marks. */
		kb_mark_open();
		t0 = kb_clock_ns();
		err = r->op(c, batch);
		t1 = kb_clock_ns();
		kb_mark_close();
		kb_cleanup_unblock_signals();
		if (err)
			return err;
		if (i >= 0)
			samples[i] = (double)(t1 - t0) / batch / 1000.0;
	}
	return r->check ? r->check(c) : 0;
}

/* The verdict on a failed row: the errno rule, or the wrong result. */
static int row_error(struct ctx *c, const struct row *r, const char *stage,
		     int err, char *reason, size_t len)
{
	char what[64];

	if (err == WRONG_RESULT) {
		snprintf(reason, len, "%s: %s", r->label, c->why);
		return KSFT_FAIL;
	}
	snprintf(what, sizeof(what), "%s %s", r->label, stage);
	return kb_errno_result(err, KB_ENV_NO_CAP, what, reason, len);
}

/* fork and clone: the exact guest times them at SCHED_FIFO 1 (settle.h). */
static bool creates_process(const struct row *r)
{
	return r->op == op_fork || r->op == op_clone;
}

static int run_row(void *ctx, int idx, char *reason, size_t len)
{
	struct ctx *c = ctx;
	const struct row *r = &rows[idx];
	unsigned int batch = r->batch ? (c->batch ? (unsigned int)c->batch : r->batch) : 1;
	enum kb_settle_fifo fifo = KB_SETTLE_FIFO_OFF;
	char why[160];
	double *samples;
	int err = 0;

	if (r->setup)
		err = r->setup(c);
	if (err)
		return row_error(c, r, "setup", err, reason, len);
	samples = calloc(c->iterations, sizeof(*samples));
	if (!samples)
		ksft_exit_fail_msg("out of memory\n");
	if (creates_process(r))
		fifo = kb_settle_fifo_begin(why, sizeof(why));
	err = sample_row(c, r, batch, samples);
	kb_settle_fifo_end(fifo);
	if (r->teardown)
		r->teardown(c);
	if (err) {
		free(samples);
		return row_error(c, r, "failed", err, reason, len);
	}
	kb_stats_compute(samples, c->iterations, &c->st[idx]);
	free(samples);
	kb_results_row(r->name, "us", &c->st[idx]);
	kb_results_extra("batch", batch);
	if (batch == 1)
		kb_results_mode();
	if (fifo != KB_SETTLE_FIFO_OFF)
		kb_results_extra("sched_fifo", fifo == KB_SETTLE_FIFO_ON);
	kb_results_note(r->note);
	c->done[idx] = true;
	/* Only a broken clock or loop: the real checks are in op/check. */
	if (!(c->st[idx].min > 0)) {
		snprintf(reason, len, "clock sanity: non-positive sample");
		return KSFT_FAIL;
	}
	return KSFT_PASS;
}

/* The seed's table, as diagnostics. */
static void print_table(const struct ctx *c)
{
	size_t i;

	ksft_print_msg("iterations (-i): %ld, clock: %s, unit: usec\n",
		       c->iterations, KB_CLOCK_NAME);
	ksft_print_msg("syscall       |  average  |  variance |  minimum  |  maximum\n");
	ksft_print_msg("----------------------------------------------------------------------\n");
	for (i = 0; i < NR_ROWS; i++) {
		const struct kb_stats *st = &c->st[i];

		if (!c->done[i])
			continue;
		ksft_print_msg("%-14s|%10.3f |%10.3f |%10.3f |%10.3f\n",
			       rows[i].label, st->mean, st->rsd_pct, st->min,
			       st->max);
	}
}

/* ---- command line ---------------------------------------------------- */

static void parse_options(int argc, char **argv, struct ctx *c)
{
	const struct kb_cli_opt opts[] = {
		KB_OPT_LONG('i', "iterations", &c->iterations, 2, 10000000, "N",
			    "samples per row (default " KB_CLI_STR(DEFAULT_ITERATIONS)
			    ", " KB_CLI_STR(FULL_ITERATIONS) " with --full,\n"
			    KB_CLI_STR(SLOW_ITERATIONS) " when KSFT_MACHINE_SLOW=yes)"),
		KB_OPT_LONG('w', "warmup", &c->warmup, 0, 10000000, "N",
			    "untimed samples first (default: 10% of -i, >= 10)"),
		KB_OPT_LONG('b', "batch", &c->batch, 1, 10000000, "N",
			    "operations per sample for every row but fork,\n"
			    "clone and execve (default: 1000 for null syscalls,\n"
			    "100 for IPC)"),
		KB_OPT_END(),
	};
	const struct kb_cli cli = {
		.opts = opts, .common = KB_CLI_ALL,
		.about = "Measure process creation, null system calls and System V IPC on the\n"
			 "running kernel; print KTAP (one result per row, figures on '# ' lines)\n"
			 "and the Scribe micro-benchmark table (microseconds). Each operation's\n"
			 "result is checked (exit status, syscall value against /proc/self/stat,\n"
			 "message contents, IPC ids gone after IPC_RMID).",
		.notes = "variance = standard deviation / mean x 100. Times are " KB_CLOCK_NAME ",\n"
			 "per operation; a sample is the mean over a batch of operations.\n"
			 "The process runs pinned to one CPU (children inherit it) unless --no-pin.",
		.tests = tests, .ntests = ARRAY_SIZE(tests),
	};

	c->iterations = -1;
	c->warmup = -1;
	kb_cli_parse(argc, argv, &cli, &c->common);
	if (c->iterations < 0)
		c->iterations = kb_cli_pick_count(&c->common,
						  DEFAULT_ITERATIONS,
						  FULL_ITERATIONS,
						  SLOW_ITERATIONS);
	if (c->warmup < 0)
		c->warmup = c->iterations / 10 > 10 ? c->iterations / 10 : 10;
}

int main(int argc, char **argv)
{
	static struct ctx c = { .msq_id = -1, .shm_id = -1, .last_id = -1,
				.exec_child = -1 };
	char where[160];
	double overhead;
	int err;

	/* A link of the execve() chain: take the time before anything else. */
	if (argc > 1 && !strcmp(argv[1], EXEC_CHAIN_ARG))
		return exec_chain_main(argc, argv);

	kb_init("syscall_overhead", argc, argv);
	build_tests();
	parse_options(argc, argv, &c);
	kb_cleanup_push(remove_ipc, &c);
	kb_cleanup_push(kill_exec_child, &c);
	kb_placement_setup(&c.place, c.common.no_pin);
	kb_placement_describe(&c.place, where, sizeof(where));

	ksft_print_header();
	err = read_ids(&c.want);
	if (err)
		ksft_exit_fail_msg("cannot read /proc/self/stat: %s\n",
				   strerror(-err));
	overhead = kb_clock_overhead_ns();
	kb_results_param_num("iterations", c.iterations);
	kb_results_param_num("warmup", c.warmup);
	kb_results_param_num("clock_overhead_ns", overhead);
	ksft_print_msg("clock: %s, overhead of one read: %.1f ns; placement: %s\n",
		       KB_CLOCK_NAME, overhead, where);
	kb_ktap_run_tests(tests, ARRAY_SIZE(tests), c.common.selected, &c);
	print_table(&c);
	free(c.exec_samples);
	kb_ktap_finish(c.common.json);
}
