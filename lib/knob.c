// SPDX-License-Identifier: GPL-2.0
/*
 * Knobs restored at exit. See knob.h.
 */
#include "knob.h"
#include "cleanup.h"
#include "file.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

struct saved_knob {
	char path[PATH_MAX];
	char value[256];
};

static void restore_knob(void *arg)
{
	struct saved_knob *k = arg;

	kb_file_write_str(k->path, k->value);
}

int kb_knob_set(const char *path, const char *value)
{
	struct saved_knob *k = calloc(1, sizeof(*k));
	int err;

	if (!k)
		return -ENOMEM;
	snprintf(k->path, sizeof(k->path), "%s", path);
	err = kb_file_read(path, k->value, sizeof(k->value));
	if (!err)
		err = kb_file_write_str(path, value);
	if (err) {
		free(k);
		return err;
	}
	if (kb_cleanup_push(restore_knob, k) < 0) {
		restore_knob(k);
		free(k);
		return -ENOSPC;
	}
	return 0;
}
