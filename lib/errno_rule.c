// SPDX-License-Identifier: GPL-2.0
/*
 * Skip or fail from an errno. See errno_rule.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "errno_rule.h"
#include "compat.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static bool lacks_cap(int cap)
{
	return cap != KB_ENV_NO_CAP && !kb_env_have_cap((cap_value_t)cap);
}

bool kb_errno_is_environment(int err, int cap)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case ENOSYS:
	case EOPNOTSUPP:
	case EROFS:
		return true;
	case EPERM:
	case EACCES:
		return lacks_cap(cap) || kb_env_seccomp_filtered() ||
		       kb_env_in_child_userns();
	default:
		return false;
	}
}

bool kb_errno_lookup_is_environment(int err, int cap)
{
	return err == ENOENT || err == -ENOENT ||
	       kb_errno_is_environment(err, cap);
}

bool kb_errno_bpf_is_environment(int err)
{
	return err == ESRCH || err == -ESRCH ||
	       kb_errno_lookup_is_environment(err, KB_ENV_CAP_BPF);
}

/* What the environment lacks, for an error that is its. */
static const char *lacking(int err, int cap, char *need, size_t size)
{
	if (err == ENOSYS || err == EOPNOTSUPP)
		return ": not supported by this kernel";
	if (err == EROFS)
		return ": mounted read-only here";
	if (lacks_cap(cap)) {
		snprintf(need, size, ": needs %s", kb_env_cap_name(cap));
		return need;
	}
	if (kb_env_seccomp_filtered())
		return ": refused by a seccomp filter";
	return ": refused in a user namespace (capabilities there do not count)";
}

bool kb_errno_explain(int err, int cap, const char *what, char *buf,
		      size_t len)
{
	bool env = kb_errno_is_environment(err, cap);
	const char *ename;
	char need[96] = "";

	if (err < 0)
		err = -err;
	ename = strerrorname_np(err);
	snprintf(buf, len, "%s: %s (%s)%s", what, strerror(err),
		 ename ? ename : "?",
		 env ? lacking(err, cap, need, sizeof(need)) : "");
	return env;
}

int kb_errno_result(int err, int cap, const char *what, char *reason,
		    size_t len)
{
	return kb_errno_explain(err, cap, what, reason, len) ? KSFT_SKIP :
							       KSFT_FAIL;
}
