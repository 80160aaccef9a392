// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: the /proc text decoders of lib/proc.c:
 * kb_proc_stat_parse() and kb_proc_stat_is_pid() (stat),
 * kb_proc_comm_contains() (comm), kb_proc_status_parse() (status) and
 * kb_proc_loadavg_threads() (/proc/loadavg). The input is the file's text;
 * the stat and loadavg parsers get it NUL-terminated as their readers
 * pass it, the others an exact-length copy (a read that filled its
 * buffer leaves no NUL behind the text).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "children.h"
#include "proc.h"

static void taskstats_readers(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	struct kb_proc_task p;

	if (!buf)
		return;
	memcpy(buf, data, size);
	kb_proc_stat_is_pid(buf, (ssize_t)size, 1);
	kb_proc_comm_contains(buf, (ssize_t)size, "taskstats");
	kb_proc_status_parse(buf, size, &p);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kb_proc_stat st;
	char *text;

	taskstats_readers(data, size);
	/* kb_proc_stat_read() reads at most 1023 bytes. */
	if (size > 1023)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	kb_proc_loadavg_threads(text);
	if (kb_proc_stat_parse(text, &st) == 0 &&
	    memchr(st.comm, '\0', sizeof(st.comm)) == NULL)
		abort();
	free(text);
	return 0;
}
