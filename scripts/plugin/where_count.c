// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin for kbench where --plugin: counts the guest
 * instructions executed in each function, only inside the windows that
 * the measured program opens and closes with lib/mark.h's marks
 * ("nopl 0x4b42(%rax)" and "nopl 0x4b43(%rax)"), and writes one block per
 * window to the file of its argument out=PATH:
 *
 *   window N
 *   FUNCTION COUNT         (the kernel's functions, [user], [kernel, ...])
 *   end N TOTAL
 *
 * Functions are the code symbols of syms=PATH (/proc/kallsyms' or
 * System.map's lines), read when the first window opens: the guest may
 * copy its kallsyms out just before. An address below the kernel's half
 * is user space, one bucket. Summing per function here, not per address
 * on the host, keeps the file small (fork's windows touch thousands of
 * addresses each).
 *
 * Every instruction carries an inline counter (no callback outside the
 * marks); a window's counts are the counters' differences between its two
 * marks. One vCPU (exact mode's -icount runs one TCG thread).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MARK_LEN	7
#define CHUNK_LEN	65536

struct counter {
	uint64_t addr;
	uint64_t count;
	uint64_t start;
	long fn;		/* its function's index, NO_FN until looked up */
};

#define NO_FN		(-1L)
/* x86_64's kernel half starts here: lower addresses are user space. */
#define KERNEL_START	0xffff800000000000ULL

struct symbol {
	uint64_t addr;
	char *name;
	size_t line;		/* of two names at one address, the first */
};

/* Counters come in chunks and are never freed: QEMU's code keeps them. */
struct chunk {
	struct chunk *next;
	size_t used;
	struct counter c[CHUNK_LEN];
};

static struct chunk *chunks;
static FILE *out;
static const char *syms_path;
/* The code symbols by address, then the two buckets; a sum for each. */
static struct symbol *syms;
static size_t nsyms;
static uint64_t *sums;
static long *touched;
static size_t ntouched;
static unsigned long windows;
static int open_window;

static const unsigned char mark_open[MARK_LEN] = {
	0x0f, 0x1f, 0x80, 0x42, 0x4b, 0x00, 0x00 };
static const unsigned char mark_close[MARK_LEN] = {
	0x0f, 0x1f, 0x80, 0x43, 0x4b, 0x00, 0x00 };

static void *must(void *p)
{
	if (!p) {
		fprintf(stderr, "where_count: out of memory\n");
		abort();
	}
	return p;
}

static struct counter *new_counter(uint64_t addr)
{
	struct counter *c;

	if (!chunks || chunks->used == CHUNK_LEN) {
		struct chunk *k = must(calloc(1, sizeof(*k)));

		k->next = chunks;
		chunks = k;
	}
	c = &chunks->c[chunks->used++];
	c->addr = addr;
	c->fn = NO_FN;
	return c;
}

static void fail(const char *what)
{
	fprintf(stderr, "where_count: %s: %s\n", syms_path, what);
	exit(1);
}

static int by_symbol(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;

	if (x->addr != y->addr)
		return (x->addr > y->addr) - (x->addr < y->addr);
	return (x->line > y->line) - (x->line < y->line);
}

/* Code symbols only: text, weak, and module text. */
static int is_code(char type)
{
	return type && strchr("tTwW", type);
}

static void load_symbols(void)
{
	char line[512], name[256], type;
	size_t cap = 0, n = 0, i, kept = 0;
	unsigned long long addr;
	FILE *f = fopen(syms_path, "r");

	if (!f)
		fail(strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 ||
		    !is_code(type) || !addr)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			syms = must(realloc(syms, cap * sizeof(*syms)));
		}
		syms[n].addr = addr;
		syms[n].name = must(strdup(name));
		syms[n].line = n;
		n++;
	}
	fclose(f);
	if (!n)
		fail("no code symbol with an address (kptr_restrict?)");
	qsort(syms, n, sizeof(*syms), by_symbol);
	for (i = 0; i < n; i++)
		if (!kept || syms[i].addr != syms[kept - 1].addr)
			syms[kept++] = syms[i];
	nsyms = kept;
	sums = must(calloc(nsyms + 2, sizeof(*sums)));
	touched = must(calloc(nsyms + 2, sizeof(*touched)));
}

/* Past the symbols: user space, and kernel addresses before the first. */
#define FN_USER(n)	((long)(n))
#define FN_UNKNOWN(n)	((long)(n) + 1)

static long function_of(uint64_t addr)
{
	size_t lo = 0, hi = nsyms;

	if (addr < KERNEL_START)
		return FN_USER(nsyms);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? (long)lo - 1 : FN_UNKNOWN(nsyms);
}

static const char *name_of(long fn)
{
	if (fn == FN_USER(nsyms))
		return "[user]";
	if (fn == FN_UNKNOWN(nsyms))
		return "[kernel, no symbol]";
	return syms[fn].name;
}

static int by_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

static void on_open(unsigned int vcpu, void *udata)
{
	struct chunk *k;
	size_t i;

	(void)vcpu;
	(void)udata;
	if (!syms)
		load_symbols();
	for (k = chunks; k; k = k->next)
		for (i = 0; i < k->used; i++)
			k->c[i].start = k->c[i].count;
	open_window = 1;
}

/* Add the counters that moved since the open mark to their functions. */
static void add_moved(void)
{
	struct chunk *k;
	size_t i;

	for (k = chunks; k; k = k->next)
		for (i = 0; i < k->used; i++) {
			struct counter *c = &k->c[i];

			if (c->count == c->start)
				continue;
			if (c->fn == NO_FN)
				c->fn = function_of(c->addr);
			if (!sums[c->fn])
				touched[ntouched++] = c->fn;
			sums[c->fn] += c->count - c->start;
		}
}

static void on_close(unsigned int vcpu, void *udata)
{
	uint64_t total = 0;
	size_t i;

	(void)vcpu;
	(void)udata;
	if (!open_window)
		return;
	open_window = 0;
	add_moved();
	/* In address order, the buckets last. */
	qsort(touched, ntouched, sizeof(*touched), by_long);
	fprintf(out, "window %lu\n", windows);
	for (i = 0; i < ntouched; i++) {
		long fn = touched[i];

		fprintf(out, "%s %" PRIu64 "\n", name_of(fn), sums[fn]);
		total += sums[fn];
		sums[fn] = 0;
	}
	ntouched = 0;
	fprintf(out, "end %lu %" PRIu64 "\n", windows++, total);
	fflush(out);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;

	(void)id;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const void *data = qemu_plugin_insn_data(insn);
		struct counter *c;

		if (qemu_plugin_insn_size(insn) == MARK_LEN) {
			if (!memcmp(data, mark_open, MARK_LEN))
				qemu_plugin_register_vcpu_insn_exec_cb(insn,
					on_open, QEMU_PLUGIN_CB_NO_REGS, NULL);
			else if (!memcmp(data, mark_close, MARK_LEN))
				qemu_plugin_register_vcpu_insn_exec_cb(insn,
					on_close, QEMU_PLUGIN_CB_NO_REGS, NULL);
		}
		c = new_counter(qemu_plugin_insn_vaddr(insn));
		qemu_plugin_register_vcpu_insn_exec_inline(insn,
			QEMU_PLUGIN_INLINE_ADD_U64, &c->count, 1);
	}
}

static void on_atexit(qemu_plugin_id_t id, void *udata)
{
	(void)id;
	(void)udata;
	fclose(out);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *path = NULL;
	int i;

	(void)info;
	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
		else if (!strncmp(argv[i], "syms=", 5))
			syms_path = argv[i] + 5;
	if (!path || !syms_path) {
		fprintf(stderr,
			"where_count: usage: -plugin FILE,out=PATH,syms=PATH\n");
		return -1;
	}
	out = fopen(path, "w");
	if (!out) {
		perror(path);
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_atexit, NULL);
	return 0;
}
