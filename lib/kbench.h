/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Everything a kbench program includes, one header per topic (each
 * topic's functions start with kb_ and the header's name), and
 * kb_init(), a program's start. KTAP results come from ktap.h, which
 * includes this.
 */
#ifndef KBENCH_H
#define KBENCH_H

#include "compat.h"
#include "children.h"
#include "cleanup.h"
#include "cli.h"
#include "clock.h"
#include "env.h"
#include "errno_rule.h"
#include "file.h"
#include "json.h"
#include "knob.h"
#include "proc.h"
#include "results.h"
#include "settle.h"
#include "stats.h"
#include "test.h"

/*
 * Start the program @test (the collection's stable program name,
 * "syscall_overhead"): its results document, its name in messages
 * (argv[0]'s last part), stdout line buffered (output is read through
 * pipes and children are forked) and the cleanup signal handlers.
 */
void kb_init(const char *test, int argc, char **argv);

#endif /* KBENCH_H */
