// SPDX-License-Identifier: GPL-2.0
/*
 * seccomp_wrap: run a command under a seccomp filter that allows every
 * system call but costs a known amount on each: it compares the first
 * argument with N constants before allowing. Because the filter reads an
 * argument, the kernel cannot cache its verdict per syscall number, so
 * every call runs it. A known, real cost for validating kbench's A/B:
 *
 *   run_all.sh --vs-prefix "$PWD/seccomp_wrap -n 50" --repeat 5
 *
 * seccomp_wrap -n N --measure prints what the filter adds to getppid,
 * measured directly (median of batches before and after installing it).
 *
 * With -s NAME the compares run for that one system call only: every
 * other call is allowed on its number alone, which the kernel caches, so
 * one row of the collection changes (issue: verdicts that can see a
 * one-row change).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_COMPARES 4000
#define BATCH 2000
#define BATCHES 31
#define ALL_CALLS (-1L)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const struct {
	const char *name;
	long nr;
} calls[] = {
	{ "getpid", SYS_getpid },
	{ "getppid", SYS_getppid },
	{ "getsid", SYS_getsid },
	{ "getpgid", SYS_getpgid },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: seccomp_wrap [-n N] [-s NAME] CMD [ARG]...\n"
		"       seccomp_wrap [-n N] --measure\n"
		"Run CMD under a seccomp filter that allows every call after\n"
		"comparing its first argument with N constants (default 50,\n"
		"at most %d); -s NAME: only for system call NAME (getpid,\n"
		"getppid, getsid or getpgid); --measure prints the filter's\n"
		"cost per getppid.\n",
		MAX_COMPARES);
}

static long call_number(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(calls); i++)
		if (!strcmp(calls[i].name, name))
			return calls[i].nr;
	return ALL_CALLS - 1;
}

/*
 * N compares of args[0] that never match, then allow; with a call
 * number, other calls are allowed first (on their number alone).
 */
static int install_filter(unsigned int compares, long nr)
{
	unsigned int i, head = nr == ALL_CALLS ? 0 : 3, len = head + compares + 2;
	struct sock_filter *insn;
	struct sock_fprog prog;
	int ret;

	insn = calloc(len, sizeof(*insn));
	if (!insn)
		return -ENOMEM;
	if (head) {
		insn[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						       offsetof(struct seccomp_data, nr));
		insn[1] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						       nr, 1, 0);
		insn[2] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
						       SECCOMP_RET_ALLOW);
	}
	insn[head] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						  offsetof(struct seccomp_data, args[0]));
	for (i = 0; i < compares; i++)
		insn[head + i + 1] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
								  0x5ecc0000u + i, 0, 0);
	insn[len - 1] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
						     SECCOMP_RET_ALLOW);
	prog.len = len;
	prog.filter = insn;
	ret = 0;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		ret = -errno;
	free(insn);
	return ret;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median over BATCHES batches of the ns one getppid takes. */
static double getppid_ns(void)
{
	double per[BATCHES], t0;
	int b, i;

	for (b = 0; b < BATCHES; b++) {
		t0 = now_ns();
		for (i = 0; i < BATCH; i++)
			syscall(SYS_getppid);
		per[b] = (now_ns() - t0) / BATCH;
	}
	qsort(per, BATCHES, sizeof(per[0]), cmp_double);
	return per[BATCHES / 2];
}

static int measure(unsigned int compares)
{
	double before, after;
	int ret;

	getppid_ns();	/* warm-up */
	before = getppid_ns();
	ret = install_filter(compares, ALL_CALLS);
	if (ret) {
		fprintf(stderr, "seccomp_wrap: cannot install the filter: %s\n",
			strerror(-ret));
		return 1;
	}
	after = getppid_ns();
	printf("compares=%u getppid_ns_before=%.1f getppid_ns_after=%.1f ratio=%.3f\n",
	       compares, before, after, after / before);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "measure", no_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long compares = 50;
	int do_measure = 0, c, ret;
	long nr = ALL_CALLS;
	char *end;

	while ((c = getopt_long(argc, argv, "+n:s:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			errno = 0;
			compares = strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg || optarg[0] == '-' ||
			    compares > MAX_COMPARES) {
				fprintf(stderr, "seccomp_wrap: invalid -n '%s' (0..%d)\n",
					optarg, MAX_COMPARES);
				usage(stderr);
				return 2;
			}
			break;
		case 's':
			nr = call_number(optarg);
			if (nr < ALL_CALLS) {
				fprintf(stderr, "seccomp_wrap: invalid -s '%s'\n", optarg);
				usage(stderr);
				return 2;
			}
			break;
		case 'm':
			do_measure = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (do_measure)
		return measure(compares);
	if (optind >= argc) {
		fprintf(stderr, "seccomp_wrap: no command\n");
		usage(stderr);
		return 2;
	}
	ret = install_filter(compares, nr);
	if (ret) {
		fprintf(stderr, "seccomp_wrap: cannot install the filter: %s\n",
			strerror(-ret));
		return 4;
	}
	execvp(argv[optind], argv + optind);
	fprintf(stderr, "seccomp_wrap: cannot run %s: %s\n", argv[optind],
		strerror(errno));
	return 127;
}
