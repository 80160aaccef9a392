// SPDX-License-Identifier: GPL-2.0
/*
 * A program's start. See kbench.h.
 */
#include "kbench.h"

#include <stdio.h>
#include <string.h>

void kb_init(const char *test, int argc, char **argv)
{
	const char *slash = argc > 0 ? strrchr(argv[0], '/') : NULL;

	setvbuf(stdout, NULL, _IOLBF, 0);
	kb_results_start(test, argc, argv);
	kb_cli_set_prog(slash ? slash + 1 : (argc > 0 ? argv[0] : test));
	kb_cleanup_install();
}
