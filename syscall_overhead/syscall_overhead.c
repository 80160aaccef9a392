// SPDX-License-Identifier: GPL-2.0
/*
 * syscall_overhead: the cost of process creation, null system calls and
 * System V IPC on the running kernel, in the layout of the Scribe
 * micro-benchmark table (average, variance = relative standard deviation
 * in %, minimum, maximum, microseconds).
 *
 * Every row is one KTAP test. A sample is the mean over a batch of calls
 * for operations far below a microsecond (the clock would dominate a
 * single call), one operation otherwise.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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

#include "kbench_ktap.h"

#define DEFAULT_ITERATIONS	1000
#define FULL_ITERATIONS		5000
#define SLOW_ITERATIONS		100
#define EXEC_CHAIN_ARG		"--exec-chain"

struct row;

/*
 * One measured operation. setup() returns 0, or a negative errno that
 * makes the row skip; op() runs @batch operations and returns 0 or a
 * negative errno (a failure of the row).
 */
struct row {
	const char *name;	/* stable KTAP / JSON name */
	const char *label;	/* the seed's table label */
	const char *note;	/* what one operation is */
	unsigned int batch;	/* operations per sample */
	int (*setup)(void);
	int (*op)(unsigned int batch);
	void (*teardown)(void);
	bool selected;
};

struct options {
	long iterations;
	long warmup;
	long batch;		/* 0: the row's own batch size */
	const char *json;
	bool iterations_set;
};

/* ---- process creation ------------------------------------------------ */

static int wait_child_ok(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, __WALL) != pid)
		return -errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return -ECHILD;
	return 0;
}

static int op_fork(unsigned int batch)
{
	unsigned int i;
	int err;

	for (i = 0; i < batch; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return -errno;
		if (pid == 0)
			_exit(0);
		err = wait_child_ok(pid);
		if (err)
			return err;
	}
	return 0;
}

static char clone_stack[64 * 1024] __attribute__((aligned(16)));

static int clone_child(void *arg)
{
	(void)arg;
	return 0;
}

static int op_clone(unsigned int batch)
{
	unsigned int i;
	int err;

	for (i = 0; i < batch; i++) {
		pid_t pid = clone(clone_child, clone_stack + sizeof(clone_stack),
				  CLONE_VM | SIGCHLD, NULL);

		if (pid < 0)
			return -errno;
		err = wait_child_ok(pid);
		if (err)
			return err;
	}
	return 0;
}

/*
 * execve() is timed across the exec itself: a chain of processes re-execs
 * this program with the time taken just before execve(); the new image
 * takes the time again at the top of main() and writes the difference to
 * a pipe. So a sample is execve() plus the dynamic loader and libc start-up
 * up to main(), what any program pays.
 */
static int exec_pipe[2] = { -1, -1 };
static double *exec_samples;
static long exec_nsamples, exec_next;

static void exec_chain_step(int fd, long remaining, uint64_t t0)
{
	uint64_t delta = kb_now_ns() - t0;
	char fdbuf[16], rembuf[24], tbuf[24];
	char *args[] = { "syscall_overhead", EXEC_CHAIN_ARG, fdbuf, rembuf,
			 tbuf, NULL };

	if (write(fd, &delta, sizeof(delta)) != sizeof(delta))
		_exit(1);
	if (remaining <= 0)
		_exit(0);
	snprintf(fdbuf, sizeof(fdbuf), "%d", fd);
	snprintf(rembuf, sizeof(rembuf), "%ld", remaining - 1);
	snprintf(tbuf, sizeof(tbuf), "%llu", (unsigned long long)kb_now_ns());
	/* Re-read the clock last: it is the start of the next sample. */
	execv("/proc/self/exe", args);
	_exit(127);
}

static int exec_chain_main(int argc, char **argv)
{
	uint64_t t0;

	if (argc != 5) {
		fprintf(stderr, "%s: %s is internal: it takes FD REMAINING T0\n",
			argv[0], EXEC_CHAIN_ARG);
		return KB_EXIT_USAGE;
	}
	t0 = strtoull(argv[4], NULL, 10);
	exec_chain_step(atoi(argv[2]), atol(argv[3]), t0);
	return 1;
}

static pid_t exec_child = -1;

static void kill_exec_child(void *arg)
{
	(void)arg;
	if (exec_child > 0) {
		kill(exec_child, SIGKILL);
		waitpid(exec_child, NULL, 0);
		exec_child = -1;
	}
}

/* Runs a chain of @skip + @count execs and keeps the last @count. */
static int run_exec_chain(long skip, long count)
{
	uint64_t delta;
	int err = 0;
	long got = 0;

	free(exec_samples);
	exec_samples = calloc(count, sizeof(*exec_samples));
	skip++;		/* the fork child's own step is not an exec */
	if (!exec_samples || pipe2(exec_pipe, O_CLOEXEC))
		return -errno;
	exec_child = fork();
	if (exec_child < 0) {
		err = -errno;
		goto out;
	}
	if (exec_child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(exec_pipe[0]);
		/* The write end must survive the execs. */
		if (fcntl(exec_pipe[1], F_SETFD, 0))
			_exit(1);
		exec_chain_step(exec_pipe[1], skip + count - 1, kb_now_ns());
	}
	close(exec_pipe[1]);
	exec_pipe[1] = -1;
	while (got < count &&
	       read(exec_pipe[0], &delta, sizeof(delta)) == sizeof(delta)) {
		if (skip > 0)
			skip--;
		else
			exec_samples[got++] = (double)delta / 1000.0;
	}
	if (got < count)
		err = -EPIPE;
	if (!err)
		err = wait_child_ok(exec_child);
	else
		kill(exec_child, SIGKILL), waitpid(exec_child, NULL, 0);
	exec_child = -1;
out:
	close(exec_pipe[0]);
	exec_pipe[0] = -1;
	exec_nsamples = got;
	exec_next = 0;
	return err;
}

/* ---- null system calls ----------------------------------------------- */

static pid_t self_pid;

static int op_getpid(unsigned int batch)
{
	while (batch--)
		syscall(SYS_getpid);
	return 0;
}

static int op_getppid(unsigned int batch)
{
	while (batch--)
		syscall(SYS_getppid);
	return 0;
}

static int op_getpgid_self(unsigned int batch)
{
	while (batch--)
		syscall(SYS_getpgid, self_pid);
	return 0;
}

static int op_getpgid_0(unsigned int batch)
{
	while (batch--)
		syscall(SYS_getpgid, 0);
	return 0;
}

static int op_getsid(unsigned int batch)
{
	while (batch--)
		syscall(SYS_getsid, 0);
	return 0;
}

/* ---- System V IPC ---------------------------------------------------- */

static int msq_id = -1, shm_id = -1;

static void remove_ipc(void *arg)
{
	(void)arg;
	if (msq_id >= 0)
		msgctl(msq_id, IPC_RMID, NULL);
	if (shm_id >= 0)
		shmctl(shm_id, IPC_RMID, NULL);
	msq_id = shm_id = -1;
}

/* Probe once: a kernel without SysV IPC returns ENOSYS. */
static int setup_sysv(void)
{
	int id = msgget(IPC_PRIVATE, IPC_CREAT | 0600);

	if (id < 0)
		return -errno;
	msgctl(id, IPC_RMID, NULL);
	return 0;
}

static int setup_msq(void)
{
	msq_id = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	return msq_id < 0 ? -errno : 0;
}

static int setup_shm(void)
{
	shm_id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	return shm_id < 0 ? -errno : 0;
}

static void teardown_ipc(void)
{
	remove_ipc(NULL);
}

static int op_msgget_ctl(unsigned int batch)
{
	while (batch--) {
		int id = msgget(IPC_PRIVATE, IPC_CREAT | 0600);

		if (id < 0)
			return -errno;
		if (msgctl(id, IPC_RMID, NULL))
			return -errno;
	}
	return 0;
}

static int op_msgsnd_rcv(unsigned int batch)
{
	struct { long mtype; char mtext[8]; } msg = { .mtype = 1 };

	while (batch--) {
		if (msgsnd(msq_id, &msg, sizeof(msg.mtext), 0))
			return -errno;
		if (msgrcv(msq_id, &msg, sizeof(msg.mtext), 0, 0) < 0)
			return -errno;
	}
	return 0;
}

static int op_shmget_ctl(unsigned int batch)
{
	while (batch--) {
		int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);

		if (id < 0)
			return -errno;
		if (shmctl(id, IPC_RMID, NULL))
			return -errno;
	}
	return 0;
}

static int op_shmat_dt(unsigned int batch)
{
	while (batch--) {
		void *p = shmat(shm_id, NULL, 0);

		if (p == (void *)-1)
			return -errno;
		if (shmdt(p))
			return -errno;
	}
	return 0;
}

/* The exec row has no op of its own: samples come from the chain. */
static int op_none(unsigned int batch)
{
	(void)batch;
	return 0;
}

#define ROW(n, l, what, b, su, fn, td) \
	{ .name = n, .label = l, .note = what, .batch = b, .setup = su, \
	  .op = fn, .teardown = td }

static struct row rows[] = {
	ROW("fork", "fork()", "fork + child _exit + waitpid", 1, NULL, op_fork, NULL),
	ROW("clone", "clone()", "clone(CLONE_VM) + child exit + waitpid", 1, NULL, op_clone, NULL),
	ROW("execve", "execve()", "execve to main() of the new image", 1, NULL, op_none, NULL),
	ROW("getpid", "getpid()", "raw syscall", 1000, NULL, op_getpid, NULL),
	ROW("getppid", "getppid()", "raw syscall", 1000, NULL, op_getppid, NULL),
	ROW("getpgid_self", "getpgid(self)", "raw syscall", 1000, NULL, op_getpgid_self, NULL),
	ROW("getpgid_0", "getpgid(0)", "raw syscall", 1000, NULL, op_getpgid_0, NULL),
	ROW("getsid", "getsid()", "raw syscall getsid(0)", 1000, NULL, op_getsid, NULL),
	ROW("msgget_ctl", "msgget/ctl()", "two syscalls: msgget + msgctl(IPC_RMID)", 100, setup_sysv, op_msgget_ctl, NULL),
	ROW("msgsnd_rcv", "msgsnd/rcv()", "two syscalls: msgsnd + msgrcv of 8 bytes", 100, setup_msq, op_msgsnd_rcv, teardown_ipc),
	ROW("shmget_ctl", "shmget/ctl()", "two syscalls: shmget(4 KiB) + shmctl(IPC_RMID)", 100, setup_sysv, op_shmget_ctl, NULL),
	ROW("shmat_ctl", "shmat/ctl()", "two syscalls: shmat + shmdt of 4 KiB", 100, setup_shm, op_shmat_dt, teardown_ipc),
};

#define NR_ROWS (sizeof(rows) / sizeof(rows[0]))

/* ---- measurement ----------------------------------------------------- */

struct row_result {
	bool done;
	struct kb_stats st;
};

static struct row_result results[NR_ROWS];

/* Fill samples[] (microseconds per operation). 0 or -errno. */
static int sample_row(struct row *r, const struct options *o,
		      unsigned int batch, double *samples)
{
	long i;
	int err;

	if (r->op == op_none) {
		err = run_exec_chain(o->warmup, o->iterations);
		if (err)
			return err;
		memcpy(samples, exec_samples, sizeof(*samples) * exec_nsamples);
		return 0;
	}
	for (i = -o->warmup; i < o->iterations; i++) {
		uint64_t t0, t1;

		/*
		 * Signals wait until the batch is over, so that a SIGTERM
		 * never leaves a half-created IPC object or child behind.
		 */
		kb_signals_block();
		t0 = kb_now_ns();
		err = r->op(batch);
		t1 = kb_now_ns();
		kb_signals_unblock();
		if (err)
			return err;
		if (i >= 0)
			samples[i] = (double)(t1 - t0) / batch / 1000.0;
	}
	return 0;
}

static const char *skip_reason(const struct row *r, int err)
{
	static char buf[160];

	if (err == -ENOSYS)
		snprintf(buf, sizeof(buf), "%s: not supported by this kernel (ENOSYS)",
			 r->label);
	else
		snprintf(buf, sizeof(buf), "%s: cannot set up: %s", r->label,
			 strerror(-err));
	return buf;
}

/* Errors that say the environment lacks something, not that it is broken. */
static bool err_is_environment(int err)
{
	return err == -ENOSYS || err == -EPERM || err == -EACCES ||
	       err == -ENOSPC || err == -EAGAIN || err == -ENOMEM;
}

static void run_row(int idx, const struct options *o)
{
	struct row *r = &rows[idx];
	unsigned int batch = o->batch ? o->batch : r->batch;
	double *samples;
	char why[160];
	int err = 0;

	if (r->op == op_none || r->op == op_fork || r->op == op_clone)
		batch = 1;
	if (r->setup)
		err = r->setup();
	if (err) {
		kb_skip(r->name, skip_reason(r, err));
		return;
	}
	samples = calloc(o->iterations, sizeof(*samples));
	if (!samples)
		ksft_exit_fail_msg("out of memory\n");
	err = sample_row(r, o, batch, samples);
	if (r->teardown)
		r->teardown();
	if (err) {
		snprintf(why, sizeof(why), "%s failed: %s", r->label,
			 strerror(-err));
		if (err_is_environment(err))
			kb_skip(r->name, why);
		else
			kb_fail(r->name, why);
		free(samples);
		return;
	}
	kb_stats_compute(samples, o->iterations, &results[idx].st);
	free(samples);
	kb_row_add(r->name, "us", &results[idx].st);
	kb_row_extra("batch", batch);
	kb_row_note(r->note);
	results[idx].done = true;
	if (!(results[idx].st.min > 0))
		kb_fail(r->name, "non-positive sample: the clock or the loop is broken");
	else
		kb_pass(r->name);
}

/* The seed's table, as diagnostics. */
static void print_table(const struct options *o)
{
	unsigned int i;

	ksft_print_msg("iterations (-i): %ld, clock: %s, unit: usec\n",
		       o->iterations, KB_CLOCK_NAME);
	ksft_print_msg("syscall       |  average  |  variance |  minimum  |  maximum\n");
	ksft_print_msg("----------------------------------------------------------------------\n");
	for (i = 0; i < NR_ROWS; i++) {
		const struct kb_stats *st = &results[i].st;

		if (!results[i].done)
			continue;
		ksft_print_msg("%-14s|%10.3f |%10.3f |%10.3f |%10.3f\n",
			       rows[i].label, st->mean, st->rsd_pct, st->min,
			       st->max);
	}
}

/* ---- command line ---------------------------------------------------- */

static void usage(FILE *f)
{
	unsigned int i;

	fprintf(f,
"Usage: %s [OPTION]...\n"
"Measure process creation, null system calls and System V IPC on the\n"
"running kernel; print KTAP (one result per row, figures on '# ' lines)\n"
"and the Scribe micro-benchmark table (microseconds).\n"
"\n"
"  -i, --iterations=N  samples per row (default %d, %d with --full,\n"
"                      %d when KSFT_MACHINE_SLOW=yes)\n"
"  -w, --warmup=N      untimed samples first (default: 10%% of -i, >= 10)\n"
"  -b, --batch=N       operations per sample for every row but fork,\n"
"                      clone and execve (default: 1000 for null syscalls,\n"
"                      100 for IPC)\n"
"  -t, --test=NAME     run only row NAME (repeatable, or a comma list)\n"
"  -l, --list          list the rows and exit\n"
"      --full          the seed's larger run (-i %d)\n"
"      --json=FILE     write the results as kbench JSON to FILE\n"
"  -h, --help          this help\n"
"\n"
"variance = standard deviation / mean x 100. Times are %s,\n"
"per operation; a sample is the mean over a batch of operations.\n"
"Exit status: 0 pass, 1 a row failed, 2 bad usage, 4 everything skipped.\n",
		kb_prog(), DEFAULT_ITERATIONS, FULL_ITERATIONS, SLOW_ITERATIONS,
		FULL_ITERATIONS, KB_CLOCK_NAME);
	fprintf(f, "\nRows:");
	for (i = 0; i < NR_ROWS; i++)
		fprintf(f, " %s", rows[i].name);
	fprintf(f, "\n");
}

static bool select_row(const char *name)
{
	unsigned int i;

	for (i = 0; i < NR_ROWS; i++)
		if (!strcmp(rows[i].name, name))
			return rows[i].selected = true;
	return false;
}

static void parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_FULL = 256, OPT_JSON };
	static const struct option longopts[] = {
		{ "iterations", required_argument, NULL, 'i' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "batch", required_argument, NULL, 'b' },
		{ "test", required_argument, NULL, 't' },
		{ "list", no_argument, NULL, 'l' },
		{ "full", no_argument, NULL, OPT_FULL },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool any_selected = false, full = false;
	unsigned int i;
	int c;

	o->warmup = -1;
	while ((c = getopt_long(argc, argv, "i:w:b:t:lh", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o->iterations = kb_parse_ll(optarg, "--iterations", 2, 10000000);
			o->iterations_set = true;
			break;
		case 'w':
			o->warmup = kb_parse_ll(optarg, "--warmup", 0, 10000000);
			break;
		case 'b':
			o->batch = kb_parse_ll(optarg, "--batch", 1, 10000000);
			break;
		case 't':
			kb_select_names(optarg, "row", select_row);
			any_selected = true;
			break;
		case 'l':
			for (i = 0; i < NR_ROWS; i++)
				printf("%-14s %-14s %s\n", rows[i].name,
				       rows[i].label, rows[i].note);
			exit(0);
		case OPT_FULL:
			full = true;
			break;
		case OPT_JSON:
			o->json = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			kb_usage_hint();
		}
	}
	if (optind < argc)
		kb_usage_error("unexpected argument '%s'", argv[optind]);
	if (!o->iterations_set)
		o->iterations = full ? FULL_ITERATIONS :
				kb_machine_slow() ? SLOW_ITERATIONS :
				DEFAULT_ITERATIONS;
	if (o->warmup < 0)
		o->warmup = o->iterations / 10 > 10 ? o->iterations / 10 : 10;
	if (!any_selected)
		for (i = 0; i < NR_ROWS; i++)
			rows[i].selected = true;
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	unsigned int i, planned = 0;

	/* A link of the execve() chain: take the time before anything else. */
	if (argc > 1 && !strcmp(argv[1], EXEC_CHAIN_ARG))
		return exec_chain_main(argc, argv);

	kb_init("syscall_overhead", argc, argv);
	parse_options(argc, argv, &o);
	self_pid = getpid();
	kb_cleanup_push(remove_ipc, NULL);
	kb_cleanup_push(kill_exec_child, NULL);

	for (i = 0; i < NR_ROWS; i++)
		planned += rows[i].selected;
	kb_param_num("iterations", o.iterations);
	kb_param_num("warmup", o.warmup);
	kb_param_num("clock_overhead_ns", kb_clock_overhead_ns());

	ksft_print_header();
	ksft_set_plan(planned);
	ksft_print_msg("clock: %s, overhead of one read: %.1f ns\n",
		       KB_CLOCK_NAME, kb_clock_overhead_ns());
	for (i = 0; i < NR_ROWS; i++)
		if (rows[i].selected)
			run_row(i, &o);
	print_table(&o);
	kb_finish(o.json);
}
