/*
 * test_sessions: many sessions, one after another, in one process.
 *
 * The agent makes one session per run (-r N makes N), and a program
 * embedding it may make as many as it likes: a session must give back
 * every descriptor and every byte it took.  Each session here counts this
 * very process (-p), so that nothing but our own permissions is needed:
 * it resolves its events, opens its output, counters, timers, signal
 * events and target watch, and is then aborted; every hundredth one runs
 * to its end instead (one -I interval, then the final report).  The
 * descriptors open afterwards must be those open before.  Leaked memory
 * is the leak sanitizer's to find (CFLAGS=-fsanitize=address).
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/base/options.h"
#include "agent/commands.h"
#include "agent/session.h"
#include "tests/unit/tap.h"

#define SESSIONS 1000
#define FDS_MAX 1024

/* The descriptors this process has open, as a set: open[fd] is true. */
static int open_fds(bool open[FDS_MAX])
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	memset(open, 0, FDS_MAX * sizeof(*open));
	if (!dir)
		return -1;
	while ((e = readdir(dir))) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] == '.' || fd == dirfd(dir) || fd >= FDS_MAX)
			continue;
		open[fd] = true;
		n++;
	}
	closedir(dir);
	return n;
}

/* One session, made and undone: 0 when every step went as it should. */
static int one_session(bool run_to_end)
{
	char pid[32], events[128];
	/* Options keep pointers into argv: it lives as long as the session. */
	char *argv[] = { "perfgate", "-e", events, "-p", pid, "-o", "/dev/null",
			 "-I", "10", "--interval-count", "1", NULL };
	struct options opts;
	struct session *s;
	int rc = -1;

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	/* A tracepoint's format is in tracefs, which root alone may read. */
	snprintf(events, sizeof(events), "%s",
		 geteuid() == 0 ? "task-clock,syscalls:sys_enter_getppid" : "task-clock");
	if (options_parse(&opts, run_to_end ? 11 : 7, argv)) {
		options_free(&opts);
		return -1;
	}
	s = session_new(&opts, NULL, commands_on_line);
	if (s && session_init(s) == 0 && session_start(s) == 0) {
		if (run_to_end) {
			session_run(s);
			rc = session_finish(s);
		} else {
			session_abort(s);
			rc = 0;
		}
	} else if (s) {
		session_abort(s);
	}
	session_free(s);
	options_free(&opts);
	return rc;
}

int main(void)
{
	static bool before[FDS_MAX], after[FDS_MAX];
	int failed = 0, nr_before = open_fds(before), nr_after;

	ok(nr_before > 0, "the open descriptors can be listed");
	for (int i = 0; i < SESSIONS; i++)
		if (one_session(i % 100 == 99))
			failed++;
	is_int(failed, 0, "1000 sessions made, started and ended or aborted");
	nr_after = open_fds(after);
	is_int(nr_after, nr_before, "as many descriptors open after them as before");
	ok(memcmp(before, after, sizeof(before)) == 0, "the same descriptors open");
	for (int fd = 0; fd < FDS_MAX; fd++)
		if (before[fd] != after[fd])
			printf("#   fd %d: %s\n", fd, after[fd] ? "left open" : "closed");
	/* A session on its own with no events of its own still frees. */
	session_free(NULL);
	ok(1, "session_free(NULL) does nothing");
	return tap_done();
}
