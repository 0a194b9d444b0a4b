/*
 * metrics_textfile: the exposition written to a file for node_exporter's
 * textfile collector (--metrics-textfile PATH.prom), in Prometheus' text
 * format 0.0.4, which is what that collector parses.
 *
 * Each write goes to a temporary file in PATH's directory (a hidden name
 * not ending in .prom, so the collector never reads it), then rename(2)
 * puts it in place: a reader sees the previous file or the new one whole,
 * never a part.
 */
#ifndef PERFGATE_METRICS_TEXTFILE_H
#define PERFGATE_METRICS_TEXTFILE_H

struct run;

/* Write path now.  -1 with errno set on failure (no message printed). */
int metrics_textfile_write(const struct run *run, const char *path);

#endif
