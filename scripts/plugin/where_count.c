// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin for kbench where --plugin: counts the guest
 * instructions executed at each guest address, only inside the windows
 * that the measured program opens and closes with lib/mark.h's marks
 * ("nopl 0x4b42(%rax)" and "nopl 0x4b43(%rax)"), and writes one block per
 * window to the file of its argument out=PATH:
 *
 *   window N
 *   ADDRESS COUNT          (hex address, decimal count, address order)
 *   end N TOTAL
 *
 * Every instruction carries an inline counter (no callback outside the
 * marks); a window's counts are the counters' differences between its two
 * marks. One vCPU (exact mode's -icount runs one TCG thread).
 */
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
};

/* Counters come in chunks and are never freed: QEMU's code keeps them. */
struct chunk {
	struct chunk *next;
	size_t used;
	struct counter c[CHUNK_LEN];
};

static struct chunk *chunks;
static FILE *out;
static unsigned long windows;
static int open_window;

static const unsigned char mark_open[MARK_LEN] = {
	0x0f, 0x1f, 0x80, 0x42, 0x4b, 0x00, 0x00 };
static const unsigned char mark_close[MARK_LEN] = {
	0x0f, 0x1f, 0x80, 0x43, 0x4b, 0x00, 0x00 };

static struct counter *new_counter(uint64_t addr)
{
	struct counter *c;

	if (!chunks || chunks->used == CHUNK_LEN) {
		struct chunk *k = calloc(1, sizeof(*k));

		if (!k) {
			fprintf(stderr, "where_count: out of memory\n");
			abort();
		}
		k->next = chunks;
		chunks = k;
	}
	c = &chunks->c[chunks->used++];
	c->addr = addr;
	return c;
}

static int by_addr(const void *a, const void *b)
{
	const struct counter *x = *(struct counter * const *)a;
	const struct counter *y = *(struct counter * const *)b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

static void on_open(unsigned int vcpu, void *udata)
{
	struct chunk *k;
	size_t i;

	(void)vcpu;
	(void)udata;
	for (k = chunks; k; k = k->next)
		for (i = 0; i < k->used; i++)
			k->c[i].start = k->c[i].count;
	open_window = 1;
}

/* The counters that moved since the open mark, in address order. */
static struct counter **moved(size_t *n)
{
	struct counter **v = NULL;
	size_t len = 0, cap = 0, i;
	struct chunk *k;

	for (k = chunks; k; k = k->next)
		for (i = 0; i < k->used; i++) {
			if (k->c[i].count == k->c[i].start)
				continue;
			if (len == cap) {
				cap = cap ? 2 * cap : 4096;
				v = realloc(v, cap * sizeof(*v));
				if (!v) {
					fprintf(stderr,
						"where_count: out of memory\n");
					abort();
				}
			}
			v[len++] = &k->c[i];
		}
	qsort(v, len, sizeof(*v), by_addr);
	*n = len;
	return v;
}

static void on_close(unsigned int vcpu, void *udata)
{
	uint64_t total = 0, sum = 0;
	struct counter **v;
	size_t n, i;

	(void)vcpu;
	(void)udata;
	if (!open_window)
		return;
	open_window = 0;
	v = moved(&n);
	fprintf(out, "window %lu\n", windows);
	/* The same address translated twice has two counters: add them. */
	for (i = 0; i < n; i++) {
		sum += v[i]->count - v[i]->start;
		if (i + 1 < n && v[i + 1]->addr == v[i]->addr)
			continue;
		fprintf(out, "%" PRIx64 " %" PRIu64 "\n", v[i]->addr, sum);
		total += sum;
		sum = 0;
	}
	fprintf(out, "end %lu %" PRIu64 "\n", windows++, total);
	fflush(out);
	free(v);
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
	if (!path) {
		fprintf(stderr, "where_count: usage: -plugin FILE,out=PATH\n");
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
