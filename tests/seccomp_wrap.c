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

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: seccomp_wrap [-n N] CMD [ARG]...\n"
		"       seccomp_wrap [-n N] --measure\n"
		"Run CMD under a seccomp filter that allows every call after\n"
		"comparing its first argument with N constants (default 50,\n"
		"at most %d); --measure prints the filter's cost per getppid.\n",
		MAX_COMPARES);
}

/* N compares of args[0] that never match, then allow. */
static int install_filter(unsigned int compares)
{
	struct sock_filter *insn;
	struct sock_fprog prog;
	unsigned int i, len = compares + 2;
	int ret;

	insn = calloc(len, sizeof(*insn));
	if (!insn)
		return -ENOMEM;
	insn[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					       offsetof(struct seccomp_data, args[0]));
	for (i = 0; i < compares; i++)
		insn[i + 1] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
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
	ret = install_filter(compares);
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
	char *end;

	while ((c = getopt_long(argc, argv, "+n:h", opts, NULL)) != -1) {
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
	ret = install_filter(compares);
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
