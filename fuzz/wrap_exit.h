/* SPDX-License-Identifier: GPL-2.0 */
/*
 * exit() wrapped by the linker (-Wl,--wrap=exit): a harness whose code
 * under test ends in exit() (a usage error) defines __wrap_exit() to
 * catch that, and calls __real_exit() for everyone else's exit().
 */
#ifndef KBENCH_FUZZ_WRAP_EXIT_H
#define KBENCH_FUZZ_WRAP_EXIT_H

void __real_exit(int status);
void __wrap_exit(int status);

#endif /* KBENCH_FUZZ_WRAP_EXIT_H */
