// SPDX-License-Identifier: GPL-2.0
/*
 * slow_call.so: an LD_PRELOAD library that makes one system call of a
 * dynamically linked program cost a known amount more, in user space
 * (a spin before libc's syscall(2)): a one-row change of syscall_overhead
 * for validating compare's power, where a seccomp filter (seccomp_wrap)
 * slows every system call at once.
 *
 *   run_all.sh --vs-prefix "env LD_PRELOAD=$PWD/slow_call.so \
 *       KBENCH_SLOW_CALL=getsid KBENCH_SLOW_LOOPS=50"
 *
 * KBENCH_SLOW_CALL: getpid, getppid, getsid or getpgid (default getsid);
 * KBENCH_SLOW_LOOPS: spins of a dependent add per call (default 50).
 * Programs linked statically (proc_create) are not touched.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

typedef long (*syscall_fn)(long, ...);

static const struct {
	const char *name;
	long nr;
} calls[] = {
	{ "getpid", SYS_getpid },
	{ "getppid", SYS_getppid },
	{ "getsid", SYS_getsid },
	{ "getpgid", SYS_getpgid },
};

static long slow_nr = -1;
static unsigned long loops;
static syscall_fn real_syscall;

static void __attribute__((constructor)) slow_call_init(void)
{
	const char *name = getenv("KBENCH_SLOW_CALL");
	const char *n = getenv("KBENCH_SLOW_LOOPS");
	size_t i;

	if (!name)
		name = "getsid";
	for (i = 0; i < ARRAY_SIZE(calls); i++)
		if (!strcmp(calls[i].name, name))
			slow_nr = calls[i].nr;
	loops = n ? strtoul(n, NULL, 10) : 50;
	real_syscall = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
}

long syscall(long nr, ...)
{
	long a[6];
	unsigned long i;
	va_list ap;
	int k;

	/* Another library's constructor may call first (libnuma's does). */
	if (!real_syscall)
		slow_call_init();
	va_start(ap, nr);
	for (k = 0; k < 6; k++)
		a[k] = va_arg(ap, long);
	va_end(ap);
	/* An empty asm the compiler must keep: one loop step a spin. */
	if (nr == slow_nr)
		for (i = 0; i < loops; i++)
			asm volatile("" : : "r"(i) : "memory");
	return real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
