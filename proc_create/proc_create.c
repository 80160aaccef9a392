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
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
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

#include "kbench_ktap.h"

#define BOOK_COUNT		100000	/* the book's creations per cell */
#define DEFAULT_COUNT		1000
#define SLOW_COUNT		100
#define DEFAULT_CELL_TIME	0.5	/* s, quick run */
#define FULL_EXTRA_CELL_TIME	10.0	/* s, -n/--full, sizes beyond the book's */
#define MAX_SAMPLES		20000	/* timed creations kept per cell */
#define MAX_SIZES		16
#define MAX_COUNT		10000000L
#define PROGRESS_COUNT		10000	/* cells this long print progress */

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
#define GROW_MIN_SIZE		(256 * MIB)

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

static char nolibc_path[PATH_MAX];	/* posix_spawn */
static char exec_path[PATH_MAX];	/* fork_exec, vfork_exec, posix_spawn_exec */
static char helper_why[PATH_MAX + 64];	/* why a helper is missing, or "" */
static char *helper_argv[] = { HELPER_NOLIBC, NULL };
/* An empty environment: the same exec work whoever runs the test. */
static char *empty_env[] = { NULL };

/* ---- creating one child ---------------------------------------------- */

/*
 * The child we are waiting for, for the cleanup handler. vfork-style
 * methods return only once their child has exited or exec'd.
 */
static volatile pid_t live_child;

static int create_fork(pid_t *pid)
{
	*pid = fork();
	if (*pid < 0)
		return -errno;
	if (*pid == 0)
		_exit(0);
	return 0;
}

static int create_vfork(pid_t *pid)
{
	*pid = vfork();
	if (*pid < 0)
		return -errno;
	if (*pid == 0)
		_exit(0);
	return 0;
}

static char clone_stack[64 * 1024] __attribute__((aligned(16)));

static int clone_child(void *arg)
{
	(void)arg;
	return 0;
}

/* clone(CLONE_VM): shares the memory, the parent does not wait for exec. */
static int create_clone(pid_t *pid)
{
	*pid = clone(clone_child, clone_stack + sizeof(clone_stack),
		     CLONE_VM | SIGCHLD, NULL);
	return *pid < 0 ? -errno : 0;
}

static int create_fork_exec(pid_t *pid)
{
	*pid = fork();
	if (*pid < 0)
		return -errno;
	if (*pid == 0) {
		execve(exec_path, helper_argv, empty_env);
		_exit(127);
	}
	return 0;
}

static int create_vfork_exec(pid_t *pid)
{
	*pid = vfork();
	if (*pid < 0)
		return -errno;
	if (*pid == 0) {
		execve(exec_path, helper_argv, empty_env);
		_exit(127);
	}
	return 0;
}

static int spawn(pid_t *pid, const char *path)
{
	int err = posix_spawn(pid, path, NULL, NULL, helper_argv, empty_env);

	return -err;
}

static int create_posix_spawn(pid_t *pid)
{
	return spawn(pid, nolibc_path);
}

static int create_posix_spawn_exec(pid_t *pid)
{
	return spawn(pid, exec_path);
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

#ifdef __x86_64__
/*
 * clone3(CLONE_VM | CLONE_VFORK) without a stack of its own: the child runs
 * on the parent's stack, as after vfork(), so it must not return into C
 * code (that would overwrite the parent's frames). It calls exit(0) in the
 * same asm block, straight after the system call.
 */
static long clone3_vfork_exit0(struct kb_clone_args *args)
{
	long ret;

	asm volatile("syscall\n\t"
		     "test %%rax, %%rax\n\t"
		     "jnz 1f\n\t"
		     "mov %[nr_exit], %%eax\n\t"
		     "xor %%edi, %%edi\n\t"
		     "syscall\n"
		     "1:"
		     : "=a" (ret)
		     : "0" ((long)__NR_clone3), "D" (args),
		       "S" (sizeof(*args)), [nr_exit] "i" (__NR_exit)
		     : "rcx", "r11", "memory");
	return ret;
}

static int create_clone3_vfork(pid_t *pid)
{
	struct kb_clone_args args = {
		.flags = CLONE_VM | CLONE_VFORK,
		.exit_signal = SIGCHLD,
	};
	long ret = clone3_vfork_exit0(&args);

	if (ret < 0)
		return (int)ret;
	*pid = (pid_t)ret;
	return 0;
}
#else
static int create_clone3_vfork(pid_t *pid)
{
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
	int (*create)(pid_t *pid);
	enum helper_use helper;
	bool selected;
	int unsupported;	/* -errno found by the probe, or 0 */
};

#define METHOD(n, l, what, fn, h) \
	{ .name = n, .label = l, .note = what, .create = fn, .helper = h }

static struct method methods[] = {
	METHOD("fork", "fork()", "fork, child _exit(0), waitpid",
	       create_fork, NO_HELPER),
	METHOD("vfork", "vfork()", "vfork, child _exit(0), waitpid",
	       create_vfork, NO_HELPER),
	METHOD("clone", "clone()", "clone(CLONE_VM|SIGCHLD), child returns 0, waitpid",
	       create_clone, NO_HELPER),
	METHOD("fork_exec", "fork() + exec()", "fork, child execve(helper), waitpid",
	       create_fork_exec, EXEC_HELPER),
	METHOD("vfork_exec", "vfork() + exec()", "vfork, child execve(helper), waitpid",
	       create_vfork_exec, EXEC_HELPER),
	METHOD("posix_spawn", "posix_spawn()", "posix_spawn of the nolibc helper, waitpid",
	       create_posix_spawn, NOLIBC_HELPER),
	METHOD("posix_spawn_exec", "posix_spawn() + exec", "posix_spawn of the exec helper, waitpid",
	       create_posix_spawn_exec, EXEC_HELPER),
	METHOD("clone3_vfork", "clone3(VFORK)", "clone3(CLONE_VM|CLONE_VFORK), child exit(0), waitpid",
	       create_clone3_vfork, NO_HELPER),
};

#define NR_METHODS (sizeof(methods) / sizeof(methods[0]))

/* The shape checks: stable KTAP names, the method they look at. */
struct shape {
	const char *name;
	const char *method;
	bool grows;		/* fork: must grow; others: must stay flat */
};

static const struct shape shapes[] = {
	{ "vfork_flat", "vfork", false },
	{ "clone_flat", "clone", false },
	{ "posix_spawn_flat", "posix_spawn", false },
	{ "fork_grows", "fork", true },
};

#define NR_SHAPES (sizeof(shapes) / sizeof(shapes[0]))

/* ---- parent sizes ---------------------------------------------------- */

enum size_kind { SIZE_BOOK, SIZE_TOUCHED };

struct psize {
	enum size_kind kind;
	double book_mb;			/* SIZE_BOOK: total VmSize, MiB */
	unsigned long long bytes;	/* SIZE_TOUCHED: memory added */
	char label[24];			/* "1.70MB", "1GiB" */
	long target_kib;
	long vmsize_kib, vmrss_kib;	/* reached */
	char skip[160];			/* why this size could not be set up */
};

static const double book_sizes_mb[] = { 1.70, 2.70, 11.70 };
#define NR_BOOK_SIZES (sizeof(book_sizes_mb) / sizeof(book_sizes_mb[0]))

static struct psize sizes[MAX_SIZES];
static unsigned int nsizes;

/* One "key: value kB" field of /proc/self/status, without using malloc. */
static long status_kib(const char *key)
{
	char buf[4096], pattern[32], *p;
	ssize_t n;
	int fd;

	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* The Vm* lines come early, never first ("Name:" is). */
	snprintf(pattern, sizeof(pattern), "\n%s:", key);
	p = strstr(buf, pattern);
	return p ? strtol(p + strlen(pattern), NULL, 10) : -1;
}

/* MemAvailable in bytes (0 when unknown). */
static unsigned long long mem_available(void)
{
	char buf[8192], *p;
	ssize_t n;
	int fd;

	fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
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

/* Heap blocks that make up a book size, freed before the touched sizes. */
static void *heap_blocks[16];
static unsigned int nheap_blocks;
static bool touch_heap = true;

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
static int grow_heap_to(long target_kib)
{
	while (nheap_blocks < sizeof(heap_blocks) / sizeof(heap_blocks[0])) {
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
		if (touch_heap)
			touch_pages(p, len);
		heap_blocks[nheap_blocks++] = p;
	}
	return 0;
}

static void release_heap(void)
{
	while (nheap_blocks)
		free(heap_blocks[--nheap_blocks]);
	malloc_trim(0);
}

static void *touched_map;
static size_t touched_len;

static void release_touched(void)
{
	if (touched_map)
		munmap(touched_map, touched_len);
	touched_map = NULL;
	touched_len = 0;
}

static int map_touched(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	touch_pages(p, len);
	touched_map = p;
	touched_len = len;
	return 0;
}

static long baseline_kib;
static bool book_from_baseline;	/* baseline above 1.70 MB: offsets */

/* Make the parent the size @s asks for; record what was reached. */
static void set_parent_size(struct psize *s)
{
	int err = 0;

	if (s->kind == SIZE_BOOK) {
		err = grow_heap_to(s->target_kib);
	} else {
		release_heap();
		release_touched();
		s->target_kib = status_kib("VmSize") + (long)(s->bytes / KIB);
		if (s->bytes + MEM_RESERVE > mem_available())
			err = -ENOMEM;
		else
			err = map_touched(s->bytes);
	}
	if (err)
		snprintf(s->skip, sizeof(s->skip),
			 "cannot make the parent %s: %s", s->label,
			 strerror(-err));
	s->vmsize_kib = status_kib("VmSize");
	s->vmrss_kib = status_kib("VmRSS");
}

static void plan_book_sizes(void)
{
	unsigned int i;

	baseline_kib = status_kib("VmSize");
	book_from_baseline = baseline_kib > (long)(book_sizes_mb[0] * 1024 + 4);
	for (i = 0; i < NR_BOOK_SIZES; i++) {
		struct psize *s = &sizes[i];
		double mb = book_sizes_mb[i];

		s->kind = SIZE_BOOK;
		s->book_mb = mb;
		snprintf(s->label, sizeof(s->label), "%.2fMB", mb);
		if (book_from_baseline)
			s->target_kib = baseline_kib +
				(long)((mb - book_sizes_mb[0]) * 1024 + 0.5);
		else
			s->target_kib = (long)(mb * 1024 + 0.5);
	}
}

/* ---- measuring a cell ------------------------------------------------ */

struct cell {
	enum { CELL_NONE, CELL_OK, CELL_SKIP, CELL_FAIL } state;
	char why[200];
	long creations;
	double elapsed_s;
	double parent_cpu_s;
	double children_cpu_s;
	struct kb_stats st;		/* per creation, us */
	double p10;			/* 10th percentile per creation, us */
};

static struct cell cells[NR_METHODS][MAX_SIZES];
static double samples[MAX_SAMPLES];
static int bad_status;			/* the wrong wait status seen */

/* Wait for @pid; 0, -errno, or 1 when it did not exit with status 0. */
static int reap(pid_t pid)
{
	int status;
	pid_t r;

	do
		r = waitpid(pid, &status, 0);
	while (r < 0 && errno == EINTR);
	live_child = 0;
	if (r != pid)
		return -errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		bad_status = status;
		return 1;
	}
	return 0;
}

static int create_and_reap(const struct method *m)
{
	pid_t pid = 0;
	int err = m->create(&pid);

	if (err)
		return err;
	live_child = pid;
	return reap(pid);
}

/* Cleanup: no child of ours outlives the run, not even after SIGTERM. */
static void reap_children(void *arg)
{
	pid_t pid = live_child;

	(void)arg;
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

static void describe_error(const struct method *m, int err, char *buf,
			   size_t len)
{
	if (err == 1 && WIFEXITED(bad_status))
		snprintf(buf, len, "%s: child exited with status %d%s", m->label,
			 WEXITSTATUS(bad_status),
			 WEXITSTATUS(bad_status) == 127 ? " (exec failed)" : "");
	else if (err == 1)
		snprintf(buf, len, "%s: child killed by signal %d", m->label,
			 WTERMSIG(bad_status));
	else
		snprintf(buf, len, "%s failed: %s", m->label, strerror(-err));
}

/* Out of processes or memory: the environment, not the kernel, says no. */
static bool err_is_environment(int err)
{
	return err == -EAGAIN || err == -ENOMEM || err == -EPERM ||
	       err == -ENOSYS;
}

static void run_cell(const struct method *m, struct cell *c, long count,
		     double cap_s)
{
	long warmup = count / 50 < 1 ? 1 : count / 50 > 10 ? 10 : count / 50;
	long stride = (count + MAX_SAMPLES - 1) / MAX_SAMPLES;
	uint64_t cap_ns = (uint64_t)(cap_s * 1e9);
	struct rusage self0, self1, kids0, kids1;
	uint64_t start, end, t0, t1;
	size_t kept = 0;
	long i;
	int err = 0;

	for (i = 0; i < warmup && !err; i++)
		err = create_and_reap(m);
	getrusage(RUSAGE_SELF, &self0);
	getrusage(RUSAGE_CHILDREN, &kids0);
	start = kb_now_ns();
	for (i = 0; i < count && !err; i++) {
		t0 = kb_now_ns();
		err = create_and_reap(m);
		t1 = kb_now_ns();
		if (i % stride == 0 && kept < MAX_SAMPLES)
			samples[kept++] = (double)(t1 - t0) / 1000.0;
		if (cap_ns && t1 - start >= cap_ns) {
			i++;
			break;
		}
	}
	end = kb_now_ns();
	getrusage(RUSAGE_SELF, &self1);
	getrusage(RUSAGE_CHILDREN, &kids1);
	if (err) {
		describe_error(m, err, c->why, sizeof(c->why));
		c->state = err != 1 && err_is_environment(err) ? CELL_SKIP :
								 CELL_FAIL;
		return;
	}
	c->creations = i;
	c->elapsed_s = (double)(end - start) / 1e9;
	c->parent_cpu_s = rusage_cpu_s(&self1) - rusage_cpu_s(&self0);
	c->children_cpu_s = rusage_cpu_s(&kids1) - rusage_cpu_s(&kids0);
	kb_stats_compute(samples, kept, &c->st);	/* sorts samples[] */
	c->p10 = kb_percentile(samples, kept, 10);
	c->state = CELL_OK;
}

/* ---- options ---------------------------------------------------------- */

struct options {
	long count;
	bool count_set;
	bool full;
	bool thp;
	double cell_time;	/* s, < 0: default */
	const char *helper;	/* "libc", "nolibc" or a path */
	const char *json;
	unsigned long long touched[MAX_SIZES];
	unsigned int ntouched;
	bool touched_set;
};

static double cap_for(const struct options *o, const struct psize *s)
{
	if (o->cell_time >= 0)
		return o->cell_time;
	if (!o->full && !o->count_set)
		return DEFAULT_CELL_TIME;
	/* Long runs: the book's sizes run N; a big parent's fork takes ms. */
	return s->kind == SIZE_BOOK ? 0 : FULL_EXTRA_CELL_TIME;
}

/* Find the helpers next to our own executable (where make install puts them). */
static void locate_helpers(const struct options *o)
{
	/* Room left for "/" and a helper's name in the paths below. */
	char self[PATH_MAX - 64], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0) {
		snprintf(helper_why, sizeof(helper_why),
			 "cannot read /proc/self/exe: %s", strerror(errno));
		return;
	}
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(nolibc_path, sizeof(nolibc_path), "%s/%s", self, HELPER_NOLIBC);
	if (!strcmp(o->helper, "nolibc"))
		snprintf(exec_path, sizeof(exec_path), "%s", nolibc_path);
	else if (!strcmp(o->helper, "libc"))
		snprintf(exec_path, sizeof(exec_path), "%s/%s", self, HELPER_LIBC);
	else
		snprintf(exec_path, sizeof(exec_path), "%s", o->helper);
}

static const char *helper_missing(const struct method *m)
{
	const char *path = m->helper == NOLIBC_HELPER ? nolibc_path : exec_path;

	if (m->helper == NO_HELPER)
		return NULL;
	if (helper_why[0])
		return helper_why;
	if (access(path, X_OK)) {
		snprintf(helper_why, sizeof(helper_why),
			 "helper %s not executable: %s (build and install it with the test)",
			 path, strerror(errno));
		return helper_why;
	}
	return NULL;
}

static void usage(FILE *f)
{
	unsigned int i;

	fprintf(f,
"Usage: %s [OPTION]...\n"
"Measure process creation by method and parent size (TLPI Table 28-3):\n"
"create a child, let it exit (or exec a helper that exits), wait, N times\n"
"per cell; print KTAP (one result per method, then shape checks), the\n"
"book's table as diagnostics, and optionally kbench JSON.\n"
"\n"
"Parent sizes: the book's 1.70, 2.70 and 11.70 MB of total VmSize (heap\n"
"grown with malloc and touched), then the touched sizes of -m.\n"
"\n"
"  -n, --count=N        creations per cell (default %d, %d with --full,\n"
"                       %d when KSFT_MACHINE_SLOW=yes)\n"
"  -m, --size=LIST      parent sizes beyond the book's: memory mapped and\n"
"                       touched, comma list with K/M/G suffix (default %s,\n"
"                       %s when KSFT_MACHINE_SLOW=yes); 'none' for none\n"
"  -T, --cell-time=S    stop a cell after S seconds (fractions allowed)\n"
"                       even if N is not reached; 0 = never (default:\n"
"                       %.1f s when neither -n nor --full is given;\n"
"                       otherwise none for the book's sizes and %.0f s\n"
"                       for the -m sizes)\n"
"  -t, --test=LIST      methods to run (comma list; see --list)\n"
"  -x, --helper=WHAT    program the *_exec methods run: libc (default,\n"
"                       %s, dynamically linked), nolibc (%s,\n"
"                       static, no C library start-up) or a path\n"
"      --no-touch       do not touch the book sizes' heap\n"
"      --thp            leave transparent huge pages on (default: off for\n"
"                       this process, PR_SET_THP_DISABLE)\n"
"  -l, --list           list the methods and exit\n"
"      --full           the book's run: %d creations per cell\n"
"      --json=FILE      write the results as kbench JSON to FILE\n"
"  -h, --help           this help\n"
"\n"
"Times: CLOCK_MONOTONIC elapsed, getrusage() CPU of the parent (user+sys)\n"
"and of the reaped children. Rate = creations / elapsed second. The table\n"
"scales every cell to the book's %d creations.\n"
"Shape checks (fastest creation of a cell, smallest vs largest size):\n"
"vfork, clone and posix_spawn grow by at most %.0f%%; fork at a parent of\n"
">= %llu MiB costs at least %.0fx fork at the smallest size.\n"
"Exit status: 0 pass, 1 a test failed, 2 bad usage, 4 everything skipped.\n",
		kb_prog(), DEFAULT_COUNT, BOOK_COUNT, SLOW_COUNT, "1G", "256M",
		DEFAULT_CELL_TIME, FULL_EXTRA_CELL_TIME, HELPER_LIBC,
		HELPER_NOLIBC, BOOK_COUNT, BOOK_COUNT,
		(FLAT_BOUND - 1) * 100, GROW_MIN_SIZE / MIB, GROW_BOUND);
	fprintf(f, "\nMethods:");
	for (i = 0; i < NR_METHODS; i++)
		fprintf(f, " %s", methods[i].name);
	fprintf(f, "\nShape checks:");
	for (i = 0; i < NR_SHAPES; i++)
		fprintf(f, " %s", shapes[i].name);
	fprintf(f, "\n");
}

static bool select_method(const char *name)
{
	unsigned int i;

	for (i = 0; i < NR_METHODS; i++)
		if (!strcmp(methods[i].name, name))
			return methods[i].selected = true;
	return false;
}

static void parse_sizes(char *list, struct options *o)
{
	unsigned long long avail = mem_available();
	char *save, *tok;

	o->touched_set = true;
	o->ntouched = 0;
	if (!strcmp(list, "none"))
		return;
	if (!*list || list[strlen(list) - 1] == ',' || strstr(list, ",,") ||
	    *list == ',')
		kb_usage_error("invalid value '%s' for --size: empty size in the list",
			       list);
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		unsigned long long b = kb_parse_size(tok, "--size", 4096,
						     1ULL << 50);

		if (o->ntouched + NR_BOOK_SIZES == MAX_SIZES)
			kb_usage_error("too many sizes (at most %d)",
				       MAX_SIZES - (int)NR_BOOK_SIZES);
		if (avail && b + MEM_RESERVE > avail)
			kb_usage_error("invalid value '%s' for --size: beyond the memory available (MemAvailable %llu MiB, %llu MiB kept free)",
				       tok, avail / MIB, MEM_RESERVE / MIB);
		o->touched[o->ntouched++] = b;
	}
}

/* Seconds, with a fraction: 0 .. 1 day. */
static double parse_seconds(const char *s, const char *what)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !(v >= 0 && v <= 86400))
		kb_usage_error("invalid value '%s' for %s: not a number of seconds between 0 and 86400",
			       s, what);
	return v;
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return (x > y) - (x < y);
}

static void parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_FULL = 256, OPT_JSON, OPT_NO_TOUCH, OPT_THP };
	static const struct option longopts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 'm' },
		{ "cell-time", required_argument, NULL, 'T' },
		{ "test", required_argument, NULL, 't' },
		{ "helper", required_argument, NULL, 'x' },
		{ "no-touch", no_argument, NULL, OPT_NO_TOUCH },
		{ "thp", no_argument, NULL, OPT_THP },
		{ "list", no_argument, NULL, 'l' },
		{ "full", no_argument, NULL, OPT_FULL },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool any_selected = false;
	unsigned int i;
	int c;

	o->cell_time = -1.0;
	o->helper = "libc";
	while ((c = getopt_long(argc, argv, "n:m:T:t:x:lh", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			o->count = kb_parse_ll(optarg, "--count", 1, MAX_COUNT);
			o->count_set = true;
			break;
		case 'm':
			parse_sizes(optarg, o);
			break;
		case 'T':
			o->cell_time = parse_seconds(optarg, "--cell-time");
			break;
		case 't':
			kb_select_names(optarg, "method", select_method);
			any_selected = true;
			break;
		case 'x':
			if (!*optarg)
				kb_usage_error("invalid value '' for --helper");
			o->helper = optarg;
			break;
		case OPT_NO_TOUCH:
			touch_heap = false;
			break;
		case OPT_THP:
			o->thp = true;
			break;
		case 'l':
			for (i = 0; i < NR_METHODS; i++)
				printf("%-17s %-22s %s\n", methods[i].name,
				       methods[i].label, methods[i].note);
			exit(0);
		case OPT_FULL:
			o->full = true;
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
	if (!o->count_set)
		o->count = o->full ? BOOK_COUNT :
			   kb_machine_slow() ? SLOW_COUNT : DEFAULT_COUNT;
	if (!o->touched_set) {
		o->touched[0] = kb_machine_slow() ? SLOW_LARGE : DEFAULT_LARGE;
		o->ntouched = 1;
	}
	qsort(o->touched, o->ntouched, sizeof(o->touched[0]), cmp_ull);
	if (!any_selected)
		for (i = 0; i < NR_METHODS; i++)
			methods[i].selected = true;
}

static void plan_touched_sizes(const struct options *o)
{
	unsigned int i;

	nsizes = NR_BOOK_SIZES;
	for (i = 0; i < o->ntouched; i++) {
		struct psize *s = &sizes[nsizes++];

		s->kind = SIZE_TOUCHED;
		s->bytes = o->touched[i];
		size_label(s->bytes, s->label, sizeof(s->label));
		s->target_kib = (long)(s->bytes / KIB) + baseline_kib;
	}
}

/* ---- reporting -------------------------------------------------------- */

static void row_name(char *buf, size_t len, unsigned int m, unsigned int s)
{
	snprintf(buf, len, "%s@%s", methods[m].name, sizes[s].label);
}

static void report_cell(unsigned int m, unsigned int s)
{
	const struct cell *c = &cells[m][s];
	char name[64];

	row_name(name, sizeof(name), m, s);
	if (c->state == CELL_SKIP || c->state == CELL_FAIL) {
		ksft_print_msg("%s: %s: %s\n", name,
			       c->state == CELL_SKIP ? "SKIP" : "FAIL", c->why);
		kb_row_status(name, c->state == CELL_SKIP ? "skip" : "fail",
			      c->why);
		return;
	}
	if (c->state != CELL_OK)
		return;
	kb_row_add(name, "us", &c->st);
	kb_row_note(methods[m].note);
	kb_figure(name,
		  "creations=%ld p10=%.4f elapsed_s=%.4f parent_cpu_s=%.4f children_cpu_s=%.4f rate_per_s=%.0f vmsize_kib=%ld vmrss_kib=%ld",
		  c->creations, c->p10, c->elapsed_s, c->parent_cpu_s,
		  c->children_cpu_s, c->creations / c->elapsed_s,
		  sizes[s].vmsize_kib, sizes[s].vmrss_kib);
	kb_row_extra_quiet("creations", c->creations);
	kb_row_extra_quiet("p10", c->p10);
	kb_row_extra_quiet("elapsed_s", c->elapsed_s);
	kb_row_extra_quiet("parent_cpu_s", c->parent_cpu_s);
	kb_row_extra_quiet("children_cpu_s", c->children_cpu_s);
	kb_row_extra_quiet("rate_per_s", c->creations / c->elapsed_s);
	kb_row_extra_quiet("vmsize_kib", sizes[s].vmsize_kib);
	kb_row_extra_quiet("vmrss_kib", sizes[s].vmrss_kib);
}

static void report_method(unsigned int m)
{
	const struct method *me = &methods[m];
	unsigned int s, ok = 0, failed = 0;
	const char *why = NULL;

	for (s = 0; s < nsizes; s++) {
		report_cell(m, s);
		if (cells[m][s].state == CELL_OK)
			ok++;
		else if (cells[m][s].state == CELL_FAIL && !failed++)
			why = cells[m][s].why;
		else if (!why)
			why = cells[m][s].why[0] ? cells[m][s].why : sizes[s].skip;
	}
	if (failed)
		kb_fail(me->name, why);
	else if (!ok)
		kb_skip(me->name, why && *why ? why : "no cell could run");
	else
		kb_pass(me->name);
}

static int method_index(const char *name)
{
	unsigned int i;

	for (i = 0; i < NR_METHODS; i++)
		if (!strcmp(methods[i].name, name))
			return (int)i;
	return -1;
}

/* First and last size where the method's cell was measured. */
static bool shape_span(int m, int *small, int *large)
{
	unsigned int s;

	*small = *large = -1;
	for (s = 0; s < nsizes; s++) {
		if (cells[m][s].state != CELL_OK)
			continue;
		if (*small < 0)
			*small = (int)s;
		*large = (int)s;
	}
	return *small >= 0 && *large > *small;
}

/*
 * Compare the fastest creation of the two cells: load on a shared machine
 * only ever adds time, and a short cell can fall wholly into a busy
 * moment, which moves its median and even its 10th percentile.
 */
static void report_shape(const struct shape *sh)
{
	int m = method_index(sh->method), small, large;
	double a, b, ratio;
	char why[256];

	if (!methods[m].selected) {
		snprintf(why, sizeof(why), "method %s not selected", sh->method);
		kb_skip(sh->name, why);
		return;
	}
	if (!shape_span(m, &small, &large)) {
		snprintf(why, sizeof(why), "%s was measured at fewer than two parent sizes",
			 sh->method);
		kb_skip(sh->name, why);
		return;
	}
	if (sh->grows && (sizes[large].kind != SIZE_TOUCHED ||
			  sizes[large].bytes < GROW_MIN_SIZE)) {
		const struct psize *last = &sizes[nsizes - 1];

		if (last->skip[0] && last->kind == SIZE_TOUCHED &&
		    last->bytes >= GROW_MIN_SIZE)
			snprintf(why, sizeof(why), "%s", last->skip);
		else
			snprintf(why, sizeof(why),
				 "largest parent measured is %s, below %llu MiB touched (try -m 1G)",
				 sizes[large].label, GROW_MIN_SIZE / MIB);
		kb_skip(sh->name, why);
		return;
	}
	a = cells[m][small].st.min;
	b = cells[m][large].st.min;
	ratio = b / a;
	kb_figure(sh->name,
		  "method=%s small=%s large=%s min_us_small=%.2f min_us_large=%.2f ratio=%.3f bound=%s%.2f",
		  sh->method, sizes[small].label, sizes[large].label, a, b,
		  ratio, sh->grows ? ">=" : "<=",
		  sh->grows ? GROW_BOUND : FLAT_BOUND);
	kb_row_status(sh->name, "ok", NULL);
	kb_row_extra_quiet("min_us_small", a);
	kb_row_extra_quiet("min_us_large", b);
	kb_row_extra_quiet("ratio", ratio);
	kb_row_extra_quiet("bound", sh->grows ? GROW_BOUND : FLAT_BOUND);
	if (sh->grows ? ratio >= GROW_BOUND : ratio <= FLAT_BOUND) {
		kb_pass(sh->name);
		return;
	}
	if (kb_emulated_guest()) {
		kb_skip(sh->name, "outside the bound in an emulated (TCG) guest, whose timings are the emulator's: not judged");
		return;
	}
	snprintf(why, sizeof(why),
		 sh->grows ? "%s per creation at %s is only %.2fx its cost at %s (expected >= %.1fx)"
			   : "%s per creation at %s is %.2fx its cost at %s (expected <= %.1fx)",
		 sh->method, sizes[large].label, ratio, sizes[small].label,
		 sh->grows ? GROW_BOUND : FLAT_BOUND);
	kb_fail(sh->name, why);
}

/* The book's layout: per size "elapsed (parent CPU) [children CPU] rate". */
static void print_table(const struct options *o)
{
	char line[1024];
	unsigned int m, s;
	int n;

	ksft_print_msg("Time (secs) for %d creations, elapsed (parent CPU) [children CPU], and rate (creations per elapsed second, %s)\n",
		       BOOK_COUNT, KB_CLOCK_NAME);
	if (o->count != BOOK_COUNT || cap_for(o, &sizes[0]) ||
	    cap_for(o, &sizes[nsizes - 1]))
		ksft_print_msg("times scaled to %d from the creations made per cell (-n %ld%s)\n",
			       BOOK_COUNT, o->count,
			       cap_for(o, &sizes[nsizes - 1]) ?
			       ", fewer where the cell time ran out" : "");
	n = snprintf(line, sizeof(line), "%-22s", "Method / VmSize");
	for (s = 0; s < nsizes; s++) {
		char head[40];

		if (sizes[s].kind == SIZE_BOOK)
			snprintf(head, sizeof(head), "%.2f MB", sizes[s].vmsize_kib / 1024.0);
		else
			snprintf(head, sizeof(head), "%.2f MB (+%s)",
				 sizes[s].vmsize_kib / 1024.0, sizes[s].label);
		n += snprintf(line + n, sizeof(line) - n, "| %-26s", head);
	}
	ksft_print_msg("%s\n", line);
	for (m = 0; m < NR_METHODS; m++) {
		if (!methods[m].selected)
			continue;
		n = snprintf(line, sizeof(line), "%-22s", methods[m].label);
		for (s = 0; s < nsizes; s++) {
			const struct cell *c = &cells[m][s];
			double k;

			if (c->state != CELL_OK) {
				n += snprintf(line + n, sizeof(line) - n,
					      "| %-26s", c->state == CELL_FAIL ?
					      "FAIL" : "skipped");
				continue;
			}
			k = (double)BOOK_COUNT / c->creations;
			n += snprintf(line + n, sizeof(line) - n,
				      "|%7.2f (%5.2f) [%6.2f] %6.0f",
				      c->elapsed_s * k, c->parent_cpu_s * k,
				      c->children_cpu_s * k,
				      c->creations / c->elapsed_s);
		}
		ksft_print_msg("%s\n", line);
	}
}

/* ---- main ------------------------------------------------------------ */

static void probe_method(struct method *m)
{
	const char *missing = helper_missing(m);
	int err;

	if (missing) {
		m->unsupported = -ENOENT;
		return;
	}
	err = create_and_reap(m);
	if (err < 0 && (err == -ENOSYS || err == -EOPNOTSUPP))
		m->unsupported = err;
}

static void mark_unsupported(unsigned int m)
{
	const struct method *me = &methods[m];
	unsigned int s;

	for (s = 0; s < nsizes; s++) {
		struct cell *c = &cells[m][s];

		c->state = CELL_SKIP;
		if (me->unsupported == -ENOENT)
			snprintf(c->why, sizeof(c->why), "%s", helper_missing(me));
		else if (me->unsupported == -ENOSYS)
			snprintf(c->why, sizeof(c->why),
				 "%s: not supported by this kernel (ENOSYS)", me->label);
		else
			snprintf(c->why, sizeof(c->why),
				 "%s: not implemented for this architecture", me->label);
	}
}

static void run_size(unsigned int s, const struct options *o)
{
	struct psize *sz = &sizes[s];
	unsigned int m;

	set_parent_size(sz);
	ksft_print_msg("parent %s: VmSize %ld kB (target %ld kB), VmRSS %ld kB%s%s\n",
		       sz->label, sz->vmsize_kib, sz->target_kib, sz->vmrss_kib,
		       sz->skip[0] ? ": SKIP " : "", sz->skip);
	for (m = 0; m < NR_METHODS; m++) {
		struct cell *c = &cells[m][s];

		if (!methods[m].selected || methods[m].unsupported)
			continue;
		if (sz->skip[0]) {
			c->state = CELL_SKIP;
			snprintf(c->why, sizeof(c->why), "%s", sz->skip);
			continue;
		}
		run_cell(&methods[m], c, o->count, cap_for(o, sz));
		/* Long runs: say how far we are. */
		if (o->count >= PROGRESS_COUNT && c->state == CELL_OK)
			ksft_print_msg("measured %s@%s: %ld creations in %.1f s\n",
				       methods[m].name, sz->label, c->creations,
				       c->elapsed_s);
	}
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	unsigned int m, s, planned = 0;

	kb_init("proc_create", argc, argv);
	parse_options(argc, argv, &o);
	locate_helpers(&o);
	kb_cleanup_push(reap_children, NULL);

	/* Big malloc()s from the brk heap, the heap ends where they end. */
	mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
	mallopt(M_TOP_PAD, 0);
	if (!o.thp)
		prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	memset(samples, 0, sizeof(samples));

	for (m = 0; m < NR_METHODS; m++)
		planned += methods[m].selected;
	planned += NR_SHAPES;
	ksft_print_header();
	ksft_set_plan(planned);

	for (m = 0; m < NR_METHODS; m++)
		if (methods[m].selected)
			probe_method(&methods[m]);
	plan_book_sizes();
	plan_touched_sizes(&o);
	for (m = 0; m < NR_METHODS; m++)
		if (methods[m].selected && methods[m].unsupported)
			mark_unsupported(m);

	kb_param_num("count", o.count);
	kb_param_num("cell_time_s", cap_for(&o, &sizes[0]));
	kb_param_num("baseline_vmsize_kib", baseline_kib);
	kb_param_str("exec_helper", exec_path);
	kb_param_str("touch_book_heap", touch_heap ? "yes" : "no");
	kb_param_str("thp", o.thp ? "on" : "disabled (PR_SET_THP_DISABLE)");
	ksft_print_msg("%ld creations per cell; exec helper %s; clock %s\n",
		       o.count, exec_path, KB_CLOCK_NAME);
	ksft_print_msg("baseline VmSize %ld kB%s\n", baseline_kib,
		       book_from_baseline ?
		       ": above 1.70 MB, book sizes are baseline + 0, 1 and 10 MB" : "");

	for (s = 0; s < nsizes; s++)
		run_size(s, &o);
	release_heap();
	release_touched();

	for (m = 0; m < NR_METHODS; m++)
		if (methods[m].selected)
			report_method(m);
	for (s = 0; s < NR_SHAPES; s++)
		report_shape(&shapes[s]);
	print_table(&o);
	kb_finish(o.json);
}
