/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kbench BPF iterators: can this kernel and this caller run them (with the
 * reason when not), libbpf quieted unless KBENCH_BPF_DEBUG is set, and
 * one read of an attached iterator into a growing buffer. The programs
 * themselves are libbpf skeletons built by lib/kbench_bpf.mk; without the
 * BPF toolchain at build time everything here reports that reason.
 */
#ifndef KBENCH_BPF_ITER_H
#define KBENCH_BPF_ITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KB_BPF_ITER_BTF_VMLINUX	"/sys/kernel/btf/vmlinux"

/* True when the program was built with its BPF parts. */
bool kb_bpf_iter_built(void);

/*
 * 0 when this caller can load and run tracing-type BPF programs (iterators)
 * on this kernel; else -errno and the reason in @why: built without BPF,
 * no bpf() syscall (CONFIG_BPF_SYSCALL), no kernel BTF
 * (CONFIG_DEBUG_INFO_BTF), or neither CAP_BPF+CAP_PERFMON nor
 * CAP_SYS_ADMIN.
 */
int kb_bpf_iter_usable(char *why, size_t whylen);

/*
 * Route libbpf's messages: kept (the last warning is used by
 * kb_bpf_iter_load_reason) and printed only when KBENCH_BPF_DEBUG is set.
 */
void kb_bpf_iter_quiet_libbpf(void);

/*
 * A reason for a failed open/load/attach of @what (-errno @err), naming
 * the kernel feature when the error says which (EPERM, ENOENT for a
 * missing iterator target or kfunc, EINVAL from the verifier).
 */
void kb_bpf_iter_load_reason(int err, const char *what, char *why,
			     size_t whylen);

struct kb_bpf_iter_buf {
	char *data;
	size_t len;
	size_t cap;
};

/*
 * Create an iterator from @link_fd and read it to its end into @buf
 * (grown as needed). Returns the bytes read or -errno.
 */
long kb_bpf_iter_read(int link_fd, struct kb_bpf_iter_buf *buf);

void kb_bpf_iter_buf_free(struct kb_bpf_iter_buf *buf);

#endif /* KBENCH_BPF_ITER_H */
