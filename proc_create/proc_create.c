// SPDX-License-Identifier: GPL-2.0
/*
 * proc_create: how fast the kernel creates processes, by method and by the
 * size of the parent, in the layout of Table 28-3 of The Linux Programming
 * Interface (100,000 creations per cell, parent of 1.70, 2.70 and 11.70 MB
 * of total virtual memory), plus posix_spawn(), clone3(CLONE_VFORK) and
 * parents with hundreds of megabytes touched.
 *
 * A cell is one method at one parent size: a loop that creates a child,
 * lets it exit at once (or exec a helper that exits at once) and waits for
 * it, checking its exit status. Every creation is timed; the cell reports
 * the elapsed time, the parent's and the children's CPU time and the rate.
 *
 * main() measures every cell the selected tests need (sizes outside,
 * methods inside: the parent grows once), then the kb_test table reports:
 * one test per method, then the shape checks.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ktap.h"
#include "placement.h"
#include "rtsched.h"

#define BOOK_COUNT		100000	/* the book's creations per cell */
#define DEFAULT_COUNT		1000
#define SLOW_COUNT		100
#define DEFAULT_CELL_TIME	0.5	/* s, quick run */
#define FULL_EXTRA_CELL_TIME	10.0	/* s, -n/--full, sizes beyond the book's */
#define MAX_SAMPLES		20000	/* timed creations kept per cell */
#define MAX_SIZES		16
#define MAX_COUNT		10000000L
#define PROGRESS_COUNT		10000	/* cells this long print progress */
#define MAX_WARMUP		50	/* untimed creations per cell, at most */

#define KIB			1024ULL
#define MIB			(1024ULL * KIB)
#define GIB			(1024ULL * MIB)
#define DEFAULT_LARGE		GIB
#define SLOW_LARGE		(256 * MIB)
/* Leave this much memory to the rest of the system when touching. */
#define MEM_RESERVE		(256 * MIB)

/* Shape checks: generous bounds for a noisy shared machine. */
#define FLAT_BOUND		1.5	/* large / small minimum, at most */
#define GROW_BOUND		2.0	/* large / small minimum, at least */
/*
 * A touched parent this large makes fork's copying dominate whatever the
 * machine; between smaller parents a flat check relies on fork's own
 * growth over the same span (see span_too_small()).
 */
#define SPAN_MIN_MIB		256
#define SPAN_MIN_SIZE		(SPAN_MIN_MIB * MIB)

/* What children that run no helper exit with: a lost status fails. */
#define CHILD_STATUS		42

#ifndef PR_SET_THP_DISABLE
#define PR_SET_THP_DISABLE	41
#endif
#ifndef __NR_clone3
#define __NR_clone3		435
#endif
#ifndef CLONE_VFORK
#define CLONE_VFORK		0x00004000
#endif

/* ---- the helper programs the exec methods run ------------------------ */

#define HELPER_NOLIBC		"proc_create_true"
#define HELPER_LIBC		"proc_create_true_libc"

static char *helper_argv[] = { HELPER_NOLIBC, NULL };
/* An empty environment: the same exec work whoever runs the test. */
static char *empty_env[] = { NULL };

enum method_id {
	M_fork, M_vfork, M_clone, M_fork_exec, M_vfork_exec, M_posix_spawn,
	M_posix_spawn_exec, M_clone3_vfork, NR_METHODS
};

enum shape_id {
	S_vfork_flat, S_clone_flat, S_posix_spawn_flat, S_fork_grows,
	NR_SHAPES
};

#define NR_TESTS	(NR_METHODS + NR_SHAPES)

/* ---- parent sizes, cells, options, the context ------------------------ */

enum size_kind { SIZE_BOOK, SIZE_TOUCHED };

struct psize {
	enum size_kind kind;
	double book_mb;			/* SIZE_BOOK: total VmSize, MiB */
	unsigned long long bytes;	/* SIZE_TOUCHED: memory added */
	char label[24];			/* "1.70MB", "1GiB" */
	long target_kib;
	long vmsize_kib, vmrss_kib;	/* reached */
	char skip[200];			/* why this size could not be set up */
};

static const double book_sizes_mb[] = { 1.70, 2.70, 11.70 };
#define NR_BOOK_SIZES ARRAY_SIZE(book_sizes_mb)

struct cell {
	enum { CELL_NONE, CELL_OK, CELL_SKIP, CELL_FAIL } state;
	char why[240];
	long creations;
	double elapsed_s;
	double parent_cpu_s;
	double children_cpu_s;
	struct kb_stats st;		/* per creation, us */
	double p10;			/* 10th percentile per creation, us */
};

struct options {
	long count;
	bool count_set;
	bool thp;
	bool no_touch;		/* --no-touch: the book sizes' heap untouched */
	double cell_time;	/* s, < 0: default */
	const char *helper;	/* "libc", "nolibc" or a path */
	unsigned long long touched[MAX_SIZES];
	unsigned int ntouched;
	bool touched_set;
};

/* What a method's child does to the parent's memory, probed once. */
enum sharing { SHARE_UNKNOWN, SHARE_SHARED, SHARE_COPIED };

struct pc_ctx {
	struct options o;
	struct kb_cli_common common;
	struct kb_placement place;
	char nolibc_path[PATH_MAX];	/* posix_spawn */
	char exec_path[PATH_MAX];	/* the *_exec methods */
	char helper_why[PATH_MAX + 64];	/* why a helper is missing, or "" */
	struct psize sizes[MAX_SIZES];
	unsigned int nsizes;
	long baseline_kib;
	bool book_from_baseline;	/* baseline above 1.70 MB: offsets */
	void *heap_blocks[16];		/* the book sizes' malloc()s */
	unsigned int nheap_blocks;
	void *touched_map;
	size_t touched_len;
	bool measure[NR_METHODS];	/* needed by a selected test */
	int unsupported[NR_METHODS];	/* -errno found by the probe, or 0 */
	char unsupported_why[NR_METHODS][PATH_MAX + 64];
	enum sharing sharing[NR_METHODS];
	char sharing_why[NR_METHODS][200];
	struct cell cells[NR_METHODS][MAX_SIZES];
	double samples[MAX_SAMPLES];
	int bad_status;			/* the wrong wait status seen */
	/* The child being waited for, for the cleanup handler. */
	volatile pid_t live_child;
	/* Written by children that share our memory (probe). */
	volatile int child_wrote;
};

/* ---- creating one child ---------------------------------------------- */

/*
 * Children that run no helper store 1 into c->child_wrote and exit with
 * CHILD_STATUS: one store, so that the probe can tell a child that shares
 * our memory (vfork, clone(CLONE_VM)) from one that has a copy (fork).
 */
static int create_fork(struct pc_ctx *c, pid_t *pid)
{
	*pid = fork();
	if (*pid < 0)
		return -errno;
	if (*pid == 0) {
		c->child_wrote = 1;
		_exit(CHILD_STATUS);
	}
	return 0;
}

static int create_vfork(struct pc_ctx *c, pid_t *pid)
{
	*pid = vfork();
	if (*pid < 0)
		return -errno;
	if (*pid == 0) {
		c->child_wrote = 1;
		_exit(CHILD_STATUS);
	}
	return 0;
}

static _Alignas(16) char clone_stack[64 * 1024];

static int clone_child(void *arg)
{
	struct pc_ctx *c = arg;

	c->child_wrote = 1;
	return CHILD_STATUS;
}

/* clone(CLONE_VM): shares the memory, the parent does not wait for exec. */
static int create_clone(struct pc_ctx *c, pid_t *pid)
{
	*pid = clone(clone_child, clone_stack + sizeof(clone_stack),
		     CLONE_VM | SIGCHLD, c);
	return *pid < 0 ? -errno : 0;
}

static int create_fork_exec(struct pc_ctx *c, pid_t *pid)
{
	*pid = fork();
	if (*pid < 0)
		return -errno;
	if (*pid == 0) {
		execve(c->exec_path, helper_argv, empty_env);
		_exit(127);
	}
	return 0;
}

static int create_vfork_exec(struct pc_ctx *c, pid_t *pid)
{
	*pid = vfork();
	if (*pid < 0)
		return -errno;
	if (*pid == 0) {
		execve(c->exec_path, helper_argv, empty_env);
		_exit(127);
	}
	return 0;
}

static int spawn(pid_t *pid, const char *path)
{
	return -posix_spawn(pid, path, NULL, NULL, helper_argv, empty_env);
}

static int create_posix_spawn(struct pc_ctx *c, pid_t *pid)
{
	return spawn(pid, c->nolibc_path);
}

static int create_posix_spawn_exec(struct pc_ctx *c, pid_t *pid)
{
	return spawn(pid, c->exec_path);
}

/* The first 64 bytes of struct clone_args (CLONE_ARGS_SIZE_VER0). */
struct kb_clone_args {
	uint64_t flags;
	uint64_t pidfd;
	uint64_t child_tid;
	uint64_t parent_tid;
	uint64_t exit_signal;
	uint64_t stack;
	uint64_t stack_size;
	uint64_t tls;
};

#if defined(__x86_64__)
/*
 * clone3(CLONE_VM | CLONE_VFORK) without a stack of its own: the child runs
 * on the parent's stack, as after vfork(), so it must not return into C
 * code (that would overwrite the parent's frames). In the same asm block,
 * straight after the system call, it stores 1 to *@wrote (rdx survives the
 * syscall) and calls exit(CHILD_STATUS).
 */
static long clone3_vfork_exit(struct kb_clone_args *args, volatile int *wrote)
{
	long ret;

	asm volatile("syscall\n\t"
		     "test %%rax, %%rax\n\t"
		     "jnz 1f\n\t"
		     "movl $1, (%%rdx)\n\t"
		     "mov %[nr_exit], %%eax\n\t"
		     "mov %[status], %%edi\n\t"
		     "syscall\n"
		     "1:"
		     : "=a" (ret)
		     : "0" ((long)__NR_clone3), "D" (args),
		       "S" (sizeof(*args)), "d" (wrote),
		       [nr_exit] "i" (__NR_exit), [status] "i" (CHILD_STATUS)
		     : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__i386__)
/* The same on i386: int $0x80 leaves every register but eax alone. */
static long clone3_vfork_exit(struct kb_clone_args *args, volatile int *wrote)
{
	long ret;

	asm volatile("int $0x80\n\t"
		     "test %%eax, %%eax\n\t"
		     "jnz 1f\n\t"
		     "movl $1, (%%edx)\n\t"
		     "mov %[nr_exit], %%eax\n\t"
		     "mov %[status], %%ebx\n\t"
		     "int $0x80\n"
		     "1:"
		     : "=a" (ret)
		     : "0" ((long)__NR_clone3), "b" (args),
		       "c" (sizeof(*args)), "d" (wrote),
		       [nr_exit] "i" (__NR_exit), [status] "i" (CHILD_STATUS)
		     : "memory");
	return ret;
}
#elif defined(__aarch64__)
/* The same on arm64: svc #0 with the number in x8, arguments in x0..x2. */
static long clone3_vfork_exit(struct kb_clone_args *args, volatile int *wrote)
{
	register long x0 asm("x0") = (long)args;
	register long x1 asm("x1") = (long)sizeof(*args);
	register volatile int *x2 asm("x2") = wrote;
	register long x8 asm("x8") = __NR_clone3;

	asm volatile("svc #0\n\t"
		     "cbnz x0, 1f\n\t"
		     "mov w9, #1\n\t"
		     "str w9, [x2]\n\t"
		     "mov x8, %[nr_exit]\n\t"
		     "mov x0, %[status]\n\t"
		     "svc #0\n"
		     "1:"
		     : "+r" (x0)
		     : "r" (x1), "r" (x2), "r" (x8),
		       [nr_exit] "i" (__NR_exit), [status] "i" (CHILD_STATUS)
		     : "x9", "memory");
	return x0;
}
#endif

#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)
static int create_clone3_vfork(struct pc_ctx *c, pid_t *pid)
{
	struct kb_clone_args args = {
		.flags = CLONE_VM | CLONE_VFORK,
		.exit_signal = SIGCHLD,
	};
	long ret = clone3_vfork_exit(&args, &c->child_wrote);

	if (ret < 0)
		return (int)ret;
	*pid = (pid_t)ret;
	return 0;
}
#else
static int create_clone3_vfork(struct pc_ctx *c, pid_t *pid)
{
	(void)c;
	(void)pid;
	return -EOPNOTSUPP;
}
#endif

/* ---- methods ---------------------------------------------------------- */

enum helper_use { NO_HELPER, NOLIBC_HELPER, EXEC_HELPER };

struct method {
	const char *name;	/* stable KTAP / JSON name */
	const char *label;	/* the book's row label */
	const char *note;
	int (*create)(struct pc_ctx *c, pid_t *pid);
	enum helper_use helper;
};

static int report_method(void *ctx, int m, char *reason, size_t len);
static int report_shape(void *ctx, int id, char *reason, size_t len);

#define METHOD(id, l, what, h) \
	[M_##id] = { .name = #id, .label = l, .note = what, \
		     .create = create_##id, .helper = h }

static const struct method methods[NR_METHODS] = {
	METHOD(fork, "fork()", "fork, child _exit(42), waitpid", NO_HELPER),
	METHOD(vfork, "vfork()", "vfork, child _exit(42), waitpid", NO_HELPER),
	METHOD(clone, "clone()", "clone(CLONE_VM|SIGCHLD), child returns 42, waitpid",
	       NO_HELPER),
	METHOD(fork_exec, "fork() + exec()", "fork, child execve(helper), waitpid",
	       EXEC_HELPER),
	METHOD(vfork_exec, "vfork() + exec()", "vfork, child execve(helper), waitpid",
	       EXEC_HELPER),
	METHOD(posix_spawn, "posix_spawn()", "posix_spawn of the nolibc helper, waitpid",
	       NOLIBC_HELPER),
	METHOD(posix_spawn_exec, "posix_spawn() + exec", "posix_spawn of the exec helper, waitpid",
	       EXEC_HELPER),
	METHOD(clone3_vfork, "clone3(VFORK)", "clone3(CLONE_VM|CLONE_VFORK), child exit(42), waitpid",
	       NO_HELPER),
};

/* The shape checks: stable KTAP names, the method they look at. */
struct shape {
	const char *name;
	enum method_id method;
	bool grows;		/* fork: must grow; others: must stay flat */
};

#define SHAPE(id, m, g) \
	[S_##id] = { .name = #id, .method = m, .grows = g }

static const struct shape shapes[NR_SHAPES] = {
	SHAPE(vfork_flat, M_vfork, false),
	SHAPE(clone_flat, M_clone, false),
	SHAPE(posix_spawn_flat, M_posix_spawn, false),
	SHAPE(fork_grows, M_fork, true),
};

/* The kb_test table: the methods, then the shapes (the KTAP order). */
static struct kb_test tests[NR_TESTS];

static void build_tests(void)
{
	static char desc[NR_METHODS][128];
	size_t i;

	for (i = 0; i < NR_METHODS; i++) {
		snprintf(desc[i], sizeof(desc[i]), "%-22s %s", methods[i].label,
			 methods[i].note);
		tests[i] = (struct kb_test)KB_TEST_ARG(methods[i].name,
						       report_method, (int)i,
						       desc[i]);
	}
	for (i = 0; i < NR_SHAPES; i++)
		tests[NR_METHODS + i] = (struct kb_test)KB_TEST_ARG(
			shapes[i].name, report_shape, (int)i,
			shapes[i].grows ? "shape check: fork's cost grows with the parent"
					: "shape check: cost stays flat with the parent's size");
}

/* ---- parent sizes ---------------------------------------------------- */

/* One "key: value kB" field of /proc/self/status, without using malloc. */
static long status_kib(const char *key)
{
	char buf[4096], pattern[32], *p;

	if (kb_file_read_all("/proc/self/status", buf, sizeof(buf)) <= 0)
		return -1;
	/* The Vm* lines come early, never first ("Name:" is). */
	snprintf(pattern, sizeof(pattern), "\n%s:", key);
	p = strstr(buf, pattern);
	return p ? strtol(p + strlen(pattern), NULL, 10) : -1;
}

/* MemAvailable in bytes (0 when unknown). */
static unsigned long long mem_available(void)
{
	char buf[8192], *p;

	if (kb_file_read_all("/proc/meminfo", buf, sizeof(buf)) <= 0)
		return 0;
	p = strstr(buf, "MemAvailable:");
	return p ? strtoull(p + 13, NULL, 10) * KIB : 0;
}

static void size_label(unsigned long long bytes, char *buf, size_t len)
{
	if (bytes % GIB == 0)
		snprintf(buf, len, "%lluGiB", bytes / GIB);
	else if (bytes % MIB == 0)
		snprintf(buf, len, "%lluMiB", bytes / MIB);
	else if (bytes % KIB == 0)
		snprintf(buf, len, "%lluKiB", bytes / KIB);
	else
		snprintf(buf, len, "%lluB", bytes);
}

static void touch_pages(char *p, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), off;

	for (off = 0; off < len; off += page)
		p[off] = 1;
}

/*
 * Grow the heap with malloc() (the book's way) until VmSize reaches
 * @target_kib. mallopt() in main() makes these blocks come from brk and
 * lets the heap end where the block ends.
 */
static int grow_heap_to(struct pc_ctx *c, long target_kib)
{
	while (c->nheap_blocks < ARRAY_SIZE(c->heap_blocks)) {
		long cur = status_kib("VmSize");
		size_t len;
		void *p;

		if (cur < 0)
			return -EIO;
		if (target_kib - cur < 4)	/* within a page */
			return 0;
		len = (size_t)(target_kib - cur) * KIB - 64;
		p = malloc(len);
		if (!p)
			return -ENOMEM;
		if (!c->o.no_touch)
			touch_pages(p, len);
		c->heap_blocks[c->nheap_blocks++] = p;
	}
	return 0;
}

static void release_heap(struct pc_ctx *c)
{
	while (c->nheap_blocks)
		free(c->heap_blocks[--c->nheap_blocks]);
	malloc_trim(0);
}

static void release_touched(struct pc_ctx *c)
{
	if (c->touched_map)
		munmap(c->touched_map, c->touched_len);
	c->touched_map = NULL;
	c->touched_len = 0;
}

static int map_touched(struct pc_ctx *c, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	touch_pages(p, len);
	c->touched_map = p;
	c->touched_len = len;
	return 0;
}

/* Make the parent the size @s asks for; record what was reached. */
static void set_parent_size(struct pc_ctx *c, struct psize *s)
{
	char what[64];
	int err = 0;

	if (s->kind == SIZE_BOOK) {
		err = grow_heap_to(c, s->target_kib);
	} else {
		release_heap(c);
		release_touched(c);
		s->target_kib = status_kib("VmSize") + (long)(s->bytes / KIB);
		if (s->bytes + MEM_RESERVE > mem_available())
			err = -ENOMEM;
		else
			err = map_touched(c, s->bytes);
	}
	if (err) {
		/* Not straight from s->label into s->skip: -Wrestrict. */
		snprintf(what, sizeof(what), "cannot make the parent %s",
			 s->label);
		snprintf(s->skip, sizeof(s->skip), "%s: %s", what,
			 strerror(-err));
	}
	s->vmsize_kib = status_kib("VmSize");
	s->vmrss_kib = status_kib("VmRSS");
}

static void plan_book_sizes(struct pc_ctx *c)
{
	unsigned int i;

	c->baseline_kib = status_kib("VmSize");
	c->book_from_baseline = c->baseline_kib >
				(long)(book_sizes_mb[0] * 1024 + 4);
	for (i = 0; i < NR_BOOK_SIZES; i++) {
		struct psize *s = &c->sizes[i];
		double mb = book_sizes_mb[i];

		s->kind = SIZE_BOOK;
		s->book_mb = mb;
		snprintf(s->label, sizeof(s->label), "%.2fMB", mb);
		if (c->book_from_baseline)
			s->target_kib = c->baseline_kib +
				(long)((mb - book_sizes_mb[0]) * 1024 + 0.5);
		else
			s->target_kib = (long)(mb * 1024 + 0.5);
	}
}

static void plan_touched_sizes(struct pc_ctx *c)
{
	unsigned int i;

	c->nsizes = NR_BOOK_SIZES;
	for (i = 0; i < c->o.ntouched; i++) {
		struct psize *s = &c->sizes[c->nsizes++];

		s->kind = SIZE_TOUCHED;
		s->bytes = c->o.touched[i];
		size_label(s->bytes, s->label, sizeof(s->label));
		s->target_kib = (long)(s->bytes / KIB) + c->baseline_kib;
	}
}

/* ---- measuring a cell ------------------------------------------------ */

/* The exit status a method's child must report. */
static int want_status(const struct method *m)
{
	return m->helper == NO_HELPER ? CHILD_STATUS : 0;
}

/* Wait for @pid; 0, -errno, or 1 when it did not exit with @want. */
static int reap(struct pc_ctx *c, pid_t pid, int want)
{
	int status;
	pid_t r;

	do
		r = waitpid(pid, &status, 0);
	while (r < 0 && errno == EINTR);
	c->live_child = 0;
	if (r != pid)
		return r < 0 ? -errno : -ECHILD;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != want) {
		c->bad_status = status;
		return 1;
	}
	return 0;
}

static int create_and_reap(struct pc_ctx *c, const struct method *m)
{
	pid_t pid = 0;
	int err = m->create(c, &pid);

	if (err)
		return err;
	c->live_child = pid;
	return reap(c, pid, want_status(m));
}

/* Cleanup: no child of ours outlives the run, not even after SIGTERM. */
static void reap_children(void *arg)
{
	struct pc_ctx *c = arg;
	pid_t pid = c->live_child;

	if (pid > 0)
		kill(pid, SIGKILL);
	while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
		;
}

static double tv_s(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

static double rusage_cpu_s(const struct rusage *ru)
{
	return tv_s(&ru->ru_utime) + tv_s(&ru->ru_stime);
}

/* Fill @buf with what went wrong; KSFT_SKIP or KSFT_FAIL. */
static int describe_error(struct pc_ctx *c, const struct method *m, int err,
			  char *buf, size_t len)
{
	int st = c->bad_status;

	if (err == 1 && WIFEXITED(st)) {
		snprintf(buf, len, "%s: child exited with status %d, want %d%s",
			 m->label, WEXITSTATUS(st), want_status(m),
			 WEXITSTATUS(st) == 127 ? " (exec failed)" : "");
		return KSFT_FAIL;
	}
	if (err == 1) {
		snprintf(buf, len, "%s: child killed by signal %d", m->label,
			 WTERMSIG(st));
		return KSFT_FAIL;
	}
	return kb_errno_result(err, KB_ENV_NO_CAP, m->label, buf, len);
}

static double cap_for(const struct options *o,
		      const struct kb_cli_common *common, const struct psize *s)
{
	if (o->cell_time >= 0)
		return o->cell_time;
	if (!common->full && !o->count_set)
		return DEFAULT_CELL_TIME;
	/* Long runs: the book's sizes run N; a big parent's fork takes ms. */
	return s->kind == SIZE_BOOK ? 0 : FULL_EXTRA_CELL_TIME;
}

/*
 * Untimed creations first: the first ones after a size change fault in
 * the parent's page tables and the allocator's caches. 5% of the cell,
 * between 1 and MAX_WARMUP, and with a cell time at most a fifth of it
 * (a 1 GiB parent's fork takes tens of ms).
 */
static int warm_up(struct pc_ctx *c, const struct method *m, long count,
		   uint64_t cap_ns)
{
	long i, n = count / 20 < 1 ? 1 : count / 20;
	uint64_t start = kb_clock_ns();
	int err = 0;

	if (n > MAX_WARMUP)
		n = MAX_WARMUP;
	for (i = 0; i < n && !err; i++) {
		err = create_and_reap(c, m);
		if (cap_ns && kb_clock_ns() - start >= cap_ns / 5)
			break;
	}
	return err;
}

static void run_cell(struct pc_ctx *c, const struct method *m,
		     struct cell *cell, long count, double cap_s)
{
	long stride = (count + MAX_SAMPLES - 1) / MAX_SAMPLES;
	uint64_t cap_ns = (uint64_t)(cap_s * 1e9);
	struct rusage self0, self1, kids0, kids1;
	uint64_t start, end, t0, t1;
	size_t kept = 0;
	long i;
	int err = warm_up(c, m, count, cap_ns);

	getrusage(RUSAGE_SELF, &self0);
	getrusage(RUSAGE_CHILDREN, &kids0);
	start = kb_clock_ns();
	for (i = 0; i < count && !err; i++) {
		t0 = kb_clock_ns();
		err = create_and_reap(c, m);
		t1 = kb_clock_ns();
		if (i % stride == 0 && kept < MAX_SAMPLES)
			c->samples[kept++] = (double)(t1 - t0) / 1000.0;
		if (cap_ns && t1 - start >= cap_ns) {
			i++;
			break;
		}
	}
	end = kb_clock_ns();
	getrusage(RUSAGE_SELF, &self1);
	getrusage(RUSAGE_CHILDREN, &kids1);
	if (err) {
		cell->state = describe_error(c, m, err, cell->why,
					     sizeof(cell->why)) == KSFT_SKIP ?
			      CELL_SKIP : CELL_FAIL;
		return;
	}
	cell->creations = i;
	cell->elapsed_s = (double)(end - start) / 1e9;
	cell->parent_cpu_s = rusage_cpu_s(&self1) - rusage_cpu_s(&self0);
	cell->children_cpu_s = rusage_cpu_s(&kids1) - rusage_cpu_s(&kids0);
	kb_stats_compute(c->samples, kept, &cell->st);	/* sorts samples[] */
	cell->p10 = kb_stats_percentile(c->samples, kept, 10);
	cell->state = CELL_OK;
}

/* ---- helpers and options ---------------------------------------------- */

/* Find the helpers next to our own executable (where make install puts them). */
static void locate_helpers(struct pc_ctx *c)
{
	/* Room left for "/" and a helper's name in the paths below. */
	char self[PATH_MAX - 64], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0) {
		snprintf(c->helper_why, sizeof(c->helper_why),
			 "cannot read /proc/self/exe: %s", strerror(errno));
		return;
	}
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(c->nolibc_path, sizeof(c->nolibc_path), "%s/%s", self,
		 HELPER_NOLIBC);
	if (!strcmp(c->o.helper, "nolibc"))
		snprintf(c->exec_path, sizeof(c->exec_path), "%s", c->nolibc_path);
	else if (!strcmp(c->o.helper, "libc"))
		snprintf(c->exec_path, sizeof(c->exec_path), "%s/%s", self,
			 HELPER_LIBC);
	else
		snprintf(c->exec_path, sizeof(c->exec_path), "%s", c->o.helper);
}

static const char *helper_missing(struct pc_ctx *c, const struct method *m)
{
	const char *path = m->helper == NOLIBC_HELPER ? c->nolibc_path :
							c->exec_path;

	if (m->helper == NO_HELPER)
		return NULL;
	if (c->helper_why[0])
		return c->helper_why;
	if (access(path, X_OK)) {
		snprintf(c->helper_why, sizeof(c->helper_why),
			 "helper %s not executable: %s (build and install it with the test)",
			 path, strerror(errno));
		return c->helper_why;
	}
	return NULL;
}

/* One size of -m: a touched parent beyond the book's sizes. */
static void add_size(const char *item, void *arg)
{
	unsigned long long avail = mem_available(), b;
	struct options *o = arg;

	b = kb_cli_parse_size(item, "--size", 4096, 1ULL << 50);
	if (o->ntouched + NR_BOOK_SIZES == MAX_SIZES)
		kb_cli_error("too many sizes (at most %d)",
			     MAX_SIZES - (int)NR_BOOK_SIZES);
	if (avail && b + MEM_RESERVE > avail)
		kb_cli_error("invalid value '%s' for --size: beyond the memory available (MemAvailable %llu MiB, %llu MiB kept free)",
			     item, avail / MIB, MEM_RESERVE / MIB);
	o->touched[o->ntouched++] = b;
}

static void parse_sizes(const char *arg, void *ctx)
{
	struct options *o = ctx;

	o->touched_set = true;
	o->ntouched = 0;
	if (strcmp(arg, "none"))
		kb_cli_each_item(arg, "--size", add_size, o);
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return (x > y) - (x < y);
}

static void parse_options(int argc, char **argv, struct pc_ctx *c)
{
	struct options *o = &c->o;
	const struct kb_cli_opt opts[] = {
		KB_OPT_LONG('n', "count", &o->count, 1, MAX_COUNT, "N",
			    "creations per cell (default " KB_CLI_STR(DEFAULT_COUNT)
			    ", " KB_CLI_STR(BOOK_COUNT) " with --full,\n"
			    KB_CLI_STR(SLOW_COUNT) " when KSFT_MACHINE_SLOW=yes)"),
		KB_OPT_CALLBACK('m', "size", parse_sizes, "LIST",
				"parent sizes beyond the book's: memory mapped and\n"
				"touched, comma list with K/M/G suffix (default 1G,\n"
				"256M when KSFT_MACHINE_SLOW=yes); 'none' for none"),
		KB_OPT_SECONDS('T', "cell-time", &o->cell_time, 0, 86400, "S",
			       "stop a cell after S seconds (fractions and the\n"
			       "units us, ms, s allowed) even if N is not reached;\n"
			       "0 = never (default: " KB_CLI_STR(DEFAULT_CELL_TIME)
			       " s when neither -n nor\n"
			       "--full is given; otherwise none for the book's\n"
			       "sizes and " KB_CLI_STR(FULL_EXTRA_CELL_TIME)
			       " s for the -m sizes)"),
		KB_OPT_STRING('x', "helper", &o->helper, "WHAT",
			      "program the *_exec methods run: libc (default,\n"
			      HELPER_LIBC ", dynamically linked),\n"
			      "nolibc (" HELPER_NOLIBC ", static, no C library\n"
			      "start-up) or a path"),
		KB_OPT_FLAG(0, "no-touch", &o->no_touch,
			    "do not touch the book sizes' heap"),
		KB_OPT_FLAG(0, "thp", &o->thp,
			    "leave transparent huge pages on (default: off for\n"
			    "this process, PR_SET_THP_DISABLE)"),
		KB_OPT_END(),
	};
	const struct kb_cli cli = {
		.opts = opts, .ctx = o, .common = KB_CLI_ALL,
		.about = "Measure process creation by method and parent size (TLPI Table 28-3):\n"
			 "create a child, let it exit (or exec a helper that exits), wait, N times\n"
			 "per cell; print KTAP (one result per method, then shape checks), the\n"
			 "book's table as diagnostics, and optionally kbench JSON.\n"
			 "\n"
			 "Parent sizes: the book's 1.70, 2.70 and 11.70 MB of total VmSize (heap\n"
			 "grown with malloc and touched), then the touched sizes of -m.",
		.notes = "--full is the book's run: " KB_CLI_STR(BOOK_COUNT) " creations per cell. -t selects methods and\n"
			 "shape checks; a shape check measures its method.\n"
			 "\n"
			 "Times: CLOCK_MONOTONIC elapsed, getrusage() CPU of the parent (user+sys)\n"
			 "and of the reaped children. Rate = creations / elapsed second. The table\n"
			 "scales every cell to the book's " KB_CLI_STR(BOOK_COUNT) " creations.\n"
			 "Shape checks: first the child's effect on the parent's memory (vfork and\n"
			 "clone children share it, posix_spawn returns after the child's exec,\n"
			 "fork's child writes to a copy), judged everywhere; then the fastest\n"
			 "creation at the smallest size against the largest: vfork, clone and\n"
			 "posix_spawn grow by at most " KB_CLI_STR(FLAT_BOUND) "x (judged when the largest is a\n"
			 "touched parent of >= " KB_CLI_STR(SPAN_MIN_MIB) " MiB or fork grew " KB_CLI_STR(GROW_BOUND)
			 "x over the same span),\n"
			 "fork by at least " KB_CLI_STR(GROW_BOUND) "x (judged from a touched parent of >= "
			 KB_CLI_STR(SPAN_MIN_MIB) " MiB).\n"
			 "Otherwise the timing is not judged (SKIP).\n"
			 "The process and its children run pinned to one CPU unless --no-pin.",
		.tests = tests, .ntests = NR_TESTS,
	};

	o->cell_time = -1.0;
	o->helper = "libc";
	kb_cli_parse(argc, argv, &cli, &c->common);
	o->count_set = o->count > 0;
	if (!o->count_set)
		o->count = kb_cli_pick_count(&c->common, DEFAULT_COUNT, BOOK_COUNT,
					     SLOW_COUNT);
	if (!o->touched_set) {
		o->touched[0] = kb_env_machine_slow() ? SLOW_LARGE : DEFAULT_LARGE;
		o->ntouched = 1;
	}
	qsort(o->touched, o->ntouched, sizeof(o->touched[0]), cmp_ull);
}

/* ---- reporting -------------------------------------------------------- */

static void row_name(const struct pc_ctx *c, char *buf, size_t len,
		     unsigned int m, unsigned int s)
{
	snprintf(buf, len, "%s@%s", methods[m].name, c->sizes[s].label);
}

static void report_cell(struct pc_ctx *c, unsigned int m, unsigned int s)
{
	const struct cell *cell = &c->cells[m][s];
	const struct psize *sz = &c->sizes[s];
	char name[64];

	row_name(c, name, sizeof(name), m, s);
	if (cell->state == CELL_SKIP || cell->state == CELL_FAIL) {
		ksft_print_msg("%s: %s: %s\n", name,
			       cell->state == CELL_SKIP ? "SKIP" : "FAIL",
			       cell->why);
		kb_results_status(name, cell->state == CELL_SKIP ? "skip" : "fail",
				  cell->why);
		return;
	}
	if (cell->state != CELL_OK)
		return;
	kb_results_row(name, "us", &cell->st);
	kb_results_note(methods[m].note);
	kb_results_figure(name,
			  "creations=%ld p10=%.4f elapsed_s=%.4f parent_cpu_s=%.4f children_cpu_s=%.4f rate_per_s=%.0f vmsize_kib=%ld vmrss_kib=%ld",
			  cell->creations, cell->p10, cell->elapsed_s,
			  cell->parent_cpu_s, cell->children_cpu_s,
			  cell->creations / cell->elapsed_s, sz->vmsize_kib,
			  sz->vmrss_kib);
	kb_results_extra_quiet("creations", cell->creations);
	kb_results_extra_quiet("p10", cell->p10);
	kb_results_extra_quiet("elapsed_s", cell->elapsed_s);
	kb_results_extra_quiet("parent_cpu_s", cell->parent_cpu_s);
	kb_results_extra_quiet("children_cpu_s", cell->children_cpu_s);
	kb_results_extra_quiet("rate_per_s", cell->creations / cell->elapsed_s);
	kb_results_extra_quiet("vmsize_kib", sz->vmsize_kib);
	kb_results_extra_quiet("vmrss_kib", sz->vmrss_kib);
}

/*
 * A method's result: FAIL when a cell failed (a wrong wait status, an
 * error the environment does not explain), SKIP when no cell could run,
 * PASS otherwise. Its timings are figures, not judged here.
 */
static int report_method(void *ctx, int m, char *reason, size_t len)
{
	struct pc_ctx *c = ctx;
	const char *why = NULL;
	unsigned int s, ok = 0;

	if (c->unsupported[m]) {
		snprintf(reason, len, "%s", c->unsupported_why[m]);
		return KSFT_SKIP;
	}
	for (s = 0; s < c->nsizes; s++)
		report_cell(c, m, s);
	for (s = 0; s < c->nsizes; s++) {
		const struct cell *cell = &c->cells[m][s];

		if (cell->state == CELL_FAIL) {
			snprintf(reason, len, "%s", cell->why);
			return KSFT_FAIL;
		}
		ok += cell->state == CELL_OK;
		if (!why && cell->state == CELL_SKIP)
			why = cell->why;
	}
	if (ok)
		return KSFT_PASS;
	snprintf(reason, len, "%s", why && *why ? why : "no cell could run");
	return KSFT_SKIP;
}

/* First and last size where the method's cell was measured. */
static bool shape_span(const struct pc_ctx *c, int m, int *small, int *large)
{
	unsigned int s;

	*small = *large = -1;
	for (s = 0; s < c->nsizes; s++) {
		if (c->cells[m][s].state != CELL_OK)
			continue;
		if (*small < 0)
			*small = (int)s;
		*large = (int)s;
	}
	return *small >= 0 && *large > *small;
}

/* fork's own large/small ratio over the same two sizes, or NAN. */
static double fork_ratio(const struct pc_ctx *c, int small, int large)
{
	const struct cell *a = &c->cells[M_fork][small];
	const struct cell *b = &c->cells[M_fork][large];

	if (a->state != CELL_OK || b->state != CELL_OK)
		return NAN;
	return b->st.min / a->st.min;
}

/*
 * Why the span between the two sizes cannot judge the shape, or NULL.
 * fork_grows needs a touched parent of SPAN_MIN_SIZE or more. A flat
 * check needs that, or fork measured over the same span growing by
 * GROW_BOUND at least: only then would a method that copied the parent's
 * memory stand out.
 */
static const char *span_too_small(const struct pc_ctx *c,
				  const struct shape *sh, int small, int large,
				  char *buf, size_t len)
{
	const struct psize *big = &c->sizes[large];
	const struct psize *last = &c->sizes[c->nsizes - 1];
	double fr = fork_ratio(c, small, large);
	char control[96] = "";

	if (big->kind == SIZE_TOUCHED && big->bytes >= SPAN_MIN_SIZE)
		return NULL;
	if (!sh->grows && fr >= GROW_BOUND)
		return NULL;
	if (!sh->grows)
		snprintf(control, sizeof(control),
			 isnan(fr) ? ", and fork was not measured over it" :
			 ", and fork grew only %.2fx over it", fr);
	snprintf(buf, len,
		 "timing not judged: it would compare %s with %s, below %llu MiB touched%s%s%s",
		 c->sizes[small].label, big->label, SPAN_MIN_SIZE / MIB, control,
		 last->skip[0] ? "; " : " (try -m 1G)", last->skip);
	return buf;
}

/*
 * A shape check. First what the method does to the parent's memory, the
 * reason its cost is flat or grows (judged everywhere, also under TCG);
 * then the fastest creation at the smallest size against the largest, a
 * touched parent of at least SPAN_MIN_SIZE: load on a shared machine only
 * ever adds time, and a short cell can fall wholly into a busy moment,
 * which moves its median and even its 10th percentile.
 */
static int report_shape(void *ctx, int id, char *reason, size_t len)
{
	struct pc_ctx *c = ctx;
	const struct shape *sh = &shapes[id];
	enum sharing want = sh->grows ? SHARE_COPIED : SHARE_SHARED;
	double a, b, ratio, bound = sh->grows ? GROW_BOUND : FLAT_BOUND;
	int m = sh->method, small, large;
	char span[320];

	if (c->unsupported[m]) {
		snprintf(reason, len, "%s", c->unsupported_why[m]);
		return KSFT_SKIP;
	}
	if (c->sharing[m] != want) {
		snprintf(reason, len, "%s", c->sharing_why[m]);
		return c->sharing[m] == SHARE_UNKNOWN && !c->sharing_why[m][0] ?
		       KSFT_SKIP : KSFT_FAIL;
	}
	ksft_print_msg("%s: memory: %s\n", sh->name, c->sharing_why[m]);
	if (!shape_span(c, m, &small, &large)) {
		snprintf(reason, len, "%s was measured at fewer than two parent sizes",
			 methods[m].name);
		return KSFT_SKIP;
	}
	a = c->cells[m][small].st.min;
	b = c->cells[m][large].st.min;
	ratio = b / a;
	kb_results_figure(sh->name,
			  "method=%s small=%s large=%s min_us_small=%.2f min_us_large=%.2f ratio=%.3f bound=%s%.2f fork_ratio=%.3f",
			  methods[m].name, c->sizes[small].label, c->sizes[large].label,
			  a, b, ratio, sh->grows ? ">=" : "<=", bound,
			  fork_ratio(c, small, large));
	kb_results_status(sh->name, "ok", NULL);
	kb_results_extra_quiet("min_us_small", a);
	kb_results_extra_quiet("min_us_large", b);
	kb_results_extra_quiet("ratio", ratio);
	kb_results_extra_quiet("bound", bound);
	kb_results_extra_quiet("child_shares_memory", c->sharing[m] == SHARE_SHARED);
	kb_results_extra_quiet("fork_ratio", fork_ratio(c, small, large));
	if (span_too_small(c, sh, small, large, span, sizeof(span))) {
		snprintf(reason, len, "%s; memory check passed", span);
		return KSFT_SKIP;
	}
	if (sh->grows ? ratio >= bound : ratio <= bound)
		return KSFT_PASS;
	if (kb_env_emulated_guest()) {
		snprintf(reason, len,
			 "ratio %.2f outside the bound in an emulated (TCG) guest, whose timings are the emulator's: timing not judged; memory check passed",
			 ratio);
		return KSFT_SKIP;
	}
	snprintf(reason, len,
		 sh->grows ? "%s per creation at %s is only %.2fx its cost at %s (expected >= %.1fx)"
			   : "%s per creation at %s is %.2fx its cost at %s (expected <= %.1fx)",
		 methods[m].name, c->sizes[large].label, ratio,
		 c->sizes[small].label, bound);
	return KSFT_FAIL;
}

/* The book's layout: per size "elapsed (parent CPU) [children CPU] rate". */
static void print_table(const struct pc_ctx *c)
{
	const struct options *o = &c->o;
	const struct psize *first = &c->sizes[0], *last = &c->sizes[c->nsizes - 1];
	char line[1024];
	unsigned int m, s;
	int n;

	ksft_print_msg("Time (secs) for %d creations, elapsed (parent CPU) [children CPU], and rate (creations per elapsed second, %s)\n",
		       BOOK_COUNT, KB_CLOCK_NAME);
	if (o->count != BOOK_COUNT || cap_for(o, &c->common, first) ||
	    cap_for(o, &c->common, last))
		ksft_print_msg("times scaled to %d from the creations made per cell (-n %ld%s)\n",
			       BOOK_COUNT, o->count,
			       cap_for(o, &c->common, last) ?
			       ", fewer where the cell time ran out" : "");
	n = snprintf(line, sizeof(line), "%-22s", "Method / VmSize");
	for (s = 0; s < c->nsizes; s++) {
		const struct psize *sz = &c->sizes[s];
		char head[40];

		if (sz->kind == SIZE_BOOK)
			snprintf(head, sizeof(head), "%.2f MB", sz->vmsize_kib / 1024.0);
		else
			snprintf(head, sizeof(head), "%.2f MB (+%s)",
				 sz->vmsize_kib / 1024.0, sz->label);
		n += snprintf(line + n, sizeof(line) - n, "| %-26s", head);
	}
	ksft_print_msg("%s\n", line);
	for (m = 0; m < NR_METHODS; m++) {
		if (!c->measure[m])
			continue;
		n = snprintf(line, sizeof(line), "%-22s", methods[m].label);
		for (s = 0; s < c->nsizes; s++) {
			const struct cell *cell = &c->cells[m][s];
			double k;

			if (cell->state != CELL_OK) {
				n += snprintf(line + n, sizeof(line) - n,
					      "| %-26s", cell->state == CELL_FAIL ?
					      "FAIL" : "skipped");
				continue;
			}
			k = (double)BOOK_COUNT / cell->creations;
			n += snprintf(line + n, sizeof(line) - n,
				      "|%7.2f (%5.2f) [%6.2f] %6.0f",
				      cell->elapsed_s * k, cell->parent_cpu_s * k,
				      cell->children_cpu_s * k,
				      cell->creations / cell->elapsed_s);
		}
		ksft_print_msg("%s\n", line);
	}
}

/* ---- probing the methods ----------------------------------------------- */

/* A method the environment cannot run: every cell SKIPs with the reason. */
static void probe_method(struct pc_ctx *c, enum method_id id)
{
	const struct method *m = &methods[id];
	const char *missing = helper_missing(c, m);
	char *why = c->unsupported_why[id];
	size_t len = sizeof(c->unsupported_why[id]);
	int err;

	if (missing) {
		c->unsupported[id] = -ENOENT;
		snprintf(why, len, "%s", missing);
		return;
	}
	err = create_and_reap(c, m);
	if (err < 0 && kb_errno_explain(err, KB_ENV_NO_CAP, m->label, why, len))
		c->unsupported[id] = err;
	else
		why[0] = '\0';
}

/*
 * Does the child of @id share our memory? Children store 1 into
 * c->child_wrote: we see it after the reap only if they wrote to our
 * pages rather than to a copy of them.
 */
static void probe_child_write(struct pc_ctx *c, enum method_id id)
{
	const struct method *m = &methods[id];
	char *why = c->sharing_why[id];
	size_t len = sizeof(c->sharing_why[id]);
	int err;

	c->child_wrote = 0;
	err = create_and_reap(c, m);
	if (err) {
		describe_error(c, m, err, why, len);
		return;
	}
	c->sharing[id] = c->child_wrote ? SHARE_SHARED : SHARE_COPIED;
	snprintf(why, len, c->child_wrote ?
		 "the %s child's store is seen by the parent: it shares the parent's memory" :
		 "the %s child's store is not seen by the parent: it writes to a copy",
		 m->label);
}

/*
 * posix_spawn stays flat because glibc creates the child with
 * CLONE_VM | CLONE_VFORK: the parent resumes only once the child has
 * exec'd, and so learns whether the exec worked. Spawning a file that does
 * not exist must therefore fail in posix_spawn itself with ENOENT; a spawn
 * that returns before the exec can only report success and leave a child
 * that exits 127. (Reading the child's comm after the return races with
 * exec: the kernel releases a vfork parent in exec_mmap(), before the new
 * comm is set, which a slow emulated guest shows.)
 */
static void probe_spawn_returns_after_exec(struct pc_ctx *c, enum method_id id)
{
	static char *const missing_argv[] = { "kbench-no-such-helper", NULL };
	char *why = c->sharing_why[id];
	size_t len = sizeof(c->sharing_why[id]);
	pid_t pid = 0;
	int err;

	err = posix_spawn(&pid, "/nonexistent/kbench-no-such-helper", NULL,
			  NULL, missing_argv, empty_env);
	if (err == ENOENT) {
		c->sharing[id] = SHARE_SHARED;
		snprintf(why, len,
			 "posix_spawn of a missing file failed with ENOENT: the parent waits for the child's exec, as with vfork");
		return;
	}
	if (!err) {
		c->live_child = pid;
		reap(c, pid, 127);
	}
	c->sharing[id] = SHARE_COPIED;
	snprintf(why, len,
		 "posix_spawn of a missing file returned %s, not ENOENT: it returns before the child's exec, not the vfork-like spawn that stays flat",
		 err ? strerror(err) : "success");
}

static void probe_sharing(struct pc_ctx *c, enum method_id id)
{
	if (c->unsupported[id])
		return;
	if (id == M_posix_spawn)
		probe_spawn_returns_after_exec(c, id);
	else
		probe_child_write(c, id);
}

static void mark_unsupported(struct pc_ctx *c, unsigned int m)
{
	unsigned int s;

	for (s = 0; s < c->nsizes; s++) {
		c->cells[m][s].state = CELL_SKIP;
		snprintf(c->cells[m][s].why, sizeof(c->cells[m][s].why),
			 "%.230s", c->unsupported_why[m]);
	}
}

/* The methods the selected tests need: their own, and the shapes'. */
static void choose_methods(struct pc_ctx *c)
{
	unsigned int i;

	for (i = 0; i < NR_METHODS; i++)
		c->measure[i] = c->common.selected[i];
	for (i = 0; i < NR_SHAPES; i++)
		if (c->common.selected[NR_METHODS + i])
			c->measure[shapes[i].method] = true;
}

static void run_size(struct pc_ctx *c, unsigned int s)
{
	struct psize *sz = &c->sizes[s];
	unsigned int m;

	set_parent_size(c, sz);
	ksft_print_msg("parent %s: VmSize %ld kB (target %ld kB), VmRSS %ld kB%s%s\n",
		       sz->label, sz->vmsize_kib, sz->target_kib, sz->vmrss_kib,
		       sz->skip[0] ? ": SKIP " : "", sz->skip);
	for (m = 0; m < NR_METHODS; m++) {
		struct cell *cell = &c->cells[m][s];

		if (!c->measure[m] || c->unsupported[m])
			continue;
		if (sz->skip[0]) {
			cell->state = CELL_SKIP;
			snprintf(cell->why, sizeof(cell->why), "%s", sz->skip);
			continue;
		}
		run_cell(c, &methods[m], cell, c->o.count,
			 cap_for(&c->o, &c->common, sz));
		/* Long runs: say how far we are. */
		if (c->o.count >= PROGRESS_COUNT && cell->state == CELL_OK)
			ksft_print_msg("measured %s@%s: %ld creations in %.1f s\n",
				       methods[m].name, sz->label,
				       cell->creations, cell->elapsed_s);
	}
}

static void record_params(struct pc_ctx *c)
{
	char where[160];

	kb_placement_describe(&c->place, where, sizeof(where));
	kb_results_param_num("count", c->o.count);
	kb_results_param_num("cell_time_s", cap_for(&c->o, &c->common, &c->sizes[0]));
	kb_results_param_num("baseline_vmsize_kib", c->baseline_kib);
	kb_results_param_str("exec_helper", c->exec_path);
	kb_results_param_str("touch_book_heap", c->o.no_touch ? "no" : "yes");
	kb_results_param_str("thp", c->o.thp ? "on" : "disabled (PR_SET_THP_DISABLE)");
	ksft_print_msg("%ld creations per cell; exec helper %s; clock %s; placement: %s\n",
		       c->o.count, c->exec_path, KB_CLOCK_NAME, where);
	ksft_print_msg("baseline VmSize %ld kB%s\n", c->baseline_kib,
		       c->book_from_baseline ?
		       ": above 1.70 MB, book sizes are baseline + 0, 1 and 10 MB" : "");
}

int main(int argc, char **argv)
{
	static struct pc_ctx c;
	unsigned int m, s;

	kb_init("proc_create", argc, argv);
	build_tests();
	parse_options(argc, argv, &c);
	locate_helpers(&c);
	kb_cleanup_push(reap_children, &c);

	/* Big malloc()s from the brk heap, the heap ends where they end. */
	mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
	mallopt(M_TOP_PAD, 0);
	if (!c.o.thp)
		prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	/* Children inherit the CPU: no cross-CPU wake-up per creation. */
	kb_placement_setup(&c.place, c.common.no_pin, false);

	ksft_print_header();
	choose_methods(&c);
	for (m = 0; m < NR_METHODS; m++)
		if (c.measure[m])
			probe_method(&c, m);
	for (s = 0; s < NR_SHAPES; s++)
		if (c.measure[shapes[s].method])
			probe_sharing(&c, shapes[s].method);
	plan_book_sizes(&c);
	plan_touched_sizes(&c);
	for (m = 0; m < NR_METHODS; m++)
		if (c.measure[m] && c.unsupported[m])
			mark_unsupported(&c, m);
	record_params(&c);

	for (s = 0; s < c.nsizes; s++)
		run_size(&c, s);
	release_heap(&c);
	release_touched(&c);

	kb_ktap_run_tests(tests, NR_TESTS, c.common.selected, &c);
	print_table(&c);
	kb_ktap_finish(c.common.json);
}
