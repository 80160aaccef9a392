// SPDX-License-Identifier: GPL-2.0
/*
 * The machine and process we run in. See env.h.
 */
#include "env.h"
#include "file.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool kb_env_machine_slow(void)
{
	const char *v = getenv("KSFT_MACHINE_SLOW");

	return v && (!strcmp(v, "yes") || !strcmp(v, "1"));
}

bool kb_env_emulated_guest(void)
{
	const char *v = getenv("KBENCH_GUEST");

	return v && !strcmp(v, "tcg");
}

int kb_env_icount_shift(void)
{
	const char *v = getenv("KBENCH_ICOUNT");
	char *end;
	long shift;

	if (!v || !*v)
		return -1;
	errno = 0;
	shift = strtol(v, &end, 10);
	if (errno || *end || shift < 0 || shift > 10)
		return -1;
	return shift;
}

static bool have_one_cap(cap_value_t cap)
{
	cap_flag_value_t val = CAP_CLEAR;
	cap_t caps = cap_get_proc();

	if (!caps)
		return false;
	if (cap_get_flag(caps, cap, CAP_EFFECTIVE, &val))
		val = CAP_CLEAR;
	cap_free(caps);
	return val == CAP_SET;
}

bool kb_env_have_cap(cap_value_t cap)
{
	if (cap != KB_ENV_CAP_BPF)
		return have_one_cap(cap);
	if (have_one_cap(CAP_SYS_ADMIN))
		return true;
#ifdef CAP_BPF
	return have_one_cap(CAP_BPF) && have_one_cap(CAP_PERFMON);
#else
	return false;
#endif
}

const char *kb_env_cap_name(cap_value_t cap)
{
	static char buf[64];
	char *name;

	if (cap == KB_ENV_CAP_BPF)
		return "CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN";
	name = cap_to_name(cap);
	snprintf(buf, sizeof(buf), "%s", name ? name : "unknown capability");
	for (char *p = buf; *p; p++)
		*p = toupper((unsigned char)*p);
	cap_free(name);
	return buf;
}

/* A seccomp filter (a container's profile) may answer EPERM or ENOSYS. */
bool kb_env_seccomp_filtered(void)
{
	static int cached = -1;
	char buf[4096], *p;

	if (cached < 0) {
		cached = 0;
		if (kb_file_read_all("/proc/self/status", buf, sizeof(buf)) > 0) {
			p = strstr(buf, "\nSeccomp:");
			cached = p && strtol(p + 9, NULL, 10) == 2;
		}
	}
	return cached;
}

/* The initial user namespace maps every uid onto itself. */
bool kb_env_in_child_userns(void)
{
	static int cached = -1;
	unsigned long inside, outside, count;
	char buf[256];

	if (cached < 0) {
		cached = kb_file_read_all("/proc/self/uid_map", buf, sizeof(buf)) > 0 &&
			 (sscanf(buf, "%lu %lu %lu", &inside, &outside, &count) != 3 ||
			  inside || outside || count != 4294967295UL);
	}
	return cached;
}
