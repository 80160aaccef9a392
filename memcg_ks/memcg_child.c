// SPDX-License-Identifier: GPL-2.0
/*
 * memcg_ks: the helper child, which allocates and frees memory on
 * request inside the cgroup read, so that its counters move.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <numa.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memcg_ks.h"

/* ---- the helper child: allocates and frees memory on request ----------- */

struct child_req {
	char cmd;
	int node;
	unsigned long long size;
};

static void *touch_new(size_t size, int node)
{
	char *p;
	size_t i;

	if (node >= 0) {
		p = numa_alloc_onnode(size, node);
		if (!p)
			return NULL;
	} else {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
	}
	/* Base pages only: v1 "rss" and v2 "anon" then move by exactly this. */
	madvise(p, size, MADV_NOHUGEPAGE);
	for (i = 0; i < size; i += 4096)
		p[i] = 1;
	return p;
}

struct child_block {
	void *p;
	size_t size;
	bool numa;
};

static int child_serve(struct child_block *stack, int *depth,
		       const struct child_req *req)
{
	struct child_block *b;
	int node;

	if (req->cmd == CHILD_FREE) {
		if (*depth > 0) {
			b = &stack[--*depth];
			if (b->numa)
				numa_free(b->p, b->size);
			else
				munmap(b->p, b->size);
		}
		return 0;
	}
	if (*depth == CHILD_DEPTH)
		return -ENOSPC;
	node = req->cmd == CHILD_ALLOC_NODE ? req->node : -1;
	b = &stack[*depth];
	b->p = touch_new(req->size, node);
	if (!b->p)
		return errno ? -errno : -ENOMEM;
	b->size = req->size;
	b->numa = node >= 0;
	++*depth;
	return 0;
}

static void child_loop(int req_fd, int ack_fd)
{
	struct child_block stack[CHILD_DEPTH];
	struct child_req req;
	int depth = 0, ret;

	while (read(req_fd, &req, sizeof(req)) == sizeof(req)) {
		ret = child_serve(stack, &depth, &req);
		if (write(ack_fd, &ret, sizeof(ret)) != sizeof(ret))
			break;
	}
	_exit(0);
}

/* Cleanup handler: signal-safe. */
void child_kill(void *arg)
{
	struct child *ch = arg;

	if (ch->pid > 0) {
		kill(ch->pid, SIGKILL);
		waitpid(ch->pid, NULL, 0);
		ch->pid = -1;
	}
}

static int child_start(struct child *ch)
{
	int req[2], ack[2];
	pid_t parent = getpid();

	if (pipe2(req, O_CLOEXEC))
		return -errno;
	if (pipe2(ack, O_CLOEXEC)) {
		close(req[0]);
		close(req[1]);
		return -errno;
	}
	kb_cleanup_block_signals();
	ch->pid = fork();
	if (ch->pid == 0) {
		kb_cleanup_unblock_signals();
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		close(req[1]);
		close(ack[0]);
		child_loop(req[0], ack[1]);
	}
	if (ch->pid > 0)
		kb_cleanup_push(child_kill, ch);
	kb_cleanup_unblock_signals();
	close(req[0]);
	close(ack[1]);
	if (ch->pid < 0) {
		close(req[1]);
		close(ack[0]);
		return -errno;
	}
	ch->req_fd = req[1];
	ch->ack_fd = ack[0];
	return 0;
}

/* Send one request; returns the child's answer: 0 or -errno. */
int child_do(struct child *ch, char cmd, unsigned long long size,
	     int node)
{
	struct child_req req = { .cmd = cmd, .node = node, .size = size };
	int ret;

	if (ch->req_fd < 0)
		return -ECHILD;
	if (write(ch->req_fd, &req, sizeof(req)) != sizeof(req))
		return -EPIPE;
	if (read(ch->ack_fd, &ret, sizeof(ret)) != sizeof(ret))
		return -EPIPE;
	return ret;
}

/* Start the allocating child and put it where we read. */
void place_child(struct memcg_ctx *c)
{
	struct child *ch = &c->child;
	char procs[PATH_MAX + 64], why[256];
	int err = child_start(ch);

	ch->verdict = KSFT_SKIP;
	if (err) {
		ch->verdict = kb_errno_result(err, KB_ENV_NO_CAP,
					      "cannot fork the allocating child",
					      ch->skip, sizeof(ch->skip));
		return;
	}
	/* Reading our own memory cgroup: the child is in it already. */
	if (reads_inherited_cgroup(c))
		return;
	cg_file(c, procs, sizeof(procs), "cgroup.procs");
	if (!c->own_cgroup && !kb_cgroup_may_write(procs, why, sizeof(why))) {
		snprintf(ch->skip, sizeof(ch->skip),
			 "cannot move the allocating child into %.300s: %.400s",
			 c->dir, why);
		return;
	}
	err = kb_cgroup_move(c->dir, ch->pid);
	if (err) {
		snprintf(why, sizeof(why), "cannot move the allocating child into %.200s",
			 c->dir);
		ch->verdict = kb_errno_result(err, CAP_DAC_OVERRIDE, why,
					      ch->skip, sizeof(ch->skip));
	}
}

/* The checks that need the child: SKIP or FAIL with its reason, or 0. */
int child_unusable(const struct memcg_ctx *c, char *why, size_t size)
{
	if (!c->child.skip[0])
		return 0;
	snprintf(why, size, "%s", c->child.skip);
	return c->child.verdict;
}
