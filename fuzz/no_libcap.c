// SPDX-License-Identifier: GPL-2.0
/*
 * The libcap entry points lib/env.c names, for the MemorySanitizer builds
 * of the harnesses, which link no libcap: MSan wants every byte a fuzzed
 * path reads written by instrumented code, and Debian's libcap is not
 * instrumented (what it writes through a pointer would read as never
 * written). The parsers under test never ask for a capability; should a
 * fuzzed path ever reach one of these, it aborts naming it, which is a
 * finding to look at, not a false uninitialized read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/capability.h>

static void not_in_msan_build(const char *fn)
{
	fprintf(stderr, "%s: libcap is not linked into the MSan build, and a fuzzed path called it\n",
		fn);
	abort();
}

cap_t cap_get_proc(void)
{
	not_in_msan_build(__func__);
	return NULL;
}

int cap_get_flag(cap_t caps, cap_value_t cap, cap_flag_t flag,
		 cap_flag_value_t *val)
{
	(void)caps;
	(void)cap;
	(void)flag;
	(void)val;
	not_in_msan_build(__func__);
	return -1;
}

int cap_free(void *p)
{
	(void)p;
	not_in_msan_build(__func__);
	return -1;
}

char *cap_to_name(cap_value_t cap)
{
	(void)cap;
	not_in_msan_build(__func__);
	return NULL;
}
