/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Marks around a measured batch that a QEMU TCG plugin outside the guest
 * can see (kbench where --plugin, scripts/plugin/where_count.c): two long
 * NOPs of kbench's own encoding, "nopl 0x4b42(%eax/%rax)" opens the window
 * and "nopl 0x4b43(...)" closes it. A plugin cannot read registers in
 * QEMU 7.2, but it sees an instruction's bytes when it translates it.
 * Harmless anywhere: a NOP of seven bytes, nothing on other architectures.
 */
#ifndef KBENCH_MARK_H
#define KBENCH_MARK_H

/* Open the plugin's counting window (before the batch's first clock read). */
static inline void kb_mark_open(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__(".byte 0x0f, 0x1f, 0x80, 0x42, 0x4b, 0, 0"
			     ::: "memory");
#endif
}

/* Close it (after the batch's last clock read). */
static inline void kb_mark_close(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__(".byte 0x0f, 0x1f, 0x80, 0x43, 0x4b, 0, 0"
			     ::: "memory");
#endif
}

#endif /* KBENCH_MARK_H */
