// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the parsers and the comparison functions of lib/cgroup.c,
 * on built-in text: mountinfo lines, /proc/self/cgroup, memory.stat,
 * memory.numa_stat and the checks memcg_ks makes of them. Every check of
 * memcg_ks gets a corrupted input here that must make it fail.
 */
#include <errno.h>
#include <string.h>

#include "cgroup.h"
#include "memstat.h"
#include "numastat.h"
#include "text.h"
#include "ktap.h"

static struct kb_cgroup_mount m;
static struct kb_memstat st, st2, st3;

#define WHY(...)	(snprintf(why, size, __VA_ARGS__), KSFT_FAIL)

static int test_mountinfo_v1(char *why, size_t size)
{
	const char *line = "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:12 - cgroup cgroup rw,memory\n";

	if (kb_cgroup_mountinfo_parse(line, strlen(line), &m) || strcmp(m.root, "/") ||
	    strcmp(m.point, "/sys/fs/cgroup/memory") ||
	    strcmp(m.fstype, "cgroup") || strcmp(m.super_opts, "rw,memory"))
		return WHY("got '%s' '%s' '%s'", m.point, m.fstype, m.super_opts);
	return KSFT_PASS;
}

static int test_mountinfo_v2(char *why, size_t size)
{
	const char *line = "32 26 0:26 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw,nsdelegate";

	if (kb_cgroup_mountinfo_parse(line, strlen(line), &m) ||
	    strcmp(m.point, "/sys/fs/cgroup") || strcmp(m.fstype, "cgroup2") ||
	    strcmp(m.super_opts, "rw,nsdelegate"))
		return WHY("got '%s' '%s'", m.point, m.super_opts);
	return KSFT_PASS;
}

static int test_mountinfo_escapes(char *why, size_t size)
{
	const char *line = "40 31 0:40 /sub\\040dir /mnt/my\\040cg\\011x rw shared:1 master:2 - cgroup2 none rw";

	if (kb_cgroup_mountinfo_parse(line, strlen(line), &m) || strcmp(m.root, "/sub dir") ||
	    strcmp(m.point, "/mnt/my cg\tx") || strcmp(m.fstype, "cgroup2"))
		return WHY("got '%s' '%s'", m.root, m.point);
	return KSFT_PASS;
}

static int test_mountinfo_malformed(char *why, size_t size)
{
	static const char *const bad[] = {
		"",
		"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:12 cgroup cgroup rw",
		"35 31 0:32 / /x rw -",
		"35 31 032 / /x rw - cgroup cgroup rw",
		"35 31",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		if (kb_cgroup_mountinfo_parse(bad[i], strlen(bad[i]), &m) != -EINVAL)
			return WHY("'%s' accepted", bad[i]);
	return KSFT_PASS;
}

/* The length bounds the line: what follows it is never read. */
static int test_mountinfo_length_bound(char *why, size_t size)
{
	const char *line = "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memoryXYZ";

	if (kb_cgroup_mountinfo_parse(line, strlen(line) - 3, &m) ||
	    strcmp(m.super_opts, "rw,memory"))
		return WHY("super options '%s', want 'rw,memory'", m.super_opts);
	return KSFT_PASS;
}

/* A field too long for its member is an error, never a truncated value. */
static int test_mountinfo_long_field(char *why, size_t size)
{
	static char line[1200], text[2400];
	int n, err;

	n = snprintf(line, sizeof(line), "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw");
	while (n < 700)
		n += snprintf(line + n, sizeof(line) - n, ",name=x");
	snprintf(line + n, sizeof(line) - n, ",memory");
	err = kb_cgroup_mountinfo_parse(line, strlen(line), &m);
	if (err != -E2BIG || m.super_opts[0] || strcmp(m.fstype, "cgroup"))
		return WHY("a 750-byte super option list: %d '%.20s'", err,
			   m.super_opts);
	snprintf(text, sizeof(text), "%s\n", line);
	err = kb_cgroup_mountinfo_find(text, strlen(text), NULL, 0, line, sizeof(line));
	if (err != -E2BIG)
		return WHY("find_cgroups on that line: %d, want -E2BIG", err);
	return KSFT_PASS;
}

/* A long line of another file system (overlay layers) does not matter. */
static int test_mountinfo_long_other_fs(char *why, size_t size)
{
	static char text[2400];
	char v1[64];
	int n, found;

	n = snprintf(text, sizeof(text), "50 1 0:50 / /var/lib/x rw - overlay overlay rw,lowerdir=");
	while (n < 1500)
		n += snprintf(text + n, sizeof(text) - n, "/l/ABCDEFGH:");
	snprintf(text + n, sizeof(text) - n, "\n35 31 0:32 / /cg/memory rw - cgroup cgroup rw,memory\n");
	found = kb_cgroup_mountinfo_find(text, strlen(text), NULL, 0, v1, sizeof(v1));
	if (found != 1 || strcmp(v1, "/cg/memory"))
		return WHY("found %d '%s'", found, v1);
	return KSFT_PASS;
}

static int test_opt_list(char *why, size_t size)
{
	if (!kb_text_opts_have("rw,memory", "memory") ||
	    !kb_text_opts_have("memory", "memory") ||
	    kb_text_opts_have("rw,memory_x", "memory") ||
	    kb_text_opts_have("rw,xmemory", "memory") ||
	    kb_text_opts_have("", "memory") ||
	    !kb_text_opts_have("cpu,cpuacct", "cpuacct") ||
	    !kb_text_opts_have("a,b,c", "c") ||
	    kb_text_list_has("memory", 3, ',', "memory"))
		return WHY("a list lookup is wrong");
	return KSFT_PASS;
}

/* kb_cgroup_mountinfo_find() of @text finds @n mounts: @want_v2, @want_v1. */
static int find_gives(const char *text, int n, const char *want_v2,
		      const char *want_v1, char *why, size_t size)
{
	char v2[64] = "", v1[64] = "";
	int found = kb_cgroup_mountinfo_find(text, strlen(text), v2, sizeof(v2),
					     v1, sizeof(v1));

	if (found != n || strcmp(v2, want_v2) || strcmp(v1, want_v1))
		return WHY("found %d: '%s' '%s'", found, v2, v1);
	return KSFT_PASS;
}

static int test_find_cgroups_hybrid(char *why, size_t size)
{
	return find_gives("31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
			  "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
			  "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
			  "40 31 0:37 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,name=systemd\n"
			  "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n",
			  2, "/sys/fs/cgroup/unified", "/sys/fs/cgroup/memory", why, size);
}

static int test_find_cgroups_v2_only(char *why, size_t size)
{
	return find_gives("22 1 0:20 / /proc rw - proc proc rw\n"
			  "garbage line\n"
			  "32 26 0:26 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw",
			  1, "/sys/fs/cgroup", "", why, size);
}

static int test_proc_cgroup(char *why, size_t size)
{
	const char *text =
		"12:pids:/user.slice\n"
		"4:cpu,memory:/kb/test\n"
		"1:name=systemd:/init.scope\n"
		"0::/system.slice/x.service\n";
	char v1[64] = "", v2[64] = "";

	if (kb_cgroup_proc_path(text, strlen(text), KB_CGROUP_V1, "memory", v1,
				sizeof(v1)) || strcmp(v1, "/kb/test") ||
	    kb_cgroup_proc_path(text, strlen(text), KB_CGROUP_V2, NULL, v2, sizeof(v2)) ||
	    strcmp(v2, "/system.slice/x.service") ||
	    kb_cgroup_proc_path("3:cpu:/\n", 8, KB_CGROUP_V1, "memory", v1,
				sizeof(v1)) != -ENOENT)
		return WHY("v1 '%s' v2 '%s'", v1, v2);
	return KSFT_PASS;
}

static int test_proc_cgroup_long_path(char *why, size_t size)
{
	const char *text = "4:memory:/a/very/long/path/that/does/not/fit\n";
	char path[16];
	int err = kb_cgroup_proc_path(text, strlen(text), KB_CGROUP_V1, "memory", path,
				      sizeof(path));

	if (err != -ENAMETOOLONG)
		return WHY("got %d, want -ENAMETOOLONG", err);
	return KSFT_PASS;
}

/*
 * Parse @text into st: @nkeys keys and @ncomments comment lines, and @key
 * (when given) with @value.
 */
static int stat_parses_to(const char *text, size_t nkeys, size_t ncomments,
			  const char *key, unsigned long long value, char *why,
			  size_t size)
{
	unsigned long long v = 0;

	if (kb_memstat_parse(text, strlen(text), &st, why, size))
		return KSFT_FAIL;
	if (st.n != nkeys || st.comments != ncomments ||
	    (key && (!kb_memstat_get(&st, key, &v) || v != value)))
		return WHY("%zu keys, %zu comments, %s=%llu", st.n, st.comments,
			   key ? key : "-", v);
	return KSFT_PASS;
}

static int test_stat_v2(char *why, size_t size)
{
	const char *text = "anon 13660160\nfile 8417280\nkernel 0\n\npgfault 123\n";
	int ret = stat_parses_to(text, 4, 0, "file", 8417280, why, size);

	if (ret != KSFT_PASS)
		return ret;
	if (kb_memstat_get(&st, "slab", NULL) || strcmp(st.e[3].key, "pgfault"))
		return WHY("slab found, or key 4 is '%s'", st.e[3].key);
	return KSFT_PASS;
}

static int test_stat_v1_big(char *why, size_t size)
{
	return stat_parses_to("cache 10207232\nhierarchical_memory_limit 9223372036854771712\ntotal_rss 20226048",
			      3, 0, "hierarchical_memory_limit",
			      9223372036854771712ull, why, size);
}

static int test_stat_ks_comments(char *why, size_t size)
{
	return stat_parses_to("# Mode: BTF query (2 fields)\nanon 12\nfile 3\n# kserial_time_ns 812\n",
			      2, 2, NULL, 0, why, size);
}

static int test_stat_bad(char *why, size_t size)
{
	static const char *const bad[] = {
		"anon -5\n", "anon\n", "anon 5 6\n", "anon 5x\n",
		"anon 99999999999999999999999\n", "anon 18446744073709551616\n",
		"anon 0x10\n", "anon +5\n",
	};
	char reason[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		if (kb_memstat_parse(bad[i], strlen(bad[i]), &st, reason, sizeof(reason)) != -EINVAL)
			return WHY("'%s' accepted", bad[i]);
	return KSFT_PASS;
}

/* "anon <506 spaces>12345" once read as anon=1 from a 512-byte copy. */
static int test_stat_long_line(char *why, size_t size)
{
	char text[600], reason[128] = "";
	int n = snprintf(text, sizeof(text), "anon ");
	int err;

	memset(text + n, ' ', 506);
	snprintf(text + n + 506, sizeof(text) - n - 506, "12345\nfile 1\n");
	err = kb_memstat_parse(text, strlen(text), &st, reason, sizeof(reason));
	if (err != -EINVAL || !strstr(reason, "too long"))
		return WHY("got %d (%s), %zu keys, first anon=%llu", err,
			   reason, st.n, st.n ? st.e[0].value : 0);
	return KSFT_PASS;
}

static int test_stat_length_bound(char *why, size_t size)
{
	static const char text[] = "anon 12\0garbage";
	char reason[128] = "";
	unsigned long long v = 0;

	/* 6 bytes: "anon 1"; and an embedded NUL is no valid text */
	if (kb_memstat_parse(text, 6, &st, reason, sizeof(reason)) ||
	    !kb_memstat_get(&st, "anon", &v) || v != 1)
		return WHY("6 bytes of 'anon 12': %s anon=%llu", reason, v);
	if (kb_memstat_parse(text, sizeof(text) - 1, &st, reason,
			     sizeof(reason)) != -EINVAL)
		return WHY("a NUL inside the value accepted");
	return KSFT_PASS;
}

static int test_numa_v1(char *why, size_t size)
{
	struct kb_numastat_line l;
	unsigned long long v = 0;
	const char *line = "hierarchical_total=133803 N0=133000 N1=803";

	if (kb_numastat_line_parse(line, strlen(line), &l) ||
	    strcmp(l.key, "hierarchical_total") || !l.has_total ||
	    l.total != 133803 || l.nnodes != 2 ||
	    kb_numastat_line_sum(&l) != 133803 ||
	    !kb_numastat_line_node(&l, 1, &v) || v != 803 ||
	    kb_numastat_line_node(&l, 2, &v))
		return WHY("key '%s' total %llu nodes %d", l.key, l.total,
			   l.nnodes);
	return KSFT_PASS;
}

static int test_numa_v2(char *why, size_t size)
{
	const char *line = "anon N0=4096 N3=8192\n";
	struct kb_numastat_line l;

	if (kb_numastat_line_parse(line, strlen(line), &l) ||
	    strcmp(l.key, "anon") || l.has_total || l.nnodes != 2 ||
	    l.node[1] != 3 || kb_numastat_line_sum(&l) != 12288)
		return WHY("key '%s' nodes %d", l.key, l.nnodes);
	return KSFT_PASS;
}

static int test_numa_bad(char *why, size_t size)
{
	static const char *const bad[] = {
		"", "anon", "anon N0=", "anon X0=5", "anon N=5", "total=x N0=1",
		"anon N0=-1", "=5 N0=5", "anon N0=5x", "total= N0=1",
	};
	struct kb_numastat_line l;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		if (!kb_numastat_line_parse(bad[i], strlen(bad[i]), &l))
			return WHY("'%s' accepted", bad[i]);
	return KSFT_PASS;
}

static int test_numa_long_line(char *why, size_t size)
{
	static char line[KB_NUMASTAT_LINE_MAX + 64];
	struct kb_numastat_line l;
	int n = snprintf(line, sizeof(line), "anon");

	memset(line + n, ' ', KB_NUMASTAT_LINE_MAX);
	snprintf(line + n + KB_NUMASTAT_LINE_MAX, sizeof(line) - n - KB_NUMASTAT_LINE_MAX,
		 "N0=5");
	if (kb_numastat_line_parse(line, strlen(line), &l) != -EINVAL)
		return WHY("a %zu-byte line accepted", strlen(line));
	return KSFT_PASS;
}

static int test_own_dirs(char *why, size_t size)
{
	const char *mi =
		"31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
		"32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
		"35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
		"36 31 0:33 /sub /mnt/pids rw - cgroup cgroup rw,pids\n"
		"41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
	const char *pc =
		"12:pids:/user.slice\n"
		"4:cpu,cpuacct:/a\n"
		"3:memory:/\n"
		"2:blkio:/nomount\n"
		"1:name=systemd:/../outside\n"
		"0::/init.scope\n";
	struct kb_cgroup_dir d[8];
	int n = kb_cgroup_own_dirs(mi, strlen(mi), pc, strlen(pc), d, 8);

	if (n != 3 || d[0].version != KB_CGROUP_V2 ||
	    strcmp(d[0].path, "/sys/fs/cgroup/unified/init.scope") ||
	    strcmp(d[1].path, "/sys/fs/cgroup/cpu,cpuacct/a") ||
	    strcmp(d[2].path, "/sys/fs/cgroup/memory"))
		return WHY("%d dirs: '%s' '%s' '%s'", n, n > 0 ? d[0].path : "",
			   n > 1 ? d[1].path : "", n > 2 ? d[2].path : "");
	n = kb_cgroup_own_dirs(mi, strlen(mi), pc, strlen(pc), d, 1);
	if (n != 1)
		return WHY("max 1 gave %d", n);
	return KSFT_PASS;
}

/* ---- the comparisons: each must fail on a corrupted input ----------- */

static int parse3(const char *a, const char *b, const char *c, char *why,
		  size_t size)
{
	if (kb_memstat_parse(a, strlen(a), &st, why, size) ||
	    kb_memstat_parse(b, strlen(b), &st2, why, size) ||
	    kb_memstat_parse(c, strlen(c), &st3, why, size))
		return -1;
	return 0;
}

static int test_ks_keys_match(char *why, size_t size)
{
	static const struct { const char *out; bool ok; } cases[] = {
		{ "anon 1\nfile 2\n", true },
		{ "anon 1\nfile 2\nshmem 3\n", false },	/* extra key */
		{ "anon 1\n", false },			/* missing key */
		{ "file 2\nanon 1\n", false },		/* other order */
		{ "anon 1\nanon 1\n", false },
		{ "", false },
	};
	char reason[160];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (kb_memstat_parse(cases[i].out, strlen(cases[i].out), &st, why, size))
			return KSFT_FAIL;
		bool ok = !kb_memstat_ks_keys_match(&st, "flush,anon,file", reason,
					    sizeof(reason));

		if (ok && !cases[i].ok)
			return WHY("'%s' accepted", cases[i].out);
		if (!ok && cases[i].ok)
			return WHY("'%s' rejected: %s", cases[i].out, reason);
	}
	return KSFT_PASS;
}

/* A .ks file that never filters prints all of memory.stat: caught. */
static int test_ks_unfiltered_caught(char *why, size_t size)
{
	const char *legacy = "anon 4096\nfile 0\nkernel 8192\nshmem 0\n";
	char reason[160];

	if (kb_memstat_parse(legacy, strlen(legacy), &st, why, size))
		return KSFT_FAIL;
	if (!kb_memstat_ks_keys_match(&st, "flush,anon,file", reason, sizeof(reason)))
		return WHY("the unfiltered output passes the key check");
	if (!kb_memstat_ks_keys_match(&st, "flush,file,anon", reason, sizeof(reason)))
		return WHY("the unfiltered output passes with another order");
	return KSFT_PASS;
}

static int test_value_units(char *why, size_t size)
{
	const unsigned int tol = 1000;	/* 0.1 % */

	if (!kb_memstat_bracketed(8388608, 8388608, 8388608, tol) ||
	    !kb_memstat_bracketed(8390000, 8388608, 8392704, 0) ||
	    !kb_memstat_bracketed(0, 0, 0, tol))
		return WHY("a value inside its bracket rejected");
	/* pages, KiB, bytes x 4096, zero, one page off: all wrong */
	if (kb_memstat_bracketed(2048, 8388608, 8388608, tol) ||
	    kb_memstat_bracketed(8192, 8388608, 8388608, tol) ||
	    kb_memstat_bracketed(8388608ull * 4096, 8388608, 8388608, tol) ||
	    kb_memstat_bracketed(0, 8388608, 8388608, tol) ||
	    kb_memstat_bracketed(4096, 0, 0, tol) ||
	    kb_memstat_bracketed(8388608 + 16384, 8388608, 8388608, tol))
		return WHY("a value in another unit accepted");
	if (!kb_memstat_bracketed(~0ull, ~0ull, ~0ull, 1000000))
		return WHY("the largest value rejected");
	return KSFT_PASS;
}

static int test_ks_values(char *why, size_t size)
{
	char reason[200];

	if (parse3("anon 8392704\nfile 0\n",
		   "anon 8388608\nfile 0\nshmem 0\n",
		   "anon 8396800\nfile 0\nshmem 0\n", why, size))
		return KSFT_FAIL;
	if (kb_memstat_values_bracketed(&st, &st2, &st3, 1000, reason,
					sizeof(reason)))
		return WHY("good values rejected: %s", reason);
	if (parse3("anon 2049\nfile 0\n", "anon 8388608\nfile 0\n",
		   "anon 8388608\nfile 0\n", why, size))
		return KSFT_FAIL;
	if (!kb_memstat_values_bracketed(&st, &st2, &st3, 1000, reason,
					 sizeof(reason)))
		return WHY("a value in pages accepted");
	if (parse3("nokey 1\n", "anon 1\n", "anon 1\n", why, size))
		return KSFT_FAIL;
	if (!kb_memstat_values_bracketed(&st, &st2, &st3, 1000, reason,
					 sizeof(reason)))
		return WHY("a key memory.stat lacks accepted");
	return KSFT_PASS;
}

static int test_same_keys(char *why, size_t size)
{
	if (parse3("anon 1\nfile 2\n", "anon 5\nfile 0\n", "file 2\nanon 1\n",
		   why, size))
		return KSFT_FAIL;
	if (!kb_memstat_same_keys(&st, &st2) || kb_memstat_same_keys(&st, &st3))
		return WHY("key lists compared wrong");
	if (kb_memstat_parse("anon 1\n", 7, &st3, why, size))
		return KSFT_FAIL;
	if (kb_memstat_same_keys(&st, &st3))
		return WHY("a filtered output equals the legacy one");
	return KSFT_PASS;
}

static int numa_sums(const char *numa, const char *before, const char *after,
		     char *reason, size_t rsize)
{
	int lines;

	if (before && (kb_memstat_parse(before, strlen(before), &st2, reason, rsize) ||
		       kb_memstat_parse(after, strlen(after), &st3, reason, rsize)))
		return -2;
	return kb_numastat_check_sums(numa, strlen(numa), before ? &st2 : NULL,
				  before ? &st3 : NULL, 1000, &lines, reason,
				  rsize);
}

static int test_numa_sums_v1(char *why, size_t size)
{
	char reason[200];

	if (numa_sums("total=18432 N0=18000 N1=432\nanon=16384 N0=16384 N1=0\nhierarchical_total=18432 N0=18000 N1=432\n",
		      NULL, NULL, reason, sizeof(reason)))
		return WHY("good lines rejected: %s", reason);
	if (!numa_sums("total=18432 N0=18000 N1=400\n", NULL, NULL, reason,
		       sizeof(reason)))
		return WHY("32 pages missing from a node accepted");
	if (!numa_sums("anon=16384 N0=0 N1=0\n", NULL, NULL, reason,
		       sizeof(reason)))
		return WHY("all-zero nodes accepted");
	if (!numa_sums("total=5 N0=18446744073709551615 N1=6\n", NULL, NULL,
		       reason, sizeof(reason)))
		return WHY("a sum that wraps accepted");
	if (!numa_sums("\n\n", NULL, NULL, reason, sizeof(reason)))
		return WHY("an empty file accepted");
	return KSFT_PASS;
}

static int test_numa_sums_v2(char *why, size_t size)
{
	const char *stat = "anon 75497472\nfile 4096\nkernel 8192\n";
	char reason[200];

	if (numa_sums("anon N0=75493376 N1=4096\nfile N0=4096\nkernel_only N0=5\n",
		      stat, stat, reason, sizeof(reason)))
		return WHY("good lines rejected: %s", reason);
	if (!numa_sums("anon N0=18432 N1=1\nfile N0=4096\n", stat, stat,
		       reason, sizeof(reason)))
		return WHY("anon in pages accepted");
	if (!numa_sums("anon N0=0 N1=0\n", stat, stat, reason, sizeof(reason)))
		return WHY("zero nodes accepted");
	if (!numa_sums("anon N0=75497472 N1=131072\n", stat, stat, reason,
		       sizeof(reason)))
		return WHY("32 extra pages accepted");
	if (!numa_sums("unknown N0=1\n", stat, stat, reason, sizeof(reason)))
		return WHY("no comparable line accepted");
	return KSFT_PASS;
}

#define T(fn)	{ #fn, fn }

static const struct {
	const char *name;
	int (*fn)(char *why, size_t size);
} tests[] = {
	T(test_mountinfo_v1),
	T(test_mountinfo_v2),
	T(test_mountinfo_escapes),
	T(test_mountinfo_malformed),
	T(test_mountinfo_length_bound),
	T(test_mountinfo_long_field),
	T(test_mountinfo_long_other_fs),
	T(test_opt_list),
	T(test_find_cgroups_hybrid),
	T(test_find_cgroups_v2_only),
	T(test_proc_cgroup),
	T(test_proc_cgroup_long_path),
	T(test_own_dirs),
	T(test_stat_v2),
	T(test_stat_v1_big),
	T(test_stat_ks_comments),
	T(test_stat_bad),
	T(test_stat_long_line),
	T(test_stat_length_bound),
	T(test_numa_v1),
	T(test_numa_v2),
	T(test_numa_bad),
	T(test_numa_long_line),
	T(test_ks_keys_match),
	T(test_ks_unfiltered_caught),
	T(test_value_units),
	T(test_ks_values),
	T(test_same_keys),
	T(test_numa_sums_v1),
	T(test_numa_sums_v2),
};

int main(int argc, char **argv)
{
	size_t i;

	kb_init("unit_cgroup", argc, argv);
	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(tests));
	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		char why[512] = "";
		/* KTAP names as before: without the "test_" prefix. */
		const char *name = tests[i].name + strlen("test_");

		kb_ktap_result(tests[i].fn(why, sizeof(why)) == KSFT_PASS, name,
			       why[0] ? why : NULL);
	}
	kb_ktap_finish(NULL);
}
