/*
 * output: where the report goes -- stderr, -o FILE or --log-fd N -- as a
 * FILE* that never blocks the event loop.
 *
 * A regular file is written directly: a write to it waits for no other
 * process.  Anything else (a pipe, a FIFO, a terminal, a socket, a device)
 * is written through a non-blocking description of our own; what it cannot
 * take at once waits in a backlog that the event loop writes out when the
 * fd is writable.  The backlog is bounded (OUTPUT_BACKLOG_MAX): an
 * interval or a snapshot is built in a staging buffer and committed whole
 * only if it fits, so a reader that stops reading costs dropped intervals
 * and refused snapshots -- never a blocked agent, never a torn line.  The
 * final report is always queued, and written at exit with a bounded wait.
 *
 * The first failed write is kept (its errno) and reported once, naming the
 * output; the session turns it into a non-zero exit status.  Paths are
 * opened as the kernel's fs.protected_symlinks would follow them
 * (output_check_path), whatever that sysctl says.
 */
#ifndef PERFGATE_OUTPUT_H
#define PERFGATE_OUTPUT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct event_base;
struct event;
struct evbuffer;

/* Bytes that may wait for a slow reader before intervals are dropped and
 * snapshots refused. */
#define OUTPUT_BACKLOG_MAX (1024 * 1024)
/* Messages (warnings, when the report shares stderr) may go past the
 * limit by this much, so that the warning about dropping is queued too. */
#define OUTPUT_MESSAGE_SLACK (64 * 1024)
/* At exit: how long the final report may wait for a reader that takes
 * nothing, and for one that reads but slowly. */
#define OUTPUT_DRAIN_IDLE_MS 2000
#define OUTPUT_DRAIN_TOTAL_MS 10000

struct output {
	char name[PATH_MAX + 16];	/* "/path", "fd 3", "stderr": for messages */
	const char *what;		/* "the report to", "--json-file": ditto */
	FILE *fp;			/* what report.c writes to */
	int fd;				/* -1 when not open */
	bool direct;			/* a regular file: written at once */
	bool socket;			/* written with send(MSG_DONTWAIT) */
	bool guarded;			/* a shared blocking description: poll first */
	bool shares_stderr;		/* the same file as fd 2 */
	bool routed;			/* log.c's messages come through here */
	bool staging;			/* writes go to stage until the commit */
	struct evbuffer *backlog, *stage;
	struct event *write_event;
	int error;			/* errno of the first failed write, or 0 */
	bool timed_out;			/* the final wait ran out */
	bool reported;			/* the failure was told on stderr */
	bool dropping;			/* over the limit: warned this episode */
	unsigned long dropped_intervals, refused_snapshots;
};

/*
 * Refuse PATH when it is a symbolic link in a sticky world-writable
 * directory that is owned neither by us nor by the directory's owner.
 * WHAT names the option in the message ("output file", "--json-file").
 * Prints the reason and returns -1; 0 when PATH may be opened.
 */
int output_check_path(const char *path, const char *what);

/* -o FILE (truncated, or appended to), or with WHAT "--json-file" the
 * FIFO or device that document goes to.  Prints an error, returns -1. */
int output_open_path(struct output *o, const char *path, bool append, const char *what);
/* stderr or --log-fd N: the descriptor is left as it is (its file status
 * flags are shared with other processes); NAME is "stderr" or "fd N". */
int output_open_fd(struct output *o, int fd, const char *name);
/* Start writing the backlog from base's loop; messages from log.c go
 * through here too when the output shares stderr. */
int output_attach(struct output *o, struct event_base *base);

/* Bytes to write, now or from the loop, past any limit. */
void output_write(struct output *o, const char *buf, size_t n);
/* Stage what is printed until output_commit(). */
void output_stage(struct output *o);
/* Queue the staged bytes unless the backlog would pass OUTPUT_BACKLOG_MAX:
 * then they are discarded and -1 returned (nothing was written).  Without
 * whole_limit, an output that has caught up (nothing waits) takes them
 * whatever their size: an interval of a run with thousands of windows
 * is bigger than the limit, and is not for that reason never printed. */
int output_commit(struct output *o, bool whole_limit);
/* Bytes that still wait to be written. */
size_t output_backlog(const struct output *o);
/* Bytes staged since output_stage(). */
size_t output_staged(struct output *o);
/* An interval was refused: count it, warn once per episode. */
void output_drop_interval(struct output *o);

/* At the end of the run: write what waits, with the bounded wait above,
 * and report a failure (on stderr when stderr is not the failed output).
 * Returns -1 when the report could not be written whole. */
int output_finish(struct output *o);
void output_close(struct output *o);

#endif
