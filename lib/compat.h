/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every kbench file takes from the kernel's kselftest.h: ARRAY_SIZE,
 * __printf and the KSFT_* codes. A 6.1 tree's kselftest.h has no
 * __printf: there it checks nothing (the build against a 6.12 tree does).
 * kselftest.h's result counters are static, one copy per file: results
 * are printed through ktap.h from the file that calls ksft_finished().
 */
#ifndef KBENCH_COMPAT_H
#define KBENCH_COMPAT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "kselftest.h"

#ifndef __printf
#define __printf(...)
#endif

#endif /* KBENCH_COMPAT_H */
