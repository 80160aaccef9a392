// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: kb_proc_stat_parse(), the /proc/PID/stat decoder.
 * The input is the file's text (the reader NUL-terminates what it read).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kbench.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kb_proc_stat st;
	char *text;

	/* kb_proc_stat_read() reads at most 1023 bytes. */
	if (size > 1023)
		return -1;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (kb_proc_stat_parse(text, &st) == 0 &&
	    memchr(st.comm, '\0', sizeof(st.comm)) == NULL)
		abort();
	free(text);
	return 0;
}
