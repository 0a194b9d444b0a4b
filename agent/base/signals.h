/*
 * signals: which signals end a run, and their fixed names.
 *
 * Every signal whose default action would end the agent -- and so lose the
 * report and leave the workload running -- is caught instead and ends the
 * run the way SIGTERM does: the workload is ended, the report and the
 * --json-file document are written, then the agent dies of that signal.
 * Left out: SIGKILL and SIGSTOP (cannot be caught), the fault signals
 * (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT: the agent
 * cannot go on after one), SIGPIPE (ignored: a reader going away is handled
 * where it is written to) and SIGCHLD (the workload's exit).
 */
#ifndef PERFGATE_SIGNALS_H
#define PERFGATE_SIGNALS_H

#include <stddef.h>

/* Fills sigs (room for at least SIGNALS_ENDING_MAX) and returns how many. */
#define SIGNALS_ENDING_MAX 80
size_t signals_ending(int *sigs);
/* "SIGHUP", "SIGRTMIN+3", ...: fixed names, whatever the locale. */
const char *signals_name(int sig, char *buf, size_t size);

#endif
