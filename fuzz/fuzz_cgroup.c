// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: the text parsers of lib/cgroup.c, on buffers that
 * are not NUL terminated (a copy of exactly the input's length, so that
 * ASan sees any read past the end). The first byte picks the parser:
 *   0 memory.stat (kb_memstat_parse)
 *   1 memory.numa_stat (kb_numastat_find, kb_numastat_line_parse per line)
 *   2 /proc/self/mountinfo (kb_cgroup_mountinfo_find, _parse_line)
 *   3 /proc/self/cgroup (kb_cgroup_proc_path, v1 memory and v2)
 *   4 both: mountinfo text, a NUL byte, /proc/self/cgroup text
 *     (kb_cgroup_own_dirs)
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "compat.h"
#include "memstat.h"
#include "numastat.h"
#include "text.h"

static void check(int ok)
{
	if (!ok)
		abort();
}

/* A returned string must end inside its buffer. */
static void check_string(const char *s, size_t size)
{
	check(memchr(s, '\0', size) != NULL);
}

static void memory_stat(const char *text, size_t len)
{
	static struct kb_memstat st;
	unsigned long long v;
	char why[128];
	size_t i;

	if (kb_memstat_parse(text, len, &st, why, sizeof(why)))
		return;
	check(st.n <= KB_MEMSTAT_MAX_KEYS);
	for (i = 0; i < st.n; i++) {
		check_string(st.e[i].key, sizeof(st.e[i].key));
		check(kb_memstat_get(&st, st.e[i].key, &v));
	}
	kb_memstat_ks_keys_match(&st, "flush,anon,file", why, sizeof(why));
}

static void numa_stat(const char *text, size_t len)
{
	struct kb_numastat_line l;
	struct kb_text t;
	unsigned long long v;
	const char *line;
	size_t n;

	if (kb_numastat_find(text, len, "anon", &l) == 0) {
		check(l.nnodes >= 0 && l.nnodes <= KB_NUMASTAT_MAX_NODES);
		kb_numastat_line_sum(&l);
		kb_numastat_line_node(&l, 0, &v);
	}
	kb_text_init(&t, text, len);
	while (kb_text_next_line(&t, &line, &n)) {
		check(line >= text && line + n <= text + len);
		if (kb_numastat_line_parse(line, n, &l) == 0)
			check(l.nnodes >= 0 && l.nnodes <= KB_NUMASTAT_MAX_NODES);
	}
}

static void mountinfo(const char *text, size_t len)
{
	static char v2[PATH_MAX], v1[PATH_MAX];
	static struct kb_cgroup_mount m;
	struct kb_text t;
	const char *line;
	size_t n;

	if (kb_cgroup_mountinfo_find(text, len, v2, sizeof(v2), v1,
				     sizeof(v1)) >= 0) {
		check_string(v2, sizeof(v2));
		check_string(v1, sizeof(v1));
	}
	kb_text_init(&t, text, len);
	while (kb_text_next_line(&t, &line, &n))
		if (kb_cgroup_mountinfo_parse(line, n, &m) != -EINVAL) {
			check_string(m.root, sizeof(m.root));
			check_string(m.point, sizeof(m.point));
			check_string(m.fstype, sizeof(m.fstype));
			check_string(m.super_opts, sizeof(m.super_opts));
		}
}

static void proc_cgroup(const char *text, size_t len)
{
	char path[256];

	if (kb_cgroup_proc_path(text, len, KB_CGROUP_V1, "memory", path,
				sizeof(path)) == 0)
		check_string(path, sizeof(path));
	if (kb_cgroup_proc_path(text, len, KB_CGROUP_V2, NULL, path,
				sizeof(path)) == 0)
		check_string(path, sizeof(path));
}

static void own_dirs(const char *text, size_t len)
{
	static struct kb_cgroup_dir dirs[4];
	const char *nul = memchr(text, '\0', len);
	size_t mlen = nul ? (size_t)(nul - text) : len;
	int n, i;

	n = kb_cgroup_own_dirs(text, mlen, text + mlen + !!nul,
			       len - mlen - !!nul, dirs, ARRAY_SIZE(dirs));
	check(n <= (int)ARRAY_SIZE(dirs));
	for (i = 0; i < n; i++)
		check_string(dirs[i].path, sizeof(dirs[i].path));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static void (*const parsers[])(const char *text, size_t len) = {
		memory_stat, numa_stat, mountinfo, proc_cgroup, own_dirs,
	};
	char *text;

	if (size < 1)
		return -1;
	text = malloc(size - 1 ? size - 1 : 1);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	parsers[data[0] % ARRAY_SIZE(parsers)](text, size - 1);
	free(text);
	return 0;
}
