/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What kind of machine and process we run in: a slow or emulated machine,
 * QEMU's instruction-counting clock, the capabilities we hold (libcap,
 * never the uid), a seccomp filter, a user namespace.
 */
#ifndef KBENCH_ENV_H
#define KBENCH_ENV_H

#include <stdbool.h>
#include <sys/capability.h>

/* KSFT_MACHINE_SLOW=yes (netdev CI, emulated guests): scale work down. */
bool kb_env_machine_slow(void);

/*
 * Running in a guest under software emulation (KBENCH_GUEST=tcg, set by
 * run_all.sh --kernel): timings there are the emulator's, so judgements
 * of timing shape are not made; figures are still reported.
 */
bool kb_env_emulated_guest(void);

/*
 * The shift of QEMU's -icount when it drives this guest's clocks
 * (KBENCH_ICOUNT=SHIFT, set by run_all.sh --kernel ... --icount), else
 * -1. Figures are then exact counts of guest instructions (2^SHIFT per
 * virtual ns), recorded as machine.clock_mode "icount" in the JSON.
 */
int kb_env_icount_shift(void);

/*
 * The capabilities that load and attach a BPF tracing program (iterators
 * are tracing programs): CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN. A
 * pseudo-capability for kb_env_have_cap(), kb_env_cap_name() and the
 * errno rule.
 */
#define KB_ENV_CAP_BPF	(-2)

/* No capability would make the call succeed (the errno rule's @cap). */
#define KB_ENV_NO_CAP	(-1)

/* True when @cap (each of KB_ENV_CAP_BPF's) is in our effective set. */
bool kb_env_have_cap(cap_value_t cap);

/* "CAP_NET_ADMIN"; the pair of KB_ENV_CAP_BPF. */
const char *kb_env_cap_name(cap_value_t cap);

/* A seccomp filter is in force ("Seccomp: 2" in /proc/self/status). */
bool kb_env_seccomp_filtered(void);

/* We run in a user namespace other than the initial one. */
bool kb_env_in_child_userns(void);

#endif /* KBENCH_ENV_H */
