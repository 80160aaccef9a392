// SPDX-License-Identifier: GPL-2.0
/*
 * kbench child processes. See children.h.
 */
#include "children.h"
#include "cleanup.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void kill_all_cb(void *arg)
{
	kb_children_kill_all(arg);
}

static int track(struct kb_children *c, pid_t pid)
{
	pid_t *p;

	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;

		p = realloc(c->pids, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		c->pids = p;
		c->cap = cap;
	}
	c->pids[c->n++] = pid;
	return 0;
}

static int register_cleanup(struct kb_children *c)
{
	if (c->registered)
		return 0;
	c->cleanup = kb_cleanup_push(kill_all_cb, c);
	if (c->cleanup < 0)
		return -ENOSPC;
	c->registered = true;
	return 0;
}

/* In the child: die with the parent, even if it is already gone. */
static void child_setup(pid_t parent)
{
	sigset_t none;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/*
 * Fork with the cleanup signals blocked, so that a SIGTERM cannot arrive
 * between the fork and the bookkeeping that lets the handler kill it.
 */
static pid_t fork_tracked(struct kb_children *c)
{
	pid_t parent = getpid(), pid;
	int err;

	kb_cleanup_block_signals();
	pid = fork();
	if (pid == 0) {
		child_setup(parent);
		return 0;
	}
	if (pid < 0) {
		err = -errno;
		kb_cleanup_unblock_signals();
		return err;
	}
	err = track(c, pid);
	if (err) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	kb_cleanup_unblock_signals();
	return err ? err : pid;
}

static void sleeper_main(const char *comm)
{
	if (comm)
		prctl(PR_SET_NAME, comm);
	for (;;)
		pause();
}

int kb_children_spawn(struct kb_children *c, size_t n, const char *comm)
{
	size_t i;
	pid_t pid;
	int err = register_cleanup(c);

	for (i = 0; !err && i < n; i++) {
		pid = fork_tracked(c);
		if (pid == 0)
			sleeper_main(comm);
		if (pid < 0)
			err = pid;
	}
	return err;
}

pid_t kb_children_fork(struct kb_children *c, int (*fn)(void *arg),
		       void *arg)
{
	int err = register_cleanup(c);
	pid_t pid;

	if (err)
		return err;
	pid = fork_tracked(c);
	if (pid == 0)
		_exit(fn(arg));
	return pid;
}

void kb_children_forget(struct kb_children *c, pid_t pid)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		if (c->pids[i] == pid) {
			c->pids[i] = c->pids[--c->n];
			return;
		}
	}
}

void kb_children_kill_all(struct kb_children *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		kill(c->pids[i], SIGKILL);
	for (i = 0; i < c->n; i++)
		while (waitpid(c->pids[i], NULL, 0) < 0 && errno == EINTR)
			;
	c->n = 0;
}

void kb_children_release(struct kb_children *c)
{
	kb_children_kill_all(c);
	if (c->registered)
		kb_cleanup_pop(c->cleanup, false);
	c->registered = false;
	free(c->pids);
	c->pids = NULL;
	c->cap = 0;
}

bool kb_children_none_left(void)
{
	return waitpid(-1, NULL, WNOHANG | __WALL) < 0 && errno == ECHILD;
}
