// SPDX-License-Identifier: GPL-2.0
/*
 * proc_create_true: exit with status 0 at once. Built against the kernel's
 * nolibc (tools/include/nolibc), statically, so that an exec of it costs
 * the kernel's execve() and exit and nothing of a C library's start-up.
 */
int main(void)
{
	return 0;
}
