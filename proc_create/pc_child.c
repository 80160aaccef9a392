// SPDX-License-Identifier: GPL-2.0
/*
 * proc_create: one child per method: created, waited for and its exit
 * status checked; the helper programs the exec methods run; the probes of
 * what a method's child does to the parent's memory.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc_create.h"

static char *helper_argv[] = { HELPER_NOLIBC, NULL };
/* An empty environment: the same exec work whoever runs the test. */
static char *empty_env[] = { NULL };

/* ---- creating one child ---------------------------------------------- */

/*
 * Children that run no helper store 1 into c->child_wrote and exit with
 * CHILD_STATUS: one store, so that the probe can tell a child that shares
 * our memory (vfork, clone(CLONE_VM)) from one that has a copy (fork).
 * The others exec the helper. A vfork child must not return from the
 * function that called vfork(): it runs only here, then exits or execs.
 */
static int fork_child(struct pc_ctx *c, pid_t *pid, bool use_vfork,
		      bool exec_helper)
{
	*pid = use_vfork ? vfork() : fork();
	if (*pid < 0)
		return -errno;
	if (*pid == 0) {
		if (exec_helper) {
			execve(c->exec_path, helper_argv, empty_env);
			_exit(127);
		}
		c->child_wrote = 1;
		_exit(CHILD_STATUS);
	}
	return 0;
}

static int create_fork(struct pc_ctx *c, pid_t *pid)
{
	return fork_child(c, pid, false, false);
}

static int create_vfork(struct pc_ctx *c, pid_t *pid)
{
	return fork_child(c, pid, true, false);
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
	return fork_child(c, pid, false, true);
}

static int create_vfork_exec(struct pc_ctx *c, pid_t *pid)
{
	return fork_child(c, pid, true, true);
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

#if defined(__x86_64__) || defined(__i386__)

/*
 * One asm block for both widths, as the kernel's _ASM_* macros do: the
 * system call's instruction, registers (the arguments' as constraints) and
 * clobbers. syscall takes its arguments in rdi, rsi and overwrites rcx and
 * r11; int $0x80 takes them in ebx, ecx and leaves every register but eax
 * alone.
 */
#ifdef __x86_64__
#define KB_SYSCALL		"syscall"
#define KB_RET_REG		"%%rax"
#define KB_WROTE_REG		"%%rdx"
#define KB_EXIT_ARG_REG		"%%edi"
#define KB_ARG0(v)		"D" (v)
#define KB_ARG1(v)		"S" (v)
#define KB_SYSCALL_CLOBBERS	"rcx", "r11", "memory"
#else
#define KB_SYSCALL		"int $0x80"
#define KB_RET_REG		"%%eax"
#define KB_WROTE_REG		"%%edx"
#define KB_EXIT_ARG_REG		"%%ebx"
#define KB_ARG0(v)		"b" (v)
#define KB_ARG1(v)		"c" (v)
#define KB_SYSCALL_CLOBBERS	"memory"
#endif

/*
 * clone3(CLONE_VM | CLONE_VFORK) without a stack of its own: the child runs
 * on the parent's stack, as after vfork(), so it must not return into C
 * code (that would overwrite the parent's frames). In the same asm block,
 * straight after the system call, it stores 1 to *@wrote (edx/rdx survives
 * the system call) and calls exit(CHILD_STATUS).
 */
static long clone3_vfork_exit(struct kb_clone_args *args, volatile int *wrote)
{
	long ret;

	asm volatile(KB_SYSCALL "\n\t"
		     "test " KB_RET_REG ", " KB_RET_REG "\n\t"
		     "jnz 1f\n\t"
		     "movl $1, (" KB_WROTE_REG ")\n\t"
		     "mov %[nr_exit], %%eax\n\t"
		     "mov %[status], " KB_EXIT_ARG_REG "\n\t"
		     KB_SYSCALL "\n"
		     "1:"
		     : "=a" (ret)
		     : "0" ((long)__NR_clone3), KB_ARG0(args),
		       KB_ARG1(sizeof(*args)), "d" (wrote),
		       [nr_exit] "i" (__NR_exit), [status] "i" (CHILD_STATUS)
		     : KB_SYSCALL_CLOBBERS);
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

/* Every method's child is reaped with waitpid (create_and_reap). */
#define METHOD(id, l, what, h) \
	[M_##id] = { .name = #id, .label = l, .note = what ", waitpid", \
		     .create = create_##id, .helper = h }

const struct method methods[NR_METHODS] = {
	METHOD(fork, "fork()", "fork, child _exit(42)", NO_HELPER),
	METHOD(vfork, "vfork()", "vfork, child _exit(42)", NO_HELPER),
	METHOD(clone, "clone()", "clone(CLONE_VM|SIGCHLD), child returns 42", NO_HELPER),
	METHOD(fork_exec, "fork() + exec()", "fork, child execve(helper)", EXEC_HELPER),
	METHOD(vfork_exec, "vfork() + exec()", "vfork, child execve(helper)", EXEC_HELPER),
	METHOD(posix_spawn, "posix_spawn()", "posix_spawn of the nolibc helper", NOLIBC_HELPER),
	METHOD(posix_spawn_exec, "posix_spawn() + exec", "posix_spawn of the exec helper",
	       EXEC_HELPER),
	METHOD(clone3_vfork, "clone3(VFORK)", "clone3(CLONE_VM|CLONE_VFORK), child exit(42)",
	       NO_HELPER),
};

/* ---- waiting for a child ---------------------------------------------- */

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

int create_and_reap(struct pc_ctx *c, const struct method *m)
{
	pid_t pid = 0;
	int err = m->create(c, &pid);

	if (err)
		return err;
	c->live_child = pid;
	return reap(c, pid, want_status(m));
}

/* Cleanup: no child of ours outlives the run, not even after SIGTERM. */
void reap_children(void *arg)
{
	struct pc_ctx *c = arg;
	pid_t pid = c->live_child;

	if (pid > 0)
		kill(pid, SIGKILL);
	while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
		;
}

/* Fill @buf with what went wrong; KSFT_SKIP or KSFT_FAIL. */
int describe_error(struct pc_ctx *c, const struct method *m, int err,
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

/* ---- the helpers the exec methods run ---------------------------------- */

/* The helpers next to our own executable (where make install puts them). */
void locate_helpers(struct pc_ctx *c)
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

/* ---- probing the methods ----------------------------------------------- */

/* A method the environment cannot run: every cell SKIPs with the reason. */
void probe_method(struct pc_ctx *c, enum method_id id)
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

void probe_sharing(struct pc_ctx *c, enum method_id id)
{
	if (c->unsupported[id])
		return;
	if (id == M_posix_spawn)
		probe_spawn_returns_after_exec(c, id);
	else
		probe_child_write(c, id);
}
