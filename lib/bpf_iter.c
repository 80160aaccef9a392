// SPDX-License-Identifier: GPL-2.0
/*
 * kbench BPF iterators. See bpf_iter.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bpf_iter.h"
#include "env.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef KBENCH_HAVE_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#endif

#define READ_CHUNK	(64 * 1024)

/* Why lib/kbench_bpf.mk left the BPF parts out (it says, when it did). */
#ifndef KBENCH_BPF_WHY
#define KBENCH_BPF_WHY	"install clang bpftool libbpf-dev and rebuild"
#endif

bool kb_bpf_iter_built(void)
{
#ifdef KBENCH_HAVE_BPF
	return true;
#else
	return false;
#endif
}

int kb_bpf_iter_usable(char *why, size_t whylen)
{
	if (!kb_bpf_iter_built()) {
		snprintf(why, whylen, "built without BPF support (%s)",
			 KBENCH_BPF_WHY);
		return -EOPNOTSUPP;
	}
	/* An invalid command: EINVAL when bpf() exists, ENOSYS when not. */
	if (syscall(__NR_bpf, -1, NULL, 0) < 0 && errno == ENOSYS) {
		snprintf(why, whylen, "kernel has no bpf() syscall (CONFIG_BPF_SYSCALL off)");
		return -EOPNOTSUPP;
	}
	if (access(KB_BPF_ITER_BTF_VMLINUX, R_OK)) {
		snprintf(why, whylen, "kernel has no BTF: %s missing (CONFIG_DEBUG_INFO_BTF off)",
			 KB_BPF_ITER_BTF_VMLINUX);
		return -ENOENT;
	}
	if (!kb_env_have_cap(KB_ENV_CAP_BPF)) {
		snprintf(why, whylen, "BPF iterators need %s",
			 kb_env_cap_name(KB_ENV_CAP_BPF));
		return -EPERM;
	}
	return 0;
}

#ifdef KBENCH_HAVE_BPF

/* libbpf's print callback has no user pointer: the last warning lives here. */
static char last_warning[256];

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	va_list copy;

	if (level == LIBBPF_WARN) {
		va_copy(copy, ap);
		vsnprintf(last_warning, sizeof(last_warning), fmt, copy);
		va_end(copy);
		last_warning[strcspn(last_warning, "\n")] = '\0';
	}
	if (getenv("KBENCH_BPF_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

void kb_bpf_iter_quiet_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}

long kb_bpf_iter_read(int link_fd, struct kb_bpf_iter_buf *buf)
{
	int fd = bpf_iter_create(link_fd);
	ssize_t got;
	char *p;

	if (fd < 0)
		return fd;
	buf->len = 0;
	for (;;) {
		if (buf->cap - buf->len < READ_CHUNK) {
			p = realloc(buf->data, buf->cap + 4 * READ_CHUNK);
			if (!p) {
				close(fd);
				return -ENOMEM;
			}
			buf->data = p;
			buf->cap += 4 * READ_CHUNK;
		}
		got = read(fd, buf->data + buf->len, buf->cap - buf->len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		buf->len += got;
	}
	if (got < 0)
		got = -errno;
	close(fd);
	return got < 0 ? got : (long)buf->len;
}

#else /* !KBENCH_HAVE_BPF */

void kb_bpf_iter_quiet_libbpf(void)
{
}

long kb_bpf_iter_read(int link_fd, struct kb_bpf_iter_buf *buf)
{
	(void)link_fd;
	(void)buf;
	return -EOPNOTSUPP;
}

static char last_warning[1];

#endif

void kb_bpf_iter_load_reason(int err, const char *what, char *why,
			     size_t whylen)
{
	bool caps = kb_env_have_cap(KB_ENV_CAP_BPF);
	char hint[128] = "";

	/* The verifier answers EACCES too: a capable caller was rejected. */
	if ((err == -EPERM || err == -EACCES) && !caps)
		snprintf(hint, sizeof(hint), " (needs %s)", kb_env_cap_name(KB_ENV_CAP_BPF));
	else if (err == -EPERM)
		snprintf(hint, sizeof(hint), " (refused despite %s: lockdown, an LSM or a user namespace?)",
			 kb_env_cap_name(KB_ENV_CAP_BPF));
	else if (err == -ENOENT || err == -ESRCH)
		snprintf(hint, sizeof(hint), " (the kernel lacks a type, iterator target or kfunc the program needs)");
	else if (err == -EINVAL || err == -EACCES)
		snprintf(hint, sizeof(hint), " (rejected by the verifier or an unsupported iterator)");
	snprintf(why, whylen, "%s: %s%s%s%s", what, strerror(-err), hint,
		 last_warning[0] ? "; libbpf: " : "", last_warning);
}

void kb_bpf_iter_buf_free(struct kb_bpf_iter_buf *buf)
{
	free(buf->data);
	buf->data = NULL;
	buf->len = buf->cap = 0;
}
