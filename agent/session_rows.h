/*
 * session_rows: the session's views turned into report rows, and printed.
 */
#ifndef PERFGATE_SESSION_ROWS_H
#define PERFGATE_SESSION_ROWS_H

struct session;

/* One interval's lines (-I), each view's delta since the last ones. */
void session_print_interval(struct session *s);
/* The counts so far, as interval-style lines stamped now ("snapshot"). */
void session_print_snapshot(struct session *s);
/* perf stat's final report. */
void session_print_final(struct session *s);

#endif
