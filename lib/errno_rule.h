/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Skip or fail: the one rule that tells from an errno whether the
 * environment lacks something (the test SKIPs) or the kernel misbehaved
 * (it FAILs). The capability arguments are capabilities, KB_ENV_CAP_BPF
 * or KB_ENV_NO_CAP (env.h).
 */
#ifndef KBENCH_ERRNO_RULE_H
#define KBENCH_ERRNO_RULE_H

#include <stdbool.h>
#include <stddef.h>

#include "env.h"

/*
 * Whether the error @err (an errno, either sign) says that the environment
 * lacks something. The environment lacks it when:
 *  - ENOSYS, EOPNOTSUPP (= ENOTSUP): the kernel has no such call or mode;
 *  - EROFS: the file system was mounted read-only (a container's /sys or
 *    /proc/sys): whoever set the machine up decided, not the kernel;
 *  - EPERM, EACCES: only when @cap is one this process does not have in
 *    its effective set, when a seccomp filter is in force (a container's
 *    profile answers EPERM for calls it blocks), or when the process runs
 *    in a user namespace other than the initial one (the kernel checks
 *    most capabilities against the initial namespace, where such a
 *    process has none).
 * Everything else (EINVAL, ENOSPC, ENOMEM, EAGAIN, ENOENT, ...) is a
 * failure: a kernel that leaks ids until ENOSPC must not turn green.
 *
 * The rule has two named extensions, for the calls whose absence the
 * kernel reports with another errno; nothing else in kbench decides skip
 * or fail from an errno:
 *  - kb_errno_lookup_is_environment(): resolving a kernel interface by
 *    name (a genetlink family, a /proc file only some kernels have);
 *  - kb_errno_bpf_is_environment(): opening, loading or attaching one of
 *    kbench's BPF programs.
 */
bool kb_errno_is_environment(int err, int cap);

/*
 * The rule, extended for looking up a kernel interface by name: ENOENT
 * then means that this kernel has no such interface (CONFIG_TASKSTATS off,
 * no /proc/taskstats), also the environment's.
 */
bool kb_errno_lookup_is_environment(int err, int cap);

/*
 * The rule, extended for a BPF program's open, load or attach (libbpf's
 * -errno), with KB_ENV_CAP_BPF as the capability: the lookup extension's
 * ENOENT (no kernel BTF, or a BTF type or iterator target this kernel
 * lacks), and ESRCH (libbpf: a kfunc or ksym the kernel's BTF lacks).
 * A verifier rejection (EINVAL, EACCES with every capability) or a
 * malformed object (EBADMSG...) is a failure of our program.
 */
bool kb_errno_bpf_is_environment(int err);

/*
 * Fill @buf with "WHAT: strerror (ENAME)" and, when the error is the
 * environment's, what it lacks ("needs CAP_X", "not supported by this
 * kernel"). Returns kb_errno_is_environment(err, cap).
 */
bool kb_errno_explain(int err, int cap, const char *what, char *buf,
		      size_t len);

/*
 * A test's verdict on a failed call: KSFT_SKIP when the environment lacks
 * something, KSFT_FAIL otherwise, @reason filled by kb_errno_explain().
 */
int kb_errno_result(int err, int cap, const char *what, char *reason,
		    size_t len);

#endif /* KBENCH_ERRNO_RULE_H */
