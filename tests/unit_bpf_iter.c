// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/bpf_iter.c and the BPF loaders as tests/run.sh builds
 * them, without the BPF toolchain: every entry point must report "built
 * without BPF support" as a reason for a SKIP, never crash or pass.
 */
#include <errno.h>
#include <string.h>

#include "bpf_iter.h"
#include "ktap.h"
#include "memcg_bpf.h"
#include "taskstats_bpf.h"

static char why[256];

static void test_usable_says_why(void)
{
	int err = kb_bpf_iter_usable(why, sizeof(why));

	kb_ktap_result(!kb_bpf_iter_built() && err == -EOPNOTSUPP &&
		       strstr(why, "built without BPF support") &&
		       kb_errno_bpf_is_environment(err),
		       "usable_without_bpf_is_a_skip", why);
}

static void test_loaders_skip(void)
{
	uint64_t load_ns = 1;
	int err = 0;

	why[0] = '\0';
	kb_ktap_result(!kb_ts_bpf_open("kb_sleeper", &load_ns, &err, why, sizeof(why)) &&
		       err == -EOPNOTSUPP && load_ns == 0 && why[0],
		       "task_iterator_open_skips", why);
	why[0] = '\0';
	load_ns = 1;
	kb_ktap_result(!kb_memcg_bpf_open("/sys/fs/cgroup", true, &load_ns, &err, why,
					  sizeof(why)) &&
		       err == -EOPNOTSUPP && load_ns == 0 && why[0],
		       "cgroup_iterator_open_skips", why);
}

static void test_error_classes(void)
{
	/* EPERM/EACCES: the one rule, with KB_ENV_CAP_BPF as the capability. */
	bool perm_env = kb_errno_is_environment(-EPERM, KB_ENV_CAP_BPF);

	kb_ktap_result(kb_errno_bpf_is_environment(-EPERM) == perm_env &&
		       kb_errno_bpf_is_environment(-EACCES) == perm_env &&
		       kb_errno_bpf_is_environment(-ENOENT) &&
		       kb_errno_bpf_is_environment(ESRCH) &&
		       kb_errno_bpf_is_environment(-EOPNOTSUPP) &&
		       !kb_errno_bpf_is_environment(-EINVAL) &&
		       !kb_errno_bpf_is_environment(-EBADF) &&
		       !kb_errno_bpf_is_environment(-EBADMSG),
		       "verifier_rejection_is_a_failure", NULL);
}

static void test_load_reason(void)
{
	kb_bpf_iter_load_reason(-EPERM, "loading X", why, sizeof(why));
	kb_ktap_result(!strncmp(why, "loading X: ", 11) && strstr(why, "CAP_BPF"),
		       "load_reason_names_the_capability", why);
}

int main(int argc, char **argv)
{
	kb_init("unit_bpf_iter", argc, argv);
	ksft_print_header();
	ksft_set_plan(5);
	test_usable_says_why();
	test_loaders_skip();
	test_error_classes();
	test_load_reason();
	kb_ktap_finish(NULL);
}
