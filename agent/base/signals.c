/*
 * signals: the list of run-ending signals, and their names.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "agent/base/signals.h"

/* The standard signals whose default action is to terminate (or to dump
 * core for SIGQUIT, SIGXCPU and SIGXFSZ), fault signals left out. */
static const int ending_standard[] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM,
	SIGPROF, SIGXCPU, SIGXFSZ, SIGIO, SIGPWR, SIGSTKFLT,
};

size_t signals_ending(int *sigs)
{
	size_t n = 0;

	for (size_t i = 0; i < sizeof(ending_standard) / sizeof(ending_standard[0]); i++)
		sigs[n++] = ending_standard[i];
	/* Real-time signals terminate by default too. */
	for (int sig = SIGRTMIN; sig <= SIGRTMAX && n < SIGNALS_ENDING_MAX; sig++)
		sigs[n++] = sig;
	return n;
}

const char *signals_name(int sig, char *buf, size_t size)
{
	const char *abbrev = sig >= SIGRTMIN && sig <= SIGRTMAX ? NULL : sigabbrev_np(sig);

	if (abbrev)
		snprintf(buf, size, "SIG%s", abbrev);
	else if (sig == SIGRTMIN)
		snprintf(buf, size, "SIGRTMIN");
	else if (sig > SIGRTMIN && sig <= SIGRTMAX)
		snprintf(buf, size, "SIGRTMIN+%d", sig - SIGRTMIN);
	else
		snprintf(buf, size, "signal %d", sig);
	return buf;
}
