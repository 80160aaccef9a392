// SPDX-License-Identifier: GPL-2.0
/*
 * taskstat: the benchmark of the /proc/taskstats RFC (seed 000), on any
 * kernel. Selects the processes whose comm contains NAME, then once a
 * second times one pass over all of them with the chosen method and
 * prints "nr_process: N   cost:   S.NNNNNNNNN" (seconds, CLOCK_MONOTONIC).
 * Processes whose query fails are dropped, as the original did.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kbench.h"
#include "proc.h"
#include "taskstats_method.h"

/* The kernel's TASK_COMM_LEN is 16: a longer NAME can never match. */
#define COMM_MAX	15

struct options {
	enum kb_ts_method method;
	const char *name;
	long count;		/* passes, 0 = until interrupted */
	unsigned int batch;
};

/* What the manual says before the options: the modes, from the library. */
static const char *about(void)
{
	static char text[2048];
	size_t n;
	int m;

	n = snprintf(text, sizeof(text),
		     "Fetch per-task statistics of every process whose /proc/PID/comm contains\n"
		     "NAME, once a second, and print the cost of one pass in seconds:\n"
		     "  nr_process: N       cost:   S.NNNNNNNNN\n"
		     "Processes whose query fails are dropped from later passes.\n"
		     "\n"
		     "MODE is 0 (ioctl on /proc/taskstats, the RFC), 1 (netlink, one\n"
		     "request per pid) or one of these names:");
	for (m = 0; m < KB_TS_METHOD_NR && n < sizeof(text); m++)
		n += snprintf(text + n, sizeof(text) - n, "\n  %-16s %s",
			      kb_ts_method_name(m), kb_ts_method_desc(m));
	return text;
}

static void check_name(const char *name)
{
	if (!*name)
		kb_cli_error("NAME must not be empty");
	if (strlen(name) > COMM_MAX)
		kb_cli_error("NAME '%s' is longer than %d characters: no comm can contain it",
			     name, COMM_MAX);
	if (strchr(name, '/') || strchr(name, '\n'))
		kb_cli_error("NAME '%s' holds a character no comm has", name);
}

static void parse_options(int argc, char **argv, struct options *o)
{
	const struct kb_cli_opt opts[] = {
		KB_OPT_LONG('c', "count", &o->count, 1, 1000000000, "N",
			    "stop after N passes (default: until interrupted)"),
		KB_OPT_UINT('K', "batch", &o->batch, 1, KB_TS_METHOD_MAX_BATCH,
			    "K", "requests per sendmsg in netlink_batched (default "
			    KB_CLI_STR(KB_TS_METHOD_DEFAULT_BATCH) ")"),
		KB_OPT_END(),
	};
	const struct kb_cli cli = {
		.opts = opts, .synopsis = "[OPTION]... MODE NAME",
		.about = about(), .args = true,
		.notes = "bpf_iter first prints what loading its program took, once:\n"
			 "  load: S.NNNNNNNNN\n"
			 "\n"
			 "Netlink modes need CAP_NET_ADMIN; bpf_iter needs CAP_BPF and CAP_PERFMON\n"
			 "(or CAP_SYS_ADMIN) and a kernel with BTF.",
		.exit_status = "Exit status: 0 done, 1 the method failed or no process matched, 2 bad\n"
			       "usage.",
	};
	struct kb_cli_common common;
	int first, m;

	o->batch = KB_TS_METHOD_DEFAULT_BATCH;
	first = kb_cli_parse(argc, argv, &cli, &common);
	if (argc - first != 2)
		kb_cli_error("expected MODE and NAME, got %d argument%s",
			     argc - first, argc - first == 1 ? "" : "s");
	m = kb_ts_method_parse(argv[first]);
	if (m < 0)
		kb_cli_error("unknown MODE '%s' (0, 1, netlink_per_pid, netlink_batched, procfs, procfs_pread, ioctl or bpf_iter)",
			     argv[first]);
	o->method = m;
	o->name = argv[first + 1];
	check_name(o->name);
}

/* Keep the pids that answered. Returns the new count. */
static size_t drop_failed(pid_t *pids, const bool *ok, size_t n)
{
	size_t i, kept = 0;

	for (i = 0; i < n; i++)
		if (ok[i])
			pids[kept++] = pids[i];
	return kept;
}

static void sleep_one_second(void)
{
	struct timespec ts = { .tv_sec = 1 };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

static struct kb_ts_method_ctx *new_ctx(const struct options *o,
					const pid_t *pids, size_t n)
{
	struct kb_ts_method_ctx *ctx;
	char why[160];
	int err;

	ctx = kb_ts_method_open(o->method, o->batch, pids, n, &err, why,
				sizeof(why));
	if (!ctx) {
		fprintf(stderr, "%s: %s: %s\n", kb_cli_prog(),
			kb_ts_method_name(o->method), why);
		exit(1);
	}
	return ctx;
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct kb_ts_method_ctx *ctx;
	pid_t *pids = NULL;
	long n, got, pass;
	uint64_t ns;
	bool *ok;

	kb_init("taskstat", argc, argv);
	parse_options(argc, argv, &o);
	n = kb_proc_find_by_comm(o.name, &pids);
	if (n < 0) {
		fprintf(stderr, "%s: cannot scan /proc: %s\n", kb_cli_prog(),
			strerror(-n));
		return 1;
	}
	if (!n) {
		fprintf(stderr, "%s: no process whose comm contains '%s'\n",
			kb_cli_prog(), o.name);
		return 1;
	}
	ok = calloc(n, sizeof(*ok));
	if (!ok)
		return 1;
	ctx = new_ctx(&o, pids, n);
	ns = kb_ts_method_load_ns(ctx);
	if (o.method == KB_TS_METHOD_BPF_ITER)
		printf("load: %3llu.%09llu\n",
		       (unsigned long long)(ns / 1000000000ull),
		       (unsigned long long)(ns % 1000000000ull));
	for (pass = 0; !o.count || pass < o.count; pass++) {
		if (pass)
			sleep_one_second();
		got = kb_ts_method_pass(ctx, ok, &ns);
		if (got < 0) {
			fprintf(stderr, "%s: %s pass failed: %s\n", kb_cli_prog(),
				kb_ts_method_name(o.method), strerror(-got));
			return 1;
		}
		printf("nr_process: %-6ld cost: %3llu.%09llu\n", got,
		       (unsigned long long)(ns / 1000000000ull),
		       (unsigned long long)(ns % 1000000000ull));
		if (got == n)
			continue;
		kb_ts_method_close(ctx);
		n = drop_failed(pids, ok, n);
		if (!n) {
			fprintf(stderr, "%s: no process left to query\n",
				kb_cli_prog());
			return 1;
		}
		ctx = new_ctx(&o, pids, n);
	}
	kb_ts_method_close(ctx);
	free(ok);
	free(pids);
	return 0;
}
