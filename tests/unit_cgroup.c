// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the pure parsers in lib/cgroup.c, on built-in text:
 * mountinfo lines, /proc/self/cgroup, memory.stat and memory.numa_stat.
 */
#include <errno.h>
#include <string.h>

#include "cgroup.h"
#include "kbench_ktap.h"

static struct kb_mount m;
static struct kb_stat st;

static void test_mountinfo_v1(void)
{
	const char *line = "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:12 - cgroup cgroup rw,memory\n";

	kb_result(!kb_mountinfo_parse_line(line, &m) &&
		  !strcmp(m.root, "/") &&
		  !strcmp(m.point, "/sys/fs/cgroup/memory") &&
		  !strcmp(m.fstype, "cgroup") &&
		  !strcmp(m.super_opts, "rw,memory"),
		  "mountinfo_v1_line", m.point);
}

static void test_mountinfo_v2_no_optional(void)
{
	const char *line = "32 26 0:26 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw,nsdelegate";

	kb_result(!kb_mountinfo_parse_line(line, &m) &&
		  !strcmp(m.point, "/sys/fs/cgroup") &&
		  !strcmp(m.fstype, "cgroup2") &&
		  !strcmp(m.super_opts, "rw,nsdelegate"),
		  "mountinfo_v2_line", m.point);
}

static void test_mountinfo_escapes(void)
{
	const char *line = "40 31 0:40 /sub\\040dir /mnt/my\\040cg\\011x rw shared:1 master:2 - cgroup2 none rw";

	kb_result(!kb_mountinfo_parse_line(line, &m) &&
		  !strcmp(m.root, "/sub dir") &&
		  !strcmp(m.point, "/mnt/my cg\tx") &&
		  !strcmp(m.fstype, "cgroup2"),
		  "mountinfo_escapes_and_optional_fields", m.point);
}

static void test_mountinfo_malformed(void)
{
	static const char *const bad[] = {
		"",
		"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:12 cgroup cgroup rw",
		"35 31 0:32 / /x rw -",
		"35 31 032 / /x rw - cgroup cgroup rw",
		"35 31",
		NULL,
	};
	bool ok = true;
	int i;

	for (i = 0; bad[i]; i++)
		if (kb_mountinfo_parse_line(bad[i], &m) != -EINVAL)
			ok = false;
	kb_result(ok, "mountinfo_malformed_rejected", bad[i]);
}

static void test_opt_list(void)
{
	kb_result(kb_opt_list_has("rw,memory", "memory") &&
		  kb_opt_list_has("memory", "memory") &&
		  !kb_opt_list_has("rw,memory_x", "memory") &&
		  !kb_opt_list_has("rw,xmemory", "memory") &&
		  !kb_opt_list_has("", "memory") &&
		  kb_opt_list_has("cpu,cpuacct", "cpuacct"),
		  "opt_list_has", NULL);
}

static void test_find_cgroups_hybrid(void)
{
	const char *text =
		"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
		"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
		"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
		"40 31 0:37 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,name=systemd\n"
		"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
	char v2[64], v1[64];
	int n = kb_mountinfo_find_cgroups(text, v2, sizeof(v2), v1, sizeof(v1));

	kb_result(n == 2 && !strcmp(v2, "/sys/fs/cgroup/unified") &&
		  !strcmp(v1, "/sys/fs/cgroup/memory"),
		  "find_cgroups_hybrid", v1);
}

static void test_find_cgroups_v2_only(void)
{
	const char *text =
		"22 1 0:20 / /proc rw - proc proc rw\n"
		"garbage line\n"
		"32 26 0:26 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw";
	char v2[64], v1[64];
	int n = kb_mountinfo_find_cgroups(text, v2, sizeof(v2), v1, sizeof(v1));

	kb_result(n == 1 && !strcmp(v2, "/sys/fs/cgroup") && !v1[0],
		  "find_cgroups_v2_only", v2);
}

static void test_proc_cgroup(void)
{
	const char *text =
		"12:pids:/user.slice\n"
		"4:cpu,memory:/kb/test\n"
		"1:name=systemd:/init.scope\n"
		"0::/system.slice/x.service\n";
	char v1[64] = "", v2[64] = "";
	bool ok;

	ok = !kb_proc_cgroup_path(text, KB_CGROUP_V1, "memory", v1, sizeof(v1)) &&
	     !strcmp(v1, "/kb/test") &&
	     !kb_proc_cgroup_path(text, KB_CGROUP_V2, NULL, v2, sizeof(v2)) &&
	     !strcmp(v2, "/system.slice/x.service") &&
	     kb_proc_cgroup_path("3:cpu:/\n", KB_CGROUP_V1, "memory", v1,
				 sizeof(v1)) == -ENOENT;
	kb_result(ok, "proc_cgroup_path", v1);
}

static void test_stat_v2(void)
{
	const char *text = "anon 13660160\nfile 8417280\nkernel 0\n\npgfault 123\n";
	unsigned long long v = 0;
	char why[128] = "";

	kb_result(!kb_stat_parse(text, &st, why, sizeof(why)) && st.n == 4 &&
		  kb_stat_get(&st, "file", &v) && v == 8417280 &&
		  !kb_stat_get(&st, "slab", NULL) &&
		  !strcmp(st.e[3].key, "pgfault"),
		  "stat_parse_v2", why);
}

static void test_stat_v1_big(void)
{
	const char *text = "cache 10207232\nhierarchical_memory_limit 9223372036854771712\ntotal_rss 20226048";
	unsigned long long v = 0;
	char why[128] = "";

	kb_result(!kb_stat_parse(text, &st, why, sizeof(why)) && st.n == 3 &&
		  kb_stat_get(&st, "hierarchical_memory_limit", &v) &&
		  v == 9223372036854771712ull,
		  "stat_parse_v1_large_value", why);
}

static void test_stat_ks_comments(void)
{
	const char *text = "# Mode: BTF query (2 fields)\nanon 12\nfile 3\n# kserial_time_ns 812\n";
	char why[128] = "";

	kb_result(!kb_stat_parse(text, &st, why, sizeof(why)) && st.n == 2 &&
		  st.comments == 2,
		  "stat_parse_ks_comments", why);
}

static void test_stat_bad(void)
{
	static const char *const bad[] = {
		"anon -5\n",
		"anon\n",
		"anon 5 6\n",
		"anon 5x\n",
		"anon 99999999999999999999999\n",
		"anon 0x10\n",
		NULL,
	};
	char why[128];
	bool ok = true;
	int i;

	for (i = 0; bad[i]; i++)
		if (kb_stat_parse(bad[i], &st, why, sizeof(why)) != -EINVAL)
			ok = false;
	kb_result(ok, "stat_parse_bad_lines_rejected", bad[i]);
}

static void test_numa_v1(void)
{
	struct kb_numa_line l;
	unsigned long long v = 0;

	kb_result(!kb_numa_line_parse("hierarchical_total=133803 N0=133000 N1=803", &l) &&
		  !strcmp(l.key, "hierarchical_total") && l.has_total &&
		  l.total == 133803 && l.nnodes == 2 &&
		  kb_numa_line_sum(&l) == 133803 &&
		  kb_numa_line_node(&l, 1, &v) && v == 803 &&
		  !kb_numa_line_node(&l, 2, &v),
		  "numa_line_v1", l.key);
}

static void test_numa_v2(void)
{
	struct kb_numa_line l;

	kb_result(!kb_numa_line_parse("anon N0=4096 N3=8192\n", &l) &&
		  !strcmp(l.key, "anon") && !l.has_total && l.nnodes == 2 &&
		  l.node[1] == 3 && kb_numa_line_sum(&l) == 12288,
		  "numa_line_v2", l.key);
}

static void test_numa_bad(void)
{
	static const char *const bad[] = {
		"", "anon", "anon N0=", "anon X0=5", "anon N=5", "total=x N0=1",
		"anon N0=-1", "=5 N0=5", NULL,
	};
	struct kb_numa_line l;
	bool ok = true;
	int i;

	for (i = 0; bad[i]; i++)
		if (!kb_numa_line_parse(bad[i], &l))
			ok = false;
	kb_result(ok, "numa_line_bad_rejected", NULL);
}

int main(int argc, char **argv)
{
	kb_init("unit_cgroup", argc, argv);
	ksft_print_header();
	ksft_set_plan(16);
	test_mountinfo_v1();
	test_mountinfo_v2_no_optional();
	test_mountinfo_escapes();
	test_mountinfo_malformed();
	test_opt_list();
	test_find_cgroups_hybrid();
	test_find_cgroups_v2_only();
	test_proc_cgroup();
	test_stat_v2();
	test_stat_v1_big();
	test_stat_ks_comments();
	test_stat_bad();
	test_numa_v1();
	test_numa_v2();
	test_numa_bad();
	kb_result(kb_opt_list_has("a,b,c", "c"), "opt_list_last_word", NULL);
	kb_finish(NULL);
}
