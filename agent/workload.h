/*
 * workload: the command perfgate runs and measures.
 *
 * The child is forked first and held before exec until the counters are
 * open on its pid, so counting (with enable_on_exec) starts exactly at exec
 * and no instruction of the workload is missed.  A failed exec is reported
 * with its reason.  The exit status becomes perfgate's.
 */
#ifndef PERFGATE_WORKLOAD_H
#define PERFGATE_WORKLOAD_H

#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

struct workload {
	pid_t pid;
	int go_fd;		/* writing to it releases the child */
	int exec_fd;		/* EOF: exec succeeded; data: its errno */
	bool running;
	int status;		/* wait status once reaped */
	struct rusage usage;
};

/*
 * Fork the child, held before exec until workload_start().  channel_fds
 * (the workload's ends of its private control channel and its lock page,
 * or NULL) are kept open across exec and exported as PERFGATE_CTL_FD,
 * PERFGATE_ACK_FD and PERFGATE_LOCK_FD (not when channel_fds[2] is -1).
 */
int workload_prepare(struct workload *w, char **argv, const int channel_fds[3]);
/* Release the child and wait until it has exec'd; -1 (message printed)
 * when exec failed. */
int workload_start(struct workload *w, const char *name);
/* Reap the child if it has exited; returns true when it has. */
bool workload_reap(struct workload *w, bool block);
/* Ask a running workload to end (SIGTERM), as perf stat does at exit. */
void workload_terminate(struct workload *w);
/* End a running workload: SIGTERM, then SIGKILL after grace_ms; reaped. */
void workload_end(struct workload *w, int grace_ms);
/* perfgate's exit code for the child's status: its code, or 128 + signal. */
int workload_exit_code(const struct workload *w);

#endif
