// SPDX-License-Identifier: GPL-2.0
/*
 * The cleanup stack. See cleanup.h.
 */
#include "cleanup.h"
#include "compat.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_CLEANUPS	64

static struct {
	void (*fn)(void *arg);
	void *arg;
	pid_t owner;
	volatile sig_atomic_t active;
} cleanups[MAX_CLEANUPS];
static int ncleanups;

static const int cleanup_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static void run_one(int i)
{
	/* A forked child inherits the table but owns none of it. */
	if (!cleanups[i].active || cleanups[i].owner != getpid())
		return;
	cleanups[i].active = 0;
	cleanups[i].fn(cleanups[i].arg);
}

void kb_cleanup_run_all(void)
{
	int i;

	for (i = ncleanups - 1; i >= 0; i--)
		run_one(i);
}

static void cleanup_signal_handler(int sig)
{
	kb_cleanup_run_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

void kb_cleanup_install(void)
{
	static bool installed;
	struct sigaction sa;
	size_t i;

	if (installed)
		return;
	installed = true;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = cleanup_signal_handler;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ARRAY_SIZE(cleanup_signals); i++)
		sigaddset(&sa.sa_mask, cleanup_signals[i]);
	for (i = 0; i < ARRAY_SIZE(cleanup_signals); i++)
		sigaction(cleanup_signals[i], &sa, NULL);
	atexit(kb_cleanup_run_all);
}

int kb_cleanup_push(void (*fn)(void *arg), void *arg)
{
	int i;

	kb_cleanup_install();
	/* Reuse a slot freed by kb_cleanup_pop() at the top of the stack. */
	while (ncleanups > 0 && !cleanups[ncleanups - 1].active)
		ncleanups--;
	if (ncleanups == MAX_CLEANUPS)
		return -1;
	i = ncleanups;
	cleanups[i].fn = fn;
	cleanups[i].arg = arg;
	cleanups[i].owner = getpid();
	cleanups[i].active = 1;
	ncleanups++;
	return i;
}

void kb_cleanup_pop(int handle, bool run)
{
	if (handle < 0 || handle >= ncleanups)
		return;
	if (run)
		run_one(handle);
	else
		cleanups[handle].active = 0;
}

static void change_cleanup_signals(int how)
{
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < ARRAY_SIZE(cleanup_signals); i++)
		sigaddset(&set, cleanup_signals[i]);
	sigprocmask(how, &set, NULL);
}

void kb_cleanup_block_signals(void)
{
	change_cleanup_signals(SIG_BLOCK);
}

void kb_cleanup_unblock_signals(void)
{
	change_cleanup_signals(SIG_UNBLOCK);
}
