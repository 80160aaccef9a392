// SPDX-License-Identifier: GPL-2.0
/*
 * proc_create_true_libc: exit with status 0 at once, as an ordinary
 * dynamically linked glibc program (dynamic loader and libc start-up
 * included), like /bin/true.
 */
int main(void)
{
	return 0;
}
