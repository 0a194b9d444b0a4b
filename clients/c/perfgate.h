/*
 * perfgate.h: libperfgate, the C client of the perfgate measurement agent.
 *
 * A program marks its own phases ("window begin parse" ... "window end
 * parse") and opens or closes the agent's default window over the control
 * channel the agent gives it.  Without an agent the handle is inert: every
 * call returns 0 and does nothing, so the same binary runs with and without
 * perfgate.  See libperfgate(3).
 *
 * Conventions (as libbpf's): functions return 0 or a negative errno and also
 * set errno; perfgate_last_error() gives a readable message for the last
 * failing call of the calling thread.
 */
#ifndef PERFGATE_H
#define PERFGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Room for any reply payload but a window-end reply over many events or
 * range views (those may reach 1 MiB: give perfgate_window_end a bigger
 * buffer, or get -ENOBUFS with the text cut). */
#define PERFGATE_REPLY_MAX 4352

/* Default time a call waits for its reply, in milliseconds. */
#define PERFGATE_TIMEOUT_MS_DEFAULT 5000

struct perfgate;

/*
 * How to reach the agent.  Give a FIFO pair by path, or a descriptor pair,
 * or nothing (all unset, or opts == NULL) to use the channel the agent
 * exports to its workload (PERFGATE_CTL_FD / PERFGATE_ACK_FD).  Always start
 * from PERFGATE_OPTS_INIT: it sets sz (so a library newer than the caller's
 * header knows which fields exist) and marks the descriptors unset (-1).
 */
struct perfgate_opts {
	size_t sz;		/* sizeof(struct perfgate_opts) */
	int ctl_fd;		/* commands are written here (-1: unset) */
	int ack_fd;		/* replies are read here (-1: unset) */
	const char *ctl_path;	/* FIFO the agent reads commands from */
	const char *ack_path;	/* FIFO the agent writes replies to */
	int timeout_ms;		/* per call; 0: PERFGATE_TIMEOUT_MS or 5000 */
	/* No other process uses this channel: the calls skip the record lock
	 * that keeps processes' commands apart (two system calls each), which
	 * comes back for good once this process forks; and, holding a read
	 * end of the command pipe, write with no SIGPIPE mask (two more): a
	 * gone agent then gives ECONNRESET, not EPIPE. */
	bool single_process;
	size_t :0;
};

#define PERFGATE_OPTS_INIT { .sz = sizeof(struct perfgate_opts), .ctl_fd = -1, .ack_fd = -1 }

int perfgate_open(struct perfgate **pg, const struct perfgate_opts *opts);
void perfgate_close(struct perfgate *pg);
bool perfgate_is_inert(const struct perfgate *pg);

/* The process's shared handle, opened from the environment on first use;
 * NULL (errno set) when that failed.  Never close it. */
struct perfgate *perfgate_default(void);

int perfgate_enable(struct perfgate *pg);
int perfgate_disable(struct perfgate *pg);
int perfgate_ping(struct perfgate *pg);
int perfgate_window_begin(struct perfgate *pg, const char *name);
/* json (may be NULL) gets the reply's JSON object: this call's counts and
 * the window's totals. */
int perfgate_window_end(struct perfgate *pg, const char *name, char *json, size_t json_size);
/* Load a range at run time ("range load NAME = SPEC", perfgate-ranges(7)):
 * its views are "event@NAME" in every output and in window-end replies.
 * A bad SPEC gives -EREMOTEIO, perfgate_last_error() holding the agent's
 * reason and the place of the mistake. */
int perfgate_range_load(struct perfgate *pg, const char *name, const char *spec);
/* Stop a range; its totals stay in the report. */
int perfgate_range_unload(struct perfgate *pg, const char *name);
/* Any command line (without its '\n'); reply (may be NULL) gets the text
 * after "ack " or "err ". */
int perfgate_command(struct perfgate *pg, const char *line, char *reply, size_t reply_size);

/*
 * The numbers in a window-end reply (the json perfgate_window_end gave),
 * without parsing JSON yourself.  EVENT is an -e event ("task-clock") or a
 * range view ("task-clock@R").  call gets what it counted during this call,
 * total the window's total (a range view's total so far); either may be
 * NULL.  -ENOENT: no such event (an inert handle's empty reply has none);
 * -ENODATA: the event is <not supported> on this machine; -EPROTO: json is
 * not a window-end reply.
 */
int perfgate_reply_count(const char *json, const char *event, uint64_t *call, uint64_t *total);
/* This call's wall time, the window's open time so far, and its calls. */
int perfgate_reply_time(const char *json, uint64_t *call_ns, uint64_t *total_ns,
			unsigned long *calls);
/* The INDEXth event of the reply (the -e events, then the range views), to
 * list them: -ENOENT past the last, -ENOBUFS when it does not fit in size. */
int perfgate_reply_event(const char *json, size_t index, char *event, size_t size);

const char *perfgate_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
